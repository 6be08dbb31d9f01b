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

use std::io::Write;

use kube::core::Status;
use resources::{Origin, ResourceError};

/// One failed object or input.
#[derive(Debug)]
pub enum Failure {
    /// The server refused the request.
    Api(Box<Status>),
    /// Anything else.
    Other(String),
    /// An error kubectl prints without `error: ` even alone.
    Bare(String),
    /// An object whose kind does not map, from the input named `source`: kubectl's
    /// stream visitor gathers these into one aggregate per input.
    Mapping { source: String, message: String },
}

impl Failure {
    /// A failure of the Builder (reading, parsing, validating, mapping).
    pub fn from_resource(err: &ResourceError) -> Self {
        if let Some(origin) = err.origin() {
            tracing::debug!("{origin} {}: {err}", origin.position());
        }
        if let (ResourceError::NoMapping { origin, .. }, Some(_)) = (err, err.origin()) {
            return Self::Mapping {
                source: origin.to_string(),
                message: err.to_string(),
            };
        }
        if err.bare_when_alone() {
            Self::Bare(err.to_string())
        } else {
            Self::Other(err.to_string())
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
            Self::Api(status) if alone => apiclient::status::check_err(status),
            Self::Api(status) => apiclient::status::standard_message(status),
            Self::Other(msg) | Self::Mapping { message: msg, .. }
                if alone && !msg.starts_with("error: ") =>
            {
                format!("error: {msg}")
            }
            Self::Other(msg) | Self::Bare(msg) | Self::Mapping { message: msg, .. } => msg.clone(),
        }
    }
}

/// The lines kubectl's `CheckErr` prints: each failure, except that among other
/// failures the mapping failures of one input are one nested aggregate, at the place
/// of the input's last (Go's `[a, b]`, repeated messages once). Alone, that aggregate
/// is unwrapped and printed one error a line, as are the others.
fn lines(failures: &[Failure]) -> Vec<String> {
    let last_of = |source: &str| {
        failures
            .iter()
            .rposition(|f| matches!(f, Failure::Mapping { source: s, .. } if s == source))
    };
    let groups = failures
        .iter()
        .enumerate()
        .filter(|(i, f)| match f {
            Failure::Mapping { source, .. } => last_of(source) == Some(*i),
            _ => true,
        })
        .count();
    if groups <= 1 {
        let alone = failures.len() == 1;
        return failures.iter().map(|f| f.render(alone)).collect();
    }
    let mut out = Vec::new();
    for (i, failure) in failures.iter().enumerate() {
        let Failure::Mapping { source, .. } = failure else {
            out.push(failure.render(false));
            continue;
        };
        if last_of(source) != Some(i) {
            continue;
        }
        let mut messages: Vec<&str> = Vec::new();
        for f in failures {
            if let Failure::Mapping { source: s, message } = f
                && s == source
                && !messages.contains(&message.as_str())
            {
                messages.push(message);
            }
        }
        out.push(match messages.len() {
            1 => messages[0].to_string(),
            _ => format!("[{}]", messages.join(", ")),
        });
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

    /// kubectl 1.37's stderr for a ConfigMap in another namespace than `-n` and two
    /// objects of a kind no CRD defines, in one file.
    #[test]
    fn mapping_failures_of_one_input_nest_among_others() {
        let mapping = |name: &str| Failure::Mapping {
            source: "\"agg.yaml\"".into(),
            message: format!(
                "resource mapping not found for name: \"{name}\" namespace: \"\" from \"agg.yaml\": no matches for kind \"Nope\" in version \"nope.example.com/v1\"\nensure CRDs are installed first"
            ),
        };
        let namespace = Failure::Bare("the namespace from the provided object \"other\" does not match the namespace \"default\". You must pass '--namespace=other' to perform this operation.".into());
        assert_eq!(
            render(&[namespace, mapping("n1"), mapping("n2")]),
            "the namespace from the provided object \"other\" does not match the namespace \"default\". You must pass '--namespace=other' to perform this operation.\n[resource mapping not found for name: \"n1\" namespace: \"\" from \"agg.yaml\": no matches for kind \"Nope\" in version \"nope.example.com/v1\"\nensure CRDs are installed first, resource mapping not found for name: \"n2\" namespace: \"\" from \"agg.yaml\": no matches for kind \"Nope\" in version \"nope.example.com/v1\"\nensure CRDs are installed first]\n"
        );
        // Alone, one input's: one a line.
        assert_eq!(render(&[mapping("n1"), mapping("n2")]).lines().count(), 4);
    }
}
