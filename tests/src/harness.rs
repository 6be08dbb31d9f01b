//! The e2e harness: one control plane per test run, one namespace per test, and
//! helpers that run the plugins — directly, or through the real `kubectl` and its
//! plugin lookup.
//!
//! Which cluster:
//! - `KUBEPLUG_E2E_KUBECONFIG=PATH`: an existing cluster (e.g. `cargo xtask cluster up`);
//!   it must have been made by `kubeplug-cluster` (the contexts and users are assumed;
//!   its release is read from the state file beside the kubeconfig);
//! - otherwise the first test starts `kubeplug-cluster --wait-stdin` and keeps its
//!   stdin open for the life of the test process, so every process of the cluster stops
//!   when the test run ends, even if a test panics or the runner is killed. It runs
//!   the release `KUBEPLUG_KUBERNETES` names, the current one by default.
//!
//! [`legacy_cluster`] is a second cluster on 1.20.2, for the behaviour only an old
//! server shows (client-side validation, no `fieldValidation`, the OpenAPI v2 path).
//!
//! If the control plane is not installed, every e2e test fails with a message saying to
//! run `cargo xtask testenv`: a missing cluster must never look like a pass.
//!
//! Beside the shared cluster and [`legacy_cluster`]: [`isolated_cluster`] (one test at
//! a time) for tests that pause or restart the control plane itself; [`throttled_cluster`]
//! (one mutating request in flight for non-admin users) for tests under real `429`s;
//! [`goaway_cluster`] (kube-apiserver with `--goaway-chance`, as HA clusters set it) for
//! clients under real GOAWAYs. A server of the test's that the API server calls (an
//! admission webhook) listens inside the cluster's namespace
//! ([`Cluster::loopback_listener`]).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, ObjectMeta, PostParams};
use kube::{Api, Client};

pub use localcluster::controlplane::{ADMIN_CONTEXT, LIMITED_CONTEXT, LIMITED_NAMESPACE, Release};

/// The plugins this workspace builds, as kubectl names them.
pub const PLUGINS: [&str; 3] = ["run-pod", "create-file", "rolling-update"];

/// The binary name kubectl looks up for a plugin name (`run-pod` → `kubectl-run_pod`).
pub fn plugin_binary(plugin: &str) -> String {
    format!("kubectl-{}", plugin.replace('-', "_"))
}

/// Where e2e tests leave lines for the end of `cargo xtask test` (the test runner
/// shows a passing test's output to nobody): `target/debug/e2e-report.txt`.
pub fn report_path() -> PathBuf {
    target_bin_dir().join("e2e-report.txt")
}

/// Appends one line to [`report_path`] (and to the test's own output).
pub fn report(line: &str) {
    eprintln!("{line}");
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(report_path())
    {
        let _ = writeln!(file, "{line}");
    }
}

/// The cluster the tests run against.
pub struct Cluster {
    pub kubeconfig: PathBuf,
    /// The Kubernetes release it runs.
    pub release: Release,
    /// The reference kubectl on it: the release's own (built beside the current
    /// server), or the installed one (on 1.20.2).
    pub kubectl_binary: PathBuf,
    /// A directory holding only the plugin binaries, prepended to PATH for `kubectl`.
    pub plugin_dir: PathBuf,
    /// With a real node: the network namespace the cluster runs in (`/run/netns/NAME`).
    pub netns: Option<String>,
    // Kept open (never written) so the supervisor lives exactly as long as we do.
    _supervisor: Option<(Child, ChildStdin)>,
}

static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();

/// The shared cluster, started on first use. Panics with the reason (and the fix) when
/// it cannot be had.
pub fn cluster() -> &'static Cluster {
    match CLUSTER.get_or_init(start) {
        Ok(cluster) => cluster,
        Err(reason) => panic!("e2e: no cluster: {reason}"),
    }
}

/// Gives this process, and so every process the tests start, the SIGINT and SIGQUIT
/// dispositions a terminal gives. A command started in the background of a
/// non-interactive shell (`nohup cargo xtask test &`, some CI runners) has both
/// ignored, and an ignored signal stays ignored across `exec`: the plugins would then
/// outlive the Ctrl-C the tests send where they rely on its default action (create-file
/// has no handler; rolling-update installs its own only after reading `-f -`), though
/// from a terminal they end at once.
fn terminal_signal_dispositions() {
    #[allow(unsafe_code)]
    // SAFETY: `signal` with SIG_DFL installs no handler and touches no memory of ours;
    // it runs once, as the shared cluster starts.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGQUIT, libc::SIG_DFL);
    }
}

/// The directory cargo put this workspace's binaries in (`target/debug`), found from
/// the test executable (`target/debug/deps/e2e-…`), as ripgrep and trycmd do.
pub fn target_bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("KUBEPLUG_BIN_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("test binary has a parent directory");
    if deps.ends_with("deps") {
        deps.parent().unwrap_or(deps).to_path_buf()
    } else {
        deps.to_path_buf()
    }
}

static ISOLATED: OnceLock<Result<Cluster, String>> = OnceLock::new();
static ISOLATED_LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A second cluster of its own, for tests that pause, restart or starve the control
/// plane itself: the shared one must stay healthy for the tests running beside
/// them. Started on first use (always a new `kubeplug-cluster`, even with
/// `KUBEPLUG_E2E_KUBECONFIG`); tests using it hold [`isolated_lock`] so that one
/// test's fault never lands in another's run.
pub async fn isolated_cluster() -> (&'static Cluster, tokio::sync::MutexGuard<'static, ()>) {
    let guard = ISOLATED_LOCK.lock().await;
    // The shared cluster made the plugin directory; reuse it rather than re-creating
    // it under running tests.
    let plugin_dir = cluster().plugin_dir.clone();
    let release = cluster().release;
    let isolated =
        ISOLATED.get_or_init(|| start_supervised(release, target_bin_dir(), plugin_dir, &[]));
    match isolated {
        Ok(cluster) => (cluster, guard),
        Err(reason) => panic!("e2e: no isolated cluster: {reason}"),
    }
}

static LEGACY: OnceLock<Result<Cluster, String>> = OnceLock::new();

/// A cluster on Kubernetes 1.20.2, for the behaviour only an old server shows: no
/// server-side field validation (kubectl validates on the client), no aggregated
/// discovery, the OpenAPI v2 document. The shared cluster when it runs 1.20.2
/// already; otherwise started on first use.
pub fn legacy_cluster() -> &'static Cluster {
    let shared = cluster();
    if shared.release == Release::V1_20 {
        return shared;
    }
    let plugin_dir = shared.plugin_dir.clone();
    let legacy =
        LEGACY.get_or_init(|| start_supervised(Release::V1_20, target_bin_dir(), plugin_dir, &[]));
    match legacy {
        Ok(cluster) => cluster,
        Err(reason) => panic!("e2e: no 1.20.2 cluster: {reason}"),
    }
}

/// The 1.20.2 cluster for a test's second run beside kubectl 1.32, or `None` when
/// the shared cluster is 1.20.2 already and the test's first run covered it.
pub fn legacy_second_run() -> Option<&'static Cluster> {
    (cluster().release != Release::V1_20).then(legacy_cluster)
}

static THROTTLED: OnceLock<Result<Cluster, String>> = OnceLock::new();

/// A cluster of its own whose API server throttles like a busy shared one (API
/// Priority and Fairness off, one mutating request in flight; beyond it, `429` with
/// `Retry-After: 1`). Only non-`system:masters` users are throttled: run commands
/// with `--context` [`LIMITED_CONTEXT`] in [`LIMITED_NAMESPACE`]. Started on first
/// use; the tests using it share it (throttling one another is part of the point).
pub fn throttled_cluster() -> &'static Cluster {
    let plugin_dir = cluster().plugin_dir.clone();
    let release = cluster().release;
    let throttled = THROTTLED.get_or_init(|| {
        start_supervised(
            release,
            target_bin_dir(),
            plugin_dir,
            &["--throttle-mutating=1"],
        )
    });
    match throttled {
        Ok(cluster) => cluster,
        Err(reason) => panic!("e2e: no throttled cluster: {reason}"),
    }
}

static GOAWAY: OnceLock<Result<Cluster, String>> = OnceLock::new();

/// kube-apiserver's `--goaway-chance` on [`goaway_cluster`]: the value HA clusters
/// are advised to set (at most 0.02), so that clients spread over the servers
/// behind a load balancer.
pub const GOAWAY_CHANCE: &str = "0.02";

/// A cluster of its own whose API server sends GOAWAY to an HTTP/2 client at random
/// (`--goaway-chance`), as an HA cluster's servers do: requests above the GOAWAY's
/// last-stream-id were never processed, and a client must send them again. Started
/// on first use; the tests using it share it.
pub fn goaway_cluster() -> &'static Cluster {
    let plugin_dir = cluster().plugin_dir.clone();
    let release = cluster().release;
    let goaway = GOAWAY.get_or_init(|| {
        start_supervised(
            release,
            target_bin_dir(),
            plugin_dir,
            &[&format!("--apiserver-arg=--goaway-chance={GOAWAY_CHANCE}")],
        )
    });
    match goaway {
        Ok(cluster) => cluster,
        Err(reason) => panic!("e2e: no GOAWAY cluster: {reason}"),
    }
}

fn start() -> Result<Cluster, String> {
    terminal_signal_dispositions();
    let bin_dir = target_bin_dir();
    let plugin_dir = plugin_dir(&bin_dir)?;

    if let Some(kubeconfig) = std::env::var_os("KUBEPLUG_E2E_KUBECONFIG") {
        let kubeconfig = PathBuf::from(kubeconfig);
        if !kubeconfig.is_file() {
            return Err(format!(
                "KUBEPLUG_E2E_KUBECONFIG={} does not exist",
                kubeconfig.display()
            ));
        }
        let state_dir = kubeconfig.parent().unwrap_or(Path::new("."));
        let release =
            match localcluster::state::ClusterState::read(state_dir).map_err(|e| e.to_string())? {
                Some(state) => state.release().map_err(|e| e.to_string())?,
                None => Release::from_env().map_err(|e| e.to_string())?,
            };
        return Ok(Cluster {
            netns: netns_of(&kubeconfig),
            kubeconfig,
            release,
            kubectl_binary: reference_kubectl(release)?,
            plugin_dir,
            _supervisor: None,
        });
    }

    let release = Release::from_env().map_err(|e| e.to_string())?;
    start_supervised(release, bin_dir, plugin_dir, &[])
}

/// The kubectl to compare with on `release`'s server.
fn reference_kubectl(release: Release) -> Result<PathBuf, String> {
    localcluster::controlplane::Binaries::locate(release)
        .map(|b| b.reference_kubectl())
        .map_err(|e| e.to_string())
}

/// A command line shared by [`start`] and the other clusters.
fn start_supervised(
    release: Release,
    bin_dir: PathBuf,
    plugin_dir: PathBuf,
    extra: &[&str],
) -> Result<Cluster, String> {
    // Say it the same way with or without a built supervisor: the fix is the same.
    let kubectl_binary = reference_kubectl(release)?;
    let supervisor = bin_dir.join("kubeplug-cluster");
    if !supervisor.is_file() {
        return Err(format!(
            "{} is not built; run `cargo build --workspace --bins`",
            supervisor.display()
        ));
    }
    // Statics are never dropped, so the directory is not a guard: the supervisor
    // removes it when it shuts down (`--remove-state`).
    let state = tempfile::Builder::new()
        .prefix("kubeplug-e2e-")
        .tempdir()
        .map_err(|e| e.to_string())?
        .keep();
    let log_path = state.join("supervisor.log");
    let log = std::fs::File::create(&log_path).map_err(|e| e.to_string())?;
    let mut child = Command::new(&supervisor)
        .arg("--state-dir")
        .arg(&state)
        .args(["--kubernetes", release.version()])
        .args(["--wait-stdin", "--remove-state", "--audit"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", supervisor.display()))?;
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    let _ = BufReader::new(stdout).read_line(&mut line);
    let Some(kubeconfig) = line.trim().strip_prefix("ready ").map(PathBuf::from) else {
        let _ = child.wait();
        let log = localcluster::controlplane::tail(&log_path, 30);
        let _ = std::fs::remove_dir_all(&state);
        return Err(format!("the local control plane did not start:\n{log}"));
    };
    Ok(Cluster {
        netns: netns_of(&kubeconfig),
        kubeconfig,
        release,
        kubectl_binary,
        plugin_dir,
        _supervisor: Some((child, stdin)),
    })
}

/// The network namespace of the cluster whose state file is beside `kubeconfig`.
fn netns_of(kubeconfig: &Path) -> Option<String> {
    let dir = kubeconfig.parent()?;
    localcluster::state::ClusterState::read(dir)
        .ok()
        .flatten()?
        .netns
}

/// A directory holding links to the plugin binaries only: target/debug also holds
/// `kubectl-*.d` dep-info files, which `kubectl plugin list` would report as broken
/// plugins. It lives in the target directory, so nothing is left in /tmp.
fn plugin_dir(bin_dir: &Path) -> Result<PathBuf, String> {
    let dir = bin_dir.join("e2e-plugins");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for plugin in PLUGINS {
        let name = plugin_binary(plugin);
        let built = bin_dir.join(&name);
        if !built.is_file() {
            return Err(format!(
                "{} is not built; run `cargo build --workspace --bins` (`cargo xtask test` does this)",
                built.display()
            ));
        }
        std::os::unix::fs::symlink(&built, dir.join(&name)).map_err(|e| e.to_string())?;
    }
    Ok(dir)
}

/// Where a command's output ended up.
#[derive(Debug, Clone)]
pub struct Output {
    /// The exit code (-1 when killed by a signal).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// Panics, showing both streams, unless the command exited 0.
    #[track_caller]
    pub fn success(&self) -> &Self {
        self.code(0)
    }

    /// Panics, showing both streams, unless the command exited with `code`.
    #[track_caller]
    pub fn code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "unexpected exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// A command to run against the cluster (a plugin, or `kubectl`).
pub struct Cmd {
    command: Command,
    stdin: Option<Vec<u8>>,
}

impl Cmd {
    pub fn arg(mut self, arg: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.command.args(args);
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Self {
        self.command.env_remove(key);
        self
    }

    /// Runs in `dir` (so that relative paths in the output are the same for every run).
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// Feeds `input` on standard input (otherwise stdin is empty).
    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(input.into());
        self
    }

    /// Runs to completion.
    /// The command as it would run (for [`crate::live::Live::cmd`]).
    pub fn into_command(self) -> Command {
        self.command
    }

    pub fn run(mut self) -> Output {
        self.command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = self.command.spawn().expect("spawn command");
        let input = self.stdin.take().unwrap_or_default();
        let mut stdin = child.stdin.take().expect("piped stdin");
        // Write from a thread: a large input must not deadlock against a full stdout pipe.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let out = child.wait_with_output().expect("wait for command");
        let _ = writer.join();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Starts a plugin binary (`run-pod` → `kubectl-run_pod` in `plugin_dir`) as a live
/// process for tests that act while it runs (kill it, pause the server, read its
/// lines): stdin closed, stdout and stderr piped, killed when dropped, and loopback
/// kept off any proxy of the environment.
pub fn spawn_plugin(
    plugin_dir: &Path,
    plugin: &str,
    kubeconfig: &Path,
    args: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>,
) -> tokio::process::Child {
    tokio::process::Command::new(plugin_dir.join(plugin_binary(plugin)))
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {plugin}: {e}"))
}

/// Reads all of a live process's stderr in the background (see [`spawn_plugin`]).
pub fn collect_stderr(child: &mut tokio::process::Child) -> tokio::task::JoinHandle<String> {
    use tokio::io::AsyncReadExt as _;
    let mut stderr = child.stderr.take().expect("piped stderr");
    tokio::spawn(async move {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text).await;
        text
    })
}

impl Cluster {
    /// Runs a plugin binary directly (`run-pod` → `kubectl-run_pod`).
    pub fn plugin(&self, plugin: &str) -> Cmd {
        self.command(self.plugin_dir.join(plugin_binary(plugin)))
    }

    /// Runs the real `kubectl` of the cluster's release (see [`Cluster::kubectl_binary`]),
    /// with [`Cluster::child_path`] as PATH (our plugins first), so that `kubectl
    /// run-pod …` goes through kubectl's own plugin lookup.
    /// A listener on 127.0.0.1:0 where the cluster's API server can call it (an
    /// admission webhook): inside the cluster's network namespace with a real node,
    /// the host's loopback otherwise.
    pub fn loopback_listener(&self) -> std::net::TcpListener {
        match &self.netns {
            Some(name) => {
                localcluster::realnode::netns::listen_inside(&Path::new("/run/netns").join(name))
                    .expect("a listener in the cluster's network namespace")
            }
            None => std::net::TcpListener::bind(("127.0.0.1", 0)).expect("a loopback listener"),
        }
    }

    pub fn kubectl(&self) -> Cmd {
        self.command(self.kubectl_binary.clone())
    }

    /// The `PATH` every child process of a test gets: the plugins, then the directory
    /// of the release's own kubectl, then the inherited `PATH`. A `kubectl` that a
    /// test's shell (or a plugin, or a script) runs is so the reference one, never the
    /// machine's (a v1.32 beside a v1.37 server). Checked by [`Self::check_kubectl_on`].
    pub fn child_path(&self) -> std::ffi::OsString {
        let inherited = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![self.plugin_dir.clone()];
        // On 1.20.2 the reference is the installed `kubectl`, found on PATH already.
        if let Some(dir) = self
            .kubectl_binary
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            paths.push(dir.to_path_buf());
        }
        paths.extend(std::env::split_paths(&inherited));
        let path = std::env::join_paths(paths).expect("PATH entries");
        self.check_kubectl_on(&path);
        path
    }

    /// Panics when `kubectl` looked up on `path` is not the release's reference
    /// kubectl: a test comparing with any other kubectl compares with the wrong one.
    #[track_caller]
    pub fn check_kubectl_on(&self, path: &std::ffi::OsStr) {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let found = which::which_in("kubectl", Some(path), &cwd).ok();
        let Ok(reference) = which::which_in(&self.kubectl_binary, Some(path), &cwd) else {
            // No kubectl at all (1.20.2 on a machine without one): a test that runs
            // it fails by itself, and one that does not needs none.
            return;
        };
        let same = |p: &PathBuf| p.canonicalize().ok();
        assert!(
            found.as_ref().and_then(same) == same(&reference),
            "`kubectl` on this PATH is {found:?}, not the {} reference {}: a test must run \
             the release's own kubectl (Cluster::kubectl, or Cluster::child_path for a shell)",
            self.release.version(),
            self.kubectl_binary.display(),
        );
    }

    fn command(&self, program: PathBuf) -> Cmd {
        let mut command = Command::new(program);
        command
            .env("PATH", self.child_path())
            .env("KUBECONFIG", &self.kubeconfig)
            // The discovery and OpenAPI caches of this cluster only, beside its
            // kubeconfig: the user's `~/.kube/cache` is keyed by host and port, which
            // the clusters of earlier runs (a 1.20.2 one among them) have used before,
            // and its answers are trusted for hours (kubectl's TTL). A test that is
            // about the cache names its own `--cache-dir`.
            .env("KUBECACHEDIR", self.kubeconfig.with_file_name("kube-cache"))
            // A stray proxy setting on the machine must not reroute loopback traffic.
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env_remove("KUBECTL_EXTERNAL_DIFF");
        Cmd {
            command,
            stdin: None,
        }
    }

    /// An admin client. Build one per test: a kube `Client` belongs to the tokio
    /// runtime it was made on, and every `#[tokio::test]` has its own.
    pub async fn client(&self) -> Client {
        localcluster::controlplane::client_for(&self.kubeconfig, ADMIN_CONTEXT)
            .await
            .expect("admin client")
    }

    /// A client for the namespace-limited user.
    pub async fn limited_client(&self) -> Client {
        localcluster::controlplane::client_for(&self.kubeconfig, LIMITED_CONTEXT)
            .await
            .expect("limited client")
    }

    /// A fresh namespace for one test, deleted when the returned guard drops.
    pub async fn namespace(&'static self, test: &str) -> TestNamespace {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let slug: String = test
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .take(40)
            .collect();
        let name = format!(
            "e2e-{}-{n}-{}",
            slug.trim_matches('-'),
            std::process::id() % 10000
        );
        let client = self.client().await;
        let namespaces: Api<Namespace> = Api::all(client.clone());
        let labels = BTreeMap::from([("kubeplug.io/e2e".to_string(), "true".to_string())]);
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some(labels),
                ..Default::default()
            },
            ..Default::default()
        };
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .expect("create test namespace");
        localcluster::bootstrap::wait_for_service_account(
            &client,
            self.release,
            &name,
            Duration::from_secs(60),
        )
        .await
        .expect("default ServiceAccount in test namespace");
        TestNamespace {
            name,
            cluster: self,
        }
    }
}

/// A namespace owned by one test.
pub struct TestNamespace {
    pub name: String,
    cluster: &'static Cluster,
}

impl TestNamespace {
    pub fn as_str(&self) -> &str {
        &self.name
    }
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        // Drop cannot be async, and the test's runtime may be shutting down: delete from
        // a thread with its own small runtime, without waiting for finalization.
        let name = self.name.clone();
        let kubeconfig = self.cluster.kubeconfig.clone();
        let _ = std::thread::spawn(move || delete_namespace(&kubeconfig, &name)).join();
    }
}

fn delete_namespace(kubeconfig: &Path, name: &str) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(async {
        if let Ok(client) = localcluster::controlplane::client_for(kubeconfig, ADMIN_CONTEXT).await
        {
            let _ = Api::<Namespace>::all(client)
                .delete(name, &DeleteParams::background())
                .await;
        }
    });
}

/// Waits until ReplicationController `name` has exactly `want` replicas, all Ready
/// (as the real controller-manager reports them); panics after `timeout`.
pub async fn wait_for_ready_replicas(
    rcs: &Api<k8s_openapi::api::core::v1::ReplicationController>,
    name: &str,
    want: i32,
    timeout: Duration,
) {
    let ready = move |obj: Option<&k8s_openapi::api::core::v1::ReplicationController>| {
        obj.and_then(|rc| rc.status.as_ref())
            .is_some_and(|s| s.replicas == want && s.ready_replicas.unwrap_or(0) == want)
    };
    tokio::time::timeout(
        timeout,
        kube::runtime::wait::await_condition(rcs.clone(), name, ready),
    )
    .await
    .unwrap_or_else(|_| panic!("{want} ready replicas of {name} within {timeout:?}"))
    .expect("watch");
}

/// Waits until no pod matches `selector` (deleted and finalized by the node); panics
/// after `timeout`.
pub async fn wait_for_no_pods(
    pods: &Api<k8s_openapi::api::core::v1::Pod>,
    selector: &str,
    timeout: Duration,
) {
    let params = kube::api::ListParams::default().labels(selector);
    tokio::time::timeout(timeout, async {
        while !pods
            .list(&params)
            .await
            .expect("list pods")
            .items
            .is_empty()
        {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("pods matching {selector} still there after {timeout:?}"));
}
