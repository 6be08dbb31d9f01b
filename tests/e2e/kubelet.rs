//! The simulated node as a process kubelet, through the real API server:
//! container commands run as processes, `kubectl logs`, `kubectl attach`,
//! `kubectl exec` and kube-rs attach reach the node's kubelet API.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use kube::Api;
use kube::api::{AttachParams, AttachedProcess, ObjectMeta};
use kube::runtime::wait::await_condition;
use tests::harness::cluster;
use tests::objects::create_pod;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// A pod running `command`, with stdin (once) and optionally a terminal.
fn pod(name: &str, restart: &str, command: &[&str], stdin: bool, tty: bool) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some("busybox:1.36".into()),
                command: Some(command.iter().map(|s| (*s).to_owned()).collect()),
                stdin: Some(stdin),
                stdin_once: Some(stdin),
                tty: Some(tty),
                ..Default::default()
            }],
            restart_policy: Some(restart.into()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

async fn wait_for(pods: &Api<Pod>, name: &str, what: &str, cond: impl Fn(&Pod) -> bool) -> Pod {
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(pods.clone(), name, move |p: Option<&Pod>| {
            p.is_some_and(&cond)
        }),
    )
    .await
    .unwrap_or_else(|_| panic!("pod {name}: {what} within 30s"))
    .expect("watch")
    .expect("pod exists")
}

fn running(p: &Pod) -> bool {
    p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
}

fn exit_code(p: &Pod) -> Option<i32> {
    p.status
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

#[tokio::test]
async fn finished_container_has_real_exit_code_and_logs_for_kubectl() {
    let cluster = cluster();
    let ns = cluster.namespace("kubelet-logs").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    create_pod(
        &pods,
        &pod(
            "done",
            "Never",
            &["sh", "-c", "echo one; echo two; echo oops >&2; exit 7"],
            false,
            false,
        ),
    )
    .await;
    let done = wait_for(&pods, "done", "Failed", |p| {
        p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Failed")
    })
    .await;
    assert_eq!(exit_code(&done), Some(7));

    let all = cluster
        .kubectl()
        .args(["logs", "-n", ns.as_str(), "done"])
        .run();
    all.success();
    for line in ["one\n", "two\n", "oops\n"] {
        assert!(all.stdout.contains(line), "{all:?}");
    }
    let tail = cluster
        .kubectl()
        .args(["logs", "-n", ns.as_str(), "done", "--tail=1", "-c", "main"])
        .run();
    tail.success();
    assert_eq!(tail.stdout.lines().count(), 1, "{tail:?}");
    let stamped = cluster
        .kubectl()
        .args(["logs", "-n", ns.as_str(), "done", "--timestamps"])
        .run();
    stamped.success();
    let first = stamped.stdout.lines().next().unwrap_or_default();
    let (stamp, _) = first.split_once(' ').unwrap_or_default();
    assert!(
        stamp.parse::<k8s_openapi::jiff::Timestamp>().is_ok(),
        "timestamped line: {first:?}"
    );
    // Through kube-rs too.
    let text = pods.logs("done", &Default::default()).await.expect("logs");
    assert!(text.contains("two\n"), "{text:?}");
}

#[tokio::test]
async fn restarted_container_keeps_previous_logs_and_follow_streams() {
    let cluster = cluster();
    let ns = cluster.namespace("kubelet-previous").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    // Each run counts in a file of the pod's scratch directory: fails
    // twice, then succeeds.
    create_pod(
        &pods,
        &pod(
            "flaky",
            "OnFailure",
            &[
                "sh",
                "-c",
                "echo x >> runs; n=$(wc -l < runs); echo run $n; [ $n -ge 3 ]",
            ],
            false,
            false,
        ),
    )
    .await;
    let done = wait_for(&pods, "flaky", "Succeeded", |p| {
        p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Succeeded")
    })
    .await;
    let status = done
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c.first())
        .cloned()
        .expect("container status");
    assert_eq!(status.restart_count, 2);
    let current = cluster
        .kubectl()
        .args(["logs", "-n", ns.as_str(), "flaky"])
        .run();
    current.success();
    assert_eq!(current.stdout.trim(), "run 3");
    let previous = cluster
        .kubectl()
        .args(["logs", "-n", ns.as_str(), "flaky", "--previous"])
        .run();
    previous.success();
    assert_eq!(previous.stdout.trim(), "run 2");

    create_pod(
        &pods,
        &pod(
            "ticker",
            "Never",
            &[
                "sh",
                "-c",
                "for i in 1 2 3; do echo tick $i; sleep 0.3; done",
            ],
            false,
            false,
        ),
    )
    .await;
    wait_for(&pods, "ticker", "Running", running).await;
    let follow = cluster
        .kubectl()
        .args(["logs", "-n", ns.as_str(), "ticker", "-f"])
        .run();
    follow.success();
    assert_eq!(follow.stdout, "tick 1\ntick 2\ntick 3\n");
}

#[tokio::test]
async fn kubectl_attach_and_run_feed_stdin_to_the_process() {
    let cluster = cluster();
    let ns = cluster.namespace("kubelet-attach").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    create_pod(
        &pods,
        &pod(
            "reader",
            "Never",
            &["sh", "-c", "read x; echo got $x; exit 3"],
            true,
            false,
        ),
    )
    .await;
    wait_for(&pods, "reader", "Running", running).await;
    let attach = cluster
        .kubectl()
        .args(["attach", "-i", "-n", ns.as_str(), "reader"])
        .stdin("hello\n")
        .run();
    // The exit code is the pod's business: attach ends cleanly.
    attach.success();
    assert!(attach.stdout.contains("got hello"), "{attach:?}");
    let done = wait_for(&pods, "reader", "terminated", |p| exit_code(p).is_some()).await;
    assert_eq!(exit_code(&done), Some(3));

    // kubectl run -i --rm: attach, exit code from the pod, pod deleted.
    let run = cluster
        .kubectl()
        .args([
            "run",
            "-n",
            ns.as_str(),
            "once",
            "--image=busybox",
            "--restart=Never",
            "-i",
            "--rm",
            "--",
            "sh",
            "-c",
            "read x; echo got $x; exit 3",
        ])
        .stdin("there\n")
        .run();
    run.code(3);
    assert!(run.stdout.contains("got there"), "{run:?}");
    assert!(!run.stderr.contains("falling back"), "{run:?}");
}

#[tokio::test]
async fn kube_rs_attach_with_stdin_and_a_terminal() {
    let cluster = cluster();
    let ns = cluster.namespace("kubelet-kube-attach").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    let mut attached = attach_stdin(&pods, "cat", "read x; echo got $x").await;
    let mut stdin = attached.stdin().expect("stdin");
    stdin.write_all(b"kube\n").await.expect("write stdin");
    let mut stdout = attached.stdout().expect("stdout");
    let mut out = String::new();
    tokio::time::timeout(Duration::from_secs(20), stdout.read_to_string(&mut out))
        .await
        .expect("output within 20s")
        .expect("read stdout");
    assert_eq!(out, "got kube\n");
    let status = attached.take_status().expect("status channel").await;
    assert_eq!(status.and_then(|s| s.status).as_deref(), Some("Success"));

    // A terminal: the process sees a tty and its size follows resizes.
    create_pod(
        &pods,
        &pod(
            "term",
            "Never",
            &["sh", "-c", "read x; tty; stty size"],
            true,
            true,
        ),
    )
    .await;
    wait_for(&pods, "term", "Running", running).await;
    let mut attached = pods
        .attach("term", &AttachParams::interactive_tty())
        .await
        .expect("attach with tty");
    let mut resize = attached.terminal_size().expect("resize channel");
    futures::SinkExt::send(
        &mut resize,
        kube::api::TerminalSize {
            width: 100,
            height: 40,
        },
    )
    .await
    .expect("resize");
    // Give the resize a moment to land before the shell asks for the size.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut stdin = attached.stdin().expect("stdin");
    stdin.write_all(b"go\r").await.expect("write stdin");
    let mut stdout = attached.stdout().expect("stdout");
    let mut out = String::new();
    tokio::time::timeout(Duration::from_secs(20), stdout.read_to_string(&mut out))
        .await
        .expect("output within 20s")
        .expect("read stdout");
    assert!(out.contains("/dev/pts/"), "{out:?}");
    assert!(out.contains("40 100"), "{out:?}");
}

#[tokio::test]
async fn kubectl_exec_and_a_terminal_through_kubectl_run() {
    let cluster = cluster();
    let ns = cluster.namespace("kubelet-exec").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    create_pod(
        &pods,
        &pod("idle", "Never", &["sleep", "3600"], false, false),
    )
    .await;
    wait_for(&pods, "idle", "Running", running).await;
    let exec = cluster
        .kubectl()
        .args([
            "exec",
            "-n",
            ns.as_str(),
            "idle",
            "--",
            "sh",
            "-c",
            "echo in $HOSTNAME; exit 4",
        ])
        .run();
    exec.code(4);
    assert_eq!(exec.stdout, "in idle\n");

    let tty = cluster
        .kubectl()
        .args([
            "run",
            "-n",
            ns.as_str(),
            "term",
            "--image=busybox",
            "--restart=Never",
            "-i",
            "-t",
            "--rm",
            "--",
            "sh",
            "-c",
            "tty",
        ])
        .run();
    tty.success();
    assert!(tty.stdout.contains("/dev/pts/"), "{tty:?}");
}

#[tokio::test]
async fn logs_since_a_time_or_a_duration() {
    let cluster = cluster();
    let ns = cluster.namespace("kubelet-logs-since").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    create_pod(
        &pods,
        &pod(
            "two",
            "Never",
            &["sh", "-c", "echo early; sleep 2; echo late; sleep 3600"],
            false,
            false,
        ),
    )
    .await;
    wait_for(&pods, "two", "Running", running).await;
    let logs = |extra: &[&str]| {
        let out = cluster
            .kubectl()
            .args(["logs", "-n", ns.as_str(), "two"])
            .args(extra)
            .run();
        out.success();
        out.stdout
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let stamped = loop {
        let stamped = logs(&["--timestamps"]);
        if stamped.contains(" late\n") {
            break stamped;
        }
        assert!(std::time::Instant::now() < deadline, "{stamped:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let late = stamped
        .lines()
        .find_map(|l| l.strip_suffix(" late"))
        .expect("the late line's timestamp");
    // The API server passes sinceTime on with whole seconds: 2s between the
    // lines keep "early" before it.
    assert_eq!(logs(&[&format!("--since-time={late}")]), "late\n");
    assert_eq!(logs(&["--since=1h"]), "early\nlate\n");
}

#[tokio::test]
async fn timer_based_pods_have_empty_logs() {
    let cluster = cluster();
    let ns = cluster.namespace("kubelet-sim-logs").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    let mut quiet = pod("quiet", "Always", &[], false, false);
    if let Some(spec) = quiet.spec.as_mut() {
        spec.containers[0].command = None;
    }
    create_pod(&pods, &quiet).await;
    wait_for(&pods, "quiet", "Running", running).await;
    let logs = cluster
        .kubectl()
        .args(["logs", "-n", ns.as_str(), "quiet"])
        .run();
    logs.success();
    assert_eq!(logs.stdout, "");
}

/// The longest any attach below may take: generous, so a slow machine passes;
/// reaching it means the session never ended.
const SESSION_BOUND: Duration = Duration::from_secs(60);

#[tokio::test]
async fn kube_rs_attach_ends_when_the_container_exits() {
    let cluster = cluster();
    let ns = cluster.namespace("kubelet-attach-end").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    // The shell leaves a background job holding its stdout: the container
    // still ends with its main process, and so does the session.
    for (name, tty) in [("plain", false), ("term", true)] {
        create_pod(
            &pods,
            &pod(
                name,
                "Never",
                &["sh", "-c", "read x; echo got $x; sleep 300 & exit 0"],
                true,
                tty,
            ),
        )
        .await;
        wait_for(&pods, name, "Running", running).await;
        let params = AttachParams::default()
            .stdin(true)
            .stdout(true)
            .stderr(!tty)
            .tty(tty);
        let mut attached = pods.attach(name, &params).await.expect("attach");
        // stdin stays open on our side: only the server can end the session.
        let mut stdin = attached.stdin().expect("stdin");
        stdin.write_all(b"kube\n").await.expect("write stdin");
        let mut stdout = attached.stdout().expect("stdout");
        let status = attached.take_status().expect("status channel");
        let session = async {
            let mut out = String::new();
            stdout.read_to_string(&mut out).await.expect("read stdout");
            let status = status.await;
            attached.join().await.expect("session ends cleanly");
            (out, status)
        };
        let (out, status) = tokio::time::timeout(SESSION_BOUND, session)
            .await
            .unwrap_or_else(|_| panic!("{name}: the attach session did not end"));
        assert!(out.contains("got kube"), "{name}: {out:?}");
        assert_eq!(
            status.and_then(|s| s.status).as_deref(),
            Some("Success"),
            "{name}"
        );
        drop(stdin);
    }
}

/// Starts pod `name` running `sh -c script` with stdin open, and attaches to its
/// stdin and stdout with kube-rs once it runs.
async fn attach_stdin(pods: &Api<Pod>, name: &str, script: &str) -> AttachedProcess {
    create_pod(
        pods,
        &pod(name, "Never", &["sh", "-c", script], true, false),
    )
    .await;
    wait_for(pods, name, "Running", running).await;
    pods.attach(
        name,
        &AttachParams::default()
            .stdin(true)
            .stdout(true)
            .stderr(false),
    )
    .await
    .expect("attach")
}

#[tokio::test]
async fn kube_rs_stdin_shutdown_is_end_of_file_for_the_process() {
    let cluster = cluster();
    let ns = cluster.namespace("kubelet-stdin-eof").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    let mut attached = attach_stdin(&pods, "cat", "cat; echo eof").await;
    let mut stdin = attached.stdin().expect("stdin");
    stdin.write_all(b"a\n").await.expect("write stdin");
    // kube-rs's stdin is one half of an in-memory pipe: dropping it is not
    // end of file, shutting it down is (kube-rs then closes the stdin
    // channel, v5.channel.k8s.io).
    stdin.shutdown().await.expect("close stdin");
    let mut stdout = attached.stdout().expect("stdout");
    let mut out = String::new();
    tokio::time::timeout(SESSION_BOUND, stdout.read_to_string(&mut out))
        .await
        .expect("the process read end of file and the session ended")
        .expect("read stdout");
    assert_eq!(out, "a\neof\n");
    tokio::time::timeout(SESSION_BOUND, attached.join())
        .await
        .expect("session ends")
        .expect("session ends cleanly");
}

#[tokio::test]
async fn the_kubelet_closes_the_attach_stream_after_the_status() {
    use futures::StreamExt as _;
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

    let cluster = cluster();
    let ns = cluster.namespace("kubelet-attach-close").await;
    let client = cluster.client().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns.as_str());
    create_pod(
        &pods,
        &pod(
            "fin",
            "Never",
            &["sh", "-c", "sleep 1; echo bye"],
            false,
            false,
        ),
    )
    .await;
    wait_for(&pods, "fin", "Running", running).await;
    let request = kube::core::Request::new(format!("/api/v1/namespaces/{}/pods", ns.as_str()))
        .attach("fin", &AttachParams::default().stderr(false))
        .expect("attach request");
    let mut ws = client
        .connect(request)
        .await
        .expect("connect")
        .into_stream();
    // We send nothing, not even a close frame: every message until the end
    // of the stream, in order.
    let messages = tokio::time::timeout(SESSION_BOUND, async {
        let mut messages = Vec::new();
        while let Some(message) = ws.next().await {
            messages.push(message.expect("websocket message"));
        }
        messages
    })
    .await
    .expect("the kubelet ended the stream");
    let binary: Vec<Vec<u8>> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Binary(b) => Some(b.to_vec()),
            _ => None,
        })
        .collect();
    let stdout: Vec<u8> = binary
        .iter()
        .filter(|b| b.first() == Some(&1))
        .flat_map(|b| b[1..].to_vec())
        .collect();
    assert_eq!(stdout, b"bye\n", "{messages:?}");
    let status = binary
        .iter()
        .find(|b| b.first() == Some(&3))
        .expect("a status on the error channel");
    let status: serde_json::Value = serde_json::from_slice(&status[1..]).expect("status JSON");
    assert_eq!(status["status"], "Success");
    match messages.last() {
        Some(Message::Close(Some(frame))) => assert_eq!(frame.code, CloseCode::Normal),
        other => panic!("the stream ends with a normal close frame, not {other:?}"),
    }
}

#[tokio::test]
async fn logs_keep_the_last_10mi_and_tail_still_works() {
    let cluster = cluster();
    let ns = cluster.namespace("kubelet-log-cap").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    // 12Mi of numbered lines (15 bytes each), then a last one.
    create_pod(
        &pods,
        &pod(
            "chatty",
            "Never",
            &["sh", "-c", "seq -f '%014g' 1 838861; echo last"],
            false,
            false,
        ),
    )
    .await;
    wait_for(&pods, "chatty", "Succeeded", |p| {
        p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Succeeded")
    })
    .await;
    let text = pods
        .logs("chatty", &Default::default())
        .await
        .expect("logs");
    assert_eq!(text.len(), 10 * 1024 * 1024, "the log is cut to 10Mi");
    assert!(
        text.ends_with("00000000838861\nlast\n"),
        "{:?}",
        &text[text.len() - 40..]
    );
    assert!(
        !text.contains("\n00000000000002\n"),
        "the oldest lines are gone"
    );
    let tail = cluster
        .kubectl()
        .args(["logs", "-n", ns.as_str(), "chatty", "--tail=2"])
        .run();
    tail.success();
    assert_eq!(tail.stdout, "00000000838861\nlast\n");
    let limited = cluster
        .kubectl()
        .args(["logs", "-n", ns.as_str(), "chatty", "--limit-bytes=7"])
        .run();
    limited.success();
    assert_eq!(limited.stdout.len(), 7, "{limited:?}");
}
