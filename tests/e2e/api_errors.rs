//! The API server's refusals as every plugin prints them, beside kubectl 1.32 printing
//! the same refusal: stderr byte for byte, the exit code, nothing on stdout.
//! The rules themselves are `apiclient::status`; these tests prove the plugins go
//! through them against the real server.

use std::path::Path;

use tests::harness::{LIMITED_CONTEXT, Output, cluster};

/// A Pod the server refuses with two causes: the name and the protocol.
const BAD_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: Bad_Name\nspec:\n  containers:\n  - name: c\n    image: nginx\n    ports:\n    - containerPort: 80\n      protocol: tcp\n";
/// A ConfigMap the server refuses with one cause.
const BAD_CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n";
const CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\ndata:\n  a: b\n";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write fixture");
    path.display().to_string()
}

/// `kubectl <ours> ARGS` and `kubectl <theirs> ARGS`.
fn both(ours: &str, theirs: &str, args: &[&str]) -> (Output, Output) {
    let plugin = cluster().kubectl().arg(ours).args(args).run();
    let kubectl = cluster().kubectl().arg(theirs).args(args).run();
    (plugin, kubectl)
}

/// Both refused the same way: exit 1, nothing on stdout, the same stderr.
#[track_caller]
fn same_refusal(plugin: &Output, kubectl: &Output) {
    kubectl.code(1);
    plugin.code(1);
    assert_eq!(plugin.stdout, "");
    assert_eq!(plugin.stderr, kubectl.stderr);
}

#[tokio::test]
async fn create_file_invalid_is_worded_as_kubectl_words_it() {
    let ns = cluster().namespace("err-cf-invalid").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let pod = write(dir.path(), "bad.yaml", BAD_POD);
    let cm = write(dir.path(), "onecause.yaml", BAD_CONFIGMAP);
    // Alone, with several causes: the heading, a trailing space, a `* ` line each.
    let (plugin, kubectl) = both("create-file", "create", &["-n", ns.as_str(), "-f", &pod]);
    same_refusal(&plugin, &kubectl);
    assert!(
        plugin.stderr.starts_with(
            "The Pod \"Bad_Name\" is invalid: \n* metadata.name: Invalid value: \"Bad_Name\""
        ),
        "{}",
        plugin.stderr
    );
    assert!(
        plugin.stderr.ends_with(
            "\n* spec.containers[0].ports[0].protocol: Unsupported value: \"tcp\": supported values: \"SCTP\", \"TCP\", \"UDP\"\n"
        ),
        "{}",
        plugin.stderr
    );
    // Alone, with one cause: one line.
    let (plugin, kubectl) = both("create-file", "create", &["-n", ns.as_str(), "-f", &cm]);
    same_refusal(&plugin, &kubectl);
    assert!(
        plugin
            .stderr
            .starts_with("The ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value:"),
        "{}",
        plugin.stderr
    );
    // Two of them: each on one line, with its source.
    let (plugin, kubectl) = both(
        "create-file",
        "create",
        &["-n", ns.as_str(), "-f", &pod, "-f", &cm],
    );
    same_refusal(&plugin, &kubectl);
    assert_eq!(plugin.stderr.lines().count(), 2, "{}", plugin.stderr);
    assert!(
        plugin.stderr.starts_with(&format!(
            "Error from server (Invalid): error when creating \"{pod}\": Pod \"Bad_Name\" is invalid: [metadata.name: "
        )),
        "{}",
        plugin.stderr
    );
}

#[tokio::test]
async fn create_file_already_exists_forbidden_and_unauthorized_match_kubectl() {
    let ns = cluster().namespace("err-cf-exists").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let cm = write(dir.path(), "cm.yaml", CONFIGMAP);
    cluster()
        .kubectl()
        .args(["create", "-n", ns.as_str(), "-f", &cm])
        .run()
        .success();
    let (plugin, kubectl) = both("create-file", "create", &["-n", ns.as_str(), "-f", &cm]);
    same_refusal(&plugin, &kubectl);
    assert_eq!(
        plugin.stderr,
        format!(
            "Error from server (AlreadyExists): error when creating \"{cm}\": configmaps \"dup\" already exists\n"
        )
    );

    // The limited user may not create in this namespace.
    let (plugin, kubectl) = both(
        "create-file",
        "create",
        &["--context", LIMITED_CONTEXT, "-n", ns.as_str(), "-f", &cm],
    );
    same_refusal(&plugin, &kubectl);
    assert!(
        plugin.stderr.starts_with(&format!(
            "Error from server (Forbidden): error when creating \"{cm}\": configmaps is forbidden: User \"limited\" cannot create resource \"configmaps\""
        )),
        "{}",
        plugin.stderr
    );

    // A token the server does not know, with discovery already cached (kubectl and
    // the plugin read the same cache format; each gets a warm directory of its own),
    // so the refusal is the create's own 401.
    let cache = tempfile::tempdir().expect("cache dir");
    let (ours, theirs) = (cache.path().join("ours"), cache.path().join("kubectl"));
    let other = write(dir.path(), "other.yaml", &CONFIGMAP.replace("dup", "warm"));
    for (cmd, cache_dir) in [("create-file", &ours), ("create", &theirs)] {
        let cache_dir = cache_dir.display().to_string();
        cluster()
            .kubectl()
            .args([cmd, "-n", ns.as_str(), "--cache-dir", &cache_dir])
            .args(["--dry-run=server", "-f", &other])
            .run()
            .success();
    }
    let unauthorized = |cmd: &str, cache_dir: &Path| {
        cluster()
            .kubectl()
            .args([cmd, "-n", ns.as_str(), "--validate=false", "-f", &cm])
            .args(["--token", "not-a-token-of-this-server", "--cache-dir"])
            .arg(cache_dir)
            .run()
    };
    let (plugin, kubectl) = (
        unauthorized("create-file", &ours),
        unauthorized("create", &theirs),
    );
    same_refusal(&plugin, &kubectl);
    assert_eq!(
        plugin.stderr,
        format!(
            "error: You must be logged in to the server (error when creating \"{cm}\": Unauthorized)\n"
        )
    );
    // With validation on, the refusal comes first from the OpenAPI download.
    let (plugin, kubectl) = both(
        "create-file",
        "create",
        &[
            "-n",
            ns.as_str(),
            "-f",
            &cm,
            "--token",
            "not-a-token-of-this-server",
        ],
    );
    same_refusal(&plugin, &kubectl);
    assert_eq!(
        plugin.stderr,
        format!(
            "error: error validating \"{cm}\": error validating data: failed to download openapi: the server has asked for the client to provide credentials; if you choose to ignore these errors, turn validation off with --validate=false\n"
        )
    );
}

#[tokio::test]
async fn run_pod_invalid_already_exists_and_not_found_match_kubectl_run() {
    let ns = cluster().namespace("err-run-pod").await;
    // Two causes: the Pod's name and the container's (run names it after the Pod).
    let (plugin, kubectl) = both(
        "run-pod",
        "run",
        &["-n", ns.as_str(), "Bad_Name", "--image=nginx"],
    );
    same_refusal(&plugin, &kubectl);
    assert!(
        plugin
            .stderr
            .starts_with("The Pod \"Bad_Name\" is invalid: \n* metadata.name: "),
        "{}",
        plugin.stderr
    );
    // One cause.
    let (plugin, kubectl) = both(
        "run-pod",
        "run",
        &[
            "-n",
            ns.as_str(),
            "bad-port",
            "--image=nginx",
            "--port=99999",
        ],
    );
    same_refusal(&plugin, &kubectl);
    assert_eq!(
        plugin.stderr,
        "The Pod \"bad-port\" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 99999: must be between 1 and 65535, inclusive\n"
    );
    // AlreadyExists, the Pod created by kubectl.
    cluster()
        .kubectl()
        .args(["run", "-n", ns.as_str(), "web", "--image=nginx"])
        .run()
        .success();
    let (plugin, kubectl) = both(
        "run-pod",
        "run",
        &["-n", ns.as_str(), "web", "--image=nginx"],
    );
    same_refusal(&plugin, &kubectl);
    assert_eq!(
        plugin.stderr,
        "Error from server (AlreadyExists): pods \"web\" already exists\n"
    );
    // NotFound: a namespace that does not exist, for run-pod and create-file.
    let missing = format!("{}-missing", ns.as_str());
    let (plugin, kubectl) = both("run-pod", "run", &["-n", &missing, "web", "--image=nginx"]);
    same_refusal(&plugin, &kubectl);
    assert_eq!(
        plugin.stderr,
        format!("Error from server (NotFound): namespaces \"{missing}\" not found\n")
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let cm = write(dir.path(), "cm.yaml", CONFIGMAP);
    let (plugin, kubectl) = both("create-file", "create", &["-n", &missing, "-f", &cm]);
    same_refusal(&plugin, &kubectl);
    assert_eq!(
        plugin.stderr,
        format!(
            "Error from server (NotFound): error when creating \"{cm}\": namespaces \"{missing}\" not found\n"
        )
    );
}

/// kubectl 1.32 has no rolling-update; `kubectl get rc` meets the same refusals from
/// the same server, and kubectl 1.17 printed them by the same rules.
#[tokio::test]
async fn rolling_update_not_found_and_unauthorized_match_kubectl() {
    let ns = cluster().namespace("err-ru").await;
    let plugin = cluster()
        .kubectl()
        .args(["rolling-update", "-n", ns.as_str(), "missing", "missing-v2"])
        .arg("--image=nginx:2")
        .run();
    let kubectl = cluster()
        .kubectl()
        .args(["get", "rc", "-n", ns.as_str(), "missing"])
        .run();
    same_refusal(&plugin, &kubectl);
    assert_eq!(
        plugin.stderr,
        "Error from server (NotFound): replicationcontrollers \"missing\" not found\n"
    );

    let token = ["--token", "not-a-token-of-this-server"];
    let plugin = cluster()
        .kubectl()
        .args(["rolling-update", "-n", ns.as_str(), "missing", "missing-v2"])
        .arg("--image=nginx:2")
        .args(token)
        .run();
    let kubectl = cluster()
        .kubectl()
        .args(["get", "rc", "-n", ns.as_str(), "missing"])
        .args(token)
        .run();
    same_refusal(&plugin, &kubectl);
    assert_eq!(
        plugin.stderr,
        "error: You must be logged in to the server (Unauthorized)\n"
    );
}
