//! Resource quantity validation (`cpu=100m,memory=256Mi`), following apimachinery's
//! `resource.ParseQuantity` step by step so that the same inputs fail with the same
//! three messages.
//!
//! Hand-written because no maintained crate reproduces Go's parser and its errors;
//! only validation is done here. The value is sent as typed and the API server
//! canonicalises it (`0.1` → `100m`), so a client dry run prints it as given where
//! kubectl would print the canonical form.

/// Why a quantity is invalid. The messages are apimachinery's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// The overall shape is wrong.
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    FormatWrong,
    /// The number before the suffix is not a decimal number.
    #[error("unable to parse numeric part of quantity")]
    Numeric,
    /// The suffix is not a known SI, binary-SI or exponent suffix.
    #[error("unable to parse quantity's suffix")]
    Suffix,
}

/// Checks that `s` is a valid Kubernetes quantity.
pub fn validate_quantity(s: &str) -> Result<(), QuantityError> {
    if s.is_empty() {
        return Err(QuantityError::FormatWrong);
    }
    if s == "0" {
        return Ok(());
    }
    let (value, suffix) = split_quantity(s)?;
    if !valid_suffix(suffix) {
        return Err(QuantityError::Suffix);
    }
    if !valid_decimal(value) {
        return Err(QuantityError::Numeric);
    }
    Ok(())
}

/// Splits into the numeric part and the suffix, as `parseQuantityString` does.
fn split_quantity(s: &str) -> Result<(&str, &str), QuantityError> {
    let b = s.as_bytes();
    let end = b.len();
    let mut pos = 0;
    if matches!(b.first(), Some(b'-' | b'+')) {
        pos += 1;
    }
    // Leading zeros; an all-zero string is the number zero with no suffix.
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(("0", ""));
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        return Ok((s, ""));
    }
    if b[pos] == b'.' {
        pos += 1;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        if pos >= end {
            return Ok((s, ""));
        }
    }
    let value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos >= end {
        return Ok((value, &s[suffix_start..]));
    }
    if matches!(b[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end {
        if !b[pos].is_ascii_digit() {
            // A character that is neither a suffix letter nor an exponent digit.
            return Err(QuantityError::FormatWrong);
        }
        pos += 1;
    }
    Ok((value, &s[suffix_start..]))
}

fn valid_suffix(suffix: &str) -> bool {
    match suffix {
        "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => true,
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => true,
        _ => match suffix.strip_prefix(['e', 'E']) {
            // A decimal exponent: `e3`, `E-2`; Go parses it as an int.
            Some(exp) if !exp.is_empty() => {
                let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
                !digits.is_empty()
                    && digits.bytes().all(|c| c.is_ascii_digit())
                    && exp.parse::<i64>().is_ok()
            }
            _ => false,
        },
    }
}

/// What `inf.Dec.SetString` accepts for the numeric part: sign, digits, optional
/// fraction, at least one digit overall.
fn valid_decimal(value: &str) -> bool {
    let unsigned = value.strip_prefix(['+', '-']).unwrap_or(value);
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    (!int.is_empty() || !frac.is_empty())
        && int.bytes().all(|c| c.is_ascii_digit())
        && frac.bytes().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_quantities() {
        for ok in [
            "0", "1", "100m", "256Mi", "1.5", "1.5Gi", "+1", "-1", ".5", "1.", "1e3", "1E-3", "2k",
            "10n", "000",
        ] {
            assert_eq!(validate_quantity(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn invalid_quantities_fail_like_apimachinery() {
        assert_eq!(validate_quantity(""), Err(QuantityError::FormatWrong));
        assert_eq!(validate_quantity("1x"), Err(QuantityError::FormatWrong));
        assert_eq!(validate_quantity("abc"), Err(QuantityError::FormatWrong));
        assert_eq!(validate_quantity("12Mib"), Err(QuantityError::FormatWrong));
        assert_eq!(validate_quantity("1Mx"), Err(QuantityError::FormatWrong));
        assert_eq!(validate_quantity("1KB"), Err(QuantityError::FormatWrong));
        assert_eq!(validate_quantity("1kk"), Err(QuantityError::Suffix));
        assert_eq!(validate_quantity("1e"), Err(QuantityError::Suffix));
        assert_eq!(validate_quantity("1Ki2"), Err(QuantityError::Suffix));
        assert_eq!(validate_quantity("."), Err(QuantityError::Numeric));
        assert_eq!(
            QuantityError::FormatWrong.to_string(),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        );
    }
}
