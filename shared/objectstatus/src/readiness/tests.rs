//! Each kind's rule on objects as the controllers write them, and which causes are
//! final.

use serde_json::json;

use super::*;

fn none() -> Related<'static> {
    Related::default()
}

fn at(rule: Rule, object: Value) -> State {
    state(rule, &object, &none())
}

fn pod_of(value: Value) -> Pod {
    objects::from_value(&value).expect("pod")
}

#[test]
fn kinds_map_to_rules() {
    assert_eq!(Rule::of("apps", "Deployment"), Rule::Deployment);
    assert_eq!(
        Rule::of("", "ReplicationController"),
        Rule::ReplicationController
    );
    assert_eq!(Rule::of("", "ConfigMap"), Rule::Nothing);
    assert_eq!(Rule::of("rbac.authorization.k8s.io", "Role"), Rule::Nothing);
    assert_eq!(Rule::of("example.com", "Widget"), Rule::ReadyCondition);
    assert_eq!(
        display_name("apps", "Deployment", "web"),
        "deployment.apps/web"
    );
    assert_eq!(display_name("", "Pod", "web-1"), "pod/web-1");
}

#[test]
fn a_deployment_by_rollout_status() {
    let d = |generation: i64, status: Value| json!({"metadata": {"name": "web", "generation": generation}, "spec": {"replicas": 3, "selector": {}, "template": {}}, "status": status});
    assert_eq!(
        at(Rule::Deployment, d(2, json!({"observedGeneration": 1}))),
        State::Waiting("spec update not yet observed".into())
    );
    assert_eq!(
        at(
            Rule::Deployment,
            d(
                1,
                json!({"observedGeneration": 1, "updatedReplicas": 1, "replicas": 1})
            )
        ),
        State::Waiting("1 of 3 new replicas updated".into())
    );
    assert_eq!(
        at(
            Rule::Deployment,
            d(
                1,
                json!({"observedGeneration": 1, "updatedReplicas": 3, "replicas": 4})
            )
        ),
        State::Waiting("1 old replicas pending termination".into())
    );
    assert_eq!(
        at(
            Rule::Deployment,
            d(
                1,
                json!({"observedGeneration": 1, "updatedReplicas": 3, "replicas": 3, "availableReplicas": 1})
            )
        ),
        State::Waiting("1/3 available".into())
    );
    assert_eq!(
        at(
            Rule::Deployment,
            d(
                1,
                json!({"observedGeneration": 1, "updatedReplicas": 3, "replicas": 3, "availableReplicas": 3})
            )
        ),
        State::Ready
    );
    let stuck = json!({"observedGeneration": 1, "conditions": [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]});
    assert_eq!(
        at(Rule::Deployment, d(1, stuck)),
        State::Failed("deployment \"web\" exceeded its progress deadline".into())
    );
}

#[test]
fn a_stateful_set_by_rollout_status() {
    let s = |strategy: Value, status: Value| json!({"metadata": {"name": "db", "generation": 1}, "spec": {"replicas": 3, "selector": {}, "serviceName": "db", "template": {}, "updateStrategy": strategy}, "status": status});
    let rolling = json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 1}});
    assert_eq!(
        at(
            Rule::StatefulSet,
            s(rolling.clone(), json!({"replicas": 0}))
        ),
        State::Waiting("spec update not yet observed".into()),
        "observedGeneration 0 is not observed"
    );
    assert_eq!(
        at(
            Rule::StatefulSet,
            s(
                rolling.clone(),
                json!({"replicas": 3, "observedGeneration": 1, "readyReplicas": 2})
            )
        ),
        State::Waiting("2/3 ready".into())
    );
    assert_eq!(
        at(
            Rule::StatefulSet,
            s(
                rolling.clone(),
                json!({"replicas": 3, "observedGeneration": 1, "readyReplicas": 3, "updatedReplicas": 1})
            )
        ),
        State::Waiting("partitioned roll out: 1 of 2 new pods updated".into())
    );
    assert_eq!(
        at(
            Rule::StatefulSet,
            s(
                rolling,
                json!({"replicas": 3, "observedGeneration": 1, "readyReplicas": 3, "updatedReplicas": 2})
            )
        ),
        State::Ready
    );
    let plain = json!({"type": "RollingUpdate"});
    assert_eq!(
        at(
            Rule::StatefulSet,
            s(
                plain.clone(),
                json!({"replicas": 3, "observedGeneration": 1, "readyReplicas": 3, "updatedReplicas": 3, "currentRevision": "db-1", "updateRevision": "db-2"})
            )
        ),
        State::Waiting("rolling update: 3 pods at revision db-2".into())
    );
    assert_eq!(
        at(
            Rule::StatefulSet,
            s(
                plain,
                json!({"replicas": 3, "observedGeneration": 1, "readyReplicas": 3, "currentRevision": "db-1", "updateRevision": "db-1"})
            )
        ),
        State::Ready
    );
    assert_eq!(
        at(
            Rule::StatefulSet,
            s(
                json!({"type": "OnDelete"}),
                json!({"replicas": 3, "observedGeneration": 1, "readyReplicas": 3})
            )
        ),
        State::Ready,
        "OnDelete: the ready count"
    );
}

#[test]
fn a_daemon_set_by_rollout_status() {
    let d = |status: Value| json!({"metadata": {"name": "agent", "generation": 1}, "spec": {"selector": {}, "template": {}, "updateStrategy": {"type": "RollingUpdate"}}, "status": status});
    let base = |updated: i32, available: i32| json!({"observedGeneration": 1, "desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberMisscheduled": 0, "numberReady": available, "updatedNumberScheduled": updated, "numberAvailable": available});
    assert_eq!(
        at(Rule::DaemonSet, d(base(1, 0))),
        State::Waiting("1 of 2 new pods updated".into())
    );
    assert_eq!(
        at(Rule::DaemonSet, d(base(2, 1))),
        State::Waiting("1/2 available".into())
    );
    assert_eq!(at(Rule::DaemonSet, d(base(2, 2))), State::Ready);
}

#[test]
fn replica_sets_and_controllers_by_ready_count() {
    let rs = json!({"metadata": {"name": "web-1", "generation": 1}, "spec": {"replicas": 2, "selector": {}}, "status": {"replicas": 2, "observedGeneration": 1, "readyReplicas": 1}});
    assert_eq!(at(Rule::ReplicaSet, rs), State::Waiting("1/2 ready".into()));
    let rc = json!({"metadata": {"name": "web", "generation": 1}, "spec": {}, "status": {"replicas": 1, "observedGeneration": 1, "readyReplicas": 1}});
    assert_eq!(
        at(Rule::ReplicationController, rc),
        State::Ready,
        "replicas default to 1"
    );
}

#[test]
fn a_pod_ready_or_run_to_completion() {
    let p = |status: Value| json!({"metadata": {"name": "p"}, "status": status});
    assert_eq!(
        at(Rule::Pod, p(json!({"phase": "Pending"}))),
        State::Waiting("Pending".into())
    );
    assert_eq!(
        at(
            Rule::Pod,
            p(json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}))
        ),
        State::Waiting("Running, not ready".into())
    );
    assert_eq!(
        at(
            Rule::Pod,
            p(json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}))
        ),
        State::Ready
    );
    assert_eq!(
        at(Rule::Pod, p(json!({"phase": "Succeeded"}))),
        State::Ready
    );
    let failed = json!({"phase": "Failed", "containerStatuses": [{"name": "main", "image": "x", "imageID": "", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 3, "reason": "Error"}}}]});
    assert_eq!(
        at(Rule::Pod, p(failed)),
        State::Failed("pod failed: container main: Error, exit code 3".into())
    );
}

#[test]
fn a_job_complete_or_failed() {
    let j = |status: Value| json!({"metadata": {"name": "migrate"}, "spec": {"template": {}}, "status": status});
    assert_eq!(
        at(Rule::Job, j(json!({"active": 1}))),
        State::Waiting("0/1 succeeded, 1 active".into())
    );
    assert_eq!(
        at(
            Rule::Job,
            j(json!({"conditions": [{"type": "Complete", "status": "True"}]}))
        ),
        State::Ready
    );
    let failed = json!({"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]});
    assert_eq!(
        at(Rule::Job, j(failed)),
        State::Failed("job \"migrate\" failed: BackoffLimitExceeded: Job has reached the specified backoff limit".into())
    );
}

fn class(name: &str, mode: &str, default: bool) -> StorageClass {
    objects::from_value(&json!({
        "metadata": {"name": name, "annotations": {"storageclass.kubernetes.io/is-default-class": default.to_string()}},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": mode,
    }))
    .expect("class")
}

#[test]
fn a_claim_bound_unless_it_waits_for_its_consumer() {
    let claim = |class: Option<&str>, phase: &str| json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"}, "spec": {"storageClassName": class}, "status": {"phase": phase}});
    let classes = [
        class("local", "WaitForFirstConsumer", false),
        class("std", "Immediate", true),
    ];
    let related = Related {
        storage_classes: Some(&classes),
        ..Related::default()
    };
    assert_eq!(
        state(Rule::PersistentVolumeClaim, &claim(None, "Bound"), &none()),
        State::Ready
    );
    assert_eq!(
        state(
            Rule::PersistentVolumeClaim,
            &claim(Some("local"), "Pending"),
            &related
        ),
        State::Ready
    );
    assert_eq!(
        state(
            Rule::PersistentVolumeClaim,
            &claim(None, "Pending"),
            &related
        ),
        State::Waiting("Pending".into()),
        "the default class binds at once"
    );
    let no_default = [class("std", "Immediate", false)];
    let causes = causes(
        Rule::PersistentVolumeClaim,
        &claim(None, "Pending"),
        &[],
        &[],
        Some(&no_default),
    );
    assert_eq!(
        causes[0].line(),
        "Waiting: persistentvolumeclaim/data no persistent volumes available for this claim and no storage class is set"
    );
    let missing = super::causes(
        Rule::PersistentVolumeClaim,
        &claim(Some("fast"), "Pending"),
        &[],
        &[],
        Some(&no_default),
    );
    assert!(missing[0].text.contains("\"fast\" not found"));
}

#[test]
fn a_service_with_a_ready_endpoint() {
    let svc =
        |selector: Value| json!({"metadata": {"name": "web"}, "spec": {"selector": selector}});
    let slice = |ready: bool| -> EndpointSlice {
        objects::from_value(&json!({"metadata": {"name": "web-x"}, "addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": ready}}]})).expect("slice")
    };
    let with = |slices: &[EndpointSlice], selector: Value| {
        state(
            Rule::Service,
            &svc(selector),
            &Related {
                endpoint_slices: slices,
                storage_classes: None,
            },
        )
    };
    assert_eq!(
        with(&[], json!(null)),
        State::Ready,
        "no selector: endpoints by hand"
    );
    assert_eq!(
        with(&[], json!({"app": "web"})),
        State::Waiting("no ready endpoints".into())
    );
    assert_eq!(
        with(&[slice(false)], json!({"app": "web"})),
        State::Waiting("no ready endpoints".into())
    );
    assert_eq!(with(&[slice(true)], json!({"app": "web"})), State::Ready);
    let refused: Event = objects::from_value(&json!({
        "metadata": {"name": "e"}, "involvedObject": {"kind": "Service", "name": "web"},
        "reason": "FailedToUpdateEndpointSlices", "type": "Warning",
        "message": "Error updating Endpoint Slices for Service ns/web: … may not be in the loopback range",
    }))
    .expect("event");
    let causes = causes(
        Rule::Service,
        &svc(json!({"app": "web"})),
        &[],
        &[&refused],
        None,
    );
    assert_eq!(
        causes[0].line(),
        "Waiting: service/web FailedToUpdateEndpointSlices: Error updating Endpoint Slices for Service ns/web: … may not be in the loopback range"
    );
}

/// The EndpointSlice controller words one refusal again with the endpoints in
/// another order and another slice name: one line, until the addresses change.
#[test]
fn a_services_refusal_is_reported_once_whatever_the_order_of_its_addresses() {
    let svc = json!({"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}}});
    let event = |at: &str, slice: &str, first: &str, second: &str| -> Event {
        objects::from_value(&json!({
            "metadata": {"name": format!("e-{at}")},
            "involvedObject": {"kind": "Service", "name": "web"},
            "reason": "FailedToUpdateEndpointSlices", "type": "Warning",
            "lastTimestamp": at,
            "message": format!("Error updating Endpoint Slices for Service ns/web: failed to create EndpointSlice for Service ns/web: EndpointSlice.discovery.k8s.io \"{slice}\" is invalid: [endpoints[0].addresses[0]: Invalid value: \"{first}\": may not be in the loopback range (127.0.0.0/8, ::1/128), endpoints[1].addresses[0]: Invalid value: \"{second}\": may not be in the loopback range (127.0.0.0/8, ::1/128)]"),
        }))
        .expect("event")
    };
    let attempts = [
        event(
            "2026-12-06T10:00:01Z",
            "web-x7k2p",
            "127.0.0.2",
            "127.0.0.3",
        ),
        event(
            "2026-12-06T10:00:02Z",
            "web-9qzrt",
            "127.0.0.3",
            "127.0.0.2",
        ),
        event(
            "2026-12-06T10:00:03Z",
            "web-b4mwd",
            "127.0.0.2",
            "127.0.0.3",
        ),
        event(
            "2026-12-06T10:00:04Z",
            "web-kk2vx",
            "127.0.0.3",
            "127.0.0.2",
        ),
    ];
    let mut reported = crate::waiting::Reported::default();
    let mut lines = Vec::new();
    for seen in 1..=attempts.len() {
        let events: Vec<&Event> = attempts[..seen].iter().collect();
        let causes = causes(Rule::Service, &svc, &[], &events, None);
        lines.extend(reported.fresh(&causes).into_iter().map(Cause::line));
    }
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].contains("\"web-x7k2p\""),
        "the server's words: {}",
        lines[0]
    );
    // Another address is another cause.
    let moved = [event(
        "2026-12-06T10:00:05Z",
        "web-z8pq2",
        "127.0.0.4",
        "127.0.0.3",
    )];
    let causes = causes(Rule::Service, &svc, &[], &[&moved[0]], None);
    assert_eq!(reported.fresh(&causes).len(), 1);
}

#[test]
fn crds_established_and_custom_resources_by_ready() {
    let crd = |conditions: Value| json!({"status": {"conditions": conditions}});
    assert_eq!(
        at(Rule::CustomResourceDefinition, crd(json!([]))),
        State::Waiting("not yet Established".into())
    );
    assert_eq!(
        at(
            Rule::CustomResourceDefinition,
            crd(json!([{"type": "Established", "status": "True"}]))
        ),
        State::Ready
    );
    assert!(matches!(
        at(
            Rule::CustomResourceDefinition,
            crd(
                json!([{"type": "NamesAccepted", "status": "False", "reason": "ListKindConflict"}])
            )
        ),
        State::Failed(_)
    ));
    assert_eq!(
        at(Rule::ReadyCondition, json!({"spec": {}})),
        State::Ready,
        "no Ready condition"
    );
    assert_eq!(
        at(
            Rule::ReadyCondition,
            crd(json!([{"type": "Ready", "status": "False", "reason": "Provisioning"}]))
        ),
        State::Waiting("Ready=False: Provisioning".into())
    );
    assert_eq!(
        at(
            Rule::ReadyCondition,
            crd(json!([{"type": "Ready", "status": "True"}]))
        ),
        State::Ready
    );
    assert_eq!(at(Rule::Nothing, json!({})), State::Ready);
}

#[test]
fn workload_selectors_pick_their_pods() {
    let deploy = json!({"spec": {"selector": {"matchLabels": {"app": "web"}}}});
    let selector = pod_selector(Rule::Deployment, &deploy).expect("selector");
    assert!(selects(
        &selector,
        &pod_of(json!({"metadata": {"labels": {"app": "web", "x": "y"}}}))
    ));
    assert!(!selects(
        &selector,
        &pod_of(json!({"metadata": {"labels": {"app": "db"}}}))
    ));
    let rc = json!({"spec": {"template": {"metadata": {"labels": {"app": "old"}}}}});
    let selector = pod_selector(Rule::ReplicationController, &rc).expect("template labels");
    assert!(selects(
        &selector,
        &pod_of(json!({"metadata": {"labels": {"app": "old"}}}))
    ));
    assert!(
        pod_selector(
            Rule::Service,
            &json!({"spec": {"selector": {"app": "web"}}})
        )
        .is_none()
    );
}

const PSA: &str = "pods \"web-7d4b9-x7k2p\" is forbidden: violates PodSecurity \"restricted:latest\": runAsNonRoot != true";
const QUOTA: &str = "pods \"web-7d4b9-b8vqn\" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2";

#[test]
fn a_deployment_that_cannot_create_pods_is_named_and_doomed_by_admission_only() {
    let deploy = |message: &str| json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "status": {"conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": message}]}});
    let psa = causes(Rule::Deployment, &deploy(PSA), &[], &[], None);
    assert_eq!(
        psa[0].line(),
        format!("Waiting: deployment.apps/web cannot create pods: {PSA}")
    );
    assert!(doom(&psa, &[], &PullFailures::default()).is_some());
    let quota = causes(Rule::Deployment, &deploy(QUOTA), &[], &[], None);
    assert!(quota[0].text.contains("exceeded quota"));
    assert_eq!(
        doom(&quota, &[], &PullFailures::default()),
        None,
        "a quota is waited for"
    );
}

#[test]
fn a_stateful_set_names_its_failed_create_event() {
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"}});
    let event: Event = objects::from_value(&json!({
        "metadata": {"name": "e"}, "involvedObject": {"kind": "StatefulSet", "name": "db"},
        "reason": "FailedCreate", "type": "Warning", "message": format!("create Pod db-0 in StatefulSet db failed error: {PSA}"),
    }))
    .expect("event");
    let causes = causes(Rule::StatefulSet, &sts, &[], &[&event], None);
    assert!(
        causes[0]
            .line()
            .starts_with("Waiting: statefulset.apps/db cannot create pods: create Pod db-0")
    );
    assert!(causes[0].permanent);
}

fn pulling(uid: &str, reason: &str, message: &str) -> Pod {
    pod_of(json!({
        "metadata": {"name": "web-1", "uid": uid},
        "status": {"containerStatuses": [{"name": "web", "image": "registry.invalid/web:2", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"waiting": {"reason": reason, "message": message}}}]}
    }))
}

#[test]
fn a_pull_error_is_final_on_the_third_pull_not_the_first_back_off() {
    let error = "rpc error: code = Unknown desc = failed to pull and unpack image: dial tcp: lookup registry.invalid: no such host";
    let back_off =
        format!("Back-off pulling image \"registry.invalid/web:2\": ErrImagePull: {error}");
    let mut pulls = PullFailures::default();
    let mut seen = Vec::new();
    for (reason, message) in [
        ("ErrImagePull", error),
        ("ImagePullBackOff", back_off.as_str()),
        ("ErrImagePull", error),
        ("ImagePullBackOff", back_off.as_str()),
    ] {
        let pod = pulling("u1", reason, message);
        pulls.observe(&pod);
        pulls.observe(&pod); // a repeated update of the same state is not a pull
        seen.push(pod_doom(&pod, &pulls));
    }
    assert!(
        seen.iter().all(Option::is_none),
        "two failed pulls: {seen:?}"
    );
    let third = pulling("u1", "ErrImagePull", error);
    pulls.observe(&third);
    let why = pod_doom(&third, &pulls).expect("final");
    assert!(
        why.contains("no such host") && why.contains("3 pulls failed"),
        "{why}"
    );
    assert!(
        pod_doom(&pulling("u2", "ErrImagePull", error), &pulls).is_none(),
        "another pod counts its own"
    );
}

#[test]
fn an_image_the_registry_does_not_have_is_final_at_once() {
    let message = "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nginx:nope\": failed to resolve reference \"docker.io/library/nginx:nope\": docker.io/library/nginx:nope: not found";
    let pod = pulling("u1", "ErrImagePull", message);
    assert!(pod_doom(&pod, &PullFailures::default()).is_some());
}

#[test]
fn a_crash_loop_is_final_past_its_threshold() {
    let crashing = |restarts: i32| {
        pod_of(json!({
            "metadata": {"name": "web-1", "uid": "u"},
            "status": {"containerStatuses": [{"name": "web", "image": "x", "imageID": "", "ready": false, "restartCount": restarts,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s restarting failed container"}},
                "lastState": {"terminated": {"exitCode": 2, "reason": "Error"}}}]}
        }))
    };
    let pulls = PullFailures::default();
    assert_eq!(pod_doom(&crashing(RESTARTS_BEFORE_DOOM - 1), &pulls), None);
    let why = pod_doom(&crashing(RESTARTS_BEFORE_DOOM), &pulls).expect("final");
    assert!(
        why.ends_with("restarted 3 times, last exit code 2"),
        "{why}"
    );
    // A workload is doomed only when every pod is.
    let (a, b) = (
        crashing(5),
        pod_of(json!({"metadata": {"name": "web-2"}, "status": {"phase": "Running"}})),
    );
    assert_eq!(doom(&[], &[&a, &b], &pulls), None);
    assert!(doom(&[], &[&a], &pulls).is_some());
}

#[test]
fn a_job_names_its_failed_pods() {
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate"}});
    let failed = pod_of(json!({
        "metadata": {"name": "migrate-abcde"},
        "status": {"phase": "Failed", "containerStatuses": [{"name": "m", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}
    }));
    let causes = causes(Rule::Job, &job, &[&failed], &[], None);
    assert_eq!(
        causes[0].line(),
        "Waiting: job.batch/migrate 1 failed pod(s), the last: pod/migrate-abcde container m: Error, exit code 1"
    );
    let mut reported = crate::waiting::Reported::default();
    assert_eq!(reported.fresh(&causes).len(), 1);
    assert!(reported.fresh(&causes).is_empty(), "once per cause");
}

/// An object its rule cannot read has failed, in the words k8s-openapi's decoder used
/// when the rules read its models (`objects` reads the same fields the same way).
#[test]
fn an_object_that_cannot_be_read_fails_in_the_models_words() {
    let bad = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 3}, "status": {"updatedReplicas": "three"},
    });
    let model = serde_json::from_value::<k8s_openapi::api::apps::v1::Deployment>(bad.clone())
        .expect_err("a string");
    assert_eq!(
        at(Rule::Deployment, bad),
        State::Failed(format!("cannot read the object: {model}"))
    );
    assert_eq!(
        model.to_string(),
        "invalid type: string \"three\", expected i32"
    );
    let pod = json!({"metadata": {"name": "web-1"}, "status": {"conditions": [null]}});
    assert_eq!(
        at(Rule::Pod, pod),
        State::Failed("cannot read the object: invalid type: null, expected PodCondition".into())
    );
    // An old server's group-version was never read as the model's.
    let old =
        json!({"apiVersion": "extensions/v1beta1", "kind": "DaemonSet", "metadata": {"name": "d"}});
    assert_eq!(
        at(Rule::DaemonSet, old),
        State::Failed(
            "cannot read the object: invalid value: string \"extensions/v1beta1\", expected apps/v1"
                .into()
        )
    );
}
