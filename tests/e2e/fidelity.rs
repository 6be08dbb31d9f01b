//! The fidelity suite: every manifest under `tests/fidelity/cases/` goes
//! through `kubectl create -f F --dry-run=server -o json` and `kubectl create-file -f F
//! --dry-run=server -o json` (kubectl's plugin lookup) in the suite's namespace, and
//! the exit codes, the objects (server-set fields removed) and stderr are compared.
//! A manifest whose first line is `# args: …` adds those arguments to both commands.
//!
//! Every difference must be in [`KNOWN`], with its reason; the reasons are the ones
//! `plugins/create-file/README.md` lists. The agreement per column goes to the e2e
//! report. The suite's CRD (`samples.fidelity.kubeplug.io`, any fields kept) lets the
//! server echo back what each reader made of a scalar.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;
use tests::harness::{Cluster, Output, Release, cluster, legacy_second_run, report};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Exit,
    Object,
    Stderr,
}

/// Differences that are known on 1.20.2 beside kubectl 1.32, by manifest and column,
/// with their reason (the reasons are the ones `plugins/create-file/README.md` lists):
/// where kubectl 1.37 words or reads something differently, create-file follows the
/// newer kubectl.
const KNOWN: &[(&str, Column, &str)] = &[
    (
        "050-json-syntax-trailing.json",
        Column::Stderr,
        JSON_THEN_YAML,
    ),
    ("053-json-syntax-literal.json", Column::Exit, JSON_THEN_YAML),
    (
        "053-json-syntax-literal.json",
        Column::Object,
        JSON_THEN_YAML,
    ),
    (
        "053-json-syntax-literal.json",
        Column::Stderr,
        JSON_THEN_YAML,
    ),
    ("192-shape-flow-style.yaml", Column::Exit, JSON_THEN_YAML),
    ("192-shape-flow-style.yaml", Column::Object, JSON_THEN_YAML),
    ("192-shape-flow-style.yaml", Column::Stderr, JSON_THEN_YAML),
    ("293-json-then-yaml-word.json", Column::Exit, JSON_THEN_YAML),
    (
        "293-json-then-yaml-word.json",
        Column::Stderr,
        JSON_THEN_YAML,
    ),
    (
        "294-json-then-yaml-documents.json",
        Column::Stderr,
        JSON_THEN_YAML,
    ),
    (
        "295-json-two-values-then-word.json",
        Column::Stderr,
        JSON_THEN_YAML,
    ),
    (
        "296-json-with-yaml-scalars.json",
        Column::Stderr,
        JSON_THEN_YAML,
    ),
    (
        "290-no-validate-api-version-list.yaml",
        Column::Stderr,
        GO_EMBEDDED,
    ),
    (
        "291-no-validate-api-version-and-metadata.yaml",
        Column::Stderr,
        GO_EMBEDDED,
    ),
];

/// The same on the current server beside its own kubectl (v1.37.2): none.
const KNOWN_CURRENT: &[(&str, Column, &str)] = &[];

const JSON_THEN_YAML: &str = "a stream that starts like JSON but breaks before its second value is read as YAML from there, as kubectl 1.37 reads it (flow style, bare words, YAML after one JSON object; past two values its JSON error has no `json: offset N:`); kubectl 1.32 ended at the JSON syntax error";
const GO_EMBEDDED: &str = "with `--validate=false`, an `apiVersion` that is not a string is Go's decoding error as kubectl 1.37 words it (`metadataOnlyObject.TypeMeta.apiVersion`); kubectl 1.32 wrote `metadataOnlyObject.apiVersion`";

/// The known differences on `release`'s server.
fn known(release: Release) -> &'static [(&'static str, Column, &'static str)] {
    match release {
        Release::V1_20 => KNOWN,
        Release::Current => KNOWN_CURRENT,
    }
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fidelity/cases")
}

/// The objects of `-o json` output (one JSON value per object), with the fields the
/// server sets on every request removed.
fn objects(stdout: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for value in serde_json::Deserializer::from_str(stdout).into_iter::<Value>() {
        let Ok(mut value) = value else {
            out.push(Value::String(format!("unparsable output: {stdout}")));
            break;
        };
        normalise(&mut value);
        out.push(value);
    }
    out
}

fn normalise(value: &mut Value) {
    // The server's uid also shows up in labels and selectors (a Job's controller-uid).
    if let Some(uid) = value.pointer("/metadata/uid").and_then(Value::as_str) {
        let uid = uid.to_string();
        let text = value.to_string().replace(&uid, "UID");
        if let Ok(replaced) = serde_json::from_str(&text) {
            *value = replaced;
        }
    }
    // A current server's ServiceAccount admission adds a projected token volume with
    // a random suffix (`kube-api-access-x7k2p`), named in the volume and its mount.
    let text = value.to_string();
    if let Some(at) = text.find("\"kube-api-access-") {
        let start = at + "\"kube-api-access-".len();
        let suffix: String = text[start..].chars().take_while(|c| *c != '"').collect();
        let replaced = text.replace(
            &format!("kube-api-access-{suffix}\""),
            "kube-api-access-SUFFIX\"",
        );
        if let Ok(replaced) = serde_json::from_str(&replaced) {
            *value = replaced;
        }
    }
    // Set by the server at creation (a PersistentVolume's, since 1.29).
    if let Some(status) = value.get_mut("status").and_then(Value::as_object_mut) {
        status.remove("lastPhaseTransitionTime");
    }
    if let Some(items) = value.get_mut("items").and_then(Value::as_array_mut) {
        items.iter_mut().for_each(normalise);
    }
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in [
            "uid",
            "creationTimestamp",
            "resourceVersion",
            "managedFields",
        ] {
            meta.remove(field);
        }
        if meta.contains_key("generateName") {
            meta.remove("name");
        }
    }
}

/// The arguments a case file's first line adds to both commands (`# args: …`).
pub(crate) fn case_args(path: &Path) -> Vec<String> {
    let text = std::fs::read(path).expect("read case");
    text.strip_prefix(b"# args: ")
        .and_then(|rest| rest.split(|&b| b == b'\n').next())
        .map(|line| {
            String::from_utf8_lossy(line)
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

struct Case {
    name: String,
    kubectl: Output,
    ours: Output,
}

fn run_case(cluster: &Cluster, dir: &Path, name: &str, namespace: &str) -> Case {
    let extra = case_args(&dir.join(name));
    let run = |command: &str| {
        cluster
            .kubectl()
            .current_dir(dir)
            .args([command, "-n", namespace, "-f", name])
            .args(["--dry-run=server", "-o", "json"])
            .args(&extra)
            .run()
    };
    Case {
        name: name.to_string(),
        kubectl: run("create"),
        ours: run("create-file"),
    }
}

/// Runs `cases` four at a time (two cores, two commands per case).
fn run_all(cluster: &Cluster, dir: &Path, names: Vec<String>, namespace: &str) -> Vec<Case> {
    let queue = Mutex::new(names.into_iter().enumerate().collect::<Vec<_>>());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let next = queue.lock().expect("queue").pop();
                    let Some((i, name)) = next else { break };
                    let case = run_case(cluster, dir, &name, namespace);
                    results.lock().expect("results").push((i, case));
                }
            });
        }
    });
    let mut results = results.into_inner().expect("results");
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, c)| c).collect()
}

fn install_crd(cluster: &Cluster) {
    let crd = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
        "metadata":{"name":"samples.fidelity.kubeplug.io"},
        "spec":{"group":"fidelity.kubeplug.io","scope":"Namespaced",
          "names":{"plural":"samples","singular":"sample","kind":"Sample"},
          "versions":[{"name":"v1","served":true,"storage":true,
            "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}"#;
    let out = cluster
        .kubectl()
        .args(["apply", "-f", "-"])
        .stdin(crd)
        .run();
    out.success();
    cluster
        .kubectl()
        .args(["wait", "--for=condition=Established", "--timeout=60s"])
        .arg("crd/samples.fidelity.kubeplug.io")
        .run()
        .success();
}

/// On the shared cluster (the current server by default) beside its kubectl.
#[tokio::test]
async fn manifests_read_as_kubectl_reads_them() {
    manifests_on(cluster()).await;
}

/// On 1.20.2 beside kubectl 1.32, where kubectl validates on the client.
#[tokio::test]
async fn manifests_on_1_20_read_as_kubectl_1_32_reads_them() {
    // Skipped where the shared cluster is 1.20.2: the test above ran on it.
    if let Some(legacy) = legacy_second_run() {
        manifests_on(legacy).await;
    }
}

async fn manifests_on(cluster: &'static Cluster) {
    let known = known(cluster.release);
    let ns = cluster.namespace("fidelity").await;
    install_crd(cluster);
    let dir = cases_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("cases directory")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    assert!(names.len() >= 150, "only {} manifests", names.len());
    let started = std::time::Instant::now();
    let cases = run_all(cluster, &dir, names, ns.as_str());

    let mut agree = [0usize; 3];
    let mut unexpected = Vec::new();
    let mut used = vec![false; known.len()];
    for case in &cases {
        let (k, o) = (&case.kubectl, &case.ours);
        let columns = [
            (Column::Exit, k.code == o.code),
            (Column::Object, objects(&k.stdout) == objects(&o.stdout)),
            (Column::Stderr, k.stderr == o.stderr),
        ];
        for (i, (column, same)) in columns.into_iter().enumerate() {
            let known_at = known
                .iter()
                .position(|(name, c, _)| *name == case.name && *c == column);
            if let Some(at) = known_at {
                used[at] = !same;
            }
            if same {
                agree[i] += 1;
            } else if known_at.is_none() {
                unexpected.push(format!(
                    "{} differs in {column:?}:\n--- kubectl (exit {})\n{}{}\n--- create-file (exit {})\n{}{}",
                    case.name, k.code, k.stdout, k.stderr, o.code, o.stdout, o.stderr
                ));
            }
        }
    }
    let n = cases.len();
    report(&format!(
        "fidelity: {n} manifests on {} against its kubectl in {:.0?}: exit {}/{n}, object {}/{n}, stderr {}/{n} agree; {} known differences listed",
        cluster.release,
        started.elapsed(),
        agree[0],
        agree[1],
        agree[2],
        known.len()
    ));
    // An entry that no longer differs fails, so the list stays true.
    for (at, (name, column, _)) in known.iter().enumerate() {
        assert!(
            used[at],
            "{name} {column:?} agrees with kubectl now: remove it from KNOWN"
        );
    }
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/create-file/README.md"),
    )
    .expect("README");
    for (name, _, reason) in known {
        assert!(
            readme.contains(reason),
            "{name}: reason not in create-file's README: {reason}"
        );
    }
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n\n"));
}

/// run-pod's error paths against `kubectl run`: arguments, and the differences known.
const RUN_CASES: &[(&str, &[&str])] = &[
    ("bad-image", &["r1", "--image=Bad Image!"]),
    ("bad-name", &["Bad_Name", "--image=nginx"]),
    (
        "bad-overrides-json",
        &["r3", "--image=nginx", "--overrides={bad"],
    ),
    ("bogus-restart", &["r4", "--image=nginx", "--restart=Bogus"]),
    ("no-image", &["r5"]),
    ("no-name", &["--image=nginx"]),
    ("bad-port", &["r7", "--image=nginx", "--port=abc"]),
    ("bad-labels", &["r8", "--image=nginx", "--labels=bad"]),
    ("bad-env", &["r9", "--image=nginx", "--env=NOEQUALS"]),
    (
        "overrides-wrong-type",
        &[
            "r10",
            "--image=nginx",
            "--overrides={\"spec\":{\"containers\":[{\"name\":\"r10\",\"image\":1}]}}",
        ],
    ),
    (
        "overrides-not-object",
        &["r12", "--image=nginx", "--overrides=[1]"],
    ),
    (
        "bad-annotations",
        &["r14", "--image=nginx", "--annotations=bad"],
    ),
    ("bad-dry-run", &["r15", "--image=nginx", "--dry-run=bogus"]),
    // Four checks kubectl 1.37 words without 1.32's usage hint (or, for the pull
    // policy, with the valid values).
    ("rm-detached", &["r20", "--image=nginx", "--rm"]),
    (
        "attach-dry-run",
        &["r21", "--image=nginx", "--attach", "--dry-run=client"],
    ),
    (
        "zero-running-timeout",
        &["r22", "--image=nginx", "--pod-running-timeout=0s"],
    ),
    (
        "bad-pull-policy",
        &["r23", "--image=nginx", "--image-pull-policy=Sometimes"],
    ),
    ("two-names", &["r16", "r17", "--image=nginx"]),
    (
        "good",
        &["r18", "--image=nginx", "--labels=a=b", "--env=A=1"],
    ),
    (
        "good-overrides",
        &[
            "r19",
            "--image=nginx",
            "--overrides={\"spec\":{\"hostname\":\"h\"}}",
        ],
    ),
];

/// (case, reason) for run-pod's known stderr differences.
const RUN_KNOWN: &[(&str, &str)] = &[
    ("no-image", KLOG),
    ("overrides-wrong-type", GO_TYPES),
    ("overrides-not-object", GO_TYPES),
    ("no-name", NEWER),
    ("bad-image", NEWER),
    ("bad-port", NEWER),
    ("bogus-restart", NEWER),
    ("rm-detached", NEWER),
    ("attach-dry-run", NEWER),
    ("zero-running-timeout", NEWER),
    ("bad-pull-policy", NEWER),
];

const NEWER: &str = "where kubectl 1.37 words `run`'s checks differently from 1.32 (`invalid image name`, `--port must be a number`, the restart and image pull policies' valid values, no usage hint after `NAME is required for run`, `--rm` without attaching, `--attach` with `--dry-run` or `--pod-running-timeout=0s`), run-pod follows 1.37";

const KLOG: &str = "a missing required flag is `error: required flag(s) \"image\" not set`, where kubectl logs it through klog with a timestamp and its source line";
const GO_TYPES: &str = "where kubectl prints a Go type or struct field (`Go struct field Container.spec.containers.image`, `struct { APIVersion string …}`), run-pod names the JSON type or the missing field";

/// (case, reason) for run-pod's known stderr differences on the current server beside
/// its own kubectl: kubectl 1.37's wording that run-pod does not follow yet.
const RUN_KNOWN_CURRENT: &[(&str, &str)] = &[
    ("overrides-wrong-type", GO_TYPES),
    ("overrides-not-object", GO_TYPES),
];

/// On the shared cluster (the current server by default) beside its kubectl.
#[tokio::test]
async fn run_pod_error_paths_match_kubectl_run() {
    run_pod_error_paths_on(cluster()).await;
}

/// On 1.20.2 beside kubectl 1.32.
#[tokio::test]
async fn run_pod_error_paths_on_1_20_match_kubectl_1_32_run() {
    // Skipped where the shared cluster is 1.20.2: the test above ran on it.
    if let Some(legacy) = legacy_second_run() {
        run_pod_error_paths_on(legacy).await;
    }
}

async fn run_pod_error_paths_on(cluster: &'static Cluster) {
    let run_known = match cluster.release {
        Release::V1_20 => RUN_KNOWN,
        Release::Current => RUN_KNOWN_CURRENT,
    };
    let ns = cluster.namespace("fidelity-run").await;
    let mut agree = [0usize; 3];
    let mut unexpected = Vec::new();
    for (case, args) in RUN_CASES {
        // The cases that set --dry-run themselves keep it alone.
        let dry_run = if args.iter().any(|a| a.starts_with("--dry-run")) {
            None
        } else {
            Some("--dry-run=server")
        };
        let run = |command: &str| {
            cluster
                .kubectl()
                .args([command, "-n", ns.as_str(), "-o", "json"])
                .args(dry_run)
                .args(*args)
                .run()
        };
        let (k, o) = (run("run"), run("run-pod"));
        // kubectl's usage hint names the command that was run (`See '<command path>
        // -h' …`), so each names its own; the rest must be byte for byte.
        let hint = |command: &str| format!("See '{command} -h' for help and examples");
        let o_stderr = o
            .stderr
            .replace(&hint("kubectl run-pod"), &hint("kubectl run"));
        let same = [
            k.code == o.code,
            objects(&k.stdout) == objects(&o.stdout),
            k.stderr == o_stderr,
        ];
        let known = run_known.iter().any(|(c, _)| c == case);
        if known && same[2] {
            unexpected.push(format!(
                "{case} agrees with kubectl now: remove it from RUN_KNOWN"
            ));
        }
        for (i, same) in same.into_iter().enumerate() {
            if same {
                agree[i] += 1;
            } else if i != 2 || !known {
                unexpected.push(format!(
                    "{case} differs in column {i}:\n--- kubectl run (exit {})\n{}{}\n--- run-pod (exit {})\n{}{}",
                    k.code, k.stdout, k.stderr, o.code, o.stdout, o.stderr
                ));
            }
        }
    }
    let n = RUN_CASES.len();
    report(&format!(
        "fidelity: {n} run-pod cases on {} against its kubectl run: exit {}/{n}, object {}/{n}, stderr {}/{n} agree; {} known differences listed",
        cluster.release,
        agree[0],
        agree[1],
        agree[2],
        run_known.len()
    ));
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/run-pod/README.md"),
    )
    .expect("README");
    for (case, reason) in run_known {
        assert!(
            readme.contains(reason),
            "{case}: reason not in run-pod's README: {reason}"
        );
    }
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n\n"));
}
