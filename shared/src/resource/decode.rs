//! Splitting a stream into documents: kubectl's `StreamVisitor` with its
//! `YAMLOrJSONDecoder`.
//!
//! Like kubectl, a stream whose first non-blank character is `{` is read as a sequence
//! of concatenated JSON objects; anything else is YAML, split into documents at lines
//! that are exactly `---`. Empty documents and `null` are skipped.
//!
//! The YAML split is written here rather than left to serde-saphyr's multi-document
//! reader for two reasons: each document is parsed on its own, so one broken document
//! does not hide the others in the same file, and the first line of every document is
//! known, so errors can name the line in the file (not in the document).

use std::sync::Arc;

use serde_json::Value;

use super::{Entry, Info, Origin, ResourceError};

/// A document before it becomes an [`Info`]: its first line and its parsed value (or
/// why it did not parse).
struct Document {
    line: usize,
    value: Result<Value, ResourceError>,
}

/// Decodes `bytes` from `source` into one entry per non-empty document, in order.
pub(crate) fn decode_stream(source: &str, bytes: &[u8]) -> Vec<Entry> {
    let text = match as_text(source, bytes) {
        Ok(text) => text,
        Err(err) => return vec![Err(err)],
    };
    let docs = if text.trim_start().starts_with('{') {
        json_documents(source, text)
    } else {
        yaml_documents(source, text)
    };
    let source: Arc<str> = source.into();
    let documents = docs.len();
    docs.into_iter()
        .enumerate()
        .map(|(i, doc)| {
            let origin = Origin {
                source: source.clone(),
                document: i + 1,
                documents,
                line: doc.line,
                item: None,
            };
            doc.value.map(|value| Info::from_object(value, origin))
        })
        .collect()
}

/// Checks the stream is text. kubectl's YAML parser rejects control characters; a NUL
/// byte or invalid UTF-8 almost always means a binary file was picked up.
fn as_text<'a>(source: &str, bytes: &'a [u8]) -> Result<&'a str, ResourceError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let not_text = |reason: String| ResourceError::NotText {
        source_name: source.to_string(),
        reason,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        not_text(format!(
            "not a YAML or JSON text file (invalid UTF-8 at byte {})",
            e.valid_up_to()
        ))
    })?;
    if let Some(pos) = text.find('\0') {
        let line = text[..pos].matches('\n').count() + 1;
        return Err(not_text(format!(
            "not a YAML or JSON text file (control character at line {line})"
        )));
    }
    Ok(text)
}

/// Concatenated JSON values. After a syntax error the rest of the stream cannot be
/// resynchronised, so decoding stops there (as kubectl's does).
fn json_documents(source: &str, text: &str) -> Vec<Document> {
    let mut docs = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    loop {
        let start = stream.byte_offset();
        let line = line_at(text, start + leading_blank(&text[start..]));
        match stream.next() {
            None => break,
            Some(Ok(Value::Null)) => continue,
            Some(Ok(value)) => docs.push(Document {
                line,
                value: Ok(value),
            }),
            Some(Err(e)) => {
                let reason = format!("{}", JsonReason(&e));
                docs.push(Document {
                    line: e.line(),
                    value: Err(ResourceError::Parse {
                        source_name: source.to_string(),
                        line: e.line(),
                        reason,
                    }),
                });
                break;
            }
        }
    }
    docs
}

/// serde_json's message without its " at line L column C" suffix (the line is printed
/// separately, counted from the start of the file).
struct JsonReason<'a>(&'a serde_json::Error);

impl std::fmt::Display for JsonReason<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let full = self.0.to_string();
        let suffix = format!(" at line {} column {}", self.0.line(), self.0.column());
        f.write_str(full.strip_suffix(&suffix).unwrap_or(&full))
    }
}

fn leading_blank(s: &str) -> usize {
    s.len() - s.trim_start().len()
}

fn line_at(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].matches('\n').count() + 1
}

/// YAML documents separated by `---` lines, each parsed on its own.
fn yaml_documents(source: &str, text: &str) -> Vec<Document> {
    let mut docs = Vec::new();
    for (first_line, body) in split_yaml(text) {
        if is_blank_yaml(body) {
            continue;
        }
        let value = serde_saphyr::from_str::<Value>(body).map_err(|e| {
            let line = first_line + e.location().map_or(1, |l| l.line() as usize) - 1;
            ResourceError::Parse {
                source_name: source.to_string(),
                line,
                reason: saphyr_reason(&e),
            }
        });
        match value {
            Ok(Value::Null) => continue,
            value => {
                // Point at the first line with content, not at a leading comment.
                let skip = body.lines().take_while(|l| is_blank_yaml(l)).count();
                docs.push(Document {
                    line: first_line + skip,
                    value,
                });
            }
        }
    }
    docs
}

/// Splits at lines that start with `---` followed only by whitespace, kubectl's
/// `YAMLReader` rule. Returns each document with the 1-based line it starts on.
fn split_yaml(text: &str) -> Vec<(usize, &str)> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut start_line = 1;
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let is_separator = line
            .strip_prefix("---")
            .is_some_and(|rest| rest.trim().is_empty());
        if is_separator {
            parts.push((start_line, &text[start..offset]));
            start = offset + line.len();
            start_line = i + 2;
        }
        offset += line.len();
    }
    parts.push((start_line, &text[start..]));
    parts
}

/// Blank lines, comments and a `...` end marker only.
fn is_blank_yaml(body: &str) -> bool {
    body.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "..."
    })
}

/// serde-saphyr renders errors as `error: line L column C: message` followed by a
/// source snippet; keep just the message, since the line is reported separately.
fn saphyr_reason(e: &serde_saphyr::Error) -> String {
    let full = e.to_string();
    let first = full.lines().next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    match first.split_once(": ") {
        Some((position, message)) if position.starts_with("line ") => message.to_string(),
        _ => first.to_string(),
    }
}

#[cfg(test)]
mod tests;
