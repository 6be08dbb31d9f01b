//! The kubelet loop: one watch on all pods feeds a dispatcher that binds
//! unscheduled pods and hands every pod bound to one of our nodes to its own
//! worker task. Workers sleep until their runtime or their pod changes (no
//! polling), post status only when it differs from what they posted last,
//! and finalize deletions.
//!
//! Status writes are JSON merge patches without a resourceVersion: this
//! node is the only writer of the fields it sends, so they cannot conflict
//! and need no read-modify-write (only `metadata.uid` guards against a pod
//! recreated under the same name). Reads come from the watch, never from
//! per-pod GETs.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::pin::pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Pod, PodStatus};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, Preconditions};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::events::{self, KubeletEvents};
use super::ip_pool::{IpPool, PodIp};
use super::nodes::{NODE_IP, patch_params};
use super::runtime::{PodRuntime, Runtime};
use super::scheduler::{bind, needs_binding, pick_node};
use super::status::{Placement, phase, pod_status};

/// The latest pod object, or None once it is gone from the API.
type PodSlot = Option<Arc<Pod>>;

/// Dispatches pod events; owns the workers.
pub(crate) struct Kubelet {
    client: Client,
    /// Our nodes with their labels, for placement.
    nodes: Vec<(String, BTreeMap<String, String>)>,
    runtime: Arc<dyn Runtime>,
    ips: IpPool,
    /// Live workers by pod uid (not name: a pod recreated under the same
    /// name is a different pod).
    workers: HashMap<String, watch::Sender<PodSlot>>,
    tasks: JoinSet<()>,
    /// Pods with a binding request under way.
    binding: Arc<Mutex<HashSet<String>>>,
    cursor: usize,
    /// Whether this node binds pods (no kube-scheduler runs) or leaves them to the
    /// scheduler.
    bind_pods: bool,
}

impl Kubelet {
    pub(crate) fn new(
        client: Client,
        nodes: Vec<(String, BTreeMap<String, String>)>,
        runtime: Arc<dyn Runtime>,
        bind_pods: bool,
    ) -> Self {
        Self {
            bind_pods,
            client,
            nodes,
            runtime,
            ips: IpPool::default(),
            workers: HashMap::new(),
            tasks: JoinSet::new(),
            binding: Arc::default(),
            cursor: 0,
        }
    }

    /// Runs until `shutdown` resolves; dropping the task set then stops
    /// every worker.
    pub(crate) async fn run(mut self, shutdown: impl std::future::Future<Output = ()>) {
        let pods: Api<Pod> = Api::all(self.client.clone());
        // The watcher re-lists on its own (410 Gone, restarts of the API
        // server) and backs off on errors instead of ending the stream.
        let mut events = pin!(watcher::watcher(pods, watcher::Config::default()).default_backoff());
        let mut shutdown = pin!(shutdown);
        // Uids seen during a (re-)list, to spot pods deleted while the
        // watch was down.
        let mut relisting: Option<HashSet<String>> = None;
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                Some(joined) = self.tasks.join_next(), if !self.tasks.is_empty() => {
                    if let Err(e) = joined
                        && e.is_panic()
                    {
                        tracing::error!(error = %e, "a pod worker panicked");
                    }
                }
                event = events.next() => match event {
                    None => break,
                    Some(Err(e)) => tracing::warn!(error = %e, "pod watch failed; retrying"),
                    Some(Ok(Event::Init)) => relisting = Some(HashSet::new()),
                    Some(Ok(Event::InitApply(pod))) => {
                        if let (Some(seen), Some(uid)) = (relisting.as_mut(), pod.metadata.uid.as_ref()) {
                            seen.insert(uid.clone());
                        }
                        self.apply(pod);
                    }
                    Some(Ok(Event::InitDone)) => {
                        if let Some(seen) = relisting.take() {
                            self.workers.retain(|uid, tx| {
                                let keep = seen.contains(uid);
                                if !keep {
                                    tx.send_replace(None);
                                }
                                keep
                            });
                        }
                    }
                    Some(Ok(Event::Apply(pod))) => self.apply(pod),
                    Some(Ok(Event::Delete(pod))) => {
                        if let Some(tx) = pod.metadata.uid.as_ref().and_then(|uid| self.workers.remove(uid)) {
                            tx.send_replace(None);
                        }
                    }
                },
            }
        }
        self.tasks.shutdown().await;
    }

    fn apply(&mut self, pod: Pod) {
        let Some(uid) = pod.metadata.uid.clone() else {
            return;
        };
        let has_worker = self.workers.contains_key(&uid);
        match classify(&pod, &self.nodes, has_worker) {
            Action::Update => {
                let gone = self
                    .workers
                    .get(&uid)
                    .is_some_and(|tx| tx.send(Some(Arc::new(pod))).is_err());
                if gone {
                    self.workers.remove(&uid);
                }
            }
            Action::Bind if self.bind_pods => self.schedule(uid, pod),
            // The release's kube-scheduler binds it; its binding comes back as an update.
            Action::Bind => {}
            Action::Start => self.start_worker(uid, pod),
            Action::Ignore => {}
        }
    }

    fn schedule(&mut self, uid: String, pod: Pod) {
        let Some(node) = pick_node(&pod, &self.nodes, &mut self.cursor).map(str::to_owned) else {
            tracing::debug!(pod = %key(&pod), "no simulated node fits the pod; leaving it pending");
            return;
        };
        {
            let mut in_flight = self.binding.lock().unwrap_or_else(PoisonError::into_inner);
            if !in_flight.insert(uid.clone()) {
                return;
            }
        }
        let client = self.client.clone();
        let binding = Arc::clone(&self.binding);
        self.tasks.spawn(async move {
            match bind(&client, &pod, &node).await {
                Ok(true) => {
                    let event = events::scheduled(&pod, &node);
                    events::post(&client, &pod, vec![event], "default-scheduler", &node);
                }
                Ok(false) => {}
                Err(e) => tracing::warn!(pod = %key(&pod), node, error = %e, "binding failed"),
            }
            binding
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&uid);
        });
    }

    fn start_worker(&mut self, uid: String, pod: Pod) {
        // A pod this node already ran (before a restart of the simulator)
        // continues from its recorded start and address.
        let status = pod.status.as_ref();
        let resumed = status
            .filter(|s| s.container_statuses.is_some())
            .and_then(|s| s.start_time.as_ref())
            .map(|t| t.0);
        let start_time = resumed.unwrap_or_else(Timestamp::now);
        let previous_ip = resumed.and(status.and_then(|s| s.pod_ip.as_deref()));
        let Some(ip) = self.ips.claim_or_allocate(previous_ip) else {
            tracing::error!(pod = %key(&pod), "no pod IP left");
            return;
        };
        let runtime = match self.runtime.start_pod(&pod, start_time) {
            Ok(runtime) => runtime,
            Err(e) => {
                tracing::error!(pod = %key(&pod), error = %e, "could not start pod");
                return;
            }
        };
        let (Some(name), Some(namespace)) =
            (pod.metadata.name.clone(), pod.metadata.namespace.clone())
        else {
            return;
        };
        tracing::debug!(pod = %key(&pod), ip = %ip.addr(), "starting pod");
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        let (tx, rx) = watch::channel(Some(Arc::new(pod)));
        let worker = PodWorker {
            client: self.client.clone(),
            node,
            events: KubeletEvents::default(),
            pods: Api::namespaced(self.client.clone(), &namespace),
            key: format!("{namespace}/{name}"),
            name,
            uid: uid.clone(),
            placement: Placement {
                host_ip: NODE_IP.to_owned(),
                pod_ip: ip.addr().to_string(),
                start_time,
            },
            _ip: ip,
            runtime,
            last_sent: None,
            stop_noticed: None,
            stop_deadline: None,
            finalized: false,
        };
        self.workers.insert(uid, tx);
        self.tasks.spawn(worker.run(rx));
    }
}

/// What the dispatcher does with a pod event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// Hand the new version to the pod's worker.
    Update,
    /// Bind it to one of our nodes.
    Bind,
    /// Start running it.
    Start,
    /// Not ours (another node's, another scheduler's), or finished.
    Ignore,
}

/// Decides the fate of a pod event; pure, so the rules are unit-tested.
fn classify(pod: &Pod, nodes: &[(String, BTreeMap<String, String>)], has_worker: bool) -> Action {
    if has_worker {
        return Action::Update;
    }
    if needs_binding(pod) {
        return Action::Bind;
    }
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default();
    if !nodes.iter().any(|(name, _)| name == node) {
        return Action::Ignore;
    }
    // A finished pod has nothing left to run, and the API server deletes
    // finished pods without waiting for a kubelet.
    if phase::is_terminal(pod.status.as_ref().and_then(|s| s.phase.as_deref())) {
        return Action::Ignore;
    }
    Action::Start
}

fn key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Drives one pod: start, status, stop, finalize.
struct PodWorker {
    /// For posting events.
    client: Client,
    /// The node the pod is bound to.
    node: String,
    /// The events posted so far.
    events: KubeletEvents,
    pods: Api<Pod>,
    name: String,
    /// `namespace/name`, for logs.
    key: String,
    uid: String,
    placement: Placement,
    /// Held for the pod's lifetime; returned to the pool on drop.
    _ip: PodIp,
    runtime: Box<dyn PodRuntime>,
    /// The status this worker posted last.
    last_sent: Option<PodStatus>,
    /// When the deletion was first seen.
    stop_noticed: Option<Timestamp>,
    /// The SIGKILL deadline passed to the runtime.
    stop_deadline: Option<Timestamp>,
    /// Deleted (or found gone): only wait for the dispatcher to let go.
    finalized: bool,
}

/// Why a sync ended early.
enum SyncError {
    /// The pod is gone or was replaced: nothing more to do for it.
    Gone,
    /// Worth retrying.
    Api(kube::Error),
}

impl PodWorker {
    async fn run(mut self, mut rx: watch::Receiver<PodSlot>) {
        let mut failures: u32 = 0;
        let mut retry_at: Option<tokio::time::Instant> = None;
        loop {
            let Some(pod) = rx.borrow_and_update().clone() else {
                break;
            };
            if !self.finalized {
                match self.sync(&pod).await {
                    Ok(()) => {
                        failures = 0;
                        retry_at = None;
                    }
                    Err(SyncError::Gone) => self.finalized = true,
                    Err(SyncError::Api(e)) => {
                        failures = failures.saturating_add(1);
                        let delay = Duration::from_millis(200)
                            .saturating_mul(1 << failures.min(6))
                            .min(Duration::from_secs(10));
                        tracing::warn!(pod = %self.key, error = %e, ?delay, "pod sync failed; retrying");
                        retry_at = Some(tokio::time::Instant::now() + delay);
                    }
                }
            }
            let finalized = self.finalized;
            tokio::select! {
                () = self.runtime.changed(), if !finalized => {}
                changed = rx.changed() => if changed.is_err() { break },
                () = sleep_until(retry_at), if retry_at.is_some() && !finalized => {}
            }
        }
        tracing::debug!(pod = %self.key, "pod worker done");
    }

    async fn sync(&mut self, pod: &Pod) -> Result<(), SyncError> {
        let now = Timestamp::now();
        let deleting = pod.metadata.deletion_timestamp.is_some();
        if deleting {
            self.request_stop(pod, now);
        }
        let observation = self.runtime.observe(now);
        let due = self.events.due(pod, &observation, deleting);
        events::post(&self.client, pod, due, "kubelet", &self.node);
        let status = pod_status(
            pod,
            &self.placement,
            &observation,
            self.last_sent.as_ref(),
            now,
        );
        if self.last_sent.as_ref() != Some(&status) {
            // The uid makes the API server refuse the write if the pod was
            // deleted and recreated under the same name meanwhile.
            let patch = serde_json::json!({
                "metadata": { "uid": self.uid },
                "status": status,
            });
            match self
                .pods
                .patch_status(&self.name, &patch_params(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => self.last_sent = Some(status),
                Err(kube::Error::Api(s))
                    if s.is_not_found() || s.is_conflict() || is_uid_mismatch(&s) =>
                {
                    return Err(SyncError::Gone);
                }
                Err(e) => return Err(SyncError::Api(e)),
            }
        }
        if deleting && observation.all_stopped() {
            let params = DeleteParams {
                grace_period_seconds: Some(0),
                preconditions: Some(Preconditions {
                    uid: Some(self.uid.clone()),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            return match self.pods.delete(&self.name, &params).await {
                Ok(_) => {
                    tracing::debug!(pod = %self.key, "deletion finalized");
                    Err(SyncError::Gone)
                }
                Err(kube::Error::Api(s)) if s.is_not_found() || s.is_conflict() => {
                    Err(SyncError::Gone)
                }
                Err(e) => Err(SyncError::Api(e)),
            };
        }
        Ok(())
    }

    /// Tells the runtime to stop the pod within its grace period, counted
    /// from when the deletion was first seen (as a kubelet counts it). A
    /// later, shorter grace (`kubectl delete --grace-period=1` after a
    /// default delete) moves the deadline closer.
    fn request_stop(&mut self, pod: &Pod, now: Timestamp) {
        let grace = pod
            .metadata
            .deletion_grace_period_seconds
            .or_else(|| {
                pod.spec
                    .as_ref()
                    .and_then(|s| s.termination_grace_period_seconds)
            })
            .unwrap_or(30)
            .max(0);
        let noticed = *self.stop_noticed.get_or_insert(now);
        let deadline = noticed
            .checked_add(Duration::from_secs(grace.unsigned_abs()))
            .unwrap_or(Timestamp::MAX);
        if self.stop_deadline.is_none_or(|d| deadline < d) {
            self.stop_deadline = Some(deadline);
            let remaining =
                Duration::try_from(deadline.duration_since(now)).unwrap_or(Duration::ZERO);
            self.runtime.stop(now, remaining);
        }
    }
}

/// The 1.20 API server answers a status patch whose `metadata.uid` differs
/// from the stored pod's with 422 "metadata.uid: … field is immutable".
fn is_uid_mismatch(status: &kube::core::Status) -> bool {
    status.is_invalid() && status.message.contains("metadata.uid")
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{PodSpec, PodStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn nodes() -> Vec<(String, BTreeMap<String, String>)> {
        vec![
            ("n0".to_owned(), BTreeMap::new()),
            ("n1".to_owned(), BTreeMap::new()),
        ]
    }

    fn pod(node: Option<&str>, phase: Option<&str>) -> Pod {
        Pod {
            spec: Some(PodSpec {
                node_name: node.map(str::to_owned),
                ..PodSpec::default()
            }),
            status: Some(PodStatus {
                phase: phase.map(str::to_owned),
                ..PodStatus::default()
            }),
            ..Pod::default()
        }
    }

    #[test]
    fn unscheduled_pods_are_bound() {
        assert_eq!(
            classify(&pod(None, Some("Pending")), &nodes(), false),
            Action::Bind
        );
    }

    #[test]
    fn our_pods_start_and_then_update() {
        assert_eq!(
            classify(&pod(Some("n1"), Some("Pending")), &nodes(), false),
            Action::Start
        );
        assert_eq!(
            classify(&pod(Some("n1"), Some("Running")), &nodes(), true),
            Action::Update
        );
        // A pod resumed after a restart of the node, already being deleted.
        let mut deleting = pod(Some("n0"), Some("Running"));
        deleting.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
        assert_eq!(classify(&deleting, &nodes(), false), Action::Start);
    }

    #[test]
    fn other_nodes_pods_and_finished_pods_are_left_alone() {
        assert_eq!(
            classify(&pod(Some("elsewhere"), Some("Pending")), &nodes(), false),
            Action::Ignore
        );
        assert_eq!(
            classify(&pod(Some("n0"), Some("Succeeded")), &nodes(), false),
            Action::Ignore
        );
        assert_eq!(
            classify(&pod(Some("n0"), Some("Failed")), &nodes(), false),
            Action::Ignore
        );
        assert_eq!(classify(&Pod::default(), &nodes(), false), Action::Ignore);
    }

    #[test]
    fn uid_mismatch_is_recognised() {
        let status = kube::core::Status::failure(
            "Pod \"nr\" is invalid: metadata.uid: Invalid value: \"0\": field is immutable",
            "Invalid",
        )
        .with_code(422);
        assert!(is_uid_mismatch(&status));
        let other = kube::core::Status::failure("spec.containers: Required value", "Invalid")
            .with_code(422);
        assert!(!is_uid_mismatch(&other));
    }
}
