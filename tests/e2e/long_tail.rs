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
        // A URL host that is not ASCII and that IDNA refuses: Go's resolver refuses it
        // as written without asking a server (so nothing leaves the machine).
        create(&[
            "-f",
            "https://-bü.example/x.yaml",
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

/// Runs every case through kubectl and the plugin in `dir`: how many agree, and the
/// differences.
fn compare(dir: &Path, all: &[Case]) -> (usize, Vec<String>) {
    let mut unexpected = Vec::new();
    let mut identical = 0;
    for case in all {
        let with = |command: &str| {
            let mut args = vec![command.to_string()];
            args.extend(case.args.iter().cloned());
            args
        };
        let theirs = run(dir, &with(case.kubectl));
        let ours = run(dir, &with(case.plugin));
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
    (identical, unexpected)
}

#[test]
fn long_tail_reads_as_in_kubectl() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: long-tail\n",
    )
    .expect("manifest");
    let all = cases(dir.path());
    let (identical, unexpected) = compare(dir.path(), &all);
    eprintln!(
        "long tail: {identical} of {} lines identical to kubectl",
        all.len()
    );
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
}

/// Lists as kubectl's Builder takes them: the list document is mapped by its own kind
/// before it is flattened (client-go's discovery mapper knows `List` in every served
/// group-version and `XList` for each served `X`), so an unknown list kind is one
/// error and none of its items is sent; a list inside a List fails the whole List;
/// any document's `items` must be an array. Against the server and against no server
/// (discovery and the OpenAPI document both refused), in every validation mode.
#[test]
fn lists_map_and_flatten_as_kubectl_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cm =
        |name: &str| format!("{{apiVersion: v1, kind: ConfigMap, metadata: {{name: {name}}}}}");
    let list = |api_version: &str, kind: &str, items: &[String]| {
        let items: String = items.iter().map(|i| format!("\n- {i}")).collect();
        format!("apiVersion: {api_version}\nkind: {kind}\nitems:{items}\n")
    };
    let files = [
        ("list.yaml", list("v1", "List", &[cm("a"), cm("b")])),
        ("apps-list.yaml", list("apps/v1", "List", &[cm("a")])),
        ("cm-list.yaml", list("v1", "ConfigMapList", &[cm("a")])),
        ("nope-list.yaml", list("v1", "NopeList", &[cm("a")])),
        (
            "foo-list.yaml",
            list("foo.example/v1", "FooList", &[cm("a"), cm("b")]),
        ),
        (
            "nested.yaml",
            list(
                "v1",
                "List",
                &[
                    cm("a"),
                    list("v1", "ConfigMapList", &[cm("b")]).replace('\n', " "),
                ],
            ),
        ),
        (
            "nested-empty.yaml",
            list(
                "v1",
                "List",
                &[cm("a"), "{apiVersion: v1, kind: List, items: []}".into()],
            ),
        ),
        (
            "odd-items.yaml",
            "apiVersion: v1\nkind: FooList\nmetadata: {name: x}\nitems: {}\n".into(),
        ),
        (
            "then-list.yaml",
            format!(
                "{}---\n{}---\n{}",
                cm("m1") + "\n",
                list("v1", "List", &[cm("a")]),
                cm("m2") + "\n"
            ),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(dir.path().join(name), text).expect("manifest");
    }
    let mut all = Vec::new();
    for (name, _) in &files {
        for validate in ["--validate=true", "--validate=false", "--validate=warn"] {
            for server in [None, Some("--server=https://127.0.0.1:1")] {
                let mut args = vec!["-f", name, "--dry-run=server", "-o", "name", validate];
                args.extend(server);
                all.push(case("create", "create-file", &args));
            }
        }
    }
    let (identical, unexpected) = compare(dir.path(), &all);
    eprintln!(
        "lists: {identical} of {} lines identical to kubectl",
        all.len()
    );
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
}
