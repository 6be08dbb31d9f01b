//! What a benchmark run produces: samples per command, results per case, and the
//! targets the plugin issues set, evaluated as pure functions of those results.

use std::collections::BTreeMap;

use super::stats::{self, Summary};

/// API requests one run made, as the apiserver's audit log saw them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requests {
    pub total: u64,
    /// `"create pods"`, `"get /api"` … → count.
    pub by_kind: BTreeMap<String, u64>,
    /// Answered `429 Too Many Requests` (throttled, not applied).
    pub throttled: u64,
    /// Creates the server applied (`create` answered 2xx).
    pub created: u64,
}

impl Requests {
    /// Requests with this verb (`create` is an HTTP POST).
    pub fn verb(&self, verb: &str) -> u64 {
        self.by_kind
            .iter()
            .filter(|(k, _)| k.split(' ').next() == Some(verb))
            .map(|(_, n)| n)
            .sum()
    }
}

/// One measured run of one command.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Seconds from spawn to reaped.
    pub wall: f64,
    /// User + system CPU seconds of the process (and anything it exec'd).
    pub cpu: f64,
    /// Peak resident set size, KiB (`ru_maxrss`).
    pub max_rss_kib: u64,
    /// `None` when requests could not be counted (no audit log).
    pub requests: Option<Requests>,
}

/// The measured runs of one command.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// The command line as a user would type it.
    pub command: String,
    pub samples: Vec<Sample>,
}

impl Side {
    pub fn wall(&self) -> Option<Summary> {
        stats::summarize(&self.samples.iter().map(|s| s.wall).collect::<Vec<_>>())
    }
    pub fn cpu(&self) -> Option<Summary> {
        stats::summarize(&self.samples.iter().map(|s| s.cpu).collect::<Vec<_>>())
    }
    pub fn rss_kib(&self) -> Option<Summary> {
        stats::summarize(
            &self
                .samples
                .iter()
                .map(|s| s.max_rss_kib as f64)
                .collect::<Vec<_>>(),
        )
    }
    /// `None` unless every sample was counted.
    pub fn requests(&self) -> Option<Summary> {
        let counts: Option<Vec<f64>> = self
            .samples
            .iter()
            .map(|s| s.requests.as_ref().map(|r| r.total as f64))
            .collect();
        stats::summarize(&counts?)
    }
    /// The request breakdown of the last run (the runs of one command make the same
    /// requests; the last one is past every warm-up effect).
    pub fn last_requests(&self) -> Option<&Requests> {
        self.samples.last()?.requests.as_ref()
    }
}

/// What ours is compared with.
#[derive(Debug, Clone, PartialEq)]
pub enum Baseline {
    /// The real kubectl, run alternately with ours.
    Kubectl(Side),
    /// No kubectl equivalent (kubectl 1.32 has no rolling-update): the theoretical
    /// best wall time, with how it was computed.
    Ideal { wall: f64, how: String },
}

impl Baseline {
    pub fn wall(&self) -> Option<f64> {
        match self {
            Baseline::Kubectl(side) => side.wall().map(|s| s.median),
            Baseline::Ideal { wall, .. } => Some(*wall),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Measured {
        ours: Side,
        theirs: Baseline,
    },
    /// Not run to the end, with why (e.g. `plugin not implemented (exit 1 / …)`).
    Skipped(String),
    Failed(String),
}

/// A target from the plugin issues, checked against a case's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// Median wall time of ours at most this fraction of the baseline's.
    WallRatioAtMost(f64),
    /// Every run of ours made no API request at all.
    NoRequests,
    /// Every run of ours made exactly this many POSTs (creates).
    PostsExactly(u64),
    /// Every run of ours made at most `objects + slack` requests.
    RequestsAtMost { objects: u64, slack: u64 },
    /// Every run's creates applied by the server number exactly this (with unique
    /// names, and all of them listed afterwards: each object created exactly once).
    CreatedExactly(u64),
    /// Our median wall time within `ratio` × the RTT-bound limit `bound` (seconds).
    RttBoundAtMost { ratio: f64, bound: f64 },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Met(String),
    Missed(String),
    /// The data to decide is missing (no audit log, skipped case…).
    Unknown(String),
}

impl Verdict {
    pub fn symbol(&self) -> &'static str {
        match self {
            Verdict::Met(_) => "met",
            Verdict::Missed(_) => "MISSED",
            Verdict::Unknown(_) => "unknown",
        }
    }
    pub fn detail(&self) -> &str {
        match self {
            Verdict::Met(s) | Verdict::Missed(s) | Verdict::Unknown(s) => s,
        }
    }
}

impl Target {
    pub fn describe(&self) -> String {
        match self {
            Target::WallRatioAtMost(r) if *r < 1.0 => {
                format!("at least {:.0}× faster (wall ratio ≤ {r})", 1.0 / r)
            }
            Target::WallRatioAtMost(r) => format!("wall time within {r}× of the baseline"),
            Target::NoRequests => "zero API requests".into(),
            Target::PostsExactly(n) => format!("exactly {n} POST per run"),
            Target::RequestsAtMost { objects, slack } => {
                format!("at most N + {slack} = {} requests", objects + slack)
            }
            Target::CreatedExactly(n) => {
                format!("every object created exactly once ({n} creates applied per run)")
            }
            Target::RttBoundAtMost { ratio, bound } => format!(
                "wall time within {ratio}× of the RTT-bound limit ({:.3} s)",
                bound
            ),
        }
    }

    pub fn evaluate(&self, outcome: &Outcome) -> Verdict {
        let (ours, theirs) = match outcome {
            Outcome::Measured { ours, theirs } => (ours, theirs),
            Outcome::Skipped(why) | Outcome::Failed(why) => {
                return Verdict::Unknown(format!("not measured: {why}"));
            }
        };
        let per_run = || -> Option<Vec<&Requests>> {
            ours.samples.iter().map(|s| s.requests.as_ref()).collect()
        };
        let uncounted = || Verdict::Unknown("requests were not counted (no audit log)".into());
        match *self {
            Target::WallRatioAtMost(limit) => {
                let (Some(o), Some(t)) = (ours.wall(), theirs.wall()) else {
                    return Verdict::Unknown("no wall time".into());
                };
                match stats::ratio(o.median, t) {
                    Some(r) if r <= limit => Verdict::Met(format!("ratio {r:.3}")),
                    Some(r) => Verdict::Missed(format!("ratio {r:.3} > {limit}")),
                    None => Verdict::Unknown("baseline wall time is zero".into()),
                }
            }
            Target::NoRequests => match per_run() {
                None => uncounted(),
                Some(runs) => match runs.iter().map(|r| r.total).max().unwrap_or(0) {
                    0 => Verdict::Met("0 requests in every run".into()),
                    n => Verdict::Missed(format!("up to {n} requests in a run")),
                },
            },
            Target::PostsExactly(want) => match per_run() {
                None => uncounted(),
                Some(runs) => {
                    let posts: Vec<u64> = runs.iter().map(|r| r.verb("create")).collect();
                    if posts.iter().all(|&p| p == want) {
                        Verdict::Met(format!("{want} POST in each of {} runs", posts.len()))
                    } else {
                        Verdict::Missed(format!("POSTs per run: {posts:?}"))
                    }
                }
            },
            Target::CreatedExactly(want) => match per_run() {
                None => uncounted(),
                Some(runs) => {
                    let created: Vec<u64> = runs.iter().map(|r| r.created).collect();
                    if created.iter().all(|&c| c == want) {
                        Verdict::Met(format!("{want} in each of {} runs", created.len()))
                    } else {
                        Verdict::Missed(format!("creates applied per run: {created:?}"))
                    }
                }
            },
            Target::RttBoundAtMost { ratio, bound } => match ours.wall() {
                None => Verdict::Unknown("no wall time".into()),
                Some(o) => match stats::ratio(o.median, bound) {
                    Some(r) if r <= ratio => Verdict::Met(format!("{r:.2}× the limit")),
                    Some(r) => Verdict::Missed(format!("{r:.2}× the limit > {ratio}×")),
                    None => Verdict::Unknown("the limit is zero".into()),
                },
            },
            Target::RequestsAtMost { objects, slack } => match per_run() {
                None => uncounted(),
                Some(runs) => {
                    let max = runs.iter().map(|r| r.total).max().unwrap_or(0);
                    if max <= objects + slack {
                        Verdict::Met(format!("at most {max} requests"))
                    } else {
                        Verdict::Missed(format!("{max} requests > {}", objects + slack))
                    }
                }
            },
        }
    }
}

/// A family of cases that differ by size, for the cost-growth chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Series {
    pub name: &'static str,
    pub size: u32,
}

/// Everything known about one case after running it.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    pub name: String,
    pub title: String,
    pub series: Option<Series>,
    pub outcome: Outcome,
    pub targets: Vec<Target>,
    /// Median wall time of the in-process client ceiling, when the case has one.
    pub ceiling: Option<f64>,
    /// Extra lines for the report (how the case is set up, caveats).
    pub notes: Vec<String>,
    /// Seconds the case took in all: set-up, warm-up, measured runs, counting.
    pub seconds: f64,
    pub link: Link,
}

/// How a case reaches the API server: the round trip a latency proxy adds and the
/// RTT-bound limits it implies, and whether the server throttles the case's identity.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Link {
    /// Round trip added by the latency proxy, in seconds (0: none).
    pub rtt: f64,
    /// The RTT-bound limit (seconds) of our side (32 in flight), for cases with a
    /// known number of requests.
    pub bound_ours: Option<f64>,
    /// The same for kubectl, one request at a time.
    pub bound_theirs: Option<f64>,
    pub throttled: bool,
}

impl CaseResult {
    pub fn verdicts(&self) -> Vec<(Target, Verdict)> {
        self.targets
            .iter()
            .map(|t| (*t, t.evaluate(&self.outcome)))
            .collect()
    }

    /// Median wall ratio ours / baseline.
    pub fn wall_ratio(&self) -> Option<f64> {
        match &self.outcome {
            Outcome::Measured { ours, theirs } => stats::ratio(ours.wall()?.median, theirs.wall()?),
            _ => None,
        }
    }
}

/// The size of one release binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinarySize {
    pub name: String,
    pub bytes: u64,
}

/// A whole benchmark run.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// UTC date and time the run started (`2026-11-22 01:40 UTC`).
    pub started: String,
    /// `(what, value)` lines: machine, kubectl and server versions, commit…
    pub environment: Vec<(String, String)>,
    pub runs: u32,
    pub cases: Vec<CaseResult>,
    pub binaries: Vec<BinarySize>,
    pub kubectl_size: Option<BinarySize>,
    /// Seconds the whole `cargo xtask bench` took, and the release build within it.
    pub total_seconds: f64,
    pub build_seconds: Option<f64>,
    /// Seconds from the start of `cluster up` to ready (overlapping the build).
    pub cluster_seconds: Option<f64>,
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample(wall: f64, requests: Option<&[(&str, u64)]>) -> Sample {
        Sample {
            wall,
            cpu: wall / 2.0,
            max_rss_kib: 10_000,
            requests: requests.map(|kinds| Requests {
                total: kinds.iter().map(|(_, n)| n).sum(),
                by_kind: kinds.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
                ..Requests::default()
            }),
        }
    }

    fn side(walls: &[f64], requests: Option<&[(&str, u64)]>) -> Side {
        Side {
            command: "cmd".into(),
            samples: walls.iter().map(|w| sample(*w, requests)).collect(),
        }
    }

    fn measured(ours: Side, theirs: Side) -> Outcome {
        Outcome::Measured {
            ours,
            theirs: Baseline::Kubectl(theirs),
        }
    }

    #[test]
    fn wall_ratio_target_uses_medians() {
        let outcome = measured(
            side(&[0.004, 0.005, 0.050], None),
            side(&[0.050, 0.054, 0.060], None),
        );
        let v = Target::WallRatioAtMost(0.1).evaluate(&outcome);
        assert_eq!(v, Verdict::Met("ratio 0.093".into()));
        let v = Target::WallRatioAtMost(0.05).evaluate(&outcome);
        assert!(matches!(v, Verdict::Missed(_)), "{v:?}");
    }

    #[test]
    fn ideal_baseline_is_compared_directly() {
        let outcome = Outcome::Measured {
            ours: side(&[4.0, 4.2, 4.4], None),
            theirs: Baseline::Ideal {
                wall: 3.0,
                how: "10 × 300 ms".into(),
            },
        };
        assert_eq!(
            Target::WallRatioAtMost(1.5).evaluate(&outcome),
            Verdict::Met("ratio 1.400".into())
        );
    }

    #[test]
    fn request_targets_need_counts_for_every_run() {
        let outcome = measured(side(&[1.0], None), side(&[1.0], None));
        assert!(matches!(
            Target::NoRequests.evaluate(&outcome),
            Verdict::Unknown(_)
        ));
        let outcome = measured(
            side(&[1.0, 1.0], Some(&[("create pods", 1)])),
            side(&[1.0], None),
        );
        assert!(matches!(
            Target::PostsExactly(1).evaluate(&outcome),
            Verdict::Met(_)
        ));
        assert!(matches!(
            Target::NoRequests.evaluate(&outcome),
            Verdict::Missed(_)
        ));
        let outcome = measured(
            side(&[1.0], Some(&[("create pods", 1), ("get /api", 1)])),
            side(&[1.0], None),
        );
        assert!(matches!(
            Target::PostsExactly(1).evaluate(&outcome),
            Verdict::Met(_)
        ));
        assert!(matches!(
            Target::RequestsAtMost {
                objects: 1,
                slack: 0
            }
            .evaluate(&outcome),
            Verdict::Missed(_)
        ));
    }

    #[test]
    fn skipped_cases_leave_targets_unknown() {
        let v = Target::NoRequests.evaluate(&Outcome::Skipped("plugin not implemented".into()));
        assert_eq!(
            v,
            Verdict::Unknown("not measured: plugin not implemented".into())
        );
    }

    #[test]
    fn verb_counts_sum_every_resource() {
        let r = sample(
            1.0,
            Some(&[
                ("create configmaps", 3),
                ("create namespaces", 1),
                ("get /api", 2),
            ]),
        )
        .requests
        .unwrap();
        assert_eq!(r.total, 6);
        assert_eq!(r.verb("create"), 4);
        assert_eq!(r.verb("get"), 2);
        assert_eq!(r.verb("list"), 0);
    }
}
