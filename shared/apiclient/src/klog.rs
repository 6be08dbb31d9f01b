//! klog's text lines, as kubectl writes them on stderr: the header
//! (`I1202 01:36:33.962901   22382 round_trippers.go:632] `), then either a plain
//! message (klog's `Infof`, `Warning`) or a structured one (`InfoS`: the message
//! quoted, then ` key=value` pairs, strings quoted as Go's `strconv.Quote` quotes them
//! and multi-line ones as klog's `key=<` block), and the process-wide verbosity
//! (`-v`) the lines are written at.
//!
//! A line that mirrors one of kubectl's names kubectl's Go source file, so that a
//! `grep round_trippers.go` of a log finds the same lines; the line number is ours.
//! A bottom module: it names nothing above it.

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicU8, Ordering};

/// `-v`, set once at start ([`set_verbosity`]).
static VERBOSITY: AtomicU8 = AtomicU8::new(0);

/// Sets the verbosity every [`enabled`] check reads (the skeleton's `-v`).
pub fn set_verbosity(level: u8) {
    VERBOSITY.store(level, Ordering::Relaxed);
}

/// The verbosity in effect.
pub fn verbosity() -> u8 {
    VERBOSITY.load(Ordering::Relaxed)
}

/// klog's `V(level).Enabled()`.
pub fn enabled(level: u8) -> bool {
    verbosity() >= level
}

/// A line's severity, klog's first letter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    fn letter(self) -> char {
        match self {
            Severity::Info => 'I',
            Severity::Warning => 'W',
            Severity::Error => 'E',
        }
    }
}

/// klog's header: `Lmmdd hh:mm:ss.uuuuuu PID file:line] `, in local time as klog
/// writes it, the pid right-aligned in seven columns.
pub fn header(severity: Severity, file: &str, line: u32) -> String {
    let now = jiff::Zoned::now();
    format!(
        "{}{:02}{:02} {:02}:{:02}:{:02}.{:06} {:>7} {file}:{line}] ",
        severity.letter(),
        now.month(),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        now.subsec_nanosecond() / 1000,
        std::process::id()
    )
}

/// One line: the header and `message`, ending in one newline (klog adds it to a
/// message without one).
pub fn line(severity: Severity, file: &str, line: u32, message: &str) -> String {
    let mut out = header(severity, file, line);
    out.push_str(message);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Writes `text` (whole lines) to stderr at once, so that lines of concurrent
/// requests do not interleave. A closed stderr loses the log, never the command.
pub fn write(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// [`write`] of an info [`line`] at `file:line`.
pub fn info(file: &str, at: u32, message: &str) {
    write(&line(Severity::Info, file, at, message));
}

/// [`write`] of a warning [`line`] at `file:line` (klog's `Warning`, shown at every
/// verbosity).
pub fn warning(file: &str, at: u32, message: &str) {
    write(&line(Severity::Warning, file, at, message));
}

/// A value of a structured line.
#[derive(Clone, Copy, Debug)]
pub enum Value<'a> {
    /// A string (or a Go `Stringer`'s text): quoted, or a `key=<` block when it has
    /// a newline. Bytes, since a truncated body can end inside a character.
    Text(&'a [u8]),
    /// A number, written as JSON writes it.
    Int(i128),
}

/// A structured message as klog's `InfoS` writes it after the header:
/// `"Response" verb="POST" url="…" milliseconds=37`.
pub fn structured(message: &str, pairs: &[(&str, Value<'_>)]) -> String {
    let mut out = quote(message.as_bytes());
    for (key, value) in pairs {
        out.push(' ');
        out.push_str(key);
        match value {
            Value::Int(n) => {
                let _ = write!(out, "={n}");
            }
            Value::Text(text) => write_text(&mut out, text),
        }
    }
    out
}

/// klog's `writeStringValue`: `="quoted"` without a newline, else the block
/// `=<\n\tline\n\tline\n >`, every line tab-indented and unquoted.
fn write_text(out: &mut String, text: &[u8]) {
    if !text.contains(&b'\n') {
        out.push('=');
        out.push_str(&quote(text));
        return;
    }
    out.push_str("=<\n");
    let mut rest = text;
    while let Some(end) = rest.iter().position(|&b| b == b'\n') {
        out.push('\t');
        out.push_str(&String::from_utf8_lossy(&rest[..=end]));
        rest = &rest[end + 1..];
    }
    if rest.is_empty() {
        out.push_str(" >");
    } else {
        out.push('\t');
        out.push_str(&String::from_utf8_lossy(rest));
        out.push_str("\n >");
    }
}

/// Go's `strconv.Quote` over bytes: printable characters as they are, `"` and `\`
/// escaped, the C escapes, `\xNN` for a byte that is not UTF-8 and for the other
/// ASCII controls, `\uNNNN`/`\UNNNNNNNN` for other unprintable characters (Go's
/// `IsPrint` read as "not a control, format, or separator character but the space").
pub fn quote(text: &[u8]) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            quote_char(&mut out, c);
        }
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    out.push('"');
    out
}

fn quote_char(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        c if c < ' ' || c == '\u{7f}' => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if is_print(c) => out.push(c),
        c if (c as u32) < 0x10000 => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\U{:08x}", c as u32);
        }
    }
}

/// Go's `unicode.IsPrint` for what a log can carry: no controls, no format or
/// separator characters other than the ASCII space, no private-use or unassigned
/// code points that Rust knows as such.
fn is_print(c: char) -> bool {
    !(c.is_control()
        || matches!(c as u32, 0x80..=0x9f | 0xa0 | 0xad | 0x2000..=0x200f | 0x2028..=0x202f | 0x205f..=0x206f | 0x3000 | 0xfeff | 0xfff9..=0xfffb | 0xe000..=0xf8ff))
}

/// Go's `hex.Dump`: 16 bytes a line, offset, the bytes in hex in two groups of
/// eight, and the printable ASCII between bars.
pub fn hex_dump(data: &[u8]) -> String {
    let mut out = String::new();
    for (n, row) in data.chunks(16).enumerate() {
        let _ = write!(out, "{:08x}  ", n * 16);
        for i in 0..16 {
            match row.get(i) {
                Some(b) => {
                    let _ = write!(out, "{b:02x} ");
                }
                None => out.push_str("   "),
            }
            if i == 7 {
                out.push(' ');
            }
        }
        out.push_str(" |");
        out.extend(row.iter().map(|&b| {
            if (32..=126).contains(&b) {
                b as char
            } else {
                '.'
            }
        }));
        out.push_str("|\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_klog_s() {
        let line = line(Severity::Warning, "helpers.go", 714, "m");
        let re = regex_like(&line);
        assert!(re, "{line}");
        assert!(line.ends_with(" helpers.go:714] m\n"), "{line}");
    }

    /// `Lmmdd hh:mm:ss.uuuuuu`, a space, the pid in seven columns, a space.
    fn regex_like(line: &str) -> bool {
        let b = line.as_bytes();
        let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
        b[0] == b'W'
            && digits(1..5)
            && b[5] == b' '
            && digits(6..8)
            && b[8] == b':'
            && digits(12..14)
            && b[14] == b'.'
            && digits(15..21)
            && b[21] == b' '
            && line[22..29].trim_start().parse::<u32>() == Ok(std::process::id())
            && b[29] == b' '
    }

    /// As client-go's debugging round tripper writes its `-v=6` line.
    #[test]
    fn a_structured_line_quotes_strings_and_writes_numbers() {
        assert_eq!(
            structured(
                "Response",
                &[
                    ("verb", Value::Text(b"POST")),
                    (
                        "url",
                        Value::Text(
                            b"https://h:1/api/v1/namespaces/default/pods?fieldManager=kubectl-run"
                        )
                    ),
                    ("status", Value::Text(b"201 Created")),
                    ("milliseconds", Value::Int(37)),
                ]
            ),
            r#""Response" verb="POST" url="https://h:1/api/v1/namespaces/default/pods?fieldManager=kubectl-run" status="201 Created" milliseconds=37"#
        );
    }

    /// klog's block for a value with newlines (the headers, a body ending in one).
    #[test]
    fn a_multi_line_value_is_a_block() {
        assert_eq!(
            structured(
                "Request",
                &[("headers", Value::Text(b"Accept: a\nUser-Agent: u\n"))]
            ),
            "\"Request\" headers=<\n\tAccept: a\n\tUser-Agent: u\n >"
        );
        assert_eq!(
            structured("R", &[("body", Value::Text(b"{}\n{}"))]),
            "\"R\" body=<\n\t{}\n\t{}\n >"
        );
        assert_eq!(
            structured("R", &[("headers", Value::Text(b""))]),
            "\"R\" headers=\"\""
        );
    }

    #[test]
    fn quoting_is_go_s() {
        assert_eq!(quote(br#"{"a":"b\c"}"#), r#""{\"a\":\"b\\c\"}""#);
        assert_eq!(quote(b"tab\there\r\x01\x7f"), r#""tab\there\r\x01\x7f""#);
        assert_eq!(quote("é ü 日本".as_bytes()), "\"é ü 日本\"");
        // A body cut inside a character (`body[:1024]`) ends in its first bytes.
        assert_eq!(quote(&"é".as_bytes()[..1]), r#""\xc3""#);
        assert_eq!(quote("\u{200b}\u{feff}".as_bytes()), r#""\u200b\ufeff""#);
    }

    /// Go's `hex.Dump`, as client-go logs a body that is not text.
    #[test]
    fn the_hex_dump_is_go_s() {
        let data: Vec<u8> = (0u8..20).chain(*b"k8s").collect();
        let dump = hex_dump(&data);
        let lines: Vec<&str> = dump.lines().collect();
        assert_eq!(
            lines[0],
            "00000000  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|"
        );
        // A short last line keeps the bars where a full one has them.
        assert!(lines[1].starts_with("00000010  10 11 12 13 6b 38 73 "));
        assert_eq!(lines[1].find('|'), lines[0].find('|'));
        assert!(lines[1].ends_with("|....k8s|"));
        assert!(dump.ends_with("|\n"));
        assert_eq!(hex_dump(b""), "");
    }

    #[test]
    fn verbosity_is_process_wide() {
        set_verbosity(7);
        assert!(enabled(6) && enabled(7) && !enabled(8));
        set_verbosity(0);
        assert!(!enabled(1));
    }
}
