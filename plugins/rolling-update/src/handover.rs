//! The last step of a one-name update, made crash-safe: the new RC (`web-<hash>`)
//! hands its pods over to a copy under the old name (`web`).
//!
//! kubectl 1.17 orphan-deleted the new RC and then created the copy; between the two
//! no RC and no annotation existed, so a crash there stranded the pods for good. Here
//! a durable record exists at every instant, from which a re-run converges:
//!
//! 1. create the copy under the old name *pending*: `replicas: 0`, the
//!    `renamed-from` annotation naming the new RC, and an extra selector (and
//!    template) label that no pod carries, so the RC manager neither adopts nor
//!    deletes nor creates anything (an RC with the pods' selector and `replicas: 0`
//!    would delete the orphans it adopts; one with `replicas: N` would create N
//!    duplicates while the new RC still owns the pods);
//! 2. orphan-delete the new RC and wait until it is gone (the garbage collector
//!    removes the owner references before it removes the object);
//! 3. one merge patch turns the copy final: the pods' selector, `replicas: N`, no
//!    record annotations. The RC manager adopts the N orphans and creates nothing.
//!
//! A re-run that finds the old name pending resumes at step 2 ([`resume`]); one that
//! finds no RC under the old name but the new RC still there starts at step 1.
//!
//! Every request goes through [`HandoverOps`], the seam `cluster::KubeOps` implements
//! (and `prepare`'s, of which it is a part), so the POST / orphan-delete / PATCH
//! sequence is unit-tested against the scripted cluster of `prepare/tests.rs`, lost
//! answers and transient failures included; the pure halves ([`pending_copy`],
//! [`finished`], [`renamed_from`]) are tested here.

use std::time::Duration;

use crate::model::ReplicationController;
use anyhow::{anyhow, bail};
use tokio::time::Instant;

use crate::controller::{name, replicas, set_replicas};
use crate::names::{
    DESIRED_REPLICAS_ANNOTATION, NEXT_CONTROLLER_ANNOTATION, ORIGINAL_REPLICAS_ANNOTATION,
    SOURCE_ID_ANNOTATION, annotation, set_annotation,
};

/// The requests of the hand-over and the clock they wait on. The API's own errors are
/// kept where the hand-over tells a step of the flow (an `AlreadyExists`, a 404) or a
/// failure worth another try ([`Self::is_transient`]) from the others.
pub trait HandoverOps {
    /// Fails once the user asked to stop (Ctrl-C, SIGTERM).
    fn check_interrupt(&self) -> anyhow::Result<()>;

    /// Whether a failed request may succeed if sent again (429, 5xx, no answer).
    fn is_transient(&self, err: &kube::Error) -> bool;

    /// POSTs `rc`.
    async fn create_rc(
        &mut self,
        rc: &ReplicationController,
    ) -> Result<ReplicationController, kube::Error>;

    /// GETs the RC `name`, `None` when it does not exist.
    async fn find_rc(&mut self, name: &str) -> Result<Option<ReplicationController>, kube::Error>;

    /// DELETEs the RC `name` with `propagationPolicy: Orphan`: its pods stay.
    async fn orphan_delete_rc(&mut self, name: &str) -> Result<(), kube::Error>;

    /// Waits until no RC named `name` exists (one being deleted is gone shortly).
    async fn wait_rc_gone(&mut self, name: &str, deadline: Instant) -> anyhow::Result<()>;

    /// Applies the change `mutate` makes to `rc` to the server's copy of the same RC
    /// (its uid): one merge patch, which cannot conflict.
    async fn patch_rc(
        &mut self,
        rc: &ReplicationController,
        mutate: &(dyn Fn(&mut ReplicationController) + Sync),
    ) -> anyhow::Result<ReplicationController>;

    /// Sleeps until `until` (the clock seam; interruptible).
    async fn pause_until(&mut self, until: Instant) -> anyhow::Result<()>;
}

/// On the pending copy: the name of the RC whose pods it takes over.
pub const RENAMED_FROM_ANNOTATION: &str = "rolling-update.kubeplug.io/renamed-from";
/// The selector label that keeps the pending copy away from every pod.
pub const PENDING_LABEL: &str = "rolling-update.kubeplug.io/handover";
const PENDING_VALUE: &str = "pending";

/// How often the wait for the new RC's removal looks again.
const POLL: Duration = Duration::from_millis(200);

/// The RC the pending copy `rc` takes over from, if it is one.
pub fn renamed_from(rc: &ReplicationController) -> Option<&str> {
    annotation(rc, RENAMED_FROM_ANNOTATION)
}

/// Step 1's object: `new_rc` under `old_name`, pending (see the module doc).
pub fn pending_copy(new_rc: &ReplicationController, old_name: &str) -> ReplicationController {
    let mut rc = ReplicationController {
        metadata: kube::api::ObjectMeta {
            name: Some(old_name.to_string()),
            labels: new_rc.metadata.labels.clone(),
            annotations: new_rc.metadata.annotations.clone(),
            ..Default::default()
        },
        spec: new_rc.spec.clone(),
        ..Default::default()
    };
    if let Some(a) = rc.metadata.annotations.as_mut() {
        for key in [
            SOURCE_ID_ANNOTATION,
            NEXT_CONTROLLER_ANNOTATION,
            ORIGINAL_REPLICAS_ANNOTATION,
        ] {
            a.remove(key);
        }
    }
    set_annotation(&mut rc, RENAMED_FROM_ANNOTATION, name(new_rc).to_string());
    set_annotation(
        &mut rc,
        DESIRED_REPLICAS_ANNOTATION,
        replicas(new_rc).to_string(),
    );
    set_replicas(&mut rc, 0);
    let spec = rc.spec.get_or_insert_with(Default::default);
    spec.selector
        .get_or_insert_with(Default::default)
        .insert(PENDING_LABEL.into(), PENDING_VALUE.into());
    spec.template
        .get_or_insert_with(Default::default)
        .metadata
        .get_or_insert_with(Default::default)
        .labels
        .get_or_insert_with(Default::default)
        .insert(PENDING_LABEL.into(), PENDING_VALUE.into());
    rc
}

/// Step 3's change to the pending copy: the pods' selector, the recorded replica
/// count, no record left.
pub fn finished(rc: &mut ReplicationController) -> anyhow::Result<()> {
    let text = annotation(rc, DESIRED_REPLICAS_ANNOTATION).unwrap_or_default();
    let desired: i32 = text.parse().map_err(|_| {
        anyhow!(
            "Unable to parse annotation for {}: {DESIRED_REPLICAS_ANNOTATION}={text}",
            name(rc)
        )
    })?;
    if let Some(a) = rc.metadata.annotations.as_mut() {
        a.remove(RENAMED_FROM_ANNOTATION);
        a.remove(DESIRED_REPLICAS_ANNOTATION);
    }
    if let Some(spec) = rc.spec.as_mut() {
        if let Some(selector) = spec.selector.as_mut() {
            selector.remove(PENDING_LABEL);
        }
        if let Some(labels) = spec
            .template
            .as_mut()
            .and_then(|t| t.metadata.as_mut())
            .and_then(|m| m.labels.as_mut())
        {
            labels.remove(PENDING_LABEL);
        }
    }
    set_replicas(rc, desired);
    Ok(())
}

/// Hands `new_rc`'s pods over to a copy named `old_name` (steps 1–3); `old_name`
/// must be free. Returns the final RC.
pub async fn hand_over(
    ops: &mut (impl HandoverOps + ?Sized),
    new_rc: &ReplicationController,
    old_name: &str,
    timeout: Duration,
) -> anyhow::Result<ReplicationController> {
    let deadline = Instant::now() + timeout;
    let copy = pending_copy(new_rc, old_name);
    let pending = loop {
        ops.check_interrupt()?;
        match ops.create_rc(&copy).await {
            Ok(rc) => break rc,
            Err(kube::Error::Api(s)) if s.is_already_exists() => {
                // Our own earlier attempt (a lost answer, or a re-run): go on with it.
                let existing = ops.find_rc(old_name).await?;
                match existing {
                    Some(existing) if renamed_from(&existing) == Some(name(new_rc)) => {
                        break existing;
                    }
                    _ => bail!(
                        "replicationcontroller {old_name:?} already exists and is not the renamed copy of {:?}",
                        name(new_rc)
                    ),
                }
            }
            Err(e) if ops.is_transient(&e) && Instant::now() < deadline => {
                tracing::debug!("creating the renamed copy failed, retrying: {e}");
                ops.pause_until(Instant::now() + POLL).await?;
            }
            Err(e) => return Err(e.into()),
        }
    };
    resume(ops, &pending, deadline).await
}

/// Steps 2–3 for a pending copy found on the cluster.
pub async fn resume(
    ops: &mut (impl HandoverOps + ?Sized),
    pending: &ReplicationController,
    deadline: Instant,
) -> anyhow::Result<ReplicationController> {
    let from = renamed_from(pending)
        .ok_or_else(|| anyhow!("internal error: {} is not pending", name(pending)))?
        .to_string();
    // A damaged record (an unparsable desired-replicas) is reported before anything
    // is deleted; in the final update below the same change then cannot fail.
    finished(&mut pending.clone())?;
    loop {
        ops.check_interrupt()?;
        match ops.orphan_delete_rc(&from).await {
            Ok(()) => break,
            Err(kube::Error::Api(s)) if s.is_not_found() => break,
            Err(e) if ops.is_transient(&e) && Instant::now() < deadline => {
                ops.pause_until(Instant::now() + POLL).await?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    ops.wait_rc_gone(&from, deadline).await?;
    ops.patch_rc(pending, &|rc| {
        let _ = finished(rc);
    })
    .await
}

/// Polls until no RC named `rc_name` exists. Polling rather than watching: a watch
/// error must not end the wait, and this step is short and taken once.
pub async fn wait_gone(
    ops: &mut (impl HandoverOps + ?Sized),
    rc_name: &str,
    deadline: Instant,
) -> anyhow::Result<()> {
    loop {
        ops.check_interrupt()?;
        match ops.find_rc(rc_name).await {
            Ok(None) => return Ok(()),
            Ok(Some(_)) => {}
            Err(e) if ops.is_transient(&e) => {
                tracing::debug!("waiting for {rc_name} to be deleted: {e}");
            }
            Err(e) => return Err(e.into()),
        }
        if Instant::now() >= deadline {
            bail!(
                "timed out waiting for replicationcontroller {rc_name:?} to be deleted (the garbage collector removes it)"
            );
        }
        ops.pause_until(Instant::now() + POLL).await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn new_rc() -> ReplicationController {
        serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": "web-abc", "uid": "u1", "resourceVersion": "7",
                "labels": {"app": "web"},
                "annotations": {
                    "kubectl.kubernetes.io/update-source-id": "web:u0",
                    "kubectl.kubernetes.io/desired-replicas": "3",
                    "kubectl.kubernetes.io/original-replicas": "3",
                    "kubectl.kubernetes.io/next-controller-id": "web-old",
                    "note": "kept"
                }
            },
            "spec": {
                "replicas": 3,
                "selector": {"app": "web", "deployment": "abc"},
                "template": {"metadata": {"labels": {"app": "web", "deployment": "abc"}},
                             "spec": {"containers": [{"name": "c", "image": "i:2"}]}}
            },
            "status": {"replicas": 3}
        }))
        .unwrap()
    }

    #[test]
    fn the_pending_copy_matches_no_pod_and_records_the_hand_over() {
        let copy = pending_copy(&new_rc(), "web");
        assert_eq!(name(&copy), "web");
        assert_eq!(replicas(&copy), 0);
        assert!(copy.metadata.uid.is_none() && copy.metadata.resource_version.is_none());
        assert!(copy.status.is_none());
        let a = copy.metadata.annotations.clone().unwrap();
        assert_eq!(
            a,
            BTreeMap::from([
                ("kubectl.kubernetes.io/desired-replicas".into(), "3".into()),
                ("note".into(), "kept".into()),
                (RENAMED_FROM_ANNOTATION.into(), "web-abc".into()),
            ])
        );
        let spec = copy.spec.clone().unwrap();
        let selector = spec.selector.unwrap();
        assert_eq!(
            selector.get(PENDING_LABEL).map(String::as_str),
            Some("pending")
        );
        // The selector still matches its own template (the API server requires it).
        let labels = spec.template.unwrap().metadata.unwrap().labels.unwrap();
        assert!(selector.iter().all(|(k, v)| labels.get(k) == Some(v)));
        assert_eq!(renamed_from(&copy), Some("web-abc"));
    }

    #[test]
    fn finishing_restores_the_pods_selector_and_size() {
        let mut rc = pending_copy(&new_rc(), "web");
        finished(&mut rc).unwrap();
        assert_eq!(replicas(&rc), 3);
        assert_eq!(renamed_from(&rc), None);
        let spec = rc.spec.clone().unwrap();
        assert_eq!(spec.selector, new_rc().spec.unwrap().selector);
        assert_eq!(
            spec.template.unwrap().metadata.unwrap().labels,
            new_rc()
                .spec
                .unwrap()
                .template
                .unwrap()
                .metadata
                .unwrap()
                .labels
        );
        assert_eq!(
            rc.metadata.annotations.unwrap(),
            BTreeMap::from([("note".into(), "kept".into())])
        );
    }

    #[test]
    fn a_damaged_record_is_reported() {
        let mut rc = pending_copy(&new_rc(), "web");
        set_annotation(&mut rc, DESIRED_REPLICAS_ANNOTATION, "x");
        assert_eq!(
            finished(&mut rc).unwrap_err().to_string(),
            "Unable to parse annotation for web: kubectl.kubernetes.io/desired-replicas=x"
        );
    }
}
