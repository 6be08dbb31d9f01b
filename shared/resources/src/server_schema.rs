//! `--validate` against the server's published schema (stage 3 of the Builder when
//! [`Builder::server_schema`](super::Builder::server_schema) was given one): per
//! object, kubectl 1.32's `paramVerifyingSchema` over [`crate::openapi`].
//!
//! - `ignore`: only what is needed to send the object at all ([`super::validate`]).
//! - `strict`: where the server honours `fieldValidation` for the kind, the server
//!   validates (the create carries `fieldValidation=Strict`); elsewhere every problem
//!   the OpenAPI document shows is an error, in kubectl's words.
//! - `warn`: where the server honours it, the server warns; elsewhere nothing is
//!   checked and kubectl's klog warning says so, once per object ([`warn_unsupported`]).
//! - with `always_client_side` (kubectl 1.17, which had no server-side validation),
//!   `strict` validates on the client whatever the server supports.
//! - the document could not be fetched: every object fails with kubectl's
//!   `failed to download openapi: …`.

use std::collections::HashSet;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::validate::{Validation, validate};
use super::{Info, ResourceError};
use crate::openapi::{Gvk, Published, object_kind};

pub mod on_demand;

/// A run of documents of one kind (and list-ness), for kubectl's warn notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Documents {
    /// The documents' own kind.
    pub gvk: Gvk,
    /// Whether they are lists (an `items` array).
    pub is_list: bool,
    /// The index of their stream among the build's inputs.
    pub stream: usize,
    /// How many documents in a row.
    pub count: usize,
}

/// What the server publishes, or why it could not be fetched.
pub type ServerSchema = Result<Arc<Published>, String>;

/// What the build's first pass found in the input, for a schema fetched once the
/// kinds are known ([`SchemaSource`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Kinds {
    /// The kinds of the documents (a List's items are not among them).
    pub documents: HashSet<Gvk>,
    /// Some document is a list whose items are validated on the client.
    pub lists: bool,
}

/// Fetches what validation needs from the server once the build knows the input's
/// kinds (create-file: OpenAPI v3 for the kinds' endpoints, the v2 document only
/// when something is validated on the client; [`on_demand::OnDemand`]).
pub trait SchemaSource: Send + Sync {
    /// The schema for `kinds` in `mode` (never `Ignore`: nothing is fetched then).
    fn fetch<'a>(&'a self, kinds: &'a Kinds, mode: Validation) -> BoxFuture<'a, ServerSchema>;

    /// Starts now what [`Self::fetch`] will ask whatever the kinds turn out to be, for
    /// an input that has a document other than a List: the build calls it before
    /// decoding, so that the request's round trips (and a connection's handshake) pass
    /// while the input is decoded.
    fn prefetch(&self) {}
}

/// The schema `--validate=<mode>` needs from the server whose discovery cache is
/// `cache`: none when validation is off (the document stays off that path), else the
/// document or why it could not be fetched.
pub async fn for_validation(
    client: &kube::Client,
    cache: Option<&crate::DiscoveryCache>,
    mode: crate::Validation,
) -> Option<crate::ServerSchema> {
    if mode == crate::Validation::Ignore {
        return None;
    }
    let dir = cache.and_then(|c| crate::openapi::fetch::cache_dir_beside(c.dir()));
    Some(
        crate::openapi::fetch::load(client, dir.as_deref())
            .await
            .map(|doc| Arc::new(Published::v2(doc))),
    )
}

/// Validates one object against the server's schema in `mode` (then what any mode
/// needs to send it). A `v1` List's item (`in_list`) is validated on the client
/// whatever its kind's endpoint supports.
pub(crate) fn check(
    info: Info,
    mode: Validation,
    schema: &ServerSchema,
    always_client_side: bool,
    in_list: bool,
) -> Result<Info, ResourceError> {
    if mode != Validation::Ignore {
        let invalid = |problems: Vec<String>| ResourceError::Invalid {
            origin: info.origin.clone(),
            problems,
        };
        // A document that could not be fetched, in the words of whoever asked for it:
        // for an object, kubectl's OpenAPI v2 `fieldValidation` verifier; for a List's
        // item, its schema validation, which gives the getter's error as it is.
        let download = |e: &String| {
            invalid(vec![if in_list {
                e.clone()
            } else {
                format!("failed to download openapi: {e}")
            }])
        };
        let always_client_side = always_client_side || in_list;
        let published = schema.as_ref().map_err(download)?;
        let gvk = object_kind(&info.object).map_err(invalid)?;
        if mode == Validation::Strict
            && (always_client_side || !published.supports_field_validation(&gvk))
        {
            let problems = published
                .document()
                .map_err(|e| download(&e))?
                .validate(&info.object);
            if !problems.is_empty() {
                return Err(invalid(problems));
            }
        }
    }
    // What is left is what any mode needs to send the object.
    validate(info, Validation::Ignore)
}

/// kubectl's klog warning for `--validate=warn` where the server cannot warn, for
/// every object it would be printed for (`kinds`: the kinds of the objects of the
/// build's first pass, each object seen once, as runs of one kind and their length).
///
/// Reached only through [`Builder::server_schema`](super::Builder::server_schema),
/// which hands the Builder this function: rolling-update validates with 1.17's
/// client-side schema, where `warn` cannot arise, and so links neither this nor the
/// local time zone machinery of its klog header (binary size).
pub(crate) fn warn_unsupported(documents: &[Documents], mode: Validation, schema: &ServerSchema) {
    if mode != Validation::Warn {
        return;
    }
    // Without the document, the first document that needs it ends its stream.
    let mut ended = None;
    for run in documents {
        let plain_list =
            run.is_list && crate::openapi::is_v1_list(&run.gvk.0, &run.gvk.1, &run.gvk.2);
        if schema.is_err() {
            if ended == Some(run.stream) {
                continue;
            }
            if !plain_list {
                ended = Some(run.stream);
            }
        }
        // A list is never validated by the server; kubectl knows that of a `v1` List
        // without the document, and of other lists only from it (it fails first
        // when the document could not be fetched).
        let unsupported = match schema {
            Ok(published) => run.is_list || !published.supports_field_validation(&run.gvk),
            Err(_) => plain_list,
        };
        if !unsupported {
            continue;
        }
        for _ in 0..run.count {
            apiclient::output::eprintln(klog_warning(
                "schema.go:145",
                "cannot perform warn validation if server-side field validation is unsupported, skipping validation",
            ));
        }
    }
}

/// A klog warning line: `W1125 17:23:48.276658   17026 file.go:N] message`, in
/// local time as klog writes it.
fn klog_warning(at: &str, message: &str) -> String {
    let now = jiff::Zoned::now();
    format!(
        "W{:02}{:02} {:02}:{:02}:{:02}.{:06} {:>7} {at}] {message}",
        now.month(),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        now.subsec_nanosecond() / 1000,
        std::process::id()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Origin;
    use crate::openapi::OpenApiV2;
    use serde_json::json;

    fn doc() -> ServerSchema {
        Ok(Arc::new(Published::v2(Arc::new(
            OpenApiV2::from_json(include_bytes!("openapi/testdata-v1.20.json")).expect("doc"),
        ))))
    }

    fn info(v: serde_json::Value) -> Info {
        Info::from_object(v, Origin::single("cr.yaml"))
    }

    fn widget() -> serde_json::Value {
        json!({"apiVersion": "v19.example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3, "colour": "red"}})
    }

    #[test]
    fn strict_refuses_what_the_published_schema_lacks_and_the_others_send_it() {
        let err =
            check(info(widget()), Validation::Strict, &doc(), false, false).expect_err("strict");
        // Recorded: `kubectl create -f cr.yaml` against the 1.20 server.
        assert_eq!(
            err.to_string(),
            "error validating \"cr.yaml\": error validating data: ValidationError(Widget.spec): unknown field \"colour\" in com.example.v19.v1.Widget.spec; if you choose to ignore these errors, turn validation off with --validate=false"
        );
        for mode in [Validation::Warn, Validation::Ignore] {
            let sent = check(info(widget()), mode, &doc(), false, false).expect("sent");
            assert!(sent.warnings.is_empty());
        }
    }

    #[test]
    fn a_missing_kind_lists_every_reason_and_a_failed_download_is_named() {
        let err = check(
            info(json!({"metadata": {"name": "x"}})),
            Validation::Strict,
            &doc(),
            false,
            false,
        )
        .expect_err("no kind");
        assert!(
            err.to_string()
                .contains("error validating data: [apiVersion not set, kind not set]; "),
            "{err}"
        );
        let failed: ServerSchema =
            Err("the server has asked for the client to provide credentials".into());
        let err = check(info(widget()), Validation::Warn, &failed, false, false)
            .expect_err("no document");
        assert_eq!(
            err.to_string(),
            "error validating \"cr.yaml\": error validating data: failed to download openapi: the server has asked for the client to provide credentials; if you choose to ignore these errors, turn validation off with --validate=false"
        );
        // Validation off needs no document.
        assert!(check(info(widget()), Validation::Ignore, &failed, false, false).is_ok());
        // A v1 List's item: kubectl's schema validation gives the getter's error bare.
        let err = check(info(widget()), Validation::Strict, &failed, false, true)
            .expect_err("no document");
        assert!(
            err.to_string().contains(
                "error validating data: the server has asked for the client to provide credentials; "
            ),
            "{err}"
        );
    }

    /// On a server that validates (the Widget's POST declares `fieldValidation`),
    /// strict leaves the check to it, unless the caller validates on the client
    /// whatever the server (kubectl 1.17's rolling-update).
    #[test]
    fn a_server_that_validates_is_left_to_it_unless_the_client_always_does() {
        let mut text: serde_json::Value =
            serde_json::from_slice(include_bytes!("openapi/testdata-v1.20.json")).expect("json");
        text["paths"]["/apis/v19.example.com/v1/namespaces/{namespace}/widgets"]["post"]
            ["parameters"]
            .as_array_mut()
            .expect("parameters")
            .push(json!({"name": "fieldValidation", "in": "query", "type": "string"}));
        let new: ServerSchema = Ok(Arc::new(Published::v2(Arc::new(
            OpenApiV2::from_json(&serde_json::to_vec(&text).expect("json")).expect("doc"),
        ))));
        assert!(check(info(widget()), Validation::Strict, &new, false, false).is_ok());
        assert!(check(info(widget()), Validation::Strict, &new, true, false).is_err());
    }

    #[test]
    fn klog_lines_have_klog_s_header() {
        let line = klog_warning("schema.go:145", "m");
        let re =
            regex_lite::Regex::new(r"^W\d{4} \d\d:\d\d:\d\d\.\d{6} [ \d]{7,} schema\.go:145\] m$")
                .expect("regex");
        assert!(re.is_match(&line), "{line}");
    }
}
