//! Unit tests of the kubeconfig loader: the loading rules and their merge, the
//! selection checks, the overrides over kube's `Config`, against kubeconfigs written
//! to temp directories.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::Config;

use super::loader::{check_proxy_url, placeholder_uri};
use super::*;
use crate::error::Error;

const ADMIN: &str = r#"apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: admin-token
contexts:
- name: admin
  context: {cluster: local, user: admin, namespace: team-a}
current-context: admin
"#;

const OTHER: &str = r#"apiVersion: v1
kind: Config
clusters:
- name: other
  cluster:
    server: https://10.0.0.1:443
users:
- name: viewer
  user:
    token: viewer-token
contexts:
- name: viewer
  context: {cluster: other, user: viewer}
- name: admin
  context: {cluster: other, user: viewer}
current-context: viewer
"#;

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

fn join(paths: &[&Path]) -> OsString {
    std::env::join_paths(paths).unwrap()
}

/// The rules with only `KUBECONFIG` set.
fn env_rules(env: OsString) -> LoadingRules {
    LoadingRules {
        kubeconfig_env: Some(env),
        ..Default::default()
    }
}

/// The rules with only an explicit path.
fn explicit(path: impl Into<PathBuf>) -> LoadingRules {
    LoadingRules {
        explicit_path: Some(path.into()),
        ..Default::default()
    }
}

/// The loader of the kubeconfig at `path` with `overrides`.
fn loader(path: &Path, overrides: Overrides) -> Loader {
    Loader {
        rules: explicit(path),
        overrides,
    }
}

/// The user's credential plugin policy when kuberc has none.
fn no_policy() -> crate::error::Result<crate::credentials::policy::PluginPolicy> {
    Ok(Default::default())
}

#[test]
fn kubeconfig_env_skips_missing_files_and_first_wins() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a", ADMIN);
    let b = write(dir.path(), "b", OTHER);
    let missing = dir.path().join("missing");
    let (kc, source) = env_rules(join(&[&missing, &a, &b])).load().unwrap();
    let kc = kc.unwrap();
    assert_eq!(source, Source::Env(vec![a, b]));
    // The first file to set current-context wins, and so does the first `admin` context.
    assert_eq!(kc.current_context.as_deref(), Some("admin"));
    let admin = kc.contexts.iter().find(|c| c.name == "admin").unwrap();
    assert_eq!(admin.context.as_ref().unwrap().cluster, "local");
    assert!(kc.contexts.iter().any(|c| c.name == "viewer"));
}

#[test]
fn kubeconfig_flag_must_exist() {
    let err = explicit("/nonexistent/kubeconfig").load().unwrap_err();
    // client-go stats the file and returns Go's error as it is.
    assert_eq!(
        err.to_string(),
        "stat /nonexistent/kubeconfig: no such file or directory"
    );
}

/// A file that exists but cannot be read is reported in Go's words for the step that
/// failed; with `KUBECONFIG`, every such file is (client-go's aggregate), each once.
#[test]
fn unreadable_kubeconfigs_are_reported_in_go_s_words() {
    let dir = tempfile::tempdir().unwrap();
    let a_dir = dir.path().join("adir");
    std::fs::create_dir(&a_dir).unwrap();
    let err = explicit(&a_dir).load().unwrap_err();
    let shown = a_dir.display();
    assert_eq!(
        err.to_string(),
        format!("error loading config file \"{shown}\": read {shown}: is a directory")
    );
    let b_dir = dir.path().join("bdir");
    std::fs::create_dir(&b_dir).unwrap();
    let good = write(dir.path(), "good", ADMIN);
    let env = join(&[&a_dir, &good, &b_dir, &a_dir, &dir.path().join("missing")]);
    let err = env_rules(env).load().unwrap_err();
    assert!(
        matches!(&err, Error::KubeconfigFiles(e) if e.len() == 2),
        "{err}"
    );
    let err = env_rules(join(&[&a_dir, &good])).load().unwrap_err();
    assert!(matches!(err, Error::Kubeconfig { .. }), "{err}");
}

/// client-go's `ClientConfig` order: a user, context or cluster named by a flag must
/// exist (user first, then context, then cluster), then the current context; never
/// an anonymous fallback for a missing user.
#[test]
fn named_entries_must_exist_in_client_go_s_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "config", ADMIN);
    let (kc, _) = explicit(&path).load().unwrap();
    let message = |context: Option<&str>, cluster: Option<&str>, user: Option<&str>| {
        let overrides = Overrides {
            context: context.map(Into::into),
            cluster: cluster.map(Into::into),
            user: user.map(Into::into),
            ..Default::default()
        };
        overrides
            .check_selection(kc.as_ref())
            .map_err(|e| e.to_string())
            .err()
    };
    assert_eq!(message(None, None, None), None);
    assert_eq!(
        message(None, None, Some("nope")).as_deref(),
        Some("auth info \"nope\" does not exist")
    );
    assert_eq!(
        message(Some("nope"), Some("nope"), Some("nope")).as_deref(),
        Some("auth info \"nope\" does not exist")
    );
    assert_eq!(
        message(Some("nope"), Some("nope"), None).as_deref(),
        Some("context \"nope\" does not exist")
    );
    assert_eq!(
        message(None, Some("nope"), None).as_deref(),
        Some("cluster \"nope\" does not exist")
    );
    // Without any kubeconfig, a named user is missing all the same.
    let none = Overrides {
        user: Some("u".into()),
        ..Default::default()
    };
    assert_eq!(
        none.check_selection(None).unwrap_err().to_string(),
        "auth info \"u\" does not exist"
    );
    // A current context that does not exist: ConfirmUsable's words.
    let current = write(
        dir.path(),
        "current",
        &ADMIN.replace("current-context: admin", "current-context: gone"),
    );
    let (kc, _) = explicit(current).load().unwrap();
    let err = Overrides::default()
        .check_selection(kc.as_ref())
        .unwrap_err();
    assert!(
        matches!(err, Error::CurrentContextNotFound(ref c) if c == "gone"),
        "{err}"
    );
    // The user a context names is required too: never anonymous.
    let lost = write(
        dir.path(),
        "lost",
        &ADMIN.replace("user: admin, namespace", "user: lost, namespace"),
    );
    assert!(loader(&lost, Overrides::default()).namespace().is_err());
}

#[tokio::test]
async fn a_missing_user_stops_the_client_before_anything_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "config", ADMIN);
    let overrides = Overrides {
        user: Some("nope".into()),
        ..Default::default()
    };
    let err = loader(&path, overrides)
        .config(no_policy)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::AuthInfoNotFound(_)), "{err}");
}

#[test]
fn home_config_is_the_fallback() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".kube")).unwrap();
    let path = write(&home.path().join(".kube"), "config", ADMIN);
    let at = |home: PathBuf| LoadingRules {
        home: Some(home),
        ..Default::default()
    };
    let (kc, source) = at(home.path().to_path_buf()).load().unwrap();
    assert!(kc.is_some());
    assert_eq!(source, Source::Home(path));
    let (kc, source) = at(home.path().join("x")).load().unwrap();
    assert!(kc.is_none());
    assert_eq!(source, Source::None);
}

/// client-go takes an empty `--user`, `--context` or `--cluster` as not given: the
/// context's own entries are used (kube's loader would look for one named "").
#[tokio::test]
async fn an_empty_name_selects_as_none_does() {
    let overrides = Overrides {
        user: Some(String::new()),
        context: Some(String::new()),
        cluster: Some(String::new()),
        ..Default::default()
    };
    let config = config_for(overrides, ADMIN).await;
    use secrecy::ExposeSecret;
    assert_eq!(
        config
            .auth_info
            .token
            .as_ref()
            .map(|t| t.expose_secret().to_string())
            .as_deref(),
        Some("admin-token")
    );
    assert_eq!(config.cluster_url.to_string(), "https://127.0.0.1:6443/");
}

async fn config_for(overrides: Overrides, body: &str) -> Config {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "config", body);
    loader(&path, overrides).config(no_policy).await.unwrap()
}

#[tokio::test]
async fn context_selects_cluster_user_and_namespace() {
    let config = config_for(Overrides::default(), ADMIN).await;
    assert_eq!(config.cluster_url.to_string(), "https://127.0.0.1:6443/");
    assert_eq!(config.default_namespace, "team-a");
    assert!(config.accept_invalid_certs);
    assert!(!config.default_retry, "a CLI must not retry for minutes");
}

#[test]
fn server_urls_follow_client_go_s_default_server_url() {
    let url = |s: &str| super::overrides::server_url(s).map(|u| u.to_string());
    // A URL with a scheme and a host is kept whole, its path (a proxy's prefix) too.
    assert_eq!(url("http://127.0.0.1:1/x").unwrap(), "http://127.0.0.1:1/x");
    assert_eq!(url("https://h:6443").unwrap(), "https://h:6443/");
    // Anything else is http (client-go reads the server before any CA is merged).
    assert_eq!(url("127.0.0.1:7443").unwrap(), "http://127.0.0.1:7443/");
    assert_eq!(url("localhost:7443").unwrap(), "http://localhost:7443/");
    assert_eq!(url("-x").unwrap(), "http://-x/");
    // A host that is not ASCII is held in its IDNA form (`crate::idn`), with or
    // without a scheme, as kubectl dials it.
    assert_eq!(
        url("https://bücher-flag.invalid:6443").unwrap(),
        "https://xn--bcher-flag-9db.invalid:6443/"
    );
    assert_eq!(url("ünï✓").unwrap(), "http://xn--n-nga1b6211a/");
    // ... and must then be a host alone.
    for bad in ["/tmp/dir", "h:1/x"] {
        assert_eq!(
            url(bad).unwrap_err().to_string(),
            format!("host must be a URL or a host:port pair: {bad:?}")
        );
    }
}

/// A kubeconfig's server whose host is not ASCII, which kube's loader alone refuses as
/// no URI: held in its IDNA form, as kubectl dials it.
#[tokio::test]
async fn a_kubeconfig_server_that_is_not_ascii_is_held_in_its_idna_form() {
    let body = ADMIN.replace("https://127.0.0.1:6443", "https://bücher-kc.invalid:6443");
    let config = config_for(Overrides::default(), &body).await;
    assert_eq!(
        config.cluster_url.to_string(),
        "https://xn--bcher-kc-65a.invalid:6443/"
    );
}

#[tokio::test]
async fn a_server_over_http_gets_no_credentials_but_impersonation() {
    let overrides = Overrides {
        server: Some("127.0.0.1:7443".into()),
        impersonate: Some("jane".into()),
        ..Default::default()
    };
    let config = config_for(overrides, ADMIN).await;
    assert_eq!(config.cluster_url.to_string(), "http://127.0.0.1:7443/");
    assert!(config.auth_info.token.is_none(), "no token in clear");
    assert_eq!(config.auth_info.impersonate.as_deref(), Some("jane"));
}

#[tokio::test]
async fn overrides_replace_the_kubeconfig_s_settings() {
    let overrides = Overrides {
        server: Some("https://127.0.0.1:7443".into()),
        namespace: Some("other".into()),
        token: Some("override-token".into()),
        impersonate: Some("jane".into()),
        impersonate_groups: vec!["devs".into(), "ops".into()],
        impersonate_uid: Some("1234".into()),
        impersonate_user_extra: [("scopes".to_string(), vec!["a".into(), "b".into()])].into(),
        tls_server_name: Some("kubernetes".into()),
        proxy_url: Some("http://127.0.0.1:3128".into()),
        timeout: Timeout::After(Duration::from_secs(5)),
        ..Default::default()
    };
    let config = config_for(overrides, ADMIN).await;
    assert_eq!(config.cluster_url.to_string(), "https://127.0.0.1:7443/");
    assert_eq!(config.default_namespace, "other");
    use secrecy::ExposeSecret;
    assert_eq!(
        config.auth_info.token.as_ref().unwrap().expose_secret(),
        "override-token"
    );
    assert_eq!(config.auth_info.impersonate.as_deref(), Some("jane"));
    assert_eq!(
        config.auth_info.impersonate_groups,
        Some(vec!["devs".to_string(), "ops".to_string()])
    );
    assert_eq!(config.auth_info.impersonate_uid.as_deref(), Some("1234"));
    let extras = config.auth_info.impersonate_user_extra.unwrap_or_default();
    assert_eq!(extras["scopes"], ["a", "b"]);
    assert_eq!(config.tls_server_name.as_deref(), Some("kubernetes"));
    assert_eq!(
        config.proxy_url.map(|u| u.to_string()).as_deref(),
        Some("http://127.0.0.1:3128/")
    );
    // Checked, not written: crate::bound sets every timeout of the client, once.
    assert_eq!(config.read_timeout, None);
}

#[tokio::test]
async fn server_alone_is_enough() {
    let overrides = Overrides {
        server: Some("https://127.0.0.1:1".into()),
        ..Default::default()
    };
    // No kubeconfig anywhere: an empty KUBECONFIG list and no home.
    let (kc, _) = env_rules(OsString::new()).load().unwrap();
    assert!(kc.is_none());
    let mut config = Config::new(placeholder_uri());
    overrides.apply(&mut config).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://127.0.0.1:1/");
    assert_eq!(config.default_namespace, "default");
}

/// A timeout that did not parse is reported as the flag's error, after the
/// kubeconfig's problems (client-go parses it last).
#[tokio::test]
async fn an_invalid_timeout_is_reported_after_the_kubeconfig_s_problems() {
    let invalid = || Timeout::Invalid;
    let overrides = Overrides {
        timeout: invalid(),
        ..Default::default()
    };
    assert_eq!(
        overrides
            .apply(&mut Config::new(placeholder_uri()))
            .unwrap_err()
            .to_string(),
        "Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "config", ADMIN);
    let overrides = Overrides {
        context: Some("nope".into()),
        timeout: invalid(),
        ..Default::default()
    };
    let err = loader(&path, overrides)
        .config(no_policy)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ContextNotFound(_)), "{err}");
}

#[test]
fn debug_output_never_shows_the_token() {
    let overrides = Overrides {
        token: Some("s3cr3t".into()),
        ..Default::default()
    };
    let mut config = Config::new(placeholder_uri());
    overrides.apply(&mut config).unwrap();
    assert!(!format!("{config:?}").contains("s3cr3t"));
}

const BASIC: &str = r#"apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443
users:
- name: plain
  user: {}
contexts:
- name: plain
  context: {cluster: local, user: plain}
current-context: plain
"#;

#[tokio::test]
async fn username_and_password_are_basic_auth_and_never_printed() {
    let overrides = Overrides {
        username: Some("jane".into()),
        password: Some("pa55word".into()),
        ..Default::default()
    };
    let config = config_for(overrides, BASIC).await;
    use secrecy::ExposeSecret;
    assert_eq!(config.auth_info.username.as_deref(), Some("jane"));
    assert_eq!(
        config.auth_info.password.as_ref().unwrap().expose_secret(),
        "pa55word"
    );
    assert!(!format!("{config:?}").contains("pa55word"));
}

/// kubectl 1.32 with `--username` on the local cluster's token user:
/// `error: more than one authentication method found for admin; found [token basicAuth], only one is allowed`.
#[tokio::test]
async fn basic_auth_on_a_token_user_is_refused_as_client_go_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "config", ADMIN);
    let overrides = Overrides {
        username: Some("jane".into()),
        ..Default::default()
    };
    assert_eq!(
        loader(&path, overrides)
            .config(no_policy)
            .await
            .unwrap_err()
            .to_string(),
        "more than one authentication method found for admin; found [token basicAuth], only one is allowed"
    );
}

/// A kubeconfig's trust settings as kube loads them, for the TLS-override tests.
fn tls_config(insecure: bool, ca: bool, server_name: Option<&str>) -> Config {
    let mut config = Config::new(http::Uri::from_static("https://127.0.0.1:6443"));
    config.accept_invalid_certs = insecure;
    config.root_cert = ca.then(|| vec![b"kubeconfig CA".to_vec()]);
    config.tls_server_name = server_name.map(str::to_string);
    config
}

/// A CA file for `--certificate-authority`.
fn ca_file(dir: &Path) -> PathBuf {
    // Any certificate will do: only where the trust comes from is under test.
    write(
        dir,
        "ca.crt",
        "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n",
    )
}

#[test]
fn certificate_authority_flag_turns_verification_back_on() {
    let dir = tempfile::tempdir().unwrap();
    let overrides = Overrides {
        certificate_authority: Some(ca_file(dir.path())),
        ..Default::default()
    };
    let mut config = tls_config(true, false, None);
    overrides.apply(&mut config).unwrap();
    assert!(!config.accept_invalid_certs, "client-go verifies again");
    assert_eq!(config.root_cert, Some(vec![vec![0x30, 0x00]]));
}

#[test]
fn insecure_flag_drops_the_kubeconfig_ca() {
    let overrides = Overrides {
        insecure_skip_tls_verify: true,
        ..Default::default()
    };
    let mut config = tls_config(false, true, None);
    overrides.apply(&mut config).unwrap();
    assert!(config.accept_invalid_certs);
    assert_eq!(config.root_cert, None);
}

#[test]
fn a_ca_with_the_insecure_flag_is_refused_in_client_go_s_words() {
    let dir = tempfile::tempdir().unwrap();
    let overrides = Overrides {
        certificate_authority: Some(ca_file(dir.path())),
        insecure_skip_tls_verify: true,
        ..Default::default()
    };
    let err = overrides
        .apply(&mut tls_config(false, false, None))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "specifying a root certificates file with the insecure flag is not allowed"
    );
    // A kubeconfig that says both is refused as well.
    let err = Overrides::default()
        .apply(&mut tls_config(true, true, None))
        .unwrap_err();
    assert!(matches!(err, Error::InsecureWithCa), "{err}");
}

#[test]
fn server_flag_clears_the_kubeconfig_tls_server_name() {
    let with = |server: Option<&str>, name: Option<&str>| {
        let overrides = Overrides {
            server: server.map(str::to_string),
            tls_server_name: name.map(str::to_string),
            ..Default::default()
        };
        let mut config = tls_config(false, true, Some("from-kubeconfig"));
        overrides.apply(&mut config).unwrap();
        config.tls_server_name
    };
    assert_eq!(with(None, None).as_deref(), Some("from-kubeconfig"));
    assert_eq!(with(Some("https://127.0.0.1:1"), None), None);
    assert_eq!(
        with(Some("https://127.0.0.1:1"), Some("kubernetes")).as_deref(),
        Some("kubernetes")
    );
    assert_eq!(
        with(None, Some("kubernetes")).as_deref(),
        Some("kubernetes")
    );
}

#[test]
fn the_namespace_without_a_client_reads_the_current_context() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n    namespace: team\n- name: d\n  context:\n    cluster: k\n    user: u\nclusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:1\nusers:\n- name: u\n  user: {}\n",
    )
    .expect("write");
    assert_eq!(
        loader(&path, Overrides::default()).namespace().expect("ns"),
        ("team".to_string(), false)
    );
    let other = Overrides {
        context: Some("d".into()),
        ..Default::default()
    };
    assert_eq!(
        loader(&path, other).namespace().expect("ns"),
        ("default".to_string(), false)
    );
    let explicit = Overrides {
        namespace: Some("ns".into()),
        ..Default::default()
    };
    assert_eq!(
        loader(&path, explicit).namespace().expect("ns"),
        ("ns".to_string(), true)
    );
}

/// The kubeconfig is read as client-go reads it (go-yaml v2, `goyaml`), not by
/// kube's serde-saphyr reader: YAML 1.1 scalars, kube's types, every document merged,
/// file references made absolute, and a syntax error in go-yaml's words with no text
/// of the file around it.
#[test]
fn kubeconfig_is_read_as_go_yaml_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://h:6443\n    insecure-skip-tls-verify: yes\n    certificate-authority: ca.crt\nusers:\n- name: u\n  user: {token: t, client-key: /abs/key, exec: {command: ./bin/get-token, apiVersion: client.authentication.k8s.io/v1}}\n---\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
    let path = write(dir.path(), "kc", text);
    let kc = read(&path).unwrap();
    let cluster = kc.clusters[0].cluster.as_ref().unwrap();
    assert_eq!(cluster.insecure_skip_tls_verify, Some(true));
    let ca = dir.path().join("ca.crt");
    assert_eq!(cluster.certificate_authority.as_deref(), ca.to_str());
    let user = kc.auth_infos[0].auth_info.as_ref().unwrap();
    assert_eq!(user.client_key.as_deref(), Some("/abs/key"));
    let command = dir.path().join("./bin/get-token");
    assert_eq!(
        user.exec.as_ref().unwrap().command.as_deref(),
        command.to_str()
    );
    assert_eq!(kc.current_context.as_deref(), Some("x"));

    // Empty and comment-only files are an empty kubeconfig, as before.
    let empty = write(dir.path(), "empty", "# nothing\n");
    assert!(read(&empty).unwrap().clusters.is_empty());

    let broken = write(
        dir.path(),
        "broken",
        "users:\n- name: u\n  user:\n    token: SECRET: [\n",
    );
    let err = read(&broken).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "error loading config file \"{}\": yaml: line 4: mapping values are not allowed in this context",
            broken.display()
        )
    );

    // An interactiveMode kube cannot hold loads, and is reported by validation.
    let sometimes = write(
        dir.path(),
        "sometimes",
        "users:\n- name: u\n  user:\n    exec: {command: x, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Sometimes}\n",
    );
    let kc = read(&sometimes).unwrap();
    let user = kc.auth_infos[0].auth_info.as_ref().unwrap();
    assert_eq!(
        crate::credentials::validate("u", user)
            .unwrap_err()
            .to_string(),
        "invalid interactiveMode for u: \"Sometimes\""
    );

    // `*-data` is base64 (Go skips line breaks), in every user and cluster, used or not.
    let folded = write(
        dir.path(),
        "folded",
        "users:\n- name: u\n  user:\n    client-key-data: \"a2V5\\nLWRhdGE=\"\n",
    );
    assert!(read(&folded).is_ok());
    for (name, text) in [
        (
            "bad-key",
            "users:\n- name: u\n  user:\n    client-key-data: 'SECRET%%'\n",
        ),
        // Both bad: the clusters come first, as in Go.
        (
            "bad-ca",
            "users:\n- name: u\n  user:\n    client-key-data: 'SECRET%%'\nclusters:\n- name: c\n  cluster:\n    certificate-authority-data: 'Y%=='\n",
        ),
    ] {
        let bad = write(dir.path(), name, text);
        let at = if name == "bad-key" { 6 } else { 1 };
        assert_eq!(
            read(&bad).unwrap_err().to_string(),
            format!(
                "error loading config file \"{}\": illegal base64 data at input byte {at}",
                bad.display()
            )
        );
    }

    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(
            "current-context: w\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        )
        .collect();
    let wide = dir.path().join("wide");
    std::fs::write(&wide, utf16).unwrap();
    assert_eq!(read(&wide).unwrap().current_context.as_deref(), Some("w"));
}

#[test]
fn proxy_urls_are_checked_in_client_go_s_words() {
    let check = |p: &str| check_proxy_url(p, "local").map_err(|e| e.to_string());
    assert_eq!(check("http://127.0.0.1:3128"), Ok(()));
    assert_eq!(check("SOCKS5://127.0.0.1:1080"), Ok(()));
    assert_eq!(
        check("::bad"),
        Err("invalid 'proxy-url' \"::bad\" for cluster \"local\": could not parse: ::bad".into())
    );
    assert_eq!(
        check("ftp://x:1"),
        Err("invalid 'proxy-url' \"ftp://x:1\" for cluster \"local\": unsupported scheme \"ftp\", must be http, https, or socks5".into())
    );
    assert_eq!(
        check("x y"),
        Err("invalid 'proxy-url' \"x y\" for cluster \"local\": unsupported scheme \"\", must be http, https, or socks5".into())
    );
}
