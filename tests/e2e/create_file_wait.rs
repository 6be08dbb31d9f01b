//! `kubectl create-file --wait`: create, then wait until everything is ready or say
//! why it never will be, with the real kubelet's failure modes (an image
//! that does not exist, a crash loop, a Job whose pod fails), a full quota and a
//! Pod Security refusal. The timeouts given are upper bounds for the run, never
//! timed assertions: each case asserts the cause and the exit code.

// The helpers below run only inside tests: an unwrap there is a failed assertion.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod, ResourceQuota};
use kube::api::{Api, Patch, PatchParams, PostParams};
use localcluster::steering;
use tests::harness::{Output, cluster};

/// The exit code of a wait that ran out of `--timeout` (the README's table).
const TIMEOUT_EXIT: i32 = 124;

fn create_file(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = cluster().kubectl().arg("create-file").args(args);
    if let Some(input) = stdin {
        cmd = cmd.stdin(input.as_bytes().to_vec());
    }
    cmd.run()
}

/// A Deployment of `replicas` pods running `image`, with `command` when given.
fn deployment(name: &str, image: &str, replicas: i32, command: Option<Vec<String>>) -> String {
    let mut container = serde_json::json!({"name": name, "image": image});
    if let Some(command) = command {
        container["command"] = command.into();
    }
    serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [container]}
            }
        }
    })
    .to_string()
}

fn write(dir: &tempfile::TempDir, file: &str, text: &str) -> String {
    let path = dir.path().join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_good_app_from_stdin_becomes_ready_and_output_is_unchanged() {
    let ns = cluster().namespace("wait-good").await;
    // A List on stdin: a Deployment, its Service, a Job that succeeds, a ConfigMap.
    let list = serde_json::json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            serde_json::from_str::<serde_json::Value>(&deployment("web", "nginx:1.27", 2, None)).unwrap(),
            // A headless Service without a selector: nothing to wait for (one with a
            // selector is in `real_node`'s app tree).
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
             "spec": {"clusterIP": "None", "ports": [{"port": 80}]}},
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate"},
             "spec": {"backoffLimit": 0, "template": {
                 "spec": {"restartPolicy": "Never", "containers": [
                     {"name": "m", "image": "migrate:1", "command": steering::exit_after(300, 0)}]}}}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"k": "v"}}
        ]
    })
    .to_string();
    let out = create_file(
        &[
            "-f",
            "-",
            "-n",
            ns.as_str(),
            "--wait",
            "--timeout=120s",
            "-o",
            "name",
        ],
        Some(&list),
    );
    out.success();
    assert_eq!(
        out.stdout, "deployment.apps/web\nservice/web\njob.batch/migrate\nconfigmap/settings\n",
        "-o name as without --wait"
    );
    assert!(
        out.stderr
            .lines()
            .last()
            .unwrap()
            .starts_with("4/4 ready in "),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains('\u{1b}'),
        "no control characters without a terminal\n{}",
        out.stderr
    );
    // Progress, one plain line per change.
    assert!(out.stderr.contains("ready, waiting for "), "{}", out.stderr);
    let deploy: Deployment = Api::namespaced(cluster().client().await, ns.as_str())
        .get("web")
        .await
        .unwrap();
    assert_eq!(
        deploy.status.unwrap().available_replicas,
        Some(2),
        "ready means available"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_image_ends_the_wait_with_the_pull_error() {
    let ns = cluster().namespace("wait-image").await;
    let dir = tempfile::tempdir().unwrap();
    // -R over a tree: a good Deployment and one whose image does not exist.
    write(
        &dir,
        "app/good.json",
        &deployment("good", "nginx:1.27", 1, None),
    );
    write(
        &dir,
        "app/more/bad.json",
        &deployment("bad", "registry.invalid/web:2", 2, None),
    );
    let root = dir.path().join("app").display().to_string();
    // Well past the end the pull error brings (a few pulls apart).
    let out = create_file(
        &[
            "-R",
            "-f",
            &root,
            "-n",
            ns.as_str(),
            "--wait",
            "--timeout=300s",
        ],
        None,
    );
    out.code(1);
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("Waiting: pod/bad-")
                && l.contains(" container bad: ErrImagePull: ")
                && l.contains(" lookup registry.invalid on ")
                && l.ends_with(": no such host")),
        "the cause while it waits\n{}",
        out.stderr
    );
    let error = out
        .stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("an error line\n{}", out.stderr));
    assert!(
        error.starts_with("error: deployment.apps/bad: pod/bad-")
            && error.contains(" lookup registry.invalid on ")
            && error.ends_with(": no such host (3 pulls failed)"),
        "{error}"
    );
    assert!(
        out.stderr.contains("not ready:\n"),
        "the summary\n{}",
        out.stderr
    );
    // Nothing is deleted.
    let deploys: Api<Deployment> = Api::namespaced(cluster().client().await, ns.as_str());
    assert!(deploys.get_opt("bad").await.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_loop_ends_the_wait_past_its_threshold_with_the_exit_code() {
    let ns = cluster().namespace("wait-crash").await;
    let dir = tempfile::tempdir().unwrap();
    // Exits 2 a moment after it starts, before its readiness probe could pass
    // (without one a real kubelet reports it Ready for the moment it runs).
    let mut crash_loop: serde_json::Value = serde_json::from_str(&deployment(
        "crash",
        "busybox:1.36",
        1,
        Some(steering::exit_after(100, 2)),
    ))
    .unwrap();
    crash_loop["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] =
        steering::ready_after(5);
    let crash_loop = crash_loop.to_string();
    let file = write(&dir, "crash.json", &crash_loop);
    let out = create_file(
        &["-f", &file, "-n", ns.as_str(), "--wait", "--timeout=300s"],
        None,
    );
    out.code(1);
    assert!(out.stderr.contains("CrashLoopBackOff"), "{}", out.stderr);
    assert!(
        // Three restarts or more: the node's back-off is short, the look once a second.
        out.stderr.lines().any(
            |l| l.starts_with("error: deployment.apps/crash: pod/crash-")
                && l.contains(": crash loop, restarted ")
                && l.ends_with(" times, last exit code 2")
        ),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_job_ends_the_wait_with_its_failure() {
    let ns = cluster().namespace("wait-job").await;
    let job = serde_json::json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate"},
        "spec": {"backoffLimit": 0, "template": {
            "spec": {"restartPolicy": "Never", "containers": [
                {"name": "m", "image": "migrate:1", "command": steering::exit_after(200, 3)}]}}}
    })
    .to_string();
    let out = create_file(
        &["-f", "-", "-n", ns.as_str(), "--wait", "--timeout=300s"],
        Some(&job),
    );
    out.code(1);
    assert_eq!(out.stdout, "job.batch/migrate created\n");
    assert!(
        out.stderr
            .contains("error: job.batch/migrate: job \"migrate\" failed: BackoffLimitExceeded: "),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_quota_is_named_and_the_timeout_ends_with_its_code_and_last_cause() {
    let ns = cluster().namespace("wait-quota").await;
    let client = cluster().client().await;
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), ns.as_str());
    let quota: ResourceQuota = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "pods"}, "spec": {"hard": {"pods": "0"}}
    }))
    .unwrap();
    quotas.create(&PostParams::default(), &quota).await.unwrap();
    // Admission refuses pods of a quota whose usage is not yet counted with other
    // words ("status unknown"): wait for the quota controller's count first.
    for _ in 0..100 {
        let counted = quotas
            .get("pods")
            .await
            .unwrap()
            .status
            .and_then(|s| s.used)
            .is_some();
        if counted {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let file = deployment("web", "nginx:1.27", 1, None);
    let out = create_file(
        &["-f", "-", "-n", ns.as_str(), "--wait", "--timeout=15s"],
        Some(&file),
    );
    out.code(TIMEOUT_EXIT);
    let quota_words =
        "is forbidden: exceeded quota: pods, requested: pods=1, used: pods=0, limited: pods=0";
    assert!(
        out.stderr.lines().any(|l| l
            .starts_with("Waiting: deployment.apps/web cannot create pods: pods \"web-")
            && l.ends_with(quota_words)),
        "the quota, named while it waits\n{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("error: timed out after 15s waiting for 1 of 1 objects\nlast cause: deployment.apps/web cannot create pods: pods \"web-"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("0/1 ready; not ready:\n  deployment.apps/web: "),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pod_security_refusal_is_named_and_ends_the_wait() {
    let ns = cluster().namespace("wait-psa").await;
    let client = cluster().client().await;
    Api::<Namespace>::all(client.clone())
        .patch(
            ns.as_str(),
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({
                "metadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}}
            })),
        )
        .await
        .unwrap();
    // Admission reads the label from its informer: wait until it refuses a pod.
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns.as_str());
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "probe"}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}
    }))
    .unwrap();
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    for _ in 0..100 {
        if pods.create(&dry_run, &pod).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let file = deployment("web", "nginx:1.27", 1, None);
    let out = create_file(
        &["-f", "-", "-n", ns.as_str(), "--wait", "--timeout=300s"],
        Some(&file),
    );
    out.code(1);
    assert!(
        out.stderr.lines().any(|l| l
            .starts_with("error: deployment.apps/web cannot create pods: pods \"web-")
            && l.contains("violates PodSecurity \"restricted:latest\"")),
        "{}",
        out.stderr
    );
}

#[test]
fn a_dry_run_has_nothing_to_wait_for() {
    let out = create_file(
        &["-f", "-", "--dry-run=client", "--wait"],
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"),
    );
    out.code(1);
    assert_eq!(
        out.stderr,
        "error: --dry-run and --wait are mutually exclusive: a dry run creates nothing to wait for\nSee 'kubectl create-file -h' for help and examples\n"
    );
}

/// A Service whose pods never pass their readiness probe never has a ready endpoint:
/// the summary names it beside its Deployment, and `--timeout` ends the wait.
/// (The kubelet's `Unhealthy` events are not among the causes the wait prints yet.)
#[tokio::test(flavor = "multi_thread")]
async fn a_service_says_why_it_has_no_endpoints() {
    let ns = cluster().namespace("wait-svc").await;
    let mut deployment: serde_json::Value =
        serde_json::from_str(&deployment("web", "nginx:1.27", 1, None)).unwrap();
    deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] =
        steering::never_ready();
    let docs = format!(
        "{deployment}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {{app: web}}\n  ports: [{{port: 80}}]\n"
    );
    let out = create_file(
        &["-f", "-", "-n", ns.as_str(), "--wait", "--timeout=20s"],
        Some(&docs),
    );
    out.code(TIMEOUT_EXIT);
    assert!(
        out.stderr.ends_with(
            "error: timed out after 20s waiting for 2 of 2 objects\n0/2 ready; not ready:\n  deployment.apps/web: 0/1 available\n  service/web: no ready endpoints\n"
        ),
        "{}",
        out.stderr
    );
}
