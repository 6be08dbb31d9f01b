//! The invariants of a ReplicationController rolling update, checked against the
//! real cluster: watched over the whole run (the fewest ready pods while the client
//! was alive; the most pods at any time, and the most replicas the RCs asked for
//! together), and at the end (one RC, the desired replicas, every pod on the new
//! template, ready and owned by it, no update annotations left, no ownerless pod).
//!
//! The surge bound (desired + maxSurge) is kubectl 1.17's on the sum of the two RCs'
//! `spec.replicas`: it scales the new RC up only by what that sum leaves, and waits
//! after each scaling until the RC manager counts the pods asked for. Pods are
//! counted as the RC manager counts them (`controller.IsPodActive`): not being
//! deleted, and not Succeeded or Failed (a pod the kubelet refused or evicted stays
//! as Failed and is replaced). Both bounds are checked: the specs', which is the
//! algorithm's, and the pods', which also holds the steps around it to the bound
//! (the relabelling, a resumed run).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::{Pod, ReplicationController};
use kube::api::ListParams;
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, Client};

use crate::objects::pod_ready;

/// Annotations no finished update may leave behind (kubectl's three, and the
/// plugin's hand-over record).
pub const UPDATE_ANNOTATIONS: [&str; 4] = [
    "kubectl.kubernetes.io/next-controller-id",
    "kubectl.kubernetes.io/update-source-id",
    "kubectl.kubernetes.io/desired-replicas",
    "rolling-update.kubeplug.io/renamed-from",
];

/// Why a pod is not Ready, from its status: the Ready condition's reason and message
/// and each container's ready flag and restarts.
fn unready_reason(pod: &Pod) -> String {
    let Some(status) = &pod.status else {
        return "no status".into();
    };
    let condition = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Ready")
        .map(|c| {
            format!(
                "Ready={} reason={:?} message={:?}",
                c.status,
                c.reason.as_deref().unwrap_or_default(),
                c.message.as_deref().unwrap_or_default()
            )
        })
        .unwrap_or_else(|| "no Ready condition".into());
    let containers: Vec<String> = status
        .container_statuses
        .iter()
        .flatten()
        .map(|c| format!("{} ready={} restarts={}", c.name, c.ready, c.restart_count))
        .collect();
    format!("{condition}; {}", containers.join(", "))
}

/// What the update should end with.
#[derive(Debug, Clone)]
pub struct Expect {
    /// The one RC left.
    pub rc: String,
    pub replicas: i32,
    /// The image of container 0 of every pod.
    pub image: String,
    /// The fewest ready pods allowed while the client runs (desired − maxUnavailable).
    pub min_ready: usize,
    /// The most pods (not being deleted) allowed at any time (desired + maxSurge).
    pub max_total: usize,
}

#[derive(Debug, Default)]
struct Record {
    min_ready_while_alive: Option<usize>,
    max_total: usize,
    /// The worst moment, for the failure message: the counts and each pod.
    low_point: Option<String>,
    /// Pods that were Ready and became unready while not being deleted, with the
    /// client running: the node's doing (a failed probe, a restart), which the
    /// client cannot cause; said beside a readiness failure to tell the two apart.
    flaps: Vec<String>,
    /// The pods counted when the most were, each with its controller's uid and its
    /// labels, for the failure message: which controller made the surplus.
    at_most: Option<String>,
    /// The most replicas the namespace's RCs asked for together.
    max_spec_total: i32,
    /// The RCs' sizes then, for the failure message.
    at_most_specs: Option<String>,
}

/// A watcher on every pod and RC of a namespace, recording readiness and totals.
pub struct RcInvariants {
    client: Client,
    namespace: String,
    record: Arc<Mutex<Record>>,
    alive: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
    specs: tokio::task::JoinHandle<()>,
}

impl Drop for RcInvariants {
    fn drop(&mut self) {
        self.task.abort();
        self.specs.abort();
    }
}

/// Whether the RC manager counts the pod (`controller.IsPodActive`).
fn active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    pod.metadata.deletion_timestamp.is_none() && !matches!(phase, Some("Succeeded" | "Failed"))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn pod_image(pod: &Pod) -> String {
    pod.spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .and_then(|c| c.image.clone())
        .unwrap_or_default()
}

fn controller_uid(pod: &Pod) -> Option<String> {
    pod.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true))
        .map(|o| o.uid.clone())
}

/// Records the most replicas the namespace's RCs ask for together (any RC there,
/// one being deleted too: it keeps its pods until the garbage collector is done).
async fn watch_specs(
    rcs: Api<ReplicationController>,
    record: Arc<Mutex<Record>>,
    ready: tokio::sync::oneshot::Sender<()>,
) {
    let mut ready = Some(ready);
    let mut sizes: HashMap<String, i32> = HashMap::new();
    let mut initialised = false;
    let mut stream = std::pin::pin!(watcher(rcs, watcher::Config::default()).default_backoff());
    while let Some(event) = stream.next().await {
        let Ok(event) = event else { continue };
        match event {
            watcher::Event::Init => {
                sizes.clear();
                initialised = false;
            }
            watcher::Event::InitApply(rc) | watcher::Event::Apply(rc) => {
                let replicas = rc.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
                sizes.insert(rc.metadata.name.clone().unwrap_or_default(), replicas);
            }
            watcher::Event::Delete(rc) => {
                sizes.remove(&rc.metadata.name.clone().unwrap_or_default());
            }
            watcher::Event::InitDone => {
                initialised = true;
                if let Some(tx) = ready.take() {
                    let _ = tx.send(());
                }
            }
        }
        if !initialised {
            continue;
        }
        let total: i32 = sizes.values().sum();
        let mut r = lock(&record);
        if total > r.max_spec_total {
            let mut each: Vec<String> = sizes.iter().map(|(n, s)| format!("{n}={s}")).collect();
            each.sort();
            r.max_spec_total = total;
            r.at_most_specs = Some(each.join(" "));
        }
    }
}

/// Each pod by name: (counted: not being deleted, ready, "controller uid labels phase").
type PodStates = HashMap<String, (bool, bool, String)>;

/// Records `pod`'s new state, and a loss of readiness while it is not being deleted
/// (`alive`: the client runs and the list is whole).
fn note_pod(state: &mut PodStates, pod: &Pod, alive: bool, record: &Mutex<Record>) {
    let counted = active(pod);
    let about = format!(
        "owner={} labels={:?} phase={:?}",
        controller_uid(pod).unwrap_or_default(),
        pod.metadata.labels.clone().unwrap_or_default(),
        pod.status.as_ref().and_then(|s| s.phase.clone())
    );
    let name = pod.metadata.name.clone().unwrap_or_default();
    let ready = pod_ready(pod);
    if alive && counted && !ready && state.get(&name).is_some_and(|(_, was, _)| *was) {
        lock(record).flaps.push(format!(
            "  {name} at {} {about}: {}",
            k8s_openapi::jiff::Timestamp::now(),
            unready_reason(pod)
        ));
    }
    state.insert(name, (counted, ready, about));
}

/// Updates the run-long totals from the whole list of pods: the most counted, and
/// the fewest ready while the client runs (`alive`), each with its pods.
fn note_counts(state: &PodStates, alive: bool, record: &Mutex<Record>) {
    let total = state.values().filter(|(counted, _, _)| *counted).count();
    let ready = state.values().filter(|(_, ready, _)| *ready).count();
    let mut r = lock(record);
    if total > r.max_total {
        let mut counted: Vec<String> = state
            .iter()
            .filter(|(_, (counted, _, _))| *counted)
            .map(|(name, (_, _, about))| format!("  {name} {about}"))
            .collect();
        counted.sort();
        r.at_most = Some(counted.join("\n"));
    }
    r.max_total = r.max_total.max(total);
    if alive && r.min_ready_while_alive.is_none_or(|m| ready < m) {
        r.min_ready_while_alive = Some(ready);
        let mut pods: Vec<String> = state
            .iter()
            .map(|(name, (counted, ready, about))| {
                format!("  {name} counted={counted} ready={ready} {about}")
            })
            .collect();
        pods.sort();
        r.low_point = Some(format!(
            "{ready} ready of {total} pods at {}:\n{}",
            k8s_openapi::jiff::Timestamp::now(),
            pods.join("\n")
        ));
    }
}

impl RcInvariants {
    /// Starts watching the pods of `namespace`; returns once the initial list is in.
    pub async fn watch(client: Client, namespace: &str) -> Self {
        let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
        let record = Arc::new(Mutex::new(Record::default()));
        let alive = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let task = {
            let record = Arc::clone(&record);
            let alive = Arc::clone(&alive);
            tokio::spawn(async move {
                let mut ready_tx = Some(ready_tx);
                let mut state = PodStates::new();
                let mut initialised = false;
                let mut stream =
                    std::pin::pin!(watcher(pods, watcher::Config::default()).default_backoff());
                while let Some(event) = stream.next().await {
                    let Ok(event) = event else { continue };
                    match event {
                        // A re-list (after a watch error, an API server restart):
                        // counts are whole again only at InitDone.
                        watcher::Event::Init => {
                            state.clear();
                            initialised = false;
                        }
                        watcher::Event::InitApply(p) | watcher::Event::Apply(p) => {
                            let alive = initialised && alive.load(Ordering::SeqCst);
                            note_pod(&mut state, &p, alive, &record);
                        }
                        watcher::Event::Delete(p) => {
                            state.remove(&p.metadata.name.clone().unwrap_or_default());
                        }
                        watcher::Event::InitDone => {
                            initialised = true;
                            if let Some(tx) = ready_tx.take() {
                                let _ = tx.send(());
                            }
                        }
                    }
                    if !initialised {
                        continue;
                    }
                    note_counts(&state, alive.load(Ordering::SeqCst), &record);
                }
            })
        };
        let (specs_tx, specs_rx) = tokio::sync::oneshot::channel();
        let specs = tokio::spawn(watch_specs(
            Api::namespaced(client.clone(), namespace),
            Arc::clone(&record),
            specs_tx,
        ));
        let _ = tokio::time::timeout(Duration::from_secs(30), ready_rx).await;
        let _ = tokio::time::timeout(Duration::from_secs(30), specs_rx).await;
        RcInvariants {
            client,
            namespace: namespace.to_string(),
            record,
            alive,
            task,
            specs,
        }
    }

    /// Whether the client under test is running (readiness counts only then).
    pub fn client_alive(&self, alive: bool) {
        self.alive.store(alive, Ordering::SeqCst);
    }

    pub fn min_ready_while_alive(&self) -> Option<usize> {
        lock(&self.record).min_ready_while_alive
    }

    pub fn max_total(&self) -> usize {
        lock(&self.record).max_total
    }

    /// Checks the run-long bounds and waits (up to `timeout`, for the garbage
    /// collector and the RC manager to settle) for the end state; the error describes
    /// what is wrong and the whole namespace.
    pub async fn check(&self, expect: &Expect, timeout: Duration) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + timeout;
        let last = loop {
            let problems = self.end_state_problems(expect).await;
            if problems.is_empty() {
                break Vec::new();
            }
            if tokio::time::Instant::now() >= deadline {
                break problems;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        let mut problems = last;
        {
            let record = lock(&self.record);
            if let Some(min) = record.min_ready_while_alive
                && min < expect.min_ready
            {
                problems.push(format!(
                    "ready pods fell to {min} (< {}) while the client ran ({})",
                    expect.min_ready,
                    record.low_point.clone().unwrap_or_default()
                ));
                if !record.flaps.is_empty() {
                    problems.push(format!(
                        "pods that lost readiness while not being deleted (the node's doing, not the client's):\n{}",
                        record.flaps.join("\n")
                    ));
                }
            }
            if record.max_spec_total > expect.max_total as i32 {
                problems.push(format!(
                    "the replication controllers asked for {} replicas at once (> {}): {}",
                    record.max_spec_total,
                    expect.max_total,
                    record.at_most_specs.clone().unwrap_or_default()
                ));
            }
            if record.max_total > expect.max_total {
                problems.push(format!(
                    "{} pods at once (> {}):\n{}",
                    record.max_total,
                    expect.max_total,
                    record.at_most.clone().unwrap_or_default()
                ));
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        Err(format!(
            "{}\n--- namespace {}\n{}",
            problems.join("\n"),
            self.namespace,
            self.describe().await
        ))
    }

    /// [`Self::check`], failing the test with its description.
    pub async fn assert_holds(&self, expect: &Expect, timeout: Duration) {
        if let Err(e) = self.check(expect, timeout).await {
            panic!("{e}");
        }
    }

    async fn end_state_problems(&self, expect: &Expect) -> Vec<String> {
        let rcs: Api<ReplicationController> = Api::namespaced(self.client.clone(), &self.namespace);
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        let (Ok(rcs), Ok(pods)) = (
            rcs.list(&ListParams::default()).await,
            pods.list(&ListParams::default()).await,
        ) else {
            return vec!["cannot list".into()];
        };
        let mut problems = Vec::new();
        let names: Vec<String> = rcs
            .items
            .iter()
            .map(|rc| rc.metadata.name.clone().unwrap_or_default())
            .collect();
        if names != [expect.rc.clone()] {
            problems.push(format!(
                "replication controllers {names:?}, want exactly [{:?}]",
                expect.rc
            ));
        }
        let Some(rc) = rcs
            .items
            .iter()
            .find(|rc| rc.metadata.name.as_deref() == Some(&expect.rc))
        else {
            return problems;
        };
        if rc.metadata.deletion_timestamp.is_some() {
            problems.push(format!("{} is being deleted", expect.rc));
        }
        let spec = rc.spec.clone().unwrap_or_default();
        if spec.replicas != Some(expect.replicas) {
            problems.push(format!(
                "{} has replicas {:?}, want {}",
                expect.rc, spec.replicas, expect.replicas
            ));
        }
        for key in UPDATE_ANNOTATIONS {
            if rc
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(key))
            {
                problems.push(format!("{} still has annotation {key}", expect.rc));
            }
        }
        let template_image = spec
            .template
            .as_ref()
            .and_then(|t| t.spec.as_ref())
            .and_then(|s| s.containers.first())
            .and_then(|c| c.image.clone())
            .unwrap_or_default();
        if template_image != expect.image {
            problems.push(format!(
                "{} has template image {template_image}, want {}",
                expect.rc, expect.image
            ));
        }
        let uid = rc.metadata.uid.clone();
        let mut live = 0;
        for pod in &pods.items {
            let name = pod.metadata.name.clone().unwrap_or_default();
            let owner = controller_uid(pod);
            if owner.is_none() {
                problems.push(format!("pod {name} has no controller"));
                continue;
            }
            if pod.metadata.deletion_timestamp.is_some() {
                problems.push(format!("pod {name} is still being deleted"));
                continue;
            }
            live += 1;
            if owner != uid {
                problems.push(format!("pod {name} is not owned by {}", expect.rc));
            }
            if pod_image(pod) != expect.image {
                problems.push(format!("pod {name} runs {}", pod_image(pod)));
            }
            if !pod_ready(pod) {
                problems.push(format!("pod {name} is not ready"));
            }
        }
        if live != expect.replicas {
            problems.push(format!("{live} pods, want {}", expect.replicas));
        }
        problems
    }

    /// The namespace's RCs and pods, one line each, for failure messages.
    pub async fn describe(&self) -> String {
        let rcs: Api<ReplicationController> = Api::namespaced(self.client.clone(), &self.namespace);
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        let mut out = String::new();
        if let Ok(list) = rcs.list(&ListParams::default()).await {
            for rc in list.items {
                let spec = rc.spec.clone().unwrap_or_default();
                let _ = writeln!(
                    out,
                    "rc {} uid={} replicas={:?} selector={:?} deleting={} annotations={:?}",
                    rc.metadata.name.unwrap_or_default(),
                    rc.metadata.uid.unwrap_or_default(),
                    spec.replicas,
                    spec.selector.unwrap_or_default(),
                    rc.metadata.deletion_timestamp.is_some(),
                    rc.metadata.annotations.unwrap_or_default()
                );
            }
        }
        if let Ok(list) = pods.list(&ListParams::default()).await {
            for pod in list.items {
                let _ = writeln!(
                    out,
                    "pod {} owner={:?} ready={} image={} deleting={} labels={:?}",
                    pod.metadata.name.clone().unwrap_or_default(),
                    controller_uid(&pod),
                    pod_ready(&pod),
                    pod_image(&pod),
                    pod.metadata.deletion_timestamp.is_some(),
                    pod.metadata.labels.clone().unwrap_or_default()
                );
            }
        }
        out
    }
}
