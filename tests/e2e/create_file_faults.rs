//! `kubectl create-file` under field conditions: injected throttling and
//! answers lost after the server applied the write, through the fault proxy
//! (`tests::faults::proxy`) in front of the shared cluster; and a real throttling API
//! server (`tests::harness::throttled_cluster`).

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};
use tests::faults::proxy::{ApiProxy, Inject, StreamFault, Transport};
use tests::harness::{
    ADMIN_CONTEXT, LIMITED_CONTEXT, LIMITED_NAMESPACE, Output, cluster, throttled_cluster,
};
use tests::objects::{configmap_names, configmap_names_in, configmaps};

fn expected(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i:04}")).collect()
}

/// Runs `kubectl <args> -f -` with `input` through the proxy.
fn through(proxy: &ApiProxy, args: &[&str], input: &str) -> Output {
    cluster()
        .kubectl()
        .env("KUBECONFIG", &proxy.kubeconfig)
        .args(args)
        .args(["-f", "-"])
        .stdin(input.to_string())
        .run()
}

/// What the issue saw: every third write answered `429` with `Retry-After: 1`.
/// kubectl's client retries and creates all 300; so must create-file, once each.
#[tokio::test]
async fn every_third_write_throttled_all_created_as_with_kubectl() {
    for over in Transport::BOTH {
        every_third_write_throttled_over(over).await;
    }
}

async fn every_third_write_throttled_over(over: Transport) {
    const N: usize = 300;
    let ns = cluster().namespace(&format!("cf-throttled-{over}")).await;
    let reference = cluster()
        .namespace(&format!("cf-throttled-{over}-kubectl"))
        .await;
    let input = configmaps("cm", N);
    // One proxy each, so each sees exactly every third of its own writes throttled;
    // the two run side by side (each spends most of its time waiting out 429s).
    let throttling = || {
        let proxy = ApiProxy::start_over(&cluster().kubeconfig, over).expect("proxy");
        proxy.inject(Some(Inject::Throttle {
            every: 3,
            retry_after: 1,
        }));
        proxy
    };
    let (ours, theirs) = (throttling(), throttling());
    let (out, kubectl) = std::thread::scope(|s| {
        let kubectl = s.spawn(|| through(&theirs, &["create", "-n", reference.as_str()], &input));
        let out = through(&ours, &["create-file", "-n", ns.as_str()], &input);
        (out, kubectl.join().expect("kubectl thread"))
    });

    out.success();
    assert!(
        !out.stderr.contains("TooManyRequests"),
        "stderr: {}",
        out.stderr
    );
    assert_eq!(out.stdout.lines().count(), N, "one line per object");
    assert_eq!(configmap_names(ns.as_str()).await, expected("cm", N));
    kubectl.success();
    assert_eq!(
        configmap_names(reference.as_str()).await,
        configmap_names(ns.as_str()).await,
        "the same objects as kubectl create -f"
    );
}

/// Every fifth create is applied by the server but its answer is lost (`504` with
/// `Retry-After`): the client retries, the retry meets `AlreadyExists` — the object
/// this very create stored. create-file reports it created, once, and exits 0
/// (kubectl would print `AlreadyExists` for it and exit 1).
#[tokio::test]
async fn a_create_applied_but_answered_504_is_created_once_and_reported_once() {
    for over in Transport::BOTH {
        lost_answers_over(over).await;
    }
}

async fn lost_answers_over(over: Transport) {
    const N: usize = 60;
    let ns = cluster().namespace(&format!("cf-lost-answer-{over}")).await;
    let proxy = ApiProxy::start_over(&cluster().kubeconfig, over).expect("proxy");
    proxy.inject(Some(Inject::LoseAnswer {
        every: 5,
        retry_after: 0,
    }));
    let out = through(
        &proxy,
        &["create-file", "-n", ns.as_str()],
        &configmaps("lost", N),
    );
    out.success();
    assert!(
        !out.stderr.contains("AlreadyExists"),
        "stderr: {}",
        out.stderr
    );
    let mut reported: Vec<&str> = out.stdout.lines().collect();
    reported.sort_unstable();
    let want: Vec<String> = expected("lost", N)
        .iter()
        .map(|n| format!("configmap/{n} created"))
        .collect();
    assert_eq!(reported, want);
    assert_eq!(configmap_names(ns.as_str()).await, expected("lost", N));

    // The reference: kubectl's client retries the same way and reports the
    // AlreadyExists it then meets.
    let reference = cluster()
        .namespace(&format!("cf-lost-answer-{over}-kubectl"))
        .await;
    let kubectl = through(
        &proxy,
        &["create", "-n", reference.as_str()],
        &configmaps("lost", N),
    );
    assert_eq!(kubectl.code, 1, "kubectl: {}", kubectl.stderr);
    assert!(
        kubectl.stderr.contains("AlreadyExists"),
        "{}",
        kubectl.stderr
    );
    assert_eq!(
        configmap_names(reference.as_str()).await,
        expected("lost", N)
    );
}

/// The names of the ConfigMaps starting with `prefix` in the throttled cluster's
/// `limited` namespace.
async fn throttled_names(prefix: &str) -> Vec<String> {
    let client =
        localcluster::controlplane::client_for(&throttled_cluster().kubeconfig, ADMIN_CONTEXT)
            .await
            .expect("admin client");
    let api: Api<ConfigMap> = Api::namespaced(client, LIMITED_NAMESPACE);
    let mut names = configmap_names_in(&api).await;
    names.retain(|n| n.starts_with(&format!("{prefix}-")));
    names
}

/// A real throttling API server (one mutating request in flight, `429` with
/// `Retry-After: 1` beyond): 5,000 ConfigMaps from one file are all created, each
/// once, exit 0 — as `kubectl create -f` does with the same file.
#[tokio::test]
async fn five_thousand_configmaps_against_a_throttling_api_server() {
    const N: usize = 5000;
    let cluster = throttled_cluster();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("cms.yaml");
    std::fs::write(&file, configmaps("thr", N)).expect("write");
    let out = cluster
        .kubectl()
        .arg("create-file")
        .args([
            "--context",
            LIMITED_CONTEXT,
            "-n",
            LIMITED_NAMESPACE,
            "-v=4",
            "-f",
        ])
        .arg(&file)
        .run();
    out.success();
    // The precondition: the server did throttle this run. While creates compete, a
    // 429 comes straight back to create-file (`throttled: …`); alone, the client's
    // retry layer waits it out (`Got a Retry-After …`). Either shows a 429.
    assert!(
        out.stderr.contains("throttled: fewer creates in flight")
            || out
                .stderr
                .contains("Got a Retry-After 1s response (status 429)"),
        "the server never throttled: {}",
        out.stderr
    );
    assert!(!out.stderr.contains("Error from server"), "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), N);
    assert_eq!(throttled_names("thr").await, expected("thr", N));

    std::fs::write(&file, configmaps("thr-kubectl", N)).expect("write");
    let kubectl = cluster
        .kubectl()
        .args([
            "create",
            "--context",
            LIMITED_CONTEXT,
            "-n",
            LIMITED_NAMESPACE,
            "-f",
        ])
        .arg(&file)
        .run();
    kubectl.success();
    assert_eq!(
        throttled_names("thr-kubectl").await,
        expected("thr-kubectl", N)
    );
}

/// `n` Pods without resources (and with `extra` in their spec, indented for it).
fn pods(n: usize, extra: &str) -> String {
    (0..n)
        .map(|i| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p-{i:02}\nspec:\n{extra}  containers:\n  - name: c\n    image: busybox:1.36\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// A LimitRange followed by 40 Pods without resources: kubectl creates the LimitRange
/// first, so every Pod gets its defaults; so must create-file, whose concurrency
/// would otherwise admit some Pods before the LimitRange exists.
#[tokio::test]
async fn a_limitrange_before_pods_gives_every_pod_its_defaults() {
    use k8s_openapi::api::core::v1::Pod;
    const N: usize = 40;
    let ns = cluster().namespace("cf-order-limits").await;
    let input = format!(
        "apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: defaults\nspec:\n  limits:\n  - type: Container\n    default: {{cpu: 300m, memory: 64Mi}}\n    defaultRequest: {{cpu: 100m, memory: 32Mi}}\n---\n{}",
        pods(N, "")
    );
    cluster()
        .kubectl()
        .args(["create-file", "-n", ns.as_str(), "-f", "-"])
        .stdin(input)
        .run()
        .success();
    let api: Api<Pod> = Api::namespaced(cluster().client().await, ns.as_str());
    let pods = api.list(&ListParams::default()).await.expect("list pods");
    assert_eq!(pods.items.len(), N);
    for pod in &pods.items {
        let resources = pod.spec.as_ref().expect("spec").containers[0]
            .resources
            .clone()
            .unwrap_or_default();
        let limits = resources.limits.unwrap_or_default();
        let requests = resources.requests.unwrap_or_default();
        assert_eq!(
            (
                limits.get("cpu").map(|q| q.0.as_str()),
                requests.get("memory").map(|q| q.0.as_str())
            ),
            (Some("300m"), Some("32Mi")),
            "pod {:?} was admitted without the LimitRange's defaults",
            pod.metadata.name
        );
    }
}

/// A ServiceAccount followed by Pods naming it: ServiceAccount admission refuses a Pod
/// whose account does not exist, so every Pod is created as with kubectl. (The 1.20
/// plug-in looks a missing account up live a few times before refusing, which hides
/// most races; the LimitRange test above is the one unordered creates fail.)
#[tokio::test]
async fn a_serviceaccount_before_the_pods_naming_it() {
    use k8s_openapi::api::core::v1::Pod;
    const N: usize = 30;
    let ns = cluster().namespace("cf-order-sa").await;
    let input = format!(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: runner\n---\n{}",
        pods(
            N,
            "  serviceAccountName: runner\n  automountServiceAccountToken: false\n"
        )
    );
    let out = cluster()
        .kubectl()
        .args(["create-file", "-n", ns.as_str(), "-f", "-"])
        .stdin(input)
        .run();
    out.success();
    let api: Api<Pod> = Api::namespaced(cluster().client().await, ns.as_str());
    let pods = api.list(&ListParams::default()).await.expect("list pods");
    assert_eq!(pods.items.len(), N, "{}", out.stderr);
    assert!(pods.items.iter().all(|p| {
        p.spec
            .as_ref()
            .and_then(|s| s.service_account_name.as_deref())
            == Some("runner")
    }));
}

/// A far-away server (25 ms round trip through `faults::latency`): 200 ConfigMaps are
/// all created, each once, printed in input order. (Correctness only; the speed is
/// the benchmark's business.)
#[tokio::test]
async fn two_hundred_configmaps_through_25ms_of_latency() {
    use tests::faults::latency::LatencyProxy;
    const N: usize = 200;
    let ns = cluster().namespace("cf-latency").await;
    let proxy = LatencyProxy::for_kubeconfig(&cluster().kubeconfig, Duration::from_millis(25))
        .expect("latency proxy");
    let kubeconfig = proxy.kubeconfig(&cluster().kubeconfig).expect("kubeconfig");
    let out = cluster()
        .kubectl()
        .env("KUBECONFIG", &kubeconfig)
        .args(["create-file", "-n", ns.as_str(), "-f", "-"])
        .stdin(configmaps("far", N))
        .run();
    out.success();
    let want: Vec<String> = expected("far", N)
        .iter()
        .map(|n| format!("configmap/{n} created"))
        .collect();
    assert_eq!(out.stdout.lines().collect::<Vec<_>>(), want);
    assert_eq!(configmap_names(ns.as_str()).await, expected("far", N));
}

/// The files of a directory of `n` ConfigMaps, one per file named after the object
/// (so that each failure in the report names its object).
fn configmap_dir(dir: &std::path::Path, prefix: &str, n: usize) {
    for name in expected(prefix, n) {
        std::fs::write(
            dir.join(format!("{name}.yaml")),
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n"),
        )
        .expect("write manifest");
    }
}

/// The names in `configmap/NAME created` lines.
fn reported_created(stdout: &str) -> std::collections::BTreeSet<String> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("configmap/")?.strip_suffix(" created"))
        .map(str::to_string)
        .collect()
}

/// The API server restarted in the middle of a large create: every object is either
/// reported created — and then it exists, once — or named in the error report; none is
/// silently lost. The creates whose answers were lost are sent again for about 7 s
/// (`resolve::RESEND_WAITS`): a restart slower than that ends the run with exit 1, and
/// running the same command again creates the rest and reports `AlreadyExists` for
/// the others, as kubectl does; a faster one is ridden out (exit 0, all created).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_server_restart_mid_create_is_reported_and_a_rerun_finishes() {
    use std::collections::BTreeSet;
    use tokio::io::AsyncBufReadExt;
    const N: usize = 2000;
    let (cluster, _lock) = tests::harness::isolated_cluster().await;
    let plane = tests::faults::ControlPlane::of(&cluster.kubeconfig).expect("control plane");
    let ns = cluster.namespace("cf-restart").await;
    let dir = tempfile::tempdir().expect("tempdir");
    configmap_dir(dir.path(), "r", N);
    let args = [
        "-n",
        ns.as_str(),
        "-f",
        &dir.path().display().to_string(),
        "--request-timeout=20s",
    ]
    .map(str::to_string);

    let mut child = tests::harness::spawn_plugin(
        &cluster.plugin_dir,
        "create-file",
        &cluster.kubeconfig,
        &args,
    );
    let stderr = tests::harness::collect_stderr(&mut child);
    let mut lines = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut stdout = String::new();
    // Restart once a tenth of the objects are in.
    while let Ok(Some(line)) = lines.next_line().await {
        stdout.push_str(&line);
        stdout.push('\n');
        if stdout.lines().count() == N / 10 {
            break;
        }
    }
    plane.restart_apiserver().await.expect("restart");
    let finished = tokio::time::timeout(Duration::from_secs(180), async {
        while let Ok(Some(line)) = lines.next_line().await {
            stdout.push_str(&line);
            stdout.push('\n');
        }
        child.wait().await
    })
    .await
    .expect("create-file ended within 180 s")
    .expect("wait");
    let stderr = stderr.await.expect("stderr reader");

    // Every object is accounted for: reported created, or named in the report.
    let created = reported_created(&stdout);
    let failed: BTreeSet<String> = expected("r", N)
        .into_iter()
        .filter(|n| stderr.contains(&format!("{n}.yaml")))
        .collect();
    assert!(created.is_disjoint(&failed), "reported both ways");
    assert_eq!(
        created.len() + failed.len(),
        N,
        "objects neither reported created nor failed\n{stderr}"
    );
    // What was reported created exists (each name exists at most once by nature).
    let existing: BTreeSet<String> = wait_list(cluster, ns.as_str()).await;
    assert!(created.is_subset(&existing), "a reported create is missing");
    if finished.code() == Some(0) {
        // Ridden out: every create resolved within its resends.
        assert!(failed.is_empty(), "{stderr}");
        assert_eq!(existing, expected("r", N).into_iter().collect());
        return;
    }
    assert_eq!(finished.code(), Some(1), "{stderr}");
    assert!(!failed.is_empty());

    // The same command again: the rest is created, the others are AlreadyExists.
    let rerun = cluster.plugin("create-file").args(&args).run();
    assert_eq!(rerun.code, 1, "{}", rerun.stderr);
    let second = reported_created(&rerun.stdout);
    let already: BTreeSet<String> = expected("r", N)
        .into_iter()
        .filter(|n| {
            rerun
                .stderr
                .contains(&format!("configmaps \"{n}\" already exists"))
        })
        .collect();
    assert_eq!(
        already, existing,
        "AlreadyExists for exactly those that existed"
    );
    assert_eq!(
        second,
        expected("r", N)
            .into_iter()
            .filter(|n| !existing.contains(n))
            .collect(),
        "the rest created by the re-run"
    );
    assert_eq!(
        wait_list(cluster, ns.as_str()).await,
        expected("r", N).into_iter().collect()
    );
}

/// The ConfigMap names of `ns`, once the (restarted) API server answers.
async fn wait_list(
    cluster: &tests::harness::Cluster,
    ns: &str,
) -> std::collections::BTreeSet<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let api: Api<ConfigMap> = Api::namespaced(cluster.client().await, ns);
        match api.list(&ListParams::default()).await {
            Ok(list) => {
                return list
                    .items
                    .into_iter()
                    .filter_map(|cm| cm.metadata.name)
                    .filter(|n| n != "kube-root-ca.crt")
                    .collect();
            }
            Err(e) if tokio::time::Instant::now() < deadline => {
                tracing::debug!("API server not back yet: {e}");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => panic!("the API server did not come back: {e}"),
        }
    }
}

/// Runs create-file of `n` ConfigMaps named `prefix-NNNN` through `proxy` (offering
/// HTTP/2) into a new namespace; the output and the namespace.
async fn create_through(
    proxy: &ApiProxy,
    prefix: &str,
    n: usize,
    extra: &[&str],
) -> (Output, tests::harness::TestNamespace) {
    let ns = cluster().namespace(&format!("cf-h2-{prefix}")).await;
    let mut args = vec!["create-file", "-n", ns.as_str()];
    args.extend(extra);
    let out = through(proxy, &args, &configmaps(prefix, n));
    (out, ns)
}

/// Every object created once (the server's list), reported once (stdout), exit 0.
async fn each_once(out: &Output, ns: &str, prefix: &str, n: usize) {
    out.success();
    let want = expected(prefix, n);
    let reported: Vec<String> = out.stdout.lines().map(str::to_string).collect();
    assert_eq!(
        reported,
        want.iter()
            .map(|n| format!("configmap/{n} created"))
            .collect::<Vec<_>>(),
        "stderr: {}",
        out.stderr
    );
    assert_eq!(configmap_names(ns).await, want);
}

/// A create the server refused with `RST_STREAM(REFUSED_STREAM)` was not processed:
/// the client sends it again, and it is created and reported once.
#[tokio::test]
async fn a_refused_stream_is_sent_again_created_once_and_reported_once() {
    const N: usize = 60;
    let proxy = ApiProxy::start(&cluster().kubeconfig).expect("proxy");
    proxy.arm(None);
    proxy.stream_fault(Some(StreamFault::Refuse { nth: 10 }));
    let (out, ns) = create_through(&proxy, "refused", N, &[]).await;
    each_once(&out, ns.as_str(), "refused", N).await;
    assert_eq!(proxy.writes().len(), N, "one applied write per object");
}

/// The connection shuts down with GOAWAY while creates are in flight: the ones the
/// server has are answered, the ones after it go on a new connection, each object
/// created and reported once.
#[tokio::test]
async fn a_goaway_with_creates_in_flight_loses_none() {
    const N: usize = 300;
    let proxy = ApiProxy::start(&cluster().kubeconfig).expect("proxy");
    proxy.arm(None);
    proxy.stream_fault(Some(StreamFault::GoAway { nth: 50 }));
    let (out, ns) = create_through(&proxy, "goaway", N, &[]).await;
    each_once(&out, ns.as_str(), "goaway", N).await;
    assert_eq!(proxy.writes().len(), N, "one applied write per object");
}

/// A server whose stream limit (`SETTINGS_MAX_CONCURRENT_STREAMS`) is below
/// create-file's concurrency: the creates queue behind it, none lost or doubled.
#[tokio::test]
async fn a_stream_limit_below_our_concurrency_loses_nothing() {
    const N: usize = 200;
    let proxy =
        ApiProxy::start_with(&cluster().kubeconfig, Transport::Http2, Some(2)).expect("proxy");
    proxy.arm(None);
    let (out, ns) = create_through(&proxy, "limit", N, &[]).await;
    each_once(&out, ns.as_str(), "limit", N).await;
    assert_eq!(proxy.writes().len(), N, "one applied write per object");
}

/// The server stops answering one create while the others on the connection go on:
/// `--request-timeout` cuts that one alone, in the bound's words; every other object
/// is created and reported, and the command ends.
#[tokio::test]
async fn a_held_stream_is_cut_at_the_request_timeout_and_the_rest_go_on() {
    const N: usize = 40;
    let proxy = ApiProxy::start(&cluster().kubeconfig).expect("proxy");
    proxy.arm(None);
    proxy.stream_fault(Some(StreamFault::Hold { nth: 5 }));
    let (out, ns) = create_through(&proxy, "held", N, &["--request-timeout=3s"]).await;
    assert_eq!(
        out.code, 1,
        "stdout: {}\nstderr: {}",
        out.stdout, out.stderr
    );
    assert_eq!(proxy.held(), 1);
    assert!(
        out.stderr
            .contains("no answer in time (each request is bounded by 3s: --request-timeout"),
        "stderr: {}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1, "one failure: {}", out.stderr);
    // The held create never reached the server; every other one did, once.
    let created = configmap_names(ns.as_str()).await;
    assert_eq!(created.len(), N - 1, "{created:?}");
    assert_eq!(out.stdout.lines().count(), N - 1, "{}", out.stdout);
    assert_eq!(proxy.writes().len(), N - 1);
}

/// The connection is reset with 32 creates in flight (`--concurrency=32`, so that no
/// more are sent before the reset lands),
/// each applied by the server and none answered: each may have been processed. Each
/// is named, so each is sent again on a new connection, meets `AlreadyExists`, is
/// read back and found to be the object it sent (its field manager's entry, its
/// content): reported created, once. Exit 0; the server holds each object once, from
/// one applied write each (kubectl reports the 32 as failed and exits 1).
#[tokio::test]
async fn a_reset_with_32_creates_in_flight_resolves_each_by_name() {
    const N: usize = 100;
    const IN_FLIGHT: usize = 32;
    let proxy = ApiProxy::start(&cluster().kubeconfig).expect("proxy");
    proxy.arm(None);
    proxy.stream_fault(Some(StreamFault::Reset {
        in_flight: IN_FLIGHT,
    }));
    let (out, ns) = create_through(&proxy, "reset", N, &["-v=4", "--concurrency=32"]).await;
    assert_eq!(
        out.code, 0,
        "stdout: {}\nstderr: {}",
        out.stdout, out.stderr
    );
    let want: Vec<String> = expected("reset", N)
        .iter()
        .map(|n| format!("configmap/{n} created"))
        .collect();
    assert_eq!(
        out.stdout.lines().collect::<Vec<_>>(),
        want,
        "each printed once, in order: {}",
        out.stderr
    );
    let resent = out
        .stderr
        .lines()
        .filter(|l| l.contains("the answer to this create was lost"))
        .count();
    assert_eq!(resent, IN_FLIGHT, "{}", out.stderr);
    let resolved = out
        .stderr
        .lines()
        .filter(|l| l.contains("AlreadyExists after an earlier attempt: created by that attempt"))
        .count();
    assert_eq!(resolved, IN_FLIGHT, "{}", out.stderr);
    assert!(
        !out.stderr.lines().any(|l| l.starts_with("error")),
        "{}",
        out.stderr
    );
    assert_eq!(configmap_names(ns.as_str()).await, expected("reset", N));
    assert_eq!(proxy.writes().len(), N, "one applied write per object");
}
