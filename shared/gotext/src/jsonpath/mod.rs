//! kubectl's JSONPath templates (`-o jsonpath=…`, `jsonpath-file`, `jsonpath-as-json`):
//! client-go's `util/jsonpath` dialect, parsed and evaluated over `serde_json::Value`.
//!
//! **Why hand-written:** kubectl's dialect is not RFC 9535 JSONPath, so the maintained
//! crates (`jsonpath-rust`, `serde_json_path`, both RFC 9535) cannot run kubectl
//! templates: a template mixes literal text with `{…}` actions, has `{range …}…{end}`
//! loops, quoted literals (`{"\n"}`), `@`/`$` that may be left out, unions of quoted
//! keys that are split at dots, Go's `text/template` comparisons in filters, and prints
//! results the Go way (several results joined by one space, strings raw, numbers as
//! `fmt.Print`, maps and lists as compact `encoding/json`). No crate implements that
//! dialect, so this module does — about 800 lines, pure (no IO), and it never panics
//! on any template or object (checked by a randomised test).
//!
//! | template                                   | output on a pod `web`            |
//! |--------------------------------------------|----------------------------------|
//! | `{.metadata.name}`                         | `web`                            |
//! | `{.spec.containers[*].name}`               | `web sidecar`                    |
//! | `{range .spec.containers[*]}{.image}{"\n"}{end}` | one image per line         |
//! | `{.spec.containers[?(@.name=="web")].image}` | `nginx`                        |
//! | `{.metadata.labels}`                       | `{"run":"web"}`                  |
//!
//! Deliberate differences from kubectl, where kubectl's behaviour is an accident:
//! - Map entries are visited in key order (`{.metadata.*}`, `{..name}`); Go's order is
//!   random.
//! - Whole numbers are `int64` as in kubectl's unstructured objects (`kubectl get`,
//!   `create -f`). For typed objects (`kubectl run`) kubectl round-trips through
//!   `float64`, so there it prints `1e+06` for a million and a filter such as
//!   `[?(@.containerPort==80)]` fails with "incompatible types for comparison"; here
//!   both behave as on `kubectl get` output.
//! - A printer can be used for several objects; client-go's parser state is mutated by
//!   `{range}` so kubectl's second object can see a truncated template.
//!
//! ```
//! use gotext::jsonpath::JsonPath;
//! let pod = serde_json::json!({"metadata": {"name": "web"}, "spec": {"containers": [
//!     {"name": "web", "image": "nginx"}, {"name": "log", "image": "busybox"}]}});
//! let path = JsonPath::parse(r#"{range .spec.containers[*]}{.name}={.image}{"\n"}{end}"#).unwrap();
//! assert_eq!(path.execute(&pod).unwrap(), "web=nginx\nlog=busybox\n");
//! ```

mod eval;
use super::go_fmt;
mod parser;

pub use parser::{Node, Param, ParseError, parse};

use serde_json::Value;

use eval::{Eval, Val};

/// A parsed template with kubectl's execution options.
#[derive(Debug, Clone)]
pub struct JsonPath {
    nodes: Vec<Node>,
    allow_missing_keys: bool,
    json_output: bool,
}

impl JsonPath {
    /// Parses `template`. Missing keys are errors until [`Self::allow_missing_keys`].
    pub fn parse(template: &str) -> Result<Self, ParseError> {
        Ok(Self {
            nodes: parse(template)?,
            allow_missing_keys: false,
            json_output: false,
        })
    }

    /// `--allow-missing-template-keys`: a missing key yields nothing instead of the
    /// error `KEY is not found`.
    pub fn allow_missing_keys(mut self, allow: bool) -> Self {
        self.allow_missing_keys = allow;
        self
    }

    /// `-o jsonpath-as-json`: each action's results as one indented JSON array.
    pub fn json_output(mut self, enable: bool) -> Self {
        self.json_output = enable;
        self
    }

    /// Runs the template on `data`. The error is client-go's text (`hello is not
    /// found`, `not in range, nothing to end`, …).
    pub fn execute(&self, data: &Value) -> Result<String, String> {
        let mut eval = Eval::new(&self.nodes, self.allow_missing_keys);
        let groups = eval.find_results(Val::Ref(data), 0)?;
        let mut out = String::new();
        for group in groups {
            if self.json_output {
                let list = Value::Array(group.iter().map(Val::to_json).collect());
                out.push_str(&go_fmt::json(&list, Some("    ")));
                out.push('\n');
                continue;
            }
            for (i, value) in group.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                if value.is_container() {
                    if let Some(v) = value_of(value) {
                        out.push_str(&go_fmt::json(v, None));
                    }
                } else {
                    out.push_str(&value.text());
                }
            }
        }
        Ok(out)
    }
}

fn value_of<'a>(v: &Val<'a>) -> Option<&'a Value> {
    match v {
        Val::Ref(value) => Some(value),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
