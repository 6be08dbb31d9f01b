//! run-pod and create-file against a SIGSTOPped kube-apiserver: every
//! request is bounded (`apiclient::bound`), by `--request-timeout` when given and a
//! default otherwise, so the command ends with kubectl's `Unable to connect to the
//! server` instead of waiting forever. The kernel still completes TCP handshakes into
//! the paused server's listen backlog: only the client's own bound ends the wait.
//! Pausing the control plane stalls every test on it, so these run on the isolated
//! cluster (one at a time); each hang bound below fails the test rather than waiting.
//! The `--request-timeout` cases run over HTTP/2 (kube-apiserver itself) and then over
//! HTTP/1.1 (through the fault proxy); the default bound's, 75 s each, over HTTP/2.

use std::collections::BTreeSet;
use std::time::Duration;

use tests::faults::proxy::{ApiProxy, Transport};
use tokio::io::AsyncBufReadExt;

/// The start of the message for a request cut by the bound `bound` (its `Debug` form).
fn no_answer(bound: &str) -> String {
    format!(
        "Unable to connect to the server: no answer in time (each request is bounded by {bound}: --request-timeout, or 75s without it)"
    )
}

/// What a finished plugin run left.
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Starts `plugin` with `args` on the isolated cluster, pauses kube-apiserver once
/// `pause_after` lines are on stdout (0: before the plugin starts), and waits for the
/// plugin's end, at most `hang` (then the test fails: a hang is the bug). Over
/// HTTP/2 the plugin talks to kube-apiserver itself; over HTTP/1.1 through the fault
/// proxy offering only that (which forwards to the paused server).
async fn against_paused(
    plugin: &str,
    label: &str,
    args: impl FnOnce(&str) -> Vec<String>,
    pause_after: usize,
    hang: Duration,
    over: Transport,
) -> Ended {
    let (cluster, _lock) = tests::harness::isolated_cluster().await;
    let plane = tests::faults::ControlPlane::of(&cluster.kubeconfig).expect("control plane");
    let ns = cluster.namespace(&format!("{label}-{over}")).await;
    let proxy = match over {
        Transport::Http2 => None,
        Transport::Http1 => Some(ApiProxy::start_over(&cluster.kubeconfig, over).expect("proxy")),
    };
    let kubeconfig = proxy
        .as_ref()
        .map_or(&cluster.kubeconfig, |p| &p.kubeconfig);
    let mut paused =
        (pause_after == 0).then(|| plane.pause("kube-apiserver").expect("pause kube-apiserver"));
    let mut child =
        tests::harness::spawn_plugin(&cluster.plugin_dir, plugin, kubeconfig, args(ns.as_str()));
    let stderr = tests::harness::collect_stderr(&mut child);
    let mut lines = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut stdout = String::new();
    let ended = tokio::time::timeout(hang, async {
        while let Ok(Some(line)) = lines.next_line().await {
            stdout.push_str(&line);
            stdout.push('\n');
            if paused.is_none() && stdout.lines().count() >= pause_after {
                paused = Some(plane.pause("kube-apiserver").expect("pause kube-apiserver"));
            }
        }
        child.wait().await
    })
    .await;
    // Resumed before any assertion, so a failure leaves the cluster usable.
    drop(paused);
    let status = ended
        .unwrap_or_else(|_| panic!("{plugin} hung for {hang:?} against a paused API server"))
        .expect("wait");
    Ended {
        code: status.code(),
        stdout,
        stderr: stderr.await.expect("stderr reader"),
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_pod_ends_within_its_request_timeout() {
    for over in Transport::BOTH {
        run_pod_ends_within_its_request_timeout_over(over).await;
    }
}

async fn run_pod_ends_within_its_request_timeout_over(over: Transport) {
    let ended = against_paused(
        "run-pod",
        "rp-paused-rt",
        |ns| strings(&["web", "--image=nginx", "-n", ns, "--request-timeout=3s"]),
        0,
        Duration::from_secs(60),
        over,
    )
    .await;
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert_eq!(ended.stdout, "");
    // kubectl's CheckErr prints a failed request without `error: `.
    assert!(
        ended.stderr == format!("{}\n", no_answer("3s")),
        "a clear error: {}",
        ended.stderr
    );
}

/// Without `--request-timeout` (kubectl would wait forever) the default bound applies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_pod_ends_within_the_default_bound() {
    let ended = against_paused(
        "run-pod",
        "rp-paused-default",
        |ns| strings(&["web", "--image=nginx", "-n", ns]),
        0,
        Duration::from_secs(150),
        Transport::Http2,
    )
    .await;
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    // kubectl's CheckErr prints a failed request without `error: `.
    assert!(
        ended.stderr == format!("{}\n", no_answer("75s")),
        "a clear error: {}",
        ended.stderr
    );
}

/// Paused in the middle of a create, with requests in flight on open connections
/// (their reads are what the bound cuts): every object is reported, created or failed
/// with the bound's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_file_paused_mid_create_ends_within_its_request_timeout() {
    for over in Transport::BOTH {
        create_file_paused_mid_create_over(over).await;
    }
}

async fn create_file_paused_mid_create_over(over: Transport) {
    const N: usize = 200;
    let dir = tempfile::tempdir().expect("tempdir");
    let names: Vec<String> = (0..N).map(|i| format!("p-{i:04}")).collect();
    for name in &names {
        std::fs::write(
            dir.path().join(format!("{name}.yaml")),
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n"),
        )
        .expect("write manifest");
    }
    let path = dir.path().display().to_string();
    let ended = against_paused(
        "create-file",
        "cf-paused-rt",
        |ns| strings(&["-f", &path, "-n", ns, "--request-timeout=3s"]),
        10,
        Duration::from_secs(240),
        over,
    )
    .await;
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    let created: BTreeSet<&str> = ended
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("configmap/")?.strip_suffix(" created"))
        .collect();
    let failed: BTreeSet<&str> = ended
        .stderr
        .lines()
        .filter(|l| l.contains(&no_answer("3s")))
        .filter_map(|l| names.iter().find(|n| l.contains(&format!("{n}.yaml"))))
        .map(String::as_str)
        .collect();
    assert!(!failed.is_empty(), "{}", ended.stderr);
    assert!(created.is_disjoint(&failed), "reported both ways");
    assert_eq!(
        created.len() + failed.len(),
        N,
        "objects neither reported created nor failed with the bound's message\n{}",
        ended.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_file_ends_within_the_default_bound() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("cm.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\ndata:\n  k: v\n",
    )
    .expect("write manifest");
    let path = file.display().to_string();
    let ended = against_paused(
        "create-file",
        "cf-paused-default",
        |ns| strings(&["-f", &path, "-n", ns]),
        0,
        Duration::from_secs(150),
        Transport::Http2,
    )
    .await;
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert!(
        ended.stderr.starts_with("error: ") && ended.stderr.contains(&no_answer("75s")),
        "a clear error: {}",
        ended.stderr
    );
}
