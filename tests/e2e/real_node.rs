//! The plugins on a real node (`harness::cluster`: a kubelet and containerd
//! of the server's release, the cluster in a network namespace of its own): what only
//! a real kubelet shows — pod addresses a Service's EndpointSlice takes, the kubelet's
//! own event wording and back-offs, the streaming server — and the host left as it was
//! when a cluster stops, or after its supervisor was killed.
//!
//! Timeouts are upper bounds for a run, never timed assertions.

// The helpers below run only inside tests: an unwrap there is a failed assertion.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use localcluster::state::ClusterState;
use tests::harness::{Cluster, Output, cluster, legacy_cluster, target_bin_dir};

fn write(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A tree as a repository holds an app: a Deployment in one file, its Service and a
/// ConfigMap in another, one directory down.
fn app_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "app/deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      terminationGracePeriodSeconds: 1\n      containers: [{name: web, image: \"nginx:1.27\", ports: [{containerPort: 80}]}]\n",
    );
    write(
        dir.path(),
        "app/config/service.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {k: v}\n",
    );
    dir
}

/// `create-file -R -f TREE --wait` into `ns`, which ends with every object ready.
fn app_becomes_ready(cluster: &Cluster, tree: &str, ns: &str) -> Output {
    let out = cluster
        .kubectl()
        .args([
            "create-file",
            "-R",
            "-f",
            tree,
            "--wait",
            "--timeout=120s",
            "-n",
            ns,
        ])
        .run();
    out.success();
    assert!(
        out.stderr
            .trim_end()
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("3/3 ready in ")),
        "{}",
        out.stderr
    );
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn an_app_with_a_service_from_a_tree_ends_ready() {
    let cluster = cluster();
    let tree = app_tree();
    let root = tree.path().display().to_string();
    let ours_ns = cluster.namespace("real-wait-app").await;
    let ours = app_becomes_ready(cluster, &root, ours_ns.as_str());
    let theirs_ns = cluster.namespace("real-wait-app-kubectl").await;
    let theirs = cluster
        .kubectl()
        .args(["create", "-R", "-f", &root, "-n", theirs_ns.as_str()])
        .run();
    theirs.success();
    assert_eq!(ours.stdout, theirs.stdout);
    // The Service has the pods' addresses (routable ones: a loopback address would be
    // refused by the EndpointSlice controller).
    let slices = cluster
        .kubectl()
        .args([
            "get",
            "endpointslices",
            "-n",
            ours_ns.as_str(),
            "-l",
            "kubernetes.io/service-name=web",
        ])
        .args(["-o", "jsonpath={.items[*].endpoints[*].addresses[0]}"])
        .run();
    slices.success();
    let addresses: Vec<&str> = slices.stdout.split_whitespace().collect();
    assert_eq!(addresses.len(), 2, "{}", slices.stdout);
    assert!(
        addresses.iter().all(|a| a.starts_with("10.201.0.")),
        "{addresses:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pods_reach_the_api_server_through_the_kubernetes_service() {
    let cluster = cluster();
    // The API server advertises the node IP, which the EndpointSlice names.
    let slice = cluster
        .kubectl()
        .args(["get", "endpointslices", "kubernetes", "-n", "default"])
        .args(["-o", "jsonpath={.endpoints[*].addresses[*]}"])
        .run();
    slice.success();
    assert_eq!(slice.stdout, "10.200.0.2");
    // A pod reaches it at the Service's cluster IP and port 443 (kube-proxy's rules).
    // busybox's TLS cannot finish a handshake with the API server (its ECDSA
    // certificate), so the pod speaks plain HTTP to the TLS port: Go's server answers
    // that with a 400 of its own words, which only the API server's listener sends.
    let ns = cluster.namespace("real-service-ip").await;
    let ns = ns.as_str();
    cluster
        .kubectl()
        .args([
            "run",
            "probe",
            "--image=busybox",
            "--restart=Never",
            "-n",
            ns,
        ])
        .args(["--command", "--", "sh", "-c"])
        .arg("printf 'GET /version HTTP/1.0\\r\\n\\r\\n' | nc 10.96.0.1 443")
        .run()
        .success();
    let ended = cluster
        .kubectl()
        .args(["wait", "pod/probe", "-n", ns, "--timeout=120s"])
        .arg("--for=jsonpath={.status.phase}=Succeeded");
    tokio::task::spawn_blocking(move || ended.run())
        .await
        .unwrap()
        .success();
    let logs = cluster.kubectl().args(["logs", "probe", "-n", ns]).run();
    logs.success();
    let lines: Vec<&str> = logs
        .stdout
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .collect();
    assert_eq!(
        lines,
        [
            "HTTP/1.0 400 Bad Request",
            "",
            "Client sent an HTTP request to an HTTPS server."
        ]
    );
}

/// A pod whose image's registry does not exist, and one no node has room for.
const UNPULLABLE_AND_UNSCHEDULABLE: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: badimg}\nspec: {terminationGracePeriodSeconds: 1, containers: [{name: c, image: \"registry.invalid/nope:1\"}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: \"64\"}}}]}\n";
/// A pod whose container fails at once, every time. Its readiness probe keeps it from
/// being Ready in the instant between a start and the exit: without one a real kubelet
/// reports it Ready then, and the wait (as `kubectl wait --for=condition=Ready`) may
/// end there.
const CRASHING: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: crash}\nspec: {terminationGracePeriodSeconds: 1, containers: [{name: c, image: busybox, command: [sh, -c, \"echo boom; exit 3\"], readinessProbe: {exec: {command: [\"false\"]}}}]}\n";

/// `create-file -f - --wait` of `manifests` in a namespace of its own.
async fn wait_for(cluster: &'static Cluster, test: &str, manifests: &'static str) -> Output {
    let ns = cluster.namespace(test).await;
    let out = cluster
        .kubectl()
        .args([
            "create-file",
            "-f",
            "-",
            "--wait",
            "--timeout=300s",
            "-n",
            ns.as_str(),
        ])
        .stdin(manifests);
    tokio::task::spawn_blocking(move || out.run())
        .await
        .unwrap()
}

/// The one `Waiting:` line of `out` that starts with `prefix`.
fn waiting_line<'a>(out: &'a Output, prefix: &str) -> &'a str {
    let found: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with(prefix))
        .collect();
    assert_eq!(found.len(), 1, "one line for {prefix}\n{}", out.stderr);
    found[0]
}

#[tokio::test(flavor = "multi_thread")]
async fn waiting_names_the_kubelet_s_and_the_scheduler_s_causes() {
    let cluster = cluster();
    let (stuck, crash) = tokio::join!(
        wait_for(cluster, "real-wait-pull", UNPULLABLE_AND_UNSCHEDULABLE),
        wait_for(cluster, "real-wait-crash", CRASHING),
    );
    // The pull fails on containerd's words as the kubelet passes them on (no `rpc
    // error:` prefix), on the lookup the namespace's DNS refuses; the wait ends after
    // the kubelet's third pull (its back-off: 10 s, then 20 s). The scheduler's cause
    // is named long before.
    stuck.code(1);
    let pull = waiting_line(&stuck, "Waiting: pod/badimg container c: ");
    assert!(
        pull.contains(": failed to pull and unpack image \"registry.invalid/nope:1\": ")
            && !pull.contains("rpc error")
            && pull.contains("lookup registry.invalid")
            && pull.ends_with(": no such host"),
        "{pull}"
    );
    let big = waiting_line(&stuck, "Waiting: pod/big ");
    assert!(
        big.starts_with(
            "Waiting: pod/big cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu."
        ),
        "{big}"
    );
    assert!(
        stuck
            .stderr
            .lines()
            .any(|l| l.starts_with("error: pod/badimg container c: ")
                && l.ends_with(": no such host (3 pulls failed)")),
        "{}",
        stuck.stderr
    );
    // The crash loop, at the kubelet's back-off (capped at 5 s for the tests), ends the
    // wait after its fourth restart.
    crash.code(1);
    let looping = waiting_line(&crash, "Waiting: pod/crash container c: ");
    assert!(
        looping.starts_with("Waiting: pod/crash container c: CrashLoopBackOff: back-off 5s restarting failed container=c pod=crash_")
            && looping.ends_with("; last run: Error, exit code 3"),
        "{looping}"
    );
    assert!(
        crash.stderr.lines().any(|l| l
            .starts_with("error: pod/crash container c: crash loop, restarted ")
            && l.ends_with(" times, last exit code 3")),
        "{}",
        crash.stderr
    );
}

/// `-i --rm` of a command that prints, pauses, prints and fails, by `program`.
fn attach(cluster: &Cluster, program: &str, name: &str, websockets: bool, ns: &str) -> Output {
    attach_logged(cluster, program, name, websockets, ns, &[])
}

fn attach_logged(
    cluster: &Cluster,
    program: &str,
    name: &str,
    websockets: bool,
    ns: &str,
    extra: &[&str],
) -> Output {
    let mut cmd = cluster
        .kubectl()
        .args([
            program,
            name,
            "-i",
            "--rm",
            "--image=busybox",
            "--restart=Never",
            "-n",
            ns,
        ])
        .args(extra)
        .args([
            "--",
            "sh",
            "-c",
            concat!(
                localcluster::read_line!(),
                "; echo first $x; sleep 1; echo second; exit 3"
            ),
        ])
        .stdin("one\n");
    if !websockets {
        // kubectl's SPDY transport, the one it used before 1.31 and still falls back to.
        cmd = cmd.env("KUBECTL_REMOTE_COMMAND_WEBSOCKETS", "false");
    }
    cmd.run()
}

#[tokio::test(flavor = "multi_thread")]
async fn run_pod_attaches_as_kubectl_does_over_websocket_and_spdy() {
    let cluster = cluster();
    let ns = cluster.namespace("real-attach").await;
    for (i, websockets) in [true, false].into_iter().enumerate() {
        // One name for both: `--rm` has deleted kubectl's pod when it returns, and the
        // deletion's line names it.
        let name = format!("a{i}");
        let theirs = attach(cluster, "run", &name, websockets, ns.as_str());
        let ours = attach(cluster, "run-pod", &name, websockets, ns.as_str());
        theirs.code(3);
        ours.code(3);
        assert!(
            theirs.stdout.starts_with("first one\nsecond\npod \"a"),
            "kubectl (websockets {websockets}): {}",
            theirs.stdout
        );
        assert_eq!(ours.stdout, theirs.stdout, "websockets {websockets}");
    }
    // Each transport is the one asked for: the attach's upgrade is a GET for a
    // WebSocket and SPDY's POST otherwise, as kubectl's (`-v=6`'s response lines).
    for (websockets, verb) in [(true, "GET"), (false, "POST")] {
        let name = format!("v{verb}").to_lowercase();
        let ours = attach_logged(
            cluster,
            "run-pod",
            &name,
            websockets,
            ns.as_str(),
            &["-v=6"],
        );
        ours.code(3);
        let upgrade = ours
            .stderr
            .lines()
            .find(|l| l.contains("/attach?") && l.contains("\"Response\""))
            .unwrap_or_else(|| panic!("no attach response line:\n{}", ours.stderr));
        assert!(
            upgrade.contains(&format!("verb=\"{verb}\""))
                && upgrade.contains("status=\"101 Switching Protocols\""),
            "websockets {websockets}: {upgrade}"
        );
        assert!(
            ours.stdout.starts_with("first one\nsecond\n"),
            "{}",
            ours.stdout
        );
    }
    // `--rm`: nothing is left.
    let left = cluster
        .kubectl()
        .args(["get", "pods", "-n", ns.as_str(), "-o", "name"])
        .run();
    left.success();
    assert_eq!(left.stdout, "", "{}", left.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn on_1_20_2_its_own_kubelet_runs_the_app_and_the_attach() {
    let cluster = legacy_cluster();
    let tree = app_tree();
    let root = tree.path().display().to_string();
    let ns = cluster.namespace("real-legacy").await;
    app_becomes_ready(cluster, &root, ns.as_str());
    // 1.20 has no v5 WebSocket protocol: both have its upgrade refused and attach over
    // SPDY, and the exit code comes back. kubectl prints what the attach brings
    // (`first` may come before it joins); run-pod prints the log before it, joined.
    let attach_only = |program: &str| {
        cluster
            .kubectl()
            .args([
                program,
                "b",
                "--attach",
                "--rm",
                "--image=busybox",
                "--restart=Never",
            ])
            .args([
                "-n",
                ns.as_str(),
                "--",
                "sh",
                "-c",
                "echo first; sleep 1; echo second; exit 3",
            ])
            .run()
    };
    let theirs = attach_only("run");
    theirs.code(3);
    assert!(theirs.stdout.contains("second\n"), "{}", theirs.stdout);
    let ours = attach_only("run-pod");
    ours.code(3);
    assert!(
        ours.stdout.starts_with("first\nsecond\npod \"b\" deleted"),
        "{}",
        ours.stdout
    );
}

/// A cluster of the test's own, with a real node, started as the harness starts one.
struct OwnCluster {
    child: std::process::Child,
    state_dir: tempfile::TempDir,
    state: ClusterState,
}

impl OwnCluster {
    fn start() -> Self {
        let state_dir = tempfile::Builder::new()
            .prefix("kubeplug-e2e-own-")
            .tempdir()
            .unwrap();
        let mut child = Command::new(target_bin_dir().join("kubeplug-cluster"))
            .arg("--state-dir")
            .arg(state_dir.path())
            .arg("--wait-stdin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(state_dir.path().join("supervisor.log")).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(
            line.starts_with("ready "),
            "{}",
            std::fs::read_to_string(state_dir.path().join("supervisor.log")).unwrap_or_default()
        );
        let state = ClusterState::read(state_dir.path()).unwrap().unwrap();
        Self {
            child,
            state_dir,
            state,
        }
    }

    fn kubectl(&self, args: &[&str]) -> std::process::Output {
        Command::new(localcluster_kubectl())
            .args(args)
            .env("KUBECONFIG", &self.state.kubeconfig)
            .output()
            .unwrap()
    }

    /// What the node put on the host that can be seen from outside it.
    fn traces(&self) -> Vec<PathBuf> {
        let id = self.state.netns.clone().unwrap();
        let mut found: Vec<PathBuf> = [
            PathBuf::from("/run/netns").join(&id),
            self.state.node_run_dir.clone().unwrap(),
        ]
        .into_iter()
        .chain(
            localcluster::realnode::host::cgroup_hierarchies()
                .into_iter()
                .map(|h| h.join(&id)),
        )
        .filter(|p| p.exists())
        .collect();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        found.extend(
            mounts
                .lines()
                .filter(|l| l.contains(&id))
                .map(PathBuf::from),
        );
        found.extend(pids_of_node(&id));
        found
    }
}

/// Processes of node `id` that still run: its containerd's shims and the containers in
/// its cgroups, as `/proc/PID` paths.
fn pids_of_node(id: &str) -> Vec<PathBuf> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cgroup = std::fs::read_to_string(e.path().join("cgroup")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains(id) || cgroup.contains(&format!("/{id}/"))
        })
        .map(|e| e.path())
        .collect()
}

fn localcluster_kubectl() -> PathBuf {
    localcluster::controlplane::Binaries::locate(tests::harness::cluster().release)
        .unwrap()
        .reference_kubectl()
}

/// The sysctls a kubelet rewrites at its start, as the host has them.
fn kernel_settings() -> Vec<(String, String)> {
    [
        "vm/overcommit_memory",
        "kernel/panic",
        "kernel/panic_on_oops",
    ]
    .iter()
    .map(|s| {
        let value = std::fs::read_to_string(Path::new("/proc/sys").join(s)).unwrap();
        (s.to_string(), value.trim().to_string())
    })
    .collect()
}

/// The host's own values of [`kernel_settings`]: while any node runs, as the first
/// node of the boot saved them (a kubelet starting beside this test, in the same
/// run, has them changed until its supervisor writes them back), else as they are.
fn host_kernel_settings() -> Vec<(String, String)> {
    let saved =
        std::fs::read_to_string(Path::new(localcluster::host::RUN_ROOT).join("sysctl.saved"))
            .unwrap_or_default();
    kernel_settings()
        .into_iter()
        .map(|(name, value)| {
            let dotted = name.replace('/', ".");
            let saved = saved
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{dotted}=")))
                .map(str::to_string);
            (name, saved.unwrap_or(value))
        })
        .collect()
}

/// [`kernel_settings`] once they are `want` again, or as they are after 60 s: another
/// node of the run may be starting, and its kubelet's values last until it is up.
fn settled_kernel_settings(want: &[(String, String)]) -> Vec<(String, String)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now = kernel_settings();
        if now == want || Instant::now() > deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits (bounded) until `traces` finds nothing.
fn gone(cluster: &OwnCluster) -> Vec<PathBuf> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = cluster.traces();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_stopped_or_killed_cluster_leaves_the_host_as_it_was() {
    let before = host_kernel_settings();
    // Stopped as the harness stops it: its stdin closes.
    let mut cluster = OwnCluster::start();
    let created = cluster.kubectl(&["run", "bb", "--image=busybox", "--", "sleep", "3600"]);
    assert!(created.status.success(), "{created:?}");
    let ready = cluster.kubectl(&["wait", "--for=condition=Ready", "pod/bb", "--timeout=60s"]);
    assert!(ready.status.success(), "{ready:?}");
    assert_eq!(
        settled_kernel_settings(&before),
        before,
        "the kubelet's sysctls are written back once it is up"
    );
    drop(cluster.child.stdin.take());
    assert!(cluster.child.wait().unwrap().success());
    assert_eq!(gone(&cluster), Vec::<PathBuf>::new());
    assert_eq!(settled_kernel_settings(&before), before);
    drop(cluster.state_dir);

    // Killed: the pod's container and containerd's shim outlive the supervisor, until
    // a sweep (which every real node's start, `cargo xtask cluster down` and
    // `kubeplug-cluster --sweep` run).
    let mut cluster = OwnCluster::start();
    let created = cluster.kubectl(&["run", "bb", "--image=busybox", "--", "sleep", "3600"]);
    assert!(created.status.success(), "{created:?}");
    let ready = cluster.kubectl(&["wait", "--for=condition=Ready", "pod/bb", "--timeout=60s"]);
    assert!(ready.status.success(), "{ready:?}");
    cluster.child.kill().unwrap();
    cluster.child.wait().unwrap();
    // Whoever sweeps first (this, or a supervisor starting beside this test) removes
    // it; then nothing of it is left.
    let swept = Command::new(target_bin_dir().join("kubeplug-cluster"))
        .arg("--sweep")
        .output()
        .unwrap();
    assert!(swept.status.success(), "{swept:?}");
    assert_eq!(gone(&cluster), Vec::<PathBuf>::new());
    assert_eq!(settled_kernel_settings(&before), before);
}
