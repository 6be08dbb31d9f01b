//! `cargo xtask cluster up|down|env`: a long-lived local cluster for development, the
//! demo and benchmarks. The cluster itself is the `kubeplug-cluster` supervisor (the
//! same one the e2e harness uses), started detached in its own process group.

use std::path::{Path, PathBuf};

use anyhow::Context;
use localcluster::detached::{Start, Supervisor};
use localcluster::state::ClusterState;
use localcluster::{Binaries, Release};

use crate::flags::{self, ClusterAction};
use crate::paths;

pub fn run(flags: &flags::Cluster) -> anyhow::Result<()> {
    let state_dir = flags.state_dir.clone().unwrap_or_else(default_state_dir);
    match &flags.action {
        ClusterAction::Up {
            kubernetes,
            audit,
            nodes,
            apiserver_arg,
        } => {
            let release = match kubernetes {
                Some(name) => Release::parse(name)?,
                None => Release::from_env()?,
            };
            ensure_release(release)?;
            let state = up_with(&state_dir, release, *audit, *nodes, apiserver_arg)?;
            let down = match &flags.state_dir {
                Some(dir) => format!("cargo xtask cluster --state-dir {} down", dir.display()),
                None => "cargo xtask cluster down".into(),
            };
            eprintln!(
                "cluster: to use it: export KUBECONFIG={}\ncluster: stop it with `{down}`",
                state.kubeconfig.display()
            );
            println!("{}", state.kubeconfig.display());
            Ok(())
        }
        ClusterAction::Down => down(&state_dir),
        ClusterAction::Env => {
            let state = running(&state_dir)?.with_context(|| {
                format!(
                    "no cluster is running (state dir {}); start one with `cargo xtask cluster up`",
                    state_dir.display()
                )
            })?;
            let release = state.release()?;
            let on_path = PathForUser::link(release)?;
            eprintln!("cluster: {}", on_path.says());
            println!("export KUBECONFIG={}", state.kubeconfig.display());
            println!("export PATH={}:$PATH", on_path.dir.display());
            Ok(())
        }
    }
}

/// `target/kubeplug-cluster`: per checkout, and ignored by git.
pub fn default_state_dir() -> PathBuf {
    paths::target_dir().join("kubeplug-cluster")
}

/// The running cluster's state, `None` if there is none (stale state is reported).
pub fn running(state_dir: &Path) -> anyhow::Result<Option<ClusterState>> {
    match ClusterState::read(state_dir)? {
        Some(state) if state.is_running() => Ok(Some(state)),
        Some(state) => {
            eprintln!(
                "cluster: found state of a cluster whose supervisor (pid {}) is gone; `cargo xtask cluster down` cleans it up",
                state.supervisor_pid
            );
            Ok(None)
        }
        None => Ok(None),
    }
}

/// Builds the control plane of `release` if it is missing: only that release, since
/// `cluster up` and the demo run one (`cargo xtask testenv` builds them all).
pub fn ensure_release(release: Release) -> anyhow::Result<()> {
    if Binaries::locate(release).is_err() {
        crate::testenv::build(&crate::testenv::Needs::release(release), false)?;
    }
    Ok(())
}

/// The workspace's `kubeplug-cluster`, built and run detached (`localcluster::detached`).
fn supervisor() -> Supervisor {
    Supervisor::new(paths::project_root(), paths::target_dir())
}

/// Starts the cluster (no audit log, no throttling) unless it runs already; returns
/// its state.
pub fn up(state_dir: &Path, release: Release, nodes: u8) -> anyhow::Result<ClusterState> {
    up_with(state_dir, release, false, nodes, &[])
}

/// [`up`], with an audit log on request and extra kube-apiserver flags
/// (`kubeplug-cluster --audit --apiserver-arg`).
fn up_with(
    state_dir: &Path,
    release: Release,
    audit: bool,
    nodes: u8,
    apiserver_args: &[String],
) -> anyhow::Result<ClusterState> {
    supervisor().up(
        state_dir,
        &Start {
            release,
            audit,
            nodes,
            throttle_mutating: None,
            apiserver_args,
        },
    )
}

/// Stops the cluster of `state_dir` and removes its state.
pub fn down(state_dir: &Path) -> anyhow::Result<()> {
    supervisor().down(state_dir)
}

/// The plugins as the cluster's user meets them: kubectl finds them on `PATH`.
const PLUGINS: [&str; 3] = [
    "kubectl-run_pod",
    "kubectl-create_file",
    "kubectl-rolling_update",
];

/// A directory to put first on `PATH` for driving the local cluster like with like:
/// links to the three plugins (`target/debug` also holds `kubectl-*.d` files that
/// `kubectl plugin list` would warn about) and to the release's own kubectl. kubectl
/// supports a server one minor version older or newer than itself; the one installed
/// on a machine may be several minors behind the server the cluster runs.
pub struct PathForUser {
    /// `target/plugins-on-path`.
    pub dir: PathBuf,
    pub release: Release,
    /// The release's own kubectl, linked in `dir`; `None` where the release has none
    /// (v1.20.2: the installed kubectl is its reference).
    pub kubectl: Option<PathBuf>,
}

impl PathForUser {
    /// (Re)makes the directory of links for the plugins of `target/debug` and the
    /// kubectl of `release`.
    pub fn link(release: Release) -> anyhow::Result<Self> {
        let bin = paths::target_dir().join("debug");
        let dir = paths::target_dir().join("plugins-on-path");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        for name in PLUGINS {
            link(&bin.join(name), &dir.join(name))?;
            // kubectl (1.26+) runs `kubectl_complete-<plugin>` for completion: the plugin itself.
            let helper = name.replacen("kubectl-", "kubectl_complete-", 1);
            link(&bin.join(name), &dir.join(helper))?;
        }
        let kubectl = Binaries::locate(release)?.kubectl;
        if let Some(kubectl) = &kubectl {
            link(kubectl, &dir.join("kubectl"))?;
        }
        Ok(Self {
            dir,
            release,
            kubectl,
        })
    }

    /// What the directory puts first on `PATH`, in words.
    pub fn says(&self) -> String {
        match &self.kubectl {
            Some(kubectl) => format!(
                "PATH starts with {}: the plugins and kubectl {} ({}), the server's own release",
                self.dir.display(),
                self.release,
                kubectl.display()
            ),
            None => format!(
                "PATH starts with {}: the plugins; Kubernetes {} has no kubectl of its own here, so the kubectl on PATH is used",
                self.dir.display(),
                self.release
            ),
        }
    }
}

fn link(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::os::unix::fs::symlink(from, to).with_context(|| format!("cannot link {}", to.display()))
}
