//! Go's ways of turning values into text, as kubectl's jsonpath output shows them:
//! `fmt.Print` (`%v`) for scalars, `encoding/json` for maps and lists (sorted keys,
//! HTML-safe escapes, Go's float layout), `%#v` for the debugging dump of a failed
//! template, `%q` and `%#U`. serde_json differs on floats (`1.0` vs Go's `1`) and
//! escapes, so these few rules are written out here.

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

/// Go's `strconv.IsPrint`, close enough: no control or format characters, and the
/// only space allowed is U+0020.
fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    !(c.is_control()
        || c.is_whitespace()
        || matches!(u32::from(c), 0xAD | 0x600..=0x605 | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB))
}

/// `%q` / `strconv.Quote`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if is_print(c) => out.push(c),
            c if u32::from(c) < 0x80 => {
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
    out.push('"');
    out
}

/// Shortest round-trip digits of a finite, non-zero `f`, and its decimal exponent
/// as Go's `strconv` counts it (`dp`: the position of the decimal point).
fn digits(f: f64) -> (String, i32) {
    // Rust's `{:e}` is the shortest representation that round-trips, like Go's.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
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
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (digits, dp) = digits(f);
    let exp = dp - 1;
    if !(-4..6).contains(&exp) {
        exponent_form(f < 0.0, &digits, dp, 2, true)
    } else {
        decimal_form(f < 0.0, &digits, dp)
    }
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

/// A number as Go holds it after kubectl decodes an object: integers as `int64`,
/// everything else as `float64`.
pub fn number_v(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        n.to_string()
    } else {
        float_v(n.as_f64().unwrap_or(0.0))
    }
}

fn json_string(s: &str, out: &mut String) {
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

fn newline(indent: Option<&str>, depth: usize, out: &mut String) {
    if let Some(unit) = indent {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(unit);
        }
    }
}

fn write_json(value: &Value, indent: Option<&str>, depth: usize, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() {
                out.push_str(&n.to_string());
            } else {
                out.push_str(&float_json(n.as_f64().unwrap_or(0.0)));
            }
        }
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
