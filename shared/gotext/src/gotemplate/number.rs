//! Number and character constants of templates (`parse.NumberNode`, Go's
//! `strconv.ParseInt`/`ParseUint`/`ParseFloat` with base prefixes and `_`
//! separators, and `strconv.UnquoteChar` for `'x'` and string escapes).
//!
//! A constant records every type it fits, as Go's node does: `1` is an int, a uint and
//! a float; `1.5` only a float; `'a'` all three. Execution picks one by the rules of
//! Go's `idealConstant`.

use super::lex::ItemType;
use crate::go_fmt;

/// A number constant and the types its value fits.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Number {
    pub pos: usize,
    pub text: String,
    pub is_int: bool,
    pub is_uint: bool,
    pub is_float: bool,
    pub is_complex: bool,
    pub int64: i64,
    pub uint64: u64,
    pub float64: f64,
    pub complex: (f64, f64),
}

/// Go's `newNumber`: the error is Go's text (`illegal number syntax: "1x"`).
pub(crate) fn parse(pos: usize, text: &str, typ: ItemType) -> Result<Number, String> {
    let mut n = Number {
        pos,
        text: text.to_string(),
        is_int: false,
        is_uint: false,
        is_float: false,
        is_complex: false,
        int64: 0,
        uint64: 0,
        float64: 0.0,
        complex: (0.0, 0.0),
    };
    match typ {
        ItemType::CharConstant => {
            let quote = text.chars().next().unwrap_or('\'');
            let (value, _, tail) =
                unquote_char(text.get(1..).unwrap_or_default(), quote).ok_or("invalid syntax")?;
            if tail != "'" {
                return Err(format!("malformed character constant: {text}"));
            }
            n.int64 = i64::from(value);
            n.is_int = true;
            n.uint64 = u64::from(value);
            n.is_uint = true;
            n.float64 = f64::from(value);
            n.is_float = true;
            return Ok(n);
        }
        ItemType::Complex => {
            let (re, im) = parse_complex(text).ok_or_else(|| {
                format!(
                    "strconv.ParseFloat: parsing {}: invalid syntax",
                    go_fmt::quote(text)
                )
            })?;
            n.is_complex = true;
            n.complex = (re, im);
            simplify_complex(&mut n);
            return Ok(n);
        }
        _ => {}
    }
    if let Some(imaginary) = text.strip_suffix('i')
        && let Some(f) = parse_float(imaginary)
    {
        n.is_complex = true;
        n.complex = (0.0, f);
        simplify_complex(&mut n);
        return Ok(n);
    }
    let unsigned = parse_uint(text);
    if let Some(u) = unsigned {
        n.is_uint = true;
        n.uint64 = u;
    }
    if let Some(i) = parse_int(text) {
        n.is_int = true;
        n.int64 = i;
        if i == 0 {
            // "-0" is an unsigned zero too.
            n.is_uint = true;
            n.uint64 = unsigned.unwrap_or(0);
        }
    }
    if n.is_int {
        n.is_float = true;
        n.float64 = n.int64 as f64;
    } else if n.is_uint {
        n.is_float = true;
        n.float64 = n.uint64 as f64;
    } else if let Some(f) = parse_float(text) {
        if !text.contains(['.', 'e', 'E', 'p', 'P']) {
            return Err(format!("integer overflow: {}", go_fmt::quote(text)));
        }
        n.is_float = true;
        n.float64 = f;
        if (f as i64) as f64 == f {
            n.is_int = true;
            n.int64 = f as i64;
        }
        if (f as u64) as f64 == f {
            n.is_uint = true;
            n.uint64 = f as u64;
        }
    }
    if !n.is_int && !n.is_uint && !n.is_float {
        return Err(format!("illegal number syntax: {}", go_fmt::quote(text)));
    }
    Ok(n)
}

fn simplify_complex(n: &mut Number) {
    let (re, im) = n.complex;
    n.is_float = im == 0.0;
    if n.is_float {
        n.float64 = re;
        n.is_int = (re as i64) as f64 == re;
        if n.is_int {
            n.int64 = re as i64;
        }
        n.is_uint = (re as u64) as f64 == re;
        if n.is_uint {
            n.uint64 = re as u64;
        }
    }
}

/// `fmt.Sscan` of a complex constant as the lexer delimits it: `1+2i`, `-1.5e3-2i`.
fn parse_complex(text: &str) -> Option<(f64, f64)> {
    let imaginary = text.strip_suffix('i')?;
    let bytes = imaginary.as_bytes();
    // The sign that separates the parts: not the leading one, not an exponent's.
    let split = (1..bytes.len()).rev().find(|&i| {
        matches!(bytes[i], b'+' | b'-') && !matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P')
    })?;
    Some((
        parse_float(&imaginary[..split])?,
        parse_float(&imaginary[split..])?,
    ))
}

/// Go's `underscoreOK`: `_` only between digits, or after a base prefix.
fn underscore_ok(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let b = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || hex && c.is_ascii_hexdigit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// `strconv.ParseUint(s, 0, 64)`: `0x`, `0o`, `0b` and leading-`0` octal prefixes.
fn parse_uint(s: &str) -> Option<u64> {
    if s.is_empty() || s.contains('_') && !underscore_ok(s) {
        return None;
    }
    let lower = s.to_ascii_lowercase();
    let (digits, radix) = if let Some(rest) = lower.strip_prefix("0x") {
        (rest, 16)
    } else if let Some(rest) = lower.strip_prefix("0o") {
        (rest, 8)
    } else if let Some(rest) = lower.strip_prefix("0b") {
        (rest, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (&lower[1..], 8)
    } else {
        (lower.as_str(), 10)
    };
    let digits: String = digits.chars().filter(|c| *c != '_').collect();
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    u64::from_str_radix(&digits, radix).ok()
}

/// `strconv.ParseInt(s, 0, 64)`.
fn parse_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let u = parse_uint(body)?;
    if neg {
        if u > 1 << 63 {
            return None;
        }
        Some((u as i64).wrapping_neg())
    } else {
        i64::try_from(u).ok()
    }
}

/// `strconv.ParseFloat(s, 64)` for the forms the lexer lets through: decimal with
/// optional exponent, hexadecimal with a `p` exponent, `_` separators. Out-of-range
/// values are errors, as in Go.
pub fn parse_float(s: &str) -> Option<f64> {
    if s.contains('_') && !underscore_ok(s) {
        return None;
    }
    let clean: String = s.chars().filter(|c| *c != '_').collect();
    let (neg, body) = match clean.as_bytes().first() {
        Some(b'-') => (true, &clean[1..]),
        Some(b'+') => (false, &clean[1..]),
        _ => (false, clean.as_str()),
    };
    let value = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        parse_hex_float(hex)?
    } else {
        if body.is_empty()
            || !body
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            return None;
        }
        body.parse::<f64>().ok()?
    };
    if value.is_infinite() {
        return None;
    }
    Some(if neg { -value } else { value })
}

/// The part of a hexadecimal float after `0x`: `1.8p3`. Go requires the `p` exponent.
fn parse_hex_float(s: &str) -> Option<f64> {
    let (mantissa, exp) = s.split_once(['p', 'P'])?;
    let exp: i32 = exp.parse().ok()?;
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut value = 0f64;
    for c in int_part.chars().chain(frac_part.chars()) {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let shift = exp - 4 * i32::try_from(frac_part.len()).ok()?;
    Some(value * 2f64.powi(shift))
}

/// `strconv.UnquoteChar`: the first character or escape of `s` in a literal quoted
/// with `quote`, whether it is a multi-byte character (as opposed to a byte from
/// `\x` or octal), and the rest of `s`. `None` is Go's `ErrSyntax`.
pub(crate) fn unquote_char(s: &str, quote: char) -> Option<(u32, bool, &str)> {
    let mut chars = s.chars();
    let c = chars.next()?;
    if c == quote && (quote == '\'' || quote == '"') {
        return None;
    }
    if !c.is_ascii() {
        return Some((u32::from(c), true, chars.as_str()));
    }
    if c != '\\' {
        return Some((u32::from(c), false, chars.as_str()));
    }
    let escape = chars.next()?;
    let rest = chars.as_str();
    let simple = |v: char| Some((u32::from(v), false, rest));
    match escape {
        'a' => simple('\x07'),
        'b' => simple('\x08'),
        'f' => simple('\x0c'),
        'n' => simple('\n'),
        'r' => simple('\r'),
        't' => simple('\t'),
        'v' => simple('\x0b'),
        'x' | 'u' | 'U' => {
            let n = match escape {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            let digits = rest.get(..n)?;
            if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let v = u32::from_str_radix(digits, 16).ok()?;
            let tail = &rest[n..];
            if escape == 'x' {
                return Some((v, false, tail));
            }
            char::from_u32(v)?;
            Some((v, true, tail))
        }
        '0'..='7' => {
            let digits = rest.get(..2)?;
            let mut v = escape.to_digit(8)?;
            for d in digits.chars() {
                v = (v << 3) | d.to_digit(8)?;
            }
            if v > 255 {
                return None;
            }
            Some((v, false, &rest[2..]))
        }
        '\\' => simple('\\'),
        '\'' | '"' if escape == quote => simple(escape),
        _ => None,
    }
}
