//! KYAML, kubectl's `-o kyaml` (1.34+): sigs.k8s.io/yaml's `kyaml.Encoder.FromObject`,
//! byte for byte. KYAML is YAML written like JSON: `{}` and `[]` always, every string
//! value double-quoted, keys quoted only when a YAML parser could read them as
//! something else (`"no"`, `"1"`), trailing commas, lists of maps or lists "cuddled"
//! (`[{` … `}, {` … `}]`), and a string with newlines written with YAML's line
//! folding. Each document starts with `---`.
//!
//! The encoder reads the object's JSON *text* (as `json.Marshal` wrote it: the key
//! order is the JSON's, Go struct order for the objects kubectl holds typed, sorted
//! for the others) through this crate's YAML parser, as kyaml reads it through
//! go-yaml v3: a quoted scalar is a string, a plain one (a number, `true`, `null`) is
//! written as it is. Hand-written because kyaml has no Rust port; each function names
//! the Go one it follows.

use std::fmt::Write as _;

use crate::{Node, YamlError, parse, yaml_limits};

/// `kyaml.Encoder{}.FromObject` of an object whose `json.Marshal` is `json`: `---`, the
/// document, a newline.
pub fn from_json(json: &str) -> Result<String, YamlError> {
    let root = parse(json, yaml_limits(json.len()))?
        .ok_or_else(|| YamlError::new("kyaml: empty document"))?;
    let mut out = String::from("---\n");
    render(&root, 0, &mut out);
    out.push('\n');
    Ok(out)
}

/// `renderNode`: the cursor is at the node; no final newline.
fn render(node: &Node, indent: usize, out: &mut String) {
    match node {
        Node::Scalar { value, plain, .. } => {
            if *plain {
                // JSON's numbers, booleans and null: go-yaml v3 tags them
                // `!!int`/`!!float`/`!!bool`/`!!null`, printed as they are.
                out.push_str(value);
            } else {
                render_string(&fold_nel(value), indent + 1, false, false, out);
            }
        }
        Node::Seq(items) => render_sequence(items, indent, out),
        Node::Map(entries) => render_mapping(entries, indent, out),
        Node::Alias(target) => render(target, indent + 1, out),
    }
}

/// `isCuddledKind`.
fn cuddled(node: &Node) -> bool {
    match node {
        Node::Seq(_) | Node::Map(_) => true,
        Node::Alias(target) => cuddled(target),
        Node::Scalar { .. } => false,
    }
}

/// `renderSequence`: `[]`; a list of maps or lists cuddled (`[{…}, {…}]`); anything
/// else one item a line, each with a comma.
fn render_sequence(items: &[std::rc::Rc<Node>], indent: usize, out: &mut String) {
    if items.is_empty() {
        out.push_str("[]");
        return;
    }
    if items.iter().all(|i| cuddled(i)) {
        out.push('[');
        for (n, item) in items.iter().enumerate() {
            if n > 0 {
                out.push_str(", ");
            }
            render(item, indent, out);
        }
        out.push(']');
        return;
    }
    out.push_str("[\n");
    write_indent(indent, out);
    for item in items {
        write_indent(1, out);
        render(item, indent + 1, out);
        out.push_str(",\n");
        write_indent(indent, out);
    }
    out.push(']');
}

/// `renderMapping`: one key a line, the key quoted only when it must be.
fn render_mapping(
    entries: &[(std::rc::Rc<Node>, std::rc::Rc<Node>)],
    indent: usize,
    out: &mut String,
) {
    if entries.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push_str("{\n");
    for (key, value) in entries {
        write_indent(indent + 1, out);
        let key = match &**key {
            Node::Scalar { value, .. } => fold_nel(value),
            // JSON keys are strings.
            _ => std::borrow::Cow::Borrowed(""),
        };
        render_string(&key, indent + 1, true, true, out);
        out.push_str(": ");
        render(value, indent + 1, out);
        out.push_str(",\n");
    }
    write_indent(indent, out);
    out.push('}');
}

/// A raw NEL (U+0085) in a JSON string (Go's `json.Marshal` leaves it unescaped) is a
/// line break to go-yaml v3, which folds it as YAML folds any break inside a quoted
/// scalar: whitespace around it dropped, one break a space, each further break a
/// newline. This parser reads YAML 1.2, where NEL is an ordinary character.
fn fold_nel(value: &str) -> std::borrow::Cow<'_, str> {
    if !value.contains('\u{85}') {
        return std::borrow::Cow::Borrowed(value);
    }
    let lines: Vec<&str> = value.split('\u{85}').collect();
    let last = lines.len() - 1;
    let mut out = String::new();
    let mut breaks = 0;
    for (i, line) in lines.iter().enumerate() {
        let line = if i > 0 {
            line.trim_start_matches([' ', '\t'])
        } else {
            line
        };
        let line = if i < last {
            line.trim_end_matches([' ', '\t'])
        } else {
            line
        };
        if i > 0 {
            breaks += 1;
        }
        if line.is_empty() && i < last {
            continue;
        }
        match breaks {
            0 => {}
            1 => out.push(' '),
            n => out.extend(std::iter::repeat_n('\n', n - 1)),
        }
        breaks = 0;
        out.push_str(line);
    }
    std::borrow::Cow::Owned(out)
}

fn write_indent(level: usize, out: &mut String) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// `renderString`. `lazy`: unquoted when unambiguous (keys); `compact`: newlines and
/// tabs escaped on one line (keys), else a string with newlines is folded over lines.
fn render_string(val: &str, indent: usize, lazy: bool, compact: bool, out: &mut String) {
    let multi = val.contains('\n');
    if !multi && lazy && !needs_quotes(val) {
        out.push_str(val);
        return;
    }
    let mut buf = String::from("\"");
    if multi && !compact {
        buf.push_str("\\\n");
    }
    for r in val.chars() {
        append_escaped(r, indent, compact, &mut buf);
    }
    if multi && !compact {
        if !buf.ends_with('\n') {
            buf.push_str("\\\n");
        }
        write_indent(indent, &mut buf);
    }
    buf.push('"');
    out.push_str(&buf);
}

/// Go's `unicode.IsSpace`.
fn is_space(r: char) -> bool {
    matches!(
        r,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    ) || (u32::from(r) > 0xff && r.is_whitespace())
}

/// `appendEscapedRune`: after a folded newline the indent, then `\` before leading
/// whitespace (which YAML would drop) or a space.
fn append_escaped(r: char, indent: usize, compact: bool, buf: &mut String) {
    if buf.ends_with('\n') {
        write_indent(indent, buf);
        buf.push(if is_space(r) && r != '\n' { '\\' } else { ' ' });
    }
    match (r, compact) {
        ('\n', false) => return buf.push_str("\\n\\\n"),
        ('\t', false) => return buf.push('\t'),
        ('\n', true) => return buf.push_str("\\n"),
        ('\t', true) => return buf.push_str("\\t"),
        _ => {}
    }
    if r == '"' || r == '\\' {
        buf.push('\\');
        buf.push(r);
        return;
    }
    if gotext::go_fmt::is_print(r) {
        buf.push(r);
        return;
    }
    let escaped = match r {
        '\u{7}' => "\\a",
        '\u{8}' => "\\b",
        '\u{c}' => "\\f",
        '\r' => "\\r",
        '\u{b}' => "\\v",
        '\0' => "\\0",
        '\u{1b}' => "\\e",
        '\u{85}' => "\\N",
        '\u{a0}' => "\\_",
        '\u{2028}' => "\\L",
        '\u{2029}' => "\\P",
        _ => "",
    };
    if !escaped.is_empty() {
        buf.push_str(escaped);
        return;
    }
    let code = u32::from(r);
    // Writing to a String cannot fail.
    let _ = if code < 0x20 || code == 0x7f {
        write!(buf, "\\x{code:02x}")
    } else if code < 0x10000 {
        write!(buf, "\\u{code:04x}")
    } else {
        write!(buf, "\\U{code:08x}")
    };
}

/// `needsQuotes`: a key stays bare when it is letters, digits and `_`, with `-`, `.`
/// and `/` inside, and no YAML parser could read it as anything but a string.
pub fn needs_quotes(s: &str) -> bool {
    if s.is_empty() || is_type_ambiguous(s) {
        return true;
    }
    let runes: Vec<char> = s.chars().collect();
    runes.iter().enumerate().any(|(i, &r)| {
        let anywhere = r.is_alphabetic() || r.is_numeric() || r == '_';
        let interior = i > 0 && i + 1 < runes.len() && matches!(r, '-' | '.' | '/');
        !(anywhere || interior)
    })
}

/// `isTypeAmbiguous`: null, boolean, number, sexagesimal, infinity/NaN or timestamp
/// to some YAML parser (1.1 or 1.2).
fn is_type_ambiguous(s: &str) -> bool {
    let lower = s.to_lowercase();
    let short = s.len() <= 5;
    if short && matches!(lower.as_str(), "null" | "~" | "") {
        return true;
    }
    if matches!(
        s,
        "1" | "t" | "T" | "TRUE" | "true" | "True" | "0" | "f" | "F" | "FALSE" | "false" | "False"
    ) {
        return true;
    }
    if short
        && matches!(
            lower.as_str(),
            "true" | "y" | "yes" | "on" | "false" | "n" | "no" | "off"
        )
    {
        return true;
    }
    let digits = s.replace('_', "");
    if go_parse_int(&digits) || go_parse_float(&digits) || sexagesimal(s) {
        return true;
    }
    if short && matches!(lower.as_str(), ".inf" | "-.inf" | "+.inf" | ".nan") {
        return true;
    }
    timestamp(s)
}

/// Go's `strconv.ParseInt(s, 0, 64)` succeeds: a sign, then `0x`/`0o`/`0b`/`0` (octal)
/// prefixed or decimal digits, within 64 bits.
fn go_parse_int(s: &str) -> bool {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let negative = s.starts_with('-');
    let lower = unsigned.to_ascii_lowercase();
    let (digits, radix) = if let Some(d) = lower.strip_prefix("0x") {
        (d, 16)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (d, 8)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (d, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (&lower[1..], 8)
    } else {
        (lower.as_str(), 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return false;
    }
    match u64::from_str_radix(digits, radix) {
        Ok(n) if negative => n <= 1 << 63,
        Ok(n) => n < 1 << 63,
        Err(_) => false,
    }
}

/// Go's `strconv.ParseFloat(s, 64)` succeeds, for decimal forms and `inf`/`infinity`/
/// `nan` (hexadecimal floats, `0x1p-2`, are not recognised here).
fn go_parse_float(s: &str) -> bool {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s).to_ascii_lowercase();
    if matches!(unsigned.as_str(), "inf" | "infinity" | "nan") {
        return true;
    }
    // Rust accepts the same decimal syntax; Go refuses what overflows.
    let decimal = !unsigned.is_empty()
        && unsigned
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-'));
    decimal && s.parse::<f64>().is_ok_and(f64::is_finite)
}

/// `^[+-]?[1-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$`.
fn sexagesimal(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (s, fraction) = match s.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (s, None),
    };
    if fraction.is_some_and(|f| !f.chars().all(|c| c.is_ascii_digit() || c == '_')) {
        return false;
    }
    let mut parts = s.split(':');
    let head = parts.next().unwrap_or_default();
    let head_ok = head.starts_with(|c: char| ('1'..='9').contains(&c))
        && head.chars().all(|c| c.is_ascii_digit() || c == '_');
    let mut sixties = 0;
    for part in parts {
        let ok = match part.as_bytes() {
            [d] => d.is_ascii_digit(),
            [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
            _ => false,
        };
        if !ok {
            return false;
        }
        sixties += 1;
    }
    head_ok && sixties > 0
}

/// go-yaml's `parseTimestamp`: `YYYY-M-D`, then optionally a time (`T`, `t` or a
/// space, `h:m:s`, a fraction), a zone (`Z` or `±hh:mm`) after `T`/`t` only.
fn timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let (date, rest) = match s.find(['T', 't', ' ']) {
        Some(at) => (&s[..at], Some((&s[at..at + 1], &s[at + 1..]))),
        None => (s, None),
    };
    let fields: Vec<&str> = date.split('-').collect();
    let [_, month, day] = fields[..] else {
        return false;
    };
    let number = |f: &str, max: u32| {
        (1..=2).contains(&f.len())
            && f.chars().all(|c| c.is_ascii_digit())
            && f.parse::<u32>().is_ok_and(|n| n <= max)
    };
    if !number(month, 12) || !number(day, 31) || month == "0" || day == "0" {
        return false;
    }
    let Some((separator, time)) = rest else {
        return true;
    };
    let (clock, zone) = if separator == " " {
        (time, None)
    } else if let Some(clock) = time.strip_suffix('Z') {
        (clock, Some(()))
    } else {
        match time.rfind(['+', '-']) {
            Some(at) if zone_ok(&time[at + 1..]) => (&time[..at], Some(())),
            _ => return false,
        }
    };
    let _ = zone;
    let (clock, fraction) = match clock.split_once('.') {
        Some((c, f)) => (c, Some(f)),
        None => (clock, None),
    };
    if fraction.is_some_and(|f| f.is_empty() || !f.chars().all(|c| c.is_ascii_digit())) {
        return false;
    }
    let parts: Vec<&str> = clock.split(':').collect();
    matches!(parts[..], [h, m, sec] if number(h, 23) && number(m, 59) && number(sec, 59))
}

fn zone_ok(zone: &str) -> bool {
    let b = zone.as_bytes();
    b.len() == 5 && b[2] == b':' && [0, 1, 3, 4].iter().all(|&i| b[i].is_ascii_digit())
}

#[cfg(test)]
mod tests;
