//! `-o yaml` byte for byte beside kubectl: the manifests under
//! `tests/fidelity/yaml/` (every scalar style go-yaml v2 picks, in keys and values,
//! nested in lists and maps; long lines around the 80-column fold; the errors kubectl's
//! YAML writer raises) through `kubectl create -f F --dry-run=client -o yaml` and
//! `kubectl create-file`; the fidelity suite's manifests the same way where kubectl
//! prints them; and `kubectl run … --dry-run=client -o yaml` beside `kubectl run-pod`
//! with odd `--env`, `--labels`, `--annotations` and arguments. Exit code, stdout and
//! stderr must all agree.

use std::path::{Path, PathBuf};

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

/// `create` or `create-file` with `-f name --dry-run=client -o yaml` (and the
/// manifest's own `# args:` line, as in the fidelity suite).
fn create(command: &str, dir: &Path, name: &str, namespace: &str) -> Output {
    let extra = crate::fidelity::case_args(&dir.join(name));
    cluster()
        .kubectl()
        .current_dir(dir)
        .args([command, "-n", namespace, "-f", name])
        .args(["--dry-run=client", "-o", "yaml"])
        .args(&extra)
        .run()
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
async fn create_file_writes_yaml_as_kubectl_does() {
    let ns = cluster().namespace("yaml-output").await;
    let yaml = dir("yaml");
    let names = files(&yaml);
    assert!(names.len() >= 9, "only {} manifests", names.len());
    let mut unexpected = Vec::new();
    for name in &names {
        let k = create("create", &yaml, name, ns.as_str());
        let o = create("create-file", &yaml, name, ns.as_str());
        unexpected.extend(differs(name, &k, &o));
    }
    // The writer's own errors are part of the comparison: both must fail, in
    // kubectl's words.
    for name in ["control-character.json", "nel-in-key.json"] {
        let o = create("create-file", &yaml, name, ns.as_str());
        assert!(
            o.code == 1 && o.stderr.contains("error: yaml: "),
            "{name}: {o:?}"
        );
    }
    report(&format!(
        "yaml output: {} manifests, -o yaml against the server's kubectl: {} identical",
        names.len(),
        names.len() - unexpected.len()
    ));
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n\n"));
}

/// The fidelity suite's manifests (read as kubectl reads them) written back: wherever
/// kubectl prints the objects, create-file prints the same bytes. The suite itself
/// compares the objects and the errors (`fidelity.rs`).
#[tokio::test]
async fn fidelity_manifests_write_back_as_kubectl_writes_them() {
    let ns = cluster().namespace("yaml-fidelity").await;
    let cases = dir("cases");
    let names = files(&cases);
    let mut compared = 0;
    let mut unexpected = Vec::new();
    for name in &names {
        let k = create("create", &cases, name, ns.as_str());
        if k.code != 0 {
            continue;
        }
        compared += 1;
        let o = create("create-file", &cases, name, ns.as_str());
        if o.code != 0 || o.stdout != k.stdout {
            unexpected.push(format!(
                "{name}:\n--- kubectl\n{}\n--- create-file (exit {})\n{}{}",
                k.stdout, o.code, o.stdout, o.stderr
            ));
        }
    }
    report(&format!(
        "yaml output: {compared} fidelity manifests that kubectl prints, -o yaml: {} identical",
        compared - unexpected.len()
    ));
    assert!(compared >= 50, "kubectl printed only {compared} manifests");
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n\n"));
}

/// `kubectl run` and `kubectl run-pod` with values that need each scalar style.
const RUN_CASES: &[(&str, &[&str])] = &[
    (
        "env-and-labels",
        &[
            "y1",
            "--image=busybox:1.36",
            "--labels=app=web,tier=8080,enabled=true,v=1.20",
            "--env=A=*",
            "--env=B=yes",
            "--env=C=127.0.0.1",
            "--env=D=2024-01-02",
            "--env=E=0x10",
            "--env=F=it's",
            "--env=G=a: b",
            "--env=H= lead",
            "--annotations=note=- a",
            "--annotations=long=a long annotation value that goes on and on past the eighty column fold of go-yaml",
        ],
    ),
    (
        "shell-script",
        &[
            "y2",
            "--image=busybox:1.36",
            "--command",
            "--",
            "sh",
            "-c",
            "i=0; while true; do echo \"$i: $(date)\"; i=$((i+1)); sleep 1; done",
        ],
    ),
    (
        "odd-args",
        &[
            "y3",
            "--image=busybox:1.36",
            "--",
            "*",
            "- a",
            "~",
            "",
            "tab\there",
            "two\nlines",
            "trailing\n",
            "日本語",
            "😀",
        ],
    ),
    (
        "deployment-like-overrides",
        &[
            "y4",
            "--image=nginx",
            "--port=8080",
            "--overrides={\"metadata\":{\"annotations\":{\"a\":\"{{ .x }}\",\"b\":\"1:20\",\"c\":\"null\"}}}",
        ],
    ),
];

#[tokio::test]
async fn run_pod_writes_yaml_as_kubectl_run_does() {
    let ns = cluster().namespace("yaml-run").await;
    let mut unexpected = Vec::new();
    for (case, args) in RUN_CASES {
        let run = |command: &str| {
            cluster()
                .kubectl()
                .args([command, "-n", ns.as_str(), "--dry-run=client", "-o", "yaml"])
                .args(*args)
                .run()
        };
        unexpected.extend(differs(case, &run("run"), &run("run-pod")));
    }
    report(&format!(
        "yaml output: {} run-pod cases against kubectl run -o yaml: {} identical",
        RUN_CASES.len(),
        RUN_CASES.len() - unexpected.len()
    ));
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n\n"));
}
