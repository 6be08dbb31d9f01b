//! The node's container runtime seam: what the pod workers need from
//! "something that runs containers", independent of how it runs them.
//!
//! The simulated node drives every pod through this trait. The first
//! implementation, [`SimulatedRuntime`](super::simulated::SimulatedRuntime),
//! derives container states from timers and steering annotations. A process
//! runtime (child processes per container, logs kept for the kubelet API) can
//! implement the same trait later: it reports real exits through
//! [`PodRuntime::observe`] and wakes the worker through
//! [`PodRuntime::changed`], and the worker, status computation, binding and
//! deletion logic stay as they are.

use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

/// Starts pods: one per node process, shared by all pod workers.
pub trait Runtime: Send + Sync + 'static {
    /// Starts the pod's containers as of `started_at` (the pod's
    /// `status.startTime`, which is in the past when the node resumes a pod
    /// it ran before a restart).
    fn start_pod(&self, pod: &Pod, started_at: Timestamp) -> anyhow::Result<Box<dyn PodRuntime>>;
}

/// One running pod's containers.
pub trait PodRuntime: Send {
    /// The containers' states at `now`. Called after every wake-up; must be
    /// cheap and must not block.
    fn observe(&mut self, now: Timestamp) -> PodObservation;

    /// Resolves when [`observe`](Self::observe) may report something new (a
    /// timer fires, a process exits). Never resolving is fine when nothing
    /// will change on its own. Must be cancel-safe: the worker drops it when
    /// the pod object changes first.
    fn changed(&mut self) -> BoxFuture<'_, ()>;

    /// SIGTERM to every container, SIGKILL to whatever still runs `grace`
    /// after `now`. Called again when the grace period is shortened; a later
    /// deadline never extends an earlier one. Stopped containers are not
    /// restarted.
    fn stop(&mut self, now: Timestamp, grace: Duration);
}

/// What a runtime reports for one pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodObservation {
    /// Init containers, in spec order.
    pub init_containers: Vec<ContainerObservation>,
    /// App containers, in spec order.
    pub containers: Vec<ContainerObservation>,
}

impl PodObservation {
    /// True when no container (init or app) is running: after a stop this
    /// means the pod's deletion can be finalized.
    pub fn all_stopped(&self) -> bool {
        self.init_containers
            .iter()
            .chain(&self.containers)
            .all(|c| !matches!(c.state, ContainerRunState::Running { .. }))
    }
}

/// One container as the runtime sees it, in kubelet vocabulary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerObservation {
    /// The container's name in the pod spec.
    pub name: String,
    /// The image as written in the spec.
    pub image: String,
    /// `imageID` to report.
    pub image_id: String,
    /// `<runtime>://<id>` of the current (or last) run.
    pub container_id: String,
    /// Restarts so far.
    pub restart_count: i32,
    /// The current state.
    pub state: ContainerRunState,
    /// The previous run's termination, once a container restarted.
    pub last_termination: Option<Termination>,
}

/// A container's current state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContainerRunState {
    /// Not running: not yet created, or backing off before a restart.
    Waiting {
        /// Kubelet reason, e.g. `ContainerCreating`, `CrashLoopBackOff`.
        reason: String,
        /// Human-readable detail.
        message: Option<String>,
    },
    /// Running since `started_at`.
    Running {
        /// When this run started.
        started_at: Timestamp,
        /// Whether the container passes its readiness check.
        ready: bool,
    },
    /// Finished and not restarting.
    Terminated(Termination),
}

/// How a container run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Termination {
    /// The exit code (137 after SIGKILL).
    pub exit_code: i32,
    /// `Completed` for 0, otherwise `Error`, as the kubelet reports them.
    pub reason: String,
    /// Start of the run.
    pub started_at: Timestamp,
    /// End of the run.
    pub finished_at: Timestamp,
    /// `<runtime>://<id>` of the run.
    pub container_id: String,
}

impl Termination {
    /// The kubelet's reason for an exit code.
    pub fn reason_for(exit_code: i32) -> &'static str {
        if exit_code == 0 { "Completed" } else { "Error" }
    }
}

/// A pod's `spec.restartPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestartPolicy {
    /// Restart after every exit (the default).
    Always,
    /// Restart after a non-zero exit.
    OnFailure,
    /// Never restart.
    Never,
}

impl RestartPolicy {
    /// Reads the policy; unknown values fall back to the API default, Always.
    pub fn from_spec(value: Option<&str>) -> Self {
        match value {
            Some("Never") => Self::Never,
            Some("OnFailure") => Self::OnFailure,
            _ => Self::Always,
        }
    }

    /// Whether a run that exited with `exit_code` is restarted.
    pub fn restarts(self, exit_code: i32) -> bool {
        match self {
            Self::Always => true,
            Self::OnFailure => exit_code != 0,
            Self::Never => false,
        }
    }
}
