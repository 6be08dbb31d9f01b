//! `results.md`: the benchmark report, rendered from a [`Report`] by pure functions.

use std::fmt::Write as _;

use super::model::{
    self, Baseline, Cache, CaseResult, Cell, Outcome, Report, Requests, Side, Traffic, Verdict,
};
use super::stats::{self, Summary};

/// `0.85 ms`, `54.2 ms`, `2.31 s`.
pub fn secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 0.01 {
        format!("{:.1} ms", s * 1000.0)
    } else {
        format!("{:.2} ms", s * 1000.0)
    }
}

/// KiB → `12.3 MiB`.
pub fn kib(k: f64) -> String {
    format!("{:.1} MiB", k / 1024.0)
}

/// Bytes → `4.92 MiB`.
pub fn bytes(b: u64) -> String {
    format!("{:.2} MiB", b as f64 / 1024.0 / 1024.0)
}

/// `0.083×`, `0.52×`, `12×`.
pub fn ratio(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}×")
    } else if r >= 0.1 {
        format!("{r:.2}×")
    } else {
        format!("{r:.3}×")
    }
}

fn count(c: f64) -> String {
    if c.fract() == 0.0 {
        format!("{c:.0}")
    } else {
        format!("{c:.1}")
    }
}

/// `54.2 ms ±3% (52.1–57.9 ms)` with the unit formatter `f`.
fn spread(s: &Summary, f: fn(f64) -> String) -> String {
    format!(
        "{} ±{:.0}% ({} – {})",
        f(s.median),
        s.relative_mad() * 100.0,
        f(s.min),
        f(s.max)
    )
}

fn opt_ratio(ours: Option<Summary>, theirs: Option<Summary>) -> String {
    match (ours, theirs) {
        (Some(o), Some(t)) => stats::ratio(o.median, t.median)
            .map(ratio)
            .unwrap_or_else(|| "—".into()),
        _ => "—".into(),
    }
}

fn requests_median(side: &Side) -> String {
    side.requests()
        .map(|s| count(s.median))
        .unwrap_or_else(|| "n/a".into())
}

fn verdicts(case: &CaseResult) -> String {
    let v = case.verdicts();
    if v.is_empty() {
        return "—".into();
    }
    v.iter()
        .map(|(t, v)| format!("{}: {}", t.describe(), v.symbol()))
        .collect::<Vec<_>>()
        .join("; ")
}

fn status(outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Measured { .. } => None,
        Outcome::Skipped(why) => Some(format!("skipped: {why}")),
        Outcome::Failed(why) => Some(format!("failed: {why}")),
    }
}

/// The whole `results.md`.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "# kubeplug vs kubectl — {}\n", report.started);
    let _ = writeln!(w, "| | |\n|---|---|");
    for (k, v) in &report.environment {
        let _ = writeln!(w, "| {k} | {v} |");
    }
    let has_matrix = report.cases.iter().any(|c| c.cell.is_some());
    let has_default = report.cases.iter().any(|c| c.cell.is_none());
    if has_default {
        let _ = writeln!(
            w,
            "| runs | {} measured per command, after one warm-up each, alternating ours/kubectl |",
            report.runs
        );
    }
    if has_matrix {
        let _ = writeln!(
            w,
            "| runs in the matrix | {} measured per command, after one warm-up each, alternating ours/kubectl; \
             kubectl fewer where its creates take minutes (see the matrix) |",
            report.matrix_runs
        );
    }
    if let Some(b) = report.build_seconds {
        let _ = writeln!(
            w,
            "| release build | {} (`cargo build --release` of the three plugins, within this run) |",
            secs(b)
        );
    }
    let _ = writeln!(w, "| whole benchmark | {} |", secs(report.total_seconds));
    if (has_default && report.runs < 5) || (has_matrix && report.matrix_runs < 3) {
        let _ = writeln!(
            w,
            "\n**Fewer than 5 runs per command: the spread below means little.**"
        );
    }

    summary_table(w, report);
    matrix(w, report);
    links(w, report);
    sizes(w, report);
    growth(w, report);
    time_spent(w, report);

    let _ = writeln!(w, "\n## Details\n");
    let _ = writeln!(
        w,
        "Each cell: median ±MAD (median absolute deviation, % of the median) (min – max). \
         Wall time is spawn to exit; CPU is user + system of the process (`wait4`); peak RSS \
         is `ru_maxrss`; requests are the run's events in the apiserver's audit log."
    );
    for case in &report.cases {
        details(w, case);
    }
    if !report.notes.is_empty() {
        let _ = writeln!(w, "\n## Notes\n");
        for n in &report.notes {
            let _ = writeln!(w, "- {n}");
        }
    }
    out
}

/// Where the whole run's time went: the 10-minute budget of a fresh-machine run is
/// the benchmark issue's, and this is the table that shows what to shorten.
fn time_spent(w: &mut String, report: &Report) {
    let _ = writeln!(w, "\n## Where the time went\n");
    let _ = writeln!(w, "| step | wall time |\n|---|---|");
    let build = report.build_seconds.unwrap_or(0.0);
    if let Some(b) = report.build_seconds {
        let _ = writeln!(w, "| release build | {} |", secs(b));
    }
    // The cluster starts while the build runs; only what it takes beyond the build
    // adds to the whole.
    let cluster_alone = match (report.cluster_seconds, report.build_seconds) {
        (Some(c), Some(b)) => {
            let _ = writeln!(
                w,
                "| cluster start, incl. its supervisor's debug build (during the release build) | {} |",
                secs(c)
            );
            (c - b).max(0.0)
        }
        (Some(c), None) => {
            let _ = writeln!(
                w,
                "| cluster start, incl. its supervisor's debug build | {} |",
                secs(c)
            );
            c
        }
        (None, _) => 0.0,
    };
    let mut cases = 0.0;
    for case in &report.cases {
        cases += case.seconds;
        let _ = writeln!(
            w,
            "| {} (set-up, warm-up, runs, counting, clean-up) | {} |",
            case.name,
            secs(case.seconds)
        );
    }
    let rest = (report.total_seconds - build - cluster_alone - cases).max(0.0);
    let _ = writeln!(
        w,
        "| everything else (launcher, report, chart, cluster stop) | {} |",
        secs(rest)
    );
    let _ = writeln!(
        w,
        "| **whole benchmark** | **{}** |",
        secs(report.total_seconds)
    );
}

fn summary_table(w: &mut String, report: &Report) {
    let _ = writeln!(w, "\n## Summary\n");
    let _ = writeln!(
        w,
        "| case | ours (wall) | kubectl or ideal (wall) | ratio ours/theirs | CPU ratio | peak RSS ours / theirs | requests ours / theirs | targets |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|---|---|---|");
    for case in &report.cases {
        if let Some(s) = status(&case.outcome) {
            let _ = writeln!(w, "| {} | {s} | | | | | | {} |", case.name, verdicts(case));
            continue;
        }
        let Outcome::Measured { ours, theirs } = &case.outcome else {
            continue;
        };
        let ours_wall = ours.wall().map(|s| secs(s.median)).unwrap_or_default();
        let wall_ratio = case.wall_ratio().map(ratio).unwrap_or_else(|| "—".into());
        let ours_rss = ours.rss_kib().map(|s| kib(s.median)).unwrap_or_default();
        let (theirs_wall, cpu, rss, requests) = match theirs {
            // A matrix cell where kubectl did not run (see the matrix's notes).
            Baseline::Kubectl(t) if t.samples.is_empty() => (
                "not run".into(),
                "—".into(),
                ours_rss,
                format!("{} / —", requests_median(ours)),
            ),
            Baseline::Kubectl(t) => (
                t.wall().map(|s| secs(s.median)).unwrap_or_default(),
                opt_ratio(ours.cpu(), t.cpu()),
                format!(
                    "{ours_rss} / {}",
                    t.rss_kib().map(|s| kib(s.median)).unwrap_or_default()
                ),
                format!("{} / {}", requests_median(ours), requests_median(t)),
            ),
            Baseline::Ideal { wall, .. } => (
                format!("{} (ideal)", secs(*wall)),
                "—".into(),
                ours_rss,
                format!("{} / —", requests_median(ours)),
            ),
        };
        let _ = writeln!(
            w,
            "| {} | {ours_wall} | {theirs_wall} | **{wall_ratio}** | {cpu} | {rss} | {requests} | {} |",
            case.name,
            verdicts(case)
        );
    }
}

/// Bytes → `12.3 KiB`, `4.56 MiB` (what a run received).
pub fn traffic_bytes(b: f64) -> String {
    if b >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", b / 1024.0 / 1024.0)
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

/// The matrix of round trips and caches: one row per cell, then every target of its cells and
/// those across cells, met or missed.
fn matrix(w: &mut String, report: &Report) {
    let cells: Vec<&CaseResult> = report.cases.iter().filter(|c| c.cell.is_some()).collect();
    if cells.is_empty() {
        return;
    }
    let _ = writeln!(w, "\n## Matrix: round trip × cold or warm caches\n");
    let _ = writeln!(
        w,
        "Each cell runs both sides through the loopback latency proxy (`localcluster::latency`; at 0 ms it adds \
         no delay and only counts). **Cold**: every measured run starts with a new, empty cache directory \
         (`KUBECACHEDIR`, read by kubectl and the plugins for discovery and OpenAPI), as the first run on a new \
         machine (only the client caches: the binaries stay in the page cache). **Warm**: each side's runs share one cache directory, filled by the cell's warm-up run. \
         Medians per side. Requests are counted from the audit log; bytes received (server to client, TLS \
         included) and TCP connections by the proxy. Round trips: the wall time in units of the RTT, and those \
         the RTT added (wall − the same cell's wall at 0 ms, ÷ RTT). The RTT-bound limit is the least time any \
         client needs: {} handshake round trips, then one per {} requests in flight (ours) or per request \
         (kubectl); it counts no discovery or OpenAPI round trip, cold or warm, and no time in the server or \
         the client, which the 0 ms cell shows: the round trips the RTT added are what compares with the \
         limit's. rolling-update's baseline is the ideal (one readiness delay per step, no API latency) at \
         every RTT.\n",
        super::cases::HANDSHAKE_ROUND_TRIPS,
        super::cases::IN_FLIGHT
    );
    let _ = writeln!(
        w,
        "| case | RTT | caches | ours | kubectl or ideal | ratio | requests ours / kubectl | round trips ours: wall ÷ RTT / added | RTT-bound limit (ours) | ours ÷ limit | bytes received ours / kubectl | connections ours / kubectl | cache after a cold run ours / kubectl |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for case in &cells {
        if let Some(cell) = case.cell {
            matrix_row(w, report, case, cell);
        }
    }
    per_replica(w, report, &cells);
    fewer_runs(w, &cells);
    matrix_targets(w, report, &cells);
}

/// One row of the matrix.
fn matrix_row(w: &mut String, report: &Report, case: &CaseResult, cell: Cell) {
    let opt = |v: Option<f64>, f: fn(f64) -> String| v.map(f).unwrap_or_else(|| "—".into());
    let rtt = format!("{} ms", cell.rtt_ms);
    let Outcome::Measured { ours, theirs } = &case.outcome else {
        let _ = writeln!(
            w,
            "| {} | {rtt} | {} | {} | | | | | | | | | |",
            cell.base,
            cell.cache.word(),
            status(&case.outcome).unwrap_or_default()
        );
        return;
    };
    let wall = ours.wall().map(|s| s.median);
    let kubectl = match theirs {
        Baseline::Kubectl(t) => Some(t),
        Baseline::Ideal { .. } => None,
    };
    let theirs_wall = match theirs {
        Baseline::Kubectl(t) => match t.wall() {
            Some(s) => secs(s.median),
            None => match case.link.bound_theirs {
                Some(b) => format!("not run (≥ {}, its limit)", secs(b)),
                None => "not run".into(),
            },
        },
        Baseline::Ideal { wall, .. } => format!("{} (ideal)", secs(*wall)),
    };
    let pair = |o: String, t: Option<String>| match t {
        Some(t) => format!("{o} / {t}"),
        None => format!("{o} / —"),
    };
    let requests = pair(
        opt(median_of(ours, |r| r.total), count),
        kubectl.map(|t| opt(median_of(t, |r| r.total), count)),
    );
    let bytes_in = pair(
        opt(ours.traffic(|t: &Traffic| t.received), traffic_bytes),
        kubectl.map(|t| opt(t.traffic(|t: &Traffic| t.received), traffic_bytes)),
    );
    let conns = pair(
        opt(ours.traffic(|t: &Traffic| t.connections), count),
        kubectl.map(|t| opt(t.traffic(|t: &Traffic| t.connections), count)),
    );
    let cache = if cell.cache == Cache::Cold {
        pair(
            opt(ours.cache_bytes(), traffic_bytes),
            kubectl.map(|t| opt(t.cache_bytes(), traffic_bytes)),
        )
    } else {
        "—".into()
    };
    let (trips, limit, within) = round_trips(report, case, cell, wall);
    let _ = writeln!(
        w,
        "| {} | {rtt} | {} | {} | {theirs_wall} | {} | {requests} | {trips} | {limit} | {within} | {bytes_in} | {conns} | {cache} |",
        cell.base,
        cell.cache.word(),
        opt(wall, secs),
        case.wall_ratio().map(ratio).unwrap_or_else(|| "—".into()),
    );
}

/// A cell's round trips (wall ÷ RTT, and those the RTT added), its RTT-bound limit and
/// how far above the limit it ran; dashes at 0 ms.
fn round_trips(
    report: &Report,
    case: &CaseResult,
    cell: Cell,
    wall: Option<f64>,
) -> (String, String, String) {
    if cell.rtt_ms > 0 {
        let r = f64::from(cell.rtt_ms) / 1000.0;
        let added = loopback_wall(report, case)
            .zip(wall)
            .map(|(zero, w)| format!("{:.1}", (w - zero) / r))
            .unwrap_or_else(|| "—".into());
        (
            format!(
                "{} / {added}",
                wall.map(|w| format!("{:.1}", w / r)).unwrap_or_default()
            ),
            case.link
                .bound_ours
                .map(|b| format!("{} ({:.0} RTT)", secs(b), b / r))
                .unwrap_or_else(|| "—".into()),
            match (wall, case.link.bound_ours) {
                (Some(w), Some(b)) => stats::ratio(w, b)
                    .map(|x| format!("{x:.2}×"))
                    .unwrap_or_else(|| "—".into()),
                _ => "—".into(),
            },
        )
    } else {
        ("—".into(), "—".into(), "—".into())
    }
}

/// Sequential round trips per replica moved, for the rolling update.
fn per_replica(w: &mut String, report: &Report, cells: &[&CaseResult]) {
    for case in cells {
        let Some(cell) = case.cell else { continue };
        if !cell.base.starts_with("rolling-update") || cell.rtt_ms == 0 {
            continue;
        }
        let (Outcome::Measured { ours, .. }, Some(zero)) =
            (&case.outcome, loopback_wall(report, case))
        else {
            continue;
        };
        let (Some(wall), Some(replicas)) = (ours.wall(), case.series_size()) else {
            continue;
        };
        let added = (wall.median - zero) / (f64::from(cell.rtt_ms) / 1000.0);
        let _ = writeln!(
            w,
            "\n{} at {} ms, {} caches: {added:.1} round trips added by the RTT, {:.1} per replica moved.",
            cell.base,
            cell.rtt_ms,
            cell.cache.word(),
            added / f64::from(replicas.max(1))
        );
    }
}

/// Why kubectl ran fewer times in some cells.
fn fewer_runs(w: &mut String, cells: &[&CaseResult]) {
    let notes: Vec<String> = cells
        .iter()
        .filter_map(|c| {
            c.kubectl_fewer
                .as_ref()
                .map(|why| format!("{}: {why}", c.name))
        })
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(
            w,
            "\nkubectl runs fewer times where its one-at-a-time creates would take minutes (the matrix must \
             fit in about 15 minutes on a 2-core machine):\n"
        );
        for n in notes {
            let _ = writeln!(w, "- {n}");
        }
    }
}

/// Every target of the cells and those across cells, met or missed.
fn matrix_targets(w: &mut String, report: &Report, cells: &[&CaseResult]) {
    let _ = writeln!(w, "\n### Targets of the matrix\n");
    for case in cells {
        for (t, v) in case.verdicts() {
            let _ = writeln!(
                w,
                "- {}: {} — {} ({})",
                case.name,
                t.describe(),
                mark(&v),
                v.detail()
            );
        }
    }
    for (what, v) in model::matrix_verdicts(&report.cases, &report.binaries) {
        let _ = writeln!(w, "- {what} — {} ({})", mark(&v), v.detail());
    }
}

fn mark(v: &Verdict) -> &'static str {
    match v {
        Verdict::Met(_) => "met",
        Verdict::Missed(_) => "**MISSED**",
        Verdict::Unknown(_) => "unknown",
    }
}

/// Our median wall time in the same cell at 0 ms (same case, same caches).
fn loopback_wall(report: &Report, case: &CaseResult) -> Option<f64> {
    let cell = case.cell?;
    report.cases.iter().find_map(|c| {
        let other = c.cell?;
        if other.base != cell.base || other.cache != cell.cache || other.rtt_ms != 0 {
            return None;
        }
        match &c.outcome {
            Outcome::Measured { ours, .. } => ours.wall().map(|s| s.median),
            _ => None,
        }
    })
}

/// The median of a per-run request count (`None` when requests were not counted).
fn median_of(side: &Side, f: fn(&Requests) -> u64) -> Option<f64> {
    let counts: Option<Vec<f64>> = side
        .samples
        .iter()
        .map(|s| s.requests.as_ref().map(|r| f(r) as f64))
        .collect();
    stats::summarize(&counts?).map(|s| s.median)
}

/// Far-away and throttled cases, per side: requests (and throttled ones), applied
/// creates, and where the wall time stands against the link: round trips (wall ÷ RTT)
/// and the RTT-bound limit (handshakes + ⌈N / in-flight⌉ round trips).
fn links(w: &mut String, report: &Report) {
    // The matrix's cells have their own table.
    let cases: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| c.cell.is_none() && (c.link.rtt > 0.0 || c.link.throttled))
        .collect();
    if cases.is_empty() {
        return;
    }
    let _ = writeln!(w, "\n## Far away and throttled\n");
    let _ = writeln!(
        w,
        "Medians per side. Requests, `429` answers and applied creates are from the audit log; round trips \
         are the wall time in units of the added RTT; the RTT-bound limit is the least time any client needs: \
         {} handshake round trips, then one round trip per {} requests in flight (ours) or per request \
         (kubectl, one at a time), N being the objects to create.\n",
        super::cases::HANDSHAKE_ROUND_TRIPS,
        super::cases::IN_FLIGHT
    );
    let _ = writeln!(
        w,
        "| case | side | wall | requests | 429s | applied creates | round trips (wall ÷ RTT) | RTT-bound limit | wall ÷ limit |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|---|---|---|---|");
    for case in cases {
        let Outcome::Measured { ours, theirs } = &case.outcome else {
            let _ = writeln!(
                w,
                "| {} | {} | | | | | | | |",
                case.name,
                status(&case.outcome).unwrap_or_default()
            );
            continue;
        };
        let mut sides = vec![("ours", ours, case.link.bound_ours)];
        if let Baseline::Kubectl(t) = theirs {
            sides.push(("kubectl", t, case.link.bound_theirs));
        }
        for (who, side, bound) in sides {
            let wall = side.wall().map(|s| s.median);
            let opt = |v: Option<f64>| v.map(count).unwrap_or_else(|| "n/a".into());
            let (trips, limit, within) = if case.link.rtt > 0.0 {
                (
                    wall.map(|w| format!("{:.1}", w / case.link.rtt))
                        .unwrap_or_default(),
                    bound.map(secs).unwrap_or_else(|| "—".into()),
                    match (wall, bound) {
                        (Some(w), Some(b)) => stats::ratio(w, b)
                            .map(|r| format!("{r:.2}×"))
                            .unwrap_or_else(|| "—".into()),
                        _ => "—".into(),
                    },
                )
            } else {
                ("—".into(), "—".into(), "—".into())
            };
            let _ = writeln!(
                w,
                "| {} | {who} | {} | {} | {} | {} | {trips} | {limit} | {within} |",
                case.name,
                wall.map(secs).unwrap_or_default(),
                opt(median_of(side, |r| r.total)),
                opt(median_of(side, |r| r.throttled)),
                opt(median_of(side, |r| r.created)),
            );
        }
    }
}

fn sizes(w: &mut String, report: &Report) {
    if report.binaries.is_empty() {
        return;
    }
    let _ = writeln!(w, "\n## Binary size (release build, stripped)\n");
    let _ = writeln!(
        w,
        "| binary | size | ratio to kubectl | budget 5 MiB |\n|---|---|---|---|"
    );
    let kubectl = report.kubectl_size.as_ref().map(|k| k.bytes);
    for b in &report.binaries {
        let r = kubectl
            .and_then(|k| stats::ratio(b.bytes as f64, k as f64))
            .map(ratio)
            .unwrap_or_else(|| "—".into());
        let budget = if b.bytes <= model::BINARY_BUDGET {
            "met"
        } else {
            "**MISSED**"
        };
        let _ = writeln!(w, "| {} | {} | {r} | {budget} |", b.name, bytes(b.bytes));
    }
    if let Some(k) = &report.kubectl_size {
        let _ = writeln!(w, "| {} | {} | 1× | — |", k.name, bytes(k.bytes));
    }
}

/// Peak RSS of ours at the largest size over the smallest measured size of a series
/// (create-file's memory must stay flat as the input grows).
pub fn memory_growth(cases: &[CaseResult], series: &str) -> Option<(u32, u32, f64)> {
    let mut points: Vec<(u32, f64)> = cases
        .iter()
        .filter(|c| c.series.is_some_and(|s| s.name == series))
        .filter_map(|c| match &c.outcome {
            Outcome::Measured { ours, .. } => Some((c.series?.size, ours.rss_kib()?.median)),
            _ => None,
        })
        .collect();
    points.sort_by_key(|p| p.0);
    let (first, last) = (points.first()?, points.last()?);
    (first.0 != last.0).then(|| (first.0, last.0, last.1 / first.1))
}

fn growth(w: &mut String, report: &Report) {
    let cf: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| c.series.is_some_and(|s| s.name == "create-file"))
        .collect();
    if !cf.is_empty() {
        let _ = writeln!(w, "\n## How cost grows: create-file\n");
        let _ = writeln!(
            w,
            "| objects | ours | kubectl | ceiling (in-process, 32 in flight) | ours objects/s | kubectl objects/s | ours peak RSS | kubectl peak RSS | ours requests |"
        );
        let _ = writeln!(w, "|---|---|---|---|---|---|---|---|---|");
        for c in cf {
            let size = c.series.map(|s| s.size).unwrap_or(0);
            let ceiling = c.ceiling.map(secs).unwrap_or_else(|| "—".into());
            match &c.outcome {
                Outcome::Measured {
                    ours,
                    theirs: Baseline::Kubectl(t),
                } => {
                    let rate = |s: &Side| {
                        s.wall()
                            .map(|w| format!("{:.0}", f64::from(size) / w.median))
                            .unwrap_or_default()
                    };
                    let wall = |s: &Side| s.wall().map(|w| secs(w.median)).unwrap_or_default();
                    let rss = |s: &Side| s.rss_kib().map(|r| kib(r.median)).unwrap_or_default();
                    let _ = writeln!(
                        w,
                        "| {size} | {} | {} | {ceiling} | {} | {} | {} | {} | {} |",
                        wall(ours),
                        wall(t),
                        rate(ours),
                        rate(t),
                        rss(ours),
                        rss(t),
                        requests_median(ours)
                    );
                }
                other => {
                    let _ = writeln!(
                        w,
                        "| {size} | {} | | {ceiling} | | | | | |",
                        status(other).unwrap_or_default()
                    );
                }
            }
        }
        if let Some((from, to, factor)) = memory_growth(&report.cases, "create-file") {
            let verdict = if factor <= 1.5 {
                "flat: met"
            } else {
                "not flat: MISSED"
            };
            let _ = writeln!(
                w,
                "\nPeak memory of ours from {from} to {to} objects: ×{factor:.2} ({verdict}; target ≤ ×1.5)."
            );
        }
    }
    let ru: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| c.series.is_some_and(|s| s.name == "rolling-update"))
        .collect();
    if !ru.is_empty() {
        let _ = writeln!(w, "\n## How cost grows: rolling-update\n");
        let _ = writeln!(
            w,
            "| replicas | ours | ideal | ratio | requests per replica moved |\n|---|---|---|---|---|"
        );
        for c in ru {
            let size = c.series.map(|s| s.size).unwrap_or(0);
            match &c.outcome {
                Outcome::Measured { ours, theirs } => {
                    let per_replica = ours
                        .requests()
                        .map(|r| format!("{:.1}", r.median / f64::from(size.max(1))))
                        .unwrap_or_else(|| "n/a".into());
                    let _ = writeln!(
                        w,
                        "| {size} | {} | {} | {} | {per_replica} |",
                        ours.wall().map(|s| secs(s.median)).unwrap_or_default(),
                        theirs.wall().map(secs).unwrap_or_default(),
                        c.wall_ratio().map(ratio).unwrap_or_else(|| "—".into()),
                    );
                }
                other => {
                    let _ = writeln!(
                        w,
                        "| {size} | {} | | | |",
                        status(other).unwrap_or_default()
                    );
                }
            }
        }
    }
}

fn details(w: &mut String, case: &CaseResult) {
    let _ = writeln!(w, "\n### {}\n\n{}\n", case.name, case.title);
    match &case.outcome {
        Outcome::Skipped(why) => {
            let _ = writeln!(w, "**Skipped: {why}**");
        }
        Outcome::Failed(why) => {
            let _ = writeln!(w, "**Failed: {why}**");
        }
        Outcome::Measured { ours, theirs } => {
            let _ = writeln!(w, "- ours: `{}`", ours.command);
            match theirs {
                Baseline::Kubectl(t) => {
                    let _ = writeln!(w, "- kubectl: `{}`\n", t.command);
                    let _ = writeln!(w, "| metric | ours | kubectl | ratio |\n|---|---|---|---|");
                    let row = |w: &mut String,
                               name: &str,
                               o: Option<Summary>,
                               t: Option<Summary>,
                               f: fn(f64) -> String| {
                        let show = |s: Option<Summary>| {
                            s.map(|s| spread(&s, f)).unwrap_or_else(|| "n/a".into())
                        };
                        let _ = writeln!(
                            w,
                            "| {name} | {} | {} | {} |",
                            show(o),
                            show(t),
                            opt_ratio(o, t)
                        );
                    };
                    row(w, "wall", ours.wall(), t.wall(), secs);
                    row(w, "CPU", ours.cpu(), t.cpu(), secs);
                    row(w, "peak RSS", ours.rss_kib(), t.rss_kib(), kib);
                    row(w, "requests", ours.requests(), t.requests(), count);
                    breakdown(w, "kubectl", t);
                }
                Baseline::Ideal { wall, how } => {
                    let _ = writeln!(w, "- ideal: {} ({how})\n", secs(*wall));
                    let _ = writeln!(w, "| metric | ours |\n|---|---|");
                    let show = |s: Option<Summary>, f: fn(f64) -> String| {
                        s.map(|s| spread(&s, f)).unwrap_or_else(|| "n/a".into())
                    };
                    let _ = writeln!(w, "| wall | {} |", show(ours.wall(), secs));
                    let _ = writeln!(w, "| CPU | {} |", show(ours.cpu(), secs));
                    let _ = writeln!(w, "| peak RSS | {} |", show(ours.rss_kib(), kib));
                    let _ = writeln!(w, "| requests | {} |", show(ours.requests(), count));
                }
            }
            breakdown(w, "ours", ours);
        }
    }
    for (t, v) in case.verdicts() {
        let _ = writeln!(
            w,
            "- target: {} — {} ({})",
            t.describe(),
            mark(&v),
            v.detail()
        );
    }
    if let Some(c) = case.ceiling {
        let _ = writeln!(
            w,
            "- ceiling (in-process kube-rs client, 32 requests in flight): {}",
            secs(c)
        );
    }
    for n in &case.notes {
        let _ = writeln!(w, "- {n}");
    }
}

fn breakdown(w: &mut String, who: &str, side: &Side) {
    if let Some(r) = side.last_requests() {
        if r.total == 0 {
            let _ = writeln!(w, "\nRequests by {who} (last run): none.");
            return;
        }
        let kinds = r
            .by_kind
            .iter()
            .map(|(k, n)| format!("`{k}` ×{n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(w, "\nRequests by {who} (last run): {kinds}.");
    }
}

#[cfg(test)]
mod tests;
