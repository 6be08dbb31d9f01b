//! Summary statistics of a handful of samples: median and spread.
//!
//! Benchmarks here take 5–10 samples on a shared two-core machine, so one slow run is
//! common. The median (not the mean) is the headline, and the spread is given twice:
//! the min–max range (everything that happened) and the median absolute deviation
//! relative to the median (how tight the typical runs are, robust to one outlier).
//! Hand-written because it is a dozen lines; a statistics crate would bring far more.

/// The summary of one metric over the measured runs of one command.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Median absolute deviation from the median.
    pub mad: f64,
}

impl Summary {
    /// The MAD as a fraction of the median (0 when the median is 0).
    pub fn relative_mad(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            self.mad / self.median.abs()
        }
    }
}

/// Summarises the finite values; `None` when there are none.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let median = median_of_sorted(&sorted);
    let mut deviations: Vec<f64> = sorted.iter().map(|v| (v - median).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    Some(Summary {
        n: sorted.len(),
        median,
        min: sorted[0],
        max: sorted[sorted.len() - 1],
        mad: median_of_sorted(&deviations),
    })
}

fn median_of_sorted(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// ours / theirs; `None` when the baseline is zero (or either is not finite), where a
/// ratio would mean nothing (e.g. 0 requests against 0 requests).
pub fn ratio(ours: f64, theirs: f64) -> Option<f64> {
    (theirs != 0.0 && ours.is_finite() && theirs.is_finite()).then(|| ours / theirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_count_median_is_the_middle_value() {
        let s = summarize(&[5.0, 1.0, 3.0]).unwrap();
        assert_eq!(s.median, 3.0);
        assert_eq!((s.min, s.max, s.n), (1.0, 5.0, 3));
        // deviations 2, 2, 0 → median 2
        assert_eq!(s.mad, 2.0);
    }

    #[test]
    fn even_count_median_is_the_mean_of_the_middle_two() {
        let s = summarize(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.median, 2.5);
        // deviations 1.5, 0.5, 0.5, 1.5 → median 1.0
        assert_eq!(s.mad, 1.0);
    }

    #[test]
    fn one_outlier_moves_neither_median_nor_mad_much() {
        let s = summarize(&[10.0, 11.0, 10.5, 10.2, 95.0]).unwrap();
        assert_eq!(s.median, 10.5);
        assert_eq!(s.max, 95.0);
        assert!((s.mad - 0.5).abs() < 1e-9, "{}", s.mad);
        assert!((s.relative_mad() - 0.5 / 10.5).abs() < 1e-9);
    }

    #[test]
    fn non_finite_values_are_ignored_and_empty_input_has_no_summary() {
        assert_eq!(summarize(&[]), None);
        assert_eq!(summarize(&[f64::NAN]), None);
        let s = summarize(&[f64::NAN, 2.0, f64::INFINITY]).unwrap();
        assert_eq!((s.n, s.median), (1, 2.0));
    }

    #[test]
    fn relative_mad_of_a_zero_median_is_zero() {
        let s = summarize(&[0.0, 0.0, 0.0]).unwrap();
        assert_eq!(s.relative_mad(), 0.0);
    }

    #[test]
    fn ratio_needs_a_non_zero_baseline() {
        assert_eq!(ratio(1.0, 4.0), Some(0.25));
        assert_eq!(ratio(0.0, 0.0), None);
        assert_eq!(ratio(3.0, 0.0), None);
        assert_eq!(ratio(f64::NAN, 1.0), None);
    }
}
