//! Go's ways of turning values into text, shared by the JSONPath and Go-template
//! printers: `fmt.Print` (`%v`) for scalars, `strconv.FormatFloat` in all its formats,
//! `strconv.Quote` (also over bytes that are not UTF-8, as Go strings may be),
//! `encoding/json` for maps and lists (sorted keys, HTML-safe escapes, Go's float
//! layout), `%#v` for the debugging dump of a failed template, and `%#U`. serde_json
//! and Rust's `{}` differ on floats (`1.0` vs Go's `1`, `1e21` vs `1e+21`) and escapes,
//! so these rules are written out here.

use std::fmt::Write as _;

use serde_json::Value;

/// `%#U`: `U+0021 '!'`, or `U+0009` for a character Go does not print.
pub fn sharp_u(c: char) -> String {
    let code = format!("U+{:04X}", u32::from(c));
    if is_print(c) {
        format!("{code} '{c}'")
    } else {
        code
    }
}

/// Go's `strconv.IsPrint`, close enough: no control, format or private-use
/// characters, and the only space allowed is U+0020. (Go consults the Unicode tables
/// of its release, so unassigned code points differ.)
pub fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    !(c.is_control()
        || c.is_whitespace()
        || matches!(u32::from(c), 0xAD | 0x600..=0x605 | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB | 0xE000..=0xF8FF | 0xF0000..))
}

/// `%q` / `strconv.Quote`.
pub fn quote(s: &str) -> String {
    quote_bytes(s.as_bytes(), false)
}

/// The characters of a Go string: bytes that are not UTF-8 come one by one as
/// `Err(byte)`, as Go's `for range` yields U+FFFD of width 1 for each of them.
pub(crate) fn runes(bytes: &[u8]) -> impl Iterator<Item = Result<char, u8>> + '_ {
    bytes.utf8_chunks().flat_map(|chunk| {
        chunk
            .valid()
            .chars()
            .map(Ok)
            .chain(chunk.invalid().iter().map(|b| Err(*b)))
    })
}

/// Go's `utf8.RuneCount`: characters, counting each stray byte as one.
pub(crate) fn rune_count(bytes: &[u8]) -> usize {
    runes(bytes).count()
}

/// `strconv.Quote` (`ascii_only` = `strconv.QuoteToASCII`) of a Go string, which may
/// hold bytes that are not UTF-8 (they become `\xNN`).
pub(crate) fn quote_bytes(bytes: &[u8], ascii_only: bool) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for r in runes(bytes) {
        match r {
            Ok(c) => escape_rune(c, '"', ascii_only, &mut out),
            Err(b) => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push('"');
    out
}

/// `strconv.QuoteRune` (`ascii_only` = `QuoteRuneToASCII`): `'a'`, `'\n'`.
pub(crate) fn quote_rune(c: char, ascii_only: bool) -> String {
    let mut out = String::from("'");
    escape_rune(c, '\'', ascii_only, &mut out);
    out.push('\'');
    out
}

/// Go's `appendEscapedRune`.
fn escape_rune(c: char, quote: char, ascii_only: bool, out: &mut String) {
    if c == quote || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    if ascii_only {
        if c.is_ascii() && is_print(c) {
            out.push(c);
            return;
        }
    } else if is_print(c) {
        out.push(c);
        return;
    }
    match c {
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\x0c' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x0b' => out.push_str("\\v"),
        c if u32::from(c) < 0x20 || c == '\x7f' => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c if u32::from(c) < 0x10000 => {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        }
        c => {
            let _ = write!(out, "\\U{:08x}", u32::from(c));
        }
    }
}

/// `strconv.CanBackquote`: whether `%#q` may print the string as a raw string (no
/// control characters but tab, no backquote, no BOM, valid UTF-8).
pub(crate) fn can_backquote(bytes: &[u8]) -> bool {
    runes(bytes).all(|r| match r {
        Ok(c) if c.len_utf8() > 1 => c != '\u{feff}',
        Ok(c) => (c >= ' ' || c == '\t') && c != '`' && c != '\x7f',
        Err(_) => false,
    })
}

/// Shortest round-trip digits of a finite, non-zero `f`, and its decimal exponent
/// as Go's `strconv` counts it (`dp`: the position of the decimal point).
fn digits(f: f64) -> (String, i32) {
    // Rust's `{:e}` is the shortest representation that round-trips, like Go's.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    // When the value lies exactly halfway between two shortest candidates, Rust
    // rounds up and Go's `ryuFtoaShortest` to the even one (`1808473927573735.25`:
    // Rust `…735.3`, Go `…735.2`). Only 16 or more digits can tie (shorter decimals
    // are further apart than a float64's spacing), and only an odd last digit differs.
    let last = digits.as_bytes().last().copied().unwrap_or(b'0');
    if digits.len() >= 16 && last % 2 == 1 {
        // The exact value: an f64 has at most 767 significant decimal digits.
        let exact = format!("{:.800e}", f.abs());
        let exact_digits: String = exact
            .split_once('e')
            .map_or("", |(m, _)| m)
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        let mut even = digits.clone();
        even.pop();
        even.push(char::from(last - 1));
        let tie = exact_digits.trim_end_matches('0') == format!("{even}5");
        let reads_back = format!(
            "{}{}e{}",
            &even[..1],
            {
                if even.len() > 1 {
                    format!(".{}", &even[1..])
                } else {
                    String::new()
                }
            },
            exp
        )
        .parse::<f64>()
            == Ok(f.abs());
        if tie && reads_back {
            digits = even;
        }
    }
    (digits, exp + 1)
}

fn exponent_form(neg: bool, digits: &str, dp: i32, min_exp_digits: usize, plus: bool) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let exp = dp - 1;
    out.push('e');
    if exp < 0 {
        out.push('-');
    } else if plus {
        out.push('+');
    }
    let _ = write!(out, "{:0width$}", exp.abs(), width = min_exp_digits);
    out
}

fn decimal_form(neg: bool, digits: &str, dp: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if dp <= 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat(dp.unsigned_abs() as usize));
        out.push_str(digits);
    } else if dp as usize >= digits.len() {
        out.push_str(digits);
        out.push_str(&"0".repeat(dp as usize - digits.len()));
    } else {
        out.push_str(&digits[..dp as usize]);
        out.push('.');
        out.push_str(&digits[dp as usize..]);
    }
    out
}

/// `fmt.Print(f)` (`%v`, i.e. `%g` with the shortest precision): `1`, `2.2`,
/// `1e+06`, `1e-05`.
pub fn float_v(f: f64) -> String {
    format_float(f, b'g', -1)
}

/// `strconv.FormatFloat(f, fmt, prec, 64)`: `fmt` is one of `b e E f g G x X`, and a
/// negative `prec` asks for the fewest digits that read back as `f`.
///
/// The digits come from Rust's formatting, which rounds exactly (ties to even) as
/// Go's `strconv` does; the layout (`e+06`, `%g`'s choice between the two forms, hex
/// and binary exponents) is Go's `formatDigits`, `fmtE`, `fmtF`, `fmtB` and `fmtX`.
pub fn format_float(f: f64, fmt: u8, prec: i32) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let bits = f.to_bits();
    let neg = bits >> 63 != 0;
    let mut exp = ((bits >> 52) & 0x7ff) as i32;
    let mut mant = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        exp += 1;
    } else {
        mant |= 1u64 << 52;
    }
    exp -= 1023;
    match fmt {
        b'b' => {
            let sign = if neg { "-" } else { "" };
            let e = exp - 52;
            let plus = if e >= 0 { "+" } else { "" };
            format!("{sign}{mant}p{plus}{e}")
        }
        b'x' | b'X' => fmt_x(prec, fmt, neg, mant, exp),
        b'e' | b'E' | b'f' | b'g' | b'G' => format_decimal(f.abs(), neg, fmt, prec),
        _ => format!("%{}", fmt as char),
    }
}

fn format_decimal(abs: f64, neg: bool, fmt: u8, prec: i32) -> String {
    let shortest = prec < 0;
    let (digits, dp, prec) = if shortest {
        let (d, dp) = if abs == 0.0 {
            (String::new(), 0)
        } else {
            digits(abs)
        };
        let nd = d.len() as i32;
        let prec = match fmt {
            b'e' | b'E' => (nd - 1).max(0),
            b'f' => (nd - dp).max(0),
            _ => nd,
        };
        (d, dp, prec)
    } else if fmt == b'f' {
        // Go rounds the exact decimal expansion at `prec` places, as Rust does. Rust's
        // formatter panics above 65,535 places (Go allows 1e6); an f64 has at most
        // 1,074 fractional digits, so the places after those are zeros.
        let sign = if neg { "-" } else { "" };
        let places = prec as usize;
        let exact = places.min(1_100);
        let mut out = format!("{sign}{abs:.exact$}");
        out.extend(std::iter::repeat_n('0', places - exact));
        return out;
    } else {
        let mut prec = prec;
        let count = if matches!(fmt, b'e' | b'E') {
            prec + 1
        } else {
            if prec == 0 {
                prec = 1;
            }
            prec
        };
        let (d, dp) = fixed_digits(abs, count as usize);
        (d, dp, prec)
    };
    let digits = digits.as_bytes();
    let nd = digits.len() as i32;
    match fmt {
        b'e' | b'E' => fmt_e(neg, digits, dp, prec, fmt),
        b'f' => fmt_f(neg, digits, dp, prec),
        _ => {
            let mut eprec = prec;
            if eprec > nd && nd >= dp {
                eprec = nd;
            }
            if shortest {
                eprec = 6;
            }
            let exp = dp - 1;
            let mut prec = prec;
            if exp < -4 || exp >= eprec {
                if prec > nd {
                    prec = nd;
                }
                return fmt_e(neg, digits, dp, prec - 1, fmt + b'e' - b'g');
            }
            if prec > dp {
                prec = nd;
            }
            fmt_f(neg, digits, dp, (prec - dp).max(0))
        }
    }
}

/// `count` significant digits of a finite `abs`, correctly rounded, without trailing
/// zeros (as Go's `decimal.Round` leaves them), and the decimal point position.
fn fixed_digits(abs: f64, count: usize) -> (String, i32) {
    if abs == 0.0 {
        return (String::new(), 0);
    }
    // Go allows precisions up to 1e6, Rust's formatter panics above 65,535. An f64's
    // exact decimal expansion has at most 767 significant digits, so rounding at 800
    // gives the same digits (the zeros after them are trimmed below anyway).
    let sci = format!("{:.*e}", count.clamp(1, 800) - 1, abs);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let trimmed = digits.trim_end_matches('0');
    (trimmed.to_string(), exp + 1)
}

/// Go's `fmtE`: `d.ddde±dd`.
fn fmt_e(neg: bool, digits: &[u8], dp: i32, prec: i32, fmt: u8) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push(digits.first().map_or('0', |d| char::from(*d)));
    if prec > 0 {
        out.push('.');
        for i in 1..=prec as usize {
            out.push(digits.get(i).map_or('0', |d| char::from(*d)));
        }
    }
    out.push(char::from(fmt));
    let exp = if digits.is_empty() { 0 } else { dp - 1 };
    out.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(out, "{:02}", exp.abs());
    out
}

/// Go's `fmtF`: `ddd.ddd` with exactly `prec` decimals.
fn fmt_f(neg: bool, digits: &[u8], dp: i32, prec: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if dp > 0 {
        for i in 0..dp as usize {
            out.push(digits.get(i).map_or('0', |d| char::from(*d)));
        }
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        for i in 0..prec {
            let j = dp + i;
            let d = if j >= 0 { digits.get(j as usize) } else { None };
            out.push(d.map_or('0', |d| char::from(*d)));
        }
    }
    out
}

/// Go's `fmtX`: `%x` of a float, `-0x1.23abcp+20`.
fn fmt_x(prec: i32, fmt: u8, neg: bool, mant: u64, exp: i32) -> String {
    let (mut mant, mut exp) = (mant, if mant == 0 { 0 } else { exp });
    // Shift the mantissa so that the leading 1 is at bit 60.
    mant <<= 60 - 52;
    while mant != 0 && mant & (1 << 60) == 0 {
        mant <<= 1;
        exp -= 1;
    }
    // Round if requested.
    if (0..15).contains(&prec) {
        let shift = (prec * 4) as u32;
        let extra = (mant << shift) & ((1 << 60) - 1);
        mant >>= 60 - shift;
        if extra | (mant & 1) > 1 << 59 {
            mant += 1;
        }
        mant <<= 60 - shift;
        if mant & (1 << 61) != 0 {
            mant >>= 1;
            exp += 1;
        }
    }
    let hex: &[u8; 16] = if fmt == b'X' {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push('0');
    out.push(char::from(fmt));
    out.push(char::from(b'0' + ((mant >> 60) & 1) as u8));
    mant <<= 4;
    if prec < 0 && mant != 0 {
        out.push('.');
        while mant != 0 {
            out.push(char::from(hex[((mant >> 60) & 15) as usize]));
            mant <<= 4;
        }
    } else if prec > 0 {
        out.push('.');
        for _ in 0..prec {
            out.push(char::from(hex[((mant >> 60) & 15) as usize]));
            mant <<= 4;
        }
    }
    out.push(if fmt == b'X' { 'P' } else { 'p' });
    out.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(out, "{:02}", exp.abs());
    out
}

/// `encoding/json`'s float: decimal unless the magnitude is below 1e-6 or at
/// least 1e21, then `1e+21` / `1e-7`.
fn float_json(f: f64) -> String {
    if !f.is_finite() {
        return "null".into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let abs = f.abs();
    let (digits, dp) = digits(f);
    if !(1e-6..1e21).contains(&abs) {
        exponent_form(f < 0.0, &digits, dp, 1, true)
    } else {
        decimal_form(f < 0.0, &digits, dp)
    }
}

/// A number as `json.Marshal` writes it from kubectl's object, where an integer
/// beyond int64 is a float64 (`12345678901234567890` → `12345678901234567000`) and
/// `-0` is the integer 0 (seen beside kubectl 1.37: `"neg": 0`).
pub fn json_number(n: &serde_json::Number) -> String {
    if n.is_i64() {
        n.to_string()
    } else if n.as_f64() == Some(0.0) {
        // `-0`: kubectl's objects hold it as the integer 0 (apimachinery decodes
        // JSON numbers that parse as int64 as int64), so it is written `0`.
        "0".into()
    } else {
        float_json(n.as_f64().unwrap_or(0.0))
    }
}

/// A number as Go holds it after kubectl decodes an object: integers as `int64`,
/// everything else as `float64`.
pub fn number_v(n: &serde_json::Number) -> String {
    // An integer beyond int64 is a float64 in kubectl's objects.
    if n.is_i64() {
        n.to_string()
    } else {
        float_v(n.as_f64().unwrap_or(0.0))
    }
}

pub fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `json.Marshal` (compact) when `indent` is `None`, `json.MarshalIndent(v, "",
/// indent)` otherwise.
pub fn json(value: &Value, indent: Option<&str>) -> String {
    let mut out = String::new();
    write_json(value, indent, 0, &mut out);
    out
}

pub fn newline(indent: Option<&str>, depth: usize, out: &mut String) {
    if let Some(unit) = indent {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(unit);
        }
    }
}

pub fn write_json(value: &Value, indent: Option<&str>, depth: usize, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&json_number(n)),
        Value::String(s) => json_string(s, out),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(indent, depth + 1, out);
                write_json(item, indent, depth + 1, out);
            }
            newline(indent, depth, out);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(indent, depth + 1, out);
                json_string(key, out);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                if let Some(v) = map.get(key) {
                    write_json(v, indent, depth + 1, out);
                }
            }
            newline(indent, depth, out);
            out.push('}');
        }
    }
}

/// `%#v` of the `map[string]interface{}` kubectl hands to the jsonpath engine:
/// `map[string]interface {}{"kind":"Pod", …}`, keys sorted as Go's fmt does.
pub fn sharp_v(value: &Value) -> String {
    let mut out = String::new();
    write_sharp_v(value, true, &mut out);
    out
}

fn write_sharp_v(value: &Value, top: bool, out: &mut String) {
    match value {
        Value::Null if top => out.push_str("<nil>"),
        Value::Null => out.push_str("interface {}(nil)"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_v(n)),
        Value::String(s) => out.push_str(&quote(s)),
        Value::Array(items) => {
            out.push_str("[]interface {}{");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_sharp_v(item, false, out);
            }
            out.push('}');
        }
        Value::Object(map) => {
            out.push_str("map[string]interface {}{");
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&quote(key));
                out.push(':');
                if let Some(v) = map.get(key) {
                    write_sharp_v(v, false, out);
                }
            }
            out.push('}');
        }
    }
}

/// `%v` of a decoded JSON value: `map[a:1 b:[x y]]`, strings raw, `<nil>` for null.
pub fn plain_v(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_v(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(plain_v).collect();
            format!("[{}]", inner.join(" "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", map.get(k).map(plain_v).unwrap_or_default()))
                .collect();
            format!("map[{}]", inner.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    /// Found by the `go_template` fuzz target (`printf "%.244444444q…"` reached a float
    /// verb with a precision Rust's formatter refuses); Go prints all the zeros.
    #[test]
    fn precisions_beyond_rusts_formatter_are_zeros_as_in_go() {
        let digits = super::fixed_digits(2.1, 70_000);
        assert_eq!(
            digits,
            (
                "2100000000000000088817841970012523233890533447265625".to_string(),
                1
            )
        );
        assert_eq!(super::fixed_digits(2.1, 3), ("21".to_string(), 1));
        let f = super::format_decimal(0.5, false, b'f', 70_000);
        assert_eq!(f.len(), 70_002);
        assert!(f.starts_with("0.5000") && f.bytes().skip(3).all(|b| b == b'0'));
        assert_eq!(super::format_decimal(0.125, true, b'f', 2), "-0.12");
    }
}
