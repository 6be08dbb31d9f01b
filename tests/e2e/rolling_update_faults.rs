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
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::core::v1::ReplicationController;
use kube::Api;
use kube::api::PostParams;
use tests::faults::invariants::{Expect, RcInvariants};
use tests::faults::proxy::ApiProxy;
use tests::harness::{Cluster, cluster, plugin_binary};

use crate::rolling_update::{NEW_IMAGE, OLD_IMAGE, rc};

/// Kill points run at once (each with its own namespace, proxy and plugin).
const PARALLEL: usize = 4;
const REPLICAS: i32 = 2;
const READY_FAST: &[(&str, &str)] = &[("sim.kubeplug.io/ready-after-ms", "200")];

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
    let mut child =
        tokio::process::Command::new(cluster.plugin_dir.join(plugin_binary("rolling-update")))
            .args(args)
            .args(["-n", ns, "--update-period=0", "--timeout=60s"])
            .env("KUBECONFIG", &proxy.kubeconfig)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn plugin");
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
async fn baseline(cluster: &'static Cluster, scenario: &Scenario) -> usize {
    let (ns, _rcs) = prepare(cluster, scenario, &format!("{}-base", scenario.name)).await;
    let proxy = ApiProxy::start(&cluster.kubeconfig).unwrap();
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
async fn count_writes(cluster: &'static Cluster, scenario: &Scenario, args: &[String]) -> usize {
    let (ns, _rcs) = prepare(cluster, scenario, &format!("{}-probe", scenario.name)).await;
    let proxy = ApiProxy::start(&cluster.kubeconfig).unwrap();
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
) -> Result<(), String> {
    let (ns, _rcs) = prepare(cluster, scenario, &format!("{}-k{k}", scenario.name)).await;
    let proxy = ApiProxy::start(&cluster.kubeconfig).unwrap();
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

/// Runs the whole matrix of a scenario; panics listing every kill point that did
/// not converge.
async fn kill_matrix(mut scenario: Scenario) {
    let cluster = cluster();
    if let Some((args, fraction)) = scenario.before.clone() {
        let total = count_writes(cluster, &scenario, &args).await;
        scenario.before_k = Some(((total as f64) * fraction).ceil().max(1.0) as usize);
    }
    let total = baseline(cluster, &scenario).await;
    assert!(total > 0, "{}: no writes", scenario.name);
    let mut failures = Vec::new();
    let points: Vec<usize> = (1..=total).collect();
    for chunk in points.chunks(PARALLEL) {
        let results =
            futures::future::join_all(chunk.iter().map(|&k| kill_point(cluster, &scenario, k)))
                .await;
        failures.extend(results.into_iter().filter_map(Result::err));
    }
    eprintln!(
        "{}: {}/{total} kill points converged",
        scenario.name,
        total - failures.len()
    );
    assert!(
        failures.is_empty(),
        "{}: {} of {total} kill points did not converge:\n\n{}",
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
        READY_FAST,
    );
    std::fs::write(&path, serde_json::to_vec(&new).unwrap()).unwrap();
    path
}

fn path_arg(path: &Path) -> String {
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_at_every_write_one_name_image_without_deployment_key() {
    kill_matrix(Scenario {
        name: "one-name-image",
        initial: rc("web", "web", &[], &[("c", OLD_IMAGE)], REPLICAS, READY_FAST),
        before: None,
        before_k: None,
        args: s(&["web", &image_flag()]),
        kill_rerun: false,
        final_rc: "web",
        final_image: NEW_IMAGE,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_at_every_write_one_name_image_with_deployment_key() {
    kill_matrix(Scenario {
        name: "one-name-image-key",
        initial: rc(
            "web",
            "web",
            &[("deployment", "v1")],
            &[("c", OLD_IMAGE)],
            REPLICAS,
            READY_FAST,
        ),
        before: None,
        before_k: None,
        args: s(&["web", &image_flag()]),
        kill_rerun: false,
        final_rc: "web",
        final_image: NEW_IMAGE,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_at_every_write_two_names_image() {
    kill_matrix(Scenario {
        name: "two-names-image",
        initial: rc(
            "web-v1",
            "web",
            &[],
            &[("c", OLD_IMAGE)],
            REPLICAS,
            READY_FAST,
        ),
        before: None,
        before_k: None,
        args: s(&["web-v1", "web-v2", &image_flag()]),
        kill_rerun: false,
        final_rc: "web-v2",
        final_image: NEW_IMAGE,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_at_every_write_two_names_file() {
    let file = new_rc_file("web-v2");
    kill_matrix(Scenario {
        name: "two-names-file",
        initial: rc(
            "web-v1",
            "web",
            &[("version", "v1")],
            &[("c", OLD_IMAGE)],
            REPLICAS,
            READY_FAST,
        ),
        before: None,
        before_k: None,
        args: s(&["web-v1", "web-v2", "-f", &path_arg(&file)]),
        kill_rerun: false,
        final_rc: "web-v2",
        final_image: NEW_IMAGE,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_at_every_write_one_name_file() {
    let file = new_rc_file("web-next");
    kill_matrix(Scenario {
        name: "one-name-file",
        initial: rc(
            "web",
            "web",
            &[("version", "v1")],
            &[("c", OLD_IMAGE)],
            REPLICAS,
            READY_FAST,
        ),
        before: None,
        before_k: None,
        args: s(&["web", "-f", &path_arg(&file)]),
        kill_rerun: false,
        final_rc: "web",
        final_image: NEW_IMAGE,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_at_every_write_of_a_rollback() {
    kill_matrix(Scenario {
        name: "rollback",
        initial: rc("web", "web", &[], &[("c", OLD_IMAGE)], REPLICAS, READY_FAST),
        before: Some((s(&["web", &image_flag()]), 0.5)),
        before_k: None,
        args: s(&["web", "--rollback"]),
        kill_rerun: false,
        final_rc: "web",
        final_image: OLD_IMAGE,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_kills_in_a_row() {
    kill_matrix(Scenario {
        name: "two-kills",
        initial: rc(
            "web",
            "web",
            &[("deployment", "v1")],
            &[("c", OLD_IMAGE)],
            REPLICAS,
            READY_FAST,
        ),
        before: None,
        before_k: None,
        args: s(&["web", &image_flag()]),
        kill_rerun: true,
        final_rc: "web",
        final_image: NEW_IMAGE,
    })
    .await;
}
