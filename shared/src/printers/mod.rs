//! Printers: how a command shows the objects it created or read, in the shape of
//! cli-runtime's `pkg/printers`.
//!
//! A [`Printer`] writes one object (as JSON, the common currency of dynamic and typed
//! objects) to the writer it is given and nothing else, so tests print into a
//! `Vec<u8>`. [`crate::flags::PrintFlags::to_printer`] picks one from `-o`:
//!
//! | `-o`          | printer             | output for a pod `web`                    |
//! |---------------|---------------------|-------------------------------------------|
//! | *(absent)*    | [`OperationPrinter`]| `pod/web created` (`… (dry run)`)         |
//! | `json`        | [`JsonPrinter`]     | the object, 4-space indented              |
//! | `yaml`        | [`YamlPrinter`]     | the object, `---` between objects         |
//! | `name`        | [`NamePrinter`]     | `pod/web`, `deployment.apps/web`          |
//!
//! kubectl's `jsonpath=…` and `go-template=…` formats are not offered: no maintained
//! Rust crate implements either grammar (kubectl's JSONPath dialect with `{range}` /
//! `{end}` differs from RFC 9535, and Go's `text/template` has no faithful Rust port
//! that is kept up), so `-o jsonpath=…` fails with kubectl's "unable to match a printer"
//! message listing the formats that are available.
//!
//! ```
//! use shared::printers::{NamePrinter, Printer};
//! let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}});
//! let mut out = Vec::new();
//! NamePrinter.print(&pod, &mut out).unwrap();
//! assert_eq!(out, b"pod/web\n");
//! ```

use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

/// Errors raised while choosing a printer from `-o`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `-o` names a format this crate has no printer for. The message is kubectl's.
    #[error(
        "unable to match a printer suitable for the output format {format:?}, allowed formats are: {}",
        ALLOWED_FORMATS.join(",")
    )]
    UnsupportedFormat {
        /// The value given to `-o`.
        format: String,
    },
}

/// The `-o` values [`crate::flags::PrintFlags`] accepts, sorted as kubectl lists them.
pub const ALLOWED_FORMATS: &[&str] = &["json", "name", "yaml"];

/// Writes one object to `out`. Implementations write nothing else (no stderr, no
/// files), and may keep state between calls (the YAML document separator).
pub trait Printer {
    /// Prints `obj`, a Kubernetes object as JSON (`apiVersion`, `kind`, `metadata`, …).
    fn print(&self, obj: &Value, out: &mut dyn Write) -> io::Result<()>;
}

/// `-o json`: the object, indented with 4 spaces like kubectl's `json.MarshalIndent`,
/// followed by a newline. Several objects are printed one after the other.
#[derive(Debug, Default)]
pub struct JsonPrinter {
    /// Keep `metadata.managedFields` (`--show-managed-fields`).
    pub show_managed_fields: bool,
}

impl Printer for JsonPrinter {
    fn print(&self, obj: &Value, out: &mut dyn Write) -> io::Result<()> {
        let obj = strip_managed_fields(obj, self.show_managed_fields);
        let mut ser = serde_json::Serializer::with_formatter(
            &mut *out,
            serde_json::ser::PrettyFormatter::with_indent(b"    "),
        );
        serde::Serialize::serialize(obj.as_ref(), &mut ser).map_err(io::Error::other)?;
        out.write_all(b"\n")
    }
}

/// `-o yaml`: the object as block YAML (serde-saphyr, which quotes YAML 1.1 booleans
/// such as `"yes"` so that kubectl reads them back as strings). Like kubectl's
/// `YAMLPrinter`, every object after the first is preceded by `---`.
#[derive(Debug, Default)]
pub struct YamlPrinter {
    /// Keep `metadata.managedFields` (`--show-managed-fields`).
    pub show_managed_fields: bool,
    printed: AtomicUsize,
}

impl YamlPrinter {
    /// A YAML printer that has printed nothing yet.
    pub fn new(show_managed_fields: bool) -> Self {
        Self {
            show_managed_fields,
            printed: AtomicUsize::new(0),
        }
    }
}

impl Printer for YamlPrinter {
    fn print(&self, obj: &Value, out: &mut dyn Write) -> io::Result<()> {
        if self.printed.fetch_add(1, Ordering::Relaxed) > 0 {
            out.write_all(b"---\n")?;
        }
        let obj = strip_managed_fields(obj, self.show_managed_fields);
        out.write_all(to_yaml(obj.as_ref())?.as_bytes())
    }
}

/// Serialises a value as kubectl-style block YAML: two-space indents, sequences not
/// indented under their key (`- image: nginx` sits at the key's column), `{}` and `[]`
/// for empty collections. serde-saphyr keeps the key order of the input, and a
/// `serde_json::Value` map is sorted, which is the order kubectl's YAML has too (it
/// converts through a Go map).
pub fn to_yaml(value: &Value) -> io::Result<String> {
    // serde-saphyr's defaults are already kubectl's layout (2-space indent, compact
    // sequences, `{}`/`[]` for empty collections).
    let mut text = serde_saphyr::to_string(value).map_err(io::Error::other)?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// `-o name`: `resource.group/name` (`pod/web`, `deployment.apps/web`), one per line.
#[derive(Debug, Default, Clone, Copy)]
pub struct NamePrinter;

impl Printer for NamePrinter {
    fn print(&self, obj: &Value, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{}", qualified_name(obj))
    }
}

/// The default output of a mutating command: `pod/web created`, with kubectl's
/// ` (dry run)` / ` (server dry run)` suffix folded into `operation`.
#[derive(Debug, Clone)]
pub struct OperationPrinter {
    /// What happened, e.g. `created` or `created (server dry run)`.
    pub operation: String,
}

impl Printer for OperationPrinter {
    fn print(&self, obj: &Value, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{} {}", qualified_name(obj), self.operation)
    }
}

/// kubectl's short name for an object: lower-case kind, `.group` unless it is the core
/// group, `/name` (`pod/web`, `deployment.apps/web`, `cronjob.batch/nightly`).
///
/// Like kubectl's name printer this uses the kind, not the plural resource name, so no
/// discovery is needed. A missing kind or name prints as an empty string, never panics.
pub fn qualified_name(obj: &Value) -> String {
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match api_version.split_once('/') {
        Some((group, _version)) if !group.is_empty() => format!("{kind}.{group}/{name}"),
        _ => format!("{kind}/{name}"),
    }
}

/// kubectl hides `metadata.managedFields` in JSON and YAML unless asked; borrowing
/// avoids a copy in the common case where there is nothing to strip.
fn strip_managed_fields(obj: &Value, keep: bool) -> std::borrow::Cow<'_, Value> {
    if keep || obj.pointer("/metadata/managedFields").is_none() {
        return std::borrow::Cow::Borrowed(obj);
    }
    let mut owned = obj.clone();
    if let Some(meta) = owned.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    std::borrow::Cow::Owned(owned)
}

#[cfg(test)]
mod tests;
