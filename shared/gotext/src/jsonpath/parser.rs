//! The template parser: text with `{…}` actions, each a list of path nodes, after
//! client-go's `util/jsonpath/parser.go` (its grammar, its quirks, its error texts).
//!
//! Quirks kept on purpose because kubectl users rely on them (or get kubectl's errors
//! for them): bracket keys are split at dots (`['a.b']` is `.a.b`, escape with `\.`),
//! only single quotes make a bracket key, `[a,b]` without quotes is an invalid index,
//! `range`/`end` are identifiers checked at evaluation time, a tab inside an action is
//! an unrecognised character.

use std::fmt;

/// A parse error; the text is client-go's, kubectl prefixes it with
/// `error parsing jsonpath TEMPLATE, `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

fn err<T>(msg: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError(msg.into()))
}

/// One bound of an array selection `[start:end:step]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Param {
    /// The value, meaningful when `known`.
    pub value: i64,
    /// Whether the bound was given (or derived).
    pub known: bool,
    /// `end` of a plain index `[i]`, derived as `i + 1`.
    pub derived: bool,
}

/// A node of a parsed template.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// Literal text, outside actions or a quoted string inside one.
    Text(String),
    /// A `{…}` action: nodes applied one after the other.
    List(Vec<Node>),
    /// `.name`: a map key.
    Field(String),
    /// `[start:end:step]` or `[i]`.
    Array([Param; 3]),
    /// `[?(left OP right)]`, or `[?(left)]` with operator `exists`.
    Filter {
        /// The left operand, evaluated on each element.
        left: Vec<Node>,
        /// The right operand.
        right: Vec<Node>,
        /// `==`, `!=`, `<`, `>`, `<=`, `>=`, `exists`, or anything else (an error at
        /// evaluation, as in kubectl).
        op: String,
    },
    /// An integer literal.
    Int(i64),
    /// A floating-point literal.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// `*` / `.*`.
    Wildcard,
    /// `..`.
    Recursive,
    /// `[a,b]`: each alternative is a list.
    Union(Vec<Vec<Node>>),
    /// A bare word: `range`, `end`, or an error at evaluation.
    Identifier(String),
}

/// Parses a whole template into its top-level nodes (`Text` and `List`).
pub fn parse(text: &str) -> Result<Vec<Node>, ParseError> {
    let mut p = Parser {
        input: text,
        pos: 0,
    };
    let mut root = Vec::new();
    loop {
        // Text up to the next `{`.
        match p.rest().find('{') {
            Some(at) => {
                if at > 0 {
                    root.push(Node::Text(p.rest()[..at].to_string()));
                }
                p.pos += at + 1;
                let mut list = Vec::new();
                p.inside_action(&mut list)?;
                root.push(Node::List(list));
            }
            None => {
                if !p.rest().is_empty() {
                    root.push(Node::Text(p.rest().to_string()));
                }
                return Ok(root);
            }
        }
    }
}

/// Parses `{text}` and returns the nodes of its single action (client-go's
/// `parseAction`, used for filter operands, union members and bracket keys).
fn parse_action(text: &str) -> Result<Vec<Node>, ParseError> {
    let nodes = parse(&format!("{{{text}}}"))?;
    match nodes.into_iter().next() {
        Some(Node::List(list)) => Ok(list),
        _ => Ok(Vec::new()),
    }
}

struct Parser<'a> {
    input: &'a str,
    pos: usize,
}

fn is_terminator(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => matches!(
            c,
            ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'
        ),
    }
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || is_digit(c)
}

fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric())
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        self.input.get(self.pos..).unwrap_or_default()
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// The byte before the last consumed character (client-go's `input[pos-2]`),
    /// used to spot an escaped closing quote.
    fn escaped(&self, consumed: char) -> bool {
        let before = self.pos.saturating_sub(consumed.len_utf8() + 1);
        self.pos > consumed.len_utf8() && self.input.as_bytes().get(before) == Some(&b'\\')
    }

    /// Parses the inside of an action up to and including its `}`.
    fn inside_action(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        loop {
            let rest = self.rest();
            if rest.starts_with('}') {
                self.pos += 1;
                return Ok(());
            }
            if rest.starts_with("[?(") {
                self.filter(cur)?;
                continue;
            }
            if rest.starts_with("..") {
                self.recursive(cur)?;
                continue;
            }
            let start = self.pos;
            match self.next() {
                None | Some('\r' | '\n') => return err("unclosed action"),
                Some(' ' | '@' | '$') => {}
                Some('[') => self.array(cur, start)?,
                Some(q @ ('"' | '\'')) => self.quote(cur, start, q)?,
                Some('.') => self.field(cur),
                Some(c) if c == '+' || c == '-' || is_digit(c) => {
                    self.pos = start;
                    self.number(cur)?;
                }
                Some(c) if is_alphanumeric(c) => {
                    self.pos = start;
                    self.identifier(cur);
                }
                Some(c) => {
                    return err(format!(
                        "unrecognized character in action: {}",
                        crate::go_fmt::sharp_u(c)
                    ));
                }
            }
        }
    }

    fn identifier(&mut self, cur: &mut Vec<Node>) {
        let start = self.pos;
        while !is_terminator(self.peek()) {
            self.next();
        }
        let word = &self.input[start..self.pos];
        cur.push(match word {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            _ => Node::Identifier(word.to_string()),
        });
    }

    fn recursive(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        if cur.last() == Some(&Node::Recursive) {
            return err("invalid multiple recursive descent");
        }
        self.pos += 2;
        cur.push(Node::Recursive);
        if self.peek().is_some_and(is_alphanumeric) {
            self.field(cur);
        }
        Ok(())
    }

    fn number(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        let start = self.pos;
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        while self.peek().is_some_and(|c| c == '.' || is_digit(c)) {
            self.next();
        }
        let text = &self.input[start..self.pos];
        if let Ok(i) = text.parse::<i64>() {
            cur.push(Node::Int(i));
        } else if let Some(f) = go_parse_float(text) {
            cur.push(Node::Float(f));
        } else {
            return err(format!("cannot parse number {text}"));
        }
        Ok(())
    }

    /// `[` was consumed at `start`.
    fn array(&mut self, cur: &mut Vec<Node>, start: usize) -> Result<(), ParseError> {
        loop {
            match self.next() {
                None | Some('\n') => return err("unterminated array"),
                Some(']') => break,
                Some(_) => {}
            }
        }
        let inner = &self.input[start + 1..self.pos - 1];
        let inner = if inner == "*" { ":" } else { inner };

        let parts: Vec<&str> = inner.split(',').collect();
        if parts.len() > 1 {
            let mut union = Vec::with_capacity(parts.len());
            for part in parts {
                union.push(parse_action(&format!("[{}]", part.trim_matches(' ')))?);
            }
            cur.push(Node::Union(union));
            return Ok(());
        }

        // 'key': a dict key, parsed as `.key` (so dots still split it).
        if inner.len() >= 2 && inner.starts_with('\'') && inner.ends_with('\'') {
            let key = &inner[1..inner.len() - 1];
            if !key.contains('\'') {
                cur.extend(parse_action(&format!(".{key}"))?);
                return Ok(());
            }
        }

        let Some(groups) = slice_groups(inner) else {
            return err(format!("invalid array index {inner}"));
        };
        let mut params = [Param::default(); 3];
        for i in 0..3 {
            let group = groups[i];
            if !group.is_empty() {
                let digits = if i > 0 { &group[1..] } else { group };
                if i > 0 && digits.is_empty() {
                    params[i].known = false;
                } else {
                    params[i].known = true;
                    params[i].value = digits
                        .parse::<i64>()
                        .map_err(|_| ParseError(format!("array index {digits} is not a number")))?;
                }
            } else if i == 1 {
                params[1] = Param {
                    value: params[0].value.saturating_add(1),
                    known: true,
                    derived: true,
                };
            }
        }
        cur.push(Node::Array(params));
        Ok(())
    }

    fn filter(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        self.pos += 3;
        let start = self.pos;
        let (mut begin, mut end, mut pair) = (false, false, '"');
        loop {
            match self.next() {
                None | Some('\n') => return err("unterminated filter"),
                Some(q @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = q;
                        continue;
                    }
                    if !self.escaped(q) && q == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                Some(_) => {}
            }
        }
        if self.next() != Some(']') {
            return err("unclosed array expect ]");
        }
        let text = &self.input[start..self.pos - 2];
        match split_comparison(text) {
            None => cur.push(Node::Filter {
                left: parse_action(text)?,
                right: Vec::new(),
                op: "exists".to_string(),
            }),
            Some((left, op, right)) => cur.push(Node::Filter {
                left: parse_action(left)?,
                right: parse_action(right)?,
                op: op.to_string(),
            }),
        }
        Ok(())
    }

    /// The opening quote `q` was consumed at `start`.
    fn quote(&mut self, cur: &mut Vec<Node>, start: usize, q: char) -> Result<(), ParseError> {
        loop {
            match self.next() {
                None | Some('\n') => return err("unterminated quoted string"),
                Some(c) if c == q && !self.escaped(c) => break,
                Some(_) => {}
            }
        }
        let quoted = &self.input[start..self.pos];
        match unquote_extend(quoted) {
            Some(s) => cur.push(Node::Text(s)),
            None => return err(format!("unquote string {quoted} error invalid syntax")),
        }
        Ok(())
    }

    /// The `.` was consumed.
    fn field(&mut self, cur: &mut Vec<Node>) {
        let start = self.pos;
        loop {
            match self.peek() {
                Some('\\') => {
                    self.next();
                    self.next();
                }
                c if is_terminator(c) => break,
                _ => {
                    self.next();
                }
            }
        }
        let name = &self.input[start..self.pos];
        cur.push(if name == "*" {
            Node::Wildcard
        } else {
            Node::Field(name.replace('\\', ""))
        });
    }
}

/// client-go's `^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$`, hand-matched: the three groups
/// (empty when absent), or `None` when the text is no slice.
fn slice_groups(text: &str) -> Option<[&str; 3]> {
    fn signed_digits(s: &str) -> usize {
        let sign = usize::from(s.starts_with('-'));
        sign + s[sign..].bytes().take_while(u8::is_ascii_digit).count()
    }
    let mut groups = [""; 3];
    let first = signed_digits(text);
    groups[0] = &text[..first];
    let mut rest = &text[first..];
    for group in groups.iter_mut().skip(1) {
        if let Some(after) = rest.strip_prefix(':') {
            let len = 1 + signed_digits(after);
            *group = &rest[..len];
            rest = &rest[len..];
        }
    }
    rest.is_empty().then_some(groups)
}

/// client-go's `^([^!<>=]+)([!<>=]+)(.+?)$` on a filter's text.
fn split_comparison(text: &str) -> Option<(&str, &str, &str)> {
    let is_op = |c: char| matches!(c, '!' | '<' | '>' | '=');
    let left_len = text.find(is_op)?;
    if left_len == 0 {
        return None;
    }
    let after = &text[left_len..];
    let op_len = after.find(|c: char| !is_op(c)).unwrap_or(after.len());
    let right = &after[op_len..];
    // `.+?$` needs at least one character and no line break (Go's `.`).
    if right.is_empty() || right.contains('\n') || text[..left_len].contains('\n') {
        return None;
    }
    Some((&text[..left_len], &after[..op_len], right))
}

/// Go's `strconv.ParseFloat` on the characters a number token can hold (digits,
/// dots, one leading sign): Rust's parser agrees on those except that Go rejects
/// a lone `.`.
fn go_parse_float(text: &str) -> Option<f64> {
    let digits = text.trim_start_matches(['+', '-']);
    if !digits.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<f64>().ok()
}

/// client-go's `UnquoteExtend`: Go's `strconv.Unquote` for `"…"` and also `'…'`
/// with several characters. `None` is Go's "invalid syntax".
pub(crate) fn unquote_extend(s: &str) -> Option<String> {
    let quote = s.chars().next()?;
    if s.len() < 2 || !s.ends_with(quote) || !matches!(quote, '"' | '\'') {
        return None;
    }
    let body = &s[1..s.len() - 1];
    if !body.contains('\\') && !body.contains(quote) {
        return Some(body.to_string());
    }
    let mut out = Vec::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == quote {
            return None;
        }
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let esc = chars.next()?;
        let simple = match esc {
            'a' => Some(b'\x07'),
            'b' => Some(b'\x08'),
            'f' => Some(b'\x0c'),
            'n' => Some(b'\n'),
            'r' => Some(b'\r'),
            't' => Some(b'\t'),
            'v' => Some(b'\x0b'),
            '\\' => Some(b'\\'),
            '\'' | '"' if esc == quote => Some(esc as u8),
            _ => None,
        };
        if let Some(b) = simple {
            out.push(b);
            continue;
        }
        match esc {
            'x' | 'u' | 'U' => {
                let n = match esc {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                for _ in 0..n {
                    v = v * 16 + chars.next()?.to_digit(16)?;
                }
                if esc == 'x' {
                    // A single byte, as Go does (may form invalid UTF-8, replaced below).
                    out.push(u8::try_from(v).ok()?);
                } else {
                    let c = char::from_u32(v)?;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
            '0'..='7' => {
                let mut v = esc.to_digit(8)?;
                for _ in 0..2 {
                    v = v * 8 + chars.next()?.to_digit(8)?;
                }
                out.push(u8::try_from(v).ok()?);
            }
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}
