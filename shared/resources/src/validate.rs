//! Client-side schema validation, kubectl's `--validate`.
//!
//! kubectl 1.32 validates on the server when the server supports field validation,
//! else on the client against the server's OpenAPI document ([`super::server_schema`]).
//! The checks here are for when there is no such document (a client dry run without
//! a server, or one whose document could not be read): every object must be a map
//! with `apiVersion` and `kind`, and the built-in kinds are validated against the
//! schema generated from k8s-openapi's typed models ([`builtin::schema`]), by the same
//! validator and in the same words as against a server's document.

use std::str::FromStr;

use serde_json::{Map, Value};

use super::{Info, ResourceError, builtin};

/// The `--validate` modes. `true` is `strict` and `false` is `ignore`, as in kubectl.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Validation {
    /// Reject invalid objects.
    #[default]
    Strict,
    /// Report problems as warnings and send the objects anyway.
    Warn,
    /// Check only what is needed to send the object at all.
    Ignore,
}

impl FromStr for Validation {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "true" | "strict" => Ok(Self::Strict),
            "warn" => Ok(Self::Warn),
            "false" | "ignore" => Ok(Self::Ignore),
            _ => Err(format!(
                "invalid - validate option {s:?}; must be one of: strict (or true), warn, ignore (or false)"
            )),
        }
    }
}

/// `encoding/json`'s name of a JSON value's kind in "cannot unmarshal X".
fn go_json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

/// Validates one object. Problems that make the object unsendable are errors in
/// every mode; schema problems are errors, warnings or ignored depending on `mode`.
pub(crate) fn validate(mut info: Info, mode: Validation) -> Result<Info, ResourceError> {
    // What is not a map: kubectl's validator has one word for it, its decoder
    // (`--validate=false`) those of Go's `encoding/json` decoding the detector struct.
    let Some(obj) = info.object.as_object() else {
        let reason = match mode {
            Validation::Ignore => format!(
                "json: cannot unmarshal {} into Go value of type unstructured.detector",
                go_json_kind(&info.object)
            ),
            _ => "invalid object to validate".to_string(),
        };
        return Err(fatal(&info, mode, reason));
    };
    if mode == Validation::Ignore {
        check_decodable(&info, obj)?;
    }
    check_type_meta(&info, obj, mode)?;
    // A missing name is the server's to refuse (`The ConfigMap "" is invalid:
    // metadata.name: Required value: …`), as with kubectl, which checks no name on the
    // client: a `generateName` alone is valid, and a client dry run prints
    // `configmap/<unknown>`. A `metadata` or name of the wrong type is the metadata
    // decoder's to report (`cannot unmarshal string into Go struct field
    // metadataOnlyObject.metadata of type v1.ObjectMeta`), after validation.
    if mode == Validation::Ignore {
        return Ok(info);
    }
    // Kinds the built-in schema lacks (custom resources) pass: their schema lives on
    // the server, which checks it.
    let problems = builtin::schema().validate(&info.object);
    if problems.is_empty() {
        return Ok(info);
    }
    match mode {
        Validation::Warn => {
            info.warnings.extend(problems);
            Ok(info)
        }
        _ => Err(ResourceError::Invalid {
            origin: info.origin.clone(),
            problems,
        }),
    }
}

/// An error that makes the object unsendable: the decoder's with validation off, else
/// the validator's.
fn fatal(info: &Info, mode: Validation, reason: String) -> ResourceError {
    match mode {
        Validation::Ignore => ResourceError::Decode {
            origin: info.origin.clone(),
            reason,
        },
        _ => ResourceError::Invalid {
            origin: info.origin.clone(),
            problems: vec![reason],
        },
    }
}

/// Whether `field` is missing, null or an empty string.
fn unset(obj: &Map<String, Value>, field: &str) -> bool {
    match obj.get(field) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    }
}

/// With validation off, kubectl's first word comes from its unstructured decoder:
/// for a List's item while flattening the List (kind first, then apiVersion, in
/// words that name no document), else for the document (a kind that is not a
/// non-empty string, quoting the document; then `metadataOnlyObject`'s decoding,
/// whose `apiVersion` error is worded here and whose `metadata` errors are
/// `check_metadata`'s).
fn check_decodable(info: &Info, obj: &Map<String, Value>) -> Result<(), ResourceError> {
    let mode = Validation::Ignore;
    if info.origin.item.is_some() {
        let reason = if unset(obj, "kind") {
            Some("Object 'Kind' is missing in 'object has no kind field '")
        } else if unset(obj, "apiVersion") {
            Some("Object 'apiVersion' is missing in 'object has no apiVersion field'")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(ResourceError::ItemType {
                origin: info.origin.clone(),
                reason: reason.into(),
            });
        }
    } else if unset(obj, "kind") || !obj.get("kind").is_some_and(Value::is_string) {
        let reason = format!("Object 'Kind' is missing in '{}'", info.object);
        return Err(fatal(info, mode, reason));
    } else if let Some(other) = obj
        .get("apiVersion")
        .filter(|v| !v.is_string() && !v.is_null())
    {
        // kubectl 1.37's words (Go 1.24's encoding/json names the embedded
        // struct: kubectl 1.32 wrote `metadataOnlyObject.apiVersion`).
        let reason = format!(
            "json: cannot unmarshal {} into Go struct field metadataOnlyObject.TypeMeta.apiVersion of type string",
            go_json_kind(other)
        );
        return Err(fatal(info, mode, reason));
    }
    Ok(())
}

/// `apiVersion` and `kind` are set, and strings.
fn check_type_meta(
    info: &Info,
    obj: &Map<String, Value>,
    mode: Validation,
) -> Result<(), ResourceError> {
    for field in ["apiVersion", "kind"] {
        if unset(obj, field) {
            return Err(fatal(info, mode, format!("{field} not set")));
        }
        match obj.get(field) {
            Some(Value::String(_)) | None => {}
            Some(other) => {
                return Err(fatal(
                    info,
                    mode,
                    format!("{field} must be a string, not {}", type_name(other)),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Origin;
    use serde_json::json;

    fn info(v: Value) -> Info {
        Info::from_object(v, Origin::single("f.yaml"))
    }

    fn err(v: Value, mode: Validation) -> String {
        validate(info(v), mode).expect_err("invalid").to_string()
    }

    #[test]
    fn modes_parse_like_kubectl() {
        assert_eq!("true".parse(), Ok(Validation::Strict));
        assert_eq!("strict".parse(), Ok(Validation::Strict));
        assert_eq!("warn".parse(), Ok(Validation::Warn));
        assert_eq!("false".parse(), Ok(Validation::Ignore));
        assert_eq!("ignore".parse(), Ok(Validation::Ignore));
        assert!("maybe".parse::<Validation>().is_err());
    }

    #[test]
    fn kind_and_api_version_are_required_in_every_mode() {
        assert_eq!(
            err(
                json!({"apiVersion": "v1", "metadata": {"name": "x"}}),
                Validation::Strict
            ),
            "error validating \"f.yaml\": error validating data: kind not set; if you choose to ignore these errors, turn validation off with --validate=false"
        );
        assert_eq!(
            err(
                json!({"kind": "ConfigMap", "metadata": {"name": "x"}}),
                Validation::Ignore
            ),
            "unable to decode \"f.yaml\": apiVersion not set"
        );
        assert!(
            err(json!("just a string"), Validation::Warn).contains("invalid object to validate")
        );
        assert_eq!(
            err(json!("just a string"), Validation::Ignore),
            "unable to decode \"f.yaml\": json: cannot unmarshal string into Go value of type unstructured.detector"
        );
        assert_eq!(
            err(json!([1]), Validation::Ignore),
            "unable to decode \"f.yaml\": json: cannot unmarshal array into Go value of type unstructured.detector"
        );
    }

    #[test]
    fn without_validation_a_missing_kind_quotes_the_document_as_kubectl_does() {
        assert_eq!(
            err(
                json!({"apiVersion": 5, "kind": 5, "metadata": {"name": "x"}}),
                Validation::Ignore
            ),
            "unable to decode \"f.yaml\": Object 'Kind' is missing in '{\"apiVersion\":5,\"kind\":5,\"metadata\":{\"name\":\"x\"}}'"
        );
        assert_eq!(
            err(
                json!({"apiVersion": ["v1"], "kind": "ConfigMap", "metadata": {"name": "x"}}),
                Validation::Ignore
            ),
            "unable to decode \"f.yaml\": json: cannot unmarshal array into Go struct field metadataOnlyObject.TypeMeta.apiVersion of type string"
        );
        assert_eq!(
            err(
                json!({"apiVersion": "v1", "metadata": {"name": "v78"}}),
                Validation::Ignore
            ),
            "unable to decode \"f.yaml\": Object 'Kind' is missing in '{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"v78\"}}'"
        );
    }

    /// A List's item is typed as kubectl's flattening types it, kind first.
    #[test]
    fn list_items_without_a_type_are_worded_as_kubectl_flattens_them() {
        let item = |v: Value| {
            let mut origin = Origin::single("f.yaml");
            origin.item = Some(2);
            validate(Info::from_object(v, origin), Validation::Ignore)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let prefix = "unable to get type info from the object \"*unstructured.Unstructured\": ";
        assert_eq!(
            item(json!({"metadata": {"name": "x"}})),
            Err(format!(
                "{prefix}Object 'Kind' is missing in 'object has no kind field '"
            ))
        );
        assert_eq!(
            item(json!({"kind": "ConfigMap", "apiVersion": ""})),
            Err(format!(
                "{prefix}Object 'apiVersion' is missing in 'object has no apiVersion field'"
            ))
        );
        assert_eq!(
            item(json!({"kind": "ConfigMap", "apiVersion": "v1"})),
            Ok(())
        );
    }

    #[test]
    fn a_missing_name_is_left_to_the_server_and_a_wrong_metadata_to_the_decoder() {
        for object in [
            json!({"apiVersion": "v1", "kind": "ConfigMap"}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "x-"}}),
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": "m"}),
        ] {
            assert!(validate(info(object), Validation::Strict).is_ok());
        }
        assert!(
            validate(
                info(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": "m"})),
                Validation::Ignore
            )
            .is_ok()
        );
    }

    #[test]
    fn strict_rejects_unknown_fields_of_builtin_kinds_and_warn_warns() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "dta": {"a": "b"}});
        let problem =
            "ValidationError(ConfigMap): unknown field \"dta\" in io.k8s.api.core.v1.ConfigMap";
        assert_eq!(
            err(cm.clone(), Validation::Strict),
            format!(
                "error validating \"f.yaml\": error validating data: {problem}; if you choose to ignore these errors, turn validation off with --validate=false"
            )
        );
        let warned = validate(info(cm.clone()), Validation::Warn).expect("warn mode sends it");
        assert_eq!(warned.warnings, [problem]);
        assert!(
            validate(info(cm), Validation::Ignore)
                .expect("ignored")
                .warnings
                .is_empty()
        );
    }

    #[test]
    fn custom_resources_pass_with_any_fields() {
        let cr = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "anything": 1});
        assert!(validate(info(cr), Validation::Strict).is_ok());
    }
}
