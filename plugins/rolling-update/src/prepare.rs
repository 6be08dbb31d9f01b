//! The steps before the update itself (kubectl 1.17's `Run`, steps 1 and 3–8 of the
//! README's "kubectl 1.17's flow"): find the old RC, or finish an update an earlier
//! run left behind (a pending hand-over, a missing old RC, a rollback whose partial
//! RC is gone); resume an update in progress or derive the next RC for `--image`,
//! marking the old RC; find the partial RC of `--rollback`; check and complete the
//! new RC; stop for a dry run.
//!
//! Every API call goes through [`PrepareOps`], the seam `cluster::KubeOps` implements
//! next to the updater's, so each path is unit-tested against a fake cluster on
//! tokio's paused clock (`prepare/tests.rs`). The new RC's body is assembled by one
//! pure function, [`new_controller_body`].

use std::ops::ControlFlow;
use std::time::Duration;

use crate::model::{Pod, ReplicationController};
use anyhow::{Context as _, bail};
use cli::flags::DryRunStrategy;
use tokio::time::Instant;

use crate::controller::{
    self, NewControllerConfig, abort_rolling_update, add_selector_label, add_template_label,
    current_image, needs_deployment_key, new_controller_from_current, original_deployment_value,
    selectors_differ, set_next_controller, set_replicas,
};
use crate::handover::{self, HandoverOps};
use crate::names::{
    DESIRED_REPLICAS_ANNOTATION, SOURCE_ID_ANNOTATION, annotation, find_new_name, set_annotation,
    source_id_names,
};
use crate::updater::{CleanupPolicy, Report, Target};

/// How often [`finish_scaling`] looks at the RC while its pods come up.
const SCALING_POLL: Duration = Duration::from_millis(250);

/// The API calls of the steps before the update, the hand-over's among them
/// ([`HandoverOps`]: the interrupt, the clock, the RC writes). Only the interrupt
/// checks the steps ask for explicitly (`check_interrupt`) are theirs; the writes
/// check it themselves, as every write of the updater does.
pub trait PrepareOps: HandoverOps {
    /// GETs an RC; the API's own error is kept, a 404 being a step of the flow.
    async fn get_rc(&mut self, name: &str) -> Result<ReplicationController, kube::Error>;

    /// GETs an RC, `None` when it does not exist.
    async fn get_rc_opt(&mut self, name: &str) -> anyhow::Result<Option<ReplicationController>>;

    /// Every RC of the namespace.
    async fn list_rcs(&mut self) -> anyhow::Result<Vec<ReplicationController>>;

    /// Removes the update annotations: the update is over.
    async fn strip_update_annotations(
        &mut self,
        rc: &ReplicationController,
    ) -> anyhow::Result<ReplicationController>;

    /// Sets `spec.replicas` of the RC `name` through its scale subresource.
    async fn scale_rc(&mut self, name: &str, replicas: i32) -> anyhow::Result<()>;

    /// The pods matching a label selector.
    async fn list_pods(&mut self, selector: &str) -> anyhow::Result<Vec<Pod>>;

    /// Applies `mutate` to each pod and PUTs it, retrying conflicts on fresh copies,
    /// several pods at a time: no pod's request waits for another's answer. One
    /// result per pod, in order.
    async fn update_pods(
        &mut self,
        pods: &[Pod],
        mutate: &(dyn Fn(&mut Pod) + Sync),
    ) -> Vec<anyhow::Result<Pod>>;

    /// Deletes the pod `name`; one already gone is fine.
    async fn delete_pod(&mut self, name: &str) -> anyhow::Result<()>;

    /// Waits until the RC `rc` (as a write answered it) satisfies `cond` on the server:
    /// that answer first, then each change after it, none missed (a watch from its
    /// resourceVersion). Fails at `deadline`.
    async fn wait_rc_change(
        &mut self,
        rc: &ReplicationController,
        cond: &(dyn Fn(&ReplicationController) -> bool + Sync),
        deadline: Instant,
    ) -> anyhow::Result<ReplicationController>;

    /// Creates `rc` with `dryRun=All`: validated and defaulted, never stored.
    async fn create_rc_dry_run(
        &mut self,
        rc: &ReplicationController,
    ) -> anyhow::Result<ReplicationController>;
}

/// What the steps need of the command's options (a small value: `options` calls
/// `prepare`, nothing calls back).
#[derive(Debug, Clone, Copy)]
pub struct Plan<'a> {
    /// The positional arguments: the old name, and the new one if given.
    pub args: &'a [String],
    pub old_name: &'a str,
    /// One name given: the new RC takes the old name at the end.
    pub keep_old_name: bool,
    /// `-f`'s value, for 1.17's messages (empty without `-f`).
    pub filename: &'a str,
    pub image: &'a str,
    pub container: &'a str,
    pub pull_policy: &'a str,
    pub deployment_key: &'a str,
    pub rollback: bool,
    pub dry_run: DryRunStrategy,
    pub timeout: Duration,
    /// `--record`'s change cause, for the RC this update creates.
    pub change_cause: Option<&'a str>,
    /// For the "couldn't find … source id" message.
    pub namespace: &'a str,
}

/// Where the steps before the update ended.
#[derive(Debug)]
pub enum Prepared {
    /// An update an earlier run left behind was finished: print `rc` with
    /// `operation` (`rolling updated`).
    Finished {
        rc: ReplicationController,
        operation: String,
    },
    /// A dry run of such a recovery: nothing to print.
    Nothing,
    /// `--dry-run`: print the summary of the old RC and the new one as it would be.
    DryRun {
        old_rc: ReplicationController,
        new_rc: ReplicationController,
    },
    /// Run the updater from `old_rc` to `new_rc`, then clean up as `cleanup` says.
    Update {
        old_rc: ReplicationController,
        new_rc: ReplicationController,
        cleanup: CleanupPolicy,
        /// What these steps know of `new_rc` on the server.
        target: Target,
    },
}

/// Steps 1 and 3–8; `from_file` is step 2's result (the `-f` RC and whether its
/// replica count was left out).
pub async fn prepare<O: PrepareOps>(
    plan: &Plan<'_>,
    ops: &mut O,
    report: &mut dyn Report,
    from_file: Option<(ReplicationController, bool)>,
) -> anyhow::Result<Prepared> {
    let dry = plan.dry_run != DryRunStrategy::None;
    let (mut new_rc, replicas_defaulted) = match from_file {
        Some((rc, defaulted)) => (Some(rc), defaulted),
        None => (None, false),
    };
    let mut target = Target::Unknown;

    // 1. The old RC, or the end of an update an earlier run left behind.
    let mut old_rc = match old_controller(plan, ops, report, dry).await? {
        ControlFlow::Continue(rc) => rc,
        ControlFlow::Break(done) => return Ok(done),
    };

    // 3. --image: resume an in-progress update or derive the next RC.
    if !plan.image.is_empty() {
        let (marked, next, found) = from_image(plan, ops, report, dry, old_rc).await?;
        old_rc = marked;
        target = found;
        new_rc = Some(next);
    }

    // 4. --rollback: the partially rolled-out RC.
    if plan.rollback {
        match rollback_partial(plan, ops, dry, &old_rc).await? {
            ControlFlow::Continue(found) => new_rc = Some(found),
            ControlFlow::Break(done) => return Ok(done),
        }
    }

    let Some(new_rc) = new_rc else {
        bail!("internal error: no new replication controller");
    };
    // 5-7. The name and selector rules, then the replica default and the cause.
    let new_rc = new_controller_body(plan, &old_rc, new_rc, replicas_defaulted)?;

    // 8. Dry run: print and stop.
    if dry {
        return dry_run(plan, ops, old_rc, new_rc).await;
    }

    // 9. The pair the updater moves between.
    if plan.rollback {
        return rollback_pair(ops, report, old_rc, new_rc).await;
    }
    let cleanup = if plan.keep_old_name {
        CleanupPolicy::Rename
    } else {
        CleanupPolicy::Delete
    };
    Ok(Prepared::Update {
        old_rc,
        new_rc,
        cleanup,
        target,
    })
}

/// An update an earlier run left behind, finished: `rc` printed as `rolling updated`.
fn rolling_updated(rc: ReplicationController) -> Prepared {
    Prepared::Finished {
        rc,
        operation: "rolling updated".into(),
    }
}

/// Step 1: the old RC. When it is missing, an earlier run may have been stopped after
/// deleting it: with one name, the rename is still to do (1.17 did this for --image
/// only; -f one-name updates rename too, so they are recovered the same way); with two
/// names, only the new RC's annotations are left to remove (1.17 failed with NotFound
/// here). An old RC being deleted is an update stopped right after its delete: wait
/// until it is gone (its garbage collection is quick), then finish the update the way
/// a missing old RC is finished.
async fn old_controller<O: PrepareOps>(
    plan: &Plan<'_>,
    ops: &mut O,
    report: &mut dyn Report,
    dry: bool,
) -> anyhow::Result<ControlFlow<Prepared, ReplicationController>> {
    let mut current = ops.get_rc(plan.old_name).await;
    if let Ok(rc) = &current
        && rc.metadata.deletion_timestamp.is_some()
    {
        let deadline = Instant::now() + plan.timeout;
        ops.wait_rc_gone(plan.old_name, deadline).await?;
        current = ops.get_rc(plan.old_name).await;
    }
    let done = match current {
        // A one-name update stopped in its hand-over (see handover.rs): the old
        // name already holds the pending copy; only the hand-over is left.
        Ok(pending) if handover::renamed_from(&pending).is_some() => {
            finish_hand_over(plan, ops, report, pending, dry).await?
        }
        Ok(rc) => return Ok(ControlFlow::Continue(rc)),
        Err(kube::Error::Api(s)) if s.is_not_found() && !plan.rollback && plan.keep_old_name => {
            finish_renamed(plan, ops, report, dry).await?
        }
        Err(kube::Error::Api(s)) if s.is_not_found() && !plan.rollback && plan.args.len() > 1 => {
            let finished = match ops.get_rc_opt(&plan.args[1]).await? {
                Some(rc)
                    if annotation(&rc, SOURCE_ID_ANNOTATION)
                        .is_some_and(|v| source_id_names(v, plan.old_name)) =>
                {
                    rc
                }
                _ => return Err(kube::Error::Api(s).into()),
            };
            finish_two_names(plan, ops, report, dry, finished).await?
        }
        Err(e) => return Err(e.into()),
    };
    Ok(ControlFlow::Break(done))
}

/// A one-name update whose old RC is gone: the RC whose source id names the old name
/// is scaled to the end and renamed to it.
async fn finish_renamed<O: PrepareOps>(
    plan: &Plan<'_>,
    ops: &mut O,
    report: &mut dyn Report,
    dry: bool,
) -> anyhow::Result<Prepared> {
    let found = ops.list_rcs().await?.into_iter().find(|rc| {
        annotation(rc, SOURCE_ID_ANNOTATION).is_some_and(|v| source_id_names(v, plan.old_name))
    });
    let Some(found) = found else {
        bail!(
            "couldn't find a replication controller with source id == {}/{}",
            plan.namespace,
            plan.old_name
        );
    };
    check_in_progress_image(plan, &found)?;
    if dry {
        return Ok(Prepared::Nothing);
    }
    let found = finish_scaling(plan, ops, report, found).await?;
    report.line(&format!(
        "Renaming {} to {}",
        controller::name(&found),
        plan.old_name
    ));
    let rc = handover::hand_over(ops, &found, plan.old_name, plan.timeout).await?;
    Ok(rolling_updated(rc))
}

/// A two-name update whose old RC is gone: the new RC `finished` is scaled to the end
/// and loses its update annotations.
async fn finish_two_names<O: PrepareOps>(
    plan: &Plan<'_>,
    ops: &mut O,
    report: &mut dyn Report,
    dry: bool,
    finished: ReplicationController,
) -> anyhow::Result<Prepared> {
    check_in_progress_image(plan, &finished)?;
    if dry {
        return Ok(Prepared::Nothing);
    }
    let finished = finish_scaling(plan, ops, report, finished).await?;
    let rc = ops.strip_update_annotations(&finished).await?;
    let operation = format!("rolling updated to {:?}", controller::name(&rc));
    Ok(Prepared::Finished { rc, operation })
}

/// Step 3: the RC an update in progress moves to (resumed), or the next one derived
/// for `--image`; and the old RC with its marks (only shown on a dry run). Returns
/// the old RC, the new one and what is known of the new one on the server.
async fn from_image<O: PrepareOps>(
    plan: &Plan<'_>,
    ops: &mut O,
    report: &mut dyn Report,
    dry: bool,
    old_rc: ReplicationController,
) -> anyhow::Result<(ReplicationController, ReplicationController, Target)> {
    let new_name = find_new_name(plan.args, &old_rc);
    let existing = if new_name.is_empty() {
        None
    } else {
        ops.get_rc_opt(&new_name).await?
    };
    let (next, target) = match existing {
        Some(existing) => {
            check_in_progress_image(plan, &existing)?;
            report.line(&format!(
                "Found existing update in progress ({}), resuming.",
                controller::name(&existing)
            ));
            (existing, Target::Found)
        }
        None => (next_from_image(plan, &old_rc, new_name)?, Target::Derived),
    };
    let old_value = original_deployment_value(&old_rc);
    let next_name = controller::name(&next).to_string();
    let old_rc = if dry {
        // Show the marks the old RC would get, without writing them.
        let mut rc = old_rc;
        set_next_controller(&mut rc, &next_name);
        if needs_deployment_key(&rc, plan.deployment_key) {
            add_template_label(&mut rc, plan.deployment_key, &old_value);
            add_selector_label(&mut rc, plan.deployment_key, &old_value);
        }
        rc
    } else {
        let deadline = Instant::now() + plan.timeout;
        let key = (plan.deployment_key, old_value.as_str());
        mark_old_controller(ops, &old_rc, &next_name, key, deadline).await?
    };
    Ok((old_rc, next, target))
}

/// Step 4: the partially rolled-out RC of `--rollback`. When it is gone, a rollback
/// stopped after deleting it left only the original's update annotations behind:
/// removing them finishes it.
async fn rollback_partial<O: PrepareOps>(
    plan: &Plan<'_>,
    ops: &mut O,
    dry: bool,
    old_rc: &ReplicationController,
) -> anyhow::Result<ControlFlow<Prepared, ReplicationController>> {
    let new_name = find_new_name(plan.args, old_rc);
    let found = if new_name.is_empty() {
        None
    } else {
        ops.get_rc_opt(&new_name).await?
    };
    if let Some(found) = found {
        return Ok(ControlFlow::Continue(found));
    }
    let finished = annotation(old_rc, SOURCE_ID_ANNOTATION)
        .is_some_and(|v| !new_name.is_empty() && source_id_names(v, &new_name));
    if finished && !dry {
        let rc = ops.strip_update_annotations(old_rc).await?;
        return Ok(ControlFlow::Break(rolling_updated(rc)));
    }
    // 1.17's message ends in "\n", which CheckErr does not double.
    bail!("Could not find {new_name} to rollback.");
}

/// Step 8: what a dry run prints. On the server, the new RC is validated and
/// defaulted without being persisted (unless it exists already, or on a rollback).
async fn dry_run<O: PrepareOps>(
    plan: &Plan<'_>,
    ops: &mut O,
    old_rc: ReplicationController,
    new_rc: ReplicationController,
) -> anyhow::Result<Prepared> {
    if plan.dry_run != DryRunStrategy::Server {
        return Ok(Prepared::DryRun { old_rc, new_rc });
    }
    let shown = if plan.rollback || ops.get_rc_opt(controller::name(&new_rc)).await?.is_some() {
        new_rc
    } else {
        let mut probe = new_rc;
        probe.metadata.namespace = None;
        ops.create_rc_dry_run(&probe).await?
    };
    Ok(Prepared::DryRun {
        old_rc,
        new_rc: shown,
    })
}

/// Step 9 of a rollback: the update runs backwards, from the partial RC to the
/// original, which gets the update annotations of the partial one.
async fn rollback_pair<O: PrepareOps>(
    ops: &mut O,
    report: &mut dyn Report,
    old_rc: ReplicationController,
    new_rc: ReplicationController,
) -> anyhow::Result<Prepared> {
    let (partial, original, message) = abort_rolling_update(&old_rc, &new_rc)?;
    report.line(&message);
    let source = annotation(&original, SOURCE_ID_ANNOTATION)
        .unwrap_or_default()
        .to_string();
    let desired = annotation(&original, DESIRED_REPLICAS_ANNOTATION)
        .unwrap_or_default()
        .to_string();
    // 1.17 ignored this update's error and failed later with a confusing
    // annotation message; ours reports failures. The patch is the change from the
    // server's copy, `old_rc` (`original` carries it already).
    let original = ops
        .patch_rc(&old_rc, &|rc| {
            set_annotation(rc, SOURCE_ID_ANNOTATION, source.clone());
            set_annotation(rc, DESIRED_REPLICAS_ANNOTATION, desired.clone());
        })
        .await?;
    Ok(Prepared::Update {
        old_rc: partial,
        new_rc: original,
        cleanup: CleanupPolicy::Delete,
        target: Target::Found,
    })
}

/// Steps 5–7 on the new RC (from `-f`, `--image` or `--rollback`): 1.17's name and
/// selector rules, the old RC's replica count when `-f` left it out, and `--record`'s
/// change cause on the RC this update creates (an RC found in progress keeps what its
/// first run wrote; the hand-over copies it to the final RC of a one-name update).
pub fn new_controller_body(
    plan: &Plan<'_>,
    old_rc: &ReplicationController,
    mut new_rc: ReplicationController,
    replicas_defaulted: bool,
) -> anyhow::Result<ReplicationController> {
    if plan.old_name == controller::name(&new_rc) {
        bail!(
            "{} cannot have the same name as the existing ReplicationController {}",
            plan.filename,
            plan.old_name
        );
    }
    if !selectors_differ(old_rc, &new_rc) {
        bail!(
            "{} must specify a matching key with non-equal value in Selector for {}",
            plan.filename,
            plan.old_name
        );
    }
    if replicas_defaulted {
        set_replicas(&mut new_rc, controller::replicas(old_rc));
    }
    if let Some(cause) = plan.change_cause
        && !plan.rollback
    {
        set_annotation(&mut new_rc, cli::flags::CHANGE_CAUSE, cause);
    }
    Ok(new_rc)
}

/// `--image` without an update in progress: the next RC derived from the old one
/// (1.17 requires `--image-pull-policy` when the image does not change).
fn next_from_image(
    plan: &Plan<'_>,
    old_rc: &ReplicationController,
    new_name: String,
) -> anyhow::Result<ReplicationController> {
    let mut cfg = NewControllerConfig {
        new_name,
        image: plan.image.to_string(),
        container: plan.container.to_string(),
        pull_policy: String::new(),
        deployment_key: plan.deployment_key.to_string(),
    };
    if current_image(old_rc, plan.container) == Some(plan.image) {
        if plan.pull_policy.is_empty() {
            bail!(
                "--image-pull-policy (Always|Never|IfNotPresent) must be provided when --image is the same as existing container image"
            );
        }
        cfg.pull_policy = plan.pull_policy.to_string();
    }
    Ok(new_controller_from_current(old_rc, &cfg)?)
}

/// With `--image`, an update found in progress must be to the same image (1.17's
/// rule for a resumed update, applied as well when the old RC is already gone).
fn check_in_progress_image(plan: &Plan<'_>, rc: &ReplicationController) -> anyhow::Result<()> {
    if plan.image.is_empty() {
        return Ok(());
    }
    let in_progress = current_image(rc, plan.container).unwrap_or_default();
    if in_progress != plan.image {
        bail!(
            "Found existing in-progress update to image ({in_progress}).\nEither continue in-progress update with --image={in_progress} or rollback with --rollback"
        );
    }
    Ok(())
}

/// Finishes a one-name hand-over found pending on the cluster.
async fn finish_hand_over<O: PrepareOps>(
    plan: &Plan<'_>,
    ops: &mut O,
    report: &mut dyn Report,
    pending: ReplicationController,
    dry: bool,
) -> anyhow::Result<Prepared> {
    let from = handover::renamed_from(&pending)
        .unwrap_or_default()
        .to_string();
    if plan.rollback {
        bail!(
            "the update of {:?} is past its last step (its old replication controller is deleted and {from:?} is being renamed to it); finish it by running the update again, then roll back with a new update",
            plan.old_name
        );
    }
    check_in_progress_image(plan, &pending)?;
    if dry {
        return Ok(Prepared::Nothing);
    }
    report.line(&format!("Renaming {from} to {}", plan.old_name));
    let deadline = Instant::now() + plan.timeout;
    let rc = handover::resume(ops, &pending, deadline).await?;
    Ok(rolling_updated(rc))
}

/// An update whose old RC is gone: before the last step, the new RC gets the
/// replicas its `desired-replicas` annotation asks for, all available. (A run
/// stopped half-way whose old RC was then deleted by hand would otherwise be
/// renamed or finished at half its size.)
async fn finish_scaling<O: PrepareOps>(
    plan: &Plan<'_>,
    ops: &mut O,
    report: &mut dyn Report,
    rc: ReplicationController,
) -> anyhow::Result<ReplicationController> {
    let rc_name = controller::name(&rc).to_string();
    let text = annotation(&rc, DESIRED_REPLICAS_ANNOTATION).unwrap_or_default();
    let desired: i32 = text.parse().map_err(|_| {
        anyhow::anyhow!(
            "Unable to parse annotation for {rc_name}: {DESIRED_REPLICAS_ANNOTATION}={text}"
        )
    })?;
    report.line(&format!(
        "Continuing update with existing controller {rc_name}."
    ));
    if controller::replicas(&rc) != desired {
        report.line(&format!("Scaling {rc_name} up to {desired}"));
        ops.check_interrupt()?;
        ops.scale_rc(&rc_name, desired).await?;
    }
    let deadline = Instant::now() + plan.timeout;
    loop {
        ops.check_interrupt()?;
        let current = ops.get_rc(&rc_name).await?;
        let status = current.status.clone().unwrap_or_default();
        let synced =
            status.observed_generation.unwrap_or(0) >= current.metadata.generation.unwrap_or(0);
        if synced && status.replicas == desired && status.available_replicas.unwrap_or(0) >= desired
        {
            return Ok(current);
        }
        if Instant::now() >= deadline {
            bail!("timed out waiting for {rc_name:?} to have {desired} available pods");
        }
        ops.pause_until(Instant::now() + SCALING_POLL).await?;
    }
}

/// kubectl's `UpdateExistingReplicationController` (with
/// `AddDeploymentKeyToReplicationController`): point the old RC at the new one
/// and, if its selector lacks the deployment key, add it to its template, its
/// pods and its selector, in that order, so no pod is ever outside the selector:
/// neither on the server nor in the RC manager's cache (see
/// [`wait_labels_observed`]).
async fn mark_old_controller<O: PrepareOps>(
    ops: &mut O,
    old: &ReplicationController,
    next_name: &str,
    (key, value): (&str, &str),
    deadline: Instant,
) -> anyhow::Result<ReplicationController> {
    if !needs_deployment_key(old, key) {
        return ops
            .patch_rc(old, &|rc| set_next_controller(rc, next_name))
            .await;
    }
    let rc = ops
        .patch_rc(old, &|rc| {
            set_next_controller(rc, next_name);
            add_template_label(rc, key, value);
        })
        .await?;
    ops.check_interrupt()?;
    let selector = controller::selector_string(&rc);
    let pods = ops.list_pods(&selector).await?;
    let labelled = ops
        .update_pods(&pods, &|p| {
            p.metadata
                .labels
                .get_or_insert_with(Default::default)
                .insert(key.to_string(), value.to_string());
        })
        .await;
    let mut ours = 0;
    for (pod, labelled) in pods.iter().zip(labelled) {
        match labelled {
            Ok(pod) => ours += i32::from(controller_uid(&pod) == rc.metadata.uid),
            // Deleted since the list (by a user, an eviction, the node): nothing to
            // label. Its RC replaces it from the template, which already has the key.
            // 1.17 failed the whole update here with the pod's NotFound.
            Err(e) if is_gone(&e) => {
                tracing::debug!(pod = ?pod.metadata.name, "pod deleted before it was labelled");
            }
            Err(e) => return Err(e),
        }
    }
    ops.check_interrupt()?;
    wait_labels_observed(ops, &rc, (key, value), ours, deadline).await?;
    let original_selector = selector;
    let rc = ops
        .patch_rc(&rc, &|rc| add_selector_label(rc, key, value))
        .await?;
    // 1.17's `selectorCopy` clean-up: the RC manager may have created a pod from the
    // template it had cached before our first write, i.e. without the key. Such a pod
    // no longer matches the RC's selector and would be left running the old image
    // with no controller: delete it. Pods of another controller are not ours to touch.
    ops.check_interrupt()?;
    let uid = rc.metadata.uid.clone();
    for pod in &ops.list_pods(&original_selector).await? {
        let labelled = pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(key))
            .is_some_and(|v| v == value);
        let controller = controller_uid(pod);
        if labelled || (controller.is_some() && controller != uid) {
            continue;
        }
        ops.check_interrupt()?;
        ops.delete_pod(pod.metadata.name.as_deref().unwrap_or_default())
            .await?;
    }
    Ok(rc)
}

/// Waits until the RC manager has seen the template's new label on the `labelled`
/// pods of `rc` it owns (`rc` as the template's write answered it), before the
/// selector gets the label.
///
/// The RC manager matches its selector against the pods in its own cache, which a
/// watch of the pods fills, apart from the watch that tells it of the RC. Told of
/// the new selector before the pods' new labels (a few milliseconds late, on a busy
/// control plane), it finds its pods outside the selector: it releases them and
/// makes as many new ones, then adopts the released ones back and deletes the
/// surplus. Twice the replicas for a moment, and the first scale-up came on top: the
/// rolling-update fault matrix counted 5 pods against a surge bound of 3 on the real
/// node. kubectl 1.17 had the same race. Its status tells when its cache has them:
/// `fullyLabeledReplicas` counts the pods it owns that carry every label of the
/// template, once it has observed the template's generation. (The Deployment
/// controller of the same era waited for the same count before its selector
/// change.) A pod the RC manager made from the template it had cached before the
/// template's write never gets the label: it is not waited for, and the clean-up
/// after the selector's write deletes it, as 1.17 did.
async fn wait_labels_observed<O: PrepareOps>(
    ops: &mut O,
    rc: &ReplicationController,
    (key, value): (&str, &str),
    labelled: i32,
    deadline: Instant,
) -> anyhow::Result<ReplicationController> {
    let generation = rc.metadata.generation.unwrap_or(0);
    let observed = |rc: &ReplicationController| {
        let status = rc.status.clone().unwrap_or_default();
        status.observed_generation.unwrap_or(0) >= generation
            && status.fully_labeled_replicas.unwrap_or(0) >= labelled.min(status.replicas)
    };
    ops.wait_rc_change(rc, &observed, deadline)
        .await
        .with_context(|| {
            format!(
                "waiting for the replication controller manager to see the label {key}={value} on the pods of {}",
                controller::name(rc)
            )
        })
}

/// The uid of a pod's controller, if it has one.
fn controller_uid(pod: &Pod) -> Option<String> {
    pod.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true))
        .map(|o| o.uid.clone())
}

#[cfg(test)]
mod tests;

/// Whether a write failed because its object no longer exists (a 404 anywhere in the
/// error's chain).
fn is_gone(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<kube::Error>()
            .is_some_and(|e| matches!(e, kube::Error::Api(s) if s.is_not_found()))
    })
}
