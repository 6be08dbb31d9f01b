//! `kubeplug-cluster`: supervises one local control plane plus its node, a real
//! kubelet with containerd, the whole cluster inside a network namespace of its own
//! and the API server forwarded to the host's 127.0.0.1.
//!
//! `cargo xtask cluster up` starts it detached; the e2e harness starts it with
//! `--wait-stdin`, so that the cluster goes away when the test process does, however
//! it ends (a closed pipe is the one signal that survives `kill -9` of the parent).
//!
//! On start it writes `<state-dir>/cluster.json` (see [`localcluster::state::ClusterState`])
//! and prints one line `ready <kubeconfig>` on stdout. It stops everything on SIGINT,
//! SIGTERM, stdin EOF (with `--wait-stdin`) or when a component crashes. SIGUSR1
//! restarts kube-apiserver on the same etcd (a fault the e2e tests inject) and
//! rewrites the state file with its new pid.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use localcluster::controlplane::{self, Binaries, ControlPlane, Release};
use localcluster::realnode::{self, RealNode, host, netns::NetNs};
use localcluster::state::{ClusterState, ProcessEntry};
use tokio::io::AsyncReadExt;
use tokio::signal::unix::{SignalKind, signal};

#[derive(Parser, Debug)]
#[command(
    name = "kubeplug-cluster",
    version,
    about = "Run a local control plane and its node until stopped"
)]
struct Args {
    /// Directory for certificates, kubeconfig, logs and the state file.
    #[arg(long, value_name = "DIR", required_unless_present = "sweep")]
    state_dir: Option<PathBuf>,
    /// Only remove what real nodes whose supervisor is gone left on the host (their
    /// containers, mounts, cgroups, network namespaces), then exit.
    #[arg(long)]
    sweep: bool,
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
    /// Number of nodes: 1 (a kubelet and containerd) or 0 (a control plane alone).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=1))]
    nodes: u8,
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

fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,kube_client::client::builder=off".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    if args.sweep {
        for gone in host::sweep() {
            eprintln!("kubeplug-cluster: removed the leftovers of node {gone}");
        }
        return ExitCode::SUCCESS;
    }
    // The namespace is made and entered before the runtime starts any thread: every
    // thread and child inherits the namespace of the thread that makes it.
    let place = match Place::prepare() {
        Ok(place) => place,
        Err(e) => {
            eprintln!("kubeplug-cluster: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| runtime.block_on(run(&args, &place)));
    place.remove();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kubeplug-cluster: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Where the cluster runs: its network namespace and the listener on the host's
/// 127.0.0.1 that forwards to the API server inside.
struct Place {
    namespace: NetNs,
    listener: std::net::TcpListener,
    /// The node's id (also the namespace's name).
    id: String,
}

impl Place {
    fn prepare() -> anyhow::Result<Self> {
        let id = host::node_id();
        // Without the record, `cargo xtask test` would take this node for another's
        // and not check that it went: refuse to start instead.
        localcluster::host::record_run_node(&id)?;
        for gone in host::sweep() {
            tracing::info!("removed the leftovers of node {gone}");
        }
        // Bound here, in the host's namespace, before entering the cluster's: the
        // socket stays in the namespace it was made in.
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let ns = NetNs::create(&id)?;
        if let Err(e) = ns.enter() {
            ns.delete();
            return Err(e);
        }
        Ok(Self {
            namespace: ns,
            listener,
            id,
        })
    }

    /// The API server's port: the forwarder's, which the server also takes inside.
    fn api_port(&self) -> anyhow::Result<u16> {
        Ok(self.listener.local_addr()?.port())
    }

    fn remove(&self) {
        host::remove_node(&self.id);
    }
}

async fn run(args: &Args, place: &Place) -> anyhow::Result<()> {
    let release = match &args.kubernetes {
        Some(name) => Release::parse(name)?,
        None => Release::from_env()?,
    };
    let binaries = Binaries::locate(release)?;
    let node_binaries = match args.nodes {
        0 => None,
        _ => Some(localcluster::NodeBinaries::locate(release)?),
    };
    let with_controllers = binaries.kube_controller_manager.is_some();
    let api_port = place.api_port()?;
    tokio::spawn(forward(place.listener.try_clone()?, api_port));
    // Runs on the main thread (block_on), which lives as long as the process: the
    // children's parent-death signal depends on that.
    let mut plane = ControlPlane::start(args.control_plane(binaries, api_port)).await?;
    let client = plane.admin_client().await?;
    localcluster::bootstrap::bootstrap(&client, release, with_controllers).await?;

    let mut node = match node_binaries {
        Some(binaries) => {
            let options = realnode::Options {
                release,
                binaries,
                state_dir: args.state_dir().to_path_buf(),
                kubeconfig: plane.endpoints.kubeconfig.clone(),
                name: "kubeplug-node-0".to_string(),
                id: place.id.clone(),
            };
            Node::Real(Box::new(RealNode::start(options, &client).await?))
        }
        None => Node::None,
    };

    let mut state = ClusterState {
        supervisor_pid: std::process::id(),
        kubernetes: release.version().to_string(),
        server: plane.endpoints.server.clone(),
        kubeconfig: plane.endpoints.kubeconfig.clone(),
        ca_cert: plane.endpoints.ca_cert.clone(),
        audit_log: plane.endpoints.audit_log.clone(),
        processes: process_entries(&plane, &node),
        netns: Some(place.namespace.name().to_string()),
        node_run_dir: node.run_dir(),
    };
    state.write(args.state_dir())?;
    println!("ready {}", plane.endpoints.kubeconfig.display());

    let outcome = supervise(args, &mut plane, &mut node, &mut state).await;
    node.stop().await;
    plane.stop();
    ClusterState::remove(args.state_dir());
    args.clean_up(&outcome);
    outcome
}

/// Watches the cluster until a signal, stdin's end (with `--wait-stdin`) or a crash.
/// SIGUSR1 restarts kube-apiserver on the same etcd (a fault for e2e tests).
async fn supervise(
    args: &Args,
    plane: &mut ControlPlane,
    node: &mut Node,
    state: &mut ClusterState,
) -> anyhow::Result<()> {
    let mut sigusr1 = signal(SignalKind::user_defined1())?;
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    let stdin_closed = stdin_closed(args.wait_stdin);
    tokio::pin!(stdin_closed);
    let mut health = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = sigterm.recv() => return Ok(()),
            _ = sigint.recv() => return Ok(()),
            _ = &mut stdin_closed => return Ok(()),
            _ = sigusr1.recv() => {
                plane.restart_apiserver().await.map_err(|e| anyhow::anyhow!("restarting kube-apiserver: {e}"))?;
                state.processes = process_entries(plane, node);
                state.write(args.state_dir())?;
                tracing::info!("kube-apiserver restarted");
            }
            _ = health.tick() => {
                if let Some(crash) = plane.crashed().or_else(|| node.crashed()) {
                    return Err(anyhow::anyhow!("{crash}"));
                }
            }
        }
    }
}

/// Forwards every connection to the host's 127.0.0.1:`port` to the API server on the
/// same port inside the namespace, byte for byte (TLS passes through untouched).
async fn forward(listener: std::net::TcpListener, port: u16) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((mut outside, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            // Made on a runtime thread, so inside the namespace.
            match tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
                Ok(mut inside) => {
                    let _ = outside.set_nodelay(true);
                    let _ = inside.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut outside, &mut inside).await;
                }
                // The server is down (restarting): the client's connection closes, as
                // it would be refused without the forwarder.
                Err(_) => drop(outside),
            }
        });
    }
}

/// The cluster's node.
enum Node {
    Real(Box<RealNode>),
    /// `--nodes 0`: a control plane alone.
    None,
}

impl Node {
    fn crashed(&mut self) -> Option<String> {
        match self {
            Node::Real(node) => node.crashed(),
            _ => None,
        }
    }

    fn run_dir(&self) -> Option<PathBuf> {
        match self {
            Node::Real(node) => Some(node.run_dir().to_path_buf()),
            _ => None,
        }
    }

    fn pids(&self) -> Vec<(&'static str, u32)> {
        match self {
            Node::Real(node) => node.pids(),
            _ => Vec::new(),
        }
    }

    async fn stop(self) {
        match self {
            Node::Real(node) => node.stop(),
            Node::None => {}
        }
    }
}

impl Args {
    /// `--state-dir`, which clap requires unless `--sweep`.
    fn state_dir(&self) -> &std::path::Path {
        self.state_dir
            .as_deref()
            .unwrap_or(std::path::Path::new("."))
    }

    /// How to start the control plane these arguments ask for.
    fn control_plane(&self, binaries: Binaries, api_port: u16) -> controlplane::Options {
        controlplane::Options {
            state_dir: self.state_dir().to_path_buf(),
            binaries,
            audit: self.audit,
            throttle: self
                .throttle_mutating
                .map(|mutating| controlplane::Throttle {
                    max_requests_inflight: self.throttle_reads,
                    max_mutating_requests_inflight: mutating,
                }),
            apiserver_args: self.apiserver_arg.clone(),
            api_port,
        }
    }

    /// Removes or keeps the state directory after the cluster stopped.
    fn clean_up(&self, outcome: &anyhow::Result<()>) {
        match outcome {
            // Logs are only worth keeping when something went wrong.
            Ok(()) if self.remove_state => {
                let _ = std::fs::remove_dir_all(self.state_dir());
            }
            Err(_) => eprintln!(
                "kubeplug-cluster: logs kept in {}",
                self.state_dir().display()
            ),
            Ok(()) => {}
        }
    }
}

/// The pids of the cluster's programs, as the state file lists them.
fn process_entries(plane: &ControlPlane, node: &Node) -> Vec<ProcessEntry> {
    plane
        .pids()
        .into_iter()
        .chain(node.pids())
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
