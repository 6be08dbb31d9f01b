//! Credentials as client-go provides them: the kubeconfig's user validated in its words,
//! the method it picks, exec plugins run as real processes, and messages that carry
//! nothing of the secrets.

use std::collections::HashMap;
use std::io::IsTerminal as _;

use base64::Engine as _;

use kube::config::{AuthProviderConfig, ExecConfig, ExecInteractiveMode};

use super::*;

const SECRET: &str = "s3cr3t-marker";
const V1BETA1: &str = "client.authentication.k8s.io/v1beta1";

fn messages(auth: &AuthInfo) -> Vec<String> {
    match validate("u", auth) {
        Ok(()) => Vec::new(),
        Err(Error::InvalidAuthInfo(errors)) => errors,
        Err(other) => panic!("not a validation error: {other}"),
    }
}

fn exec_config(script: &str) -> ExecConfig {
    ExecConfig {
        api_version: Some(V1BETA1.into()),
        command: Some("/bin/sh".into()),
        args: Some(vec!["-c".into(), script.into()]),
        env: Some(vec![HashMap::from([
            ("name".to_string(), "API_KEY".to_string()),
            ("value".to_string(), SECRET.to_string()),
        ])]),
        interactive_mode: Some(ExecInteractiveMode::Never),
        ..ExecConfig::default()
    }
}

fn config_with(auth: AuthInfo) -> kube::Config {
    let mut config = kube::Config::new("https://127.0.0.1:1".parse().unwrap());
    config.auth_info = auth;
    config
}

fn credential_json(token: &str, extra: &str) -> String {
    format!(
        r#"{{"apiVersion":"{V1BETA1}","kind":"ExecCredential","status":{{"token":"{token}"{extra}}}}}"#
    )
}

#[test]
fn validation_speaks_client_go() {
    let auth = AuthInfo {
        token: Some(SECRET.to_string().into()),
        username: Some("a".into()),
        password: Some("b".to_string().into()),
        ..AuthInfo::default()
    };
    assert_eq!(
        messages(&auth),
        [
            "more than one authentication method found for u; found [token basicAuth], only one is allowed"
        ]
    );
    let auth = AuthInfo {
        exec: Some(ExecConfig {
            env: Some(vec![HashMap::from([(
                "value".to_string(),
                "x".to_string(),
            )])]),
            ..ExecConfig::default()
        }),
        auth_provider: Some(AuthProviderConfig {
            name: "oidc".into(),
            config: HashMap::new(),
            other: Default::default(),
        }),
        ..AuthInfo::default()
    };
    assert_eq!(
        messages(&auth),
        [
            "authProvider cannot be provided in combination with an exec plugin for u",
            "command must be specified for u to use exec authentication plugin",
            "apiVersion must be specified for u to use exec authentication plugin",
            "env variable name must be specified for u to use exec authentication plugin",
            "interactiveMode must be specified for u to use exec authentication plugin",
        ]
    );
    // v1beta1 is defaulted to IfAvailable; v1 must say.
    let mut exec = exec_config("true");
    exec.interactive_mode = None;
    assert!(
        messages(&AuthInfo {
            exec: Some(exec.clone()),
            ..AuthInfo::default()
        })
        .is_empty()
    );
    exec.api_version = Some("client.authentication.k8s.io/v1".into());
    assert_eq!(
        messages(&AuthInfo {
            exec: Some(exec),
            ..AuthInfo::default()
        }),
        ["interactiveMode must be specified for u to use exec authentication plugin"]
    );
    let auth = AuthInfo {
        client_certificate: Some("/nonexistent/c.pem".into()),
        client_certificate_data: Some("Yw==".into()),
        client_key: Some("/nonexistent/k.pem".into()),
        client_key_data: Some("aw==".to_string().into()),
        impersonate_uid: Some("1".into()),
        ..AuthInfo::default()
    };
    assert_eq!(
        messages(&auth),
        [
            "client-cert-data and client-cert are both specified for u. client-cert-data will override.",
            "client-key-data and client-key are both specified for u; client-key-data will override",
            "unable to read client-cert /nonexistent/c.pem for u due to open /nonexistent/c.pem: no such file or directory",
            "unable to read client-key /nonexistent/k.pem for u due to open /nonexistent/k.pem: no such file or directory",
            "requesting uid, groups or user-extra for u without impersonating a user",
        ]
    );
    let auth = AuthInfo {
        client_certificate_data: Some("Yw==".into()),
        ..AuthInfo::default()
    };
    assert_eq!(
        messages(&auth),
        [
            "client-key-data or client-key must be specified for u to use the clientCert authentication method."
        ]
    );
}

#[test]
fn one_problem_reads_alone_and_several_as_kubectl_s_list() {
    let one = Error::InvalidAuthInfo(vec!["a".into()]);
    assert_eq!(one.to_string(), "a");
    let two = Error::InvalidAuthInfo(vec!["a".into(), "b".into()]);
    assert_eq!(two.to_string(), "Error in configuration: \n* a\n* b");
}

#[tokio::test]
async fn static_methods_give_one_sensitive_header() {
    let basic = config_with(AuthInfo {
        username: Some("someone".into()),
        password: Some("pa:ss".to_string().into()),
        ..AuthInfo::default()
    });
    let (credentials, identity) = Credentials::of(&basic).unwrap();
    assert!(identity.is_none());
    let value = credentials.authorization().await.unwrap().unwrap();
    assert_eq!(value, "Basic c29tZW9uZTpwYTpzcw==");
    assert!(value.is_sensitive());
    // A username alone is basic auth with an empty password, as client-go sends it.
    let username = config_with(AuthInfo {
        username: Some("someone".into()),
        ..AuthInfo::default()
    });
    let (credentials, _) = Credentials::of(&username).unwrap();
    assert_eq!(
        credentials.authorization().await.unwrap().unwrap(),
        "Basic c29tZW9uZTo="
    );
    let token = config_with(AuthInfo {
        token: Some(SECRET.to_string().into()),
        exec: Some(exec_config("exit 9")),
        ..AuthInfo::default()
    });
    // A token wins over the exec plugin, which does not run.
    let (credentials, _) = Credentials::of(&token).unwrap();
    assert_eq!(
        credentials.authorization().await.unwrap().unwrap(),
        format!("Bearer {SECRET}").as_str()
    );
    assert!(!format!("{credentials:?}").contains(SECRET));
    let none = config_with(AuthInfo::default());
    let (credentials, _) = Credentials::of(&none).unwrap();
    assert!(credentials.authorization().await.unwrap().is_none());
}

#[tokio::test]
async fn a_token_file_is_trimmed_and_kept_when_it_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("token");
    std::fs::write(&path, format!("  {SECRET}\n")).unwrap();
    let config = config_with(AuthInfo {
        token_file: Some(path.display().to_string()),
        ..AuthInfo::default()
    });
    let (credentials, _) = Credentials::of(&config).unwrap();
    std::fs::remove_file(&path).unwrap();
    let Method::TokenFile(file) = &*credentials.0 else {
        panic!("not a token file: {credentials:?}");
    };
    // Age the cache: the next request reads the file again, finds it gone, and keeps
    // the last token.
    file.cached.lock().unwrap().1 = Instant::now() - TOKEN_FILE_PERIOD;
    assert_eq!(
        credentials.authorization().await.unwrap().unwrap(),
        format!("Bearer {SECRET}").as_str()
    );
    let missing = config_with(AuthInfo {
        token_file: Some("/nonexistent/token".into()),
        ..AuthInfo::default()
    });
    assert_eq!(
        Credentials::of(&missing).unwrap_err().to_string(),
        "open /nonexistent/token: no such file or directory"
    );
}

#[tokio::test]
async fn auth_providers_are_kubectl_1_32_s() {
    let provider = |name: &str, pairs: &[(&str, &str)]| {
        config_with(AuthInfo {
            auth_provider: Some(AuthProviderConfig {
                name: name.into(),
                config: pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                other: Default::default(),
            }),
            ..AuthInfo::default()
        })
    };
    let err = |config: kube::Config| Credentials::of(&config).unwrap_err().to_string();
    assert!(
        err(provider("gcp", &[("cmd-path", "/bin/false")])).starts_with(
            "The gcp auth plugin has been removed.\nPlease use the \"gke-gcloud-auth-plugin\""
        )
    );
    assert!(err(provider("azure", &[])).starts_with("The azure auth plugin has been removed."));
    assert_eq!(
        err(provider("foo", &[])),
        "no Auth Provider found for name \"foo\""
    );
    assert_eq!(err(provider("oidc", &[])), "Must provide idp-issuer-url");
    assert_eq!(
        err(provider("oidc", &[("idp-issuer-url", "https://i")])),
        "Must provide client-id"
    );
    // The id-token is checked before each request, in client-go's words.
    fn oidc<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut pairs = vec![("idp-issuer-url", "https://i"), ("client-id", "c")];
        pairs.extend_from_slice(extra);
        pairs
    }
    let jwt = |exp: u64| {
        let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(format!(r#"{{"exp":{exp},"sub":"{SECRET}"}}"#));
        format!("eyJhbGciOiJub25lIn0.{claims}.")
    };
    // Refused when the client is built, and before each request once built.
    let header = |pairs: Vec<(&str, &str)>| {
        let config = provider("oidc", &pairs);
        async move {
            let (credentials, _) = Credentials::of(&config).map_err(|e| e.to_string())?;
            credentials
                .authorization()
                .await
                .map(|h| h.unwrap().to_str().unwrap().to_string())
                .map_err(|e| e.to_string())
        }
    };
    let valid = jwt(4_102_444_800);
    assert_eq!(
        header(oidc(&[("id-token", &valid)])).await,
        Ok(format!("Bearer {valid}"))
    );
    assert_eq!(
        header(oidc(&[("id-token", SECRET)])).await,
        Err("ID Token is not a valid JWT".to_string())
    );
    assert_eq!(
        header(oidc(&[("id-token", &jwt(1))])).await,
        Err("No valid id-token, and cannot refresh without refresh-token".to_string())
    );
    assert_eq!(
        header(oidc(&[])).await,
        header(oidc(&[("id-token", &jwt(1))])).await
    );
    let expired = header(oidc(&[("id-token", &jwt(1)), ("refresh-token", SECRET)]))
        .await
        .unwrap_err();
    assert!(
        expired.starts_with("the oidc id-token has expired"),
        "{expired}"
    );
    assert!(!expired.contains(SECRET));
}

#[test]
fn decoding_checks_what_client_go_checks() {
    let decode = |out: &str| exec::decode(out.as_bytes(), V1BETA1);
    let err = |out: &str| decode(out).unwrap_err().to_string();
    let ok = decode(&credential_json(
        SECRET,
        r#","expirationTimestamp":"2030-01-01T00:00:00Z""#,
    ))
    .unwrap();
    assert_eq!(ok.token.as_deref(), Some(SECRET));
    assert_eq!(ok.expiry.unwrap().to_string(), "2030-01-01T00:00:00Z");
    // YAML, as client-go's decoder reads it too.
    let yaml = format!("apiVersion: {V1BETA1}\nkind: ExecCredential\nstatus:\n  token: {SECRET}\n");
    assert_eq!(decode(&yaml).unwrap().token.as_deref(), Some(SECRET));
    assert_eq!(
        err("hello\n"),
        "getting credentials: decoding stdout: couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }"
    );
    assert_eq!(
        err(&credential_json(SECRET, "").replace(V1BETA1, "client.authentication.k8s.io/v1")),
        "getting credentials: exec plugin is configured to use API version client.authentication.k8s.io/v1beta1, plugin returned version client.authentication.k8s.io/v1"
    );
    assert_eq!(
        err(&format!(
            r#"{{"apiVersion":"{V1BETA1}","kind":"ExecCredential"}}"#
        )),
        "getting credentials: exec plugin didn't return a status field"
    );
    assert_eq!(
        err(&format!(
            r#"{{"apiVersion":"{V1BETA1}","kind":"ExecCredential","status":{{}}}}"#
        )),
        "getting credentials: exec plugin didn't return a token or cert/key pair"
    );
    assert_eq!(
        err(&format!(
            r#"{{"apiVersion":"{V1BETA1}","kind":"ExecCredential","status":{{"clientKeyData":"{SECRET}"}}}}"#
        )),
        "getting credentials: exec plugin returned only certificate or key, not both"
    );
    // Nothing of the output is quoted, however it fails.
    for out in [
        format!("{{token: {SECRET}: x}}"),
        format!(r#"{{"token":"{SECRET}"}}"#),
        credential_json(SECRET, r#","expirationTimestamp":"soon""#),
    ] {
        let message = err(&out);
        assert!(!message.contains(SECRET), "{message}");
        assert!(
            message.starts_with("getting credentials: decoding stdout: "),
            "{message}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_plugin_runs_once_with_client_go_s_environment() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let info = dir.path().join("info");
    let script = format!(
        r#"echo run >> "{}"; printf %s "$KUBERNETES_EXEC_INFO" > "{}"; [ "$API_KEY" = "{SECRET}" ] || exit 7; printf '%s' '{}'"#,
        runs.display(),
        info.display(),
        credential_json("tok", "")
    );
    let (credentials, identity) = Credentials::of(&config_with(AuthInfo {
        exec: Some(exec_config(&script)),
        ..AuthInfo::default()
    }))
    .unwrap();
    assert!(identity.is_none());
    assert!(matches!(&*credentials.0, Method::Exec(_)));
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "run\n");
    assert_eq!(
        std::fs::read_to_string(&info).unwrap(),
        format!(
            r#"{{"kind":"ExecCredential","apiVersion":"{V1BETA1}","spec":{{"interactive":false}}}}"#
        )
    );
}

#[cfg(unix)]
#[tokio::test]
async fn an_expired_credential_runs_the_plugin_again() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    // The first run's token expired long ago; the second run fails.
    let script = format!(
        r#"if [ -e "{0}" ]; then exit 5; fi; : > "{0}"; printf '%s' '{1}'"#,
        runs.display(),
        credential_json(SECRET, r#","expirationTimestamp":"2000-01-01T00:00:00Z""#)
    );
    let (credentials, _) = Credentials::of(&config_with(AuthInfo {
        exec: Some(exec_config(&script)),
        ..AuthInfo::default()
    }))
    .unwrap();
    let err = credentials.authorization().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "getting credentials: exec: executable /bin/sh failed with exit code 5"
    );
}

#[cfg(unix)]
#[test]
fn plugin_failures_name_the_program_only() {
    let run = |exec: ExecConfig| {
        Credentials::of(&config_with(AuthInfo {
            exec: Some(exec),
            ..AuthInfo::default()
        }))
        .unwrap_err()
        .to_string()
    };
    let failed = run(exec_config(&format!("echo '{SECRET}'; exit 3")));
    assert_eq!(
        failed,
        "getting credentials: exec: executable /bin/sh failed with exit code 3"
    );
    let killed = run(exec_config("kill -9 $$"));
    assert_eq!(
        killed,
        "getting credentials: exec: executable /bin/sh failed with exit code -1"
    );
    let mut missing = exec_config("");
    missing.command = Some("kplug-no-such-auth".into());
    missing.install_hint = Some("Install kplug-auth first.".into());
    assert_eq!(
        run(missing),
        format!(
            "getting credentials: exec: executable kplug-no-such-auth not found{INSTALL_HINT_HELP}\n\nInstall kplug-auth first."
        )
    );
    let mut by_path = exec_config("");
    by_path.command = Some("/nope/plugin".into());
    assert_eq!(
        run(by_path),
        "getting credentials: exec: fork/exec /nope/plugin: no such file or directory"
    );
    let mut always = exec_config("true");
    always.interactive_mode = Some(ExecInteractiveMode::Always);
    // The test's stdin is not a terminal (cargo gives it none).
    if !std::io::stdin().is_terminal() {
        assert_eq!(
            run(always),
            "getting credentials: exec plugin cannot support interactive mode: standard input is not a terminal"
        );
    }
    let mut alpha = exec_config("true");
    alpha.api_version = Some("client.authentication.k8s.io/v1alpha1".into());
    assert_eq!(
        run(alpha),
        "exec plugin: invalid apiVersion \"client.authentication.k8s.io/v1alpha1\""
    );
}

#[tokio::test]
async fn the_layer_sets_the_header_and_keeps_one_already_there() {
    use tower::filter::AsyncPredicate as _;
    let config = config_with(AuthInfo {
        token: Some(SECRET.to_string().into()),
        ..AuthInfo::default()
    });
    let (credentials, _) = Credentials::of(&config).unwrap();
    let mut authorize = Authorize(credentials);
    let request = authorize.check(http::Request::new(())).await.unwrap();
    assert_eq!(
        request.headers()[AUTHORIZATION],
        format!("Bearer {SECRET}").as_str()
    );
    let preset = http::Request::builder()
        .header(AUTHORIZATION, "Bearer other")
        .body(())
        .unwrap();
    let request = authorize.check(preset).await.unwrap();
    assert_eq!(request.headers()[AUTHORIZATION], "Bearer other");
}

#[test]
fn go_errno_texts_are_lower_case_without_the_os_error_number() {
    assert_eq!(
        go_errno_text(&std::io::Error::from_raw_os_error(13)),
        "permission denied"
    );
}
