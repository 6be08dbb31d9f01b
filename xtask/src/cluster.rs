//! `cargo xtask cluster up|down|env`: a long-lived local cluster for development, the
//! demo and benchmarks. The cluster itself is the `kubeplug-cluster` supervisor (the
//! same one the e2e harness uses), started detached in its own process group.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use localcluster::process::{alive, signal};
use localcluster::state::ClusterState;
use localcluster::{Binaries, Release};

use crate::flags::{self, ClusterAction};

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
            let state = up_with(&state_dir, release, *audit, *nodes, None, apiserver_arg)?;
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
    crate::target_dir().join("kubeplug-cluster")
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

/// Starts the cluster unless it runs already; returns its state.
/// `throttle_mutating`: the API server's in-flight limit for mutating requests of
/// users outside `system:masters` (`kubeplug-cluster --throttle-mutating`), `None` for
/// no limit.
pub fn up(
    state_dir: &Path,
    release: Release,
    audit: bool,
    nodes: u8,
    throttle_mutating: Option<u32>,
) -> anyhow::Result<ClusterState> {
    up_with(state_dir, release, audit, nodes, throttle_mutating, &[])
}

/// [`up`], with extra kube-apiserver flags (`kubeplug-cluster --apiserver-arg`).
pub fn up_with(
    state_dir: &Path,
    release: Release,
    audit: bool,
    nodes: u8,
    throttle_mutating: Option<u32>,
    apiserver_args: &[String],
) -> anyhow::Result<ClusterState> {
    if let Some(state) = ClusterState::read(state_dir)? {
        if state.is_running() {
            bail!(
                "a cluster is already running (supervisor pid {}, kubeconfig {}); stop it first with `cargo xtask cluster down`",
                state.supervisor_pid,
                state.kubeconfig.display()
            );
        }
        eprintln!("cluster: cleaning up after a cluster that did not shut down cleanly");
        down(state_dir)?;
    }
    Binaries::locate(release)?;
    let supervisor = build_supervisor()?;
    std::fs::create_dir_all(state_dir)?;
    let log_path = state_dir.join("supervisor.log");
    let log = std::fs::File::create(&log_path)?;
    let mut cmd = Command::new(&supervisor);
    cmd.arg("--state-dir")
        .arg(state_dir)
        .arg("--kubernetes")
        .arg(release.version())
        .arg("--nodes")
        .arg(nodes.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log);
    if audit {
        cmd.arg("--audit");
    }
    if let Some(n) = throttle_mutating {
        cmd.arg("--throttle-mutating").arg(n.to_string());
    }
    for flag in apiserver_args {
        cmd.arg(format!("--apiserver-arg={flag}"));
    }
    // Its own process group: Ctrl-C in this terminal later must not stop the cluster.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    eprintln!("cluster: starting (logs in {})", state_dir.display());
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", supervisor.display()))?;
    let stdout = child.stdout.take().context("supervisor stdout")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    if !line.starts_with("ready ") {
        let _ = child.wait();
        bail!(
            "the cluster did not start; last lines of {}:\n{}",
            log_path.display(),
            localcluster::process::tail(&log_path, 25)
        );
    }
    let state = ClusterState::read(state_dir)?
        .context("the supervisor reported ready but wrote no state file")?;
    // How to use and stop it is the caller's to say: the benchmark stops its own
    // cluster, and a hint about `cluster down` would point at the wrong state dir.
    eprintln!(
        "cluster: Kubernetes {release} up in {:.1}s: server {}",
        started.elapsed().as_secs_f64(),
        state.server
    );
    Ok(state)
}

/// Stops the supervisor (which stops its children), then anything recorded that is
/// still alive, and removes the state directory.
pub fn down(state_dir: &Path) -> anyhow::Result<()> {
    let Some(state) = ClusterState::read(state_dir)? else {
        eprintln!(
            "cluster: no cluster is running (no state in {})",
            state_dir.display()
        );
        if state_dir.exists() {
            std::fs::remove_dir_all(state_dir)?;
        }
        return Ok(());
    };
    if state.is_running() && is_process(state.supervisor_pid, "kubeplug-cluster") {
        signal(state.supervisor_pid, 15);
        if !wait_gone(state.supervisor_pid, Duration::from_secs(30)) {
            eprintln!(
                "cluster: supervisor {} did not stop in 30s; killing it",
                state.supervisor_pid
            );
            signal(state.supervisor_pid, 9);
        }
    } else {
        eprintln!(
            "cluster: the supervisor (pid {}) is not running; removing leftovers",
            state.supervisor_pid
        );
    }
    for p in &state.processes {
        // Pids get reused: only touch a process that still is the one we started.
        if alive(p.pid) && is_process(p.pid, &p.name) {
            eprintln!("cluster: stopping leftover {} (pid {})", p.name, p.pid);
            signal(p.pid, 9);
        }
    }
    if state.netns.is_some() {
        // A real node's containers, mounts, cgroups and namespace outlive a supervisor
        // that was killed; the supervisor's own sweep removes them.
        sweep_nodes()?;
    }
    std::fs::remove_dir_all(state_dir)
        .with_context(|| format!("cannot remove {}", state_dir.display()))?;
    eprintln!("cluster: stopped");
    Ok(())
}

fn is_process(pid: u32, name: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|cmd| String::from_utf8_lossy(&cmd).contains(name))
}

fn wait_gone(pid: u32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if !alive(pid) || !is_process(pid, "kubeplug-cluster") {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// Removes what real nodes whose supervisor is gone left on the host
/// (`kubeplug-cluster --sweep`).
fn sweep_nodes() -> anyhow::Result<()> {
    let supervisor = build_supervisor()?;
    crate::run::run(Command::new(supervisor).arg("--sweep"))
}

/// Builds the supervisor binary and returns its path.
pub fn build_supervisor() -> anyhow::Result<PathBuf> {
    crate::run::run(
        Command::new(env!("CARGO"))
            .current_dir(crate::project_root())
            .args([
                "build",
                "--quiet",
                "-p",
                "localcluster",
                "--bin",
                "kubeplug-cluster",
            ]),
    )?;
    Ok(crate::target_dir().join("debug").join("kubeplug-cluster"))
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
        let bin = crate::target_dir().join("debug");
        let dir = crate::target_dir().join("plugins-on-path");
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
