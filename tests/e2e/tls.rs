//! The server-trust flags merged as client-go merges them, side by side with
//! kubectl 1.32 on the same kubeconfigs: the local server's real CA, and a second CA
//! of our own that did not sign it.
//!
//! `--certificate-authority` replaces a kubeconfig's `insecure-skip-tls-verify: true`
//! (verification is on again), `--insecure-skip-tls-verify` replaces its CA, `--server`
//! clears its `tls-server-name`, and a CA together with skipped verification is
//! refused with client-go's message. Each case runs `run-pod --dry-run=server` (one
//! request) and kubectl's own `run` with the same flags: both must succeed with the
//! same output or both fail.

// The helpers below run only inside tests: an unwrap there is a failed assertion
// (clippy's allow-unwrap-in-tests does not reach non-#[test] helpers).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tests::foreign::foreign_ca;
use tests::harness::{Cluster, Output, cluster};

/// The harness kubeconfig's server and CA file.
fn server_and_ca(cluster: &Cluster) -> (String, String) {
    let kc: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&cluster.kubeconfig).unwrap()).unwrap();
    let c = &kc["clusters"][0]["cluster"];
    (
        c["server"].as_str().unwrap().to_string(),
        c["certificate-authority"].as_str().unwrap().to_string(),
    )
}

/// A kubeconfig for the harness's admin user whose cluster entry is `cluster_entry`
/// (the server is added).
fn kubeconfig(dir: &Path, name: &str, server: &str, mut cluster_entry: Value) -> PathBuf {
    let harness: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&cluster().kubeconfig).unwrap()).unwrap();
    cluster_entry["server"] = json!(server);
    let kc = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster_entry}],
        "users": [{"name": "admin", "user": harness["users"][0]["user"]}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "admin"}}],
        "current-context": "c",
    });
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&kc).unwrap()).unwrap();
    path
}

/// `run-pod` and kubectl's `run`, both a server dry run with the same flags.
fn both(kubeconfig: &Path, ns: &str, cache: &Path, flags: &[&str]) -> (Output, Output) {
    let cluster = cluster();
    let common = [
        "tls",
        "--image=nginx",
        "--dry-run=server",
        "-o",
        "name",
        "-n",
        ns,
    ];
    let ours = cluster
        .plugin("run-pod")
        .args(common)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(flags)
        .run();
    let theirs = cluster
        .kubectl()
        .arg("run")
        .args(common)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(cache)
        .args(flags)
        .run();
    (ours, theirs)
}

/// Both succeed with the same output.
#[track_caller]
fn both_succeed((ours, theirs): (Output, Output), case: &str) {
    theirs.success();
    assert_eq!(ours.code, 0, "{case}: ours failed:\n{}", ours.stderr);
    assert_eq!(ours.stdout, theirs.stdout, "{case}");
}

/// Both fail verifying the server's certificate, in the same words (kubectl's klog
/// lines left out: `apiclient::go_net` gives Go's).
#[track_caller]
fn both_reject_the_server((ours, theirs): (Output, Output), case: &str) {
    assert_ne!(theirs.code, 0, "{case}: kubectl succeeded");
    assert!(
        theirs.stderr.contains("tls: failed to verify certificate"),
        "{case}: kubectl: {}",
        theirs.stderr
    );
    assert_eq!(ours.code, 1, "{case}: ours: {}", ours.stdout);
    let theirs: String = theirs
        .stderr
        .lines()
        .filter(|l| !(l.starts_with('E') && l.as_bytes().get(1).is_some_and(u8::is_ascii_digit)))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(ours.stderr, theirs, "{case}");
}

#[tokio::test]
async fn trust_flags_merge_with_the_kubeconfig_as_in_client_go() {
    let cluster = cluster();
    let ns = cluster.namespace("tls-flags").await;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let (server, real_ca) = server_and_ca(cluster);
    let foreign = dir.path().join("foreign-ca.crt");
    std::fs::write(&foreign, foreign_ca()).unwrap();
    let foreign = foreign.to_str().unwrap();
    let run = |kc: &Path, flags: &[&str]| both(kc, ns.as_str(), &cache, flags);

    // --certificate-authority over `insecure-skip-tls-verify: true`: verification is on
    // again, so the second CA is refused and the real one accepted.
    let insecure = kubeconfig(
        dir.path(),
        "insecure",
        &server,
        json!({"insecure-skip-tls-verify": true}),
    );
    both_succeed(run(&insecure, &[]), "insecure kubeconfig");
    both_reject_the_server(
        run(&insecure, &[&format!("--certificate-authority={foreign}")]),
        "insecure kubeconfig, second CA flag",
    );
    both_succeed(
        run(&insecure, &[&format!("--certificate-authority={real_ca}")]),
        "insecure kubeconfig, real CA flag",
    );

    // --insecure-skip-tls-verify over a kubeconfig's CA: the CA is dropped.
    let wrong_ca = kubeconfig(
        dir.path(),
        "wrong-ca",
        &server,
        json!({"certificate-authority": foreign}),
    );
    both_reject_the_server(run(&wrong_ca, &[]), "second CA in the kubeconfig");
    both_succeed(
        run(&wrong_ca, &["--insecure-skip-tls-verify"]),
        "second CA in the kubeconfig, insecure flag",
    );

    // --server clears the kubeconfig's tls-server-name; --tls-server-name goes with it.
    let named = kubeconfig(
        dir.path(),
        "named",
        &server,
        json!({"certificate-authority": real_ca, "tls-server-name": "wrong.example"}),
    );
    let server_flag = format!("--server={server}");
    both_reject_the_server(run(&named, &[]), "tls-server-name in the kubeconfig");
    both_succeed(
        run(&named, &[&server_flag]),
        "tls-server-name in the kubeconfig, --server",
    );
    both_reject_the_server(
        run(&named, &[&server_flag, "--tls-server-name=wrong.example"]),
        "--server with --tls-server-name=wrong.example",
    );
    both_succeed(
        run(&named, &[&server_flag, "--tls-server-name=kubernetes"]),
        "--server with --tls-server-name=kubernetes",
    );

    // A CA with skipped verification is refused, from flags or from the kubeconfig,
    // by every plugin, in kubectl's words.
    let plain = kubeconfig(
        dir.path(),
        "plain",
        &server,
        json!({"certificate-authority": real_ca}),
    );
    let both_in_kubeconfig = kubeconfig(
        dir.path(),
        "both",
        &server,
        json!({"certificate-authority": real_ca, "insecure-skip-tls-verify": true}),
    );
    let ca_flag = format!("--certificate-authority={real_ca}");
    let refusals: [(&Path, Vec<&str>); 2] = [
        (&plain, vec!["--insecure-skip-tls-verify", &ca_flag]),
        (&both_in_kubeconfig, vec![]),
    ];
    for (kc, flags) in refusals {
        let (ours, theirs) = run(kc, &flags);
        theirs.code(1);
        assert_eq!(
            theirs.stderr,
            "error: specifying a root certificates file with the insecure flag is not allowed\n"
        );
        assert_eq!(
            (ours.code, &ours.stderr),
            (1, &theirs.stderr),
            "run-pod {flags:?}"
        );
        for (plugin, args) in [
            ("create-file", &["-f", "-"][..]),
            ("rolling-update", &["web", "--image=nginx:2"][..]),
        ] {
            let out = cluster
                .plugin(plugin)
                .args(args)
                .args(["-n", ns.as_str(), "--kubeconfig"])
                .arg(kc)
                .args(&flags)
                .stdin("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tls\n")
                .run();
            assert_eq!(
                (out.code, &out.stderr),
                (1, &theirs.stderr),
                "{plugin} {flags:?}"
            );
        }
    }
}
