//! The long tail of kubectl's words, beside kubectl of the server's release: Go's
//! parse errors (selectors, `--request-timeout`), files and URLs that cannot be read,
//! an unreachable server, `--raw`'s plain errors, and run-pod's `--overrides` (a
//! merge that changes the kind or the version, and JSON patches that fail). Each line
//! is run through kubectl and through the plugin and compared byte for byte (exit
//! code, stdout, stderr with klog's header normalised and the usage hint's command
//! swapped); every line agrees (the differences the plugins keep on purpose are the
//! differential harness's list, `differential.rs`).
//!
//! Nothing is created: every line is a dry run or fails first.

use std::path::Path;

use tests::harness::{Output, cluster};

struct Case {
    kubectl: &'static str,
    plugin: &'static str,
    args: Vec<String>,
}

fn case(kubectl: &'static str, plugin: &'static str, args: &[&str]) -> Case {
    Case {
        kubectl,
        plugin,
        args: args.iter().map(|a| a.to_string()).collect(),
    }
}

fn run(dir: &Path, args: &[String]) -> Output {
    cluster()
        .kubectl()
        .args(args)
        .current_dir(dir)
        .stdin("")
        .run()
}

/// stderr as compared: klog's headers normalised, the usage hints naming `command`.
fn normalised(stderr: &str, from: &str, to: &str) -> String {
    tests::klog::normalise(stderr)
        .join("\n")
        .replace(
            &format!("See 'kubectl {from} -h'"),
            &format!("See 'kubectl {to} -h'"),
        )
        .replace(
            &format!("See 'kubectl {from} --help'"),
            &format!("See 'kubectl {to} --help'"),
        )
}

fn cases(dir: &Path) -> Vec<Case> {
    let here = dir.display().to_string();
    let create = |args: &[&str]| case("create", "create-file", args);
    let run_pod = |args: &[&str]| {
        let mut all = vec!["x", "--image=busybox"];
        all.extend_from_slice(args);
        case("run", "run-pod", &all)
    };
    let patch = |patch: &str| {
        let overrides = format!("--overrides={patch}");
        let mut c = run_pod(&["--override-type=json", "--dry-run=client", "-o", "yaml"]);
        c.args.push(overrides);
        c
    };
    vec![
        // Selectors.
        create(&[
            "-f",
            "cm.yaml",
            "--dry-run=client",
            "-o",
            "name",
            "-l",
            "!!bad",
        ]),
        // --request-timeout: Go's words for a bad value; a negative one runs.
        create(&[
            "-f",
            "cm.yaml",
            "--dry-run=server",
            "-o",
            "name",
            "--request-timeout=abc",
        ]),
        create(&[
            "-f",
            "cm.yaml",
            "--dry-run=server",
            "-o",
            "name",
            "--request-timeout=-1s",
        ]),
        // Files and URLs.
        create(&[
            "-f",
            "cm.yaml",
            "--dry-run=server",
            "-o",
            "name",
            "--certificate-authority=/nonexistent",
        ]),
        create(&[
            "-f",
            "http://127.0.0.1:1/x.yaml",
            "--dry-run=server",
            "-o",
            "name",
        ]),
        create(&[
            "--raw",
            "/api/v1/namespaces/default/configmaps",
            "-f",
            &here,
        ]),
        create(&[
            "-f",
            "cm.yaml",
            "--dry-run=server",
            "-o",
            "name",
            "--server=https://127.0.0.1:1",
        ]),
        // --raw's checks are plain errors: no usage hint.
        create(&[
            "--raw",
            "/api/v1/namespaces/default/configmaps",
            "-f",
            "cm.yaml",
            "-o",
            "yaml",
        ]),
        create(&["--raw", "api/v1", "-f", "cm.yaml"]),
        // --overrides: a merge that changes what is created.
        run_pod(&[
            "--dry-run=server",
            "-o",
            "name",
            r#"--overrides={"kind":"ConfigMap"}"#,
        ]),
        run_pod(&[
            "--dry-run=client",
            "-o",
            "yaml",
            r#"--overrides={"apiVersion":"v2"}"#,
        ]),
        // JSON patches that fail, in evanphx/json-patch's words.
        patch(r#"[{"op":"remove","path":"/spec/nope"}]"#),
        patch(r#"[{"op":"test","path":"/kind","value":"Nope"}]"#),
        patch(r#"[{"op":"bogus","path":"/kind"}]"#),
        patch(r#"{"op":"add","path":"/kind","value":"x"}"#),
        patch(r#"[{"op":"add","path":"/spec/containers/5","value":{}}]"#),
        // The first word after a leading `--` is NAME.
        case(
            "run",
            "run-pod",
            &[
                "--image=busybox",
                "--dry-run=client",
                "-o",
                "name",
                "--",
                "echo",
            ],
        ),
    ]
}

#[test]
fn long_tail_reads_as_in_kubectl() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: long-tail\n",
    )
    .expect("manifest");
    let mut unexpected = Vec::new();
    let mut identical = 0;
    let all = cases(dir.path());
    for case in &all {
        let with = |command: &str| {
            let mut args = vec![command.to_string()];
            args.extend(case.args.iter().cloned());
            args
        };
        let theirs = run(dir.path(), &with(case.kubectl));
        let ours = run(dir.path(), &with(case.plugin));
        let expected = (
            theirs.code,
            theirs.stdout.clone(),
            normalised(&theirs.stderr, case.kubectl, case.plugin),
        );
        let got = (
            ours.code,
            ours.stdout.clone(),
            normalised(&ours.stderr, "", ""),
        );
        if expected == got {
            identical += 1;
        } else {
            unexpected.push(format!(
                "{} {:?}:\n  kubectl {} {expected:?}\n  {} {got:?}",
                case.plugin, case.args, case.kubectl, case.plugin
            ));
        }
    }
    eprintln!(
        "long tail: {identical} of {} lines identical to kubectl",
        all.len()
    );
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
}
