//! `kubectl rolling-update` end to end: the real `kubectl` finds our plugin, the
//! real ReplicationController manager creates and deletes pods, the real node runs
//! them (some with a readiness probe that passes after a delay).

// The helpers below run only inside tests: an unwrap there is a failed assertion
// (clippy's allow-unwrap-in-tests does not reach non-#[test] helpers).
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{
    Container, Pod, PodSpec, PodTemplateSpec, ReplicationController, ReplicationControllerSpec,
};
use kube::api::{ListParams, ObjectMeta, PostParams};
use kube::runtime::wait::await_condition;
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, Client};
use localcluster::steering::Readiness;
use tests::harness::{Cluster, Output, cluster, plugin_binary};

use crate::terminal::{on_terminal, screen};

pub(crate) const OLD_IMAGE: &str = "registry.k8s.io/pause:3.8";
pub(crate) const NEW_IMAGE: &str = "registry.k8s.io/pause:3.9";
const DEPLOYMENT_KEY: &str = "deployment";

pub(crate) fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// An RC named `name` selecting `app=<app>` plus `extra`, with pods ready as
/// `readiness` says.
pub(crate) fn rc(
    name: &str,
    app: &str,
    extra: &[(&str, &str)],
    images: &[(&str, &str)],
    replicas: i32,
    readiness: Readiness,
) -> ReplicationController {
    let probe = readiness
        .probe()
        .map(|p| serde_json::from_value(p).expect("a readiness probe"));
    let mut selector = labels(&[("app", app)]);
    selector.extend(labels(extra));
    ReplicationController {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: Some(ReplicationControllerSpec {
            replicas: Some(replicas),
            selector: Some(selector.clone()),
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(selector),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: images
                        .iter()
                        .map(|(n, i)| Container {
                            name: n.to_string(),
                            image: Some(i.to_string()),
                            readiness_probe: probe.clone(),
                            ..Default::default()
                        })
                        .collect(),
                    termination_grace_period_seconds: Some(0),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        status: None,
    }
}

pub(crate) async fn create_ready(rcs: &Api<ReplicationController>, rc: &ReplicationController) {
    rcs.create(&PostParams::default(), rc)
        .await
        .expect("create rc");
    wait_ready(
        rcs,
        rc.metadata.name.as_deref().unwrap(),
        rc.spec.as_ref().unwrap().replicas.unwrap(),
    )
    .await;
}

pub(crate) async fn wait_ready(rcs: &Api<ReplicationController>, name: &str, n: i32) {
    let cond = move |rc: Option<&ReplicationController>| {
        rc.and_then(|rc| rc.status.as_ref())
            .is_some_and(|s| s.ready_replicas.unwrap_or(0) == n && s.replicas == n)
    };
    tokio::time::timeout(
        Duration::from_secs(60),
        await_condition(rcs.clone(), name, cond),
    )
    .await
    .expect("rc ready in time")
    .expect("watch");
}

/// Asserts that the RC is gone, allowing for the garbage collector: a default delete
/// of a core/v1 ReplicationController orphans its pods, which puts the `orphan`
/// finalizer on it, and the RC stays visible (being deleted) until the
/// controller-manager removes the finalizer, a moment after the plugin has exited.
async fn assert_gone(rcs: &Api<ReplicationController>, name: &str, context: &str) {
    for _ in 0..300 {
        match rcs.get_opt(name).await.expect("get rc") {
            None => return,
            Some(rc) if rc.metadata.deletion_timestamp.is_none() => {
                panic!("replicationcontroller {name:?} is not being deleted\n{context}")
            }
            Some(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    panic!("replicationcontroller {name:?} still there after 30 s\n{context}");
}

fn rolling_update(cluster: &Cluster, ns: &str, args: &[&str]) -> Output {
    cluster
        .kubectl()
        .arg("rolling-update")
        .args(args)
        .args(["-n", ns])
        .run()
}

fn image_of(rc: &ReplicationController, container: usize) -> String {
    rc.spec
        .as_ref()
        .unwrap()
        .template
        .as_ref()
        .unwrap()
        .spec
        .as_ref()
        .unwrap()
        .containers[container]
        .image
        .clone()
        .unwrap_or_default()
}

/// Tracks the number of available pods with `app=<app>` and its minimum; returns
/// once the watch has listed them (its first count is the starting point), so that
/// nothing the update does afterwards goes unseen.
async fn watch_availability(
    client: Client,
    ns: &str,
    app: &str,
) -> (Arc<Mutex<Option<usize>>>, tokio::task::JoinHandle<()>) {
    let pods: Api<Pod> = Api::namespaced(client, ns);
    let min = Arc::new(Mutex::new(None::<usize>));
    let seen = min.clone();
    let config = watcher::Config::default().labels(&format!("app={app}"));
    let (listed_tx, listed) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let mut listed_tx = Some(listed_tx);
        let mut state: HashMap<String, bool> = HashMap::new();
        let mut initialised = false;
        let mut stream = std::pin::pin!(watcher(pods, config));
        while let Some(Ok(event)) = stream.next().await {
            match event {
                watcher::Event::Apply(p) | watcher::Event::InitApply(p) => {
                    state.insert(
                        p.metadata.name.clone().unwrap_or_default(),
                        tests::objects::pod_ready(&p),
                    );
                }
                watcher::Event::Delete(p) => {
                    state.remove(&p.metadata.name.clone().unwrap_or_default());
                }
                watcher::Event::InitDone => initialised = true,
                watcher::Event::Init => {}
            }
            if initialised {
                let available = state.values().filter(|a| **a).count();
                let mut m = seen.lock().unwrap();
                *m = Some(m.map_or(available, |m| m.min(available)));
                if let Some(tx) = listed_tx.take() {
                    let _ = tx.send(());
                }
            }
        }
    });
    tokio::time::timeout(Duration::from_secs(30), listed)
        .await
        .unwrap_or_else(|_| {
            panic!("the availability watch listed the pods of app={app} within 30 s")
        })
        .expect("the availability watch ended before its first list");
    (min, task)
}

fn lines(out: &Output) -> Vec<String> {
    out.stdout.lines().map(str::to_string).collect()
}

#[tokio::test]
async fn image_with_one_name_renames_back_and_keeps_pods_available() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-image-one-name").await;
    let client = cluster.client().await;
    let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "web",
            "web",
            &[],
            &[("web", OLD_IMAGE)],
            3,
            Readiness::Started,
        ),
    )
    .await;
    let (min_available, watch) = watch_availability(client.clone(), ns.as_str(), "web").await;

    let out = rolling_update(
        cluster,
        ns.as_str(),
        &["web", &format!("--image={NEW_IMAGE}"), "--update-period=0"],
    );
    out.success();
    watch.abort();
    let lines = lines(&out);
    let created = lines[0]
        .strip_prefix("Created ")
        .expect("Created line")
        .to_string();
    let hash = created.strip_prefix("web-").expect("web-<hash>");
    assert_eq!(hash.len(), 32, "{created}");
    assert_eq!(
        lines[1..],
        [
            format!(
                "Scaling up {created} from 0 to 3, scaling down web from 3 to 0 (keep 3 pods available, don't exceed 4 pods)"
            ),
            format!("Scaling {created} up to 1"),
            "Scaling web down to 2".into(),
            format!("Scaling {created} up to 2"),
            "Scaling web down to 1".into(),
            format!("Scaling {created} up to 3"),
            "Scaling web down to 0".into(),
            "Update succeeded. Deleting old controller: web".into(),
            format!("Renaming {created} to web"),
            "replicationcontroller/web rolling updated".into(),
        ]
    );
    let web = rcs.get("web").await.expect("web exists again");
    assert_eq!(image_of(&web, 0), NEW_IMAGE);
    let selector = web.spec.as_ref().unwrap().selector.clone().unwrap();
    assert_eq!(selector.get(DEPLOYMENT_KEY).map(String::as_str), Some(hash));
    let annotations = web.metadata.annotations.clone().unwrap_or_default();
    assert!(!annotations.contains_key("kubectl.kubernetes.io/update-source-id"));
    assert!(!annotations.contains_key("kubectl.kubernetes.io/desired-replicas"));
    assert_gone(&rcs, &created, "").await;
    wait_ready(&rcs, "web", 3).await;
    let min = min_available.lock().unwrap().expect("watched");
    assert!(
        min >= 3,
        "available pods dropped to {min} (desired 3, maxUnavailable 0)"
    );
}

/// The requests of one update, from its `-v=6` log: `(method, path)` with the
/// namespace cut off, the new RC's hash as `HASH`, pod names as `POD`, and of the query
/// only whether it is a watch (`?watch`) or a list served from the watch cache
/// (`?rv=0`).
fn logged_requests(stderr: &str) -> Vec<(String, String)> {
    stderr
        .lines()
        .filter_map(|line| {
            let (method, url) = tests::klog::responses(line).pop()?;
            let path = url.split_once("/namespaces/")?.1.split_once('/')?.1;
            let (path, query) = path.split_once('?').unwrap_or((path, ""));
            let mut path: String = path
                .split('/')
                .map(|part| match part.split_once('-') {
                    Some((_, h)) if h.len() == 32 => "web-HASH".to_string(),
                    Some((_, p)) if part.starts_with("web-") && p.len() == 5 => "POD".into(),
                    _ => part.to_string(),
                })
                .collect::<Vec<_>>()
                .join("/");
            if query.contains("watch=true") {
                path.push_str("?watch");
            } else if query.contains("resourceVersion=0") {
                path.push_str("?rv=0");
            }
            Some((method.to_string(), path))
        })
        .collect()
}

/// The accounting of an update's requests, on the case the bench runs (one
/// name, `--image`, an RC whose selector lacks the deployment key): every request is
/// one the 1.17 flow or the crash safety needs, those whose answers nothing waits for
/// go out together, and nothing is read that a watch or an earlier answer already
/// gave. Counts, not times: the README's "Round trips" has the times.
#[tokio::test]
async fn an_update_sends_only_the_requests_it_needs() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-requests").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "web",
            "web",
            &[],
            &[("web", OLD_IMAGE)],
            3,
            Readiness::Started,
        ),
    )
    .await;
    // A poll interval no wait reaches: its safety-net re-lists would add requests.
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &[
            "web",
            &format!("--image={NEW_IMAGE}"),
            "--update-period=0",
            "--poll-interval=10m",
            "-v=6",
        ],
    );
    out.success();
    let requests = logged_requests(&out.stderr);
    let r = |m: &str, p: &str| (m.to_string(), p.to_string());
    let rc_web = "replicationcontrollers/web";
    let rc_new = "replicationcontrollers/web-HASH";
    let scale = |rc: &str| r("PATCH", &format!("{rc}/scale"));
    // The RC requests and the pod lists, in the order they were answered; each
    // waits for the one before it, but for the create and original-replicas.
    let sequence: Vec<_> = requests
        .iter()
        .filter(|(_, p)| !p.contains('?') && !p.starts_with("pods/"))
        .cloned()
        .collect();
    let start = [
        r("GET", rc_web),
        r("PATCH", rc_web),
        r("GET", "pods"),
        r("PATCH", rc_web),
        r("GET", "pods"),
    ];
    assert_eq!(sequence[..5], start, "{requests:#?}");
    // The create and the original-replicas record go out together.
    let mut together = sequence[5..7].to_vec();
    together.sort();
    assert_eq!(
        together,
        [r("PATCH", rc_web), r("POST", "replicationcontrollers")],
        "{requests:#?}"
    );
    let steps: Vec<_> = (0..3)
        .flat_map(|_| [scale(rc_new), scale(rc_web)])
        .collect();
    assert_eq!(sequence[7..13], steps, "{requests:#?}");
    // The cleanup: the old RC goes, the pending copy, the new RC's orphan-delete,
    // the copy made final; the final RC is printed from that last answer.
    assert_eq!(
        sequence[13..],
        [
            r("DELETE", rc_web),
            r("POST", "replicationcontrollers"),
            r("DELETE", rc_new),
            r("PATCH", rc_web),
        ],
        "{requests:#?}"
    );
    // The pods' labels, one PUT each (pods are `update`d, as in 1.17: the permission
    // users grant), all between the two writes of the old RC.
    let marks: Vec<usize> = (0..requests.len())
        .filter(|&i| requests[i] == r("PATCH", rc_web))
        .collect();
    let pods: Vec<usize> = (0..requests.len())
        .filter(|&i| requests[i] == r("PUT", "pods/POD"))
        .collect();
    assert_eq!(pods.len(), 3, "{requests:#?}");
    assert!(
        pods.iter().all(|&i| marks[0] < i && i < marks[1]),
        "{requests:#?}"
    );
    // Four watches (the two RCs by name, their pods by selector), each one list from
    // the watch cache and one watch, and one watch of the old RC from its template's
    // write until the RC manager counts its pods fully labelled (before the selector
    // gets the key): nothing else is read.
    let mut watches: Vec<_> = requests
        .iter()
        .filter(|(_, p)| p.contains('?'))
        .cloned()
        .collect();
    watches.sort();
    assert_eq!(
        watches,
        [
            r("GET", "pods?rv=0"),
            r("GET", "pods?rv=0"),
            r("GET", "pods?watch"),
            r("GET", "pods?watch"),
            r("GET", "replicationcontrollers?rv=0"),
            r("GET", "replicationcontrollers?rv=0"),
            r("GET", "replicationcontrollers?watch"),
            r("GET", "replicationcontrollers?watch"),
            r("GET", "replicationcontrollers?watch"),
        ],
        "{requests:#?}"
    );
    assert_eq!(requests.len(), 5 + 3 + 2 + 9 + 6 + 4, "{requests:#?}");
}

#[tokio::test]
async fn image_with_two_names_deletes_the_old_rc() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-image-two-names").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "api",
            "api",
            &[],
            &[("api", OLD_IMAGE)],
            2,
            Readiness::Started,
        ),
    )
    .await;
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &[
            "api",
            "api-v2",
            &format!("--image={NEW_IMAGE}"),
            "--update-period=0",
        ],
    );
    out.success();
    // Without a terminal: exactly 1.17's lines, byte for byte, and nothing on stderr.
    assert_eq!(
        out.stdout.split_inclusive('\n').collect::<Vec<_>>(),
        [
            "Created api-v2\n",
            "Scaling up api-v2 from 0 to 2, scaling down api from 2 to 0 (keep 2 pods available, don't exceed 3 pods)\n",
            "Scaling api-v2 up to 1\n",
            "Scaling api down to 1\n",
            "Scaling api-v2 up to 2\n",
            "Scaling api down to 0\n",
            "Update succeeded. Deleting api\n",
            "replicationcontroller/api-v2 rolling updated to \"api-v2\"\n",
        ]
    );
    assert_eq!(out.stderr, "");
    assert_gone(&rcs, "api", "").await;
    assert_eq!(image_of(&rcs.get("api-v2").await.unwrap(), 0), NEW_IMAGE);
}

fn new_rc_yaml(name: &str, version: &str, image: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: {name}\nspec:\n  selector:\n    app: file\n    version: {version}\n  template:\n    metadata:\n      labels:\n        app: file\n        version: {version}\n    spec:\n      terminationGracePeriodSeconds: 0\n      containers:\n      - name: c\n        image: {image}\n"
    )
}

#[tokio::test]
async fn from_a_file_and_from_stdin() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-file").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "file-v1",
            "file",
            &[("version", "v1")],
            &[("c", OLD_IMAGE)],
            2,
            Readiness::Started,
        ),
    )
    .await;

    // -f FILE, two names implied by the file: the old RC is deleted.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.yaml");
    std::fs::write(&path, new_rc_yaml("file-v2", "v2", NEW_IMAGE)).unwrap();
    let out = cluster
        .kubectl()
        .args(["rolling-update", "file-v1", "file-v2", "-f"])
        .arg(&path)
        .args(["--update-period=0", "-n", ns.as_str()])
        .run();
    out.success();
    assert_eq!(lines(&out)[0], "Created file-v2");
    assert_eq!(
        lines(&out).last().unwrap(),
        "replicationcontroller/file-v2 rolling updated to \"file-v2\""
    );
    let v2 = rcs.get("file-v2").await.unwrap();
    assert_eq!(
        v2.spec.as_ref().unwrap().replicas,
        Some(2),
        "replicas defaulted from the old RC"
    );
    assert_gone(&rcs, "file-v1", "").await;

    // -f - with one name: the RC from stdin is renamed to the old name at the end.
    let out = cluster
        .kubectl()
        .args([
            "rolling-update",
            "file-v2",
            "-f",
            "-",
            "--update-period=0",
            "-n",
            ns.as_str(),
        ])
        .stdin(new_rc_yaml("file-v3", "v3", OLD_IMAGE))
        .run();
    out.success();
    assert_eq!(
        lines(&out)[lines(&out).len() - 3..],
        [
            "Update succeeded. Deleting old controller: file-v2",
            "Renaming file-v3 to file-v2",
            "replicationcontroller/file-v2 rolling updated",
        ]
    );
    let renamed = rcs.get("file-v2").await.unwrap();
    assert_eq!(
        renamed.spec.as_ref().unwrap().selector.as_ref().unwrap()["version"],
        "v3"
    );
}

/// Serves `routes` (path → body) over plain HTTP on a loopback port from a thread,
/// 404 for anything else; returns the base URL. A thread rather than a task: the
/// plugin runs as a blocking child process while it answers.
fn serve_http(routes: Vec<(&'static str, String)>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut request_line = String::new();
            let _ = reader.read_line(&mut request_line);
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                header.clear();
            }
            let path = request_line.split_whitespace().nth(1).unwrap_or_default();
            let answer = match routes.iter().find(|(p, _)| *p == path) {
                Some((_, body)) => format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                ),
                None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_string(),
            };
            let _ = std::io::Write::write_all(&mut conn, answer.as_bytes());
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn from_a_url_through_the_resource_builder() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-url").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "url-v1",
            "url",
            &[("version", "v1")],
            &[("c", OLD_IMAGE)],
            2,
            Readiness::Started,
        ),
    )
    .await;
    let v2 = new_rc_yaml("url-v2", "v2", NEW_IMAGE).replace("app: file", "app: url");
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  selector:\n    matchLabels:\n      app: d\n  template:\n    metadata:\n      labels:\n        app: d\n    spec:\n      containers:\n      - name: c\n        image: x\n";
    let base = serve_http(vec![
        ("/v2.yaml", v2),
        ("/deployment.yaml", deployment.to_string()),
    ]);

    // Errors: create-file's for an unreadable URL, 1.17's for the wrong kind; the
    // old RC is left alone.
    let missing = format!("{base}/missing.yaml");
    let out = rolling_update(cluster, ns.as_str(), &["url-v1", "-f", &missing]);
    out.code(1);
    assert_eq!(
        out.stderr,
        format!(
            "error: unable to read URL \"{missing}\", server reported 404 Not Found, status code=404\n"
        )
    );
    let wrong = format!("{base}/deployment.yaml");
    let out = rolling_update(cluster, ns.as_str(), &["url-v1", "-f", &wrong]);
    out.code(1);
    assert_eq!(
        out.stderr,
        format!("error: {wrong} contains a apps/v1, Kind=Deployment not a ReplicationController\n")
    );
    assert_eq!(
        rcs.list(&ListParams::default()).await.unwrap().items.len(),
        1,
        "nothing created"
    );

    // One name: the RC from the URL is renamed to the old name at the end.
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &[
            "url-v1",
            "-f",
            &format!("{base}/v2.yaml"),
            "--update-period=0",
        ],
    );
    out.success();
    assert_eq!(lines(&out)[0], "Created url-v2");
    assert_eq!(
        lines(&out)[lines(&out).len() - 3..],
        [
            "Update succeeded. Deleting old controller: url-v1",
            "Renaming url-v2 to url-v1",
            "replicationcontroller/url-v1 rolling updated",
        ]
    );
    let renamed = rcs.get("url-v1").await.unwrap();
    assert_eq!(image_of(&renamed, 0), NEW_IMAGE);
    assert_eq!(renamed.spec.as_ref().unwrap().replicas, Some(2));
    assert_gone(&rcs, "url-v2", "").await;
}

#[tokio::test]
async fn progress_bar_on_a_terminal_and_the_classic_lines_intact() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-tty").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "tty",
            "tty",
            &[],
            &[("c", OLD_IMAGE)],
            2,
            Readiness::AfterSecs(2),
        ),
    )
    .await;
    let args = |old: &str, new: &str, image: &str| -> Vec<String> {
        [
            old,
            new,
            &format!("--image={image}"),
            "--update-period=0",
            "-n",
            ns.as_str(),
        ]
        .map(String::from)
        .to_vec()
    };
    let classic = |old: &str, new: &str| -> Vec<String> {
        vec![
            format!("Created {new}"),
            format!(
                "Scaling up {new} from 0 to 2, scaling down {old} from 2 to 0 (keep 2 pods available, don't exceed 3 pods)"
            ),
            format!("Scaling {new} up to 1"),
            format!("Scaling {old} down to 1"),
            format!("Scaling {new} up to 2"),
            format!("Scaling {old} down to 0"),
            format!("Update succeeded. Deleting {old}"),
            format!("replicationcontroller/{new} rolling updated to \"{new}\""),
        ]
    };

    // stderr a terminal, stdout a pipe: the bar on the one, the lines on the other,
    // byte for byte.
    let run = on_terminal(
        "rolling-update",
        &args("tty", "tty-v2", NEW_IMAGE),
        &[],
        false,
    )
    .await;
    let (code, stdout, terminal) = (run.code, run.stdout, run.screen);
    let shown = String::from_utf8_lossy(&terminal).into_owned();
    assert_eq!(code, Some(0), "{stdout}\n{shown:?}");
    assert_eq!(stdout, classic("tty", "tty-v2").join("\n") + "\n");
    // Frames while starting, then with counts as the new RC grows and pods get ready
    // (each of these states lasts while a new pod takes 1.2 s to become ready).
    for frame in [
        "starting",
        "new 1/2 old 2  ready 0",
        "new 2/2 old 1  ready 1",
    ] {
        assert!(shown.contains(frame), "no frame {frame:?} in {shown:?}");
    }
    assert!(
        !shown.contains("new 0/0"),
        "a bar without a total: {shown:?}"
    );
    // Frames redraw one line in place, and the bar is erased at the end.
    assert!(!shown.contains('\n'), "{shown:?}");
    assert_eq!(screen(&terminal, 120), Vec::<String>::new(), "{shown:?}");

    // Both on the terminal (an interactive run): the bar steps aside for every
    // line, so the screen ends up holding exactly the classic lines.
    let run = on_terminal(
        "rolling-update",
        &args("tty-v2", "tty-v3", OLD_IMAGE),
        &[],
        true,
    )
    .await;
    let (code, terminal) = (run.code, run.screen);
    let shown = String::from_utf8_lossy(&terminal).into_owned();
    assert_eq!(code, Some(0), "{shown:?}");
    assert!(shown.contains("new 1/2"), "{shown:?}");
    assert_eq!(
        screen(&terminal, 120),
        classic("tty-v2", "tty-v3"),
        "{shown:?}"
    );
}

#[tokio::test]
async fn same_image_needs_a_pull_policy() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-same-image").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "same",
            "same",
            &[],
            &[("c", OLD_IMAGE)],
            1,
            Readiness::Started,
        ),
    )
    .await;
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &["same", &format!("--image={OLD_IMAGE}")],
    );
    out.code(1);
    assert_eq!(
        out.stderr,
        "error: --image-pull-policy (Always|Never|IfNotPresent) must be provided when --image is the same as existing container image\n"
    );
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &[
            "same",
            &format!("--image={OLD_IMAGE}"),
            "--image-pull-policy=Always",
            "--update-period=0",
        ],
    );
    out.success();
    let same = rcs.get("same").await.unwrap();
    let c = &same
        .spec
        .unwrap()
        .template
        .unwrap()
        .spec
        .unwrap()
        .containers[0];
    assert_eq!(c.image_pull_policy.as_deref(), Some("Always"));
}

#[tokio::test]
async fn multi_container_needs_container() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-multi").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "multi",
            "multi",
            &[],
            &[("a", OLD_IMAGE), ("b", OLD_IMAGE)],
            1,
            Readiness::Started,
        ),
    )
    .await;
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &["multi", &format!("--image={NEW_IMAGE}")],
    );
    out.code(1);
    assert_eq!(
        out.stderr,
        "error: must specify container to update when updating a multi-container pod\n"
    );
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &["multi", &format!("--image={NEW_IMAGE}"), "--container=nope"],
    );
    out.code(1);
    assert_eq!(out.stderr, "error: container nope not found in pod\n");
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &[
            "multi",
            &format!("--image={NEW_IMAGE}"),
            "--container=b",
            "--update-period=0",
            "-o",
            "json",
        ],
    );
    out.success();
    // -o json prints the final RC after the classic lines.
    let json_start = out.stdout.find("{\n").expect("json object in stdout");
    let printed: serde_json::Value =
        serde_json::from_str(&out.stdout[json_start..]).expect("valid JSON");
    assert_eq!(printed["kind"], "ReplicationController");
    assert_eq!(printed["metadata"]["name"], "multi");
    let multi = rcs.get("multi").await.unwrap();
    assert_eq!(image_of(&multi, 0), OLD_IMAGE);
    assert_eq!(image_of(&multi, 1), NEW_IMAGE);
    // The same image for the second container only: --container is respected in
    // the comparison, so a pull policy is now required.
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &["multi", &format!("--image={NEW_IMAGE}"), "--container=b"],
    );
    out.code(1);
    assert!(out.stderr.contains("--image-pull-policy"), "{}", out.stderr);
}

#[tokio::test]
async fn dry_run_changes_nothing() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-dry-run").await;
    let client = cluster.client().await;
    let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), ns.as_str());
    let pods: Api<Pod> = Api::namespaced(client, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "dry",
            "dry",
            &[],
            &[("c", OLD_IMAGE)],
            2,
            Readiness::Started,
        ),
    )
    .await;
    // What a write of the plugin would change: an RC's spec (its generation), labels
    // or annotations; a pod's labels, owners or deletion. Not the resourceVersions:
    // the RC manager and the kubelet write their objects' status whenever they like
    // (the real kubelet updated a Ready pod's status during the dry runs once).
    let snapshot = || async {
        let rc = rcs.list(&ListParams::default()).await.unwrap();
        let p = pods.list(&ListParams::default()).await.unwrap();
        let mut versions: Vec<String> = rc
            .items
            .iter()
            .map(|r| {
                let m = &r.metadata;
                format!(
                    "{:?}@{:?} {:?} {:?}",
                    m.name, m.generation, m.labels, m.annotations
                )
            })
            .collect();
        versions.extend(p.items.iter().map(|p| {
            let m = &p.metadata;
            format!(
                "{:?} {:?} {:?} {:?} {:?}",
                m.name, m.labels, m.annotations, m.owner_references, m.deletion_timestamp
            )
        }));
        versions
    };
    let before = snapshot().await;
    for mode in ["--dry-run", "--dry-run=client", "--dry-run=server"] {
        let out = rolling_update(
            cluster,
            ns.as_str(),
            &["dry", &format!("--image={NEW_IMAGE}"), mode],
        );
        out.success();
        let lines = lines(&out);
        assert_eq!(lines[..2], ["Rolling from:", "dry"], "{mode}");
        assert_eq!(lines[2], "To:", "{mode}");
        assert!(lines[3].starts_with("dry-"), "{mode}: {}", lines[3]);
    }
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &[
            "dry",
            &format!("--image={NEW_IMAGE}"),
            "--dry-run",
            "-o",
            "name",
        ],
    );
    out.success();
    assert!(
        out.stdout.starts_with(
            "Rolling from:\nreplicationcontroller/dry\n\nTo:\nreplicationcontroller/dry-"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(snapshot().await, before, "dry runs must not write");
}

#[tokio::test]
async fn never_ready_times_out_with_kubectl_message() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-timeout").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    let old = rc(
        "stuck",
        "stuck",
        &[],
        &[("c", OLD_IMAGE)],
        2,
        Readiness::Never,
    );
    rcs.create(&PostParams::default(), &old).await.unwrap();
    let started = std::time::Instant::now();
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &[
            "stuck",
            "stuck-v2",
            &format!("--image={NEW_IMAGE}"),
            "--update-period=0",
            "--timeout=4s",
        ],
    );
    out.code(1);
    assert_eq!(
        out.stderr,
        "error: timed out waiting for any update progress to be made\n"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "--timeout is honoured"
    );
    assert!(
        out.stdout.contains("Scaling stuck-v2 up to 1\n"),
        "{}",
        out.stdout
    );
}

/// Starts the plugin directly (no kubectl in between, so signals reach it) with
/// stdout piped and stderr as given.
fn spawn_rolling_update(
    cluster: &Cluster,
    ns: &str,
    args: &[&str],
    stderr: Stdio,
) -> std::process::Child {
    Command::new(cluster.plugin_dir.join(plugin_binary("rolling-update")))
        .args(args)
        .args(["-n", ns])
        .env("KUBECONFIG", &cluster.kubeconfig)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("spawn plugin")
}

/// Sends SIGINT with kill(1) (the workspace denies the unsafe libc::kill).
fn interrupt(child: &std::process::Child) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Runs the plugin directly and SIGKILLs it as soon as a stdout line satisfies
/// `kill_when`; returns the lines seen.
fn run_and_kill(
    cluster: &Cluster,
    ns: &str,
    args: &[&str],
    kill_when: impl Fn(&str) -> bool,
) -> Vec<String> {
    let mut child = spawn_rolling_update(cluster, ns, args, Stdio::null());
    let stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let stop = kill_when(&line);
        seen.push(line);
        if stop {
            let _ = child.kill();
            break;
        }
    }
    let _ = child.wait();
    seen
}

/// Runs the update through a fault proxy that SIGKILLs it right after the server
/// applied the DELETE of the RC `deleted`; returns its stdout. The proxy forwards
/// nothing after that write, so the cluster is exactly "deleted, nothing after"
/// when this returns: no request of the killed run can land later, in the middle of
/// the re-run (a kill on an output line could not tell whether the DELETE was sent).
async fn run_killed_after_delete(
    cluster: &Cluster,
    ns: &str,
    args: &[&str],
    deleted: &str,
) -> String {
    use tests::faults::proxy::{ApiProxy, Transport};
    let proxy = ApiProxy::start_over(&cluster.kubeconfig, Transport::Http2).unwrap();
    let path = format!("/api/v1/namespaces/{ns}/replicationcontrollers/{deleted}");
    proxy.arm_at(move |w| w.method == "DELETE" && w.path == path);
    let mut child = tests::harness::spawn_plugin(
        &cluster.plugin_dir,
        "rolling-update",
        &proxy.kubeconfig,
        args.iter().copied().chain(["-n", ns]),
    );
    proxy.target(child.id().expect("pid"));
    let stderr = tests::harness::collect_stderr(&mut child);
    let mut stdout = child.stdout.take().unwrap();
    let mut out = String::new();
    let status = tokio::time::timeout(Duration::from_secs(120), async {
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut stdout, &mut out).await;
        child.wait().await.unwrap()
    })
    .await
    .expect("the killed run ends within 120 s");
    let stderr = stderr.await.unwrap_or_default();
    assert!(
        proxy.fired() && status.code().is_none(),
        "the run was not killed after deleting {deleted} ({status:?}; writes: {:?})\n{out}{stderr}",
        proxy.writes()
    );
    out
}

#[tokio::test]
async fn resume_after_kill_at_several_points() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-resume").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    let slow = Readiness::AfterSecs(2);
    create_ready(&rcs, &rc("res", "res", &[], &[("c", OLD_IMAGE)], 3, slow)).await;
    let image = format!("--image={NEW_IMAGE}");
    let args = ["res", image.as_str(), "--update-period=0"];

    // Killed right after the new RC was created, then after the first scale-down.
    let seen = run_and_kill(cluster, ns.as_str(), &args, |l| l.starts_with("Created "));
    let next = seen[0].strip_prefix("Created ").unwrap().to_string();
    let seen = run_and_kill(cluster, ns.as_str(), &args, |l| {
        l == "Scaling res down to 2"
    });
    assert_eq!(
        seen[0],
        format!("Found existing update in progress ({next}), resuming.")
    );
    assert_eq!(
        seen[1],
        format!("Continuing update with existing controller {next}.")
    );

    // A different image is refused while this update is in progress.
    let other = rolling_update(
        cluster,
        ns.as_str(),
        &["res", "--image=registry.k8s.io/pause:3.7"],
    );
    other.code(1);
    assert_eq!(
        other.stderr,
        format!(
            "error: Found existing in-progress update to image ({NEW_IMAGE}).\nEither continue in-progress update with --image={NEW_IMAGE} or rollback with --rollback\n"
        )
    );

    // A re-run finishes the job.
    let out = rolling_update(cluster, ns.as_str(), &args);
    out.success();
    assert_eq!(
        lines(&out)[0],
        format!("Found existing update in progress ({next}), resuming.")
    );
    assert_eq!(
        lines(&out).last().unwrap(),
        "replicationcontroller/res rolling updated"
    );
    let res = rcs.get("res").await.unwrap();
    assert_eq!(image_of(&res, 0), NEW_IMAGE);
    assert_gone(&rcs, &next, "").await;
    wait_ready(&rcs, "res", 3).await;
}

#[tokio::test]
async fn resume_after_kill_between_delete_and_rename() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-resume-rename").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "ren",
            "ren",
            &[],
            &[("c", OLD_IMAGE)],
            1,
            Readiness::Started,
        ),
    )
    .await;
    let image = format!("--image={NEW_IMAGE}");
    let args = ["ren", image.as_str(), "--update-period=0"];
    // Killed right after the old RC's DELETE was applied: the old name is being
    // deleted (its pods orphaned by the garbage collector) or already gone, and the
    // rename has not begun.
    let seen = run_killed_after_delete(cluster, ns.as_str(), &args, "ren").await;
    assert!(
        seen.ends_with("Update succeeded. Deleting old controller: ren\n"),
        "{seen}"
    );
    let next = seen.strip_prefix("Created ").unwrap();
    let next = next[..next.find('\n').unwrap()].to_string();
    let out = rolling_update(cluster, ns.as_str(), &args);
    out.success();
    let ren = rcs.get("ren").await.expect("renamed back");
    assert_eq!(image_of(&ren, 0), NEW_IMAGE);
    assert_gone(&rcs, &next, &out.stdout).await;
}

#[tokio::test]
async fn rollback_of_a_half_done_update() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-rollback").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    let slow = Readiness::AfterSecs(2);
    create_ready(&rcs, &rc("rb", "rb", &[], &[("c", OLD_IMAGE)], 3, slow)).await;
    let image = format!("--image={NEW_IMAGE}");
    let seen = run_and_kill(
        cluster,
        ns.as_str(),
        &["rb", image.as_str(), "--update-period=0"],
        |l| l == "Scaling rb down to 2",
    );
    let next = seen[0].strip_prefix("Created ").unwrap().to_string();

    let out = rolling_update(
        cluster,
        ns.as_str(),
        &["rb", "--rollback", "--update-period=0"],
    );
    out.success();
    let lines = lines(&out);
    assert_eq!(lines[0], "Setting \"rb\" replicas to 3");
    assert_eq!(lines[1], "Continuing update with existing controller rb.");
    assert!(
        lines.contains(&format!("Update succeeded. Deleting {next}")),
        "{}",
        out.stdout
    );
    assert_eq!(
        lines.last().unwrap(),
        "replicationcontroller/rb rolling updated"
    );
    let rb = rcs.get("rb").await.unwrap();
    assert_eq!(image_of(&rb, 0), OLD_IMAGE);
    assert_gone(&rcs, &next, "").await;
    wait_ready(&rcs, "rb", 3).await;
}

#[tokio::test]
async fn validation_errors_through_kubectl() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-validation").await;
    let hint = "See 'kubectl rolling-update -h' for help and examples";
    let table: &[(&[&str], String)] = &[
        (
            &["foo"],
            format!("error: Must specify --filename or --image for new controller\n{hint}\n"),
        ),
        (
            &["--image=x"],
            format!("error: Must specify the controller to update\n{hint}\n"),
        ),
        (
            &["foo", "-f", "a.yaml", "--image=x"],
            format!("error: --filename and --image can not both be specified\n{hint}\n"),
        ),
        (
            &["foo", "-f", "a.yaml,b.yaml"],
            format!("error: May only specify a single filename for new controller\n{hint}\n"),
        ),
        (
            &["foo", "--image=x", "--deployment-label-key="],
            format!("error: --deployment-label-key can not be empty\n{hint}\n"),
        ),
        (
            &["foo", "--rollback", "--image=x"],
            format!("error: Don't specify --filename or --image on rollback\n{hint}\n"),
        ),
        (
            &["missing", "missing-v2", "--image=x"],
            "Error from server (NotFound): replicationcontrollers \"missing\" not found\n".into(),
        ),
        (
            &["missing", "--rollback"],
            "Error from server (NotFound): replicationcontrollers \"missing\" not found\n".into(),
        ),
    ];
    for (args, want) in table {
        let out = rolling_update(cluster, ns.as_str(), args);
        out.code(1);
        assert_eq!(&out.stderr, want, "{args:?}");
    }
}

/// `-f -` is read before Ctrl-C is caught (nothing has been changed yet): a
/// forgotten stdin ends at once with the signal, as any command reading input would.
#[tokio::test]
async fn ctrl_c_while_reading_stdin_ends_at_once() {
    use std::os::unix::process::ExitStatusExt;
    let cluster = cluster();
    let mut child = Command::new(cluster.plugin_dir.join(plugin_binary("rolling-update")))
        .args(["waiting", "-f", "-"])
        .env("KUBECONFIG", &cluster.kubeconfig)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn plugin");
    // Keep stdin open (never written) so the plugin is still reading; the signal
    // comes once it is blocked in that read (before, the test would prove nothing).
    let stdin = child.stdin.take().unwrap();
    let pid = child.id();
    let reading = tokio::time::timeout(Duration::from_secs(10), async {
        while !reading_stdin(pid) {
            // /proc has no event for "entered read(2)": look every 20 ms.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(
        reading.is_ok(),
        "the plugin was not blocked reading stdin within 10 s"
    );
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let exit = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("ended within 5 s of SIGINT")
        .unwrap();
    drop(stdin);
    assert_eq!(exit.signal(), Some(2), "{exit:?}");
}

/// Whether a thread of process `pid` is blocked in `read(0, …)`: the first two
/// fields of `/proc/PID/task/TID/syscall` are the system call's number (x86-64's
/// `read` is 0; aarch64's 63) and its first argument, the file descriptor.
fn reading_stdin(pid: u32) -> bool {
    const READ: &str = if cfg!(target_arch = "aarch64") {
        "63"
    } else {
        "0"
    };
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("syscall")).is_ok_and(|s| {
            let mut fields = s.split_whitespace();
            fields.next() == Some(READ) && fields.next() == Some("0x0")
        })
    })
}

#[tokio::test]
async fn ctrl_c_stops_cleanly_and_the_rerun_resumes() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-sigint").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    let slow = Readiness::AfterSecs(3);
    create_ready(&rcs, &rc("sig", "sig", &[], &[("c", OLD_IMAGE)], 2, slow)).await;
    let image = format!("--image={NEW_IMAGE}");
    let args = ["sig", "sig-v2", image.as_str(), "--update-period=0"];
    let mut child = spawn_rolling_update(cluster, ns.as_str(), &args, Stdio::piped());
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while stdout.read_line(&mut line).unwrap() > 0 {
        if line.ends_with("Scaling sig-v2 up to 1\n") {
            break;
        }
    }
    // The pod needs 3 s to become ready: the process is waiting when the signal comes.
    interrupt(&child);
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "stopped promptly"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.starts_with("error: interrupted by SIGINT\nThe update is left in progress."),
        "{stderr}"
    );
    assert!(
        stderr.contains("kubectl rolling-update sig sig-v2 --rollback"),
        "{stderr}"
    );

    let out = rolling_update(cluster, ns.as_str(), &args);
    out.success();
    assert_eq!(
        lines(&out)[..2],
        [
            "Found existing update in progress (sig-v2), resuming.",
            "Continuing update with existing controller sig-v2.",
        ]
    );
    assert_gone(&rcs, "sig", "").await;
}

/// The last step of a one-name update orphans the new RC's pods and re-creates the
/// RC under the old name. A Ctrl-C while the garbage collector releases the pods must
/// not strand them without a controller: the step runs to its end, and whatever the
/// exit code, the RC exists afterwards (or a re-run finishes the update).
#[tokio::test]
async fn ctrl_c_during_the_rename_never_strands_the_pods() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-sigint-rename").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc("sr", "sr", &[], &[("c", OLD_IMAGE)], 2, Readiness::Started),
    )
    .await;
    let image = format!("--image={NEW_IMAGE}");
    let args = ["sr", image.as_str(), "--update-period=0"];
    let mut child = spawn_rolling_update(cluster, ns.as_str(), &args, Stdio::piped());
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        if stdout.read_line(&mut line).unwrap() == 0 || line.starts_with("Renaming ") {
            break;
        }
    }
    assert!(line.starts_with("Renaming "), "no rename step: {line}");
    interrupt(&child);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        // The signal came during the rename, which finished.
        Some(0) => assert_eq!(
            rest, "replicationcontroller/sr rolling updated\n",
            "{stderr}"
        ),
        // The signal came before the orphaning delete: nothing was lost, and a
        // re-run finishes.
        Some(130) => {
            assert!(
                stderr.starts_with("error: interrupted by SIGINT\n"),
                "{stderr}"
            );
            rolling_update(cluster, ns.as_str(), &args).success();
        }
        other => panic!("exit {other:?}: {stderr}"),
    }
    let sr = rcs
        .get("sr")
        .await
        .expect("the RC exists under its old name");
    assert_eq!(image_of(&sr, 0), NEW_IMAGE);
    wait_ready(&rcs, "sr", 2).await;
    // The pods are the RC's again (adopted), not orphans: the RC manager's adoption
    // is a patch of each pod, seen on a watch of them.
    let pods: Api<Pod> = Api::namespaced(cluster.client().await, ns.as_str());
    let uid = sr.metadata.uid.clone().unwrap();
    let owned = |store: &[Pod]| {
        store
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter(|p| {
                p.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.uid == uid && o.controller == Some(true))
            })
            .count()
    };
    let mut seen = 0;
    let adopted = tokio::time::timeout(
        Duration::from_secs(30),
        pods_until(&pods, "app=sr", |store| {
            seen = owned(store);
            seen == 2
        }),
    )
    .await;
    assert!(adopted.is_ok(), "{seen} of 2 pods owned by sr after 30 s");
}

/// Returns once `done` holds for the pods matching `selector`, checked on each
/// event of a watch on them (after its first list).
async fn pods_until(pods: &Api<Pod>, selector: &str, mut done: impl FnMut(&[Pod]) -> bool) {
    let mut state: BTreeMap<String, Pod> = BTreeMap::new();
    let mut initialised = false;
    let config = watcher::Config::default().labels(selector);
    let mut stream = std::pin::pin!(watcher(pods.clone(), config).default_backoff());
    while let Some(event) = stream.next().await {
        let Ok(event) = event else { continue };
        match event {
            watcher::Event::Init => {
                state.clear();
                initialised = false;
            }
            watcher::Event::InitApply(p) | watcher::Event::Apply(p) => {
                state.insert(p.metadata.name.clone().unwrap_or_default(), p);
            }
            watcher::Event::Delete(p) => {
                state.remove(&p.metadata.name.clone().unwrap_or_default());
            }
            watcher::Event::InitDone => initialised = true,
        }
        if initialised && done(&state.values().cloned().collect::<Vec<_>>()) {
            return;
        }
    }
}

#[tokio::test]
async fn two_names_resume_after_kill_during_cleanup() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-resume-delete").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "del",
            "del",
            &[],
            &[("c", OLD_IMAGE)],
            1,
            Readiness::Started,
        ),
    )
    .await;
    let image = format!("--image={NEW_IMAGE}");
    let args = ["del", "del-v2", image.as_str(), "--update-period=0"];
    // Killed right after the old RC's DELETE was applied, before the new RC lost its
    // update annotations: the re-run finds the old RC being deleted or gone.
    let seen = run_killed_after_delete(cluster, ns.as_str(), &args, "del").await;
    assert!(seen.ends_with("Update succeeded. Deleting del\n"), "{seen}");
    let out = rolling_update(cluster, ns.as_str(), &args);
    out.success();
    assert_eq!(
        lines(&out).last().unwrap(),
        "replicationcontroller/del-v2 rolling updated to \"del-v2\""
    );
    let v2 = rcs.get("del-v2").await.unwrap();
    let annotations = v2.metadata.annotations.unwrap_or_default();
    assert!(!annotations.contains_key("kubectl.kubernetes.io/update-source-id"));
    assert!(!annotations.contains_key("kubectl.kubernetes.io/desired-replicas"));
    assert_gone(&rcs, "del", "").await;
}

#[tokio::test]
async fn surge_unavailable_and_min_ready_seconds_flags() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-flags").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "knobs",
            "knobs",
            &[],
            &[("c", OLD_IMAGE)],
            4,
            Readiness::Started,
        ),
    )
    .await;
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &[
            "knobs",
            "knobs-v2",
            &format!("--image={NEW_IMAGE}"),
            "--update-period=0",
            "--max-surge=50%",
            "--max-unavailable=1",
            "--min-ready-seconds=1",
        ],
    );
    out.success();
    // 50% of 4 rounds up to 2 surge pods; 1 unavailable keeps 3 available.
    assert_eq!(
        lines(&out)[1],
        "Scaling up knobs-v2 from 0 to 4, scaling down knobs from 4 to 0 (keep 3 pods available, don't exceed 6 pods)"
    );
    assert_eq!(lines(&out)[2], "Scaling knobs-v2 up to 2");
    wait_ready(&rcs, "knobs-v2", 4).await;
}

#[tokio::test]
async fn record_writes_the_change_cause_on_the_new_rc() {
    let cluster = cluster();
    let ns = cluster.namespace("ru-record").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "rec",
            "rec",
            &[],
            &[("c", OLD_IMAGE)],
            1,
            Readiness::Started,
        ),
    )
    .await;
    let image = format!("--image={NEW_IMAGE}");
    let out = rolling_update(
        cluster,
        ns.as_str(),
        &["rec", image.as_str(), "--update-period=0", "--record"],
    );
    out.success();
    assert_eq!(
        out.stderr,
        "Flag --record has been deprecated, --record will be removed in the future\n"
    );
    // The one-name hand-over carries the annotation over to the final RC.
    let rec = rcs.get("rec").await.unwrap();
    let cause = rec
        .metadata
        .annotations
        .unwrap_or_default()
        .get("kubernetes.io/change-cause")
        .cloned()
        .unwrap_or_default();
    assert!(
        cause.starts_with("kubectl rolling-update rec ") && cause.contains(&image),
        "{cause}"
    );
}
