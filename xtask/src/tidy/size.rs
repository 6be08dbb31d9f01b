//! The size rule: xtask's production code stays within [`MAX_LINES`] lines. xtask runs
//! the project (its tasks, tidy, packaging); a concept that grows into a product of its
//! own becomes a package, as the bench, the test cluster and krew's rules did.
//!
//! Counted: every line (blank and comment lines too) of the `.rs` files under
//! `xtask/src/`, but tests: `tests.rs` files, files under a `tests/` directory, and
//! `#[cfg(test)]` items with their attributes (a `mod tests;` declaration, an inline
//! test module).

use syn::visit::Visit;

use super::{Problem, Rule};

/// The most lines xtask's production code may have.
pub(super) const MAX_LINES: usize = 8000;

/// The tree the rule counts.
const COUNTED: &str = "xtask/src/";

/// The production lines of file `rel` with `text`: 0 outside [`COUNTED`] and for test
/// files; a file `syn` cannot parse counts whole.
pub(super) fn production_lines(rel: &str, text: &str) -> usize {
    let Some(inside) = rel.strip_prefix(COUNTED) else {
        return 0;
    };
    let mut parts: Vec<&str> = inside.split('/').collect();
    let file = parts.pop().unwrap_or_default();
    if file == "tests.rs" || parts.contains(&"tests") {
        return 0;
    }
    let lines = text.lines().count();
    let Ok(parsed) = syn::parse_file(text) else {
        return lines;
    };
    let mut tests = TestItems::default();
    tests.visit_file(&parsed);
    lines.saturating_sub(tests.lines)
}

/// A problem when `total` production lines are over [`MAX_LINES`].
pub(super) fn check(total: usize) -> Option<Problem> {
    (total > MAX_LINES).then(|| Problem {
        path: COUNTED.trim_end_matches('/').into(),
        line: 0,
        rule: Rule::Size,
        message: format!(
            "xtask's production code is {total} lines, over {MAX_LINES} (move a concept that became a product of its own into a package)"
        ),
    })
}

/// The lines of the `#[cfg(test)]` items, attributes included; what they hold is not
/// visited again.
#[derive(Default)]
struct TestItems {
    lines: usize,
}

impl<'ast> Visit<'ast> for TestItems {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        // The attributes, and the line the item ends on: its closing brace or `;`.
        let (attrs, end): (&[syn::Attribute], Option<usize>) = match item {
            syn::Item::Mod(m) => (
                &m.attrs,
                m.content
                    .as_ref()
                    .map(|(brace, _)| brace.span.close().end().line)
                    .or(m.semi.as_ref().map(|s| s.span.end().line)),
            ),
            syn::Item::Fn(f) => (&f.attrs, Some(f.block.brace_token.span.close().end().line)),
            syn::Item::Impl(i) => (&i.attrs, Some(i.brace_token.span.close().end().line)),
            syn::Item::Use(u) => (&u.attrs, Some(u.semi_token.span.end().line)),
            _ => (&[], None),
        };
        let test_only = attrs.iter().any(|a| {
            a.path().is_ident("cfg")
                && a.parse_args::<syn::Ident>()
                    .is_ok_and(|ident| ident == "test")
        });
        if let (true, Some(end), Some(first)) = (test_only, end, attrs.first()) {
            self.lines += end + 1 - first.pound_token.span.start().line;
            return;
        }
        syn::visit::visit_item(self, item);
    }
}
