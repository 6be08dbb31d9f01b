//! The simulated node against the real API server and controller-manager:
//! binding, readiness, steering annotations, restart policies, deletion,
//! node health, and pods that belong to other nodes.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, Node, Pod, PodSpec, PodTemplateSpec, ReplicationController,
    ReplicationControllerSpec,
};
use kube::Api;
use kube::api::{DeleteParams, ListParams, ObjectMeta, PostParams};
use kube::runtime::wait::await_condition;
use tests::harness::cluster;
use tests::node::{EXIT_AFTER_MS, EXIT_CODE, IGNORE_SIGTERM, NEVER_READY, READY_AFTER_MS};
use tests::objects::create_pod;

fn pod(name: &str, restart: &str, annotations: &[(&str, &str)]) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            annotations: Some(
                annotations
                    .iter()
                    .map(|(k, v)| ((*k).into(), (*v).into()))
                    .collect(),
            ),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some("busybox:1.36".into()),
                ..Default::default()
            }],
            restart_policy: Some(restart.into()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn condition(pod: &Pod, type_: &str) -> Option<String> {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == type_))
        .map(|c| c.status.clone())
}

fn phase(pod: &Pod) -> Option<&str> {
    pod.status.as_ref().and_then(|s| s.phase.as_deref())
}

fn container_status(pod: &Pod) -> Option<&ContainerStatus> {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|cs| cs.first())
}

/// Waits up to `secs` for `cond` on pod `name`; returns the pod that met it.
async fn wait_pod(
    pods: &Api<Pod>,
    name: &str,
    secs: u64,
    what: &str,
    cond: impl Fn(&Pod) -> bool,
) -> Pod {
    tokio::time::timeout(
        Duration::from_secs(secs),
        await_condition(pods.clone(), name, move |p: Option<&Pod>| {
            p.is_some_and(&cond)
        }),
    )
    .await
    .unwrap_or_else(|_| panic!("pod {name}: {what} within {secs}s"))
    .expect("watch")
    .expect("pod exists")
}

async fn wait_gone(pods: &Api<Pod>, name: &str, secs: u64) {
    tokio::time::timeout(
        Duration::from_secs(secs),
        await_condition(pods.clone(), name, |p: Option<&Pod>| p.is_none()),
    )
    .await
    .unwrap_or_else(|_| panic!("pod {name} deleted within {secs}s"))
    .expect("watch");
}

#[tokio::test]
async fn pod_is_bound_started_and_ready_like_a_kubelet_reports_it() {
    let cluster = cluster();
    let ns = cluster.namespace("node-ready").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    create_pod(&pods, &pod("web", "Always", &[(READY_AFTER_MS, "2000")])).await;

    let running = wait_pod(&pods, "web", 30, "Running", |p| phase(p) == Some("Running")).await;
    assert_eq!(
        condition(&running, "Ready").as_deref(),
        Some("False"),
        "not ready before the delay"
    );
    let ready = wait_pod(&pods, "web", 30, "Ready", |p| {
        condition(p, "Ready").as_deref() == Some("True")
    })
    .await;
    // Readiness came at least the delay after the start (API times have
    // whole seconds, and floor(t + 2s) - floor(t) = 2s).
    let started = ready
        .status
        .as_ref()
        .and_then(|s| s.start_time.clone())
        .expect("startTime")
        .0;
    let became_ready = ready
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .and_then(|c| c.last_transition_time.clone())
        .expect("Ready lastTransitionTime")
        .0;
    assert!(
        became_ready.duration_since(started).as_secs() >= 2,
        "ready at {became_ready}, started {started}"
    );

    let node = ready
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .expect("bound");
    assert!(node.starts_with("kubeplug-node-"), "{node}");
    let status = ready.status.as_ref().expect("status");
    assert_eq!(status.host_ip.as_deref(), Some("127.0.0.1"));
    let ip = status.pod_ip.as_deref().expect("podIP");
    assert!(ip.starts_with("127.") && ip != "127.0.0.1", "{ip}");
    assert!(status.start_time.is_some());
    for type_ in ["PodScheduled", "Initialized", "ContainersReady", "Ready"] {
        assert_eq!(condition(&ready, type_).as_deref(), Some("True"), "{type_}");
    }
    let cs = container_status(&ready).expect("containerStatuses");
    assert_eq!(
        (cs.name.as_str(), cs.image.as_str()),
        ("main", "busybox:1.36")
    );
    assert!(cs.ready && cs.started == Some(true) && cs.restart_count == 0);
    assert!(!cs.image_id.is_empty() && cs.container_id.is_some());
    assert!(
        cs.state
            .as_ref()
            .and_then(|s| s.running.as_ref())
            .and_then(|r| r.started_at.as_ref())
            .is_some()
    );

    // The node behind it is a healthy, leased, untainted kubelet.
    let client = cluster.client().await;
    let node_obj = Api::<Node>::all(client.clone())
        .get(&node)
        .await
        .expect("node");
    let ready_cond = node_obj
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .map(|c| c.status.clone());
    assert_eq!(ready_cond.as_deref(), Some("True"));
    assert!(
        node_obj
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_none_or(|t| t.is_empty()),
        "no taints"
    );
    let kubelet_port = node_obj
        .status
        .as_ref()
        .and_then(|s| s.daemon_endpoints.as_ref())
        .and_then(|d| d.kubelet_endpoint.as_ref())
        .map(|e| e.port);
    assert!(kubelet_port.is_some_and(|p| p > 0));
    let lease = Api::<Lease>::namespaced(client, "kube-node-lease")
        .get(&node)
        .await
        .expect("lease");
    assert_eq!(
        lease
            .spec
            .as_ref()
            .and_then(|s| s.holder_identity.as_deref()),
        Some(node.as_str())
    );
}

#[tokio::test]
async fn never_ready_pod_runs_but_stays_unready() {
    let cluster = cluster();
    let ns = cluster.namespace("node-never-ready").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    create_pod(&pods, &pod("stuck", "Always", &[(NEVER_READY, "true")])).await;
    wait_pod(&pods, "stuck", 30, "Running", |p| {
        phase(p) == Some("Running")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let p = pods.get("stuck").await.expect("get");
    assert_eq!(phase(&p), Some("Running"));
    assert_eq!(condition(&p, "Ready").as_deref(), Some("False"));
    assert_eq!(condition(&p, "ContainersReady").as_deref(), Some("False"));
    assert!(container_status(&p).is_some_and(|c| !c.ready && c.started == Some(true)));
}

#[tokio::test]
async fn exit_codes_follow_the_restart_policy() {
    let cluster = cluster();
    let ns = cluster.namespace("node-exit").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    let exit = |code: &'static str| [(EXIT_CODE, code), (EXIT_AFTER_MS, "300")];
    for p in [
        pod("never-fails", "Never", &exit("3")),
        pod("never-succeeds", "Never", &exit("0")),
        pod("onfailure-fails", "OnFailure", &exit("1")),
        pod("onfailure-succeeds", "OnFailure", &exit("0")),
        pod("always-exits", "Always", &exit("0")),
    ] {
        create_pod(&pods, &p).await;
    }

    let failed = wait_pod(&pods, "never-fails", 30, "Failed", |p| {
        phase(p) == Some("Failed")
    })
    .await;
    let cs = container_status(&failed).expect("status");
    let t = cs
        .state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .expect("terminated");
    assert_eq!((t.exit_code, t.reason.as_deref()), (3, Some("Error")));
    assert_eq!(cs.restart_count, 0);

    for name in ["never-succeeds", "onfailure-succeeds"] {
        let done = wait_pod(&pods, name, 30, "Succeeded", |p| {
            phase(p) == Some("Succeeded")
        })
        .await;
        let t = container_status(&done)
            .and_then(|c| c.state.as_ref())
            .and_then(|s| s.terminated.clone());
        assert_eq!(
            t.map(|t| (t.exit_code, t.reason)),
            Some((0, Some("Completed".into()))),
            "{name}"
        );
    }

    let restarted = |p: &Pod| container_status(p).is_some_and(|c| c.restart_count >= 2);
    let crashing = wait_pod(&pods, "onfailure-fails", 30, "restarted twice", restarted).await;
    assert_eq!(phase(&crashing), Some("Running"));
    let last = container_status(&crashing)
        .and_then(|c| c.last_state.as_ref())
        .and_then(|s| s.terminated.clone())
        .expect("lastState.terminated");
    assert_eq!((last.exit_code, last.reason.as_deref()), (1, Some("Error")));

    let always = wait_pod(&pods, "always-exits", 30, "restarted", |p| {
        container_status(p).is_some_and(|c| c.restart_count >= 1)
    })
    .await;
    assert_eq!(phase(&always), Some("Running"));
}

#[tokio::test]
async fn deletion_is_finalized_and_honours_ignored_sigterm() {
    let cluster = cluster();
    let ns = cluster.namespace("node-delete").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    create_pod(&pods, &pod("quick", "Always", &[])).await;
    create_pod(
        &pods,
        &pod("stubborn", "Always", &[(IGNORE_SIGTERM, "true")]),
    )
    .await;
    for name in ["quick", "stubborn"] {
        wait_pod(&pods, name, 30, "Ready", |p| {
            condition(p, "Ready").as_deref() == Some("True")
        })
        .await;
    }

    // Default grace (30s): a container that exits on SIGTERM does not make
    // the deletion wait for the grace period.
    pods.delete("quick", &DeleteParams::default())
        .await
        .expect("delete");
    wait_gone(&pods, "quick", 20).await;

    // SIGTERM ignored: the whole grace period, then SIGKILL.
    let start = Instant::now();
    pods.delete(
        "stubborn",
        &DeleteParams {
            grace_period_seconds: Some(3),
            ..Default::default()
        },
    )
    .await
    .expect("delete");
    let terminating = wait_pod(&pods, "stubborn", 5, "terminating", |p| {
        p.metadata.deletion_timestamp.is_some()
    })
    .await;
    assert!(
        container_status(&terminating)
            .is_some_and(|c| c.state.as_ref().is_some_and(|s| s.running.is_some()))
    );
    wait_gone(&pods, "stubborn", 20).await;
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(2500),
        "waited for the grace period: {took:?}"
    );
}

#[tokio::test]
async fn replication_controller_template_steers_its_pods() {
    let cluster = cluster();
    let ns = cluster.namespace("node-rc").await;
    let client = cluster.client().await;
    let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), ns.as_str());
    let pods: Api<Pod> = Api::namespaced(client, ns.as_str());
    let rc = |name: &str, annotations: &[(&str, &str)]| {
        let labels = BTreeMap::from([("app".to_string(), name.to_string())]);
        let template = pod(name, "Always", annotations);
        ReplicationController {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            spec: Some(ReplicationControllerSpec {
                replicas: Some(3),
                selector: Some(labels.clone()),
                template: Some(PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(labels),
                        annotations: template.metadata.annotations,
                        ..Default::default()
                    }),
                    spec: template.spec,
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    };
    rcs.create(
        &PostParams::default(),
        &rc("slow", &[(READY_AFTER_MS, "500")]),
    )
    .await
    .expect("create");
    rcs.create(
        &PostParams::default(),
        &rc("stuck", &[(NEVER_READY, "true")]),
    )
    .await
    .expect("create");

    tests::harness::wait_for_ready_replicas(&rcs, "slow", 3, Duration::from_secs(60)).await;
    let slow = pods
        .list(&ListParams::default().labels("app=slow"))
        .await
        .expect("list");
    assert_eq!(slow.items.len(), 3);
    let mut ips: Vec<_> = slow
        .items
        .iter()
        .filter_map(|p| p.status.as_ref().and_then(|s| s.pod_ip.clone()))
        .collect();
    ips.sort();
    ips.dedup();
    assert_eq!(ips.len(), 3, "unique pod IPs: {ips:?}");

    // The never-ready template: 3 pods Running, none Ready.
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let listed = pods
                .list(&ListParams::default().labels("app=stuck"))
                .await
                .expect("list");
            if listed.items.len() == 3 && listed.items.iter().all(|p| phase(p) == Some("Running")) {
                assert!(
                    listed
                        .items
                        .iter()
                        .all(|p| condition(p, "Ready").as_deref() == Some("False"))
                );
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .expect("3 running pods within 60s");
    let status = rcs.get("stuck").await.expect("get").status.expect("status");
    assert_eq!(status.ready_replicas.unwrap_or(0), 0);
}

#[tokio::test]
async fn pods_of_other_nodes_are_left_alone() {
    let cluster = cluster();
    let ns = cluster.namespace("node-foreign").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    let mut foreign = pod("foreign", "Always", &[]);
    if let Some(spec) = foreign.spec.as_mut() {
        spec.node_name = Some("somebody-elses-node".into());
    }
    let mut other_scheduler = pod("custom", "Always", &[]);
    if let Some(spec) = other_scheduler.spec.as_mut() {
        spec.scheduler_name = Some("my-scheduler".into());
    }
    create_pod(&pods, &foreign).await;
    create_pod(&pods, &other_scheduler).await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    let p = pods.get("foreign").await.expect("get");
    assert_eq!(phase(&p), Some("Pending"));
    assert!(container_status(&p).is_none());
    let p = pods.get("custom").await.expect("get");
    assert!(
        p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_none(),
        "not bound"
    );

    // Nobody finalizes the foreign pod's deletion: it stays until forced.
    pods.delete("foreign", &DeleteParams::default())
        .await
        .expect("delete");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        pods.get_opt("foreign").await.expect("get").is_some(),
        "still terminating"
    );
    pods.delete(
        "foreign",
        &DeleteParams {
            grace_period_seconds: Some(0),
            ..Default::default()
        },
    )
    .await
    .expect("force delete");
}

#[tokio::test]
async fn node_lease_is_renewed() {
    let cluster = cluster();
    let client = cluster.client().await;
    let leases: Api<Lease> = Api::namespaced(client, "kube-node-lease");
    let renew_time = |lease: &Lease| lease.spec.as_ref().and_then(|s| s.renew_time.clone());
    let first = leases
        .get("kubeplug-node-0")
        .await
        .expect("lease of kubeplug-node-0");
    let before = renew_time(&first).expect("renewTime");
    // The supervisor renews every 10s (the kubelet's period).
    tokio::time::timeout(Duration::from_secs(25), async {
        loop {
            let lease = leases.get("kubeplug-node-0").await.expect("lease");
            if renew_time(&lease).is_some_and(|t| t > before) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
    .await
    .expect("lease renewed within 25s");
}

#[tokio::test]
async fn thirty_replicas_run_concurrently_and_go_away() {
    let cluster = cluster();
    let ns = cluster.namespace("node-thirty").await;
    let client = cluster.client().await;
    let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), ns.as_str());
    let pods: Api<Pod> = Api::namespaced(client, ns.as_str());
    let labels = BTreeMap::from([("app".to_string(), "many".to_string())]);
    let template = pod("many", "Always", &[(READY_AFTER_MS, "300")]);
    let rc = ReplicationController {
        metadata: ObjectMeta {
            name: Some("many".into()),
            ..Default::default()
        },
        spec: Some(ReplicationControllerSpec {
            replicas: Some(30),
            selector: Some(labels.clone()),
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    annotations: template.metadata.annotations,
                    ..Default::default()
                }),
                spec: template.spec,
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    rcs.create(&PostParams::default(), &rc)
        .await
        .expect("create");
    let ready_30 = |obj: Option<&ReplicationController>| {
        obj.and_then(|rc| rc.status.as_ref())
            .is_some_and(|s| s.ready_replicas.unwrap_or(0) == 30)
    };
    tokio::time::timeout(
        Duration::from_secs(120),
        await_condition(rcs.clone(), "many", ready_30),
    )
    .await
    .expect("30 ready replicas within 120s")
    .expect("watch");

    // Deleting the controller (foreground) deletes and finalizes every pod.
    rcs.delete("many", &DeleteParams::foreground())
        .await
        .expect("delete rc");
    tests::harness::wait_for_no_pods(&pods, "app=many", Duration::from_secs(120)).await;
}

/// The pod's events as `type reason: message [from]` lines, oldest first. `from` is
/// what `kubectl describe` shows: the event's source component, or, for an
/// events.k8s.io/v1 event (the current kube-scheduler writes those), its reporting
/// controller.
async fn event_lines(events: &Api<k8s_openapi::api::core::v1::Event>, pod: &str) -> Vec<String> {
    let params = ListParams::default().fields(&format!("involvedObject.name={pod}"));
    let mut list = events.list(&params).await.expect("list events").items;
    list.sort_by_key(|e| e.metadata.name.clone());
    list.iter()
        .map(|e| {
            format!(
                "{} {}: {} [{}]",
                e.type_.as_deref().unwrap_or_default(),
                e.reason.as_deref().unwrap_or_default(),
                e.message.as_deref().unwrap_or_default(),
                e.source
                    .as_ref()
                    .and_then(|s| s.component.as_deref())
                    .filter(|c| !c.is_empty())
                    .or(e.reporting_component.as_deref())
                    .unwrap_or_default()
            )
        })
        .collect()
}

/// Waits up to 30s until the pod's events include `wanted` (each a prefix of
/// one line of [`event_lines`]); returns all lines.
async fn wait_events(
    events: &Api<k8s_openapi::api::core::v1::Event>,
    pod: &str,
    wanted: &[String],
) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let lines = event_lines(events, pod).await;
        let missing: Vec<&String> = wanted
            .iter()
            .filter(|w| !lines.iter().any(|l| l.starts_with(w.as_str())))
            .collect();
        if missing.is_empty() {
            return lines;
        }
        assert!(
            Instant::now() < deadline,
            "events of {pod} missing {missing:?}; have {lines:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn pods_get_the_scheduler_and_kubelet_events_kubectl_describe_shows() {
    let cluster = cluster();
    let ns = cluster.namespace("node-events").await;
    let client = cluster.client().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns.as_str());
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client, ns.as_str());
    // A process (sleep) and the default pull policy of a tagged image.
    let mut web = pod("web", "Always", &[]);
    if let Some(spec) = web.spec.as_mut() {
        spec.containers[0].command = Some(vec!["sleep".into(), "3600".into()]);
    }
    create_pod(&pods, &web).await;
    wait_pod(&pods, "web", 30, "Running", |p| phase(p) == Some("Running")).await;
    let node = "kubeplug-node-0";
    let lines = wait_events(
        &events,
        "web",
        &[
            format!(
                "Normal Scheduled: Successfully assigned {}/web to {node} [default-scheduler]",
                ns.as_str()
            ),
            "Normal Pulled: Container image \"busybox:1.36\" already present on machine [kubelet]"
                .to_owned(),
            "Normal Created: Created container main [kubelet]".to_owned(),
            "Normal Started: Started container main [kubelet]".to_owned(),
        ],
    )
    .await;
    assert_eq!(lines.len(), 4, "each event once: {lines:?}");

    let describe = cluster
        .kubectl()
        .args(["describe", "pod", "-n", ns.as_str(), "web"])
        .run();
    describe.success();
    let text = describe.stdout;
    assert!(text.contains("Events:"), "{text}");
    for line in [
        format!(
            "default-scheduler  Successfully assigned {}/web to {node}",
            ns.as_str()
        ),
        // kubectl since 1.33 puts the event's field path before a container's
        // event.
        if cluster.release.minor() >= 33 {
            "kubelet            spec.containers{main}: Started container main".to_owned()
        } else {
            "kubelet            Started container main".to_owned()
        },
    ] {
        assert!(text.contains(&line), "{line:?} in:\n{text}");
    }

    pods.delete("web", &DeleteParams::default().grace_period(1))
        .await
        .expect("delete");
    wait_events(
        &events,
        "web",
        &["Normal Killing: Stopping container main [kubelet]".to_owned()],
    )
    .await;

    // A crash loop: the restarts and the back-off.
    let mut crash = pod("crash", "Always", &[]);
    if let Some(spec) = crash.spec.as_mut() {
        spec.containers[0].command = Some(vec!["sh".into(), "-c".into(), "exit 1".into()]);
        spec.containers[0].image = Some("busybox".into());
    }
    create_pod(&pods, &crash).await;
    wait_events(
        &events,
        "crash",
        &[
            "Normal Pulling: Pulling image \"busybox\" [kubelet]".to_owned(),
            "Normal Pulled: Successfully pulled image \"busybox\" in 0s [kubelet]".to_owned(),
            format!(
                "Warning BackOff: Back-off restarting failed container main in pod crash_{}(",
                ns.as_str()
            ),
        ],
    )
    .await;

    // An image that does not exist (a registry under .invalid): each pull fails,
    // then backs off, in the kubelet's words.
    let mut missing = pod("missing", "Always", &[]);
    if let Some(spec) = missing.spec.as_mut() {
        spec.containers[0].image = Some("registry.invalid/web:2".into());
    }
    create_pod(&pods, &missing).await;
    let error = "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.invalid/web:2\": failed to resolve reference \"registry.invalid/web:2\": failed to do request: Head \"https://registry.invalid/v2/web/manifests/2\": dial tcp: lookup registry.invalid: no such host";
    wait_events(
        &events,
        "missing",
        &[
            "Normal Pulling: Pulling image \"registry.invalid/web:2\" [kubelet]".to_owned(),
            format!(
                "Warning Failed: Failed to pull image \"registry.invalid/web:2\": {error} [kubelet]"
            ),
            "Warning Failed: Error: ErrImagePull [kubelet]".to_owned(),
            "Normal BackOff: Back-off pulling image \"registry.invalid/web:2\" [kubelet]"
                .to_owned(),
            "Warning Failed: Error: ImagePullBackOff [kubelet]".to_owned(),
        ],
    )
    .await;
    let status = pods
        .get("missing")
        .await
        .expect("get")
        .status
        .expect("status");
    let container = &status.container_statuses.expect("statuses")[0];
    assert_eq!(container.container_id, None, "never created");
    let waiting = container
        .state
        .as_ref()
        .and_then(|s| s.waiting.as_ref())
        .expect("waiting");
    assert!(
        matches!(
            waiting.reason.as_deref(),
            Some("ErrImagePull" | "ImagePullBackOff")
        ),
        "{waiting:?}"
    );
}
