//! The objects run-pod prints, byte for byte beside kubectl 1.32, and the
//! client dry run's mapping through the server's discovery, beside kubectl where it
//! has the command.
//!
//! - The Pod and the `--expose` Service: `kubectl run` and `kubectl run-pod` with the
//!   same flags in two namespaces, for the client dry run, the server dry run and the
//!   real create; what the server makes different per object (namespace, uid, times,
//!   resourceVersion, the cluster IP, the service-account token's name) is masked.
//! - The 1.17 generators' objects (kubectl 1.32 has no command that makes them):
//!   run-pod's output against kubectl's typed encoding of that same output —
//!   `kubectl set image --local -f - '*=kubeplug-probe'`, which decodes it into
//!   kubectl's Go struct and prints it — with the image written back.
//! - `--dry-run=client` of kinds the server does not serve (on 1.20 `batch/v1`
//!   CronJob and `policy/v1` PodDisruptionBudget; on current servers `batch/v1beta1`
//!   and `policy/v1beta1`) and of kinds it serves, create-file beside `kubectl create
//!   -f`, run-pod's generators against what discovery lists.
//!
//! [`FORMATS`] lists the outputs compared: `-o json` in Go's field order and `-o yaml`
//! through go-yaml v2's emitter (`goyaml::emit`).

use crate::run_pod::run_pod;
use kube::Client;
use tests::harness::{Output, cluster};

/// The `-o` formats compared with kubectl.
const FORMATS: &[&str] = &["json", "yaml"];

/// The three ways of running: the client dry run, the server dry run, the create.
const MODES: &[&[&str]] = &[&["--dry-run=client"], &["--dry-run=server"], &[]];

fn kubectl(ns: &str, args: &[&str]) -> Output {
    cluster().kubectl().args(["-n", ns]).args(args).run()
}

/// The output with what differs between two creates of the same object masked: the
/// namespace's name, and the values of the fields the server fills per object.
fn masked(text: &str, ns: &str) -> String {
    const PER_OBJECT: &[&str] = &[
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "clusterIP",
        "selfLink",
        "time",
    ];
    let text = text.replace(ns, "NAMESPACE");
    let mut out = String::new();
    // Inside `clusterIPs` (a list of the service's addresses).
    let mut addresses = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        if addresses {
            addresses = !(trimmed.starts_with(']') || trimmed.contains(':'));
            if addresses || trimmed.starts_with('-') {
                let comma = if trimmed.ends_with(',') { "," } else { "" };
                let item = if trimmed.starts_with('-') {
                    "- MASKED"
                } else {
                    "\"MASKED\""
                };
                out.push_str(&format!("{indent}{item}{comma}\n"));
                continue;
            }
        }
        if trimmed.starts_with("\"clusterIPs\": [") || trimmed == "clusterIPs:" {
            addresses = true;
        }
        let key = PER_OBJECT.iter().find(|k| {
            trimmed.starts_with(&format!("\"{k}\": \"")) || trimmed.starts_with(&format!("{k}: "))
        });
        match key {
            Some(key) => {
                let comma = if trimmed.ends_with(',') { "," } else { "" };
                let json = trimmed.starts_with('"');
                if json {
                    out.push_str(&format!("{indent}\"{key}\": \"MASKED\"{comma}\n"));
                } else {
                    out.push_str(&format!("{indent}{key}: MASKED\n"));
                }
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    // The service account's token volume, where the server mounts one: a Secret's
    // (`default-token-x7k2p`, 1.20) or a projected one (`kube-api-access-x7k2p`).
    let out = mask_token_suffixes(&out, "default-token-");
    mask_token_suffixes(&out, "kube-api-access-")
}

fn mask_token_suffixes(text: &str, mark: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(mark) {
        out.push_str(&rest[..i + mark.len()]);
        rest = &rest[i + mark.len()..];
        let suffix = rest.chars().take_while(char::is_ascii_alphanumeric).count();
        out.push_str("XXXXX");
        rest = &rest[suffix..];
    }
    out.push_str(rest);
    out
}

#[tokio::test]
async fn pods_and_services_print_as_kubectl_run_prints_them() {
    let theirs = cluster().namespace("run-pod-output-kubectl").await;
    let ours = cluster().namespace("run-pod-output-ours").await;
    let cases: &[&[&str]] = &[
        &["--image=nginx"],
        &[
            "--image=nginx",
            "--env=C=",
            "--env=D=1",
            "--port=80",
            "--labels=app=web,tier=fe",
            "--annotations=note=x",
            "--restart=Never",
            "--",
            "sh",
            "-c",
            "echo hi",
        ],
        &["--image=nginx", "--port=80", "--expose"],
        &["--image=nginx", "--save-config"],
    ];
    let mut n = 0;
    for format in FORMATS {
        for mode in MODES {
            for case in cases {
                n += 1;
                let name = format!("p{n}");
                let args: Vec<&str> = [name.as_str(), "-o", format]
                    .into_iter()
                    .chain(mode.iter().copied())
                    .chain(case.iter().copied())
                    .collect();
                let want = kubectl(theirs.as_str(), &[&["run"][..], &args].concat());
                let got = run_pod(ours.as_str(), &args);
                assert_eq!(
                    (got.code, masked(&got.stdout, ours.as_str()), got.stderr),
                    (
                        want.code,
                        masked(&want.stdout, theirs.as_str()),
                        want.stderr
                    ),
                    "kubectl run-pod {args:?}"
                );
            }
        }
    }
}

/// kubectl's typed encoding of `printed` (`-o FORMAT` output of one object with
/// containers running `image`).
fn kubectl_typed(ns: &str, printed: &str, format: &str, image: &str) -> String {
    let out = cluster()
        .kubectl()
        .args(["set", "image", "--local", "-n", ns, "-f", "-", "-o", format])
        .arg("*=kubeplug-probe")
        .stdin(printed)
        .run();
    out.success();
    out.stdout
        .replace(
            "\"image\": \"kubeplug-probe\"",
            &format!("\"image\": \"{image}\""),
        )
        .replace("image: kubeplug-probe", &format!("image: {image}"))
}

/// Whether the server's discovery lists `kind` in `group_version`.
async fn served(client: &Client, group_version: &str, kind: &str) -> bool {
    let list = if group_version.contains('/') {
        client.list_api_group_resources(group_version).await
    } else {
        client.list_core_api_resources(group_version).await
    };
    list.is_ok_and(|l| l.resources.iter().any(|r| r.kind == kind))
}

#[tokio::test]
async fn legacy_generators_print_as_kubectls_typed_objects() {
    let ns = cluster().namespace("run-pod-output-legacy").await;
    let client = cluster().client().await;
    // (generator, apiVersion, kind, extra flags)
    let generators: &[(&str, &str, &str, &[&str])] = &[
        ("run/v1", "v1", "ReplicationController", &["--replicas=2"]),
        (
            "deployment/apps.v1",
            "apps/v1",
            "Deployment",
            &["--replicas=2"],
        ),
        ("deployment/apps.v1beta1", "apps/v1beta1", "Deployment", &[]),
        (
            "deployment/v1beta1",
            "extensions/v1beta1",
            "Deployment",
            &[],
        ),
        ("job/v1", "batch/v1", "Job", &[]),
        ("cronjob/v1", "batch/v1", "CronJob", &["--schedule=@hourly"]),
        (
            "cronjob/v1beta1",
            "batch/v1beta1",
            "CronJob",
            &["--schedule=@hourly"],
        ),
    ];
    let mut n = 0;
    for (generator, group_version, kind, extra) in generators {
        let serves = served(&client, group_version, kind).await;
        for format in FORMATS {
            for mode in MODES {
                n += 1;
                let name = format!("g{n}");
                let generator_flag = format!("--generator={generator}");
                let args: Vec<&str> = [
                    name.as_str(),
                    generator_flag.as_str(),
                    "--image=nginx",
                    "--env=C=",
                    "--port=80",
                    "--labels=app=g",
                    "-o",
                    format,
                ]
                .into_iter()
                .chain(mode.iter().copied())
                .chain(extra.iter().copied())
                .collect();
                let out = run_pod(ns.as_str(), &args);
                if !serves {
                    // kubectl 1.17's mapper refused it before sending anything, and so
                    // does the client dry run; a create hears the server's 404.
                    out.code(1);
                    assert_eq!(
                        out.stderr,
                        format!(
                            "error: no matches for kind \"{kind}\" in version \"{group_version}\"\n"
                        ),
                        "{args:?}"
                    );
                    continue;
                }
                out.success();
                assert_eq!(
                    out.stdout,
                    kubectl_typed(ns.as_str(), &out.stdout, format, "nginx"),
                    "{args:?}"
                );
            }
        }
    }
}

/// `--schedule` alone picks `batch/v1` where the server serves it and falls back to
/// `batch/v1beta1` with 1.17's warning elsewhere, in a client dry run too.
#[tokio::test]
async fn schedule_follows_discovery_in_a_client_dry_run() {
    let ns = cluster().namespace("run-pod-output-schedule").await;
    let v1 = served(&cluster().client().await, "batch/v1", "CronJob").await;
    let out = run_pod(
        ns.as_str(),
        &[
            "tick",
            "--image=busybox",
            "--schedule=@hourly",
            "--dry-run=client",
            "-o",
            "jsonpath={.apiVersion}",
        ],
    );
    out.success();
    if v1 {
        assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("batch/v1", ""));
    } else {
        assert_eq!(
            (out.stdout.as_str(), out.stderr.as_str()),
            (
                "batch/v1beta1",
                "WARNING: New generator \"cronjob/v1\" specified, but it isn't available. Falling back to \"cronjob/v1beta1\".\n"
            )
        );
    }
}

/// create-file's client dry run maps through the server's discovery as kubectl's does:
/// the same exit code, output and error for kinds the server serves and kinds it
/// does not.
#[tokio::test]
async fn client_dry_run_maps_as_kubectl_create_does() {
    client_dry_run_maps_on(cluster()).await;
}

/// The same on 1.20.2 beside kubectl 1.32, where batch/v1 CronJob and policy/v1
/// PodDisruptionBudget are missing (the current server lacks their v1beta1).
#[tokio::test]
async fn client_dry_run_maps_on_1_20_as_kubectl_1_32_create_does() {
    // Skipped where the shared cluster is 1.20.2: the test above ran on it.
    if let Some(legacy) = tests::harness::legacy_second_run() {
        client_dry_run_maps_on(legacy).await;
    }
}

async fn client_dry_run_maps_on(cluster: &'static tests::harness::Cluster) {
    let ns = cluster.namespace("create-file-dry-run-mapping").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let cron = |api_version: &str| {
        format!(
            "apiVersion: {api_version}\nkind: CronJob\nmetadata:\n  name: tick\nspec:\n  schedule: '@hourly'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n          containers:\n          - name: c\n            image: busybox\n"
        )
    };
    let pdb = |api_version: &str| {
        format!(
            "apiVersion: {api_version}\nkind: PodDisruptionBudget\nmetadata:\n  name: pdb\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels:\n      app: web\n"
        )
    };
    let files = [
        ("cronjob-v1.yaml", cron("batch/v1")),
        ("cronjob-v1beta1.yaml", cron("batch/v1beta1")),
        ("pdb-v1.yaml", pdb("policy/v1")),
        ("pdb-v1beta1.yaml", pdb("policy/v1beta1")),
        (
            "mixed.yaml",
            format!(
                "{}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
                cron("batch/v1")
            ),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(dir.path().join(name), text).expect("write manifest");
    }
    for (name, _) in &files {
        for format in ["name", "json"] {
            let args = [
                "-n",
                ns.as_str(),
                "-f",
                name,
                "--dry-run=client",
                "-o",
                format,
            ];
            let want = cluster
                .kubectl()
                .current_dir(dir.path())
                .arg("create")
                .args(args)
                .run();
            let got = cluster
                .kubectl()
                .current_dir(dir.path())
                .arg("create-file")
                .args(args)
                .run();
            assert_eq!(
                (got.code, got.stdout, got.stderr),
                (want.code, want.stdout, want.stderr),
                "create-file {args:?}"
            );
        }
    }
}

#[test]
fn masking_keeps_the_layout() {
    let text = "{\n    \"uid\": \"a-b\",\n    \"name\": \"default-token-x7k2p\",\n    \"namespace\": \"ns-1\",\n    \"clusterIPs\": [\n        \"10.0.0.1\"\n    ],\n    \"type\": \"ClusterIP\"\n}\nuid: \"1\"\nclusterIPs:\n- 10.0.0.1\ntype: ClusterIP\n";
    assert_eq!(
        masked(text, "ns-1"),
        "{\n    \"uid\": \"MASKED\",\n    \"name\": \"default-token-XXXXX\",\n    \"namespace\": \"NAMESPACE\",\n    \"clusterIPs\": [\n        \"MASKED\"\n    ],\n    \"type\": \"ClusterIP\"\n}\nuid: MASKED\nclusterIPs:\n- MASKED\ntype: ClusterIP\n"
    );
}

/// A client dry run on a warm discovery cache builds no client and sends nothing: with
/// a kubeconfig whose user's credential plugin always fails (it runs when a client is
/// built), the cached group-version prints, and a cold cache fails on the plugin.
/// (Aggregated discovery caches every group-version the server serves at once, so
/// "uncached" is an empty cache, not another group-version.)
#[tokio::test]
async fn a_warm_cache_maps_without_a_client() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("cache");
    let cache_flag = format!("--cache-dir={}", cache.display());
    let text = std::fs::read_to_string(&cluster().kubeconfig).expect("kubeconfig");
    let harness: serde_json::Value = serde_saphyr::from_str(&text).expect("kubeconfig YAML");
    let failing = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": harness["clusters"][0]["cluster"]}],
        "users": [{"name": "u", "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "/bin/false",
        }}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    });
    let failing_path = dir.path().join("failing.json");
    std::fs::write(&failing_path, failing.to_string()).expect("write kubeconfig");
    let job = [
        "web",
        "--generator=job/v1",
        "--image=nginx",
        "--dry-run=client",
        "-o",
        "name",
    ];
    // Warm the cache for batch/v1 with the harness's own credentials.
    let warm = cluster().plugin("run-pod").arg(&cache_flag).args(job).run();
    warm.success();
    assert_eq!(warm.stdout, "job.batch/web\n");
    let cached = cluster()
        .plugin("run-pod")
        .arg(&cache_flag)
        .env("KUBECONFIG", &failing_path)
        .args(job)
        .run();
    assert_eq!(
        (cached.code, cached.stdout.as_str(), cached.stderr.as_str()),
        (0, "job.batch/web\n", "")
    );
    let cold = format!("--cache-dir={}", dir.path().join("cold").display());
    let uncached = cluster()
        .plugin("run-pod")
        .arg(&cold)
        .env("KUBECONFIG", &failing_path)
        .args([
            "web",
            "--replicas=2",
            "--image=nginx",
            "--dry-run=client",
            "-o",
            "name",
        ])
        .run();
    uncached.code(1);
    assert!(
        uncached.stderr.contains("/bin/false"),
        "{}",
        uncached.stderr
    );
}
