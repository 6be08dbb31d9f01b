//! JSON syntax errors in kubectl's words: Go's `encoding/json` scanner messages
//! (`invalid character 'x' looking for beginning of value`) behind apimachinery's
//! `json: offset N: ` (N counts the bytes read, the bad one included), or
//! `unexpected EOF` when the stream ends inside a value.
//!
//! serde_json parses; this scanner only runs once serde_json has refused a value, to
//! say why in Go's words. No crate reproduces Go's scanner messages, hence this port of
//! the states of `encoding/json/scanner.go` that can fail.

/// Where and why the value starting at `start` is not JSON, as kubectl says it; `None`
/// when Go's scanner would accept it (the caller keeps serde_json's message then).
pub(super) fn go_syntax_error(text: &str, start: usize) -> Option<String> {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: start,
        depth: 0,
    };
    s.skip_space();
    match s.value() {
        Ok(()) => None,
        Err(Failure::Eof) => Some("unexpected EOF".to_string()),
        Err(Failure::At(i, context)) => {
            let c = text.get(i..).and_then(|r| r.chars().next());
            let c = c.unwrap_or('\u{fffd}');
            Some(format!(
                "json: offset {}: invalid character {} {context}",
                i + 1,
                quote_char(c)
            ))
        }
        Err(Failure::Deep) => None,
    }
}

enum Failure {
    Eof,
    At(usize, &'static str),
    Deep,
}

/// Go's `quoteChar`: `'\''`, `'"'`, otherwise `strconv.Quote` in single quotes.
fn quote_char(c: char) -> String {
    match c {
        '\'' => "'\\''".into(),
        '"' => "'\"'".into(),
        '\n' => "'\\n'".into(),
        '\r' => "'\\r'".into(),
        '\t' => "'\\t'".into(),
        c if c.is_control() => format!("'\\x{:02x}'", c as u32),
        c => format!("'{c}'"),
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Result<u8, Failure> {
        self.b.get(self.i).copied().ok_or(Failure::Eof)
    }

    fn skip_space(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    fn fail<T>(&self, context: &'static str) -> Result<T, Failure> {
        Err(Failure::At(self.i, context))
    }

    fn value(&mut self) -> Result<(), Failure> {
        match self.peek()? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.fail("looking for beginning of value"),
        }
    }

    fn nest(&mut self) -> Result<(), Failure> {
        self.depth += 1;
        // Deeper than serde_json goes: its own message stands.
        if self.depth > 10_000 {
            return Err(Failure::Deep);
        }
        Ok(())
    }

    fn object(&mut self) -> Result<(), Failure> {
        self.nest()?;
        self.i += 1;
        self.skip_space();
        if self.peek()? == b'}' {
            self.i += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            if self.peek()? != b'"' {
                return self.fail("looking for beginning of object key string");
            }
            self.string()?;
            self.skip_space();
            if self.peek()? != b':' {
                return self.fail("after object key");
            }
            self.i += 1;
            self.skip_space();
            self.value()?;
            self.skip_space();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.skip_space();
                }
                b'}' => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return self.fail("after object key:value pair"),
            }
        }
    }

    fn array(&mut self) -> Result<(), Failure> {
        self.nest()?;
        self.i += 1;
        self.skip_space();
        if self.peek()? == b']' {
            self.i += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            self.value()?;
            self.skip_space();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.skip_space();
                }
                b']' => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return self.fail("after array element"),
            }
        }
    }

    fn string(&mut self) -> Result<(), Failure> {
        self.i += 1;
        loop {
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.i += 1;
                    match self.peek()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 1,
                        b'u' => {
                            self.i += 1;
                            for _ in 0..4 {
                                if !self.peek()?.is_ascii_hexdigit() {
                                    return self.fail("in \\u hexadecimal character escape");
                                }
                                self.i += 1;
                            }
                        }
                        _ => return self.fail("in string escape code"),
                    }
                }
                c if c < 0x20 => return self.fail("in string literal"),
                _ => self.i += 1,
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<(), Failure> {
        if self.peek()? == b'-' {
            self.i += 1;
            if !self.peek()?.is_ascii_digit() {
                return self.fail("in numeric literal");
            }
        }
        if self.peek()? == b'0' {
            self.i += 1;
        } else {
            self.digits();
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if !self.peek()?.is_ascii_digit() {
                return self.fail("after decimal point in numeric literal");
            }
            self.digits();
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek()?, b'+' | b'-') {
                self.i += 1;
            }
            if !self.peek()?.is_ascii_digit() {
                return self.fail("in exponent of numeric literal");
            }
            self.digits();
        }
        Ok(())
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<(), Failure> {
        self.i += 1;
        for &expected in &word[1..] {
            if self.peek()? != expected {
                let context = match (word[0], expected) {
                    (b't', b'r') => "in literal true (expecting 'r')",
                    (b't', b'u') => "in literal true (expecting 'u')",
                    (b't', _) => "in literal true (expecting 'e')",
                    (b'f', b'a') => "in literal false (expecting 'a')",
                    (b'f', b'l') => "in literal false (expecting 'l')",
                    (b'f', b's') => "in literal false (expecting 's')",
                    (b'f', _) => "in literal false (expecting 'e')",
                    (_, b'u') => "in literal null (expecting 'u')",
                    _ => "in literal null (expecting 'l')",
                };
                return self.fail(context);
            }
            self.i += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::go_syntax_error;

    /// Each message and offset as kubectl 1.32 printed it for the same text.
    #[test]
    fn go_scanner_messages() {
        let obj =
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j2"},"data":{"a":"1"}}"#;
        let text = format!("{obj} xyz\n");
        assert_eq!(
            go_syntax_error(&text, obj.len()).as_deref(),
            Some("json: offset 82: invalid character 'x' looking for beginning of value")
        );
        let text = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\n\"metadata\":{\"name\":\"j3\"},,\"data\":{\"a\":\"1\"}}\n";
        assert_eq!(
            go_syntax_error(text, 0).as_deref(),
            Some(
                "json: offset 65: invalid character ',' looking for beginning of object key string"
            )
        );
        let text =
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j8"},"data":{"a":tru}}"#;
        assert_eq!(
            go_syntax_error(text, 0).as_deref(),
            Some("json: offset 79: invalid character '}' in literal true (expecting 'e')")
        );
        let text =
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j9"},"data":{"a":"\q"}}"#;
        assert_eq!(
            go_syntax_error(text, 0).as_deref(),
            Some("json: offset 78: invalid character 'q' in string escape code")
        );
        assert_eq!(
            go_syntax_error(r#"{"a":"b""#, 0).as_deref(),
            Some("unexpected EOF")
        );
        assert_eq!(
            go_syntax_error("{apiVersion: v1}", 0).as_deref(),
            Some(
                "json: offset 2: invalid character 'a' looking for beginning of object key string"
            )
        );
        assert_eq!(go_syntax_error(r#"{"a": [1, 2.5e3, null]}"#, 0), None);
    }
}
