//! Why a wait is not over: the causes the API server already knows while a command
//! waits for pods, in the server's own words, one line per distinct
//! cause, for rolling-update's stalled steps and run-pod's attach wait.
//!
//! Pure: the callers read the objects (from their watch stores, and a list of
//! `FailedCreate` events only once a wait has stalled) and print the lines; this
//! module only decides which causes there are, which of them cannot fix
//! themselves, and which lines are new ([`Reported`]).
//!
//! The sources, as the controllers and the kubelet write them:
//! - a controller's `ReplicaFailure` condition (`reason: FailedCreate`, the create
//!   error as message; the replication manager sets it at the first failure and
//!   leaves it until a sync succeeds) and its `FailedCreate` events (`Error
//!   creating: …`, one per attempt, so the newest one says what fails *now*);
//! - a pod's `PodScheduled=False` condition (the scheduler's `Unschedulable` and its
//!   message);
//! - a container's waiting state: `ErrImagePull` and `ImagePullBackOff` (the
//!   kubelet alternates the two, the back-off's message wrapping the pull error),
//!   `CrashLoopBackOff` (with the last termination), and the other reasons the
//!   kubelet gives a container it cannot start.

use std::collections::BTreeMap;

use crate::objects::{ContainerStatus, Event, Pod};

/// One reason a wait is not over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// The object, as kubectl names it: `replicationcontroller/web-2`, `pod/web-2-x7k2p`.
    pub object: String,
    /// What it says, after the object: `cannot create pods: …`.
    pub text: String,
    /// Whether waiting cannot help (see [`permanent_create_error`]).
    pub permanent: bool,
    /// What stays the same while the cause does: its kind and the container, not
    /// the pod (pods of one template come and go with the same problem).
    key: String,
    /// What changes when the cause does (not the back-off's growing delay, not the
    /// random name of each pod the controller tried to create).
    signature: String,
}

impl Cause {
    /// A cause of another module's rules (`readiness`), with what keeps it from
    /// repeating: `key` stays while the cause does, `signature` changes with it.
    pub(crate) fn new(
        object: String,
        text: String,
        permanent: bool,
        key: String,
        signature: String,
    ) -> Self {
        Cause {
            object,
            text,
            permanent,
            key,
            signature,
        }
    }

    /// The line printed on stderr.
    pub fn line(&self) -> String {
        format!("Waiting: {} {}", self.object, self.text)
    }
}

/// What was already printed, so that a line repeats only when its cause changes.
#[derive(Debug, Default, Clone)]
pub struct Reported {
    seen: BTreeMap<String, String>,
}

impl Reported {
    /// The causes of `causes` not reported yet, or reported with another
    /// signature; records them as reported. A cause that went away and comes back
    /// unchanged (a crash loop between two runs) is not reported again.
    pub fn fresh<'a>(&mut self, causes: &'a [Cause]) -> Vec<&'a Cause> {
        let mut fresh = Vec::new();
        for cause in causes {
            if self.seen.get(&cause.key) != Some(&cause.signature) {
                self.seen.insert(cause.key.clone(), cause.signature.clone());
                fresh.push(cause);
            }
        }
        fresh
    }
}

/// A controller's `(type, status, reason, message)` conditions, whatever its kind.
pub type Condition<'a> = (&'a str, &'a str, Option<&'a str>, Option<&'a str>);

/// The causes of a controller (`kind` lowercase, as kubectl names it) that cannot
/// create its pods: its `ReplicaFailure` condition, worded by the newest of its
/// `FailedCreate` events when there is one (the condition keeps the first failure).
pub fn controller_causes(
    kind: &str,
    name: &str,
    conditions: &[Condition<'_>],
    failed_create_events: &[Event],
) -> Vec<Cause> {
    let Some((_, _, reason, message)) = conditions
        .iter()
        .find(|(t, s, _, _)| *t == "ReplicaFailure" && *s == "True")
    else {
        return Vec::new();
    };
    let newest = failed_create_events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("FailedCreate"))
        .max_by_key(|e| event_time(e))
        .and_then(|e| e.message.as_deref())
        .map(|m| {
            // client-go's correlator rewords the 11th similar event in ten minutes.
            let m = m
                .strip_prefix("(combined from similar events): ")
                .unwrap_or(m);
            m.strip_prefix("Error creating: ").unwrap_or(m)
        });
    let message = newest.or(*message).unwrap_or_default();
    let verb = if *reason == Some("FailedDelete") {
        "delete"
    } else {
        "create"
    };
    vec![Cause {
        object: format!("{kind}/{name}"),
        text: format!("cannot {verb} pods: {message}"),
        permanent: verb == "create" && permanent_create_error(message),
        key: format!("{kind}/{name}"),
        signature: mask_generated_names(message, name),
    }]
}

/// The newest time an event carries (a series' last observation, `lastTimestamp`,
/// `eventTime`, then `firstTimestamp`), as RFC 3339 text, which sorts by time.
fn event_time(event: &Event) -> String {
    event
        .series
        .as_ref()
        .and_then(|s| s.last_observed_time.as_ref())
        .map(|t| t.0.to_string())
        .or_else(|| event.last_timestamp.as_ref().map(|t| t.0.to_string()))
        .or_else(|| event.event_time.as_ref().map(|t| t.0.to_string()))
        .or_else(|| event.first_timestamp.as_ref().map(|t| t.0.to_string()))
        .unwrap_or_default()
}

/// Whether a pod create error cannot fix itself by waiting: refused by admission
/// for what the pod template asks (Pod Security, a LimitRange, a webhook or an
/// admission policy that denies it) or invalid. Not a quota (`exceeded quota`: it
/// is freed as pods go, or raised), and not a missing ServiceAccount (created
/// moments after its namespace): those are waited for.
pub fn permanent_create_error(message: &str) -> bool {
    if message.contains("exceeded quota") || message.contains("failed quota") {
        return false;
    }
    [
        "violates PodSecurity",
        " is invalid:",
        " usage per ",
        "limit to request ratio per",
        "denied the request",
        "ValidatingAdmissionPolicy",
    ]
    .iter()
    .any(|p| message.contains(p))
}

/// `pods "web-2-x7k2p"` → `pods "web-2-*"`: each attempt's generated name differs.
fn mask_generated_names(message: &str, controller: &str) -> String {
    let prefix = format!("\"{controller}-");
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(&prefix) {
        out.push_str(&rest[..at + prefix.len()]);
        rest = &rest[at + prefix.len()..];
        let end = rest.find('"').unwrap_or(rest.len());
        if rest[..end]
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        {
            out.push('*');
            rest = &rest[end..];
        }
    }
    out.push_str(rest);
    out
}

/// The waiting reasons of a container the kubelet cannot start, beside the crash
/// loop: image pulls and the container's own configuration.
const IMAGE_REASONS: [&str; 6] = [
    "ErrImagePull",
    "ImagePullBackOff",
    "ErrImageNeverPull",
    "InvalidImageName",
    "RegistryUnavailable",
    "SignatureValidationFailed",
];
const START_REASONS: [&str; 4] = [
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "PreCreateHookError",
];

/// The causes the pods show, one per distinct cause (the first pod by name names
/// it): not scheduled, an image that cannot be pulled, a crash loop, a container
/// that cannot be created. Pods being deleted are left out.
pub fn pod_causes<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> Vec<Cause> {
    let mut pods: Vec<&Pod> = pods
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect();
    pods.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let mut causes: Vec<Cause> = Vec::new();
    for pod in pods {
        for cause in causes_of_pod(pod) {
            if !causes.iter().any(|c| c.key == cause.key) {
                causes.push(cause);
            }
        }
    }
    causes
}

fn causes_of_pod(pod: &Pod) -> Vec<Cause> {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let object = format!("pod/{name}");
    let mut causes = Vec::new();
    let Some(status) = pod.status.as_ref() else {
        return causes;
    };
    let unscheduled = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "PodScheduled" && c.status == "False");
    if let Some(c) = unscheduled {
        let message = c.message.as_deref().unwrap_or_default();
        let reason = c.reason.as_deref().unwrap_or("Unschedulable");
        causes.push(Cause {
            object: object.clone(),
            text: if message.is_empty() {
                format!("cannot be scheduled: {reason}")
            } else {
                format!("cannot be scheduled: {message}")
            },
            permanent: false,
            key: "scheduling".into(),
            signature: format!("{reason}: {message}"),
        });
    }
    let containers = status
        .init_container_statuses
        .iter()
        .flatten()
        .chain(status.container_statuses.iter().flatten());
    for container in containers {
        if let Some(cause) = container_cause(&object, container) {
            causes.push(cause);
        }
    }
    causes
}

fn container_cause(object: &str, c: &ContainerStatus) -> Option<Cause> {
    let waiting = c.state.as_ref()?.waiting.as_ref()?;
    let reason = waiting.reason.as_deref()?;
    let message = waiting.message.as_deref().unwrap_or_default();
    let said = |m: &str| {
        if m.is_empty() {
            reason.to_string()
        } else {
            format!("{reason}: {m}")
        }
    };
    if IMAGE_REASONS.contains(&reason) {
        // The back-off's message wraps the pull error
        // (`Back-off pulling image "x": ErrImagePull: <error>`): both name one cause.
        let error = message
            .strip_prefix("Back-off pulling image ")
            .and_then(|m| m.split_once(": "))
            .map(|(_, e)| e)
            .map(|e| e.strip_prefix("ErrImagePull: ").unwrap_or(e))
            .unwrap_or(message);
        let kind = if reason == "InvalidImageName" {
            "InvalidImageName"
        } else {
            "image"
        };
        return Some(Cause {
            object: object.to_string(),
            text: format!("container {}: {}", c.name, said(message)),
            // The kubelet refused the reference itself: no pull will ever succeed.
            permanent: reason == "InvalidImageName",
            key: format!("{kind}/{}", c.name),
            signature: format!("{} {error}", c.image),
        });
    }
    if reason == "CrashLoopBackOff" {
        let last = c
            .last_state
            .as_ref()
            .and_then(|s| s.terminated.as_ref())
            .map(|t| {
                format!(
                    "; last run: {}, exit code {}",
                    t.reason.as_deref().unwrap_or("Error"),
                    t.exit_code
                )
            })
            .unwrap_or_default();
        return Some(Cause {
            object: object.to_string(),
            text: format!("container {}: {}{last}", c.name, said(message)),
            permanent: false,
            key: format!("crash/{}", c.name),
            // Not the message: its back-off delay grows with every restart.
            signature: last,
        });
    }
    if START_REASONS.contains(&reason) {
        return Some(Cause {
            object: object.to_string(),
            text: format!("container {}: {}", c.name, said(message)),
            permanent: false,
            key: format!("{reason}/{}", c.name),
            signature: message.to_string(),
        });
    }
    None
}

#[cfg(test)]
mod tests;
