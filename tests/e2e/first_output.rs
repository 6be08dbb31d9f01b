//! run-pod never loses a container's first output, on a real kubelet: 100 runs of
//! `-i --rm` of a container that prints 50 lines at once and 50 more while the
//! attach connects, each run's output complete and unrepeated. kubectl's rate beside
//! it is reported, not asserted (it reads the log before it attaches, and loses what
//! is written in between now and then).
//!
//! Timeouts are upper bounds for a run, never timed assertions.

// The helpers below run only inside tests: an unwrap there is a failed assertion.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};

use tests::harness::{Cluster, Output, cluster, report};

const RUNS: usize = 100;
const AT_ONCE: usize = 4;

/// 1 to 50 at once as the container starts (busybox's `seq` writes them in one
/// chunk), then 51 to 100 every 10 ms, across the attach's connection; then a line
/// read from stdin, which only the attach brings.
const SCRIPT: &str = concat!(
    "seq 1 50; for i in $(seq 51 100); do echo $i; usleep 10000; done; ",
    localcluster::read_line!(),
    "; echo got $x"
);

fn expected(name: &str, ns: &str) -> String {
    let lines: String = (1..=100).map(|i| format!("{i}\n")).collect();
    format!("{lines}got end\npod \"{name}\" deleted from {ns} namespace\n")
}

fn run(cluster: &Cluster, program: &str, name: &str, ns: &str) -> Output {
    cluster
        .kubectl()
        .args([
            program,
            name,
            "-i",
            "--rm",
            "--image=busybox",
            "--restart=Never",
        ])
        .args(["-n", ns, "--", "sh", "-c", SCRIPT])
        .stdin("end\n")
        .run()
}

/// Runs `program` [`RUNS`] times, [`AT_ONCE`] at a time; the runs whose output was
/// not the container's whole output once, with what they printed.
fn runs(cluster: &'static Cluster, program: &'static str, prefix: &str, ns: &str) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..AT_ONCE {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= RUNS {
                        return;
                    }
                    let name = format!("{prefix}{i}");
                    let out = run(cluster, program, &name, ns);
                    if out.code != 0 || out.stdout != expected(&name, ns) {
                        failed.lock().unwrap().push(format!(
                            "{name}: exit {}\n--- stdout\n{}--- stderr\n{}",
                            out.code, out.stdout, out.stderr
                        ));
                    }
                }
            });
        }
    });
    failed.into_inner().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn run_pod_never_loses_the_first_output_where_kubectl_sometimes_does() {
    let cluster = cluster();
    let namespace = cluster.namespace("first-output").await;
    let ns = namespace.as_str().to_string();
    let ours = {
        let ns = ns.clone();
        tokio::task::spawn_blocking(move || runs(cluster, "run-pod", "o", &ns))
            .await
            .unwrap()
    };
    report(&format!(
        "first output: run-pod -i --rm complete and unrepeated in {}/{RUNS} runs",
        RUNS - ours.len()
    ));
    if let Some(sample) = ours.first() {
        report(&format!("first output: one of run-pod's: {sample}"));
    }
    let theirs = {
        let ns = ns.clone();
        tokio::task::spawn_blocking(move || runs(cluster, "run", "k", &ns))
            .await
            .unwrap()
    };
    report(&format!(
        "first output: kubectl 1.37 run -i --rm complete and unrepeated in {}/{RUNS} runs",
        RUNS - theirs.len()
    ));
    if let Some(sample) = theirs.first() {
        report(&format!(
            "first output: one of kubectl's, for comparison: {sample}"
        ));
    }
    assert!(
        ours.is_empty(),
        "{} runs differ:\n{}",
        ours.len(),
        ours.join("\n")
    );
}
