//! `--validate` against what the server publishes, beside kubectl 1.32 on
//! the 1.20 server, which has no server-side field validation: kubectl validates
//! against `/openapi/v2` on the client, and so must create-file. A CRD with a
//! structural schema is published there; `strict` refuses its unknown field, `warn`
//! logs that it cannot warn and sends, `false` sends. These run on
//! `harness::legacy_cluster()` (1.20.2) whatever the shared cluster runs. On the current
//! server the server validates: its words are compared manifest by manifest in the
//! fidelity suite (`fidelity.rs`), and the last test here checks what is downloaded to
//! decide it (OpenAPI v3, v2 only for Lists).

use std::path::Path;
use std::time::{Duration, Instant};

use tests::harness::{Output, cluster, legacy_cluster};

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write fixture");
    path.display().to_string()
}

/// klog's header (`W1125 17:23:48.276658   17026 `) holds the time and the pid; the
/// rest of the line is compared.
fn without_klog_headers(stderr: &str) -> String {
    stderr
        .split_inclusive('\n')
        .map(|line| {
            // `W` + `mmdd hh:mm:ss.uuuuuu` + the padded pid + ` `, then `file:line] `.
            let header_end = line
                .find("] ")
                .and_then(|end| line[..end].rfind(' '))
                .filter(|&end| {
                    line.starts_with('W')
                        && end > 22
                        && line[1..end]
                            .chars()
                            .all(|c| c.is_ascii_digit() || matches!(c, ' ' | ':' | '.'))
                });
            match header_end {
                Some(end) => format!("W<header>{}", &line[end..]),
                None => line.to_string(),
            }
        })
        .collect()
}

struct Crd {
    name: String,
    group: String,
}

impl Drop for Crd {
    fn drop(&mut self) {
        let _ = legacy_cluster()
            .kubectl()
            .args([
                "delete",
                "crd",
                &self.name,
                "--ignore-not-found",
                "--wait=false",
            ])
            .run();
    }
}

/// A CRD named after the test's namespace, created and published in the server's
/// OpenAPI document (which follows the CRD by a moment).
fn widget_crd(dir: &Path, ns: &str, probe: &str) -> Crd {
    let group = format!("{ns}.example.com");
    let name = format!("widgets.{group}");
    let crd = write(
        dir,
        "crd.yaml",
        &format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {name}\nspec:\n  group: {group}\n  scope: Namespaced\n  names: {{plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            required: [size]\n            properties:\n              size: {{type: integer}}\n              color: {{type: string}}\n"
        ),
    );
    legacy_cluster()
        .kubectl()
        .args(["create", "-f", &crd])
        .run()
        .success();
    let crd = Crd { name, group };
    // Published once kubectl's own strict validation refuses the probe.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = legacy_cluster()
            .kubectl()
            .args(["create", "-n", ns, "--dry-run=server", "-f", probe])
            .run();
        if out.code == 1 && out.stderr.contains("ValidationError(Widget.spec)") {
            break crd;
        }
        assert!(
            Instant::now() < deadline,
            "the CRD's schema was never published: {out:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn both(args: &[&str]) -> (Output, Output) {
    (
        legacy_cluster()
            .kubectl()
            .arg("create-file")
            .args(args)
            .run(),
        legacy_cluster().kubectl().arg("create").args(args).run(),
    )
}

#[tokio::test]
async fn strict_warn_and_false_against_a_crd_s_published_schema_as_kubectl() {
    let ns = legacy_cluster().namespace("val-crd").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let ns = ns.as_str();
    let group = format!("{ns}.example.com");
    let cr = write(
        dir.path(),
        "cr.yaml",
        &format!(
            "apiVersion: {group}/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n  colour: red\n"
        ),
    );
    let crd = widget_crd(dir.path(), ns, &cr);
    assert_eq!(crd.group, group);

    // strict (and the default, true): refused before anything is sent.
    for validate in ["--validate=strict", "--validate=true"] {
        let (plugin, kubectl) = both(&["-n", ns, validate, "--dry-run=server", "-f", &cr]);
        kubectl.code(1);
        plugin.code(1);
        assert_eq!(plugin.stdout, "");
        assert_eq!(plugin.stderr, kubectl.stderr);
        assert_eq!(
            plugin.stderr,
            format!(
                "error: error validating \"{cr}\": error validating data: ValidationError(Widget.spec): unknown field \"colour\" in com.example.{ns}.v1.Widget.spec; if you choose to ignore these errors, turn validation off with --validate=false\n"
            )
        );
    }

    // warn: the 1.20 server cannot warn; kubectl logs so and sends the object.
    let (plugin, kubectl) = both(&["-n", ns, "--validate=warn", "--dry-run=server", "-f", &cr]);
    kubectl.success();
    plugin.success();
    assert_eq!(plugin.stdout, kubectl.stdout);
    assert_eq!(
        plugin.stdout,
        format!("widget.{group}/w1 created (server dry run)\n")
    );
    assert_eq!(
        without_klog_headers(&plugin.stderr),
        without_klog_headers(&kubectl.stderr)
    );
    assert_eq!(
        without_klog_headers(&plugin.stderr),
        "W<header> schema.go:145] cannot perform warn validation if server-side field validation is unsupported, skipping validation\n"
    );

    // false: sent as written (the 1.20 server prunes the unknown field).
    let plugin = legacy_cluster()
        .kubectl()
        .args(["create-file", "-n", ns, "--validate=false", "-f", &cr])
        .run();
    plugin.success();
    assert_eq!(plugin.stdout, format!("widget.{group}/w1 created\n"));
    assert_eq!(plugin.stderr, "");
    let spec = legacy_cluster()
        .kubectl()
        .args(["get", "-n", ns, &format!("widgets.{group}"), "w1"])
        .args(["-o", "jsonpath={.spec}"])
        .run();
    spec.success();
    assert_eq!(spec.stdout, "{\"size\":3}");
}

/// Every problem of a built-in kind, in kubectl's words and order; a kind the server
/// does not know gets the mapping error, not a validation error; a ConfigMap whose
/// value is a number passes validation (a string accepts any scalar there) and is
/// refused by the server.
#[tokio::test]
async fn builtin_kinds_and_unknown_kinds_as_kubectl() {
    let ns = legacy_cluster().namespace("val-builtin").await;
    let ns = ns.as_str();
    let dir = tempfile::tempdir().expect("tempdir");
    let pod = write(
        dir.path(),
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: nginx\n    ports:\n    - containerPort: \"80\"\n      bogus: 1\n  volumes:\n  - name: v\n    rbd: {monitors: [a], image: i, imagefeatures: [x]}\n",
    );
    let nope = write(
        dir.path(),
        "nope.yaml",
        "apiVersion: v1\nkind: Nope\nmetadata:\n  name: nn\nspec: {x: 1}\n",
    );
    let cm = write(
        dir.path(),
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata: {a: 1}\n",
    );
    let nokind = write(dir.path(), "nokind.yaml", "metadata:\n  name: x\n");
    for (file, says) in [
        (
            &pod,
            "error validating data: [ValidationError(Pod.spec.containers[0].ports[0]): unknown field \"bogus\" in io.k8s.api.core.v1.ContainerPort, ValidationError(Pod.spec.containers[0].ports[0].containerPort): invalid type for io.k8s.api.core.v1.ContainerPort.containerPort: got \"string\", expected \"integer\", ValidationError(Pod.spec.volumes[0].rbd): unknown field \"imagefeatures\" in io.k8s.api.core.v1.RBDVolumeSource]",
        ),
        (
            &nope,
            "resource mapping not found for name: \"nn\" namespace: \"\"",
        ),
        (&cm, "Error from server (BadRequest): error when creating"),
        (
            &nokind,
            "error validating data: [apiVersion not set, kind not set]",
        ),
    ] {
        let (plugin, kubectl) = both(&["-n", ns, "--dry-run=server", "-f", file]);
        kubectl.code(1);
        plugin.code(1);
        assert_eq!(plugin.stdout, "", "{file}");
        assert_eq!(plugin.stderr, kubectl.stderr, "{file}");
        assert!(plugin.stderr.contains(says), "{file}: {}", plugin.stderr);
    }
}

/// The document is cached beside discovery and revalidated; with validation off it is
/// never fetched.
#[tokio::test]
async fn the_document_is_cached_and_off_the_path_of_validate_false() {
    let ns = legacy_cluster().namespace("val-cache").await;
    let ns = ns.as_str();
    let dir = tempfile::tempdir().expect("tempdir");
    let cm = write(
        dir.path(),
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata: {a: b}\n",
    );
    let cache = tempfile::tempdir().expect("cache");
    let cache_dir = cache.path().display().to_string();
    let run = |validate: &str| {
        legacy_cluster()
            .kubectl()
            .args(["create-file", "-n", ns, validate, "--dry-run=server"])
            .args(["--cache-dir", &cache_dir, "-f", &cm])
            .run()
    };
    let openapi = cache.path().join("kubeplug").join("openapi");
    run("--validate=false").success();
    assert!(!openapi.exists(), "fetched with --validate=false");
    run("--validate=strict").success();
    let servers: Vec<_> = std::fs::read_dir(&openapi)
        .expect("openapi cache")
        .filter_map(Result::ok)
        .collect();
    assert_eq!(servers.len(), 1);
    let document = servers[0].path().join("swagger.json");
    assert!(std::fs::metadata(&document).expect("document").len() > 1_000_000);
    // A second run revalidates (304) and keeps the same file. Other tests on this
    // cluster create CRDs, which changes the server's document (and rightly makes the
    // next run fetch it again), so a run that kept the file within three tries passes.
    let mtime = || {
        std::fs::metadata(&document)
            .expect("document")
            .modified()
            .expect("mtime")
    };
    let kept = (0..3).any(|_| {
        let written = mtime();
        run("--validate=strict").success();
        mtime() == written
    });
    assert!(kept, "the cached document was fetched again on every run");
}

/// rolling-update's `-f` is validated against the same document (kubectl 1.17 always
/// validated on the client): the same words as kubectl 1.32's `create -f` on this
/// server, before anything is sent (the old RC need not exist).
#[tokio::test]
async fn rolling_update_file_is_validated_against_the_server_s_schema() {
    let ns = legacy_cluster().namespace("val-ru").await;
    let ns = ns.as_str();
    let dir = tempfile::tempdir().expect("tempdir");
    let rc = write(
        dir.path(),
        "rc.yaml",
        "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: web-v2\nspec:\n  replica: 2\n  selector: {app: web, v: \"2\"}\n  template:\n    metadata:\n      labels: {app: web, v: \"2\"}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n        ports: [{containerPort: \"80\"}]\n",
    );
    let plugin = legacy_cluster()
        .kubectl()
        .args(["rolling-update", "-n", ns, "web-v1", "-f", &rc])
        .run();
    let kubectl = legacy_cluster()
        .kubectl()
        .args(["create", "-n", ns, "--dry-run=server", "-f", &rc])
        .run();
    kubectl.code(1);
    plugin.code(1);
    assert_eq!(plugin.stdout, "");
    assert_eq!(plugin.stderr, kubectl.stderr);
    assert!(
        plugin.stderr.contains(
            "[ValidationError(ReplicationController.spec): unknown field \"replica\" in io.k8s.api.core.v1.ReplicationControllerSpec, "
        ),
        "{}",
        plugin.stderr
    );
    // --validate=false: the file is read and the missing old RC is what stops it.
    let plugin = legacy_cluster()
        .kubectl()
        .args([
            "rolling-update",
            "-n",
            ns,
            "web-v1",
            "-f",
            &rc,
            "--validate=false",
        ])
        .run();
    plugin.code(1);
    assert!(!plugin.stderr.contains("validating"), "{}", plugin.stderr);
}

/// On the current server kubectl 1.37's order: `GET /openapi/v3` and the input's
/// group-versions' documents say the server validates, so the v2 document (2.4 MB) is
/// not downloaded at all; a warm run asks only the index (the documents' answers are
/// kept under their content hash); a `v1` List, whose items are validated on the
/// client, brings the v2 document, as with kubectl.
#[tokio::test]
async fn on_a_current_server_openapi_v3_decides_and_v2_comes_only_for_lists() {
    if cluster().release != tests::harness::Release::Current {
        return;
    }
    let ns = cluster().namespace("val-v3").await;
    let ns = ns.as_str();
    let dir = tempfile::tempdir().expect("tempdir");
    let cm = write(
        dir.path(),
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: nginx}]}}}\n",
    );
    let list = write(
        dir.path(),
        "list.yaml",
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: l}}\n",
    );
    let cache = tempfile::tempdir().expect("cache");
    let cache_dir = cache.path().display().to_string();
    // The OpenAPI paths the run asked for (`-v=6` logs every request).
    let openapi_gets = |file: &str, cache_dir: &str| -> Vec<String> {
        let out = cluster()
            .kubectl()
            .args(["create-file", "-n", ns, "--dry-run=server", "-v=6"])
            .args(["--cache-dir", cache_dir, "-f", file])
            .run();
        out.success();
        let mut paths = tests::klog::logged_get_paths(&out.stderr);
        paths.retain(|p| p.starts_with("/openapi"));
        paths
    };
    assert_eq!(
        openapi_gets(&cm, &cache_dir),
        [
            "/openapi/v3",
            "/openapi/v3/api/v1",
            "/openapi/v3/apis/apps/v1"
        ]
    );
    assert_eq!(openapi_gets(&cm, &cache_dir), ["/openapi/v3"]);
    let server = std::fs::read_dir(cache.path().join("kubeplug/openapi"))
        .expect("openapi cache")
        .filter_map(Result::ok)
        .next()
        .expect("one server")
        .path();
    let entries: Vec<u64> = std::fs::read_dir(server.join("v3"))
        .expect("v3 cache")
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .collect();
    assert_eq!(entries.len(), 2, "one entry per group-version");
    assert!(
        entries.iter().all(|&len| len < 64 * 1024),
        "the entries keep the answers, not the documents: {entries:?}"
    );
    assert!(!server.join("swagger.json").exists(), "v2 downloaded");
    assert_eq!(openapi_gets(&list, &cache_dir), ["/openapi/v2"]);
}
