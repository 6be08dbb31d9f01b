//! Resource quantities (`cpu=100m,memory=256Mi`): apimachinery's
//! `resource.ParseQuantity` step by step, so that the same inputs fail with the same
//! three messages, and its `String()`, so that a client dry run prints what kubectl
//! prints (`0.1` → `100m`, `1.5Gi` → `1536Mi`, `2000` → `2k`).
//!
//! Hand-written because no maintained crate reproduces Go's parser, its errors and its
//! canonical form (including its quirk of echoing an input that is already in
//! "canonical enough" form verbatim, `+1k` and `01Gi` included). Values are held as
//! a `u128` mantissa and a power of ten; the few inputs beyond that (more than 38
//! digits, exponents past the SI suffixes) keep the text as typed, which the API
//! server canonicalises on create.

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

/// Every quantity of a pod spec (as JSON) in canonical form, as decoding it into
/// kubectl's typed Pod and printing it does: container resources and divisors
/// (all three container lists), the pod's overhead and resources, and the volumes'
/// `emptyDir.sizeLimit`, divisors and ephemeral claim resources. An invalid one
/// fails with apimachinery's message, as kubectl's decoding does.
pub fn canonicalize_pod_spec(spec: &mut serde_json::Value) -> Result<(), QuantityError> {
    use serde_json::Value;
    fn one(v: &mut Value) -> Result<(), QuantityError> {
        if let Value::String(s) = v {
            *s = canonical_quantity(s)?;
        }
        Ok(())
    }
    fn map(v: Option<&mut Value>) -> Result<(), QuantityError> {
        if let Some(Value::Object(m)) = v {
            m.values_mut().try_for_each(one)?;
        }
        Ok(())
    }
    fn resources(v: Option<&mut Value>) -> Result<(), QuantityError> {
        if let Some(r) = v {
            map(r.get_mut("limits"))?;
            map(r.get_mut("requests"))?;
        }
        Ok(())
    }
    fn each(v: Option<&mut Value>) -> impl Iterator<Item = &mut Value> {
        v.and_then(Value::as_array_mut).into_iter().flatten()
    }
    fn divisors(items: Option<&mut Value>) -> Result<(), QuantityError> {
        for item in each(items) {
            if let Some(d) = item.pointer_mut("/resourceFieldRef/divisor") {
                one(d)?;
            }
        }
        Ok(())
    }
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        for c in each(spec.get_mut(list)) {
            resources(c.get_mut("resources"))?;
            for env in each(c.get_mut("env")) {
                if let Some(d) = env.pointer_mut("/valueFrom/resourceFieldRef/divisor") {
                    one(d)?;
                }
            }
        }
    }
    map(spec.get_mut("overhead"))?;
    resources(spec.get_mut("resources"))?;
    for volume in each(spec.get_mut("volumes")) {
        if let Some(limit) = volume.pointer_mut("/emptyDir/sizeLimit") {
            one(limit)?;
        }
        divisors(volume.pointer_mut("/downwardAPI/items"))?;
        for source in each(volume.pointer_mut("/projected/sources")) {
            divisors(source.pointer_mut("/downwardAPI/items"))?;
        }
        resources(volume.pointer_mut("/ephemeral/volumeClaimTemplate/spec/resources"))?;
    }
    Ok(())
}

/// How a quantity is written, from its suffix (apimachinery's `Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `k`, `M`, `m`, … or no suffix.
    DecimalSi,
    /// `Ki`, `Mi`, …
    BinarySi,
    /// `e3`, `E-2`.
    DecimalExponent,
}

/// The quantity as `Quantity.String()` shows it once parsed: validated like
/// [`validate_quantity`], then in canonical form.
pub fn canonical_quantity(s: &str) -> Result<String, QuantityError> {
    validate_quantity(s)?;
    if s == "0" {
        return Ok(s.to_string());
    }
    let parts = Parts::of(s)?;
    if parts.kept_as_typed() {
        return Ok(s.to_string());
    }
    Ok(parts.canonical().unwrap_or_else(|| s.to_string()))
}

/// A valid quantity taken apart as `parseQuantityString` does.
struct Parts<'a> {
    negative: bool,
    /// Integer digits without leading zeros (`"0"` when there are none).
    num: &'a str,
    /// Fraction digits.
    denom: &'a str,
    format: Format,
    /// The suffix's power: of ten for the decimal formats, of two for binary.
    exponent: i32,
}

impl<'a> Parts<'a> {
    fn of(s: &'a str) -> Result<Self, QuantityError> {
        let (value, suffix) = split_quantity(s)?;
        let negative = value.starts_with('-');
        let unsigned = value.strip_prefix(['+', '-']).unwrap_or(value);
        let (int, denom) = unsigned.split_once('.').unwrap_or((unsigned, ""));
        let int = int.trim_start_matches('0');
        let num = if int.is_empty() { "0" } else { int };
        let (format, exponent) = match suffix {
            "" => (Format::DecimalSi, 0),
            "n" => (Format::DecimalSi, -9),
            "u" => (Format::DecimalSi, -6),
            "m" => (Format::DecimalSi, -3),
            "k" => (Format::DecimalSi, 3),
            "M" => (Format::DecimalSi, 6),
            "G" => (Format::DecimalSi, 9),
            "T" => (Format::DecimalSi, 12),
            "P" => (Format::DecimalSi, 15),
            "E" => (Format::DecimalSi, 18),
            "Ki" => (Format::BinarySi, 10),
            "Mi" => (Format::BinarySi, 20),
            "Gi" => (Format::BinarySi, 30),
            "Ti" => (Format::BinarySi, 40),
            "Pi" => (Format::BinarySi, 50),
            "Ei" => (Format::BinarySi, 60),
            exp => (
                Format::DecimalExponent,
                exp[1..].parse::<i32>().map_err(|_| QuantityError::Suffix)?,
            ),
        };
        Ok(Self {
            negative,
            num,
            denom,
            format,
            exponent,
        })
    }

    /// `ParseQuantity`'s fast path keeps the input string when it is already in a
    /// form `String()` would print the same way (to its authors' minds): this is
    /// that test, quirks included.
    fn kept_as_typed(&self) -> bool {
        let digits = self.num.len() + self.denom.len();
        let shifted = || format!("{}{}", self.num, self.denom);
        match self.format {
            Format::DecimalSi | Format::DecimalExponent => {
                let precision = 18 - digits as i64;
                let scale = i64::from(self.exponent) - self.denom.len() as i64;
                let shifted = shifted();
                precision >= 0
                    && scale >= -9
                    && scale % 3 == 0
                    && !shifted.ends_with("000")
                    && !shifted.starts_with('0')
            }
            Format::BinarySi => {
                if !self.denom.is_empty() {
                    return false;
                }
                // Go computes this in float32 and truncates.
                let precision =
                    15 - self.num.len() as i64 - (self.exponent as f32 * 3.0 / 10.0) as i64 - 1;
                let Ok(value) = self.num.parse::<i64>() else {
                    return false;
                };
                precision >= 0
                    && value.checked_mul(1i64 << self.exponent).is_some()
                    && self.exponent % 10 == 0
                    && value & 0x07 != 0
            }
        }
    }

    /// `CanonicalizeBytes`; `None` when the value does not fit this representation.
    fn canonical(&self) -> Option<String> {
        // value = mantissa × 10^exp10
        let mut mantissa: u128 = format!("{}{}", self.num, self.denom).parse().ok()?;
        let mut exp10 = -i64::try_from(self.denom.len()).ok()?;
        match self.format {
            Format::BinarySi => mantissa = mantissa.checked_mul(1u128 << self.exponent)?,
            _ => exp10 += i64::from(self.exponent),
        }
        // Non-zero values are rounded up to a whole number of nanos ("if you want some
        // resources, you should get some").
        if exp10 < -9 {
            let shift = u32::try_from(-9 - exp10).ok()?;
            mantissa = match 10u128.checked_pow(shift) {
                Some(div) => mantissa.div_ceil(div),
                None => u128::from(mantissa != 0),
            };
            exp10 = -9;
        }
        if mantissa == 0 {
            return Some("0".to_string());
        }
        let sign = if self.negative { "-" } else { "" };
        let mut format = self.format;
        if format == Format::BinarySi {
            // Whole numbers of at least 1024 in powers of 1024; anything else in SI.
            let whole = if exp10 >= 0 {
                10u128
                    .checked_pow(u32::try_from(exp10).ok()?)
                    .and_then(|p| mantissa.checked_mul(p))
            } else {
                let div = 10u128.checked_pow(u32::try_from(-exp10).ok()?)?;
                mantissa.is_multiple_of(div).then(|| mantissa / div)
            };
            match whole {
                // ParseQuantity caps binary quantities at the largest int64.
                Some(v) if v >= 1024 && v <= i64::MAX as u128 => {
                    let (mut v, mut power) = (v, 0usize);
                    while v.is_multiple_of(1024) {
                        v /= 1024;
                        power += 1;
                    }
                    let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"].get(power)?;
                    return Some(format!("{sign}{v}{suffix}"));
                }
                _ => format = Format::DecimalSi,
            }
        }
        while mantissa.is_multiple_of(10) {
            mantissa /= 10;
            exp10 += 1;
        }
        match exp10.rem_euclid(3) {
            1 => {
                mantissa = mantissa.checked_mul(10)?;
                exp10 -= 1;
            }
            2 => {
                mantissa = mantissa.checked_mul(100)?;
                exp10 -= 2;
            }
            _ => {}
        }
        let suffix = match format {
            Format::DecimalExponent if exp10 == 0 => String::new(),
            Format::DecimalExponent => format!("e{exp10}"),
            _ => match exp10 {
                -9 => "n",
                -6 => "u",
                -3 => "m",
                0 => "",
                3 => "k",
                6 => "M",
                9 => "G",
                12 => "T",
                15 => "P",
                18 => "E",
                _ => return None,
            }
            .to_string(),
        };
        Some(format!("{sign}{mantissa}{suffix}"))
    }
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
    fn inputs_already_canonical_enough_are_echoed_as_go_does() {
        // ParseQuantity's fast path keeps the string: sign and leading zeros stay.
        for kept in [
            "1k", "+1k", "01k", "1.", "1500m", "100Mi", "+1Gi", "01Gi", "2Gi", "1e3", "10", "256Mi",
        ] {
            assert_eq!(canonical_quantity(kept).as_deref(), Ok(kept), "{kept}");
        }
        assert_eq!(canonical_quantity("1x"), Err(QuantityError::FormatWrong));
    }

    /// Every pair as kubectl 1.32 printed it (`kubectl run x --image=nginx
    /// --dry-run=client --overrides=…` with the quantity as a CPU limit, then
    /// `-o jsonpath='{.spec.containers[0].resources.limits.cpu}'`), except `1000E`,
    /// which Go prints as `1` (no SI suffix past `E`) and we keep as typed.
    #[test]
    fn the_same_as_kubectl_1_32() {
        for (input, kubectl) in [
            ("0.1", "100m"),
            ("1.5", "1500m"),
            ("2000", "2k"),
            ("1500", "1500"),
            ("1000000", "1M"),
            ("0.5Gi", "512Mi"),
            ("1.50", "1500m"),
            ("5.0", "5"),
            ("0.0001", "100u"),
            (".5", "500m"),
            ("-0.1", "-100m"),
            ("1000m", "1"),
            ("100000000n", "100m"),
            ("0.0000000001", "1n"),
            ("1.0000000001", "1000000001n"),
            ("1.5Gi", "1536Mi"),
            ("1024Mi", "1Gi"),
            ("8Gi", "8Gi"),
            ("2048Ki", "2Mi"),
            ("1536Ki", "1536Ki"),
            ("0.5Ki", "512"),
            ("1.1Ki", "1126400m"),
            ("1000e0", "1e3"),
            ("1e-3", "1e-3"),
            ("0.1e1", "1"),
            ("12e-1", "1200e-3"),
            ("0", "0"),
            ("000", "0"),
            ("0.0", "0"),
            ("0Gi", "0"),
            ("1k", "1k"),
            ("+1k", "+1k"),
            ("01k", "01k"),
            ("1.", "1."),
            ("1500m", "1500m"),
            ("100Mi", "100Mi"),
            ("+1Gi", "+1Gi"),
            ("01Gi", "01Gi"),
            ("2Gi", "2Gi"),
            ("1e3", "1e3"),
            ("10", "10"),
            ("256Mi", "256Mi"),
            ("1e30", "1e30"),
            ("1Ei", "1Ei"),
            ("7Ei", "7Ei"),
            ("1E", "1E"),
            ("999999999999999999", "999999999999999999"),
            ("1234567890123456789", "1234567890123456789"),
            (
                "0.000000000000000000000000000000000000000000000000000000000001",
                "1n",
            ),
        ] {
            assert_eq!(canonical_quantity(input).as_deref(), Ok(kubectl), "{input}");
        }
        assert_eq!(canonical_quantity("1000E").as_deref(), Ok("1000E"));
    }

    #[test]
    fn every_quantity_of_a_pod_spec() {
        let mut spec = serde_json::json!({
            "containers": [{"name": "a", "resources": {"limits": {"cpu": "0.5", "memory": "1.5Gi"}, "requests": {"cpu": "2000m"}},
                            "env": [{"name": "E", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1024Ki"}}}, {"name": "F", "value": "0.5"}]}],
            "initContainers": [{"name": "i", "resources": {"requests": {"memory": "1000000"}}}],
            "ephemeralContainers": [{"name": "d", "resources": {"limits": {"cpu": "0.25"}}}],
            "overhead": {"cpu": "0.1"},
            "resources": {"limits": {"cpu": "3000m"}},
            "volumes": [
                {"name": "e", "emptyDir": {"sizeLimit": "0.5Gi"}},
                {"name": "d", "downwardAPI": {"items": [{"path": "p", "resourceFieldRef": {"resource": "limits.cpu", "divisor": "0.001"}}]}},
                {"name": "p", "projected": {"sources": [{"downwardAPI": {"items": [{"path": "q", "resourceFieldRef": {"resource": "limits.cpu", "divisor": "1000m"}}]}}]}},
                {"name": "c", "ephemeral": {"volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "2048Mi"}}}}}}
            ]
        });
        canonicalize_pod_spec(&mut spec).unwrap();
        assert_eq!(
            spec,
            serde_json::json!({
                "containers": [{"name": "a", "resources": {"limits": {"cpu": "500m", "memory": "1536Mi"}, "requests": {"cpu": "2"}},
                                "env": [{"name": "E", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}}, {"name": "F", "value": "0.5"}]}],
                "initContainers": [{"name": "i", "resources": {"requests": {"memory": "1M"}}}],
                "ephemeralContainers": [{"name": "d", "resources": {"limits": {"cpu": "250m"}}}],
                "overhead": {"cpu": "100m"},
                "resources": {"limits": {"cpu": "3"}},
                "volumes": [
                    {"name": "e", "emptyDir": {"sizeLimit": "512Mi"}},
                    {"name": "d", "downwardAPI": {"items": [{"path": "p", "resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}}]}},
                    {"name": "p", "projected": {"sources": [{"downwardAPI": {"items": [{"path": "q", "resourceFieldRef": {"resource": "limits.cpu", "divisor": "1"}}]}}]}},
                    {"name": "c", "ephemeral": {"volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "2Gi"}}}}}}
                ]
            })
        );
        let mut bad = serde_json::json!({"containers": [{"resources": {"limits": {"cpu": "1x"}}}]});
        assert_eq!(
            canonicalize_pod_spec(&mut bad),
            Err(QuantityError::FormatWrong)
        );
    }

    #[test]
    fn beyond_u128_the_text_stays_as_typed() {
        let long = format!("0.{}1", "0".repeat(60));
        assert_eq!(canonical_quantity(&long).as_deref(), Ok("1n"));
        let huge = format!("1{}", "0".repeat(50));
        assert_eq!(canonical_quantity(&huge).as_deref(), Ok(huge.as_str()));
        assert_eq!(canonical_quantity("1e30").as_deref(), Ok("1e30"));
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
