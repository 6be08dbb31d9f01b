//! `-f`: the new ReplicationController read through the shared resource Builder, as
//! kubectl 1.17 read it (`Unstructured().Schema(..).NamespaceParam(ns)
//! .DefaultNamespace().FilenameParam(..).Flatten()`), then 1.17's checks on what came
//! out: exactly one object, and that object a core/v1 ReplicationController.
//!
//! Going through the Builder means `-f` accepts what `create-file -f` accepts — a
//! file, `-` for stdin, an `http(s)://` URL (bounded in size and time, retried like
//! kubectl's) — and fails with the same messages for a missing path, a document that
//! is not YAML or JSON, a schema error (`--validate`) or a URL that cannot be read.

use std::io::Read;

use crate::model::ReplicationController;
use resources::{Builder, FilenameOptions, Info, RestMapper, ServerSchema, Validation};
use serde_json::Value;

/// 1.17's errors about the objects `-f` held; their texts are kubectl's.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FileError {
    #[error("{0} specifies multiple items")]
    MultipleItems(String),
    #[error("please make sure {0} exists and is not empty")]
    Empty(String),
    #[error("{filename} contains a {gvk} not a ReplicationController")]
    NotAnRc { filename: String, gvk: String },
    /// A v1 ReplicationController whose fields have the wrong types, which only
    /// `--validate=false` lets through. 1.17 reported it as "contains a /v1,
    /// Kind=ReplicationController not a ReplicationController"; the decoder's reason
    /// says what is actually wrong.
    #[error("unable to decode {filename} as a ReplicationController: {reason}")]
    Decode { filename: String, reason: String },
}

/// Where `-f` is read from and how.
pub struct FileSource<'a> {
    /// The `-f` value as given (a path, `-` or a URL); 1.17's messages quote it.
    pub filename: &'a str,
    /// `--validate`.
    pub validate: bool,
    /// The server's OpenAPI document for `--validate` (kubectl 1.17 validated on the
    /// client against it); `None`: the built-in kinds' schema.
    pub schema: Option<ServerSchema>,
    /// The command's namespace (`-n` or the context's).
    pub namespace: &'a str,
    /// Replaces the process's stdin for `-f -` (tests).
    pub stdin: Option<Box<dyn Read + Send>>,
}

/// Reads the new RC; returns it with its namespace set, and whether its
/// `spec.replicas` was left out (then the old RC's count is used, as in 1.17).
pub async fn read_new_controller(
    source: FileSource<'_>,
    mapper: &mut RestMapper,
) -> anyhow::Result<(ReplicationController, bool)> {
    let inputs = FilenameOptions {
        filenames: vec![source.filename.to_string()],
        recursive: false,
        kustomize: None,
    };
    let validation = if source.validate {
        Validation::Strict
    } else {
        Validation::Ignore
    };
    // The namespace is always enforced, not only with an explicit -n as in 1.17: the
    // updater works in one namespace, and 1.17 silently split the two RCs across two.
    let mut builder = Builder::files(validation, source.namespace, true, &inputs);
    if let Some(schema) = source.schema {
        builder = builder.client_side_schema(schema);
    }
    if let Some(stdin) = source.stdin {
        builder = builder.stdin(stdin);
    }
    // kubectl's Infos(): without ContinueOnError the first error is the result.
    // The Builder's errors are reported with their own text, as create-file does.
    let infos = builder
        .build(mapper)
        .await
        .map_err(|e| anyhow::Error::msg(e.to_string()))?
        .entries()
        .collect::<Result<Vec<Info>, _>>()
        .map_err(|e| anyhow::Error::msg(e.to_string()))?;
    let objects = infos.into_iter().map(|info| info.object).collect();
    Ok(controller_from_objects(source.filename, objects)?)
}

/// 1.17's checks on the objects of `-f`, in its order: more than one, none, then
/// "not a core/v1 ReplicationController" with Go's `GroupVersionKind` formatting
/// (`apps/v1, Kind=Deployment`, `/v1, Kind=Pod`).
pub fn controller_from_objects(
    filename: &str,
    mut objects: Vec<Value>,
) -> Result<(ReplicationController, bool), FileError> {
    if objects.len() > 1 {
        return Err(FileError::MultipleItems(filename.to_string()));
    }
    let Some(object) = objects.pop() else {
        return Err(FileError::Empty(filename.to_string()));
    };
    let field = |name: &str| {
        object
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    if api_version != "v1" || kind != "ReplicationController" {
        let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
        return Err(FileError::NotAnRc {
            filename: filename.to_string(),
            gvk: format!("{group}/{version}, Kind={kind}"),
        });
    }
    let defaulted = object
        .get("spec")
        .and_then(|s| s.get("replicas"))
        .is_none_or(Value::is_null);
    // Through text, as kube decodes the controllers it reads: one copy of the model's
    // decoder in the binary (resources::typed::from_value_as_text).
    let rc = resources::typed::from_value_as_text(&object).map_err(|e| FileError::Decode {
        filename: filename.to_string(),
        reason: e.to_string(),
    })?;
    Ok((rc, defaulted))
}

#[cfg(test)]
mod tests;
