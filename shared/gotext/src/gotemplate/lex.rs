//! The lexer of Go's `text/template` (`text/template/parse/lex.go`), state for state:
//! the token positions and line numbers it produces are the ones Go's error messages
//! quote, so the scanning rules (trim markers, `.field` splitting, number syntax,
//! which characters end an identifier) are kept exactly, not approximated.
//!
//! Go runs its lexer ahead of the parser; the sequence of tokens is a pure function of
//! the text, so [`lex`] produces it up front, ending with `Eof` or the first `Error`.

use crate::go_fmt;

/// The kinds of tokens (`itemType`). Keywords sort after [`ItemType::Keyword`], as in
/// Go, because `item.String()` prints them differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ItemType {
    Error,
    Bool,
    Char,
    CharConstant,
    Complex,
    Assign,
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    Keyword,
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

/// One token: its kind, byte offset, text (the message for `Error`) and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    pub typ: ItemType,
    pub pos: usize,
    pub val: String,
    pub line: usize,
}

impl Item {
    /// Go's `item.String()`, used in "unexpected … in …" messages.
    pub fn describe(&self) -> String {
        match self.typ {
            ItemType::Eof => "EOF".into(),
            ItemType::Error => self.val.clone(),
            t if t > ItemType::Keyword => format!("<{}>", self.val),
            _ if self.val.chars().count() > 10 => {
                // `%.10q...`: the first ten characters, quoted.
                let head: String = self.val.chars().take(10).collect();
                format!("{}...", go_fmt::quote(&head))
            }
            _ => go_fmt::quote(&self.val),
        }
    }
}

fn keyword(word: &str) -> Option<ItemType> {
    Some(match word {
        "." => ItemType::Dot,
        "block" => ItemType::Block,
        "break" => ItemType::Break,
        "continue" => ItemType::Continue,
        "define" => ItemType::Define,
        "else" => ItemType::Else,
        "end" => ItemType::End,
        "if" => ItemType::If,
        "range" => ItemType::Range,
        "nil" => ItemType::Nil,
        "template" => ItemType::Template,
        "with" => ItemType::With,
        _ => return None,
    })
}

const LEFT_DELIM: &str = "{{";
const RIGHT_DELIM: &str = "}}";
const LEFT_COMMENT: &str = "/*";
const RIGHT_COMMENT: &str = "*/";
/// A trim marker and the space next to it (`{{- ` / ` -}}`).
const TRIM_MARKER_LEN: usize = 2;

#[derive(Clone, Copy)]
enum State {
    Text,
    LeftDelim,
    Comment,
    RightDelim,
    InsideAction,
    Space,
    Identifier,
    Field,
    Variable,
    Char,
    Number,
    Quote,
    RawQuote,
}

struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    at_eof: bool,
    paren_depth: usize,
    line: usize,
    start_line: usize,
    items: Vec<Item>,
}

/// Scans `input` into tokens; the last one is `Eof` or `Error`.
pub(crate) fn lex(input: &str) -> Vec<Item> {
    let mut l = Lexer {
        input,
        pos: 0,
        start: 0,
        at_eof: false,
        paren_depth: 0,
        line: 1,
        start_line: 1,
        items: Vec::new(),
    };
    let mut state = Some(State::Text);
    while let Some(s) = state {
        state = l.step(s);
    }
    l.items
}

fn is_space(c: Option<char>) -> bool {
    matches!(c, Some(' ' | '\t' | '\r' | '\n'))
}

/// Go's `isAlphaNumeric`: `_`, letters and digits. Rust's Unicode properties stand in
/// for Go's categories (they differ on a few letter-like numbers, such as Roman
/// numerals, which no template uses in a name).
fn is_alphanumeric(c: Option<char>) -> bool {
    c.is_some_and(|c| c == '_' || c.is_alphanumeric())
}

fn has_left_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(Some(char::from(b[1])))
}

fn has_right_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(Some(char::from(b[0]))) && b[1] == b'-'
}

const SPACE_CHARS: &[char] = &[' ', '\t', '\r', '\n'];

impl Lexer<'_> {
    fn rest(&self) -> &str {
        self.input.get(self.pos..).unwrap_or_default()
    }

    fn next(&mut self) -> Option<char> {
        let Some(c) = self.rest().chars().next() else {
            self.at_eof = true;
            return None;
        };
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn peek(&mut self) -> Option<char> {
        self.rest().chars().next()
    }

    fn backup(&mut self) {
        if !self.at_eof
            && self.pos > 0
            && let Some(c) = self
                .input
                .get(..self.pos)
                .and_then(|s| s.chars().next_back())
        {
            self.pos -= c.len_utf8();
            if c == '\n' {
                self.line -= 1;
            }
        }
    }

    fn slice(&self, from: usize, to: usize) -> &str {
        self.input.get(from..to).unwrap_or_default()
    }

    fn emit(&mut self, typ: ItemType) {
        self.items.push(Item {
            typ,
            pos: self.start,
            val: self.slice(self.start, self.pos).to_string(),
            line: self.start_line,
        });
        self.start = self.pos;
        self.start_line = self.line;
    }

    fn ignore(&mut self) {
        self.line += self.slice(self.start, self.pos).matches('\n').count();
        self.start = self.pos;
        self.start_line = self.line;
    }

    fn accept(&mut self, valid: &str) -> bool {
        if self.next().is_some_and(|c| valid.contains(c)) {
            return true;
        }
        self.backup();
        false
    }

    fn accept_run(&mut self, valid: &str) {
        while self.next().is_some_and(|c| valid.contains(c)) {}
        self.backup();
    }

    fn errorf(&mut self, message: String) -> Option<State> {
        self.items.push(Item {
            typ: ItemType::Error,
            pos: self.start,
            val: message,
            line: self.start_line,
        });
        None
    }

    /// Whether the lexer is at a right delimiter, and whether a trim marker precedes it.
    fn at_right_delim(&self) -> (bool, bool) {
        let rest = self.rest();
        if has_right_trim_marker(rest)
            && rest
                .get(TRIM_MARKER_LEN..)
                .is_some_and(|r| r.starts_with(RIGHT_DELIM))
        {
            return (true, true);
        }
        (rest.starts_with(RIGHT_DELIM), false)
    }

    /// Whether the next character may follow an identifier (`atTerminator`).
    fn at_terminator(&mut self) -> bool {
        let r = self.peek();
        if is_space(r) {
            return true;
        }
        match r {
            None | Some('.' | ',' | '|' | ':' | ')' | '(') => true,
            _ => self.rest().starts_with(RIGHT_DELIM),
        }
    }

    fn step(&mut self, state: State) -> Option<State> {
        match state {
            State::Text => self.lex_text(),
            State::LeftDelim => self.lex_left_delim(),
            State::Comment => self.lex_comment(),
            State::RightDelim => self.lex_right_delim(),
            State::InsideAction => self.lex_inside_action(),
            State::Space => self.lex_space(),
            State::Identifier => self.lex_identifier(),
            State::Field => self.lex_field_or_variable(ItemType::Field),
            State::Variable => self.lex_variable(),
            State::Char => self.lex_quoted(
                '\'',
                "unterminated character constant",
                ItemType::CharConstant,
            ),
            State::Number => self.lex_number(),
            State::Quote => self.lex_quoted('"', "unterminated quoted string", ItemType::String),
            State::RawQuote => self.lex_raw_quote(),
        }
    }

    fn lex_text(&mut self) -> Option<State> {
        if let Some(x) = self.rest().find(LEFT_DELIM) {
            self.pos += x;
            let mut trim = 0;
            if has_left_trim_marker(
                self.input
                    .get(self.pos + LEFT_DELIM.len()..)
                    .unwrap_or_default(),
            ) {
                let text = self.slice(self.start, self.pos);
                trim = text.len() - text.trim_end_matches(SPACE_CHARS).len();
            }
            self.pos -= trim;
            if self.pos > self.start {
                self.line += self.slice(self.start, self.pos).matches('\n').count();
                self.emit(ItemType::Text);
            }
            self.pos += trim;
            self.ignore();
            return Some(State::LeftDelim);
        }
        self.pos = self.input.len();
        if self.pos > self.start {
            self.line += self.slice(self.start, self.pos).matches('\n').count();
            self.emit(ItemType::Text);
        }
        self.emit(ItemType::Eof);
        None
    }

    fn lex_left_delim(&mut self) -> Option<State> {
        self.pos += LEFT_DELIM.len();
        let trim = has_left_trim_marker(self.rest());
        let after_marker = if trim { TRIM_MARKER_LEN } else { 0 };
        if self
            .input
            .get(self.pos + after_marker..)
            .is_some_and(|r| r.starts_with(LEFT_COMMENT))
        {
            self.pos += after_marker;
            self.ignore();
            return Some(State::Comment);
        }
        self.emit(ItemType::LeftDelim);
        self.pos += after_marker;
        self.ignore();
        self.paren_depth = 0;
        Some(State::InsideAction)
    }

    fn lex_comment(&mut self) -> Option<State> {
        self.pos += LEFT_COMMENT.len();
        let Some(i) = self.rest().find(RIGHT_COMMENT) else {
            return self.errorf("unclosed comment".into());
        };
        self.pos += i + RIGHT_COMMENT.len();
        let (delim, trim) = self.at_right_delim();
        if !delim {
            return self.errorf("comment ends before closing delimiter".into());
        }
        // Go 1.23 takes the comment as an item here (`thisItem`) without counting
        // its newlines, so lines after a multi-line comment are numbered that many
        // lower in its parse errors; kubectl shows those numbers.
        self.start = self.pos;
        self.start_line = self.line;
        if trim {
            self.pos += TRIM_MARKER_LEN;
        }
        self.pos += RIGHT_DELIM.len();
        if trim {
            let rest = self.rest();
            self.pos += rest.len() - rest.trim_start_matches(SPACE_CHARS).len();
        }
        self.ignore();
        Some(State::Text)
    }

    fn lex_right_delim(&mut self) -> Option<State> {
        let trim = has_right_trim_marker(self.rest());
        if trim {
            self.pos += TRIM_MARKER_LEN;
            self.ignore();
        }
        self.pos += RIGHT_DELIM.len();
        self.emit(ItemType::RightDelim);
        if trim {
            let rest = self.rest();
            self.pos += rest.len() - rest.trim_start_matches(SPACE_CHARS).len();
            self.ignore();
        }
        Some(State::Text)
    }

    fn lex_inside_action(&mut self) -> Option<State> {
        let (delim, _) = self.at_right_delim();
        if delim {
            if self.paren_depth == 0 {
                return Some(State::RightDelim);
            }
            return self.errorf("unclosed left paren".into());
        }
        let r = self.next();
        match r {
            None => return self.errorf("unclosed action".into()),
            Some(c) if is_space(Some(c)) => {
                self.backup();
                return Some(State::Space);
            }
            Some('=') => self.emit(ItemType::Assign),
            Some(':') => {
                if self.next() != Some('=') {
                    return self.errorf("expected :=".into());
                }
                self.emit(ItemType::Declare);
            }
            Some('|') => self.emit(ItemType::Pipe),
            Some('"') => return Some(State::Quote),
            Some('`') => return Some(State::RawQuote),
            Some('$') => return Some(State::Variable),
            Some('\'') => return Some(State::Char),
            Some('.') => {
                // ".field", unless a digit follows: then '.' starts a number.
                if self
                    .input
                    .as_bytes()
                    .get(self.pos)
                    .is_some_and(|b| !b.is_ascii_digit())
                {
                    return Some(State::Field);
                }
                self.backup();
                return Some(State::Number);
            }
            Some('+' | '-' | '0'..='9') => {
                self.backup();
                return Some(State::Number);
            }
            c if is_alphanumeric(c) => {
                self.backup();
                return Some(State::Identifier);
            }
            Some('(') => {
                self.emit(ItemType::LeftParen);
                self.paren_depth += 1;
            }
            Some(')') => {
                if self.paren_depth == 0 {
                    return self.errorf("unexpected right paren".into());
                }
                self.paren_depth -= 1;
                self.emit(ItemType::RightParen);
            }
            Some(c) if c.is_ascii() && !c.is_ascii_control() => self.emit(ItemType::Char),
            Some(c) => {
                return self.errorf(format!(
                    "unrecognized character in action: {}",
                    go_fmt::sharp_u(c)
                ));
            }
        }
        Some(State::InsideAction)
    }

    fn lex_space(&mut self) -> Option<State> {
        let mut spaces = 0;
        while is_space(self.peek()) {
            self.next();
            spaces += 1;
        }
        // A trim-marked right delimiter starts with a space: leave it to lexRightDelim.
        let before = self.input.get(self.pos - 1..).unwrap_or_default();
        if has_right_trim_marker(before)
            && before
                .get(TRIM_MARKER_LEN..)
                .is_some_and(|r| r.starts_with(RIGHT_DELIM))
        {
            self.backup();
            if spaces == 1 {
                return Some(State::RightDelim);
            }
        }
        self.emit(ItemType::Space);
        Some(State::InsideAction)
    }

    fn lex_identifier(&mut self) -> Option<State> {
        loop {
            let r = self.next();
            if is_alphanumeric(r) {
                continue;
            }
            self.backup();
            let word = self.slice(self.start, self.pos).to_string();
            if !self.at_terminator() {
                return self.errorf(format!("bad character {}", sharp_u_opt(r)));
            }
            let typ = match keyword(&word) {
                Some(k) => k,
                None if word.starts_with('.') => ItemType::Field,
                None if word == "true" || word == "false" => ItemType::Bool,
                None => ItemType::Identifier,
            };
            self.emit(typ);
            return Some(State::InsideAction);
        }
    }

    fn lex_variable(&mut self) -> Option<State> {
        if self.at_terminator() {
            self.emit(ItemType::Variable);
            return Some(State::InsideAction);
        }
        self.lex_field_or_variable(ItemType::Variable)
    }

    fn lex_field_or_variable(&mut self, typ: ItemType) -> Option<State> {
        if self.at_terminator() {
            self.emit(if typ == ItemType::Variable {
                ItemType::Variable
            } else {
                ItemType::Dot
            });
            return Some(State::InsideAction);
        }
        let mut r;
        loop {
            r = self.next();
            if !is_alphanumeric(r) {
                self.backup();
                break;
            }
        }
        if !self.at_terminator() {
            return self.errorf(format!("bad character {}", sharp_u_opt(r)));
        }
        self.emit(typ);
        Some(State::InsideAction)
    }

    /// `lexQuote` and `lexChar`: up to the closing quote; escapes are checked later.
    fn lex_quoted(&mut self, quote: char, unterminated: &str, typ: ItemType) -> Option<State> {
        loop {
            match self.next() {
                Some('\\') => {
                    if matches!(self.next(), None | Some('\n')) {
                        return self.errorf(unterminated.into());
                    }
                }
                None | Some('\n') => return self.errorf(unterminated.into()),
                Some(c) if c == quote => break,
                Some(_) => {}
            }
        }
        self.emit(typ);
        Some(State::InsideAction)
    }

    fn lex_raw_quote(&mut self) -> Option<State> {
        loop {
            match self.next() {
                None => return self.errorf("unterminated raw quoted string".into()),
                Some('`') => break,
                Some(_) => {}
            }
        }
        self.emit(ItemType::RawString);
        Some(State::InsideAction)
    }

    fn lex_number(&mut self) -> Option<State> {
        if !self.scan_number() {
            let text = self.slice(self.start, self.pos).to_string();
            return self.errorf(format!("bad number syntax: {}", go_fmt::quote(&text)));
        }
        if matches!(self.peek(), Some('+' | '-')) {
            // Complex: 1+2i. No spaces, must end in 'i'.
            if !self.scan_number() || !self.slice(self.start, self.pos).ends_with('i') {
                let text = self.slice(self.start, self.pos).to_string();
                return self.errorf(format!("bad number syntax: {}", go_fmt::quote(&text)));
            }
            self.emit(ItemType::Complex);
        } else {
            self.emit(ItemType::Number);
        }
        Some(State::InsideAction)
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 10 + 1 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 16 + 6 + 1 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if is_alphanumeric(self.peek()) {
            self.next();
            return false;
        }
        true
    }
}

/// `%#U` of the rune Go's lexer saw, which is -1 (`U+FFFFFFFFFFFFFFFF`) at the end.
fn sharp_u_opt(r: Option<char>) -> String {
    r.map_or_else(|| "U+FFFFFFFFFFFFFFFF".to_string(), go_fmt::sharp_u)
}
