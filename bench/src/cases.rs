//! The benchmark cases: what runs on each side, what each run needs first, and the
//! targets the plugin issues set. Each plugin's issue adds its cases here.
//!
//! "Ours" is our release binary run directly (as kubectl's plugin lookup ends up
//! doing); `run-pod-dry-run-via-kubectl` shows the same case through kubectl's lookup,
//! which adds kubectl's own start-up to ours. "Theirs" is always the real `kubectl` on
//! this machine, never a re-implementation; where kubectl has no equivalent
//! (rolling-update was removed in 1.18) the baseline is the ideal time.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::model::{Cache, Cell, Series, Target};

pub mod matrix;

/// Readiness delay of the bench's pods: their readiness probe
/// (`localcluster::steering::ready_after`) passes this long after they start, to within
/// the kubelet's one-second probe period, so the ideal is a lower bound.
pub const READY_AFTER_MS: u64 = 1000;
/// The largest input a warm-up run uses (create-file objects, rolling-update replicas).
///
/// A warm-up only has to fill caches (page cache, kubectl's discovery cache, the
/// apiserver's) and show that the command works; a small input does both, and the
/// 10-minute budget of a whole run cannot afford warm-ups at 5,000 objects (two more
/// kubectl runs of 20 s) or 30 replicas.
const WARM_UP_OBJECTS: u32 = 50;
const WARM_UP_REPLICAS: u32 = 3;
const WARM_UP_DEPLOYMENTS: u32 = 5;
/// Requests `create-file --wait` may make beside one create per object: discovery,
/// and the watches' lists and watches (Deployments and pods), re-opened when the
/// server ends them.
pub const CREATE_FILE_WAIT_SLACK: u64 = 20;
/// The kubectl script of the `--wait` case: every file created, then every file's
/// rollout awaited, one process each (`$1` kubectl, `$2` the directory, `$3` the
/// namespace), as a CI step writes it.
pub const CREATE_THEN_ROLLOUT_STATUS: &str = r#"set -e
for f in "$2"/*.yaml; do "$1" create -f "$f" -n "$3"; done
for f in "$2"/*.yaml; do "$1" rollout status -f "$f" -n "$3" --timeout=5m; done"#;
/// Requests allowed on top of one per object in create-file (discovery and the like).
pub const CREATE_FILE_SLACK: u64 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `--help` start-up: ours vs the nearest kubectl command's `--help`.
    Help {
        binary: &'static str,
        kubectl: &'static [&'static str],
    },
    /// `run-pod X --image=nginx --dry-run=client -o yaml` vs `kubectl run …`.
    RunPodDryRun { via_kubectl: bool },
    /// A real pod create, into a fresh namespace per run.
    RunPodCreate,
    /// N ConfigMaps from a directory into a fresh namespace per run.
    CreateFile { objects: u32 },
    /// `rolling-update web --image=nginx:2 --update-period=0` on an RC of N ready pods.
    RollingUpdate { replicas: u32 },
    /// `create-file --wait` of N one-replica Deployments from a directory vs a script
    /// of `kubectl create -f` per file, then `kubectl rollout status` per file.
    CreateFileWait { deployments: u32 },
}

#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub title: String,
    /// Round trip added by a loopback latency proxy (`localcluster::latency`) in front
    /// of the API server, for both sides; 0: none.
    pub rtt_ms: u32,
    /// Run as an identity the API server throttles: outside `system:masters`, in
    /// [`THROTTLED_GROUP`], on a bench cluster whose API server answers `429` beyond
    /// [`THROTTLE_MUTATING`] mutating request(s) in flight (`cluster up` with
    /// `--throttle-mutating`; `system:masters`, which every other case uses, is exempt).
    pub throttled: bool,
    /// A cell of the matrix of round trips and caches: its coordinates, which set its client caches
    /// (cold or warm) and put it behind the latency proxy even at 0 ms, to count
    /// connections and bytes. `None`: a case of the default set.
    pub cell: Option<Cell>,
    pub kind: Kind,
}

/// The group of the throttled cases' identity, bound to `cluster-admin` by the bench
/// (so it may do everything the admin may, without being exempt from throttling).
pub const THROTTLED_GROUP: &str = "kubeplug-bench-throttled";
/// Mutating requests in flight that the bench cluster's API server allows a user
/// outside `system:masters`: as `harness::throttled_cluster()` in the e2e tests.
pub const THROTTLE_MUTATING: u32 = 1;
/// The target under throttling: every object exactly once, within 1.5× of
/// kubectl's time.
pub const THROTTLED_WALL_RATIO: f64 = 1.5;
/// The target at 25 ms: within 1.2× of the RTT-bound limit.
pub const RTT_BOUND_RATIO: f64 = 1.2;

/// The target of create-file at 25 ms: at least 20× faster than kubectl.
pub const FAR_WALL_RATIO: f64 = 0.05;
/// Requests in flight of the RTT-bound limit of our side: the reference the far-away
/// targets were set against (500 creates at 25 ms: 18 RTT = 450 ms);
/// kubectl sends one at a time. create-file itself now keeps up to 64 in flight (its
/// default `--concurrency`): the limit of a 64-in-flight client, 10 RTT = 250 ms,
/// would be less than the server alone takes for 500 creates on two cores (0.3 s on
/// a quiet machine, measured through the proxy at 0 ms), so no client could meet it;
/// the reference's stays a fixed yardstick for every run, before and after.
pub const IN_FLIGHT: u32 = 32;
/// Round trips before the first request: TCP's handshake and TLS 1.3's.
pub const HANDSHAKE_ROUND_TRIPS: u32 = 2;

impl Case {
    /// The targets of the case: its kind's, with create-file's wall ratio raised to
    /// [`FAR_WALL_RATIO`] when a round trip is added (kubectl's one-at-a-time creates
    /// pay it once per object, ours once per `--concurrency` objects), and none for a
    /// far rolling-update.
    pub fn targets(&self) -> Vec<Target> {
        if let Some(cell) = self.cell {
            return matrix::targets(cell, self.kind, self.rtt_bound(IN_FLIGHT));
        }
        // rolling-update's baseline is the ideal without latency: its target does not
        // carry over to a far-away server.
        if self.rtt_ms > 0 && matches!(self.kind, Kind::RollingUpdate { .. }) {
            return vec![];
        }
        if self.throttled
            && let Kind::CreateFile { objects } = self.kind
        {
            return vec![
                Target::WallRatioAtMost(THROTTLED_WALL_RATIO),
                Target::CreatedExactly(u64::from(objects)),
            ];
        }
        let mut targets = self.kind.targets();
        if self.rtt_ms > 0
            && let Kind::CreateFile { objects } = self.kind
            && objects >= 500
        {
            // 20× kubectl is the target at 25 ms; further away only the limit is
            // (kubectl's one-at-a-time creates only fall further behind).
            if self.rtt_ms == 25 {
                for target in &mut targets {
                    if let Target::WallRatioAtMost(r) = target {
                        *r = FAR_WALL_RATIO;
                    }
                }
            } else {
                targets.retain(|t| !matches!(t, Target::WallRatioAtMost(_)));
            }
            if let Some(bound) = self.rtt_bound(IN_FLIGHT) {
                targets.insert(
                    usize::from(self.rtt_ms == 25),
                    Target::RttBoundAtMost {
                        ratio: RTT_BOUND_RATIO,
                        bound: bound.as_secs_f64(),
                    },
                );
            }
        }
        targets
    }

    /// The RTT-bound limit at this case's round trip: the handshakes, then one round
    /// trip per `in_flight` requests (`None` without added latency or for cases
    /// without a request count).
    pub fn rtt_bound(&self, in_flight: u32) -> Option<Duration> {
        let requests = match self.kind {
            Kind::CreateFile { objects } => objects,
            Kind::RunPodCreate => 1,
            _ => return None,
        };
        (self.rtt_ms > 0).then(|| {
            rtt_bound(
                requests,
                in_flight,
                Duration::from_millis(self.rtt_ms.into()),
            )
        })
    }
}

impl Case {
    /// Whether both sides go through a latency proxy: every case with a round trip,
    /// and every matrix cell (at 0 ms too, so that bytes and connections are counted
    /// alike in every cell).
    pub fn proxied(&self) -> bool {
        self.rtt_ms > 0 || self.cell.is_some()
    }

    /// The client caches of the measured runs: a cell's, else warm (the warm-up fills
    /// them).
    pub fn cache(&self) -> Cache {
        self.cell.map_or(Cache::Warm, |c| c.cache)
    }

    /// How long one run may take before it is killed: the kind's allowance on
    /// loopback, plus twice the round trips a one-at-a-time client needs at this
    /// latency (kubectl's creates), so that a far cell is never cut short.
    pub fn timeout(&self) -> Duration {
        let sequential = match self.kind {
            Kind::CreateFile { objects } => objects + 50,
            Kind::RollingUpdate { replicas } => 20 * replicas + 50,
            _ => 50,
        };
        self.kind.timeout() + Duration::from_millis(u64::from(self.rtt_ms)) * (2 * sequential)
    }

    /// How many measured runs kubectl gets in this case, given `runs` for ours, and
    /// why when fewer (see [`matrix::kubectl_runs`]; a far case of the default set as
    /// a warm cell: kubectl's 500 creates at 100 ms take 50 s or more each).
    pub fn kubectl_runs(&self, runs: usize) -> (usize, Option<String>) {
        match self.cell {
            Some(cell) => matrix::kubectl_runs(cell, self.rtt_bound(1), runs),
            None if self.rtt_ms > 0 => matrix::kubectl_runs(
                Cell {
                    base: "",
                    rtt_ms: self.rtt_ms,
                    cache: Cache::Warm,
                },
                self.rtt_bound(1),
                runs,
            ),
            None => (runs, None),
        }
    }
}

/// `requests` sent `in_flight` at a time over a link of round trip `rtt`, after the
/// connection's handshakes: (handshakes + ⌈requests / in_flight⌉) round trips. A
/// lower bound on the wall time, whatever the client.
pub fn rtt_bound(requests: u32, in_flight: u32, rtt: Duration) -> Duration {
    rtt * (HANDSHAKE_ROUND_TRIPS + requests.div_ceil(in_flight.max(1)))
}

pub const RUN_POD: &str = "kubectl-run_pod";
pub const CREATE_FILE: &str = "kubectl-create_file";
pub const ROLLING_UPDATE: &str = "kubectl-rolling_update";
pub const BINARIES: [&str; 3] = [RUN_POD, CREATE_FILE, ROLLING_UPDATE];

/// Every case: the default set, then the matrix's cells.
pub fn all() -> Vec<Case> {
    let mut cases = default_set();
    cases.extend(matrix::cases());
    cases
}

/// The cases `cargo xtask bench` runs without arguments, in report order.
pub fn default_set() -> Vec<Case> {
    let mut cases = help_cases();
    cases.extend([
        Case::plain(
            "run-pod-dry-run",
            "run-pod client dry run vs `kubectl run` (no server contact expected)",
            Kind::RunPodDryRun { via_kubectl: false },
        ),
        Case::plain(
            "run-pod-dry-run-via-kubectl",
            "the same through kubectl's plugin lookup (`kubectl run-pod …`)",
            Kind::RunPodDryRun { via_kubectl: true },
        ),
        Case::plain(
            "run-pod-create",
            "run-pod real create vs `kubectl run` (one POST expected)",
            Kind::RunPodCreate,
        ),
        Case::plain(
            "create-file-50",
            "create-file: 50 ConfigMaps from a directory vs `kubectl create -f`",
            Kind::CreateFile { objects: 50 },
        ),
        Case::plain(
            "create-file-500",
            "create-file: 500 ConfigMaps from a directory vs `kubectl create -f`",
            Kind::CreateFile { objects: 500 },
        ),
        Case::plain(
            "create-file-5000",
            "create-file: 5,000 ConfigMaps from a directory vs `kubectl create -f`",
            Kind::CreateFile { objects: 5000 },
        ),
        Case::plain(
            "create-file-500-throttled",
            "create-file: 500 ConfigMaps vs `kubectl create -f`, API server throttling (429 beyond 1 write in flight)",
            Kind::CreateFile { objects: 500 },
        )
        .throttled(),
        Case::plain(
            "create-file-5000-throttled",
            "create-file: 5,000 ConfigMaps vs `kubectl create -f`, API server throttling (429 beyond 1 write in flight)",
            Kind::CreateFile { objects: 5000 },
        )
        .throttled(),
        Case::plain(
            "run-pod-create-25ms",
            "run-pod real create vs `kubectl run`, 25 ms round trip (latency proxy)",
            Kind::RunPodCreate,
        )
        .at_rtt(25),
        Case::plain(
            "create-file-500-25ms",
            "create-file: 500 ConfigMaps vs `kubectl create -f`, 25 ms round trip (latency proxy)",
            Kind::CreateFile { objects: 500 },
        )
        .at_rtt(25),
        Case::plain(
            "create-file-500-100ms",
            "create-file: 500 ConfigMaps vs `kubectl create -f`, 100 ms round trip (latency proxy)",
            Kind::CreateFile { objects: 500 },
        )
        .at_rtt(100),
        Case::plain(
            "create-file-wait-50",
            "create-file --wait: 50 Deployments until rolled out vs `kubectl create` + `kubectl rollout status` per object",
            Kind::CreateFileWait { deployments: 50 },
        ),
        Case::plain(
            "rolling-update-3",
            "rolling-update of 3 replicas vs the ideal",
            Kind::RollingUpdate { replicas: 3 },
        ),
        Case::plain(
            "rolling-update-10",
            "rolling-update of 10 replicas vs the ideal",
            Kind::RollingUpdate { replicas: 10 },
        ),
        Case::plain(
            "rolling-update-30",
            "rolling-update of 30 replicas vs the ideal",
            Kind::RollingUpdate { replicas: 30 },
        ),
        Case::plain(
            "rolling-update-10-25ms",
            "rolling-update of 10 replicas vs the ideal (without latency), 25 ms round trip (latency proxy)",
            Kind::RollingUpdate { replicas: 10 },
        )
        .at_rtt(25),
    ]);
    cases
}

/// The `--help` start-up cases, first in the default set.
fn help_cases() -> Vec<Case> {
    vec![
        Case::plain(
            "help-run-pod",
            "`--help` start-up: run-pod vs `kubectl run --help`",
            Kind::Help {
                binary: RUN_POD,
                kubectl: &["run", "--help"],
            },
        ),
        Case::plain(
            "help-create-file",
            "`--help` start-up: create-file vs `kubectl create --help`",
            Kind::Help {
                binary: CREATE_FILE,
                kubectl: &["create", "--help"],
            },
        ),
        Case::plain(
            "help-rolling-update",
            "`--help` start-up: rolling-update vs `kubectl rollout --help` (the nearest built-in)",
            Kind::Help {
                binary: ROLLING_UPDATE,
                kubectl: &["rollout", "--help"],
            },
        ),
    ]
}

impl Case {
    /// A case outside the matrix, at 0 ms and without throttling.
    fn plain(name: &str, title: &str, kind: Kind) -> Case {
        Case {
            name: name.into(),
            title: title.into(),
            rtt_ms: 0,
            throttled: false,
            cell: None,
            kind,
        }
    }

    /// Through the latency proxy at this round trip.
    fn at_rtt(self, rtt_ms: u32) -> Case {
        Case { rtt_ms, ..self }
    }

    /// Against the API server that throttles (429 beyond one write in flight).
    fn throttled(self) -> Case {
        Case {
            throttled: true,
            ..self
        }
    }
}

/// One command to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// What the report shows (`kubectl-run_pod bench --image=nginx …`).
    pub display: String,
    /// A `PATH` with our plugins first (for commands that go through kubectl's lookup).
    pub path: Option<OsString>,
}

/// Where things are, for building command lines.
pub struct Env<'a> {
    /// The directory holding our release binaries.
    pub bin_dir: &'a Path,
    /// The real kubectl.
    pub kubectl: &'a Path,
    /// `PATH` with a directory of only our plugins first.
    pub plugin_path: &'a OsString,
}

/// Per-run parameters.
pub struct RunCtx<'a> {
    pub namespace: &'a str,
    /// The manifest directory (create-file).
    pub manifests: Option<&'a Path>,
}

fn invocation(program: PathBuf, name: &str, args: Vec<String>) -> Invocation {
    let display = std::iter::once(name.to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    Invocation {
        program,
        args,
        display,
        path: None,
    }
}

fn manifests_arg(run: &RunCtx<'_>) -> String {
    run.manifests
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

const DRY_RUN_ARGS: [&str; 5] = ["bench", "--image=nginx", "--dry-run=client", "-o", "yaml"];

impl Kind {
    /// The binary of ours this case runs.
    pub fn binary(&self) -> &'static str {
        match self {
            Kind::Help { binary, .. } => binary,
            Kind::RunPodDryRun { .. } | Kind::RunPodCreate => RUN_POD,
            Kind::CreateFile { .. } | Kind::CreateFileWait { .. } => CREATE_FILE,
            Kind::RollingUpdate { .. } => ROLLING_UPDATE,
        }
    }

    /// Whether each run needs a fresh namespace (and whether pods go into it).
    /// The same case at warm-up size (see [`WARM_UP_OBJECTS`]).
    pub fn warm_up(self) -> Kind {
        match self {
            Kind::CreateFile { objects } => Kind::CreateFile {
                objects: objects.min(WARM_UP_OBJECTS),
            },
            Kind::RollingUpdate { replicas } => Kind::RollingUpdate {
                replicas: replicas.min(WARM_UP_REPLICAS),
            },
            Kind::CreateFileWait { deployments } => Kind::CreateFileWait {
                deployments: deployments.min(WARM_UP_DEPLOYMENTS),
            },
            other => other,
        }
    }

    /// The input size, for cases that have one (the report's notes).
    pub fn size(self) -> Option<u32> {
        match self {
            Kind::CreateFile { objects } => Some(objects),
            Kind::RollingUpdate { replicas } => Some(replicas),
            Kind::CreateFileWait { deployments } => Some(deployments),
            _ => None,
        }
    }

    pub fn namespace(&self) -> Option<bool> {
        match self {
            Kind::Help { .. } | Kind::RunPodDryRun { .. } => None,
            Kind::RunPodCreate | Kind::RollingUpdate { .. } | Kind::CreateFileWait { .. } => {
                Some(true)
            }
            Kind::CreateFile { .. } => Some(false),
        }
    }

    pub fn ours(&self, env: &Env<'_>, run: &RunCtx<'_>) -> Invocation {
        let bin = env.bin_dir.join(self.binary());
        let name = self.binary();
        match *self {
            Kind::Help { .. } => invocation(bin, name, strings(&["--help"])),
            Kind::RunPodDryRun { via_kubectl: false } => {
                invocation(bin, name, strings(&DRY_RUN_ARGS))
            }
            Kind::RunPodDryRun { via_kubectl: true } => {
                let mut args = strings(&["run-pod"]);
                args.extend(strings(&DRY_RUN_ARGS));
                Invocation {
                    path: Some(env.plugin_path.clone()),
                    ..invocation(env.kubectl.to_path_buf(), "kubectl", args)
                }
            }
            Kind::RunPodCreate => invocation(
                bin,
                name,
                strings(&["bench", "--image=nginx", "-n", run.namespace]),
            ),
            Kind::CreateFile { .. } => invocation(
                bin,
                name,
                vec![
                    "-f".into(),
                    run.manifests
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                    "-n".into(),
                    run.namespace.into(),
                ],
            ),
            Kind::CreateFileWait { .. } => invocation(
                bin,
                name,
                vec![
                    "-f".into(),
                    manifests_arg(run),
                    "-n".into(),
                    run.namespace.into(),
                    "--wait".into(),
                    "--timeout=5m".into(),
                ],
            ),
            Kind::RollingUpdate { .. } => invocation(
                bin,
                name,
                strings(&[
                    "web",
                    "--image=nginx:2",
                    "--update-period=0",
                    "-n",
                    run.namespace,
                ]),
            ),
        }
    }

    /// kubectl's side; `None` when the baseline is the ideal.
    pub fn theirs(&self, env: &Env<'_>, run: &RunCtx<'_>) -> Option<Invocation> {
        let kubectl = |args: Vec<String>| invocation(env.kubectl.to_path_buf(), "kubectl", args);
        Some(match *self {
            Kind::Help { kubectl: args, .. } => kubectl(strings(args)),
            Kind::RunPodDryRun { .. } => {
                let mut args = strings(&["run"]);
                args.extend(strings(&DRY_RUN_ARGS));
                kubectl(args)
            }
            Kind::RunPodCreate => kubectl(strings(&[
                "run",
                "bench",
                "--image=nginx",
                "-n",
                run.namespace,
            ])),
            Kind::CreateFile { .. } => kubectl(vec![
                "create".into(),
                "-f".into(),
                run.manifests
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                "-n".into(),
                run.namespace.into(),
            ]),
            Kind::CreateFileWait { .. } => invocation(
                PathBuf::from("/bin/sh"),
                "sh",
                vec![
                    "-c".into(),
                    CREATE_THEN_ROLLOUT_STATUS.into(),
                    "sh".into(),
                    env.kubectl.display().to_string(),
                    manifests_arg(run),
                    run.namespace.into(),
                ],
            ),
            Kind::RollingUpdate { .. } => return None,
        })
    }

    /// The ideal wall time (seconds) and how it is computed, for cases without kubectl.
    pub fn ideal(&self) -> Option<(f64, String)> {
        match *self {
            Kind::RollingUpdate { replicas } => {
                let (steps, wall) = ideal_rolling_update(replicas, 1, 0, READY_AFTER_MS);
                Some((
                    wall,
                    format!(
                        "{steps} scale-up steps (maxSurge 1, maxUnavailable 0) × {READY_AFTER_MS} ms readiness delay; no API latency, and no time for the node to start a pod"
                    ),
                ))
            }
            _ => None,
        }
    }

    pub fn targets(&self) -> Vec<Target> {
        match *self {
            Kind::Help { .. } => vec![],
            Kind::RunPodDryRun { via_kubectl: false } => {
                vec![Target::WallRatioAtMost(0.1), Target::NoRequests]
            }
            Kind::RunPodDryRun { via_kubectl: true } => vec![Target::NoRequests],
            Kind::RunPodCreate => vec![Target::PostsExactly(1)],
            Kind::CreateFile { objects } => {
                let mut targets = vec![Target::RequestsAtMost {
                    objects: u64::from(objects),
                    slack: CREATE_FILE_SLACK,
                }];
                if objects >= 500 {
                    targets.insert(0, Target::WallRatioAtMost(0.2));
                }
                targets
            }
            Kind::RollingUpdate { replicas: 10 } => vec![Target::WallRatioAtMost(1.5)],
            Kind::RollingUpdate { .. } => vec![],
            Kind::CreateFileWait { deployments } => vec![Target::RequestsAtMost {
                objects: u64::from(deployments),
                slack: CREATE_FILE_WAIT_SLACK,
            }],
        }
    }

    /// For the cost-growth chart.
    pub fn series(&self) -> Option<Series> {
        match *self {
            Kind::CreateFile { objects } => Some(Series {
                name: "create-file",
                size: objects,
            }),
            Kind::RollingUpdate { replicas } => Some(Series {
                name: "rolling-update",
                size: replicas,
            }),
            _ => None,
        }
    }

    /// How long one run may take before it is killed.
    pub fn timeout(&self) -> Duration {
        match *self {
            Kind::CreateFile { objects } => {
                Duration::from_secs(20) + Duration::from_millis(25) * objects
            }
            Kind::RollingUpdate { replicas } => {
                Duration::from_secs(30) + Duration::from_secs(3) * replicas
            }
            Kind::CreateFileWait { deployments } => {
                Duration::from_secs(60) + Duration::from_secs(2) * deployments
            }
            _ => Duration::from_secs(60),
        }
    }
}

/// kubectl 1.17's updater with `maxSurge` and `maxUnavailable` as absolute numbers:
/// each step scales the new controller up by at most surge + unavailable and then
/// waits for its pods to become ready before the old one can go down. With pods ready
/// exactly `ready_ms` after they start and no API latency, the update takes one
/// readiness delay per scale-up step. Returns (steps, seconds).
pub fn ideal_rolling_update(
    replicas: u32,
    surge: u32,
    unavailable: u32,
    ready_ms: u64,
) -> (u32, f64) {
    let per_step = (surge + unavailable).max(1);
    let steps = replicas.div_ceil(per_step);
    (steps, f64::from(steps) * ready_ms as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_names_are_unique_and_valid_in_namespaces() {
        let cases = all();
        let mut names: Vec<_> = cases.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), cases.len());
        for name in names {
            // `kb-<case>-<a|b><run>` must be a DNS label (≤ 63, lowercase, digits, '-').
            assert!(name.len() + 8 <= 63, "{name}");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            );
        }
    }

    #[test]
    fn far_cases_are_listed_with_their_round_trip() {
        let cases = default_set();
        let far: Vec<_> = cases.iter().filter(|c| c.rtt_ms > 0).collect();
        assert_eq!(
            far.iter()
                .map(|c| (c.name.as_str(), c.rtt_ms))
                .collect::<Vec<_>>(),
            vec![
                ("run-pod-create-25ms", 25),
                ("create-file-500-25ms", 25),
                ("create-file-500-100ms", 100),
                ("rolling-update-10-25ms", 25)
            ]
        );
        let cf = far[1];
        assert_eq!(
            cf.targets()[0],
            Target::WallRatioAtMost(FAR_WALL_RATIO),
            "20× kubectl at 25 ms"
        );
        // At 100 ms: 1.2× the limit, (2 + 16) × 100 ms; no wall ratio.
        assert_eq!(
            far[2].targets()[0],
            Target::RttBoundAtMost {
                ratio: RTT_BOUND_RATIO,
                bound: 1.8
            }
        );
        assert!(
            !far[2]
                .targets()
                .iter()
                .any(|t| matches!(t, Target::WallRatioAtMost(_)))
        );
        // kubectl's 50 s runs: once.
        assert_eq!(far[2].kubectl_runs(5).0, 1);
        assert_eq!(cf.kubectl_runs(5), (5, None));
        assert_eq!(far[3].targets(), vec![]);
        // The same kind without latency keeps its own target.
        let near = cases.iter().find(|c| c.name == "create-file-500").unwrap();
        assert_eq!(near.targets()[0], Target::WallRatioAtMost(0.2));
    }

    #[test]
    fn throttled_cases_ask_for_each_object_once_within_1_5x_of_kubectl() {
        let cases = default_set();
        let throttled: Vec<_> = cases.iter().filter(|c| c.throttled).collect();
        assert_eq!(
            throttled
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>(),
            vec!["create-file-500-throttled", "create-file-5000-throttled"]
        );
        for case in throttled {
            let Kind::CreateFile { objects } = case.kind else {
                panic!("{}", case.name)
            };
            assert_eq!(case.rtt_ms, 0);
            assert_eq!(
                case.targets(),
                vec![
                    Target::WallRatioAtMost(THROTTLED_WALL_RATIO),
                    Target::CreatedExactly(u64::from(objects))
                ]
            );
        }
        // The far create-file case also asks for 1.2× its RTT-bound limit.
        let far = cases
            .iter()
            .find(|c| c.name == "create-file-500-25ms")
            .unwrap();
        assert_eq!(
            far.targets()[1],
            Target::RttBoundAtMost {
                ratio: RTT_BOUND_RATIO,
                bound: 0.45
            }
        );
    }

    #[test]
    fn the_rtt_bound_is_handshakes_plus_rounds_of_requests() {
        let rtt = Duration::from_millis(25);
        // 500 creates, 32 at a time: 16 rounds, plus 2 handshake round trips.
        assert_eq!(rtt_bound(500, 32, rtt), Duration::from_millis(25 * 18));
        assert_eq!(rtt_bound(1, 32, rtt), Duration::from_millis(75));
        // One at a time, as kubectl: one round trip per object.
        assert_eq!(rtt_bound(500, 1, rtt), Duration::from_millis(25 * 502));
        assert_eq!(rtt_bound(10, 0, rtt), rtt_bound(10, 1, rtt));
        let far = all()
            .into_iter()
            .find(|c| c.name == "create-file-500-25ms")
            .unwrap();
        assert_eq!(far.rtt_bound(32), Some(Duration::from_millis(450)));
        let near = all()
            .into_iter()
            .find(|c| c.name == "create-file-500")
            .unwrap();
        assert_eq!(near.rtt_bound(32), None);
    }

    #[test]
    fn ideal_rolling_update_is_one_readiness_delay_per_step() {
        assert_eq!(ideal_rolling_update(10, 1, 0, 300), (10, 3.0));
        assert_eq!(ideal_rolling_update(3, 1, 0, 300), (3, 0.9));
        assert_eq!(ideal_rolling_update(10, 2, 1, 300), (4, 1.2));
        // A zero surge and unavailability cannot make progress in 1.17; count one per step.
        assert_eq!(ideal_rolling_update(2, 0, 0, 100), (2, 0.2));
    }

    #[test]
    fn commands_are_the_ones_users_type() {
        let plugin_path = OsString::from("/p:/usr/bin");
        let env = Env {
            bin_dir: Path::new("/rel"),
            kubectl: Path::new("/usr/bin/kubectl"),
            plugin_path: &plugin_path,
        };
        let run = RunCtx {
            namespace: "kb-x-a1",
            manifests: Some(Path::new("/m")),
        };
        let dry = Kind::RunPodDryRun { via_kubectl: false };
        assert_eq!(
            dry.ours(&env, &run).display,
            "kubectl-run_pod bench --image=nginx --dry-run=client -o yaml"
        );
        assert_eq!(
            dry.theirs(&env, &run).unwrap().display,
            "kubectl run bench --image=nginx --dry-run=client -o yaml"
        );
        let via = Kind::RunPodDryRun { via_kubectl: true }.ours(&env, &run);
        assert_eq!(via.program, Path::new("/usr/bin/kubectl"));
        assert_eq!(via.path, Some(plugin_path.clone()));
        let cf = Kind::CreateFile { objects: 500 };
        assert_eq!(
            cf.ours(&env, &run).display,
            "kubectl-create_file -f /m -n kb-x-a1"
        );
        assert_eq!(
            cf.theirs(&env, &run).unwrap().display,
            "kubectl create -f /m -n kb-x-a1"
        );
        assert_eq!(
            cf.ours(&env, &run).program,
            Path::new("/rel/kubectl-create_file")
        );
        let wait = Kind::CreateFileWait { deployments: 50 };
        assert_eq!(
            wait.ours(&env, &run).display,
            "kubectl-create_file -f /m -n kb-x-a1 --wait --timeout=5m"
        );
        let script = wait.theirs(&env, &run).unwrap();
        assert_eq!(script.program, Path::new("/bin/sh"));
        assert_eq!(
            script.args[2..],
            ["sh", "/usr/bin/kubectl", "/m", "kb-x-a1"]
        );
        let ru = Kind::RollingUpdate { replicas: 10 };
        assert!(ru.theirs(&env, &run).is_none());
        assert_eq!(ru.ideal().unwrap().0, 10.0);
        assert_eq!(ru.targets(), vec![Target::WallRatioAtMost(1.5)]);
    }

    #[test]
    fn warm_ups_are_small_versions_of_the_same_case() {
        assert_eq!(
            Kind::CreateFile { objects: 5000 }.warm_up(),
            Kind::CreateFile { objects: 50 }
        );
        assert_eq!(
            Kind::CreateFile { objects: 20 }.warm_up(),
            Kind::CreateFile { objects: 20 }
        );
        assert_eq!(
            Kind::RollingUpdate { replicas: 30 }.warm_up(),
            Kind::RollingUpdate { replicas: 3 }
        );
        assert_eq!(Kind::RunPodCreate.warm_up(), Kind::RunPodCreate);
    }
}
