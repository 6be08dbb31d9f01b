//! Go's text stack as kubectl runs it, over `serde_json` values: the `go-template`
//! and `jsonpath` printers' languages and the Go value formatting both share.
//!
//! - [`gotemplate`]: a port of Go 1.23's `text/template` (lexer, parser, exec, Go's
//!   `fmt` verbs, the builtins plus kubectl's `exists` and `base64decode`), with
//!   bounds Go lacks on nesting, template recursion, work and output.
//! - [`jsonpath`]: client-go's JSONPath dialect (`{.items[*].metadata.name}`,
//!   filters, ranges, `--allow-missing-template-keys`).
//! - [`go_fmt`]: Go's formatting of the values a decoded JSON document holds
//!   (`%v`, `%q`, `strconv`'s float forms, `encoding/json`'s).
//!
//! No crate implements either template language as kubectl runs it, so both are
//! hand-written; both are pure and panic-free, and depend on nothing but each other and
//! `serde_json`.

pub mod go_fmt;
pub mod gotemplate;
pub mod jsonpath;

/// Test support shared by the template languages' no-panic tests.
#[cfg(test)]
pub(crate) mod random {
    /// `count` deterministic concatenations of up to `max_len - 1` of `pieces`, drawn
    /// by a small xorshift generator (reproducible, and no dependency for it).
    pub(crate) fn templates<'a>(
        pieces: &'a [&'a str],
        max_len: u64,
        count: usize,
    ) -> impl Iterator<Item = String> + 'a {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..count).map(move |_| {
            let len = next() % max_len;
            (0..len)
                .map(|_| pieces[(next() % pieces.len() as u64) as usize])
                .collect()
        })
    }
}
