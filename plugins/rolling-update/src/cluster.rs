//! The updater's cluster operations on a real API server, with kube.
//!
//! Waiting is watch-driven: watchers on the two RCs (by name) and on the pods of
//! each RC's selector keep local stores up to date, and every wait is "until the
//! store satisfies the condition", woken by the next watch event. Decisions read
//! those stores instead of listing again, so a step costs one PATCH of the scale
//! subresource plus the watch traffic.
//!
//! Every request is preceded by an interrupt check; waits race the interrupt.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Pod, ReplicationController};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::controller::{name, replicas, selector_string, set_replicas};
use crate::interrupt::Interrupt;
use crate::names::{
    DESIRED_REPLICAS_ANNOTATION, ORIGINAL_REPLICAS_ANNOTATION, SOURCE_ID_ANNOTATION, set_annotation,
};
use crate::updater::{CleanupPolicy, Report, UpdaterConfig, UpdaterOps};

/// How many times a conflicting write is retried (client-go's `DefaultBackoff`:
/// 4 attempts, 10 ms growing ×5).
const CONFLICT_ATTEMPTS: u32 = 4;

fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.is_conflict())
}

fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.is_not_found())
}

/// kubectl's `updateRcWithRetries`: apply `mutate` to `rc` and PUT it; on a 409
/// fetch the latest version and try again.
pub async fn update_rc_with_retries(
    api: &Api<ReplicationController>,
    interrupt: &Interrupt,
    rc: &ReplicationController,
    mutate: impl Fn(&mut ReplicationController),
) -> anyhow::Result<ReplicationController> {
    let name = name(rc).to_string();
    let mut current = rc.clone();
    let mut delay = Duration::from_millis(10);
    for attempt in 1..=CONFLICT_ATTEMPTS {
        interrupt.check()?;
        let mut desired = current.clone();
        mutate(&mut desired);
        match api.replace(&name, &PostParams::default(), &desired).await {
            Ok(updated) => return Ok(updated),
            Err(e) if is_conflict(&e) && attempt < CONFLICT_ATTEMPTS => {
                tracing::debug!("conflict updating {name}, retrying with a fresh copy");
                tokio::time::sleep(delay).await;
                delay *= 5;
                interrupt.check()?;
                current = api.get(&name).await?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(anyhow!(
        "too many conflicts updating replicationcontroller {name:?}"
    ))
}

/// The same for a pod's labels (used when the old RC gets the deployment key).
pub async fn update_pod_with_retries(
    api: &Api<Pod>,
    interrupt: &Interrupt,
    pod: &Pod,
    mutate: impl Fn(&mut Pod),
) -> anyhow::Result<Pod> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let mut current = pod.clone();
    let mut delay = Duration::from_millis(10);
    for attempt in 1..=CONFLICT_ATTEMPTS {
        interrupt.check()?;
        let mut desired = current.clone();
        mutate(&mut desired);
        match api.replace(&name, &PostParams::default(), &desired).await {
            Ok(updated) => return Ok(updated),
            Err(e) if is_conflict(&e) && attempt < CONFLICT_ATTEMPTS => {
                tokio::time::sleep(delay).await;
                delay *= 5;
                interrupt.check()?;
                current = api.get(&name).await?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(anyhow!("too many conflicts updating pod {name:?}"))
}

/// Removes `update-source-id` and `desired-replicas`: the update is over.
pub async fn strip_update_annotations(
    api: &Api<ReplicationController>,
    interrupt: &Interrupt,
    rc: &ReplicationController,
) -> anyhow::Result<ReplicationController> {
    update_rc_with_retries(api, interrupt, rc, |rc| {
        if let Some(a) = rc.metadata.annotations.as_mut() {
            a.remove(SOURCE_ID_ANNOTATION);
            a.remove(DESIRED_REPLICAS_ANNOTATION);
        }
    })
    .await
}

/// Go's `%s` of a `map[string]string`: `map[k1:v1 k2:v2]`, keys sorted.
pub fn go_map(map: Option<&BTreeMap<String, String>>) -> String {
    let body = map
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}:{v}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    format!("map[{body}]")
}

/// A store kept current by a watcher task, plus the task.
struct Watched<K: kube::Resource + 'static>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    store: Store<K>,
    task: JoinHandle<()>,
}

impl<K: kube::Resource + 'static> Drop for Watched<K>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn watch_into_store<K>(
    api: Api<K>,
    config: watcher::Config,
    changed: Arc<watch::Sender<u64>>,
) -> Watched<K>
where
    K: kube::Resource
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Default,
{
    let (store, writer) = reflector::store();
    let stream = reflector::reflector(writer, watcher(api, config).default_backoff());
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            match event {
                Ok(_) => changed.send_modify(|n| *n = n.wrapping_add(1)),
                Err(e) => tracing::debug!("watch error (retrying): {e}"),
            }
        }
    });
    Watched { store, task }
}

/// Watches over the two RCs of an update and their pods.
struct Observer {
    old_rc: Watched<ReplicationController>,
    new_rc: Watched<ReplicationController>,
    old_pods: Watched<Pod>,
    new_pods: Watched<Pod>,
    old_name: String,
    new_name: String,
    rc_changes: watch::Receiver<u64>,
    pod_changes: watch::Receiver<u64>,
}

impl Observer {
    fn start(
        rcs: &Api<ReplicationController>,
        pods: &Api<Pod>,
        old_rc: &ReplicationController,
        new_rc: &ReplicationController,
    ) -> Self {
        let (rc_tx, rc_changes) = watch::channel(0u64);
        let (pod_tx, pod_changes) = watch::channel(0u64);
        let (rc_tx, pod_tx) = (Arc::new(rc_tx), Arc::new(pod_tx));
        let by_name = |rc: &ReplicationController| {
            watcher::Config::default().fields(&format!("metadata.name={}", name(rc)))
        };
        let by_selector =
            |rc: &ReplicationController| watcher::Config::default().labels(&selector_string(rc));
        Observer {
            old_rc: watch_into_store(rcs.clone(), by_name(old_rc), rc_tx.clone()),
            new_rc: watch_into_store(rcs.clone(), by_name(new_rc), rc_tx),
            old_pods: watch_into_store(pods.clone(), by_selector(old_rc), pod_tx.clone()),
            new_pods: watch_into_store(pods.clone(), by_selector(new_rc), pod_tx),
            old_name: name(old_rc).to_string(),
            new_name: name(new_rc).to_string(),
            rc_changes,
            pod_changes,
        }
    }

    async fn ready(&self, timeout: Duration) -> anyhow::Result<()> {
        let all = async {
            self.old_rc.store.wait_until_ready().await?;
            self.new_rc.store.wait_until_ready().await?;
            self.old_pods.store.wait_until_ready().await?;
            self.new_pods.store.wait_until_ready().await
        };
        tokio::time::timeout(timeout, all)
            .await
            .map_err(|_| anyhow!("timed out waiting for the watches on the replication controllers and their pods"))?
            .map_err(|e| anyhow!("watch ended: {e}"))
    }

    /// Active pods (not being deleted) of the old or new RC, by name.
    fn active_pods(&self, rc_name: &str) -> Option<i32> {
        let store = if self.old_name == rc_name {
            &self.old_pods.store
        } else if self.new_name == rc_name {
            &self.new_pods.store
        } else {
            return None;
        };
        let active = store
            .state()
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .count();
        Some(active as i32)
    }

    fn rc(&self, rc_name: &str) -> Option<ReplicationController> {
        [&self.old_rc.store, &self.new_rc.store]
            .iter()
            .flat_map(|s| s.state())
            .find(|rc| name(rc) == rc_name)
            .map(|rc| (*rc).clone())
    }
}

/// Whether a pod counts as available (kubectl's `podutils.IsPodAvailable`, and not
/// being deleted).
pub fn pod_available(pod: &Pod, min_ready_seconds: i32, now: k8s_openapi::jiff::Timestamp) -> bool {
    if pod.metadata.deletion_timestamp.is_some() {
        return false;
    }
    let Some(ready) = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
    else {
        return false;
    };
    if ready.status != "True" {
        return false;
    }
    if min_ready_seconds <= 0 {
        return true;
    }
    let Some(since) = &ready.last_transition_time else {
        return false;
    };
    let needed = k8s_openapi::jiff::SignedDuration::from_secs(i64::from(min_ready_seconds));
    since.0.checked_add(needed).is_ok_and(|t| t < now)
}

/// The earliest time after `now` at which a Ready pod that is not yet available
/// (because of `min_ready_seconds`) becomes available.
pub fn next_available_at(
    pods: &[Arc<Pod>],
    min_ready_seconds: i32,
    now: k8s_openapi::jiff::Timestamp,
) -> Option<k8s_openapi::jiff::Timestamp> {
    if min_ready_seconds <= 0 {
        return None;
    }
    let needed = k8s_openapi::jiff::SignedDuration::from_secs(i64::from(min_ready_seconds));
    pods.iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| {
            let ready = p
                .status
                .as_ref()?
                .conditions
                .as_ref()?
                .iter()
                .find(|c| c.type_ == "Ready" && c.status == "True")?;
            ready
                .last_transition_time
                .as_ref()?
                .0
                .checked_add(needed)
                .ok()
        })
        .filter(|at| *at > now)
        .min()
}

/// [`UpdaterOps`] on a real cluster.
pub struct KubeOps {
    pub rcs: Api<ReplicationController>,
    pub pods: Api<Pod>,
    pub interrupt: Interrupt,
    /// Upper bound between re-evaluations even without watch events (1.17's
    /// `--poll-interval`), a safety net should a watch silently stall.
    pub poll_interval: Duration,
    pub timeout: Duration,
    /// The threshold of the last readiness count, for [`next_available_at`].
    min_ready_seconds: i32,
    observer: Option<Observer>,
}

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
            min_ready_seconds: 0,
            observer: None,
        }
    }

    fn observer(&mut self) -> anyhow::Result<&mut Observer> {
        self.observer
            .as_mut()
            .ok_or_else(|| anyhow!("internal error: watches not started"))
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
        let poll = self.poll_interval;
        let observer = self.observer.as_mut().ok_or(WaitError::TimedOut)?;
        // Own receivers: waking on pod events here must not hide them from
        // wait_for_change, which tracks what ready_pods last saw.
        let mut rc_changes = observer.rc_changes.clone();
        let mut pod_changes = observer.pod_changes.clone();
        let deadline = Instant::now() + timeout;
        loop {
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
            let wake = deadline.min(Instant::now() + poll);
            tokio::select! {
                _ = rc_changes.changed() => {}
                _ = pod_changes.changed() => {}
                _ = tokio::time::sleep_until(wake) => {}
                i = interrupt.fired() => return Err(WaitError::Interrupted(i)),
            }
        }
    }

    /// Kubectl's `Rename`: orphan-delete `rc`, wait until its name is free, create
    /// it under `new_name` (its pods are adopted again through the selector). The
    /// created copy no longer carries the update annotations.
    pub async fn rename(
        &self,
        rc: &ReplicationController,
        new_name: &str,
    ) -> anyhow::Result<ReplicationController> {
        rename(&self.rcs, &self.interrupt, rc, new_name).await
    }
}

enum WaitError {
    TimedOut,
    Interrupted(crate::interrupt::Interrupted),
}

/// See [`KubeOps::rename`].
pub async fn rename(
    api: &Api<ReplicationController>,
    interrupt: &Interrupt,
    rc: &ReplicationController,
    new_name: &str,
) -> anyhow::Result<ReplicationController> {
    let old_name = name(rc).to_string();
    let mut renamed = rc.clone();
    renamed.metadata.name = Some(new_name.to_string());
    renamed.metadata.resource_version = None;
    renamed.metadata.uid = None;
    renamed.metadata.creation_timestamp = None;
    renamed.metadata.deletion_timestamp = None;
    renamed.metadata.deletion_grace_period_seconds = None;
    renamed.metadata.generation = None;
    renamed.metadata.managed_fields = None;
    renamed.metadata.finalizers = None;
    renamed.status = None;
    if let Some(a) = renamed.metadata.annotations.as_mut() {
        a.remove(SOURCE_ID_ANNOTATION);
        a.remove(DESIRED_REPLICAS_ANNOTATION);
    }
    interrupt.check()?;
    match api.delete(&old_name, &DeleteParams::orphan()).await {
        Ok(_) => {}
        Err(e) if is_not_found(&e) => {}
        Err(e) => return Err(e.into()),
    }
    // From here to the create, a signal is not obeyed: the orphaned pods have no
    // controller until the copy exists, and no annotation is left anywhere for a
    // re-run to find them by. The garbage collector needs a moment to release the
    // orphans; a Ctrl-C in that moment waits for the create (bounded by the
    // timeout) instead of stranding the pods.
    wait_gone(api, None, &old_name, Duration::from_secs(60)).await?;
    Ok(api.create(&PostParams::default(), &renamed).await?)
}

/// Waits (watch-driven) until no RC named `rc_name` exists; a signal ends the wait
/// unless `interrupt` is `None`.
pub async fn wait_gone(
    api: &Api<ReplicationController>,
    interrupt: Option<&Interrupt>,
    rc_name: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    let gone = kube::runtime::wait::await_condition(
        api.clone(),
        rc_name,
        |rc: Option<&ReplicationController>| rc.is_none(),
    );
    let interrupted = async {
        match interrupt {
            Some(interrupt) => interrupt.fired().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        r = tokio::time::timeout(timeout, gone) => match r {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(anyhow!(e).context(format!("waiting for replicationcontroller {rc_name:?} to be deleted"))),
            Err(_) => bail!("timed out waiting for the condition"),
        },
        i = interrupted => Err(i.into()),
    }
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
        let old = self.rcs.get(old_name).await?;
        let observer = Observer::start(&self.rcs, &self.pods, &old, &target);
        observer.ready(self.timeout).await?;
        self.observer = Some(observer);
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
        match self.wait_rc(&rc_name, timeout, synced).await {
            Ok(rc) => Ok(rc),
            Err(WaitError::TimedOut) => bail!("timed out waiting for {rc_name:?} to be synced"),
            Err(WaitError::Interrupted(i)) => Err(i.into()),
        }
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
        let now = k8s_openapi::jiff::Timestamp::now();
        let count = |store: &Store<Pod>| {
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
        let interrupt = self.interrupt.clone();
        let mut wake = until.min(Instant::now() + self.poll_interval);
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
        tokio::select! {
            _ = observer.pod_changes.changed() => Ok(()),
            _ = tokio::time::sleep_until(wake) => Ok(()),
            i = interrupt.fired() => Err(i.into()),
        }
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
        if config.cleanup_policy == CleanupPolicy::Rename {
            // Unlike 1.17, the update annotations stay on the new RC until the
            // renamed copy exists: if we are stopped in between, a re-run finds it
            // through update-source-id and finishes the rename.
            match self.wait_rc(&new_name, config.timeout, settled).await {
                Ok(_) => {}
                Err(WaitError::TimedOut) => bail!("timed out waiting for the condition"),
                Err(WaitError::Interrupted(i)) => return Err(i.into()),
            }
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
            // 1.17 raced the old RC's finalizers here; wait for the name to be free.
            wait_gone(&self.rcs, Some(&self.interrupt), &old_name, config.timeout).await?;
            report.line(&format!("Renaming {new_name} to {old_name}"));
            self.observer = None; // the renamed RC is a new object; stop watching
            self.rename(&fresh, &old_name).await?;
            return Ok(());
        }

        // 1.17 stripped the annotations first; then a stop before the delete left
        // an RC that a re-run refused ("Missing/unexpected annotations"). Deleting
        // first leaves the annotations that let a re-run recognise and finish it.
        match self.wait_rc(&new_name, config.timeout, settled).await {
            Ok(_) => {}
            Err(WaitError::TimedOut) => bail!("timed out waiting for the condition"),
            Err(WaitError::Interrupted(i)) => return Err(i.into()),
        }
        report.line(&format!("Update succeeded. Deleting {old_name}"));
        self.interrupt.check()?;
        match self.rcs.delete(&old_name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(e.into()),
        }
        let fresh = self.rcs.get(&new_name).await?;
        strip_update_annotations(&self.rcs, &self.interrupt, &fresh).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{PodCondition, PodStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::{SignedDuration, Timestamp};

    fn pod(ready: Option<(&str, Timestamp)>, deleting: bool) -> Pod {
        let mut p = Pod::default();
        if deleting {
            p.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
        }
        p.status = Some(PodStatus {
            conditions: ready.map(|(status, since)| {
                vec![PodCondition {
                    type_: "Ready".into(),
                    status: status.into(),
                    last_transition_time: Some(Time(since)),
                    ..Default::default()
                }]
            }),
            ..Default::default()
        });
        p
    }

    #[test]
    fn availability() {
        let now = Timestamp::UNIX_EPOCH + SignedDuration::from_secs(1000);
        let ten_ago = now - SignedDuration::from_secs(10);
        let table = [
            (pod(Some(("True", ten_ago)), false), 0, true),
            (pod(Some(("True", ten_ago)), true), 0, false),
            (pod(Some(("False", ten_ago)), false), 0, false),
            (pod(None, false), 0, false),
            (pod(Some(("True", ten_ago)), false), 5, true),
            (pod(Some(("True", ten_ago)), false), 10, false),
            (pod(Some(("True", ten_ago)), false), 11, false),
        ];
        for (i, (p, min_ready, want)) in table.into_iter().enumerate() {
            assert_eq!(pod_available(&p, min_ready, now), want, "row {i}");
        }
    }

    #[test]
    fn next_availability_with_min_ready_seconds() {
        let now = Timestamp::UNIX_EPOCH + SignedDuration::from_secs(1000);
        let ready_at = |secs_ago: i64| {
            Arc::new(pod(
                Some(("True", now - SignedDuration::from_secs(secs_ago))),
                false,
            ))
        };
        let pods = vec![
            ready_at(2),
            ready_at(8),
            ready_at(30),
            Arc::new(pod(Some(("False", now)), false)),
        ];
        // min-ready 10 s: the pod ready for 8 s is first (in 2 s), then the one ready for 2 s.
        assert_eq!(
            next_available_at(&pods, 10, now),
            Some(now + SignedDuration::from_secs(2))
        );
        assert_eq!(
            next_available_at(&pods, 0, now),
            None,
            "no threshold, no timer"
        );
        assert_eq!(
            next_available_at(&pods[2..], 10, now),
            None,
            "already available: no timer"
        );
    }

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
