//! The global flags kubectl gained since 1.35 and create-file's first look at the
//! kubeconfig, beside kubectl 1.37: `--as-user-extra` (checked as client-go checks it,
//! sent as `Impersonate-Extra-*`: the audit log shows the extra), `--proxy-url`
//! (checked, and it replaces the kubeconfig's: a closed proxy fails both in the same
//! words), `--validate=false --context=nope`/`--cluster=nope` in `kubectl create -f`'s
//! words, `-k` running the kubectl that ran the plugin (`KUBECTL_PATH`), and two of
//! `create -f`'s error shapes: a server dry run's CRD and instance, and one file's
//! mapping errors nested among other errors.

// The helpers below run only inside tests: an unwrap there is a failed assertion.
#![allow(clippy::unwrap_used)]

use tests::harness::{Output, cluster};

const MANIFEST: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: global-flags\n";

/// `kubectl create` and `kubectl create-file` with `args`, stdin the ConfigMap.
fn both(args: &[&str]) -> (Output, Output) {
    let run = |command: &str| {
        cluster()
            .kubectl()
            .args([command, "-f", "-"])
            .args(args)
            .stdin(MANIFEST)
            .run()
    };
    (run("create"), run("create-file"))
}

/// stderr without klog's lines.
fn stderr(output: &Output) -> String {
    tests::foreign::without_klog(&output.stderr)
}

#[test]
fn new_global_flags_and_selection_errors_read_as_kubectl_s() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let proxy = format!("--proxy-url=http://127.0.0.1:{port}");
    // kubectl writes its profile: into a temporary directory, not the repository.
    let profiles = tempfile::tempdir().unwrap();
    let profile_output = format!(
        "--profile-output={}",
        profiles.path().join("profile.pprof").display()
    );
    let cases: Vec<Vec<&str>> = vec![
        vec!["--dry-run=server", "--as-user-extra=a=b"],
        vec!["--dry-run=server", "--as=alice", "--as-user-extra=scopes=x"],
        vec!["--dry-run=server", proxy.as_str()],
        vec!["--dry-run=server", "--proxy-url=ftp://x"],
        vec!["--dry-run=server", "--proxy-url=::bad"],
        vec!["--validate=false", "--context=nope"],
        vec!["--validate=false", "--cluster=nope"],
        vec!["--validate=false", "--context=nope", "-n", "default"],
        vec!["--context=nope"],
        // kubectl writes no profile for `none`, its default, and neither does a plugin.
        vec![
            "--dry-run=client",
            "--profile=none",
            profile_output.as_str(),
        ],
    ];
    let mut failures = Vec::new();
    for args in &cases {
        let (theirs, ours) = both(args);
        if ours.code != theirs.code || stderr(&ours) != stderr(&theirs) {
            failures.push(format!(
                "{args:?}: kubectl exit {} said\n{}create-file exit {} said\n{}",
                theirs.code,
                stderr(&theirs),
                ours.code,
                ours.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The extra reaches the API server: its audit log records it for the impersonated
/// user. Skipped on a cluster without an audit log (`KUBEPLUG_E2E_KUBECONFIG`).
#[test]
fn as_user_extra_is_sent_as_kubectl_sends_it() {
    let Some(log) = localcluster::state::ClusterState::read(cluster().kubeconfig.parent().unwrap())
        .ok()
        .flatten()
        .and_then(|s| s.audit_log)
    else {
        eprintln!("skipped: this cluster has no audit log");
        return;
    };
    // Allowed or not, a request is audited with the impersonated user's extra; each
    // command gets its own, so that only create-file's can prove create-file sent it.
    let marker = format!("kubeplug-extra-{}", std::process::id());
    let run = |command: &str| {
        cluster()
            .kubectl()
            .args([
                command,
                "-f",
                "-",
                "--dry-run=server",
                "--as=kubeplug-extra-user",
            ])
            .arg(format!("--as-user-extra=scopes={marker}-{command}"))
            .stdin(MANIFEST)
            .run()
    };
    let (theirs, ours) = (run("create"), run("create-file"));
    assert_eq!((ours.code, stderr(&ours)), (theirs.code, stderr(&theirs)));
    let marker = format!("{marker}-create-file");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.lines()
            .any(|l| l.contains(&marker) && l.contains("\"impersonatedUser\"")),
        "no audit event carries the extra {marker}"
    );
}

/// `-k` builds with the kubectl that ran the plugin (`KUBECTL_PATH`, which kubectl
/// 1.37 exports), not the first one on `PATH`.
#[test]
fn kustomize_runs_the_kubectl_that_ran_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        "resources:\n- cm.yaml\nnamePrefix: k-\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("cm.yaml"), MANIFEST).unwrap();
    // A `kubectl` first on PATH that would fail the build.
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("kubectl");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'the kubectl on PATH ran' >&2\nexit 3\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![cluster().plugin_dir.clone(), bin.path().to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    let target = dir.path().display().to_string();
    let run = |command: &str| {
        cluster()
            .kubectl()
            .args([command, "-k", &target, "--dry-run=client", "-o", "name"])
            .env("PATH", std::env::join_paths(&paths).unwrap())
            .run()
    };
    // The plugins first, then the failing kubectl, then the rest: the real kubectl
    // runs the plugin, and only `KUBECTL_PATH` leads the plugin back to it.
    let theirs = run("create");
    let ours = run("create-file");
    theirs.success();
    assert_eq!(
        (ours.code, ours.stdout.as_str(), ours.stderr.as_str()),
        (0, theirs.stdout.as_str(), ""),
        "create-file -k"
    );
}

/// A CRD and an instance of it in one file, `--dry-run=server`: no CRD is created, so
/// the instance fails to map, in kubectl's words, after the CRD's dry run.
#[test]
fn a_server_dry_run_does_not_map_the_input_s_crds() {
    let crd = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.global-flags.example.com
spec:
  group: global-flags.example.com
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: global-flags.example.com/v1
kind: Gadget
metadata:
  name: g1
";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("crd.yaml"), crd).unwrap();
    let run = |command: &str| {
        cluster()
            .kubectl()
            .current_dir(dir.path())
            .args([command, "-f", "crd.yaml", "--dry-run=server"])
            .run()
    };
    let (theirs, ours) = (run("create"), run("create-file"));
    assert_eq!(theirs.code, 1, "{theirs:?}");
    assert_eq!(
        (ours.code, ours.stdout.as_str(), stderr(&ours)),
        (theirs.code, theirs.stdout.as_str(), stderr(&theirs))
    );
}

/// A ConfigMap in another namespace than `-n` and two objects of a kind no CRD
/// defines, in one file: kubectl prints the mapping errors as one nested aggregate.
#[test]
fn mapping_errors_of_one_file_nest_as_kubectl_nests_them() {
    let manifest = "apiVersion: v1
kind: ConfigMap
metadata:
  name: a1
  namespace: global-flags-other
---
apiVersion: nope.example.com/v1
kind: Nope
metadata:
  name: n1
---
apiVersion: nope.example.com/v1
kind: Nope
metadata:
  name: n2
";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agg.yaml"), manifest).unwrap();
    let run = |command: &str| {
        cluster()
            .kubectl()
            .current_dir(dir.path())
            .args([
                command,
                "-f",
                "agg.yaml",
                "-n",
                "default",
                "--dry-run=client",
            ])
            .run()
    };
    let (theirs, ours) = (run("create"), run("create-file"));
    assert!(theirs.stderr.contains("\n["), "{theirs:?}");
    assert_eq!(
        (ours.code, ours.stdout.as_str(), stderr(&ours)),
        (theirs.code, theirs.stdout.as_str(), stderr(&theirs))
    );
}

/// `--server` with a path, for an API server a proxy relocates (here under
/// `/relocated`, everything else answered `404`): every request goes under it, as
/// client-go's `DefaultServerURL` keeps the path as a prefix — discovery, the
/// OpenAPI document `--validate` reads, the creates, a client dry run's discovery —
/// and kubectl and the plugins print the same.
#[tokio::test]
async fn a_server_path_prefixes_every_request() {
    use tests::faults::proxy::ApiProxy;
    let ours = cluster().namespace("server-path").await;
    let theirs = cluster().namespace("server-path-kubectl").await;
    let proxy = ApiProxy::start(&cluster().kubeconfig).unwrap();
    proxy.relocate(Some("/relocated"));
    let server = format!("--server=https://{}/relocated", proxy.addr);
    let run = |server: &str, args: &[&str]| {
        cluster()
            .kubectl()
            .env("KUBECONFIG", &proxy.kubeconfig)
            .args(args)
            .arg(server)
            .stdin(MANIFEST)
            .run()
    };
    // The control: the proxy serves nothing at `/`.
    let unrelocated = format!("--server=https://{}", proxy.addr);
    let plain = run(
        &unrelocated,
        &["create-file", "-f", "-", "-n", ours.as_str()],
    );
    assert_eq!(plain.code, 1, "{plain:?}");
    // A cold discovery cache: the client dry run asks the server.
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = format!("--cache-dir={}", cache_dir.path().display());
    let cases: [(&str, &[&str]); 3] = [
        ("create", &["-f", "-", "-o", "name"]),
        ("run", &["relocated", "--image=busybox", "-o", "name"]),
        (
            "run",
            &[
                "relocated-dry",
                "--image=busybox",
                "--dry-run=client",
                "-o",
                "name",
                &cache,
            ],
        ),
    ];
    for (command, args) in cases {
        let plugin = if command == "create" {
            "create-file"
        } else {
            "run-pod"
        };
        let kubectl = run(&server, &[&[command, "-n", theirs.as_str()], args].concat());
        let got = run(&server, &[&[plugin, "-n", ours.as_str()], args].concat());
        assert_eq!(kubectl.code, 0, "kubectl {command}: {kubectl:?}");
        assert_eq!(
            (got.code, got.stdout.as_str(), stderr(&got)),
            (kubectl.code, kubectl.stdout.as_str(), stderr(&kubectl)),
            "{plugin} {args:?}"
        );
    }
}
