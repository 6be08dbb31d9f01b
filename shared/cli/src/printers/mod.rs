//! Printers: how a command shows the objects it created or read, in the shape of
//! cli-runtime's `pkg/printers`.
//!
//! A [`Printer`] writes one object (as JSON, the common currency of dynamic and typed
//! objects) to the writer it is given and nothing else, so tests print into a
//! `Vec<u8>`. [`crate::flags::PrintFlags::to_printer`] picks one from `-o`:
//!
//! | `-o`                     | printer             | output for a pod `web`          |
//! |--------------------------|---------------------|---------------------------------|
//! | *(absent)*               | [`OperationPrinter`]| `pod/web created` (`… (dry run)`) |
//! | `json`                   | [`JsonPrinter`]     | the object, Go's `MarshalIndent` |
//! | `yaml`                   | [`YamlPrinter`]     | the object, `---` between objects |
//! | `kyaml`                  | [`KyamlPrinter`]    | the object as KYAML, `---` before each |
//! | `name`                   | [`NamePrinter`]     | `pod/web`, `deployment.apps/web` |
//! | `go-template=T`, `template=T` | [`GoTemplatePrinter`] | template `T` ([`gotemplate`]) |
//! | `go-template-file=F`, `templatefile=F` | [`GoTemplatePrinter`] | the template in file `F` |
//! | `jsonpath=T`             | [`JsonPathPrinter`] | template `T` ([`jsonpath`])     |
//! | `jsonpath-file=F`        | [`JsonPathPrinter`] | the template in file `F`        |
//! | `jsonpath-as-json=T`     | [`JsonPathPrinter`] | each action's results as a JSON list |
//!
//! `--template=T` gives the template of any of these formats as kubectl allows, and
//! on its own (no `-o`) means `-o go-template`; `--allow-missing-template-keys=false`
//! turns a missing key into an error.
//!
//! Neither template language has a faithful Rust implementation, so both are written
//! here, each after its Go original: [`gotemplate`] is Go's `text/template` (the only
//! Rust port, `gtmpl`, renders maps, nil and `printf` differently from Go and has no
//! `missingkey=error`; see the module for details), [`jsonpath`] is client-go's
//! JSONPath dialect (not RFC 9535). Both print values the Go way through
//! `go_fmt`.
//!
//! ```
//! use cli::printers::{NamePrinter, Printer};
//! let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}});
//! let mut out = Vec::new();
//! NamePrinter.print(&pod, &mut out).unwrap();
//! assert_eq!(out, b"pod/web\n");
//! ```

use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

pub mod gojson;
mod kyaml;

pub use kyaml::KyamlPrinter;

use gotext::{go_fmt, gotemplate, jsonpath};

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
    /// `-o jsonpath` (or `jsonpath=`) without a template.
    #[error("template format specified but no template given")]
    NoTemplate,
    /// `-o jsonpath-file=F` and `F` cannot be read; `reason` is Go's wording
    /// (`open F: no such file or directory`).
    #[error("error reading --template {path}, {reason}")]
    TemplateFile {
        /// The file given.
        path: String,
        /// Why it could not be read.
        reason: String,
    },
    /// The Go template does not parse.
    #[error("error parsing template {template}, {reason}")]
    GoTemplateParse {
        /// The template text.
        template: String,
        /// Go's parse error (`template: output:1: unclosed action`).
        reason: gotemplate::ParseError,
    },
    /// The Go template failed on an object. kubectl has already written the
    /// debugging text to the output by then (see [`GoTemplatePrinter`]).
    #[error("error executing template {}: {message}", go_fmt::quote(.template))]
    GoTemplateExecute {
        /// The template text.
        template: String,
        /// Go's execution error (`template: output:1:7: executing …`).
        message: String,
    },
    /// The JSONPath template does not parse.
    #[error("error parsing jsonpath {template}, {reason}")]
    JsonPathParse {
        /// The template text.
        template: String,
        /// client-go's parse error (a field, not a `source`: kubectl prints it once,
        /// inside this message).
        reason: jsonpath::ParseError,
    },
    /// The template failed on an object: kubectl's message with the template and the
    /// object in Go syntax, up to its three final newlines.
    #[error(
        "error executing jsonpath {}: Error executing template: {message}. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{template}\n\tobject given to jsonpath engine was:\n\t\t{object}\n\n\n",
        go_fmt::quote(.template)
    )]
    JsonPathExecute {
        /// The template text.
        template: String,
        /// client-go's evaluation error (`hello is not found`).
        message: String,
        /// The object, as Go's `%#v` prints it.
        object: String,
    },
}

/// The `-o` values [`crate::flags::PrintFlags`] accepts, sorted as kubectl's "unable to
/// match a printer" message lists them.
pub const ALLOWED_FORMATS: &[&str] = &[
    "go-template",
    "go-template-file",
    "json",
    "jsonpath",
    "jsonpath-as-json",
    "jsonpath-file",
    "kyaml",
    "name",
    "template",
    "templatefile",
    "yaml",
];

/// The same formats in the order of kubectl's `-o` help (JSON/YAML, name, Go
/// templates, JSONPath).
pub const OUTPUT_FORMATS: &[&str] = &[
    "json",
    "yaml",
    "kyaml",
    "name",
    "go-template",
    "go-template-file",
    "template",
    "templatefile",
    "jsonpath",
    "jsonpath-as-json",
    "jsonpath-file",
];

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
    /// Write the objects as kubectl writes the ones it holds typed: in their Go
    /// struct's field order ([`gojson`]), where the kind is one of its table.
    pub typed: Option<gojson::Structs>,
}

impl Printer for JsonPrinter {
    fn print(&self, obj: &Value, out: &mut dyn Write) -> io::Result<()> {
        let obj = strip_managed_fields(obj, self.show_managed_fields);
        // Go's json.MarshalIndent, not serde_json's pretty printer: kubectl escapes
        // `<`, `>`, `&`, U+2028 and U+2029 (`\u003c` …) and writes floats Go's way
        // (`1e+21`), and scripts diff the two outputs.
        let mut text = match self.typed {
            Some(structs) => gojson::json(obj.as_ref(), Some("    "), structs),
            None => go_fmt::json(obj.as_ref(), Some("    ")),
        };
        text.push('\n');
        out.write_all(text.as_bytes())
    }
}

/// `-o yaml`: the object as kubectl's `YAMLPrinter` writes it, byte for byte
/// (sigs.k8s.io/yaml over go-yaml v2, see [`to_yaml`]). Like kubectl's, every object
/// after the first is preceded by `---`.
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

/// A value as kubectl writes YAML (`yaml.Marshal` of sigs.k8s.io/yaml, go-yaml v2's
/// emitter): quoting, line folding at 80 columns, `- ` under a key at the key's
/// column, `{}`/`[]`, go-yaml's key order. A value kubectl cannot write either (a
/// DEL or C1 control character in a string) fails with kubectl's message.
pub fn to_yaml(value: &Value) -> io::Result<String> {
    goyaml::emit::to_string(value).map_err(io::Error::other)
}

/// Any printer, given each object as kubectl holds it typed ([`gojson::normalize`]:
/// zero `omitempty` fields dropped, Go's zero values written, fields the Go struct
/// lacks dropped) — what kubectl's printers see of the objects `run` makes and of the
/// server's answers to them. See [`crate::flags::PrintFlags::to_typed_printer`].
pub struct TypedPrinter(pub Box<dyn Printer>, pub gojson::Structs);

impl Printer for TypedPrinter {
    fn print(&self, obj: &Value, out: &mut dyn Write) -> io::Result<()> {
        self.0.print(&gojson::normalize(obj, self.1), out)
    }
}

/// `-o name`: `resource.group/name` (`pod/web`, `deployment.apps/web`), one per line.
#[derive(Debug, Default, Clone, Copy)]
pub struct NamePrinter;

impl Printer for NamePrinter {
    fn print(&self, obj: &Value, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{}", qualified_name(obj))
    }
}

/// `-o go-template=…`, `go-template-file=…`, `template=…`, `templatefile=…`: the
/// object through a Go template ([`gotemplate`]), as cli-runtime's
/// `GoTemplatePrinter`: nothing is added after the output (templates end with
/// `{{"\n"}}` when they want a newline).
///
/// When the template fails, kubectl writes what the template printed so far and a
/// debugging text to the *output* ("Error executing template: …. Printing more
/// information for debugging the template:" with the template, the object as JSON and
/// the object as Go sees it), then fails with `error executing template "T": …`; this
/// printer does the same. The JSON is `encoding/json`'s, keys sorted, as kubectl
/// writes objects read from files; for objects kubectl holds typed (`kubectl run`'s)
/// it follows Go's struct field order instead ([`GoTemplatePrinter::typed`]).
#[derive(Debug, Clone)]
pub struct GoTemplatePrinter {
    text: String,
    template: gotemplate::Template,
    typed: Option<gojson::Structs>,
}

impl GoTemplatePrinter {
    /// Parses `template`; `allow_missing_keys` is `--allow-missing-template-keys`.
    pub fn new(template: &str, allow_missing_keys: bool) -> Result<Self, Error> {
        let parsed =
            gotemplate::Template::parse(template).map_err(|reason| Error::GoTemplateParse {
                template: template.to_string(),
                reason,
            })?;
        Ok(Self {
            text: template.to_string(),
            template: parsed.allow_missing_keys(allow_missing_keys),
            typed: None,
        })
    }

    /// The debugging text of a failed template shows the object's JSON in its Go
    /// struct's field order ([`gojson`]), as kubectl shows the objects it holds typed.
    pub fn typed(mut self, typed: Option<gojson::Structs>) -> Self {
        self.typed = typed;
        self
    }
}

impl Printer for GoTemplatePrinter {
    fn print(&self, obj: &Value, out: &mut dyn Write) -> io::Result<()> {
        let err = match self.template.execute(obj) {
            Ok(bytes) => return out.write_all(&bytes),
            Err(err) => err,
        };
        out.write_all(&err.partial)?;
        write!(
            out,
            "Error executing template: {}. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{}\n\traw data was:\n\t\t{}\n\tobject given to template engine was:\n\t\t{}\n\n",
            err.message,
            self.text,
            match self.typed {
                Some(structs) => gojson::json(obj, None, structs),
                None => go_fmt::json(obj, None),
            },
            gotemplate::go_value(obj),
        )?;
        Err(io::Error::other(Error::GoTemplateExecute {
            template: self.text.clone(),
            message: err.message,
        }))
    }
}

/// `-o jsonpath=…`, `jsonpath-file=…`, `jsonpath-as-json=…`: the object through a
/// kubectl JSONPath template ([`jsonpath`]). Nothing is added after the output (no
/// newline), as in kubectl; templates end with `{"\n"}` when they want one.
#[derive(Debug, Clone)]
pub struct JsonPathPrinter {
    template: String,
    path: jsonpath::JsonPath,
}

impl JsonPathPrinter {
    /// Parses `template`; `allow_missing_keys` is `--allow-missing-template-keys`,
    /// `json_output` is `-o jsonpath-as-json`.
    pub fn new(template: &str, allow_missing_keys: bool, json_output: bool) -> Result<Self, Error> {
        let path = jsonpath::JsonPath::parse(template)
            .map_err(|reason| Error::JsonPathParse {
                template: template.to_string(),
                reason,
            })?
            .allow_missing_keys(allow_missing_keys)
            .json_output(json_output);
        Ok(Self {
            template: template.to_string(),
            path,
        })
    }
}

impl Printer for JsonPathPrinter {
    fn print(&self, obj: &Value, out: &mut dyn Write) -> io::Result<()> {
        // Render fully before writing, so that a failing template prints nothing.
        match self.path.execute(obj) {
            Ok(text) => out.write_all(text.as_bytes()),
            Err(message) => Err(io::Error::other(Error::JsonPathExecute {
                template: self.template.clone(),
                message,
                object: go_fmt::sharp_v(obj),
            })),
        }
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
/// discovery is needed. A missing name prints as `<unknown>`, as kubectl's does (an
/// object with only `generateName`, shown by a client dry run); a missing kind as an
/// empty string, never a panic.
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
        .filter(|n| !n.is_empty())
        .unwrap_or("<unknown>");
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
