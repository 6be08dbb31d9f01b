//! The report's formatting and layout, on hand-made results.

use super::*;
use crate::model::{BinarySize, Cache, Cell, Link, Requests, Sample, Series, Target, Traffic};

fn sample(wall: f64, rss_kib: u64, requests: Option<(&str, u64)>) -> Sample {
    Sample {
        wall,
        cpu: wall / 2.0,
        max_rss_kib: rss_kib,
        requests: requests.map(|(k, n)| Requests {
            total: n,
            by_kind: [(k.to_string(), n)].into_iter().collect(),
            ..Requests::default()
        }),
        traffic: None,
        cache_bytes: None,
    }
}

fn side(command: &str, walls: &[f64], rss: u64, requests: Option<(&str, u64)>) -> Side {
    Side {
        command: command.into(),
        samples: walls.iter().map(|w| sample(*w, rss, requests)).collect(),
    }
}

fn report() -> Report {
    Report {
        started: "2026-11-22 01:40 UTC".into(),
        environment: vec![("kubectl".into(), "v1.32.4".into())],
        runs: 5,
        matrix_runs: 3,
        cases: vec![
            CaseResult {
                name: "run-pod-dry-run".into(),
                title: "dry run".into(),
                series: None,
                outcome: Outcome::Measured {
                    ours: side("kubectl-run_pod bench", &[0.004, 0.005, 0.006], 4096, Some(("get /api", 0))),
                    theirs: Baseline::Kubectl(side("kubectl run bench", &[0.050, 0.054, 0.058], 40960, Some(("get /api", 0)))),
                },
                targets: vec![Target::WallRatioAtMost(0.1), Target::NoRequests],
                ceiling: None,
                notes: vec![],
                seconds: 2.0,
                link: Link::default(),
                cell: None,
                size: None,
                kubectl_fewer: None,
            },
            CaseResult {
                name: "create-file-500".into(),
                title: "500 ConfigMaps".into(),
                series: Some(Series { name: "create-file", size: 500 }),
                outcome: Outcome::Skipped("plugin not implemented (exit 1 / error: kubectl create-file is not implemented yet)".into()),
                targets: vec![Target::WallRatioAtMost(0.2)],
                ceiling: Some(0.21),
                notes: vec![],
                seconds: 0.5,
                link: Link::default(),
                cell: None,
                size: None,
                kubectl_fewer: None,
            },
            CaseResult {
                name: "rolling-update-10".into(),
                title: "10 replicas".into(),
                series: Some(Series { name: "rolling-update", size: 10 }),
                outcome: Outcome::Measured {
                    ours: side("kubectl-rolling_update web", &[4.0, 4.2, 4.4], 8192, Some(("patch replicationcontrollers", 40))),
                    theirs: Baseline::Ideal { wall: 3.0, how: "10 steps × 300 ms".into() },
                },
                targets: vec![Target::WallRatioAtMost(1.5)],
                ceiling: None,
                notes: vec!["pods ready 300 ms after start".into()],
                seconds: 60.0,
                link: Link::default(),
                cell: None,
                size: None,
                kubectl_fewer: None,
            },
        ],
        binaries: vec![BinarySize { name: "kubectl-run_pod".into(), bytes: 5 * 1024 * 1024 }],
        kubectl_size: Some(BinarySize { name: "kubectl (/usr/bin/kubectl)".into(), bytes: 50 * 1024 * 1024 }),
        total_seconds: 312.5,
        build_seconds: Some(95.0),
        cluster_seconds: Some(5.25),
        notes: vec!["a note".into()],
    }
}

#[test]
fn units_are_readable() {
    assert_eq!(secs(0.0042), "4.20 ms");
    assert_eq!(secs(0.0542), "54.2 ms");
    assert_eq!(secs(2.3141), "2.31 s");
    assert_eq!(kib(40960.0), "40.0 MiB");
    assert_eq!(bytes(5 * 1024 * 1024), "5.00 MiB");
    assert_eq!(ratio(0.0926), "0.093×");
    assert_eq!(ratio(0.52), "0.52×");
    assert_eq!(ratio(12.4), "12×");
}

#[test]
fn summary_rows_show_ratio_and_verdicts() {
    let md = render(&report());
    assert!(
        md.starts_with("# kubeplug vs kubectl — 2026-11-22 01:40 UTC\n"),
        "{md}"
    );
    assert!(
        md.contains("| run-pod-dry-run | 5.00 ms | 54.0 ms | **0.093×** | 0.093× | 4.0 MiB / 40.0 MiB | 0 / 0 | at least 10× faster (wall ratio ≤ 0.1): met; zero API requests: met |"),
        "{md}"
    );
    assert!(
        md.contains("| create-file-500 | skipped: plugin not implemented (exit 1 / error: kubectl create-file is not implemented yet) | | | | | | at least 5× faster (wall ratio ≤ 0.2): unknown |"),
        "{md}"
    );
    assert!(
        md.contains("| rolling-update-10 | 4.20 s | 3.00 s (ideal) | **1.40×** | — | 8.0 MiB | 40 / — | wall time within 1.5× of the baseline: met |"),
        "{md}"
    );
}

#[test]
fn sizes_growth_and_details_are_rendered() {
    let md = render(&report());
    assert!(
        md.contains("| kubectl-run_pod | 5.00 MiB | 0.10× |"),
        "{md}"
    );
    assert!(
        md.contains("| kubectl (/usr/bin/kubectl) | 50.00 MiB | 1× |"),
        "{md}"
    );
    assert!(md.contains("| release build | 95.00 s"), "{md}");
    assert!(
        md.contains("| 500 | skipped: plugin not implemented"),
        "{md}"
    );
    assert!(md.contains("| 210.0 ms |"), "ceiling shown: {md}");
    assert!(
        md.contains("| 10 | 4.20 s | 3.00 s | 1.40× | 4.0 |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| wall | 5.00 ms ±20% (4.00 ms – 6.00 ms) | 54.0 ms ±7% (50.0 ms – 58.0 ms) | 0.093× |"
        ),
        "{md}"
    );
    assert!(md.contains("Requests by ours (last run): none."), "{md}");
    assert!(
        md.contains("Requests by ours (last run): `patch replicationcontrollers` ×40."),
        "{md}"
    );
    assert!(md.contains("- ideal: 3.00 s (10 steps × 300 ms)"), "{md}");
    assert!(md.contains("**Skipped: plugin not implemented"), "{md}");
    assert!(md.contains("- pods ready 300 ms after start"), "{md}");
    assert!(md.contains("\n## Notes\n\n- a note\n"), "{md}");
    assert!(!md.contains("Fewer than 5 runs"), "{md}");
}

#[test]
fn time_spent_adds_up_to_the_whole() {
    let md = render(&report());
    for row in [
        "| release build | 95.00 s |",
        "| cluster start, incl. its supervisor's debug build (during the release build) | 5.25 s |",
        "| rolling-update-10 (set-up, warm-up, runs, counting, clean-up) | 60.00 s |",
        // 312.5 - 95 - 0 (the cluster started within the build) - 62.5 in the cases
        "| everything else (launcher, report, chart, cluster stop) | 155.00 s |",
        "| **whole benchmark** | **312.50 s** |",
    ] {
        assert!(md.contains(row), "{row} missing in:\n{md}");
    }
    let mut alone = report();
    alone.build_seconds = None;
    let md = render(&alone);
    assert!(
        md.contains("| cluster start, incl. its supervisor's debug build | 5.25 s |"),
        "{md}"
    );
    assert!(
        md.contains("| everything else (launcher, report, chart, cluster stop) | 244.75 s |"),
        "{md}"
    );
}

#[test]
fn few_runs_are_flagged() {
    let mut r = report();
    r.runs = 2;
    assert!(render(&r).contains("Fewer than 5 runs per command"));
}

#[test]
fn memory_growth_compares_smallest_and_largest_measured_sizes() {
    let case = |size: u32, rss: u64| CaseResult {
        name: format!("create-file-{size}"),
        title: String::new(),
        series: Some(Series {
            name: "create-file",
            size,
        }),
        outcome: Outcome::Measured {
            ours: side("ours", &[1.0], rss, None),
            theirs: Baseline::Kubectl(side("kubectl", &[2.0], rss * 4, None)),
        },
        targets: vec![],
        ceiling: None,
        notes: vec![],
        seconds: 1.0,
        link: Link::default(),
        cell: None,
        size: None,
        kubectl_fewer: None,
    };
    let cases = vec![case(5000, 15_000), case(50, 10_000), case(500, 11_000)];
    assert_eq!(memory_growth(&cases, "create-file"), Some((50, 5000, 1.5)));
    assert_eq!(memory_growth(&cases[..1], "create-file"), None);
    assert_eq!(memory_growth(&cases, "rolling-update"), None);
}

/// create-file-500 behind a 25 ms round trip, within 1.2× of its RTT-bound limit.
fn far_case() -> CaseResult {
    CaseResult {
        name: "create-file-500-25ms".into(),
        title: "500 ConfigMaps, 25 ms".into(),
        series: None,
        outcome: Outcome::Measured {
            ours: side(
                "kubectl-create_file",
                &[0.50, 0.54, 0.60],
                8192,
                Some(("create configmaps", 500)),
            ),
            theirs: Baseline::Kubectl(side(
                "kubectl create",
                &[14.0, 15.0, 16.0],
                40960,
                Some(("create configmaps", 506)),
            )),
        },
        targets: vec![Target::RttBoundAtMost {
            ratio: 1.2,
            bound: 0.45,
        }],
        ceiling: None,
        notes: vec![],
        seconds: 40.0,
        link: Link {
            rtt: 0.025,
            bound_ours: Some(0.45),
            bound_theirs: Some(12.55),
            throttled: false,
        },
        cell: None,
        size: None,
        kubectl_fewer: None,
    }
}

/// create-file-500 against the throttling server: 20 answers of 429, 500 creates.
fn throttled_case() -> CaseResult {
    let mut throttled = side(
        "kubectl-create_file",
        &[3.0, 3.2, 3.4],
        8192,
        Some(("create configmaps", 520)),
    );
    for s in &mut throttled.samples {
        let r = s.requests.as_mut().unwrap();
        r.throttled = 20;
        r.created = 500;
    }
    CaseResult {
        name: "create-file-500-throttled".into(),
        title: "500 ConfigMaps, throttled".into(),
        series: None,
        outcome: Outcome::Measured {
            ours: throttled,
            theirs: Baseline::Kubectl(side(
                "kubectl create",
                &[2.5, 2.6, 2.7],
                40960,
                Some(("create configmaps", 506)),
            )),
        },
        targets: vec![Target::WallRatioAtMost(1.5), Target::CreatedExactly(500)],
        ceiling: None,
        notes: vec![],
        seconds: 40.0,
        link: Link {
            throttled: true,
            ..Link::default()
        },
        cell: None,
        size: None,
        kubectl_fewer: None,
    }
}

#[test]
fn far_and_throttled_cases_show_round_trips_and_the_rtt_bound() {
    let mut r = report();
    r.cases.push(far_case());
    r.cases.push(throttled_case());
    let md = render(&r);
    assert!(md.contains("## Far away and throttled"), "{md}");
    // 540 ms is 21.6 round trips of 25 ms, 1.20× the 450 ms limit.
    assert!(
        md.contains(
            "| create-file-500-25ms | ours | 540.0 ms | 500 | 0 | 0 | 21.6 | 450.0 ms | 1.20× |"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "| create-file-500-25ms | kubectl | 15.00 s | 506 | 0 | 0 | 600.0 | 12.55 s | 1.20× |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| create-file-500-throttled | ours | 3.20 s | 520 | 20 | 500 | — | — | — |"),
        "{md}"
    );
    assert!(
        md.contains("wall time within 1.2× of the RTT-bound limit (0.450 s): met"),
        "{md}"
    );
    assert!(
        md.contains("every object created exactly once (500 creates applied per run): met"),
        "{md}"
    );
    // Cases on a plain link are not in that table.
    assert!(!md.contains("| run-pod-dry-run | ours |"), "{md}");
}

/// A matrix cell of create-file-500 with every run's traffic and cache counted.
fn cell(rtt_ms: u32, cache: Cache, ours_wall: f64, theirs: Option<f64>) -> CaseResult {
    let traffic = |connections, received| Traffic {
        connections,
        received,
        sent: 1,
    };
    let mut ours = side(
        "kubectl-create_file -f m",
        &[ours_wall],
        10240,
        Some(("create configmaps", 502)),
    );
    ours.samples[0].traffic = Some(traffic(1, 300 * 1024));
    let mut kubectl = side(
        "kubectl create -f m",
        theirs.as_slice(),
        40960,
        Some(("create configmaps", 505)),
    );
    for s in &mut kubectl.samples {
        s.traffic = Some(traffic(2, 3 * 1024 * 1024));
    }
    if cache == Cache::Cold {
        ours.samples[0].cache_bytes = Some(20 * 1024);
        for s in &mut kubectl.samples {
            s.cache_bytes = Some(5 * 1024 * 1024);
        }
    }
    let rtt = f64::from(rtt_ms) / 1000.0;
    CaseResult {
        name: format!("create-file-500-{rtt_ms}ms-{}", cache.word()),
        title: "500".into(),
        series: None,
        outcome: Outcome::Measured {
            ours,
            theirs: Baseline::Kubectl(kubectl),
        },
        targets: if rtt_ms == 25 {
            vec![Target::RttBoundAtMost {
                ratio: 1.2,
                bound: 0.45,
            }]
        } else {
            vec![]
        },
        ceiling: None,
        notes: vec![],
        seconds: 10.0,
        link: Link {
            rtt,
            bound_ours: (rtt_ms > 0).then_some(18.0 * rtt),
            bound_theirs: (rtt_ms > 0).then_some(502.0 * rtt),
            throttled: false,
        },
        cell: Some(Cell {
            base: "create-file-500",
            rtt_ms,
            cache,
        }),
        size: Some(500),
        kubectl_fewer: theirs
            .is_none()
            .then(|| "kubectl is not run here: reasons".to_string()),
    }
}

#[test]
fn the_matrix_table_shows_round_trips_bytes_connections_and_targets() {
    let mut r = report();
    r.cases = vec![
        cell(0, Cache::Warm, 0.3, Some(1.1)),
        cell(25, Cache::Cold, 0.6, Some(16.0)),
        cell(25, Cache::Warm, 0.5, Some(15.0)),
        cell(100, Cache::Warm, 2.0, None),
    ];
    let md = render(&r);
    assert!(
        md.contains("## Matrix: round trip × cold or warm caches"),
        "{md}"
    );
    assert!(
        md.contains("| runs in the matrix | 3 measured per command"),
        "{md}"
    );
    // At 0 ms: no round trips, but bytes and connections.
    assert!(
        md.contains("| create-file-500 | 0 ms | warm | 300.0 ms | 1.10 s | 0.27× | 502 / 505 | — | — | — | 300.0 KiB / 3.00 MiB | 1 / 2 | — |"),
        "{md}"
    );
    // 500 ms at 25 ms: 20 round trips, 8 of them added over the 0 ms cell's 300 ms.
    assert!(
        md.contains("| create-file-500 | 25 ms | warm | 500.0 ms | 15.00 s | 0.033× | 502 / 505 | 20.0 / 8.0 | 450.0 ms (18 RTT) | 1.11× | 300.0 KiB / 3.00 MiB | 1 / 2 | — |"),
        "{md}"
    );
    // A cold cell without a 0 ms cold cell: no "added"; its cache sizes.
    assert!(
        md.contains("| create-file-500 | 25 ms | cold | 600.0 ms | 16.00 s | 0.037× | 502 / 505 | 24.0 / — | 450.0 ms (18 RTT) | 1.33× | 300.0 KiB / 3.00 MiB | 1 / 2 | 20.0 KiB / 5.00 MiB |"),
        "{md}"
    );
    // kubectl not run: its limit instead, and why.
    assert!(
        md.contains("| create-file-500 | 100 ms | warm | 2.00 s | not run (≥ 50.20 s, its limit) | — | 502 / — |"),
        "{md}"
    );
    assert!(
        md.contains("- create-file-500-100ms-warm: kubectl is not run here: reasons"),
        "{md}"
    );
    assert!(
        md.contains(
            "| create-file-500-100ms-warm | 2.00 s | not run | **—** | — | 10.0 MiB | 502 / — |"
        ),
        "{md}"
    );
    // Every target, met or missed, with the measured number.
    assert!(
        md.contains("- create-file-500-25ms-warm: wall time within 1.2× of the RTT-bound limit (0.450 s) — met (1.11× the limit)"),
        "{md}"
    );
    assert!(
        md.contains("- create-file-500-25ms-cold: wall time within 1.2× of the RTT-bound limit (0.450 s) — **MISSED** (1.33× the limit > 1.2×)"),
        "{md}"
    );
    assert!(
        md.contains("- create-file-500: cold first run within 1.5× the warm run at 25 ms — met (cold 0.600 s / warm 0.500 s = 1.20×)"),
        "{md}"
    );
    assert!(
        md.contains("- `kubectl-run_pod` at most 5 MiB — met (5.00 MiB)"),
        "{md}"
    );
    assert!(
        md.contains("| kubectl-run_pod | 5.00 MiB | 0.10× | met |"),
        "{md}"
    );
    // Matrix cells stay out of the far-away table.
    assert!(!md.contains("## Far away and throttled"), "{md}");
}
