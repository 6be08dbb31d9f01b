//! Go's `strconv.ParseInt`, the parser behind every number flag of kubectl: pflag's
//! `int`, `int32` and `int64` flags (`--grace-period`, `--replicas`, `--hostport`, …)
//! parse with base 0, klog's `-v` with base 10. Its grammar and its words both reach
//! the user: `--replicas=0x10` is 16, `--replicas=08` is refused (a leading `0` is
//! octal), `1_000` is a thousand, and a bad value reads
//! `invalid argument "abc" for "--replicas" flag: strconv.ParseInt: parsing "abc": invalid syntax`.
//!
//! Written here because Rust's `str::parse` has another grammar (no base prefixes, no
//! `_`) and other words (`invalid digit found in string`).

use std::fmt;

/// Why a value is not a number, in `strconv.NumError`'s words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("strconv.ParseInt: parsing {}: {}", gotext::go_fmt::quote(.input), .kind)]
pub struct ParseIntError {
    /// The value as given.
    pub input: String,
    /// Go's `ErrSyntax` or `ErrRange`.
    pub kind: IntErrorKind,
}

/// `strconv.ErrSyntax` or `strconv.ErrRange`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntErrorKind {
    /// Not a number in the grammar of the base.
    Syntax,
    /// A number, but not one of `bits` bits.
    Range,
}

impl fmt::Display for IntErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Syntax => "invalid syntax",
            Self::Range => "value out of range",
        })
    }
}

/// `strconv.ParseInt(input, base, bits)`, for `base` 0 (the prefix decides: `0x`,
/// `0o`, `0b`, a leading `0` for octal, `_` between digits) or 2 to 36, and `bits` 1
/// to 64.
pub fn parse_go_int(input: &str, base: u32, bits: u32) -> Result<i64, ParseIntError> {
    let error = |kind| ParseIntError {
        input: input.to_string(),
        kind,
    };
    let (negative, unsigned) = match input.as_bytes().first() {
        Some(b'+') => (false, &input[1..]),
        Some(b'-') => (true, &input[1..]),
        Some(_) => (false, input),
        None => return Err(error(IntErrorKind::Syntax)),
    };
    let magnitude = parse_go_uint(unsigned, base, bits).map_err(error)?;
    let cutoff = 1u64 << (bits - 1);
    match (negative, magnitude) {
        (false, m) if m >= cutoff => Err(error(IntErrorKind::Range)),
        (true, m) if m > cutoff => Err(error(IntErrorKind::Range)),
        // In range, so the conversions cannot wrap (`-cutoff` is `i64::MIN` at most).
        (false, m) => Ok(m as i64),
        (true, m) => Ok((m as i64).wrapping_neg()),
    }
}

/// `strconv.ParseUint`'s loop: a range error as soon as the digits overflow `bits`,
/// even when a bad character follows, as in Go.
fn parse_go_uint(s: &str, base: u32, bits: u32) -> Result<u64, IntErrorKind> {
    if s.is_empty() {
        return Err(IntErrorKind::Syntax);
    }
    // Only base 0 lets `_` separate digits.
    let base_zero = base == 0;
    let (base, digits) = if base_zero { prefixed(s) } else { (base, s) };
    let max = u64::MAX >> (64 - bits);
    let mut n: u64 = 0;
    let mut underscores = false;
    for c in digits.bytes() {
        let d = match c {
            b'_' if base_zero => {
                underscores = true;
                continue;
            }
            b'0'..=b'9' => u32::from(c - b'0'),
            b'a'..=b'z' | b'A'..=b'Z' => u32::from(c.to_ascii_lowercase() - b'a') + 10,
            _ => return Err(IntErrorKind::Syntax),
        };
        if d >= base {
            return Err(IntErrorKind::Syntax);
        }
        n = n
            .checked_mul(u64::from(base))
            .and_then(|n| n.checked_add(u64::from(d)))
            .filter(|n| *n <= max)
            .ok_or(IntErrorKind::Range)?;
    }
    if underscores && !underscore_ok(s) {
        return Err(IntErrorKind::Syntax);
    }
    Ok(n)
}

/// Base 0's prefixes: `0b`, `0o`, `0x` (with at least one character after them),
/// else a leading `0` for octal, else decimal.
fn prefixed(s: &str) -> (u32, &str) {
    let b = s.as_bytes();
    if b[0] != b'0' {
        return (10, s);
    }
    match b.get(1).map(u8::to_ascii_lowercase) {
        Some(b'b') if b.len() >= 3 => (2, &s[2..]),
        Some(b'o') if b.len() >= 3 => (8, &s[2..]),
        Some(b'x') if b.len() >= 3 => (16, &s[2..]),
        _ => (8, &s[1..]),
    }
}

/// Go's `underscoreOK`: each `_` between two digits (a base prefix counting as one).
fn underscore_ok(s: &str) -> bool {
    let s = s.as_bytes();
    let s = match s.first() {
        Some(b'+' | b'-') => &s[1..],
        _ => s,
    };
    // The last class seen: '^' the start, '0' a digit or prefix, '_', '!' other.
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if s.len() >= 2 && s[0] == b'0' && matches!(s[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = s[1].eq_ignore_ascii_case(&b'x');
    }
    for &c in &s[i..] {
        if c.is_ascii_digit() || hex && c.is_ascii_hexdigit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else if saw == b'_' {
            return false;
        } else {
            saw = b'!';
        }
    }
    saw != b'_'
}

/// The value parser of pflag's `int` and `int64` flags: `strconv.ParseInt(s, 0, 64)`.
pub fn go_int(value: &str) -> Result<i64, ParseIntError> {
    parse_go_int(value, 0, 64)
}

/// The value parser of pflag's `int32` flags: `strconv.ParseInt(s, 0, 32)`.
pub fn go_int32(value: &str) -> Result<i32, ParseIntError> {
    // In range by the 32 bits asked for.
    parse_go_int(value, 0, 32).map(|n| n as i32)
}

/// The value parser of klog's `-v`: `strconv.ParseInt(s, 10, 32)`.
pub fn klog_level(value: &str) -> Result<i32, ParseIntError> {
    parse_go_int(value, 10, 32).map(|n| n as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case is what Go's `strconv.ParseInt(input, 0, bits)` returns.
    #[test]
    fn base_zero_is_gos() {
        for (input, bits, want) in [
            ("0", 64, Ok(0)),
            ("42", 64, Ok(42)),
            ("+42", 64, Ok(42)),
            ("-42", 64, Ok(-42)),
            ("0x1F", 64, Ok(31)),
            ("0X1f", 64, Ok(31)),
            ("0o17", 64, Ok(15)),
            ("017", 64, Ok(15)),
            ("0b101", 64, Ok(5)),
            ("1_000", 64, Ok(1000)),
            ("0x_1f", 64, Ok(31)),
            ("-9223372036854775808", 64, Ok(i64::MIN)),
            ("9223372036854775807", 64, Ok(i64::MAX)),
            ("2147483647", 32, Ok(2147483647)),
            ("-2147483648", 32, Ok(-2147483648)),
            ("", 64, Err(IntErrorKind::Syntax)),
            ("-", 64, Err(IntErrorKind::Syntax)),
            ("abc", 64, Err(IntErrorKind::Syntax)),
            ("08", 64, Err(IntErrorKind::Syntax)),
            ("0x", 64, Err(IntErrorKind::Syntax)),
            ("1.5", 64, Err(IntErrorKind::Syntax)),
            (" 1", 64, Err(IntErrorKind::Syntax)),
            ("1_", 64, Err(IntErrorKind::Syntax)),
            ("_1", 64, Err(IntErrorKind::Syntax)),
            ("1__0", 64, Err(IntErrorKind::Syntax)),
            ("١", 64, Err(IntErrorKind::Syntax)),
            ("9223372036854775808", 64, Err(IntErrorKind::Range)),
            ("-9223372036854775809", 64, Err(IntErrorKind::Range)),
            ("99999999999999999999", 64, Err(IntErrorKind::Range)),
            ("99999999999999999999x", 64, Err(IntErrorKind::Range)),
            ("2147483648", 32, Err(IntErrorKind::Range)),
            ("-2147483649", 32, Err(IntErrorKind::Range)),
        ] {
            let got = parse_go_int(input, 0, bits).map_err(|e| e.kind);
            assert_eq!(got, want, "for {input:?} in {bits} bits");
        }
    }

    #[test]
    fn base_ten_takes_no_prefix_or_underscore() {
        assert_eq!(klog_level("010"), Ok(10));
        for bad in ["0x10", "1_0", "abc"] {
            assert_eq!(
                klog_level(bad).unwrap_err().kind,
                IntErrorKind::Syntax,
                "{bad}"
            );
        }
    }

    /// The words are `NumError`'s, the input quoted by `strconv.Quote`.
    #[test]
    fn messages_are_gos() {
        for (input, want) in [
            ("abc", r#"strconv.ParseInt: parsing "abc": invalid syntax"#),
            ("", r#"strconv.ParseInt: parsing "": invalid syntax"#),
            (
                "99999999999999999999",
                r#"strconv.ParseInt: parsing "99999999999999999999": value out of range"#,
            ),
            ("é\t", r#"strconv.ParseInt: parsing "é\t": invalid syntax"#),
        ] {
            assert_eq!(
                go_int(input).unwrap_err().to_string(),
                want,
                "for {input:?}"
            );
        }
    }
}
