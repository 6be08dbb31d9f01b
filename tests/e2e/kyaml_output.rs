//! `-o kyaml` byte for byte beside kubectl 1.37: the fidelity manifests and the YAML
//! writer's manifests through `kubectl create -f F -o kyaml` and `kubectl
//! create-file` (client dry run, server dry run, real create), and `kubectl run …
//! -o kyaml` beside `kubectl run-pod` (client and server dry run, real create). The
//! generators kubectl 1.37 no longer has are checked against run-pod's own `-o json`:
//! the same object, the same key order.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tests::harness::{Output, cluster, report};

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fidelity")
        .join(name)
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("cases directory")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

fn create(command: &str, dir: &Path, name: &str, namespace: &str, dry_run: &str) -> Output {
    let extra = crate::fidelity::case_args(&dir.join(name));
    cluster()
        .kubectl()
        .current_dir(dir)
        .args([command, "-n", namespace, "-f", name, "-o", "kyaml"])
        .arg(format!("--dry-run={dry_run}"))
        .args(&extra)
        .run()
}

/// What differs between two runs against a server masked: the values of `uid`,
/// `creationTimestamp`, `resourceVersion`, `time` and a service's addresses, the
/// namespace's name, the token volume's random suffix.
fn masked(text: &str, namespace: &str) -> String {
    text.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let volatile = [
                "uid: ",
                "creationTimestamp: ",
                "resourceVersion: ",
                "time: ",
                "clusterIP: ",
            ]
            .iter()
            .any(|key| trimmed.starts_with(key));
            // A service's `clusterIPs` items: addresses the server allocates.
            if trimmed.starts_with("\"10.96.") {
                return "IP,\n".to_string();
            }
            let mut line = line.replace(namespace, "NAMESPACE");
            // The service account token volume's random suffix.
            if let Some(at) = line.find("kube-api-access-") {
                let start = at + "kube-api-access-".len();
                let end = (start + 5).min(line.len());
                line.replace_range(start..end, "XXXXX");
            }
            match (volatile, line.find(": ")) {
                (true, Some(at)) => format!("{}: VOLATILE,\n", &line[..at]),
                _ => format!("{line}\n"),
            }
        })
        .collect()
}

fn differs(name: &str, k: &Output, o: &Output) -> Option<String> {
    (k.code != o.code || k.stdout != o.stdout || k.stderr != o.stderr).then(|| {
        format!(
            "{name}:\n--- kubectl (exit {})\n{}{}\n--- plugin (exit {})\n{}{}",
            k.code, k.stdout, k.stderr, o.code, o.stdout, o.stderr
        )
    })
}

#[tokio::test]
async fn create_file_writes_kyaml_as_kubectl_does() {
    let ns = cluster().namespace("kyaml-output").await;
    let mut compared = 0;
    let mut unexpected = Vec::new();
    for set in ["yaml", "cases"] {
        let cases = dir(set);
        for name in files(&cases) {
            let k = create("create", &cases, &name, ns.as_str(), "client");
            if k.code != 0 {
                continue;
            }
            compared += 1;
            let o = create("create-file", &cases, &name, ns.as_str(), "client");
            unexpected.extend(differs(&name, &k, &o));
        }
    }
    report(&format!(
        "kyaml output: {compared} manifests that kubectl prints, -o kyaml client dry run: {} identical",
        compared - unexpected.len()
    ));
    assert!(compared >= 50, "kubectl printed only {compared} manifests");
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n\n"));
}

/// The server's answers (server dry run, then a real create in two namespaces, one
/// for each command) written as kubectl writes them.
#[tokio::test]
async fn create_file_writes_the_server_s_answers_as_kubectl_does() {
    let theirs = cluster().namespace("kyaml-kubectl").await;
    let ours = cluster().namespace("kyaml-plugin").await;
    let cases = dir("yaml");
    let mut compared = 0;
    let mut unexpected = Vec::new();
    for name in files(&cases) {
        for dry_run in ["server", "none"] {
            let k = create("create", &cases, &name, theirs.as_str(), dry_run);
            if k.code != 0 {
                continue;
            }
            compared += 1;
            let o = create("create-file", &cases, &name, ours.as_str(), dry_run);
            let (k_text, o_text) = (
                masked(&k.stdout, theirs.as_str()),
                masked(&o.stdout, ours.as_str()),
            );
            if o.code != 0 || k_text != o_text {
                unexpected.push(format!(
                    "{name} --dry-run={dry_run}:\n--- kubectl\n{k_text}\n--- create-file (exit {})\n{o_text}{}",
                    o.code, o.stderr
                ));
            }
        }
    }
    report(&format!(
        "kyaml output: {compared} server answers, -o kyaml: {} identical",
        compared - unexpected.len()
    ));
    assert!(compared >= 4, "kubectl created only {compared} objects");
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n\n"));
}

/// `kubectl run` and `kubectl run-pod`, odd values included.
const RUN_CASES: &[(&str, &[&str])] = &[
    (
        "env-and-labels",
        &[
            "k1",
            "--image=busybox:1.36",
            "--labels=app=web,tier=8080,enabled=true,v=1.20",
            "--env=A=*",
            "--env=B=yes",
            "--env=C=two\nlines",
            "--env=D= lead",
            "--annotations=note=- a",
            "--port=8080",
        ],
    ),
    (
        "odd-args",
        &[
            "k2",
            "--image=busybox:1.36",
            "--",
            "*",
            "",
            "tab\there",
            "two\nlines",
            "trailing\n",
            "日本語",
        ],
    ),
    ("expose", &["k3", "--image=nginx", "--port=80", "--expose"]),
    (
        "overrides",
        &[
            "k4",
            "--image=nginx",
            "--overrides={\"metadata\":{\"annotations\":{\"y\":\"1:20\",\"c\":\"null\"}}}",
        ],
    ),
];

#[tokio::test]
async fn run_pod_writes_kyaml_as_kubectl_run_does() {
    let theirs = cluster().namespace("kyaml-run-kubectl").await;
    let ours = cluster().namespace("kyaml-run-plugin").await;
    let mut compared = 0;
    let mut unexpected = Vec::new();
    for dry_run in ["client", "server", "none"] {
        for (case, args) in RUN_CASES {
            let run = |command: &str, ns: &str| {
                let out = cluster()
                    .kubectl()
                    .args([command, "-n", ns, "-o", "kyaml"])
                    .arg(format!("--dry-run={dry_run}"))
                    .args(*args)
                    .run();
                Output {
                    stdout: masked(&out.stdout, ns),
                    stderr: out.stderr.replace(ns, "NAMESPACE"),
                    ..out
                }
            };
            compared += 1;
            let name = format!("{case} --dry-run={dry_run}");
            unexpected.extend(differs(
                &name,
                &run("run", theirs.as_str()),
                &run("run-pod", ours.as_str()),
            ));
        }
    }
    report(&format!(
        "kyaml output: {compared} run-pod cases against kubectl run -o kyaml: {} identical",
        compared - unexpected.len()
    ));
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n\n"));
}

/// The keys of a `-o json` or `-o kyaml` text in the order written (serde_json's
/// `Value` sorts them). One key a line in both; a quoted key is JSON-quoted in both.
fn key_order(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let (key, _) = line.split_once(": ")?;
            if key.starts_with('"') {
                serde_json::from_str::<String>(key).ok()
            } else {
                Some(key.to_string())
            }
        })
        .collect()
}

/// The generators kubectl 1.37 no longer has: `-o kyaml` is run-pod's `-o json`
/// object, keys in the same order.
#[test]
fn every_generator_writes_kyaml() {
    let generators = [
        vec!["--generator=run/v1"],
        vec!["--generator=deployment/apps.v1"],
        vec!["--replicas=2"],
        vec!["--generator=job/v1"],
        vec!["--schedule=*/5 * * * *"],
        vec!["--restart=Never"],
    ];
    for extra in generators {
        let run = |output: &str| {
            let out = cluster()
                .plugin("run-pod")
                .args(["g1", "--image=nginx", "--dry-run=client", "-o", output])
                .args(&extra)
                .run();
            out.success();
            out.stdout
        };
        let kyaml = run("kyaml");
        let json = run("json");
        assert!(kyaml.starts_with("---\n{\n"), "{extra:?}: {kyaml}");
        let from_kyaml: Value =
            serde_saphyr::from_str(&kyaml).unwrap_or_else(|e| panic!("{extra:?}: {e}\n{kyaml}"));
        let from_json: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(from_kyaml, from_json, "{extra:?}");
        assert_eq!(key_order(&kyaml), key_order(&json), "{extra:?}: key order");
    }
}
