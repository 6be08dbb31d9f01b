//! Errors as kubectl reports them after a continue-on-error run.
//!
//! kubectl prints a single error as `error: …` (or `Error from server (Reason): …`),
//! and an aggregate of several one per line, API errors with their `Error from server`
//! prefix and the others bare (its `MultipleErrors("", errs)`). Errors about creating
//! an object name its source, as kubectl's `AddSourceToErr` does:
//! `error when creating "a.yaml": …` (the document and item, which kubectl's messages
//! leave out, are logged at `-v=4`).
//! An API error alone is printed by kubectl's `CheckErr` rules, several by
//! `StandardErrorMessage`'s (both in `apiclient::status`): a lone Invalid lists its
//! causes under `The Pod "x" is invalid: ` and does not name the source.
//!
//! **How several are ordered and grouped** follows from where kubectl's visitors
//! collect them (cli-runtime's `Builder.Do` for `create`'s `ContinueOnError()`:
//! `DecoratedVisitor{ContinueOnErrorVisitor{FlattenListVisitor{…EagerVisitorList}}}`):
//! - the `EagerVisitorList` of the inputs collects, in input order, what goes wrong
//!   reading them: an input that cannot be read or parsed, client-side validation, a
//!   document that does not decode or map (`unable to decode`, `resource mapping not
//!   found`, `unable to recognize`), and a List's items that do not map (one nested
//!   aggregate per List, from `FlattenListVisitor`); it returns them as one aggregate,
//!   after every input was read;
//! - the `ContinueOnErrorVisitor` collects, in input order, what goes wrong with each
//!   object that was read: `-n`'s namespace check (a decorator) and the create itself
//!   (the server's refusal, a print error), then adds the inputs' aggregate as its
//!   last element;
//! - `CheckErr` unwraps an aggregate of one: so without object errors the inputs'
//!   errors print one a line (a List's items bare, one a line), and beside object
//!   errors they are one element, Go's `[a, b]` (messages deduplicated, brackets
//!   only for two or more).

use std::io::Write;

use kube::core::Status;
use resources::{Origin, ResourceError};

/// One failed object or input.
#[derive(Debug)]
pub enum Failure {
    /// The server refused the request.
    Api(Box<Status>),
    /// Anything else about an object that was read (kubectl's continue-on-error
    /// visitor collects these).
    Other(String),
    /// An error of reading the inputs (kubectl's `EagerVisitorList` collects these):
    /// `list` names the List whose items failed to map, whose errors kubectl's
    /// `FlattenListVisitor` nests into one aggregate.
    Input {
        message: String,
        list: Option<String>,
        /// Printed without `error: ` even alone (see
        /// [`ResourceError::bare_when_alone`]).
        bare: bool,
    },
}

impl Failure {
    /// A failure of the Builder (reading, parsing, validating, mapping).
    pub fn from_resource(err: &ResourceError) -> Self {
        // kubectl's Builder maps each object as it visits it, and its discovery client
        // logs every failure to discover (at every verbosity) before the Builder's
        // errors are printed. The Builder's entries are decoded afresh on each pass, so
        // the line is written here, where the command meets each error once.
        if let ResourceError::Discovery { source, .. } = err {
            resources::log_failed_discovery(
                &resources::NoMapping::Discovery(source.clone()).to_string(),
            );
        }
        if let Some(origin) = err.origin() {
            tracing::debug!("{origin} {}: {err}", origin.position());
        }
        match err {
            // A decorator of kubectl's continue-on-error visitor.
            ResourceError::NamespaceMismatch { .. } => Self::Other(err.to_string()),
            ResourceError::ItemType { origin, .. }
            | ResourceError::ItemNoMapping { origin, .. } => Self::Input {
                message: err.to_string(),
                list: Some(format!("{origin}#{}", origin.document)),
                bare: false,
            },
            _ => Self::Input {
                message: err.to_string(),
                list: None,
                bare: err.bare_when_alone(),
            },
        }
    }

    /// A failed create of the object from `origin`.
    pub fn creating(origin: &Origin, err: kube::Error) -> Self {
        tracing::debug!("{origin} {}: creating failed", origin.position());
        match err {
            kube::Error::Api(mut status) => {
                apiclient::status::add_source(&mut status, "creating", origin);
                Self::Api(status)
            }
            // A request that got no answer: Go's url.Error (apiclient::go_net); an
            // answer whose body was cut: client-go's words for a body it could not
            // read (`transformResponse`), Go's below them.
            other => {
                let words = apiclient::go_net::request_error(&other)
                    .or_else(|| {
                        apiclient::go_net::failure(&other)
                            .filter(|_| !apiclient::bound::is_timeout(&other))
                            .map(|failure| {
                                format!(
                                    "unexpected error when reading response body. Please retry. Original error: {}",
                                    failure.text
                                )
                            })
                    })
                    .unwrap_or_else(|| apiclient::go_net::error_chain(&other));
                Self::Other(format!("error when creating {origin}: {words}"))
            }
        }
    }

    fn render(&self, alone: bool) -> String {
        match self {
            // Alone, kubectl's CheckErr (an Invalid lists its causes, without the
            // source); among several, StandardErrorMessage's one line.
            // create -f's client is unstructured (`UnstructuredClientForMapping`).
            Self::Api(status) if alone => {
                apiclient::status::check_err(status, apiclient::status::Decoded::Unstructured)
            }
            Self::Api(status) => apiclient::status::standard_message(
                status,
                apiclient::status::Decoded::Unstructured,
            ),
            Self::Other(msg)
            | Self::Input {
                message: msg,
                bare: false,
                ..
            } if alone && !msg.starts_with("error: ") => {
                format!("error: {msg}")
            }
            Self::Other(msg) | Self::Input { message: msg, .. } => msg.clone(),
        }
    }

    fn message(&self) -> &str {
        match self {
            Self::Api(status) => &status.message,
            Self::Other(msg) | Self::Input { message: msg, .. } => msg,
        }
    }
}

/// One element of kubectl's `EagerVisitorList` aggregate: an input's error, or the
/// nested aggregate of one List's items.
enum Element<'a> {
    Error(&'a Failure),
    List(Vec<&'a str>),
}

/// Go's `utilerrors` aggregate message of `messages` (nested aggregates flattened):
/// each message once, in brackets when there are two or more.
fn go_aggregate(messages: &[&str]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for m in messages {
        if !seen.contains(m) {
            seen.push(m);
        }
    }
    match seen.as_slice() {
        [one] => one.to_string(),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// The lines kubectl's `CheckErr` prints for `failures` (in input order): see the
/// module's notes for the rule.
fn lines(failures: &[Failure]) -> Vec<String> {
    let objects: Vec<&Failure> = failures
        .iter()
        .filter(|f| !matches!(f, Failure::Input { .. }))
        .collect();
    let mut inputs: Vec<Element<'_>> = Vec::new();
    let mut last_list: Option<&str> = None;
    for failure in failures {
        let Failure::Input { message, list, .. } = failure else {
            continue;
        };
        match (list.as_deref(), inputs.last_mut()) {
            (Some(key), Some(Element::List(items))) if last_list == Some(key) => {
                items.push(message);
            }
            (Some(key), _) => {
                inputs.push(Element::List(vec![message]));
                last_list = Some(key);
            }
            (None, _) => {
                inputs.push(Element::Error(failure));
                last_list = None;
            }
        }
    }
    if objects.is_empty() {
        return match inputs.as_slice() {
            // CheckErr unwraps the aggregate of one: an error alone, or a List's
            // aggregate, whose items print one a line.
            [Element::Error(f)] => vec![f.render(true)],
            [Element::List(items)] => items.iter().map(|m| m.to_string()).collect(),
            _ => inputs
                .iter()
                .map(|e| match e {
                    Element::Error(f) => f.render(false),
                    Element::List(items) => go_aggregate(items),
                })
                .collect(),
        };
    }
    if objects.len() == 1 && inputs.is_empty() {
        return vec![objects[0].render(true)];
    }
    let mut out: Vec<String> = objects.iter().map(|f| f.render(false)).collect();
    if !inputs.is_empty() {
        let messages: Vec<&str> = inputs
            .iter()
            .flat_map(|e| match e {
                Element::Error(f) => vec![f.message()],
                Element::List(items) => items.clone(),
            })
            .collect();
        out.push(go_aggregate(&messages));
    }
    out
}

/// Writes the failures to `out` the way kubectl's `CheckErr` does.
pub fn write_failures(failures: &[Failure], out: &mut dyn Write) -> std::io::Result<()> {
    let texts = lines(failures);
    let alone = texts.len() == 1;
    for text in texts {
        // One error is printed as kubectl's `fatal` does, adding a newline only if
        // it lacks one; each of several gets one (`MultipleErrors`).
        if alone && text.ends_with('\n') {
            write!(out, "{text}")?;
        } else {
            writeln!(out, "{text}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            source: "a.yaml".into(),
            document: 2,
            documents: 3,
            line: 5,
            item: None,
        }
    }

    fn render(failures: &[Failure]) -> String {
        let mut out = Vec::new();
        write_failures(failures, &mut out).expect("write");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn api_errors_name_their_source() {
        let status =
            Status::failure("configmaps \"x\" already exists", "AlreadyExists").with_code(409);
        let f = Failure::creating(&origin(), kube::Error::Api(Box::new(status)));
        assert_eq!(
            render(&[f]),
            "Error from server (AlreadyExists): error when creating \"a.yaml\": configmaps \"x\" already exists\n"
        );
    }

    /// kubectl 1.32's stderr for one Invalid and for it among others
    /// (`kubectl create -f a.yaml` with two problems in the Pod).
    #[test]
    fn an_invalid_alone_lists_its_causes_and_among_others_takes_one_line() {
        let invalid = || {
            let mut status = Status::failure(
                "Pod \"Bad_Name\" is invalid: [metadata.name: Invalid value: \"Bad_Name\": bad, spec.x: Required value]",
                "Invalid",
            )
            .with_code(422);
            status.details = serde_json::from_value(serde_json::json!({
                "name": "Bad_Name",
                "kind": "Pod",
                "causes": [
                    {"reason": "FieldValueInvalid", "message": "Invalid value: \"Bad_Name\": bad", "field": "metadata.name"},
                    {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.x"},
                ],
            }))
            .expect("details");
            Failure::creating(&origin(), kube::Error::Api(Box::new(status)))
        };
        assert_eq!(
            render(&[invalid()]),
            "The Pod \"Bad_Name\" is invalid: \n* metadata.name: Invalid value: \"Bad_Name\": bad\n* spec.x: Required value\n"
        );
        assert_eq!(
            render(&[invalid(), Failure::Other("b".into())]),
            "Error from server (Invalid): error when creating \"a.yaml\": Pod \"Bad_Name\" is invalid: [metadata.name: Invalid value: \"Bad_Name\": bad, spec.x: Required value]\nb\n"
        );
    }

    #[test]
    fn one_plain_error_gets_the_prefix_and_several_do_not() {
        assert_eq!(render(&[Failure::Other("boom".into())]), "error: boom\n");
        assert_eq!(
            render(&[Failure::Other("a".into()), Failure::Other("b".into())]),
            "a\nb\n"
        );
        // kubectl's List flattening: bare even alone.
        let item = ResourceError::ItemNoMapping {
            origin: origin(),
            kind: "Nope".into(),
            version: "v1".into(),
        };
        assert_eq!(
            render(&[Failure::from_resource(&item)]),
            "unable to recognize no matches for kind \"Nope\" in version \"v1\"\n"
        );
    }

    /// kubectl adds a newline to a lone error only if it lacks one (a Go template's
    /// error can end in one), and always ends each of several errors with one.
    #[test]
    fn messages_ending_in_a_newline_are_not_doubled_when_alone() {
        let ends =
            || Failure::Other("error executing template \"x\": range can't iterate over \n".into());
        assert_eq!(
            render(&[ends()]),
            "error: error executing template \"x\": range can't iterate over \n"
        );
        assert_eq!(
            render(&[ends(), Failure::Other("second".into())]),
            "error executing template \"x\": range can't iterate over \n\nsecond\n"
        );
    }

    fn mapping(file: &str, name: &str) -> Failure {
        Failure::Input {
            message: format!(
                "resource mapping not found for name: \"{name}\" namespace: \"\" from \"{file}\": no matches for kind \"Nope\" in version \"nope.example.com/v1\"\nensure CRDs are installed first"
            ),
            list: None,
            bare: false,
        }
    }

    fn namespace(name: &str) -> Failure {
        Failure::from_resource(&ResourceError::NamespaceMismatch {
            origin: origin(),
            object: name.into(),
            flag: "default".into(),
        })
    }

    fn conflict(name: &str) -> Failure {
        let status = Status::failure(
            &format!("configmaps \"{name}\" already exists"),
            "AlreadyExists",
        )
        .with_code(409);
        Failure::creating(&origin(), kube::Error::Api(Box::new(status)))
    }

    const NS_OTHER: &str = "the namespace from the provided object \"other\" does not match the namespace \"default\". You must pass '--namespace=other' to perform this operation.";
    const M1: &str = "resource mapping not found for name: \"n1\" namespace: \"\" from \"a.yaml\": no matches for kind \"Nope\" in version \"nope.example.com/v1\"\nensure CRDs are installed first";
    const M2: &str = "resource mapping not found for name: \"n2\" namespace: \"\" from \"b.yaml\": no matches for kind \"Nope\" in version \"nope.example.com/v1\"\nensure CRDs are installed first";

    /// The object errors (`ContinueOnErrorVisitor`'s) first, in input order, then the
    /// inputs' errors (`EagerVisitorList`'s) of every file as one element: Go's
    /// `[a, b]` across files, whatever came first in the input.
    #[test]
    fn input_errors_of_every_file_follow_the_object_errors_as_one_element() {
        assert_eq!(
            render(&[
                mapping("a.yaml", "n1"),
                namespace("other"),
                mapping("b.yaml", "n2"),
                conflict("x"),
            ]),
            format!(
                "{NS_OTHER}\nError from server (AlreadyExists): error when creating \"a.yaml\": configmaps \"x\" already exists\n[{M1}, {M2}]\n"
            )
        );
        // One input error beside object errors: no brackets.
        assert_eq!(
            render(&[mapping("a.yaml", "n1"), namespace("other")]),
            format!("{NS_OTHER}\n{M1}\n")
        );
        // Repeated messages once (Go's aggregate deduplicates), brackets for two.
        assert_eq!(
            render(&[
                namespace("other"),
                mapping("a.yaml", "n1"),
                mapping("a.yaml", "n1")
            ]),
            format!("{NS_OTHER}\n{M1}\n")
        );
    }

    /// Without object errors, the inputs' aggregate is what CheckErr prints: one
    /// error a line, in input order, none deduplicated; alone, with `error: `.
    #[test]
    fn input_errors_alone_print_one_a_line() {
        assert_eq!(
            render(&[mapping("a.yaml", "n1"), mapping("b.yaml", "n2")]),
            format!("{M1}\n{M2}\n")
        );
        assert_eq!(render(&[mapping("a.yaml", "n1")]), format!("error: {M1}\n"));
        // Client-side validation (an input error) with a server error: after it.
        let invalid = Failure::from_resource(&ResourceError::Invalid {
            origin: origin(),
            problems: vec!["unknown field \"bogus\"".into()],
        });
        let text = render(&[invalid, conflict("x")]);
        assert!(
            text.starts_with("Error from server (AlreadyExists)")
                && text.ends_with("turn validation off with --validate=false\n"),
            "{text}"
        );
    }

    /// A List's items that do not map are one nested aggregate (`FlattenListVisitor`):
    /// alone, CheckErr prints its items bare, one a line; beside other input errors
    /// it is one line, `[a, b]`.
    #[test]
    fn a_lists_item_errors_nest() {
        let item = |kind: &str, document: usize| {
            let mut origin = origin();
            origin.document = document;
            Failure::from_resource(&ResourceError::ItemNoMapping {
                origin,
                kind: kind.into(),
                version: "v1".into(),
            })
        };
        let a = "unable to recognize no matches for kind \"A\" in version \"v1\"";
        let b = "unable to recognize no matches for kind \"B\" in version \"v1\"";
        assert_eq!(render(&[item("A", 1), item("B", 1)]), format!("{a}\n{b}\n"));
        assert_eq!(render(&[item("A", 1)]), format!("{a}\n"));
        assert_eq!(
            render(&[item("A", 1), item("B", 1), mapping("b.yaml", "n2")]),
            format!("[{a}, {b}]\n{M2}\n")
        );
        // Two Lists: two elements.
        assert_eq!(render(&[item("A", 1), item("B", 2)]), format!("{a}\n{b}\n"));
        assert_eq!(
            render(&[item("A", 1), item("B", 1), namespace("other")]),
            format!("{NS_OTHER}\n[{a}, {b}]\n")
        );
    }
}
