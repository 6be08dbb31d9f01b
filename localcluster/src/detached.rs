//! A cluster that outlives the command that starts it: `kubeplug-cluster` built, started
//! detached in its own process group, and stopped from its state file. One place for
//! `cargo xtask cluster|demo` and the bench, which keeps a cluster of its own.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::process::{alive, signal};
use crate::state::ClusterState;
use crate::{Binaries, Release};

/// The supervisor of a workspace: built from its sources into its target directory.
pub struct Supervisor {
    root: PathBuf,
    target: PathBuf,
}

/// How to start a cluster (`kubeplug-cluster`'s flags).
pub struct Start<'a> {
    pub release: Release,
    /// A metadata-level audit log (to count API requests).
    pub audit: bool,
    /// Nodes: 1 (a real node) or 0 (a control plane alone).
    pub nodes: u8,
    /// The API server's in-flight limit for mutating requests of users outside
    /// `system:masters` (`--throttle-mutating`), `None` for no limit.
    pub throttle_mutating: Option<u32>,
    /// Extra kube-apiserver flags (`--apiserver-arg`).
    pub apiserver_args: &'a [String],
}

impl Supervisor {
    /// The supervisor of the workspace at `root`, whose cargo target directory is `target`.
    pub fn new(root: PathBuf, target: PathBuf) -> Self {
        Self { root, target }
    }

    /// Builds the supervisor binary and returns its path.
    pub fn build(&self) -> anyhow::Result<PathBuf> {
        let args = [
            "build",
            "--quiet",
            "-p",
            "localcluster",
            "--bin",
            "kubeplug-cluster",
        ];
        eprintln!("$ cargo {}", args.join(" "));
        let status = Command::new(env!("CARGO"))
            .current_dir(&self.root)
            .args(args)
            .status()
            .context("cannot run cargo")?;
        if !status.success() {
            bail!("`cargo {}` failed ({status})", args.join(" "));
        }
        Ok(self.target.join("debug").join("kubeplug-cluster"))
    }

    /// Starts a cluster with its state in `state_dir`, unless one runs there already
    /// (an error); returns its state once the supervisor reports it ready.
    pub fn up(&self, state_dir: &Path, start: &Start<'_>) -> anyhow::Result<ClusterState> {
        if let Some(state) = ClusterState::read(state_dir)? {
            if state.is_running() {
                bail!(
                    "a cluster is already running (supervisor pid {}, kubeconfig {}); stop it first with `cargo xtask cluster down`",
                    state.supervisor_pid,
                    state.kubeconfig.display()
                );
            }
            eprintln!("cluster: cleaning up after a cluster that did not shut down cleanly");
            self.down(state_dir)?;
        }
        let release = start.release;
        Binaries::locate(release)?;
        let supervisor = self.build()?;
        std::fs::create_dir_all(state_dir)?;
        let log_path = state_dir.join("supervisor.log");
        let log = std::fs::File::create(&log_path)?;
        let mut cmd = Command::new(&supervisor);
        cmd.arg("--state-dir")
            .arg(state_dir)
            .arg("--kubernetes")
            .arg(release.version())
            .arg("--nodes")
            .arg(start.nodes.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log);
        if start.audit {
            cmd.arg("--audit");
        }
        if let Some(n) = start.throttle_mutating {
            cmd.arg("--throttle-mutating").arg(n.to_string());
        }
        for flag in start.apiserver_args {
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
                crate::process::tail(&log_path, 25)
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
    pub fn down(&self, state_dir: &Path) -> anyhow::Result<()> {
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
            self.sweep_nodes()?;
        }
        std::fs::remove_dir_all(state_dir)
            .with_context(|| format!("cannot remove {}", state_dir.display()))?;
        eprintln!("cluster: stopped");
        Ok(())
    }

    /// Removes what real nodes whose supervisor is gone left on the host
    /// (`kubeplug-cluster --sweep`).
    fn sweep_nodes(&self) -> anyhow::Result<()> {
        let supervisor = self.build()?;
        eprintln!("$ {} --sweep", supervisor.display());
        let status = Command::new(&supervisor)
            .arg("--sweep")
            .status()
            .with_context(|| format!("cannot run {}", supervisor.display()))?;
        if !status.success() {
            bail!("`{} --sweep` failed ({status})", supervisor.display());
        }
        Ok(())
    }
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
