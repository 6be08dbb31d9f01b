//! When a created object is ready, by its kind's rules, and when it never will be:
//! the rules of `create-file --wait`, pure, beside [`crate::waiting`] whose causes
//! say why a wait is not over.
//!
//! - [`Rule::of`] picks a kind's rule; [`state`] applies it to the object as the
//!   watch last saw it: [`State::Ready`], [`State::Waiting`] with what it waits for
//!   ("1/3 available"), or [`State::Failed`] when the object itself says it failed.
//!   Deployments, StatefulSets and DaemonSets follow kubectl's `rollout status`
//!   (kubectl's `polymorphichelpers/rollout_status.go`), except that a StatefulSet
//!   or DaemonSet with the `OnDelete` strategy (which `rollout status` refuses) waits
//!   for its ready count: a new object has no old pods to wait out.
//! - [`causes`] are the stall causes of one object, in `waiting`'s words: its
//!   controller's `FailedCreate`, its pods' scheduling, image and crash-loop reasons,
//!   a Job's failed pods, a claim without a provisioner, a Service's Warning events.
//! - [`doom`] says which of them cannot fix themselves, as Shopify's krane learned
//!   ("doom reasons"): a refusal by admission for what the template asks; an image
//!   the registry says does not exist; the same pull error on [`PULLS_BEFORE_DOOM`]
//!   pulls in a row (not the first `ImagePullBackOff`: one failed pull may be a
//!   registry's hiccup, and krane stopped failing on it eagerly for that reason); a
//!   crash loop past [`RESTARTS_BEFORE_DOOM`] restarts (a container that waits for a
//!   database created by the same command crashes a few times first). A workload is
//!   doomed only when every one of its pods is (krane's rule for ReplicaSets).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::core::{Selector, SelectorExt as _};
use serde_json::Value;

use crate::objects::{
    self, ContainerStatus, DaemonSet, Deployment, EndpointSlice, Event, Job, Kind,
    PersistentVolumeClaim, Pod, ReplicaSet, ReplicationController, Service, StatefulSet,
    StorageClass,
};

use crate::waiting::{Cause, Condition, controller_causes, pod_causes};

/// How many pulls in a row must fail with the same error before it is final.
pub const PULLS_BEFORE_DOOM: u32 = 3;
/// How many restarts a crash-looping container gets before its crash loop is final.
pub const RESTARTS_BEFORE_DOOM: i32 = 3;

/// The label the EndpointSlice controller puts on a Service's slices.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// Which rule decides when an object of a kind is ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    Deployment,
    StatefulSet,
    DaemonSet,
    ReplicaSet,
    ReplicationController,
    Pod,
    Job,
    PersistentVolumeClaim,
    Service,
    CustomResourceDefinition,
    /// A custom resource: ready when its `Ready` condition is, if it has one.
    ReadyCondition,
    /// Nothing to wait for (a ConfigMap, a Role…): ready once created.
    Nothing,
}

/// The API groups of the built-in kinds: their kinds without a rule have nothing to
/// wait for; a kind of any other group is a custom resource.
const BUILTIN_GROUPS: [&str; 20] = [
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "certificates.k8s.io",
    "admissionregistration.k8s.io",
    "apiregistration.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
    "apiextensions.k8s.io",
    "internal.apiserver.k8s.io",
];

impl Rule {
    /// The rule for objects of `group`/`kind`.
    pub fn of(group: &str, kind: &str) -> Rule {
        match (group, kind) {
            ("apps" | "extensions", "Deployment") => Rule::Deployment,
            ("apps", "StatefulSet") => Rule::StatefulSet,
            ("apps" | "extensions", "DaemonSet") => Rule::DaemonSet,
            ("apps" | "extensions", "ReplicaSet") => Rule::ReplicaSet,
            ("", "ReplicationController") => Rule::ReplicationController,
            ("", "Pod") => Rule::Pod,
            ("batch", "Job") => Rule::Job,
            ("", "PersistentVolumeClaim") => Rule::PersistentVolumeClaim,
            ("", "Service") => Rule::Service,
            ("apiextensions.k8s.io", "CustomResourceDefinition") => Rule::CustomResourceDefinition,
            (g, _) if BUILTIN_GROUPS.contains(&g) => Rule::Nothing,
            _ => Rule::ReadyCondition,
        }
    }

    /// Whether the kind makes pods, whose causes say why it waits.
    pub fn has_pods(self) -> bool {
        matches!(
            self,
            Rule::Deployment
                | Rule::StatefulSet
                | Rule::DaemonSet
                | Rule::ReplicaSet
                | Rule::ReplicationController
                | Rule::Job
        )
    }
}

/// Where an object is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    Ready,
    /// What it waits for, short: `1/3 available`.
    Waiting(String),
    /// It failed, and says so itself (a Job's `Failed` condition, a Deployment past
    /// its progress deadline, a failed Pod): the error's text.
    Failed(String),
}

/// What an object's readiness depends on beside itself.
#[derive(Debug, Default, Clone, Copy)]
pub struct Related<'a> {
    /// A Service's EndpointSlices (those labelled with its name).
    pub endpoint_slices: &'a [EndpointSlice],
    /// The cluster's StorageClasses, when known (for a claim's binding mode).
    pub storage_classes: Option<&'a [StorageClass]>,
}

/// The object as kubectl names it: `deployment.apps/web`, `pod/web-1`.
pub fn display_name(group: &str, kind: &str, name: &str) -> String {
    let kind = kind.to_lowercase();
    if group.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}.{group}/{name}")
    }
}

/// The object as its rule reads it; one that cannot be read has failed, in
/// k8s-openapi's words (`objects`).
fn typed<T: Kind>(object: &Value) -> Result<T, State> {
    objects::from_value(object).map_err(|e| State::Failed(format!("cannot read the object: {e}")))
}

/// Where `object` is, by `rule`.
pub fn state(rule: Rule, object: &Value, related: &Related<'_>) -> State {
    let result = match rule {
        Rule::Deployment => typed(object).map(|d| deployment(&d)),
        Rule::StatefulSet => typed(object).map(|s| stateful_set(&s)),
        Rule::DaemonSet => typed(object).map(|d| daemon_set(&d)),
        Rule::ReplicaSet => typed(object).map(|r: ReplicaSet| {
            let status = r.status.unwrap_or_default();
            replica_count(
                r.metadata.generation,
                status.observed_generation,
                r.spec.and_then(|s| s.replicas),
                status.ready_replicas,
            )
        }),
        Rule::ReplicationController => typed(object).map(|r: ReplicationController| {
            let status = r.status.unwrap_or_default();
            replica_count(
                r.metadata.generation,
                status.observed_generation,
                r.spec.and_then(|s| s.replicas),
                status.ready_replicas,
            )
        }),
        Rule::Pod => typed(object).map(|p| pod(&p)),
        Rule::Job => typed(object).map(|j| job(&j)),
        Rule::PersistentVolumeClaim => typed(object).map(|c| claim(&c, related.storage_classes)),
        Rule::Service => typed(object).map(|s| service(&s, related.endpoint_slices)),
        Rule::CustomResourceDefinition | Rule::ReadyCondition => Ok(by_condition(rule, object)),
        Rule::Nothing => Ok(State::Ready),
    };
    result.unwrap_or_else(|failed| failed)
}

fn waiting(text: impl Into<String>) -> State {
    State::Waiting(text.into())
}

/// `rollout status` for a Deployment.
fn deployment(d: &Deployment) -> State {
    let name = d.metadata.name.as_deref().unwrap_or_default();
    let status = d.status.clone().unwrap_or_default();
    if d.metadata.generation.unwrap_or(0) > status.observed_generation.unwrap_or(0) {
        return waiting("spec update not yet observed");
    }
    let timed_out = status.conditions.iter().flatten().any(|c| {
        c.type_ == "Progressing" && c.reason.as_deref() == Some("ProgressDeadlineExceeded")
    });
    if timed_out {
        return State::Failed(format!(
            "deployment {name:?} exceeded its progress deadline"
        ));
    }
    let updated = status.updated_replicas.unwrap_or(0);
    if let Some(want) = d.spec.as_ref().and_then(|s| s.replicas)
        && updated < want
    {
        return waiting(format!("{updated} of {want} new replicas updated"));
    }
    let replicas = status.replicas.unwrap_or(0);
    if replicas > updated {
        return waiting(format!(
            "{} old replicas pending termination",
            replicas - updated
        ));
    }
    let available = status.available_replicas.unwrap_or(0);
    if available < updated {
        return waiting(format!("{available}/{updated} available"));
    }
    State::Ready
}

/// `rollout status` for a StatefulSet (`OnDelete`: its ready count, see the module).
fn stateful_set(s: &StatefulSet) -> State {
    let spec = s.spec.clone().unwrap_or_default();
    let status = s.status.clone().unwrap_or_default();
    let observed = status.observed_generation.unwrap_or(0);
    if observed == 0 || s.metadata.generation.unwrap_or(0) > observed {
        return waiting("spec update not yet observed");
    }
    let ready = status.ready_replicas.unwrap_or(0);
    if let Some(want) = spec.replicas
        && ready < want
    {
        return waiting(format!("{ready}/{want} ready"));
    }
    let strategy = spec.update_strategy.unwrap_or_default();
    if strategy.type_.as_deref() == Some("OnDelete") {
        return State::Ready;
    }
    if let Some(rolling) = strategy.rolling_update {
        let updated = status.updated_replicas.unwrap_or(0);
        if let (Some(want), Some(partition)) = (spec.replicas, rolling.partition)
            && updated < want - partition
        {
            return waiting(format!(
                "partitioned roll out: {updated} of {} new pods updated",
                want - partition
            ));
        }
        return State::Ready;
    }
    if status.update_revision != status.current_revision {
        return waiting(format!(
            "rolling update: {} pods at revision {}",
            status.updated_replicas.unwrap_or(0),
            status.update_revision.unwrap_or_default()
        ));
    }
    State::Ready
}

/// `rollout status` for a DaemonSet (`OnDelete`: its available count).
fn daemon_set(d: &DaemonSet) -> State {
    let status = d.status.clone().unwrap_or_default();
    if d.metadata.generation.unwrap_or(0) > status.observed_generation.unwrap_or(0) {
        return waiting("spec update not yet observed");
    }
    let on_delete = d
        .spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|s| s.type_.as_deref())
        == Some("OnDelete");
    let desired = status.desired_number_scheduled;
    let updated = status.updated_number_scheduled.unwrap_or(0);
    if !on_delete && updated < desired {
        return waiting(format!("{updated} of {desired} new pods updated"));
    }
    let available = status.number_available.unwrap_or(0);
    if available < desired {
        return waiting(format!("{available}/{desired} available"));
    }
    State::Ready
}

/// A ReplicaSet or ReplicationController: its ready count, once observed.
fn replica_count(
    generation: Option<i64>,
    observed: Option<i64>,
    want: Option<i32>,
    ready: Option<i32>,
) -> State {
    if generation.unwrap_or(0) > observed.unwrap_or(0) {
        return waiting("spec update not yet observed");
    }
    let (want, ready) = (want.unwrap_or(1), ready.unwrap_or(0));
    if ready < want {
        return waiting(format!("{ready}/{want} ready"));
    }
    State::Ready
}

/// A Pod: Ready, or run to completion; failed when its phase says so.
fn pod(p: &Pod) -> State {
    let status = p.status.clone().unwrap_or_default();
    let phase = status.phase.as_deref().unwrap_or("Pending");
    match phase {
        "Succeeded" => return State::Ready,
        "Failed" => {
            let why = status
                .message
                .or(status.reason)
                .or_else(|| last_exit(status.container_statuses.iter().flatten()))
                .unwrap_or_default();
            return State::Failed(format!("pod failed: {why}").trim_end_matches(": ").into());
        }
        _ => {}
    }
    let ready = status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True");
    if ready {
        State::Ready
    } else if phase == "Running" {
        waiting("Running, not ready")
    } else {
        waiting(phase)
    }
}

/// The first terminated container's reason and exit code.
fn last_exit<'a>(statuses: impl Iterator<Item = &'a ContainerStatus>) -> Option<String> {
    statuses
        .filter_map(|c| {
            let t = c.state.as_ref()?.terminated.as_ref()?;
            (t.exit_code != 0).then(|| {
                format!(
                    "container {}: {}, exit code {}",
                    c.name,
                    t.reason.as_deref().unwrap_or("Error"),
                    t.exit_code
                )
            })
        })
        .next()
}

/// A Job: `Complete`, or failed with its `Failed` condition.
fn job(j: &Job) -> State {
    let name = j.metadata.name.as_deref().unwrap_or_default();
    let status = j.status.clone().unwrap_or_default();
    for c in status.conditions.iter().flatten() {
        if c.status != "True" {
            continue;
        }
        match c.type_.as_str() {
            "Complete" => return State::Ready,
            "Failed" => {
                return State::Failed(format!(
                    "job {name:?} failed: {}: {}",
                    c.reason.as_deref().unwrap_or("Failed"),
                    c.message.as_deref().unwrap_or_default()
                ));
            }
            _ => {}
        }
    }
    let want = j.spec.as_ref().and_then(|s| s.completions).unwrap_or(1);
    waiting(format!(
        "{}/{want} succeeded, {} active",
        status.succeeded.unwrap_or(0),
        status.active.unwrap_or(0)
    ))
}

/// A claim: Bound, or left Pending on purpose by a `WaitForFirstConsumer` class.
fn claim(c: &PersistentVolumeClaim, classes: Option<&[StorageClass]>) -> State {
    let phase = c
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("Pending");
    match phase {
        "Bound" => return State::Ready,
        "Lost" => return State::Failed("claim lost its volume".into()),
        _ => {}
    }
    let waits_for_consumer = classes
        .and_then(|classes| claim_class(c, classes))
        .is_some_and(|class| class.volume_binding_mode.as_deref() == Some("WaitForFirstConsumer"));
    if waits_for_consumer {
        State::Ready
    } else {
        waiting(phase)
    }
}

/// The claim's StorageClass: the named one, or the default when it names none.
fn claim_class<'a>(
    c: &PersistentVolumeClaim,
    classes: &'a [StorageClass],
) -> Option<&'a StorageClass> {
    match c
        .spec
        .as_ref()
        .and_then(|s| s.storage_class_name.as_deref())
    {
        Some(name) => classes
            .iter()
            .find(|s| s.metadata.name.as_deref() == Some(name)),
        None => classes.iter().find(|s| is_default_class(s)),
    }
}

fn is_default_class(class: &StorageClass) -> bool {
    class.metadata.annotations.as_ref().is_some_and(|a| {
        a.get("storageclass.kubernetes.io/is-default-class")
            .is_some_and(|v| v == "true")
    })
}

/// A Service with a selector: ready once one of its EndpointSlices has a ready
/// endpoint. Without a selector (endpoints managed by hand) or as an ExternalName
/// there is nothing to wait for.
fn service(s: &Service, slices: &[EndpointSlice]) -> State {
    let spec = s.spec.clone().unwrap_or_default();
    if spec.type_.as_deref() == Some("ExternalName") || spec.selector.is_none_or(|s| s.is_empty()) {
        return State::Ready;
    }
    let ready = slices
        .iter()
        .flat_map(|s| &s.endpoints)
        .any(|e| e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true));
    if ready {
        State::Ready
    } else {
        waiting("no ready endpoints")
    }
}

/// A CRD by `Established` (failed when its names are refused), a custom resource by
/// its `Ready` condition when it has one.
fn by_condition(rule: Rule, object: &Value) -> State {
    let conditions = object["status"]["conditions"].as_array();
    let find = |t: &str| {
        conditions
            .into_iter()
            .flatten()
            .find(|c| c["type"].as_str() == Some(t))
    };
    let said = |c: &Value| {
        let reason = c["reason"].as_str().unwrap_or_default();
        let message = c["message"].as_str().unwrap_or_default();
        [reason, message]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(": ")
    };
    if rule == Rule::CustomResourceDefinition {
        if let Some(c) = find("NamesAccepted").filter(|c| c["status"] == "False") {
            return State::Failed(format!("names not accepted: {}", said(c)));
        }
        return match find("Established") {
            Some(c) if c["status"] == "True" => State::Ready,
            _ => waiting("not yet Established"),
        };
    }
    match find("Ready") {
        None => State::Ready,
        Some(c) if c["status"] == "True" => State::Ready,
        Some(c) => waiting(format!(
            "Ready={}: {}",
            c["status"].as_str().unwrap_or("Unknown"),
            said(c)
        )),
    }
}

/// The selector of the pods a workload makes (`None` for other kinds, or a selector
/// that cannot be read).
pub fn pod_selector(rule: Rule, object: &Value) -> Option<Selector> {
    let selector = &object["spec"]["selector"];
    if rule == Rule::ReplicationController {
        // An RC's selector is a plain map (defaulted from the template's labels).
        let labels = selector
            .as_object()
            .filter(|m| !m.is_empty())
            .or_else(|| object["spec"]["template"]["metadata"]["labels"].as_object())?;
        return Some(
            labels
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect(),
        );
    }
    if !rule.has_pods() {
        return None;
    }
    let selector: LabelSelector = serde_json::from_value(selector.clone()).ok()?;
    Selector::try_from(selector).ok()
}

/// Whether `pod` is one of the pods `selector` picks.
pub fn selects(selector: &Selector, pod: &Pod) -> bool {
    let empty = BTreeMap::new();
    selector.matches(pod.metadata.labels.as_ref().unwrap_or(&empty))
}

/// Why one object waits: `events` are the Warning events about it (by its uid; none
/// when the user may not list them), `pods` its pods.
pub fn causes(
    rule: Rule,
    object: &Value,
    pods: &[&Pod],
    events: &[&Event],
    storage_classes: Option<&[StorageClass]>,
) -> Vec<Cause> {
    let group = object["apiVersion"]
        .as_str()
        .and_then(|v| v.split_once('/'))
        .map_or("", |(g, _)| g);
    let kind = object["kind"].as_str().unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let controller = display_name(group, kind, "");
    let controller = controller.trim_end_matches('/');
    let events: Vec<Event> = events.iter().map(|e| (*e).clone()).collect();
    let mut causes = match rule {
        // The Deployment carries its ReplicaSet's `ReplicaFailure` condition.
        Rule::Deployment | Rule::ReplicaSet | Rule::ReplicationController => {
            let conditions = conditions_of(object);
            let conditions: Vec<Condition<'_>> = conditions
                .iter()
                .map(|(t, s, r, m)| (t.as_str(), s.as_str(), r.as_deref(), m.as_deref()))
                .collect();
            controller_causes(controller, name, &conditions, &events)
        }
        // No condition: their controllers only post `FailedCreate` events.
        Rule::StatefulSet | Rule::DaemonSet | Rule::Job => {
            let failed = events
                .iter()
                .any(|e| e.reason.as_deref() == Some("FailedCreate"));
            let condition: [Condition<'_>; 1] =
                [("ReplicaFailure", "True", Some("FailedCreate"), None)];
            let conditions: &[Condition<'_>] = if failed { &condition } else { &[] };
            controller_causes(controller, name, conditions, &events)
        }
        Rule::PersistentVolumeClaim => claim_causes(object, &events, storage_classes),
        Rule::Service => service_causes(object, &events),
        _ => Vec::new(),
    };
    if rule == Rule::Job {
        causes.extend(failed_pods(&display_name(group, kind, name), pods));
    }
    causes.extend(pod_causes(pods.iter().copied()));
    causes
}

/// A controller's conditions as owned `(type, status, reason, message)`.
fn conditions_of(object: &Value) -> Vec<(String, String, Option<String>, Option<String>)> {
    let text = |c: &Value, f: &str| c[f].as_str().map(str::to_string);
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                text(c, "type").unwrap_or_default(),
                text(c, "status").unwrap_or_default(),
                text(c, "reason"),
                text(c, "message"),
            )
        })
        .collect()
}

/// A Job's failed pods: how many, and how the newest by name ended.
fn failed_pods(job: &str, pods: &[&Pod]) -> Option<Cause> {
    let failed: Vec<&&Pod> = pods
        .iter()
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Failed"))
        .collect();
    let last = failed.iter().max_by_key(|p| p.metadata.name.clone())?;
    let how = last
        .status
        .as_ref()
        .and_then(|s| last_exit(s.container_statuses.iter().flatten()))
        .unwrap_or_else(|| "failed".into());
    Some(Cause::new(
        job.to_string(),
        format!(
            "{} failed pod(s), the last: pod/{} {how}",
            failed.len(),
            last.metadata.name.as_deref().unwrap_or_default()
        ),
        false,
        format!("failed-pods/{job}"),
        failed.len().to_string(),
    ))
}

/// A claim that waits for a volume: the newest Warning event about it
/// (`ProvisioningFailed`, `FailedBinding`), or without events, what the classes say.
fn claim_causes(object: &Value, events: &[Event], classes: Option<&[StorageClass]>) -> Vec<Cause> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let object_name = format!("persistentvolumeclaim/{name}");
    let text = match newest_warning(events) {
        Some(text) => text,
        None => {
            let Some(classes) = classes else {
                return Vec::new();
            };
            let claim: PersistentVolumeClaim = match objects::from_value(object) {
                Ok(c) => c,
                Err(_) => return Vec::new(),
            };
            let named = claim
                .spec
                .as_ref()
                .and_then(|s| s.storage_class_name.clone());
            match (named, claim_class(&claim, classes)) {
                // The PV controller's words (its `FailedBinding` event).
                (None, None) => {
                    "no persistent volumes available for this claim and no storage class is set"
                        .to_string()
                }
                (Some(n), None) if !n.is_empty() => {
                    format!("storageclass.storage.k8s.io {n:?} not found")
                }
                (_, Some(class)) if class.provisioner == "kubernetes.io/no-provisioner" => format!(
                    "storage class {:?} has no provisioner: waiting for a matching PersistentVolume",
                    class.metadata.name.as_deref().unwrap_or_default()
                ),
                _ => return Vec::new(),
            }
        }
    };
    vec![Cause::new(
        object_name.clone(),
        text.clone(),
        false,
        format!("claim/{object_name}"),
        text,
    )]
}

/// The newest Warning event's reason and message.
fn newest_warning(events: &[Event]) -> Option<String> {
    let newest = events.iter().max_by_key(|e| {
        e.last_timestamp
            .as_ref()
            .map(|t| t.0.to_string())
            .unwrap_or_default()
    })?;
    Some(format!(
        "{}: {}",
        newest.reason.as_deref().unwrap_or("Warning"),
        newest.message.as_deref().unwrap_or_default()
    ))
}

/// A Service without ready endpoints: what its Warning events say (the EndpointSlice
/// controller's `FailedToUpdateEndpointSlices`, for one), once per cause: the
/// controller words one failure again with its endpoints in another order and another
/// slice's generated name ([`signature::order_free`]).
fn service_causes(object: &Value, events: &[Event]) -> Vec<Cause> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let object_name = format!("service/{name}");
    newest_warning(events)
        .map(|text| {
            let signature = signature::order_free(&text, name);
            Cause::new(
                object_name.clone(),
                text,
                false,
                format!("service/{object_name}"),
                signature,
            )
        })
        .into_iter()
        .collect()
}

/// Pull failures counted per container across watch updates: the kubelet shows
/// `ErrImagePull` after each failed pull and `ImagePullBackOff` between pulls, so
/// each new `ErrImagePull` after another state is one more failed pull.
#[derive(Debug, Default, Clone)]
pub struct PullFailures {
    /// Pod uid and container → (the last reason seen, the error, pulls failed with it).
    seen: BTreeMap<(String, String), (String, String, u32)>,
}

impl PullFailures {
    /// Notes what `pod` shows now.
    pub fn observe(&mut self, pod: &Pod) {
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let statuses = pod.status.iter().flat_map(|s| {
            s.init_container_statuses
                .iter()
                .flatten()
                .chain(s.container_statuses.iter().flatten())
        });
        for c in statuses {
            let waiting = c.state.as_ref().and_then(|s| s.waiting.as_ref());
            let reason = waiting.and_then(|w| w.reason.clone()).unwrap_or_default();
            let key = (uid.clone(), c.name.clone());
            let entry = self.seen.entry(key).or_default();
            if reason == "ErrImagePull" && entry.0 != "ErrImagePull" {
                let error = waiting.and_then(|w| w.message.clone()).unwrap_or_default();
                entry.2 = if entry.1 == error { entry.2 + 1 } else { 1 };
                entry.1 = error;
            } else if c.state.as_ref().is_some_and(|s| s.running.is_some()) {
                // Pulled: the count starts again.
                entry.1.clear();
                entry.2 = 0;
            }
            entry.0 = reason;
        }
    }

    fn failed(&self, uid: &str, container: &str) -> u32 {
        self.seen
            .get(&(uid.to_string(), container.to_string()))
            .map_or(0, |e| e.2)
    }
}

/// Whether a pull error says the image is not there (the registry answered, and
/// said no): krane's rule, final at the first pull.
fn image_not_found(message: &str) -> bool {
    let m = message.to_lowercase();
    m.contains(": not found")
        || m.contains("manifest unknown")
        || m.contains("repository does not exist")
}

/// Why `pod` will never run, if it will not.
pub fn pod_doom(pod: &Pod, pulls: &PullFailures) -> Option<String> {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    let status = pod.status.as_ref()?;
    let containers = status
        .init_container_statuses
        .iter()
        .flatten()
        .chain(status.container_statuses.iter().flatten());
    for c in containers {
        let Some(w) = c.state.as_ref().and_then(|s| s.waiting.as_ref()) else {
            continue;
        };
        let reason = w.reason.as_deref().unwrap_or_default();
        let message = w.message.as_deref().unwrap_or_default();
        let said = format!("pod/{name} container {}: {reason}: {message}", c.name);
        let pull = matches!(reason, "ErrImagePull" | "ImagePullBackOff");
        if reason == "InvalidImageName" || (pull && image_not_found(message)) {
            return Some(said);
        }
        let failed = pulls.failed(uid, &c.name);
        if pull && failed >= PULLS_BEFORE_DOOM {
            return Some(format!("{said} ({failed} pulls failed)"));
        }
        if reason == "CrashLoopBackOff" && c.restart_count >= RESTARTS_BEFORE_DOOM {
            let last = c
                .last_state
                .as_ref()
                .and_then(|s| s.terminated.as_ref())
                .map(|t| format!(", last exit code {}", t.exit_code))
                .unwrap_or_default();
            return Some(format!(
                "pod/{name} container {}: crash loop, restarted {} times{last}",
                c.name, c.restart_count
            ));
        }
    }
    None
}

/// Why an object will never be ready, if it will not: a cause that cannot fix
/// itself, or all of its pods doomed (a Pod: itself).
pub fn doom(causes: &[Cause], pods: &[&Pod], pulls: &PullFailures) -> Option<String> {
    if let Some(c) = causes.iter().find(|c| c.permanent) {
        return Some(format!("{} {}", c.object, c.text));
    }
    let live: Vec<&&Pod> = pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect();
    let mut first = None;
    for pod in &live {
        match pod_doom(pod, pulls) {
            Some(why) => {
                first.get_or_insert(why);
            }
            None => return None,
        }
    }
    first
}

mod signature;

#[cfg(test)]
mod tests;
