//! Splitting a stream into documents: kubectl's `StreamVisitor` with its
//! `YAMLOrJSONDecoder`.
//!
//! Like kubectl, a stream whose first non-blank character is `{` is read as a sequence
//! of concatenated JSON objects (falling back to YAML as kubectl 1.37 does, see
//! [`json_documents`]); anything else is YAML, split into documents at lines
//! that start with `---` followed by nothing or a comment. Empty documents and `null`
//! are skipped.
//!
//! Each YAML document is read as go-yaml v2 reads it (`yaml`); the top-level
//! `metadata` is checked as kubectl checks it before sending (`meta`), in a stage of
//! its own after validation ([`check_metadata`]).
//!
//! The YAML split is written here rather than left to a multi-document reader for two
//! reasons: each document is parsed on its own, so one broken document
//! does not hide the others in the same file, and the first line of every document is
//! known, so errors can name the line in the file (not in the document).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use super::source::{OnDisk, Part};
use super::{Entry, Info, Origin, ResourceError};
pub use goyaml::MAX_YAML_DEPTH;
use goyaml::{is_blank_yaml, yaml_reason};

/// A document before it becomes an [`Info`]: its first line and its parsed value (or
/// why it did not parse).
struct Document {
    line: usize,
    value: Result<Value, ResourceError>,
}

/// Decodes `bytes` from `source` into one entry per non-empty document, in order.
#[cfg(test)]
pub(crate) fn decode_stream(source: &str, bytes: &[u8]) -> Vec<Entry> {
    let mut entries: Vec<Entry> = decode_lazily(source, bytes, 0).collect();
    let documents = entries.len();
    for info in entries.iter_mut().flatten() {
        info.origin.documents = documents;
    }
    entries
}

/// The documents of `bytes` from `source` as entries, decoded one at a time as the
/// iterator is advanced: a stream of 20,000 documents is never in memory decoded all
/// at once, only its text is. `documents` is the stream's count of documents for the
/// origins (known from an earlier walk; 0 when it is not known yet).
///
/// YAML is split and decoded lazily. JSON (and text that had to be re-encoded, which
/// is owned here) is decoded at once: its values cannot be found without parsing
/// them, and the JSON-then-YAML fallback needs the first two.
pub(crate) fn decode_lazily<'a>(
    source: &str,
    bytes: &'a [u8],
    documents: usize,
) -> Box<dyn Iterator<Item = Entry> + 'a> {
    let text = match as_text(source, bytes) {
        Ok(text) => text,
        Err(err) => return Box::new(std::iter::once(Err(err))),
    };
    let source: Arc<str> = source.into();
    let docs: Box<dyn Iterator<Item = Document> + 'a> = match text {
        Cow::Borrowed(text) if !text.trim_start().starts_with('{') => {
            Box::new(yaml_documents(source.clone(), text))
        }
        text => {
            let text = text.as_ref();
            let docs: Vec<Document> = if text.trim_start().starts_with('{') {
                json_documents(&source, text)
            } else {
                yaml_documents(source.clone(), text).collect()
            };
            Box::new(docs.into_iter())
        }
    };
    into_entries(source, docs, documents)
}

/// The documents of a large file read from disk ([`OnDisk`]), one at a time as the
/// iterator is advanced: the same entries as [`decode_lazily`] of its bytes, which
/// [`OnDisk`]'s scan found to be plain YAML text. A file that cannot be read again,
/// or changed since, ends the walk with its error.
pub(crate) fn decode_on_disk<'a>(
    name: &str,
    file: &'a OnDisk,
    documents: usize,
) -> Box<dyn Iterator<Item = Entry> + 'a> {
    let parts = match file.open() {
        Ok(parts) => parts,
        Err(error) => {
            return Box::new(std::iter::once(Err(ResourceError::Read {
                path: name.to_string(),
                error,
            })));
        }
    };
    let source: Arc<str> = name.into();
    let from = source.clone();
    let name = name.to_string();
    let docs = parts.filter_map(move |part| match part {
        Part::Document(line, body) => {
            goyaml::document(line, &body).map(|doc| yaml_document(&from, Ok(doc)))
        }
        Part::BadSeparator(line, rest) => Some(yaml_document(&from, Err((line, &rest)))),
        // The last part: the file changed under the walk. Reported where the read
        // failed, after what was read before it.
        Part::Failed(error) => Some(Document {
            line: 0,
            value: Err(ResourceError::Read {
                path: name.clone(),
                error,
            }),
        }),
    });
    into_entries(source, Box::new(docs), documents)
}

/// Documents as entries, numbered in their stream (`documents`: how many it holds).
fn into_entries<'a>(
    source: Arc<str>,
    docs: Box<dyn Iterator<Item = Document> + 'a>,
    documents: usize,
) -> Box<dyn Iterator<Item = Entry> + 'a> {
    Box::new(docs.enumerate().map(move |(i, doc)| {
        let origin = Origin {
            source: source.clone(),
            document: i + 1,
            documents,
            line: doc.line,
            item: None,
        };
        Ok(Info::from_object(doc.value?, origin))
    }))
}

/// kubectl's decoding of each object's top-level `metadata` into `ObjectMeta` before it
/// is sent. A stage of its own, after validation, because kubectl validates first (a
/// `metadata` that is a string is a validation error there, an `unable to decode` only
/// with validation off). A List's items are not checked: kubectl sends them as read.
pub(crate) fn check_metadata(entries: Vec<Entry>) -> Vec<Entry> {
    entries
        .into_iter()
        .map(|entry| {
            let info = entry?;
            if info.origin.item.is_some() || !has_kind(&info.object) {
                return Ok(info);
            }
            match meta::check(&info.object) {
                Some(reason) => Err(ResourceError::Decode {
                    origin: info.origin.clone(),
                    reason,
                }),
                None => Ok(info),
            }
        })
        .collect()
}

/// Whether kubectl's unstructured decoder gets as far as its metadata check: without a
/// `kind` and an `apiVersion` it fails first (the validation stage says so here).
fn has_kind(value: &Value) -> bool {
    let set = |field| {
        value
            .get(field)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    set("kind") && set("apiVersion")
}

/// The stream as text, read the way kubectl's decoder reads it (a UTF-8 decoder behind
/// `unicode.BOMOverride`): a UTF-8 BOM is dropped, UTF-16 with a BOM (what some Windows
/// editors save) is transcoded, and invalid UTF-8 becomes U+FFFD. Control characters
/// are refused as go-yaml refuses them: they almost always mean a binary file was
/// picked up.
fn as_text<'a>(source: &str, bytes: &'a [u8]) -> Result<Cow<'a, str>, ResourceError> {
    let text = goyaml::text::lossy(bytes);
    if let Some(pos) = text.find(goyaml::text::is_control) {
        let line = text[..pos].matches('\n').count() + 1;
        return Err(ResourceError::NotText {
            source_name: source.to_string(),
            reason: format!("not a YAML or JSON text file (control character at line {line})"),
        });
    }
    Ok(text)
}

/// Concatenated JSON values, then, as kubectl 1.37's `YAMLOrJSONDecoder` does, YAML:
/// when the JSON decoder fails before it has read a second value, the stream is still
/// ambiguous, so decoding starts over as YAML after the last value read (and the blanks
/// up to the first line break). A document that starts like JSON but is YAML's flow
/// style, or JSON with a bare word, is read as YAML then. If the first YAML document
/// fails too, the JSON error is the one reported (apimachinery keeps the first
/// decoder's error); past two JSON values, a syntax error ends the stream, because
/// the rest cannot be resynchronised. kubectl 1.32 ended at every JSON syntax error.
fn json_documents(source: &str, text: &str) -> Vec<Document> {
    let mut docs = Vec::new();
    // Values read, `null`s included: apimachinery's count.
    let mut decoded = 0;
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    loop {
        let start = stream.byte_offset();
        let line = line_at(text, start + leading_blank(&text[start..]));
        match stream.next() {
            None => break,
            Some(Ok(Value::Null)) => decoded += 1,
            Some(Ok(value)) => {
                decoded += 1;
                docs.push(Document {
                    line,
                    value: Ok(value),
                });
            }
            Some(Err(e)) => {
                // Go's scanner's words where it refuses the text too; serde_json's (with
                // its line) for what only serde_json refuses (nesting beyond 128).
                let reason = json::go_syntax_error(text, start)
                    .unwrap_or_else(|| format!("line {}: {}", e.line(), JsonReason(&e)));
                let json_error = Document {
                    line: e.line(),
                    value: Err(ResourceError::Parse {
                        source_name: source.to_string(),
                        line: e.line(),
                        reason,
                    }),
                };
                if decoded <= 1 {
                    let Some(at) = yaml_restart(text, start) else {
                        docs.push(json_error);
                        break;
                    };
                    let mut yaml: Vec<Document> =
                        yaml_documents(source.into(), &text[at..]).collect();
                    let before = line_at(text, at) - 1;
                    for doc in &mut yaml {
                        doc.line += before;
                        if let Err(ResourceError::Parse { line, .. }) = &mut doc.value {
                            *line += before;
                        }
                    }
                    match yaml.first() {
                        Some(first) if first.value.is_err() => docs.push(json_error),
                        _ => docs.extend(yaml),
                    }
                } else {
                    // Past two values apimachinery returns the JSON decoder's own error,
                    // without the `json: offset N: ` its syntax-error wrapper adds.
                    let mut json_error = json_error;
                    if let Err(ResourceError::Parse { reason, .. }) = &mut json_error.value
                        && let Some(bare) = strip_offset(reason)
                    {
                        *reason = bare;
                    }
                    docs.push(json_error);
                }
                break;
            }
        }
    }
    docs
}

/// A Go syntax error's message without apimachinery's `json: offset N: ` prefix.
fn strip_offset(reason: &str) -> Option<String> {
    let rest = reason.strip_prefix("json: offset ")?;
    let (offset, message) = rest.split_once(": ")?;
    offset
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| message.to_string())
}

/// Where apimachinery's decoder starts reading YAML after the JSON decoder failed at
/// `from`: past the blanks there, up to and including the first line break. `None`
/// when only blanks are left (the JSON error stands).
fn yaml_restart(text: &str, from: usize) -> Option<usize> {
    for (i, c) in text[from..].char_indices() {
        if c == '\n' {
            return Some(from + i + 1);
        }
        // Go's `unicode.IsSpace` is Unicode's White_Space, as Rust's.
        if !c.is_whitespace() {
            return Some(from + i);
        }
    }
    None
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

/// YAML documents separated by `---` lines, each parsed on its own when the iterator
/// reaches it.
fn yaml_documents(source: Arc<str>, text: &str) -> impl Iterator<Item = Document> + '_ {
    goyaml::documents(text).map(move |document| yaml_document(&source, document))
}

/// One document of goyaml's split as a [`Document`] of `source`.
fn yaml_document(
    source: &Arc<str>,
    document: Result<goyaml::YamlDocument<'_>, (usize, &str)>,
) -> Document {
    // goyaml's split ends after a separator line that carries text: apimachinery's
    // YAMLReader refuses the file there.
    let document = match document {
        Ok(document) => document,
        Err((line, rest)) => {
            return Document {
                line,
                value: Err(ResourceError::Parse {
                    source_name: source.to_string(),
                    line,
                    reason: format!("invalid Yaml document separator: {rest}"),
                }),
            };
        }
    };
    let first_line = document.line;
    let value = document.value.map_err(|e| {
        let line = first_line + e.line.unwrap_or(1) - 1;
        ResourceError::Parse {
            source_name: source.to_string(),
            line,
            reason: format!("error converting YAML to JSON: {}", yaml_reason(&e)),
        }
    });
    // Point at the first line with content, not at a leading comment.
    let skip = document
        .body
        .lines()
        .take_while(|l| is_blank_yaml(l))
        .count();
    Document {
        line: first_line + skip,
        value,
    }
}

mod json;
mod meta;

#[cfg(test)]
mod tests;
