//! Command lines beside kubectl of the server's release: each plugin, run by kubectl,
//! refuses a bad flag with the words and exit code of the kubectl command it stands
//! for (`create-file` beside `create`, `run-pod` beside `run`), the usage hint naming
//! its own command, and describes each flag it shares with that command in kubectl's
//! words. kubectl 1.37 prints flag errors after `error:` where 1.32 printed cobra's
//! `Error:`.

use std::collections::BTreeMap;

use tests::harness::{Output, cluster};

/// Runs `kubectl ARGS` with stdin closed.
fn kubectl(args: &[&str]) -> Output {
    cluster().kubectl().args(args).stdin("").run()
}

/// Each plugin's command line against kubectl's, after the command's name.
#[test]
fn bad_flags_read_as_in_kubectl() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("create", "create-file", &["--nope"]),
        ("create", "create-file", &["-Z"]),
        ("create", "create-file", &["-f"]),
        ("create", "create-file", &["--filename"]),
        ("create", "create-file", &["-R=yes", "-f", "x.yaml"]),
        (
            "create",
            "create-file",
            &["-f", "x.yaml", "--dry-run=later"],
        ),
        // pflag's rule: -f takes -n as its value, then c1 is an unexpected argument.
        ("create", "create-file", &["-f", "-n", "c1"]),
        (
            "run",
            "run-pod",
            &["x", "--image=busybox", "--grace-period=abc"],
        ),
        (
            "run",
            "run-pod",
            &[
                "x",
                "--image=busybox",
                "--grace-period=99999999999999999999",
            ],
        ),
        // The first word after a leading `--` is NAME in kubectl 1.37.
        (
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
        ("run", "run-pod", &["x", "--image=busybox", "--nope"]),
        (
            "run",
            "run-pod",
            &["x", "--image=busybox", "--attach=maybe"],
        ),
        ("run", "run-pod", &["x", "--image=busybox", "-l"]),
        (
            "run",
            "run-pod",
            &["x", "--image=busybox", "--pod-running-timeout=abc"],
        ),
    ];
    let mut differences = Vec::new();
    for &(theirs, ours, args) in cases {
        let expected = kubectl(&[&[theirs][..], args].concat());
        let got = kubectl(&[&[ours][..], args].concat());
        let hint = |command: &str| format!("See 'kubectl {command} --help' for usage.");
        let usage = |command: &str| format!("See 'kubectl {command} -h' for help and examples");
        let expected_stderr = expected
            .stderr
            .replace(&hint(theirs), &hint(ours))
            .replace(&usage(theirs), &usage(ours));
        if (got.code, got.stdout.as_str(), got.stderr.as_str())
            != (
                expected.code,
                expected.stdout.as_str(),
                expected_stderr.as_str(),
            )
        {
            differences.push(format!(
                "{ours} {args:?}: kubectl {theirs} exit {} said\n{}{ours} exit {} said\n{}",
                expected.code, expected.stderr, got.code, got.stderr
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// The flags of a `--help` text, by long name: the flag line and its description.
fn flags_of(help: &str) -> BTreeMap<String, String> {
    let mut flags = BTreeMap::new();
    let mut lines = help.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(flag) = line.strip_prefix("    ").filter(|l| l.starts_with('-')) else {
            continue;
        };
        let Some(long) = flag.split("--").nth(1).and_then(|l| l.split('=').next()) else {
            continue;
        };
        let description = lines.next_if(|l| l.starts_with('\t')).unwrap_or_default();
        flags.insert(long.to_string(), format!("{flag}\n{description}"));
    }
    flags
}

/// Every flag a plugin shares with its kubectl command reads as kubectl's, except
/// where the plugin says more on purpose (its README says why).
#[test]
fn shared_flags_are_described_as_in_kubectl() {
    let cases: &[(&str, &str, &[&str])] = &[
        // `-k` is built by the kubectl that ran the plugin: the help says which.
        ("create", "create-file", &["kustomize"]),
        ("run", "run-pod", &[]),
    ];
    let mut differences = Vec::new();
    for &(theirs, ours, extended) in cases {
        let kubectl_flags = flags_of(&kubectl(&[theirs, "--help"]).stdout);
        let our_flags = flags_of(&kubectl(&[ours, "--help"]).stdout);
        assert!(
            kubectl_flags.contains_key("dry-run"),
            "kubectl {theirs} --help: no flags found"
        );
        for (name, text) in &kubectl_flags {
            match our_flags.get(name) {
                Some(ours_text) if ours_text == text || extended.contains(&name.as_str()) => {}
                Some(ours_text) => differences.push(format!(
                    "{ours} --{name}:\n  kubectl {theirs}: {text}\n  {ours}: {ours_text}"
                )),
                None => {}
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// The global flags each plugin lists read as `kubectl options` lists them, defaults
/// included (`--cache-dir` computed from the environment as kubectl computes it).
#[test]
fn global_flags_are_described_as_kubectl_options() {
    let reference = flags_of(&kubectl(&["options"]).stdout);
    assert!(
        reference.contains_key("kubeconfig"),
        "kubectl options: no flags found"
    );
    let mut differences = Vec::new();
    for plugin in ["create-file", "run-pod", "rolling-update"] {
        let help = kubectl(&[plugin, "--help"]).stdout;
        let global = help
            .split_once("Global options:")
            .map_or("", |(_, rest)| rest);
        let ours = flags_of(global);
        if ours.keys().ne(reference.keys()) {
            differences.push(format!(
                "{plugin}: global flags {:?}, kubectl options {:?}",
                ours.keys().collect::<Vec<_>>(),
                reference.keys().collect::<Vec<_>>()
            ));
        }
        for (name, text) in &reference {
            if ours.get(name).is_some_and(|o| o != text) {
                differences.push(format!(
                    "{plugin} --{name}:\n  kubectl options: {text}\n  {plugin}: {}",
                    ours[name]
                ));
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
