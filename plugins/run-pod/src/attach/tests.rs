//! The attach flow: its pure rules (readiness, exit codes), then its waits against the
//! scripted API server (the `scripted` crate) through the real client stack — the
//! created pod watched until it runs or ends, `--pod-running-timeout` and why a pod
//! waits, a pod that ends before the attach (its log, then its exit code), a pod
//! deleted meanwhile, a workload's pod looked for, `--rm`. Each test changes the pod as
//! the kubelet would once the session watches it ([`Server::watching`]), and checks
//! what was printed, the exit code and the requests sent.

use super::*;

fn pod(mut value: serde_json::Value) -> Pod {
    // A DynamicObject has its metadata.
    if value.get("metadata").is_none() {
        value["metadata"] = serde_json::json!({});
    }
    Pod::from_json(value)
}

#[test]
fn running_and_ready_needs_both() {
    let running = pod(serde_json::json!({"status": {"phase": "Running"}}));
    assert_eq!(running_and_ready(&running), Ok(false));
    let ready = pod(
        serde_json::json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
    );
    assert_eq!(running_and_ready(&ready), Ok(true));
    let done = pod(serde_json::json!({"status": {"phase": "Succeeded"}}));
    assert_eq!(running_and_ready(&done), Err(()));
    assert_eq!(running_and_ready(&pod(serde_json::json!({}))), Ok(false));
}

#[test]
fn exit_codes_come_from_the_container() {
    let ok = pod(serde_json::json!({"status": {"phase": "Succeeded"}}));
    assert_eq!(exit_code_of(&ok).ok(), Some(ExitCode::SUCCESS));
    let failed = pod(serde_json::json!({
        "metadata": {"name": "x", "namespace": "ns"},
        "status": {"phase": "Failed", "containerStatuses": [{
            "name": "x", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"terminated": {"exitCode": 3, "reason": "Error"}}
        }]}
    }));
    let err = exit_code_of(&failed).expect_err("error");
    let exit = err.downcast_ref::<ContainerExit>().expect("container exit");
    assert_eq!(exit.code, 3);
    assert_eq!(exit.message, "pod ns/x terminated (Error)\n");
    // kubectl 1.32: `pod ns/x terminated (Error)` alone on stderr, exit code 3.
    assert_eq!(exit.report(), "pod ns/x terminated (Error)\n");
    let with_message = ContainerExit {
        message: "pod ns/x terminated (Error)\nout of memory".into(),
        code: 1,
    };
    assert_eq!(
        with_message.report(),
        "pod ns/x terminated (Error)\nout of memory\n"
    );
    let unknown = pod(
        serde_json::json!({"metadata": {"name": "x", "namespace": "ns"}, "status": {"phase": "Failed"}}),
    );
    assert_eq!(
        exit_code_of(&unknown)
            .err()
            .map(|e| e.to_string())
            .as_deref(),
        Some("pod ns/x failed with unknown exit code")
    );
    let pending = pod(
        serde_json::json!({"metadata": {"name": "x", "namespace": "ns"}, "status": {"phase": "Pending"}}),
    );
    assert_eq!(
        exit_code_of(&pending)
            .err()
            .map(|e| e.to_string())
            .as_deref(),
        Some("pod ns/x left in phase Pending")
    );
}

// ---------------------------------------------------------------------------------
// The waits, against the scripted API server.

use cli::flags::DryRunStrategy;
use kube::api::PropagationPolicy;
use scripted::{Request, Server};
use serde_json::json;

use crate::create::Target;

const POD: &str = "/api/v1/namespaces/ns/pods/x";

/// Creates `object` through run-pod's own create (one POST).
async fn create(server: &Server, object: Value, kind: &str) -> Created {
    let target = Target {
        client: server.client(),
        namespace: "ns".into(),
        dry_run: DryRunStrategy::None,
        field_manager: "kubectl-run".into(),
        save_config: false,
    };
    target.create(object, kind).await.expect("created")
}

/// The pod `x` as run-pod generates it, with `restart`.
fn pod_x(restart: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "x", "labels": {"run": "x"}},
        "spec": {"containers": [{"name": "x", "image": "busybox"}], "restartPolicy": restart},
    })
}

/// A session on `created`, attached without stdin, as `kubectl run-pod x --attach`.
fn attached(server: &Server, created: Created, restart: &str, timeout: Duration) -> Session {
    Session {
        client: server.client(),
        namespace: "ns".into(),
        created: created.object.clone(),
        created_all: vec![created],
        stdin: false,
        tty: false,
        quiet: false,
        leave_stdin_open: false,
        detach_keys: String::new(),
        restart_policy: restart.into(),
        remove: false,
        timeout,
        watch_timeout: 290,
        deletion: Deletion {
            cascade: PropagationPolicy::Background,
        },
    }
}

/// What a session ended with: its exit code (`Ok`), or the error `cli::finish`
/// would print (`Err`; a `SilentExit` as its code, the message already written).
#[derive(Debug, PartialEq)]
enum End {
    Code(ExitCode),
    Silent(u8),
    Error(String),
}

/// Runs `session` while `script` plays the cluster's part; the end, stdout, stderr.
async fn run(
    session: Session,
    script: impl std::future::Future<Output = ()>,
) -> (End, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let (result, ()) = tokio::join!(session.run(&mut out, &mut err), script);
    let end = match result {
        Ok(code) => End::Code(code),
        Err(e) => match e.downcast_ref::<cli::SilentExit>() {
            Some(silent) => End::Silent(silent.0),
            None => End::Error(format!("{e:#}")),
        },
    };
    let text = |b: Vec<u8>| String::from_utf8(b).expect("utf-8");
    (end, text(out), text(err))
}

fn status(value: Value) -> impl FnOnce(&mut Value) {
    move |pod: &mut Value| pod["status"] = value
}

fn terminated(phase: &str, code: i32, reason: &str, message: &str) -> Value {
    json!({
        "phase": phase,
        "containerStatuses": [{
            "name": "x", "image": "busybox", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"terminated": {"exitCode": code, "reason": reason, "message": message}},
        }],
    })
}

fn is(method: http::Method, path: &'static str) -> impl Fn(&Request) -> bool {
    move |r: &Request| r.method == method && r.path == path
}

/// kubectl's `handleAttachPod`: a pod that ended before it became ready is not
/// attached to; its log is printed, then (`--restart=Never`) the command exits with
/// its container's code, the message as kubectl's `CheckErr` prints it.
#[tokio::test]
async fn a_pod_that_ends_before_the_attach_gives_its_log_and_its_exit_code() {
    let server = Server::start().await;
    let created = create(&server, pod_x("Never"), "Pod").await;
    server.set_log(POD, "the last words\n");
    let script = async {
        server.watching(1).await;
        server.modify(POD, status(json!({"phase": "Pending"})));
        server.modify(POD, status(terminated("Failed", 3, "Error", "boom")));
    };
    let session = attached(&server, created, "Never", Duration::from_secs(60));
    let (end, out, err) = run(session, script).await;
    assert_eq!(end, End::Silent(3));
    assert_eq!(err, "pod ns/x terminated (Error)\nboom\n");
    assert_eq!(
        out, "",
        "the log goes to the process's stdout, nothing else is printed"
    );
    // The create, the wait (a list, then a watch), the log of the one container,
    // whole (no attach), and the wait for the end, which the list answers.
    let pods = "/api/v1/namespaces/ns/pods";
    let log = format!("{POD}/log");
    let requests = server.log();
    let seen: Vec<(String, &str, &str)> = requests
        .iter()
        .map(|r| {
            let watch = r.query.contains("watch=true");
            let path = [pods, POD, log.as_str()]
                .into_iter()
                .find(|p| *p == r.path)
                .unwrap_or("elsewhere");
            let how = if watch {
                "watch"
            } else {
                r.query.split('&').next().unwrap_or("")
            };
            (r.method.to_string(), path, how)
        })
        .collect();
    let expected: Vec<(String, &str, &str)> = vec![
        ("POST".into(), pods, "fieldManager=kubectl-run"),
        ("GET".into(), pods, "fieldSelector=metadata.name%3Dx"),
        ("GET".into(), pods, "watch"),
        ("GET".into(), &log, "container=x"),
        ("GET".into(), pods, "fieldSelector=metadata.name%3Dx"),
    ];
    assert_eq!(seen, expected);
}

/// `--restart=OnFailure` waits for the pod to succeed: a pod that succeeded before the
/// attach ends the command with 0 and nothing on stderr.
#[tokio::test]
async fn a_pod_that_succeeded_before_the_attach_exits_0() {
    let server = Server::start().await;
    let created = create(&server, pod_x("OnFailure"), "Pod").await;
    let script = async {
        server.watching(1).await;
        server.modify(POD, status(json!({"phase": "Running"})));
        server.modify(POD, status(terminated("Succeeded", 0, "Completed", "")));
    };
    let session = attached(&server, created, "OnFailure", Duration::from_secs(60));
    let (end, out, err) = run(session, script).await;
    assert_eq!(end, End::Code(ExitCode::SUCCESS));
    assert_eq!((out.as_str(), err.as_str()), ("", ""));
    assert_eq!(server.count(&http::Method::GET, "log"), 1);
}

/// A pod that stays Pending: once it has not moved for a while, why (the scheduler's
/// words, once); at `--pod-running-timeout`, client-go's timeout error; with `--rm`
/// the pod is deleted all the same, and kubectl's line says so.
#[tokio::test]
async fn a_pending_pod_says_why_times_out_and_is_removed_with_rm() {
    let server = Server::start().await;
    let created = create(&server, pod_x("Never"), "Pod").await;
    let unschedulable =
        "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.";
    let script = async {
        server.watching(1).await;
        server.modify(
            POD,
            status(json!({"phase": "Pending", "conditions": [{
                "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                "message": unschedulable,
            }]})),
        );
    };
    let mut session = attached(&server, created, "Never", Duration::from_secs(5));
    session.remove = true;
    let started = tokio::time::Instant::now();
    let (end, out, err) = run(session, script).await;
    let took = started.elapsed();
    assert_eq!(
        end,
        End::Error("timed out waiting for the condition".into())
    );
    assert_eq!(out, "pod \"x\" deleted from ns namespace\n");
    assert_eq!(
        err,
        format!("Waiting: pod/x cannot be scheduled: {unschedulable}\n")
    );
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(15),
        "{took:?}"
    );
    assert_eq!(server.object(POD), None, "--rm deleted it");
    let deletes = server.count(&http::Method::DELETE, "x");
    assert_eq!(deletes, 1);
}

/// A pod deleted while the session waits for it: kubectl's NotFound, at once.
#[tokio::test]
async fn a_pod_deleted_while_waited_for_is_not_found() {
    let server = Server::start().await;
    let created = create(&server, pod_x("Never"), "Pod").await;
    let script = async {
        server.watching(1).await;
        server.delete(POD);
    };
    let session = attached(&server, created, "Never", Duration::from_secs(60));
    let (end, out, err) = run(session, script).await;
    assert_eq!(end, End::Error("pods \"x\" not found".into()));
    assert_eq!((out.as_str(), err.as_str()), ("", ""));
}

/// A workload's pod is found by the workload's selector once it exists (kubectl's
/// `AttachablePodForObject`), then waited for like a created pod; without one,
/// `--pod-running-timeout` ends the search.
#[tokio::test]
async fn a_workloads_pod_is_looked_for_by_its_selector() {
    let server = Server::start().await;
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "x", "labels": {"run": "x"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"run": "x"}},
            "template": {
                "metadata": {"labels": {"run": "x"}},
                "spec": {"containers": [{"name": "x", "image": "busybox"}]},
            },
        },
    });
    let created = create(&server, deployment, "Deployment").await;
    let pods = "/api/v1/namespaces/ns/pods";
    let pod = "/api/v1/namespaces/ns/pods/x-1";
    let script = async {
        // Looked for once, found nothing: the ReplicaSet's pod appears.
        server.saw(1, is(http::Method::GET, pods)).await;
        let mut replica = pod_x("Always");
        replica["metadata"]["name"] = json!("x-1");
        let client = server.client();
        let api: kube::Api<core::Pod> = kube::Api::namespaced(client, "ns");
        api.create(
            &Default::default(),
            &serde_json::from_value(replica).expect("a pod"),
        )
        .await
        .expect("created");
        server.watching(1).await;
        server.modify(pod, status(terminated("Succeeded", 0, "Completed", "")));
    };
    let session = attached(&server, created, "Always", Duration::from_secs(60));
    let (end, out, err) = run(session, script).await;
    assert_eq!(end, End::Code(ExitCode::SUCCESS));
    assert_eq!((out.as_str(), err.as_str()), ("", ""));
    let lists = server
        .log()
        .iter()
        .filter(|r| r.path == pods && r.query.contains("labelSelector=run%3Dx"))
        .count();
    assert!(lists >= 2, "looked for until found: {:?}", server.log());
    assert_eq!(server.count(&http::Method::GET, "log"), 1);

    // None appears: the search ends at the timeout, in kubectl's words.
    let created = create(
        &server,
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "y"},
            "spec": {"selector": {"matchLabels": {"run": "y"}}, "template": {}},
        }),
        "Deployment",
    )
    .await;
    let session = attached(&server, created, "Always", Duration::from_secs(1));
    let (end, _, _) = run(session, async {}).await;
    assert_eq!(
        end,
        End::Error("timed out waiting for a pod matching run=y".into())
    );
}
