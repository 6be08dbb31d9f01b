//! kuberc's credential plugin policy beside kubectl 1.37: the three plugins, run by
//! kubectl as a user runs them (`kubectl create-file …`), refuse an exec credential
//! plugin the policy does not allow, in kubectl's words, and a marker file the plugin
//! would write proves it never ran. kuberc itself is read as kubectl reads it:
//! `KUBERC`, `--kuberc` after the plugin's name, a missing or invalid file.
//!
//! kubectl's own answer is `kubectl get namespace default -o name` with the same
//! kubeconfig and kuberc (credentials::both).

// The helpers below run only inside tests: an unwrap there is a failed assertion.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use tests::harness::{Cluster, Output, cluster};

use crate::credentials::{V1BETA1, credential, exec, kubeconfig};
use tests::foreign::without_klog;

const MANIFEST: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kuberc-probe\n";

/// A user whose exec plugin (`/bin/sh`) touches `marker`, then returns the harness's
/// admin token.
fn marking_user(cluster: &Cluster, marker: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(&cluster.kubeconfig).unwrap();
    let harness: Value = serde_saphyr::from_str(&text).unwrap();
    let token = harness["users"][0]["user"]["token"].as_str().unwrap();
    let script = format!(
        r#"touch "{}"; {}"#,
        marker.display(),
        credential(V1BETA1, &format!(r#","status":{{"token":"{token}"}}"#))
    );
    exec(&script, json!({}))
}

fn preference(body: &str) -> String {
    format!("apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\n{body}")
}

/// kubectl's answer, then each plugin's (run by kubectl), all with `env`.
fn all(
    cluster: &Cluster,
    kubeconfig: &str,
    home: &std::path::Path,
    env: &[(&str, &str)],
) -> Vec<(&'static str, Output)> {
    let run = |args: &[&str], stdin: Option<&str>| {
        let mut cmd = cluster
            .kubectl()
            .args(args)
            .args(["--kubeconfig", kubeconfig])
            .env("HOME", home);
        for (key, value) in env {
            cmd = cmd.env(key, value);
        }
        if let Some(stdin) = stdin {
            cmd = cmd.stdin(stdin);
        }
        cmd.run()
    };
    vec![
        (
            "kubectl get",
            run(&["get", "namespace", "default", "-o", "name"], None),
        ),
        (
            "create-file",
            run(
                &["create-file", "-f", "-", "--dry-run=server"],
                Some(MANIFEST),
            ),
        ),
        (
            "run-pod",
            run(
                &[
                    "run-pod",
                    "kuberc-probe",
                    "--image=busybox",
                    "--dry-run=server",
                ],
                None,
            ),
        ),
        (
            "rolling-update",
            run(
                &["rolling-update", "kuberc-no-such-rc", "--image=busybox:2"],
                None,
            ),
        ),
    ]
}

/// A way of naming kuberc: a name, the arguments after the command, the environment.
type Case<'a> = (&'a str, Vec<&'a str>, Vec<(&'a str, &'a str)>);

/// The last line of stderr without klog's lines: the error the command ended with.
fn last_line(stderr: &str) -> String {
    without_klog(stderr)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_credential_plugin_policy_is_kubectl_s() {
    let cluster = cluster();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let marker = dir.path().join("plugin-ran");
    let path = kubeconfig(
        cluster,
        dir.path(),
        "marking",
        &marking_user(cluster, &marker),
    );
    let cases = [
        ("deny-all", preference("credentialPluginPolicy: DenyAll\n")),
        (
            "not-listed",
            preference(
                "credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- command: /bin/true\n",
            ),
        ),
        (
            "listed-by-name-on-path",
            preference(
                "credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- name: kplug-not-a-plugin\n",
            ),
        ),
        (
            "unknown-policy",
            preference("credentialPluginPolicy: Sometimes\n"),
        ),
        (
            "empty-allowlist",
            preference("credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: []\n"),
        ),
    ];
    let mut failures = Vec::new();
    for (name, text) in &cases {
        let kuberc = dir.path().join(format!("{name}.kuberc"));
        std::fs::write(&kuberc, text).unwrap();
        let kuberc = kuberc.display().to_string();
        let outputs = all(cluster, &path, home.path(), &[("KUBERC", &kuberc)]);
        let (_, theirs) = &outputs[0];
        if theirs.code == 0 {
            failures.push(format!("{name}: kubectl succeeded:\n{}", theirs.stdout));
        }
        let expected = last_line(&theirs.stderr);
        for (plugin, ours) in &outputs[1..] {
            if ours.code != theirs.code || last_line(&ours.stderr) != expected {
                failures.push(format!(
                    "{name}: kubectl exit {} ended with\n{expected}\n{plugin} exit {} said\n{}",
                    theirs.code, ours.code, ours.stderr
                ));
            }
        }
        assert!(
            !marker.exists(),
            "{name}: the credential plugin ran:\n{outputs:#?}"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_allowed_plugin_runs() {
    let cluster = cluster();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let marker = dir.path().join("plugin-ran");
    let path = kubeconfig(
        cluster,
        dir.path(),
        "marking",
        &marking_user(cluster, &marker),
    );
    // In the default place, ~/.kube/kuberc.
    std::fs::create_dir_all(home.path().join(".kube")).unwrap();
    std::fs::write(
        home.path().join(".kube/kuberc"),
        preference(
            "credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- command: /bin/sh\n",
        ),
    )
    .unwrap();
    // Each command alone, the marker checked after each.
    for (name, args, stdin) in [
        ("kubectl get", vec!["get", "namespace", "default"], None),
        (
            "create-file",
            vec!["create-file", "-f", "-", "--dry-run=server"],
            Some(MANIFEST),
        ),
        (
            "run-pod",
            vec![
                "run-pod",
                "kuberc-allowed",
                "--image=busybox",
                "--dry-run=server",
            ],
            None,
        ),
    ] {
        let mut cmd = cluster
            .kubectl()
            .args(args)
            .args(["--kubeconfig", &path])
            .env("HOME", home.path());
        if let Some(stdin) = stdin {
            cmd = cmd.stdin(stdin);
        }
        let output = cmd.run();
        assert_eq!(output.code, 0, "{name}: {output:#?}");
        assert!(marker.exists(), "{name}: the plugin did not run");
        std::fs::remove_file(&marker).unwrap();
    }
}

#[test]
fn kuberc_is_found_and_refused_as_kubectl_finds_and_refuses_it() {
    let cluster = cluster();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let marker = dir.path().join("plugin-ran");
    let path = kubeconfig(
        cluster,
        dir.path(),
        "marking",
        &marking_user(cluster, &marker),
    );
    let deny = dir.path().join("deny.kuberc");
    std::fs::write(&deny, preference("credentialPluginPolicy: DenyAll\n")).unwrap();
    let deny = deny.display().to_string();
    let missing = dir.path().join("missing.kuberc").display().to_string();
    let not_kuberc = dir.path().join("other.kuberc");
    std::fs::write(&not_kuberc, "apiVersion: v1\nkind: Config\n").unwrap();
    let not_kuberc = not_kuberc.display().to_string();
    let flag = format!("--kuberc={deny}");
    let cases: Vec<Case<'_>> = vec![
        ("flag", vec![flag.as_str()], vec![]),
        (
            "flag-over-env",
            vec!["--kuberc", deny.as_str()],
            vec![("KUBERC", missing.as_str())],
        ),
        (
            "missing-from-env",
            vec![],
            vec![("KUBERC", missing.as_str())],
        ),
        (
            "not-a-kuberc",
            vec![],
            vec![("KUBERC", not_kuberc.as_str())],
        ),
        ("off-and-flag", vec![flag.as_str()], vec![("KUBERC", "off")]),
    ];
    let mut failures = Vec::new();
    for (name, extra, env) in &cases {
        let direct = |plugin: &str| {
            let mut cmd = cluster
                .plugin(plugin)
                .args(["-f", "-", "--dry-run=server", "--kubeconfig", &path])
                .args(extra)
                .env("HOME", home.path())
                .stdin(MANIFEST);
            for (key, value) in env {
                cmd = cmd.env(key, value);
            }
            cmd.run()
        };
        let mut theirs = cluster
            .kubectl()
            .args([
                "get",
                "namespace",
                "default",
                "-o",
                "name",
                "--kubeconfig",
                &path,
            ])
            .args(extra)
            .env("HOME", home.path());
        for (key, value) in env {
            theirs = theirs.env(key, value);
        }
        let theirs = theirs.run();
        // Run directly, as kubectl would have stopped before starting it.
        let ours = direct("create-file");
        if theirs.code == 0
            || ours.code != theirs.code
            || last_line(&ours.stderr) != last_line(&theirs.stderr)
        {
            failures.push(format!(
                "{name}: kubectl exit {} said\n{}create-file exit {} said\n{}",
                theirs.code, theirs.stderr, ours.code, ours.stderr
            ));
        }
        assert!(!marker.exists(), "{name}: the credential plugin ran");
    }
    // KUBECTL_KUBERC=false turns kuberc off: the plugin runs.
    let ours = cluster
        .plugin("create-file")
        .args(["-f", "-", "--dry-run=server", "--kubeconfig", &path])
        .env("HOME", home.path())
        .env("KUBERC", &deny)
        .env("KUBECTL_KUBERC", "false")
        .stdin(MANIFEST)
        .run();
    ours.success();
    assert!(
        marker.exists(),
        "KUBECTL_KUBERC=false: the plugin did not run"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// With `KUBECTL_KUBERC=false` kubectl has no `--kuberc` flag: each plugin refuses it
/// as kubectl refuses any unknown flag, beside kubectl's own `create` (the usage hint
/// names each command).
#[test]
fn kuberc_off_has_no_kuberc_flag_as_in_kubectl() {
    let cluster = cluster();
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        cluster
            .kubectl()
            .args(args)
            .args(["--kuberc=/nonexistent/kuberc"])
            .env("HOME", home.path())
            .env("KUBECTL_KUBERC", "false")
            .stdin(MANIFEST)
            .run()
    };
    let theirs = run(&["create", "-f", "-", "--dry-run=client"]);
    assert_ne!(
        theirs.code, 0,
        "kubectl accepted --kuberc: {}",
        theirs.stderr
    );
    for args in [
        &["create-file", "-f", "-", "--dry-run=client"][..],
        &[
            "run-pod",
            "kuberc-off",
            "--image=busybox",
            "--dry-run=client",
        ],
        &["rolling-update", "kuberc-off", "--image=busybox:2"],
    ] {
        let ours = run(args);
        let expected = theirs.stderr.replace(
            "See 'kubectl create --help'",
            &format!("See 'kubectl {} --help'", args[0]),
        );
        assert_eq!(
            (ours.code, ours.stdout.as_str(), ours.stderr.as_str()),
            (theirs.code, "", expected.as_str()),
            "{args:?}"
        );
    }
}

/// A kuberc with a field kubectl does not know is kubectl's warning, printed once when
/// kubectl runs a plugin (kubectl prints it before it looks for the plugin, and tells
/// the plugin it ran it by `KUBECTL_PATH`), and once when the plugin runs alone.
#[test]
fn a_kuberc_warning_is_printed_once() {
    let cluster = cluster();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let kuberc = dir.path().join("odd.kuberc");
    std::fs::write(&kuberc, preference("unknownField: 1\n")).unwrap();
    let kuberc = kuberc.display().to_string();
    let warned = |stderr: &str| {
        stderr
            .matches("kuberc: ignoring strict decoding error")
            .count()
    };
    let args = ["-f", "-", "--dry-run=client", "-o", "name"];
    // Through kubectl, or the plugin alone: the same kuberc, home and input.
    let run = |cmd: tests::harness::Cmd| {
        cmd.args(args)
            .env("HOME", home.path())
            .env("KUBERC", &kuberc)
            .stdin(MANIFEST)
            .run()
    };
    let theirs = run(cluster.kubectl().arg("create"));
    assert_eq!(
        warned(&theirs.stderr),
        1,
        "kubectl create: {}",
        theirs.stderr
    );
    let through = run(cluster.kubectl().arg("create-file"));
    assert_eq!(
        (
            through.code,
            through.stdout.as_str(),
            through.stderr.as_str()
        ),
        (theirs.code, theirs.stdout.as_str(), theirs.stderr.as_str()),
        "kubectl create-file beside kubectl create"
    );
    let alone = run(cluster.plugin("create-file"));
    assert_eq!(
        warned(&alone.stderr),
        1,
        "create-file alone: {}",
        alone.stderr
    );
}
