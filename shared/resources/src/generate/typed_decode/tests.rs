//! The walk against what it replaced: decoding into k8s-openapi's model and encoding
//! it back (the models are a dev-dependency here), on the generators' objects with
//! typical overrides and on every edge the walk handles.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::super::{OverrideType, RunGenerator, RunParams, ServiceGenerator, ServiceParams};
use super::super::{apply_overrides, normalize};
use k8s_openapi::api;

/// The former `--overrides` normalisation: the model's round trip (through text, as
/// `crate::typed` did it), then the pod spec's quantities canonicalised.
fn round_trip<K: DeserializeOwned + Serialize>(obj: &Value) -> Result<Value, String> {
    let typed: K = crate::typed::from_value_as_text(obj)
        .map_err(|e| format!("unable to decode the overridden object: {e}"))?;
    let mut value = serde_json::to_value(&typed).expect("encodes");
    let pod_spec = match value["kind"].as_str() {
        Some("Pod") => "/spec",
        Some("Deployment" | "Job") => "/spec/template/spec",
        Some("CronJob") => "/spec/jobTemplate/spec/template/spec",
        _ => return Ok(value),
    };
    if let Some(spec) = value.pointer_mut(pod_spec) {
        super::super::quantity::canonicalize_pod_spec(spec).map_err(|e| e.to_string())?;
    }
    Ok(value)
}

fn typed(obj: &Value) -> Result<Value, String> {
    match (obj["apiVersion"].as_str(), obj["kind"].as_str()) {
        (Some("v1"), Some("Pod")) => round_trip::<api::core::v1::Pod>(obj),
        (Some("v1"), Some("Service")) => round_trip::<api::core::v1::Service>(obj),
        (Some("apps/v1"), Some("Deployment")) => round_trip::<api::apps::v1::Deployment>(obj),
        (Some("batch/v1"), Some("Job")) => round_trip::<api::batch::v1::Job>(obj),
        (Some("batch/v1"), Some("CronJob")) => round_trip::<api::batch::v1::CronJob>(obj),
        other => panic!("no model for {other:?}"),
    }
}

/// `normalize` and the model's round trip agree on `obj`: the same object, or the
/// same error.
#[track_caller]
fn agree(obj: Value) -> Result<Value, String> {
    let walked = normalize(obj.clone()).map_err(|e| e.to_string());
    assert_eq!(walked, typed(&obj), "{obj}");
    walked
}

fn generated() -> Vec<Value> {
    let params = RunParams {
        labels: "app=web".into(),
        annotations: vec!["a=b".into()],
        env: vec!["A=1".into(), "E=".into()],
        port: "8080".into(),
        host_port: 80,
        requests: "cpu=100m,memory=0.5Gi".into(),
        limits: "cpu=1".into(),
        service_account: "robot".into(),
        privileged: true,
        stdin: true,
        tty: true,
        args: vec!["sh".into()],
        schedule: "@hourly".into(),
        ..RunParams::new("web", "nginx")
    };
    let mut objects: Vec<Value> = [
        RunGenerator::RunPodV1,
        RunGenerator::DeploymentAppsV1,
        RunGenerator::JobV1,
        RunGenerator::CronJobV1,
    ]
    .iter()
    .flat_map(|g| {
        [
            g.generate(&params).expect("generated"),
            g.generate(&RunParams::new("x", "busybox"))
                .expect("generated"),
        ]
    })
    .collect();
    for g in [ServiceGenerator::V1, ServiceGenerator::V2] {
        objects.push(
            g.generate(&ServiceParams::for_run(&params))
                .expect("service"),
        );
    }
    objects
}

/// The generators' objects come out of the walk as the round trip left them: as
/// generated.
#[test]
fn generated_objects_are_unchanged() {
    for obj in generated() {
        assert_eq!(agree(obj.clone()).as_ref(), Ok(&obj));
    }
}

/// Typical overrides of each generated object, merged then walked, as the round trip
/// gave them.
#[test]
fn typical_overrides_agree_with_the_models() {
    let overrides = [
        r#"{"spec":{"hostname":"h","nodeSelector":{"disk":"ssd"}}}"#,
        r#"{"metadata":{"annotations":{"x":"y"},"labels":{"extra":"1"}}}"#,
        r#"{"spec":{"template":{"spec":{"tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule"}]}}}}"#,
        r#"{"spec":{"containers":[{"name":"a","image":"busybox","resources":{"limits":{"cpu":0.5,"memory":"1Gi"}},"livenessProbe":{"httpGet":{"port":"http","path":"/"},"periodSeconds":3}}]}}"#,
        r#"{"spec":{"volumes":[{"name":"v","emptyDir":{"sizeLimit":"1Gi"}},{"name":"c","configMap":{"name":"cm","items":[{"key":"a","path":"b"}]}}],"securityContext":{"runAsUser":1000,"sysctls":[{"name":"a","value":"1"}]}}}"#,
        r#"{"spec":{"ports":[{"port":443,"targetPort":"https","name":"https"}],"type":"NodePort"}}"#,
        r#"{"spec":{"replicas":5,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}}}}"#,
        r#"{"spec":{"backoffLimit":2,"jobTemplate":{"spec":{"backoffLimit":1}},"suspend":true}}"#,
        r#"{"status":{"phase":"Running","startTime":"2024-05-01T10:00:00.123+02:00"}}"#,
    ];
    for obj in generated() {
        for patch in overrides {
            let merged = apply_merge(&obj, patch);
            agree(merged).expect("decodes");
        }
    }
}

fn apply_merge(obj: &Value, patch: &str) -> Value {
    let mut doc = obj.clone();
    json_patch::merge(&mut doc, &serde_json::from_str(patch).expect("patch"));
    doc
}

fn pod(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": spec})
}

/// Fields the models do not have are dropped at every depth; maps keep every key.
#[test]
fn unknown_fields_are_dropped_at_every_depth() {
    let out = agree(json!({
        "apiVersion": "v1", "kind": "Pod", "top": 1,
        "metadata": {"name": "x", "nope": {"a": 1}, "labels": {"unknown-looking": "kept"}},
        "spec": {
            "bogus": [1],
            "nodeSelector": {"anything": "goes"},
            "containers": [{"name": "c", "extra": true,
                "ports": [{"containerPort": 80, "what": "x"}],
                "resources": {"limits": {"example.com/gpu": "1"}, "odd": {}}}],
        },
        "status": {"zzz": 1}
    }))
    .expect("decodes");
    assert_eq!(
        out,
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "x", "labels": {"unknown-looking": "kept"}},
            "spec": {
                "nodeSelector": {"anything": "goes"},
                "containers": [{"name": "c", "ports": [{"containerPort": 80}],
                    "resources": {"limits": {"example.com/gpu": "1"}}}],
            },
            "status": {}
        })
    );
}

/// A null field is no field; a required one missing or null is written at its zero
/// value, as the model's decode defaults it.
#[test]
fn nulls_and_required_fields() {
    let out = agree(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": null,
        "spec": {"containers": [{"name": null, "image": null, "ports": [{"hostPort": 1}],
            "livenessProbe": {"httpGet": {"path": "/"}}}],
            "hostname": null, "volumes": null},
    }))
    .expect("decodes");
    assert_eq!(
        out,
        json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {},
            "spec": {"containers": [{"name": "", "ports": [{"containerPort": 0, "hostPort": 1}],
                "livenessProbe": {"httpGet": {"path": "/", "port": 0}}}]},
        })
    );
    // A spec without containers gets the empty list; a struct required in a struct
    // gets its own required fields.
    for obj in [
        pod(json!({})),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {}}),
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"jobTemplate": null}}),
        json!({"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{}]}}),
    ] {
        agree(obj).expect("decodes");
    }
}

/// A value of the wrong type is refused with the words the round trip had, at the
/// first bad field in key order.
#[test]
fn wrong_types_are_refused_as_before() {
    let cases = [
        json!({"restartPolicy": 3, "containers": []}),
        json!({"containers": "x"}),
        json!({"containers": {"name": "x"}}),
        json!({"containers": [1]}),
        json!({"containers": [{"name": "x", "ports": [{"containerPort": 99999999999_i64}]}]}),
        json!({"containers": [{"name": "x", "ports": [{"containerPort": -99999999999_i64}]}]}),
        json!({"containers": [{"name": "x", "ports": [{"containerPort": 1.5}]}]}),
        json!({"containers": [{"name": "x", "ports": [{"containerPort": 1e3}]}]}),
        json!({"containers": [{"name": "x", "ports": [{"containerPort": "80"}]}]}),
        json!({"containers": [{"name": "x", "stdin": "yes"}]}),
        json!({"containers": [{"name": "x", "args": [1]}]}),
        json!({"containers": [{"name": "x", "resources": {"limits": {"cpu": true}}}]}),
        json!({"containers": [{"name": "x", "resources": {"limits": {"cpu": 2, "memory": 0.5}}}]}),
        json!({"containers": [{"name": "x", "resources": {"limits": {"cpu": "1x"}}}]}),
        json!({"containers": [{"name": "x", "livenessProbe": {"httpGet": {"port": 1.5}}}]}),
        json!({"containers": [{"name": "x", "livenessProbe": {"httpGet": {"port": true}}}]}),
        json!({"containers": [{"name": "x", "livenessProbe": {"httpGet": {"port": 4294967296_i64}}}]}),
        json!({"containers": [{"name": "x", "livenessProbe": {"httpGet": {"port": -4294967296_i64}}}]}),
        json!({"activeDeadlineSeconds": 18446744073709551615_u64, "containers": []}),
        json!({"activeDeadlineSeconds": -5, "containers": []}),
        json!({"nodeSelector": {"a": 1}, "containers": []}),
        json!({"nodeSelector": [], "containers": []}),
        json!({"hostNetwork": 1, "containers": []}),
        json!({"b": 1, "containers": [], "affinity": "x", "hostname": 5}),
    ];
    // Each case but the numbers given as quantities and the negative int64 is refused.
    let refused = cases
        .into_iter()
        .filter(|spec| agree(pod(spec.clone())).is_err())
        .count();
    assert_eq!(refused, 22);
    for other in [
        json!({"spec": true}),
        json!({"metadata": {"labels": "x"}}),
        json!({"metadata": {"creationTimestamp": "garbage"}}),
        json!({"metadata": {"creationTimestamp": 5}}),
        json!({"metadata": {"creationTimestamp": "2024-05-01T10:00:00.5-01:30"}}),
        json!({"metadata": {"managedFields": [{"fieldsV1": {"f:a": {}}, "time": "2024-01-01T00:00:00Z"}]}}),
        json!({"metadata": {"managedFields": [{"fieldsV1": null}]}}),
        json!({"status": {"phase": 5}}),
        json!({"status": {"containerStatuses": [{"state": {"terminated": {"exitCode": 1.0}}}]}}),
    ] {
        let mut obj = pod(json!({"containers": []}));
        json_patch::merge(&mut obj, &other);
        let _ = agree(obj);
    }
    // A time is written back in whole seconds, UTC.
    let mut obj = pod(json!({"containers": []}));
    obj["metadata"]["creationTimestamp"] = json!("2024-05-01T10:00:00.5-01:30");
    assert_eq!(
        agree(obj).expect("decodes")["metadata"]["creationTimestamp"],
        "2024-05-01T11:30:00Z"
    );
}

/// The walk refuses what the round trip refused, and keeps the words: the kubectl
/// comparison is in the module doc.
#[test]
fn a_wrong_type_reads_as_the_model_said_it() {
    let e = normalize(pod(json!({"restartPolicy": 3, "containers": []})))
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        e.as_deref(),
        Some(
            "unable to decode the overridden object: invalid type: integer `3`, expected a string"
        )
    );
    let e = apply_overrides(
        pod(json!({"containers": []})),
        r#"{"spec":{"containers":"x"}}"#,
        OverrideType::Merge,
    )
    .err()
    .map(|e| e.to_string());
    assert_eq!(
        e.as_deref(),
        Some(
            "unable to decode the overridden object: invalid type: string \"x\", expected a sequence"
        )
    );
}

/// `batch/v1beta1` CronJobs are read as `batch/v1` and keep their apiVersion.
#[test]
fn old_cron_jobs_are_read_as_v1() {
    let obj = RunGenerator::CronJobV1Beta1
        .generate(&RunParams {
            schedule: "@daily".into(),
            ..RunParams::new("c", "busybox")
        })
        .expect("cron job");
    let mut with_unknown = obj.clone();
    with_unknown["spec"]["nope"] = json!(1);
    assert_eq!(normalize(with_unknown).expect("decodes"), obj);
}

/// A `null` list item or map value is its type's zero value, as kubectl 1.37 decodes
/// it (each case's result is kubectl's `run x --image=nginx --dry-run=client -o json
/// --override-type=json` with the same value; the round trip refused them).
#[test]
fn null_items_are_zero_values_as_in_kubectl() {
    // Set as a JSON patch sets them: a merge patch would drop the nulls.
    let container = |extra: Value| {
        let mut c = json!({"name": "x", "image": "nginx"});
        for (key, value) in extra.as_object().into_iter().flatten() {
            c[key] = value.clone();
        }
        pod(json!({"containers": [c]}))
    };
    let cases = [
        (
            pod(json!({"containers": [null]})),
            json!({"containers": [{"name": ""}]}),
        ),
        (
            container(json!({"args": [null, "a"]})),
            json!({"containers": [{"name": "x", "image": "nginx", "args": ["", "a"]}]}),
        ),
        (
            container(json!({"ports": [null]})),
            json!({"containers": [{"name": "x", "image": "nginx", "ports": [{"containerPort": 0}]}]}),
        ),
        (
            container(json!({"resources": {"limits": {"cpu": null}}})),
            json!({"containers": [{"name": "x", "image": "nginx", "resources": {"limits": {"cpu": "0"}}}]}),
        ),
        (
            pod(json!({"containers": [], "nodeSelector": {"a": null}})),
            json!({"containers": [], "nodeSelector": {"a": ""}}),
        ),
    ];
    for (obj, spec) in cases {
        assert!(typed(&obj).is_err(), "the model refused {obj}");
        let out = normalize(obj).expect("decodes");
        assert_eq!(out["spec"], spec);
    }
}
