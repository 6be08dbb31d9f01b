//! What a benchmark run produces: samples per command, results per case, and the
//! targets the plugin issues set, evaluated as pure functions of those results.

use std::collections::BTreeMap;

use super::stats::{self, Summary};

pub use localcluster::latency::Traffic;

/// A matrix cell's client caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    /// Each measured run starts from its own empty cache directory (`KUBECACHEDIR`),
    /// as the first run on a new machine does.
    Cold,
    /// The runs share one cache directory per side, filled by the warm-up run.
    Warm,
}

impl Cache {
    pub fn word(self) -> &'static str {
        match self {
            Cache::Cold => "cold",
            Cache::Warm => "warm",
        }
    }
}

/// Where a case sits in the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// The case without its round trip and cache (`create-file-500`).
    pub base: &'static str,
    pub rtt_ms: u32,
    pub cache: Cache,
}

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
    /// Connections and bytes through the latency proxy (`None`: not proxied).
    pub traffic: Option<Traffic>,
    /// Bytes in the run's cache directory afterwards (cold runs only: what a first
    /// run stores).
    pub cache_bytes: Option<u64>,
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
    /// The median of a per-run traffic count (`None` unless every run was proxied).
    pub fn traffic(&self, f: fn(&Traffic) -> u64) -> Option<f64> {
        let v: Option<Vec<f64>> = self
            .samples
            .iter()
            .map(|s| s.traffic.as_ref().map(|t| f(t) as f64))
            .collect();
        stats::summarize(&v?).map(|s| s.median)
    }
    /// The median bytes a cold run left in its cache directory.
    pub fn cache_bytes(&self) -> Option<f64> {
        let v: Option<Vec<f64>> = self
            .samples
            .iter()
            .map(|s| s.cache_bytes.map(|b| b as f64))
            .collect();
        stats::summarize(&v?).map(|s| s.median)
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
    /// Every run of ours opened at most this many TCP connections (latency proxy).
    ConnectionsAtMost(u64),
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
            Target::ConnectionsAtMost(n) => format!("at most {n} TCP connection per run"),
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
            Target::ConnectionsAtMost(want) => {
                let per_run: Option<Vec<u64>> = ours
                    .samples
                    .iter()
                    .map(|s| s.traffic.map(|t| t.connections))
                    .collect();
                match per_run {
                    None => Verdict::Unknown("connections were not counted (no proxy)".into()),
                    Some(c) if c.iter().all(|&n| n <= want) => {
                        Verdict::Met(format!("connections per run: {c:?}"))
                    }
                    Some(c) => Verdict::Missed(format!("connections per run: {c:?} > {want}")),
                }
            }
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
    /// The matrix cell this case is (`None`: a case of the default set).
    pub cell: Option<Cell>,
    /// The input size (objects, replicas) where the case has one.
    pub size: Option<u32>,
    /// Why kubectl ran fewer times than ours here, or not at all.
    pub kubectl_fewer: Option<String>,
}

/// How a case reaches the API server: the round trip a latency proxy adds and the
/// RTT-bound limits it implies, and whether the server throttles the case's identity.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Link {
    /// Round trip added by the latency proxy, in seconds (0: none).
    pub rtt: f64,
    /// The RTT-bound limit (seconds) of our side (32 in flight, the targets'
    /// reference: [`crate::cases::IN_FLIGHT`]), for cases with a
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

    /// The case's input size (objects, replicas), from its matrix cell's kind or
    /// its cost-growth series.
    pub fn series_size(&self) -> Option<u32> {
        self.size.or(self.series.map(|s| s.size))
    }

    /// Median wall ratio ours / baseline.
    pub fn wall_ratio(&self) -> Option<f64> {
        match &self.outcome {
            Outcome::Measured { ours, theirs } => stats::ratio(ours.wall()?.median, theirs.wall()?),
            _ => None,
        }
    }
}

/// A cold first run within this factor of the warm run, at 25 ms.
pub const COLD_OVER_WARM_AT_MOST: f64 = 1.5;
/// The round trip at which cold is compared with warm.
pub const COLD_OVER_WARM_RTT_MS: u32 = 25;
/// Every release binary at most this big: the host's (glibc) build, which the bench
/// makes, against `cargo xtask size`'s budget for it.
pub const BINARY_BUDGET: u64 = 5 * 1024 * 1024;

/// The matrix's targets that span cells or the whole run, each with its verdict:
/// cold over warm at [`COLD_OVER_WARM_RTT_MS`] per case of the matrix, and the binary
/// budget. (Targets of one cell are that cell's own, see [`CaseResult::verdicts`].)
pub fn matrix_verdicts(cases: &[CaseResult], binaries: &[BinarySize]) -> Vec<(String, Verdict)> {
    let mut out = Vec::new();
    let mut bases: Vec<&'static str> = Vec::new();
    for base in cases.iter().filter_map(|c| c.cell.map(|c| c.base)) {
        if !bases.contains(&base) {
            bases.push(base);
        }
    }
    let wall = |base: &str, cache: Cache| -> Option<Result<f64, String>> {
        let c = cases.iter().find(|c| {
            c.cell.is_some_and(|cell| {
                cell.base == base && cell.rtt_ms == COLD_OVER_WARM_RTT_MS && cell.cache == cache
            })
        })?;
        Some(match &c.outcome {
            Outcome::Measured { ours, .. } => ours
                .wall()
                .map(|s| s.median)
                .ok_or_else(|| format!("{}: no wall time", c.name)),
            Outcome::Skipped(why) | Outcome::Failed(why) => Err(format!("{}: {why}", c.name)),
        })
    };
    for base in bases {
        let (Some(cold), Some(warm)) = (wall(base, Cache::Cold), wall(base, Cache::Warm)) else {
            continue;
        };
        let what = format!(
            "{base}: cold first run within {COLD_OVER_WARM_AT_MOST}× the warm run at {COLD_OVER_WARM_RTT_MS} ms"
        );
        let verdict = match (cold, warm) {
            (Ok(c), Ok(w)) => match stats::ratio(c, w) {
                Some(r) if r <= COLD_OVER_WARM_AT_MOST => {
                    Verdict::Met(format!("cold {c:.3} s / warm {w:.3} s = {r:.2}×"))
                }
                Some(r) => Verdict::Missed(format!(
                    "cold {c:.3} s / warm {w:.3} s = {r:.2}× > {COLD_OVER_WARM_AT_MOST}×"
                )),
                None => Verdict::Unknown("the warm run took no time".into()),
            },
            (Err(e), _) | (_, Err(e)) => Verdict::Unknown(format!("not measured: {e}")),
        };
        out.push((what, verdict));
    }
    for b in binaries {
        let mib = b.bytes as f64 / 1024.0 / 1024.0;
        let verdict = if b.bytes <= BINARY_BUDGET {
            Verdict::Met(format!("{mib:.2} MiB"))
        } else {
            Verdict::Missed(format!("{mib:.2} MiB > 5 MiB"))
        };
        out.push((format!("`{}` at most 5 MiB", b.name), verdict));
    }
    out
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
    /// Measured runs per command in the default set's cases…
    pub runs: u32,
    /// … and in the matrix's cells (kubectl fewer where a cell says so).
    pub matrix_runs: u32,
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
            traffic: None,
            cache_bytes: None,
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

    fn with_connections(mut s: Side, per_run: &[u64]) -> Side {
        for (sample, n) in s.samples.iter_mut().zip(per_run) {
            sample.traffic = Some(Traffic {
                connections: *n,
                received: 1000,
                sent: 100,
            });
        }
        s
    }

    #[test]
    fn connections_are_counted_per_run() {
        let t = Target::ConnectionsAtMost(1);
        let outcome = measured(side(&[1.0, 1.0], None), side(&[1.0], None));
        assert!(matches!(t.evaluate(&outcome), Verdict::Unknown(_)));
        let outcome = measured(
            with_connections(side(&[1.0, 1.0], None), &[1, 1]),
            side(&[1.0], None),
        );
        assert_eq!(
            t.evaluate(&outcome),
            Verdict::Met("connections per run: [1, 1]".into())
        );
        let outcome = measured(
            with_connections(side(&[1.0, 1.0], None), &[1, 3]),
            side(&[1.0], None),
        );
        assert!(matches!(t.evaluate(&outcome), Verdict::Missed(_)));
        let ours = with_connections(side(&[1.0, 2.0, 3.0], None), &[1, 5, 3]);
        assert_eq!(ours.traffic(|t| t.connections), Some(3.0));
        assert_eq!(ours.traffic(|t| t.received), Some(1000.0));
        assert_eq!(side(&[1.0], None).traffic(|t| t.received), None);
    }

    fn cell_result(base: &'static str, rtt_ms: u32, cache: Cache, outcome: Outcome) -> CaseResult {
        CaseResult {
            name: format!("{base}-{rtt_ms}ms-{}", cache.word()),
            title: String::new(),
            series: None,
            outcome,
            targets: vec![],
            ceiling: None,
            notes: vec![],
            seconds: 1.0,
            link: Link::default(),
            cell: Some(Cell {
                base,
                rtt_ms,
                cache,
            }),
            size: None,
            kubectl_fewer: None,
        }
    }

    #[test]
    fn cold_is_compared_with_warm_at_25ms_and_binaries_with_the_budget() {
        let run = |walls: &[f64]| measured(side(walls, None), side(&[9.0], None));
        let cases = vec![
            // At 0 ms cold is far slower, but only 25 ms counts.
            cell_result("create-file-500", 0, Cache::Cold, run(&[3.0])),
            cell_result("create-file-500", 0, Cache::Warm, run(&[1.0])),
            cell_result("create-file-500", 25, Cache::Cold, run(&[1.2, 1.4, 1.3])),
            cell_result("create-file-500", 25, Cache::Warm, run(&[1.0])),
            cell_result("run-pod-create", 25, Cache::Cold, run(&[0.4])),
            cell_result("run-pod-create", 25, Cache::Warm, run(&[0.2])),
            cell_result(
                "rolling-update-10",
                25,
                Cache::Cold,
                Outcome::Failed("boom".into()),
            ),
            cell_result("rolling-update-10", 25, Cache::Warm, run(&[4.0])),
            // Only one side of the pair: no verdict.
            cell_result("create-file-50", 25, Cache::Warm, run(&[0.5])),
        ];
        let binaries = vec![
            BinarySize {
                name: "kubectl-run_pod".into(),
                bytes: 5 * 1024 * 1024,
            },
            BinarySize {
                name: "kubectl-create_file".into(),
                bytes: 6 * 1024 * 1024 + 1,
            },
        ];
        let v = matrix_verdicts(&cases, &binaries);
        let names: Vec<&str> = v.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(
            names,
            [
                "create-file-500: cold first run within 1.5× the warm run at 25 ms",
                "run-pod-create: cold first run within 1.5× the warm run at 25 ms",
                "rolling-update-10: cold first run within 1.5× the warm run at 25 ms",
                "`kubectl-run_pod` at most 5 MiB",
                "`kubectl-create_file` at most 5 MiB",
            ]
        );
        assert_eq!(
            v[0].1,
            Verdict::Met("cold 1.300 s / warm 1.000 s = 1.30×".into())
        );
        assert!(matches!(v[1].1, Verdict::Missed(_)), "{:?}", v[1].1);
        assert_eq!(
            v[2].1,
            Verdict::Unknown("not measured: rolling-update-10-25ms-cold: boom".into())
        );
        assert_eq!(v[3].1, Verdict::Met("5.00 MiB".into()));
        assert!(matches!(v[4].1, Verdict::Missed(_)));
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
