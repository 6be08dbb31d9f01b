//! How far `kubectl create-file` runs ahead of its output when an early object is
//! slow: the server holds the first ConfigMap's create (an admission webhook that
//! answers only when the test says so, `tests::faults::webhook`), and the webhook
//! counts the creates that reach the server meanwhile. Counted on the server's side,
//! triggered by events (the client's `-v=4` line saying the window is full, the
//! webhook holding the create), never by time.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};
use tests::faults::webhook::{CONFIGMAP_CREATES, HoldingWebhook};
use tests::harness::{cluster, spawn_plugin};
use tests::objects::configmaps;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};

/// A create-file run with `--concurrency=2 -v=4` of `file` into `ns`: its stdout
/// collected in the background, its stderr read until the `window full` line (the
/// event the tests act on; bounded, as the server fails a held create after the
/// webhook's 30 s and the run then ends). The lines read so far are returned too.
async fn spawn_until_window_full(
    ns: &str,
    file: &std::path::Path,
) -> (
    tokio::process::Child,
    tokio::task::JoinHandle<String>,
    tokio::io::Lines<BufReader<tokio::process::ChildStderr>>,
    Vec<String>,
) {
    let c = cluster();
    let args = ["-n", ns, "--concurrency=2", "-v=4", "-f"];
    let mut child = spawn_plugin(
        &c.plugin_dir,
        "create-file",
        &c.kubeconfig,
        args.iter()
            .map(std::ffi::OsStr::new)
            .chain([file.as_os_str()]),
    );
    let mut stdout = child.stdout.take().expect("piped stdout");
    let printed = tokio::spawn(async move {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text).await;
        text
    });
    let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
    let mut log = Vec::new();
    let full = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = stderr.next_line().await {
            let full = line.contains("window full");
            log.push(line);
            if full {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(
        full,
        Ok(true),
        "no `window full` line; stderr:\n{}",
        log.join("\n")
    );
    (child, printed, stderr, log)
}

/// The names of the ConfigMaps of `ns` that start with `prefix`, sorted.
async fn stored(ns: &str, prefix: &str) -> Vec<String> {
    let api: Api<ConfigMap> = Api::namespaced(cluster().client().await, ns);
    let mut names: Vec<String> = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|cm| cm.metadata.name)
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    names
}

/// With `--concurrency=2` the window is 32 creates (16 per slot, see create-file's
/// `create::window`): while the first create is held, exactly the 31 after it reach
/// the server (some may arrive before it), and nothing more until it is answered;
/// then the rest follow, every object is created once and printed once, in input
/// order.
#[tokio::test]
async fn a_held_first_create_lets_only_the_window_run_ahead() {
    const N: usize = 100;
    const WINDOW: usize = 32;
    let c = cluster();
    let ns = c.namespace("cf-window").await;
    let client = c.client().await;
    let webhook = HoldingWebhook::start(
        &client,
        c.loopback_listener(),
        ns.as_str(),
        CONFIGMAP_CREATES,
        "win-0000",
    )
    .await
    .expect("webhook");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("cms.yaml");
    std::fs::write(&file, configmaps("win", N)).expect("write input");
    let (mut child, printed, mut stderr, mut log) =
        spawn_until_window_full(ns.as_str(), &file).await;
    assert!(webhook.holding(), "the first create is held by the webhook");
    // The held create and every one sent before it was answered.
    let sent = webhook
        .admitted()
        .iter()
        .filter(|a| a.before_release)
        .count();
    webhook.release();

    let status = tokio::time::timeout(Duration::from_secs(120), child.wait())
        .await
        .expect("create-file ends once the first create is answered")
        .expect("wait");
    while let Ok(Some(line)) = stderr.next_line().await {
        log.push(line);
    }
    let printed = printed.await.expect("stdout");
    assert!(status.success(), "{status}; stderr:\n{}", log.join("\n"));
    assert_eq!(
        sent, WINDOW,
        "creates sent before the first was answered: the window, the first included"
    );
    let expected: Vec<String> = (0..N)
        .map(|i| format!("configmap/win-{i:04} created"))
        .collect();
    assert_eq!(
        printed.lines().collect::<Vec<_>>(),
        expected,
        "in input order"
    );

    // Every create reached the server once; every object exists.
    let mut admitted: Vec<String> = webhook.admitted().into_iter().map(|a| a.name).collect();
    admitted.sort();
    let names: Vec<String> = (0..N).map(|i| format!("win-{i:04}")).collect();
    assert_eq!(admitted, names, "each create sent once");
    assert_eq!(stored(ns.as_str(), "win-").await, names);
    webhook.remove(&client).await.expect("remove the webhook");
}

/// SIGTERM, how CI cancels a job, mid-run: create-file has no handler (as kubectl
/// has none), so the signal ends it at once, and a shell reports 143. What it did is
/// whole: every line it printed names an object that exists, and the same command
/// again creates the rest, reporting `AlreadyExists` for the others as kubectl does:
/// each object created once. Signalled at an event (the first create held by the
/// server, the window full behind it), not after a delay.
#[tokio::test]
async fn sigterm_mid_run_then_the_same_command_creates_the_rest() {
    const N: usize = 100;
    let c = cluster();
    let ns = c.namespace("cf-sigterm").await;
    let client = c.client().await;
    let webhook = HoldingWebhook::start(
        &client,
        c.loopback_listener(),
        ns.as_str(),
        CONFIGMAP_CREATES,
        "term-0000",
    )
    .await
    .expect("webhook");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("cms.yaml");
    std::fs::write(&file, configmaps("term", N)).expect("write input");
    let (mut child, printed, _stderr, _) = spawn_until_window_full(ns.as_str(), &file).await;
    assert!(webhook.holding(), "the first create is held");
    assert!(localcluster::controlplane::signal(
        child.id().expect("pid"),
        libc::SIGTERM
    ));
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("SIGTERM ends it at once")
        .expect("wait");
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status}");
    webhook.release();

    let printed = printed.await.expect("stdout");
    let existing = stored(ns.as_str(), "term-").await;
    for line in printed.lines() {
        let name = line
            .strip_prefix("configmap/")
            .and_then(|l| l.strip_suffix(" created"))
            .unwrap_or_else(|| panic!("an unexpected line {line:?}"));
        assert!(
            existing.iter().any(|n| n == name),
            "{name} printed, not stored"
        );
    }

    // The same command again: exit 1 (AlreadyExists for what the first run made),
    // every other object created; each of the N reported once, one way or the other.
    let again = c
        .plugin("create-file")
        .env("KUBECONFIG", &c.kubeconfig)
        .args(["-n", ns.as_str(), "-f", file.to_str().expect("utf-8 path")])
        .run();
    again.code(1);
    let mut reported: Vec<String> = again
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("configmap/")?.strip_suffix(" created"))
        .map(str::to_string)
        .collect();
    reported.extend(again.stderr.lines().filter_map(|l| {
        let rest = l.split("configmaps \"").nth(1)?;
        let (name, tail) = rest.split_once('"')?;
        (tail == " already exists").then(|| name.to_string())
    }));
    reported.sort();
    let names: Vec<String> = (0..N).map(|i| format!("term-{i:04}")).collect();
    assert_eq!(
        reported, names,
        "stdout:\n{}\nstderr:\n{}",
        again.stdout, again.stderr
    );
    assert_eq!(stored(ns.as_str(), "term-").await, names);
    webhook.remove(&client).await.expect("remove the webhook");
}
