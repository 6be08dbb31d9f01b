//! `--max-surge` / `--max-unavailable`: int-or-percent values and their resolution
//! against the desired replica count, exactly as kubectl 1.17's
//! `deploymentutil.ResolveFenceposts` and apimachinery's `GetValueFromIntOrPercent`.
//!
//! The rounding is the part that matters for compatibility: surge rounds *up*,
//! unavailable rounds *down* (the 1.17 struct comment claiming the opposite is
//! wrong), and when both resolve to zero, unavailable becomes one so an update can
//! always make progress.

use std::fmt;
use std::str::FromStr;

/// An `intstr.IntOrString` as the updater uses it: a count or a percentage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntOrPercent {
    /// An absolute number of pods.
    Int(i32),
    /// A string value, interpreted as a percentage of the desired replicas. Kept as
    /// the raw string because 1.17 strips *every* `%` before parsing (`"5"` is 5 %).
    Str(String),
}

impl IntOrPercent {
    /// Resolves the value against `total`, rounding up or down (Go's
    /// `GetValueFromIntOrPercent`, v0.17).
    pub fn resolve(&self, total: i32, round_up: bool) -> Result<i32, FencepostError> {
        match self {
            IntOrPercent::Int(v) => Ok(*v),
            IntOrPercent::Str(s) => {
                let digits = s.replace('%', "");
                let percent: i32 = digits
                    .parse()
                    .map_err(|_| FencepostError { value: s.clone() })?;
                // Go computes in float64; so do we, to round identically.
                let exact = f64::from(percent) * f64::from(total) / 100.0;
                let rounded = if round_up {
                    exact.ceil()
                } else {
                    exact.floor()
                };
                Ok(rounded as i32)
            }
        }
    }
}

impl FromStr for IntOrPercent {
    type Err = String;

    /// Flag syntax: `25%` is a percentage, `3` an absolute count. Negative values
    /// are refused here (1.17 had no flag and never saw them).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Some(number) = s.strip_suffix('%') {
            match number.parse::<i32>() {
                Ok(v) if v >= 0 => Ok(IntOrPercent::Str(s.to_string())),
                _ => Err(format!(
                    "{s:?} is not a non-negative integer or percentage (e.g. 1 or 25%)"
                )),
            }
        } else {
            match s.parse::<i32>() {
                Ok(v) if v >= 0 => Ok(IntOrPercent::Int(v)),
                _ => Err(format!(
                    "{s:?} is not a non-negative integer or percentage (e.g. 1 or 25%)"
                )),
            }
        }
    }
}

impl fmt::Display for IntOrPercent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntOrPercent::Int(v) => write!(f, "{v}"),
            IntOrPercent::Str(s) => f.write_str(s),
        }
    }
}

/// A string value that is not a number once the `%` signs are removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value for IntOrString: invalid value {value:?}")]
pub struct FencepostError {
    pub value: String,
}

/// Resolves `(max_surge, max_unavailable)` for `desired` replicas.
pub fn resolve_fenceposts(
    max_surge: &IntOrPercent,
    max_unavailable: &IntOrPercent,
    desired: i32,
) -> Result<(i32, i32), FencepostError> {
    let surge = max_surge.resolve(desired, true)?;
    let mut unavailable = max_unavailable.resolve(desired, false)?;
    if surge == 0 && unavailable == 0 {
        // Both zero would deadlock the rollout; Deployments make the same choice.
        unavailable = 1;
    }
    Ok((surge, unavailable))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> IntOrPercent {
        IntOrPercent::Str(s.into())
    }

    #[test]
    fn resolves_like_kubectl_1_17() {
        use IntOrPercent::Int;
        // (surge, unavailable, desired) -> (surge, unavailable)
        let table = [
            (Int(1), Int(0), 3, (1, 0)),
            (Int(0), Int(0), 3, (0, 1)),
            (Int(0), Int(0), 0, (0, 1)),
            (p("25%"), p("25%"), 1, (1, 0)),
            (p("25%"), p("25%"), 2, (1, 0)),
            (p("25%"), p("25%"), 4, (1, 1)),
            (p("25%"), p("25%"), 10, (3, 2)),
            (p("0%"), p("30%"), 10, (0, 3)),
            (p("30%"), p("0%"), 10, (3, 0)),
            (p("20%"), p("10%"), 10, (2, 1)),
            (p("10%"), p("10%"), 1, (1, 0)),
            (p("0%"), p("10%"), 1, (0, 1)),
            (p("1%"), p("25%"), 2, (1, 0)),
            (p("0%"), p("25%"), 2, (0, 1)),
            (p("300%"), p("0%"), 20, (60, 0)),
            (p("100%"), p("0%"), 10, (10, 0)),
            (Int(0), p("50%"), 2, (0, 1)),
            (Int(0), p("1%"), 1, (0, 1)),
            (p("10%"), p("10%"), 0, (0, 1)),
            (p("33%"), p("33%"), 7, (3, 2)),
            // 1.17 strips every '%', so a bare string is still a percentage.
            (p("50"), Int(0), 3, (2, 0)),
            (p("%5%0"), Int(0), 10, (5, 0)),
        ];
        for (surge, unavailable, desired, want) in table {
            let got = resolve_fenceposts(&surge, &unavailable, desired).unwrap();
            assert_eq!(
                got, want,
                "surge={surge} unavailable={unavailable} desired={desired}"
            );
        }
    }

    #[test]
    fn bad_strings_are_errors_not_panics() {
        let err = resolve_fenceposts(&p("x%"), &IntOrPercent::Int(0), 3).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value for IntOrString: invalid value \"x%\""
        );
    }

    #[test]
    fn flag_syntax() {
        assert_eq!("3".parse::<IntOrPercent>(), Ok(IntOrPercent::Int(3)));
        assert_eq!("25%".parse::<IntOrPercent>(), Ok(p("25%")));
        for bad in ["-1", "x", "25%%", "-5%", "", "1.5"] {
            assert!(bad.parse::<IntOrPercent>().is_err(), "{bad} accepted");
        }
    }
}
