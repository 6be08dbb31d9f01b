//! `kubectl create-file` through the real kubectl's plugin lookup.
//!
//! Cluster-scoped objects (Namespaces, ClusterRoles, CRDs) are named after the test's
//! namespace so that runs never collide, and are deleted at the end of each test.

use std::path::Path;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use tests::harness::{LIMITED_CONTEXT, LIMITED_NAMESPACE, Output, cluster};
use tests::objects::configmap_names;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn write(dir: &Path, rel: &str, text: &str) -> String {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write fixture");
    path.display().to_string()
}

fn create_file(args: &[&str]) -> Output {
    cluster().kubectl().arg("create-file").args(args).run()
}

fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

fn configmap(name: &str, labels: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels: {{{labels}}}\ndata:\n  k: v\n"
    )
}

async fn delete_cluster_scoped(kind_plural: &str, name: &str) {
    let _ = cluster()
        .kubectl()
        .args([
            "delete",
            kind_plural,
            name,
            "--ignore-not-found",
            "--wait=false",
        ])
        .run();
}

/// A directory tree with -R, a List, a multi-document file, mixed namespaced and
/// cluster-scoped kinds, and a CRD with an instance of it, all in one run.
#[tokio::test]
async fn directory_tree_with_lists_crds_and_cluster_scoped_kinds() {
    let ns = cluster().namespace("cf-tree").await;
    let tag = ns.as_str();
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("tree");
    // The instance comes before its CRD in the input: the CRD is still created first.
    write(
        &root,
        "a-widgets.yaml",
        &format!(
            "apiVersion: {tag}.example.com/v1\nkind: Gizmo\nmetadata:\n  name: g1\nspec:\n  size: 3\n"
        ),
    );
    write(
        &root,
        "b-list.json",
        // Two lists of two kinds in one stream (a list inside a List is refused, as
        // by kubectl: `long_tail::lists_map_and_flatten_as_kubectl_does`).
        r#"{"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-list-1"}}]}
           {"apiVersion": "v1", "kind": "ConfigMapList", "items": [
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-list-2"}}]}"#,
    );
    write(
        &root,
        "c-multi.yaml",
        &format!(
            "---\n{}---\n\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {tag}-reader\nrules: []\n",
            configmap("multi-1", "")
        ),
    );
    write(
        &root,
        "sub/deeper/crd.yaml",
        &format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gizmos.{tag}.example.com\n\
             spec:\n  group: {tag}.example.com\n  scope: Namespaced\n  names: {{kind: Gizmo, plural: gizmos, singular: gizmo}}\n\
             \x20 versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n\
             \x20       type: object\n        x-kubernetes-preserve-unknown-fields: true\n"
        ),
    );
    write(&root, "sub/README.md", "not a manifest");

    let out = create_file(&["-R", "-f", &root.display().to_string(), "-n", tag]);
    out.success();
    assert_eq!(
        lines(&out.stdout),
        [
            format!("gizmo.{tag}.example.com/g1 created"),
            "configmap/from-list-1 created".into(),
            "configmap/from-list-2 created".into(),
            "configmap/multi-1 created".into(),
            format!("clusterrole.rbac.authorization.k8s.io/{tag}-reader created"),
            format!(
                "customresourcedefinition.apiextensions.k8s.io/gizmos.{tag}.example.com created"
            ),
        ]
    );
    assert_eq!(
        configmap_names(tag).await,
        ["from-list-1", "from-list-2", "multi-1"]
    );
    let gvk = GroupVersionKind::gvk(&format!("{tag}.example.com"), "v1", "Gizmo");
    let gizmos: Api<DynamicObject> = Api::namespaced_with(
        cluster().client().await,
        tag,
        &ApiResource::from_gvk_with_plural(&gvk, "gizmos"),
    );
    assert_eq!(
        gizmos.get("g1").await.expect("the instance exists").data["spec"]["size"],
        3
    );

    // Without -R only the top level is read: the CRD is not, so its kind is unknown
    // unless discovery now serves it (it does), and the names already exist.
    let again = create_file(&["-f", &root.display().to_string(), "-n", tag, "-o", "name"]);
    again.code(1);
    assert!(again.stdout.is_empty(), "{}", again.stdout);
    assert!(
        again.stderr.contains(&format!(
            "error when creating \"{}\": gizmos.{tag}.example.com \"g1\" already exists",
            root.join("a-widgets.yaml").display()
        )),
        "{}",
        again.stderr
    );

    delete_cluster_scoped("crd", &format!("gizmos.{tag}.example.com")).await;
    delete_cluster_scoped("clusterrole", &format!("{tag}-reader")).await;
}

/// Namespaces are created before the objects that live in them.
#[tokio::test]
async fn namespaces_first_and_stdin() {
    let ns = cluster().namespace("cf-nsfirst").await;
    let fresh = format!("{}-new", ns.as_str());
    let input = format!(
        "{}---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {fresh}\n",
        configmap("inside", "").replace(
            "name: inside",
            &format!("name: inside\n  namespace: {fresh}")
        )
    );
    let out = cluster()
        .kubectl()
        .args(["create-file", "-f", "-", "-o", "name"])
        .stdin(input)
        .run();
    out.success();
    assert_eq!(
        lines(&out.stdout),
        ["configmap/inside", &format!("namespace/{fresh}")]
    );
    assert_eq!(configmap_names(&fresh).await, ["inside"]);
    let _ = Api::<Namespace>::all(cluster().client().await)
        .delete(&fresh, &DeleteParams::background())
        .await;
}

/// `-l` filters before creating; an explicit `-n` that disagrees with an object's
/// namespace is kubectl's error, while the rest is created.
#[tokio::test]
async fn selector_and_namespace_mismatch() {
    let ns = cluster().namespace("cf-select").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(
        dir.path(),
        "m.yaml",
        &format!(
            "{}---\n{}---\n{}",
            configmap("web", "app: web"),
            configmap("db", "app: db"),
            configmap("elsewhere", "app: web")
                .replace("name: elsewhere", "name: elsewhere\n  namespace: other")
        ),
    );
    let out = create_file(&["-f", &f, "-l", "app=web", "-n", ns.as_str()]);
    out.code(1);
    assert_eq!(out.stdout, "configmap/web created\n");
    assert_eq!(
        out.stderr,
        format!(
            "error: the namespace from the provided object \"other\" does not match the namespace \"{}\". You must pass '--namespace=other' to perform this operation.\n",
            ns.as_str()
        )
    );
    assert_eq!(configmap_names(ns.as_str()).await, ["web"]);
}

/// A failed create does not stop the others, a document that does not validate ends
/// its file (as kubectl's reader stops there), other files go on; every error is
/// reported at the end with its file, in kubectl's order and grouping, and the exit
/// code is 1.
#[tokio::test]
async fn continue_on_error_reports_everything_at_the_end() {
    let ns = cluster().namespace("cf-errors").await;
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "d/1-good.yaml", &configmap("good", ""));
    let mixed = write(
        dir.path(),
        "d/2-mixed.yaml",
        &format!(
            "{}---\n{}---\napiVersion: v1\nmetadata:\n  name: no-kind\n---\nkind: [broken\n---\n{}",
            configmap("second", ""),
            configmap("good", ""),
            configmap("never-read", "")
        ),
    );
    write(dir.path(), "d/3-binary.yaml", "\u{7f}ELF\u{0}\u{0}");
    let out = create_file(&[
        "-f",
        &dir.path().join("d").display().to_string(),
        "-n",
        ns.as_str(),
    ]);
    out.code(1);
    assert_eq!(
        lines(&out.stdout),
        ["configmap/good created", "configmap/second created"]
    );
    let binary = dir.path().join("d/3-binary.yaml").display().to_string();
    assert_eq!(
        lines(&out.stderr),
        [
            format!(
                "Error from server (AlreadyExists): error when creating \"{mixed}\": configmaps \"good\" already exists"
            ),
            // The inputs' errors after the objects', as one aggregate (kubectl's
            // EagerVisitorList inside its ContinueOnErrorVisitor; report.rs).
            format!(
                "[error validating \"{mixed}\": error validating data: kind not set; if you choose to ignore these errors, turn validation off with --validate=false, error parsing {binary}: not a YAML or JSON text file (control character at line 1)]"
            ),
        ]
    );
    assert_eq!(configmap_names(ns.as_str()).await, ["good", "second"]);
}

/// `--dry-run=server` sends the requests (and gets the server's checks) but nothing
/// is stored.
#[tokio::test]
async fn server_dry_run_creates_nothing() {
    let ns = cluster().namespace("cf-dry").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(
        dir.path(),
        "a.yaml",
        &format!("{}---\n{}", configmap("a", ""), configmap("b", "")),
    );
    let out = create_file(&["-f", &f, "-n", ns.as_str(), "--dry-run=server"]);
    out.success();
    assert_eq!(
        lines(&out.stdout),
        [
            "configmap/a created (server dry run)",
            "configmap/b created (server dry run)"
        ]
    );
    assert!(configmap_names(ns.as_str()).await.is_empty());
}

/// Forbidden for a user without rights on the cluster scope; its namespaced objects
/// are still created.
#[tokio::test]
async fn forbidden_is_reported_and_the_rest_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(
        dir.path(),
        "a.yaml",
        &format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cf-forbidden-{}\n---\n{}",
            std::process::id(),
            configmap("limited-ok", "")
        ),
    );
    let out = create_file(&[
        "--context",
        LIMITED_CONTEXT,
        "-f",
        &f,
        "-n",
        LIMITED_NAMESPACE,
        "-o",
        "name",
    ]);
    out.code(1);
    assert_eq!(out.stdout, "configmap/limited-ok\n");
    assert!(out.stderr.starts_with(&format!("Error from server (Forbidden): error when creating \"{f}\": namespaces is forbidden: User \"limited\" cannot create resource \"namespaces\"")), "{}", out.stderr);
    let api: Api<ConfigMap> = Api::namespaced(cluster().client().await, LIMITED_NAMESPACE);
    let _ = api.delete("limited-ok", &DeleteParams::default()).await;
}

/// `-f http://…` served on loopback, including a 404.
#[tokio::test]
async fn manifests_from_a_url() {
    let ns = cluster().namespace("cf-url").await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let body = format!(
        "{}---\n{}",
        configmap("from-url-1", ""),
        configmap("from-url-2", "")
    );
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = vec![0u8; 4096];
            let n = sock.read(&mut buf).await.unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]).to_string();
            let answer = if request.starts_with("GET /m.yaml ") {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
            } else {
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_string()
            };
            let _ = sock.write_all(answer.as_bytes()).await;
            let _ = sock.shutdown().await;
        }
    });
    let url = format!("http://{addr}/m.yaml");
    let missing = format!("http://{addr}/missing.yaml");
    // The plugin runs as a child process: run it off the runtime so the server task
    // above keeps answering.
    let args = vec![
        "create-file".to_string(),
        "-f".into(),
        url,
        "-f".into(),
        missing.clone(),
        "-n".into(),
        ns.as_str().into(),
    ];
    let out = tokio::task::spawn_blocking(move || cluster().kubectl().args(&args).run())
        .await
        .expect("join");
    out.code(1);
    assert_eq!(
        lines(&out.stdout),
        [
            "configmap/from-url-1 created",
            "configmap/from-url-2 created"
        ]
    );
    assert_eq!(
        out.stderr,
        format!(
            "error: unable to read URL \"{missing}\", server reported 404 Not Found, status code=404\n"
        )
    );
    assert_eq!(
        configmap_names(ns.as_str()).await,
        ["from-url-1", "from-url-2"]
    );
}

/// `-k DIR` runs kustomize (`kubectl kustomize` here) and creates its output.
#[tokio::test]
async fn kustomization_directory() {
    let ns = cluster().namespace("cf-kustomize").await;
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "cm.yaml", &configmap("base", ""));
    write(
        dir.path(),
        "kustomization.yaml",
        &format!(
            "namespace: {}\nnamePrefix: kz-\nresources:\n- cm.yaml\n",
            ns.as_str()
        ),
    );
    let out = create_file(&["-k", &dir.path().display().to_string()]);
    out.success();
    assert_eq!(out.stdout, "configmap/kz-base created\n");
    assert_eq!(configmap_names(ns.as_str()).await, ["kz-base"]);
}

/// Creating N objects of a built-in kind is N requests in their namespace: one POST
/// each, no GET or retry per object (discovery, cluster-wide and cached on disk, is
/// at most one request per group-version and does not touch the namespace).
#[tokio::test]
async fn n_objects_are_n_requests() {
    let state_dir = cluster().kubeconfig.parent().map(Path::to_path_buf);
    let log = state_dir.and_then(|d| {
        localcluster::state::ClusterState::read(&d)
            .ok()
            .flatten()?
            .audit_log
    });
    let Some(log) = log else {
        assert!(
            std::env::var_os("KUBEPLUG_E2E_KUBECONFIG").is_some(),
            "the harness's own cluster must have an audit log"
        );
        eprintln!("skipped: the cluster at KUBEPLUG_E2E_KUBECONFIG has no audit log");
        return;
    };
    let ns = cluster().namespace("cf-requests").await;
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..40 {
        write(
            dir.path(),
            &format!("cm-{i:02}.yaml"),
            &configmap(&format!("cm-{i:02}"), ""),
        );
    }
    let out = create_file(&[
        "-f",
        &dir.path().display().to_string(),
        "-n",
        ns.as_str(),
        "-o",
        "name",
    ]);
    out.success();
    assert_eq!(out.stdout.lines().count(), 40);
    // Printed in input order although created concurrently.
    assert_eq!(out.stdout.lines().next(), Some("configmap/cm-00"));
    assert_eq!(out.stdout.lines().last(), Some("configmap/cm-39"));
    let text = std::fs::read_to_string(&log).expect("audit log");
    let ours: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["stage"] == "ResponseComplete")
        .filter(|e| {
            e["userAgent"]
                .as_str()
                .is_some_and(|ua| ua.starts_with("kubeplug/"))
        })
        .filter(|e| e["objectRef"]["namespace"] == ns.as_str())
        .map(|e| e["verb"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(ours.len(), 40, "{ours:?}");
    assert!(ours.iter().all(|v| v == "create"), "{ours:?}");
}

/// The ConfigMap `settings` and the Deployment `web` (2 replicas, nginx:1.27 on port
/// 80) that the output-template tests create, in one file under `dir`.
fn settings_and_web(dir: &Path) -> String {
    write(
        dir,
        "objs.yaml",
        &format!(
            "{}---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {{app: web}}\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        ports:\n        - containerPort: 80\n",
            configmap("settings", "app: web")
        ),
    )
}

/// Creates [`settings_and_web`] with `-o OUTPUT`, checks that it printed what
/// `kubectl get OBJECT -o OUTPUT` prints for each of the two objects in turn, and
/// returns the output.
fn created_like_kubectl_get(ns: &str, manifest: &str, output: &str) -> Output {
    let out = create_file(&["-n", ns, "-f", manifest, "-o", output]);
    out.success();
    let mut expected = String::new();
    for object in ["configmap/settings", "deployment/web"] {
        let get = cluster()
            .kubectl()
            .args(["get", object, "-n", ns, "-o", output])
            .run();
        get.success();
        expected.push_str(&get.stdout);
    }
    assert_eq!(out.stdout, expected, "{output}");
    out
}

/// `-o jsonpath=…` prints each created object through the template as
/// `kubectl get -o jsonpath=…` does (whole numbers stay integers, so the `==2` filter
/// and the replica count print the same in both).
#[tokio::test]
async fn jsonpath_output_matches_kubectl_get() {
    let ns = cluster().namespace("create-file-jsonpath").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = settings_and_web(dir.path());
    let template = r#"{.kind}/{.metadata.name} {.metadata.labels} {.data.k}{.spec.replicas}{range .spec.template.spec.containers[?(@.ports[0].containerPort==80)]} {.image}{end}{"\n"}"#;
    let out = created_like_kubectl_get(ns.as_str(), &manifest, &format!("jsonpath={template}"));
    assert_eq!(
        lines(&out.stdout),
        [
            r#"ConfigMap/settings {"app":"web"} v"#,
            r#"Deployment/web {"app":"web"} 2 nginx:1.27"#
        ]
    );
}

/// `-o go-template=…` prints each created object through the template as
/// `kubectl get -o go-template=…` does: maps as `map[k:v]`, a missing key as
/// `<no value>`, whole numbers as integers (so `eq .replicas 2` holds), and a
/// template failing on one object reported with kubectl's message.
#[tokio::test]
async fn go_template_output_matches_kubectl_get() {
    let ns = cluster().namespace("create-file-gotemplate").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = settings_and_web(dir.path());
    let template = r#"{{.kind}}/{{.metadata.name}} {{.metadata.labels}} {{.data.k}}{{with .spec}} {{.replicas}}{{if eq .replicas 2}} two{{end}}{{range .template.spec.containers}} {{.image}}{{range .ports}}:{{.containerPort}}{{end}}{{end}}{{end}}{{"\n"}}"#;
    let out = created_like_kubectl_get(ns.as_str(), &manifest, &format!("go-template={template}"));
    assert_eq!(
        lines(&out.stdout),
        [
            "ConfigMap/settings map[app:web] v",
            "Deployment/web map[app:web] <no value> 2 two nginx:1.27:80"
        ]
    );

    // With missing keys refused, the ConfigMap (no .spec) fails and the Deployment
    // still prints (a client dry run: the objects exist already); `kubectl get` of
    // the ConfigMap fails with the same message. (One `kubectl get` of both would
    // hand the template a List, which has no .metadata.name.)
    let strict = r#"{{.metadata.name}} {{.spec.replicas}}{{"\n"}}"#;
    let out = create_file(&[
        "-n",
        ns.as_str(),
        "-f",
        &manifest,
        "--dry-run=client",
        "--allow-missing-template-keys=false",
        "-o",
        &format!("go-template={strict}"),
    ]);
    out.code(1);
    let get = cluster()
        .kubectl()
        .args([
            "get",
            "configmap/settings",
            "-n",
            ns.as_str(),
            "--allow-missing-template-keys=false",
            "-o",
        ])
        .arg(format!("go-template={strict}"))
        .run();
    get.code(1);
    let message = "template: output:1:26: executing \"output\" at <.spec.replicas>: map has no entry for key \"spec\"";
    for text in [&out.stderr, &get.stderr] {
        assert!(text.contains(message), "{text}");
    }
    assert!(
        out.stdout
            .starts_with(&format!("settings Error executing template: {message}. ")),
        "{}",
        out.stdout
    );
    assert!(out.stdout.ends_with("\n\nweb 2\n"), "{}", out.stdout);
}

/// The API server's warnings (here: a deprecated API of the cluster's release) reach stderr exactly as
/// kubectl shows them, once per text; `--warnings-as-errors` fails a run that
/// otherwise succeeded, after creating everything, as kubectl does.
#[tokio::test]
async fn server_warnings_like_kubectl_and_warnings_as_errors() {
    let ns = cluster().namespace("cf-warnings").await;
    let dir = tempfile::tempdir().expect("tempdir");
    // A deprecated kind of the cluster's release (see `colour::deprecated_object`).
    let (manifest, warning) = crate::colour::deprecated_object(cluster().release);
    let (resource, gvk) = match cluster().release {
        tests::harness::Release::V1_20 => (
            "role.rbac.authorization.k8s.io",
            GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", "Role"),
        ),
        tests::harness::Release::Current => {
            ("endpoints", GroupVersionKind::gvk("", "v1", "Endpoints"))
        }
    };
    let objects = |prefix: &str| {
        (1..=2)
            .map(|i| manifest.replace("NAME", &format!("{prefix}{i}")))
            .collect::<Vec<_>>()
            .join("---\n")
    };
    let ours = write(dir.path(), "ours.yaml", &objects("ours-"));
    let theirs = write(dir.path(), "theirs.yaml", &objects("theirs-"));
    let warning = format!("Warning: {warning}\n");

    let out = create_file(&["-f", &ours, "-n", ns.as_str()]);
    out.success();
    let kubectl = cluster()
        .kubectl()
        .args(["create", "-f", &theirs, "-n", ns.as_str()])
        .run();
    kubectl.success();
    // Two deprecated requests, one line: deduplicated as kubectl does.
    assert_eq!(out.stderr, kubectl.stderr);
    assert_eq!(out.stderr, warning);
    assert_eq!(
        lines(&out.stdout),
        [
            format!("{resource}/ours-1 created"),
            format!("{resource}/ours-2 created")
        ]
    );

    // --warnings-as-errors: everything is created, then the run fails. (kubectl 1.32
    // reports this one through klog, `E… run.go:72] "command failed" err="1 warning
    // received"`; ours is an ordinary `error:` line.)
    let strict = write(dir.path(), "strict.yaml", &objects("strict-"));
    let out = create_file(&["-f", &strict, "-n", ns.as_str(), "--warnings-as-errors"]);
    out.code(1);
    assert_eq!(out.stderr, format!("{warning}error: 1 warning received\n"));
    assert_eq!(lines(&out.stdout).len(), 2, "{}", out.stdout);
    let created: Api<DynamicObject> = Api::namespaced_with(
        cluster().client().await,
        ns.as_str(),
        &ApiResource::from_gvk(&gvk),
    );
    for name in ["strict-1", "strict-2"] {
        created
            .get(name)
            .await
            .expect("created despite the warning");
    }

    // Without warnings, the flag changes nothing.
    let plain = write(dir.path(), "cm.yaml", &configmap("no-warning", "a: b"));
    let out = create_file(&["-f", &plain, "-n", ns.as_str(), "--warnings-as-errors"]);
    out.success();
    assert_eq!(out.stderr, "");
}

/// `--record` on a real create: the same change cause as kubectl 1.32's
/// `create --record` for the same command line (its text names `kubectl create`,
/// ours `kubectl create-file`), and the same deprecation notice.
#[tokio::test]
async fn record_writes_the_change_cause_kubectl_writes() {
    let ns = cluster().namespace("create-file-record").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(dir.path(), "cm.yaml", &configmap("same", ""));
    let args = ["--record", "-f", file.as_str(), "-n", ns.as_str()];
    let cms: Api<ConfigMap> = Api::namespaced(cluster().client().await, ns.as_str());
    let change_cause = |cm: ConfigMap| {
        cm.metadata
            .annotations
            .unwrap_or_default()
            .get("kubernetes.io/change-cause")
            .cloned()
            .expect("change-cause annotation")
    };
    let theirs = cluster().kubectl().arg("create").args(args).run();
    theirs.success();
    let theirs_cause = change_cause(cms.get("same").await.expect("configmap"));
    cms.delete("same", &DeleteParams::default())
        .await
        .expect("delete");
    let ours = create_file(&args);
    ours.success();
    assert_eq!(ours.stderr, theirs.stderr);
    assert_eq!(
        ours.stderr,
        "Flag --record has been deprecated, --record will be removed in the future\n"
    );
    assert_eq!(
        change_cause(cms.get("same").await.expect("configmap")),
        theirs_cause.replacen("kubectl create ", "kubectl create-file ", 1)
    );
}

/// Discovery as kubectl 1.37 asks it on the current server: a cold cache costs the two
/// aggregated answers (`/api`, `/apis`), whatever the number of group-versions in the
/// input, and fills the cache for every group-version; a warm run asks nothing.
#[tokio::test]
async fn aggregated_discovery_cold_is_two_requests_and_warm_none() {
    if cluster().release != tests::harness::Release::Current {
        return;
    }
    let ns = cluster().namespace("cf-aggregated").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(
        dir.path(),
        "three.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: nginx}]}}}\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}\n",
    );
    let cache = tempfile::tempdir().expect("cache");
    let cache_dir = cache.path().display().to_string();
    let discovery_gets = || -> Vec<String> {
        let out = create_file(&[
            "-n",
            ns.as_str(),
            "--dry-run=server",
            "--validate=false",
            "-v=6",
            "--cache-dir",
            &cache_dir,
            "-f",
            &file,
        ]);
        out.success();
        tests::klog::logged_get_paths(&out.stderr)
    };
    assert_eq!(discovery_gets(), ["/api", "/apis"]);
    assert_eq!(discovery_gets(), Vec::<String>::new());
    let server = server_cache_dir(&cache.path().join("kubeplug/discovery"));
    for gv in ["v1", "apps/v1", "batch/v1", "rbac.authorization.k8s.io/v1"] {
        assert!(
            server.join(gv).join("serverresources.json").exists(),
            "{gv} not cached"
        );
    }
}

/// The one server directory under a discovery cache's `root`.
fn server_cache_dir(root: &Path) -> std::path::PathBuf {
    std::fs::read_dir(root)
        .expect("discovery cache")
        .filter_map(Result::ok)
        .next()
        .expect("one server")
        .path()
}

/// A discovery cache that another server left at the same address (a cluster
/// recreated at another version): a group-version the latest group list leaves out is
/// not trusted, as kubectl's cache does not trust it. Each cache is warmed from this
/// server, then a fresh `batch/v1beta1` list (served by 1.20, not by 1.37) is planted
/// in both: both map through the server and say no match. Before, create-file mapped
/// the planted version and the server answered `NotFound`.
#[tokio::test]
async fn a_group_version_another_server_left_in_the_cache_is_not_trusted() {
    if cluster().release != tests::harness::Release::Current {
        return;
    }
    let ns = cluster().namespace("cf-stale-cache").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let warm = write(dir.path(), "warm.yaml", &configmap("warm", ""));
    let cronjob = write(
        dir.path(),
        "cronjob.yaml",
        "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: old}\nspec: {schedule: '* * * * *', jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}\n",
    );
    let planted = r#"{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"batch/v1beta1","resources":[{"name":"cronjobs","singularName":"cronjob","namespaced":true,"kind":"CronJob","verbs":["create","delete","get","list","patch","update","watch"],"shortNames":["cj"],"categories":["all"]}]}"#;
    let plant = |root: &Path| {
        let file = server_cache_dir(root).join("batch/v1beta1/serverresources.json");
        std::fs::create_dir_all(file.parent().expect("a directory")).expect("mkdir");
        std::fs::write(file, planted).expect("plant");
    };
    let caches = tempfile::tempdir().expect("caches");
    let ours = caches.path().join("ours").display().to_string();
    let theirs = caches.path().join("theirs").display().to_string();
    let run_ours = |file: &str, extra: &[&str]| {
        create_file(
            &[
                extra,
                &["-n", ns.as_str(), "--cache-dir", &ours, "-f", file],
            ]
            .concat(),
        )
    };
    let run_theirs = |file: &str, extra: &[&str]| {
        let args = ["-n", ns.as_str(), "--cache-dir", &theirs, "-f", file];
        cluster()
            .kubectl()
            .arg("create")
            .args(extra)
            .args(args)
            .run()
    };
    run_ours(&warm, &["--dry-run=server"]).success();
    run_theirs(&warm, &["--dry-run=server"]).success();
    plant(&caches.path().join("ours/kubeplug/discovery"));
    plant(&caches.path().join("theirs/discovery"));

    let theirs_out = run_theirs(&cronjob, &[]);
    theirs_out.code(1);
    let ours_out = run_ours(&cronjob, &[]);
    ours_out.code(1);
    assert_eq!(ours_out.stdout, theirs_out.stdout);
    assert_eq!(ours_out.stderr, theirs_out.stderr);
    assert!(
        ours_out
            .stderr
            .contains("no matches for kind \"CronJob\" in version \"batch/v1beta1\""),
        "{}",
        ours_out.stderr
    );
}
