//! Credential failures: client-go's wording, and nothing of the secrets kube's errors carry.

use std::os::unix::process::ExitStatusExt;

use super::*;

const SECRET: &str = "s3cr3t-marker";

fn exec_source(program: &str) -> CredentialSource {
    CredentialSource {
        program: Some(program.to_string()),
        install_hint: None,
    }
}

/// kube's error for a plugin that exited with `code`, as it builds it: the `Debug`
/// form of the command, environment included, and the captured output.
fn failed_run(code: i32, stdout: &str, stderr: &str) -> AuthError {
    AuthError::AuthExecRun {
        cmd: format!("API_KEY=\"{SECRET}\" \"/bin/sh\" \"-c\" \"exit {code}\""),
        out: Box::new(std::process::Output {
            status: std::process::ExitStatus::from_raw(code << 8),
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        }),
    }
}

#[test]
fn a_failed_plugin_is_named_with_its_exit_code_only() {
    let err = failed_run(
        3,
        &format!("{{\"token\":\"{SECRET}\"}}"),
        "plugin says no\n",
    );
    assert!(err.to_string().contains(SECRET), "kube's own message leaks");
    let mut stderr = Vec::new();
    let ours = CredentialsError::report_to(&err, &exec_source("/bin/sh"), &mut stderr);
    assert_eq!(
        ours.to_string(),
        "getting credentials: exec: executable /bin/sh failed with exit code 3"
    );
    // client-go passes the plugin's stderr through; its stdout (the credential) never.
    assert_eq!(String::from_utf8(stderr).unwrap(), "plugin says no\n");
    assert!(!format!("{ours:?}").contains(SECRET));
}

#[test]
fn a_plugin_killed_by_a_signal_exits_minus_one_as_in_go() {
    let err = AuthError::AuthExecRun {
        cmd: SECRET.into(),
        out: Box::new(std::process::Output {
            status: std::process::ExitStatus::from_raw(9),
            stdout: Vec::new(),
            stderr: Vec::new(),
        }),
    };
    let ours = CredentialsError::report_to(&err, &exec_source("plugin"), &mut Vec::new());
    assert_eq!(
        ours.to_string(),
        "getting credentials: exec: executable plugin failed with exit code -1"
    );
}

#[test]
fn a_missing_plugin_gets_go_s_wording() {
    let not_found = || AuthError::AuthExecStart(std::io::Error::from_raw_os_error(libc_enoent()));
    let by_path =
        CredentialsError::report_to(&not_found(), &exec_source("/nope/plugin"), &mut Vec::new());
    assert_eq!(
        by_path.to_string(),
        "getting credentials: exec: fork/exec /nope/plugin: no such file or directory"
    );
    let source = CredentialSource {
        program: Some("kplug-auth".into()),
        install_hint: Some("Install kplug-auth first.".into()),
    };
    let by_name = CredentialsError::report_to(&not_found(), &source, &mut Vec::new());
    assert_eq!(
        by_name.to_string(),
        format!(
            "getting credentials: exec: executable kplug-auth not found{INSTALL_HINT_HELP}\n\nInstall kplug-auth first."
        )
    );
}

/// ENOENT, without a libc dependency for one constant (it is 2 on every Unix).
fn libc_enoent() -> i32 {
    2
}

#[test]
fn unparsable_output_is_not_quoted() {
    let parse = serde_saphyr::from_str::<serde_json::Value>(&format!("{{token: {SECRET}: x}}"))
        .expect_err("invalid YAML");
    let err = AuthError::AuthExecParse(Box::new(parse));
    let ours = CredentialsError::report_to(&err, &exec_source("p"), &mut Vec::new());
    assert!(
        ours.to_string()
            .starts_with("getting credentials: decoding stdout: not an ExecCredential"),
        "{ours}"
    );
    assert!(!ours.to_string().contains(SECRET));
}

#[test]
fn go_errno_texts_are_lower_case_without_the_os_error_number() {
    assert_eq!(
        go_errno_text(&std::io::Error::from_raw_os_error(13)),
        "permission denied"
    );
}
