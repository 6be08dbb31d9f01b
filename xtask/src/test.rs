//! `cargo xtask test`: what CI runs — the control plane (built if needed), a build of
//! every binary, the krew packaging checks, lints (clippy, rustfmt, `tidy`, the
//! workflows, cargo-deny, the MSRV; see `lint`), and every test tier (unit, transcript, end-to-end).

use std::process::Command;

use crate::flags;
use crate::run::run as sh;

pub fn run(flags: &flags::Test) -> anyhow::Result<()> {
    let root = crate::project_root();
    let cargo = || {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(&root);
        cmd
    };
    if !flags.no_e2e {
        crate::testenv::run(&flags::Testenv {
            force: false,
            kubernetes: None,
        })?;
    }
    // The e2e tests run the plugins and the cluster supervisor as programs, and
    // `cargo test` alone does not build other packages' binaries.
    sh(cargo().args(["build", "--workspace", "--bins"]))?;
    // Packaging, checked as krew would, on archives of the debug build just made: the
    // release profile (fat LTO) costs minutes on two cores and is left to
    // `cargo xtask dist` and the release workflow (see CONTRIBUTING.md).
    let dist_check = crate::target_dir().join("dist-check");
    crate::dist::dist(&flags::Dist {
        targets: vec![crate::targets::host_triple()?],
        profile: "dev".into(),
        out: Some(dist_check.clone()),
        no_build: false,
        prebuilt: false,
        cargo: None,
        base_url: None,
        write_templates: false,
    })?;
    crate::krew_check::run(&flags::KrewCheck {
        dir: Some(dist_check),
        archives: None,
    })?;
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
    // Hygiene: the workflows (actionlint, zizmor, their target lists) and the
    // dependency graph (licences, bans, sources; the MSRV).
    crate::lint::workflows(&root)?;
    crate::lint::deny(&root)?;
    crate::lint::msrv(&root)?;
    // Lines the e2e tests leave for the end (e.g. the kill points each crash-safety
    // scenario covered): the test runner hides a passing test's output.
    let report = crate::target_dir().join("debug").join("e2e-report.txt");
    let _ = std::fs::remove_file(&report);
    let mut test = cargo();
    test.args(["test", "--workspace"]);
    if flags.no_e2e {
        test.args(["--exclude", "tests"]);
    }
    test.args(["--no-fail-fast", "--"]).args(&flags.cargo_args);
    let result = sh(&mut test);
    if let Ok(lines) = std::fs::read_to_string(&report) {
        eprintln!("xtask test: e2e report ({}):\n{lines}", report.display());
    }
    result?;
    if flags.no_e2e {
        sh(cargo()
            .args(["test", "-p", "tests", "--lib", "--bins", "--"])
            .args(&flags.cargo_args))?;
        eprintln!("xtask test: end-to-end tests skipped (--no-e2e)");
    }
    Ok(())
}
