//! A create whose answer was lost, resolved: the rule that makes create-file's
//! creates survive an API server dying under them.
//!
//! The client sends a request again by itself only when the server provably did not
//! process it (`apiclient::client::resend`: a GOAWAY, `REFUSED_STREAM`, a server that
//! says it is shutting down). A create whose connection broke after it left may have
//! been applied or not, and nothing in HTTP says which. A create of a *named* object
//! is idempotent by name, though: the server stores at most one object of that name.
//! So create-file sends it again, on a new connection ([`resend`]), and reads the
//! answer:
//! - created: the first attempt was never applied; reported as created, once;
//! - `AlreadyExists`: either the first attempt was applied, or someone else's object
//!   has the name. The object is read back, and counts as this create's only when it
//!   is provably the one sent ([`is_ours`]); otherwise the `AlreadyExists` is
//!   reported as kubectl reports it.
//!
//! An object with `generateName` and no name is never sent again: a second create
//! would make a second object, and no name ties either to this request. Its outcome is
//! reported as unknown ([`unknown_outcome`]), with the error.
//!
//! The same read-back resolves the `AlreadyExists` that follows a `5xx` the client's
//! retries sent again (the server applied the create, then failed its answer).

use std::time::{Duration, SystemTime};

use serde_json::Value;

/// How often a create whose answer was lost is sent again, and how long apart: at
/// once, then 1 s, 2 s, 4 s (Go's transport's first backoffs). A load balancer notices
/// a dead server within its health check's period (a second or two), and sends a
/// connection that server refused to another one meanwhile; a cluster that stays
/// unreachable fails each create within about 7 s.
pub const RESEND_WAITS: [Duration; 4] = [
    Duration::ZERO,
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
];

/// How far the server's clock may be behind ours: `creationTimestamp` and a
/// `managedFields` time have whole seconds.
pub const CLOCK_SKEW: Duration = Duration::from_secs(5);

/// What a create sent: the object, its field manager and when it was first sent.
pub struct Sent<'a> {
    pub object: &'a Value,
    pub field_manager: &'a str,
    pub at: SystemTime,
}

/// Why an object read back after `AlreadyExists` is not provably the one sent (logged
/// at `-v=4`; the user sees the server's `AlreadyExists`).
#[derive(Debug, PartialEq, Eq)]
pub enum NotOurs {
    /// Created before this create was first sent.
    Older,
    /// No `managedFields` entry of this create's field manager, operation and time.
    NoEntry,
    /// A field of the object sent has another value (or none) on the server.
    Content(String),
}

impl std::fmt::Display for NotOurs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Older => f.write_str("it was created before this create was sent"),
            Self::NoEntry => f.write_str(
                "no managedFields entry of this create's field manager from the time it was sent",
            ),
            Self::Content(path) => write!(f, "its {path} is not what was sent"),
        }
    }
}

/// Whether `live` (read back after `AlreadyExists`) is provably the object `sent`
/// created:
/// - created no earlier than the create was first sent (less [`CLOCK_SKEW`]);
/// - its `managedFields` hold the entry a create by `sent.field_manager` writes
///   (operation `Update`, the sent `apiVersion`, no subresource), from that time on;
/// - every field sent is on the server with the value sent (labels and annotations
///   among the metadata; what the server adds — defaults, uid, status — is not
///   compared). A value the server normalises (a quantity `1000m` stored as `1`)
///   fails this, and the `AlreadyExists` stands: never counted as created when not
///   provably so.
pub fn is_ours(sent: &Sent<'_>, live: &Value) -> Result<(), NotOurs> {
    let since = seconds(
        sent.at
            .checked_sub(CLOCK_SKEW)
            .unwrap_or(SystemTime::UNIX_EPOCH),
    );
    let created = time(&live["metadata"]["creationTimestamp"]);
    if created.is_none_or(|created| created < since) {
        return Err(NotOurs::Older);
    }
    let api_version = sent.object["apiVersion"].as_str().unwrap_or_default();
    let entry = live["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|entry| {
            entry["manager"].as_str() == Some(sent.field_manager)
                && entry["operation"].as_str() == Some("Update")
                && entry["apiVersion"].as_str() == Some(api_version)
                && entry["subresource"].as_str().unwrap_or_default().is_empty()
                && time(&entry["time"]).is_some_and(|t| t >= since)
        });
    if !entry {
        return Err(NotOurs::NoEntry);
    }
    for (key, value) in sent.object.as_object().into_iter().flatten() {
        match key.as_str() {
            "apiVersion" | "kind" | "status" => {}
            "metadata" => {
                for field in ["name", "namespace", "labels", "annotations"] {
                    if !value[field].is_null() {
                        contained(
                            &value[field],
                            &live["metadata"][field],
                            &format!("metadata.{field}"),
                        )?;
                    }
                }
            }
            _ => contained(value, &live[key], key)?,
        }
    }
    Ok(())
}

/// Whether `sent` is within `live`: every key of an object with a contained value,
/// an array of the same length with each element contained, any other value equal.
fn contained(sent: &Value, live: &Value, path: &str) -> Result<(), NotOurs> {
    let ok = match (sent, live) {
        (Value::Object(sent), Value::Object(live)) => {
            for (key, value) in sent {
                // A null sent is a field left out.
                if value.is_null() {
                    continue;
                }
                contained(
                    value,
                    live.get(key).unwrap_or(&Value::Null),
                    &format!("{path}.{key}"),
                )?;
            }
            true
        }
        (Value::Array(sent), Value::Array(live)) if sent.len() == live.len() => {
            for (i, (sent, live)) in sent.iter().zip(live).enumerate() {
                contained(sent, live, &format!("{path}[{i}]"))?;
            }
            true
        }
        (sent, live) => sent == live,
    };
    if ok {
        Ok(())
    } else {
        Err(NotOurs::Content(path.to_string()))
    }
}

/// An RFC 3339 time as whole seconds since the epoch.
fn time(value: &Value) -> Option<i64> {
    let time = serde_json::from_value::<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>(
        value.clone(),
    )
    .ok()?;
    Some(time.0.as_second())
}

fn seconds(at: SystemTime) -> i64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The message of a `generateName` create whose answer was lost: the error, then
/// that the object may or may not exist and was not sent again.
pub fn unknown_outcome(error: &str, kind: &str, generate_name: &str) -> String {
    format!(
        "{error} (the outcome is unknown: the server may have created the {kind} with \
         generateName {generate_name:?} before the connection was lost; it was not sent \
         again, as a second create would make a second object)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// 2024-01-01T00:00:00Z.
    const T: u64 = 1_704_067_200;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn sent_object() -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm-1", "labels": {"app": "a"}},
            "data": {"k": "v1"},
        })
    }

    /// The object as the server stores it after that create at `T`.
    fn live(manager: &str, time: &str) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "cm-1",
                "namespace": "ns",
                "uid": "u",
                "resourceVersion": "7",
                "creationTimestamp": time,
                "labels": {"app": "a"},
                "managedFields": [{
                    "manager": manager,
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": time,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {".": {}, "f:k": {}}},
                }],
            },
            "data": {"k": "v1"},
        })
    }

    fn sent(object: &Value, when: u64) -> Sent<'_> {
        Sent {
            object,
            field_manager: "kubectl-create",
            at: at(when),
        }
    }

    #[test]
    fn the_object_this_create_made_is_ours() {
        let object = sent_object();
        let live = live("kubectl-create", "2024-01-01T00:00:00Z");
        assert_eq!(is_ours(&sent(&object, T), &live), Ok(()));
        // Within the clock skew (the server's whole seconds, a clock behind ours).
        assert_eq!(is_ours(&sent(&object, T + 5), &live), Ok(()));
    }

    #[test]
    fn an_older_object_is_someone_else_s() {
        let object = sent_object();
        let live = live("kubectl-create", "2024-01-01T00:00:00Z");
        assert_eq!(is_ours(&sent(&object, T + 6), &live), Err(NotOurs::Older));
        let mut no_time = live.clone();
        no_time["metadata"]["creationTimestamp"] = Value::Null;
        assert_eq!(is_ours(&sent(&object, T), &no_time), Err(NotOurs::Older));
    }

    #[test]
    fn another_manager_or_operation_is_someone_else_s() {
        let object = sent_object();
        let other = live("kubectl-client-side-apply", "2024-01-01T00:00:00Z");
        assert_eq!(is_ours(&sent(&object, T), &other), Err(NotOurs::NoEntry));
        let mut applied = live("kubectl-create", "2024-01-01T00:00:00Z");
        applied["metadata"]["managedFields"][0]["operation"] = json!("Apply");
        assert_eq!(is_ours(&sent(&object, T), &applied), Err(NotOurs::NoEntry));
        let mut status = live("kubectl-create", "2024-01-01T00:00:00Z");
        status["metadata"]["managedFields"][0]["subresource"] = json!("status");
        assert_eq!(is_ours(&sent(&object, T), &status), Err(NotOurs::NoEntry));
        let mut none = live("kubectl-create", "2024-01-01T00:00:00Z");
        none["metadata"]["managedFields"] = Value::Null;
        assert_eq!(is_ours(&sent(&object, T), &none), Err(NotOurs::NoEntry));
    }

    #[test]
    fn an_object_with_other_content_is_someone_else_s() {
        let object = sent_object();
        let mut data = live("kubectl-create", "2024-01-01T00:00:00Z");
        data["data"]["k"] = json!("v2");
        assert_eq!(
            is_ours(&sent(&object, T), &data),
            Err(NotOurs::Content("data.k".into()))
        );
        let mut labels = live("kubectl-create", "2024-01-01T00:00:00Z");
        labels["metadata"]["labels"] = json!({"app": "b"});
        assert_eq!(
            is_ours(&sent(&object, T), &labels),
            Err(NotOurs::Content("metadata.labels.app".into()))
        );
        // An array must have the sent length.
        let list = json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "cm-1"}, "spec": {"a": [1, 2]}});
        let mut server = live("kubectl-create", "2024-01-01T00:00:00Z");
        server["spec"] = json!({"a": [1, 2, 3]});
        assert_eq!(
            is_ours(&sent(&list, T), &server),
            Err(NotOurs::Content("spec.a".into()))
        );
        server["spec"] = json!({"a": [1, 2], "defaulted": true});
        assert_eq!(
            is_ours(&sent(&list, T), &server),
            Ok(()),
            "server defaults are not compared"
        );
    }

    #[test]
    fn an_unknown_outcome_says_why_it_was_not_sent_again() {
        assert_eq!(
            unknown_outcome(
                "Post \"https://h/api/v1/namespaces/n/configmaps\": unexpected EOF",
                "ConfigMap",
                "cm-"
            ),
            "Post \"https://h/api/v1/namespaces/n/configmaps\": unexpected EOF (the outcome is \
             unknown: the server may have created the ConfigMap with generateName \"cm-\" before \
             the connection was lost; it was not sent again, as a second create would make a \
             second object)"
        );
    }
}
