//! The matrix of round trips and caches: a few cases at 0, 25 and 100 ms round trip, each with cold
//! client caches (a first run on a new machine) and warm ones, ours against kubectl,
//! and the targets set for its cells.
//!
//! A cell is named `<case>-<rtt>ms-<cold|warm>` (`create-file-500-25ms-cold`). Every
//! cell goes through the latency proxy, at 0 ms too, so that connections and bytes
//! received are counted the same way in all of them.
//!
//! kubectl sends its creates one at a time, so its far cells cost one round trip per
//! object: 5,000 ConfigMaps at 100 ms are more than 8 minutes per run. The matrix has
//! to fit in about 15 minutes on a 2-core machine, so kubectl runs fewer times where
//! its own RTT-bound limit (a lower bound on its time) is long: see [`kubectl_runs`].

use std::time::Duration;

use super::{CREATE_FILE_SLACK, Case, Kind};
use crate::model::{Cache, Cell, Target};

/// The round trips of the matrix, in milliseconds.
pub const RTTS_MS: [u32; 3] = [0, 25, 100];

/// The matrix's cases: (name, what it does, kind).
pub const KINDS: [(&str, &str, Kind); 5] = [
    (
        "run-pod-create",
        "run-pod real create vs `kubectl run`",
        Kind::RunPodCreate,
    ),
    (
        "create-file-50",
        "create-file: 50 ConfigMaps vs `kubectl create -f`",
        Kind::CreateFile { objects: 50 },
    ),
    (
        "create-file-500",
        "create-file: 500 ConfigMaps vs `kubectl create -f`",
        Kind::CreateFile { objects: 500 },
    ),
    (
        "create-file-5000",
        "create-file: 5,000 ConfigMaps vs `kubectl create -f`",
        Kind::CreateFile { objects: 5000 },
    ),
    (
        "rolling-update-10",
        "rolling-update of 10 replicas vs the ideal (without latency)",
        Kind::RollingUpdate { replicas: 10 },
    ),
];

/// Measured runs per command in a cell unless `--runs` says otherwise (30 cells at
/// the default set's 5 would not fit the matrix's time).
pub const DEFAULT_RUNS: usize = 3;

/// kubectl's RTT-bound limit up to which it runs as often as ours.
pub const KUBECTL_ALL_RUNS_UP_TO: Duration = Duration::from_secs(15);
/// … up to which it runs once, in the warm cell only; beyond, not at all.
pub const KUBECTL_ONE_RUN_UP_TO: Duration = Duration::from_secs(100);

/// The matrix's targets.
/// create-file 500 at 25 and 100 ms, warm and cold: within 1.2× the RTT-bound limit.
pub const CREATE_FILE_BOUND_RATIO: f64 = 1.2;
/// create-file 500 at 25 ms: at least 20× faster than kubectl.
pub const CREATE_FILE_FAR_WALL_RATIO: f64 = 0.05;
/// run-pod create at 25 ms: within 1.1× the limit (one POST over one connection).
pub const RUN_POD_BOUND_RATIO: f64 = 1.1;
/// rolling-update 10 within 1.1× the ideal on loopback…
pub const ROLLING_UPDATE_LOOPBACK_RATIO: f64 = 1.1;
/// … and 1.3× at 25 ms (the same ideal, which has no API latency).
pub const ROLLING_UPDATE_FAR_RATIO: f64 = 1.3;

/// A cell's name: `<case>-<rtt>ms-<cold|warm>`.
pub fn name(base: &str, rtt_ms: u32, cache: Cache) -> String {
    format!("{base}-{rtt_ms}ms-{}", cache.word())
}

/// Every cell: per case, per round trip, cold then warm.
pub fn cases() -> Vec<Case> {
    let mut cells = Vec::new();
    for (base, what, kind) in KINDS {
        for rtt_ms in RTTS_MS {
            for cache in [Cache::Cold, Cache::Warm] {
                let link = if rtt_ms == 0 {
                    "loopback (a 0 ms proxy)".to_string()
                } else {
                    format!("{rtt_ms} ms round trip")
                };
                cells.push(Case {
                    name: name(base, rtt_ms, cache),
                    title: format!("{what}, {link}, {} caches (matrix)", cache.word()),
                    rtt_ms,
                    throttled: false,
                    cell: Some(Cell {
                        base,
                        rtt_ms,
                        cache,
                    }),
                    kind,
                });
            }
        }
    }
    cells
}

/// The targets of one cell (`bound`: our side's RTT-bound limit at its round trip).
pub fn targets(cell: Cell, kind: Kind, bound: Option<Duration>) -> Vec<Target> {
    let bound_at_most = |ratio: f64| {
        bound.map(|b| Target::RttBoundAtMost {
            ratio,
            bound: b.as_secs_f64(),
        })
    };
    match (kind, cell.rtt_ms) {
        (Kind::RunPodCreate, 25) => [Some(Target::PostsExactly(1))]
            .into_iter()
            .chain([
                bound_at_most(RUN_POD_BOUND_RATIO),
                Some(Target::ConnectionsAtMost(1)),
            ])
            .flatten()
            .collect(),
        (Kind::RunPodCreate, _) => vec![Target::PostsExactly(1)],
        (Kind::CreateFile { objects: 500 }, rtt) if rtt > 0 => {
            let mut t: Vec<Target> = Vec::new();
            if rtt == 25 {
                t.push(Target::WallRatioAtMost(CREATE_FILE_FAR_WALL_RATIO));
            }
            t.extend(bound_at_most(CREATE_FILE_BOUND_RATIO));
            t.push(requests_at_most(500));
            t
        }
        (Kind::CreateFile { objects }, _) => vec![requests_at_most(objects)],
        (Kind::RollingUpdate { .. }, 0) => {
            vec![Target::WallRatioAtMost(ROLLING_UPDATE_LOOPBACK_RATIO)]
        }
        (Kind::RollingUpdate { .. }, 25) => vec![Target::WallRatioAtMost(ROLLING_UPDATE_FAR_RATIO)],
        _ => vec![],
    }
}

fn requests_at_most(objects: u32) -> Target {
    Target::RequestsAtMost {
        objects: u64::from(objects),
        slack: CREATE_FILE_SLACK,
    }
}

/// kubectl's measured runs in a cell whose kubectl side has the RTT-bound limit
/// `limit` (one request at a time), when ours has `runs`; with the reason when
/// fewer. Up to [`KUBECTL_ALL_RUNS_UP_TO`]: as many as ours. Up to
/// [`KUBECTL_ONE_RUN_UP_TO`]: one, in the warm cell only (cold and warm differ by a
/// few discovery round trips, under 1% of such a run). Beyond: none; the report
/// gives kubectl's limit instead, which its time can only exceed.
pub fn kubectl_runs(cell: Cell, limit: Option<Duration>, runs: usize) -> (usize, Option<String>) {
    let Some(limit) = limit else {
        return (runs, None);
    };
    let secs = limit.as_secs_f64();
    if limit <= KUBECTL_ALL_RUNS_UP_TO {
        (runs, None)
    } else if limit <= KUBECTL_ONE_RUN_UP_TO {
        match cell.cache {
            Cache::Warm => (
                runs.min(1),
                (runs > 1).then(|| {
                    format!(
                        "kubectl runs once here: its creates go one at a time, and its RTT-bound limit is \
                         {secs:.1} s per run (the matrix must fit in about 15 minutes, the default set in about 10)"
                    )
                }),
            ),
            Cache::Cold => (
                0,
                Some(format!(
                    "kubectl is not run here: its RTT-bound limit is {secs:.1} s per run; it runs once in the \
                     warm cell, and cold differs from warm by a few discovery round trips"
                )),
            ),
        }
    } else {
        (
            0,
            Some(format!(
                "kubectl is not run here: its creates go one at a time, so a run takes at least its \
                 RTT-bound limit, {secs:.1} s"
            )),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{IN_FLIGHT, all, default_set};

    fn cell(name: &str) -> Case {
        all()
            .into_iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no case {name}"))
    }

    #[test]
    fn the_matrix_has_every_case_at_every_rtt_cold_and_warm() {
        let cells = cases();
        assert_eq!(cells.len(), KINDS.len() * RTTS_MS.len() * 2);
        let names: Vec<&str> = cells.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            &names[..6],
            [
                "run-pod-create-0ms-cold",
                "run-pod-create-0ms-warm",
                "run-pod-create-25ms-cold",
                "run-pod-create-25ms-warm",
                "run-pod-create-100ms-cold",
                "run-pod-create-100ms-warm"
            ]
        );
        assert!(names.contains(&"create-file-5000-100ms-cold"));
        assert!(names.contains(&"rolling-update-10-25ms-warm"));
        for c in &cells {
            let cell = c.cell.expect("a cell");
            assert_eq!(c.name, name(cell.base, cell.rtt_ms, cell.cache));
            assert_eq!(c.rtt_ms, cell.rtt_ms);
            assert!(c.proxied(), "{}: every cell counts its bytes", c.name);
            assert_eq!(c.cache(), cell.cache);
        }
        // Names stay unique across the default set and the matrix.
        let mut all_names: Vec<String> = all().into_iter().map(|c| c.name).collect();
        let n = all_names.len();
        all_names.sort_unstable();
        all_names.dedup();
        assert_eq!(all_names.len(), n);
        // The default set is unchanged by the matrix: loopback cases stay direct.
        assert!(default_set().iter().all(|c| c.cell.is_none()));
        let direct = default_set()
            .into_iter()
            .find(|c| c.name == "create-file-500")
            .unwrap();
        assert!(!direct.proxied());
        assert_eq!(direct.cache(), Cache::Warm);
    }

    #[test]
    fn each_cell_carries_issue_32s_targets() {
        let bound = |ms: u64| Target::RttBoundAtMost {
            ratio: CREATE_FILE_BOUND_RATIO,
            bound: ms as f64 / 1000.0,
        };
        // 500 creates, 32 in flight: 16 rounds + 2 handshakes.
        for cache in ["cold", "warm"] {
            assert_eq!(
                cell(&format!("create-file-500-25ms-{cache}")).targets(),
                vec![
                    Target::WallRatioAtMost(0.05),
                    bound(450),
                    requests_at_most(500)
                ]
            );
            assert_eq!(
                cell(&format!("create-file-500-100ms-{cache}")).targets(),
                vec![bound(1800), requests_at_most(500)]
            );
        }
        assert_eq!(
            cell("create-file-500-0ms-warm").targets(),
            vec![requests_at_most(500)]
        );
        assert_eq!(
            cell("run-pod-create-25ms-cold").targets(),
            vec![
                Target::PostsExactly(1),
                Target::RttBoundAtMost {
                    ratio: 1.1,
                    bound: 0.075
                },
                Target::ConnectionsAtMost(1)
            ]
        );
        assert_eq!(
            cell("run-pod-create-100ms-warm").targets(),
            vec![Target::PostsExactly(1)]
        );
        assert_eq!(
            cell("rolling-update-10-0ms-cold").targets(),
            vec![Target::WallRatioAtMost(1.1)]
        );
        assert_eq!(
            cell("rolling-update-10-25ms-warm").targets(),
            vec![Target::WallRatioAtMost(1.3)]
        );
        assert_eq!(cell("rolling-update-10-100ms-warm").targets(), vec![]);
        // The RTT-bound limit of the rolling update is not modelled.
        assert_eq!(
            cell("rolling-update-10-25ms-warm").rtt_bound(IN_FLIGHT),
            None
        );
    }

    #[test]
    fn kubectl_runs_fewer_times_where_its_creates_take_minutes() {
        let plan = |name: &str| {
            let c = cell(name);
            c.kubectl_runs(3)
        };
        // Limits, one at a time: 500 at 25 ms 12.55 s; 500 at 100 ms 50.2 s;
        // 5,000 at 25 ms 125.05 s.
        assert_eq!(plan("create-file-500-25ms-cold"), (3, None));
        assert_eq!(plan("create-file-50-100ms-cold"), (3, None));
        let (n, why) = plan("create-file-500-100ms-warm");
        assert_eq!(n, 1);
        assert!(why.unwrap().contains("50.2 s"));
        let (n, why) = plan("create-file-500-100ms-cold");
        assert_eq!(n, 0);
        assert!(why.unwrap().contains("runs once in the warm cell"));
        for name in ["create-file-5000-25ms-warm", "create-file-5000-100ms-cold"] {
            let (n, why) = plan(name);
            assert_eq!(n, 0, "{name}");
            assert!(why.unwrap().contains("not run"), "{name}");
        }
        // With one run asked for, once is not "fewer".
        assert_eq!(
            cell("create-file-500-100ms-warm").kubectl_runs(1),
            (1, None)
        );
        // Loopback cells and the default set: as many as ours.
        assert_eq!(plan("create-file-5000-0ms-cold"), (3, None));
        assert_eq!(
            default_set()[0].kubectl_runs(5),
            (5, None),
            "the default set is never cut"
        );
    }

    #[test]
    fn far_cells_get_time_for_kubectls_round_trips() {
        let near = cell("create-file-500-0ms-warm");
        let far = cell("create-file-500-100ms-warm");
        assert_eq!(near.timeout(), near.kind.timeout());
        // 550 sequential round trips of 100 ms, twice over.
        assert_eq!(far.timeout(), far.kind.timeout() + Duration::from_secs(110));
    }
}
