//! The foundation works: pods get bound and Ready, controllers run, RBAC bites, and
//! kubectl finds our plugins.

use std::time::Duration;

use k8s_openapi::api::core::v1::{
    Container, Pod, PodSpec, PodTemplateSpec, ReplicationController, ReplicationControllerSpec,
};
use kube::api::{ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::wait::{Condition, await_condition};
use kube::{Api, ResourceExt};
use tests::harness::{PLUGINS, cluster, plugin_binary};
use tests::objects::pod_ready;

fn is_pod_ready() -> impl Condition<Pod> {
    |obj: Option<&Pod>| obj.is_some_and(pod_ready)
}

fn container(name: &str) -> Container {
    Container {
        name: name.into(),
        image: Some("registry.k8s.io/pause:3.9".into()),
        ..Default::default()
    }
}

#[tokio::test]
async fn pod_is_bound_and_becomes_ready() {
    let cluster = cluster();
    let ns = cluster.namespace("pod-ready").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some("web".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![container("web")],
            ..Default::default()
        }),
        ..Default::default()
    };
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("create pod");
    let ready = tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(pods.clone(), "web", is_pod_ready()),
    )
    .await
    .expect("pod became Ready within 30s")
    .expect("watch")
    .expect("pod exists");
    let spec = ready.spec.as_ref().expect("spec");
    assert!(
        spec.node_name
            .as_deref()
            .is_some_and(|n| n.starts_with("kubeplug-node-")),
        "bound: {:?}",
        spec.node_name
    );
    let status = ready.status.as_ref().expect("status");
    assert_eq!(status.phase.as_deref(), Some("Running"));
    let containers = status
        .container_statuses
        .as_ref()
        .expect("containerStatuses");
    assert_eq!(containers.len(), 1);
    assert!(containers[0].ready);
    assert!(
        containers[0]
            .state
            .as_ref()
            .and_then(|s| s.running.as_ref())
            .is_some()
    );
}

#[tokio::test]
async fn replication_controller_gets_ready_pods_and_scales_to_zero() {
    let cluster = cluster();
    let ns = cluster.namespace("rc-scale").await;
    let client = cluster.client().await;
    let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), ns.as_str());
    let pods: Api<Pod> = Api::namespaced(client, ns.as_str());
    let labels = std::collections::BTreeMap::from([("app".to_string(), "frontend".to_string())]);
    let rc = ReplicationController {
        metadata: ObjectMeta {
            name: Some("frontend".into()),
            ..Default::default()
        },
        spec: Some(ReplicationControllerSpec {
            replicas: Some(3),
            selector: Some(labels.clone()),
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container("frontend")],
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    rcs.create(&PostParams::default(), &rc)
        .await
        .expect("create rc");

    tests::harness::wait_for_ready_replicas(&rcs, "frontend", 3, Duration::from_secs(60)).await;
    let listed = pods
        .list(&ListParams::default().labels("app=frontend"))
        .await
        .expect("list pods");
    assert_eq!(listed.items.len(), 3);
    assert!(listed.items.iter().all(pod_ready), "all pods Ready");
    assert!(listed.items.iter().all(|p| {
        p.owner_references()
            .iter()
            .any(|o| o.kind == "ReplicationController")
    }));

    let scale = serde_json::json!({"spec": {"replicas": 0}});
    rcs.patch("frontend", &PatchParams::default(), &Patch::Merge(&scale))
        .await
        .expect("scale to 0");
    tests::harness::wait_for_no_pods(&pods, "app=frontend", Duration::from_secs(60)).await;
}

#[tokio::test]
async fn limited_user_is_forbidden_outside_its_namespace() {
    let cluster = cluster();
    let ns = cluster.namespace("rbac").await;
    let limited = cluster.limited_client().await;
    let own: Api<Pod> = Api::namespaced(limited.clone(), tests::harness::LIMITED_NAMESPACE);
    own.list(&ListParams::default())
        .await
        .expect("limited user may list pods in its namespace");
    let other: Api<Pod> = Api::namespaced(limited, ns.as_str());
    match other.list(&ListParams::default()).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 403);
            assert!(status.is_forbidden(), "{status:?}");
            assert!(
                status
                    .message
                    .contains("User \"limited\" cannot list resource \"pods\""),
                "{}",
                status.message
            );
        }
        other => panic!("expected 403, got {other:?}"),
    }
}

#[test]
fn kubectl_plugin_list_shows_our_plugins_without_warnings() {
    let cluster = cluster();
    let out = cluster.kubectl().args(["plugin", "list"]).run();
    out.success();
    for plugin in PLUGINS {
        let path = cluster.plugin_dir.join(plugin_binary(plugin));
        assert!(
            out.stdout.contains(&path.display().to_string()),
            "{plugin} listed:\n{}",
            out.stdout
        );
    }
    assert!(
        !out.stderr.contains("warning"),
        "no warnings:\n{}",
        out.stderr
    );
}

#[test]
fn kubectl_reaches_our_binaries() {
    let cluster = cluster();
    for (plugin, about) in [
        ("rolling-update", "rolling update"),
        ("run-pod", "image in a pod"),
        ("create-file", "from a file or from stdin"),
    ] {
        let out = cluster.kubectl().args([plugin, "--help"]).run();
        out.success();
        assert!(
            out.stdout.contains(about),
            "kubectl {plugin} --help:\n{}",
            out.stdout
        );
        // The usage names the command as the user typed it, not the binary.
        let usage = format!("kubectl {plugin}");
        assert!(
            out.stdout.contains(&usage),
            "usage in help:\n{}",
            out.stdout
        );
    }
}

/// No verbosity prints a credential: each plugin, at every `-v` level kubectl users
/// reach for, on success and on API errors, with the token from the kubeconfig and
/// with `--token` on the command line. The high levels must really log the traffic
/// (the request URLs), or this would prove nothing.
#[tokio::test]
async fn no_verbosity_prints_the_token() {
    let cluster = cluster();
    let ns = cluster.namespace("smoke-verbose").await;
    // The harness writes one `token: <hex>` line per user.
    let tokens: Vec<String> = std::fs::read_to_string(&cluster.kubeconfig)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("token:"))
        .map(|t| t.trim().trim_matches('"').to_string())
        .filter(|t| t.len() >= 16)
        .collect();
    assert!(!tokens.is_empty(), "the test kubeconfig uses tokens");
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: verbose\ndata:\n  a: b\n";
    let token_flag = format!("--token={}", tokens[0]);
    let runs: Vec<(&str, Vec<&str>)> = vec![
        ("run-pod", vec!["v", "--image=nginx", "--dry-run=server"]),
        // 403: the API error path.
        ("run-pod", vec!["v", "--image=nginx", "--as=nobody"]),
        (
            "run-pod",
            vec!["v", "--image=nginx", "--dry-run=server", &token_flag],
        ),
        ("create-file", vec!["-f", "-"]),
        ("create-file", vec!["-f", "-", &token_flag]),
        // 404.
        ("rolling-update", vec!["missing", "--image=x", &token_flag]),
    ];
    for v in ["-v=0", "-v=6", "-v=9", "-v=10"] {
        for (plugin, args) in &runs {
            let out = cluster
                .plugin(plugin)
                .args(args)
                .args(["-n", ns.as_str(), v])
                .stdin(manifest)
                .run();
            for token in &tokens {
                assert!(
                    !out.stdout.contains(token.as_str()) && !out.stderr.contains(token.as_str()),
                    "{plugin} {args:?} {v} printed a token:\n{}\n{}",
                    out.stdout,
                    out.stderr
                );
            }
            if v == "-v=9" {
                assert!(
                    out.stderr.contains("https://127.0.0.1"),
                    "{plugin} {args:?} {v} logs its requests:\n{}",
                    out.stderr
                );
                assert!(!out.stderr.contains('\x1b'), "no colour into a pipe");
            }
        }
        // The ConfigMap of the create-file runs is created once per level.
        let _ = cluster
            .kubectl()
            .args([
                "delete",
                "configmap",
                "verbose",
                "-n",
                ns.as_str(),
                "--ignore-not-found",
            ])
            .run();
    }
}
