//! The API objects as the rules read them: of each kind, only the fields that
//! [`crate::readiness`] and [`crate::waiting`] look at, named and typed as in
//! k8s-openapi's models, read from the JSON a watch or a list gave ([`from_value`]).
//!
//! Why not k8s-openapi's models themselves: a model's decoder decodes all of it (a
//! Pod's spec with its volumes, a StatefulSet's pod template and claim templates),
//! about a quarter of a megabyte of create-file's binary for a handful of status
//! fields (docs/binary-size.md). The readers fail as those decoders do on the fields
//! read here (serde_json's error, at the first bad one in key order, and on an
//! `apiVersion` or `kind` of another type), so a rule that cannot read an object
//! says the same words; the fields not read here are not checked.
//!
//! run-pod and rolling-update read their pods as JSON too (run-pod through
//! [`from_value`], rolling-update from its own Pod model, which keeps the pod's JSON);
//! rolling-update's events are k8s-openapi's `Event`, which converts with `From`.

mod read;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as typed;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use read::{Fields, list, object, resource, scalar};
use serde::de::DeserializeOwned;
use serde_json::{Error, Value};

/// A kind read here.
pub trait Kind: Sized {
    /// `apps/v1`.
    const API_VERSION: &'static str;
    /// `Deployment`.
    const KIND: &'static str;

    /// Reads an object of this kind (see [`from_value`]).
    fn read(value: &Value) -> Result<Self, Error>;
}

/// Reads an object of kind `T` from `value`, or fails in k8s-openapi's words.
pub fn from_value<T: Kind>(value: &Value) -> Result<T, Error> {
    T::read(value)
}

/// A required field of k8s-openapi's: absent or `null` is its default.
fn required<T: DeserializeOwned + Default>(value: &Value) -> Result<T, Error> {
    Ok(scalar::<Option<T>>(value)?.unwrap_or_default())
}

/// An optional struct, `name` in errors.
fn one<T: Fields>(name: &'static str) -> impl Fn(&Value) -> Result<Option<T>, Error> {
    move |value| object(value, name)
}

/// An optional list of structs, `name` in errors.
fn many<T: Fields>(name: &'static str) -> impl Fn(&Value) -> Result<Option<Vec<T>>, Error> {
    move |value| list(value, name)
}

/// `metadata`, of every kind.
fn meta(value: &Value) -> Result<ObjectMeta, Error> {
    Ok(object(value, "ObjectMeta")?.unwrap_or_default())
}

/// An EndpointSlice's `endpoints` (required).
fn endpoints(value: &Value) -> Result<Vec<Endpoint>, Error> {
    Ok(list(value, "Endpoint")?.unwrap_or_default())
}

/// An Event's `involvedObject` (required).
fn involved_object(value: &Value) -> Result<ObjectReference, Error> {
    Ok(object(value, "ObjectReference")?.unwrap_or_default())
}

/// A model: the struct, and the reader of its fields by their JSON keys.
macro_rules! model {
    (
        $(#[$meta:meta])*
        $name:ident { $($key:literal => $field:ident: $ty:ty = $read:expr,)* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            $(pub $field: $ty,)*
        }

        impl Fields for $name {
            fn field(&mut self, key: &str, value: &Value) -> Result<(), Error> {
                match key {
                    $($key => self.$field = ($read)(value)?,)*
                    _ => {}
                }
                Ok(())
            }
        }
    };
}

/// A resource: a model with its `apiVersion` and `kind`.
macro_rules! resource {
    (
        $(#[$meta:meta])*
        $name:ident ($api_version:literal) { $($body:tt)* }
    ) => {
        model! { $(#[$meta])* $name { $($body)* } }

        impl Kind for $name {
            const API_VERSION: &'static str = $api_version;
            const KIND: &'static str = stringify!($name);

            fn read(value: &Value) -> Result<Self, Error> {
                resource(value, Self::API_VERSION, Self::KIND)
            }
        }
    };
}

model! {
    /// `metadata`: what the rules and the callers read of it.
    ObjectMeta {
        "annotations" => annotations: Option<BTreeMap<String, String>> = scalar,
        "deletionTimestamp" => deletion_timestamp: Option<Time> = scalar,
        "generation" => generation: Option<i64> = scalar,
        "labels" => labels: Option<BTreeMap<String, String>> = scalar,
        "name" => name: Option<String> = scalar,
        "uid" => uid: Option<String> = scalar,
    }
}

/// A condition's `(type, status, reason, message)`, of every kind read here: the
/// macro below declares one struct per k8s-openapi model, for its name in errors.
macro_rules! condition {
    ($(#[$meta:meta])* $name:ident) => {
        model! {
            $(#[$meta])*
            $name {
                "message" => message: Option<String> = scalar,
                "reason" => reason: Option<String> = scalar,
                "status" => status: String = required,
                "type" => type_: String = required,
            }
        }
    };
}

resource! {
    /// `apps/v1` Deployment: `rollout status`'s fields.
    Deployment ("apps/v1") {
        "metadata" => metadata: ObjectMeta = meta,
        "spec" => spec: Option<DeploymentSpec> = one("DeploymentSpec"),
        "status" => status: Option<DeploymentStatus> = one("DeploymentStatus"),
    }
}

model! {
    DeploymentSpec {
        "replicas" => replicas: Option<i32> = scalar,
    }
}

model! {
    DeploymentStatus {
        "availableReplicas" => available_replicas: Option<i32> = scalar,
        "conditions" => conditions: Option<Vec<DeploymentCondition>> = many("DeploymentCondition"),
        "observedGeneration" => observed_generation: Option<i64> = scalar,
        "replicas" => replicas: Option<i32> = scalar,
        "updatedReplicas" => updated_replicas: Option<i32> = scalar,
    }
}

condition!(DeploymentCondition);

resource! {
    /// `apps/v1` StatefulSet.
    StatefulSet ("apps/v1") {
        "metadata" => metadata: ObjectMeta = meta,
        "spec" => spec: Option<StatefulSetSpec> = one("StatefulSetSpec"),
        "status" => status: Option<StatefulSetStatus> = one("StatefulSetStatus"),
    }
}

model! {
    StatefulSetSpec {
        "replicas" => replicas: Option<i32> = scalar,
        "updateStrategy" => update_strategy: Option<StatefulSetUpdateStrategy> = one("StatefulSetUpdateStrategy"),
    }
}

model! {
    StatefulSetUpdateStrategy {
        "rollingUpdate" => rolling_update: Option<RollingUpdateStatefulSetStrategy> = one("RollingUpdateStatefulSetStrategy"),
        "type" => type_: Option<String> = scalar,
    }
}

model! {
    RollingUpdateStatefulSetStrategy {
        "partition" => partition: Option<i32> = scalar,
    }
}

model! {
    StatefulSetStatus {
        "currentRevision" => current_revision: Option<String> = scalar,
        "observedGeneration" => observed_generation: Option<i64> = scalar,
        "readyReplicas" => ready_replicas: Option<i32> = scalar,
        "updateRevision" => update_revision: Option<String> = scalar,
        "updatedReplicas" => updated_replicas: Option<i32> = scalar,
    }
}

resource! {
    /// `apps/v1` DaemonSet.
    DaemonSet ("apps/v1") {
        "metadata" => metadata: ObjectMeta = meta,
        "spec" => spec: Option<DaemonSetSpec> = one("DaemonSetSpec"),
        "status" => status: Option<DaemonSetStatus> = one("DaemonSetStatus"),
    }
}

model! {
    DaemonSetSpec {
        "updateStrategy" => update_strategy: Option<DaemonSetUpdateStrategy> = one("DaemonSetUpdateStrategy"),
    }
}

model! {
    DaemonSetUpdateStrategy {
        "type" => type_: Option<String> = scalar,
    }
}

model! {
    DaemonSetStatus {
        "desiredNumberScheduled" => desired_number_scheduled: i32 = required,
        "numberAvailable" => number_available: Option<i32> = scalar,
        "observedGeneration" => observed_generation: Option<i64> = scalar,
        "updatedNumberScheduled" => updated_number_scheduled: Option<i32> = scalar,
    }
}

resource! {
    /// `apps/v1` ReplicaSet.
    ReplicaSet ("apps/v1") {
        "metadata" => metadata: ObjectMeta = meta,
        "spec" => spec: Option<ReplicaSetSpec> = one("ReplicaSetSpec"),
        "status" => status: Option<ReplicaSetStatus> = one("ReplicaSetStatus"),
    }
}

model! {
    ReplicaSetSpec {
        "replicas" => replicas: Option<i32> = scalar,
    }
}

model! {
    ReplicaSetStatus {
        "observedGeneration" => observed_generation: Option<i64> = scalar,
        "readyReplicas" => ready_replicas: Option<i32> = scalar,
    }
}

resource! {
    /// `v1` ReplicationController.
    ReplicationController ("v1") {
        "metadata" => metadata: ObjectMeta = meta,
        "spec" => spec: Option<ReplicationControllerSpec> = one("ReplicationControllerSpec"),
        "status" => status: Option<ReplicationControllerStatus> = one("ReplicationControllerStatus"),
    }
}

model! {
    ReplicationControllerSpec {
        "replicas" => replicas: Option<i32> = scalar,
    }
}

model! {
    ReplicationControllerStatus {
        "observedGeneration" => observed_generation: Option<i64> = scalar,
        "readyReplicas" => ready_replicas: Option<i32> = scalar,
    }
}

resource! {
    /// `batch/v1` Job.
    Job ("batch/v1") {
        "metadata" => metadata: ObjectMeta = meta,
        "spec" => spec: Option<JobSpec> = one("JobSpec"),
        "status" => status: Option<JobStatus> = one("JobStatus"),
    }
}

model! {
    JobSpec {
        "completions" => completions: Option<i32> = scalar,
    }
}

model! {
    JobStatus {
        "active" => active: Option<i32> = scalar,
        "conditions" => conditions: Option<Vec<JobCondition>> = many("JobCondition"),
        "succeeded" => succeeded: Option<i32> = scalar,
    }
}

condition!(JobCondition);

resource! {
    /// `v1` PersistentVolumeClaim.
    PersistentVolumeClaim ("v1") {
        "metadata" => metadata: ObjectMeta = meta,
        "spec" => spec: Option<PersistentVolumeClaimSpec> = one("PersistentVolumeClaimSpec"),
        "status" => status: Option<PersistentVolumeClaimStatus> = one("PersistentVolumeClaimStatus"),
    }
}

model! {
    PersistentVolumeClaimSpec {
        "storageClassName" => storage_class_name: Option<String> = scalar,
    }
}

model! {
    PersistentVolumeClaimStatus {
        "phase" => phase: Option<String> = scalar,
    }
}

resource! {
    /// `v1` Service.
    Service ("v1") {
        "metadata" => metadata: ObjectMeta = meta,
        "spec" => spec: Option<ServiceSpec> = one("ServiceSpec"),
    }
}

model! {
    ServiceSpec {
        "selector" => selector: Option<BTreeMap<String, String>> = scalar,
        "type" => type_: Option<String> = scalar,
    }
}

resource! {
    /// `discovery.k8s.io/v1` EndpointSlice (a v1beta1 one is read as v1 by its
    /// caller: the fields read here are the same).
    EndpointSlice ("discovery.k8s.io/v1") {
        "endpoints" => endpoints: Vec<Endpoint> = endpoints,
        "metadata" => metadata: ObjectMeta = meta,
    }
}

model! {
    Endpoint {
        "conditions" => conditions: Option<EndpointConditions> = one("EndpointConditions"),
    }
}

model! {
    EndpointConditions {
        "ready" => ready: Option<bool> = scalar,
    }
}

resource! {
    /// `storage.k8s.io/v1` StorageClass.
    StorageClass ("storage.k8s.io/v1") {
        "metadata" => metadata: ObjectMeta = meta,
        "provisioner" => provisioner: String = required,
        "volumeBindingMode" => volume_binding_mode: Option<String> = scalar,
    }
}

resource! {
    /// `v1` Pod: its status, the causes' source.
    Pod ("v1") {
        "metadata" => metadata: ObjectMeta = meta,
        "status" => status: Option<PodStatus> = one("PodStatus"),
    }
}

model! {
    PodStatus {
        "conditions" => conditions: Option<Vec<PodCondition>> = many("PodCondition"),
        "containerStatuses" => container_statuses: Option<Vec<ContainerStatus>> = many("ContainerStatus"),
        "initContainerStatuses" => init_container_statuses: Option<Vec<ContainerStatus>> = many("ContainerStatus"),
        "message" => message: Option<String> = scalar,
        "phase" => phase: Option<String> = scalar,
        "reason" => reason: Option<String> = scalar,
    }
}

condition!(PodCondition);

model! {
    ContainerStatus {
        "image" => image: String = required,
        "lastState" => last_state: Option<ContainerState> = one("ContainerState"),
        "name" => name: String = required,
        "restartCount" => restart_count: i32 = required,
        "state" => state: Option<ContainerState> = one("ContainerState"),
    }
}

model! {
    ContainerState {
        "running" => running: Option<ContainerStateRunning> = one("ContainerStateRunning"),
        "terminated" => terminated: Option<ContainerStateTerminated> = one("ContainerStateTerminated"),
        "waiting" => waiting: Option<ContainerStateWaiting> = one("ContainerStateWaiting"),
    }
}

model! {
    ContainerStateRunning {
        "startedAt" => started_at: Option<Time> = scalar,
    }
}

model! {
    ContainerStateTerminated {
        "exitCode" => exit_code: i32 = required,
        "reason" => reason: Option<String> = scalar,
    }
}

model! {
    ContainerStateWaiting {
        "message" => message: Option<String> = scalar,
        "reason" => reason: Option<String> = scalar,
    }
}

resource! {
    /// `v1` Event: what it says, about what, and when.
    Event ("v1") {
        "eventTime" => event_time: Option<MicroTime> = scalar,
        "firstTimestamp" => first_timestamp: Option<Time> = scalar,
        "involvedObject" => involved_object: ObjectReference = involved_object,
        "lastTimestamp" => last_timestamp: Option<Time> = scalar,
        "message" => message: Option<String> = scalar,
        "metadata" => metadata: ObjectMeta = meta,
        "reason" => reason: Option<String> = scalar,
        "series" => series: Option<EventSeries> = one("EventSeries"),
    }
}

model! {
    ObjectReference {
        "uid" => uid: Option<String> = scalar,
    }
}

model! {
    EventSeries {
        "lastObservedTime" => last_observed_time: Option<MicroTime> = scalar,
    }
}

// rolling-update's events, listed as k8s-openapi's `Event`.

impl From<&k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta> for ObjectMeta {
    fn from(m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Self {
        ObjectMeta {
            annotations: m.annotations.clone(),
            deletion_timestamp: m.deletion_timestamp.clone(),
            generation: m.generation,
            labels: m.labels.clone(),
            name: m.name.clone(),
            uid: m.uid.clone(),
        }
    }
}

impl From<&typed::Event> for Event {
    fn from(e: &typed::Event) -> Self {
        Event {
            event_time: e.event_time.clone(),
            first_timestamp: e.first_timestamp.clone(),
            involved_object: ObjectReference {
                uid: e.involved_object.uid.clone(),
            },
            last_timestamp: e.last_timestamp.clone(),
            message: e.message.clone(),
            metadata: (&e.metadata).into(),
            reason: e.reason.clone(),
            series: e.series.as_ref().map(|s| EventSeries {
                last_observed_time: s.last_observed_time.clone(),
            }),
        }
    }
}

#[cfg(test)]
mod tests;
