//! `kubectl run-pod` against the local control plane, through the real `kubectl` and
//! its plugin lookup: pods, `--expose`, dry runs, the legacy generators, overrides,
//! `--save-config`/`--field-manager`, and kubectl-shaped server errors.
//!
//! Attached runs (`-i`, `-t`, `--attach`, container exit codes) are in `run_pod_attach`.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, ReplicationController, Service};
use kube::Api;
use kube::api::{ApiResource, DynamicObject};
use kube::runtime::wait::await_condition;
use localcluster::steering;
use tests::harness::{LIMITED_CONTEXT, Output, Release, cluster, wait_for_ready_replicas};
use tests::live::{Live, Stream};
use tests::objects::pod_ready;

/// `kubectl run-pod -n NS ARGS…` on the shared cluster.
pub(crate) fn run_pod(ns: &str, args: &[&str]) -> Output {
    cluster()
        .kubectl()
        .args(["run-pod", "-n", ns])
        .args(args)
        .run()
}

#[tokio::test]
async fn pod_is_created_and_becomes_ready() {
    let ns = cluster().namespace("run-pod-ready").await;
    let out = run_pod(
        ns.as_str(),
        &[
            "web",
            "--image=nginx",
            "--port=80",
            "--env=A=1",
            "--labels=app=web",
        ],
    );
    out.success();
    assert_eq!(out.stdout, "pod/web created\n");
    let pods: Api<Pod> = Api::namespaced(cluster().client().await, ns.as_str());
    let pod = tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(pods, "web", |p: Option<&Pod>| p.is_some_and(pod_ready)),
    )
    .await
    .expect("Ready within 30s")
    .expect("watch")
    .expect("pod exists");
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("app").map(String::as_str), Some("web"));
    let spec = pod.spec.expect("spec");
    assert_eq!(spec.containers[0].image.as_deref(), Some("nginx"));
    assert_eq!(
        spec.containers[0]
            .ports
            .as_ref()
            .map(|p| p[0].container_port),
        Some(80)
    );
    assert_eq!(spec.restart_policy.as_deref(), Some("Always"));
}

#[tokio::test]
async fn expose_creates_a_service_selecting_the_pod() {
    let ns = cluster().namespace("run-pod-expose").await;
    let out = run_pod(
        ns.as_str(),
        &["web", "--image=nginx", "--port=8080", "--expose"],
    );
    out.success();
    // kubectl 1.37's order: the pod, then the service (1.32 printed the service first).
    assert_eq!(out.stdout, "pod/web created\nservice/web created\n");
    let services: Api<Service> = Api::namespaced(cluster().client().await, ns.as_str());
    let svc = services.get("web").await.expect("service exists");
    let spec = svc.spec.expect("spec");
    assert_eq!(
        spec.selector
            .unwrap_or_default()
            .get("run")
            .map(String::as_str),
        Some("web")
    );
    let port = &spec.ports.expect("ports")[0];
    assert_eq!(port.port, 8080);
    assert_eq!(port.protocol.as_deref(), Some("TCP"));
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
}

#[tokio::test]
async fn server_dry_run_creates_nothing() {
    let ns = cluster().namespace("run-pod-dry-run").await;
    let out = run_pod(
        ns.as_str(),
        &[
            "web",
            "--image=nginx",
            "--dry-run=server",
            "--expose",
            "--port=80",
        ],
    );
    out.success();
    assert_eq!(
        out.stdout,
        "pod/web created (server dry run)\nservice/web created (server dry run)\n"
    );
    let client = cluster().client().await;
    assert!(
        Api::<Pod>::namespaced(client.clone(), ns.as_str())
            .get_opt("web")
            .await
            .expect("get")
            .is_none()
    );
    assert!(
        Api::<Service>::namespaced(client, ns.as_str())
            .get_opt("web")
            .await
            .expect("get")
            .is_none()
    );
    // The server did see the object: it was defaulted and given a uid.
    let out = run_pod(
        ns.as_str(),
        &["web", "--image=nginx", "--dry-run=server", "-o", "json"],
    );
    out.success();
    let obj: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(obj["metadata"]["namespace"], ns.as_str());
    assert_eq!(
        obj["spec"]["containers"][0]["terminationMessagePath"],
        "/dev/termination-log"
    );
}

#[tokio::test]
async fn client_dry_run_needs_no_server() {
    // No kubeconfig at all: the command must not try to reach anything.
    let out = cluster()
        .plugin("run-pod")
        .env("KUBECONFIG", "/nonexistent")
        .args(["web", "--image=nginx", "--dry-run=client", "-o", "name"])
        .run();
    out.success();
    assert_eq!(out.stdout, "pod/web\n");
}

#[tokio::test]
async fn legacy_deployment_gets_ready_replicas() {
    let ns = cluster().namespace("run-pod-deployment").await;
    let out = run_pod(ns.as_str(), &["web", "--image=nginx", "--replicas=2"]);
    out.success();
    assert_eq!(out.stdout, "deployment.apps/web created\n");
    let deployments: Api<Deployment> = Api::namespaced(cluster().client().await, ns.as_str());
    let ready = |d: Option<&Deployment>| {
        d.and_then(|d| d.status.as_ref())
            .and_then(|s| s.ready_replicas)
            == Some(2)
    };
    tokio::time::timeout(
        Duration::from_secs(60),
        await_condition(deployments, "web", ready),
    )
    .await
    .expect("2 ready replicas within 60s (real controller-manager)")
    .expect("watch");
}

/// kubectl 1.17's `run/v1` followed by `rolling-update`, the chain the tutorials of
/// the time used: a ReplicationController selecting `run=web` whose 3 pods the real
/// controller-manager creates and the node makes Ready, then rolled to a new image.
#[tokio::test]
async fn run_v1_creates_a_replication_controller_that_rolling_update_moves() {
    let ns = cluster().namespace("run-pod-run-v1").await;
    let out = run_pod(
        ns.as_str(),
        &[
            "web",
            "--generator=run/v1",
            "--image=nginx:1",
            "--replicas=3",
        ],
    );
    out.success();
    assert_eq!(
        out.stdout,
        "replicationcontroller/web created
"
    );
    assert_eq!(out.stderr, "");
    let client = cluster().client().await;
    let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), ns.as_str());
    wait_for_ready_replicas(&rcs, "web", 3, Duration::from_secs(60)).await;
    let rc = rcs.get("web").await.expect("rc");
    let spec = rc.spec.expect("spec");
    let run_web = std::collections::BTreeMap::from([("run".to_string(), "web".to_string())]);
    assert_eq!(spec.selector.as_ref(), Some(&run_web));
    let template = spec.template.expect("template");
    assert_eq!(
        template.metadata.and_then(|m| m.labels).as_ref(),
        Some(&run_web)
    );
    let pod_spec = template.spec.expect("pod spec");
    assert_eq!(pod_spec.containers[0].name, "web");
    assert_eq!(pod_spec.containers[0].image.as_deref(), Some("nginx:1"));
    // The server's default, as for 1.17's generator, which set none.
    assert_eq!(pod_spec.restart_policy.as_deref(), Some("Always"));
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns.as_str());
    let listed = pods
        .list(&kube::api::ListParams::default().labels("run=web"))
        .await
        .expect("pods");
    assert_eq!(listed.items.len(), 3);

    let out = cluster()
        .kubectl()
        .args([
            "rolling-update",
            "-n",
            ns.as_str(),
            "web",
            "--image=nginx:2",
            "--update-period=0",
        ])
        .run();
    out.success();
    assert!(
        out.stdout
            .ends_with("replicationcontroller/web rolling updated\n"),
        "{}",
        out.stdout
    );
    wait_for_ready_replicas(&rcs, "web", 3, Duration::from_secs(60)).await;
    let rc = rcs.get("web").await.expect("rc after the update");
    let image = rc
        .spec
        .and_then(|s| s.template)
        .and_then(|t| t.spec)
        .and_then(|s| s.containers[0].image.clone());
    assert_eq!(image.as_deref(), Some("nginx:2"));
}

/// 1.17's generators for group-versions a 1.20 server no longer serves: the object is
/// sent, and the error is the REST mapper's, the one kubectl 1.17 printed (and the one
/// kubectl 1.32 prints inside its own message for the same object from a file).
#[tokio::test]
async fn old_group_versions_end_with_the_mappers_error() {
    let ns = cluster().namespace("run-pod-old-gv").await;
    for (generator, kind, version) in [
        ("deployment/v1beta1", "Deployment", "extensions/v1beta1"),
        ("deployment/apps.v1beta1", "Deployment", "apps/v1beta1"),
        ("cronjob/v2alpha1", "CronJob", "batch/v2alpha1"),
    ] {
        let args = [
            "web",
            "--generator",
            generator,
            "--image=nginx",
            "--schedule=@hourly",
        ];
        let out = run_pod(ns.as_str(), &args);
        out.code(1);
        assert_eq!(out.stdout, "");
        let message = format!("no matches for kind \"{kind}\" in version \"{version}\"");
        assert_eq!(out.stderr, format!("error: {message}\n"));
        // The client dry run maps through the server's discovery, as 1.17's did.
        let dry = run_pod(ns.as_str(), &[&args[..], &["--dry-run=client"]].concat());
        dry.code(1);
        assert_eq!(
            (dry.stdout.as_str(), dry.stderr.as_str()),
            ("", format!("error: {message}\n").as_str())
        );
        // kubectl 1.32 on the same object, printed offline (no kubeconfig).
        let printed = cluster()
            .kubectl()
            .env("KUBECONFIG", "/nonexistent/kubeconfig")
            .args(["run-pod", "-n", ns.as_str()])
            .args(args)
            .args(["--dry-run=client", "-o", "yaml"])
            .run();
        printed.success();
        let theirs = cluster()
            .kubectl()
            .args(["create", "-n", ns.as_str(), "-f", "-"])
            .stdin(printed.stdout.clone())
            .run();
        theirs.code(1);
        assert!(theirs.stderr.contains(&message), "{}", theirs.stderr);
    }
    // Nothing was created under the served versions either.
    let deployments: Api<Deployment> = Api::namespaced(cluster().client().await, ns.as_str());
    assert!(deployments.get_opt("web").await.expect("get").is_none());
}

/// `--record` on a real create: the pod and its service carry the change cause
/// kubectl 1.32's `run --record` writes for the same command line (which names
/// `kubectl run` where ours names `kubectl run-pod`), and the deprecation notice.
#[tokio::test]
async fn record_writes_the_change_cause_kubectl_writes() {
    let ns = cluster().namespace("run-pod-record").await;
    let args = |name: &'static str| {
        vec![
            name.to_string(),
            "--record".into(),
            "--image=nginx".into(),
            "-n".into(),
            ns.as_str().into(),
            "--expose".into(),
            "--port=80".into(),
            "-l".into(),
            format!("app={name}"),
            "--".into(),
            "sh".into(),
            "-c".into(),
            "echo hi".into(),
        ]
    };
    let ours = cluster().kubectl().arg("run-pod").args(args("ours")).run();
    ours.success();
    let theirs = cluster().kubectl().arg("run").args(args("theirs")).run();
    theirs.success();
    assert_eq!(ours.stderr, theirs.stderr);
    assert_eq!(
        ours.stderr,
        "Flag --record has been deprecated, --record will be removed in the future\n"
    );
    let client = cluster().client().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns.as_str());
    let services: Api<Service> = Api::namespaced(client, ns.as_str());
    let cause = |annotations: Option<std::collections::BTreeMap<String, String>>| {
        annotations
            .unwrap_or_default()
            .get("kubernetes.io/change-cause")
            .cloned()
            .expect("change-cause annotation")
    };
    let theirs_cause = cause(pods.get("theirs").await.expect("pod").metadata.annotations);
    let expected = theirs_cause
        .replacen("kubectl run theirs", "kubectl run-pod ours", 1)
        .replace("app=theirs", "app=ours");
    assert_eq!(
        cause(pods.get("ours").await.expect("pod").metadata.annotations),
        expected
    );
    assert_eq!(
        cause(
            services
                .get("ours")
                .await
                .expect("svc")
                .metadata
                .annotations
        ),
        expected
    );
}

/// kubectl's global flags that plugins used to refuse, against the same server as
/// kubectl 1.32: `--username` on the cluster's token user is client-go's validation
/// error, `--match-server-version` reads `/version` and passes or fails where kubectl
/// does (the plugins report kubectl 1.37.2's version), and the Go runtime flags are
/// accepted (`--profile=none`; a profile is refused, see `profile_is_refused`).
/// `--profile=cpu` writes kubectl's pprof profile; a plugin, not a Go program, refuses
/// it in words before doing anything, in every plugin, and writes no file.
#[test]
fn profile_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = dir.path().join("profile.pprof");
    let output_flag = format!("--profile-output={}", output.display());
    for (plugin, args) in [
        ("run-pod", &["p", "--image=busybox"][..]),
        ("create-file", &["-f", "-"][..]),
        ("rolling-update", &["rc", "--image=busybox"][..]),
    ] {
        let out = cluster()
            .plugin(plugin)
            .args(args)
            .args(["--profile=cpu", output_flag.as_str()])
            .stdin("")
            .run();
        out.code(1);
        assert_eq!(
            out.stderr,
            format!(
                "error: --profile=cpu: kubectl {plugin} is not a Go program and writes no Go runtime profile; profile it with a native profiler such as perf\n"
            )
        );
        assert!(!output.exists(), "{plugin} wrote a profile");
    }
}

#[tokio::test]
async fn global_flags_behave_as_kubectls() {
    let ns = cluster().namespace("run-pod-global-flags").await;
    let both = |extra: &[&str]| {
        let args = |name: &'static str| -> Vec<String> {
            ["-n", ns.as_str(), name, "--image=nginx"]
                .iter()
                .chain(extra)
                .map(|s| s.to_string())
                .collect()
        };
        let ours = cluster().kubectl().arg("run-pod").args(args("ours")).run();
        let theirs = cluster().kubectl().arg("run").args(args("theirs")).run();
        (ours, theirs)
    };
    let (ours, theirs) = both(&["--username=jane", "--password=pa55word"]);
    ours.code(1);
    theirs.code(1);
    assert_eq!(ours.stderr, theirs.stderr);
    assert!(!ours.stderr.contains("pa55word"));

    // A server dry run: where the versions match, both go on, and must not create
    // `ours` or `theirs` before the steps below.
    let (ours, theirs) = both(&["--match-server-version", "--dry-run=server"]);
    match cluster().release {
        // kubectl 1.32 and the plugins (1.37.2) are other versions than the 1.20.2
        // server: both refuse, naming the server's version alike.
        Release::V1_20 => {
            ours.code(1);
            theirs.code(1);
            let server_half = |stderr: &str| {
                stderr
                    .split(" differs from client version ")
                    .next()
                    .and_then(|s| s.split(", GitVersion:").nth(1))
                    .map(str::to_string)
                    .expect("message")
            };
            assert_eq!(server_half(&ours.stderr), server_half(&theirs.stderr));
            assert!(
                ours.stderr.starts_with(
                    "error: server version (&version.Info{Major:\"1\", Minor:\"20\", EmulationMajor:\"\""
                ) && ours.stderr.contains(
                    " differs from client version (version.Info{Major:\"1\", Minor:\"37\", EmulationMajor:\"\", EmulationMinor:\"\", MinCompatibilityMajor:\"\", MinCompatibilityMinor:\"\", GitVersion:\"v1.37.2\", GitCommit:\"$Format:%H$\", GitTreeState:\"\""
                ),
                "{}",
                ours.stderr
            );
        }
        // The current server's own kubectl matches it, and so do the plugins, which
        // report that kubectl's version.
        Release::Current => {
            theirs.success();
            ours.success();
            assert_eq!(ours.stdout, "pod/ours created (server dry run)\n");
        }
    }

    let (ours, theirs) = both(&[
        "--disable-compression",
        "--profile=none",
        "--profile-output=/dev/null",
        "--log-flush-frequency=1s",
        "--vmodule=run=4",
    ]);
    ours.success();
    theirs.success();
    assert_eq!(ours.stdout, "pod/ours created\n");
    assert_eq!(theirs.stdout, "pod/theirs created\n");
}

#[tokio::test]
async fn legacy_job_is_created() {
    let ns = cluster().namespace("run-pod-job").await;
    let out = run_pod(
        ns.as_str(),
        &[
            "pi",
            "--image=perl",
            "--generator=job/v1",
            "--",
            "perl",
            "-e",
            "print 1",
        ],
    );
    out.success();
    assert_eq!(out.stdout, "job.batch/pi created\n");
    let jobs: Api<Job> = Api::namespaced(cluster().client().await, ns.as_str());
    let job = jobs.get("pi").await.expect("job exists");
    let pod_spec = job.spec.expect("spec").template.spec.expect("pod spec");
    assert_eq!(pod_spec.restart_policy.as_deref(), Some("OnFailure"));
    assert_eq!(
        pod_spec.containers[0].args.as_deref(),
        Some(&["perl".to_string(), "-e".into(), "print 1".into()][..])
    );
}

/// `--schedule` asks for the `cronjob/v1` generator; 1.17 fell back to
/// `cronjob/v1beta1`, with its warning, on a server without batch/v1 CronJob (1.20).
#[tokio::test]
async fn cron_job_uses_the_group_version_the_server_serves() {
    let ns = cluster().namespace("run-pod-cronjob").await;
    let out = run_pod(
        ns.as_str(),
        &[
            "tick",
            "--image=busybox",
            "--schedule=*/5 * * * *",
            "--",
            "date",
        ],
    );
    out.success();
    assert_eq!(out.stdout, "cronjob.batch/tick created\n");
    let (stderr, version) = match cluster().release {
        Release::V1_20 => (
            "WARNING: New generator \"cronjob/v1\" specified, but it isn't available. Falling back to \"cronjob/v1beta1\".\n",
            "v1beta1",
        ),
        Release::Current => ("", "v1"),
    };
    assert_eq!(out.stderr, stderr);
    let resource = ApiResource {
        group: "batch".into(),
        version: version.into(),
        api_version: format!("batch/{version}"),
        kind: "CronJob".into(),
        plural: "cronjobs".into(),
    };
    let cronjobs: Api<DynamicObject> =
        Api::namespaced_with(cluster().client().await, ns.as_str(), &resource);
    let cj = cronjobs.get("tick").await.expect("cronjob exists");
    assert_eq!(cj.data["spec"]["schedule"], "*/5 * * * *");
    assert_eq!(
        cj.data["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"],
        "Never"
    );
}

#[tokio::test]
async fn overrides_are_applied() {
    let ns = cluster().namespace("run-pod-overrides").await;
    let out = run_pod(
        ns.as_str(),
        &[
            "web",
            "--image=nginx",
            "--overrides={\"apiVersion\":\"v1\",\"spec\":{\"hostname\":\"custom\"}}",
        ],
    );
    out.success();
    let out2 = run_pod(
        ns.as_str(),
        &[
            "side",
            "--image=nginx",
            "--override-type=strategic",
            "--overrides={\"spec\":{\"containers\":[{\"name\":\"side\",\"env\":[{\"name\":\"B\",\"value\":\"2\"}]}]}}",
            "--env=A=1",
        ],
    );
    out2.success();
    let pods: Api<Pod> = Api::namespaced(cluster().client().await, ns.as_str());
    let web = pods.get("web").await.expect("web");
    assert_eq!(web.spec.expect("spec").hostname.as_deref(), Some("custom"));
    let side = pods.get("side").await.expect("side");
    let container = &side.spec.expect("spec").containers[0];
    assert_eq!(container.image.as_deref(), Some("nginx"));
    let env: Vec<_> = container
        .env
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(env, ["A", "B"]);
}

/// `--overrides` that kubectl refuses: a kind other than the generated one (sent to
/// the pods endpoint, refused by the server), an apiVersion outside kubectl's scheme,
/// and JSON patches that fail, in evanphx/json-patch's words; beside kubectl run.
#[tokio::test]
async fn failing_overrides_read_as_in_kubectl() {
    let ns = cluster().namespace("run-pod-bad-overrides").await;
    let json = "--override-type=json";
    let cases: &[&[&str]] = &[
        &["--overrides={\"kind\":\"ConfigMap\"}", "--dry-run=server"],
        &[
            "--overrides={\"apiVersion\":\"v2\"}",
            "--dry-run=client",
            "-o",
            "yaml",
        ],
        &[
            json,
            "--overrides=[{\"op\":\"remove\",\"path\":\"/spec/nope\"}]",
            "--dry-run=client",
        ],
        &[
            json,
            "--overrides=[{\"op\":\"test\",\"path\":\"/kind\",\"value\":\"Service\"}]",
            "--dry-run=client",
        ],
        &[
            json,
            "--overrides=[{\"op\":\"bogus\",\"path\":\"/kind\"}]",
            "--dry-run=client",
        ],
        &[
            json,
            "--overrides={\"op\":\"remove\",\"path\":\"/kind\"}",
            "--dry-run=client",
        ],
        &[
            json,
            "--overrides=[{\"op\":\"add\",\"path\":\"/spec/containers/5\",\"value\":{}}]",
            "--dry-run=client",
        ],
    ];
    let mut differences = Vec::new();
    for args in cases {
        let line = |command: &'static str| {
            let mut line = vec![command, "-n", ns.as_str(), "x", "--image=busybox"];
            line.extend_from_slice(args);
            line
        };
        let expected = cluster().kubectl().args(line("run")).stdin("").run();
        let got = cluster().kubectl().args(line("run-pod")).stdin("").run();
        assert_ne!(expected.code, 0, "kubectl run {args:?} refuses it");
        if (expected.code, &expected.stdout, &expected.stderr)
            != (got.code, &got.stdout, &got.stderr)
        {
            differences.push(format!(
                "{args:?}:\n  kubectl: {expected:?}\n  run-pod: {got:?}"
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[tokio::test]
async fn save_config_and_field_manager() {
    let ns = cluster().namespace("run-pod-save-config").await;
    run_pod(
        ns.as_str(),
        &[
            "web",
            "--image=nginx",
            "--save-config",
            "--field-manager=my-manager",
        ],
    )
    .success();
    let pods: Api<Pod> = Api::namespaced(cluster().client().await, ns.as_str());
    let pod = pods.get("web").await.expect("pod");
    let annotations = pod.metadata.annotations.clone().unwrap_or_default();
    let applied = annotations
        .get("kubectl.kubernetes.io/last-applied-configuration")
        .expect("last-applied annotation");
    let applied: serde_json::Value = serde_json::from_str(applied).expect("json");
    assert_eq!(applied["spec"]["containers"][0]["image"], "nginx");
    let managers: Vec<_> = pod
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert!(managers.iter().any(|m| m == "my-manager"), "{managers:?}");
}

#[tokio::test]
async fn already_exists_is_kubectl_shaped() {
    let ns = cluster().namespace("run-pod-exists").await;
    run_pod(ns.as_str(), &["web", "--image=nginx"]).success();
    let out = run_pod(ns.as_str(), &["web", "--image=nginx"]);
    out.code(1);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "Error from server (AlreadyExists): pods \"web\" already exists\n"
    );
}

#[tokio::test]
async fn forbidden_is_kubectl_shaped() {
    let ns = cluster().namespace("run-pod-forbidden").await;
    let out = cluster()
        .kubectl()
        .args([
            "run-pod",
            "--context",
            LIMITED_CONTEXT,
            "-n",
            ns.as_str(),
            "web",
            "--image=nginx",
        ])
        .run();
    out.code(1);
    assert_eq!(
        out.stderr,
        format!(
            "Error from server (Forbidden): pods is forbidden: User \"limited\" cannot create resource \"pods\" in API group \"\" in the namespace \"{}\"\n",
            ns.as_str()
        )
    );
}

#[tokio::test]
async fn pod_running_timeout_applies_to_never_ready_pods_and_rm_cleans_up() {
    let ns = cluster().namespace("run-pod-rm-timeout").await;
    // Running, never ready; tini passes the deletion's SIGTERM on to `sleep`.
    let probe = steering::run_pod_probe("slow", steering::never_ready());
    let out = run_pod(
        ns.as_str(),
        &[
            "slow",
            "--image=kubeplug/busybox-tini:1",
            "--attach",
            "--rm",
            "--restart=Never",
            "--pod-running-timeout=2s",
            &probe[0],
            &probe[1],
            "--",
            "sleep",
            "3600",
        ],
    );
    out.code(1);
    assert_eq!(out.stderr, "error: timed out waiting for the condition\n");
    // --rm deletes what was created even though the command failed.
    assert_eq!(
        out.stdout,
        format!("pod \"slow\" deleted from {} namespace\n", ns.as_str())
    );
    let pods: Api<Pod> = Api::namespaced(cluster().client().await, ns.as_str());
    let gone = |p: Option<&Pod>| p.is_none_or(|p| p.metadata.deletion_timestamp.is_some());
    tokio::time::timeout(Duration::from_secs(30), await_condition(pods, "slow", gone))
        .await
        .expect("pod deleted")
        .expect("watch");
}

/// Gives the `limited` user in `ns` what a CI step's account often has: pods to run,
/// read, follow and delete, their logs, but no `pods/attach`.
async fn without_attach(ns: &str) {
    use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
    use kube::api::{ObjectMeta, PostParams};
    let client = cluster().client().await;
    let meta = || ObjectMeta {
        name: Some("no-attach".into()),
        ..Default::default()
    };
    let rules = vec![
        PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["pods".into()]),
            verbs: ["create", "get", "list", "watch", "delete"]
                .map(String::from)
                .to_vec(),
            ..Default::default()
        },
        PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["pods/log".into()]),
            verbs: vec!["get".into()],
            ..Default::default()
        },
    ];
    Api::<Role>::namespaced(client.clone(), ns)
        .create(
            &PostParams::default(),
            &Role {
                metadata: meta(),
                rules: Some(rules),
            },
        )
        .await
        .expect("role");
    Api::<RoleBinding>::namespaced(client, ns)
        .create(
            &PostParams::default(),
            &RoleBinding {
                metadata: meta(),
                role_ref: RoleRef {
                    api_group: "rbac.authorization.k8s.io".into(),
                    kind: "Role".into(),
                    name: "no-attach".into(),
                },
                subjects: Some(vec![Subject {
                    api_group: Some("rbac.authorization.k8s.io".into()),
                    kind: "User".into(),
                    name: "limited".into(),
                    ..Default::default()
                }]),
            },
        )
        .await
        .expect("role binding");
}

#[tokio::test]
async fn attach_failure_falls_back_to_logs_and_rm_still_cleans_up() {
    // The user may not attach (403): kubectl's fallback streams the container's log
    // instead, the pod's exit code comes back, and --rm still cleans up. Beside
    // kubectl run, in a namespace each.
    let mut outputs = Vec::new();
    for (side, command) in [("kubectl", "run"), ("ours", "run-pod")] {
        let ns = cluster()
            .namespace(&format!("run-pod-attach-fallback-{side}"))
            .await;
        without_attach(ns.as_str()).await;
        // The container runs until told to end, so that each command meets the
        // attach's refusal whatever the machine's load: with a fixed run time, a
        // command that first saw the pod after it ended streams its log without
        // trying the attach (kubectl does so too), and the two sides differ.
        let live = Live::cmd(
            cluster()
                .kubectl()
                .args([command, "--context", LIMITED_CONTEXT, "-n", ns.as_str()])
                .args([
                    "web",
                    // tini passes the deletion's SIGTERM on (a shell as PID 1 ignores it).
                    "--image=kubeplug/busybox-tini:1",
                    "--attach",
                    "--rm",
                    "-q",
                    "--restart=Never",
                    "--",
                    "sh",
                    "-c",
                    "echo hi; until [ -e /tmp/end ]; do sleep 0.1; done; echo bye; exit 3",
                ]),
        );
        live.line(
            Stream::Stderr,
            Duration::from_secs(120),
            "the attach's refusal",
            |l| l.starts_with("warning: couldn't attach to pod/web"),
        )
        .await;
        // 137 when the container, ending on the file, took the exec's process with it
        // before the exec returned (as `interactive::touch`); the exit code checked
        // below is still the script's 3 only if the file ended it.
        let touch = cluster()
            .kubectl()
            .args(["exec", "-n", ns.as_str(), "web", "--", "touch", "/tmp/end"])
            .run();
        assert!(touch.code == 0 || touch.code == 137, "touch: {touch:?}");
        let (code, stdout, stderr) = live.finish(Duration::from_secs(120)).await;
        let pods: Api<Pod> = Api::namespaced(cluster().client().await, ns.as_str());
        let gone = |p: Option<&Pod>| p.is_none_or(|p| p.metadata.deletion_timestamp.is_some());
        tokio::time::timeout(Duration::from_secs(30), await_condition(pods, "web", gone))
            .await
            .expect("pod deleted")
            .expect("watch");
        let stdout: String = stdout.iter().map(|l| format!("{l}\n")).collect();
        outputs.push((
            code.unwrap_or(-1),
            stdout,
            stderr.replace(ns.as_str(), "NS"),
        ));
    }
    let ours = outputs.pop().unwrap();
    let theirs = outputs.pop().unwrap();
    // Both try SPDY's POST after the WebSocket upgrade's 403, and say its refusal.
    assert_eq!((ours.0, &ours.2), (theirs.0, &theirs.2));
    assert!(
        ours.2.contains("unable to upgrade connection: pods \"web\" is forbidden: User \"limited\" cannot create resource \"pods/attach\""),
        "{}",
        ours.2
    );
    assert_eq!(ours.0, 3, "{ours:?}");
    // Beyond kubectl: the log printed before the attach was tried is not printed
    // again by the fallback. kubectl's fallback asks for the log from the second it
    // read it in, and prints `hi` twice when both fell in the same second. And the
    // fallback follows the log while the command waits for the pod's end: kubectl's
    // reads it once, and on a loaded node read it before the container's `echo hi`
    // (ours did too, once, before it followed), and never prints `bye`, written
    // after the fallback.
    assert_eq!(
        ours.1, "hi\nbye\n",
        "-q: no deletion message, no line twice"
    );
    assert!(
        ["", "hi\n", "hi\nhi\n"].contains(&theirs.1.as_str()),
        "{theirs:?}"
    );
    assert!(
        ours.2
            .starts_with("warning: couldn't attach to pod/web, falling back to streaming logs: "),
        "{}",
        ours.2
    );
}

/// The audit log of the harness's cluster (it always starts one with `--audit`), or
/// `None` for an existing cluster given by `KUBEPLUG_E2E_KUBECONFIG`.
fn audit_log() -> Option<std::path::PathBuf> {
    let state_dir = cluster().kubeconfig.parent()?;
    localcluster::state::ClusterState::read(state_dir)
        .ok()
        .flatten()?
        .audit_log
}

#[tokio::test]
async fn creating_a_pod_is_exactly_one_request() {
    let Some(log) = audit_log() else {
        // Counting needs the audit log; an external cluster may not have one.
        assert!(
            std::env::var_os("KUBEPLUG_E2E_KUBECONFIG").is_some(),
            "the harness's own cluster must have an audit log"
        );
        eprintln!("skipped: the cluster at KUBEPLUG_E2E_KUBECONFIG has no audit log");
        return;
    };
    let ns = cluster().namespace("run-pod-one-request").await;
    run_pod(ns.as_str(), &["web", "--image=nginx"]).success();
    let text = std::fs::read_to_string(&log).expect("audit log");
    // Every request of ours carries the kubeplug user agent; the namespace is unique to
    // this test, and run-pod sends nothing outside it (no discovery for a pod).
    let ours: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["stage"] == "ResponseComplete")
        .filter(|e| {
            e["userAgent"]
                .as_str()
                .is_some_and(|ua| ua.starts_with("kubeplug/"))
        })
        .filter(|e| e["objectRef"]["namespace"] == ns.as_str())
        .collect();
    let summary: Vec<String> = ours
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["verb"].as_str().unwrap_or_default(),
                e["requestURI"].as_str().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(summary.len(), 1, "{summary:?}");
    let path = format!("create /api/v1/namespaces/{}/pods?", ns.as_str());
    assert!(summary[0].starts_with(&path), "{summary:?}");
    assert!(
        summary[0].contains("fieldManager=kubectl-run"),
        "{summary:?}"
    );
}

/// Creates pod `name` (nginx, port 80, two labels) with `-o OUTPUT` and checks that
/// it printed what `kubectl get pod NAME -o OUTPUT` prints, and not nothing.
fn run_and_get_match(ns: &str, name: &str, output: &str) {
    let out = run_pod(
        ns,
        &[
            name,
            "--image=nginx",
            "--port=80",
            "--labels=app=web,tier=fe",
            "-o",
            output,
        ],
    );
    out.success();
    let get = cluster()
        .kubectl()
        .args(["get", "pod", name, "-n", ns, "-o", output])
        .run();
    get.success();
    assert_eq!(out.stdout, get.stdout, "{output}");
    assert!(!out.stdout.is_empty(), "{output}");
}

/// `-o jsonpath=…` on the created pod prints what `kubectl get -o jsonpath=…` prints
/// for the same template (fields the server does not change between the two reads).
#[tokio::test]
async fn jsonpath_output_matches_kubectl_get() {
    let ns = cluster().namespace("run-pod-jsonpath").await;
    let templates = [
        "{.metadata.name}",
        r#"{.kind}/{.metadata.name} {.spec.containers[*].image} {.metadata.labels}{"\n"}"#,
        r#"{range .spec.containers[*]}{.name}:{.ports[?(@.containerPort==80)].protocol}{"\n"}{end}"#,
    ];
    for (i, template) in templates.iter().enumerate() {
        run_and_get_match(
            ns.as_str(),
            &format!("jp{i}"),
            &format!("jsonpath={template}"),
        );
    }
    // A missing key with --allow-missing-template-keys=false fails after the pod was
    // created, as in kubectl (the message starts like kubectl's).
    let out = run_pod(
        ns.as_str(),
        &[
            "strict",
            "--image=nginx",
            "--allow-missing-template-keys=false",
            "-o",
            "jsonpath={.nope}",
        ],
    );
    out.code(1);
    assert!(
        out.stderr.starts_with(
            "error: error executing jsonpath \"{.nope}\": Error executing template: nope is not found."
        ),
        "{}",
        out.stderr
    );
}

/// `-o go-template=…` on the created pod prints what `kubectl get -o go-template=…`
/// prints for the same template (fields the server does not change between the two
/// reads).
#[tokio::test]
async fn go_template_output_matches_kubectl_get() {
    let ns = cluster().namespace("run-pod-gotemplate").await;
    let templates = [
        "{{.metadata.name}}",
        r#"{{.kind}}/{{.metadata.name}} {{range .spec.containers}}{{.image}} {{end}}{{.metadata.labels}}{{"\n"}}"#,
        r#"{{range .spec.containers}}{{.name}}:{{range .ports}}{{if eq .containerPort 80}}{{.protocol}}{{end}}{{end}}{{"\n"}}{{end}}"#,
        r#"{{index .metadata.labels "app"}} {{len .spec.containers}} {{printf "%s/%s" .metadata.namespace .metadata.name}} {{.spec.restartPolicy}} {{.status.nope}}{{"\n"}}"#,
    ];
    for (i, template) in templates.iter().enumerate() {
        run_and_get_match(
            ns.as_str(),
            &format!("gt{i}"),
            &format!("go-template={template}"),
        );
    }
    // `--template` alone means go-template, as in kubectl.
    let out = run_pod(
        ns.as_str(),
        &[
            "bare",
            "--image=nginx",
            "--template",
            "{{.kind}} {{.metadata.name}}",
        ],
    );
    out.success();
    assert_eq!(out.stdout, "Pod bare");
    // A missing key with --allow-missing-template-keys=false fails after the pod was
    // created, with kubectl's message and debugging text.
    let out = run_pod(
        ns.as_str(),
        &[
            "strict",
            "--image=nginx",
            "--allow-missing-template-keys=false",
            "-o",
            "go-template={{.nope}}",
        ],
    );
    out.code(1);
    let message =
        "template: output:1:2: executing \"output\" at <.nope>: map has no entry for key \"nope\"";
    assert!(
        out.stderr.starts_with(&format!(
            "error: error executing template \"{{{{.nope}}}}\": {message}"
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.starts_with(&format!(
            "Error executing template: {message}. Printing more information for debugging the template:\n"
        )),
        "{}",
        out.stdout
    );
}
