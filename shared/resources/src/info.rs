//! [`Info`], the unit of work every stage passes on, and where it came from.

use std::fmt;
use std::sync::Arc;

use kube::core::{ApiResource, GroupVersionKind};
use serde_json::Value;

/// Where an object came from: the source as kubectl names it and the document in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The path, `STDIN`, the URL or the kustomization directory.
    pub source: Arc<str>,
    /// The 1-based document number in the source.
    pub document: usize,
    /// How many documents the source held; the number is only shown when it is > 1.
    pub documents: usize,
    /// The 1-based line where the document starts.
    pub line: usize,
    /// The 1-based position inside a `List`, when the object came out of one.
    pub item: Option<usize>,
}

impl Origin {
    /// The origin of the only document of `source` (used by tests and one-object inputs).
    pub fn single(source: &str) -> Self {
        Self {
            source: source.into(),
            document: 1,
            documents: 1,
            line: 1,
            item: None,
        }
    }
}

impl Origin {
    /// Where in the source the object was: `document 2 of 3 (line 12), item 1`. Not
    /// part of any message, because kubectl's name only the source; logged at `-v=4`
    /// so that a failure in a long multi-document file can still be found.
    pub fn position(&self) -> String {
        let mut out = format!(
            "document {} of {} (line {})",
            self.document, self.documents, self.line
        );
        if let Some(item) = self.item {
            out.push_str(&format!(", item {item}"));
        }
        out
    }
}

impl fmt::Display for Origin {
    /// `"a.yaml"`, as kubectl names a source in its messages (see [`Origin::position`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.source)
    }
}

/// The REST resource an object's kind maps to (kubectl's `meta.RESTMapping`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// The API group, empty for the core group.
    pub group: String,
    /// The version of the object's `apiVersion`.
    pub version: String,
    /// The kind, as written in the object.
    pub kind: String,
    /// The plural resource name used in URLs (`configmaps`).
    pub resource: String,
    /// Whether objects of this kind live in a namespace.
    pub namespaced: bool,
}

impl Mapping {
    /// The `ApiResource` kube's dynamic API wants.
    pub fn api_resource(&self) -> ApiResource {
        let gvk = GroupVersionKind::gvk(&self.group, &self.version, &self.kind);
        ApiResource::from_gvk_with_plural(&gvk, &self.resource)
    }

    /// The collection URL path objects are POSTed to, e.g. `/apis/apps/v1/namespaces/x/deployments`.
    pub fn collection_path(&self, namespace: Option<&str>) -> String {
        let prefix = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match namespace.filter(|_| self.namespaced) {
            Some(ns) => format!("{prefix}/namespaces/{ns}/{}", self.resource),
            None => format!("{prefix}/{}", self.resource),
        }
    }
}

/// An object read from an input, with what is known about it so far (cli-runtime's `Info`).
#[derive(Debug, Clone, PartialEq)]
pub struct Info {
    /// Where the object came from.
    pub origin: Origin,
    /// The object as read, a JSON object (kept untyped, like kubectl's `Unstructured`).
    pub object: Value,
    /// The group, version and kind from `apiVersion` and `kind`.
    pub gvk: GroupVersionKind,
    /// Filled in by the mapping stage.
    pub mapping: Option<Mapping>,
    /// Non-fatal findings (`--validate=warn`) to print on stderr.
    pub warnings: Vec<String>,
}

impl Info {
    /// Builds an `Info` from a decoded object; `None` when `apiVersion` or `kind` is
    /// missing (the validation stage reports that).
    pub fn from_object(object: Value, origin: Origin) -> Self {
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        Self {
            origin,
            gvk: GroupVersionKind::gvk(group, version, kind),
            object,
            mapping: None,
            warnings: Vec::new(),
        }
    }

    /// `apiVersion` as written.
    pub fn api_version(&self) -> String {
        if self.gvk.group.is_empty() {
            self.gvk.version.clone()
        } else {
            format!("{}/{}", self.gvk.group, self.gvk.version)
        }
    }

    fn metadata_str(&self, field: &str) -> Option<&str> {
        self.object.get("metadata")?.get(field)?.as_str()
    }

    /// `metadata.name`, empty when unset (for example with `generateName`).
    pub fn name(&self) -> &str {
        self.metadata_str("name").unwrap_or_default()
    }

    /// `metadata.namespace`, if set and not empty.
    pub fn namespace(&self) -> Option<&str> {
        self.metadata_str("namespace").filter(|ns| !ns.is_empty())
    }

    /// Sets `metadata.namespace`, creating `metadata` if needed.
    pub fn set_namespace(&mut self, namespace: &str) {
        if let Some(obj) = self.object.as_object_mut() {
            let meta = obj
                .entry("metadata")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert("namespace".into(), Value::String(namespace.into()));
            }
        }
    }

    /// `metadata.labels` as a map; values that are not strings are skipped.
    pub fn labels(&self) -> std::collections::BTreeMap<String, String> {
        self.object
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object)
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the object is a Namespace or a CustomResourceDefinition, which
    /// `create-file` sends before everything else.
    pub fn is_namespace_or_crd(&self) -> bool {
        (self.gvk.group.is_empty() && self.gvk.kind == "Namespace")
            || (self.gvk.group == "apiextensions.k8s.io"
                && self.gvk.kind == "CustomResourceDefinition")
    }
}
