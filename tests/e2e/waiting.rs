//! Why it waits: a rolling update that stalls says why on stderr, in
//! the server's words, one cause per test — Pod Security, a quota, an image that
//! does not exist, a crash loop, a node selector no node has — and finishes once
//! the cause is gone; run-pod's attach wait says it the same way.
//!
//! "Within 10 s of the stall" is the test's upper bound on how long it waits for
//! the line after the step that stalls (`Scaling NEW up to 1`), never a timed
//! assertion of speed.

// The helpers below run only inside tests: an unwrap there is a failed assertion.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Node, ReplicationController, ResourceQuota};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use localcluster::steering::{self, Readiness};
use tests::harness::{Cluster, cluster};
use tests::live::{Live, Stream};

use crate::rolling_update::{NEW_IMAGE, OLD_IMAGE, create_ready, rc};

/// The most the test waits for a `Waiting:` line once the update stalled. It
/// bounds the wait, not the plugin's speed: before the line can come, the
/// controllers, the scheduler and the kubelet must bring the pod to its state
/// (a crash loop is a container created, started, exited, restarted and exited
/// again), at their pace on a machine that runs several clusters at once, and a
/// CI machine took more than 10 s for that. Each run's own `--timeout` is longer,
/// so a line that never comes still fails the test, not the timeout first.
const WITHIN: Duration = Duration::from_secs(60);

/// The steps of a live rolling update that stalls.
trait Stalls {
    /// The step after which the update stalls: the new RC's first scale-up.
    async fn stalls_after_scaling(&self, new_rc: &str);
    /// The stdout line after which the update stalls.
    async fn stalls_after(&self, step: &str);
    /// The `Waiting:` line naming `object`, with `words` in it, within [`WITHIN`].
    async fn waiting(&self, object: &str, words: &str) -> String;
    /// Waits for the run to end (at most 180 s) and returns its exit code.
    async fn exit(&mut self) -> Option<i32>;
}

impl Stalls for Live {
    async fn stalls_after_scaling(&self, new_rc: &str) {
        self.stalls_after(&format!("Scaling {new_rc} up to 1"))
            .await;
    }

    async fn stalls_after(&self, step: &str) {
        self.line(Stream::Stdout, Duration::from_secs(60), step, |l| l == step)
            .await;
    }

    async fn waiting(&self, object: &str, words: &str) -> String {
        let prefix = format!("Waiting: {object}");
        self.line(
            Stream::Stderr,
            WITHIN,
            &format!("{prefix} … {words}"),
            |l| l.starts_with(&prefix) && l.contains(words),
        )
        .await
    }

    async fn exit(&mut self) -> Option<i32> {
        self.end(Duration::from_secs(180)).await
    }
}

/// A live `plugin` run on `cluster`.
fn start(cluster: &Cluster, plugin: &str, args: &[&str]) -> Live {
    Live::spawn(&cluster.plugin_dir, plugin, &cluster.kubeconfig, args)
}

async fn ready_web(client: &Client, ns: &str) {
    let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), ns);
    create_ready(
        &rcs,
        &rc(
            "web",
            "web",
            &[],
            &[("web", OLD_IMAGE)],
            2,
            Readiness::Started,
        ),
    )
    .await;
}

/// Writes a new RC for `-f` into a file of its own, returns its path.
fn file_with(dir: &tempfile::TempDir, rc: &ReplicationController) -> String {
    let path = dir.path().join("web-2.json");
    std::fs::write(&path, serde_json::to_vec(rc).unwrap()).unwrap();
    path.display().to_string()
}

async fn set_namespace_labels(client: &Client, ns: &str, labels: serde_json::Value) {
    Api::<Namespace>::all(client.clone())
        .patch(
            ns,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({ "metadata": { "labels": labels } })),
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn pod_security_refusal_ends_the_update_with_the_resume_hint() {
    let cluster = cluster();
    let ns = cluster.namespace("waiting-pod-security").await;
    let client = cluster.client().await;
    ready_web(&client, ns.as_str()).await;
    // The running pods stay; new ones must be restricted, which the template is not.
    set_namespace_labels(
        &client,
        ns.as_str(),
        serde_json::json!({ "pod-security.kubernetes.io/enforce": "restricted" }),
    )
    .await;
    let args = [
        "web",
        "web-2",
        "--image",
        NEW_IMAGE,
        "-n",
        ns.as_str(),
        "--update-period=0",
    ];

    // 1.17's behaviour, kept behind --fail-fast=false: it says why, and waits.
    let waiting_args: Vec<&str> = args
        .iter()
        .copied()
        .chain(["--fail-fast=false", "--timeout=6s"])
        .collect();
    let mut live = start(cluster, "rolling-update", &waiting_args);
    live.stalls_after_scaling("web-2").await;
    let line = live
        .waiting(
            "replicationcontroller/web-2",
            "violates PodSecurity \"restricted:latest\"",
        )
        .await;
    assert!(
        line.starts_with("Waiting: replicationcontroller/web-2 cannot create pods: pods \"web-2-"),
        "{line}"
    );
    assert_eq!(live.exit().await, Some(1));
    assert!(
        live.text(Stream::Stderr)
            .ends_with("error: timed out waiting for \"web-2\" to be synced"),
        "{}",
        live.transcript()
    );
    assert_eq!(
        live.text(Stream::Stderr).matches("Waiting:").count(),
        1,
        "one line for one cause\n{}",
        live.transcript()
    );

    // The default: the refusal cannot fix itself, so the update ends at once.
    let mut live = start(cluster, "rolling-update", &args);
    let header = "Scaling up web-2 from 1 to 2, scaling down web from 2 to 0 (keep 2 pods available, don't exceed 3 pods)";
    live.stalls_after(header).await;
    live.line(Stream::Stderr, WITHIN, "the error", |l| {
        l.starts_with("error: the update cannot progress: replicationcontroller/web-2 cannot create pods: pods \"web-2-")
            && l.contains("is forbidden: violates PodSecurity \"restricted:latest\": ")
    })
    .await;
    assert_eq!(live.exit().await, Some(1));
    let stderr = live.text(Stream::Stderr);
    assert!(
        stderr.contains(&format!(
            "The update is left in progress. Run the same command again to resume it:\n  kubectl rolling-update web web-2 --image {NEW_IMAGE} -n {ns} --update-period=0\nor abort it with:\n  kubectl rolling-update web web-2 --rollback --namespace={ns}",
            ns = ns.as_str()
        )),
        "{}",
        live.transcript()
    );
    // The refusal left from the first run may be shown first (the server still
    // says so); the update ends only once the server refused a pod of this run.
    assert!(
        stderr.matches("Waiting:").count() <= 1,
        "{}",
        live.transcript()
    );
    assert_eq!(
        live.text(Stream::Stdout),
        format!(
            "Found existing update in progress (web-2), resuming.\nContinuing update with existing controller web-2.\n{header}"
        ),
        "1.17's lines, unchanged"
    );

    // The cause removed (the namespace relaxed), the resumed update completes.
    set_namespace_labels(
        &client,
        ns.as_str(),
        serde_json::json!({ "pod-security.kubernetes.io/enforce": "privileged" }),
    )
    .await;
    let mut live = start(cluster, "rolling-update", &args);
    assert_eq!(live.exit().await, Some(0), "{}", live.transcript());
    assert!(
        live.text(Stream::Stdout)
            .ends_with("replicationcontroller/web-2 rolling updated to \"web-2\""),
        "{}",
        live.transcript()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exceeded_quota_is_shown_and_waited_for_until_it_is_raised() {
    let cluster = cluster();
    let ns = cluster.namespace("waiting-quota").await;
    let client = cluster.client().await;
    ready_web(&client, ns.as_str()).await;
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), ns.as_str());
    let quota: ResourceQuota = serde_json::from_value(serde_json::json!({
        "metadata": { "name": "pods" },
        "spec": { "hard": { "pods": "2" } },
    }))
    .unwrap();
    quotas.create(&PostParams::default(), &quota).await.unwrap();
    // The quota controller must have counted the two pods before the update.
    for _ in 0..100 {
        let q = quotas.get("pods").await.unwrap();
        let used = q
            .status
            .and_then(|s| s.used)
            .and_then(|u| u.get("pods").cloned());
        if used.is_some_and(|u| u.0 == "2") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let mut live = start(
        cluster,
        "rolling-update",
        &[
            "web",
            "web-2",
            "--image",
            NEW_IMAGE,
            "-n",
            ns.as_str(),
            "--update-period=0",
            "--timeout=150s",
        ],
    );
    live.stalls_after_scaling("web-2").await;
    let line = live
        .waiting(
            "replicationcontroller/web-2",
            "exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2",
        )
        .await;
    assert!(
        line.starts_with("Waiting: replicationcontroller/web-2 cannot create pods: pods \"web-2-"),
        "{line}"
    );

    // A quota can be raised: the update waits, and finishes once it is.
    quotas
        .patch(
            "pods",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({ "spec": { "hard": { "pods": "10" } } })),
        )
        .await
        .unwrap();
    assert_eq!(live.exit().await, Some(0), "{}", live.transcript());
    assert!(
        live.text(Stream::Stdout)
            .ends_with("replicationcontroller/web-2 rolling updated to \"web-2\""),
        "{}",
        live.transcript()
    );
    assert_eq!(
        live.text(Stream::Stderr).matches("Waiting:").count(),
        1,
        "one cause, one line\n{}",
        live.transcript()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_image_is_shown_and_a_fixed_image_completes() {
    let cluster = cluster();
    let ns = cluster.namespace("waiting-image").await;
    let client = cluster.client().await;
    ready_web(&client, ns.as_str()).await;
    let missing = "registry.invalid/web:2";
    let mut live = start(
        cluster,
        "rolling-update",
        &[
            "web",
            "web-2",
            "--image",
            missing,
            "-n",
            ns.as_str(),
            "--update-period=0",
            "--timeout=120s",
        ],
    );
    live.stalls_after_scaling("web-2").await;
    let line = live.waiting("pod/web-2-", ": no such host").await;
    assert!(
        (line.contains(" container web: ErrImagePull: failed to pull and unpack image \"registry.invalid/web:2\"")
            || line.contains(" container web: ImagePullBackOff: Back-off pulling image \"registry.invalid/web:2\": ErrImagePull: failed to pull"))
            && line.contains(" lookup registry.invalid on "),
        "{line}"
    );
    // A pull may succeed later (an image pushed, a registry back): it waits, and
    // the alternation of ErrImagePull and ImagePullBackOff is one cause, one line.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        live.text(Stream::Stderr).matches("Waiting:").count(),
        1,
        "{}",
        live.transcript()
    );
    live.signal(libc::SIGINT);
    assert_eq!(live.exit().await, Some(130), "{}", live.transcript());

    // The user's fix: abort as the hint says, then update to the right image.
    let rollback = cluster
        .plugin("rolling-update")
        .args([
            "web",
            "web-2",
            "--rollback",
            "-n",
            ns.as_str(),
            "--update-period=0",
        ])
        .run();
    rollback.success();
    let fixed = cluster
        .plugin("rolling-update")
        .args([
            "web",
            "web-3",
            "--image",
            NEW_IMAGE,
            "-n",
            ns.as_str(),
            "--update-period=0",
        ])
        .run();
    fixed.success();
    assert!(
        fixed
            .stdout
            .ends_with("replicationcontroller/web-3 rolling updated to \"web-3\"\n"),
        "{}",
        fixed.stdout
    );
    assert!(!fixed.stderr.contains("Waiting:"), "{}", fixed.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_loop_is_shown_with_the_last_exit() {
    let cluster = cluster();
    let ns = cluster.namespace("waiting-crash").await;
    let client = cluster.client().await;
    ready_web(&client, ns.as_str()).await;
    let dir = tempfile::tempdir().unwrap();
    // busybox, whose shell ends with exit 3 a moment after it starts, before its
    // readiness probe could pass (without one a real kubelet reports the container
    // Ready for the moment it runs, and the update would move on).
    let mut crashing = rc(
        "web-2",
        "web2",
        &[],
        &[("web", "busybox:1.36")],
        2,
        Readiness::AfterSecs(5),
    );
    let pod = crashing
        .spec
        .as_mut()
        .and_then(|s| s.template.as_mut())
        .and_then(|t| t.spec.as_mut())
        .unwrap();
    pod.containers[0].command = Some(steering::exit_after(100, 3));
    let file = file_with(&dir, &crashing);
    let mut live = start(
        cluster,
        "rolling-update",
        &[
            "web",
            "-f",
            &file,
            "-n",
            ns.as_str(),
            "--update-period=0",
            "--timeout=120s",
        ],
    );
    live.stalls_after_scaling("web-2").await;
    let line = live.waiting("pod/web-2-", "CrashLoopBackOff").await;
    assert!(
        line.contains(" container web: CrashLoopBackOff: back-off ")
            && line.contains(" restarting failed container=web pod=web-2-")
            && line.ends_with("; last run: Error, exit code 3"),
        "{line}"
    );
    // A crash loop may end (a dependency comes up): it waits, one line for it.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        live.text(Stream::Stderr).matches("Waiting:").count(),
        1,
        "{}",
        live.transcript()
    );
    live.signal(libc::SIGINT);
    assert_eq!(live.exit().await, Some(130), "{}", live.transcript());
    cluster
        .plugin("rolling-update")
        .args([
            "web",
            "web-2",
            "--rollback",
            "-n",
            ns.as_str(),
            "--update-period=0",
        ])
        .run()
        .success();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unschedulable_node_selector_is_shown_until_a_node_fits() {
    let cluster = cluster();
    let ns = cluster.namespace("waiting-unschedulable").await;
    let client = cluster.client().await;
    ready_web(&client, ns.as_str()).await;
    // A label only this test uses, so that no other test's pods are affected.
    let key = format!("waiting.kubeplug.io/{}", ns.as_str());
    let dir = tempfile::tempdir().unwrap();
    let mut selective = rc(
        "web-2",
        "web2",
        &[],
        &[("web", NEW_IMAGE)],
        2,
        Readiness::Started,
    );
    let spec = selective
        .spec
        .as_mut()
        .and_then(|s| s.template.as_mut())
        .and_then(|t| t.spec.as_mut())
        .unwrap();
    spec.node_selector = Some([(key.clone(), "yes".to_string())].into());
    let file = file_with(&dir, &selective);
    let mut live = start(
        cluster,
        "rolling-update",
        &[
            "web",
            "-f",
            &file,
            "-n",
            ns.as_str(),
            "--update-period=0",
            "--timeout=120s",
        ],
    );
    live.stalls_after_scaling("web-2").await;
    let line = live
        .waiting("pod/web-2-", "didn't match Pod's node affinity/selector")
        .await;
    assert!(line.contains(" cannot be scheduled: 0/"), "{line}");

    // A node that fits: the scheduler binds the pods, the update completes.
    let nodes: Api<Node> = Api::all(client.clone());
    let names: Vec<String> = nodes
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    let label = |value: serde_json::Value| {
        let nodes = nodes.clone();
        let names = names.clone();
        let key = key.clone();
        async move {
            for name in &names {
                nodes
                    .patch(
                        name,
                        &PatchParams::default(),
                        &Patch::Merge(serde_json::json!({ "metadata": { "labels": { key.as_str(): value.clone() } } })),
                    )
                    .await
                    .unwrap();
            }
        }
    };
    label(serde_json::json!("yes")).await;
    let code = live.exit().await;
    label(serde_json::Value::Null).await;
    assert_eq!(code, Some(0), "{}", live.transcript());
    assert!(
        live.text(Stream::Stdout)
            .ends_with("replicationcontroller/web rolling updated"),
        "{}",
        live.transcript()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn run_pod_attach_says_why_the_pod_is_not_running() {
    let cluster = cluster();
    let ns = cluster.namespace("waiting-run-pod").await;
    let run = |command: &str, name: &str, extra: &[&str]| {
        let mut cmd = cluster.kubectl().args([
            command,
            "-n",
            ns.as_str(),
            name,
            "--restart=Never",
            "--attach",
            "--pod-running-timeout=20s",
        ]);
        cmd = cmd.args(extra);
        cmd.run()
    };
    // An image that does not exist, and a node selector no node has.
    let cases: [(&str, &[&str], &str); 2] = [
        (
            "image",
            &["--image=registry.invalid/x:1"],
            ": ErrImagePull: failed to pull and unpack image \"registry.invalid/x:1\"",
        ),
        (
            "selector",
            &[
                "--image=registry.k8s.io/pause:3.9",
                "--overrides={\"spec\":{\"nodeSelector\":{\"waiting.kubeplug.io/none\":\"yes\"}}}",
            ],
            " cannot be scheduled: 0/",
        ),
    ];
    // The reason is the kubelet's (a failed pull) or the scheduler's, which a loaded
    // node can take well over 8 s to report (a pod's sandbox alone took up to 4.5 s at
    // load 50): 20 s leaves it the time, and the four commands run side by side, so
    // the test waits one timeout, not four.
    let results: Vec<_> = std::thread::scope(|s| {
        let runs: Vec<_> = cases
            .iter()
            .map(|(case, extra, _)| {
                let ours = s.spawn(move || run("run-pod", &format!("ours-{case}"), extra));
                let theirs = s.spawn(move || run("run", &format!("theirs-{case}"), extra));
                (ours, theirs)
            })
            .collect();
        runs.into_iter()
            .map(|(ours, theirs)| (ours.join().unwrap(), theirs.join().unwrap()))
            .collect()
    });
    for ((case, _, words), (ours, theirs)) in cases.into_iter().zip(results) {
        // kubectl's outcome, byte for byte, after our reason.
        assert_eq!(ours.code, theirs.code, "{case}: {ours:?} {theirs:?}");
        assert_eq!(
            theirs.stderr,
            "error: timed out waiting for the condition\n"
        );
        let expected_start = format!("Waiting: pod/ours-{case}");
        let (why, end) = ours.stderr.split_once('\n').unwrap();
        assert!(
            why.starts_with(&expected_start) && why.contains(words),
            "{case}: {}",
            ours.stderr
        );
        assert_eq!(end, theirs.stderr, "{case}");
        assert_eq!(ours.stdout, theirs.stdout, "{case}");
    }

    // A workload whose pods are refused (1.17's generators; kubectl run has none
    // now): the Deployment's ReplicaFailure says why no pod comes.
    set_namespace_labels(
        &cluster.client().await,
        ns.as_str(),
        serde_json::json!({ "pod-security.kubernetes.io/enforce": "restricted" }),
    )
    .await;
    let ours = run(
        "run-pod",
        "ours-deployment",
        &[
            "--image=registry.k8s.io/pause:3.9",
            "--generator=deployment/apps.v1",
        ],
    );
    assert_eq!(ours.code, 1, "{ours:?}");
    assert!(
        ours.stderr.contains(
            "\nWaiting: deployment.apps/ours-deployment cannot create pods: pods \"ours-deployment-"
        ) && ours
            .stderr
            .contains("is forbidden: violates PodSecurity \"restricted:latest\": "),
        "{}",
        ours.stderr
    );
}
