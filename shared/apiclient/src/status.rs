//! kubectl's words for the errors the API server answers with, one implementation for
//! every plugin: kubectl 1.32's `cmdutil.CheckErr` and `StandardErrorMessage`
//! (`k8s.io/kubectl/pkg/cmd/util/helpers.go`), `AddSourceToErr`, and client-go's
//! `NewGenericServerResponse` for answers whose body is not a `Status`.
//!
//! The rules, in kubectl's order:
//! - **Invalid** (reason `Invalid`), alone: without details, `The request is invalid`
//!   (`: message` when there is one); with a kind or a name, `The Pod "x" is invalid`;
//!   otherwise `The request is invalid` plus `: message` only when there are no causes.
//!   Causes follow as `field: message`, duplicates dropped: one cause on the same line
//!   after `: `, several each on a line of its own after the heading, which then ends
//!   in `: ` (a trailing space), each line `* field: message`. The message, and so the
//!   `error when creating "f": ` that create -f put into it, is not shown then.
//! - **Unauthorized**: `error: You must be logged in to the server (message)`.
//! - **any other reason**: `Error from server (Reason): message`; no reason:
//!   `Error from server: message`. NotFound, AlreadyExists, Conflict, Forbidden,
//!   BadRequest, Timeout, ServerTimeout, TooManyRequests, InternalError, and an Invalid
//!   among several errors (kubectl's `MultipleErrors` uses `StandardErrorMessage` for
//!   each) all take this form.
//!
//! A body that is not a `Status` (a proxy's page, a bare `404 page not found`) is read
//! by kube as a `Status` with reason `Failed to parse error data`; it is given
//! client-go's generic reason and message for its code first. client-go also appends
//! the verb and resource (`(post pods)`); kube's error does not carry them, so that
//! part is left out.

use std::borrow::Cow;
use std::fmt::Display;

use kube::core::Status;
use kube::core::response::{StatusCause, StatusDetails};

use gotext::go_fmt;

/// The reason kube gives a `Status` it made up from a body that was not one.
const UNPARSED: &str = "Failed to parse error data";

/// The source line of kubectl 1.37's `StandardErrorMessage` log (`helpers.go:247`),
/// so that a log of ours reads as kubectl's does.
const STANDARD_ERROR_MESSAGE_LINE: u32 = 247;

/// How kubectl's client decoded the answer that held a status, which decides
/// whether its `kind` and `apiVersion` survive (kube's `Status` has no `TypeMeta`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// A typed client (kubectl run's `ClientForMapping`, rolling-update's clientset,
    /// discovery): the scheme's decoder clears the kind of a type it knows.
    Typed,
    /// An unstructured client (create -f's `UnstructuredClientForMapping`): the
    /// status keeps the kind and version the server wrote.
    Unstructured,
}

/// `StatusError.DebugError`'s text: the status as `json.MarshalIndent(status, "",
/// "  ")` writes client-go's `metav1.Status`: the struct's field order (not sorted),
/// empty fields left out but `metadata` always there, Go's string escapes. A status
/// made up from a body that was not one (client-go's `NewGenericServerResponse`)
/// never has a kind.
fn debug_json(status: &Status, decoded: Decoded) -> String {
    let server_sent = status.reason != UNPARSED && decoded == Decoded::Unstructured;
    let status = as_client_go(status);
    let text = |s: &str| (!s.is_empty()).then(|| Go::Text(s.to_string()));
    let number = |n: i64| (n != 0).then_some(Go::Number(n));
    let details = status.details.as_ref().map(|d| {
        let causes: Vec<Go> = d
            .causes
            .iter()
            .map(|c| {
                Go::object([
                    ("reason", text(&c.reason)),
                    ("message", text(&c.message)),
                    ("field", text(&c.field)),
                ])
            })
            .collect();
        Go::object([
            ("name", text(&d.name)),
            ("group", text(&d.group)),
            ("kind", text(&d.kind)),
            ("uid", text(&d.uid)),
            ("causes", (!causes.is_empty()).then_some(Go::Array(causes))),
            ("retryAfterSeconds", number(d.retry_after_seconds.into())),
        ])
    });
    let summary = status.status.as_ref().map(|s| match s {
        kube::core::response::StatusSummary::Success => "Success",
        kube::core::response::StatusSummary::Failure => "Failure",
    });
    let value = Go::object([
        ("kind", server_sent.then(|| Go::Text("Status".into()))),
        ("apiVersion", server_sent.then(|| Go::Text("v1".into()))),
        ("metadata", Some(Go::Object(Vec::new()))),
        ("status", summary.and_then(text)),
        ("message", text(&status.message)),
        ("reason", text(&status.reason)),
        ("details", details),
        ("code", number(status.code.into())),
    ]);
    let mut out = String::new();
    value.write(0, &mut out);
    out
}

/// A value as Go's `encoding/json` writes a struct: fields in declaration order,
/// which `serde_json::Value`'s sorted map cannot keep.
enum Go {
    Text(String),
    Number(i64),
    Array(Vec<Go>),
    Object(Vec<(&'static str, Go)>),
}

impl Go {
    /// An object of the fields that are there (`omitempty`: `None` is left out).
    fn object<const N: usize>(fields: [(&'static str, Option<Go>); N]) -> Go {
        Go::Object(
            fields
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k, v)))
                .collect(),
        )
    }

    /// `json.MarshalIndent(v, "", "  ")`.
    fn write(&self, depth: usize, out: &mut String) {
        const INDENT: Option<&str> = Some("  ");
        match self {
            Go::Text(s) => go_fmt::json_string(s, out),
            Go::Number(n) => out.push_str(&n.to_string()),
            Go::Array(items) if items.is_empty() => out.push_str("[]"),
            Go::Object(fields) if fields.is_empty() => out.push_str("{}"),
            Go::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    out.push_str(if i > 0 { "," } else { "" });
                    go_fmt::newline(INDENT, depth + 1, out);
                    item.write(depth + 1, out);
                }
                go_fmt::newline(INDENT, depth, out);
                out.push(']');
            }
            Go::Object(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    out.push_str(if i > 0 { "," } else { "" });
                    go_fmt::newline(INDENT, depth + 1, out);
                    go_fmt::json_string(key, out);
                    out.push_str(": ");
                    value.write(depth + 1, out);
                }
                go_fmt::newline(INDENT, depth, out);
                out.push('}');
            }
        }
    }
}

/// kubectl's `StandardErrorMessage` for an API status: the one-line form, as it is
/// printed alone for every reason but Invalid, and for every error among several.
pub fn standard_message(status: &Status, decoded: Decoded) -> String {
    // kubectl's StandardErrorMessage logs the status first (`klog.V(4)` of the
    // error's `DebugError`): the one place `-v=4` shows the server's whole answer.
    if crate::klog::enabled(4) {
        crate::klog::info(
            "helpers.go",
            STANDARD_ERROR_MESSAGE_LINE,
            &format!("server response object: {}", debug_json(status, decoded)),
        );
    }
    let status = as_client_go(status);
    match status.reason.as_str() {
        "Unauthorized" => format!(
            "error: You must be logged in to the server ({})",
            status.message
        ),
        "" => format!("Error from server: {}", status.message),
        reason => format!("Error from server ({reason}): {}", status.message),
    }
}

/// kubectl's `CheckErr` for a command whose whole error is this status: what it
/// prints on stderr, before the newline `fatal` adds to a message that lacks one (the
/// multi-line Invalid form already ends in one).
pub fn check_err(status: &Status, decoded: Decoded) -> String {
    let converted = as_client_go(status);
    if converted.reason != "Invalid" {
        // The status as received: StandardErrorMessage's log tells one made up apart.
        return standard_message(status, decoded);
    }
    let status = converted;
    let Some(details) = &status.details else {
        return if status.message.is_empty() {
            "The request is invalid".to_string()
        } else {
            format!("The request is invalid: {}", status.message)
        };
    };
    let mut heading = "The request is invalid".to_string();
    if !details.kind.is_empty() || !details.name.is_empty() {
        heading = format!(
            "The {} {} is invalid",
            details.kind,
            go_fmt::quote(&details.name)
        );
    } else if !status.message.is_empty() && details.causes.is_empty() {
        // kubectl: the default constructors repeat kind, name and causes in the
        // message, so it is shown only when there is nothing else to show.
        heading = format!("{heading}: {}", status.message);
    }
    if details.causes.is_empty() {
        return heading;
    }
    multiline(&format!("{heading}: "), &causes(&details.causes))
}

/// kubectl's `AddSourceToErr`: `error when <verb> <source>: ` put in front of the
/// message, the status otherwise kept (so an Invalid with causes still prints its
/// causes, and the source is not seen then, as with kubectl). `source` is shown as
/// given; callers pass it quoted.
pub fn add_source(status: &mut Status, verb: &str, source: impl Display) {
    status.message = format!("error when {verb} {source}: {}", status.message);
}

/// `statusCausesToAggrError`: `field: message` for each cause, repeats dropped.
fn causes(causes: &[StatusCause]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    causes
        .iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .filter(|m| seen.insert(m.clone()))
        .collect()
}

/// kubectl's `MultilineError` over an aggregate: one error on the heading's line,
/// several each on a `* ` line under it. Always ends in a newline.
fn multiline(prefix: &str, errs: &[String]) -> String {
    match errs {
        [one] => format!("{prefix}{one}\n"),
        many => {
            let mut out = format!("{prefix}\n");
            for err in many {
                out.push_str("* ");
                out.push_str(err);
                out.push('\n');
            }
            out
        }
    }
}

/// The status client-go would have made of the same answer: kube's stand-in for a
/// body that is not a `Status` becomes `NewGenericServerResponse`'s reason, message
/// and unexpected-response cause; a real `Status` is kept as it is.
fn as_client_go(status: &Status) -> Cow<'_, Status> {
    if status.reason != UNPARSED {
        return Cow::Borrowed(status);
    }
    // client-go keeps a body only when it is text; a JSON body that is not a Status
    // is `unknown` to it.
    let body = status.message.trim();
    let server_message = if body.starts_with('{') || body.starts_with('[') {
        "unknown".to_string()
    } else {
        body.to_string()
    };
    let code = status.code;
    let (reason, message) = match code {
        // kube does not say which verb was refused; a 409 to a POST is AlreadyExists
        // for client-go, any other Conflict.
        409 => ("Conflict", "the server reported a conflict".to_string()),
        404 => (
            "NotFound",
            "the server could not find the requested resource".to_string(),
        ),
        400 => (
            "BadRequest",
            "the server rejected our request for an unknown reason".to_string(),
        ),
        401 => (
            "Unauthorized",
            "the server has asked for the client to provide credentials".to_string(),
        ),
        403 => ("Forbidden", server_message.clone()),
        406 if server_message.is_empty() || server_message == "unknown" => (
            "NotAcceptable",
            "the server was unable to respond with a content type that the client supports"
                .to_string(),
        ),
        406 => ("NotAcceptable", server_message.clone()),
        415 => ("UnsupportedMediaType", server_message.clone()),
        405 => (
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource".to_string(),
        ),
        422 => (
            "Invalid",
            "the server rejected our request due to an error in our request".to_string(),
        ),
        503 => (
            "ServiceUnavailable",
            "the server is currently unable to handle the request".to_string(),
        ),
        504 => (
            "Timeout",
            "the server was unable to return a response in the time allotted, but may still be processing the request"
                .to_string(),
        ),
        429 => (
            "TooManyRequests",
            "the server has received too many requests and has asked us to try again later"
                .to_string(),
        ),
        500.. => (
            "InternalError",
            format!(
                "an error on the server ({}) has prevented the request from succeeding",
                go_fmt::quote(&server_message)
            ),
        ),
        _ => (
            "",
            format!("the server responded with the status code {code} but did not return more information"),
        ),
    };
    let mut generic = Status::failure(&message, reason).with_code(code);
    generic.details = Some(details_with(vec![StatusCause {
        reason: "UnexpectedServerResponse".to_string(),
        message: server_message,
        field: String::new(),
    }]));
    Cow::Owned(generic)
}

/// Details that name nothing and carry `causes` (kube's `StatusDetails` has no
/// `Default`).
fn details_with(causes: Vec<StatusCause>) -> StatusDetails {
    StatusDetails {
        name: String::new(),
        group: String::new(),
        kind: String::new(),
        uid: String::new(),
        causes,
        retry_after_seconds: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A status the local 1.20 API server answered with, and what kubectl 1.32 printed
    /// on stderr for it, both recorded from the same command (`testdata/NAME.json`,
    /// `testdata/NAME.stderr`).
    fn recorded(name: &str) -> (Status, String) {
        let json = std::fs::read_to_string(testdata(&format!("{name}.json"))).expect("status");
        (
            serde_json::from_str(&json).expect("a Status"),
            recorded_stderr(name),
        )
    }

    fn recorded_stderr(name: &str) -> String {
        std::fs::read_to_string(testdata(&format!("{name}.stderr"))).expect("stderr")
    }

    fn testdata(file: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/status/testdata")
            .join(file)
    }

    /// kubectl's `fatal`: the message, and a newline if it lacks one.
    fn fatal(message: String) -> String {
        if message.ends_with('\n') {
            message
        } else {
            message + "\n"
        }
    }

    /// `kubectl create -f NAME`'s stderr for a status, through `AddSourceToErr`.
    fn created_from(name: &str, source: &str) -> (String, String) {
        let (mut status, stderr) = recorded(name);
        add_source(&mut status, "creating", go_fmt::quote(source));
        (fatal(check_err(&status, Decoded::Typed)), stderr)
    }

    #[test]
    fn invalid_with_several_causes_lists_them_under_the_heading() {
        // `kubectl create -f bad.yaml`: a Pod named Bad_Name with `protocol: tcp`. The
        // heading ends in ": " and the source create -f added is not shown.
        let (ours, kubectl) = created_from("invalid_causes", "bad.yaml");
        assert_eq!(ours, kubectl);
        assert!(kubectl.starts_with("The Pod \"Bad_Name\" is invalid: \n* metadata.name: "));
        // `kubectl run Bad_Name --image=nginx`.
        let (status, kubectl) = recorded("run_invalid");
        assert_eq!(fatal(check_err(&status, Decoded::Typed)), kubectl);
    }

    #[test]
    fn invalid_with_one_cause_stays_on_one_line() {
        let (ours, kubectl) = created_from("invalid_one_cause", "onecause.yaml");
        assert_eq!(ours, kubectl);
        // `kubectl run bad-port --image=nginx --port=99999`.
        let (status, kubectl) = recorded("run_invalid_port");
        assert_eq!(fatal(check_err(&status, Decoded::Typed)), kubectl);
    }

    #[test]
    fn invalid_among_several_errors_is_one_line_with_its_source() {
        // `kubectl create -f bad.yaml -f onecause.yaml`: MultipleErrors, each through
        // StandardErrorMessage, each ending in a newline.
        let kubectl = recorded_stderr("invalid_two_docs");
        let mut ours = String::new();
        for (name, source) in [
            ("invalid_causes", "bad.yaml"),
            ("invalid_one_cause", "onecause.yaml"),
        ] {
            let (mut status, _) = recorded(name);
            add_source(&mut status, "creating", go_fmt::quote(source));
            ours.push_str(&standard_message(&status, Decoded::Typed));
            ours.push('\n');
        }
        assert_eq!(ours, kubectl);
    }

    #[test]
    fn invalid_without_details_or_kind() {
        let mut status = Status::failure("something is off", "Invalid").with_code(422);
        assert_eq!(
            check_err(&status, Decoded::Typed),
            "The request is invalid: something is off"
        );
        status.message.clear();
        assert_eq!(check_err(&status, Decoded::Typed), "The request is invalid");
        status.details = Some(details_with(Vec::new()));
        status.message = "only the message".into();
        assert_eq!(
            check_err(&status, Decoded::Typed),
            "The request is invalid: only the message"
        );
        status.details = Some(details_with(vec![
            StatusCause {
                reason: "FieldValueRequired".into(),
                message: "Required value".into(),
                field: "spec.x".into(),
            },
            // A repeat of the same field and message is dropped, as kubectl does.
            StatusCause {
                reason: "FieldValueRequired".into(),
                message: "Required value".into(),
                field: "spec.x".into(),
            },
        ]));
        assert_eq!(
            check_err(&status, Decoded::Typed),
            "The request is invalid: spec.x: Required value\n"
        );
        status.details.as_mut().expect("details").name = "Bad_Name".into();
        assert_eq!(
            check_err(&status, Decoded::Typed),
            "The  \"Bad_Name\" is invalid: spec.x: Required value\n"
        );
    }

    #[test]
    fn the_default_form_carries_the_reason_and_the_message() {
        // create -f's source is part of the message for every reason but Invalid.
        for (name, source) in [("already_exists", "cm.yaml"), ("forbidden", "cm.yaml")] {
            let (ours, kubectl) = created_from(name, source);
            assert_eq!(ours, kubectl, "{name}");
        }
        // `kubectl get rc missing`, `kubectl run dup-pod` (a second time).
        for name in ["not_found", "run_exists"] {
            let (status, kubectl) = recorded(name);
            assert_eq!(fatal(check_err(&status, Decoded::Typed)), kubectl, "{name}");
        }
        // `kubectl replace -f stale.yaml` with an old resourceVersion.
        let (mut status, kubectl) = recorded("conflict");
        add_source(&mut status, "replacing", "\"stale.yaml\"");
        assert_eq!(fatal(check_err(&status, Decoded::Typed)), kubectl);
        // `kubectl get pods --field-selector=bogus=1`: get adds its own words in front.
        let (mut status, kubectl) = recorded("bad_request");
        status.message = format!(
            "Unable to find \"/v1, Resource=pods\" that match label selector \"\", field selector \"bogus=1\": {}",
            status.message
        );
        assert_eq!(fatal(check_err(&status, Decoded::Typed)), kubectl);
    }

    #[test]
    fn unauthorized_asks_to_log_in() {
        // `kubectl get rc missing --token <wrong>`.
        let (status, kubectl) = recorded("unauthorized");
        assert_eq!(fatal(check_err(&status, Decoded::Typed)), kubectl);
        // create -f puts its source inside the parentheses.
        let (ours, kubectl) = created_from("unauthorized_create", "cm.yaml");
        assert_eq!(ours, kubectl);
    }

    /// Reasons the local server gives only under load (the throttled cluster, a slow
    /// etcd): the rule is the default form, checked here with the server's own texts.
    #[test]
    fn throttling_and_timeouts_take_the_default_form() {
        let cases = [
            (
                429,
                "TooManyRequests",
                "too many requests, please try again later",
            ),
            (
                504,
                "Timeout",
                "Timeout: request did not complete within requested timeout - context deadline exceeded",
            ),
            (
                500,
                "ServerTimeout",
                "The create operation against pods could not be completed at this time, please try again.",
            ),
        ];
        for (code, reason, message) in cases {
            let status = Status::failure(message, reason).with_code(code);
            assert_eq!(
                check_err(&status, Decoded::Typed),
                format!("Error from server ({reason}): {message}")
            );
            assert_eq!(
                standard_message(&status, Decoded::Typed),
                check_err(&status, Decoded::Typed)
            );
        }
        let status = Status::failure("no reason given", "").with_code(500);
        assert_eq!(
            check_err(&status, Decoded::Typed),
            "Error from server: no reason given"
        );
    }

    #[test]
    fn bodies_that_are_not_a_status_get_client_go_words() {
        let unparsed = |code: u16, body: &str| Status::failure(body, UNPARSED).with_code(code);
        assert_eq!(
            check_err(&unparsed(404, "404 page not found"), Decoded::Typed),
            "Error from server (NotFound): the server could not find the requested resource"
        );
        assert_eq!(
            check_err(&unparsed(401, ""), Decoded::Typed),
            "error: You must be logged in to the server (the server has asked for the client to provide credentials)"
        );
        assert_eq!(
            check_err(&unparsed(502, "Bad Gateway"), Decoded::Typed),
            "Error from server (InternalError): an error on the server (\"Bad Gateway\") has prevented the request from succeeding"
        );
        assert_eq!(
            check_err(&unparsed(403, "{\"not\":\"a status\"}"), Decoded::Typed),
            "Error from server (Forbidden): unknown"
        );
        // A 422 without a Status: client-go's unexpected-response cause has no field.
        assert_eq!(
            check_err(&unparsed(422, "bad"), Decoded::Typed),
            "The request is invalid: : bad\n"
        );
        assert_eq!(
            check_err(&unparsed(418, "teapot"), Decoded::Typed),
            "Error from server: the server responded with the status code 418 but did not return more information"
        );
    }

    /// `-v=4`'s `server response object`, as kubectl 1.37 printed it for an
    /// AlreadyExists from `create -f` (unstructured) and from `run` (typed).
    #[test]
    fn the_debug_json_is_client_go_s_status_in_field_order() {
        let mut status = Status::failure("configmaps \"x\" already exists", "AlreadyExists")
            .with_code(409)
            .with_details(StatusDetails {
                name: "x".into(),
                kind: "configmaps".into(),
                ..details_with(Vec::new())
            });
        add_source(&mut status, "creating", "\"a.yaml\"");
        assert_eq!(
            debug_json(&status, Decoded::Unstructured),
            r#"{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "error when creating \"a.yaml\": configmaps \"x\" already exists",
  "reason": "AlreadyExists",
  "details": {
    "name": "x",
    "kind": "configmaps"
  },
  "code": 409
}"#
        );
        let typed = debug_json(&status, Decoded::Typed);
        assert!(typed.starts_with("{\n  \"metadata\": {},\n  \"status\": \"Failure\",\n"));
        let invalid = Status::failure("bad <x>", "Invalid")
            .with_code(422)
            .with_details(details_with(vec![StatusCause {
                reason: "FieldValueInvalid".into(),
                message: "m".into(),
                field: "f".into(),
            }]));
        assert_eq!(
            debug_json(&invalid, Decoded::Typed),
            r#"{
  "metadata": {},
  "status": "Failure",
  "message": "bad \u003cx\u003e",
  "reason": "Invalid",
  "details": {
    "causes": [
      {
        "reason": "FieldValueInvalid",
        "message": "m",
        "field": "f"
      }
    ]
  },
  "code": 422
}"#
        );
    }
}
