//! The pure text of `--edit`: kubectl's comment header and its reasons, comment
//! stripping and the "no change" comparison, what an edited file's errors become, and
//! create failures without the edited file's name. No editor, no file, no server:
//! each is unit-tested (`text/tests.rs`).

use resources::{Info, ResourceError, Validation};
use serde_json::Value;

use crate::report::Failure;

const HEADER: &str = "# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
";

/// The name kubectl gives the edited text in messages.
pub const EDITED_SOURCE: &str = "edited-file";

/// Why the file is reopened (kubectl's `editReason`): a head line and details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    pub head: String,
    pub other: Vec<String>,
}

/// kubectl's `editHeader.writeTo`: the fixed header, then each reason as comments.
pub fn header(reasons: &[Reason]) -> String {
    let mut out = String::from(HEADER);
    for reason in reasons {
        let colon = if reason.other.is_empty() { "" } else { ":" };
        out.push_str(&format!("# {}{colon}\n", hash_on_line_break(&reason.head)));
        for other in &reason.other {
            out.push_str(&format!("# * {}\n", hash_on_line_break(other)));
        }
        out.push_str("#\n");
    }
    out
}

/// kubectl's `hashOnLineBreak`: continues a comment over the line breaks of `s`.
pub fn hash_on_line_break(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '\n' && chars.peek().is_some_and(|next| *next != '#') {
            out.push_str("# ");
        }
    }
    out
}

/// kubectl's `ManualStrip`: the text without its comment lines (blank lines and the
/// final line break kept).
pub fn manual_strip(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len() - 1;
    let mut out = String::with_capacity(text.len());
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        out.push_str(line);
        if i < last {
            out.push('\n');
        }
    }
    out
}

/// What two versions of the file are compared by (kubectl's `StripComments`): the
/// document as JSON when the text parses, else the text without comment lines. So
/// reformatting or comments alone are "no change".
#[derive(Debug, PartialEq)]
pub enum Stripped {
    Data(Value),
    Text(String),
}

/// kubectl's `StripComments`: sigs.k8s.io/yaml's `ToJSON` of the text (its first
/// document, with go-yaml v2's scalar rules, as every other reader of ours), else
/// `ManualStrip`.
pub fn strip_comments(text: &str) -> Stripped {
    match goyaml::to_json(text, goyaml::yaml_limits(text.len())) {
        Ok(doc) => Stripped::Data(doc),
        Err(_) => Stripped::Text(manual_strip(text)),
    }
}

/// kubectl's `hasLines`: whether any line is neither blank nor a comment.
pub fn has_lines(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim();
        !l.is_empty() && !l.starts_with('#')
    })
}

/// A utilerrors aggregate as kubectl prints it: one message alone, several in brackets.
fn aggregate(messages: &[String]) -> String {
    match messages {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// `configmaps`, `deployments.apps`: how kubectl names the resource in edit errors.
fn resource_string(info: &Info) -> String {
    match &info.mapping {
        Some(m) if m.group.is_empty() => m.resource.clone(),
        Some(m) => format!("{}.{}", m.resource, m.group),
        None => info.gvk.kind.to_ascii_lowercase(),
    }
}

/// Why kubectl's validator cannot read the edited text, if it cannot: it is given
/// `StripComments(edited)` (the first document as JSON when it reads, else the text
/// without its comment lines) and reads it with sigs.k8s.io/yaml's `ToJSON`, so the
/// words are go-yaml's without the decoder's `error converting YAML to JSON: ` and
/// the line is counted without the comment lines (`yaml: line 8: …` for line 12 of a
/// file under the four-line header).
pub fn unreadable(edited: &str) -> Option<String> {
    let limits = |text: &str| goyaml::yaml_limits(text.len());
    if goyaml::to_json(edited, limits(edited)).is_ok() {
        return None;
    }
    let stripped = manual_strip(edited);
    goyaml::to_json(&stripped, limits(&stripped))
        .err()
        .map(|e| goyaml::yaml_reason(&e))
}

/// What an edited file's errors become: the reasons to show in the reopened file, and
/// the line kubectl prints on stderr for a validation failure.
///
/// kubectl validates the edited text first and reports any failure (the text not
/// reading as YAML, `unreadable`, included) as `<resource> "<name>" was not valid`
/// with the validator's message; only a file that validates and still does not read
/// (an unknown kind, a later document that does not parse, or any error with
/// validation off) gets "The edited file had a syntax error".
pub fn reasons_for(
    errors: &[ResourceError],
    validation: Validation,
    original: &Info,
    unreadable: Option<String>,
) -> (Vec<Reason>, Option<String>) {
    let validating = validation != Validation::Ignore;
    let failed_validation: Vec<String> = match unreadable {
        // The validator stops at the text it cannot read.
        Some(reason) if validating => vec![reason],
        _ => errors
            .iter()
            .filter_map(|e| match e {
                ResourceError::Invalid { problems, .. } => {
                    Some(resources::openapi::aggregate(problems))
                }
                ResourceError::NotText { reason, .. } if validating => Some(reason.clone()),
                _ => None,
            })
            .collect(),
    };
    if !failed_validation.is_empty() {
        let resource = resource_string(original);
        let name = original.name();
        let reason = Reason {
            head: format!("{resource} {name:?} was not valid"),
            other: vec![format!(
                "<nil>: Invalid value: \"The edited file failed validation\": {}",
                aggregate(&failed_validation)
            )],
        };
        return (
            vec![reason],
            Some(format!("error: {resource} {name:?} is invalid")),
        );
    }
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    let reason = Reason {
        head: format!(
            "The edited file had a syntax error: {}",
            aggregate(&messages)
        ),
        other: Vec::new(),
    };
    (vec![reason], None)
}

/// A create failure without the `error when creating "edited-file": ` prefix.
pub fn without_edited_source(failure: Failure) -> Failure {
    let strip = |message: String| -> String {
        let prefix = format!("error when creating {EDITED_SOURCE:?}");
        match message.strip_prefix(&prefix) {
            Some(rest) => rest
                .split_once(": ")
                .map_or(message.clone(), |(_, m)| m.to_string()),
            None => message,
        }
    };
    match failure {
        Failure::Api(mut status) => {
            status.message = strip(std::mem::take(&mut status.message));
            Failure::Api(status)
        }
        Failure::Other(message) => Failure::Other(strip(message)),
        Failure::Input {
            message,
            list,
            bare,
        } => Failure::Input {
            message: strip(message),
            list,
            bare,
        },
    }
}

#[cfg(test)]
mod tests;
