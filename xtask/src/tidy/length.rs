//! The function-length rule: no function body in the plugins, the shared crates, xtask,
//! the bench, the test cluster, krew's rules or the e2e harness runs over [`MAX_LINES`] lines, counted from `fn` to the closing
//! brace (tests included: a long test is a table or several tests in one).
//!
//! A function that long does several steps in one place; split it along them, the way
//! kubectl's Complete/Validate/Run does. The end-to-end tests themselves (`tests/e2e/`)
//! are scripts of one scenario each and are not held to it, nor is fuzzing.

use syn::visit::Visit;

use super::{Problem, Rule};

/// The most lines a function may span.
pub(super) const MAX_LINES: usize = 100;

/// The trees the rule holds.
const HELD: &[&str] = &[
    "plugins/",
    "shared/",
    "xtask/",
    "bench/",
    "tests/src/",
    "localcluster/",
    "krew/",
];

/// Whether `rel` is held to the rule.
pub(super) fn applies(rel: &str) -> bool {
    HELD.iter().any(|dir| rel.starts_with(dir))
}

/// The functions of `text` (file `rel`) longer than [`MAX_LINES`]. A file `syn` cannot
/// parse is left to the compiler.
pub(super) fn check(rel: &str, text: &str) -> Vec<Problem> {
    let Ok(file) = syn::parse_file(text) else {
        return Vec::new();
    };
    let mut lengths = Lengths::default();
    lengths.visit_file(&file);
    lengths
        .found
        .into_iter()
        .filter(|f| f.lines > MAX_LINES)
        .map(|f| Problem {
            path: rel.to_string(),
            line: f.line,
            rule: Rule::FunctionLength,
            message: format!(
                "`{}` spans {} lines, over {MAX_LINES} (split it along its steps)",
                f.name, f.lines
            ),
        })
        .collect()
}

struct Found {
    name: String,
    line: usize,
    lines: usize,
}

/// Every function with a body: free, in `impl` blocks and trait defaults, nested ones
/// included.
#[derive(Default)]
struct Lengths {
    found: Vec<Found>,
}

impl Lengths {
    fn record(&mut self, sig: &syn::Signature, block: &syn::Block) {
        let line = sig.fn_token.span.start().line;
        let end = block.brace_token.span.close().end().line;
        self.found.push(Found {
            name: sig.ident.to_string(),
            line,
            lines: end + 1 - line,
        });
    }
}

impl<'ast> Visit<'ast> for Lengths {
    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.record(&item.sig, &item.block);
        syn::visit::visit_item_fn(self, item);
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.record(&item.sig, &item.block);
        syn::visit::visit_impl_item_fn(self, item);
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(block) = &item.default {
            self.record(&item.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, item);
    }
}
