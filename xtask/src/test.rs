//! `cargo xtask test`: what CI runs — the control plane (built if needed), a build of
//! every binary, the krew packaging checks, lints (clippy, rustfmt, `tidy`, the
//! workflows, cargo-deny, the MSRV; see `lint`), the generated files (`codegen --check`),
//! and every test tier (unit, transcript, end-to-end).

use std::time::Instant;

use anyhow::Context as _;

use crate::flags;
use crate::run::{cargo, run as sh};

pub fn run(flags: &flags::Test) -> anyhow::Result<()> {
    let clock = Clock::start();
    // The control planes (the longest step on a fresh machine: about 23 minutes of CPU
    // for the two releases) build on a thread of their own while the workspace builds
    // and the lints run, and are waited for only before the tests. Both sides compile on
    // every core, so this does not halve anything; it fills the time each spends not
    // compiling (module and package downloads, apt, single-threaded links) with the
    // other's work. When everything is built already, it is a second of checks.
    let testenv = (!flags.no_e2e).then(|| {
        std::thread::spawn(move || {
            // Everything: both releases' suites and the krew recipe's test run. Plain
            // progress lines: cargo prints beside it.
            let result = crate::testenv::build(&crate::testenv::Needs::everything(false), false);
            clock.mark("control planes ready (testenv)");
            result
        })
    });
    let checked = build_and_check(flags, clock);
    if let Some(testenv) = testenv {
        if !testenv.is_finished() {
            // Waited for even after a failed check: its `go build`s would otherwise go
            // on as orphans.
            eprintln!("xtask test: waiting for the control planes (testenv)");
        }
        let built = testenv
            .join()
            .map_err(|_| anyhow::anyhow!("building the control planes panicked"))
            .and_then(|r| r.context("building the control planes for the end-to-end tests"));
        checked?;
        built?;
    } else {
        checked?;
    }
    // Here, not among the lints: the golden table's generator runs the reference kubectl,
    // which testenv has built by now, and the generators' test binaries are those just
    // built for the tests, so this is seconds.
    crate::codegen::run(&flags::Codegen { check: true })?;
    clock.mark("generated files current (codegen --check)");
    let tested = test(flags);
    clock.mark("tests done");
    tested
}

/// How many tests run at once unless `RUST_TEST_THREADS` says otherwise.
const E2E_TEST_THREADS: &str = "4";

/// Everything before the tests run: the build, packaging, lints and every test binary.
fn build_and_check(flags: &flags::Test, clock: Clock) -> anyhow::Result<()> {
    let root = crate::paths::project_root();
    let cargo = || cargo(&root);
    // The e2e tests run the plugins and the cluster supervisor as programs, and
    // `cargo test` alone does not build other packages' binaries.
    sh(cargo().args(["build", "--workspace", "--bins"]))?;
    clock.mark("workspace built");
    // Packaging, checked as krew would, on archives of the debug build just made: the
    // release profile (fat LTO) costs minutes on two cores and is left to
    // `cargo xtask dist` and the release workflow (see CONTRIBUTING.md). The binaries
    // are packed as built (`prebuilt`): dist's own `cargo build -p <plugins>` unifies
    // features over the plugins alone, not the workspace, and so compiled hyper, kube
    // and our crates a second time (2 min 14 s on a fresh machine) for archives whose
    // layout and manifests are all this checks.
    let dist_check = crate::paths::target_dir().join("dist-check");
    crate::dist::dist(&flags::Dist {
        targets: vec![crate::targets::host_triple()?],
        profile: "dev".into(),
        out: Some(dist_check.clone()),
        no_build: false,
        prebuilt: true,
        cargo: None,
        base_url: None,
    })?;
    crate::krew_check::run(&flags::KrewCheck {
        dir: Some(dist_check),
        archives: None,
    })?;
    clock.mark("packaging checked");
    sh(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--quiet",
        "--",
        "-D",
        "warnings",
    ]))?;
    sh(cargo().args(["fmt", "--all", "--check"]))?;
    // The architecture's invariants (layering, `//!` lines, the code map, doc
    // citations): a second, so before the slow hygiene checks.
    crate::tidy::run()?;
    clock.mark("clippy, rustfmt, tidy");
    // Hygiene: the workflows (actionlint, zizmor, their target lists) and the
    // dependency graph (licences, bans, sources; the MSRV).
    crate::lint::workflows(&root)?;
    crate::lint::deny(&root)?;
    crate::lint::msrv(&root)?;
    clock.mark("workflows, cargo-deny, MSRV");
    if !flags.no_e2e {
        // Every test binary, compiled while the control planes may still be building.
        sh(cargo().args(["test", "--workspace", "--no-run", "--quiet"]))?;
        clock.mark("test binaries built");
    }
    Ok(())
}

/// Every test tier.
fn test(flags: &flags::Test) -> anyhow::Result<()> {
    let root = crate::paths::project_root();
    let cargo = || cargo(&root);
    // Lines the e2e tests leave for the end (e.g. the kill points each crash-safety
    // scenario covered): the test runner hides a passing test's output.
    let report = crate::paths::target_dir()
        .join("debug")
        .join("e2e-report.txt");
    let _ = std::fs::remove_file(&report);
    let mut test = cargo();
    test.args(["test", "--workspace"]);
    if flags.no_e2e {
        test.args(["--exclude", "tests"]);
    }
    // Four tests at a time by default, not one per core: the e2e tests mostly wait on
    // the cluster (controllers, the kubelet, timeouts), and on two cores four
    // at a time took 9 min 34 s where two took 13 min 32 s (the CPU 86% busy). Eight
    // at a time was faster still, but the signal tests' timing no longer held.
    if std::env::var_os("RUST_TEST_THREADS").is_none() {
        test.env("RUST_TEST_THREADS", E2E_TEST_THREADS);
    }
    test.args(["--no-fail-fast", "--"]).args(&flags.cargo_args);
    // The ids of the nodes the run starts, so that its check of the host tells them
    // from clusters started beside it.
    let nodes = crate::paths::target_dir()
        .join("debug")
        .join("e2e-nodes.txt");
    let _ = std::fs::remove_file(&nodes);
    test.env(localcluster::host::RUN_NODES_ENV, &nodes);
    let host = localcluster::host::Snapshot::take();
    let result = sh(&mut test);
    if let Ok(lines) = std::fs::read_to_string(&report) {
        eprintln!("xtask test: e2e report ({}):\n{lines}", report.display());
    }
    result?;
    if !flags.no_e2e {
        let ours: Vec<String> = std::fs::read_to_string(&nodes)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        host_as_it_was(&host, &ours)?;
    }
    if flags.no_e2e {
        sh(cargo()
            .args(["test", "-p", "tests", "--lib", "--bins", "--"])
            .args(&flags.cargo_args))?;
        eprintln!("xtask test: end-to-end tests skipped (--no-e2e)");
    }
    Ok(())
}

/// Fails unless the real nodes of the e2e run (`ours`: their ids) left the host as it
/// was: the sysctls a kubelet rewrites, the host directories it makes, no node's
/// namespace, run directory or cgroups. The clusters stop once the test process has
/// gone (their supervisors see its pipe close), so this waits a little for them. A
/// cluster someone else started meanwhile is said, not held against the run.
fn host_as_it_was(before: &localcluster::host::Snapshot, ours: &[String]) -> anyhow::Result<()> {
    let deadline = Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let changes = localcluster::host::Snapshot::take().changes_since(before, ours);
        if changes.left.is_empty() {
            if changes.others.is_empty() {
                eprintln!("xtask test: the host is as it was before the e2e tests");
            } else {
                eprintln!(
                    "xtask test: the e2e tests' nodes are gone ({} of them); clusters this run did not start account for the rest:\n  {}",
                    ours.len(),
                    changes.others.join("\n  ")
                );
            }
            return Ok(());
        }
        if Instant::now() > deadline {
            anyhow::bail!(
                "the e2e tests' nodes left the host changed:\n  {}",
                changes.left.join("\n  ")
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// Wall time since the start, printed at each step: CI's log then says where a run's
/// minutes went (the control planes beside the build, the tests).
#[derive(Clone, Copy)]
struct Clock(Instant);

impl Clock {
    fn start() -> Self {
        Self(Instant::now())
    }

    fn mark(self, what: &str) {
        let secs = self.0.elapsed().as_secs();
        eprintln!("xtask test: [{:>2}:{:02}] {what}", secs / 60, secs % 60);
    }
}
