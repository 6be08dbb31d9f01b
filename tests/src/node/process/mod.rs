//! The process runtime: containers that have a `command` or `args` run as
//! real child processes, like a container runtime without the isolation.
//!
//! - The argv is `command` followed by `args`, exec'd directly (no shell;
//!   `sh -c '…'` works when the spec asks for `sh`), in a scratch directory
//!   per pod, with a fresh environment: `PATH`, `HOSTNAME` (the pod name),
//!   `HOME` (the scratch directory), `TERM=xterm` with a terminal, then the
//!   container's `env` (literal values; `valueFrom` resolves the pod's name,
//!   namespace, uid and IPs, others are skipped). The image is only a label.
//! - A container with neither `command` nor `args` would run its image's
//!   default entrypoint, which does not exist here: it runs an idle
//!   placeholder (no process) until the pod is deleted.
//! - `tty: true` gives the process a pseudo-terminal (a session with it as
//!   controlling terminal); `stdin: true` keeps its stdin open for attach;
//!   `stdinOnce` closes it when the first attach session detaches.
//! - Init containers run one after another before the app containers.
//! - Exits are reported with the real exit code (128+N after signal N),
//!   reason `Completed`/`Error` (`StartError`, exit code 128, when the
//!   program cannot be started), and restarted per `restartPolicy` with the
//!   simulated runtime's crash-loop back-off.
//! - With the API server given ([`NodeRuntime::with_api`]): the `kubernetes`
//!   Service's variables (`KUBERNETES_SERVICE_HOST`, …, the loopback API
//!   server) come before the container's `env`, and the pod's projected
//!   volumes are written (the containers wait in `ContainerCreating` until
//!   they are), refreshed, and bound at their mount paths in each process's
//!   own mount namespace ([`volumes`]).
//! - Readiness: a running container becomes ready after the node's default
//!   delay (or `sim.kubeplug.io/ready-after-ms`; never with
//!   `sim.kubeplug.io/never-ready`).
//! - Stopping: SIGTERM to the container's process group, SIGKILL at the
//!   deadline; when the main process exits, the rest of its group is killed.
//!   Every process also dies with the node, even with a node killed by
//!   SIGKILL: `PR_SET_PDEATHSIG` for the main process, a watchdog process for
//!   its group (see `watchdog`), and dropping a pod (the node shutting down)
//!   SIGKILLs what still runs.
//!
//! Output and stdin of every run are kept in a [`Registry`] for the kubelet
//! API (`containerLogs`, `attach`, `exec`), see `super::server`.

pub mod io;
pub mod spawn;
pub mod volumes;
mod watchdog;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::jiff::Timestamp;
use tokio::sync::{Notify, mpsc, watch};

use self::io::Run;
use self::volumes::{Api, Mounts, Volumes};
use super::runtime::{
    ContainerObservation, ContainerRunState, PodObservation, PodRuntime, RestartPolicy, Runtime,
    Termination,
};
use super::simulated::{RestartBackoff, SimulatedRuntime, go_duration, hex_digest, image_id};
use super::steering::Steering;

/// `PATH` inside every container.
const CONTAINER_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Whether `pod` runs on processes: some container has a command or args,
/// and no steering annotation scripts exits (those pods keep the timer-based
/// behaviour the tests rely on).
pub fn runs_processes(pod: &Pod) -> bool {
    let Some(spec) = pod.spec.as_ref() else {
        return false;
    };
    let has_command = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .any(has_command);
    let (steering, _) = Steering::from_annotations(pod.metadata.annotations.as_ref());
    // A container whose image does not exist never runs: the timers show its pulls.
    let pulls_fail = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .any(|c| c.image.as_deref().is_some_and(super::pull::missing));
    has_command && steering.exit.is_none() && !steering.ignore_sigterm && !pulls_fail
}

fn has_command(c: &Container) -> bool {
    c.command.as_ref().is_some_and(|v| !v.is_empty())
        || c.args.as_ref().is_some_and(|v| !v.is_empty())
}

/// The node's runtime: processes for pods with commands, timers otherwise
/// (see [`runs_processes`]).
pub struct NodeRuntime {
    simulated: SimulatedRuntime,
    processes: ProcessRuntime,
}

impl NodeRuntime {
    /// Both runtimes with the node's default readiness delay.
    pub fn new(default_ready_after: Duration, registry: Arc<Registry>, scratch: PathBuf) -> Self {
        Self {
            simulated: SimulatedRuntime::new(default_ready_after),
            processes: ProcessRuntime {
                registry,
                scratch,
                default_ready_after,
                backoff: RestartBackoff::default(),
                api: None,
            },
        }
    }

    /// Gives the process runtime the API server, as pods reach it: the
    /// containers get `KUBERNETES_SERVICE_HOST`/`_PORT` and their projected
    /// volumes (the service-account token), see [`volumes`]. Without it they
    /// get neither.
    #[must_use]
    pub fn with_api(mut self, api: Api) -> Self {
        self.processes.api = Some(api);
        self
    }
}

impl Runtime for NodeRuntime {
    fn start_pod(&self, pod: &Pod, started_at: Timestamp) -> anyhow::Result<Box<dyn PodRuntime>> {
        if runs_processes(pod) {
            self.processes.start_pod(pod, started_at)
        } else {
            self.simulated.start_pod(pod, started_at)
        }
    }
}

/// Containers the kubelet API can reach, by `namespace/pod/container`.
#[derive(Default)]
pub struct Registry {
    containers: Mutex<HashMap<String, (String, Arc<ContainerHandle>)>>,
}

impl Registry {
    fn key(namespace: &str, pod: &str, container: &str) -> String {
        format!("{namespace}/{pod}/{container}")
    }

    /// The container, if this node runs it on processes.
    pub fn get(&self, namespace: &str, pod: &str, container: &str) -> Option<Arc<ContainerHandle>> {
        self.containers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&Self::key(namespace, pod, container))
            .map(|(_, h)| Arc::clone(h))
    }

    /// Names of the pod's containers this node runs, in no particular order.
    pub fn containers_of(&self, namespace: &str, pod: &str) -> Vec<String> {
        let prefix = format!("{namespace}/{pod}/");
        self.containers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix).map(str::to_owned))
            .collect()
    }

    fn insert(&self, key: String, uid: &str, handle: Arc<ContainerHandle>) {
        self.containers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, (uid.to_owned(), handle));
    }

    fn remove(&self, key: &str, uid: &str) {
        let mut map = self
            .containers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if map.get(key).is_some_and(|(u, _)| u == uid) {
            map.remove(key);
        }
    }
}

/// (previous, current) run of a container.
type Runs = (Option<Arc<Run>>, Option<Arc<Run>>);

/// One container's runs and what exec needs to start more processes in it.
pub struct ContainerHandle {
    /// The container's name.
    pub name: String,
    /// `tty` in the spec.
    pub tty: bool,
    /// `stdin` in the spec.
    pub stdin: bool,
    /// The container's environment.
    pub env: Vec<(String, String)>,
    /// The pod's scratch directory.
    pub dir: PathBuf,
    /// The container's projected volumes, bound at their paths in a mount
    /// namespace of each process's own (exec'd ones too).
    pub mounts: Mounts,
    /// (previous, current) run.
    runs: Mutex<Runs>,
    /// Bumped when a run starts.
    started: watch::Sender<u64>,
}

impl ContainerHandle {
    /// The current (or last) run.
    pub fn current(&self) -> Option<Arc<Run>> {
        self.runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .1
            .clone()
    }

    /// The run before the current one.
    pub fn previous(&self) -> Option<Arc<Run>> {
        self.runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .clone()
    }

    /// The running run; before the first one started, waits up to
    /// `timeout` for it. A container whose last run ended is not running
    /// (as with a kubelet, attach then fails at once and clients fall back
    /// to the logs).
    pub async fn running(&self, timeout: Duration) -> Option<Arc<Run>> {
        let mut started = self.started.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            started.mark_unchanged();
            match self.current() {
                Some(run) if run.exit_code().is_none() => return Some(run),
                Some(_) => return None,
                None => {}
            }
            match tokio::time::timeout_at(deadline, started.changed()).await {
                Ok(Ok(())) => {}
                _ => return None,
            }
        }
    }

    fn start_run(&self, run: Arc<Run>) {
        {
            let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
            let previous = runs.1.take();
            *runs = (previous, Some(run));
        }
        self.started.send_modify(|v| *v = v.wrapping_add(1));
    }
}

/// Runs pods' containers as processes.
pub struct ProcessRuntime {
    registry: Arc<Registry>,
    /// Parent of the per-pod scratch directories.
    scratch: PathBuf,
    default_ready_after: Duration,
    backoff: RestartBackoff,
    /// The API server, for the containers' environment and volumes.
    api: Option<Api>,
}

impl Runtime for ProcessRuntime {
    fn start_pod(&self, pod: &Pod, started_at: Timestamp) -> anyhow::Result<Box<dyn PodRuntime>> {
        let spec = pod
            .spec
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("the pod has no spec"))?;
        let name = pod.metadata.name.clone().unwrap_or_default();
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let (steering, _) = Steering::from_annotations(pod.metadata.annotations.as_ref());
        let ready_after = (!steering.never_ready)
            .then(|| steering.ready_after.unwrap_or(self.default_ready_after));

        std::fs::create_dir_all(&self.scratch)?;
        let dir = tempfile::Builder::new()
            .prefix(&format!("{namespace}_{name}_"))
            .tempdir_in(&self.scratch)?;

        let volumes = self
            .api
            .as_ref()
            .map(|_| Volumes::of(pod, dir.path()))
            .filter(|v| !v.is_empty());
        let service_env = self.api.as_ref().map(Api::service_env).unwrap_or_default();
        let make = |c: &Container| {
            let env = container_env(pod, c, dir.path(), &service_env);
            let mounts = volumes
                .as_ref()
                .map(|v| v.mounts_for(c))
                .unwrap_or_default();
            let handle = Arc::new(ContainerHandle {
                name: c.name.clone(),
                tty: c.tty.unwrap_or(false),
                stdin: c.stdin.unwrap_or(false),
                env,
                dir: dir.path().to_owned(),
                mounts,
                runs: Mutex::default(),
                started: watch::Sender::new(0),
            });
            let key = Registry::key(&namespace, &name, &c.name);
            self.registry.insert(key.clone(), &uid, Arc::clone(&handle));
            Plan {
                argv: c
                    .command
                    .iter()
                    .flatten()
                    .chain(c.args.iter().flatten())
                    .cloned()
                    .collect(),
                stdin_once: c.stdin_once.unwrap_or(false),
                handle,
                image: c.image.clone().unwrap_or_default(),
                key,
            }
        };
        let init: Vec<Plan> = spec.init_containers.iter().flatten().map(make).collect();
        let app: Vec<Plan> = spec.containers.iter().map(make).collect();

        let shared = Arc::new(Shared {
            observation: Mutex::new(before_start(&uid, &init, &app)),
            changed: Notify::new(),
            groups: Mutex::default(),
        });
        let keys = init.iter().chain(&app).map(|p| p.key.clone()).collect();
        let (stop_tx, stop_rx) = watch::channel(None);
        let supervisor = Supervisor {
            shared: Arc::clone(&shared),
            uid: uid.clone(),
            kubelet_pod_name: format!("{name}_{namespace}"),
            restart: RestartPolicy::from_spec(spec.restart_policy.as_deref()),
            backoff: self.backoff,
            stop: stop_rx,
        };
        let volumes = volumes.zip(self.api.clone());
        let task = tokio::spawn(supervisor.run(init, app, volumes));
        tracing::debug!(pod = %format!("{namespace}/{name}"), ?started_at, "starting pod on processes");
        Ok(Box::new(ProcessPod {
            shared,
            stop: stop_tx,
            task,
            ready_after,
            wake_at: None,
            registry: Arc::clone(&self.registry),
            keys,
            uid,
            _dir: dir,
        }))
    }
}

/// A container to run.
struct Plan {
    argv: Vec<String>,
    stdin_once: bool,
    handle: Arc<ContainerHandle>,
    image: String,
    key: String,
}

/// What the runtime observes before any container started: every container
/// waiting, the app containers behind the init containers if there are any.
fn before_start(uid: &str, init: &[Plan], app: &[Plan]) -> PodObservation {
    PodObservation {
        init_containers: init
            .iter()
            .map(|p| waiting(uid, p, "PodInitializing"))
            .collect(),
        containers: app
            .iter()
            .map(|p| {
                let reason = if init.is_empty() {
                    "ContainerCreating"
                } else {
                    "PodInitializing"
                };
                waiting(uid, p, reason)
            })
            .collect(),
    }
}

fn waiting(uid: &str, plan: &Plan, reason: &str) -> ContainerObservation {
    ContainerObservation {
        name: plan.handle.name.clone(),
        image: plan.image.clone(),
        image_id: image_id(&plan.image),
        container_id: container_id(uid, &plan.handle.name, 0),
        restart_count: 0,
        state: ContainerRunState::Waiting {
            reason: reason.to_owned(),
            message: None,
        },
        last_termination: None,
    }
}

/// `process://<64 hex digits>` for one run of a container.
fn container_id(pod_uid: &str, container: &str, run: u32) -> String {
    format!("process://{}", hex_digest(&(pod_uid, container, run)))
}

/// The environment of a container's processes: the basics, the
/// `kubernetes` Service's variables (`service`), then the container's `env`.
fn container_env(
    pod: &Pod,
    c: &Container,
    dir: &Path,
    service: &[(String, String)],
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = vec![
        ("PATH".into(), CONTAINER_PATH.into()),
        (
            "HOSTNAME".into(),
            pod.metadata.name.clone().unwrap_or_default(),
        ),
        ("HOME".into(), dir.display().to_string()),
    ];
    env.extend(service.iter().cloned());
    if c.tty.unwrap_or(false) {
        env.push(("TERM".into(), "xterm".into()));
    }
    for var in c.env.iter().flatten() {
        let value = match (&var.value, &var.value_from) {
            (Some(v), _) => Some(expand(v, &env)),
            (None, Some(from)) => from
                .field_ref
                .as_ref()
                .and_then(|f| field_value(pod, &f.field_path)),
            (None, None) => Some(String::new()),
        };
        if let Some(value) = value {
            env.retain(|(k, _)| *k != var.name);
            env.push((var.name.clone(), value));
        }
    }
    env
}

/// `$(VAR)` references to earlier variables, as the kubelet expands them
/// (`$$` escapes a dollar; unknown references stay as written).
fn expand(value: &str, env: &[(String, String)]) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("$$") {
            out.push('$');
            rest = after;
        } else if let Some(inner) = tail.strip_prefix("$(")
            && let Some(end) = inner.find(')')
            && let Some((_, v)) = env.iter().rev().find(|(k, _)| *k == inner[..end])
        {
            out.push_str(v);
            rest = &inner[end + 1..];
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The downward API fields known before the pod runs.
fn field_value(pod: &Pod, path: &str) -> Option<String> {
    let meta = &pod.metadata;
    match path {
        "metadata.name" => meta.name.clone(),
        "metadata.namespace" => meta.namespace.clone(),
        "metadata.uid" => meta.uid.clone(),
        "spec.nodeName" => pod.spec.as_ref().and_then(|s| s.node_name.clone()),
        "spec.serviceAccountName" => pod
            .spec
            .as_ref()
            .and_then(|s| s.service_account_name.clone()),
        "status.hostIP" => Some(super::nodes::NODE_IP.to_owned()),
        _ => None,
    }
}

/// State shared by the pod's supervisor task and its [`ProcessPod`].
struct Shared {
    observation: Mutex<PodObservation>,
    changed: Notify,
    /// Process groups alive now, to kill when the pod is dropped.
    groups: Mutex<Vec<i32>>,
}

impl Shared {
    fn update(&self, init: bool, index: usize, f: impl FnOnce(&mut ContainerObservation)) {
        {
            let mut obs = self
                .observation
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let list = if init {
                &mut obs.init_containers
            } else {
                &mut obs.containers
            };
            if let Some(c) = list.get_mut(index) {
                f(c);
            }
        }
        self.changed.notify_one();
    }

    fn groups(&self) -> std::sync::MutexGuard<'_, Vec<i32>> {
        self.groups.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The kill deadline once a stop was requested.
type StopSignal = watch::Receiver<Option<tokio::time::Instant>>;

/// Drives a pod's containers.
struct Supervisor {
    shared: Arc<Shared>,
    uid: String,
    kubelet_pod_name: String,
    restart: RestartPolicy,
    backoff: RestartBackoff,
    stop: StopSignal,
}

/// How one run ended.
enum Outcome {
    /// Exited (or failed to start) with this termination.
    Exited(Termination),
    /// Stopped before it started.
    NeverStarted,
}

impl Supervisor {
    /// Writes the pod's volumes (when it has any), then runs its containers
    /// while the volumes' tokens are kept fresh.
    async fn run(self, init: Vec<Plan>, app: Vec<Plan>, volumes: Option<(Volumes, Api)>) {
        let Some((volumes, api)) = volumes else {
            return self.containers(init, app).await;
        };
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let writer = volumes.run(api, move || {
            let _ = ready_tx.send(());
        });
        let containers = async {
            if ready_rx.await.is_ok() {
                self.containers(init, app).await;
            }
        };
        tokio::select! {
            () = containers => {}
            () = writer => {}
        }
    }

    async fn containers(self, init: Vec<Plan>, app: Vec<Plan>) {
        let this = Arc::new(self);
        for (index, plan) in init.iter().enumerate() {
            // Init containers restart on failure unless the policy is Never.
            let policy = match this.restart {
                RestartPolicy::Never => RestartPolicy::Never,
                _ => RestartPolicy::OnFailure,
            };
            let exit = Arc::clone(&this).container(true, index, plan, policy).await;
            if exit != Some(0) {
                return;
            }
        }
        let runs = app
            .iter()
            .enumerate()
            .map(|(index, plan)| Arc::clone(&this).container(false, index, plan, this.restart));
        futures::future::join_all(runs).await;
    }

    /// Runs one container until it is done for good; its last exit code.
    async fn container(
        self: Arc<Self>,
        init: bool,
        index: usize,
        plan: &Plan,
        policy: RestartPolicy,
    ) -> Option<i32> {
        let name = &plan.handle.name;
        let mut run_index = 0u32;
        loop {
            let outcome = self.run_once(init, index, plan, run_index).await;
            let Outcome::Exited(term) = outcome else {
                self.shared.update(init, index, |c| {
                    c.state = ContainerRunState::Waiting {
                        reason: "ContainerCreating".into(),
                        message: None,
                    };
                });
                return None;
            };
            let code = term.exit_code;
            let stopped = self.stop.borrow().is_some();
            if stopped || !policy.restarts(code) {
                self.shared.update(init, index, |c| {
                    c.state = ContainerRunState::Terminated(term);
                });
                return Some(code);
            }
            let delay = self.backoff.delay(run_index);
            let message = format!(
                "back-off {} restarting failed container={name} pod={}({})",
                go_duration(delay),
                self.kubelet_pod_name,
                self.uid
            );
            self.shared.update(init, index, |c| {
                c.state = ContainerRunState::Waiting {
                    reason: "CrashLoopBackOff".into(),
                    message: Some(message),
                };
                c.last_termination = Some(term);
            });
            let mut stop = self.stop.clone();
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                _ = stop.wait_for(Option::is_some) => {
                    // Stopped while backing off: the last run stays the
                    // final one.
                    self.shared.update(init, index, |c| {
                        if let Some(t) = c.last_termination.take() {
                            c.state = ContainerRunState::Terminated(t);
                        }
                    });
                    return Some(code);
                }
            }
            run_index = run_index.saturating_add(1);
            self.shared.update(init, index, |c| {
                c.restart_count = i32::try_from(run_index).unwrap_or(i32::MAX);
                c.container_id = container_id(&self.uid, name, run_index);
            });
        }
    }

    async fn run_once(&self, init: bool, index: usize, plan: &Plan, run_index: u32) -> Outcome {
        if self.stop.borrow().is_some() {
            return Outcome::NeverStarted;
        }
        let id = container_id(&self.uid, &plan.handle.name, run_index);
        let started_at = Timestamp::now();
        let (input_tx, input_rx) = mpsc::unbounded_channel();
        let wants_stdin = plan.handle.stdin && !plan.argv.is_empty();
        let run = Arc::new(Run::new(
            plan.handle.tty,
            plan.stdin_once,
            wants_stdin.then_some(input_tx),
        ));
        plan.handle.start_run(Arc::clone(&run));
        let running = |shared: &Shared| {
            shared.update(init, index, |c| {
                c.state = ContainerRunState::Running {
                    started_at,
                    ready: false,
                };
                c.container_id = id.clone();
            });
        };

        if plan.argv.is_empty() {
            // The image's default entrypoint: idle until stopped.
            running(&self.shared);
            let mut stop = self.stop.clone();
            let _ = stop.wait_for(Option::is_some).await;
            run.finish(0);
            return Outcome::Exited(termination(0, started_at, id));
        }

        let spec = spawn::Spec {
            argv: &plan.argv,
            env: &plan.handle.env,
            dir: &plan.handle.dir,
            mounts: &plan.handle.mounts,
            tty: plan.handle.tty,
            stdin: wants_stdin,
        };
        let started = match spawn::spawn(&spec, &run, input_rx) {
            Ok(started) => started,
            Err(e) => {
                let message = format!(
                    "failed to start container {:?}: exec: {:?}: {e}\n",
                    plan.handle.name, plan.argv[0]
                );
                run.push(io::Stream::Stderr, message.as_bytes());
                run.finish(128);
                let mut term = termination(128, started_at, id);
                term.reason = "StartError".into();
                return Outcome::Exited(term);
            }
        };
        let pgid = started.pid;
        self.shared.groups().push(pgid);
        running(&self.shared);

        let mut exited = started.exited;
        let mut stop = self.stop.clone();
        let mut terminated = false;
        let mut killed = false;
        let code = loop {
            let deadline = *stop.borrow_and_update();
            if deadline.is_some() && !terminated {
                spawn::signal_group(pgid, libc::SIGTERM);
                terminated = true;
            }
            tokio::select! {
                code = &mut exited => break code.unwrap_or(128 + libc::SIGKILL),
                changed = stop.changed() => if changed.is_err() {
                    // The pod was dropped: the ProcessPod kills the group.
                    std::future::pending::<()>().await;
                },
                () = sleep_until(deadline.filter(|_| !killed)) => {
                    spawn::signal_group(pgid, libc::SIGKILL);
                    killed = true;
                }
            }
        };
        // `spawn` killed the rest of the group when the process exited.
        self.shared.groups().retain(|g| *g != pgid);
        run.finish(code);
        Outcome::Exited(termination(code, started_at, id))
    }
}

fn termination(code: i32, started_at: Timestamp, container_id: String) -> Termination {
    Termination {
        exit_code: code,
        reason: Termination::reason_for(code).to_owned(),
        started_at,
        finished_at: Timestamp::now(),
        container_id,
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// A pod on the process runtime, as its worker sees it.
struct ProcessPod {
    shared: Arc<Shared>,
    stop: watch::Sender<Option<tokio::time::Instant>>,
    task: tokio::task::JoinHandle<()>,
    /// None: never ready.
    ready_after: Option<Duration>,
    /// Next readiness change.
    wake_at: Option<tokio::time::Instant>,
    registry: Arc<Registry>,
    keys: Vec<String>,
    uid: String,
    /// The scratch directory, removed with the pod.
    _dir: tempfile::TempDir,
}

impl PodRuntime for ProcessPod {
    fn observe(&mut self, now: Timestamp) -> PodObservation {
        let mut obs = self
            .shared
            .observation
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let mut wake: Option<Duration> = None;
        for c in &mut obs.containers {
            if let ContainerRunState::Running { started_at, ready } = &mut c.state
                && let Some(after) = self.ready_after
            {
                let elapsed = super::simulated::elapsed_since(*started_at, now);
                if elapsed >= after {
                    *ready = true;
                } else {
                    let left = after - elapsed;
                    wake = Some(wake.map_or(left, |w| w.min(left)));
                }
            }
        }
        self.wake_at = wake.and_then(|w| tokio::time::Instant::now().checked_add(w));
        obs
    }

    fn changed(&mut self) -> BoxFuture<'_, ()> {
        let wake_at = self.wake_at;
        let shared = Arc::clone(&self.shared);
        async move {
            tokio::select! {
                () = shared.changed.notified() => {}
                () = sleep_until(wake_at) => {}
            }
        }
        .boxed()
    }

    fn stop(&mut self, _now: Timestamp, grace: Duration) {
        let deadline = tokio::time::Instant::now() + grace;
        self.stop.send_modify(|current| {
            *current = Some(current.map_or(deadline, |d| d.min(deadline)));
        });
    }
}

impl Drop for ProcessPod {
    fn drop(&mut self) {
        self.task.abort();
        for pgid in self.shared.groups().drain(..) {
            spawn::signal_group(pgid, libc::SIGKILL);
        }
        for key in &self.keys {
            self.registry.remove(key, &self.uid);
        }
    }
}

#[cfg(test)]
mod tests;
