//! Golden objects for every generator, and every message a bad parameter produces.

use serde_json::json;

use super::*;

fn err(result: Result<Value, Error>) -> String {
    match result {
        Ok(v) => panic!("expected an error, got {v}"),
        Err(e) => e.to_string(),
    }
}

fn full_params() -> RunParams {
    RunParams {
        labels: "app=web,tier=front".into(),
        annotations: vec!["team=a".into(), "note=x=y".into()],
        env: vec!["DNS_DOMAIN=cluster".into(), "EMPTY=".into()],
        port: "8080".into(),
        host_port: 80,
        image_pull_policy: "IfNotPresent".into(),
        requests: "cpu=100m,memory=256Mi".into(),
        limits: "cpu=200m".into(),
        service_account: "robot".into(),
        privileged: true,
        stdin: true,
        tty: true,
        restart: "Never".into(),
        command: true,
        args: vec!["sh".into(), "-c".into(), "echo hi".into()],
        ..RunParams::new("web", "nginx:1.27")
    }
}

#[test]
fn default_pod_is_kubectls() {
    let obj = RunGenerator::RunPodV1
        .generate(&RunParams::new("x", "nginx"))
        .expect("pod");
    assert_eq!(
        obj,
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"labels": {"run": "x"}, "name": "x"},
            "spec": {
                "containers": [{"image": "nginx", "name": "x", "resources": {}}],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always"
            },
            "status": {}
        })
    );
}

#[test]
fn pod_with_every_parameter() {
    let obj = RunGenerator::RunPodV1
        .generate(&full_params())
        .expect("pod");
    assert_eq!(
        obj,
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "annotations": {"note": "x=y", "team": "a"},
                "labels": {"app": "web", "tier": "front"},
                "name": "web"
            },
            "spec": {
                "containers": [{
                    "command": ["sh", "-c", "echo hi"],
                    "env": [{"name": "DNS_DOMAIN", "value": "cluster"}, {"name": "EMPTY"}],
                    "image": "nginx:1.27",
                    "imagePullPolicy": "IfNotPresent",
                    "name": "web",
                    "ports": [{"containerPort": 8080, "hostPort": 80}],
                    "resources": {"limits": {"cpu": "200m"}, "requests": {"cpu": "100m", "memory": "256Mi"}},
                    "securityContext": {"privileged": true},
                    "stdin": true,
                    "stdinOnce": true,
                    "tty": true
                }],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Never",
                "serviceAccountName": "robot"
            },
            "status": {}
        })
    );
}

#[test]
fn args_without_command_and_stdin_left_open() {
    let params = RunParams {
        args: vec!["--verbose".into()],
        stdin: true,
        leave_stdin_open: true,
        ..RunParams::new("x", "nginx")
    };
    let obj = RunGenerator::RunPodV1.generate(&params).expect("pod");
    let container = &obj["spec"]["containers"][0];
    assert_eq!(container["args"], json!(["--verbose"]));
    assert!(container.get("command").is_none());
    assert_eq!(container["stdin"], true);
    assert!(container.get("stdinOnce").is_none());
}

#[test]
fn deployment_golden() {
    let params = RunParams {
        replicas: 3,
        port: "80".into(),
        ..RunParams::new("web", "nginx")
    };
    let obj = RunGenerator::DeploymentAppsV1
        .generate(&params)
        .expect("deployment");
    assert_eq!(
        obj,
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"labels": {"run": "web"}, "name": "web"},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"run": "web"}},
                "strategy": {},
                "template": {
                    "metadata": {"labels": {"run": "web"}},
                    "spec": {"containers": [{
                        "image": "nginx", "name": "web", "ports": [{"containerPort": 80}], "resources": {}
                    }]}
                }
            },
            "status": {}
        })
    );
}

/// kubectl 1.17's `BasicReplicationController`: the labels are the selector, the
/// template's spec is the run container without `restartPolicy` or `dnsPolicy`, and
/// Go prints the zero `status.replicas`.
#[test]
fn replication_controller_golden() {
    let params = RunParams {
        replicas: 3,
        port: "80".into(),
        env: vec!["A=b".into()],
        args: vec!["--verbose".into()],
        ..RunParams::new("web", "nginx:1")
    };
    let obj = RunGenerator::RunV1.generate(&params).expect("rc");
    assert_eq!(
        obj,
        json!({
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"labels": {"run": "web"}, "name": "web"},
            "spec": {
                "replicas": 3,
                "selector": {"run": "web"},
                "template": {
                    "metadata": {"labels": {"run": "web"}},
                    "spec": {"containers": [{
                        "args": ["--verbose"],
                        "env": [{"name": "A", "value": "b"}],
                        "image": "nginx:1",
                        "name": "web",
                        "ports": [{"containerPort": 80}],
                        "resources": {}
                    }]}
                }
            },
            "status": {"replicas": 0}
        })
    );
    // --labels replace run=NAME everywhere, selector included.
    let labelled = RunParams {
        labels: "app=web,tier=front".into(),
        ..params
    };
    let obj = RunGenerator::RunV1.generate(&labelled).expect("rc");
    let labels = json!({"app": "web", "tier": "front"});
    assert_eq!(obj["metadata"]["labels"], labels);
    assert_eq!(obj["spec"]["selector"], labels);
    assert_eq!(obj["spec"]["template"]["metadata"]["labels"], labels);
    // A bad label is the generator's error, as in kubectl.
    let bad = RunParams {
        labels: "app".into(),
        ..RunParams::new("web", "nginx")
    };
    assert_eq!(
        err(RunGenerator::RunV1.generate(&bad)),
        "unexpected label spec: app"
    );
}

/// 1.17's `deployment/v1beta1` and `deployment/apps.v1beta1` build the same fields as
/// `deployment/apps.v1`, under their own group-versions; `cronjob/v2alpha1` those of
/// `cronjob/v1beta1`.
#[test]
fn old_group_versions_are_the_same_objects_relabelled() {
    let params = RunParams {
        replicas: 2,
        schedule: "*/5 * * * *".into(),
        ..RunParams::new("web", "nginx")
    };
    for (old, new, api_version) in [
        (
            RunGenerator::DeploymentV1Beta1,
            RunGenerator::DeploymentAppsV1,
            "extensions/v1beta1",
        ),
        (
            RunGenerator::DeploymentAppsV1Beta1,
            RunGenerator::DeploymentAppsV1,
            "apps/v1beta1",
        ),
        (
            RunGenerator::CronJobV2Alpha1,
            RunGenerator::CronJobV1Beta1,
            "batch/v2alpha1",
        ),
    ] {
        let mut expected = new.generate(&params).expect("new");
        expected["apiVersion"] = json!(api_version);
        assert_eq!(old.generate(&params).expect("old"), expected, "{old}");
        assert_eq!(old.api_version(), api_version);
    }
}

#[test]
fn job_golden() {
    let obj = RunGenerator::JobV1
        .generate(&RunParams::new("pi", "perl"))
        .expect("job");
    assert_eq!(
        obj,
        json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"labels": {"run": "pi"}, "name": "pi"},
            "spec": {"template": {
                "metadata": {"labels": {"run": "pi"}},
                "spec": {
                    "containers": [{"image": "perl", "name": "pi", "resources": {}}],
                    "restartPolicy": "OnFailure"
                }
            }},
            "status": {}
        })
    );
}

#[test]
fn cron_jobs_in_both_versions() {
    let params = RunParams {
        schedule: "*/5 * * * *".into(),
        ..RunParams::new("tick", "busybox")
    };
    let expected = |api_version: &str| {
        json!({
            "apiVersion": api_version,
            "kind": "CronJob",
            "metadata": {"labels": {"run": "tick"}, "name": "tick"},
            "spec": {
                "concurrencyPolicy": "Allow",
                "jobTemplate": {"spec": {"template": {
                    "metadata": {"labels": {"run": "tick"}},
                    "spec": {
                        "containers": [{"image": "busybox", "name": "tick", "resources": {}}],
                        "restartPolicy": "Never"
                    }
                }}},
                "schedule": "*/5 * * * *"
            },
            "status": {}
        })
    };
    assert_eq!(
        RunGenerator::CronJobV1.generate(&params).expect("v1"),
        expected("batch/v1")
    );
    assert_eq!(
        RunGenerator::CronJobV1Beta1
            .generate(&params)
            .expect("v1beta1"),
        expected("batch/v1beta1")
    );
}

#[test]
fn services_for_expose() {
    let run = RunParams {
        port: "80".into(),
        ..RunParams::new("x", "nginx")
    };
    let v2 = ServiceGenerator::V2
        .generate(&ServiceParams::for_run(&run))
        .expect("service");
    assert_eq!(
        v2,
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "x"},
            "spec": {
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
                "selector": {"run": "x"}
            },
            "status": {"loadBalancer": {}}
        })
    );
    let labelled = RunParams {
        labels: "app=x".into(),
        ..run
    };
    let v1 = ServiceGenerator::V1
        .generate(&ServiceParams::for_run(&labelled))
        .expect("service");
    assert_eq!(v1["metadata"]["labels"], json!({"app": "x"}));
    assert_eq!(v1["spec"]["selector"], json!({"app": "x"}));
    assert_eq!(v1["spec"]["ports"][0]["name"], "default");
}

#[test]
fn kind_and_api_version_are_the_generated_objects() {
    let params = RunParams {
        schedule: "@hourly".into(),
        ..RunParams::new("x", "nginx")
    };
    for g in RunGenerator::ALL {
        let obj = g.generate(&params).expect("generated");
        assert_eq!(
            (obj["apiVersion"].as_str(), obj["kind"].as_str()),
            (Some(g.api_version()), Some(g.kind())),
            "{g}"
        );
    }
}

#[test]
fn generator_names() {
    for g in RunGenerator::ALL {
        assert_eq!(g.name().parse::<RunGenerator>().expect("round trip"), g);
    }
    assert_eq!(
        "run/v2"
            .parse::<RunGenerator>()
            .err()
            .map(|e| e.to_string())
            .as_deref(),
        Some(
            "generator \"run/v2\" not found; valid generators are: run-pod/v1, run/v1, deployment/apps.v1, deployment/apps.v1beta1, deployment/v1beta1, job/v1, cronjob/v1, cronjob/v1beta1, cronjob/v2alpha1"
        )
    );
    assert_eq!(
        "service/v3"
            .parse::<ServiceGenerator>()
            .err()
            .map(|e| e.to_string())
            .as_deref(),
        Some("generator \"service/v3\" not found; valid generators are: service/v2, service/v1")
    );
}

#[test]
fn parameter_messages_are_kubectls() {
    let pod = |f: fn(&mut RunParams)| {
        let mut p = RunParams::new("x", "nginx");
        f(&mut p);
        err(RunGenerator::RunPodV1.generate(&p))
    };
    assert_eq!(pod(|p| p.env = vec!["FOO".into()]), "invalid env: FOO");
    assert_eq!(
        pod(|p| p.env = vec!["1FOO=bar".into()]),
        "invalid env: 1FOO=bar"
    );
    assert_eq!(pod(|p| p.env = vec!["=bar".into()]), "invalid env: =bar");
    assert_eq!(pod(|p| p.env = vec!["..a=b".into()]), "invalid env: ..a=b");
    assert_eq!(
        pod(|p| p.labels = "foo".into()),
        "unexpected label spec: foo"
    );
    assert_eq!(
        pod(|p| p.labels = "a=b=c".into()),
        "unexpected label spec: a=b=c"
    );
    assert_eq!(
        pod(|p| p.labels = "=v".into()),
        "unexpected empty label key"
    );
    assert_eq!(
        pod(|p| p.annotations = vec!["foo".into(), "a=b".into(), "bar".into()]),
        "invalid annotations format: foo, bar"
    );
    assert_eq!(
        pod(|p| p.port = "abc".into()),
        "strconv.Atoi: parsing \"abc\": invalid syntax"
    );
    assert_eq!(
        pod(|p| p.port = "99999999999".into()),
        "strconv.Atoi: parsing \"99999999999\": value out of range"
    );
    assert_eq!(
        pod(|p| p.host_port = 8080),
        "--hostport requires --port to be specified"
    );
    assert_eq!(
        pod(|p| p.requests = "cpu".into()),
        "Invalid argument syntax cpu, expected <resource>=<value>"
    );
    assert_eq!(
        pod(|p| p.limits = "cpu=1x".into()),
        QuantityError::FormatWrong.to_string()
    );
    assert_eq!(
        pod(|p| p.limits = "memory=1kk".into()),
        "unable to parse quantity's suffix"
    );
    // Precedence follows kubectl: env before labels before resources before ports.
    assert_eq!(
        pod(|p| {
            p.env = vec!["BAD".into()];
            p.labels = "bad".into();
        }),
        "invalid env: BAD"
    );
    assert_eq!(
        pod(|p| {
            p.limits = "x".into();
            p.requests = "y".into();
        }),
        "Invalid argument syntax x, expected <resource>=<value>"
    );
}

#[test]
fn merge_overrides() {
    let pod = RunGenerator::RunPodV1
        .generate(&RunParams::new("x", "nginx"))
        .expect("pod");
    let out = apply_overrides(
        pod.clone(),
        r#"{"apiVersion": "v1", "spec": {"nodeName": "n1", "dnsPolicy": null}, "unknownField": 1}"#,
        OverrideType::Merge,
    )
    .expect("merged");
    assert_eq!(out["spec"]["nodeName"], "n1");
    assert!(out["spec"].get("dnsPolicy").is_none());
    // Decoding through the typed Pod drops fields the type does not know, as kubectl does.
    assert!(out.get("unknownField").is_none());
    assert_eq!(
        err(apply_overrides(pod.clone(), "{bad", OverrideType::Merge)),
        "Invalid JSON Patch"
    );
    let missing = err(apply_overrides(
        pod.clone(),
        r#"{"apiVersion": null}"#,
        OverrideType::Merge,
    ));
    assert!(
        missing.starts_with("Object 'apiVersion' is missing in '{"),
        "{missing}"
    );
    assert_eq!(
        apply_overrides(pod.clone(), "", OverrideType::Merge).expect("unchanged"),
        pod
    );
    assert_eq!(
        "foo"
            .parse::<OverrideType>()
            .err()
            .map(|e| e.to_string())
            .as_deref(),
        Some("invalid override type: foo")
    );
}

#[test]
fn json_patch_overrides() {
    let pod = RunGenerator::RunPodV1
        .generate(&RunParams::new("x", "nginx"))
        .expect("pod");
    let out = apply_overrides(
        pod.clone(),
        r#"[{"op": "replace", "path": "/spec/containers/0/image", "value": "busybox"}]"#,
        OverrideType::Json,
    )
    .expect("patched");
    assert_eq!(out["spec"]["containers"][0]["image"], "busybox");
    let bad = err(apply_overrides(
        pod,
        r#"[{"op": "remove", "path": "/spec/nothing"}]"#,
        OverrideType::Json,
    ));
    assert!(!bad.is_empty());
}

#[test]
fn strategic_overrides_merge_containers_by_name() {
    let params = RunParams {
        env: vec!["A=1".into()],
        port: "80".into(),
        ..RunParams::new("x", "nginx")
    };
    let pod = RunGenerator::RunPodV1.generate(&params).expect("pod");
    let patch = r#"{"spec": {"containers": [
        {"name": "x", "env": [{"name": "B", "value": "2"}], "ports": [{"containerPort": 80, "name": "http"}]},
        {"name": "sidecar", "image": "busybox"}
    ]}}"#;
    let out = apply_overrides(pod.clone(), patch, OverrideType::Strategic).expect("merged");
    let containers = &out["spec"]["containers"];
    assert_eq!(
        containers[0]["image"], "nginx",
        "the generated container is kept, not replaced"
    );
    assert_eq!(
        containers[0]["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
    );
    assert_eq!(
        containers[0]["ports"],
        json!([{"containerPort": 80, "name": "http"}])
    );
    assert_eq!(
        containers[1],
        json!({"image": "busybox", "name": "sidecar"})
    );

    // A merge patch replaces the list instead.
    let merged = apply_overrides(pod.clone(), patch, OverrideType::Merge).expect("merged");
    assert!(merged["spec"]["containers"][0].get("image").is_none());

    // Directives: delete an element, replace a list.
    let out = apply_overrides(
        pod.clone(),
        r#"{"spec": {"containers": [{"name": "x", "env": [{"name": "A", "$patch": "delete"}]}]}}"#,
        OverrideType::Strategic,
    )
    .expect("deleted");
    let env = &out["spec"]["containers"][0]["env"];
    assert!(env.as_array().is_none_or(|e| e.is_empty()), "{env}");
    let out = apply_overrides(
        pod,
        r#"{"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "busybox"}]}}"#,
        OverrideType::Strategic,
    )
    .expect("replaced");
    assert_eq!(
        out["spec"]["containers"],
        json!([{"image": "busybox", "name": "only"}])
    );
}

#[test]
fn strategic_merge_rejects_elements_without_their_key() {
    let mut doc = json!({"spec": {"containers": [{"name": "x"}]}});
    let patch = json!({"spec": {"containers": [{"image": "y"}]}});
    let e = strategic_merge(&mut doc, &patch)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        e.as_deref(),
        Some("map: {\"image\":\"y\"} does not contain declared merge key: name")
    );
}

#[test]
fn strategic_merge_directives_on_maps() {
    let mut doc = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}, "keep": 1}});
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
    strategic_merge(&mut doc, &patch).expect("merged");
    assert_eq!(
        doc,
        json!({"spec": {"strategy": {"type": "Recreate"}, "keep": 1}})
    );

    let mut doc = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
    strategic_merge(
        &mut doc,
        &json!({"metadata": {"labels": {"$patch": "replace", "c": "3"}}}),
    )
    .expect("merged");
    assert_eq!(doc, json!({"metadata": {"labels": {"c": "3"}}}));
    strategic_merge(
        &mut doc,
        &json!({"metadata": {"labels": {"$patch": "delete"}}}),
    )
    .expect("merged");
    assert_eq!(doc, json!({"metadata": {"labels": {}}}));
    let e = strategic_merge(&mut doc, &json!({"metadata": {"$patch": "explode"}}))
        .err()
        .map(|e| e.to_string());
    assert!(e.is_some_and(|m| m.starts_with("Unknown patch type: explode")));
}
