//! `-v=1` … `-v=9` beside kubectl 1.37, line by line: `run-pod` beside `kubectl run`,
//! `create-file` beside `kubectl create -f`, and rolling-update's requests in the same
//! forms; bare `--dry-run`'s klog warning.
//!
//! Normalised: what no two runs share — the header's time, pid and source line and
//! the millisecond figures (`tests::klog::normalise`) — and what differs by design or
//! by nature, each named where it is replaced: the namespace (each command has its
//! own), the `User-Agent` (a plugin names itself to the server), the values of the
//! answer's headers and the answer's body (ids, dates, resource versions, which the
//! server makes anew for each object), the order of kubectl's curl `-H` flags (Go's
//! map order, random), and whether `-v=9`'s `serverProcessingMilliseconds` is there
//! (only when not 0); kubectl's own client-go feature-gate lines (not the plugins':
//! see their READMEs) are left out.

use tests::harness::{TestNamespace as Namespace, cluster};

/// A klog line and the lines of its `key=<` blocks.
fn records(stderr: &str, ns: &str) -> Vec<String> {
    let mut records: Vec<String> = Vec::new();
    for line in tests::klog::normalise(stderr) {
        let line = line.replace(ns, "NS");
        if tests::klog::is_klog(&line) || line.starts_with("I0000") || !continues(&line) {
            records.push(line);
        } else if let Some(last) = records.last_mut() {
            last.push('\n');
            last.push_str(&line);
        }
    }
    records
        .into_iter()
        .filter(|r| !r.contains(" envvar.go:N] "))
        .map(|r| tidy_record(&r))
        .collect()
}

/// A line inside a klog block (`\t…`, ` >…`).
fn continues(line: &str) -> bool {
    line.starts_with('\t') || line.starts_with(" >")
}

/// One record with what differs by nature replaced (see the module).
fn tidy_record(record: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let response = record.contains("] \"Response\" ");
    for line in record.lines() {
        let line = if response && line.starts_with('\t') {
            // The answer's headers: their names, in order, not their values.
            format!("{}: V", line.split(": ").next().unwrap_or(line))
        } else if line.starts_with("\tUser-Agent: ") {
            "\tUser-Agent: UA".to_string()
        } else if line.starts_with("\tcurl ") {
            curl(line)
        } else if line.starts_with(" > milliseconds=N") {
            // Written only when not 0 (client-go's rule, and ours): whether it is
            // there is a millisecond figure too.
            line.replace(" serverProcessingMilliseconds=N", "")
        } else {
            line.to_string()
        };
        lines.push(line);
    }
    let text = lines.join("\n");
    if text.contains("] \"Response Body\" body=") {
        let head = text.split(" body=").next().unwrap_or("");
        let form = if text.contains(" body=<") {
            "<BLOCK>"
        } else if text.contains(" [truncated ") {
            "\"…[truncated]\""
        } else {
            "\"…\""
        };
        return format!("{head} body={form}");
    }
    text
}

/// A curl line with its `-H` flags sorted and the user agent replaced.
fn curl(line: &str) -> String {
    let (head, rest) = line.split_once("  -H ").unwrap_or((line, ""));
    let (flags, url) = rest.rsplit_once(" '").unwrap_or((rest, ""));
    let mut flags: Vec<String> = flags
        .split(" -H ")
        .map(|f| {
            if f.starts_with("\"User-Agent: ") {
                "\"User-Agent: UA\"".to_string()
            } else {
                f.to_string()
            }
        })
        .collect();
    flags.sort();
    format!("{head}  -H {} '{url}", flags.join(" -H "))
}

/// Runs `theirs` (kubectl) and `ours` (a plugin) at `-v=1` … `-v=9`, each in its own
/// namespace, and lists every level whose records differ.
async fn compare(
    name: &str,
    run: impl Fn(&Namespace, u8, bool) -> tests::harness::Output,
) -> Vec<String> {
    let theirs_ns = cluster().namespace(&format!("{name}-k")).await;
    let ours_ns = cluster().namespace(&format!("{name}-p")).await;
    let mut failures = Vec::new();
    for v in 1..=9 {
        let theirs = run(&theirs_ns, v, false);
        let ours = run(&ours_ns, v, true);
        theirs.success();
        ours.success();
        assert_eq!(ours.stdout, theirs.stdout, "-v={v}");
        let (t, o) = (
            records(&theirs.stderr, theirs_ns.as_str()),
            records(&ours.stderr, ours_ns.as_str()),
        );
        if t != o {
            failures.push(format!(
                "-v={v}: kubectl\n{}\n--- plugin\n{}\n",
                t.join("\n"),
                o.join("\n")
            ));
        }
    }
    failures
}

#[tokio::test]
async fn run_pod_logs_as_kubectl_run_at_every_level() {
    let failures = compare("verbose-run", |ns, v, ours| {
        let command = if ours { "run-pod" } else { "run" };
        cluster()
            .kubectl()
            .args([
                command,
                &format!("p{v}"),
                "--image=busybox",
                "-n",
                ns.as_str(),
            ])
            .arg(format!("-v={v}"))
            .run()
    })
    .await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// With discovery cached and validation off, both send one POST; the discovery and
/// OpenAPI requests themselves differ (see create-file's README).
#[tokio::test]
async fn create_file_logs_as_kubectl_create_at_every_level() {
    let cache = tempfile::tempdir().expect("cache");
    let cache_dir = cache.path().display().to_string();
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: verbose\ndata:\n  a: b\n";
    let run = |ns: &Namespace, v: u8, ours: bool| {
        let command = if ours { "create-file" } else { "create" };
        cluster()
            .kubectl()
            .args([command, "-f", "-", "--validate=false", "-n", ns.as_str()])
            .args(["--cache-dir", cache_dir.as_str()])
            .arg(format!("-v={v}"))
            .stdin(manifest)
            .run()
    };
    // Discovery cached for both first (a dry run creates nothing).
    let warm = cluster().namespace("verbose-warm").await;
    for ours in [false, true] {
        let out = cluster()
            .kubectl()
            .args([if ours { "create-file" } else { "create" }, "-f", "-"])
            .args(["--validate=false", "--dry-run=server", "-n", warm.as_str()])
            .args(["--cache-dir", cache_dir.as_str()])
            .stdin(manifest)
            .run();
        out.success();
    }
    let failures = compare("verbose-create", |ns, v, ours| {
        let out = run(ns, v, ours);
        // One ConfigMap per level: the next level creates it again.
        cluster()
            .kubectl()
            .args(["delete", "configmap", "verbose", "-n", ns.as_str()])
            .run()
            .success();
        out
    })
    .await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// rolling-update's requests (1.17's command: nothing to run beside) print in the
/// same forms: every request line a klog structured line of the level's shape, URLs
/// without `?&` or a bare `?`, bodies and curl lines from 8 and 9.
#[tokio::test]
async fn rolling_update_requests_print_in_kubectl_s_forms() {
    let ns = cluster().namespace("verbose-ru").await;
    for v in [6u8, 7, 8, 9] {
        // An RC that does not exist: one GET, refused with 404.
        let out = cluster()
            .plugin("rolling-update")
            .args(["missing", "--image=busybox", "-n", ns.as_str()])
            .arg(format!("-v={v}"))
            .run();
        out.code(1);
        let records = records(&out.stderr, ns.as_str());
        let get = format!(
            "\"Response\" verb=\"GET\" url=\"{}/api/v1/namespaces/NS/replicationcontrollers/missing\" status=\"404 Not Found\"",
            server()
        );
        let expected_response = match v {
            6 => format!("{get} milliseconds=N"),
            7 => "\"Response\" status=\"404 Not Found\" milliseconds=N".to_string(),
            8 => "\"Response\" status=\"404 Not Found\" headers=<".to_string(),
            _ => format!("{get} headers=<"),
        };
        assert!(
            records
                .iter()
                .any(|r| r.contains(&format!("round_trippers.go:N] {expected_response}"))),
            "-v={v}: {records:#?}"
        );
        for url in tests::klog::responses(&out.stderr) {
            assert!(
                !url.1.contains("?&") && !url.1.ends_with('?'),
                "-v={v}: {url:?}"
            );
        }
        let has = |s: &str| records.iter().any(|r| r.contains(s));
        assert_eq!(has("\"Request\" verb=\"GET\""), v == 7 || v == 8, "-v={v}");
        assert_eq!(has("] \"Response Body\" body="), v >= 8, "-v={v}");
        assert_eq!(
            has("\"Request\" curlCommand=<\n\tcurl -v -XGET  -H "),
            v == 9,
            "-v={v}"
        );
        assert!(!out.stderr.contains('\x1b'), "no colour");
    }
}

/// The server's URL as the requests name it.
fn server() -> String {
    let out = cluster()
        .kubectl()
        .args([
            "config",
            "view",
            "--minify",
            "-o",
            "jsonpath={.clusters[0].cluster.server}",
        ])
        .run();
    out.success();
    out.stdout.trim_end_matches('/').to_string()
}

/// Bare `--dry-run` is deprecated in a klog warning, in kubectl's line.
#[tokio::test]
async fn bare_dry_run_warns_in_a_klog_line() {
    let ns = cluster().namespace("verbose-dry-run").await;
    let records = |command: &str| {
        let out = cluster()
            .kubectl()
            .args([
                command,
                "d",
                "--image=busybox",
                "--dry-run",
                "-n",
                ns.as_str(),
            ])
            .run();
        out.success();
        assert_eq!(out.stdout, "pod/d created (dry run)\n");
        records(&out.stderr, ns.as_str())
    };
    let theirs = records("run");
    assert_eq!(records("run-pod"), theirs);
    assert_eq!(
        theirs,
        [
            "W0000 00:00:00.000000       0 helpers.go:N] --dry-run is deprecated and can be replaced with --dry-run=client."
        ]
    );
}

/// From `-v=4` an API error is preceded by the server's whole answer
/// (`helpers.go:N] server response object: {…}`), once per error and before the
/// errors, as kubectl's `StandardErrorMessage` logs it: with `kind` and `apiVersion`
/// from create -f's unstructured client, without them from run's typed one. A lone
/// Invalid logs nothing (CheckErr words it without `StandardErrorMessage`).
#[tokio::test]
async fn api_errors_log_the_server_s_answer_from_level_4() {
    let ns = cluster().namespace("verbose-errors").await;
    let two = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n";
    let invalid = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n";
    cluster()
        .kubectl()
        .args(["create", "-f", "-", "-n", ns.as_str()])
        .stdin(two)
        .run()
        .success();
    cluster()
        .kubectl()
        .args(["run", "p", "--image=busybox", "-n", ns.as_str()])
        .run()
        .success();
    let records = |args: &[&str], stdin: &str, v: u8| {
        let out = cluster()
            .kubectl()
            .args(args)
            .args(["-n", ns.as_str(), &format!("-v={v}")])
            .stdin(stdin)
            .run();
        out.code(1);
        // create-file's own debug lines (`report.rs`) are not kubectl's.
        let mut records = records(&out.stderr, ns.as_str());
        records.retain(|r| !r.contains(" report.rs:N] "));
        records
    };
    let cases: [(&[&str], &[&str], &str); 3] = [
        (&["create", "-f", "-"], &["create-file", "-f", "-"], two),
        (&["create", "-f", "-"], &["create-file", "-f", "-"], invalid),
        (
            &["run", "p", "--image=busybox"],
            &["run-pod", "p", "--image=busybox"],
            "",
        ),
    ];
    for (theirs, ours, stdin) in cases {
        for v in [3, 4] {
            let expected = records(theirs, stdin, v);
            assert_eq!(records(ours, stdin, v), expected, "{ours:?} -v={v}");
            let logged = expected
                .iter()
                .filter(|r| r.contains("server response object"))
                .count();
            let wanted = match (v, stdin) {
                (3, _) => 0,
                (_, s) if s == invalid => 0,
                (_, s) if s == two => 2,
                _ => 1,
            };
            assert_eq!(logged, wanted, "{theirs:?} -v={v}: {expected:#?}");
        }
    }
}
