//! Per-pod steering annotations: how a test tells the simulated node what a
//! pod's containers should do (become ready late, never, exit, ignore SIGTERM).
//!
//! Parsing is pure and forgiving: a malformed value is reported as a
//! [`SteeringWarning`] and ignored, never a panic, because the node must keep
//! serving every other pod even when one test writes a typo.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

// The names live in `localcluster`, which the bench links without this crate.
pub use localcluster::steering::{
    EXIT_AFTER_MS, EXIT_CODE, IGNORE_SIGTERM, NEVER_READY, READY_AFTER_MS,
};

/// What the annotations ask of a pod's containers. The same steering applies
/// to every (non-init) container of the pod.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Steering {
    /// Delay from container start to readiness; `None` uses the node default.
    pub ready_after: Option<Duration>,
    /// Run but never report ready.
    pub never_ready: bool,
    /// When set, each container run terminates.
    pub exit: Option<Exit>,
    /// Keep running after SIGTERM until the grace period ends.
    pub ignore_sigterm: bool,
}

/// A scripted container termination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exit {
    /// The exit code reported in `state.terminated.exitCode`.
    pub code: i32,
    /// How long each run lasts before it exits.
    pub after: Duration,
}

/// A steering annotation whose value could not be used; it is ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SteeringWarning {
    /// The annotation key.
    pub key: &'static str,
    /// The rejected value.
    pub value: String,
    /// What was expected instead.
    pub expected: &'static str,
}

impl fmt::Display for SteeringWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ignoring annotation {}={:?}: expected {}",
            self.key, self.value, self.expected
        )
    }
}

impl Steering {
    /// Reads the steering annotations; unknown `sim.kubeplug.io/` keys are
    /// not an error (a newer test may know more than this node).
    pub fn from_annotations(
        annotations: Option<&BTreeMap<String, String>>,
    ) -> (Steering, Vec<SteeringWarning>) {
        let mut warnings = Vec::new();
        let mut steering = Steering::default();
        let Some(annotations) = annotations else {
            return (steering, warnings);
        };
        let mut get = |key: &'static str, expected: &'static str, parse: &dyn Fn(&str) -> bool| {
            let value = annotations.get(key)?;
            if parse(value.trim()) {
                Some(value.trim().to_owned())
            } else {
                warnings.push(SteeringWarning {
                    key,
                    value: value.clone(),
                    expected,
                });
                None
            }
        };
        const MILLIS: &str = "a non-negative number of milliseconds";
        const BOOL: &str = "\"true\" or \"false\"";
        const CODE: &str = "an integer exit code";
        let ms = |v: &str| v.parse::<u64>().is_ok();
        let boolean = |v: &str| parse_bool(v).is_some();
        let code = |v: &str| v.parse::<i32>().is_ok();

        steering.ready_after = get(READY_AFTER_MS, MILLIS, &ms)
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_millis);
        steering.never_ready = get(NEVER_READY, BOOL, &boolean)
            .and_then(|v| parse_bool(&v))
            .unwrap_or(false);
        steering.ignore_sigterm = get(IGNORE_SIGTERM, BOOL, &boolean)
            .and_then(|v| parse_bool(&v))
            .unwrap_or(false);
        let exit_code = get(EXIT_CODE, CODE, &code).and_then(|v| v.parse::<i32>().ok());
        let exit_after = get(EXIT_AFTER_MS, MILLIS, &ms)
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_millis);
        if exit_code.is_some() || exit_after.is_some() {
            steering.exit = Some(Exit {
                code: exit_code.unwrap_or(0),
                after: exit_after.unwrap_or(Duration::ZERO),
            });
        }
        (steering, warnings)
    }
}

/// Go's `strconv.ParseBool` spellings, which is what people type in YAML
/// annotations after years of kubectl.
fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> (Steering, Vec<SteeringWarning>) {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Steering::from_annotations(Some(&map))
    }

    #[test]
    fn no_annotations_means_defaults() {
        assert_eq!(
            Steering::from_annotations(None),
            (Steering::default(), vec![])
        );
        assert_eq!(parse(&[("app", "x")]), (Steering::default(), vec![]));
    }

    #[test]
    fn reads_every_key() {
        let (s, w) = parse(&[
            (READY_AFTER_MS, "1500"),
            (NEVER_READY, "true"),
            (EXIT_CODE, "3"),
            (EXIT_AFTER_MS, " 250 "),
            (IGNORE_SIGTERM, "True"),
        ]);
        assert!(w.is_empty());
        assert_eq!(
            s,
            Steering {
                ready_after: Some(Duration::from_millis(1500)),
                never_ready: true,
                exit: Some(Exit {
                    code: 3,
                    after: Duration::from_millis(250)
                }),
                ignore_sigterm: true,
            }
        );
    }

    #[test]
    fn exit_code_alone_exits_at_once_and_exit_after_alone_exits_zero() {
        assert_eq!(
            parse(&[(EXIT_CODE, "-1")]).0.exit,
            Some(Exit {
                code: -1,
                after: Duration::ZERO
            })
        );
        assert_eq!(
            parse(&[(EXIT_AFTER_MS, "10")]).0.exit,
            Some(Exit {
                code: 0,
                after: Duration::from_millis(10)
            })
        );
    }

    #[test]
    fn bad_values_warn_and_are_ignored() {
        let (s, w) = parse(&[
            (READY_AFTER_MS, "-5"),
            (NEVER_READY, "yes"),
            (EXIT_CODE, "1.5"),
            (EXIT_AFTER_MS, "soon"),
        ]);
        assert_eq!(s, Steering::default());
        let keys: Vec<_> = w.iter().map(|w| w.key).collect();
        assert_eq!(
            keys,
            [READY_AFTER_MS, NEVER_READY, EXIT_CODE, EXIT_AFTER_MS]
        );
        assert_eq!(
            w[1].to_string(),
            "ignoring annotation sim.kubeplug.io/never-ready=\"yes\": expected \"true\" or \"false\""
        );
    }

    #[test]
    fn false_is_false() {
        let (s, w) = parse(&[(NEVER_READY, "false"), (IGNORE_SIGTERM, "0")]);
        assert!(w.is_empty());
        assert!(!s.never_ready && !s.ignore_sigterm);
    }
}
