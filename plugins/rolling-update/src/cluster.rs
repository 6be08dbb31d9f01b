//! The updater's cluster operations on a real API server, with kube.
//!
//! Waiting is watch-driven: watchers on the two RCs (by name) and on the pods of
//! each RC's selector keep local stores up to date, and every wait is "until the
//! store satisfies the condition", woken by the next watch event. Decisions read
//! those stores instead of listing again, so a step costs one PATCH of the scale
//! subresource plus the watch traffic.
//!
//! Every request is preceded by an interrupt check; waits race the interrupt.
//!
//! By concern: `errors` (telling failures apart, kubectl's wording of connection
//! failures), `writes` (conflict-retrying updates), `watch` (the watch stores and pod
//! availability); this file holds `KubeOps`, the seam's implementation.

mod errors;
mod stall;
mod watch;
mod writes;

pub use stall::{CannotProgress, Sink, Stall};

pub use errors::{explain_transport, is_transient};
pub use writes::{strip_update_annotations, update_pod_with_retries, update_rc_with_retries};

use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use k8s_openapi::api::core::v1::{Pod, ReplicationController};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use tokio::time::Instant;

use errors::is_not_found;
use watch::{Observer, next_available_at, pod_available};

use crate::controller::{name, replicas, set_replicas};
use crate::handover::{self, HandoverOps};
use crate::names::{
    DESIRED_REPLICAS_ANNOTATION, ORIGINAL_REPLICAS_ANNOTATION, SOURCE_ID_ANNOTATION, set_annotation,
};
use crate::prepare::PrepareOps;
use crate::updater::{CleanupPolicy, Report, UpdaterConfig, UpdaterOps};
use cli::interrupt::Interrupt;

/// [`UpdaterOps`] on a real cluster.
pub struct KubeOps {
    pub rcs: Api<ReplicationController>,
    pub pods: Api<Pod>,
    pub interrupt: Interrupt,
    /// Upper bound between re-evaluations even without watch events (1.17's
    /// `--poll-interval`); a wait that reaches it with no event re-lists, in case a
    /// watch silently stalled. Zero means the default safety net ([`QUIET_RELIST`]).
    pub poll_interval: Duration,
    pub timeout: Duration,
    /// The server-side bound of each watch request (below the client's read timeout).
    pub watch_timeout: u32,
    /// The threshold of the last readiness count, for [`next_available_at`].
    min_ready_seconds: i32,
    observer: Option<Observer>,
    /// The two RCs being watched, to start the watches again.
    watched: Option<(ReplicationController, ReplicationController)>,
    /// Why a stalled wait waits (issue 31); none in a dry run.
    pub stall: Option<Stall>,
}

/// The re-list period of `--poll-interval=0` (1.17 would have polled in a busy
/// loop; a zero period here means "watch events only, plus this safety net").
pub const QUIET_RELIST: Duration = Duration::from_secs(30);

impl KubeOps {
    pub fn new(
        rcs: Api<ReplicationController>,
        pods: Api<Pod>,
        interrupt: Interrupt,
        poll_interval: Duration,
        timeout: Duration,
    ) -> Self {
        KubeOps {
            rcs,
            pods,
            interrupt,
            poll_interval,
            timeout,
            watch_timeout: 290,
            min_ready_seconds: 0,
            observer: None,
            watched: None,
            stall: None,
        }
    }

    /// The stall watch's look at the stores, once a wait woke (see `stall`).
    async fn check_stall(&mut self) -> anyhow::Result<()> {
        if let (Some(stall), Some(observer)) = (self.stall.as_mut(), self.observer.as_ref()) {
            stall.check(observer).await?;
        }
        Ok(())
    }

    /// When the stall watch wants to look again, if it is on.
    fn stall_wake(&self) -> Option<Instant> {
        self.stall.as_ref().map(Stall::next_check)
    }

    fn poll(&self) -> Duration {
        if self.poll_interval.is_zero() {
            QUIET_RELIST
        } else {
            self.poll_interval
        }
    }

    fn observer(&mut self) -> anyhow::Result<&mut Observer> {
        let observer = self
            .observer
            .as_mut()
            .ok_or_else(|| anyhow!("internal error: watches not started"))?;
        observer.fatal()?;
        Ok(observer)
    }

    /// Starts (or restarts, which re-lists) the watches on `old` and `new`.
    async fn watch(
        &mut self,
        old: &ReplicationController,
        new: &ReplicationController,
    ) -> anyhow::Result<()> {
        self.observer = None;
        let observer = Observer::start(&self.rcs, &self.pods, old, new, self.watch_timeout);
        tokio::select! {
            r = observer.ready(self.timeout) => r?,
            i = self.interrupt.fired() => return Err(i.into()),
        }
        self.observer = Some(observer);
        self.watched = Some((old.clone(), new.clone()));
        Ok(())
    }

    /// A wait reached the poll interval without any event: list again.
    async fn relist(&mut self) -> anyhow::Result<()> {
        let Some((old, new)) = self.watched.clone() else {
            return Ok(());
        };
        tracing::debug!("no watch event for {:?}: listing again", self.poll());
        self.watch(&old, &new).await
    }

    /// Waits until the RC named `rc_name` satisfies `cond` in the store. `cond`
    /// also gets the number of its active pods (not being deleted) when the RC is
    /// one of the two being watched.
    async fn wait_rc(
        &mut self,
        rc_name: &str,
        timeout: Duration,
        cond: impl Fn(&ReplicationController, Option<i32>) -> bool,
    ) -> Result<ReplicationController, WaitError> {
        let interrupt = self.interrupt.clone();
        let poll = self.poll();
        let deadline = Instant::now() + timeout;
        loop {
            let observer = self.observer().map_err(WaitError::Failed)?;
            // Own receivers: waking on pod events here must not hide them from
            // wait_for_change, which tracks what ready_pods last saw.
            let mut rc_changes = observer.rc_changes.clone();
            let mut pod_changes = observer.pod_changes.clone();
            rc_changes.borrow_and_update();
            pod_changes.borrow_and_update();
            if let Some(rc) = observer.rc(rc_name) {
                let active = observer.active_pods(rc_name);
                if cond(&rc, active) {
                    return Ok(rc);
                }
            }
            if Instant::now() >= deadline {
                return Err(WaitError::TimedOut);
            }
            self.check_stall().await.map_err(WaitError::Failed)?;
            let stall_wake = self.stall_wake();
            let wake = deadline.min(Instant::now() + poll);
            let quiet = tokio::select! {
                _ = rc_changes.changed() => false,
                _ = pod_changes.changed() => false,
                _ = tokio::time::sleep_until(wake) => Instant::now() < deadline,
                () = sleep_until_some(stall_wake) => false,
                i = interrupt.fired() => return Err(WaitError::Interrupted(i)),
            };
            if quiet {
                self.relist().await.map_err(WaitError::Failed)?;
            }
        }
    }

    /// The classic step error for a wait that failed.
    fn wait_failed(err: WaitError, timed_out: String) -> anyhow::Error {
        match err {
            WaitError::TimedOut => anyhow!(timed_out),
            WaitError::Interrupted(i) => i.into(),
            WaitError::Failed(e) => e,
        }
    }
}

enum WaitError {
    TimedOut,
    Interrupted(cli::interrupt::Interrupted),
    Failed(anyhow::Error),
}

impl UpdaterOps for KubeOps {
    async fn get_or_create_target(
        &mut self,
        new_rc: &ReplicationController,
        source_id: &str,
    ) -> anyhow::Result<(ReplicationController, bool)> {
        self.interrupt.check()?;
        let existing = match new_rc.metadata.name.as_deref() {
            Some(n) if !n.is_empty() => self.rcs.get_opt(n).await?,
            _ => None,
        };
        let (target, existed) = match existing {
            Some(rc) => {
                let annotations = rc.metadata.annotations.as_ref();
                let ok = annotations
                    .and_then(|a| a.get(SOURCE_ID_ANNOTATION))
                    .is_some_and(|v| v == source_id)
                    && annotations.is_some_and(|a| a.contains_key(DESIRED_REPLICAS_ANNOTATION));
                if !ok {
                    bail!(
                        "Missing/unexpected annotations for controller {}, expected {source_id} : {}",
                        name(&rc),
                        go_map(annotations)
                    );
                }
                (rc, true)
            }
            None => {
                let desired = replicas(new_rc);
                if desired <= 0 {
                    bail!(
                        "Invalid controller spec for {}; required: > 0 replicas, actual: {desired}",
                        name(new_rc)
                    );
                }
                let mut rc = new_rc.clone();
                set_annotation(&mut rc, DESIRED_REPLICAS_ANNOTATION, desired.to_string());
                set_annotation(&mut rc, SOURCE_ID_ANNOTATION, source_id);
                set_replicas(&mut rc, 0);
                rc.metadata.namespace = None; // the Api's namespace applies
                self.interrupt.check()?;
                (self.rcs.create(&PostParams::default(), &rc).await?, false)
            }
        };
        // The old RC's identity is the part of the source id before the ':'.
        let old_name = source_id
            .rsplit_once(':')
            .map(|(n, _)| n)
            .unwrap_or(source_id);
        self.interrupt.check()?;
        let old = self.rcs.get(old_name).await?;
        self.watch(&old, &target).await?;
        Ok((target, existed))
    }

    async fn record_original_replicas(
        &mut self,
        old_rc: &ReplicationController,
    ) -> anyhow::Result<ReplicationController> {
        self.interrupt.check()?;
        let fresh = self.rcs.get(name(old_rc)).await?;
        update_rc_with_retries(&self.rcs, &self.interrupt, &fresh, |rc| {
            let n = replicas(rc);
            set_annotation(rc, ORIGINAL_REPLICAS_ANNOTATION, n.to_string());
        })
        .await
    }

    async fn scale_and_wait(
        &mut self,
        rc: &ReplicationController,
        to: i32,
        timeout: Duration,
    ) -> anyhow::Result<ReplicationController> {
        let rc_name = name(rc).to_string();
        self.interrupt.check()?;
        // A merge patch of the scale subresource cannot conflict, so the 1.17
        // GET-modify-PUT with conflict retries collapses into one request.
        let patch = serde_json::json!({ "spec": { "replicas": to } });
        self.rcs
            .patch_scale(&rc_name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .with_context(|| format!("scaling replicationcontroller {rc_name:?}"))?;
        // 1.17 waited for the RC's status to report the new count. The pods
        // themselves show it earlier (the controller's status write comes after
        // it created or deleted them), so either is enough once the store shows
        // our new spec.
        let synced = |rc: &ReplicationController, active: Option<i32>| {
            let status = rc.status.as_ref();
            let status_synced = status.is_some_and(|s| s.replicas == to)
                && status.and_then(|s| s.observed_generation).unwrap_or(0)
                    >= rc.metadata.generation.unwrap_or(0);
            replicas(rc) == to && (status_synced || active == Some(to))
        };
        self.wait_rc(&rc_name, timeout, synced).await.map_err(|e| {
            Self::wait_failed(e, format!("timed out waiting for {rc_name:?} to be synced"))
        })
    }

    async fn ready_pods(
        &mut self,
        old_rc: &ReplicationController,
        new_rc: &ReplicationController,
        min_ready_seconds: i32,
    ) -> anyhow::Result<(i32, i32)> {
        self.min_ready_seconds = min_ready_seconds;
        let observer = self.observer()?;
        observer.pod_changes.borrow_and_update();
        // wait_for_change wakes on RC events through a clone of this receiver, which
        // inherits what this one has seen: unmarked, one RC event made every later
        // wait return at once, a busy loop for as long as the update waited.
        observer.rc_changes.borrow_and_update();
        let now = k8s_openapi::jiff::Timestamp::now();
        let count = |store: &kube::runtime::reflector::Store<Pod>| {
            store
                .state()
                .iter()
                .filter(|p| pod_available(p, min_ready_seconds, now))
                .count() as i32
        };
        // Pods are counted per selector; the selectors are disjoint by construction.
        let _ = (old_rc, new_rc);
        Ok((
            count(&observer.old_pods.store),
            count(&observer.new_pods.store),
        ))
    }

    async fn wait_for_change(&mut self, until: Instant) -> anyhow::Result<()> {
        let stall_wake = self.stall_wake();
        let interrupt = self.interrupt.clone();
        let poll_wake = Instant::now() + self.poll();
        let mut wake = until.min(poll_wake);
        let min_ready_seconds = self.min_ready_seconds;
        let observer = self.observer()?;
        // With --min-ready-seconds a pod becomes available without any event:
        // wake up when the first Ready pod crosses that threshold.
        let now = k8s_openapi::jiff::Timestamp::now();
        if let Some(at) =
            next_available_at(&observer.new_pods.store.state(), min_ready_seconds, now)
        {
            let delay = now.duration_until(at).unsigned_abs();
            wake = wake.min(Instant::now() + delay + Duration::from_millis(10));
        }
        let mut rc_changes = observer.rc_changes.clone();
        let quiet = tokio::select! {
            _ = observer.pod_changes.changed() => false,
            // An RC event may carry a fatal watch error (see Observer::fatal).
            _ = rc_changes.changed() => false,
            _ = tokio::time::sleep_until(wake) => wake == poll_wake,
            () = sleep_until_some(stall_wake) => false,
            i = interrupt.fired() => return Err(i.into()),
        };
        if quiet {
            self.relist().await?;
        }
        self.observer()?;
        self.check_stall().await
    }

    async fn sleep_until(&mut self, until: Instant) -> anyhow::Result<()> {
        Ok(self.interrupt.sleep_until(until).await?)
    }

    async fn cleanup(
        &mut self,
        old_rc: &ReplicationController,
        new_rc: &ReplicationController,
        config: &UpdaterConfig,
        report: &mut dyn Report,
    ) -> anyhow::Result<()> {
        let new_name = name(new_rc).to_string();
        let old_name = name(old_rc).to_string();
        let settled = |rc: &ReplicationController, _active: Option<i32>| {
            let status = rc.status.as_ref();
            status.and_then(|s| s.observed_generation).unwrap_or(0)
                >= rc.metadata.generation.unwrap_or(0)
                && status.is_some_and(|s| s.replicas == replicas(rc))
        };
        let timed_out = || "timed out waiting for the condition".to_string();
        if config.cleanup_policy == CleanupPolicy::Rename {
            // Unlike 1.17, the update annotations stay on the new RC until the
            // hand-over is done: if we are stopped in between, a re-run finds it
            // through update-source-id (or the pending copy) and finishes it.
            self.wait_rc(&new_name, config.timeout, settled)
                .await
                .map_err(|e| Self::wait_failed(e, timed_out()))?;
            self.interrupt.check()?;
            let fresh = self.rcs.get(&new_name).await?;
            report.line(&format!(
                "Update succeeded. Deleting old controller: {old_name}"
            ));
            self.interrupt.check()?;
            match self.rcs.delete(&old_name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(e.into()),
            }
            self.observer = None; // the old RC is going, and the new one's name too
            // 1.17 raced the old RC's finalizers here; wait for the name to be free.
            let deadline = Instant::now() + config.timeout;
            handover::wait_gone(self, &old_name, deadline).await?;
            report.line(&format!("Renaming {new_name} to {old_name}"));
            handover::hand_over(self, &fresh, &old_name, config.timeout).await?;
            return Ok(());
        }

        // 1.17 stripped the annotations first; then a stop before the delete left
        // an RC that a re-run refused ("Missing/unexpected annotations"). Deleting
        // first leaves the annotations that let a re-run recognise and finish it.
        self.wait_rc(&new_name, config.timeout, settled)
            .await
            .map_err(|e| Self::wait_failed(e, timed_out()))?;
        report.line(&format!("Update succeeded. Deleting {old_name}"));
        self.interrupt.check()?;
        match self.rcs.delete(&old_name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(e.into()),
        }
        self.observer = None;
        self.interrupt.check()?;
        let fresh = self.rcs.get(&new_name).await?;
        strip_update_annotations(&self.rcs, &self.interrupt, &fresh).await?;
        Ok(())
    }
}

/// The hand-over's requests on a real cluster (`handover`'s seam).
impl HandoverOps for KubeOps {
    fn check_interrupt(&self) -> anyhow::Result<()> {
        Ok(self.interrupt.check()?)
    }

    fn is_transient(&self, err: &kube::Error) -> bool {
        is_transient(err)
    }

    async fn create_rc(
        &mut self,
        rc: &ReplicationController,
    ) -> Result<ReplicationController, kube::Error> {
        self.rcs.create(&PostParams::default(), rc).await
    }

    async fn find_rc(&mut self, name: &str) -> Result<Option<ReplicationController>, kube::Error> {
        self.rcs.get_opt(name).await
    }

    async fn orphan_delete_rc(&mut self, name: &str) -> Result<(), kube::Error> {
        self.rcs
            .delete(name, &DeleteParams::orphan())
            .await
            .map(drop)
    }

    async fn wait_rc_gone(&mut self, name: &str, deadline: Instant) -> anyhow::Result<()> {
        handover::wait_gone(self, name, deadline).await
    }

    async fn update_rc(
        &mut self,
        rc: &ReplicationController,
        mutate: &(dyn Fn(&mut ReplicationController) + Sync),
    ) -> anyhow::Result<ReplicationController> {
        update_rc_with_retries(&self.rcs, &self.interrupt, rc, mutate).await
    }

    async fn pause_until(&mut self, until: Instant) -> anyhow::Result<()> {
        Ok(self.interrupt.sleep_until(until).await?)
    }
}

/// The steps before the update, on a real cluster: the same API objects, interrupt
/// and bounds as the updater's operations.
impl PrepareOps for KubeOps {
    async fn get_rc(&mut self, name: &str) -> Result<ReplicationController, kube::Error> {
        self.rcs.get(name).await
    }

    async fn get_rc_opt(&mut self, name: &str) -> anyhow::Result<Option<ReplicationController>> {
        Ok(self.rcs.get_opt(name).await?)
    }

    async fn list_rcs(&mut self) -> anyhow::Result<Vec<ReplicationController>> {
        Ok(self.rcs.list(&ListParams::default()).await?.items)
    }

    async fn strip_update_annotations(
        &mut self,
        rc: &ReplicationController,
    ) -> anyhow::Result<ReplicationController> {
        strip_update_annotations(&self.rcs, &self.interrupt, rc).await
    }

    async fn scale_rc(&mut self, name: &str, replicas: i32) -> anyhow::Result<()> {
        let patch = serde_json::json!({ "spec": { "replicas": replicas } });
        self.rcs
            .patch_scale(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(())
    }

    async fn list_pods(&mut self, selector: &str) -> anyhow::Result<Vec<Pod>> {
        Ok(self
            .pods
            .list(&ListParams::default().labels(selector))
            .await?
            .items)
    }

    async fn update_pod(
        &mut self,
        pod: &Pod,
        mutate: &(dyn Fn(&mut Pod) + Sync),
    ) -> anyhow::Result<Pod> {
        update_pod_with_retries(&self.pods, &self.interrupt, pod, mutate).await
    }

    async fn delete_pod(&mut self, name: &str) -> anyhow::Result<()> {
        match self.pods.delete(name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    async fn create_rc_dry_run(
        &mut self,
        rc: &ReplicationController,
    ) -> anyhow::Result<ReplicationController> {
        let params = PostParams {
            dry_run: true,
            ..Default::default()
        };
        Ok(self.rcs.create(&params, rc).await?)
    }
}

/// Sleeps until `at`, or forever without it.
async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Go's `%s` of a `map[string]string` (`map[k1:v1 k2:v2]`, keys sorted), as 1.17's
/// messages print annotations: the shared printers' Go formatting of the same map.
fn go_map(map: Option<&std::collections::BTreeMap<String, String>>) -> String {
    let object = map
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
        .collect();
    gotext::go_fmt::plain_v(&serde_json::Value::Object(object))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn go_maps() {
        assert_eq!(go_map(None), "map[]");
        let m = BTreeMap::from([
            ("b".to_string(), "2".to_string()),
            ("a".to_string(), "x:1".to_string()),
        ]);
        assert_eq!(go_map(Some(&m)), "map[a:x:1 b:2]");
    }
}
