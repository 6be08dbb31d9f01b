//! Pod status as a kubelet would post it: a pure function of the pod, where
//! it was placed, what the runtime observes and the current time.
//!
//! It follows the 1.20 kubelet's rules (`getPhase`, the Initialized,
//! ContainersReady and Ready condition generators) closely enough for
//! kubectl and the controllers to treat the pods as real.

use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting,
    ContainerStatus, Pod, PodCondition, PodIP, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::runtime::{
    ContainerObservation, ContainerRunState, PodObservation, RestartPolicy, Termination,
};

#[cfg(test)]
mod tests;

/// Where the node placed a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The node's address (`status.hostIP`).
    pub host_ip: String,
    /// The pod's address (`status.podIP`).
    pub pod_ip: String,
    /// When the node started the pod (`status.startTime`).
    pub start_time: Timestamp,
}

/// Pod phases, as the API spells them.
pub mod phase {
    /// Accepted, not all containers started.
    pub const PENDING: &str = "Pending";
    /// Bound, all containers created, at least one running or restarting.
    pub const RUNNING: &str = "Running";
    /// All containers terminated with exit code 0 and will not restart.
    pub const SUCCEEDED: &str = "Succeeded";
    /// All containers terminated, at least one with a failure, no restarts.
    pub const FAILED: &str = "Failed";

    /// Whether nothing more will run in a pod in this phase.
    pub fn is_terminal(phase: Option<&str>) -> bool {
        matches!(phase, Some(SUCCEEDED | FAILED))
    }
}

/// The status to post for `pod`. `previous` is the status this node posted
/// last (None: use the pod's own): conditions keep their
/// `lastTransitionTime` while their status does not change. Conditions this
/// node does not own (a readiness gate's, say) are kept as the pod has them.
pub fn pod_status(
    pod: &Pod,
    placement: &Placement,
    observation: &PodObservation,
    previous: Option<&PodStatus>,
    now: Timestamp,
) -> PodStatus {
    let spec = pod.spec.as_ref();
    let restart = RestartPolicy::from_spec(spec.and_then(|s| s.restart_policy.as_deref()));
    let phase = pod_phase(restart, observation);
    // Conditions on the pod now (others may own some of them) ...
    let current_conditions = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    // ... and the ones this node posted last, the reference for transitions
    // (the pod from the watch can lag behind our own last write).
    let previous_conditions = previous
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or(current_conditions);

    let mut conditions = Conditions {
        list: current_conditions.to_vec(),
        previous: previous_conditions,
        now,
    };
    conditions.set_scheduled(current_conditions, placement.start_time);
    conditions.set_initialized(observation, placement.start_time);
    conditions.set_ready(
        phase,
        observation,
        missing_readiness_gate(pod, current_conditions),
    );

    PodStatus {
        phase: Some(phase.to_owned()),
        conditions: Some(conditions.list),
        host_ip: Some(placement.host_ip.clone()),
        pod_ip: Some(placement.pod_ip.clone()),
        pod_ips: Some(vec![PodIP {
            ip: placement.pod_ip.clone(),
        }]),
        start_time: Some(Time(placement.start_time)),
        init_container_statuses: spec.and_then(|s| s.init_containers.as_ref()).map(|_| {
            observation
                .init_containers
                .iter()
                .map(container_status)
                .collect()
        }),
        container_statuses: Some(
            observation
                .containers
                .iter()
                .map(container_status)
                .collect(),
        ),
        ..PodStatus::default()
    }
}

/// Why a readiness gate of `pod` keeps it from being Ready (None: every gate's
/// condition is True).
fn missing_readiness_gate(pod: &Pod, current_conditions: &[PodCondition]) -> Option<String> {
    pod.spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_deref())
        .unwrap_or_default()
        .iter()
        .find_map(|gate| {
            match current_conditions
                .iter()
                .find(|c| c.type_ == gate.condition_type)
            {
                None => Some(format!(
                    "corresponding condition of pod readiness gate \"{}\" does not exist.",
                    gate.condition_type
                )),
                Some(c) if c.status != "True" => Some(format!(
                    "the status of pod readiness gate \"{}\" is not \"True\", but {}",
                    gate.condition_type, c.status
                )),
                Some(_) => None,
            }
        })
}

/// The pod's conditions being rebuilt.
struct Conditions<'a> {
    list: Vec<PodCondition>,
    /// Where transition times come from.
    previous: &'a [PodCondition],
    now: Timestamp,
}

impl Conditions<'_> {
    /// PodScheduled: binding sets it; a pod created with spec.nodeName has
    /// none, so it is taken from the last posted status or set now.
    fn set_scheduled(&mut self, current_conditions: &[PodCondition], start_time: Timestamp) {
        if !current_conditions.iter().any(|c| c.type_ == "PodScheduled") {
            match self.previous.iter().find(|c| c.type_ == "PodScheduled") {
                Some(c) => self.list.insert(0, c.clone()),
                None => self.set("PodScheduled", true, None, None, start_time),
            }
        }
    }

    /// Initialized: every init container terminated with exit code 0.
    fn set_initialized(&mut self, observation: &PodObservation, start_time: Timestamp) {
        let uninitialized =
            names(observation.init_containers.iter().filter(
                |c| !matches!(&c.state, ContainerRunState::Terminated(t) if t.exit_code == 0),
            ));
        match uninitialized {
            None => self.set("Initialized", true, None, None, start_time),
            Some(list) => self.set(
                "Initialized",
                false,
                Some("ContainersNotInitialized"),
                Some(format!("containers with incomplete status: [{list}]")),
                self.now,
            ),
        }
    }

    /// ContainersReady, and Ready, which also needs every readiness gate's
    /// condition to be True (`missing_gate`: why one is not).
    fn set_ready(
        &mut self,
        phase: &str,
        observation: &PodObservation,
        missing_gate: Option<String>,
    ) {
        let now = self.now;
        let (ready_reason, ready_message, containers_ready) = if phase == phase::SUCCEEDED {
            (Some("PodCompleted"), None, false)
        } else {
            match names(observation.containers.iter().filter(|c| !is_ready(c))) {
                None => (None, None, true),
                Some(list) => (
                    Some("ContainersNotReady"),
                    Some(format!("containers with unready status: [{list}]")),
                    false,
                ),
            }
        };
        self.set(
            "ContainersReady",
            containers_ready,
            ready_reason,
            ready_message.clone(),
            now,
        );
        match (containers_ready, missing_gate) {
            (true, Some(message)) => self.set(
                "Ready",
                false,
                Some("ReadinessGatesNotReady"),
                Some(message),
                now,
            ),
            (ready, _) => self.set("Ready", ready, ready_reason, ready_message, now),
        }
    }

    /// Sets one condition in place (or appends it). Its transition time is
    /// kept if the status did not change, `now` if it did, and `first` if
    /// the condition is new.
    fn set(
        &mut self,
        type_: &str,
        status: bool,
        reason: Option<&str>,
        message: Option<String>,
        first: Timestamp,
    ) {
        let status = if status { "True" } else { "False" };
        let last_transition_time = match self.previous.iter().find(|c| c.type_ == type_) {
            Some(p) if p.status == status => p.last_transition_time.clone(),
            Some(_) => Some(Time(self.now)),
            None => Some(Time(first)),
        };
        let condition = PodCondition {
            type_: type_.to_owned(),
            status: status.to_owned(),
            reason: reason.map(str::to_owned),
            message,
            last_transition_time,
            last_probe_time: None,
            ..PodCondition::default()
        };
        match self.list.iter_mut().find(|c| c.type_ == type_) {
            Some(slot) => *slot = condition,
            None => self.list.push(condition),
        }
    }
}

/// The kubelet's `getPhase` (1.20): Pending until every container has
/// started once, then Running until no container runs or will restart.
pub fn pod_phase(restart: RestartPolicy, observation: &PodObservation) -> &'static str {
    let initializing = observation
        .init_containers
        .iter()
        .any(|c| !matches!(&c.state, ContainerRunState::Terminated(t) if t.exit_code == 0));
    if initializing {
        // A failed init container with restartPolicy Never fails the pod.
        let failed = observation
            .init_containers
            .iter()
            .any(|c| matches!(&c.state, ContainerRunState::Terminated(t) if t.exit_code != 0));
        return if failed && restart == RestartPolicy::Never {
            phase::FAILED
        } else {
            phase::PENDING
        };
    }
    let (mut running, mut waiting, mut stopped, mut succeeded) = (0, 0, 0, 0);
    for c in &observation.containers {
        match &c.state {
            ContainerRunState::Running { .. } => running += 1,
            ContainerRunState::Terminated(t) => {
                stopped += 1;
                if t.exit_code == 0 {
                    succeeded += 1;
                }
            }
            ContainerRunState::Waiting { .. } if c.last_termination.is_some() => stopped += 1,
            ContainerRunState::Waiting { .. } => waiting += 1,
        }
    }
    let failed = stopped - succeeded;
    if waiting > 0 || observation.containers.is_empty() {
        phase::PENDING
    } else if running > 0 {
        phase::RUNNING
    } else {
        match restart {
            RestartPolicy::Always => phase::RUNNING,
            RestartPolicy::OnFailure if stopped == succeeded => phase::SUCCEEDED,
            RestartPolicy::OnFailure => phase::RUNNING,
            RestartPolicy::Never if failed > 0 => phase::FAILED,
            RestartPolicy::Never => phase::SUCCEEDED,
        }
    }
}

fn is_ready(c: &ContainerObservation) -> bool {
    matches!(c.state, ContainerRunState::Running { ready: true, .. })
}

/// Space-separated container names, as the kubelet lists them; None if empty.
fn names<'a>(containers: impl Iterator<Item = &'a ContainerObservation>) -> Option<String> {
    let list: Vec<&str> = containers.map(|c| c.name.as_str()).collect();
    (!list.is_empty()).then(|| list.join(" "))
}

/// One container's `containerStatuses` entry.
pub fn container_status(c: &ContainerObservation) -> ContainerStatus {
    let running = matches!(c.state, ContainerRunState::Running { .. });
    ContainerStatus {
        name: c.name.clone(),
        image: c.image.clone(),
        image_id: c.image_id.clone(),
        // A container never created (its image not pulled) has no id yet.
        container_id: (!c.container_id.is_empty()).then(|| c.container_id.clone()),
        ready: is_ready(c),
        started: Some(running),
        restart_count: c.restart_count,
        state: Some(container_state(&c.state)),
        // The kubelet always sends lastState, `{}` when there is none.
        last_state: Some(ContainerState {
            terminated: c.last_termination.as_ref().map(terminated),
            ..ContainerState::default()
        }),
        ..ContainerStatus::default()
    }
}

fn container_state(state: &ContainerRunState) -> ContainerState {
    match state {
        ContainerRunState::Waiting { reason, message } => ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some(reason.clone()),
                message: message.clone(),
            }),
            ..ContainerState::default()
        },
        ContainerRunState::Running { started_at, .. } => ContainerState {
            running: Some(ContainerStateRunning {
                started_at: Some(Time(*started_at)),
            }),
            ..ContainerState::default()
        },
        ContainerRunState::Terminated(t) => ContainerState {
            terminated: Some(terminated(t)),
            ..ContainerState::default()
        },
    }
}

fn terminated(t: &Termination) -> ContainerStateTerminated {
    ContainerStateTerminated {
        exit_code: t.exit_code,
        reason: Some(t.reason.clone()),
        started_at: Some(Time(t.started_at)),
        finished_at: Some(Time(t.finished_at)),
        container_id: Some(t.container_id.clone()),
        ..ContainerStateTerminated::default()
    }
}
