//! Command-line errors beside kubectl of the server's release: each plugin, run by
//! kubectl, refuses a bad flag with the words and exit code of the kubectl command it
//! stands for (`create-file` beside `create`, `run-pod` beside `run`), the usage hint
//! naming its own command. kubectl 1.37 prints them after `error:` where 1.32 printed
//! cobra's `Error:`.

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
        let expected_stderr = expected.stderr.replace(&hint(theirs), &hint(ours));
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
