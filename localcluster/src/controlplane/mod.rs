//! A real, local Kubernetes control plane: etcd + kube-apiserver +
//! kube-controller-manager (+ kube-scheduler where the release has one built) on
//! loopback, the way the e2e tests and `cargo xtask cluster` use it. The flags follow
//! the release ([`Binaries::release`]): those a later release removed are given only
//! to the releases that still take them.
//!
//! What it sets up, and why:
//! - free ports on 127.0.0.1 only, a fresh state directory per cluster (etcd's data in
//!   `/dev/shm` when available: etcd fsyncs every write, and on tmpfs that costs nothing,
//!   which keeps the create-file benchmarks about the plugins, not the disk);
//! - TLS with a generated CA; token authentication with two users: `admin` (group
//!   `system:masters`) and `limited` (an `admin` RoleBinding in namespace
//!   [`LIMITED_NAMESPACE`] only), so tests can provoke a real 403;
//! - RBAC authorization and service-account keys and issuer (required by 1.20);
//! - the release's own kube-scheduler binds pods; the node (`crate::realnode`) is a
//!   real kubelet;
//! - an optional audit log (metadata level) for counting API requests in benchmarks.
//!
//! Processes are started from the caller's thread with a parent-death signal, so the
//! caller must be a long-lived thread (the supervisor's main thread).
//!
//! With [`Options::throttle`] (`kubeplug-cluster --throttle-mutating=N`) the API server
//! runs with API Priority and Fairness off and at most N mutating (and, if asked, reading)
//! requests in flight, answering `429` with `Retry-After: 1` beyond that, as a busy
//! shared cluster does. The in-flight filter exempts `system:masters`, so the
//! controller-manager, the scheduler, the kubelet, kube-proxy and `admin` are never
//! throttled: tests run the command under test as `limited`.

mod pki;
mod process;
pub mod sweep;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use crate::{Binaries, NotInstalled, Release, client_for};
pub use process::{alive, free_port, signal, tail};

pub(crate) use process::{Process, first_crash, wait_for_port};

/// The namespace the `limited` user may use (and nothing else).
pub const LIMITED_NAMESPACE: &str = "kubeplug-limited";
/// The kubeconfig context of the cluster administrator (the current context).
pub const ADMIN_CONTEXT: &str = "kubeplug-admin";
/// The kubeconfig context of the namespace-limited user.
pub const LIMITED_CONTEXT: &str = "kubeplug-limited";
pub use crate::node::NODE_IP;
/// The `--service-cluster-ip-range` of the apiserver.
pub const SERVICE_CIDR: &str = "10.96.0.0/16";

/// How to start a control plane.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where certificates, the kubeconfig, logs and (without /dev/shm) etcd's data go.
    pub state_dir: PathBuf,
    pub binaries: Binaries,
    /// Write a metadata-level audit log to `<state_dir>/audit.log`.
    pub audit: bool,
    /// Throttle like a busy shared cluster (`None`: never throttle).
    pub throttle: Option<Throttle>,
    /// Extra kube-apiserver flags, after the ones set here (so they win), e.g.
    /// `--goaway-chance=0.02`.
    pub apiserver_args: Vec<String>,
    /// The server listens on every address of the cluster's network namespace (the
    /// node IP, where pods reach it) on this port, the one the namespace's forwarder
    /// took on the host's 127.0.0.1, and advertises the node IP.
    pub api_port: u16,
}

/// The API server's in-flight limits, with API Priority and Fairness off
/// (`--enable-priority-and-fairness=false`): beyond them it answers `429` with
/// `Retry-After: 1`, as a busy shared cluster does. Members of `system:masters` (the
/// `admin` user, the controller-manager, the node) are exempt from these
/// limits; the `limited` user is throttled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttle {
    /// `--max-requests-inflight` (reads; 0 is no limit).
    pub max_requests_inflight: u32,
    /// `--max-mutating-requests-inflight` (writes; 0 is no limit).
    pub max_mutating_requests_inflight: u32,
}

/// Files of a running control plane, stable for scripts and tests.
#[derive(Debug, Clone)]
pub struct Endpoints {
    pub server: String,
    pub kubeconfig: PathBuf,
    pub ca_cert: PathBuf,
    pub audit_log: Option<PathBuf>,
}

/// A running control plane. Dropping it stops every process it started.
pub struct ControlPlane {
    pub endpoints: Endpoints,
    state_dir: PathBuf,
    etcd_data: PathBuf,
    processes: Vec<Process>,
}

/// Why a control plane could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    NotInstalled(#[from] NotInstalled),
    #[error("cannot prepare the state directory {}: {source}", path.display())]
    State {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot generate certificates: {0}")]
    Pki(#[from] rcgen::Error),
    #[error("{0}")]
    Process(String),
}

/// The certificates, keys and tokens of a new control plane, written to its state
/// directory.
struct Credentials {
    ca_cert: PathBuf,
    serving_cert: PathBuf,
    serving_key: PathBuf,
    sa_key: PathBuf,
    sa_pub: PathBuf,
    /// The apiserver's `--token-auth-file`.
    tokens: PathBuf,
    admin_token: String,
    limited_token: String,
}

impl Credentials {
    /// Generates a CA, the apiserver's serving certificate, the service-account keys
    /// and the two users' tokens, and writes them to `state`.
    fn write(state: &Path) -> Result<Self, StartError> {
        let pki = pki::Pki::generate()?;
        let ca_cert = write_state(state, "ca.crt", &pki.ca_cert)?;
        let serving_cert = write_state(state, "apiserver.crt", &pki.serving_cert)?;
        let serving_key = write_state(state, "apiserver.key", &pki.serving_key)?;
        let sa_key = write_state(state, "sa.key", &pki.service_account_key)?;
        let sa_pub = write_state(state, "sa.pub", &pki.service_account_pub)?;
        let token =
            |what| pki::random_token().map_err(|source| StartError::State { path: what, source });
        let admin_token = token(PathBuf::from("/dev/urandom"))?;
        let limited_token = token(PathBuf::from("/dev/urandom"))?;
        let tokens = write_state(
            state,
            "tokens.csv",
            &format!(
                "{admin_token},admin,kubeplug-admin,\"system:masters\"\n{limited_token},limited,kubeplug-limited,\"\"\n"
            ),
        )?;
        Ok(Self {
            ca_cert,
            serving_cert,
            serving_key,
            sa_key,
            sa_pub,
            tokens,
            admin_token,
            limited_token,
        })
    }
}

impl ControlPlane {
    /// Starts etcd, kube-apiserver and (when available) kube-controller-manager, and
    /// returns once the apiserver's `/readyz` answers `ok`.
    pub async fn start(options: Options) -> Result<Self, StartError> {
        let state = options.state_dir.clone();
        std::fs::create_dir_all(&state).map_err(state_error(&state))?;
        let credentials = Credentials::write(&state)?;

        let api_port = options.api_port;
        let server = format!("https://127.0.0.1:{api_port}");

        let kubeconfig = write_state(
            &state,
            "kubeconfig",
            &kubeconfig_yaml(
                &server,
                &credentials.ca_cert,
                &credentials.admin_token,
                &credentials.limited_token,
            ),
        )?;

        let etcd_data = etcd_data_dir(&state);
        std::fs::create_dir_all(&etcd_data).map_err(state_error(&etcd_data))?;

        let mut plane = Self {
            endpoints: Endpoints {
                server,
                kubeconfig,
                ca_cert: credentials.ca_cert.clone(),
                audit_log: None,
            },
            state_dir: state,
            etcd_data,
            processes: Vec::new(),
        };

        let etcd_url = plane.start_etcd(&options.binaries.etcd)?;
        plane
            .start_apiserver(&options, &credentials, api_port, &etcd_url)
            .await?;
        let minor = options.binaries.release.minor();
        if let Some(kcm) = &options.binaries.kube_controller_manager {
            plane.start_controller_manager(kcm, minor, &credentials)?;
        }
        if let Some(scheduler) = &options.binaries.kube_scheduler {
            plane.start_scheduler(scheduler, minor)?;
        }
        Ok(plane)
    }

    /// Starts etcd on free ports and returns its client URL once it listens.
    fn start_etcd(&mut self, program: &Path) -> Result<String, StartError> {
        let etcd_data = self.etcd_data.clone();
        // A free port is only free until someone binds it: clusters started side by
        // side (the e2e harness starts several) can race for one, and etcd then exits
        // with `address already in use`. Such a start is retried on new ports.
        let mut attempt = 0;
        loop {
            attempt += 1;
            let etcd_port = port_for("etcd")?;
            let peer_url = format!("http://127.0.0.1:{}", port_for("etcd peers")?);
            let etcd_url = format!("http://127.0.0.1:{etcd_port}");
            let etcd_args = vec![
                "--name=kubeplug".to_string(),
                format!("--data-dir={}", etcd_data.display()),
                format!("--listen-client-urls={etcd_url}"),
                format!("--advertise-client-urls={etcd_url}"),
                format!("--listen-peer-urls={peer_url}"),
                format!("--initial-advertise-peer-urls={peer_url}"),
                format!("--initial-cluster=kubeplug={peer_url}"),
                "--log-level=warn".to_string(),
            ];
            self.spawn("etcd", program, &etcd_args)?;
            match self.wait_listening(etcd_port, Duration::from_secs(30)) {
                Ok(()) => return Ok(etcd_url),
                Err(StartError::Process(message))
                    if attempt < 3 && message.contains("address already in use") =>
                {
                    tracing::warn!("etcd lost a port race; starting it on other ports");
                    if let Some(mut etcd) = self.processes.pop() {
                        etcd.stop(Duration::from_secs(5));
                    }
                    let _ = std::fs::remove_dir_all(&etcd_data);
                    std::fs::create_dir_all(&etcd_data).map_err(state_error(&etcd_data))?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Starts kube-apiserver on `api_port` against etcd and waits until it is ready.
    async fn start_apiserver(
        &mut self,
        options: &Options,
        credentials: &Credentials,
        api_port: u16,
        etcd_url: &str,
    ) -> Result<(), StartError> {
        let mut api_args = apiserver_args(
            options.binaries.release.minor(),
            &self.state_dir,
            credentials,
            api_port,
            etcd_url,
        );
        api_args.extend([
            "--bind-address=0.0.0.0".to_string(),
            format!("--advertise-address={NODE_IP}"),
            // A routable advertise address: the `kubernetes` Service's endpoints
            // are kept, and in-cluster clients reach the server through it.
            "--endpoint-reconciler-type=lease".to_string(),
        ]);
        if let Some(throttle) = options.throttle {
            api_args.extend([
                "--enable-priority-and-fairness=false".to_string(),
                format!("--max-requests-inflight={}", throttle.max_requests_inflight),
                format!(
                    "--max-mutating-requests-inflight={}",
                    throttle.max_mutating_requests_inflight
                ),
            ]);
        }
        if options.audit {
            let policy = write_state(
                &self.state_dir,
                "audit-policy.yaml",
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n",
            )?;
            let audit_log = self.state_dir.join("audit.log");
            api_args.push(format!("--audit-policy-file={}", policy.display()));
            api_args.push(format!("--audit-log-path={}", audit_log.display()));
            // The log is read by offset (the bench counts each case's requests from
            // where it started); the default rotation at 100 MB (lumberjack's, for a
            // maxsize of 0) moved it away in the middle of a 5,000-object case.
            api_args.push("--audit-log-maxsize=100000".into());
            self.endpoints.audit_log = Some(audit_log);
        }
        // Last, so that a flag given here wins over one set above (Go's flags).
        api_args.extend(options.apiserver_args.iter().cloned());
        self.spawn(
            "kube-apiserver",
            &options.binaries.kube_apiserver,
            &api_args,
        )?;
        self.wait_ready().await
    }

    /// Starts kube-controller-manager with the admin's kubeconfig.
    fn start_controller_manager(
        &mut self,
        program: &Path,
        minor: u32,
        credentials: &Credentials,
    ) -> Result<(), StartError> {
        let mut kcm_args = vec![
            format!("--kubeconfig={}", self.endpoints.kubeconfig.display()),
            "--leader-elect=false".to_string(),
            "--secure-port=0".to_string(),
            format!(
                "--service-account-private-key-file={}",
                credentials.sa_key.display()
            ),
            format!("--root-ca-file={}", credentials.ca_cert.display()),
            "--use-service-account-credentials=false".to_string(),
            // The default client rate limit (20 qps) makes the controllers, not the
            // plugins, the bottleneck of rolling updates and 30-replica tests.
            "--kube-api-qps=200".to_string(),
            "--kube-api-burst=400".to_string(),
            // No cloud and no IPAM: the node's CNI bridge has its own pod subnet. The cloud
            // controllers left kube-controller-manager after 1.20, and the others
            // were renamed (`nodeipam` is `node-ipam-controller` since 1.28).
            if minor < 28 {
                "--controllers=*,-nodeipam,-cloud-node-lifecycle,-route,-service"
            } else {
                "--controllers=*,-node-ipam-controller"
            }
            .to_string(),
            "--v=1".to_string(),
        ];
        if minor < 24 {
            // The insecure metrics port, gone since 1.24.
            kcm_args.push("--port=0".to_string());
        }
        self.spawn("kube-controller-manager", program, &kcm_args)
    }

    /// Starts kube-scheduler with the admin's kubeconfig.
    fn start_scheduler(&mut self, program: &Path, minor: u32) -> Result<(), StartError> {
        let kubeconfig = self.endpoints.kubeconfig.display();
        let mut scheduler_args = vec![
            format!("--kubeconfig={kubeconfig}"),
            format!("--authentication-kubeconfig={kubeconfig}"),
            format!("--authorization-kubeconfig={kubeconfig}"),
            "--leader-elect=false".to_string(),
            // Its health and metrics endpoints are not used: no port to take.
            "--secure-port=0".to_string(),
            "--v=1".to_string(),
        ];
        if minor < 23 {
            // The insecure health port (plain HTTP on 0.0.0.0:10251), gone since 1.23:
            // a second cluster's scheduler would find it taken and exit.
            scheduler_args.push("--port=0".to_string());
        }
        self.spawn("kube-scheduler", program, &scheduler_args)
    }

    fn spawn(
        &mut self,
        name: &'static str,
        program: &Path,
        args: &[String],
    ) -> Result<(), StartError> {
        let log = self.state_dir.join(format!("{name}.log"));
        let process = Process::spawn(name, program, args, log)
            .map_err(|e| StartError::Process(e.to_string()))?;
        self.processes.push(process);
        Ok(())
    }

    fn wait_listening(&mut self, port: u16, timeout: Duration) -> Result<(), StartError> {
        let process = self.processes.last_mut().expect("called right after spawn");
        process::wait_for_port(port, timeout, process).map_err(StartError::Process)
    }

    /// Polls `/readyz` with the admin credentials until it answers `ok`.
    async fn wait_ready(&mut self) -> Result<(), StartError> {
        let client = self.admin_client().await.map_err(|e| {
            StartError::Process(format!(
                "cannot build a client for the new apiserver: {e:#}"
            ))
        })?;
        let timeout = Duration::from_secs(120);
        let deadline = Instant::now() + timeout;
        loop {
            let request = http::Request::get("/readyz")
                .body(Vec::new())
                .expect("static request");
            let last = match client.request_text(request).await {
                Ok(body) if body.trim() == "ok" => return Ok(()),
                Ok(body) => body,
                Err(e) => e.to_string(),
            };
            let apiserver = self.processes.last_mut().expect("apiserver was spawned");
            if let Some(status) = apiserver.exited() {
                return Err(StartError::Process(format!(
                    "kube-apiserver exited ({status}) during start-up; last log lines ({}):\n{}",
                    apiserver.log.display(),
                    apiserver.log_tail(20)
                )));
            }
            if Instant::now() > deadline {
                return Err(StartError::Process(format!(
                    "kube-apiserver was not ready within {timeout:?} (last answer: {last}); see {}",
                    apiserver.log.display()
                )));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Restarts kube-apiserver on the same etcd and waits until it is ready again.
    pub async fn restart_apiserver(&mut self) -> Result<(), StartError> {
        let index = self
            .processes
            .iter()
            .position(|p| p.name == "kube-apiserver")
            .ok_or_else(|| StartError::Process("no kube-apiserver to restart".into()))?;
        self.processes[index]
            .restart(Duration::from_secs(10))
            .map_err(|e| StartError::Process(e.to_string()))?;
        // wait_ready looks at the last process for an early exit: keep the
        // apiserver there while it starts.
        let apiserver = self.processes.remove(index);
        self.processes.push(apiserver);
        self.wait_ready().await
    }

    /// A client with the admin credentials of this cluster.
    pub async fn admin_client(&self) -> anyhow::Result<kube::Client> {
        client_for(&self.endpoints.kubeconfig, ADMIN_CONTEXT).await
    }

    /// Pids of the running programs, for the state file `cluster down` reads.
    pub fn pids(&self) -> Vec<(&'static str, u32)> {
        self.processes.iter().map(|p| (p.name, p.pid())).collect()
    }

    /// The first program that has exited unexpectedly, with its log tail.
    pub fn crashed(&mut self) -> Option<String> {
        process::first_crash(&mut self.processes)
    }

    /// Stops every process (newest first) and removes etcd's data when it lived
    /// outside the state directory.
    pub fn stop(&mut self) {
        while let Some(mut process) = self.processes.pop() {
            process.stop(Duration::from_secs(5));
        }
        if !self.etcd_data.starts_with(&self.state_dir) {
            let _ = std::fs::remove_dir_all(&self.etcd_data);
        }
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        self.stop();
    }
}

/// etcd's data directory: in `/dev/shm` (after sweeping the directories of
/// supervisors that died without removing theirs, see [`sweep`]), named after
/// this process and its start time, or in the state directory.
fn etcd_data_dir(state: &Path) -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        for removed in sweep::sweep(shm, sweep::probe) {
            tracing::info!(path = %removed.display(), "removed the etcd data of a cluster whose supervisor is gone");
        }
        let pid = std::process::id();
        let unique = sweep::dir_name(pid, sweep::start_time(pid), free_port().unwrap_or(0));
        shm.join(unique)
    } else {
        state.join("etcd")
    }
}

fn kubeconfig_yaml(server: &str, ca: &Path, admin_token: &str, limited_token: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Config
clusters:
- name: kubeplug-local
  cluster:
    server: {server}
    certificate-authority: {ca}
users:
- name: admin
  user:
    token: {admin_token}
- name: limited
  user:
    token: {limited_token}
contexts:
- name: {ADMIN_CONTEXT}
  context:
    cluster: kubeplug-local
    user: admin
    namespace: default
- name: {LIMITED_CONTEXT}
  context:
    cluster: kubeplug-local
    user: limited
    namespace: {LIMITED_NAMESPACE}
current-context: {ADMIN_CONTEXT}
"#,
        ca = ca.display()
    )
}

/// kube-apiserver's flags for this release, before throttling, audit and the
/// caller's own.
fn apiserver_args(
    minor: u32,
    state: &Path,
    credentials: &Credentials,
    api_port: u16,
    etcd_url: &str,
) -> Vec<String> {
    let mut api_args = vec![
        format!("--etcd-servers={etcd_url}"),
        "--bind-address=127.0.0.1".to_string(),
        "--advertise-address=127.0.0.1".to_string(),
        format!("--secure-port={api_port}"),
        format!("--cert-dir={}", state.join("certs").display()),
        format!("--tls-cert-file={}", credentials.serving_cert.display()),
        format!(
            "--tls-private-key-file={}",
            credentials.serving_key.display()
        ),
        format!("--client-ca-file={}", credentials.ca_cert.display()),
        format!("--token-auth-file={}", credentials.tokens.display()),
        "--authorization-mode=RBAC".to_string(),
        format!(
            "--service-account-key-file={}",
            credentials.sa_pub.display()
        ),
        format!(
            "--service-account-signing-key-file={}",
            credentials.sa_key.display()
        ),
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local".to_string(),
        format!("--service-cluster-ip-range={SERVICE_CIDR}"),
        "--allow-privileged=true".to_string(),
        "--kubelet-preferred-address-types=InternalIP".to_string(),
        "--event-ttl=10m".to_string(),
        "--v=1".to_string(),
    ];
    if minor < 24 {
        // Gone since 1.24 (the insecure port no longer exists).
        api_args.push("--insecure-port=0".to_string());
    }
    if minor < 22 {
        // The kubelet serves a self-signed certificate; 1.20 does not
        // verify kubelets when no --kubelet-certificate-authority is set, and
        // neither do later releases (which dropped the flag).
        api_args.push("--kubelet-https=true".to_string());
    }
    api_args
}

/// Maps an I/O error on `path` in the state directory to a [`StartError`].
fn state_error(path: &Path) -> impl FnOnce(std::io::Error) -> StartError {
    let path = path.to_path_buf();
    move |source| StartError::State { path, source }
}

/// Writes `body` to the file `name` in the state directory.
fn write_state(state: &Path, name: &str, body: &str) -> Result<PathBuf, StartError> {
    let path = state.join(name);
    std::fs::write(&path, body).map_err(state_error(&path))?;
    Ok(path)
}

/// A free port on 127.0.0.1 for `what`.
fn port_for(what: &str) -> Result<u16, StartError> {
    free_port().map_err(|e| StartError::Process(format!("no free port for {what}: {e}")))
}
