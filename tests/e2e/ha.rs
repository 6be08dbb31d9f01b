//! An API server dies under a command: two more kube-apiservers of the cluster behind
//! haproxy (`tests::ha`), and the one holding the command's connection killed
//! (`kill -9`) or stopped (SIGTERM, default shutdown flags) while it runs, as in every
//! HA cluster's control-plane upgrade.
//!
//! create-file does better than kubectl here, on purpose: every create whose answer
//! was lost is sent again on a new connection and resolved by name (an
//! `AlreadyExists` counts only for the object provably sent), and a server that says
//! it is shutting down gets nothing more. So all 3,000 objects are created, each
//! printed once, exit 0. kubectl's result in the same scenario is logged beside ours
//! (`e2e-report.txt`), not asserted: it may lose an outcome.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use tests::ha::HaCluster;
use tests::harness::cluster;
use tests::live::Stream;
use tests::objects::configmaps;

/// As many ConfigMaps as the trial that found the lost outcomes.
const N: usize = 3000;

/// When the serving server is signalled.
#[derive(Clone, Copy)]
enum When {
    /// Once this many objects were printed: mid-run, creates in flight.
    Printed(usize),
    /// As soon as the command holds a connection: its first requests (discovery,
    /// OpenAPI, the first creates).
    Connected,
}

/// What one command did while its server died.
struct Ran {
    code: Option<i32>,
    stdout: Vec<String>,
    stderr: String,
    took: Duration,
}

/// Runs `kubectl ARGS…` (or `kubectl create-file …`, the plugin) through the
/// balancer, signals the servers holding its connection with `sig` at `when`, waits
/// for its end, then starts those servers again.
async fn through_a_death(ha: &mut HaCluster, args: &[&str], sig: i32, when: When) -> Ran {
    let started = Instant::now();
    let mut live = ha.live(args);
    if let When::Printed(n) = when {
        let at = format!("configmap/cm-{:04} created", n - 1);
        live.line(Stream::Stdout, Duration::from_secs(60), &at, |l| l == at)
            .await;
    }
    let serving = ha.serving().await;
    for &server in &serving {
        ha.signal(server, sig);
    }
    let code = live.end(Duration::from_secs(120)).await;
    let ran = Ran {
        code,
        stdout: live.lines(Stream::Stdout),
        stderr: live.text(Stream::Stderr),
        took: started.elapsed(),
    };
    for server in serving {
        ha.restart(server).await;
    }
    ran
}

async fn names(ns: &str) -> Vec<String> {
    let api: Api<ConfigMap> = Api::namespaced(cluster().client().await, ns);
    tests::objects::configmap_names_in(&api).await
}

fn want() -> Vec<String> {
    (0..N).map(|i| format!("cm-{i:04}")).collect()
}

/// Runs kubectl, then create-file, each into a namespace of its own, through a
/// server that dies by `sig` at `when`; checks create-file's strong result and logs
/// kubectl's beside it.
async fn create_file_survives(sig: i32, when: When, what: &str) {
    let cluster = cluster();
    let mut ha = HaCluster::start(cluster, 2).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("cms.yaml");
    std::fs::write(&file, configmaps("cm", N)).expect("write");
    let file = file.to_str().expect("utf-8 path");
    let reference = cluster.namespace(&format!("ha-{what}-kubectl")).await;
    let ours_ns = cluster.namespace(&format!("ha-{what}")).await;

    let kubectl = through_a_death(
        &mut ha,
        &["create", "-n", reference.as_str(), "-f", file],
        sig,
        when,
    )
    .await;
    // -v=4: the client's lines name every create sent again, and why.
    let ours = through_a_death(
        &mut ha,
        &["create-file", "-v=4", "-n", ours_ns.as_str(), "-f", file],
        sig,
        when,
    )
    .await;

    let want = want();
    let created = |lines: &[String]| lines.iter().filter(|l| l.ends_with(" created")).count();
    let kubectl_names = names(reference.as_str()).await;
    let errors = |stderr: &str| {
        stderr
            .lines()
            .filter(|l| l.starts_with("error") || l.starts_with("Error"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let resent = |stderr: &str, words: &str| stderr.lines().filter(|l| l.contains(words)).count();
    tests::harness::report(&format!(
        "ha ({what}): kubectl: exit {:?}, {} printed, {} on the server, {:?}, errors {:?}; \
         create-file: exit {:?}, {} printed, {} creates resent after a lost answer, {} requests \
         refused by a server shutting down, {:?}",
        kubectl.code,
        created(&kubectl.stdout),
        kubectl_names.len(),
        kubectl.took,
        errors(&kubectl.stderr),
        ours.code,
        created(&ours.stdout),
        resent(&ours.stderr, "the answer to this create was lost"),
        resent(&ours.stderr, "refused by a server shutting down"),
        ours.took,
    ));

    let transcript = || {
        format!(
            "create-file's stderr:\n{}\n{}",
            ours.stderr
                .lines()
                .filter(|l| !l.contains("\"Response\""))
                .collect::<Vec<_>>()
                .join("\n"),
            ha.logs()
        )
    };
    assert_eq!(ours.code, Some(0), "{}", transcript());
    // Each printed once, in the input's order.
    assert_eq!(
        ours.stdout,
        want.iter()
            .map(|n| format!("configmap/{n} created"))
            .collect::<Vec<_>>(),
        "{}",
        transcript()
    );
    assert!(errors(&ours.stderr).is_empty(), "{}", transcript());
    // Each created, once: a second create of a name would have met AlreadyExists.
    assert_eq!(names(ours_ns.as_str()).await, want);
    // No ~20 s on a dying server's connection, nor Retry-After rounds.
    assert!(
        ours.took < Duration::from_secs(20),
        "create-file took {:?}\n{}",
        ours.took,
        transcript()
    );
}

#[tokio::test]
async fn create_file_creates_all_when_its_server_is_killed() {
    create_file_survives(libc::SIGKILL, When::Printed(300), "kill").await;
}

#[tokio::test]
async fn create_file_creates_all_when_its_server_shuts_down_at_the_start() {
    create_file_survives(libc::SIGTERM, When::Connected, "term").await;
}
