//! The steps before the update against a fake cluster on tokio's paused clock: each
//! recovery path, the `--image` resume with the old RC's marking, `--rollback`, the dry
//! runs, and the pure assembly of the new RC.
//!
//! The fake keeps RCs and pods in maps and records every call; an RC scaled through
//! the scale subresource reports its pods available `ready_after` later (never, with
//! `None`), as the RC manager and the kubelets would.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::model::replication_controller::ReplicationControllerStatus;
use crate::model::{Pod, ReplicationController};
use serde_json::json;
use tokio::time::Instant;

use super::*;
use crate::controller::replicas;
use crate::handover::RENAMED_FROM_ANNOTATION;
use crate::names::NEXT_CONTROLLER_ANNOTATION;

const KEY: &str = "deployment";

struct Fake {
    rcs: BTreeMap<String, ReplicationController>,
    pods: BTreeMap<String, Pod>,
    calls: Vec<String>,
    /// How long after a scale the RC reports its pods available (`None`: never).
    ready_after: Option<Duration>,
    scaled: BTreeMap<String, (Instant, i32)>,
    /// A pod the RC manager creates from its cached template right after the
    /// second RC write (between the marking's writes).
    late_pod: Option<Pod>,
    /// Pods deleted by someone else between our list and our update of them.
    vanishing: Vec<String>,
    rc_writes: usize,
    /// Scripted answers to the next POSTs of an RC (front first): the error in place
    /// of the answer, `applied` when the server stored the RC all the same (a lost
    /// answer).
    create_failures: Vec<(kube::Error, bool)>,
    /// Scripted errors of the next orphan-deletes (front first), nothing applied.
    delete_failures: Vec<kube::Error>,
}

impl Fake {
    fn new(rcs: Vec<ReplicationController>, pods: Vec<Pod>) -> Self {
        Fake {
            rcs: rcs
                .into_iter()
                .map(|rc| (controller::name(&rc).to_string(), rc))
                .collect(),
            pods: pods
                .into_iter()
                .map(|p| (p.metadata.name.clone().unwrap_or_default(), p))
                .collect(),
            calls: Vec::new(),
            ready_after: Some(Duration::ZERO),
            scaled: BTreeMap::new(),
            late_pod: None,
            vanishing: Vec::new(),
            rc_writes: 0,
            create_failures: Vec::new(),
            delete_failures: Vec::new(),
        }
    }

    fn status(code: u16, reason: &str) -> kube::Error {
        kube::Error::Api(Box::new(
            kube::core::Status::failure(reason, reason).with_code(code),
        ))
    }

    fn not_found(name: &str) -> kube::Error {
        kube::Error::Api(Box::new(
            kube::core::Status::failure(
                &format!("replicationcontrollers {name:?} not found"),
                "NotFound",
            )
            .with_code(404),
        ))
    }

    /// A write as `KubeOps` sends it: the merge patch of what `mutate` changes in `rc`
    /// (nothing sent, nor recorded as `call`, when it changes nothing), applied to the
    /// stored copy as the API server applies it, so a caller that hands in a copy it
    /// already changed writes nothing.
    fn merge_patch(
        &mut self,
        call: &str,
        rc: &ReplicationController,
        mutate: &(dyn Fn(&mut ReplicationController) + Sync),
    ) -> anyhow::Result<ReplicationController> {
        let name = controller::name(rc).to_string();
        let Some(patch) = crate::merge::change(rc, mutate)? else {
            return Ok(rc.clone());
        };
        self.calls.push(format!("{call} {name}"));
        let stored = self.rcs.get(&name).ok_or_else(|| Self::not_found(&name))?;
        let mut value = serde_json::to_value(stored)?;
        json_patch::merge(&mut value, &patch);
        Ok(self.store(serde_json::from_value(value)?))
    }

    fn store(&mut self, rc: ReplicationController) -> ReplicationController {
        self.rc_writes += 1;
        if self.rc_writes == 2
            && let Some(pod) = self.late_pod.take()
        {
            self.pods
                .insert(pod.metadata.name.clone().unwrap_or_default(), pod);
        }
        self.rcs
            .insert(controller::name(&rc).to_string(), rc.clone());
        rc
    }
}

/// The hand-over's requests: POST (scripted failures first), GET, an orphan-delete
/// the garbage collector finishes at once, PATCH.
impl HandoverOps for Fake {
    fn check_interrupt(&self) -> anyhow::Result<()> {
        Ok(())
    }

    /// The scripted cluster's answers are statuses: 429 and 5xx are worth a retry.
    fn is_transient(&self, err: &kube::Error) -> bool {
        matches!(err, kube::Error::Api(s) if s.code == 429 || s.code >= 500)
    }

    async fn create_rc(
        &mut self,
        rc: &ReplicationController,
    ) -> Result<ReplicationController, kube::Error> {
        let name = controller::name(rc).to_string();
        self.calls.push(format!("create {name}"));
        if !self.create_failures.is_empty() {
            let (err, applied) = self.create_failures.remove(0);
            if applied {
                self.store(rc.clone());
            }
            return Err(err);
        }
        if self.rcs.contains_key(&name) {
            return Err(Self::status(409, "AlreadyExists"));
        }
        Ok(self.store(rc.clone()))
    }

    async fn find_rc(&mut self, name: &str) -> Result<Option<ReplicationController>, kube::Error> {
        self.calls.push(format!("find {name}"));
        Ok(self.rcs.get(name).cloned())
    }

    async fn orphan_delete_rc(&mut self, name: &str) -> Result<(), kube::Error> {
        self.calls.push(format!("orphan_delete {name}"));
        if !self.delete_failures.is_empty() {
            return Err(self.delete_failures.remove(0));
        }
        match self.rcs.remove(name) {
            Some(_) => Ok(()),
            None => Err(Self::not_found(name)),
        }
    }

    async fn wait_rc_gone(&mut self, name: &str, _deadline: Instant) -> anyhow::Result<()> {
        self.calls.push(format!("wait_gone {name}"));
        self.rcs.remove(name);
        Ok(())
    }

    async fn patch_rc(
        &mut self,
        rc: &ReplicationController,
        mutate: &(dyn Fn(&mut ReplicationController) + Sync),
    ) -> anyhow::Result<ReplicationController> {
        self.merge_patch("patch_rc", rc, mutate)
    }

    async fn pause_until(&mut self, until: Instant) -> anyhow::Result<()> {
        tokio::time::sleep_until(until).await;
        Ok(())
    }
}

impl PrepareOps for Fake {
    async fn get_rc(&mut self, name: &str) -> Result<ReplicationController, kube::Error> {
        self.calls.push(format!("get {name}"));
        let mut rc = self
            .rcs
            .get(name)
            .cloned()
            .ok_or_else(|| Self::not_found(name))?;
        if let Some((at, n)) = self.scaled.get(name) {
            let available = match self.ready_after {
                Some(delay) if Instant::now() >= *at + delay => *n,
                _ => 0,
            };
            rc.status = Some(ReplicationControllerStatus {
                replicas: *n,
                available_replicas: Some(available),
                ..Default::default()
            });
        }
        Ok(rc)
    }

    async fn get_rc_opt(&mut self, name: &str) -> anyhow::Result<Option<ReplicationController>> {
        self.calls.push(format!("get_opt {name}"));
        Ok(self.rcs.get(name).cloned())
    }

    async fn list_rcs(&mut self) -> anyhow::Result<Vec<ReplicationController>> {
        self.calls.push("list_rcs".into());
        Ok(self.rcs.values().cloned().collect())
    }

    async fn strip_update_annotations(
        &mut self,
        rc: &ReplicationController,
    ) -> anyhow::Result<ReplicationController> {
        self.merge_patch("strip", rc, &|rc| {
            if let Some(a) = rc.metadata.annotations.as_mut() {
                a.remove(SOURCE_ID_ANNOTATION);
                a.remove(DESIRED_REPLICAS_ANNOTATION);
                a.remove(NEXT_CONTROLLER_ANNOTATION);
            }
        })
    }

    async fn scale_rc(&mut self, name: &str, replicas: i32) -> anyhow::Result<()> {
        self.calls.push(format!("scale {name} {replicas}"));
        let rc = self.rcs.get_mut(name).expect("the scaled RC exists");
        set_replicas(rc, replicas);
        self.scaled
            .insert(name.to_string(), (Instant::now(), replicas));
        Ok(())
    }

    async fn list_pods(&mut self, selector: &str) -> anyhow::Result<Vec<Pod>> {
        self.calls.push(format!("list_pods {selector}"));
        let wanted: Vec<(&str, &str)> = selector
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .collect();
        Ok(self
            .pods
            .values()
            .filter(|p| {
                let labels = p.metadata.labels.clone().unwrap_or_default();
                wanted
                    .iter()
                    .all(|(k, v)| labels.get(*k).map(String::as_str) == Some(*v))
            })
            .cloned()
            .collect())
    }

    async fn update_pods(
        &mut self,
        pods: &[Pod],
        mutate: &(dyn Fn(&mut Pod) + Sync),
    ) -> Vec<anyhow::Result<Pod>> {
        let mut results = Vec::new();
        for pod in pods {
            let name = pod.metadata.name.clone().unwrap_or_default();
            self.calls.push(format!("update_pod {name}"));
            if self.vanishing.contains(&name) {
                self.pods.remove(&name);
                let status =
                    kube::core::Status::failure(&format!("pods {name:?} not found"), "NotFound")
                        .with_code(404);
                results.push(Err(anyhow::Error::new(kube::Error::Api(Box::new(status)))));
                continue;
            }
            let mut pod = pod.clone();
            mutate(&mut pod);
            self.pods.insert(name, pod.clone());
            results.push(Ok(pod));
        }
        results
    }

    async fn delete_pod(&mut self, name: &str) -> anyhow::Result<()> {
        self.calls.push(format!("delete_pod {name}"));
        self.pods.remove(name);
        Ok(())
    }

    /// The RC manager at once: it has observed the RC and counts its pods (those of
    /// its selector) and the fully labelled ones among them (carrying every label of
    /// its template).
    async fn wait_rc_change(
        &mut self,
        rc: &ReplicationController,
        cond: &(dyn Fn(&ReplicationController) -> bool + Sync),
        _deadline: Instant,
    ) -> anyhow::Result<ReplicationController> {
        let name = controller::name(rc).to_string();
        self.calls.push(format!("wait_rc {name}"));
        let mut rc = self.rcs.get(&name).cloned().expect("the waited RC exists");
        let spec = rc.spec.clone().unwrap_or_default();
        let template = spec
            .template
            .and_then(|t| t.metadata)
            .and_then(|m| m.labels)
            .unwrap_or_default();
        let carries = |pod: &Pod, wanted: &std::collections::BTreeMap<String, String>| {
            let labels = pod.metadata.labels.clone().unwrap_or_default();
            wanted.iter().all(|(k, v)| labels.get(k) == Some(v))
        };
        let selector = spec.selector.unwrap_or_default();
        let pods: Vec<&Pod> = self
            .pods
            .values()
            .filter(|p| carries(p, &selector))
            .collect();
        rc.status = Some(ReplicationControllerStatus {
            replicas: pods.len() as i32,
            fully_labeled_replicas: Some(
                pods.iter().filter(|p| carries(p, &template)).count() as i32
            ),
            observed_generation: rc.metadata.generation,
            ..Default::default()
        });
        anyhow::ensure!(
            cond(&rc),
            "timed out waiting for replicationcontroller {name:?}"
        );
        Ok(rc)
    }

    async fn create_rc_dry_run(
        &mut self,
        rc: &ReplicationController,
    ) -> anyhow::Result<ReplicationController> {
        self.calls
            .push(format!("create_dry_run {}", controller::name(rc)));
        let mut rc = rc.clone();
        rc.metadata.uid = Some("dry-run-uid".into());
        Ok(rc)
    }
}

#[derive(Default)]
struct Lines(Vec<String>);

impl Report for Lines {
    fn line(&mut self, line: &str) {
        self.0.push(line.to_string());
    }
}

fn rc(
    name: &str,
    replicas: i32,
    annotations: &[(&str, &str)],
    selector: &[(&str, &str)],
    image: &str,
) -> ReplicationController {
    let selector: BTreeMap<&str, &str> = selector.iter().copied().collect();
    let annotations: BTreeMap<&str, &str> = annotations.iter().copied().collect();
    serde_json::from_value(json!({
        "metadata": {"name": name, "uid": format!("uid-{name}"), "annotations": annotations},
        "spec": {
            "replicas": replicas,
            "selector": selector,
            "template": {
                "metadata": {"labels": selector},
                "spec": {"containers": [{"name": "app", "image": image}]}
            }
        }
    }))
    .expect("an RC")
}

fn pod(name: &str, labels: &[(&str, &str)], owner_uid: Option<&str>) -> Pod {
    let labels: BTreeMap<&str, &str> = labels.iter().copied().collect();
    let owners: Vec<_> = owner_uid
        .map(|uid| {
            json!({"apiVersion": "v1", "kind": "ReplicationController", "name": "x",
                   "uid": uid, "controller": true})
        })
        .into_iter()
        .collect();
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels, "ownerReferences": owners}
    }))
    .expect("a pod")
}

fn args(names: &[&str]) -> Vec<String> {
    names.iter().map(ToString::to_string).collect()
}

fn plan<'a>(args: &'a [String]) -> Plan<'a> {
    Plan {
        args,
        old_name: &args[0],
        keep_old_name: args.len() == 1,
        filename: "",
        image: "",
        container: "",
        pull_policy: "",
        deployment_key: KEY,
        rollback: false,
        dry_run: DryRunStrategy::None,
        timeout: Duration::from_secs(60),
        change_cause: None,
        namespace: "team",
    }
}

/// The successor an earlier one-name run of `web` left behind, at one of 3 replicas.
fn successor() -> ReplicationController {
    rc(
        "web-2",
        1,
        &[
            (SOURCE_ID_ANNOTATION, "web:uid-web"),
            (DESIRED_REPLICAS_ANNOTATION, "3"),
        ],
        &[("app", "web"), (KEY, "2")],
        "nginx:2",
    )
}

#[tokio::test(start_paused = true)]
async fn a_one_name_update_whose_old_rc_is_gone_is_scaled_up_then_renamed() {
    let mut fake = Fake::new(vec![successor()], vec![]);
    fake.ready_after = Some(Duration::from_secs(2));
    let (args, mut lines) = (args(&["web"]), Lines::default());
    let start = Instant::now();
    let prepared = prepare(&plan(&args), &mut fake, &mut lines, None)
        .await
        .expect("finished");
    let Prepared::Finished { rc, operation } = prepared else {
        panic!("not finished: {prepared:?}");
    };
    assert_eq!(
        (controller::name(&rc), operation.as_str()),
        ("web", "rolling updated")
    );
    assert_eq!(
        lines.0,
        [
            "Continuing update with existing controller web-2.",
            "Scaling web-2 up to 3",
            "Renaming web-2 to web"
        ]
    );
    assert_eq!(
        &fake.calls[..4],
        ["get web", "list_rcs", "scale web-2 3", "get web-2"]
    );
    // The hand-over: the pending copy, the orphan-delete, the copy made final.
    assert_eq!(
        fake.calls[fake.calls.len() - 4..],
        [
            "create web",
            "orphan_delete web-2",
            "wait_gone web-2",
            "patch_rc web"
        ]
    );
    assert_eq!(replicas(&rc), 3);
    assert_eq!(handover::renamed_from(&rc), None);
    assert!(!fake.rcs.contains_key("web-2"));
    // Polled every 250 ms until the pods were available, 2 s after the scale.
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(2) && waited < Duration::from_millis(2300),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn waiting_for_the_successor_s_pods_is_bounded_by_the_timeout() {
    let mut fake = Fake::new(vec![successor()], vec![]);
    fake.ready_after = None;
    let args = args(&["web"]);
    let plan = Plan {
        timeout: Duration::from_secs(10),
        ..plan(&args)
    };
    let start = Instant::now();
    let err = prepare(&plan, &mut fake, &mut Lines::default(), None)
        .await
        .expect_err("never available");
    assert_eq!(
        err.to_string(),
        "timed out waiting for \"web-2\" to have 3 available pods"
    );
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(10) && waited < Duration::from_millis(10_300),
        "{waited:?}"
    );
    assert!(!fake.calls.iter().any(|c| c.starts_with("hand_over")));
}

#[tokio::test(start_paused = true)]
async fn a_damaged_desired_replicas_record_is_reported_before_any_write() {
    let mut damaged = successor();
    set_annotation(&mut damaged, DESIRED_REPLICAS_ANNOTATION, "three");
    let mut fake = Fake::new(vec![damaged], vec![]);
    let args = args(&["web"]);
    let err = prepare(&plan(&args), &mut fake, &mut Lines::default(), None)
        .await
        .expect_err("damaged");
    assert_eq!(
        err.to_string(),
        format!("Unable to parse annotation for web-2: {DESIRED_REPLICAS_ANNOTATION}=three")
    );
    assert_eq!(fake.calls, ["get web", "list_rcs"]);
}

#[tokio::test(start_paused = true)]
async fn a_missing_old_rc_without_a_successor_is_reported_with_its_source_id() {
    let mut fake = Fake::new(vec![], vec![]);
    let args = args(&["web"]);
    let err = prepare(&plan(&args), &mut fake, &mut Lines::default(), None)
        .await
        .expect_err("nothing to finish");
    assert_eq!(
        err.to_string(),
        "couldn't find a replication controller with source id == team/web"
    );
    // A dry run of a recovery changes nothing and prints nothing.
    let mut fake = Fake::new(vec![successor()], vec![]);
    let dry = Plan {
        dry_run: DryRunStrategy::Server,
        ..plan(&args)
    };
    let prepared = prepare(&dry, &mut fake, &mut Lines::default(), None)
        .await
        .expect("dry");
    assert!(matches!(prepared, Prepared::Nothing), "{prepared:?}");
    assert_eq!(fake.calls, ["get web", "list_rcs"]);
}

#[tokio::test(start_paused = true)]
async fn a_two_name_update_whose_old_rc_is_gone_ends_by_removing_the_annotations() {
    let mut done = successor();
    set_replicas(&mut done, 3);
    let mut fake = Fake::new(vec![done], vec![]);
    // Already at 3: its status says so once it has been looked at.
    fake.scaled.insert("web-2".into(), (Instant::now(), 3));
    let args = args(&["web", "web-2"]);
    let mut lines = Lines::default();
    let prepared = prepare(&plan(&args), &mut fake, &mut lines, None)
        .await
        .expect("finished");
    let Prepared::Finished {
        rc: finished,
        operation,
    } = prepared
    else {
        panic!("not finished: {prepared:?}");
    };
    assert_eq!(operation, "rolling updated to \"web-2\"");
    assert_eq!(annotation(&finished, SOURCE_ID_ANNOTATION), None);
    assert_eq!(
        lines.0,
        ["Continuing update with existing controller web-2."]
    );
    assert_eq!(
        fake.calls,
        ["get web", "get_opt web-2", "get web-2", "strip web-2"]
    );

    // Another RC under the second name is no successor: the old RC's 404 stands.
    let stranger = rc("web-2", 1, &[], &[("app", "other")], "nginx:2");
    let mut fake = Fake::new(vec![stranger], vec![]);
    let err = prepare(&plan(&args), &mut fake, &mut Lines::default(), None)
        .await
        .expect_err("not found");
    assert!(
        matches!(err.downcast_ref::<kube::Error>(), Some(kube::Error::Api(s)) if s.code == 404),
        "{err:#}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_pending_hand_over_is_resumed_and_a_rollback_of_it_refused() {
    let pending = rc(
        "web",
        0,
        &[
            (RENAMED_FROM_ANNOTATION, "web-2"),
            (DESIRED_REPLICAS_ANNOTATION, "3"),
        ],
        &[("app", "web"), (KEY, "2")],
        "nginx:2",
    );
    let mut fake = Fake::new(vec![pending.clone()], vec![]);
    let args = args(&["web"]);
    let mut lines = Lines::default();
    let prepared = prepare(&plan(&args), &mut fake, &mut lines, None)
        .await
        .expect("resumed");
    assert!(
        matches!(prepared, Prepared::Finished { .. }),
        "{prepared:?}"
    );
    assert_eq!(lines.0, ["Renaming web-2 to web"]);
    assert_eq!(
        fake.calls,
        [
            "get web",
            "orphan_delete web-2",
            "wait_gone web-2",
            "patch_rc web"
        ]
    );

    let mut fake = Fake::new(vec![pending], vec![]);
    let rollback = Plan {
        rollback: true,
        ..plan(&args)
    };
    let err = prepare(&rollback, &mut fake, &mut Lines::default(), None)
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("is past its last step"), "{err}");
    assert_eq!(fake.calls, ["get web"]);
}

#[tokio::test(start_paused = true)]
async fn an_old_rc_being_deleted_is_waited_for_then_the_update_finished() {
    let mut old = rc("web", 0, &[], &[("app", "web")], "nginx:1");
    old.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
    ));
    let mut fake = Fake::new(vec![old, successor()], vec![]);
    let args = args(&["web"]);
    prepare(&plan(&args), &mut fake, &mut Lines::default(), None)
        .await
        .expect("finished");
    assert_eq!(
        &fake.calls[..4],
        ["get web", "wait_gone web", "get web", "list_rcs"]
    );
}

/// The old RC of an `--image` update in progress (already pointing at `web-next`),
/// its two pods, and a pod of another controller under the same labels.
fn image_update() -> Fake {
    let old = rc(
        "web",
        2,
        &[(NEXT_CONTROLLER_ANNOTATION, "web-next")],
        &[("app", "web")],
        "nginx:1",
    );
    let next = rc(
        "web-next",
        0,
        &[
            (SOURCE_ID_ANNOTATION, "web:uid-web"),
            (DESIRED_REPLICAS_ANNOTATION, "2"),
        ],
        &[("app", "web"), (KEY, "h2")],
        "nginx:2",
    );
    let pods = vec![
        pod("web-a", &[("app", "web")], Some("uid-web")),
        pod("web-b", &[("app", "web")], Some("uid-web")),
        pod("other", &[("app", "web")], Some("uid-other")),
    ];
    Fake::new(vec![old, next], pods)
}

#[tokio::test(start_paused = true)]
async fn image_resumes_the_update_in_progress_and_marks_the_old_rc_and_its_pods() {
    let mut fake = image_update();
    // The RC manager creates a pod from the template it cached before our first
    // write: without the deployment key, it would be left outside every selector.
    fake.late_pod = Some(pod("web-late", &[("app", "web")], Some("uid-web")));
    let args = args(&["web"]);
    let plan = Plan {
        image: "nginx:2",
        ..plan(&args)
    };
    let mut lines = Lines::default();
    let prepared = prepare(&plan, &mut fake, &mut lines, None)
        .await
        .expect("prepared");
    assert_eq!(
        lines.0,
        ["Found existing update in progress (web-next), resuming."]
    );
    let Prepared::Update {
        old_rc,
        new_rc,
        cleanup,
        target,
    } = prepared
    else {
        panic!("no update: {prepared:?}");
    };
    assert_eq!(controller::name(&new_rc), "web-next");
    assert_eq!(cleanup, CleanupPolicy::Rename);
    assert_eq!(target, Target::Found, "the updater need not read it again");
    let key_value = controller::selector(&old_rc)
        .get(KEY)
        .cloned()
        .expect("keyed selector");
    assert_eq!(
        annotation(&old_rc, NEXT_CONTROLLER_ANNOTATION),
        Some("web-next")
    );
    assert_eq!(
        fake.calls,
        [
            "get web",
            "get_opt web-next",
            "patch_rc web",
            "list_pods app=web",
            "update_pod other",
            "update_pod web-a",
            "update_pod web-b",
            "wait_rc web",
            "patch_rc web",
            "list_pods app=web",
            "delete_pod web-late",
        ]
    );
    // Every pod kept carries the key; the late one is gone, the other owner's kept.
    for name in ["web-a", "web-b", "other"] {
        let labels = fake.pods[name].metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels.get(KEY), Some(&key_value), "{name}");
    }
    assert!(!fake.pods.contains_key("web-late"));
}

#[tokio::test(start_paused = true)]
async fn a_pod_deleted_between_the_list_and_its_label_is_skipped() {
    // Found by the 30-replica chaos e2e: a pod deleted right after the list made the
    // whole update fail with the pod's NotFound.
    let mut fake = image_update();
    fake.vanishing = vec!["web-a".into()];
    let args = args(&["web"]);
    let plan = Plan {
        image: "nginx:2",
        ..plan(&args)
    };
    let prepared = prepare(&plan, &mut fake, &mut Lines::default(), None).await;
    assert!(
        matches!(prepared, Ok(Prepared::Update { .. })),
        "{prepared:?}"
    );
    assert!(fake.calls.contains(&"update_pod web-b".to_string()));
    assert!(!fake.pods.contains_key("web-a"));
    for name in ["web-b", "other"] {
        let labels = fake.pods[name].metadata.labels.clone().unwrap_or_default();
        assert!(labels.contains_key(KEY), "{name}");
    }
}

#[tokio::test(start_paused = true)]
async fn image_refuses_an_update_in_progress_to_another_image() {
    let mut fake = image_update();
    let args = args(&["web"]);
    let plan = Plan {
        image: "nginx:3",
        ..plan(&args)
    };
    let err = prepare(&plan, &mut fake, &mut Lines::default(), None)
        .await
        .expect_err("another image");
    assert_eq!(
        err.to_string(),
        "Found existing in-progress update to image (nginx:2).\nEither continue in-progress update with --image=nginx:2 or rollback with --rollback"
    );
    assert_eq!(fake.calls, ["get web", "get_opt web-next"]);
}

#[tokio::test(start_paused = true)]
async fn image_without_a_change_needs_a_pull_policy_and_a_dry_run_writes_nothing() {
    let old = rc("web", 2, &[], &[("app", "web")], "nginx:1");
    let args = args(&["web"]);
    let same = Plan {
        image: "nginx:1",
        ..plan(&args)
    };
    let mut fake = Fake::new(vec![old.clone()], vec![]);
    let err = prepare(&same, &mut fake, &mut Lines::default(), None)
        .await
        .expect_err("no pull policy");
    assert!(
        err.to_string()
            .starts_with("--image-pull-policy (Always|Never|IfNotPresent) must be provided")
    );

    let dry = Plan {
        image: "nginx:2",
        dry_run: DryRunStrategy::Client,
        ..plan(&args)
    };
    let mut fake = Fake::new(vec![old], vec![]);
    let prepared = prepare(&dry, &mut fake, &mut Lines::default(), None)
        .await
        .expect("dry run");
    let Prepared::DryRun { old_rc, new_rc } = prepared else {
        panic!("no dry run: {prepared:?}");
    };
    // The marks the old RC would get are shown; nothing was written.
    assert_eq!(
        annotation(&old_rc, NEXT_CONTROLLER_ANNOTATION),
        Some(controller::name(&new_rc))
    );
    assert!(controller::selector(&old_rc).contains_key(KEY));
    assert_eq!(fake.calls, ["get web"]);
}

/// The requests before a new update, in order: with `--image` the old RC is marked
/// (next-controller-id and the deployment key on its template, then its pods all at
/// once, then its selector, then the clean-up list); with `-f` only the old RC is read.
/// The new RC is left to the updater, which creates an `--image` one at once and looks
/// a `-f` one up first.
#[tokio::test(start_paused = true)]
async fn a_new_update_reads_the_old_rc_marks_it_and_leaves_the_new_one_to_the_updater() {
    let old = rc("web", 3, &[], &[("app", "web")], "nginx:1");
    let pods: Vec<Pod> = ["web-a", "web-b", "web-c"]
        .into_iter()
        .map(|n| pod(n, &[("app", "web")], Some("uid-web")))
        .collect();
    let args = args(&["web"]);
    let image = Plan {
        image: "nginx:2",
        ..plan(&args)
    };
    let mut fake = Fake::new(vec![old], pods);
    let prepared = prepare(&image, &mut fake, &mut Lines::default(), None)
        .await
        .expect("prepared");
    let Prepared::Update { new_rc, target, .. } = prepared else {
        panic!("no update: {prepared:?}");
    };
    assert_eq!(target, Target::Derived);
    assert!(!fake.rcs.contains_key(controller::name(&new_rc)));
    assert_eq!(
        fake.calls,
        [
            "get web",
            "patch_rc web",
            "list_pods app=web",
            "update_pod web-a",
            "update_pod web-b",
            "update_pod web-c",
            "wait_rc web",
            "patch_rc web",
            "list_pods app=web",
        ]
    );

    let from_file = rc("web-v2", 3, &[], &[("app", "web"), ("v", "2")], "nginx:2");
    let file = Plan {
        filename: "web-v2.yaml",
        ..plan(&args)
    };
    let old = rc("web", 3, &[], &[("app", "web"), ("v", "1")], "nginx:1");
    let mut fake = Fake::new(vec![old], vec![]);
    let prepared = prepare(
        &file,
        &mut fake,
        &mut Lines::default(),
        Some((from_file, false)),
    )
    .await
    .expect("prepared");
    assert!(
        matches!(
            prepared,
            Prepared::Update {
                target: Target::Unknown,
                ..
            }
        ),
        "{prepared:?}"
    );
    assert_eq!(fake.calls, ["get web"]);
}

#[tokio::test(start_paused = true)]
async fn a_server_dry_run_asks_the_server_to_default_a_new_rc() {
    let old = rc("web", 2, &[], &[("app", "web"), ("v", "1")], "nginx:1");
    let from_file = rc("web-v2", 0, &[], &[("app", "web"), ("v", "2")], "nginx:2");
    let args = args(&["web"]);
    let plan = Plan {
        dry_run: DryRunStrategy::Server,
        filename: "rc.yaml",
        ..plan(&args)
    };
    let mut fake = Fake::new(vec![old], vec![]);
    let prepared = prepare(
        &plan,
        &mut fake,
        &mut Lines::default(),
        Some((from_file, true)),
    )
    .await
    .expect("dry run");
    let Prepared::DryRun { new_rc, .. } = prepared else {
        panic!("no dry run: {prepared:?}");
    };
    assert_eq!(new_rc.metadata.uid.as_deref(), Some("dry-run-uid"));
    assert_eq!(replicas(&new_rc), 2, "the old RC's count, -f having none");
    assert_eq!(
        fake.calls,
        ["get web", "get_opt web-v2", "create_dry_run web-v2"]
    );
}

#[tokio::test(start_paused = true)]
async fn a_rollback_swaps_the_pair_and_finishes_when_the_partial_rc_is_gone() {
    let original = rc(
        "web",
        1,
        &[(crate::names::ORIGINAL_REPLICAS_ANNOTATION, "3")],
        &[("app", "web"), (KEY, "h1-orig")],
        "nginx:1",
    );
    let partial = rc(
        "web-next",
        2,
        &[
            (SOURCE_ID_ANNOTATION, "web:uid-web"),
            (DESIRED_REPLICAS_ANNOTATION, "3"),
        ],
        &[("app", "web"), (KEY, "h2")],
        "nginx:2",
    );
    let args = args(&["web", "web-next"]);
    let rollback = Plan {
        rollback: true,
        ..plan(&args)
    };
    let mut fake = Fake::new(vec![original, partial], vec![]);
    let mut lines = Lines::default();
    let prepared = prepare(&rollback, &mut fake, &mut lines, None)
        .await
        .expect("rollback");
    let Prepared::Update {
        old_rc,
        new_rc,
        cleanup,
        target,
    } = prepared
    else {
        panic!("no update: {prepared:?}");
    };
    assert_eq!(
        (controller::name(&old_rc), controller::name(&new_rc)),
        ("web-next", "web")
    );
    assert_eq!(cleanup, CleanupPolicy::Delete);
    assert_eq!(target, Target::Found);
    assert_eq!(annotation(&new_rc, DESIRED_REPLICAS_ANNOTATION), Some("3"));
    assert_eq!(
        annotation(&new_rc, SOURCE_ID_ANNOTATION),
        Some("web-next:uid-web-next")
    );
    assert_eq!(lines.0, ["Setting \"web\" replicas to 3"]);
    assert_eq!(fake.calls, ["get web", "get_opt web-next", "patch_rc web"]);

    // Stopped after the partial RC was deleted: only the annotations are left.
    let left = rc(
        "web",
        3,
        &[
            (SOURCE_ID_ANNOTATION, "web-next:uid-web-next"),
            (DESIRED_REPLICAS_ANNOTATION, "3"),
        ],
        &[("app", "web")],
        "nginx:1",
    );
    let mut fake = Fake::new(vec![left], vec![]);
    let prepared = prepare(&rollback, &mut fake, &mut Lines::default(), None)
        .await
        .expect("finished");
    assert!(
        matches!(&prepared, Prepared::Finished { operation, .. } if operation == "rolling updated"),
        "{prepared:?}"
    );
    assert_eq!(fake.calls, ["get web", "get_opt web-next", "strip web"]);

    // Nothing of the update anywhere: 1.17's message.
    let mut fake = Fake::new(
        vec![rc("web", 3, &[], &[("app", "web")], "nginx:1")],
        vec![],
    );
    let err = prepare(&rollback, &mut fake, &mut Lines::default(), None)
        .await
        .expect_err("nothing to roll back");
    assert_eq!(err.to_string(), "Could not find web-next to rollback.");
}

#[test]
fn the_new_rc_body_follows_1_17_s_rules_and_carries_the_change_cause() {
    let args = args(&["web"]);
    let plan = Plan {
        filename: "rc.yaml",
        change_cause: Some("kubectl rolling-update web -f rc.yaml"),
        ..plan(&args)
    };
    let old = rc("web", 4, &[], &[("app", "web"), ("v", "1")], "nginx:1");

    let same_name = rc("web", 1, &[], &[("app", "web"), ("v", "2")], "nginx:2");
    let err = new_controller_body(&plan, &old, same_name, false).expect_err("same name");
    assert_eq!(
        err.to_string(),
        "rc.yaml cannot have the same name as the existing ReplicationController web"
    );
    let same_selector = rc("web-v2", 1, &[], &[("app", "web"), ("v", "1")], "nginx:2");
    let err = new_controller_body(&plan, &old, same_selector, false).expect_err("same selector");
    assert_eq!(
        err.to_string(),
        "rc.yaml must specify a matching key with non-equal value in Selector for web"
    );

    let next = rc("web-v2", 1, &[], &[("app", "web"), ("v", "2")], "nginx:2");
    let body = new_controller_body(&plan, &old, next.clone(), true).expect("valid");
    assert_eq!(replicas(&body), 4, "-f left the count out: the old RC's");
    assert_eq!(
        annotation(&body, cli::flags::CHANGE_CAUSE),
        Some("kubectl rolling-update web -f rc.yaml")
    );
    let body = new_controller_body(&plan, &old, next.clone(), false).expect("valid");
    assert_eq!(replicas(&body), 1);

    // A rollback moves back to an RC that keeps its own cause.
    let rollback = Plan {
        rollback: true,
        ..plan
    };
    let body = new_controller_body(&rollback, &old, next, false).expect("valid");
    assert_eq!(annotation(&body, cli::flags::CHANGE_CAUSE), None);
}

/// The RC the hand-over hands over, and the fake holding it (3 pods' worth).
fn handing_over() -> (ReplicationController, Fake) {
    let new_rc = rc(
        "web-2",
        3,
        &[(DESIRED_REPLICAS_ANNOTATION, "3")],
        &[("app", "web"), (KEY, "2")],
        "nginx:2",
    );
    let fake = Fake::new(vec![new_rc.clone()], vec![]);
    (new_rc, fake)
}

#[tokio::test(start_paused = true)]
async fn the_hand_over_posts_a_pending_copy_orphan_deletes_then_patches_it_final() {
    let (new_rc, mut fake) = handing_over();
    let done = handover::hand_over(&mut fake, &new_rc, "web", Duration::from_secs(60))
        .await
        .expect("handed over");
    assert_eq!(
        fake.calls,
        [
            "create web",
            "orphan_delete web-2",
            "wait_gone web-2",
            "patch_rc web"
        ]
    );
    assert_eq!(controller::name(&done), "web");
    assert_eq!(replicas(&done), 3);
    assert_eq!(
        done.spec.as_ref().and_then(|s| s.selector.clone()),
        new_rc.spec.as_ref().and_then(|s| s.selector.clone())
    );
    assert_eq!(handover::renamed_from(&done), None);
    assert_eq!(fake.rcs.keys().collect::<Vec<_>>(), ["web"]);
}

#[tokio::test(start_paused = true)]
async fn a_lost_answer_to_the_copy_s_post_goes_on_with_the_copy_it_created() {
    let (new_rc, mut fake) = handing_over();
    // The server stored the copy but its answer was a 504: retried after 200 ms, the
    // POST meets the copy (AlreadyExists), which is ours.
    fake.create_failures
        .push((Fake::status(504, "Timeout"), true));
    let start = Instant::now();
    let done = handover::hand_over(&mut fake, &new_rc, "web", Duration::from_secs(60))
        .await
        .expect("handed over");
    assert_eq!(
        fake.calls,
        [
            "create web",
            "create web",
            "find web",
            "orphan_delete web-2",
            "wait_gone web-2",
            "patch_rc web"
        ]
    );
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    assert_eq!(replicas(&done), 3);
}

#[tokio::test(start_paused = true)]
async fn a_transient_delete_failure_is_retried_and_another_rc_under_the_name_refused() {
    let (new_rc, mut fake) = handing_over();
    fake.delete_failures
        .push(Fake::status(429, "TooManyRequests"));
    handover::hand_over(&mut fake, &new_rc, "web", Duration::from_secs(60))
        .await
        .expect("handed over");
    assert_eq!(
        fake.calls[..3],
        ["create web", "orphan_delete web-2", "orphan_delete web-2"]
    );

    // Someone else's RC under the old name: nothing is deleted.
    let (new_rc, mut fake) = handing_over();
    fake.rcs.insert(
        "web".into(),
        rc("web", 1, &[], &[("app", "other")], "other:1"),
    );
    let err = handover::hand_over(&mut fake, &new_rc, "web", Duration::from_secs(60))
        .await
        .expect_err("refused");
    assert_eq!(
        err.to_string(),
        "replicationcontroller \"web\" already exists and is not the renamed copy of \"web-2\""
    );
    assert_eq!(fake.calls, ["create web", "find web"]);
    assert!(fake.rcs.contains_key("web-2"));
}

#[tokio::test(start_paused = true)]
async fn a_permanent_failure_of_the_post_stops_the_hand_over_before_any_delete() {
    let (new_rc, mut fake) = handing_over();
    fake.create_failures
        .push((Fake::status(403, "Forbidden"), false));
    let err = handover::hand_over(&mut fake, &new_rc, "web", Duration::from_secs(60))
        .await
        .expect_err("forbidden");
    assert!(
        matches!(err.downcast_ref::<kube::Error>(), Some(kube::Error::Api(s)) if s.code == 403),
        "{err:#}"
    );
    assert_eq!(fake.calls, ["create web"]);
    assert!(fake.rcs.contains_key("web-2"));
}
