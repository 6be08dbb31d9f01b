//! The API server's warnings: client-go's warning handler, as kubectl wires it.
//!
//! Since 1.19 the API server attaches `Warning: 299 - "…"` headers to responses: use
//! of a deprecated API (`rbac.authorization.k8s.io/v1beta1 Role is deprecated in
//! v1.17+ …`), admission warnings (PodSecurity's `would violate PodSecurity …`),
//! validation warnings. kubectl prints each one once on stderr as `Warning: <text>`
//! (`Warning:` in bold yellow on a terminal), as soon as the response arrives, and
//! with `--warnings-as-errors` a command that otherwise succeeded fails with
//! `N warning(s) received` once it is done.
//!
//! [`layer`] is a tower layer for the kube client that reads every response's
//! `Warning` headers, whatever its status (an error response can carry warnings too),
//! and hands them to one process-wide [`WarningWriter`], as client-go's default
//! warning handler is process-wide: the plugins build their clients in different
//! places, and every one of them must report into the same deduplicating writer whose
//! count [`cli::finish`] reads at the end.

use std::collections::HashSet;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// One warning of a `Warning` header (RFC 7234 §5.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// `warn-code`: 299 ("Miscellaneous persistent warning") for Kubernetes.
    pub code: u16,
    /// `warn-agent`: `-` from the API server.
    pub agent: String,
    /// `warn-text`, unquoted.
    pub text: String,
}

/// Why a `Warning` header value could not be read (client-go's wording). Such a
/// header is skipped: a malformed warning must never fail a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid warning header: {0}")]
pub struct ParseError(&'static str);

/// Reads every warning of one header value: `299 - "text"`, optionally followed by a
/// quoted date, several separated by commas. Parsing stops at the first malformed
/// warning of a value (client-go's `ParseWarningHeaders`); the ones before it count.
pub fn parse_header(value: &str) -> (Vec<Warning>, Option<ParseError>) {
    let mut warnings = Vec::new();
    let mut rest = value;
    while !rest.is_empty() {
        match parse_one(rest) {
            Ok((warning, remainder)) => {
                warnings.push(warning);
                rest = remainder;
            }
            Err(e) => return (warnings, Some(e)),
        }
    }
    (warnings, None)
}

/// One `warn-code SP warn-agent SP warn-text [SP warn-date]`, and what follows it
/// (after the separating comma).
fn parse_one(header: &str) -> Result<(Warning, &str), ParseError> {
    let header = header.trim_matches(is_space);
    let mut parts = header.splitn(3, ' ');
    let (Some(code), Some(agent), Some(text_and_rest)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(ParseError("fewer than 3 segments"));
    };
    let code_ok = code.len() == 3
        && matches!(code.as_bytes()[0], b'1' | b'2')
        && code.bytes().all(|b| b.is_ascii_digit());
    let code = match code.parse::<u16>() {
        Ok(n) if code_ok => n,
        _ => {
            return Err(ParseError("code segment is not 3 digits between 100-299"));
        }
    };
    if agent.is_empty() {
        return Err(ParseError("empty agent segment"));
    }
    if agent.chars().any(char::is_control) {
        return Err(ParseError("invalid agent"));
    }
    if text_and_rest.is_empty() {
        return Err(ParseError("empty text segment"));
    }
    let (text, date_and_rest) = parse_quoted(text_and_rest)?;
    if text.chars().any(char::is_control) {
        return Err(ParseError("invalid text"));
    }
    // The API server RFC 2047-encodes texts with non-ASCII characters; undecodable
    // ones are shown as they came, as client-go does.
    let text = decode_words(&text).unwrap_or(text);
    let mut rest = date_and_rest;
    if let Some(date) = rest.strip_prefix('"') {
        // The date is quoted without escapes; it is not kept.
        let end = date
            .find('"')
            .ok_or(ParseError("unterminated date segment"))?;
        rest = date[end + 1..].trim_matches(is_space);
    }
    if !rest.is_empty() {
        rest = rest
            .strip_prefix(',')
            .ok_or(ParseError("unexpected token after warn-date"))?
            .trim_matches(is_space);
    }
    Ok((
        Warning {
            code,
            agent: agent.to_string(),
            text,
        },
        rest,
    ))
}

/// An RFC 7230 quoted string with backslash escapes; returns it unquoted and what
/// follows the closing quote (trimmed).
fn parse_quoted(s: &str) -> Result<(String, &str), ParseError> {
    let body = s
        .strip_prefix('"')
        .ok_or(ParseError("invalid quoted string: missing initial quote"))?;
    let mut text = String::new();
    let mut escaping = false;
    for (i, c) in body.char_indices() {
        match c {
            '"' if !escaping => {
                return Ok((text, body[i + 1..].trim_matches(is_space)));
            }
            '\\' if !escaping => escaping = true,
            c => {
                text.push(c);
                escaping = false;
            }
        }
    }
    Err(ParseError("invalid quoted string: missing closing quote"))
}

/// Go's `mime.WordDecoder.DecodeHeader` for the charsets it knows without help
/// (UTF-8, US-ASCII, ISO-8859-1): every `=?charset?B|Q?…?=` word decoded, the
/// whitespace between two adjacent words dropped. `None` when a word is malformed or
/// in another charset. Written here because the RFC 2047 crate (rfc2047-decoder)
/// brings a parser-combinator library and every charset table for these few lines.
fn decode_words(text: &str) -> Option<String> {
    if !text.contains("=?") {
        return Some(text.to_string());
    }
    let mut out = String::new();
    let mut rest = text;
    let mut after_word = false;
    while let Some(start) = rest.find("=?") {
        let (before, word) = rest.split_at(start);
        let Some((decoded, len)) = decode_word(word) else {
            // Not an encoded word after all: keep "=?" and go on after it.
            out.push_str(before);
            out.push_str("=?");
            rest = &word[2..];
            after_word = false;
            continue;
        };
        if !(after_word && before.chars().all(|c| c == ' ' || c == '\t')) {
            out.push_str(before);
        }
        out.push_str(&decoded?);
        rest = &word[len..];
        after_word = true;
    }
    out.push_str(rest);
    Some(out)
}

/// One encoded word at the start of `s`: `None` when `s` does not start with one,
/// `Some((None, _))` when it does but cannot be decoded, else the text and the
/// word's length.
fn decode_word(s: &str) -> Option<(Option<String>, usize)> {
    use base64::Engine as _;
    let body = s.strip_prefix("=?")?;
    let (charset, body) = body.split_once('?')?;
    let (encoding, body) = body.split_once('?')?;
    let end = body.find("?=")?;
    let payload = &body[..end];
    if charset.is_empty() || encoding.len() != 1 || payload.contains(char::is_whitespace) {
        return None;
    }
    let len = 2 + charset.len() + 1 + encoding.len() + 1 + end + 2;
    let bytes = match encoding {
        "B" | "b" => base64::engine::general_purpose::STANDARD
            .decode(payload)
            .ok(),
        "Q" | "q" => decode_q(payload),
        _ => None,
    };
    let text = bytes.and_then(|bytes| match charset.to_ascii_lowercase().as_str() {
        "utf-8" | "us-ascii" => String::from_utf8(bytes).ok(),
        "iso-8859-1" => Some(bytes.iter().map(|&b| char::from(b)).collect()),
        _ => None,
    });
    Some((text, len))
}

/// RFC 2047's "Q" encoding: `_` is a space, `=XX` a byte.
fn decode_q(payload: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(payload.len());
    let mut bytes = payload.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'_' => out.push(b' '),
            b'=' => {
                let hex = [bytes.next()?, bytes.next()?];
                out.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
            }
            b => out.push(b),
        }
    }
    Some(out)
}

/// Go's `strings.TrimSpace` set, as far as header values go.
fn is_space(c: char) -> bool {
    c.is_ascii_whitespace()
}

/// client-go's `warningWriter` with kubectl's options: only code 299 with a text is
/// shown, each text once (`Deduplicate: true`), `Warning:` coloured on a terminal.
#[derive(Debug, Default)]
pub struct WarningWriter {
    color: bool,
    written: HashSet<String>,
}

impl WarningWriter {
    /// `color`: kubectl's `term.AllowsColorOutput(stderr)`.
    pub fn new(color: bool) -> Self {
        Self {
            color,
            written: HashSet::new(),
        }
    }

    /// Writes the warning unless it is not shown or was shown before.
    pub fn handle(&mut self, warning: &Warning, out: &mut dyn Write) {
        if warning.code != 299 || warning.text.is_empty() {
            return;
        }
        if !self.written.insert(warning.text.clone()) {
            return;
        }
        // A failed write to stderr has nowhere to be reported; the count still holds.
        let _ = if self.color {
            writeln!(out, "\x1b[33;1mWarning:\x1b[0m {}", warning.text)
        } else {
            writeln!(out, "Warning: {}", warning.text)
        };
    }

    /// How many warnings were shown (kubectl's `WarningCount`).
    pub fn count(&self) -> usize {
        self.written.len()
    }
}

/// The process-wide writer (created on the first warning, when the colour decision
/// is made) and whether warnings are errors.
static WRITER: Mutex<Option<WarningWriter>> = Mutex::new(None);
static AS_ERRORS: AtomicBool = AtomicBool::new(false);

/// `--warnings-as-errors`: set when a command builds its client
/// ([`cli::flags::ConfigFlags::client`]).
pub fn set_as_errors(as_errors: bool) {
    AS_ERRORS.store(as_errors, Ordering::Relaxed);
}

/// Shows the warnings of a response's headers on stderr.
pub fn handle_headers(headers: &http::HeaderMap) {
    let mut values = headers.get_all(http::header::WARNING).iter().peekable();
    if values.peek().is_none() {
        return;
    }
    let mut guard = WRITER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let writer =
        guard.get_or_insert_with(|| WarningWriter::new(crate::term::stderr_allows_color()));
    let mut stderr = crate::output::Stderr;
    for value in values {
        let Ok(value) = value.to_str() else {
            continue;
        };
        let (warnings, error) = parse_header(value);
        for warning in &warnings {
            writer.handle(warning, &mut stderr);
        }
        if let Some(error) = error {
            tracing::debug!(header = value, %error, "skipping a malformed Warning header");
        }
    }
}

/// With `--warnings-as-errors` and at least one warning shown, kubectl's error
/// message (`1 warning received`, `2 warnings received`).
pub fn as_error() -> Option<String> {
    if !AS_ERRORS.load(Ordering::Relaxed) {
        return None;
    }
    let count = WRITER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .as_ref()
        .map_or(0, WarningWriter::count);
    received(count)
}

fn received(count: usize) -> Option<String> {
    match count {
        0 => None,
        1 => Some("1 warning received".to_string()),
        n => Some(format!("{n} warnings received")),
    }
}

/// The response-inspecting function of [`layer`].
fn observe<B>(response: http::Response<B>) -> http::Response<B> {
    handle_headers(response.headers());
    response
}

/// A layer for [`kube::client::ClientBuilder::with_layer`] that shows the warnings
/// of every response.
pub fn layer<B>() -> tower::util::MapResponseLayer<fn(http::Response<B>) -> http::Response<B>> {
    tower::util::MapResponseLayer::new(observe::<B>)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(code: u16, agent: &str, text: &str) -> Warning {
        Warning {
            code,
            agent: agent.into(),
            text: text.into(),
        }
    }

    #[test]
    fn the_api_servers_form() {
        assert_eq!(
            parse_header(
                r#"299 - "rbac.authorization.k8s.io/v1beta1 Role is deprecated in v1.17+, unavailable in v1.22+; use rbac.authorization.k8s.io/v1 Role""#
            ),
            (
                vec![w(
                    299,
                    "-",
                    "rbac.authorization.k8s.io/v1beta1 Role is deprecated in v1.17+, unavailable in v1.22+; use rbac.authorization.k8s.io/v1 Role"
                )],
                None
            )
        );
    }

    #[test]
    fn several_in_one_value_with_dates_and_escapes() {
        let (warnings, error) = parse_header(
            r#"299 - "a \"quoted\" \\ text" "Wed, 21 Oct 2015 07:28:00 GMT", 199 agent "second" , 299 x "third""#,
        );
        assert_eq!(error, None);
        assert_eq!(
            warnings,
            vec![
                w(299, "-", r#"a "quoted" \ text"#),
                w(199, "agent", "second"),
                w(299, "x", "third"),
            ]
        );
    }

    #[test]
    fn malformed_values_are_reported_and_stop_the_value() {
        for (value, why) in [
            ("299 -", "fewer than 3 segments"),
            (
                r#"99 - "x""#,
                "code segment is not 3 digits between 100-299",
            ),
            (
                r#"300 - "x""#,
                "code segment is not 3 digits between 100-299",
            ),
            (
                r#"2a9 - "x""#,
                "code segment is not 3 digits between 100-299",
            ),
            ("299 - text", "invalid quoted string: missing initial quote"),
            (
                r#"299 - "open"#,
                "invalid quoted string: missing closing quote",
            ),
            (r#"299 - "x" "date"#, "unterminated date segment"),
            (r#"299 - "x" junk"#, "unexpected token after warn-date"),
            ("299 - \"a\u{7}b\"", "invalid text"),
        ] {
            let (_, error) = parse_header(value);
            assert_eq!(error, Some(ParseError(why)), "{value}");
        }
        // The warnings before the malformed one are kept.
        let (warnings, error) = parse_header(r#"299 - "ok", 299 - broken"#);
        assert_eq!(warnings, vec![w(299, "-", "ok")]);
        assert!(error.is_some());
    }

    #[test]
    fn non_ascii_texts_come_rfc_2047_encoded() {
        // What the API server sends for "deprecated: ümlaut" (Go's mime.BEncoding).
        let (warnings, error) = parse_header(r#"299 - "=?utf-8?b?ZGVwcmVjYXRlZDogw7xtbGF1dA==?=""#);
        assert_eq!(error, None);
        assert_eq!(warnings, vec![w(299, "-", "deprecated: ümlaut")]);
        assert_eq!(
            decode_words("=?UTF-8?Q?caf=C3=A9_ok?= =?utf-8?b?IQ==?= plain").as_deref(),
            Some("café ok! plain")
        );
        assert_eq!(
            decode_words("=?ISO-8859-1?Q?caf=E9?=").as_deref(),
            Some("café")
        );
        // Not encoded words: left alone.
        assert_eq!(decode_words("a=?b").as_deref(), Some("a=?b"));
        assert_eq!(decode_words("x =? y ?= z").as_deref(), Some("x =? y ?= z"));
        // Encoded but undecodable: the caller keeps the original text.
        assert_eq!(decode_words("=?koi8-r?b?QQ==?="), None);
        assert_eq!(decode_words("=?utf-8?b?!!!?="), None);
    }

    #[test]
    fn the_writer_shows_299s_once_each() {
        let mut writer = WarningWriter::new(false);
        let mut out = Vec::new();
        writer.handle(&w(299, "-", "deprecated"), &mut out);
        writer.handle(&w(299, "-", "deprecated"), &mut out);
        writer.handle(&w(199, "-", "not shown"), &mut out);
        writer.handle(&w(299, "-", ""), &mut out);
        writer.handle(&w(299, "other", "second"), &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Warning: deprecated\nWarning: second\n"
        );
        assert_eq!(writer.count(), 2);
    }

    #[test]
    fn on_a_terminal_the_label_is_bold_yellow() {
        let mut writer = WarningWriter::new(true);
        let mut out = Vec::new();
        writer.handle(&w(299, "-", "x"), &mut out);
        assert_eq!(out, b"\x1b[33;1mWarning:\x1b[0m x\n");
    }

    #[test]
    fn kubectls_count_messages() {
        assert_eq!(received(0), None);
        assert_eq!(received(1).as_deref(), Some("1 warning received"));
        assert_eq!(received(3).as_deref(), Some("3 warnings received"));
    }
}
