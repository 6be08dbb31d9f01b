//! The readers against k8s-openapi's decoders: the same verdict and the same words
//! on every field read here, whatever is wrong with it, and the same values.

use k8s_openapi::api::{apps::v1 as apps, batch::v1 as batch};
use k8s_openapi::api::{discovery::v1 as discovery, storage::v1 as storage};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::*;

/// What a field may wrongly hold: each JSON type, numbers out of `i32`'s range and
/// with a fraction, a list with a `null` in it, a map where a scalar belongs.
fn wrong() -> Vec<Value> {
    vec![
        json!(null),
        json!(true),
        json!(-1),
        json!(3_000_000_000_u64),
        json!(-3_000_000_000_i64),
        json!(1.5),
        json!("x"),
        json!("2026-12-07T06:00:00Z"),
        json!([]),
        json!([null]),
        json!(["x"]),
        json!({}),
        json!({"a": 1}),
    ]
}

/// Every place in `value`: the paths to its values, the root included.
fn places(value: &Value, at: Vec<PlaceStep>, out: &mut Vec<Vec<PlaceStep>>) {
    out.push(at.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let mut next = at.clone();
                next.push(PlaceStep::Key(k.clone()));
                places(v, next, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let mut next = at.clone();
                next.push(PlaceStep::Index(i));
                places(v, next, out);
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug, PartialEq)]
enum PlaceStep {
    Key(String),
    Index(usize),
}

fn replaced(value: &Value, path: &[PlaceStep], with: &Value) -> Value {
    let mut out = value.clone();
    let mut at = &mut out;
    for step in path {
        at = match step {
            PlaceStep::Key(k) => &mut at[k.as_str()],
            PlaceStep::Index(i) => &mut at[*i],
        };
    }
    *at = with.clone();
    out
}

fn verdicts<T: Kind, K: DeserializeOwned>(
    value: &Value,
) -> (Result<(), String>, Result<(), String>) {
    let ours = from_value::<T>(value).map(drop).map_err(|e| e.to_string());
    let theirs = serde_json::from_value::<K>(value.clone())
        .map(drop)
        .map_err(|e| e.to_string());
    (ours, theirs)
}

/// `fixture` holds only fields read here: every one of its values replaced by each
/// wrong value, and every two of them by a string, must fail (or not) as the model.
fn reads_as<T: Kind, K: DeserializeOwned>(fixture: Value) {
    let (ours, theirs) = verdicts::<T, K>(&fixture);
    assert!(
        ours.is_ok() && theirs.is_ok(),
        "{fixture}: {ours:?} {theirs:?}"
    );
    let mut all = Vec::new();
    places(&fixture, Vec::new(), &mut all);
    let mut failures = 0;
    for path in &all {
        for with in wrong() {
            let value = replaced(&fixture, path, &with);
            let (ours, theirs) = verdicts::<T, K>(&value);
            assert_eq!(ours, theirs, "{value}");
            failures += usize::from(ours.is_err());
        }
    }
    // The first bad field in key order is the one named.
    for a in &all {
        // Not inside the place already replaced.
        for b in all.iter().filter(|b| !b.starts_with(a)) {
            let value = replaced(&replaced(&fixture, a, &json!("x")), b, &json!(7));
            let (ours, theirs) = verdicts::<T, K>(&value);
            assert_eq!(ours, theirs, "{value}");
        }
    }
    assert!(
        failures > all.len(),
        "the mutations found errors to compare"
    );
}

fn meta() -> Value {
    json!({
        "name": "web", "uid": "1234", "generation": 2,
        "labels": {"app": "web"}, "annotations": {"note": "yes"},
        "deletionTimestamp": "2026-12-07T06:00:00Z",
    })
}

#[test]
fn workloads_read_as_their_models() {
    reads_as::<Deployment, apps::Deployment>(json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(),
        "spec": {"replicas": 3},
        "status": {
            "availableReplicas": 1, "observedGeneration": 2, "replicas": 3, "updatedReplicas": 3,
            "conditions": [{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": "m"}],
        },
    }));
    reads_as::<StatefulSet, apps::StatefulSet>(json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta(),
        "spec": {"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}},
        "status": {
            "currentRevision": "a", "updateRevision": "b", "observedGeneration": 2,
            "readyReplicas": 2, "updatedReplicas": 1,
        },
    }));
    reads_as::<DaemonSet, apps::DaemonSet>(json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta(),
        "spec": {"updateStrategy": {"type": "OnDelete"}},
        "status": {
            "desiredNumberScheduled": 2, "numberAvailable": 1, "observedGeneration": 2,
            "updatedNumberScheduled": 1,
        },
    }));
    reads_as::<ReplicaSet, apps::ReplicaSet>(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta(),
        "spec": {"replicas": 2}, "status": {"observedGeneration": 2, "readyReplicas": 1},
    }));
    reads_as::<ReplicationController, typed::ReplicationController>(json!({
        "apiVersion": "v1", "kind": "ReplicationController", "metadata": meta(),
        "spec": {"replicas": 2}, "status": {"observedGeneration": 2, "readyReplicas": 1},
    }));
    reads_as::<Job, batch::Job>(json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": meta(),
        "spec": {"completions": 2},
        "status": {
            "active": 1, "succeeded": 1,
            "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "m"}],
        },
    }));
}

#[test]
fn claims_services_and_their_relations_read_as_their_models() {
    reads_as::<PersistentVolumeClaim, typed::PersistentVolumeClaim>(json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta(),
        "spec": {"storageClassName": "fast"}, "status": {"phase": "Pending"},
    }));
    reads_as::<Service, typed::Service>(json!({
        "apiVersion": "v1", "kind": "Service", "metadata": meta(),
        "spec": {"type": "ClusterIP", "selector": {"app": "web"}},
    }));
    reads_as::<EndpointSlice, discovery::EndpointSlice>(json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": meta(),
        "endpoints": [{"conditions": {"ready": true}}, {"conditions": {"ready": false}}],
    }));
    reads_as::<StorageClass, storage::StorageClass>(json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta(),
        "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer",
    }));
}

fn pod() -> Value {
    let container = |name: &str| {
        json!({
            "name": name, "image": "busybox", "restartCount": 4,
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
            "lastState": {
                "terminated": {"exitCode": 1, "reason": "Error"},
                "running": {"startedAt": "2026-12-07T06:00:00Z"},
            },
        })
    };
    json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": meta(),
        "status": {
            "phase": "Running", "message": "m", "reason": "r",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes"}],
            "containerStatuses": [container("web")],
            "initContainerStatuses": [container("init")],
        },
    })
}

fn event() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event", "metadata": meta(),
        "involvedObject": {"uid": "5678"},
        "reason": "FailedCreate", "message": "Error creating: m",
        "eventTime": "2026-12-07T06:00:01.123456Z",
        "firstTimestamp": "2026-12-07T06:00:00Z", "lastTimestamp": "2026-12-07T06:00:02Z",
        "series": {"lastObservedTime": "2026-12-07T06:00:03.000001Z"},
    })
}

#[test]
fn pods_and_events_read_as_their_models() {
    reads_as::<Pod, typed::Pod>(pod());
    reads_as::<Event, typed::Event>(event());
}

/// What rolling-update converts is what create-file reads.
#[test]
fn converted_models_are_the_objects_read() {
    let model: typed::Event = serde_json::from_value(event()).expect("event");
    assert_eq!(
        Event::from(&model),
        from_value::<Event>(&event()).expect("event")
    );
    // Every field of the fixtures was read.
    let pod = from_value::<Pod>(&pod()).expect("pod");
    let status = pod.status.expect("status");
    let web = &status.container_statuses.expect("statuses")[0];
    assert_eq!(web.restart_count, 4);
    let last = web.last_state.as_ref().expect("last state");
    assert_eq!(last.terminated.as_ref().map(|t| t.exit_code), Some(1));
    assert!(
        last.running
            .as_ref()
            .and_then(|r| r.started_at.as_ref())
            .is_some()
    );
    assert_eq!(pod.metadata.labels.expect("labels")["app"], "web");
    assert!(pod.metadata.deletion_timestamp.is_some());
}

/// An object of another group-version fails as the model failed it: an old
/// server's `extensions/v1beta1` DaemonSet was never read as `apps/v1`.
#[test]
fn another_api_version_is_refused_in_the_models_words() {
    let old =
        json!({"apiVersion": "extensions/v1beta1", "kind": "DaemonSet", "metadata": {"name": "d"}});
    let err = from_value::<DaemonSet>(&old).expect_err("another version");
    assert_eq!(
        err.to_string(),
        "invalid value: string \"extensions/v1beta1\", expected apps/v1"
    );
    // A list's items carry neither: read alike.
    let item = json!({"metadata": {"name": "d"}, "status": {"desiredNumberScheduled": 1}});
    let read = from_value::<DaemonSet>(&item).expect("an item");
    assert_eq!(read.status.map(|s| s.desired_number_scheduled), Some(1));
}
