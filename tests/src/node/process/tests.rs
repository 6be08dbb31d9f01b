//! Unit tests for the process runtime's pure parts and one real run.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, EnvVar, PodSpec};
use kube::api::ObjectMeta;

use super::*;

fn pod(command: Option<Vec<&str>>, annotations: &[(&str, &str)]) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("p".into()),
            namespace: Some("ns".into()),
            uid: Some("uid-1".into()),
            annotations: Some(
                annotations
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect::<BTreeMap<_, _>>(),
            ),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some("busybox".into()),
                command: command.map(|c| c.into_iter().map(str::to_owned).collect()),
                env: Some(vec![
                    EnvVar {
                        name: "A".into(),
                        value: Some("1".into()),
                        ..Default::default()
                    },
                    EnvVar {
                        name: "B".into(),
                        value: Some("$(A)-$$(A)-$(NOPE)".into()),
                        ..Default::default()
                    },
                ]),
                ..Default::default()
            }],
            restart_policy: Some("Never".into()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn commands_select_processes_unless_exits_are_steered() {
    assert!(runs_processes(&pod(Some(vec!["true"]), &[])));
    assert!(!runs_processes(&pod(None, &[])));
    assert!(!runs_processes(&pod(
        Some(vec!["true"]),
        &[(crate::node::EXIT_CODE, "1")]
    )));
    assert!(runs_processes(&pod(
        Some(vec!["true"]),
        &[(crate::node::READY_AFTER_MS, "5")]
    )));
}

#[test]
fn env_expands_references_like_the_kubelet() {
    let p = pod(None, &[]);
    let env = container_env(
        &p,
        &p.spec
            .as_ref()
            .map(|s| s.containers[0].clone())
            .unwrap_or_default(),
        Path::new("/x"),
        &[],
    );
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("A"), Some("1"));
    assert_eq!(get("B"), Some("1-$(A)-$(NOPE)"));
    assert_eq!(get("HOME"), Some("/x"));
    assert_eq!(get("HOSTNAME"), Some("p"));
}

async fn finished(pod_rt: &mut Box<dyn PodRuntime>) -> PodObservation {
    loop {
        let obs = pod_rt.observe(Timestamp::now());
        if obs.all_stopped() && matches!(obs.containers[0].state, ContainerRunState::Terminated(_))
        {
            return obs;
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), pod_rt.changed()).await;
    }
}

#[tokio::test]
async fn runs_the_command_and_reports_its_exit_and_output() {
    let registry = Arc::new(Registry::default());
    let scratch = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let runtime = NodeRuntime::new(Duration::ZERO, Arc::clone(&registry), scratch.path().into());
    let p = pod(
        Some(vec!["sh", "-c", "echo out $B; echo err >&2; pwd; exit 3"]),
        &[],
    );
    let mut pod_rt = runtime
        .start_pod(&p, Timestamp::now())
        .unwrap_or_else(|e| panic!("{e}"));
    let obs = tokio::time::timeout(Duration::from_secs(10), finished(&mut pod_rt))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ContainerRunState::Terminated(t) = &obs.containers[0].state else {
        panic!("not terminated: {obs:?}");
    };
    assert_eq!((t.exit_code, t.reason.as_str()), (3, "Error"));
    let handle = registry
        .get("ns", "p", "main")
        .unwrap_or_else(|| panic!("not registered"));
    let run = handle.current().unwrap_or_else(|| panic!("no run"));
    let read = run.read_from(0);
    let exit = read.exit;
    let text: Vec<u8> = read.chunks.iter().flat_map(|c| c.data.to_vec()).collect();
    let text = String::from_utf8_lossy(&text);
    assert!(text.contains("out 1-$(A)-$(NOPE)\n"), "{text}");
    assert!(text.contains("err\n"), "{text}");
    assert!(text.contains(&handle.dir.display().to_string()), "{text}");
    assert_eq!(exit, Some(3));
    drop(pod_rt);
    assert!(registry.get("ns", "p", "main").is_none());
}

#[tokio::test]
async fn stop_sends_sigterm_then_sigkill() {
    let registry = Arc::new(Registry::default());
    let scratch = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let runtime = NodeRuntime::new(Duration::ZERO, Arc::clone(&registry), scratch.path().into());
    // A shell that ignores SIGTERM: only the SIGKILL at the deadline ends it.
    let p = pod(
        Some(vec![
            "sh",
            "-c",
            "trap '' TERM; echo up; while :; do sleep 0.05; done",
        ]),
        &[],
    );
    let mut pod_rt = runtime
        .start_pod(&p, Timestamp::now())
        .unwrap_or_else(|e| panic!("{e}"));
    let handle = registry
        .get("ns", "p", "main")
        .unwrap_or_else(|| panic!("not registered"));
    let run = handle
        .running(Duration::from_secs(5))
        .await
        .unwrap_or_else(|| panic!("not running"));
    let mut follower = io::Follower::new(&run, 0);
    let _ = follower.next(&run).await;
    let begun = std::time::Instant::now();
    pod_rt.stop(Timestamp::now(), Duration::from_millis(300));
    let obs = tokio::time::timeout(Duration::from_secs(10), finished(&mut pod_rt))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(begun.elapsed() >= Duration::from_millis(300));
    let ContainerRunState::Terminated(t) = &obs.containers[0].state else {
        panic!("not terminated: {obs:?}");
    };
    assert_eq!(t.exit_code, 137);
}

/// Set in the child process of [`grandchildren_die_with_a_node_killed_by_sigkill`].
const KILL_HELPER: &str = "KUBEPLUG_TEST_NODE_KILL_HELPER";

/// Whether `pid` is gone (or a zombie nobody reaped yet: it runs no more).
fn dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rfind(')')
            .and_then(|at| stat[at + 1..].split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

#[test]
fn grandchildren_die_with_a_node_killed_by_sigkill() {
    use std::io::BufRead as _;
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let mut node = std::process::Command::new(exe)
        .args([
            "--exact",
            "node::process::tests::kill_helper",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(KILL_HELPER, "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start the helper: {e}"));
    let stdout = node.stdout.take().unwrap_or_else(|| panic!("piped"));
    let mut pids = None;
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap_or_else(|e| panic!("{e}"));
        // The test harness prints its own "test … " before the line.
        if let Some((_, rest)) = line.split_once("pids ") {
            pids = Some(rest.to_owned());
            break;
        }
    }
    let _ = node.kill(); // SIGKILL: the node runs no code of its own any more.
    let _ = node.wait();
    let pids = pids.unwrap_or_else(|| panic!("the helper printed no pids"));
    let pids: Vec<&str> = pids.split_whitespace().collect();
    assert_eq!(
        pids.len(),
        3,
        "main, grandchild, great-grandchild: {pids:?}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !pids.iter().all(|p| dead(p)) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let alive: Vec<&&str> = pids.iter().filter(|p| !dead(p)).collect();
    for pid in &alive {
        // Do not leak them from the test either.
        if let Ok(pid) = pid.parse::<i32>() {
            #[allow(unsafe_code)]
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
    assert!(
        alive.is_empty(),
        "still running after the node was killed: {alive:?}"
    );
}

/// The node of [`grandchildren_die_with_a_node_killed_by_sigkill`]: runs a pod
/// whose shell starts a background job with a child of its own, prints the
/// pids, and waits to be killed.
#[test]
#[ignore = "runs as a child process of grandchildren_die_with_a_node_killed_by_sigkill"]
fn kill_helper() {
    if std::env::var_os(KILL_HELPER).is_none() {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        let registry = Arc::new(Registry::default());
        let scratch = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let runtime =
            NodeRuntime::new(Duration::ZERO, Arc::clone(&registry), scratch.path().into());
        // The background job's own child is a great-grandchild of the node.
        let p = pod(
            Some(vec![
                "sh",
                "-c",
                "sh -c 'sleep 300 & echo $!; wait' & sleep 0.2; echo $$ $!; wait",
            ]),
            &[],
        );
        let _pod_rt = runtime
            .start_pod(&p, Timestamp::now())
            .unwrap_or_else(|e| panic!("{e}"));
        let handle = registry
            .get("ns", "p", "main")
            .unwrap_or_else(|| panic!("not registered"));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let text: String = handle
                .current()
                .map(|run| {
                    run.read_from(0)
                        .chunks
                        .iter()
                        .map(|c| String::from_utf8_lossy(&c.data).into_owned())
                        .collect()
                })
                .unwrap_or_default();
            let words: Vec<&str> = text.split_whitespace().collect();
            if let [sleep, main, job] = words.as_slice() {
                println!("pids {main} {job} {sleep}");
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "output: {text:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        std::future::pending::<()>().await;
    });
}
