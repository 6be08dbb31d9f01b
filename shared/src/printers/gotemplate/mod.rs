//! kubectl's Go templates (`-o go-template=…`, `go-template-file`, `template`,
//! `templatefile`): Go's `text/template` as cli-runtime runs it, parsed and executed
//! over `serde_json::Value`.
//!
//! **Why hand-written.** kubectl decodes the object into `map[string]interface{}`
//! and hands it to Go's `text/template` with two extra functions (`exists`,
//! `base64decode`). Reproducing its output means reproducing Go: `fmt`'s rendering of
//! `float64` (`3`, `1e+06`), maps (`map[a:1 b:2]`, keys sorted), slices (`[a b]`) and
//! nil (`<no value>`, `<nil>`); `printf`'s verbs and its in-band errors
//! (`%!d(float64=3)`); `missingkey=error`; and Go's error messages, positions
//! included. The only Rust port, `gtmpl` 0.7.1 (last release 2021), renders a map as
//! Rust debug text (`{"app": String("web")}`) in hash order instead of
//! `map[app:web]`, prints a null as `nil` instead of `<no value>`, does not quote
//! with `printf "%q"`, and has no `missingkey=error`; crates for Jinja-like or
//! Handlebars templates have another syntax. So this module implements the engine,
//! following Go's sources (`text/template` 1.23, `fmt`, `strconv`) file by file:
//!
//! - [`lex`]: the lexer (trim markers `{{- -}}`, comments, the token positions Go's
//!   errors quote);
//! - [`parse`]: the parser and nodes (`define`/`block`/`template`, `if`/`else if`/
//!   `else with`, `range $i, $e :=`, `break`/`continue`, pipelines, parenthesised
//!   pipelines with field chains, variables, every literal form) and [`number`];
//! - [`exec`]: execution, over [`value`]s as Go holds the decoded object;
//! - [`funcs`]: the builtins (`and or not len index slice print printf println eq ne
//!   lt le gt ge html js urlquery call`) and kubectl's `exists` and `base64decode`;
//! - [`printf`]: Go's `fmt` verbs, flags, widths and precisions.
//!
//! Everything is pure (no IO) and never panics. Where Go has no limits, these bound a
//! hostile template: nesting in the text ([`parse::MAX_NESTING`]), template
//! recursion ([`exec::MAX_TEMPLATE_DEPTH`], Go allows 100000), total nesting
//! during execution, steps and output per object ([`exec::MAX_STEPS`],
//! [`exec::MAX_OUTPUT`]); each fails with a message in Go's format.
//!
//! Deliberate differences from kubectl, where kubectl's behaviour is an accident of
//! Go's memory layout: `slice` checks its bounds against the length of a decoded
//! list rather than its spare capacity (Go may return trailing `<nil>`s), and
//! `printf "%p"` prints an address of this process.
//!
//! ```
//! use shared::printers::gotemplate::Template;
//! let pod = serde_json::json!({"metadata": {"name": "web", "labels": {"app": "web", "tier": "fe"}},
//!     "spec": {"replicas": 3, "containers": [{"image": "nginx"}, {"image": "busybox"}]}});
//! let t = Template::parse(r#"{{.metadata.name}} {{.metadata.labels}} {{.spec.replicas}}
//! {{range .spec.containers}}{{.image}} {{end}}{{printf "%q" .metadata.name}}"#).unwrap();
//! assert_eq!(
//!     t.execute(&pod).unwrap(),
//!     b"web map[app:web tier:fe] 3\nnginx busybox \"web\""
//! );
//! ```

mod exec;
mod funcs;
mod lex;
mod number;
mod parse;
mod printf;
mod value;

use std::collections::HashMap;

use serde_json::Value;

pub use parse::ParseError;

/// The name kubectl gives the template (`template.New("output")`), which Go's
/// messages quote: `template: output:1:2: executing "output" at <…>`.
pub const NAME: &str = "output";

/// A parsed template with kubectl's execution option.
#[derive(Debug, Clone)]
pub struct Template {
    text: String,
    trees: HashMap<String, parse::List>,
    missing_key_error: bool,
    limits: exec::Limits,
}

/// A failed execution: Go's message, and what the template had written before
/// (kubectl prints that part too).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExecError {
    /// Go's message (`template: output:1:7: executing "output" at <.a.b>: …`).
    pub message: String,
    /// The output written before the error.
    pub partial: Vec<u8>,
}

impl Template {
    /// Parses `text` (Go's `template.New("output").Funcs(…).Parse(text)`). Missing
    /// keys print `<no value>` until [`Self::allow_missing_keys`] says otherwise.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        Ok(Self {
            text: text.to_string(),
            trees: parse::parse(NAME, text)?,
            missing_key_error: false,
            limits: exec::Limits::DEFAULT,
        })
    }

    /// `--allow-missing-template-keys`: `true` is Go's `missingkey=default` (a
    /// missing key is `<no value>`), `false` its `missingkey=error` (`map has no entry
    /// for key "x"`).
    pub fn allow_missing_keys(mut self, allow: bool) -> Self {
        self.missing_key_error = !allow;
        self
    }

    /// Runs the template on `data`. The output is bytes: Go strings need not be
    /// UTF-8 (`base64decode` of binary data).
    pub fn execute(&self, data: &Value) -> Result<Vec<u8>, ExecError> {
        let mut exec = exec::Exec::new(
            &self.trees,
            &self.text,
            NAME,
            self.missing_key_error,
            self.limits,
        );
        match exec.run(value::Val::root(data)) {
            Ok(()) => Ok(exec.out),
            Err(message) => Err(ExecError {
                message,
                partial: exec.out,
            }),
        }
    }
}

/// `fmt.Sprintf("%+v", obj)` of the decoded object: the "object given to template
/// engine" in kubectl's debugging output (`map[apiVersion:v1 kind:Pod …]`).
pub fn go_value(data: &Value) -> String {
    let root = value::Val::root(data).kind;
    String::from_utf8_lossy(&printf::sprintf(b"%+v", &[root])).into_owned()
}

#[cfg(test)]
mod tests;
