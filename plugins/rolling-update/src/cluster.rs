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
use crate::names::{
    DESIRED_REPLICAS_ANNOTATION, NEXT_CONTROLLER_ANNOTATION, ORIGINAL_REPLICAS_ANNOTATION,
    SOURCE_ID_ANNOTATION, set_annotation,
};
use crate::updater::{CleanupPolicy, Report, UpdaterConfig, UpdaterOps};
use shared::cli::interrupt::Interrupt;

/// How many times a conflicting write is retried (client-go's `DefaultBackoff`:
/// 4 attempts, 10 ms growing ×5).
const CONFLICT_ATTEMPTS: u32 = 4;

fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.is_conflict())
}

fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.is_not_found())
}

/// Whether a failed request may succeed if sent again: throttling (429), a server
/// error (5xx: a restarting or overloaded API server), or a connection that failed
/// or timed out before an answer arrived.
pub fn is_transient(err: &kube::Error) -> bool {
    match err {
        kube::Error::Api(s) => s.code == 429 || s.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Words a connection failure the way kubectl does ("Unable to connect to the
/// server: …") instead of the client stack's nested Debug-like chain
/// (`ServiceError: client error (SendRequest): …`), keeping the step it happened in.
/// A read that ran past the request bound is said to be that.
pub fn explain_transport(err: anyhow::Error, timeout: Duration) -> anyhow::Error {
    let mut steps = Vec::new();
    let mut transport = None;
    for cause in err.chain() {
        if let Some(kube_err) = cause.downcast_ref::<kube::Error>() {
            if matches!(
                kube_err,
                kube::Error::Service(_) | kube::Error::HyperError(_)
            ) {
                transport = Some(kube_err);
            }
            break;
        }
        steps.push(cause.to_string());
    }
    let Some(transport) = transport else {
        return err;
    };
    let mut root: &dyn std::error::Error = transport;
    while let Some(next) = root.source() {
        root = next;
    }
    let root = root.to_string();
    let reason = if root.contains("timed out") || root.contains("deadline") {
        format!("no answer within {timeout:?} (each request is bounded by --timeout)")
    } else {
        root.trim_start_matches("connection error: ").to_string()
    };
    steps.push(format!("Unable to connect to the server: {reason}"));
    anyhow!(steps.join(": "))
}

/// Whether a watch error means the watch can never succeed (no permission, no such
/// resource): reported at once instead of retried until the timeout.
fn is_fatal_watch_error(err: &watcher::Error) -> Option<Box<kube::core::Status>> {
    let api = match err {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => e,
        _ => return None,
    };
    match api {
        kube::Error::Api(s) if matches!(s.code, 401 | 403 | 404) => Some(s.clone()),
        _ => None,
    }
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

/// Removes `update-source-id`, `desired-replicas` and `next-controller-id`: the
/// update is over. (1.17 left `next-controller-id` on a rolled-back RC, pointing at
/// a deleted one.)
pub async fn strip_update_annotations(
    api: &Api<ReplicationController>,
    interrupt: &Interrupt,
    rc: &ReplicationController,
) -> anyhow::Result<ReplicationController> {
    update_rc_with_retries(api, interrupt, rc, |rc| {
        if let Some(a) = rc.metadata.annotations.as_mut() {
            a.remove(SOURCE_ID_ANNOTATION);
            a.remove(DESIRED_REPLICAS_ANNOTATION);
            a.remove(NEXT_CONTROLLER_ANNOTATION);
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

/// The first watch error that retrying cannot cure, shared by an observer's watches.
type Fatal = Arc<std::sync::Mutex<Option<Box<kube::core::Status>>>>;

fn watch_into_store<K>(
    api: Api<K>,
    config: watcher::Config,
    changed: Arc<watch::Sender<u64>>,
    fatal: Fatal,
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
                Err(e) => match is_fatal_watch_error(&e) {
                    Some(status) => {
                        // 1.17 had no watch; a 403 here used to be logged at debug
                        // level while the user waited out the whole timeout.
                        *fatal
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(status);
                        changed.send_modify(|n| *n = n.wrapping_add(1));
                        return;
                    }
                    None => tracing::debug!("watch error (retrying): {e}"),
                },
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
    fatal: Fatal,
}

impl Observer {
    /// `watch_timeout` is the server-side bound of each watch request; it stays
    /// below the client's read timeout, so a quiet watch is renewed, not cut.
    fn start(
        rcs: &Api<ReplicationController>,
        pods: &Api<Pod>,
        old_rc: &ReplicationController,
        new_rc: &ReplicationController,
        watch_timeout: u32,
    ) -> Self {
        let (rc_tx, rc_changes) = watch::channel(0u64);
        let (pod_tx, pod_changes) = watch::channel(0u64);
        let (rc_tx, pod_tx) = (Arc::new(rc_tx), Arc::new(pod_tx));
        let fatal: Fatal = Arc::default();
        let base = watcher::Config::default().timeout(watch_timeout);
        let by_name = |rc: &ReplicationController| {
            base.clone().fields(&format!("metadata.name={}", name(rc)))
        };
        let by_selector = |rc: &ReplicationController| base.clone().labels(&selector_string(rc));
        Observer {
            old_rc: watch_into_store(rcs.clone(), by_name(old_rc), rc_tx.clone(), fatal.clone()),
            new_rc: watch_into_store(rcs.clone(), by_name(new_rc), rc_tx, fatal.clone()),
            old_pods: watch_into_store(
                pods.clone(),
                by_selector(old_rc),
                pod_tx.clone(),
                fatal.clone(),
            ),
            new_pods: watch_into_store(pods.clone(), by_selector(new_rc), pod_tx, fatal.clone()),
            old_name: name(old_rc).to_string(),
            new_name: name(new_rc).to_string(),
            rc_changes,
            pod_changes,
            fatal,
        }
    }

    /// The error that ended a watch for good, as the API error it was.
    fn fatal(&self) -> anyhow::Result<()> {
        match self
            .fatal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
        {
            Some(status) => Err(kube::Error::Api(status).into()),
            None => Ok(()),
        }
    }

    async fn ready(&self, timeout: Duration) -> anyhow::Result<()> {
        let all = async {
            self.old_rc.store.wait_until_ready().await?;
            self.new_rc.store.wait_until_ready().await?;
            self.old_pods.store.wait_until_ready().await?;
            self.new_pods.store.wait_until_ready().await
        };
        let (mut rcs, mut pods) = (self.rc_changes.clone(), self.pod_changes.clone());
        let failed = async {
            while self.fatal().is_ok() {
                tokio::select! {
                    r = rcs.changed() => if r.is_err() { std::future::pending::<()>().await },
                    r = pods.changed() => if r.is_err() { std::future::pending::<()>().await },
                }
            }
        };
        tokio::select! {
            r = tokio::time::timeout(timeout, all) => r
                .map_err(|_| anyhow!("timed out waiting for the watches on the replication controllers and their pods"))?
                .map_err(|e| anyhow!("watch ended: {e}")),
            () = failed => self.fatal(),
        }
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
        }
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
            let wake = deadline.min(Instant::now() + poll);
            let quiet = tokio::select! {
                _ = rc_changes.changed() => false,
                _ = pod_changes.changed() => false,
                _ = tokio::time::sleep_until(wake) => Instant::now() < deadline,
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
    Interrupted(shared::cli::interrupt::Interrupted),
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
            i = interrupt.fired() => return Err(i.into()),
        };
        if quiet {
            self.relist().await?;
        }
        self.observer()?;
        Ok(())
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
            crate::handover::wait_gone(&self.rcs, &self.interrupt, &old_name, deadline).await?;
            report.line(&format!("Renaming {new_name} to {old_name}"));
            crate::handover::hand_over(
                &self.rcs,
                &self.interrupt,
                &fresh,
                &old_name,
                config.timeout,
            )
            .await?;
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
    fn transport_errors_are_worded_like_kubectl() {
        let io = std::io::Error::new(std::io::ErrorKind::TimedOut, "connection error: timed out");
        let err = anyhow::Error::new(kube::Error::Service(Box::new(io)))
            .context("scaling replicationcontroller \"web-1\"");
        assert_eq!(
            explain_transport(err, Duration::from_secs(5)).to_string(),
            "scaling replicationcontroller \"web-1\": Unable to connect to the server: no answer within 5s (each request is bounded by --timeout)"
        );
        let refused = std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "Connection refused (os error 111)",
        );
        let err = anyhow::Error::new(kube::Error::Service(Box::new(refused)));
        assert_eq!(
            explain_transport(err, Duration::from_secs(5)).to_string(),
            "Unable to connect to the server: Connection refused (os error 111)"
        );
        let api = anyhow::Error::new(kube::Error::Api(Box::new(
            kube::core::Status::failure("nope", "NotFound").with_code(404),
        )));
        assert!(
            explain_transport(api, Duration::from_secs(5))
                .downcast_ref::<kube::Error>()
                .is_some()
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
