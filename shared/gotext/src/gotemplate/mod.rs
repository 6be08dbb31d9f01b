//! kubectl's Go templates (`-o go-template=…`, `go-template-file`, `template`,
//! `templatefile`): Go's `text/template` as cli-runtime runs it, parsed and executed
//! over `serde_json::Value`.
//!
//! **Why hand-written.** kubectl marshals the object to JSON, decodes it into
//! `map[string]interface{}` (whole numbers become `int64`, other numbers `float64`)
//! and runs Go's `text/template` on it with two extra functions, `exists` and
//! `base64decode`. Matching its output means matching Go: `fmt`'s printing of numbers
//! (`3`, `0.5`, `1e-05`), maps (`map[a:1 b:2]`, keys sorted), slices (`[a b]`) and nil
//! (`<no value>`, `<nil>`); `range` over maps in key order; every `printf` verb with
//! its in-band errors (`%!d(float64=0.5)`); `missingkey=error`; and Go's error
//! messages, positions included. No crate does that. The only Rust port of
//! `text/template`, `gtmpl` 0.7.1 (last release 2021), checked on a
//! `metadata.labels = {app: web, tier: fe}` object: `{{.metadata.labels}}` prints
//! `{"tier": String("fe"), "app": String("web")}` (Rust debug text, hash order) where
//! kubectl prints `map[app:web tier:fe]`; a list prints `[String("a"), String("b")]`
//! for `[a b]`; a null prints `nil` for `<no value>`; `printf "%q"` does not quote;
//! `printf "%5s"` pads on the wrong side; `range` over a map follows hash order; and
//! there is no `missingkey=error` for `--allow-missing-template-keys=false`. Crates
//! for Jinja-like or Handlebars templates have another language. So this module is a
//! port of Go's sources (`text/template` of Go 1.23, which kubectl 1.32 is built
//! with, and the parts of `fmt` and `strconv` it uses), file by file:
//!
//! - `lex`: the lexer (trim markers `{{- -}}`, comments, the token positions Go's
//!   errors quote);
//! - `parse`: the parser and its nodes (`define`/`block`/`template`, `if`/`else if`,
//!   `with`/`else with`, `range $i, $e :=` with `break`/`continue`, pipelines,
//!   parenthesised pipelines with field chains, variables, every literal form) and
//!   `number` for numeric and character constants;
//! - `exec`: execution over the values of `value`, which model what Go holds;
//! - `funcs`: the builtins (`and or not len index slice print printf println eq ne
//!   lt le gt ge html js urlquery call`) and kubectl's `exists` and `base64decode`;
//! - `printf`: Go's `fmt` verbs, flags, widths and precisions.
//!
//! It was checked against kubectl 1.32 on several hundred templates (see
//! `tests/kubectl.rs`). Go's licence (BSD-3-Clause) for the sources it follows is in
//! `LICENSE-GO` beside this file, and in every release archive's
//! `THIRD-PARTY-NOTICES`. Everything is pure (no IO) and never panics. Where Go sets no
//! limit, these bound a hostile template, each failing with a message in Go's
//! format: nesting in the text (100 levels of `if`/`range`/`with`/`block` and
//! parentheses), template recursion (100 nested `{{template}}` calls; Go allows
//! 100000), nesting during execution (500 levels across template calls, which fits a
//! 2 MiB stack even unoptimised), and work (10 million steps, strings returned by
//! functions counting one step per 256 bytes) and output (64 MiB) per object.
//!
//! **Why not `gotmpl`** (measured 2026-11-25). `gotmpl` 0.6.1 (MIT, maintained) is a
//! newer Rust port of `text/template`. The 400 recorded kubectl cases of
//! `tests/kubectl.rs` were run through it in a throwaway program (not in the
//! workspace), on the same ConfigMap converted as kubectl decodes it (whole numbers
//! `Int`, others `Float`), with `exists` and `base64decode` registered as custom
//! functions and `MissingKey::Error` for the strict tables: **149 of 400 match
//! kubectl** — 147 of 197 outputs, 2 of 2 strict outputs, 0 of 112 execution errors
//! (16 templates run without the error kubectl reports; the others fail with
//! messages that carry no `template: output:1:2: executing "output" at <…>:`
//! position and other wording), 0 of 89 parse errors (26 templates that Go rejects
//! parse; messages differ). The output mismatches are in what `-o go-template` users
//! see most: floats print in decimal (`0.00001`, `12345678901234567000` for Go's
//! `1e-05`, `1.2345678901234567e+19`), `%T`, `%#v`, `%x` on floats, zero padding of
//! strings, `% x`, `%q` of lists, complex constants, non-UTF-8 bytes from
//! `base64decode`, whitespace trimming around comments, `{{template "x"}}` without
//! data, and `html` with several arguments. Adopting it would turn every one of those
//! into a difference from kubectl, and closing them upstream means carrying Go's
//! typed values into its `Value` model; so the port stays, and the measurement is to
//! be repeated when `gotmpl` reports Go's float formatting and error positions.
//!
//! Deliberate differences from kubectl, where kubectl's behaviour is an accident of
//! Go's memory layout: `slice` checks its bounds against the length of a decoded
//! list rather than its spare capacity (Go may return trailing `<nil>`s), and
//! `printf "%p"` prints an address of this process.
//!
//! ```
//! use gotext::gotemplate::Template;
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
pub mod number;
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
