//! The kubeconfig user's credentials beside kubectl (the plugins' own
//! credential code, `apiclient::credentials`, replaced kube's): every problem with a
//! user that kubectl reports before connecting, and every exec-plugin failure it
//! reports while connecting, in the same words; the `KUBERNETES_EXEC_INFO` a plugin
//! is given, byte for byte; the plugin run once per command; and the proxy settings
//! (the environment's, the kubeconfig's `proxy-url`) applied as kubectl applies them.
//!
//! kubectl runs `get namespace default -o name`; create-file a server-side dry run of
//! one ConfigMap from stdin. Before connecting both print the same lines; while
//! connecting kubectl's discovery adds klog lines (`E1126 … memcache.go …`), which are
//! left out of the comparison.

// The helpers below run only inside tests: an unwrap there is a failed assertion.
#![allow(clippy::unwrap_used)]

use base64::Engine as _;
use serde_json::{Value, json};
use tests::foreign::without_klog;
use tests::harness::{Cluster, Output, cluster};

pub(crate) const V1BETA1: &str = "client.authentication.k8s.io/v1beta1";
const MANIFEST: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: credentials-probe\n";

/// An exec user running `script` with `sh -c`.
pub(crate) fn exec(script: &str, extra: Value) -> Value {
    let mut exec = json!({
        "apiVersion": V1BETA1,
        "command": "/bin/sh",
        "args": ["-c", script],
    });
    if let (Some(exec), Some(extra)) = (exec.as_object_mut(), extra.as_object()) {
        exec.extend(extra.clone());
    }
    json!({"exec": exec})
}

pub(crate) fn credential(api_version: &str, status: &str) -> String {
    format!(r#"printf '%s' '{{"apiVersion":"{api_version}","kind":"ExecCredential"{status}}}'"#)
}

/// A kubeconfig of the harness's server with one user, in `dir`.
pub(crate) fn kubeconfig(
    cluster: &Cluster,
    dir: &std::path::Path,
    name: &str,
    user: &Value,
) -> String {
    let text = std::fs::read_to_string(&cluster.kubeconfig).unwrap();
    let harness: Value = serde_saphyr::from_str(&text).unwrap();
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": harness["clusters"][0]["cluster"]}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    });
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, config.to_string()).unwrap();
    path.display().to_string()
}

/// kubectl's and create-file's outputs for `kubeconfig`, with `env` set for both.
fn both(cluster: &Cluster, kubeconfig: &str, env: &[(&str, &str)]) -> (Output, Output) {
    let mut theirs = cluster.kubectl().args([
        "get",
        "namespace",
        "default",
        "-o",
        "name",
        "--kubeconfig",
        kubeconfig,
    ]);
    let mut ours = cluster
        .plugin("create-file")
        .args(["-f", "-", "--dry-run=server", "--kubeconfig", kubeconfig])
        .stdin(MANIFEST);
    for (key, value) in env {
        theirs = theirs.env(key, value);
        ours = ours.env(key, value);
    }
    (theirs.run(), ours.run())
}

#[test]
fn credential_problems_read_as_kubectl_s() {
    let cluster = cluster();
    let dir = tempfile::tempdir().unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["someone".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let cert_file = dir.path().join("client.crt");
    std::fs::write(&cert_file, cert.pem()).unwrap();
    let cert_file = cert_file.display().to_string();
    let not_base64 = "-----BEGIN PRIVATE KEY-----\nnot!base64$$\n-----END PRIVATE KEY-----\n";
    let not_a_key = "-----BEGIN PRIVATE KEY-----\nQUJDRA==\n-----END PRIVATE KEY-----\n";
    let cases: Vec<(&str, Value)> = vec![
        // Refused before connecting.
        (
            "gcp",
            json!({"auth-provider": {"name": "gcp", "config": {"cmd-path": "/bin/false"}}}),
        ),
        (
            "azure",
            json!({"auth-provider": {"name": "azure", "config": {}}}),
        ),
        (
            "unknown-provider",
            json!({"auth-provider": {"name": "foo", "config": {}}}),
        ),
        (
            "oidc-without-issuer",
            json!({"auth-provider": {"name": "oidc", "config": {"client-id": "x"}}}),
        ),
        (
            "v1alpha1",
            exec(
                "true",
                json!({"apiVersion": "client.authentication.k8s.io/v1alpha1"}),
            ),
        ),
        ("no-api-version", json!({"exec": {"command": "/bin/true"}})),
        (
            "mode-unknown",
            exec("true", json!({"interactiveMode": "Sometimes"})),
        ),
        (
            "mode-empty",
            exec(
                "true",
                json!({"interactiveMode": "", "apiVersion": "client.authentication.k8s.io/v1"}),
            ),
        ),
        (
            "v1-without-mode",
            exec(
                "true",
                json!({"apiVersion": "client.authentication.k8s.io/v1"}),
            ),
        ),
        (
            "env-without-name",
            exec("true", json!({"env": [{"name": "", "value": "x"}]})),
        ),
        (
            "exec-and-provider",
            json!({
                "exec": {"command": "/bin/true", "apiVersion": V1BETA1},
                "auth-provider": {"name": "oidc", "config": {"id-token": "x"}},
            }),
        ),
        (
            "token-file-missing",
            json!({"tokenFile": "/nonexistent/token"}),
        ),
        (
            "token-and-basic",
            json!({"token": "t", "username": "a", "password": "b"}),
        ),
        ("uid-without-user", json!({"token": "t", "as-uid": "1"})),
        (
            "certificate-without-key",
            json!({"client-certificate-data": b64(&cert.pem())}),
        ),
        (
            "key-file-missing",
            json!({"client-certificate": cert_file, "client-key": "/nonexistent/key.pem"}),
        ),
        (
            "certificate-twice",
            json!({
                "client-certificate": cert_file,
                "client-certificate-data": b64(&cert.pem()),
                "client-key": "/nonexistent/key.pem",
                "client-key-data": b64(&key.serialize_pem()),
            }),
        ),
        (
            "data-not-base64",
            json!({"client-certificate-data": "%%%", "client-key-data": "a2V5"}),
        ),
        (
            "key-not-base64",
            json!({"client-certificate-data": b64(&cert.pem()), "client-key-data": b64(not_base64)}),
        ),
        (
            "key-not-a-key",
            json!({"client-certificate-data": b64(&cert.pem()), "client-key-data": b64(not_a_key)}),
        ),
        // Failures while getting credentials.
        (
            "oidc-not-a-jwt",
            json!({"auth-provider": {"name": "oidc", "config": {
                "idp-issuer-url": "https://127.0.0.1:1", "client-id": "c", "id-token": "x",
            }}}),
        ),
        (
            "oidc-expired",
            json!({"auth-provider": {"name": "oidc", "config": {
                "idp-issuer-url": "https://127.0.0.1:1", "client-id": "c",
                // {"alg":"none"}.{"exp":1}.
                "id-token": "eyJhbGciOiJub25lIn0.eyJleHAiOjF9.",
            }}}),
        ),
        ("plugin-fails", exec("exit 3", json!({}))),
        (
            "plugin-missing",
            json!({"exec": {"command": "kplug-no-such-credential-plugin", "apiVersion": V1BETA1}}),
        ),
        ("plugin-not-json", exec("echo hello", json!({}))),
        (
            "plugin-other-version",
            exec(
                &credential(
                    "client.authentication.k8s.io/v1",
                    r#","status":{"token":"t"}"#,
                ),
                json!({}),
            ),
        ),
        (
            "plugin-no-status",
            exec(&credential(V1BETA1, ""), json!({})),
        ),
        (
            "plugin-no-token",
            exec(&credential(V1BETA1, r#","status":{}"#), json!({})),
        ),
        (
            "plugin-half-a-pair",
            exec(
                &credential(V1BETA1, r#","status":{"clientKeyData":"k"}"#),
                json!({}),
            ),
        ),
        (
            "plugin-always-interactive",
            exec("true", json!({"interactiveMode": "Always"})),
        ),
    ];
    let mut failures = Vec::new();
    for (name, user) in &cases {
        let path = kubeconfig(cluster, dir.path(), name, user);
        let (theirs, ours) = both(cluster, &path, &[]);
        let expected = without_klog(&theirs.stderr);
        if theirs.code == 0 || ours.code != 1 || ours.stderr != expected {
            failures.push(format!(
                "{name}: kubectl exit {} said\n{expected}create-file exit {} said\n{}",
                theirs.code, ours.code, ours.stderr
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn a_plugin_gets_kubectl_s_exec_info_and_runs_once() {
    let cluster = cluster();
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&cluster.kubeconfig).unwrap();
    let harness: Value = serde_saphyr::from_str(&text).unwrap();
    let token = harness["users"][0]["user"]["token"].as_str().unwrap();
    let runs = dir.path().join("runs");
    // Each run appends the request it was given, one line per run.
    let script = format!(
        r#"printf '%s\n' "$KUBERNETES_EXEC_INFO" >> "{}"; {}"#,
        runs.display(),
        credential(V1BETA1, &format!(r#","status":{{"token":"{token}"}}"#))
    );
    let path = kubeconfig(
        cluster,
        dir.path(),
        "exec-admin",
        &exec(&script, json!({"provideClusterInfo": true})),
    );
    let (theirs, _) = both(cluster, &path, &[]);
    theirs.success();
    let kubectl_runs = std::fs::read_to_string(&runs).unwrap();
    std::fs::remove_file(&runs).unwrap();
    let ours = cluster
        .plugin("create-file")
        .args(["-f", "-", "--dry-run=server", "--kubeconfig", &path])
        .stdin(MANIFEST)
        .run();
    ours.success();
    let our_runs = std::fs::read_to_string(&runs).unwrap();
    assert_eq!(our_runs.lines().count(), 1, "{our_runs}");
    assert_eq!(
        our_runs.lines().next(),
        kubectl_runs.lines().next(),
        "KUBERNETES_EXEC_INFO differs"
    );
}

/// Proxies as kubectl reads them: from the environment, a loopback server is always
/// reached directly (Go's rule, whatever `NO_PROXY` says); a kubeconfig's `proxy-url`
/// takes every request, loopback included.
#[test]
fn proxies_are_read_as_kubectl_reads_them() {
    let cluster = cluster();
    let dir = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let refusing = format!("http://127.0.0.1:{closed}");
    let env = [("HTTPS_PROXY", refusing.as_str()), ("NO_PROXY", "")];
    let harness = cluster.kubeconfig.display().to_string();
    let (theirs, ours) = both(cluster, &harness, &env);
    theirs.success();
    ours.success();

    let text = std::fs::read_to_string(&cluster.kubeconfig).unwrap();
    let mut config: Value = serde_saphyr::from_str(&text).unwrap();
    config["clusters"][0]["cluster"]["proxy-url"] = json!(refusing);
    let proxied = dir.path().join("proxied.json");
    std::fs::write(&proxied, config.to_string()).unwrap();
    let proxied = proxied.display().to_string();
    let (theirs, out) = both(cluster, &proxied, &env);
    assert_ne!(theirs.code, 0, "kubectl ignored proxy-url");
    assert_eq!(out.code, 1, "{}", out.stderr);
    // kubectl create's words there too: the schema download fails first.
    assert!(
        out.stderr.contains("failed to download openapi")
            && out.stderr.contains("connect: connection refused"),
        "{}",
        out.stderr
    );
}
