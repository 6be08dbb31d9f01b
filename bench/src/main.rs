//! The bench, which `cargo xtask bench` builds and runs: our plugins against the real
//! kubectl, side by side, on the same cluster.
//!
//! How a run goes:
//! 1. build our release binaries (size-optimised profile) and time the build;
//! 2. start the local cluster with an audit log (`cluster up --audit`, in its own state
//!    directory so a developer's cluster is left alone), or use `KUBECONFIG` with
//!    `--existing`;
//! 3. per case: one warm-up run of each command (which also tells whether our plugin
//!    implements the case yet: a "not implemented" answer makes the case *skipped*,
//!    with the real exit code and message), then the measured runs alternating
//!    ours, kubectl, ours, kubectl … so that drift on the machine hits both alike;
//!    anything a run needs (a fresh namespace, a ready ReplicationController) is set
//!    up before its clock starts;
//! 4. count each run's API requests in the audit log (see [`audit`]);
//! 5. write `target/bench/<date>/results.md` and `chart.svg`, stop the cluster.
//!
//! Modules: [`flags`], [`cases`] (the catalogue), [`measure`] (one run: wall, CPU, peak
//! RSS), [`audit`] (request counting), [`setup`] (cluster preparation), [`stats`],
//! [`model`] (results and targets), [`report`] (markdown) and [`chart`] (SVG);
//! [`command`] and [`paths`] are the bench's few helpers of its own (it shares no code
//! with xtask, which only runs it).

mod audit;
mod cases;
mod chart;
mod command;
mod flags;
mod launcher;
mod measure;
mod model;
mod paths;
mod report;
mod setup;
mod stats;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Parser;
use kube::config::Kubeconfig;
use localcluster::detached::{Start, Supervisor};

use cases::{Case, Env, Invocation, Kind, RunCtx};
use model::{Baseline, BinarySize, CaseResult, Outcome, Report, Requests, Sample, Side};

/// Runs for the create-file ceiling (after one warm-up).
const CEILING_RUNS: usize = 3;
/// Requests in flight for the ceiling, as stated in the create-file issue.
const CEILING_IN_FLIGHT: usize = 32;

fn main() -> ExitCode {
    match run(&flags::Bench::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // As every task of `cargo xtask` words its failure, which is how it is run.
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(flags: &flags::Bench) -> anyhow::Result<()> {
    let catalogue = cases::all();
    if flags.list {
        for case in &catalogue {
            println!("{:<32} {}", case.name, case.title);
        }
        return Ok(());
    }
    let selected = select(&catalogue, &flags.cases, flags.matrix)?;
    let started = Instant::now();
    let now = jiff::Timestamp::now();
    let out_dir = match &flags.out {
        Some(dir) => dir.clone(),
        None => paths::target_dir()
            .join("bench")
            .join(now.strftime("%Y-%m-%d").to_string()),
    };
    let release = localcluster::Release::from_env()?;
    let kubectl = reference_kubectl(flags, release)?;
    let built = build_and_start(flags, release)?;
    let work = tempfile::Builder::new()
        .prefix("kubeplug-bench-")
        .tempdir()?;
    // The cluster: ours (stopped when `target` drops) or the caller's.
    let target = Target::connect(flags, built.cluster)?;
    let (bench, server_version) = Bench::new(flags, work.path(), &built.bin_dir, kubectl, &target)?;
    let floor = bench.rss_floor()?;
    let results = bench.run_cases(&selected, started);
    if flags.existing {
        bench.delete_namespaces();
    }
    let (binaries, kubectl_size) = binary_sizes(&built.bin_dir, &bench.kubectl);
    let report = Report {
        started: now.strftime("%Y-%m-%d %H:%M UTC").to_string(),
        environment: {
            let mut env = environment(&bench.kubectl, &server_version, flags.existing);
            env.push((
                "peak RSS floor".into(),
                format!("{floor} (`true` through the launcher; smaller peaks read as this)"),
            ));
            env
        },
        runs: flags.runs.map_or(DEFAULT_RUNS as u32, |n| n),
        matrix_runs: flags.runs.map_or(cases::matrix::DEFAULT_RUNS as u32, |n| n),
        cases: results,
        binaries,
        kubectl_size,
        total_seconds: started.elapsed().as_secs_f64(),
        build_seconds: built.build_seconds,
        cluster_seconds: target.cluster_seconds,
        notes: notes(bench.audit.is_some(), &bench.kubectl),
    };
    write_report(&report, &out_dir, started)
}

/// The baseline is the real kubectl of the server's release: the one built beside the
/// current release's server, the installed one for 1.20.2 or an existing cluster.
fn reference_kubectl(
    flags: &flags::Bench,
    release: localcluster::Release,
) -> anyhow::Result<PathBuf> {
    match (flags.existing, localcluster::Binaries::locate(release)) {
        (false, Ok(binaries)) if binaries.kubectl.is_some() => Ok(binaries.reference_kubectl()),
        _ => which::which("kubectl")
            .context("kubectl is not on PATH; the baseline is always the real kubectl binary"),
    }
}

/// Our release binaries, and our cluster (with its start-up time) unless `--existing`.
struct Built {
    bin_dir: PathBuf,
    build_seconds: Option<f64>,
    cluster: Option<(LocalCluster, f64)>,
}

/// `--bin-dir`, absolute (the plugins are linked into a PATH directory of the bench's
/// own, where a relative link target would resolve from, and run from elsewhere), and
/// holding every plugin: a missing one is said before the cluster's minutes, not as a
/// failed case.
fn given_bin_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    let dir = std::fs::canonicalize(dir).with_context(|| format!("--bin-dir {}", dir.display()))?;
    for binary in cases::BINARIES {
        if !dir.join(binary).is_file() {
            bail!("--bin-dir {}: no {binary} in it", dir.display());
        }
    }
    Ok(dir)
}

/// Builds our release binaries (unless `--bin-dir`) while our cluster starts: on a
/// fresh machine the build is most of the 10-minute budget, and the two share nothing
/// but the CPU (the build is `--release`, the cluster's supervisor a debug binary:
/// different cargo locks).
fn build_and_start(flags: &flags::Bench, release: localcluster::Release) -> anyhow::Result<Built> {
    let given = flags.bin_dir.as_deref().map(given_bin_dir).transpose()?;
    let cluster = (!flags.existing).then(|| {
        std::thread::spawn(move || {
            let started = Instant::now();
            LocalCluster::start(release).map(|c| (c, started.elapsed().as_secs_f64()))
        })
    });
    let build = match given {
        Some(dir) => Ok((dir, None)),
        None => {
            let build_started = Instant::now();
            command::run(
                Command::new(env!("CARGO"))
                    .current_dir(paths::project_root())
                    .args(["build", "--release", "--quiet"])
                    .args(cases::BINARIES.iter().flat_map(|b| ["-p", b])),
            )
            .map(|()| {
                (
                    paths::target_dir().join("release"),
                    Some(build_started.elapsed().as_secs_f64()),
                )
            })
        }
    };
    // Joined before the build's error is returned, so that a cluster that did start
    // is stopped (on drop) rather than left running.
    let cluster = match cluster {
        Some(thread) => Some(
            thread
                .join()
                .map_err(|_| anyhow::anyhow!("starting the cluster panicked"))??,
        ),
        None => None,
    };
    let (bin_dir, build_seconds) = build?;
    Ok(Built {
        bin_dir,
        build_seconds,
        cluster,
    })
}

/// The cluster the cases run against.
struct Target {
    /// Ours, stopped when dropped; `None` with `--existing`.
    _local: Option<LocalCluster>,
    cluster_seconds: Option<f64>,
    kubeconfig: Kubeconfig,
    audit_log: Option<PathBuf>,
}

impl Target {
    fn connect(flags: &flags::Bench, local: Option<(LocalCluster, f64)>) -> anyhow::Result<Self> {
        Ok(match local {
            None => {
                let kubeconfig = match Kubeconfig::from_env()? {
                    Some(config) => config,
                    None => Kubeconfig::read()?,
                };
                Self {
                    _local: None,
                    cluster_seconds: None,
                    kubeconfig,
                    audit_log: flags.audit_log.clone(),
                }
            }
            Some((local, seconds)) => Self {
                kubeconfig: Kubeconfig::read_from(&local.kubeconfig)?,
                audit_log: local.audit_log.clone(),
                _local: Some(local),
                cluster_seconds: Some(seconds),
            },
        })
    }
}

/// The plugins' sizes, and kubectl's.
fn binary_sizes(bin_dir: &Path, kubectl: &Path) -> (Vec<BinarySize>, Option<BinarySize>) {
    let binaries = cases::BINARIES
        .iter()
        .filter_map(|name| {
            let meta = std::fs::metadata(bin_dir.join(name)).ok()?;
            Some(BinarySize {
                name: name.to_string(),
                bytes: meta.len(),
            })
        })
        .collect();
    let kubectl_size = std::fs::metadata(kubectl).ok().map(|m| BinarySize {
        name: format!("kubectl ({})", kubectl.display()),
        bytes: m.len(),
    });
    (binaries, kubectl_size)
}

/// `results.md` and `chart.svg` in `out_dir`.
fn write_report(report: &Report, out_dir: &Path, started: Instant) -> anyhow::Result<()> {
    std::fs::create_dir_all(out_dir)?;
    let md = out_dir.join("results.md");
    std::fs::write(&md, report::render(report))?;
    let svg = out_dir.join("chart.svg");
    if let Err(e) = chart::draw(report, &svg) {
        eprintln!("bench: no chart: {e:#}");
    }
    eprintln!(
        "bench: done in {}; report: {}, chart: {}",
        report::secs(started.elapsed().as_secs_f64()),
        md.display(),
        svg.display()
    );
    Ok(())
}

/// Measured runs per command in the default set, unless `--runs`.
const DEFAULT_RUNS: usize = 5;

/// The cases named on the command line, in catalogue order: names or patterns with
/// `*` (see [`glob`]), `default` for the default set, and with `matrix` every cell
/// of the matrix. Nothing named and no matrix: the default set.
fn select<'a>(
    catalogue: &'a [Case],
    names: &[String],
    matrix: bool,
) -> anyhow::Result<Vec<&'a Case>> {
    let pick = |name: &str, case: &Case| match name {
        "default" => case.cell.is_none(),
        pattern => glob(pattern, &case.name),
    };
    if let Some(unknown) = names.iter().find(|n| !catalogue.iter().any(|c| pick(n, c))) {
        bail!(
            "no case matches {unknown:?}; the cases are `default` (the default set) and: {}",
            catalogue
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let nothing_named = names.is_empty() && !matrix;
    Ok(catalogue
        .iter()
        .filter(|c| {
            (nothing_named && c.cell.is_none())
                || (matrix && c.cell.is_some())
                || names.iter().any(|n| pick(n, c))
        })
        .collect())
}

/// Whether `name` matches `pattern`, where `*` stands for any text (perhaps none)
/// and everything else for itself. Hand-written: the case names are short and `*`
/// is the only wildcard worth having, not worth a crate.
fn glob(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The bytes of the files under `dir` (a cache directory after a run).
fn dir_bytes(dir: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            total += dir_bytes(&entry.path())?;
        } else if kind.is_file() {
            total += entry.metadata()?.len();
        }
    }
    Ok(total)
}

fn restrict(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

/// The workspace's `kubeplug-cluster`, which runs the bench's cluster.
fn supervisor() -> Supervisor {
    Supervisor::new(paths::project_root(), paths::target_dir())
}

/// Nodes of the benchmark's cluster (see [`LocalCluster::start`]).
const BENCH_NODES: u8 = 1;

/// The local cluster of this benchmark, stopped when dropped (also on errors).
struct LocalCluster {
    state_dir: PathBuf,
    kubeconfig: PathBuf,
    audit_log: Option<PathBuf>,
}

impl LocalCluster {
    fn start(release: localcluster::Release) -> anyhow::Result<Self> {
        // Its own state directory: `cargo xtask cluster up` (the default one) may be in use.
        let state_dir = paths::target_dir().join("bench-cluster");
        let supervisor = supervisor();
        if localcluster::state::ClusterState::read(&state_dir)?.is_some() {
            eprintln!("bench: stopping the cluster an earlier benchmark left behind");
            supervisor.down(&state_dir)?;
        }
        // Throttling applies only to users outside system:masters: every case but the
        // throttled ones runs in that group and is never affected (see cases.rs).
        // One real node, which takes 250 pods (`maxPods` in its KubeletConfiguration): a
        // case's runs keep their namespaces until the case ends, and rolling-update-30's
        // six runs hold 180 pods.
        let state = supervisor.up(
            &state_dir,
            &Start {
                release,
                audit: true,
                nodes: BENCH_NODES,
                throttle_mutating: Some(cases::THROTTLE_MUTATING),
                apiserver_args: &[],
            },
        )?;
        Ok(Self {
            state_dir,
            kubeconfig: state.kubeconfig,
            audit_log: state.audit_log,
        })
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        if let Err(e) = supervisor().down(&self.state_dir) {
            eprintln!("bench: stopping the cluster: {e:#}");
        }
    }
}

struct Bench {
    /// `--runs`, else [`DEFAULT_RUNS`] (default set) or the matrix's default (cells).
    runs: Option<usize>,
    launcher: PathBuf,
    work: PathBuf,
    env_bin_dir: PathBuf,
    kubectl: PathBuf,
    plugin_path: OsString,
    runtime: tokio::runtime::Runtime,
    client: kube::Client,
    identities: audit::Identities,
    audit: Option<audit::Log>,
    /// The kubeconfig of the cluster, for latency proxies to find its server.
    base_kubeconfig: PathBuf,
    /// The latency proxy of the case being run (cases with `rtt_ms`, matrix cells).
    latency: std::cell::RefCell<Option<localcluster::latency::LatencyProxy>>,
    /// The case being run's timeout per command (see [`Case::timeout`]).
    timeout: std::cell::Cell<Duration>,
    /// Whether the case being run has cold caches (its runs' cache sizes are kept).
    cache_is_cold: std::cell::Cell<bool>,
    /// Whether the case being run is a throttled one (its identity's group).
    throttled: std::cell::Cell<bool>,
}

/// What a case's runs need (see [`Bench::plan`]).
struct Plan<'c> {
    case: &'c Case,
    kind: Kind,
    /// The warm-up's kind: the same case, perhaps at a smaller size.
    warm_kind: Kind,
    manifests: Option<PathBuf>,
    warm_manifests: Option<PathBuf>,
    /// Whether kubectl can run the case (else its baseline is the ideal).
    has_theirs: bool,
    runs: usize,
    theirs_runs: usize,
}

impl Plan<'_> {
    /// The namespace of a run: side `a` ours, `b` kubectl's; run `w` the warm-up.
    fn namespace(&self, side: char, run: &str) -> String {
        format!("kb-{}-{side}{run}", self.case.name)
    }

    /// A run's context in `namespace`, with the warm-up's input or the measured runs'.
    fn ctx<'a>(&'a self, namespace: &'a str, warm_up: bool) -> RunCtx<'a> {
        let manifests = if warm_up {
            &self.warm_manifests
        } else {
            &self.manifests
        };
        RunCtx {
            namespace,
            manifests: manifests.as_deref(),
        }
    }
}

/// Both sides' samples, and the command lines the report shows.
type MeasuredRuns = (Vec<Sample>, Vec<Sample>, (Option<String>, Option<String>));

/// How the case's client caches are kept, in the report's words.
fn cache_note(cache: model::Cache) -> String {
    match cache {
        model::Cache::Cold => "cold caches: each measured run gets its own new, empty cache directory \
             (`KUBECACHEDIR`, which both kubectl and the plugins read for their discovery and OpenAPI \
             caches), as a first run on a new machine; the warm-up used another one"
            .to_string(),
        model::Cache::Warm => "warm caches: each side's runs share one cache directory of this case \
             (`KUBECACHEDIR`), which its warm-up run filled"
            .to_string(),
    }
}

/// One side's run that did not succeed.
struct RunFailure {
    exit: measure::Exit,
    message: String,
}

impl Bench {
    /// Everything the cases share: the client caches' work directory, the plugins on
    /// a `PATH` of their own, the launcher, one identity per run; with the server's
    /// version.
    fn new(
        flags: &flags::Bench,
        work: &Path,
        bin_dir: &Path,
        kubectl: PathBuf,
        target: &Target,
    ) -> anyhow::Result<(Self, String)> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let base_path = work.join("base-kubeconfig.json");
        std::fs::write(&base_path, serde_json::to_vec(&target.kubeconfig)?)?;
        restrict(&base_path)?;
        let client = runtime.block_on(setup::client(&base_path))?;
        let server_version = runtime
            .block_on(setup::server_version(&client))
            .unwrap_or_else(|e| format!("unknown ({e})"));
        let audit = target.audit_log.clone().map(|path| audit::Log { path });
        let identities = audit::Identities::new(
            target.kubeconfig.clone(),
            work.to_path_buf(),
            audit.is_some(),
        );
        let plugin_dir = work.join("plugins");
        std::fs::create_dir_all(&plugin_dir)?;
        for name in cases::BINARIES {
            std::os::unix::fs::symlink(bin_dir.join(name), plugin_dir.join(name))?;
        }
        let plugin_path = std::env::join_paths(std::iter::once(plugin_dir.clone()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))?;
        let bench = Self {
            runs: flags.runs.map(|n| n as usize),
            launcher: measure::build_launcher(work)?,
            work: work.to_path_buf(),
            env_bin_dir: bin_dir.to_path_buf(),
            kubectl,
            plugin_path,
            runtime,
            client,
            identities,
            audit,
            base_kubeconfig: base_path,
            latency: std::cell::RefCell::new(None),
            timeout: std::cell::Cell::new(Duration::from_secs(60)),
            cache_is_cold: std::cell::Cell::new(false),
            throttled: std::cell::Cell::new(false),
        };
        Ok((bench, server_version))
    }

    /// What the launcher itself adds to peak RSS: the smallest value a run can show.
    fn rss_floor(&self) -> anyhow::Result<String> {
        let scratch = self.work.join("scratch");
        std::fs::create_dir_all(&scratch)?;
        Ok(measure::run(
            &self.launcher,
            &Command::new("true"),
            &scratch,
            Duration::from_secs(10),
        )
        .map(|r| report::kib(r.max_rss_kib as f64))
        .unwrap_or_else(|e| format!("unknown ({e:#})")))
    }

    /// Every selected case in turn, each on an empty node.
    fn run_cases(&self, selected: &[&Case], started: Instant) -> Vec<CaseResult> {
        let mut results = Vec::new();
        for (i, case) in selected.iter().enumerate() {
            eprintln!(
                "bench: [{}/{}, {} in] {}: {}",
                i + 1,
                selected.len(),
                report::secs(started.elapsed().as_secs_f64()),
                case.name,
                case.title
            );
            let case_started = Instant::now();
            let mut result = self.case(case);
            match &result.outcome {
                Outcome::Measured { .. } => eprintln!(
                    "bench:   ratio ours/theirs {}",
                    result
                        .wall_ratio()
                        .map(report::ratio)
                        .unwrap_or_else(|| "—".into())
                ),
                Outcome::Skipped(why) => eprintln!("bench:   skipped: {why}"),
                Outcome::Failed(why) => eprintln!("bench:   failed: {why}"),
            }
            // Each case on an empty node, outside its measured runs (but in the case's
            // time, which says what a case costs the whole benchmark).
            if let Err(e) = self.runtime.block_on(setup::clear_namespaces(
                &self.client,
                Duration::from_secs(120),
            )) {
                eprintln!("bench:   could not clear the case's namespaces: {e:#}");
            }
            result.seconds = case_started.elapsed().as_secs_f64();
            results.push(result);
        }
        results
    }

    /// With `--existing`: the namespaces the benchmark created, deleted.
    fn delete_namespaces(&self) {
        match self
            .runtime
            .block_on(setup::delete_namespaces(&self.client))
        {
            Ok(n) => eprintln!("bench: deleting the {n} namespaces the benchmark created"),
            Err(e) => eprintln!("bench: could not delete the benchmark's namespaces: {e:#}"),
        }
    }

    fn env(&self) -> Env<'_> {
        Env {
            bin_dir: &self.env_bin_dir,
            kubectl: &self.kubectl,
            plugin_path: &self.plugin_path,
        }
    }

    /// Measured runs per command of ours in `case`.
    fn runs(&self, case: &Case) -> usize {
        self.runs.unwrap_or(if case.cell.is_some() {
            cases::matrix::DEFAULT_RUNS
        } else {
            DEFAULT_RUNS
        })
    }

    fn case(&self, case: &Case) -> CaseResult {
        let mut result = CaseResult {
            name: case.name.to_string(),
            title: case.title.to_string(),
            // The cost-growth series is the plain loopback one (not the matrix's).
            series: (case.rtt_ms == 0 && !case.throttled && case.cell.is_none())
                .then(|| case.kind.series())
                .flatten(),
            outcome: Outcome::Skipped("not run".into()),
            targets: case.targets(),
            ceiling: None,
            notes: Vec::new(),
            seconds: 0.0,
            link: model::Link {
                rtt: f64::from(case.rtt_ms) / 1000.0,
                bound_ours: case.rtt_bound(cases::IN_FLIGHT).map(|d| d.as_secs_f64()),
                bound_theirs: case.rtt_bound(1).map(|d| d.as_secs_f64()),
                throttled: case.throttled,
            },
            cell: case.cell,
            size: case.kind.size(),
            kubectl_fewer: None,
        };
        self.throttled.set(case.throttled);
        self.timeout.set(case.timeout());
        self.cache_is_cold.set(case.cache() == model::Cache::Cold);
        if case.throttled {
            result.notes.push(format!(
                "both sides run as an identity outside system:masters (group {}, bound to cluster-admin), \
                 which the bench cluster's API server throttles: at most {} mutating request in flight, `429` \
                 with `Retry-After: 1` beyond (API Priority and Fairness off); every object must exist \
                 afterwards and the audit log must show exactly one applied create per object",
                cases::THROTTLED_GROUP,
                cases::THROTTLE_MUTATING
            ));
            if let Err(e) = self
                .runtime
                .block_on(setup::throttled_group(&self.client, cases::THROTTLED_GROUP))
            {
                result.outcome = Outcome::Failed(format!("no throttled identity: {e:#}"));
                return result;
            }
        }
        result.outcome = match self.far(case, &mut result) {
            Ok(()) => match self.try_case(case, &mut result) {
                Ok(outcome) => outcome,
                Err(e) => Outcome::Failed(format!("{e:#}")),
            },
            Err(e) => Outcome::Failed(format!("no latency proxy: {e:#}")),
        };
        // Stopped before the next case.
        self.latency.borrow_mut().take();
        result
    }

    /// For a case with a round trip: the latency proxy both sides go through, and the
    /// RTT-bound limit in the notes.
    fn far(&self, case: &Case, result: &mut CaseResult) -> anyhow::Result<()> {
        if !case.proxied() {
            return Ok(());
        }
        let rtt = Duration::from_millis(case.rtt_ms.into());
        let proxy =
            localcluster::latency::LatencyProxy::for_kubeconfig(&self.base_kubeconfig, rtt)?;
        result.notes.push(if case.rtt_ms == 0 {
            "both sides talk to the API server through a loopback TCP proxy adding no delay \
             (localcluster::latency), which counts their connections and the bytes they receive"
                .to_string()
        } else {
            format!(
                "both sides talk to the API server through a loopback TCP proxy adding {} ms per round trip \
                 (localcluster::latency), which also counts their connections and the bytes they receive; \
                 the in-process ceiling is not measured at this latency",
                case.rtt_ms
            )
        });
        if let Some(limit) = case.rtt_bound(cases::IN_FLIGHT) {
            result.notes.push(format!(
                "RTT-bound limit at {} in flight: {} ({} handshake round trips + one per \
                 {} requests; kubectl, one at a time: {})",
                cases::IN_FLIGHT,
                report::secs(limit.as_secs_f64()),
                cases::HANDSHAKE_ROUND_TRIPS,
                cases::IN_FLIGHT,
                report::secs(case.rtt_bound(1).unwrap_or(limit).as_secs_f64()),
            ));
        }
        *self.latency.borrow_mut() = Some(proxy);
        Ok(())
    }

    /// The case's runs: its inputs, the ceiling, the warm-up, the measured runs and
    /// their request counts.
    fn try_case(&self, case: &Case, result: &mut CaseResult) -> anyhow::Result<Outcome> {
        let offset = self.audit.as_ref().map(audit::Log::end);
        let plan = self.plan(case, result)?;
        // The ceiling first: it is worth reporting even while our plugin is not there.
        // (Not through a latency proxy: it is the loopback ceiling.)
        if let Kind::CreateFile { objects } = plan.kind
            && case.rtt_ms == 0
            && !case.throttled
            && case.cell.is_none()
        {
            match self.ceiling(case, objects) {
                Ok(c) => result.ceiling = Some(c),
                Err(e) => result.notes.push(format!("ceiling not measured: {e:#}")),
            }
        }
        let (ours_cmd, theirs_cmd) = match self.warm_up(&plan)? {
            Ok(commands) => commands,
            Err(outcome) => return Ok(outcome),
        };
        let (mut ours, mut theirs, shown) = self.measured_runs(&plan)?;
        self.count_requests(case, offset, &mut ours, &mut theirs, result);

        let ours = Side {
            command: shown.0.unwrap_or(ours_cmd.display),
            samples: ours,
        };
        let baseline = match (&theirs_cmd, plan.kind.ideal()) {
            (Some(cmd), _) => Baseline::Kubectl(Side {
                command: shown.1.unwrap_or_else(|| cmd.display.clone()),
                samples: theirs,
            }),
            (None, Some((wall, how))) => Baseline::Ideal { wall, how },
            (None, None) => bail!(
                "case {} has neither kubectl nor an ideal to compare with",
                case.name
            ),
        };
        Ok(Outcome::Measured {
            ours,
            theirs: baseline,
        })
    }

    /// What the case's runs need and how many there are, with the notes that say so.
    fn plan<'c>(&self, case: &'c Case, result: &mut CaseResult) -> anyhow::Result<Plan<'c>> {
        let kind = case.kind;
        let manifests_of = |objects: u32| -> anyhow::Result<PathBuf> {
            let dir = self.work.join(format!("manifests-{objects}"));
            if !dir.exists() {
                setup::write_manifests(&dir, objects)?;
            }
            Ok(dir)
        };
        let warm_kind = kind.warm_up();
        let (manifests, warm_manifests) = match (kind, warm_kind) {
            (Kind::CreateFile { objects }, Kind::CreateFile { objects: warm }) => {
                result.notes.push(format!(
                    "{objects} ConfigMaps, one YAML file each, in one directory; each run creates them in a fresh \
                     namespace"
                ));
                (Some(manifests_of(objects)?), Some(manifests_of(warm)?))
            }
            (Kind::CreateFileWait { deployments }, Kind::CreateFileWait { deployments: warm }) => {
                result.notes.push(format!(
                    "{deployments} Deployments of one replica, one YAML file each, in one directory; each run \
                     creates them in a fresh namespace and waits until all are rolled out (a readiness probe \
                     makes pods ready {} ms after they start); kubectl's side is a script: `kubectl create -f` \
                     per file, then `kubectl rollout status -f` per file",
                    cases::READY_AFTER_MS
                ));
                let of = |n: u32| -> anyhow::Result<PathBuf> {
                    let dir = self.work.join(format!("deployments-{n}"));
                    if !dir.exists() {
                        setup::write_deployments(&dir, n)?;
                    }
                    Ok(dir)
                };
                (Some(of(deployments)?), Some(of(warm)?))
            }
            _ => (None, None),
        };
        if let Kind::RollingUpdate { replicas } = kind {
            result.notes.push(format!(
                "each run starts from a ReplicationController of {replicas} ready pods (nginx:1) in a fresh namespace; \
                 a readiness probe makes pods ready {} ms after they start",
                cases::READY_AFTER_MS
            ));
        }
        if let (Some(size), Some(warm)) = (kind.size(), warm_kind.size())
            && warm != size
        {
            result
                .notes
                .push(format!("the warm-up runs use a size of {warm}, not {size}"));
        }
        let has_theirs = kind
            .theirs(
                &self.env(),
                &RunCtx {
                    namespace: "",
                    manifests: None,
                },
            )
            .is_some();
        let runs = self.runs(case);
        let (theirs_runs, fewer) = if has_theirs {
            case.kubectl_runs(runs)
        } else {
            (0, None)
        };
        if let Some(why) = &fewer {
            result.notes.push(why.clone());
            result.kubectl_fewer = Some(why.clone());
        }
        result.notes.push(cache_note(case.cache()));
        Ok(Plan {
            case,
            kind,
            warm_kind,
            manifests,
            warm_manifests,
            has_theirs,
            runs,
            theirs_runs,
        })
    }

    /// One run of each side, which also tells whether the case works at all: the
    /// commands of both sides, or the outcome that ends the case (our plugin does not
    /// implement it, or a side failed).
    fn warm_up(
        &self,
        plan: &Plan<'_>,
    ) -> anyhow::Result<Result<(Invocation, Option<Invocation>), Outcome>> {
        let name = &plan.case.name;
        // kubectl's warm-up only where it has measured runs to warm up for.
        let run_theirs = plan.has_theirs && plan.theirs_runs > 0;
        let mut warm = vec![plan.namespace('a', "w")];
        if run_theirs {
            warm.push(plan.namespace('b', "w"));
        }
        self.prepare(plan.warm_kind, &warm)?;
        let ours_cmd = plan.warm_kind.ours(&self.env(), &plan.ctx(&warm[0], true));
        eprintln!("bench:   $ {}", ours_cmd.display);
        if let Err(f) = self.run_one(
            &ours_cmd,
            &format!("{name}-aw"),
            &self.cache_dir(plan, 'a', "w"),
        )? {
            return Ok(Err(if measure::looks_unimplemented(f.exit, &f.message) {
                Outcome::Skipped(format!(
                    "plugin not implemented ({} / {})",
                    f.exit, f.message
                ))
            } else {
                Outcome::Failed(format!(
                    "ours: `{}`: {} / {}",
                    ours_cmd.display, f.exit, f.message
                ))
            }));
        }
        if !plan.has_theirs {
            return Ok(Ok((ours_cmd, None)));
        }
        let theirs_cmd = plan.warm_kind.theirs(
            &self.env(),
            &plan.ctx(warm.get(1).unwrap_or(&warm[0]), true),
        );
        if let Some(cmd) = theirs_cmd.as_ref().filter(|_| run_theirs) {
            eprintln!("bench:   $ {}", cmd.display);
            if let Err(f) =
                self.run_one(cmd, &format!("{name}-bw"), &self.cache_dir(plan, 'b', "w"))?
            {
                return Ok(Err(Outcome::Failed(format!(
                    "kubectl: `{}`: {} / {}",
                    cmd.display, f.exit, f.message
                ))));
            }
        }
        Ok(Ok((ours_cmd, theirs_cmd)))
    }

    /// The measured runs, alternating ours and kubectl's, after everything they need is
    /// prepared (before any clock starts): both sides' samples, and the first measured
    /// run's command lines, which the report shows (not the warm-up's, whose input may
    /// be smaller).
    fn measured_runs(&self, plan: &Plan<'_>) -> anyhow::Result<MeasuredRuns> {
        let (kind, runs, name) = (plan.kind, plan.runs, &plan.case.name);
        let mut names = Vec::new();
        for i in 1..=runs {
            names.push(plan.namespace('a', &i.to_string()));
            if i <= plan.theirs_runs {
                names.push(plan.namespace('b', &i.to_string()));
            }
        }
        self.prepare(kind, &names)?;

        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        let mut shown: (Option<String>, Option<String>) = (None, None);
        for i in 1..=runs {
            let run = i.to_string();
            eprint!("bench:   run {i}/{runs}: ours");
            let ns = plan.namespace('a', &run);
            let cmd = kind.ours(&self.env(), &plan.ctx(&ns, false));
            shown.0.get_or_insert_with(|| cmd.display.clone());
            let cache = self.cache_dir(plan, 'a', &run);
            ours.push(self.measured(&cmd, kind, &format!("{name}-a{i}"), &ns, &cache)?);
            if plan.has_theirs {
                let ns = plan.namespace('b', &run);
                if let Some(cmd) = kind.theirs(&self.env(), &plan.ctx(&ns, false)) {
                    shown.1.get_or_insert_with(|| cmd.display.clone());
                    if i <= plan.theirs_runs {
                        eprint!(", kubectl");
                        let cache = self.cache_dir(plan, 'b', &run);
                        theirs.push(self.measured(
                            &cmd,
                            kind,
                            &format!("{name}-b{i}"),
                            &ns,
                            &cache,
                        )?);
                    }
                }
            }
            eprintln!();
        }
        Ok((ours, theirs, shown))
    }

    /// The cache directory of a run: per side, and per run when cold.
    fn cache_dir(&self, plan: &Plan<'_>, side: char, run: &str) -> PathBuf {
        let dir = self.work.join("cache").join(&plan.case.name);
        match plan.case.cache() {
            model::Cache::Warm => dir.join(side.to_string()),
            model::Cache::Cold => dir.join(format!("{side}{run}")),
        }
    }

    /// Fresh namespaces (and ready controllers) for the given runs.
    fn prepare(&self, kind: Kind, namespaces: &[String]) -> anyhow::Result<()> {
        let Some(for_pods) = kind.namespace() else {
            return Ok(());
        };
        self.runtime.block_on(async {
            setup::namespaces(&self.client, namespaces, for_pods).await?;
            if let Kind::RollingUpdate { replicas } = kind {
                let rc = setup::replication_controller(
                    "web",
                    i32::try_from(replicas).unwrap_or(i32::MAX),
                    cases::READY_AFTER_MS,
                )?;
                // Only our side has runs here (the baseline is the ideal), so every
                // namespace is one of ours.
                setup::ready_controllers(&self.client, namespaces, &rc, Duration::from_secs(120))
                    .await?;
            }
            Ok(())
        })
    }

    /// Runs once with its client caches in `cache` (`KUBECACHEDIR`); `Ok(Err(..))`
    /// when the command itself failed.
    fn run_one(
        &self,
        cmd: &Invocation,
        identity: &str,
        cache: &Path,
    ) -> anyhow::Result<Result<measure::Run, RunFailure>> {
        let mut kubeconfig = if self.throttled.get() {
            self.identities
                .kubeconfig_in(identity, cases::THROTTLED_GROUP)?
        } else {
            self.identities.kubeconfig(identity)?
        };
        if let Some(proxy) = &*self.latency.borrow() {
            kubeconfig = proxy.kubeconfig(&kubeconfig)?;
        }
        let scratch = self.work.join("scratch");
        std::fs::create_dir_all(&scratch)?;
        std::fs::create_dir_all(cache)?;
        let mut command = Command::new(&cmd.program);
        command
            .args(&cmd.args)
            .env("KUBECONFIG", &kubeconfig)
            .env("KUBECACHEDIR", cache);
        if let Some(path) = &cmd.path {
            command.env("PATH", path);
        }
        let run = measure::run(&self.launcher, &command, &scratch, self.timeout.get())?;
        if run.exit.success() {
            Ok(Ok(run))
        } else {
            Ok(Err(RunFailure {
                exit: run.exit,
                message: measure::first_line(&run.stderr),
            }))
        }
    }

    /// One measured run (with the proxy's connections and bytes during it, and for a
    /// cold run what it left in its cache), then (off the clock) a check that it did
    /// the work: a command that exits 0 without creating anything must not look fast.
    fn measured(
        &self,
        cmd: &Invocation,
        kind: Kind,
        identity: &str,
        namespace: &str,
        cache: &Path,
    ) -> anyhow::Result<Sample> {
        let traffic = || self.latency.borrow().as_ref().map(|p| p.traffic());
        let before = traffic();
        let result = self.run_one(cmd, identity, cache)?;
        let traffic = match (before, traffic()) {
            (Some(before), Some(after)) => Some(after - before),
            _ => None,
        };
        if result.is_ok() {
            self.runtime
                .block_on(setup::verify(&self.client, kind, namespace))
                .with_context(|| format!("`{}` exited 0 but", cmd.display))?;
        }
        let cold = self
            .cache_is_cold
            .get()
            .then(|| dir_bytes(cache).unwrap_or(0));
        match result {
            Ok(run) => Ok(Sample {
                wall: run.wall.as_secs_f64(),
                cpu: (run.user + run.sys).as_secs_f64(),
                max_rss_kib: run.max_rss_kib,
                requests: None,
                traffic,
                cache_bytes: cold,
            }),
            Err(f) => bail!(
                "`{}` failed in a measured run: {} / {}",
                cmd.display,
                f.exit,
                f.message
            ),
        }
    }

    /// Fills in each sample's requests from the audit log.
    fn count_requests(
        &self,
        case: &Case,
        offset: Option<u64>,
        ours: &mut [Sample],
        theirs: &mut [Sample],
        result: &mut CaseResult,
    ) {
        let (Some(log), Some(offset)) = (&self.audit, offset) else {
            return;
        };
        let marker = format!("{}-marker", case.name);
        let settled = self
            .identities
            .kubeconfig(&marker)
            .and_then(|kc| {
                command::output(
                    &self.kubectl,
                    &[
                        "--kubeconfig",
                        &kc.to_string_lossy(),
                        "get",
                        "--raw",
                        "/version",
                    ],
                )
                .context("the marker request failed")
            })
            .map(|_| log.wait_for(offset, &marker, Duration::from_secs(10)));
        match settled {
            Ok(true) => {}
            Ok(false) => result.notes.push(
                "the audit log did not show the marker request within 10 s; counts may be short"
                    .into(),
            ),
            Err(e) => result
                .notes
                .push(format!("request counts may be short: {e:#}")),
        }
        let counts = match log.read_from(offset) {
            Ok(text) => audit::count(&text),
            Err(e) => {
                result.notes.push(format!("requests not counted: {e:#}"));
                return;
            }
        };
        let get = |id: String| counts.get(&id).cloned().unwrap_or_else(Requests::default);
        for (i, s) in ours.iter_mut().enumerate() {
            s.requests = Some(get(format!("{}-a{}", case.name, i + 1)));
        }
        for (i, s) in theirs.iter_mut().enumerate() {
            s.requests = Some(get(format!("{}-b{}", case.name, i + 1)));
        }
    }

    /// The in-process client ceiling: median of a few runs after a warm-up.
    fn ceiling(&self, case: &Case, objects: u32) -> anyhow::Result<f64> {
        let names: Vec<String> = (0..=CEILING_RUNS)
            .map(|i| format!("kb-{}-c{i}", case.name))
            .collect();
        self.prepare(case.kind, &names)?;
        let warm = case.kind.warm_up().size().unwrap_or(objects);
        let mut walls = Vec::new();
        for (i, ns) in names.iter().enumerate() {
            let wall = self.runtime.block_on(setup::ceiling(
                &self.client,
                ns,
                if i == 0 { warm } else { objects },
                CEILING_IN_FLIGHT,
            ))?;
            if i > 0 {
                walls.push(wall.as_secs_f64());
            }
        }
        stats::summarize(&walls)
            .map(|s| s.median)
            .context("no ceiling runs")
    }
}

fn environment(kubectl: &Path, server: &str, existing: bool) -> Vec<(String, String)> {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let kubectl_version = command::output(kubectl, &["version", "--client"])
        .and_then(|v| v.lines().next().map(|l| l.trim().to_string()))
        .unwrap_or_else(|| "unknown".into());
    let commit = command::output(
        "git",
        &[
            "-C",
            &paths::project_root().to_string_lossy(),
            "rev-parse",
            "--short",
            "HEAD",
        ],
    )
    .map(|s| s.trim().to_string())
    .unwrap_or_else(|| "unknown".into());
    vec![
        (
            "machine".into(),
            format!("{cores} cores, {cpu}; load average at the end {load}"),
        ),
        (
            "kubectl".into(),
            format!("{} ({kubectl_version})", kubectl.display()),
        ),
        (
            "cluster".into(),
            if existing {
                format!("existing (KUBECONFIG), server {server}")
            } else {
                format!(
                    "local: kube-apiserver {server} + etcd on tmpfs + kube-controller-manager + kube-scheduler, a real node (kubelet + containerd)"
                )
            },
        ),
        ("commit".into(), commit),
    ]
}

fn notes(counted: bool, kubectl: &Path) -> Vec<String> {
    let mut notes = vec![
        "Ours is our release binary run directly; `run-pod-dry-run-via-kubectl` shows what kubectl's plugin \
         lookup adds (kubectl starts, finds `kubectl-run_pod` on PATH and execs it)."
            .to_string(),
        "Both sides run with the same kubeconfig user; each run's client caches (discovery, OpenAPI) are in a \
         directory of the bench's own, given as `KUBECACHEDIR` (read by kubectl and the plugins alike): warm \
         (filled by the case's warm-up run) except in the matrix's cold cells, where every run starts empty. \
         Output goes to a file."
            .to_string(),
        "Requests are attributed exactly: each run's kubeconfig impersonates a unique user \
         (`as: kubeplug-bench-<case>-<a|b><run>`, group system:masters) and the audit log records it per request; \
         the controller-manager and the scheduler, which share the admin credentials, are never counted."
            .to_string(),
        "The ceiling for create-file is an in-process kube-rs client with 32 requests in flight: no process start, \
         no file parsing, no discovery."
            .to_string(),
        "The machine has 2 cores shared by the apiserver, etcd, the controller-manager, the scheduler, the kubelet and \
         containerd, and the command under test: numbers are for comparison on the same machine, not absolute."
            .to_string(),
    ];
    // Google Cloud SDK's kubectl is a "dispatcher" build: before every command it asks
    // the server's /version to pick a version-matched kubectl. Say so when it is the one.
    if command::output(kubectl, &["version", "--client"]).is_some_and(|v| v.contains("dispatcher"))
    {
        notes.push(
            "The kubectl on this machine is a \"dispatcher\" build (Google Cloud SDK): each invocation first \
             GETs /version to pick a version-matched kubectl (none matches a 1.20 server, so it runs itself, \
             1.32). That request is part of kubectl's counts and time here, as it is for its users."
                .into(),
        );
    }
    if !counted {
        notes.push("No audit log was available: requests were not counted (`--audit-log FILE` with `--existing`).".into());
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_case_names() {
        assert!(glob("create-file-500", "create-file-500"));
        assert!(!glob("create-file-500", "create-file-5000"));
        assert!(glob("create-file-500-*", "create-file-500-25ms-cold"));
        assert!(!glob("create-file-500-*", "create-file-5000-25ms-cold"));
        assert!(glob("*-25ms-cold", "run-pod-create-25ms-cold"));
        assert!(glob("*-100ms-*", "rolling-update-10-100ms-warm"));
        assert!(!glob("*-100ms-*", "rolling-update-10-25ms-warm"));
        assert!(glob("*", "anything"));
        assert!(glob("a*a", "aa"));
        assert!(!glob("a*a", "a"));
    }

    #[test]
    fn selection_keeps_the_default_set_and_adds_the_matrix_on_request() {
        let catalogue = cases::all();
        let names = |names: &[&str], matrix: bool| -> Vec<String> {
            let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            select(&catalogue, &names, matrix)
                .unwrap()
                .into_iter()
                .map(|c| c.name.clone())
                .collect()
        };
        let default: Vec<String> = cases::default_set().into_iter().map(|c| c.name).collect();
        assert_eq!(names(&[], false), default, "no argument: the default set");
        assert_eq!(names(&["default"], false), default);
        let matrix = names(&[], true);
        assert_eq!(matrix.len(), 30);
        assert!(
            matrix
                .iter()
                .all(|n| n.ends_with("-cold") || n.ends_with("-warm"))
        );
        assert_eq!(names(&["default"], true).len(), default.len() + 30);
        assert_eq!(
            names(&["create-file-50-25ms-cold", "run-pod-create"], false),
            ["run-pod-create", "create-file-50-25ms-cold"],
            "catalogue order"
        );
        assert_eq!(names(&["*-100ms-cold"], false).len(), 5);
        let err = select(&catalogue, &["create-file-7".into()], false)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("no case matches \"create-file-7\""), "{err}");
    }
}
