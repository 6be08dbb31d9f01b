//! A closed stdout or stderr (`… | head`) beside kubectl 1.37, in a real shell
//! pipeline: the status a shell sees (141, SIGPIPE, as kubectl's), no run ending 0
//! with work undone, create-file's creates in flight reported, run-pod's `--rm` pod
//! deleted (kubectl leaves it), and every run over within 10 s of the pipe closing.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::Api;
use kube::api::ListParams;
use tests::harness::cluster;
use tokio::io::{AsyncBufReadExt as _, BufReader};

/// How long the reading end may take to get its lines (a pod to schedule and start).
const UNTIL_CLOSED: Duration = Duration::from_secs(120);

/// How long a command may go on once its pipe is closed.
const AFTER_CLOSED: Duration = Duration::from_secs(10);

/// What a pipeline left: the command's status as the shell saw it (`PIPESTATUS`),
/// what `head` printed, and the command's stderr (when it went to a file).
struct Piped {
    status: i32,
    head: String,
    stderr: String,
}

/// The pipeline's process group, killed if the test fails half-way (a command that
/// does not end must not outlive the test); left alone once the shell is reaped.
struct Group(tokio::process::Child, bool);

impl Drop for Group {
    fn drop(&mut self) {
        if self.1 {
            return;
        }
        if let Some(pid) = self
            .0
            .id()
            .and_then(|id| rustix::process::Pid::from_raw(id as i32))
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

/// A word as bash reads it back: single-quoted.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Runs `kubectl ARGS REDIRECT | head -n LINES` in bash, with the cluster's PATH (the
/// release's kubectl, our plugins) and kubeconfig; `redirect` is where the command's
/// stderr goes (`$1` is a scratch directory: `2>"$1/err"` is read back). Waits up to
/// [`UNTIL_CLOSED`] for `head` to end and close the pipe, then at most
/// [`AFTER_CLOSED`] for the command.
async fn piped(args: &[String], redirect: &str, lines: usize) -> Piped {
    let dir = tempfile::tempdir().expect("scratch directory");
    let command: Vec<String> = args.iter().map(|a| quote(a)).collect();
    // `exec 0<&-`: the group's own copy of the pipe goes with head's, so the command
    // meets a closed pipe before `closed` is said.
    let script = format!(
        "kubectl {} </dev/null {redirect} | {{ head -n {lines} >\"$1/head\"; exec 0<&-; echo closed; }}\n\
         echo \"status ${{PIPESTATUS[0]}}\"\n",
        command.join(" ")
    );
    let mut child = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .arg("bash")
        .arg(dir.path())
        .env("PATH", cluster().child_path())
        .env("KUBECONFIG", &cluster().kubeconfig)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .expect("spawn bash");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut group = Group(child, false);
    let mut said = BufReader::new(stdout).lines();
    let closed = tokio::time::timeout(UNTIL_CLOSED, said.next_line())
        .await
        .unwrap_or_else(|_| {
            panic!("head did not get {lines} lines within {UNTIL_CLOSED:?}: {args:?}")
        })
        .expect("read the shell's output");
    assert_eq!(closed.as_deref(), Some("closed"), "{args:?}");
    let status = tokio::time::timeout(AFTER_CLOSED, said.next_line())
        .await
        .unwrap_or_else(|_| {
            panic!("still running {AFTER_CLOSED:?} after its stdout was closed: {args:?}")
        })
        .expect("read the shell's output")
        .and_then(|line| line.strip_prefix("status ")?.parse().ok())
        .unwrap_or_else(|| panic!("no status from the shell: {args:?}"));
    group.0.wait().await.expect("wait for the shell");
    group.1 = true;
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap_or_default();
    Piped {
        status,
        head: read("head"),
        stderr: read("err"),
    }
}

/// `n` ConfigMaps, one document each.
fn config_maps(n: usize) -> String {
    (0..n)
        .map(|i| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  i: \"{i}\"\n---\n"))
        .collect()
}

async fn config_map_names(ns: &str) -> BTreeSet<String> {
    let api: Api<ConfigMap> = Api::namespaced(cluster().client().await, ns);
    api.list(&ListParams::default())
        .await
        .expect("list ConfigMaps")
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .filter(|n| n.starts_with("cm-"))
        .collect()
}

/// `create -f many.yaml | head -1`: kubectl dies of SIGPIPE after two creates.
/// create-file ends the same way, never 0, having sent nothing after the pipe closed
/// and named on stderr each object it created but could not print.
#[tokio::test]
async fn create_file_into_a_closed_pipe_ends_as_kubectl_and_reports_what_it_created() {
    const OBJECTS: usize = 300;
    let dir = tempfile::tempdir().expect("scratch directory");
    let file = dir.path().join("many.yaml");
    std::fs::write(&file, config_maps(OBJECTS)).expect("write the manifest");
    let file = file.to_str().expect("UTF-8 path");
    for output in [None, Some("-o=name"), Some("-o=json")] {
        let reference = cluster().namespace("pipe-create-kubectl").await;
        let ours = cluster().namespace("pipe-create-file").await;
        let args = |verb: &'static str, ns: &tests::harness::TestNamespace| {
            let mut args = vec![verb.to_string(), "-f".into(), file.into(), "-n".into()];
            args.push(ns.as_str().into());
            args.extend(output.map(String::from));
            args
        };
        let kubectl = piped(&args("create", &reference), "2>\"$1/err\"", 1).await;
        let plugin = piped(&args("create-file", &ours), "2>\"$1/err\"", 1).await;
        assert_eq!(
            kubectl.status, 141,
            "kubectl {output:?}: {}",
            kubectl.stderr
        );
        assert_eq!(
            plugin.status, kubectl.status,
            "{output:?}: {}",
            plugin.stderr
        );
        assert_eq!(
            plugin.head.lines().count(),
            1,
            "{output:?}: {}",
            plugin.head
        );

        let created = config_map_names(ours.as_str()).await;
        assert!(
            !created.is_empty() && created.len() < OBJECTS,
            "{output:?}: stops creating once stdout is closed: {} created",
            created.len()
        );
        let mut lines = plugin.stderr.lines();
        let first = lines.next().unwrap_or_default();
        assert!(
            first.starts_with("error: write /dev/stdout: broken pipe; no more objects are created"),
            "{output:?}: {}",
            plugin.stderr
        );
        // Every object named as created but not printed exists, and none twice.
        let unprinted: Vec<&str> = lines
            .map(|l| {
                l.strip_prefix("configmap/")
                    .and_then(|l| l.strip_suffix(" created"))
                    .unwrap_or_else(|| panic!("{output:?}: an unexpected line {l:?}"))
            })
            .collect();
        let unique: BTreeSet<&str> = unprinted.iter().copied().collect();
        assert_eq!(
            unique.len(),
            unprinted.len(),
            "{output:?}: {}",
            plugin.stderr
        );
        for name in unique {
            assert!(
                created.contains(name),
                "{output:?}: {name} reported, not created"
            );
        }
    }
}

/// `kubectl run-pod NAME -i --rm --restart=Never -- sh -c SCRIPT` (or `kubectl run`),
/// in `ns`, with a pod that goes within a second of its delete.
fn run_args(verb: &str, ns: &str, name: &str, script: &str) -> Vec<String> {
    [
        verb,
        name,
        "-n",
        ns,
        "--image=busybox",
        "-i",
        "--rm",
        "--restart=Never",
        r#"--overrides={"apiVersion":"v1","spec":{"terminationGracePeriodSeconds":1}}"#,
        "--",
        "sh",
        "-c",
        script,
    ]
    .map(String::from)
    .to_vec()
}

/// After run-pod ended: its pod is deleted (its delete sent before the command ended),
/// and then gone once the node has stopped it.
async fn assert_pod_removed(ns: &str, name: &str) {
    let pods: Api<Pod> = Api::namespaced(cluster().client().await, ns);
    let pod = pods.get_opt(name).await.expect("get the pod");
    assert!(
        pod.as_ref()
            .is_none_or(|p| p.metadata.deletion_timestamp.is_some()),
        "--rm deletes {name} before the command ends: {:?}",
        pod.map(|p| p.status)
    );
    let gone = |p: Option<&Pod>| p.is_none();
    tokio::time::timeout(
        Duration::from_secs(60),
        kube::runtime::wait::await_condition(pods, name, gone),
    )
    .await
    .unwrap_or_else(|_| panic!("pod {name} still there a minute after its delete"))
    .expect("watch the pod");
}

/// `run -i … | head -2`, a container that writes more than that and then fails, and
/// one that never ends: kubectl dies of SIGPIPE at its next write; run-pod ends the
/// same way, at once, and deletes its `--rm` pod first.
#[tokio::test]
async fn run_pod_into_a_closed_pipe_ends_as_kubectl_and_deletes_its_pod() {
    let cases = [
        ("ends", "seq 1 100000; exit 3"),
        ("never-ends", "while true; do echo line; sleep 0.1; done"),
    ];
    for (case, script) in cases {
        let ns = cluster().namespace(&format!("pipe-run-{case}")).await;
        let kubectl = piped(
            &run_args("run", ns.as_str(), "reference", script),
            "2>\"$1/err\"",
            2,
        )
        .await;
        let plugin = piped(
            &run_args("run-pod", ns.as_str(), "ours", script),
            "2>\"$1/err\"",
            2,
        )
        .await;
        assert_eq!(kubectl.status, 141, "kubectl, {case}: {}", kubectl.stderr);
        assert_eq!(plugin.status, kubectl.status, "{case}: {}", plugin.stderr);
        if case == "ends" {
            // The container's first two lines. Not kubectl's head: kubectl prints what
            // its attach brings from the moment it joins, and on a loaded machine it
            // joined mid-`seq` once (`499`, `3500`: the lines before it lost), where
            // run-pod prints the log up to its join.
            assert_eq!(plugin.head, "1\n2\n", "{case}");
        } else {
            assert_eq!(plugin.head, kubectl.head, "{case}");
        }
        if case == "never-ends" {
            // Attached, both said the same and nothing more (a container that ends may
            // be over before one of them attaches: then it reads the log instead).
            assert_eq!(plugin.stderr, kubectl.stderr, "{case}");
        }
        assert_pod_removed(ns.as_str(), "ours").await;
    }
}

/// The same with the container's stderr as the only output, into the closed pipe:
/// a closed stderr ends both as a closed stdout does.
#[tokio::test]
async fn run_pod_into_a_closed_stderr_ends_as_kubectl_and_deletes_its_pod() {
    let script = "while true; do echo line >&2; sleep 0.1; done";
    let ns = cluster().namespace("pipe-run-stderr").await;
    let kubectl = piped(
        &run_args("run", ns.as_str(), "reference", script),
        "2>&1 >/dev/null",
        2,
    )
    .await;
    let plugin = piped(
        &run_args("run-pod", ns.as_str(), "ours", script),
        "2>&1 >/dev/null",
        2,
    )
    .await;
    assert_eq!(kubectl.status, 141);
    assert_eq!(plugin.status, kubectl.status, "{}", plugin.head);
    assert_eq!(plugin.head, kubectl.head);
    assert_pod_removed(ns.as_str(), "ours").await;
}
