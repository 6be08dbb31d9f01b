//! Go's `time.ParseDuration` syntax, which kubectl uses for `--request-timeout`,
//! `--timeout`, `--pod-running-timeout` and friends.
//!
//! Written by hand because the crates that parse durations (humantime and others)
//! accept a different grammar (`1min`, spaces) and reject Go's (`1.5h`, `1h30m5s`
//! are fine there, but `µs` and bare `0` are not uniformly handled); users copy these
//! values from kubectl invocations, so the grammar must be Go's exactly.

use std::time::Duration;

/// Parses a Go duration (`300ms`, `1.5h`, `2h45m`, `0`). kubectl's `--request-timeout`
/// also accepts a bare integer as seconds; pass `bare_seconds = true` for that.
pub fn parse_go_duration(input: &str, bare_seconds: bool) -> Result<Duration, String> {
    let s = input.trim();
    if s.is_empty() {
        return Err("time: invalid duration \"\"".into());
    }
    if bare_seconds && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<u64>()
            .map(Duration::from_secs)
            .map_err(|e| format!("invalid duration {input:?}: {e}"));
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.starts_with('-') {
        // Not a Go duration at all: Go's words (`time: invalid duration "-x"`).
        parse_go_duration_signed(input)?;
        return Err(format!(
            "invalid duration {input:?}: negative durations are not allowed"
        ));
    }
    magnitude(s.strip_prefix('+').unwrap_or(s), input)
}

/// The clap value parser of every non-negative Go duration flag (`--timeout=5m`,
/// `--pod-running-timeout`, `--update-period`): a bad value is refused while parsing,
/// as pflag refuses a bad `time.Duration`, so the message has pflag's shape
/// (`invalid argument "5x" for "--timeout" flag: time: unknown unit …`).
pub fn go_duration(value: &str) -> Result<Duration, String> {
    parse_go_duration(value, false)
}

/// Go's `time.ParseDuration` itself, sign included (`-1s` is a valid `--timeout`):
/// `(negative, magnitude)`. Errors are Go's, quoting the input as typed.
pub fn parse_go_duration_signed(input: &str) -> Result<(bool, Duration), String> {
    let s = input.trim();
    let (negative, body) = match s.strip_prefix('-') {
        Some(body) => (true, body),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if body == "0" {
        return Ok((negative, Duration::ZERO));
    }
    if body.is_empty() {
        return Err(format!("time: invalid duration {}", time_quote(input)));
    }
    magnitude(body, input).map(|d| (negative, d))
}

/// The unsigned part of a Go duration; `input` is what messages quote.
fn magnitude(s: &str, input: &str) -> Result<Duration, String> {
    let bad = || format!("time: invalid duration {}", time_quote(input));
    let mut rest = s;
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("time: missing unit in duration {}", time_quote(input)))?;
        if num_len == 0 {
            return Err(bad());
        }
        let value: f64 = rest[..num_len].parse().map_err(|_| bad())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let nanos_per_unit = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            unit => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    time_quote(unit),
                    time_quote(input)
                ));
            }
        };
        total += value * nanos_per_unit;
        rest = &rest[unit_len..];
    }
    if !total.is_finite() || total > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(Duration::from_nanos(total.round() as u64))
}

/// The `quote` of Go's `time` package in its errors: bytes outside printable ASCII as
/// `\xNN`, `"` and `\\` escaped (not `strconv.Quote`: `"\xc3\xbc"` for `ü`).
fn time_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(char::from(b));
            }
            b' '..=0x7f => out.push(char::from(b)),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        let ok = |s: &str| parse_go_duration(s, false).unwrap();
        assert_eq!(ok("0"), Duration::ZERO);
        assert_eq!(ok("300ms"), Duration::from_millis(300));
        assert_eq!(ok("1.5h"), Duration::from_secs(5400));
        assert_eq!(ok("2h45m"), Duration::from_secs(9900));
        assert_eq!(ok("1m30s"), Duration::from_secs(90));
        assert_eq!(ok("10us"), Duration::from_micros(10));
        assert_eq!(ok("5m0s"), Duration::from_secs(300));
    }

    #[test]
    fn bare_seconds_only_when_asked() {
        assert_eq!(
            parse_go_duration("30", true).unwrap(),
            Duration::from_secs(30)
        );
        assert_eq!(
            parse_go_duration("30", false).unwrap_err(),
            "time: missing unit in duration \"30\""
        );
    }

    #[test]
    fn signed_durations_are_gos() {
        assert_eq!(
            parse_go_duration_signed("-1s"),
            Ok((true, Duration::from_secs(1)))
        );
        assert_eq!(parse_go_duration_signed("0s"), Ok((false, Duration::ZERO)));
        assert_eq!(parse_go_duration_signed("-0"), Ok((true, Duration::ZERO)));
        assert_eq!(
            parse_go_duration_signed("+1m30s"),
            Ok((false, Duration::from_secs(90)))
        );
        // Go's messages, quoting the input with its sign.
        assert_eq!(
            parse_go_duration_signed("abc"),
            Err("time: invalid duration \"abc\"".into())
        );
        assert_eq!(
            parse_go_duration_signed("-5"),
            Err("time: missing unit in duration \"-5\"".into())
        );
        assert_eq!(
            parse_go_duration_signed("-"),
            Err("time: invalid duration \"-\"".into())
        );
    }

    #[test]
    fn rejects_garbage() {
        for s in ["", "abc", "5x", "-1s", "1..2s", "s"] {
            assert!(
                parse_go_duration(s, false).is_err(),
                "{s} should be rejected"
            );
        }
    }
}
