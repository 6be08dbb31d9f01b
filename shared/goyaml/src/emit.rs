//! An object written as YAML the way kubectl writes it: sigs.k8s.io/yaml's `Marshal`
//! (the object's JSON read back by go-yaml v2 into Go values) and go-yaml v2's
//! encoder and emitter (`encode.go`, `emitterc.go`) over those values.
//!
//! Every `-o yaml` of every plugin goes through [`to_string`]. kubectl's output is
//! committed to repositories and diffed, so every byte follows go-yaml v2, which no
//! Rust crate reproduces (serde-saphyr, which the plugins used before, double-quotes
//! `*`, quotes `127.0.0.1`, escapes rather than single-quotes and writes `>-` blocks):
//! - **scalar style**, as `encoder.stringv` asks for it and
//!   `yaml_emitter_select_scalar_style` settles it: a string that would read back as
//!   something else (`"yes"`, `"0x1F"`, `"1:20"`, `"2024-01-02"`, `""`) is
//!   double-quoted; one with a line break is a literal block (`|`, `|-`, `|+`);
//!   otherwise plain, unless `yaml_emitter_analyze_scalar` finds an indicator, a
//!   leading or trailing space or a break, then single-quoted (`'*'`), unless that
//!   cannot hold it either (a tab, a control or an astral character), then
//!   double-quoted with go-yaml's escapes;
//! - **line width**: a plain, single- or double-quoted scalar is folded at the first
//!   space once the line has passed 80 columns (counted in characters);
//! - **layout**: two-space indents, a sequence under a key not indented (`- ` at the
//!   key's column), `{}` and `[]` for empty collections, keys longer than 128 bytes or
//!   with a line break written as `? key` / `: value`;
//! - **key order**: go-yaml's, see [`super::key_order`];
//! - **numbers**: as `json.Marshal` writes them and go-yaml then reads them (an
//!   integer stays an integer, `1.5e-7` becomes `1.5e-07`, `100000000000000000000`
//!   becomes `1e+20`).
//!
//! Hand-written (a port of the parts of the emitter that JSON values reach, with the
//! emitter's state kept as go-yaml keeps it: column, indent stack, whether the last
//! write was whitespace or indentation), since no crate writes go-yaml v2's YAML.

use std::borrow::Cow;

use serde_json::Value;

use super::GoValue;

/// go-yaml's `best_indent` and `best_width` (sigs.k8s.io/yaml sets neither).
const INDENT: i32 = 2;
const WIDTH: usize = 80;
/// `yaml_emitter_check_simple_key`: a longer key is written as `? key`.
const SIMPLE_KEY_MAX: usize = 128;

/// Why an object cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    /// A string holds a character go-yaml's reader refuses in its input and JSON does
    /// not escape (DEL, C1 controls other than NEL, U+FFFE, U+FFFF): kubectl fails with
    /// these words when it reads the object's JSON back.
    #[error("yaml: control characters are not allowed")]
    ControlCharacters,
    /// A key holds a NEL (U+0085), which JSON leaves as it is and go-yaml's reader
    /// takes for a line break, and a key of two lines is no key in JSON's flow
    /// mapping: kubectl fails with go-yaml's parser error, on the line (counted from
    /// 0, in the object's JSON) of the `:` after that key.
    #[error("yaml: line {line}: did not find expected ',' or '}}'")]
    KeyLineBreak {
        /// The NELs in the object's JSON up to the end of that key.
        line: usize,
    },
    /// A string has `---` or `...` and a space right after a NEL: to go-yaml's scanner
    /// that is a document marker at the start of a line, inside the JSON string.
    #[error("yaml: line {line}: found unexpected document indicator")]
    DocumentIndicator {
        /// The line of the marker, counted from 1 (the NELs before it, plus one).
        line: usize,
    },
}

/// `value` as kubectl's `-o yaml` writes it, ending with a newline.
pub fn to_string(value: &Value) -> Result<String, EmitError> {
    readable(value)?;
    let mut emitter = Emitter {
        out: String::new(),
        column: 0,
        indent: -1,
        indents: Vec::new(),
        whitespace: true,
        indention: true,
        mapping_context: false,
    };
    emitter.node(value, Context::Root)?;
    // The document end (`yaml_emitter_emit_document_end`): the final line break.
    emitter.write_indent();
    Ok(emitter.out)
}

/// Where a node is written (`emit_node`'s flags; the root context only matters to
/// go-yaml for `...` markers, which `Marshal` never writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    Root,
    Sequence,
    /// A mapping's value, or a key written as `? key`.
    Mapping,
    /// A key written as `key:`.
    SimpleKey,
}

/// A scalar style (`yaml_scalar_style_t`, less the folded style `Marshal` never asks
/// for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

struct Emitter {
    out: String,
    /// Characters since the last line break.
    column: usize,
    indent: i32,
    indents: Vec<i32>,
    /// The last thing written was whitespace (or nothing on this line).
    whitespace: bool,
    /// The last thing written was indentation (or an indicator that counts as such).
    indention: bool,
    /// `emitter.mapping_context`, kept from node to node as go-yaml keeps it: a block
    /// sequence reads it when its first item comes.
    mapping_context: bool,
}

impl Emitter {
    fn node(&mut self, value: &Value, context: Context) -> Result<(), EmitError> {
        self.mapping_context = context == Context::Mapping || context == Context::SimpleKey;
        match value {
            Value::Null => self.scalar("null", Style::Plain, context),
            Value::Bool(true) => self.scalar("true", Style::Plain, context),
            Value::Bool(false) => self.scalar("false", Style::Plain, context),
            Value::Number(n) => self.scalar(&number(n), Style::Plain, context),
            Value::String(s) => {
                let s = as_go_reads_it(s);
                self.scalar(&s, requested_style(&s), context);
            }
            Value::Array(items) if items.is_empty() => self.empty("[", "]"),
            Value::Object(map) if map.is_empty() => self.empty("{", "}"),
            Value::Array(items) => self.sequence(items)?,
            Value::Object(map) => self.mapping(map)?,
        }
        Ok(())
    }

    /// An empty collection: go-yaml switches to flow style (`[]`, `{}`).
    fn empty(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.write_indicator(close, false, false, false);
    }

    /// `yaml_emitter_emit_block_sequence_item`.
    fn sequence(&mut self, items: &[Value]) -> Result<(), EmitError> {
        // Under a key, `- ` stays at the key's column.
        let indentless = self.mapping_context && !self.indention;
        self.increase_indent(false, indentless);
        for item in items {
            self.write_indent();
            self.write_indicator("-", true, false, true);
            self.node(item, Context::Sequence)?;
        }
        self.pop_indent();
        Ok(())
    }

    /// `yaml_emitter_emit_block_mapping_key` and `_value`, keys in go-yaml's order.
    fn mapping(&mut self, map: &serde_json::Map<String, Value>) -> Result<(), EmitError> {
        let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
        super::key_order::sort(&mut keys);
        self.increase_indent(false, false);
        for key in keys {
            let text = as_go_reads_it(key);
            self.write_indent();
            let simple = !analyze(&text).multiline && text.len() <= SIMPLE_KEY_MAX;
            let style = requested_style(&text);
            if simple {
                self.mapping_context = true;
                self.scalar(&text, style, Context::SimpleKey);
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indicator("?", true, false, true);
                self.mapping_context = true;
                self.scalar(&text, style, Context::Mapping);
                self.write_indent();
                self.write_indicator(":", true, false, true);
            }
            if let Some(value) = map.get(key) {
                self.node(value, Context::Mapping)?;
            }
        }
        self.pop_indent();
        Ok(())
    }

    /// `yaml_emitter_emit_scalar`: the style settled, then the text written one
    /// indent deeper.
    fn scalar(&mut self, value: &str, requested: Style, context: Context) {
        let analysis = analyze(value);
        let simple_key = context == Context::SimpleKey;
        let style = select_style(value, requested, &analysis, simple_key);
        self.increase_indent(true, false);
        match style {
            Style::Plain => self.write_plain(value, !simple_key),
            Style::SingleQuoted => self.write_single_quoted(value, !simple_key),
            Style::DoubleQuoted => self.write_double_quoted(value, !simple_key),
            Style::Literal => self.write_literal(value),
        }
        self.pop_indent();
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { INDENT } else { 0 };
        } else if !indentless {
            self.indent += INDENT;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn indent_width(&self) -> usize {
        usize::try_from(self.indent).unwrap_or(0)
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// `write_break`: `\n` as a line break, any other break character as itself.
    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    /// `yaml_emitter_write_indent`: a new line unless already at the indentation,
    /// then spaces up to it.
    fn write_indent(&mut self) {
        let indent = self.indent_width();
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in indicator.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    /// `yaml_emitter_write_plain_scalar`.
    fn write_plain(&mut self, value: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let mut spaces = false;
        let mut breaks = false;
        let mut chars = value.chars().peekable();
        while let Some(c) = chars.next() {
            if c == ' ' {
                if allow_breaks && !spaces && self.column > WIDTH && chars.peek() != Some(&' ') {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    /// `yaml_emitter_write_single_quoted_scalar`.
    fn write_single_quoted(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let mut spaces = false;
        let mut breaks = false;
        let last = value.len().saturating_sub(1);
        let mut chars = value.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == ' ' {
                let next_is_space = chars.peek().is_some_and(|&(_, n)| n == ' ');
                if allow_breaks
                    && !spaces
                    && self.column > WIDTH
                    && i > 0
                    && i < last
                    && !next_is_space
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// `yaml_emitter_write_double_quoted_scalar`.
    fn write_double_quoted(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        // go-yaml's `is_bom(value, i)` looks at the start of the value, not at `i`:
        // a value that starts with a byte-order mark is escaped character by character.
        let bom = value.starts_with('\u{feff}');
        let last = value.len().saturating_sub(1);
        let mut spaces = false;
        let mut chars = value.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if bom || !is_printable(c) || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                let short = match c {
                    '\0' => Some('0'),
                    '\x07' => Some('a'),
                    '\x08' => Some('b'),
                    '\t' => Some('t'),
                    '\n' => Some('n'),
                    '\x0b' => Some('v'),
                    '\x0c' => Some('f'),
                    '\r' => Some('r'),
                    '\x1b' => Some('e'),
                    '"' => Some('"'),
                    '\\' => Some('\\'),
                    '\u{85}' => Some('N'),
                    '\u{a0}' => Some('_'),
                    '\u{2028}' => Some('L'),
                    '\u{2029}' => Some('P'),
                    _ => None,
                };
                match short {
                    Some(e) => self.put(e),
                    None => {
                        let v = u32::from(c);
                        let (letter, digits) = match v {
                            0..=0xFF => ('x', 2),
                            0x100..=0xFFFF => ('u', 4),
                            _ => ('U', 8),
                        };
                        self.put(letter);
                        for k in (0..digits).rev() {
                            let digit = (v >> (4 * k)) & 0xF;
                            self.put(
                                char::from_digit(digit, 16).map_or('0', |d| d.to_ascii_uppercase()),
                            );
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > WIDTH && i > 0 && i < last {
                    self.write_indent();
                    if chars.peek().is_some_and(|&(_, n)| n == ' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// `yaml_emitter_write_literal_scalar`, with its block scalar hints.
    fn write_literal(&mut self, value: &str) {
        self.write_indicator("|", true, false, false);
        if value.starts_with(' ') || value.starts_with(is_break) {
            let hint = char::from(b'0' + INDENT as u8);
            self.write_indicator(&hint.to_string(), false, false, false);
        }
        let mut tail = value.chars().rev();
        let chomp = match (tail.next(), tail.next()) {
            (None, _) => Some('-'),
            (Some(last), _) if !is_break(last) => Some('-'),
            (Some(_), None) => Some('+'),
            (Some(_), Some(before)) if is_break(before) => Some('+'),
            _ => None,
        };
        if let Some(chomp) = chomp {
            self.write_indicator(&chomp.to_string(), false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in value.chars() {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

/// A number as kubectl's object holds it, through `json.Marshal` and back through
/// go-yaml's resolver: an integer beyond int64 is a float64 in the object, and the
/// float64 that JSON writes as `100000000000000000000` reads back as a float too.
fn number(n: &serde_json::Number) -> String {
    let json = gotext::go_fmt::json_number(n);
    match super::resolve(&json, "").1 {
        GoValue::Int(i) => i.to_string(),
        GoValue::Uint(u) => u.to_string(),
        GoValue::Float(f) => float(f),
        // `json.Marshal` never writes a number that reads back as anything else.
        _ => json,
    }
}

/// `encoder.floatv`: `strconv.FormatFloat(f, 'g', -1, 64)` with YAML's spellings of
/// the infinities and NaN.
fn float(f: f64) -> String {
    match gotext::go_fmt::float_v(f).as_str() {
        "+Inf" => ".inf".into(),
        "-Inf" => "-.inf".into(),
        "NaN" => ".nan".into(),
        other => other.into(),
    }
}

/// Whether go-yaml's reader takes the JSON text of `value` (see [`EmitError`]).
///
/// When a control character and a NEL problem are both there, which one kubectl
/// reports depends on how far the reader had read: it decodes its input 512 bytes at a
/// time (`yaml_parser_update_buffer` over `input_raw_buffer_size`), checking every
/// character of a chunk as it decodes it, while the scanner fails at a document marker
/// and the parser at the `:` after a key with a NEL, each having looked 4 characters
/// ahead. A control character in a chunk decoded by then wins, one further on does not.
fn readable(value: &Value) -> Result<(), EmitError> {
    fn suspect(value: &Value) -> bool {
        let text = |s: &str| s.chars().any(|c| unreadable(c) || c == '\u{85}');
        match value {
            Value::String(s) => text(s),
            Value::Array(items) => items.iter().any(suspect),
            Value::Object(map) => map.iter().any(|(k, v)| text(k) || suspect(v)),
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        }
    }
    if !suspect(value) {
        return Ok(());
    }
    let json = gotext::go_fmt::json(value, None);
    let control = json.find(unreadable);
    let Some((at, error)) = line_break_error(&json) else {
        return control.map_or(Ok(()), |_| Err(EmitError::ControlCharacters));
    };
    let Some(control) = control else {
        return Err(error);
    };
    let looked_at = json[at..]
        .char_indices()
        .nth(4)
        .map_or(json.len(), |(i, _)| at + i);
    let mut decoded = 0;
    while decoded < looked_at {
        let mut next = (decoded + 512).min(json.len());
        // A character cut by the chunk's end is decoded with the next chunk.
        while !json.is_char_boundary(next) {
            next -= 1;
        }
        decoded = next;
    }
    Err(if control < decoded {
        EmitError::ControlCharacters
    } else {
        error
    })
}

/// What go-yaml's reader refuses and `json.Marshal` does not escape: DEL, the C1
/// controls but NEL, U+FFFE and U+FFFF.
fn unreadable(c: char) -> bool {
    matches!(c, '\x7f'..='\u{84}' | '\u{86}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}')
}

/// The first error the NELs in compact JSON text cause go-yaml, in text order, and
/// where the scanner stood when it found it (see [`EmitError`]).
fn line_break_error(json: &str) -> Option<(usize, EmitError)> {
    let mut nels = 0;
    let (mut in_string, mut escaped, mut has_nel) = (false, false, false);
    let mut after_nel = false;
    for (i, c) in json.char_indices() {
        if !in_string {
            in_string = c == '"';
            has_nel = false;
            continue;
        }
        // `yaml_parser_scan_flow_scalar` checks for a document marker where a run of
        // spaces and line breaks that ended with a break gives way to other text.
        if after_nel && c != ' ' && c != '\u{85}' {
            let rest = &json[i..];
            if (rest.starts_with("---") || rest.starts_with("..."))
                && rest[3..].starts_with([' ', '\u{85}'])
            {
                return Some((i, EmitError::DocumentIndicator { line: nels + 1 }));
            }
        }
        after_nel = c == '\u{85}';
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '\u{85}' {
            nels += 1;
            has_nel = true;
        } else if c == '"' {
            in_string = false;
            if has_nel && json[i + 1..].starts_with(':') {
                return Some((i + 1, EmitError::KeyLineBreak { line: nels }));
            }
        }
    }
    None
}

/// The string go-yaml's reader makes of `s` inside the JSON text of the object
/// ([`readable`] has refused what it cannot read): `json.Marshal` leaves NEL (U+0085)
/// as it is, which the reader takes for a line break inside the double-quoted JSON
/// string and folds, with the spaces around it, into one space (two or more NELs into
/// as many line breaks less one).
fn as_go_reads_it(s: &str) -> Cow<'_, str> {
    if !s.contains('\u{85}') {
        return Cow::Borrowed(s);
    }
    // `yaml_parser_scan_flow_scalar`: a run of spaces and NELs is dropped and
    // replaced; spaces before its first NEL are kept only when it has none, spaces
    // after it count for nothing.
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != ' ' && c != '\u{85}' {
            out.push(c);
            continue;
        }
        let (mut spaces, mut breaks) = (0, 0);
        let mut current = c;
        loop {
            match current {
                ' ' if breaks == 0 => spaces += 1,
                ' ' => {}
                _ => breaks += 1,
            }
            match chars.next_if(|&n| n == ' ' || n == '\u{85}') {
                Some(n) => current = n,
                None => break,
            }
        }
        match breaks {
            0 => out.extend(std::iter::repeat_n(' ', spaces)),
            1 => out.push(' '),
            n => out.extend(std::iter::repeat_n('\n', n - 1)),
        }
    }
    Cow::Owned(out)
}

/// The style `encoder.stringv` asks for: literal for a string with a line feed, plain
/// when the text reads back as the same string, double-quoted otherwise.
fn requested_style(s: &str) -> Style {
    if s.contains('\n') {
        Style::Literal
    } else if reads_back_as_string(s) {
        Style::Plain
    } else {
        Style::DoubleQuoted
    }
}

/// `resolve("", s)` gives `!!str` and `s` is no YAML 1.1 base-60 float (`1:20`).
fn reads_back_as_string(s: &str) -> bool {
    // `resolve` looks no further than its table of first characters for most text.
    let hinted = s.bytes().next().is_none_or(|b| {
        matches!(
            b,
            b'+' | b'-' | b'0'
                ..=b'9'
                    | b'.'
                    | b'y'
                    | b'Y'
                    | b'n'
                    | b'N'
                    | b't'
                    | b'T'
                    | b'f'
                    | b'F'
                    | b'o'
                    | b'O'
                    | b'~'
        )
    });
    if hinted && super::resolve(s, "").0 != "str" {
        return false;
    }
    !is_base60_float(s)
}

/// `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        // `[0-5]?[0-9]`: one digit, or two with the first at most 5.
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let taken = match digits {
            0 => return false,
            1 => 1,
            _ if b[i + 1] <= b'5' => 2,
            _ => 1,
        };
        i += 1 + taken;
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// What `yaml_emitter_analyze_scalar` finds out about a scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// `yaml_emitter_analyze_scalar` (the flow-plain flag is left out: the values reach
/// flow context only as `{}` and `[]`).
fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = value.starts_with("---") || value.starts_with("...");
    let mut line_breaks = false;
    let mut special_characters = false;
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let mut preceded_by_whitespace = true;
    let (mut previous_space, mut previous_break) = (false, false);
    let bytes = value.as_bytes();
    for (i, c) in value.char_indices() {
        let end = i + c.len_utf8();
        let followed_by_whitespace = end >= bytes.len() || matches!(bytes[end], b' ' | b'\t');
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special_characters = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= end == bytes.len();
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= end == bytes.len();
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = matches!(c, ' ' | '\t' | '\0') || is_break(c);
    }
    let mut analysis = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        analysis.block_plain_allowed = false;
    }
    if trailing_space {
        analysis.block_allowed = false;
    }
    if break_space {
        analysis.block_plain_allowed = false;
        analysis.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        analysis.block_plain_allowed = false;
        analysis.single_quoted_allowed = false;
        analysis.block_allowed = false;
    }
    if line_breaks || block_indicators {
        analysis.block_plain_allowed = false;
    }
    analysis
}

/// `yaml_emitter_select_scalar_style`, in block context (flow level 0) with implicit
/// tags, as `Marshal` emits every scalar.
fn select_style(value: &str, requested: Style, analysis: &Analysis, simple_key: bool) -> Style {
    let mut style = requested;
    if simple_key && analysis.multiline {
        style = Style::DoubleQuoted;
    }
    if style == Style::Plain && (!analysis.block_plain_allowed || (value.is_empty() && simple_key))
    {
        style = Style::SingleQuoted;
    }
    if style == Style::SingleQuoted && !analysis.single_quoted_allowed {
        style = Style::DoubleQuoted;
    }
    if style == Style::Literal && (!analysis.block_allowed || simple_key) {
        style = Style::DoubleQuoted;
    }
    style
}

/// go-yaml's `is_printable`, per character: LF, printable ASCII, and the Basic
/// Multilingual Plane from U+00A0 but the surrogates, the byte-order mark, U+FFFE and
/// U+FFFF. Tabs, carriage returns, NEL and every character beyond U+FFFF are not.
fn is_printable(c: char) -> bool {
    matches!(c, '\n' | ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
        && c != '\u{feff}'
}

/// go-yaml's `is_break`: CR, LF, NEL, LS, PS.
fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

#[cfg(test)]
mod tests;
