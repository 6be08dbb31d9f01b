//! `kubeplug-cluster`: supervises one local control plane plus the simulated node.
//!
//! `cargo xtask cluster up` starts it detached; the e2e harness starts it with
//! `--wait-stdin`, so that the cluster goes away when the test process does, however
//! it ends (a closed pipe is the one signal that survives `kill -9` of the parent).
//!
//! On start it writes `<state-dir>/cluster.json` (see [`tests::state::ClusterState`])
//! and prints one line `ready <kubeconfig>` on stdout. It stops everything on SIGINT,
//! SIGTERM, stdin EOF (with `--wait-stdin`) or when a component crashes. SIGUSR1
//! restarts kube-apiserver on the same etcd (a fault the e2e tests inject) and
//! rewrites the state file with its new pid.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use tests::controlplane::{self, Binaries, ControlPlane, Release};
use tests::state::{ClusterState, ProcessEntry};
use tokio::io::AsyncReadExt;
use tokio::signal::unix::{SignalKind, signal};

#[derive(Parser, Debug)]
#[command(
    name = "kubeplug-cluster",
    version,
    about = "Run a local control plane and simulated node until stopped"
)]
struct Args {
    /// Directory for certificates, kubeconfig, logs and the state file.
    #[arg(long, value_name = "DIR")]
    state_dir: PathBuf,
    /// The Kubernetes release to run (`v1.37.2`, `v1.20.2`; default:
    /// $KUBEPLUG_KUBERNETES, else the current release).
    #[arg(long, value_name = "VERSION")]
    kubernetes: Option<String>,
    /// Stop when standard input closes (used by the test harness).
    #[arg(long)]
    wait_stdin: bool,
    /// Remove the state directory after a clean shutdown (it is kept when something failed).
    #[arg(long)]
    remove_state: bool,
    /// Write a metadata-level audit log (for counting API requests).
    #[arg(long)]
    audit: bool,
    /// Number of simulated nodes.
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// Default delay before a pod on a simulated node becomes Ready, in milliseconds.
    #[arg(long, default_value_t = 200)]
    ready_after_ms: u64,
    /// Throttle like a busy cluster: API Priority and Fairness off and at most N
    /// mutating requests in flight (the API server answers 429 with Retry-After: 1
    /// beyond; system:masters users are exempt, the `limited` user is not).
    #[arg(long, value_name = "N")]
    throttle_mutating: Option<u32>,
    /// With --throttle-mutating: at most N read requests in flight (0: no limit).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        requires = "throttle_mutating"
    )]
    throttle_reads: u32,
    /// An extra kube-apiserver flag, after the ones the cluster sets (repeatable),
    /// e.g. `--apiserver-arg=--goaway-chance=0.02`.
    #[arg(long, value_name = "FLAG", allow_hyphen_values = true)]
    apiserver_arg: Vec<String>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,kube_client::client::builder=off".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kubeplug-cluster: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &Args) -> anyhow::Result<()> {
    let release = match &args.kubernetes {
        Some(name) => Release::parse(name)?,
        None => Release::from_env()?,
    };
    let binaries = Binaries::locate(release)?;
    let with_scheduler = binaries.kube_scheduler.is_some();
    let with_controllers = binaries.kube_controller_manager.is_some();
    // Runs on the main thread (block_on), which lives as long as the process: the
    // children's parent-death signal depends on that.
    let mut plane = ControlPlane::start(args.control_plane(binaries)).await?;
    let client = plane.admin_client().await?;
    tests::bootstrap::bootstrap(&client, release, with_controllers).await?;

    let (stop_node, node_stopped) = tokio::sync::oneshot::channel::<()>();
    let node_config = args.node_config(&plane, release, with_scheduler);
    let mut node = tokio::spawn(tests::node::run(client.clone(), node_config, async move {
        let _ = node_stopped.await;
    }));

    let mut state = ClusterState {
        supervisor_pid: std::process::id(),
        kubernetes: release.version().to_string(),
        server: plane.endpoints.server.clone(),
        kubeconfig: plane.endpoints.kubeconfig.clone(),
        ca_cert: plane.endpoints.ca_cert.clone(),
        audit_log: plane.endpoints.audit_log.clone(),
        kubelet_port: plane.endpoints.kubelet_port,
        processes: process_entries(&plane),
    };
    state.write(&args.state_dir)?;
    println!("ready {}", plane.endpoints.kubeconfig.display());

    // SIGUSR1: restart kube-apiserver on the same etcd (a fault for e2e tests).
    let mut sigusr1 = signal(SignalKind::user_defined1())?;
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    let stdin_closed = stdin_closed(args.wait_stdin);
    tokio::pin!(stdin_closed);
    let mut health = tokio::time::interval(Duration::from_secs(1));
    let outcome = loop {
        tokio::select! {
            _ = sigterm.recv() => break Ok(()),
            _ = sigint.recv() => break Ok(()),
            _ = &mut stdin_closed => break Ok(()),
            _ = sigusr1.recv() => {
                if let Err(e) = plane.restart_apiserver().await {
                    break Err(anyhow::anyhow!("restarting kube-apiserver: {e}"));
                }
                state.processes = process_entries(&plane);
                state.write(&args.state_dir)?;
                tracing::info!("kube-apiserver restarted");
            }
            result = &mut node => break match result {
                Ok(Ok(())) => Err(anyhow::anyhow!("the simulated node stopped unexpectedly")),
                Ok(Err(e)) => Err(e.context("the simulated node failed")),
                Err(e) => Err(anyhow::anyhow!("the simulated node panicked: {e}")),
            },
            _ = health.tick() => {
                if let Some(crash) = plane.crashed() {
                    break Err(anyhow::anyhow!("{crash}"));
                }
            }
        }
    };
    let _ = stop_node.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), node).await;
    plane.stop();
    ClusterState::remove(&args.state_dir);
    args.clean_up(&outcome);
    outcome
}

impl Args {
    /// How to start the control plane these arguments ask for.
    fn control_plane(&self, binaries: Binaries) -> controlplane::Options {
        controlplane::Options {
            state_dir: self.state_dir.clone(),
            binaries,
            audit: self.audit,
            throttle: self
                .throttle_mutating
                .map(|mutating| controlplane::Throttle {
                    max_requests_inflight: self.throttle_reads,
                    max_mutating_requests_inflight: mutating,
                }),
            apiserver_args: self.apiserver_arg.clone(),
        }
    }

    /// The simulated nodes of `plane`.
    fn node_config(
        &self,
        plane: &ControlPlane,
        release: Release,
        with_scheduler: bool,
    ) -> tests::node::NodeSimConfig {
        tests::node::NodeSimConfig {
            node_names: (0..self.nodes)
                .map(|i| format!("kubeplug-node-{i}"))
                .collect(),
            default_ready_after: Duration::from_millis(self.ready_after_ms),
            kubelet_port: plane.endpoints.kubelet_port,
            kubelet_version: release.version().to_string(),
            // The release's own scheduler binds pods where there is one.
            bind_pods: !with_scheduler,
            // Pods reach the API server where it listens (in-cluster clients).
            api_server: Some(plane.endpoints.server.clone()),
            ..Default::default()
        }
    }

    /// Removes or keeps the state directory after the cluster stopped.
    fn clean_up(&self, outcome: &anyhow::Result<()>) {
        match outcome {
            // Logs are only worth keeping when something went wrong.
            Ok(()) if self.remove_state => {
                let _ = std::fs::remove_dir_all(&self.state_dir);
            }
            Err(_) => eprintln!(
                "kubeplug-cluster: logs kept in {}",
                self.state_dir.display()
            ),
            Ok(()) => {}
        }
    }
}

/// The pids of `plane`'s programs, as the state file lists them.
fn process_entries(plane: &ControlPlane) -> Vec<ProcessEntry> {
    plane
        .pids()
        .into_iter()
        .map(|(name, pid)| ProcessEntry {
            name: name.into(),
            pid,
        })
        .collect()
}

/// Completes when standard input closes, with `wait`; never without.
async fn stdin_closed(wait: bool) {
    if wait {
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 64];
        while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
    } else {
        std::future::pending::<()>().await;
    }
}
