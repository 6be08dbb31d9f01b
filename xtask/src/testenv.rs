//! `cargo xtask testenv`: make sure a real control plane of each Kubernetes release the
//! local cluster runs ([`Release`]) can be started, and a real node beside it, building
//! what is missing.
//!
//! - the current release (`modules`): kube-apiserver, kube-controller-manager,
//!   kube-scheduler, kubectl and etcd from their published Go modules, pinned by the
//!   wrapper modules in `xtask/testenv/` (about 20 minutes on two cores, once), and
//!   the node's kubelet and kube-proxy from the same pins;
//! - 1.20.2 (`debian`): kube-apiserver and kube-controller-manager from Debian's
//!   source package, etcd from Debian (about ten minutes, once), and the node's
//!   kube-scheduler, kubelet and kube-proxy from the same source;
//! - the node's Debian packages (containerd, runc, the CNI plugins, docker-registry…)
//!   and the test images built from them (`node`, `images`), shared by both releases;
//! - krew, from its Go module (a minute, once), for the test of the install-in-CI
//!   recipe.
//!
//! Each command builds only what it runs ([`Needs`]): `testenv` and `test` everything,
//! `demo` and `cluster up` the one release they start (and its node). The Go builds
//! show their progress (`progress`).
//!
//! Each lands in its own user cache directory ([`Release::cache_dir`]), outside the
//! repository, and is built once per machine: every step is skipped when its result is
//! already there, and a release whose control plane is there but not its node builds
//! only the node's programs.

mod apt;
mod debian;
mod images;
mod modules;
mod node;
mod progress;

use std::path::Path;

use anyhow::{Context as _, bail};
use localcluster::{Binaries, NodeBinaries, Release};

use self::progress::Display;
use crate::flags;
use crate::run::output;

pub(crate) use apt::{APT_OPTS, as_root, exclusive as apt_exclusive};

/// What a command needs built: the control planes of `releases`, their nodes, and krew
/// (which only the test of the install-in-CI recipe runs).
pub struct Needs {
    pub releases: Vec<Release>,
    /// The node of each release (its kubelet; the node's packages and test images).
    pub node: bool,
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
            node: true,
            krew: true,
            own_terminal,
        }
    }

    /// Only `release` and its node, for a command that runs a cluster of it (`demo`,
    /// `cluster up`).
    pub fn release(release: Release) -> Self {
        Self {
            releases: vec![release],
            node: true,
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
    let builds = needs.releases.len() + usize::from(needs.krew) + usize::from(needs.node);
    let display = Display::for_stderr(needs.own_terminal && builds == 1);
    let node = needs.node;
    // Each release, the node's packages and images, and krew build on a thread of
    // their own: the downloads (Go modules, Debian's packages and source) of one
    // overlap the other's compiling. The go commands share Go's build and module
    // caches, which are safe for concurrent use; apt waits for the dpkg lock.
    std::thread::scope(|scope| {
        let builds: Vec<_> = needs
            .releases
            .iter()
            .map(|&release| {
                let name = format!("Kubernetes {release}");
                (
                    name,
                    scope.spawn(move || timed(|| ensure(release, force, node, display))),
                )
            })
            .chain(node.then(|| {
                let images = scope.spawn(move || timed(|| node::ensure(force)));
                ("the node's packages and test images".to_string(), images)
            }))
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
        if failed.is_empty() && node {
            failed.extend(needs.releases.iter().filter_map(|&r| report_node(r).err()));
        }
        if failed.is_empty() {
            Ok(())
        } else {
            bail!("testenv failed:\n{}", failed.join("\n"))
        }
    })
}

/// Which programs of a release to build.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wanted {
    /// The control plane's (and etcd where the release builds its own).
    pub control_plane: bool,
    /// The node's (the kubelet, kube-proxy, and 1.20.2's kube-scheduler).
    pub node: bool,
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

/// Builds what is missing of `release` (its node's programs too with `node`), or
/// everything with `force`.
fn ensure(release: Release, force: bool, node: bool, display: Display) -> anyhow::Result<()> {
    let found = if force {
        None
    } else {
        Binaries::locate(release).ok()
    };
    if found.is_none()
        && release == Release::Current
        && std::env::var_os("KUBEBUILDER_ASSETS").is_some_and(|v| !v.is_empty())
    {
        bail!(
            "KUBEBUILDER_ASSETS is set but does not hold etcd and kube-apiserver; fix it or unset it to build from source"
        );
    }
    let bin = release.bin_dir();
    let wanted = Wanted {
        control_plane: found.is_none(),
        node: node && (force || !node_programs(release).iter().all(|p| bin.join(p).is_file())),
    };
    if let Some(found) = &found {
        report(found, "available");
    }
    match release {
        Release::Current => modules::build(release, wanted, display)?,
        Release::V1_20 => debian::build(wanted)?,
    }
    if wanted.control_plane {
        report(&Binaries::locate(release)?, "built");
    }
    if wanted.node {
        for name in node_programs(release) {
            let path = bin.join(name);
            if !path.is_file() {
                bail!("the build left no {}", path.display());
            }
            eprintln!("testenv: built {} ({})", path.display(), version(&path));
        }
    }
    Ok(())
}

/// The programs of a release's node that are built with it.
fn node_programs(release: Release) -> Vec<&'static str> {
    match release {
        Release::Current => modules::NODE.iter().map(|(name, _)| *name).collect(),
        Release::V1_20 => debian::NODE.to_vec(),
    }
}

/// What a node of `release` runs, once everything is built; an error names what is
/// missing.
fn report_node(release: Release) -> Result<(), String> {
    let found = NodeBinaries::locate(release).map_err(|e| e.to_string())?;
    eprintln!(
        "testenv: the node of Kubernetes {release} ({}):",
        version(&found.kubelet)
    );
    let line = |name: &str, path: &Path| eprintln!("  {name:<24} {}", path.display());
    line("kubelet", &found.kubelet);
    if let Some(proxy) = &found.kube_proxy {
        line("kube-proxy", proxy);
    }
    line("containerd", &found.containerd);
    line("runc", &found.runc);
    line("CNI plugins", &found.cni_bin_dir);
    line("docker-registry", &found.registry);
    line(
        &format!("images ({})", localcluster::IMAGES.len()),
        &found.image_store,
    );
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
        "none: pods stay Pending (run `cargo xtask testenv`)",
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
