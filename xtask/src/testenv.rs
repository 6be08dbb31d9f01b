//! `cargo xtask testenv`: make sure a real control plane of each Kubernetes release the
//! local cluster runs ([`Release`]) can be started, building what is missing.
//!
//! - the current release (`modules`): kube-apiserver, kube-controller-manager,
//!   kube-scheduler, kubectl and etcd from their published Go modules, pinned by the
//!   wrapper modules in `xtask/testenv/` (about 20 minutes on two cores, once);
//! - 1.20.2 (`debian`): kube-apiserver and kube-controller-manager from Debian's
//!   source package, etcd from Debian (about ten minutes, once);
//! - krew, from its Go module (a minute, once), for the test of the install-in-CI
//!   recipe.
//!
//! Each command builds only what it runs ([`Needs`]): `testenv` and `test` everything,
//! `demo` and `cluster up` the one release they start. The Go builds show their
//! progress (`progress`).
//!
//! Each lands in its own user cache directory ([`Release::cache_dir`]), outside the
//! repository, and is built once per machine: every step is skipped when its result is
//! already there.

mod debian;
mod modules;
mod progress;

use std::path::Path;

use anyhow::{Context as _, bail};
use localcluster::{Binaries, Release};

use self::progress::Display;
use crate::flags;
use crate::run::output;

pub(crate) use debian::{APT_OPTS, as_root};

/// What a command needs built: the control planes of `releases`, and krew (which only
/// the test of the install-in-CI recipe runs).
pub struct Needs {
    pub releases: Vec<Release>,
    pub krew: bool,
    /// Whether stderr is the builds' alone while they run (nothing else prints beside
    /// them), so that a single build may show its progress as one moving line.
    pub own_terminal: bool,
}

impl Needs {
    /// Everything the tests run against: every release, and krew.
    pub fn everything(own_terminal: bool) -> Self {
        Self {
            releases: Release::ALL.to_vec(),
            krew: true,
            own_terminal,
        }
    }

    /// Only `release`, for a command that runs a cluster of it (`demo`, `cluster up`).
    pub fn release(release: Release) -> Self {
        Self {
            releases: vec![release],
            krew: false,
            own_terminal: true,
        }
    }
}

pub fn run(flags: &flags::Testenv) -> anyhow::Result<()> {
    let needs = match flags.kubernetes.as_deref() {
        None | Some("all") => Needs::everything(true),
        Some(name) => Needs::release(Release::parse(name)?),
    };
    build(&needs, flags.force)
}

/// Builds what `needs` names and is missing (everything with `force`).
pub fn build(needs: &Needs, force: bool) -> anyhow::Result<()> {
    // One build at a time may draw a moving line; beside another, each prints plain
    // lines (see `progress`).
    let alone = needs.own_terminal && needs.releases.len() + usize::from(needs.krew) == 1;
    let display = Display::for_stderr(alone);
    // Each release and krew build on a thread of their own: the downloads (Go modules,
    // Debian's packages and source) of one overlap the other's compiling. The go
    // commands share Go's build and module caches, which are safe for concurrent use.
    std::thread::scope(|scope| {
        let builds: Vec<_> = needs
            .releases
            .iter()
            .map(|&release| {
                let name = format!("Kubernetes {release}");
                (
                    name,
                    scope.spawn(move || timed(|| ensure(release, force, display))),
                )
            })
            .chain(
                needs
                    .krew
                    .then(|| ("krew".to_string(), scope.spawn(|| timed(ensure_krew)))),
            )
            .collect();
        let mut failed = Vec::new();
        for (name, build) in builds {
            match build.join() {
                Ok((Ok(()), took)) => {
                    eprintln!("testenv: {name} ready after {}", minutes(took));
                }
                Ok((Err(e), _)) => failed.push(format!("{name}: {e:#}")),
                Err(_) => failed.push(format!("{name}: the build panicked")),
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            bail!("testenv failed:\n{}", failed.join("\n"))
        }
    })
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, std::time::Duration) {
    let start = std::time::Instant::now();
    (f(), start.elapsed())
}

fn minutes(d: std::time::Duration) -> String {
    let secs = d.as_secs();
    format!("{} min {:02} s", secs / 60, secs % 60)
}

/// krew, which the e2e test of the install-in-CI recipe (`docs/install-in-ci.md`) runs:
/// built once per machine from its published Go module, as the current control plane
/// is (no registry here ships krew's binary), into the cache beside it.
fn ensure_krew() -> anyhow::Result<()> {
    let binary = localcluster::krew_binary();
    if binary.is_file() {
        return Ok(());
    }
    let bin = binary.parent().context("krew's directory")?;
    std::fs::create_dir_all(bin).with_context(|| format!("cannot create {}", bin.display()))?;
    let go = modules::go_command()?;
    let module = format!("sigs.k8s.io/krew/cmd/krew@{}", localcluster::KREW_VERSION);
    eprintln!("testenv: building krew ({module})");
    crate::run::run(
        std::process::Command::new(go)
            .args(["install", &module])
            .env("GOBIN", bin)
            // A go.work or GOFLAGS of the machine's must not change the build.
            .env("GOWORK", "off")
            .env_remove("GOFLAGS")
            .current_dir(bin),
    )?;
    std::fs::rename(bin.join("krew"), &binary)
        .with_context(|| format!("cannot move krew to {}", binary.display()))?;
    eprintln!("testenv: krew {}", binary.display());
    Ok(())
}

/// Builds `release` unless it is already there (or `force`).
fn ensure(release: Release, force: bool, display: Display) -> anyhow::Result<()> {
    if !force && let Ok(found) = Binaries::locate(release) {
        report(&found, "available");
        return Ok(());
    }
    if release == Release::Current
        && std::env::var_os("KUBEBUILDER_ASSETS").is_some_and(|v| !v.is_empty())
    {
        bail!(
            "KUBEBUILDER_ASSETS is set but does not hold etcd and kube-apiserver; fix it or unset it to build from source"
        );
    }
    match release {
        Release::Current => modules::build(release, display)?,
        Release::V1_20 => debian::build()?,
    }
    report(&Binaries::locate(release)?, "built");
    Ok(())
}

fn report(found: &Binaries, what: &str) {
    eprintln!(
        "testenv: Kubernetes {} {what} ({}):",
        found.release,
        version(&found.kube_apiserver)
    );
    let line = |name: &str, path: Option<&Path>, without: &str| match path {
        Some(p) => eprintln!("  {name:<24} {}", p.display()),
        None => eprintln!("  {name:<24} ({without})"),
    };
    line("etcd", Some(&found.etcd), "");
    line("kube-apiserver", Some(&found.kube_apiserver), "");
    line(
        "kube-controller-manager",
        found.kube_controller_manager.as_deref(),
        "none: controllers will not run",
    );
    line(
        "kube-scheduler",
        found.kube_scheduler.as_deref(),
        "none: the simulated node binds pods",
    );
    line(
        "kubectl",
        found.kubectl.as_deref(),
        "none: the kubectl on PATH is the reference",
    );
}

fn version(binary: &Path) -> String {
    output(binary, &["--version"])
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "version unknown".into())
}
