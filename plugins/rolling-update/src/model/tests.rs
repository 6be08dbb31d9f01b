//! The models keep what they do not declare, and encode as k8s-openapi's did.

use serde_json::json;

use super::replication_controller::{
    PodSpec, PodTemplateSpec, ReplicationControllerSpec, ReplicationControllerStatus,
};
use super::*;
use crate::controller::{NewControllerConfig, new_controller_from_current};

/// A server's RC with members no model of this crate declares, at the top level, in
/// the spec, in the template and its pod spec, in a container and in the status.
fn rc_with_unknown_members() -> serde_json::Value {
    json!({
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "web", "uid": "u1", "resourceVersion": "7"},
        "futureTopLevel": {"a": 1},
        "spec": {
            "replicas": 2,
            "minReadySeconds": 5,
            "selector": {"app": "web"},
            "futureSpecField": [1, 2],
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{
                        "name": "web", "image": "nginx:1",
                        "resources": {"limits": {"cpu": "1"}},
                        "futureContainerField": true,
                    }],
                    "volumes": [{"name": "v", "emptyDir": {"medium": "Memory"}}],
                    "futurePodSpecField": {"x": "y"},
                    "hostUsers": false,
                },
            },
        },
        "status": {"replicas": 2, "observedGeneration": 3, "futureStatus": "s"},
    })
}

fn decode<T: serde::de::DeserializeOwned>(value: &serde_json::Value) -> T {
    resources::typed::from_value_as_text(value).expect("decodes")
}

fn encode<T: Serialize>(typed: &T) -> serde_json::Value {
    resources::typed::to_value_as_text(typed).expect("encodes")
}

#[test]
fn an_rc_keeps_unknown_members_through_read_edit_encode() {
    let server = rc_with_unknown_members();
    let rc: ReplicationController = decode(&server);
    assert_eq!(encode(&rc), server, "read and written unchanged");
    let cfg = NewControllerConfig {
        new_name: "web-2".into(),
        image: "nginx:2".into(),
        container: String::new(),
        pull_policy: String::new(),
        deployment_key: "deployment".into(),
    };
    let next = new_controller_from_current(&rc, &cfg).expect("one container");
    let sent = encode(&next);
    let template = &sent["spec"]["template"];
    assert_eq!(template["spec"]["containers"][0]["image"], "nginx:2");
    assert_eq!(
        template["spec"]["containers"][0]["futureContainerField"],
        true
    );
    assert_eq!(template["spec"]["futurePodSpecField"], json!({"x": "y"}));
    assert_eq!(template["spec"]["hostUsers"], false);
    assert_eq!(
        template["spec"]["volumes"],
        server["spec"]["template"]["spec"]["volumes"]
    );
    assert_eq!(sent["spec"]["futureSpecField"], json!([1, 2]));
    assert_eq!(sent["spec"]["minReadySeconds"], 5);
    assert_eq!(sent["futureTopLevel"], json!({"a": 1}));
    assert!(sent.get("status").is_none(), "a create carries no status");
}

#[test]
fn a_pod_keeps_unknown_members_through_read_edit_encode() {
    let server = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-a", "labels": {"app": "web"}},
        "futureTopLevel": 1,
        "spec": {"containers": [{"name": "web", "image": "nginx"}], "futureSpec": {"on": true}},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True",
                            "lastTransitionTime": "2026-12-07T12:00:00Z", "futureCond": 2}],
            "futureStatus": "x",
        },
    });
    let mut pod: Pod = decode(&server);
    assert_eq!(encode(&pod), server, "read and written unchanged");
    pod.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("deployment".into(), "h-orig".into());
    let mut want = server.clone();
    want["metadata"]["labels"]["deployment"] = json!("h-orig");
    assert_eq!(encode(&pod), want, "only the label changed");
    let ready = &pod.status.as_ref().unwrap().conditions.as_ref().unwrap()[0];
    assert_eq!(
        (ready.type_.as_str(), ready.status.as_str()),
        ("Ready", "True")
    );
    assert!(ready.last_transition_time.is_some());
    let status = pod.to_status_object().expect("objectstatus reads it");
    assert_eq!(status.status.unwrap().phase.as_deref(), Some("Running"));
}

/// What k8s-openapi wrote: `apiVersion` and `kind` first, members in key order, the
/// required ones at their default, absent optional ones left out.
#[test]
fn encoded_as_k8s_openapi_did() {
    let rc = ReplicationController {
        metadata: ObjectMeta {
            name: Some("web".into()),
            ..Default::default()
        },
        spec: Some(ReplicationControllerSpec {
            template: Some(PodTemplateSpec {
                spec: Some(PodSpec::default()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: Some(ReplicationControllerStatus::default()),
        ..Default::default()
    };
    assert_eq!(
        serde_json::to_string(&rc).unwrap(),
        r#"{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[]}}},"status":{"replicas":0}}"#
    );
    // Unknown members are merged in key order.
    let mut spec = ReplicationControllerSpec {
        replicas: Some(1),
        ..Default::default()
    };
    spec.rest.insert("minReadySeconds".into(), json!(3));
    spec.rest.insert("zeta".into(), json!(0));
    assert_eq!(
        serde_json::to_string(&spec).unwrap(),
        r#"{"minReadySeconds":3,"replicas":1,"zeta":0}"#
    );
}

#[test]
fn decoded_as_k8s_openapi_did() {
    // Items of a list come without apiVersion and kind; null is absent.
    let rc: ReplicationController =
        decode(&json!({"metadata": {"name": "a"}, "spec": null, "status": {"replicas": null}}));
    assert_eq!(rc.spec, None);
    assert_eq!(rc.status.unwrap().replicas, 0);
    let err = resources::typed::from_value_as_text::<ReplicationController>(
        &json!({"apiVersion": "v1", "kind": "Pod"}),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value: string \"Pod\", expected ReplicationController"
    );
    let err = resources::typed::from_value_as_text::<ReplicationController>(
        &json!({"spec": {"replicas": "two"}}),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid type: string \"two\", expected i32"
    );
}
