//! Parsing `-l/--selector` into kube's label [`Selector`], as apimachinery's
//! `labels.Parse` reads it: its lexer (identifiers end at whitespace or one of
//! `=!(),<>`), its parser, and its words, which kubectl prints behind `the provided
//! selector "…" is not valid: ` (`unable to parse requirement: found '!', expected:
//! identifier`, a key or value refused in `field.Invalid`'s form with validation's
//! messages).
//!
//! kube-core provides the selector model and its matching but no parser for the string
//! form. Its model has no `>` and `<` (`gt`, `lt`): those parse and validate as in
//! apimachinery, then are refused, the one difference.

use std::collections::BTreeSet;

use kube::core::{Expression, Selector};

use super::ResourceError;

/// Parses a label selector; an empty string selects everything.
pub fn parse_selector(input: &str) -> Result<Selector, ResourceError> {
    let invalid = |message: String| ResourceError::Selector {
        selector: input.to_string(),
        message,
    };
    let mut parser = Parser {
        items: lex(input),
        position: 0,
    };
    let requirements = parser.parse().map_err(invalid)?;
    Ok(requirements.into_iter().collect())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Error,
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// apimachinery's `Lexer`, run to the end as its parser's `scan` does.
fn lex(input: &str) -> Vec<(Token, String)> {
    let b = input.as_bytes();
    let mut items = Vec::new();
    let mut i = 0;
    loop {
        while i < b.len() && is_whitespace(b[i]) {
            i += 1;
        }
        if i >= b.len() {
            items.push((Token::End, String::new()));
            return items;
        }
        let start = i;
        if is_special(b[i]) {
            // The longest run of special symbols that is a token, growing one at a time.
            let mut last = None;
            while i < b.len() && is_special(b[i]) {
                match keyword(&input[start..=i]) {
                    Some(t) => last = Some((t, i + 1)),
                    None if last.is_some() => break,
                    None => {}
                }
                i += 1;
            }
            match last {
                Some((t, end)) => {
                    i = end;
                    items.push((t, input[start..end].to_string()));
                }
                None => items.push((
                    Token::Error,
                    format!("error expected: keyword found '{}'", &input[start..i]),
                )),
            }
        } else {
            while i < b.len() && !is_special(b[i]) && !is_whitespace(b[i]) {
                i += 1;
            }
            let word = &input[start..i];
            items.push((keyword(word).unwrap_or(Token::Identifier), word.to_string()));
        }
    }
}

/// Whether a token is read as a value (`in` and `notin` are identifiers there).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

/// A requirement's operator, apimachinery's `selection.Operator`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Exists,
    DoesNotExist,
    In,
    NotIn,
    Equals,
    NotEquals,
    GreaterThan,
    LessThan,
}

impl Parser {
    fn lookahead(&self, context: Context) -> (Token, String) {
        let (t, lit) = self.items[self.position.min(self.items.len() - 1)].clone();
        (as_value(t, context), lit)
    }

    fn consume(&mut self, context: Context) -> (Token, String) {
        let item = self.lookahead(context);
        self.position += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Expression>, String> {
        let mut requirements = Vec::new();
        loop {
            let (t, lit) = self.lookahead(Context::Values);
            match t {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, lit) = self.consume(Context::Values);
                    match t {
                        Token::End => return Ok(requirements),
                        Token::Comma => {
                            let (t2, lit2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{lit2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!("found '{lit}', expected: ',' or 'end of string'"));
                        }
                    }
                }
                Token::End => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Expression, String> {
        let (key, op) = self.key_and_operator()?;
        let (op, values) = match op {
            Some(op) => (op, BTreeSet::new()),
            None => {
                let op = self.operator()?;
                let values = match op {
                    Op::In | Op::NotIn => self.values()?,
                    _ => self.exact_value()?,
                };
                (op, values)
            }
        };
        requirement(key, op, values)
    }

    /// The key, and the operator when the key alone says it (`k`, `!k`).
    fn key_and_operator(&mut self) -> Result<(String, Option<Op>), String> {
        let (mut t, mut lit) = self.consume(Context::Values);
        let negated = t == Token::DoesNotExist;
        if negated {
            (t, lit) = self.consume(Context::Values);
        }
        if t != Token::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let problems = label_key(&lit);
        if !problems.is_empty() {
            return Err(invalid("<nil>", &lit, &problems));
        }
        let (next, _) = self.lookahead(Context::Values);
        let alone = matches!(next, Token::End | Token::Comma);
        let op = match (negated, alone) {
            (true, _) => Some(Op::DoesNotExist),
            (false, true) => Some(Op::Exists),
            (false, false) => None,
        };
        Ok((lit, op))
    }

    fn operator(&mut self) -> Result<Op, String> {
        let (t, lit) = self.consume(Context::KeyAndOperator);
        Ok(match t {
            Token::In => Op::In,
            Token::Equals | Token::DoubleEquals => Op::Equals,
            Token::GreaterThan => Op::GreaterThan,
            Token::LessThan => Op::LessThan,
            Token::NotIn => Op::NotIn,
            Token::NotEquals => Op::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    fn values(&mut self) -> Result<BTreeSet<String>, String> {
        let (t, lit) = self.consume(Context::Values);
        if t != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (t, lit) = self.lookahead(Context::Values);
        match t {
            Token::Identifier | Token::Comma => {
                let s = self.identifiers()?;
                if self.consume(Context::Values).0 != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(s)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn identifiers(&mut self) -> Result<BTreeSet<String>, String> {
        let mut s = BTreeSet::new();
        loop {
            let (t, lit) = self.consume(Context::Values);
            match t {
                Token::Identifier => {
                    s.insert(lit);
                    let (t2, lit2) = self.lookahead(Context::Values);
                    match t2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(s),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    // `(,`, `,)` and `,,` each hold an empty value.
                    if s.is_empty() {
                        s.insert(String::new());
                    }
                    let (t2, _) = self.lookahead(Context::Values);
                    if t2 == Token::ClosedPar {
                        s.insert(String::new());
                        return Ok(s);
                    }
                    if t2 == Token::Comma {
                        s.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn exact_value(&mut self) -> Result<BTreeSet<String>, String> {
        let (t, _) = self.lookahead(Context::Values);
        if matches!(t, Token::End | Token::Comma) {
            return Ok(BTreeSet::from([String::new()]));
        }
        let (t, lit) = self.consume(Context::Values);
        if t == Token::Identifier {
            return Ok(BTreeSet::from([lit]));
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

fn as_value(t: Token, context: Context) -> Token {
    match (context, t) {
        (Context::Values, Token::In | Token::NotIn) => Token::Identifier,
        _ => t,
    }
}

/// `NewRequirement`: the values checked for the operator (all problems, as
/// apimachinery's aggregate: one bare, several in brackets).
fn requirement(key: String, op: Op, values: BTreeSet<String>) -> Result<Expression, String> {
    let mut problems = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let path = format!("values[{i}]");
        if matches!(op, Op::GreaterThan | Op::LessThan) {
            if v.parse::<i64>().is_err() {
                problems.push(invalid(
                    &path,
                    v,
                    &["for 'Gt', 'Lt' operators, the value must be an integer".to_string()],
                ));
            }
            continue;
        }
        let value_problems = label_value(v);
        if !value_problems.is_empty() {
            problems.push(invalid(&format!("{path}[{key}]"), v, &value_problems));
        }
    }
    match problems.len() {
        0 => {}
        1 => return Err(problems.remove(0)),
        _ => return Err(format!("[{}]", problems.join(", "))),
    }
    let single = || values.iter().next().cloned().unwrap_or_default();
    Ok(match op {
        Op::Exists => Expression::Exists(key),
        Op::DoesNotExist => Expression::DoesNotExist(key),
        Op::In => Expression::In(key, values),
        Op::NotIn => Expression::NotIn(key, values),
        Op::Equals => Expression::Equal(key, single()),
        Op::NotEquals => Expression::NotEqual(key, single()),
        Op::GreaterThan | Op::LessThan => {
            return Err(format!(
                "the plugins do not support the 'gt' and 'lt' operators (in {key:?})"
            ));
        }
    })
}

/// `field.Invalid(path, value, detail)`'s text.
fn invalid(path: &str, value: &str, problems: &[String]) -> String {
    format!(
        "{path}: Invalid value: {}: {}",
        gotext::go_fmt::quote(value),
        problems.join("; ")
    )
}

const QUALIFIED_NAME: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const DNS_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// apimachinery 1.37's `IsLabelKey` (`api/validate/content`, which `IsQualifiedName`
/// now names), its messages: every problem of the prefix and of the name, the name's
/// pattern checked even when it is empty or too long; a key of more than one `/` is
/// one problem, worded for a label key.
fn label_key(key: &str) -> Vec<String> {
    let parts: Vec<&str> = key.split('/').collect();
    let (prefix, name) = match parts.as_slice() {
        [name] => (None, *name),
        [prefix, name] => (Some(*prefix), *name),
        _ => {
            return vec![format!(
                "a valid label key {QUALIFIED_NAME} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    let mut problems = Vec::new();
    match prefix {
        Some("") => problems.push("prefix part must be non-empty".to_string()),
        // `IsDNS1123Subdomain`: its length and its pattern, each checked.
        Some(p) => {
            if p.len() > 253 {
                problems.push("prefix part must be no more than 253 characters".to_string());
            }
            if !is_dns_subdomain(p) {
                problems.push(format!("prefix part {DNS_SUBDOMAIN}"));
            }
        }
        None => {}
    }
    if name.is_empty() {
        problems.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        problems.push("name part must be no more than 63 characters".to_string());
    }
    if !is_label_token(name) {
        problems.push(format!("name part {QUALIFIED_NAME}"));
    }
    problems
}

/// apimachinery's `IsValidLabelValue`, its messages.
fn label_value(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 63 {
        problems.push("must be no more than 63 characters".to_string());
    }
    if !value.is_empty() && !is_label_token(value) {
        problems.push(LABEL_VALUE.to_string());
    }
    problems
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, whatever the length.
fn is_label_token(s: &str) -> bool {
    s.bytes()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// A lowercase RFC 1123 subdomain: dot-separated labels of `[a-z0-9-]`, each starting
/// and ending alphanumeric.
fn is_dns_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        !label.is_empty()
            && label
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::SelectorExt;
    use std::collections::BTreeMap;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn matches(sel: &str, pairs: &[(&str, &str)]) -> bool {
        parse_selector(sel)
            .expect("valid selector")
            .matches(&labels(pairs))
    }

    #[test]
    fn equality_and_inequality() {
        assert!(matches("app=web", &[("app", "web")]));
        assert!(matches(
            "app==web,tier=fe",
            &[("app", "web"), ("tier", "fe")]
        ));
        assert!(!matches("app=web,tier=fe", &[("app", "web")]));
        assert!(matches("app!=db", &[("app", "web")]));
        assert!(matches("app!=db", &[]));
    }

    #[test]
    fn existence_and_sets() {
        assert!(matches("app", &[("app", "x")]));
        assert!(matches("!app", &[("b", "x")]));
        assert!(matches("env in (prod, staging)", &[("env", "prod")]));
        assert!(!matches("env notin (prod,staging)", &[("env", "prod")]));
        assert!(matches(
            "example.com/team=a, env in (x,y)",
            &[("example.com/team", "a"), ("env", "y")]
        ));
    }

    #[test]
    fn empty_selects_everything() {
        assert!(matches("", &[]));
    }

    /// Each message is what kubectl 1.37 prints after `error: ` for `-l SELECTOR`.
    #[test]
    fn errors_are_apimachinery_s() {
        let qualified = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        let value = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
        for (selector, want) in [
            ("!!bad", "unable to parse requirement: found '!', expected: identifier".to_string()),
            ("a=b=c", "found '=', expected: ',' or 'end of string'".into()),
            (
                "A B",
                "unable to parse requirement: found 'B', expected: in, notin, =, ==, !=, gt, lt".into(),
            ),
            ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'".into()),
            ("x,", "found '', expected: identifier after ','".into()),
            (",x", "found ',', expected: !, identifier, or 'end of string'".into()),
            (
                "a>b",
                "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer".into(),
            ),
            (
                "-bad",
                format!("unable to parse requirement: <nil>: Invalid value: \"-bad\": name part {qualified}"),
            ),
            (
                "a=-b",
                format!("unable to parse requirement: values[0][a]: Invalid value: \"-b\": {value}"),
            ),
            // Seen beside kubectl 1.37: more than one '/' in IsLabelKey's words...
            (
                "a/b/c=x",
                format!("unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a valid label key {qualified} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"),
            ),
            // ...and an empty name fails its pattern too.
            (
                "x/",
                format!("unable to parse requirement: <nil>: Invalid value: \"x/\": name part must be non-empty; name part {qualified}"),
            ),
            (
                "/x",
                "unable to parse requirement: <nil>: Invalid value: \"/x\": prefix part must be non-empty".into(),
            ),
            ("a notin", "unable to parse requirement: found '' expected: '('".into()),
            ("x in a", "unable to parse requirement: found 'a' expected: '('".into()),
        ] {
            let err = parse_selector(selector).expect_err(selector).to_string();
            let want = format!("the provided selector {selector:?} is not valid: {want}");
            assert_eq!(err, want, "for {selector:?}");
        }
    }

    #[test]
    fn bad_selectors_are_errors() {
        for bad in [
            "app=we b",
            "=x",
            "a,,b",
            "env in (a",
            "env like (a)",
            "a=b)",
        ] {
            assert!(parse_selector(bad).is_err(), "{bad} should not parse");
        }
    }
}
