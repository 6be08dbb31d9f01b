//! Unit tests of `ConfigFlags`: the flags' syntax, their mapping onto the kubeconfig
//! loader's overrides (through `to_config`, against kubeconfigs written to temp
//! directories), `Debug` without secrets, `--match-server-version`'s words. The
//! loader's own rules are `apiclient::kubeconfig`'s tests.

use std::path::Path;

use super::*;

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

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

async fn config_for(flags: ConfigFlags, body: &str) -> Config {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "config", body);
    ConfigFlags {
        kubeconfig: Some(path),
        ..flags
    }
    .to_config()
    .await
    .unwrap()
}

#[tokio::test]
async fn flags_override_the_kubeconfig() {
    let flags = ConfigFlags {
        // With its scheme: a bare host:port is http, where no credential is sent.
        server: Some("https://127.0.0.1:7443".into()),
        namespace: Some("other".into()),
        token: Some("flag-token".into()),
        impersonate: Some("jane".into()),
        impersonate_group: vec!["devs".into(), "ops".into()],
        impersonate_uid: Some("1234".into()),
        tls_server_name: Some("kubernetes".into()),
        request_timeout: timeout("5s"),
        ..Default::default()
    };
    let config = config_for(flags.clone(), ADMIN).await;
    assert_eq!(config.cluster_url.to_string(), "https://127.0.0.1:7443/");
    assert_eq!(config.default_namespace, "other");
    assert_eq!(flags.namespace_of(&config), ("other".to_string(), true));
    use secrecy::ExposeSecret;
    assert_eq!(
        config.auth_info.token.as_ref().unwrap().expose_secret(),
        "flag-token"
    );
    assert_eq!(config.auth_info.impersonate.as_deref(), Some("jane"));
    assert_eq!(
        config.auth_info.impersonate_groups,
        Some(vec!["devs".to_string(), "ops".to_string()])
    );
    assert_eq!(config.auth_info.impersonate_uid.as_deref(), Some("1234"));
    assert_eq!(config.tls_server_name.as_deref(), Some("kubernetes"));
    // Parsed once, with the flags; set on the client by apiclient::bound alone.
    assert_eq!(
        flags.request_timeout().unwrap(),
        Some(Duration::from_secs(5))
    );
    assert_eq!(config.read_timeout, None);
}

fn timeout(value: &str) -> apiclient::kubeconfig::Timeout {
    let Ok(parsed) = super::parse_request_timeout(value);
    parsed
}

#[test]
fn bad_request_timeout_is_a_flag_error() {
    let flags = ConfigFlags {
        request_timeout: timeout("soon"),
        ..Default::default()
    };
    let err = flags.request_timeout().unwrap_err().to_string();
    assert_eq!(
        err,
        "Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)"
    );
}

/// client-go's `ParseTimeout`: whole seconds, else any Go duration, a negative one
/// being no timeout; a negative whole number is neither.
#[test]
fn request_timeouts_are_client_go_s() {
    for (value, want) in [
        ("5", Some(Some(Duration::from_secs(5)))),
        ("+5", Some(Some(Duration::from_secs(5)))),
        ("0", Some(None)),
        ("1m", Some(Some(Duration::from_secs(60)))),
        ("-1s", Some(None)),
        ("0s", Some(None)),
        ("-1", None),
        ("abc", None),
        ("0x10", None),
        ("", Some(None)),
    ] {
        let flags = ConfigFlags {
            request_timeout: timeout(value),
            ..Default::default()
        };
        assert_eq!(flags.request_timeout().ok(), want, "for {value:?}");
    }
}

#[test]
fn debug_output_never_shows_the_token() {
    let flags = ConfigFlags {
        token: Some("s3cr3t".into()),
        ..Default::default()
    };
    assert!(!format!("{flags:?}").contains("s3cr3t"));
}

/// The global flags parsed from `args` as a plugin's command parses them: its switches
/// given pflag's boolean syntax by `go_bool_flags`.
fn parse_flags(args: &[&str]) -> Result<ConfigFlags, clap::Error> {
    use clap::{Args as _, FromArgMatches as _};
    let cmd = crate::flags::go_bool_flags(ConfigFlags::augment_args(clap::Command::new("x")));
    let matches = cmd.try_get_matches_from(std::iter::once("x").chain(args.iter().copied()))?;
    ConfigFlags::from_arg_matches(&matches)
}

#[test]
fn insecure_flag_takes_go_booleans() {
    let parse = parse_flags;
    assert!(
        parse(&["--insecure-skip-tls-verify"])
            .unwrap()
            .insecure_skip_tls_verify
    );
    assert!(
        parse(&["--insecure-skip-tls-verify=true"])
            .unwrap()
            .insecure_skip_tls_verify
    );
    assert!(
        !parse(&["--insecure-skip-tls-verify=false"])
            .unwrap()
            .insecure_skip_tls_verify
    );
    assert!(!parse(&[]).unwrap().insecure_skip_tls_verify);
    assert!(parse(&["--insecure-skip-tls-verify=maybe"]).is_err());
}

/// `--username`/`--password` are overrides like any other (their use as basic auth is
/// `apiclient::kubeconfig`'s, tested there), and the flags never print the password.
#[test]
fn username_and_password_flags_are_overrides_and_never_printed() {
    let flags = ConfigFlags {
        username: Some("jane".into()),
        password: Some("pa55word".into()),
        ..Default::default()
    };
    let overrides = flags.overrides();
    assert_eq!(overrides.username.as_deref(), Some("jane"));
    assert_eq!(overrides.password.as_deref(), Some("pa55word"));
    assert!(!format!("{flags:?}").contains("pa55word"));
}

#[test]
fn go_runtime_flags_are_checked_as_kubectl_checks_them() {
    let parse = |args: &[&str]| parse_flags(args).map_err(|e| e.to_string());
    let defaults = parse(&[]).unwrap();
    assert_eq!(defaults.profile.as_deref(), Some("none"));
    assert_eq!(defaults.profile_output, "profile.pprof");
    assert_eq!(defaults.log_flush_frequency, "5s");
    assert!(!defaults.match_server_version && !defaults.disable_compression);
    let given = parse(&[
        "--profile=mutex",
        "--profile-output=/tmp/p",
        "--log-flush-frequency=-1s",
        "--vmodule=a=1,b*=2,",
        "--match-server-version",
        "--disable-compression=true",
    ])
    .unwrap();
    assert_eq!(given.profile.as_deref(), Some("mutex"));
    assert!(given.match_server_version && given.disable_compression);
    for (args, reason) in [
        (&["--log-flush-frequency=abc"][..], "parse error"),
        (
            &["--vmodule=abc"][..],
            "syntax error: expect comma-separated list of filename=N",
        ),
        (
            &["--vmodule=a=1=2"][..],
            "syntax error: expect comma-separated list of filename=N",
        ),
        (
            &["--vmodule==1"][..],
            "syntax error: expect comma-separated list of filename=N",
        ),
        (&["--vmodule=a=-1"][..], "negative value for vmodule level"),
        (
            &["--match-server-version=maybe"][..],
            "strconv.ParseBool: parsing \"maybe\": invalid syntax",
        ),
    ] {
        let err = parse(args).unwrap_err();
        assert!(err.contains(reason), "{args:?}: {err}");
    }
}

#[test]
fn version_info_prints_as_gos_percent_hash_v() {
    let info = k8s_openapi::apimachinery::pkg::version::Info {
        major: "1".into(),
        minor: "20".into(),
        git_version: "v1.20.2".into(),
        git_commit: "faecb196815e248d3ecfb03c680a4507229c2a56".into(),
        git_tree_state: "archive".into(),
        build_date: "2026-11-25T14:30:43Z".into(),
        go_version: "go1.19.8".into(),
        compiler: "gc".into(),
        platform: "linux/amd64".into(),
        ..Default::default()
    };
    // The local 1.20 server's, in apimachinery 1.37's fields (the emulation and
    // compatibility versions empty, as a 1.20 server does not send them).
    assert_eq!(
        go_version_info(&info),
        r#"version.Info{Major:"1", Minor:"20", EmulationMajor:"", EmulationMinor:"", MinCompatibilityMajor:"", MinCompatibilityMinor:"", GitVersion:"v1.20.2", GitCommit:"faecb196815e248d3ecfb03c680a4507229c2a56", GitTreeState:"archive", BuildDate:"2026-11-25T14:30:43Z", GoVersion:"go1.19.8", Compiler:"gc", Platform:"linux/amd64"}"#
    );
}

/// The plugins report kubectl 1.37.2 as built from its Go module, which is what a
/// server of that release built the same way reports for itself.
#[test]
fn the_client_version_is_kubectl_s_release() {
    let client = client_version();
    assert_eq!(client.git_version, "v1.37.2");
    assert_eq!((client.major.as_str(), client.minor.as_str()), ("1", "37"));
    assert_eq!(client.git_commit, "$Format:%H$");
    assert_eq!(client.git_tree_state, "");
    assert!(go_version_info(&client).starts_with(
        r#"version.Info{Major:"1", Minor:"37", EmulationMajor:"", EmulationMinor:"", MinCompatibilityMajor:"", MinCompatibilityMinor:"", GitVersion:"v1.37.2", GitCommit:"$Format:%H$", GitTreeState:"", BuildDate:"1970-01-01T00:00:00Z""#
    ));
}

#[tokio::test]
async fn the_proxy_url_flag_replaces_the_kubeconfig_s() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = write(dir.path(), "config", ADMIN);
    let flags = ConfigFlags {
        kubeconfig: Some(path),
        proxy_url: Some("http://127.0.0.1:3128".into()),
        impersonate: Some("alice".into()),
        impersonate_user_extra: vec!["scopes=a".into(), "scopes=b".into(), "bare".into()],
        preferences: Some(apiclient::kuberc::Preferences::default()),
        ..ConfigFlags::default()
    };
    let config = flags.to_config().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        config.proxy_url.map(|u| u.to_string()).as_deref(),
        Some("http://127.0.0.1:3128/")
    );
    let extras = config.auth_info.impersonate_user_extra.unwrap_or_default();
    assert_eq!(extras.len(), 1);
    assert_eq!(extras["scopes"], ["a", "b"]);
}

/// `--request-timeout` that does not parse fails `to_config` as a flag error, but
/// only after the kubeconfig's own problems, as client-go parses it last.
#[tokio::test]
async fn a_bad_request_timeout_fails_after_the_kubeconfig_s_problems() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "config", ADMIN);
    let flags = ConfigFlags {
        kubeconfig: Some(path),
        request_timeout: timeout("soon"),
        ..Default::default()
    };
    assert_eq!(
        flags.to_config().await.unwrap_err().to_string(),
        flags.request_timeout().unwrap_err().to_string()
    );
    let missing_context = ConfigFlags {
        context: Some("nope".into()),
        ..flags
    };
    let err = missing_context.to_config().await.unwrap_err();
    assert!(matches!(err, Error::ContextNotFound(_)), "{err}");
}

#[test]
fn offline_namespace_is_explicit_only_with_n() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "config", ADMIN);
    let flags = ConfigFlags {
        kubeconfig: Some(path),
        ..Default::default()
    };
    assert_eq!(
        flags.offline_namespace().expect("ns"),
        ("team-a".to_string(), false)
    );
    let explicit = ConfigFlags {
        namespace: Some("ns".into()),
        ..flags
    };
    assert_eq!(
        explicit.offline_namespace().expect("ns"),
        ("ns".to_string(), true)
    );
}

/// A profile kubectl would write is refused in words; `none`, kubectl's default, is
/// what a plugin does anyway.
#[test]
fn a_profile_is_refused_in_words() {
    let refusal = |profile: &str| {
        let flags = parse_flags(&[&format!("--profile={profile}")]).expect("parsed");
        flags.profile_refusal("kubectl run-pod")
    };
    assert_eq!(refusal("none"), None);
    for written in ["cpu", "allocs"] {
        assert_eq!(
            refusal(written),
            Some(format!(
                "--profile={written}: kubectl run-pod is not a Go program and writes no Go runtime profile; profile it with a native profiler such as perf"
            ))
        );
    }
    // Flags built in code have no profile.
    assert_eq!(
        ConfigFlags::default().profile_refusal("kubectl run-pod"),
        None
    );
}

/// kubectl parses any `--profile` and refuses a name `initProfiling` does not know
/// after parsing, in its own words (not pflag's `invalid argument` form); an empty
/// name is given, not absent.
#[test]
fn an_unknown_profile_is_refused_after_parsing() {
    for name in ["bogus", "", "-x"] {
        let flags = parse_flags(&[&format!("--profile={name}")]).expect("parsed");
        assert_eq!(
            flags.profile_refusal("kubectl run-pod"),
            Some(format!("unknown profile '{name}'"))
        );
    }
}
