//! The plugins as a CI pipeline step runs them: inside a pod on the real node
//! (`harness::cluster`), as the pod's ServiceAccount (the projected token
//! the kubelet requests and rotates), limited by a namespaced Role, with no
//! kubeconfig and no terminal, output through a pipe, cancelled by SIGTERM. Each case
//! runs beside kubectl of the server's release in the same kind of pod where kubectl
//! has the command (rolling-update has none since 1.18).
//!
//! The pods run the host's binaries in the `ci-runner:1` image (a busybox rootfs):
//! hostPath volumes mount the build's binaries (the plugins), the reference kubectl's
//! directory and the C library they are linked against at their host paths, and
//! `PATH` in the container names the plugin and kubectl directories. They reach the API server as pods do, through the
//! `kubernetes` Service's cluster IP (kube-proxy's rules on the node), with the
//! kubelet's `KUBERNETES_SERVICE_HOST`/`_PORT` and its service-account volume.
//! `HOME` is the image's `/root`, where no kubeconfig exists.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, ReplicationController, Secret};
use k8s_openapi::api::rbac::v1::Role;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, ListParams, LogParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::await_condition;
use kube::{Api, Client};
use localcluster::steering::Readiness;
use serde_json::json;
use tests::harness::{Cluster, TestNamespace, cluster};

use crate::rolling_update::{NEW_IMAGE, OLD_IMAGE, create_ready, rc};

/// The token file every container reads.
const TOKEN: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/// `PATH` inside the CI pods: the plugins, the reference kubectl, the system.
fn ci_path(cluster: &Cluster) -> String {
    let kubectl_dir = cluster.kubectl_binary.parent().unwrap();
    format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        cluster.plugin_dir.display(),
        kubectl_dir.display()
    )
}

/// A ServiceAccount `ci` bound to a Role `ci` with `rules`, in `ns`.
async fn service_account(client: &Client, ns: &str, rules: serde_json::Value) {
    let sa: k8s_openapi::api::core::v1::ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "ci"}})).unwrap();
    Api::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &sa)
        .await
        .unwrap();
    grant(client, ns, ns, rules).await;
}

/// A Role `ci` with `rules` in `ns`, bound to the ServiceAccount `ci` of `sa_ns`.
async fn grant(client: &Client, sa_ns: &str, ns: &str, rules: serde_json::Value) {
    let post = PostParams::default();
    let role: Role =
        serde_json::from_value(json!({"metadata": {"name": "ci"}, "rules": rules})).unwrap();
    Api::<Role>::namespaced(client.clone(), ns)
        .create(&post, &role)
        .await
        .unwrap();
    let binding: k8s_openapi::api::rbac::v1::RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "ci"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "ci"},
        "subjects": [{"kind": "ServiceAccount", "name": "ci", "namespace": sa_ns}]
    }))
    .unwrap();
    Api::namespaced(client.clone(), ns)
        .create(&post, &binding)
        .await
        .unwrap();
}

/// The Roles the plugin READMEs ("In CI") give for rolling-update and run-pod,
/// together: the tests run with exactly these verbs.
fn deployer_rules() -> serde_json::Value {
    json!([
        {"apiGroups": [""], "resources": ["replicationcontrollers"],
         "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
        {"apiGroups": [""], "resources": ["replicationcontrollers/scale"], "verbs": ["patch"]},
        {"apiGroups": [""], "resources": ["pods"],
         "verbs": ["get", "list", "watch", "create", "update", "delete"]},
        {"apiGroups": [""], "resources": ["pods/attach"], "verbs": ["create", "get"]},
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]}
    ])
}

/// Where the tests write what the pods read (manifests) or leave (a token copy):
/// mounted read-write at the same path in every CI pod.
fn shared_dir() -> PathBuf {
    tests::harness::target_bin_dir().join("e2e-in-cluster")
}

/// The host directories a CI pod mounts at the same paths, read-only unless said: the
/// build's binary directory (the plugin directory's symbolic links point into it), the
/// reference kubectl's, the C library and loader they are linked against (`/lib`,
/// `/lib64` and `/usr/lib` are where `ldd` finds them; the busybox image has none),
/// and [`shared_dir`] (inside the first).
fn host_mounts(cluster: &Cluster) -> Vec<(String, bool)> {
    let kubectl_dir = cluster.kubectl_binary.parent().unwrap();
    let shared = shared_dir();
    std::fs::create_dir_all(&shared).unwrap();
    vec![
        (tests::harness::target_bin_dir().display().to_string(), true),
        (kubectl_dir.display().to_string(), true),
        ("/lib".to_owned(), true),
        ("/lib64".to_owned(), true),
        ("/usr/lib".to_owned(), true),
        (shared.display().to_string(), false),
    ]
}

/// A pod spec running `argv` as the `ci` ServiceAccount, never restarted, in the
/// `ci-runner:1` image (a busybox rootfs) with [`host_mounts`].
fn ci_pod_spec(
    cluster: &Cluster,
    argv: &[&str],
    env: &[(&str, &str)],
    grace_seconds: i64,
) -> serde_json::Value {
    let mut vars = vec![json!({"name": "PATH", "value": ci_path(cluster)})];
    vars.extend(env.iter().map(|(k, v)| json!({"name": k, "value": v})));
    let mounts = host_mounts(cluster);
    let volumes: Vec<_> = mounts
        .iter()
        .enumerate()
        .map(|(i, (path, _))| {
            json!({"name": format!("host-{i}"), "hostPath": {"path": path, "type": "Directory"}})
        })
        .collect();
    let volume_mounts: Vec<_> = mounts
        .iter()
        .enumerate()
        .map(|(i, (path, read_only))| {
            json!({"name": format!("host-{i}"), "mountPath": path, "readOnly": read_only})
        })
        .collect();
    json!({
        "serviceAccountName": "ci",
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": grace_seconds,
        "volumes": volumes,
        "containers": [{
            "name": "step", "image": "ci-runner:1", "command": argv, "env": vars,
            "volumeMounts": volume_mounts
        }]
    })
}

fn ci_pod(
    cluster: &Cluster,
    name: &str,
    argv: &[&str],
    env: &[(&str, &str)],
    annotations: &[(&str, &str)],
) -> Pod {
    let annotations: BTreeMap<&str, &str> = annotations.iter().copied().collect();
    serde_json::from_value(json!({
        "metadata": {"name": name, "annotations": annotations},
        "spec": ci_pod_spec(cluster, argv, env, 30),
    }))
    .unwrap()
}

/// How a pod's only container ended: (exit code, logs with the runtime's read times).
async fn wait_ended(pods: &Api<Pod>, name: &str, timeout: Duration) -> (i32, String) {
    let ended = |p: Option<&Pod>| p.and_then(terminated).is_some();
    tokio::time::timeout(timeout, await_condition(pods.clone(), name, ended))
        .await
        .unwrap_or_else(|_| panic!("pod {name} ended within {timeout:?}"))
        .unwrap();
    let pod = pods.get(name).await.unwrap();
    let code = terminated(&pod).unwrap();
    let logs = pods
        .logs(
            name,
            &LogParams {
                timestamps: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    (code, logs)
}

fn terminated(pod: &Pod) -> Option<i32> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .first()?
        .state
        .as_ref()?
        .terminated
        .as_ref()
        .map(|t| t.exit_code)
}

async fn wait_running(pods: &Api<Pod>, name: &str) {
    let running = |p: Option<&Pod>| {
        p.and_then(|p| p.status.as_ref())
            .and_then(|s| s.phase.as_deref())
            .is_some_and(|phase| phase != "Pending")
    };
    tokio::time::timeout(
        Duration::from_secs(60),
        await_condition(pods.clone(), name, running),
    )
    .await
    .unwrap_or_else(|_| panic!("pod {name} running within 60s"))
    .unwrap();
}

/// Log lines as (time the container runtime read them from the pipe, text).
fn timed(logs: &str) -> Vec<(Timestamp, String)> {
    logs.lines()
        .map(|line| {
            let (time, text) = line.split_once(' ').unwrap_or((line, ""));
            (time.parse().unwrap(), text.to_owned())
        })
        .collect()
}

fn text(logs: &str) -> String {
    timed(logs)
        .into_iter()
        .map(|(_, t)| t + "\n")
        .collect::<String>()
}

/// A Job whose one pod runs `argv` as `ci`; its exit code and output.
async fn job(
    cluster: &'static Cluster,
    client: &Client,
    ns: &str,
    name: &str,
    argv: &[&str],
) -> (i32, String) {
    let job: Job = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"backoffLimit": 0, "template": {"spec": ci_pod_spec(cluster, argv, &[], 30)}}
    }))
    .unwrap();
    Api::<Job>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &job)
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let selector = format!("batch.kubernetes.io/job-name={name}");
    let pod = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let list = pods
                .list(&ListParams::default().labels(&selector))
                .await
                .unwrap();
            if let Some(p) = list.items.into_iter().next() {
                return p.metadata.name.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .expect("the Job's pod within 60s");
    let (code, logs) = wait_ended(&pods, &pod, Duration::from_secs(90)).await;
    (code, text(&logs))
}

/// Waits until the authorizer lets the ServiceAccount `ci` of `ns` `verb`
/// `resource` there (a SubjectAccessReview, answered by the same authorizer).
async fn wait_allowed(client: &Client, ns: &str, verb: &str, resource: &str) {
    use k8s_openapi::api::authorization::v1::SubjectAccessReview;
    let review: SubjectAccessReview = serde_json::from_value(json!({
        "spec": {
            "user": format!("system:serviceaccount:{ns}:ci"),
            "groups": ["system:serviceaccounts", format!("system:serviceaccounts:{ns}")],
            "resourceAttributes": {"namespace": ns, "verb": verb, "resource": resource}
        }
    }))
    .unwrap();
    let reviews: Api<SubjectAccessReview> = Api::all(client.clone());
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let answer = reviews
                .create(&PostParams::default(), &review)
                .await
                .unwrap();
            if answer.status.is_some_and(|s| s.allowed) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{verb} {resource} allowed in {ns} within 30s"));
}

/// Writes the manifests of the create cases into a fresh directory under target/.
fn manifests(name: &str, docs: &[(&str, &str)]) -> PathBuf {
    let dir = shared_dir().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in docs {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

async fn names<K>(client: &Client, ns: &str) -> Vec<String>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let mut names: Vec<String> = Api::<K>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|o| o.meta().name.clone())
        .filter(|n| n != "kube-root-ca.crt")
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn create_file_in_a_job_as_a_service_account_beside_kubectl() {
    let cluster = cluster();
    let client = cluster.client().await;
    let dir = manifests(
        "job",
        &[
            (
                "a.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\ndata:\n  k: v\n",
            ),
            (
                "b.yaml",
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: two\nstringData:\n  k: v\n",
            ),
            (
                "c.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: three\n",
            ),
        ],
    );
    let dir_arg = dir.display().to_string();
    // The same steps in two namespaces: kubectl's, and the plugin's.
    let steps = |ns: TestNamespace, argv: Vec<String>| {
        let client = client.clone();
        async move {
            let ns_name = ns.name.clone();
            service_account(
                &client,
                &ns_name,
                json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "get", "list"]}]),
            )
            .await;
            // stderr into stdout's pipe, as most CI runners take a step's output:
            // two pipes read by two threads would order their lines by chance.
            let argv: Vec<&str> = ["sh", "-c", "exec \"$@\" 2>&1", "sh"]
                .into_iter()
                .chain(argv.iter().map(String::as_str))
                .collect();
            // The Role lacks `create secrets`: kubectl's Forbidden, exit 1, the rest created.
            let first = job(cluster, &client, &ns_name, "first", &argv).await;
            let after_first = (
                names::<ConfigMap>(&client, &ns_name).await,
                names::<Secret>(&client, &ns_name).await,
            );
            // Granted, the same step again finishes the job (AlreadyExists for the
            // others, as kubectl reports them).
            let patch = json!({"rules": [
                {"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["create", "get", "list"]}
            ]});
            Api::<Role>::namespaced(client.clone(), &ns_name)
                .patch("ci", &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .unwrap();
            // RBAC reaches the authorizer through the API server's informers: wait
            // until it says yes.
            wait_allowed(&client, &ns_name, "create", "secrets").await;
            let second = job(cluster, &client, &ns_name, "second", &argv).await;
            let after_second = (
                names::<ConfigMap>(&client, &ns_name).await,
                names::<Secret>(&client, &ns_name).await,
            );
            let normalise = |(code, out): (i32, String)| (code, out.replace(&ns_name, "NS"));
            (
                normalise(first),
                after_first,
                normalise(second),
                after_second,
                ns,
            )
        }
    };
    let (theirs, ours) = tokio::join!(
        steps(
            cluster.namespace("ci-job-kubectl").await,
            vec![
                "kubectl".into(),
                "create".into(),
                "-f".into(),
                dir_arg.clone()
            ]
        ),
        steps(
            cluster.namespace("ci-job-plugin").await,
            vec![
                "kubectl".into(),
                "create-file".into(),
                "-f".into(),
                dir_arg.clone()
            ]
        ),
    );
    let forbidden = format!(
        "configmap/one created\nconfigmap/three created\nError from server (Forbidden): error when creating \"{dir_arg}/b.yaml\": secrets is forbidden: User \"system:serviceaccount:NS:ci\" cannot create resource \"secrets\" in API group \"\" in the namespace \"NS\"\n"
    );
    assert_eq!(theirs.0, (1, forbidden), "kubectl create in a Job");
    assert_eq!(ours.0, theirs.0, "create-file in a Job, beside kubectl");
    let created = |cms: &[&str], secrets: &[&str]| {
        (
            cms.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
            secrets.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
        )
    };
    // In the ServiceAccount's namespace (no -n, no kubeconfig): the namespace file.
    assert_eq!(theirs.1, created(&["one", "three"], &[]));
    assert_eq!(ours.1, theirs.1);
    assert_eq!(ours.2, theirs.2, "the re-run, beside kubectl");
    assert_eq!(ours.2.0, 1, "{}", ours.2.1);
    assert!(ours.2.1.contains("secret/two created\n"), "{}", ours.2.1);
    assert_eq!(theirs.3, created(&["one", "three"], &["two"]));
    assert_eq!(ours.3, theirs.3, "the re-run finished the job");
}

#[tokio::test(flavor = "multi_thread")]
async fn created_lines_reach_a_pipe_as_they_happen_in_a_pod() {
    use tests::faults::latency::LatencyProxy;
    // Every request takes at least this long more, so the creates (one at a time,
    // as kubectl sends them) are spread out in time: each `created` line must
    // reach the runtime's end of the pipe while the next create is under way.
    const RTT: Duration = Duration::from_millis(600);
    const N: usize = 4;
    let cluster = cluster();
    let client = cluster.client().await;
    // The proxy listens on the node IP inside the cluster's network namespace, where
    // the pods are, and forwards to the API server on this side's loopback.
    let netns = std::path::Path::new("/run/netns").join(cluster.netns.as_deref().unwrap());
    let listener = localcluster::realnode::netns::listen_inside_at(
        &netns,
        localcluster::controlplane::NODE_IP,
    )
    .unwrap();
    let kubeconfig = kube::config::Kubeconfig::read_from(&cluster.kubeconfig).unwrap();
    let upstream = tests::faults::latency::server_addr(&kubeconfig).unwrap();
    let proxy = LatencyProxy::serve(listener, upstream, RTT).unwrap();
    let port = proxy.addr.port().to_string();
    let host = localcluster::controlplane::NODE_IP.to_string();
    let docs: String = (0..N)
        .map(|i| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\n---\n"))
        .collect();
    let dir = manifests("pipe", &[("cms.yaml", &docs)]);
    let file = dir.join("cms.yaml").display().to_string();
    let run = |ns: TestNamespace, argv: Vec<&'static str>| {
        let client = client.clone();
        let file = file.clone();
        let port = port.clone();
        let host = host.clone();
        async move {
            service_account(
                &client,
                ns.as_str(),
                json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]),
            )
            .await;
            let mut argv: Vec<&str> = argv;
            argv.push(&file);
            // The pod reaches the API server through the proxy (the serving
            // certificate names the node IP): the container's own `env` comes after
            // the kubernetes Service's variables.
            let pod = ci_pod(
                cluster,
                "step",
                &argv,
                &[
                    ("KUBERNETES_SERVICE_HOST", &host),
                    ("KUBERNETES_SERVICE_PORT", &port),
                ],
                &[],
            );
            let pods: Api<Pod> = Api::namespaced(client.clone(), ns.as_str());
            pods.create(&PostParams::default(), &pod).await.unwrap();
            let (code, logs) = wait_ended(&pods, "step", Duration::from_secs(120)).await;
            (code, logs, ns)
        }
    };
    let (theirs, ours) = tokio::join!(
        run(
            cluster.namespace("ci-pipe-kubectl").await,
            vec!["kubectl", "create", "-f"]
        ),
        run(
            cluster.namespace("ci-pipe-plugin").await,
            vec!["kubectl", "create-file", "--concurrency=1", "-f"]
        ),
    );
    for (who, (code, logs, _)) in [("kubectl", &theirs), ("create-file", &ours)] {
        assert_eq!(*code, 0, "{who}\n{logs}");
        let lines = timed(logs);
        let texts: Vec<&str> = lines.iter().map(|(_, t)| t.as_str()).collect();
        let want: Vec<String> = (0..N).map(|i| format!("configmap/cm{i} created")).collect();
        assert_eq!(texts, want, "{who}");
        // containerd stamps each read from the pipe. Lines held back until exit
        // would come in one read; lines written as each create is answered are
        // read at least one round trip apart (half of it allowed for a slow read).
        let spread = lines[N - 1].0.duration_since(lines[0].0);
        let at_least = RTT * u32::try_from(N - 1).unwrap() / 2;
        assert!(
            spread >= k8s_openapi::jiff::SignedDuration::try_from(at_least).unwrap(),
            "{who}: the created lines came {spread:?} apart, not one round trip each:\n{logs}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn run_pod_and_rolling_update_run_from_a_pod() {
    let cluster = cluster();
    let client = cluster.client().await;
    let run = |ns: TestNamespace, argv: Vec<&'static str>| {
        let client = client.clone();
        async move {
            service_account(&client, ns.as_str(), deployer_rules()).await;
            let pods: Api<Pod> = Api::namespaced(client.clone(), ns.as_str());
            let argv: Vec<&str> = ["sh", "-c", "exec \"$@\" 2>&1", "sh"]
                .into_iter()
                .chain(argv)
                .collect();
            pods.create(
                &PostParams::default(),
                &ci_pod(cluster, "step", &argv, &[], &[]),
            )
            .await
            .unwrap();
            let (code, logs) = wait_ended(&pods, "step", Duration::from_secs(60)).await;
            let made = pods.get("made").await.unwrap();
            let image = made.spec.unwrap().containers[0].image.clone();
            (code, text(&logs).replace(ns.as_str(), "NS"), image, ns)
        }
    };
    let args = [
        "made",
        "--image=busybox:1.36",
        "--restart=Never",
        "--labels=app=made",
    ];
    let (theirs, ours) = tokio::join!(
        run(
            cluster.namespace("ci-run-kubectl").await,
            [&["kubectl", "run"][..], &args].concat()
        ),
        run(
            cluster.namespace("ci-run-plugin").await,
            [&["kubectl", "run-pod"][..], &args].concat()
        ),
    );
    assert_eq!((theirs.0, theirs.1.as_str()), (0, "pod/made created\n"));
    assert_eq!((ours.0, &ours.1, &ours.2), (theirs.0, &theirs.1, &theirs.2));

    // rolling-update (which kubectl no longer has) from a pod of the same kind,
    // in the ServiceAccount's namespace.
    let ns = ours.3;
    let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "web",
            "web",
            &[],
            &[("c", OLD_IMAGE)],
            2,
            Readiness::Started,
        ),
    )
    .await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns.as_str());
    let image = format!("--image={NEW_IMAGE}");
    let argv = [
        "sh",
        "-c",
        "exec \"$@\" 2>&1",
        "sh",
        "kubectl",
        "rolling-update",
        "web",
        &image,
        "--update-period=1s",
    ];
    pods.create(
        &PostParams::default(),
        &ci_pod(cluster, "update", &argv, &[], &[]),
    )
    .await
    .unwrap();
    let (code, logs) = wait_ended(&pods, "update", Duration::from_secs(90)).await;
    let out = text(&logs);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("Created web-"), "{out}");
    assert!(
        out.ends_with("replicationcontroller/web rolling updated\n"),
        "{out}"
    );
    // No terminal: no colour, no progress bar redrawn with carriage returns.
    assert!(!out.contains(['\x1b', '\r']), "{out:?}");
    let web = rcs.get("web").await.unwrap();
    let template = web.spec.unwrap().template.unwrap().spec.unwrap();
    assert_eq!(template.containers[0].image.as_deref(), Some(NEW_IMAGE));
}

/// A runner namespace holding the CI pod and its ServiceAccount, and a target
/// namespace holding the RC (so that the RC's invariants see only its pods),
/// where the ServiceAccount may deploy.
async fn runner_and_target(test: &str) -> (TestNamespace, TestNamespace, Client) {
    let cluster = cluster();
    let client = cluster.client().await;
    let runner = cluster.namespace(&format!("{test}-runner")).await;
    let target = cluster.namespace(&format!("{test}-target")).await;
    let sa: k8s_openapi::api::core::v1::ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "ci"}})).unwrap();
    Api::namespaced(client.clone(), runner.as_str())
        .create(&PostParams::default(), &sa)
        .await
        .unwrap();
    grant(&client, runner.as_str(), target.as_str(), deployer_rules()).await;
    (runner, target, client)
}

/// Follows a pod's output until it ends, line by line, into a shared buffer.
fn follow(
    pods: &Api<Pod>,
    name: &str,
) -> (
    std::sync::Arc<std::sync::Mutex<String>>,
    tokio::task::JoinHandle<()>,
) {
    use futures::{AsyncBufReadExt as _, TryStreamExt as _};
    let out = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let pods = pods.clone();
    let name = name.to_owned();
    let buffer = std::sync::Arc::clone(&out);
    let task = tokio::spawn(async move {
        let params = LogParams {
            follow: true,
            ..Default::default()
        };
        let stream = pods.log_stream(&name, &params).await.unwrap();
        let mut lines = stream.lines();
        while let Ok(Some(line)) = lines.try_next().await {
            let mut b = buffer.lock().unwrap();
            b.push_str(&line);
            b.push('\n');
        }
    });
    (out, task)
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_to_a_pod_mid_update_then_a_rerun_resumes() {
    use tests::faults::invariants::{Expect, RcInvariants};
    const REPLICAS: i32 = 3;
    let cluster = cluster();
    let (runner, target, client) = runner_and_target("ci-sigterm").await;
    let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), target.as_str());
    create_ready(
        &rcs,
        &rc(
            "web",
            "web",
            &[],
            &[("c", OLD_IMAGE)],
            REPLICAS,
            Readiness::Started,
        ),
    )
    .await;
    let invariants = RcInvariants::watch(client.clone(), target.as_str()).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), runner.as_str());
    let image = format!("--image={NEW_IMAGE}");
    let namespace = format!("--namespace={}", target.as_str());
    let argv = [
        "sh",
        "-c",
        "exec \"$@\" 2>&1",
        "sh",
        "kubectl",
        "rolling-update",
        "web",
        &image,
        "--update-period=2s",
        &namespace,
    ];
    // The pipeline is cancelled: the runner deletes the step's pod, the kubelet sends
    // SIGTERM, then SIGKILL once the grace period is over.
    let first = ci_pod(cluster, "step-1", &argv, &[], &[]);
    pods.create(&PostParams::default(), &first).await.unwrap();
    wait_running(&pods, "step-1").await;
    let (out, following) = follow(&pods, "step-1");
    tokio::time::timeout(Duration::from_secs(60), async {
        while !out.lock().unwrap().contains(" up to 2\n") {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the update's second step within 60s:\n{}",
            out.lock().unwrap()
        )
    });
    // The kubelet posts the terminated status before it deletes the pod. The watch is
    // established (its initial list done) before the delete: the plugin exits at once
    // on SIGTERM, and a watch started after the pod was gone would never see it end.
    let mut events = kube::runtime::watcher(
        pods.clone(),
        kube::runtime::watcher::Config::default().fields("metadata.name=step-1"),
    )
    .boxed();
    while !matches!(
        events.try_next().await.expect("watch the step's pod"),
        Some(kube::runtime::watcher::Event::InitDone) | None
    ) {}
    pods.delete("step-1", &DeleteParams::default().grace_period(5))
        .await
        .unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(event) = events.try_next().await.expect("watch the step's pod") {
            if let kube::runtime::watcher::Event::Apply(pod) = event
                && terminated(&pod).is_some()
            {
                return Some(pod);
            }
        }
        None
    })
    .await
    .expect("the pod ended within 30s");
    let _ = tokio::time::timeout(Duration::from_secs(30), following).await;
    let out = out.lock().unwrap().clone();
    assert_eq!(ended.as_ref().and_then(terminated), Some(143), "{out}");
    let hint = format!(
        "error: interrupted by SIGTERM\nThe update is left in progress. Run the same command again to resume it:\n  kubectl rolling-update web {image} --update-period=2s {namespace}\nor abort it with:\n  kubectl rolling-update web --rollback {namespace}\n"
    );
    assert!(out.ends_with(&hint), "the resume hint on SIGTERM:\n{out}");
    // The same step again, in a new pod, finishes the update.
    let second = ci_pod(cluster, "step-2", &argv, &[], &[]);
    pods.create(&PostParams::default(), &second).await.unwrap();
    let (code, logs) = wait_ended(&pods, "step-2", Duration::from_secs(90)).await;
    assert_eq!(code, 0, "the re-run:\n{}", text(&logs));
    invariants
        .assert_holds(
            &Expect {
                rc: "web".into(),
                replicas: REPLICAS,
                image: NEW_IMAGE.into(),
                min_ready: REPLICAS as usize,
                max_total: REPLICAS as usize + 1,
            },
            Duration::from_secs(60),
        )
        .await;
}

/// A client of the cluster's API server that sends `token` and nothing else.
async fn client_with_token(cluster: &Cluster, token: &str) -> Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(&cluster.kubeconfig).unwrap();
    let mut config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    config.auth_info = kube::config::AuthInfo {
        token: Some(token.to_owned().into()),
        ..Default::default()
    };
    Client::try_from(config).unwrap()
}

/// The shortest token lifetime the API allows a projected token (`expirationSeconds`).
const SHORTEST_TOKEN_SECONDS: i64 = 600;

/// The pod of the rotation test: the service-account volume written out as the
/// kubelet's own `kube-api-access-*`, but with the shortest token lifetime, so the
/// kubelet replaces the token (at 80% of it) while the step runs.
fn short_token_pod(cluster: &Cluster, script: &str, env: &[(&str, &str)]) -> Pod {
    let mut spec = ci_pod_spec(cluster, &["sh", "-c", script], env, 30);
    spec["automountServiceAccountToken"] = json!(false);
    spec["volumes"].as_array_mut().unwrap().push(json!({
        "name": "short-token",
        "projected": {"sources": [
            {"serviceAccountToken": {"path": "token", "expirationSeconds": SHORTEST_TOKEN_SECONDS}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}}
        ]}
    }));
    spec["containers"][0]["volumeMounts"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "short-token", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}));
    serde_json::from_value(json!({"metadata": {"name": "deploy"}, "spec": spec})).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_rolling_update_in_a_pod_outlives_its_first_token() {
    use tests::faults::invariants::{Expect, RcInvariants};
    const REPLICAS: i32 = 6;
    let cluster = cluster();
    let (runner, target, client) = runner_and_target("ci-rotation").await;
    let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), target.as_str());
    create_ready(
        &rcs,
        &rc(
            "web",
            "web",
            &[],
            &[("c", OLD_IMAGE)],
            REPLICAS,
            Readiness::Started,
        ),
    )
    .await;
    let invariants = RcInvariants::watch(client.clone(), target.as_str()).await;

    // The step keeps a copy of the token it started with, for the test to try.
    let dir = manifests("rotation", &[]);
    let old_copy = dir.join("first-token");
    let old_env = old_copy.display().to_string();
    let image = format!("--image={NEW_IMAGE}");
    let namespace = format!("--namespace={}", target.as_str());
    // Six steps of 130 s: about 13 min, beyond the first token's 10 min (and the
    // minute's leeway after it in which the API server still accepts it). The kubelet
    // writes a new token from 8 min on (80% of its lifetime, at its next sync of the
    // pod), and a client reads its token file again after a minute (client-go's
    // period, and the plugins'): the step must have switched before the first expires.
    let script = format!(
        "cp {TOKEN} \"$FIRST\" || exit 99\n\
         kubectl rolling-update web {image} --update-period=130s {namespace} 2>&1\n\
         code=$?\n\
         if cmp -s {TOKEN} \"$FIRST\"; then echo 'token: unchanged'; else echo 'token: rewritten'; fi\n\
         exit $code"
    );
    let pod = short_token_pod(cluster, &script, &[("FIRST", &old_env)]);
    let pods: Api<Pod> = Api::namespaced(client.clone(), runner.as_str());
    pods.create(&PostParams::default(), &pod).await.unwrap();
    wait_running(&pods, "deploy").await;
    let first = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match std::fs::read_to_string(&old_copy) {
                Ok(token) if !token.is_empty() => return token,
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    })
    .await
    .expect("the step copied its first token");
    let as_first = client_with_token(cluster, &first).await;
    let target_pods: Api<Pod> = Api::namespaced(as_first, target.as_str());
    target_pods
        .list(&ListParams::default())
        .await
        .expect("the first token is accepted while it is current");

    // The first token expires while the update runs; the API server refuses it from a
    // minute after its expiry on (the JWT validator's leeway for clock skew).
    let lifetime = Duration::from_secs(SHORTEST_TOKEN_SECONDS.unsigned_abs());
    let refused = tokio::time::timeout(lifetime + Duration::from_secs(120), async {
        loop {
            match target_pods.list(&ListParams::default()).await {
                Err(kube::Error::Api(status)) if status.code == 401 => return,
                _ => tokio::time::sleep(Duration::from_secs(1)).await,
            }
        }
    })
    .await;
    let revoked_at = Timestamp::now();
    assert!(
        refused.is_ok(),
        "the first token is refused once it expired"
    );
    assert_eq!(
        terminated(&pods.get("deploy").await.unwrap()),
        None,
        "the update still runs"
    );

    let (code, logs) = wait_ended(&pods, "deploy", Duration::from_secs(300)).await;
    let out = text(&logs);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.ends_with("replicationcontroller/web rolling updated\ntoken: rewritten\n"),
        "{out}"
    );
    // Progress lines reached the pipe as they happened: some were read before the
    // first token expired and some after.
    let lines = timed(&logs);
    let before = lines.iter().filter(|(t, _)| *t < revoked_at).count();
    let after = lines
        .iter()
        .filter(|(t, l)| *t > revoked_at && l.starts_with("Scaling "))
        .count();
    assert!(
        before >= 3 && after >= 1,
        "progress through the pipe as it happened:\n{logs}"
    );
    invariants
        .assert_holds(
            &Expect {
                rc: "web".into(),
                replicas: REPLICAS,
                image: NEW_IMAGE.into(),
                min_ready: REPLICAS as usize,
                max_total: REPLICAS as usize + 1,
            },
            Duration::from_secs(60),
        )
        .await;
}

/// The codes in the first column of the "Exit codes" table of `plugin`'s README.
/// `create-file --wait` in a Job as a ServiceAccount that may not list events: the
/// objects' own conditions still end the wait (a failed Job, with its failure).
#[tokio::test(flavor = "multi_thread")]
async fn create_file_wait_in_a_job_without_events() {
    let cluster = cluster();
    let client = cluster.client().await;
    let ns = cluster.namespace("ci-wait").await;
    service_account(
        &client,
        ns.as_str(),
        json!([
            {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create", "get", "list", "watch"]},
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
        ]),
    )
    .await;
    let failing = json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate"},
        "spec": {"backoffLimit": 0, "template": {
            "spec": {"restartPolicy": "Never", "containers": [
                {"name": "m", "image": "migrate:1", "command": ["sh", "-c", "exit 3"]}]}}}
    })
    .to_string();
    let dir = manifests("wait-no-events", &[("job.json", &failing)]);
    let file = dir.join("job.json").display().to_string();
    let argv = [
        "sh",
        "-c",
        "exec \"$@\" 2>&1",
        "sh",
        "kubectl",
        "create-file",
        "-f",
        file.as_str(),
        "--wait",
        "--timeout=120s",
    ];
    let (code, out) = job(cluster, &client, ns.as_str(), "step", &argv).await;
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("job.batch/migrate created\n"), "{out}");
    assert!(
        out.contains("error: job.batch/migrate: job \"migrate\" failed: BackoffLimitExceeded: "),
        "{out}"
    );
}

fn readme_exit_codes(plugin: &str) -> Vec<i32> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root");
    let readme = std::fs::read_to_string(root.join("plugins").join(plugin).join("README.md"))
        .expect("the plugin's README");
    let table = readme
        .split_once("### Exit codes\n")
        .unwrap_or_else(|| panic!("{plugin}'s README has an \"Exit codes\" table"))
        .1;
    let mut codes: Vec<i32> = table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|row| {
            let cell = row
                .trim_start_matches('|')
                .split('|')
                .next()
                .unwrap_or_default();
            cell.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{plugin}'s README: not a code in {row:?}"))
        })
        .collect();
    codes.sort_unstable();
    codes
}

/// A process's end as a shell reports it: its exit code, or 128 + the signal.
async fn shell_code(child: &mut tokio::process::Child) -> i32 {
    use std::os::unix::process::ExitStatusExt as _;
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .expect("the plugin ended within 60s")
        .unwrap();
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap()
}

/// Runs `plugin args` against `kubeconfig` to its end; its code.
async fn code_of(
    cluster: &Cluster,
    kubeconfig: &std::path::Path,
    plugin: &str,
    args: &[&str],
) -> i32 {
    let mut child = tests::harness::spawn_plugin(&cluster.plugin_dir, plugin, kubeconfig, args);
    shell_code(&mut child).await
}

/// Starts `plugin args`, sends `signal` once `ready` resolves, returns its code.
async fn code_after_signal(
    cluster: &Cluster,
    kubeconfig: &std::path::Path,
    plugin: &str,
    args: &[&str],
    ready: impl std::future::Future<Output = ()>,
    signal: i32,
) -> i32 {
    let mut child = tests::harness::spawn_plugin(&cluster.plugin_dir, plugin, kubeconfig, args);
    ready.await;
    assert!(localcluster::controlplane::signal(
        child.id().unwrap(),
        signal
    ));
    shell_code(&mut child).await
}

#[tokio::test(flavor = "multi_thread")]
async fn every_exit_code_each_readme_lists() {
    use tests::faults::latency::LatencyProxy;
    let cluster = cluster();
    let client = cluster.client().await;
    let ns = cluster.namespace("exit-codes").await;
    let ns_flag = format!("--namespace={}", ns.as_str());
    let kc = cluster.kubeconfig.as_path();

    // create-file. A far-away server keeps it busy long enough to be signalled
    // (it has no handler: the signal's default action ends it).
    let dir = manifests(
        "exit-codes",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n",
        )],
    );
    let file = dir.join("cm.yaml").display().to_string();
    let far = LatencyProxy::for_kubeconfig(kc, Duration::from_secs(2)).unwrap();
    let far_kc = far.kubeconfig(kc).unwrap();
    let create = ["-f", file.as_str(), ns_flag.as_str()];
    let mut create_file = BTreeMap::new();
    create_file.insert(0, code_of(cluster, kc, "create-file", &create).await);
    // The same again: AlreadyExists.
    create_file.insert(1, code_of(cluster, kc, "create-file", &create).await);
    for (code, signal) in [(130, libc::SIGINT), (143, libc::SIGTERM)] {
        // Signalled once it has connected to the far-away server (an event, not a
        // delay after the spawn, which a loaded machine can outlast): its create is
        // then at least a 2 s round trip from done.
        let before = far.traffic().connections;
        let connected = async {
            while far.traffic().connections == before {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        let got =
            code_after_signal(cluster, &far_kc, "create-file", &create, connected, signal).await;
        create_file.insert(code, got);
    }

    // 124: `--wait` past `--timeout`, for pods that never become ready.
    let never_ready = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "never"},
        "spec": {"selector": {"matchLabels": {"app": "never"}}, "template": {
            "metadata": {"labels": {"app": "never"}},
            "spec": {"containers": [{"name": "c", "image": "web:1",
                "readinessProbe": {"exec": {"command": ["false"]}, "periodSeconds": 1}}]}}}
    })
    .to_string();
    let dir = manifests("exit-codes-wait", &[("never.json", &never_ready)]);
    let file = dir.join("never.json").display().to_string();
    let wait = [
        "-f",
        file.as_str(),
        ns_flag.as_str(),
        "--wait",
        "--timeout=3s",
    ];
    create_file.insert(124, code_of(cluster, kc, "create-file", &wait).await);

    // run-pod. 3: the attached container's own code. The signals come while it
    // waits for a pod that cannot be scheduled.
    let mut run_pod = BTreeMap::new();
    let p0 = [
        "p0",
        "--image=busybox:1.36",
        "--restart=Never",
        ns_flag.as_str(),
    ];
    run_pod.insert(0, code_of(cluster, kc, "run-pod", &p0).await);
    // No name: a usage error.
    run_pod.insert(
        1,
        code_of(cluster, kc, "run-pod", &["--image=busybox:1.36"]).await,
    );
    let p3: Vec<&str> = vec![
        "p3",
        "--image=busybox:1.36",
        "--restart=Never",
        ns_flag.as_str(),
        "--attach",
        "--command",
        "--",
        "sh",
        "-c",
        "exit 3",
    ];
    run_pod.insert(3, code_of(cluster, kc, "run-pod", &p3).await);
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns.as_str());
    for (code, name, signal) in [(130, "p130", libc::SIGINT), (143, "p143", libc::SIGTERM)] {
        let args = [
            name,
            "--image=busybox:1.36",
            "--restart=Never",
            ns_flag.as_str(),
            "--attach",
            r#"--overrides={"spec":{"nodeSelector":{"kubeplug.io/nowhere":"x"}}}"#,
        ];
        let created = async {
            while pods.get_opt(name).await.unwrap().is_none() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        run_pod.insert(
            code,
            code_after_signal(cluster, kc, "run-pod", &args, created, signal).await,
        );
    }

    // rolling-update: signalled once the update has taken its first step.
    let mut rolling = BTreeMap::new();
    let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), ns.as_str());
    for name in ["web0", "web130", "web143"] {
        create_ready(
            &rcs,
            &rc(name, name, &[], &[("c", OLD_IMAGE)], 2, Readiness::Started),
        )
        .await;
    }
    let image = format!("--image={NEW_IMAGE}");
    let update =
        |name: &'static str| [name, image.as_str(), "--update-period=3s", ns_flag.as_str()];
    rolling.insert(
        0,
        code_of(cluster, kc, "rolling-update", &update("web0")).await,
    );
    rolling.insert(
        1,
        code_of(cluster, kc, "rolling-update", &update("nope")).await,
    );
    for (code, name, signal) in [
        (130, "web130", libc::SIGINT),
        (143, "web143", libc::SIGTERM),
    ] {
        let stepped = async {
            // The new RC scaled up: the update is under way.
            loop {
                let list = rcs.list(&ListParams::default()).await.unwrap();
                if list.items.iter().any(|rc| {
                    rc.metadata
                        .name
                        .as_deref()
                        .is_some_and(|n| n.starts_with(&format!("{name}-")))
                        && rc.status.as_ref().is_some_and(|s| s.replicas >= 1)
                }) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        rolling.insert(
            code,
            code_after_signal(
                cluster,
                kc,
                "rolling-update",
                &update(name),
                stepped,
                signal,
            )
            .await,
        );
    }

    for (plugin, seen) in [
        ("create-file", create_file),
        ("run-pod", run_pod),
        ("rolling-update", rolling),
    ] {
        let listed: Vec<i32> = seen.keys().copied().collect();
        assert_eq!(
            readme_exit_codes(plugin),
            listed,
            "{plugin}: the README's codes are the ones tested"
        );
        for (want, got) in seen {
            assert_eq!(got, want, "{plugin}: the case for exit code {want}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn edit_without_a_terminal_fails_as_kubectl_does() {
    let cluster = cluster();
    let client = cluster.client().await;
    let ns = cluster.namespace("ci-edit").await;
    service_account(
        &client,
        ns.as_str(),
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]),
    )
    .await;
    let dir = manifests(
        "edit",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: edited\n",
        )],
    );
    // Editors that cannot work in a pipeline: one that fails, a path that does not
    // exist, a name PATH does not hold, a command line (split at its spaces, no
    // shell, as kubectl runs one without quotes). (With no EDITOR at
    // all, kubectl and the plugin both start vi, which waits on a terminal that is
    // not there, as kubectl does.)
    let script = format!(
        "for e in false /nonexistent/editor no-such-editor 'no-such-editor --wait'; do\n\
         EDITOR=\"$e\" kubectl \"$0\" -f {} --edit 2>&1; echo \"exit $?\"\ndone",
        dir.display()
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns.as_str());
    for (name, command) in [("kubectl", "create"), ("plugin", "create-file")] {
        let pod = ci_pod(cluster, name, &["sh", "-c", &script, command], &[], &[]);
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    let (theirs, ours) = tokio::join!(
        wait_ended(&pods, "kubectl", Duration::from_secs(60)),
        wait_ended(&pods, "plugin", Duration::from_secs(60)),
    );
    let theirs = text(&theirs.1);
    assert_eq!(
        theirs,
        "error: there was a problem with the editor \"false\"\nexit 1\n\
         error: there was a problem with the editor \"/nonexistent/editor\"\nexit 1\n\
         error: unable to launch the editor \"no-such-editor\"\nexit 1\n\
         error: unable to launch the editor \"no-such-editor --wait\"\nexit 1\n"
    );
    assert_eq!(
        text(&ours.1),
        theirs,
        "create-file --edit beside kubectl create --edit"
    );
    assert_eq!(
        names::<ConfigMap>(&client, ns.as_str()).await,
        Vec::<String>::new()
    );
}
