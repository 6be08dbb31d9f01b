//! `kubectl run-pod` attached to a container that really runs (the simulated node's
//! process kubelet): stdin, exit codes, `--rm`, the logs fallback, TTYs and restarts.
//! These are issue 6's end-to-end cases, through the real `kubectl` plugin lookup.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::ListParams;
use tests::harness::{Output, cluster};

fn run_pod(ns: &str, args: &[&str], stdin: &str) -> Output {
    cluster()
        .kubectl()
        .args(["run-pod", "-n", ns])
        .args(args)
        .stdin(stdin)
        .run()
}

async fn pods_left(ns: &str) -> usize {
    let pods: Api<Pod> = Api::namespaced(cluster().client().await, ns);
    // --rm deletes the pod; the kubelet finalizes it shortly after.
    for _ in 0..100 {
        let left = pods
            .list(&ListParams::default())
            .await
            .expect("list pods")
            .items;
        if left.is_empty() {
            return 0;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    pods.list(&ListParams::default())
        .await
        .expect("list pods")
        .items
        .len()
}

#[tokio::test]
async fn stdin_reaches_the_container_and_its_exit_code_comes_back() {
    let ns = cluster().namespace("attach-stdin").await;
    let out = run_pod(
        ns.as_str(),
        &[
            "reader",
            "--image=busybox",
            "-i",
            "--rm",
            "--restart=Never",
            "--",
            "sh",
            "-c",
            "read x; echo got $x; exit 3",
        ],
        "hello\n",
    );
    out.code(3);
    assert!(
        out.stdout.contains("got hello"),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    assert_eq!(pods_left(ns.as_str()).await, 0, "--rm leaves no pod");
}

/// Regression: the end of our stdin must reach the container as end of file (kube's
/// stdin writer needs an explicit shutdown). Before, a container waiting in `read`
/// kept the plugin attached forever; kubectl ends at once.
#[tokio::test]
async fn end_of_stdin_reaches_the_container() {
    let ns = cluster().namespace("attach-eof").await;
    let name = ns.as_str().to_string();
    // Bounded from outside: a regression must fail the test, not hang the run.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let out = run_pod(
            &name,
            &[
                "eof",
                "--image=busybox",
                "-i",
                "--rm",
                "--restart=Never",
                "--",
                "sh",
                "-c",
                "read x; echo \"got [$x]\"; exit 3",
            ],
            "",
        );
        let _ = tx.send(out);
    });
    let out = rx
        .recv_timeout(Duration::from_secs(90))
        .expect("run-pod -i ends when its stdin does");
    out.code(3);
    assert!(
        out.stdout.contains("got []"),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    assert_eq!(pods_left(ns.as_str()).await, 0, "--rm leaves no pod");
}

#[tokio::test]
async fn attach_to_a_finished_pod_falls_back_to_its_logs() {
    let ns = cluster().namespace("attach-finished").await;
    // Finishes at once: by the time the pod is seen running, the container is gone.
    let out = run_pod(
        ns.as_str(),
        &[
            "quick",
            "--image=busybox",
            "--attach",
            "--restart=Never",
            "--",
            "sh",
            "-c",
            "echo done-quickly",
        ],
        "",
    );
    out.success();
    assert!(
        out.stdout.contains("done-quickly"),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
}

#[tokio::test]
async fn tty_allocates_a_terminal() {
    let ns = cluster().namespace("attach-tty").await;
    let out = run_pod(
        ns.as_str(),
        &[
            "term",
            "--image=busybox",
            "-i",
            "-t",
            "--rm",
            "--restart=Never",
            "--",
            "sh",
            "-c",
            "tty; test -t 0 && echo is-a-tty",
        ],
        "",
    );
    out.success();
    assert!(
        out.stdout.contains("is-a-tty"),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stdout.contains("/dev/pts/"),
        "tty names a pseudo-terminal:\n{}",
        out.stdout
    );
}

#[tokio::test]
async fn on_failure_restarts_until_success_and_exits_zero() {
    let ns = cluster().namespace("attach-onfailure").await;
    // The scratch directory survives restarts of the container: count runs there.
    let script = "n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs; echo run $n; [ $n -ge 3 ]";
    let out = run_pod(
        ns.as_str(),
        &[
            "flaky",
            "--image=busybox",
            "--attach",
            "--rm",
            "--restart=OnFailure",
            "--",
            "sh",
            "-c",
            script,
        ],
        "",
    );
    out.success();
    assert_eq!(pods_left(ns.as_str()).await, 0, "--rm leaves no pod");
}

/// `--expose --rm` with an output template that would fail on the Service (it has no
/// `.spec.containers`): attached, kubectl 1.37 prints none of the objects it created,
/// so the template never runs, and `--rm` removes the service along with the pod.
#[tokio::test]
async fn rm_removes_an_exposed_service_even_when_printing_it_failed() {
    let ns = cluster().namespace("attach-rm-svc").await;
    let out = run_pod(
        ns.as_str(),
        &[
            "exposed",
            "--image=busybox",
            "-i",
            "--rm",
            "--restart=Never",
            "--expose",
            "--port=80",
            "--allow-missing-template-keys=false",
            "-o",
            "go-template={{.spec.containers}}",
            "--",
            "sh",
            "-c",
            "echo ran",
        ],
        "",
    );
    out.success();
    assert!(out.stdout.contains("ran"), "{}\n{}", out.stdout, out.stderr);
    assert!(
        !out.stderr.contains("map has no entry"),
        "nothing is printed while attached: {}",
        out.stderr
    );
    assert_eq!(pods_left(ns.as_str()).await, 0, "--rm leaves no pod");
    let services: Api<k8s_openapi::api::core::v1::Service> =
        Api::namespaced(cluster().client().await, ns.as_str());
    assert!(
        services.get_opt("exposed").await.unwrap().is_none(),
        "--rm leaves no service"
    );
}
