//! The updater's cluster operations on a real API server, with kube.
//!
//! Waiting is watch-driven: watchers on the two RCs (by name) and on the pods of
//! each RC's selector keep local stores up to date, and every wait is "until the
//! store satisfies the condition", woken by the next watch event. Decisions read
//! those stores instead of listing again, so a step costs one PATCH of the scale
//! subresource plus the watch traffic, and the cleanup waits for the RCs it deletes
//! to go through the same watches. Requests whose answers nothing waits for go out
//! together (the create, the watches and `original-replicas`; the pods' labels).
//! README's "Round trips" counts what is left.
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
pub use writes::{
    patch_rc, record_original_replicas, strip_update_annotations, update_pod_with_retries,
};

use std::time::Duration;

use crate::model::{Pod, ReplicationController};
use anyhow::{Context, anyhow, bail};
use futures::StreamExt;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use tokio::time::Instant;

use errors::is_not_found;
use watch::{Observer, next_available_at, pod_available};

use crate::controller::{name, replicas, set_replicas};
use crate::handover::{self, HandoverOps};
use crate::names::{DESIRED_REPLICAS_ANNOTATION, SOURCE_ID_ANNOTATION, set_annotation};
use crate::prepare::PrepareOps;
use crate::updater::{Begun, CleanupPolicy, Report, Target, UpdaterConfig, UpdaterOps};
use cli::interrupt::Interrupt;

/// Pods relabelled at once when the old RC gets the deployment key. Each request in
/// flight is a connection of its own (HTTP/1.1); a bound keeps a large RC from opening
/// hundreds.
const PARALLEL_POD_WRITES: usize = 16;

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
    /// Why a stalled wait waits; none in a dry run.
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
        self.watch_ready(observer, old, new).await
    }

    /// Waits until the watches of `observer` have listed, then keeps them.
    async fn watch_ready(
        &mut self,
        observer: Observer,
        old: &ReplicationController,
        new: &ReplicationController,
    ) -> anyhow::Result<()> {
        tokio::select! {
            r = observer.ready(self.timeout) => r?,
            i = self.interrupt.fired() => return Err(i.into()),
        }
        self.observer = Some(observer);
        self.watched = Some((old.clone(), new.clone()));
        Ok(())
    }

    /// Waits until no RC named `rc_name` exists. When the update's watches follow that
    /// name, their store tells, woken by the watch event of its removal; otherwise (a
    /// re-run finishing an earlier update, or watches that failed) it is polled. A
    /// watch that stays quiet for the poll interval is checked with one GET.
    async fn wait_gone(&mut self, rc_name: &str, deadline: Instant) -> anyhow::Result<()> {
        let interrupt = self.interrupt.clone();
        let poll = self.poll();
        loop {
            let Some(observer) = self
                .observer
                .as_ref()
                .filter(|o| o.fatal().is_ok() && o.follows(rc_name))
            else {
                return handover::wait_gone(self, rc_name, deadline).await;
            };
            let mut rc_changes = observer.rc_changes.clone();
            rc_changes.borrow_and_update();
            if observer.rc(rc_name).is_none() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "timed out waiting for replicationcontroller {rc_name:?} to be deleted (the garbage collector removes it)"
                );
            }
            let quiet = tokio::select! {
                _ = rc_changes.changed() => false,
                _ = tokio::time::sleep_until(deadline.min(Instant::now() + poll)) => true,
                i = interrupt.fired() => return Err(i.into()),
            };
            if quiet {
                self.interrupt.check()?;
                match self.rcs.get_opt(rc_name).await {
                    Ok(None) => return Ok(()),
                    Ok(Some(_)) => {}
                    Err(e) if is_transient(&e) => {
                        tracing::debug!("waiting for {rc_name} to be deleted: {e}");
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }

    /// Deletes the RC `rc_name` as 1.17 did (the server's default for a v1 RC: its
    /// dependents are orphaned), one already gone being fine. Returns whether it is
    /// still there, being deleted (the garbage collector removes it shortly).
    async fn delete_rc(&mut self, rc_name: &str) -> anyhow::Result<bool> {
        self.interrupt.check()?;
        match self.rcs.delete(rc_name, &DeleteParams::default()).await {
            Ok(either) => Ok(either.is_left()),
            Err(e) if is_not_found(&e) => Ok(false),
            Err(e) => Err(e.into()),
        }
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
        let found = self
            .wait_rc_or_gone(rc_name, timeout, |rc, active| {
                rc.is_some_and(|rc| cond(rc, active))
            })
            .await?;
        // The condition only holds for an RC that is there.
        found.ok_or(WaitError::TimedOut)
    }

    /// [`Self::wait_rc`] for a condition that may also hold when the RC is not (or
    /// no longer) there: `cond` gets `None` then, and so does the caller.
    async fn wait_rc_or_gone(
        &mut self,
        rc_name: &str,
        timeout: Duration,
        cond: impl Fn(Option<&ReplicationController>, Option<i32>) -> bool,
    ) -> Result<Option<ReplicationController>, WaitError> {
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
            let rc = observer.rc(rc_name);
            if cond(rc.as_ref(), observer.active_pods(rc_name)) {
                return Ok(rc);
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
    async fn begin(
        &mut self,
        old_rc: &ReplicationController,
        new_rc: &ReplicationController,
        known: Target,
        source_id: &str,
        record_original: bool,
    ) -> anyhow::Result<Begun> {
        self.interrupt.check()?;
        // The watch on the target follows its name, so it may start before the
        // create lands: the create's event arrives on it. The old RC is the one the
        // steps before read (or wrote): the target's source id names it.
        let observer = Observer::start(&self.rcs, &self.pods, old_rc, new_rc, self.watch_timeout);
        let target = find_or_create_target(&self.rcs, &self.interrupt, new_rc, known, source_id);
        let recorded = async {
            if record_original {
                record_original_replicas(&self.rcs, &self.interrupt, old_rc).await
            } else {
                Ok(old_rc.clone())
            }
        };
        let watching = async {
            tokio::select! {
                r = observer.ready(self.timeout) => r,
                i = self.interrupt.fired() => Err(i.into()),
            }
        };
        // Joined, not raced: a Ctrl-C ends the wait for the watches at once, but the
        // writes already sent are answered first (the update stops between requests).
        let (target, recorded, watching) = tokio::join!(target, recorded, watching);
        let ((target, existed), old_rc) = (target?, recorded?);
        watching?;
        self.observer = Some(observer);
        self.watched = Some((old_rc.clone(), target.clone()));
        Ok(Begun {
            target,
            existed,
            old_rc,
        })
    }

    async fn record_original_replicas(
        &mut self,
        old_rc: &ReplicationController,
    ) -> anyhow::Result<ReplicationController> {
        record_original_replicas(&self.rcs, &self.interrupt, old_rc).await
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

    async fn wait_synced(
        &mut self,
        rc: &ReplicationController,
        timeout: Duration,
    ) -> anyhow::Result<ReplicationController> {
        let rc_name = name(rc).to_string();
        // The RC manager's own word, not the pods the watch sees: right after a
        // selector change they match before it has sorted them out. Fewer pods than
        // asked for (a quota, a pod still being created) are no surplus: no wait.
        let synced = |rc: &ReplicationController, _active: Option<i32>| {
            let status = rc.status.as_ref();
            status.is_some_and(|s| s.replicas <= replicas(rc))
                && status.and_then(|s| s.observed_generation).unwrap_or(0)
                    >= rc.metadata.generation.unwrap_or(0)
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
        let interrupt = self.interrupt.clone();
        // A clone inherits what ready_pods last marked as seen: a pod event since
        // then ends the sleep at once.
        let mut pod_changes = self.observer()?.pod_changes.clone();
        tokio::select! {
            changed = pod_changes.changed() => {
                if changed.is_err() {
                    // The pod watches are gone (a fatal error, reported by the
                    // next step): nothing will wake us, sleep the whole pause.
                    interrupt.sleep_until(until).await?;
                }
            }
            slept = interrupt.sleep_until(until) => slept?,
        }
        Ok(())
    }

    async fn cleanup(
        &mut self,
        old_rc: &ReplicationController,
        new_rc: &ReplicationController,
        config: &UpdaterConfig,
        report: &mut dyn Report,
    ) -> anyhow::Result<ReplicationController> {
        let new_name = name(new_rc).to_string();
        let old_name = name(old_rc).to_string();
        let settled = |rc: &ReplicationController, _active: Option<i32>| {
            let status = rc.status.as_ref();
            status.and_then(|s| s.observed_generation).unwrap_or(0)
                >= rc.metadata.generation.unwrap_or(0)
                && status.is_some_and(|s| s.replicas == replicas(rc))
        };
        let timed_out = || "timed out waiting for the condition".to_string();
        // 1.17 waited for the RC manager to observe the last scaling before cleaning up.
        let settled = self
            .wait_rc(&new_name, config.timeout, settled)
            .await
            .map_err(|e| Self::wait_failed(e, timed_out()))?;
        // Deleting a v1 ReplicationController orphans its pods (the server's default
        // for that version), so a pod the RC manager has not yet removed would be
        // left running with no controller. 1.17 waited for the scale-down to 0 as a
        // step of its own; a re-run that finds the old RC already at 0 (stopped
        // right after that write) skips the step, so wait here, as that step did,
        // for the RC manager to have observed it and to count no pod of its own
        // (it counts those it has not yet deleted). The pods' own watch is not
        // asked: its selector is the old RC's, which is the RC manager's business.
        let drained = |rc: Option<&ReplicationController>, _active: Option<i32>| {
            rc.is_none_or(|rc| {
                let status = rc.status.as_ref();
                status.and_then(|s| s.observed_generation).unwrap_or(0)
                    >= rc.metadata.generation.unwrap_or(0)
                    && status.is_some_and(|s| s.replicas == 0)
            })
        };
        self.wait_rc_or_gone(&old_name, config.timeout, drained)
            .await
            .map_err(|e| Self::wait_failed(e, timed_out()))?;
        if config.cleanup_policy == CleanupPolicy::Rename {
            // Unlike 1.17, the update annotations stay on the new RC until the
            // hand-over is done: if we are stopped in between, a re-run finds it
            // through update-source-id (or the pending copy) and finishes it.
            report.line(&format!(
                "Update succeeded. Deleting old controller: {old_name}"
            ));
            let deleting = self.delete_rc(&old_name).await?;
            // 1.17 raced the old RC's finalizers here; wait for the name to be free.
            // The watches stay until the hand-over is done: they see both RCs go.
            let deadline = Instant::now() + config.timeout;
            if deleting {
                self.wait_gone(&old_name, deadline).await?;
            }
            report.line(&format!("Renaming {new_name} to {old_name}"));
            let done = handover::hand_over(self, &settled, &old_name, config.timeout).await;
            self.observer = None;
            return done;
        }

        // 1.17 stripped the annotations first; then a stop before the delete left
        // an RC that a re-run refused ("Missing/unexpected annotations"). Deleting
        // first leaves the annotations that let a re-run recognise and finish it.
        report.line(&format!("Update succeeded. Deleting {old_name}"));
        self.delete_rc(&old_name).await?;
        self.observer = None;
        strip_update_annotations(&self.rcs, &self.interrupt, &settled).await
    }
}

/// The target of [`UpdaterOps::begin`]: created, or found from an interrupted update
/// and checked as 1.17 checked it. What `known` says is not asked again: an RC the
/// steps before found is checked as they read it; one derived for `--image` (whose
/// name they looked up, or which the old RC did not name) is created at once, and
/// read only when the create finds it there; one from `-f` is looked up first, so
/// that resuming it sends no create (whose Pod Security warnings would be printed
/// again). An RC asking for no replicas is always looked up first, since only a new
/// one is refused for it.
async fn find_or_create_target(
    rcs: &Api<ReplicationController>,
    interrupt: &Interrupt,
    new_rc: &ReplicationController,
    known: Target,
    source_id: &str,
) -> anyhow::Result<(ReplicationController, bool)> {
    let desired = replicas(new_rc);
    let rc_name = new_rc.metadata.name.clone().unwrap_or_default();
    let mut create = new_rc.clone();
    set_annotation(
        &mut create,
        DESIRED_REPLICAS_ANNOTATION,
        desired.to_string(),
    );
    set_annotation(&mut create, SOURCE_ID_ANNOTATION, source_id);
    set_replicas(&mut create, 0);
    create.metadata.namespace = None; // the Api's namespace applies
    let existing = match known {
        Target::Found => Some(new_rc.clone()),
        Target::Derived if desired > 0 => {
            interrupt.check()?;
            match rcs.create(&PostParams::default(), &create).await {
                Ok(rc) => return Ok((rc, false)),
                Err(kube::Error::Api(s)) if s.is_already_exists() && !rc_name.is_empty() => {
                    interrupt.check()?;
                    rcs.get_opt(&rc_name).await?
                }
                Err(e) => return Err(e.into()),
            }
        }
        _ if rc_name.is_empty() => None,
        _ => {
            interrupt.check()?;
            rcs.get_opt(&rc_name).await?
        }
    };
    let Some(rc) = existing else {
        if desired <= 0 {
            bail!(
                "Invalid controller spec for {}; required: > 0 replicas, actual: {desired}",
                name(new_rc)
            );
        }
        interrupt.check()?;
        return Ok((rcs.create(&PostParams::default(), &create).await?, false));
    };
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
    Ok((rc, true))
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
        self.wait_gone(name, deadline).await
    }

    async fn patch_rc(
        &mut self,
        rc: &ReplicationController,
        mutate: &(dyn Fn(&mut ReplicationController) + Sync),
    ) -> anyhow::Result<ReplicationController> {
        patch_rc(&self.rcs, &self.interrupt, rc, mutate).await
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

    async fn update_pods(
        &mut self,
        pods: &[Pod],
        mutate: &(dyn Fn(&mut Pod) + Sync),
    ) -> Vec<anyhow::Result<Pod>> {
        let (api, interrupt) = (&self.pods, &self.interrupt);
        futures::stream::iter(pods)
            .map(|pod| async move { update_pod_with_retries(api, interrupt, pod, mutate).await })
            .buffered(PARALLEL_POD_WRITES)
            .collect()
            .await
    }

    async fn delete_pod(&mut self, name: &str) -> anyhow::Result<()> {
        match self.pods.delete(name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    async fn wait_rc_change(
        &mut self,
        rc: &ReplicationController,
        cond: &(dyn Fn(&ReplicationController) -> bool + Sync),
        deadline: Instant,
    ) -> anyhow::Result<ReplicationController> {
        // A write that changed nothing (a re-run's) answers the current state, which
        // no event will repeat.
        if cond(rc) {
            return Ok(rc.clone());
        }
        let rc_name = name(rc).to_string();
        let mut version = rc.metadata.resource_version.clone().unwrap_or_default();
        let interrupt = self.interrupt.clone();
        let timed_out = || anyhow!("timed out waiting for replicationcontroller {rc_name:?}");
        // One watch from the write's answer: every later change is an event (a
        // request, not a poll). It is started again, from the last event, when the
        // server ends it; a version the server no longer has (410) is read anew.
        loop {
            let left = deadline.saturating_duration_since(Instant::now()).as_secs();
            if left == 0 {
                return Err(timed_out());
            }
            let params = WatchParams::default()
                .fields(&format!("metadata.name={rc_name}"))
                .timeout(
                    self.watch_timeout
                        .min(u32::try_from(left).unwrap_or(u32::MAX)),
                );
            self.interrupt.check()?;
            let stream = match self.rcs.watch(&params, &version).await {
                Ok(stream) => stream,
                Err(e) if is_transient(&e) => {
                    tracing::debug!("watching {rc_name}, retrying: {e}");
                    self.interrupt
                        .sleep_until(deadline.min(Instant::now() + Duration::from_millis(200)))
                        .await?;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let mut stream = std::pin::pin!(stream);
            let poll = self.poll();
            loop {
                // A watch that answered and then went silent (a stalled proxy or
                // server) must not hold the wait: after `--poll-interval` with no
                // event, the RC is read again, as every other wait re-lists.
                let event = tokio::select! {
                    event = stream.next() => event,
                    () = tokio::time::sleep(poll) => {
                        self.interrupt.check()?;
                        let current = self.rcs.get(&rc_name).await?;
                        if cond(&current) {
                            return Ok(current);
                        }
                        version = current.metadata.resource_version.clone().unwrap_or_default();
                        break;
                    }
                    () = tokio::time::sleep_until(deadline) => return Err(timed_out()),
                    i = interrupt.fired() => return Err(i.into()),
                };
                match event {
                    Some(Ok(WatchEvent::Added(o) | WatchEvent::Modified(o))) => {
                        if cond(&o) {
                            return Ok(o);
                        }
                        version = o.metadata.resource_version.clone().unwrap_or_default();
                    }
                    Some(Ok(WatchEvent::Deleted(_))) => {
                        bail!("replicationcontroller {rc_name:?} was deleted")
                    }
                    Some(Ok(WatchEvent::Bookmark(b))) => version = b.metadata.resource_version,
                    Some(Ok(WatchEvent::Error(e))) if e.code == 410 => {
                        self.interrupt.check()?;
                        let current = self.rcs.get(&rc_name).await?;
                        if cond(&current) {
                            return Ok(current);
                        }
                        version = current
                            .metadata
                            .resource_version
                            .clone()
                            .unwrap_or_default();
                        break;
                    }
                    Some(Ok(WatchEvent::Error(e))) => {
                        return Err(kube::Error::Api(e).into());
                    }
                    Some(Err(e)) if is_transient(&e) => {
                        tracing::debug!("watch of {rc_name} ended, again: {e}");
                        break;
                    }
                    Some(Err(e)) => return Err(e.into()),
                    None => break,
                }
            }
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
