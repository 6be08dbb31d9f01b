//! `kubectl rolling-update` under faults, proved exhaustively: for every scenario,
//! the plugin is SIGKILLed right after the API server applied its k-th write, for
//! every k of an uninterrupted run, then the same command is run again, and the
//! cluster must end in the update's final state (`tests::faults::invariants`).
//! The kill comes from a loopback proxy in front of the real API server
//! (`tests::faults::proxy`), so where the process stops is exact, not a race with
//! its output.
//!
//! Each kill point gets its own namespace; a few run at once to fit CI's budget.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::core::v1::ReplicationController;
use kube::Api;
use kube::api::PostParams;
use localcluster::steering::Readiness;
use tests::faults::invariants::{Expect, RcInvariants};
use tests::faults::proxy::{ApiProxy, Transport};
use tests::faults::webhook::{HoldingWebhook, Rule};
use tests::harness::{Cluster, cluster, plugin_binary, spawn_plugin};
use tests::live::{Live, Stream};

use crate::rolling_update::{NEW_IMAGE, OLD_IMAGE, rc};

/// Kill points run at once (each with its own namespace, proxy and plugin).
const PARALLEL: usize = 4;
const REPLICAS: i32 = 2;

/// One command, its starting point and where it must end.
#[derive(Clone)]
struct Scenario {
    name: &'static str,
    /// The RC the namespace starts with.
    initial: ReplicationController,
    /// A run of another command, killed after this fraction of its writes, before
    /// the command under test (a half-done update, for `--rollback`).
    before: Option<(Vec<String>, f64)>,
    /// That fraction as a write count (set by [`kill_matrix`]).
    before_k: Option<usize>,
    args: Vec<String>,
    /// Also kill the first re-run after its first write (two kills in a row).
    kill_rerun: bool,
    final_rc: &'static str,
    final_image: &'static str,
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the plugin through `proxy`, killed after `kill_after` writes (if any).
async fn run_plugin(
    cluster: &Cluster,
    proxy: &ApiProxy,
    ns: &str,
    args: &[String],
    kill_after: Option<usize>,
    invariants: &RcInvariants,
) -> Run {
    proxy.arm(kill_after);
    let mut child = spawn_plugin(
        &cluster.plugin_dir,
        "rolling-update",
        &proxy.kubeconfig,
        args.iter()
            .map(String::as_str)
            .chain(["-n", ns, "--update-period=0", "--timeout=60s"]),
    );
    invariants.client_alive(true);
    proxy.target(child.id().expect("pid"));
    let out = tokio::time::timeout(Duration::from_secs(120), async {
        let mut stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let (mut o, mut e) = (Vec::new(), Vec::new());
        let (_, _, status) = tokio::join!(
            tokio::io::AsyncReadExt::read_to_end(&mut stdout, &mut o),
            tokio::io::AsyncReadExt::read_to_end(&mut stderr, &mut e),
            child.wait()
        );
        (status.unwrap(), o, e)
    })
    .await
    .expect("the plugin ends within 120 s");
    invariants.client_alive(false);
    Run {
        code: out.0.code(),
        stdout: String::from_utf8_lossy(&out.1).into_owned(),
        stderr: String::from_utf8_lossy(&out.2).into_owned(),
    }
}

async fn prepare(
    cluster: &'static Cluster,
    scenario: &Scenario,
    label: &str,
) -> (tests::harness::TestNamespace, Api<ReplicationController>) {
    let ns = cluster.namespace(label).await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    rcs.create(&PostParams::default(), &scenario.initial)
        .await
        .expect("create rc");
    let name = scenario.initial.metadata.name.clone().unwrap();
    let ready = move |rc: Option<&ReplicationController>| {
        rc.and_then(|rc| rc.status.as_ref())
            .is_some_and(|s| s.ready_replicas.unwrap_or(0) == REPLICAS && s.replicas == REPLICAS)
    };
    tokio::time::timeout(
        Duration::from_secs(60),
        kube::runtime::wait::await_condition(rcs.clone(), &name, ready),
    )
    .await
    .expect("initial rc ready")
    .expect("watch");
    (ns, rcs)
}

fn expect(scenario: &Scenario) -> Expect {
    Expect {
        rc: scenario.final_rc.to_string(),
        replicas: REPLICAS,
        image: scenario.final_image.to_string(),
        min_ready: REPLICAS as usize,
        max_total: REPLICAS as usize + 1,
    }
}

/// Sets up a namespace, brings it to the scenario's starting point and returns the
/// number of writes the command under test then makes, uninterrupted.
async fn baseline(cluster: &'static Cluster, scenario: &Scenario, over: Transport) -> usize {
    let (ns, _rcs) = prepare(cluster, scenario, &format!("{}-{over}-base", scenario.name)).await;
    let proxy = ApiProxy::start_over(&cluster.kubeconfig, over).unwrap();
    let invariants = RcInvariants::watch(cluster.client().await, ns.as_str()).await;
    run_before(cluster, &proxy, ns.as_str(), scenario, &invariants).await;
    let run = run_plugin(
        cluster,
        &proxy,
        ns.as_str(),
        &scenario.args,
        None,
        &invariants,
    )
    .await;
    assert_eq!(
        run.code,
        Some(0),
        "{}: uninterrupted run failed\n{}\n{}",
        scenario.name,
        run.stdout,
        run.stderr
    );
    let writes = proxy.writes();
    if let Err(e) = invariants
        .check(&expect(scenario), Duration::from_secs(60))
        .await
    {
        panic!("{}: uninterrupted run: {e}", scenario.name);
    }
    eprintln!(
        "{}: {} writes uninterrupted:\n  {}",
        scenario.name,
        writes.len(),
        writes
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n  ")
    );
    writes.len()
}

/// The half-done update a `--rollback` scenario starts from: `before`'s command,
/// killed after `before_k` writes.
async fn run_before(
    cluster: &Cluster,
    proxy: &ApiProxy,
    ns: &str,
    scenario: &Scenario,
    invariants: &RcInvariants,
) {
    let (Some((args, _)), Some(k)) = (&scenario.before, scenario.before_k) else {
        return;
    };
    let run = run_plugin(cluster, proxy, ns, args, Some(k), invariants).await;
    assert!(
        proxy.fired(),
        "the half-done update was not stopped\n{}\n{}",
        run.stdout,
        run.stderr
    );
}

/// The writes of an uninterrupted run of `args` from the scenario's start.
async fn count_writes(
    cluster: &'static Cluster,
    scenario: &Scenario,
    args: &[String],
    over: Transport,
) -> usize {
    let (ns, _rcs) = prepare(
        cluster,
        scenario,
        &format!("{}-{over}-probe", scenario.name),
    )
    .await;
    let proxy = ApiProxy::start_over(&cluster.kubeconfig, over).unwrap();
    let invariants = RcInvariants::watch(cluster.client().await, ns.as_str()).await;
    let run = run_plugin(cluster, &proxy, ns.as_str(), args, None, &invariants).await;
    assert_eq!(
        run.code,
        Some(0),
        "probe run failed\n{}\n{}",
        run.stdout,
        run.stderr
    );
    proxy.writes().len()
}

/// Whether a failed run said, in kubectl 1.17's words, that the update it was asked
/// for is already complete (a kill after the very last write leaves nothing to do:
/// the same command on the finished state is refused as 1.17 refused it). The
/// invariants are checked after it all the same.
fn nothing_left(run: &Run) -> bool {
    const DONE: [&str; 4] = [
        "--image-pull-policy (Always|Never|IfNotPresent) must be provided when --image is the same as existing container image",
        "\" not found",
        "must specify a matching key with non-equal value in Selector",
        "Could not find  to rollback.",
    ];
    run.code == Some(1) && DONE.iter().any(|m| run.stderr.contains(m))
}

/// One kill point: kill after `k` writes, (optionally kill the re-run after its
/// first write,) re-run, check.
async fn kill_point(
    cluster: &'static Cluster,
    scenario: &Scenario,
    k: usize,
    over: Transport,
) -> Result<(), String> {
    let (ns, _rcs) = prepare(cluster, scenario, &format!("{}-{over}-k{k}", scenario.name)).await;
    let proxy = ApiProxy::start_over(&cluster.kubeconfig, over).unwrap();
    let invariants = RcInvariants::watch(cluster.client().await, ns.as_str()).await;
    run_before(cluster, &proxy, ns.as_str(), scenario, &invariants).await;
    let killed = run_plugin(
        cluster,
        &proxy,
        ns.as_str(),
        &scenario.args,
        Some(k),
        &invariants,
    )
    .await;
    if !proxy.fired() || killed.code.is_some() {
        return Err(format!(
            "k={k}: the run was not killed (exit {:?}, {} writes)\n{}\n{}",
            killed.code,
            proxy.writes().len(),
            killed.stdout,
            killed.stderr
        ));
    }
    if scenario.kill_rerun {
        let again = run_plugin(
            cluster,
            &proxy,
            ns.as_str(),
            &scenario.args,
            Some(1),
            &invariants,
        )
        .await;
        if !proxy.fired() && again.code != Some(0) && !nothing_left(&again) {
            return Err(format!(
                "k={k}: the first re-run failed before any write\n{}\n{}",
                again.stdout, again.stderr
            ));
        }
    }
    let rerun = run_plugin(
        cluster,
        &proxy,
        ns.as_str(),
        &scenario.args,
        None,
        &invariants,
    )
    .await;
    if rerun.code != Some(0) && !nothing_left(&rerun) {
        return Err(format!(
            "k={k}: the re-run failed (exit {:?})\n--- stdout\n{}--- stderr\n{}",
            rerun.code, rerun.stdout, rerun.stderr
        ));
    }
    invariants
        .check(&expect(scenario), Duration::from_secs(60))
        .await
        .map_err(|e| {
            format!(
                "k={k}: {e}\n--- re-run stdout\n{}--- re-run stderr\n{}",
                rerun.stdout, rerun.stderr
            )
        })
}

/// Runs the whole matrix of a scenario over each transport, HTTP/2 first; panics
/// listing every kill point that did not converge.
async fn kill_matrix(scenario: Scenario) {
    for over in Transport::BOTH {
        kill_matrix_over(scenario.clone(), over).await;
    }
}

async fn kill_matrix_over(mut scenario: Scenario, over: Transport) {
    let cluster = cluster();
    if let Some((args, fraction)) = scenario.before.clone() {
        let total = count_writes(cluster, &scenario, &args, over).await;
        scenario.before_k = Some(((total as f64) * fraction).ceil().max(1.0) as usize);
    }
    let total = baseline(cluster, &scenario, over).await;
    assert!(total > 0, "{} over {over}: no writes", scenario.name);
    let mut failures = Vec::new();
    let points: Vec<usize> = (1..=total).collect();
    for chunk in points.chunks(PARALLEL) {
        let results = futures::future::join_all(
            chunk
                .iter()
                .map(|&k| kill_point(cluster, &scenario, k, over)),
        )
        .await;
        failures.extend(results.into_iter().filter_map(Result::err));
    }
    tests::harness::report(&format!(
        "rolling-update {} over {over}: {}/{total} kill points converged",
        scenario.name,
        total - failures.len()
    ));
    assert!(
        failures.is_empty(),
        "{} over {over}: {} of {total} kill points did not converge:\n\n{}",
        scenario.name,
        failures.len(),
        failures.join("\n\n")
    );
}

fn s(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

fn image_flag() -> String {
    format!("--image={NEW_IMAGE}")
}

/// A file holding the new RC for the `-f` scenarios.
fn new_rc_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kubeplug-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.json"));
    let new = rc(
        name,
        "web",
        &[("version", "v2")],
        &[("c", NEW_IMAGE)],
        REPLICAS,
        Readiness::Started,
    );
    std::fs::write(&path, serde_json::to_vec(&new).unwrap()).unwrap();
    path
}

fn path_arg(path: &Path) -> String {
    path.display().to_string()
}

impl Scenario {
    /// `args` applied to `old` (2 replicas of the old image, selecting `app=web` plus
    /// `extra`), ending with `final_rc` on the new image.
    fn new(
        name: &'static str,
        old: &str,
        extra: &[(&str, &str)],
        args: Vec<String>,
        final_rc: &'static str,
    ) -> Self {
        Scenario {
            name,
            initial: rc(
                old,
                "web",
                extra,
                &[("c", OLD_IMAGE)],
                REPLICAS,
                Readiness::Started,
            ),
            before: None,
            before_k: None,
            args,
            kill_rerun: false,
            final_rc,
            final_image: NEW_IMAGE,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_at_every_write_one_name_image_without_deployment_key() {
    let args = s(&["web", &image_flag()]);
    kill_matrix(Scenario::new("one-name-image", "web", &[], args, "web")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_at_every_write_one_name_image_with_deployment_key() {
    let args = s(&["web", &image_flag()]);
    let key = &[("deployment", "v1")];
    kill_matrix(Scenario::new("one-name-image-key", "web", key, args, "web")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_at_every_write_two_names_image() {
    let args = s(&["web-v1", "web-v2", &image_flag()]);
    kill_matrix(Scenario::new(
        "two-names-image",
        "web-v1",
        &[],
        args,
        "web-v2",
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_at_every_write_two_names_file() {
    let file = new_rc_file("web-v2");
    let args = s(&["web-v1", "web-v2", "-f", &path_arg(&file)]);
    let v1 = &[("version", "v1")];
    kill_matrix(Scenario::new(
        "two-names-file",
        "web-v1",
        v1,
        args,
        "web-v2",
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_at_every_write_one_name_file() {
    let file = new_rc_file("web-next");
    let args = s(&["web", "-f", &path_arg(&file)]);
    let v1 = &[("version", "v1")];
    kill_matrix(Scenario::new("one-name-file", "web", v1, args, "web")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_at_every_write_of_a_rollback() {
    let args = s(&["web", "--rollback"]);
    kill_matrix(Scenario {
        // From an update stopped half-way, back to the old image.
        before: Some((s(&["web", &image_flag()]), 0.5)),
        final_image: OLD_IMAGE,
        ..Scenario::new("rollback", "web", &[], args, "web")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_kills_in_a_row() {
    let args = s(&["web", &image_flag()]);
    kill_matrix(Scenario {
        kill_rerun: true,
        ..Scenario::new("two-kills", "web", &[("deployment", "v1")], args, "web")
    })
    .await;
}

// ---------------------------------------------------------------------------
// Control-plane faults, concurrent writers, chaos, permissions and output.

/// A live rolling update, acted on while it runs.
fn live_update(kubeconfig: &Path, plugin_dir: &Path, args: &[String]) -> Live {
    Live::spawn(plugin_dir, "rolling-update", kubeconfig, args)
}

/// The update used by the control-plane fault tests: 2 replicas, one name.
/// The faulted run's arguments; `flags` (space-separated) after the fixed ones.
fn fault_args(ns: &str, flags: &str) -> Vec<String> {
    let mut args = s(&["web", &image_flag(), "-n", ns, "--update-period=0"]);
    args.extend(flags.split_whitespace().map(String::from));
    args
}

async fn start_web(
    cluster: &'static Cluster,
    label: &str,
    readiness: Readiness,
) -> (tests::harness::TestNamespace, RcInvariants) {
    let scenario = Scenario {
        initial: rc("web", "web", &[], &[("c", OLD_IMAGE)], REPLICAS, readiness),
        ..Scenario::new("fault", "web", &[], Vec::new(), "web")
    };
    let (ns, _) = prepare(cluster, &scenario, label).await;
    let invariants = RcInvariants::watch(cluster.client().await, ns.as_str()).await;
    (ns, invariants)
}

fn web_expect() -> Expect {
    Expect {
        rc: "web".into(),
        replicas: REPLICAS,
        image: NEW_IMAGE.into(),
        min_ready: REPLICAS as usize,
        max_total: REPLICAS as usize + 1,
    }
}

/// Re-runs the update to the end and checks the invariants.
async fn rerun_converges(cluster: &Cluster, ns: &str, invariants: &RcInvariants) {
    invariants.client_alive(true);
    let live = live_update(
        &cluster.kubeconfig,
        &cluster.plugin_dir,
        &fault_args(ns, "--timeout=60s"),
    );
    let (code, out, err) = live.finish(Duration::from_secs(120)).await;
    invariants.client_alive(false);
    assert_eq!(code, Some(0), "re-run failed\n{out:?}\n{err}");
    invariants
        .assert_holds(&web_expect(), Duration::from_secs(60))
        .await;
}

/// An update on the isolated cluster, started and read up to the line `until`: the
/// common start of the control-plane fault tests.
struct OnIsolated {
    cluster: &'static Cluster,
    _lock: tokio::sync::MutexGuard<'static, ()>,
    plane: tests::faults::ControlPlane,
    ns: tests::harness::TestNamespace,
    invariants: RcInvariants,
    live: Option<Live>,
}

impl OnIsolated {
    async fn start(label: &str, readiness: Readiness, timeout: &str, until: &str) -> Self {
        let mut run = Self::spawn(label, readiness, timeout, None).await.0;
        run.live.as_mut().unwrap().until(until).await;
        run
    }

    /// The run, with an admission webhook (registered before it starts) holding the
    /// first request of `rule` for the object `hold` of the test's namespace until
    /// the test releases it: the point of the protocol where the test acts.
    async fn start_holding(
        label: &str,
        readiness: Readiness,
        timeout: &str,
        rule: Rule,
        hold: &str,
    ) -> (Self, HoldingWebhook) {
        let (run, webhook) = Self::spawn(label, readiness, timeout, Some((rule, hold))).await;
        (run, webhook.unwrap())
    }

    async fn spawn(
        label: &str,
        readiness: Readiness,
        timeout: &str,
        hold: Option<(Rule, &str)>,
    ) -> (Self, Option<HoldingWebhook>) {
        let (cluster, lock) = tests::harness::isolated_cluster().await;
        let plane = tests::faults::ControlPlane::of(&cluster.kubeconfig).unwrap();
        let (ns, invariants) = start_web(cluster, label, readiness).await;
        let webhook = match hold {
            Some((rule, name)) => Some(
                HoldingWebhook::start(
                    &cluster.client().await,
                    cluster.loopback_listener(),
                    ns.as_str(),
                    rule,
                    name,
                )
                .await
                .unwrap(),
            ),
            None => None,
        };
        invariants.client_alive(true);
        let live = live_update(
            &cluster.kubeconfig,
            &cluster.plugin_dir,
            &fault_args(ns.as_str(), timeout),
        );
        let run = OnIsolated {
            cluster,
            _lock: lock,
            plane,
            ns,
            invariants,
            live: Some(live),
        };
        (run, webhook)
    }

    fn live(&self) -> &Live {
        self.live.as_ref().unwrap()
    }

    /// The run's end (a hang past `bound` fails the test); the client is dead after.
    async fn end(&mut self, bound: Duration) -> (Option<i32>, Vec<String>, String) {
        let ended = self.live.take().unwrap().finish(bound).await;
        self.invariants.client_alive(false);
        ended
    }

    async fn rerun_converges(&self) {
        rerun_converges(self.cluster, self.ns.as_str(), &self.invariants).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_api_server_ends_the_run_within_its_timeout_and_the_rerun_converges() {
    let mut run = OnIsolated::start(
        "ru-paused-api",
        Readiness::AfterSecs(2),
        "--timeout=5s",
        "Scaling web-",
    )
    .await;
    let paused = run.plane.pause("kube-apiserver").unwrap();
    // Every request and watch is bounded by --timeout: the run ends on its own.
    let (code, out, err) = run.end(Duration::from_secs(60)).await;
    paused.resume();
    assert_eq!(code, Some(1), "{out:?}\n{err}");
    // Whether the pause caught a request in flight or a wait between two, the run
    // ends on its bound with one of the two messages.
    assert!(
        // A failed request alone is kubectl's CheckErr line (no `error: `); after a
        // step, part of the step's message.
        (err.starts_with("error: ") || err.starts_with("Unable to connect to the server: "))
            && (err.contains(
                "Unable to connect to the server: no answer in time (each request is bounded by 5s: --timeout)"
            )
                || err.contains("timed out waiting for")),
        "a clear error, not a panic: {err}"
    );
    run.rerun_converges().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_ctrl_c_exits_at_once_even_against_a_paused_server() {
    // -v=4: the interrupt handler says when it has read the first press.
    let mut run = OnIsolated::start(
        "ru-second-ctrl-c",
        Readiness::AfterSecs(2),
        "--timeout=5m -v=4",
        "Scaling web-",
    )
    .await;
    let paused = run.plane.pause("kube-apiserver").unwrap();
    run.live().signal(libc::SIGINT);
    // The second press once the first was read: two SIGINTs before the handler's
    // task reads the first are one (tokio, as Unix, coalesces a pending signal).
    run.live()
        .line(
            Stream::Stderr,
            Duration::from_secs(10),
            "the first SIGINT read",
            |l| l.contains("interrupted: stopping before the next request"),
        )
        .await;
    run.live().signal(libc::SIGINT);
    let (code, out, err) = run.end(Duration::from_secs(30)).await;
    paused.resume();
    assert_eq!(code, Some(130), "{out:?}\n{err}");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    assert!(
        err.contains(&format!(
            "kubectl rolling-update web {} -n {} --update-period=0 --timeout=5m",
            image_flag(),
            run.ns.as_str()
        )),
        "the resume hint: {err}"
    );
    run.rerun_converges().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_controller_manager_in_the_rename_step_then_the_rerun_converges() {
    // The old RC's DELETE is held at admission until kube-controller-manager is
    // paused, so its garbage collector cannot finish that deletion first: the
    // pause comes before the step's request is processed, not after an output line
    // (which raced the collector). `--timeout` bounds every wait of the run, the
    // scaling before the rename too, so it leaves a loaded machine's kubelet time to
    // start the pods (5 s did not, and the run ended before the DELETE).
    let (mut run, webhook) = OnIsolated::start_holding(
        "ru-paused-kcm",
        Readiness::Started,
        "--timeout=30s",
        RC_DELETES,
        "web",
    )
    .await;
    if !webhook.wait_holding(Duration::from_secs(120)).await {
        let (code, out, err) = run.end(Duration::from_secs(60)).await;
        panic!("the old RC's DELETE never reached the server: exit {code:?}\n{out:?}\n{err}");
    }
    let paused = run.plane.pause("kube-controller-manager").unwrap();
    webhook.release();
    let (code, out, err) = run.end(Duration::from_secs(60)).await;
    paused.resume();
    assert_eq!(code, Some(1), "{out:?}\n{err}");
    assert!(
        err.contains("timed out waiting for replicationcontroller")
            && err.contains("to be deleted"),
        "{err}"
    );
    run.rerun_converges().await;
    webhook
        .remove(&run.cluster.client().await)
        .await
        .expect("remove the webhook");
}

/// The rename step's request: the old RC's DELETE.
const RC_DELETES: Rule = Rule {
    operation: "DELETE",
    resource: "replicationcontrollers",
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_server_restarted_mid_update_then_the_rerun_converges() {
    let mut run = OnIsolated::start(
        "ru-restart-api",
        Readiness::AfterSecs(2),
        "--timeout=20s",
        "Scaling web-",
    )
    .await;
    run.plane.restart_apiserver().await.unwrap();
    // The run may ride out the restart (watches reconnect) or stop with an error;
    // either way it ends, and the same command finishes the job. An error may follow
    // "Waiting: …" lines: a pod the scheduler could not bind while the server was down
    // ("connection refused") waits for the scheduler's retry, and `--timeout=20s` can
    // end first (seen on a loaded machine).
    let (code, out, err) = run.end(Duration::from_secs(120)).await;
    match code {
        Some(0) => {
            run.invariants
                .assert_holds(&web_expect(), Duration::from_secs(60))
                .await;
        }
        Some(1) if err.lines().any(|l| l.starts_with("error: ")) => {
            run.rerun_converges().await;
        }
        _ => panic!("{code:?}\n{out:?}\n{err}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_writer_causes_conflicts_the_update_rides_them_out() {
    let cluster = cluster();
    let (ns, invariants) = start_web(cluster, "ru-conflicts", Readiness::Started).await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    // Another writer keeps updating every RC of the namespace (an annotation bump,
    // GET then PUT), so the plugin's own PUTs meet 409 Conflicts.
    let writer = {
        let rcs = rcs.clone();
        tokio::spawn(async move {
            let mut n = 0u64;
            loop {
                if let Ok(list) = rcs.list(&Default::default()).await {
                    for mut rc in list.items {
                        n += 1;
                        rc.metadata
                            .annotations
                            .get_or_insert_with(Default::default)
                            .insert("chaos.kubeplug.io/writes".into(), n.to_string());
                        let name = rc.metadata.name.clone().unwrap_or_default();
                        let _ = rcs.replace(&name, &PostParams::default(), &rc).await;
                    }
                }
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        })
    };
    rerun_converges(cluster, ns.as_str(), &invariants).await;
    writer.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_deleting_chaos_during_a_30_replica_update() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-chaos").await;
    let client = cluster.client().await;
    let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), ns.as_str());
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), ns.as_str());
    // No deployment key: the old RC is relabelled (template, pods, selector) while
    // pods die and the RC manager replaces them.
    let web = rc(
        "web",
        "web",
        &[],
        &[("c", OLD_IMAGE)],
        30,
        Readiness::Started,
    );
    rcs.create(&PostParams::default(), &web).await.unwrap();
    crate::rolling_update::wait_ready(&rcs, "web", 30).await;
    let invariants = RcInvariants::watch(client.clone(), ns.as_str()).await;
    let chaos = {
        let pods = pods.clone();
        tokio::spawn(async move {
            let mut i = 0usize;
            loop {
                // A pod deleted every 1.5 s: the real node replaces one in about a
                // second, so the update (which keeps all 30 available) can make
                // progress between deaths, as it must on a cluster losing pods.
                tokio::time::sleep(Duration::from_millis(1500)).await;
                let Ok(list) = pods.list(&Default::default()).await else {
                    continue;
                };
                let live: Vec<_> = list
                    .items
                    .iter()
                    .filter(|p| p.metadata.deletion_timestamp.is_none())
                    .collect();
                if live.is_empty() {
                    continue;
                }
                i = i.wrapping_mul(31).wrapping_add(7);
                let victim = live[i % live.len()]
                    .metadata
                    .name
                    .clone()
                    .unwrap_or_default();
                let _ = pods.delete(&victim, &Default::default()).await;
            }
        })
    };
    let live = live_update(
        &cluster.kubeconfig,
        &cluster.plugin_dir,
        &s(&[
            "web",
            &image_flag(),
            "-n",
            ns.as_str(),
            "--update-period=0",
            "--timeout=60s",
        ]),
    );
    // Each step prints a line, and --timeout ends a step that cannot move: a run
    // silent for twice that is hung, however slow the machine is.
    let (code, out, err) = live.finish_unless_quiet(Duration::from_secs(120)).await;
    chaos.abort();
    assert_eq!(code, Some(0), "{out:?}\n{err}");
    let expect = Expect {
        rc: "web".into(),
        replicas: 30,
        image: NEW_IMAGE.into(),
        // Chaos deletes ready pods: readiness is not the plugin's to keep here, and
        // the RC manager's replacements can overlap a pod it is about to release
        // (one made from the stale template during the relabelling): one more pod
        // than the surge allows, for a moment, is the chaos's, not the plugin's.
        min_ready: 0,
        max_total: 32,
    };
    invariants
        .assert_holds(&expect, Duration::from_secs(90))
        .await;
}

/// A kubeconfig for a ServiceAccount of `ns` bound to `rules`, on `cluster`'s server.
async fn service_account_kubeconfig(
    cluster: &Cluster,
    ns: &str,
    rules: Vec<k8s_openapi::api::rbac::v1::PolicyRule>,
    dir: &Path,
) -> PathBuf {
    use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
    use k8s_openapi::api::core::v1::ServiceAccount;
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding, RoleRef, Subject};
    use kube::api::ObjectMeta;
    let client = cluster.client().await;
    let meta = |name: &str| ObjectMeta {
        name: Some(name.into()),
        ..Default::default()
    };
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
    accounts
        .create(
            &PostParams::default(),
            &ServiceAccount {
                metadata: meta("updater"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    Api::<Role>::namespaced(client.clone(), ns)
        .create(
            &PostParams::default(),
            &Role {
                metadata: meta("updater"),
                rules: Some(rules),
            },
        )
        .await
        .unwrap();
    Api::<RoleBinding>::namespaced(client.clone(), ns)
        .create(
            &PostParams::default(),
            &RoleBinding {
                metadata: meta("updater"),
                role_ref: RoleRef {
                    api_group: "rbac.authorization.k8s.io".into(),
                    kind: "Role".into(),
                    name: "updater".into(),
                },
                subjects: Some(vec![Subject {
                    kind: "ServiceAccount".into(),
                    name: "updater".into(),
                    namespace: Some(ns.into()),
                    ..Default::default()
                }]),
            },
        )
        .await
        .unwrap();
    // A token for the account through the TokenRequest API, as a kubelet gets one for
    // a pod: servers since 1.24 no longer make token Secrets, and 1.20 serves it too.
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: Vec::new(),
            expiration_seconds: Some(3600),
            ..Default::default()
        },
        ..Default::default()
    };
    let token = accounts
        .create_token_request("updater", &PostParams::default(), &request)
        .await
        .expect("token request")
        .status
        .expect("token request status")
        .token;
    let admin = std::fs::read_to_string(&cluster.kubeconfig).unwrap();
    let server = admin
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .unwrap()
        .to_string();
    let ca = admin
        .lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority: "))
        .unwrap()
        .to_string();
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n    certificate-authority: {ca}\nusers:\n- name: u\n  user:\n    token: {token}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n    namespace: {ns}\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    path
}

fn rule(resources: &[&str], verbs: &[&str]) -> k8s_openapi::api::rbac::v1::PolicyRule {
    k8s_openapi::api::rbac::v1::PolicyRule {
        api_groups: Some(vec![String::new()]),
        resources: Some(resources.iter().map(|r| r.to_string()).collect()),
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forbidden_watch_is_reported_at_once() {
    let cluster = cluster();
    let (ns, _invariants) = start_web(cluster, "ru-forbidden-watch", Readiness::Started).await;
    let dir = tempfile::tempdir().unwrap();
    // Everything the update needs except watching pods.
    let kubeconfig = service_account_kubeconfig(
        cluster,
        ns.as_str(),
        vec![
            rule(
                &["replicationcontrollers", "replicationcontrollers/scale"],
                &[
                    "get", "list", "watch", "create", "update", "patch", "delete",
                ],
            ),
            rule(&["pods"], &["get", "list", "update", "delete"]),
        ],
        dir.path(),
    )
    .await;
    let live = live_update(
        &kubeconfig,
        &cluster.plugin_dir,
        &fault_args(ns.as_str(), "--timeout=5m"),
    );
    // Far below --timeout: the 403 ends the run, it is not retried until then.
    let (code, out, err) = live.finish(Duration::from_secs(60)).await;
    assert_eq!(code, Some(1), "{out:?}\n{err}");
    assert!(
        err.starts_with(
            "Error from server (Forbidden): pods is forbidden: User \"system:serviceaccount:"
        ) && err.contains("cannot watch resource \"pods\""),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resume_hint_works_and_prints_no_secret() {
    let cluster = cluster();
    let (ns, invariants) = start_web(cluster, "ru-hint", Readiness::AfterSecs(2)).await;
    let admin = std::fs::read_to_string(&cluster.kubeconfig).unwrap();
    let token = admin
        .lines()
        .find_map(|l| l.trim().strip_prefix("token: "))
        .unwrap()
        .to_string();
    // The namespace comes from the context, the token from the command line: the
    // hint must pin the first and hide the second.
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        admin.replace("namespace: default", &format!("namespace: {}", ns.as_str())),
    )
    .unwrap();
    let args = s(&[
        "web",
        &image_flag(),
        "--update-period=0",
        &format!("--token={token}"),
    ]);
    invariants.client_alive(true);
    let live = live_update(&kubeconfig, &cluster.plugin_dir, &args);
    live.until("Scaling web-").await;
    live.signal(libc::SIGTERM);
    let (code, out, err) = live.finish(Duration::from_secs(60)).await;
    invariants.client_alive(false);
    assert_eq!(code, Some(143), "{out:?}\n{err}");
    assert!(
        !err.contains(&token) && !out.concat().contains(&token),
        "a token in the output: {err}"
    );
    let resume = err
        .lines()
        .skip_while(|l| !l.starts_with("The update is left in progress"))
        .nth(1)
        .unwrap()
        .trim()
        .to_string();
    assert_eq!(
        resume,
        format!(
            "kubectl rolling-update web {} --update-period=0 --token=REDACTED --namespace={}",
            image_flag(),
            ns.as_str()
        )
    );
    assert!(err.contains(&format!(
        "kubectl rolling-update web --rollback --token=REDACTED --namespace={}",
        ns.as_str()
    )));
    // Pasted into a shell with the secret filled in, from a kubeconfig whose
    // context now points elsewhere, the hint finishes the update in the right place.
    std::fs::write(&kubeconfig, &admin).unwrap();
    let line = resume.replace("REDACTED", &token);
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(&line)
        .env(
            "PATH",
            format!(
                "{}:{}",
                cluster.plugin_dir.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("KUBECONFIG", &kubeconfig)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    invariants
        .assert_holds(&web_expect(), Duration::from_secs(60))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_does_not_stop_the_update() {
    let cluster = cluster();
    let (ns, invariants) = start_web(cluster, "ru-closed-stdout", Readiness::Started).await;
    let plugin = cluster.plugin_dir.join(plugin_binary("rolling-update"));
    invariants.client_alive(true);
    // `| head -1`: the reader goes away after the first line.
    let script = format!(
        "{} web {} -n {} --update-period=0 | head -1; echo \"rc=${{PIPESTATUS[0]}}\"",
        plugin.display(),
        image_flag(),
        ns.as_str()
    );
    let out = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .env("KUBECONFIG", &cluster.kubeconfig)
        .output()
        .await
        .unwrap();
    invariants.client_alive(false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.starts_with("Created web-"), "{stdout}");
    // The update ran to its end (the invariants below), and then ended as kubectl
    // ends on a closed pipe: killed by SIGPIPE, never 0 with its output lost.
    assert!(
        stdout.ends_with("rc=141\n"),
        "killed by SIGPIPE after the update: {stdout}\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    invariants
        .assert_holds(&web_expect(), Duration::from_secs(60))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_done_update_whose_old_rc_was_deleted_is_finished_or_refused() {
    let cluster = cluster();
    let (ns, invariants) = start_web(cluster, "ru-old-deleted", Readiness::Started).await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    let proxy = ApiProxy::start(&cluster.kubeconfig).unwrap();
    // One name, no deployment key: 14 writes; stop after the first scale-up (write
    // 7), then someone deletes the old RC with its pods.
    let args = s(&["web", &image_flag()]);
    let killed = run_plugin(cluster, &proxy, ns.as_str(), &args, Some(7), &invariants).await;
    assert!(proxy.fired(), "{}\n{}", killed.stdout, killed.stderr);
    rcs.delete("web", &kube::api::DeleteParams::background())
        .await
        .unwrap();
    let gone = tokio::time::timeout(
        Duration::from_secs(60),
        kube::runtime::wait::await_condition(
            rcs.clone(),
            "web",
            |rc: Option<&ReplicationController>| rc.is_none(),
        ),
    )
    .await;
    assert!(gone.is_ok(), "the old RC is deleted");

    // Another image: the update in progress is not silently renamed to it.
    let other = run_plugin(
        cluster,
        &proxy,
        ns.as_str(),
        &s(&["web", "--image=registry.k8s.io/pause:3.7"]),
        None,
        &invariants,
    )
    .await;
    assert_eq!(other.code, Some(1), "{}\n{}", other.stdout, other.stderr);
    assert_eq!(
        other.stderr,
        format!(
            "error: Found existing in-progress update to image ({NEW_IMAGE}).\nEither continue in-progress update with --image={NEW_IMAGE} or rollback with --rollback\n"
        )
    );
    assert!(
        proxy.writes().is_empty(),
        "nothing written: {:?}",
        proxy.writes()
    );

    // The same image: the new RC is scaled to its desired size, then handed over.
    let done = run_plugin(cluster, &proxy, ns.as_str(), &args, None, &invariants).await;
    assert_eq!(done.code, Some(0), "{}\n{}", done.stdout, done.stderr);
    let lines: Vec<&str> = done.stdout.lines().collect();
    assert!(
        lines[0].starts_with("Continuing update with existing controller web-"),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("Scaling web-") && lines[1].ends_with(" up to 2"),
        "{lines:?}"
    );
    assert!(
        lines[2].starts_with("Renaming web-") && lines[2].ends_with(" to web"),
        "{lines:?}"
    );
    assert_eq!(lines[3], "replicationcontroller/web rolling updated");
    let expect = Expect {
        // The pods deleted by hand were not the plugin's to keep.
        min_ready: 0,
        ..web_expect()
    };
    invariants
        .assert_holds(&expect, Duration::from_secs(60))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_watches_are_re_listed_after_the_poll_interval() {
    let cluster = cluster();
    let (ns, invariants) = start_web(cluster, "ru-stalled-watch", Readiness::Started).await;
    let proxy = ApiProxy::start(&cluster.kubeconfig).unwrap();
    // Every watch answers and then says nothing: only re-listing sees progress.
    proxy.stall_watches(true);
    let args = s(&["web", &image_flag(), "--poll-interval=1s"]);
    let run = run_plugin(cluster, &proxy, ns.as_str(), &args, None, &invariants).await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    invariants
        .assert_holds(&web_expect(), Duration::from_secs(60))
        .await;
}
