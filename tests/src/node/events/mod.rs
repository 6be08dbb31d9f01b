//! The pod Events a scheduler and a kubelet post, so that `kubectl describe
//! pod` and `kubectl get events` read as they do on a real cluster:
//!
//! | reason | type | from | message |
//! |---|---|---|---|
//! | Scheduled | Normal | default-scheduler | `Successfully assigned ns/pod to node` |
//! | Pulling | Normal | kubelet | `Pulling image "busybox"` (pull policy Always) |
//! | Pulled | Normal | kubelet | `Successfully pulled image "busybox" in 0s` (Always), else `Container image "busybox" already present on machine` |
//! | Created | Normal | kubelet | `Created container main` |
//! | Started | Normal | kubelet | `Started container main` |
//! | Killing | Normal | kubelet | `Stopping container main` |
//! | BackOff | Warning | kubelet | `Back-off restarting failed container main in pod web_ns(uid)` (the current kubelet's words; 1.20's ended after `container`) |
//! | Pulling | Normal | kubelet | `Pulling image "registry.invalid/web:2"` (each pull of an image that does not exist, see `pull`) |
//! | Failed | Warning | kubelet | `Failed to pull image "registry.invalid/web:2": <the runtime's error>`, then `Error: ErrImagePull` |
//! | BackOff | Normal | kubelet | `Back-off pulling image "registry.invalid/web:2"`, then `Failed` (Warning) `Error: ImagePullBackOff` |
//!
//! The kubelet's events name the container in `involvedObject.fieldPath`
//! (`spec.containers{main}`, `spec.initContainers{init}`), as the 1.20
//! kubelet does. Which events are due is decided by [`KubeletEvents`], a pure
//! function of the runtime's observations (unit-tested); posting them is
//! fire-and-forget: a lost event must not hold up a pod.

use std::collections::{HashMap, HashSet};

use k8s_openapi::api::core::v1::{Container, Event, EventSource, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};

use super::runtime::{ContainerObservation, ContainerRunState, PodObservation};

/// One event about a pod, before it is addressed and posted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodEvent {
    /// `Normal` or `Warning`.
    pub kind: &'static str,
    /// The machine-readable reason (`Started`, `Killing`, …).
    pub reason: &'static str,
    /// The human-readable message.
    pub message: String,
    /// `spec.containers{name}` for container events.
    pub field_path: Option<String>,
}

/// The scheduler's event for a pod it bound to `node`.
pub fn scheduled(pod: &Pod, node: &str) -> PodEvent {
    PodEvent {
        kind: "Normal",
        reason: "Scheduled",
        message: format!(
            "Successfully assigned {}/{} to {node}",
            pod.metadata.namespace.as_deref().unwrap_or_default(),
            pod.metadata.name.as_deref().unwrap_or_default()
        ),
        field_path: None,
    }
}

/// What a pod worker already announced, so that every event is posted once.
#[derive(Default, Debug)]
pub struct KubeletEvents {
    /// Container runs (by container id) announced as created and started.
    started: HashSet<String>,
    /// Back-offs announced, by container and restart count.
    backoffs: HashSet<(String, i32)>,
    /// Containers announced as being stopped.
    killing: HashSet<String>,
    /// The image-pull state last announced, by container: each pull and each
    /// back-off is announced when the container enters it.
    pulls: HashMap<String, String>,
}

impl KubeletEvents {
    /// The events due after observing `obs` for `pod`; `stopping` once the
    /// pod is being deleted.
    pub fn due(&mut self, pod: &Pod, obs: &PodObservation, stopping: bool) -> Vec<PodEvent> {
        let spec = pod.spec.as_ref();
        let init_specs = spec
            .and_then(|s| s.init_containers.as_deref())
            .unwrap_or(&[]);
        let app_specs = spec.map(|s| s.containers.as_slice()).unwrap_or(&[]);
        let mut events = Vec::new();
        let groups = [
            ("initContainers", &obs.init_containers, init_specs),
            ("containers", &obs.containers, app_specs),
        ];
        // The kubelet's `format.Pod`: name_namespace(uid).
        let pod_label = format!(
            "{}_{}({})",
            pod.metadata.name.as_deref().unwrap_or_default(),
            pod.metadata.namespace.as_deref().unwrap_or_default(),
            pod.metadata.uid.as_deref().unwrap_or_default()
        );
        for (list, observed, specs) in groups {
            for c in observed.iter() {
                let container = specs.iter().find(|s| s.name == c.name);
                let path = format!("spec.{list}{{{}}}", c.name);
                self.container(c, container, &path, &pod_label, stopping, &mut events);
            }
        }
        events
    }

    fn container(
        &mut self,
        c: &ContainerObservation,
        spec: Option<&Container>,
        path: &str,
        pod_label: &str,
        stopping: bool,
        events: &mut Vec<PodEvent>,
    ) {
        self.runs(c, spec, path, events);
        self.image_pull(c, path, events);
        if let ContainerRunState::Waiting { reason, .. } = &c.state
            && reason == "CrashLoopBackOff"
            && self.backoffs.insert((c.name.clone(), c.restart_count))
        {
            events.push(container_event(
                path,
                "Warning",
                "BackOff",
                format!(
                    "Back-off restarting failed container {} in pod {pod_label}",
                    c.name
                ),
            ));
        }
        if stopping
            && matches!(c.state, ContainerRunState::Running { .. })
            && self.killing.insert(c.name.clone())
        {
            events.push(container_event(
                path,
                "Normal",
                "Killing",
                format!("Stopping container {}", c.name),
            ));
        }
    }

    /// The image, Created and Started events of each run not announced yet.
    fn runs(
        &mut self,
        c: &ContainerObservation,
        spec: Option<&Container>,
        path: &str,
        events: &mut Vec<PodEvent>,
    ) {
        let event = |kind, reason, message| container_event(path, kind, reason, message);
        // A run that started: running now, or already over by the time we
        // looked (a short-lived command), unless it never started at all.
        let ran = match &c.state {
            ContainerRunState::Running { .. } => Some(c.container_id.as_str()),
            ContainerRunState::Terminated(t) if t.reason != "StartError" => {
                Some(t.container_id.as_str())
            }
            _ => None,
        };
        let last = c.last_termination.as_ref().map(|t| t.container_id.as_str());
        for id in [last, ran].into_iter().flatten() {
            if !self.started.insert(id.to_owned()) {
                continue;
            }
            if pulls_always(spec, &c.image) {
                events.push(event(
                    "Normal",
                    "Pulling",
                    format!("Pulling image {:?}", c.image),
                ));
                events.push(event(
                    "Normal",
                    "Pulled",
                    format!("Successfully pulled image {:?} in 0s", c.image),
                ));
            } else {
                events.push(event(
                    "Normal",
                    "Pulled",
                    format!("Container image {:?} already present on machine", c.image),
                ));
            }
            events.push(event(
                "Normal",
                "Created",
                format!("Created container {}", c.name),
            ));
            events.push(event(
                "Normal",
                "Started",
                format!("Started container {}", c.name),
            ));
        }
    }

    /// The events of a failed pull or a pull back-off the container just
    /// entered.
    fn image_pull(&mut self, c: &ContainerObservation, path: &str, events: &mut Vec<PodEvent>) {
        let event = |kind, reason, message| container_event(path, kind, reason, message);
        if let ContainerRunState::Waiting { reason, message } = &c.state
            && matches!(reason.as_str(), "ErrImagePull" | "ImagePullBackOff")
            && self.pulls.get(&c.name) != Some(reason)
        {
            self.pulls.insert(c.name.clone(), reason.clone());
            // The kubelet's image manager and its container start, in their order.
            if reason == "ErrImagePull" {
                events.push(event(
                    "Normal",
                    "Pulling",
                    format!("Pulling image {:?}", c.image),
                ));
                events.push(event(
                    "Warning",
                    "Failed",
                    format!(
                        "Failed to pull image {:?}: {}",
                        c.image,
                        message.as_deref().unwrap_or_default()
                    ),
                ));
            } else {
                events.push(event(
                    "Normal",
                    "BackOff",
                    format!("Back-off pulling image {:?}", c.image),
                ));
            }
            events.push(event("Warning", "Failed", format!("Error: {reason}")));
        }
    }
}

/// An event about the container at `path` (`spec.containers{main}`).
fn container_event(
    path: &str,
    kind: &'static str,
    reason: &'static str,
    message: String,
) -> PodEvent {
    PodEvent {
        kind,
        reason,
        message,
        field_path: Some(path.to_owned()),
    }
}

/// Whether the kubelet pulls the image for every start: `imagePullPolicy:
/// Always`, which the API server defaults for `:latest` and untagged images.
fn pulls_always(spec: Option<&Container>, image: &str) -> bool {
    match spec.and_then(|s| s.image_pull_policy.as_deref()) {
        Some(policy) => policy == "Always",
        None => {
            let name = image.rsplit('/').next().unwrap_or(image);
            !image.contains('@') && name.split_once(':').is_none_or(|(_, tag)| tag == "latest")
        }
    }
}

/// The Event object for `event` about `pod`, from `component` on `node`.
pub fn event_object(
    pod: &Pod,
    event: &PodEvent,
    component: &str,
    node: &str,
    now: Timestamp,
) -> Event {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let nanos = now.as_nanosecond();
    Event {
        metadata: ObjectMeta {
            // The kubelet's naming: the object's name and the time in hex.
            name: Some(format!("{name}.{nanos:x}")),
            namespace: pod.metadata.namespace.clone(),
            ..ObjectMeta::default()
        },
        involved_object: ObjectReference {
            api_version: Some("v1".to_owned()),
            kind: Some("Pod".to_owned()),
            name: Some(name),
            namespace: pod.metadata.namespace.clone(),
            uid: pod.metadata.uid.clone(),
            resource_version: pod.metadata.resource_version.clone(),
            field_path: event.field_path.clone(),
        },
        reason: Some(event.reason.to_owned()),
        message: Some(event.message.clone()),
        type_: Some(event.kind.to_owned()),
        source: Some(EventSource {
            component: Some(component.to_owned()),
            host: (component == "kubelet").then(|| node.to_owned()),
        }),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        count: Some(1),
        reporting_component: Some(component.to_owned()),
        reporting_instance: Some(if component == "kubelet" {
            node.to_owned()
        } else {
            format!("{component}-{node}")
        }),
        ..Event::default()
    }
}

/// Posts `events` about `pod` in the background, in order; failures (a
/// namespace being deleted, a busy API server) are logged and dropped.
pub fn post(
    client: &Client,
    pod: &Pod,
    events: Vec<PodEvent>,
    component: &'static str,
    node: &str,
) {
    if events.is_empty() {
        return;
    }
    let Some(namespace) = pod.metadata.namespace.clone() else {
        return;
    };
    let api: Api<Event> = Api::namespaced(client.clone(), &namespace);
    let objects: Vec<Event> = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            // Distinct names even within one nanosecond.
            let at = Timestamp::now()
                .checked_add(k8s_openapi::jiff::SignedDuration::from_nanos(
                    i64::try_from(i).unwrap_or(0),
                ))
                .unwrap_or_else(|_| Timestamp::now());
            event_object(pod, e, component, node, at)
        })
        .collect();
    tokio::spawn(async move {
        for object in objects {
            if let Err(e) = api.create(&PostParams::default(), &object).await {
                tracing::debug!(reason = ?object.reason, error = %e, "event not posted");
            }
        }
    });
}

#[cfg(test)]
mod tests;
