//! Why a stalled update waits: once nothing has moved for
//! [`STALL_AFTER`] (no replica count, pod count or readiness changed), the causes
//! the API server knows — the new RC's `ReplicaFailure` condition and newest
//! `FailedCreate` event, its pods' scheduling and waiting reasons — are printed on
//! stderr, one `Waiting: …` line per distinct cause, again only when a cause
//! changes (`objectstatus::waiting`). stdout and 1.17's lines are untouched.
//!
//! Requests: none while the update moves. The RC and its pods come from the watch
//! stores the waits already keep; only a stalled RC that lacks pods costs a list of
//! its `FailedCreate` events, at most every [`EVENTS_EVERY`].
//!
//! With `--fail-fast` (the default) a cause that cannot fix itself
//! (`Cause::permanent`: refused by admission for what the template asks, other than
//! a quota; an invalid template; an image name the kubelet refuses) ends the update
//! at once with [`CannotProgress`], which the command turns into an error and the
//! resume hint; `--fail-fast=false` waits out `--timeout`, as kubectl 1.17 did.

use std::sync::Arc;
use std::time::Duration;

use crate::model::{Pod, ReplicationController};
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams};
use objectstatus::objects;
use objectstatus::waiting::{Cause, Reported, controller_causes, pod_causes};
use tokio::time::Instant;

use super::watch::Observer;
use crate::controller::replicas;

/// How long nothing may move before the causes are looked at.
pub const STALL_AFTER: Duration = Duration::from_secs(3);
/// The least time between two lists of a stalled RC's `FailedCreate` events.
pub const EVENTS_EVERY: Duration = Duration::from_secs(5);

/// The most a list of events may take.
const EVENTS_BOUND: Duration = Duration::from_secs(2);

/// Where the `Waiting:` lines go (stderr, around the progress bar).
pub type Sink = Arc<dyn Fn(&str) + Send + Sync>;

/// The update cannot progress, and waiting will not change it.
#[derive(Debug, thiserror::Error)]
#[error("the update cannot progress: {0}")]
pub struct CannotProgress(pub String);

/// The stall watch of one update.
pub struct Stall {
    events: Api<Event>,
    fail_fast: bool,
    out: Sink,
    moved_at: Instant,
    fingerprint: Option<Vec<i64>>,
    reported: Reported,
    events_listed_at: Option<Instant>,
    failed_creates: Vec<Event>,
    /// When this run began, in whole seconds (the events' precision): a refusal
    /// ends the update only when the server reported it since (see `check`).
    started: i64,
}

impl Stall {
    pub fn new(events: Api<Event>, fail_fast: bool, out: Sink) -> Self {
        Stall {
            events,
            fail_fast,
            out,
            moved_at: Instant::now(),
            fingerprint: None,
            reported: Reported::default(),
            events_listed_at: None,
            failed_creates: Vec::new(),
            started: k8s_openapi::jiff::Timestamp::now().as_second(),
        }
    }

    /// When a wait should wake to look again, though no watch event came.
    pub fn next_check(&self) -> Instant {
        let stalled_at = self.moved_at + STALL_AFTER;
        if Instant::now() < stalled_at {
            return stalled_at;
        }
        Instant::now() + EVENTS_EVERY
    }

    /// Called whenever a wait wakes: notes movement, or, once stalled, prints the
    /// causes not printed yet; fails with [`CannotProgress`] under `--fail-fast`
    /// when one of them cannot fix itself.
    pub(super) async fn check(&mut self, observer: &Observer) -> anyhow::Result<()> {
        let now = Instant::now();
        let fingerprint = fingerprint(observer);
        if self.fingerprint.as_ref() != Some(&fingerprint) {
            self.fingerprint = Some(fingerprint);
            self.moved_at = now;
            return Ok(());
        }
        if now < self.moved_at + STALL_AFTER {
            return Ok(());
        }
        let rc = observer.rc(&observer.new_name);
        let short = rc.as_ref().is_some_and(|rc| {
            rc.status.as_ref().map_or(0, |s| s.replicas) < replicas(rc)
                || failure_condition(rc).is_some()
        });
        if short
            && self
                .events_listed_at
                .is_none_or(|at| now >= at + EVENTS_EVERY)
        {
            self.events_listed_at = Some(now);
            self.list_failed_creates(&observer.new_name).await;
        }
        let mut causes = Vec::new();
        if let Some(rc) = &rc {
            causes.extend(rc_causes(rc, &self.failed_creates));
        }
        let pods = observer.new_pods.store.state();
        // A pod objectstatus cannot read (which a watch's decoder would have refused
        // first) has no cause to tell.
        let pods: Vec<objects::Pod> = pods
            .iter()
            .filter_map(|p| p.to_status_object().ok())
            .collect();
        causes.extend(pod_causes(&pods));
        // The RC's condition stays until the controller's next attempt, which its
        // back-off may delay: after the user removed the cause and ran the command
        // again, the old refusal must not end the new run. Only one reported during
        // this run does.
        let rc_object = format!("replicationcontroller/{}", observer.new_name);
        let refused_now = rc
            .as_ref()
            .is_some_and(|rc| last_failure_at(rc, &self.failed_creates) >= Some(self.started));
        let fatal = causes
            .iter()
            .find(|c| c.permanent && self.fail_fast && (c.object != rc_object || refused_now))
            .cloned();
        for cause in self.reported.fresh(&causes) {
            // The error says it; a line before it would say it twice.
            if fatal.as_ref() != Some(cause) {
                (self.out)(&cause.line());
            }
        }
        if let Some(cause) = fatal {
            return Err(CannotProgress(format!("{} {}", cause.object, cause.text)).into());
        }
        Ok(())
    }

    async fn list_failed_creates(&mut self, rc_name: &str) {
        let params = ListParams::default().fields(&format!(
            "involvedObject.kind=ReplicationController,involvedObject.name={rc_name},reason=FailedCreate"
        ));
        // Bounded by its own short limit: the wait it runs in races Ctrl-C only
        // between looks, and a paused API server must not hold an interruption up.
        match tokio::time::timeout(EVENTS_BOUND, self.events.list(&params)).await {
            Ok(Ok(list)) => self.failed_creates = list.items,
            // Events are a refinement of the condition: a user who may not list
            // them, or a server slow to answer, still gets the condition's words.
            Ok(Err(e)) => tracing::debug!("FailedCreate events of {rc_name} not listed: {e}"),
            Err(_) => tracing::debug!("FailedCreate events of {rc_name}: no answer in time"),
        }
    }
}

/// What moves when the update makes progress: the two RCs' counts, their pods,
/// and how many of those are ready.
fn fingerprint(observer: &Observer) -> Vec<i64> {
    let mut out = Vec::new();
    for name in [&observer.old_name, &observer.new_name] {
        match observer.rc(name) {
            Some(rc) => {
                let status = rc.status.as_ref();
                out.extend([
                    i64::from(replicas(&rc)),
                    i64::from(status.map_or(0, |s| s.replicas)),
                    i64::from(status.and_then(|s| s.ready_replicas).unwrap_or(0)),
                ]);
            }
            None => out.extend([-1, -1, -1]),
        }
    }
    for store in [&observer.old_pods.store, &observer.new_pods.store] {
        let pods = store.state();
        let active = pods
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none());
        let ready = active.clone().filter(|p| is_ready(p)).count();
        out.extend([active.count() as i64, ready as i64]);
    }
    out
}

fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn failure_condition(
    rc: &ReplicationController,
) -> Option<&crate::model::ReplicationControllerCondition> {
    rc.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "ReplicaFailure" && c.status == "True")
}

/// When the RC last failed to create a pod, in seconds: its condition's transition
/// or its newest `FailedCreate` event.
fn last_failure_at(rc: &ReplicationController, events: &[Event]) -> Option<i64> {
    let condition = failure_condition(rc)?
        .last_transition_time
        .as_ref()
        .map(|t| t.0.as_second());
    let event = events
        .iter()
        .filter_map(|e| {
            e.series
                .as_ref()
                .and_then(|s| s.last_observed_time.as_ref())
                .map(|t| t.0)
                .or_else(|| e.last_timestamp.as_ref().map(|t| t.0))
                .or_else(|| e.event_time.as_ref().map(|t| t.0))
        })
        .map(|t| t.as_second())
        .max();
    condition.max(event)
}

/// The RC's causes, from its condition and those of `events` that are not older
/// than it (events outlive the failure they report by an hour).
fn rc_causes(rc: &ReplicationController, events: &[Event]) -> Vec<Cause> {
    let Some(condition) = failure_condition(rc) else {
        return Vec::new();
    };
    let since = condition.last_transition_time.as_ref().map(|t| t.0);
    let current: Vec<objects::Event> = events
        .iter()
        .filter(|e| {
            let at = e
                .last_timestamp
                .as_ref()
                .map(|t| t.0)
                .or_else(|| e.event_time.as_ref().map(|t| t.0));
            match (since, at) {
                (Some(since), Some(at)) => at >= since,
                _ => true,
            }
        })
        .map(objects::Event::from)
        .collect();
    let conditions = [(
        condition.type_.as_str(),
        condition.status.as_str(),
        condition.reason.as_deref(),
        condition.message.as_deref(),
    )];
    let name = rc.metadata.name.as_deref().unwrap_or_default();
    controller_causes("replicationcontroller", name, &conditions, &current)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rc_failing_since(at: &str, message: &str) -> ReplicationController {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-2"},
            "spec": {"replicas": 1},
            "status": {"replicas": 0, "conditions": [{
                "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                "message": message, "lastTransitionTime": at,
            }]},
        }))
        .unwrap()
    }

    fn failed_create(message: &str, at: &str) -> Event {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "e"},
            "involvedObject": {"kind": "ReplicationController", "name": "web-2"},
            "reason": "FailedCreate", "message": format!("Error creating: {message}"),
            "lastTimestamp": at,
        }))
        .unwrap()
    }

    #[test]
    fn events_older_than_the_failure_are_left_out() {
        let rc = rc_failing_since(
            "2026-11-27T19:00:10Z",
            "pods \"web-2-a\" is forbidden: exceeded quota: q",
        );
        // An event of an earlier failure, before the condition: not what fails now.
        let stale = failed_create(
            "pods \"web-2-b\" is forbidden: violates PodSecurity \"restricted:latest\": x",
            "2026-11-27T19:00:00Z",
        );
        let causes = rc_causes(&rc, std::slice::from_ref(&stale));
        assert!(causes[0].text.contains("exceeded quota"), "{causes:?}");
        let fresh = failed_create(
            "pods \"web-2-c\" is forbidden: violates PodSecurity \"restricted:latest\": x",
            "2026-11-27T19:00:12Z",
        );
        let causes = rc_causes(&rc, &[stale, fresh.clone()]);
        assert!(
            causes[0].text.contains("violates PodSecurity"),
            "{causes:?}"
        );
        assert!(causes[0].permanent);
        assert_eq!(last_failure_at(&rc, &[fresh]), Some(1_795_806_012));
    }

    #[test]
    fn a_healthy_rc_has_no_cause() {
        let mut rc = rc_failing_since("2026-11-27T19:00:10Z", "x");
        rc.status.as_mut().unwrap().conditions = None;
        assert!(rc_causes(&rc, &[]).is_empty());
        assert_eq!(last_failure_at(&rc, &[]), None);
    }
}
