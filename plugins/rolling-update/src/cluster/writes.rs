//! Writes that survive conflicts. Most of the update's writes to an RC are changes that
//! do not depend on what the server holds (an annotation, a label, the hand-over's last
//! step): they are sent as JSON merge patches ([`patch_rc`]), which apply to the
//! server's current copy and so cannot conflict, where kubectl 1.17's
//! `updateRcWithRetries` PUT the copy it had, and paid a GET and a second PUT whenever
//! the RC manager had written the status in between (after every spec change it does).
//! Pods stay with 1.17's PUT and its retries ([`update_pod_with_retries`]): the
//! permission users grant for them is `update`, not `patch`.
//! The one write whose value comes from the object, `original-replicas`, is a JSON
//! patch that tests the replica count it records ([`record_original_replicas`]), with
//! 1.17's GET-modify-PUT loop ([`update_rc_with_retries`]) behind it.

use std::time::Duration;

use crate::model::{Pod, ReplicationController};
use anyhow::anyhow;
use kube::Resource;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::errors::is_conflict;
use crate::controller::{name, replicas};
use crate::merge::change;
use crate::names::{
    DESIRED_REPLICAS_ANNOTATION, NEXT_CONTROLLER_ANNOTATION, ORIGINAL_REPLICAS_ANNOTATION,
    SOURCE_ID_ANNOTATION, set_annotation,
};
use cli::interrupt::Interrupt;

/// How many times a conflicting write is retried (client-go's `DefaultBackoff`:
/// 4 attempts, 10 ms growing ×5).
const CONFLICT_ATTEMPTS: u32 = 4;

/// kubectl's `updateRcWithRetries`: apply `mutate` to `rc` and PUT it; on a 409
/// fetch the latest version and try again.
pub async fn update_rc_with_retries(
    api: &Api<ReplicationController>,
    interrupt: &Interrupt,
    rc: &ReplicationController,
    mutate: impl Fn(&mut ReplicationController),
) -> anyhow::Result<ReplicationController> {
    update_with_retries(api, interrupt, rc, mutate).await
}

/// The same for a pod's labels (the old RC's pods get the deployment key). A PUT, not a
/// patch, as in 1.17: the permission the README lists for pods is `update`.
pub async fn update_pod_with_retries(
    api: &Api<Pod>,
    interrupt: &Interrupt,
    pod: &Pod,
    mutate: impl Fn(&mut Pod),
) -> anyhow::Result<Pod> {
    update_with_retries(api, interrupt, pod, mutate).await
}

/// The loop above for any kind, named in its messages by its plural.
async fn update_with_retries<K>(
    api: &Api<K>,
    interrupt: &Interrupt,
    object: &K,
    mutate: impl Fn(&mut K),
) -> anyhow::Result<K>
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let name = object.meta().name.clone().unwrap_or_default();
    let kind = K::plural(&()).trim_end_matches('s').to_string();
    let mut current = object.clone();
    let mut delay = Duration::from_millis(10);
    for attempt in 1..=CONFLICT_ATTEMPTS {
        interrupt.check()?;
        let mut desired = current.clone();
        mutate(&mut desired);
        match api.replace(&name, &PostParams::default(), &desired).await {
            Ok(updated) => return Ok(updated),
            Err(e) if is_conflict(&e) && attempt < CONFLICT_ATTEMPTS => {
                tracing::debug!("conflict updating {kind} {name}, retrying with a fresh copy");
                tokio::time::sleep(delay).await;
                delay *= 5;
                interrupt.check()?;
                current = api.get(&name).await?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(anyhow!("too many conflicts updating {kind} {name:?}"))
}

/// Applies the change `mutate` makes to `rc` to the server's copy, as one merge patch
/// with `rc`'s uid in it (the API server refuses to change a uid, so the patch cannot
/// land on another RC of the same name). Returns `rc` itself, without a request, when
/// `mutate` changes nothing.
pub async fn patch_rc(
    api: &Api<ReplicationController>,
    interrupt: &Interrupt,
    rc: &ReplicationController,
    mutate: impl Fn(&mut ReplicationController),
) -> anyhow::Result<ReplicationController> {
    let Some(mut patch) = change(rc, mutate)? else {
        return Ok(rc.clone());
    };
    if let (Some(uid), Value::Object(p)) = (&rc.metadata.uid, &mut patch)
        && let Value::Object(meta) = p
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()))
    {
        meta.insert("uid".into(), Value::String(uid.clone()));
    }
    interrupt.check()?;
    Ok(api
        .patch(name(rc), &PatchParams::default(), &Patch::Merge(&patch))
        .await?)
}

/// Records `original-replicas` on the old RC: the replica count it has when the update
/// starts. One JSON patch that tests `spec.replicas` is still the count of `rc` and
/// sets the annotation; when the test fails (the RC was scaled since `rc` was read) or
/// `rc` has no annotations map to add to (adding one would replace a map the server's
/// copy may have gained), kubectl 1.17's PUT with its conflict retries.
pub async fn record_original_replicas(
    api: &Api<ReplicationController>,
    interrupt: &Interrupt,
    rc: &ReplicationController,
) -> anyhow::Result<ReplicationController> {
    let n = replicas(rc);
    if rc.metadata.annotations.is_some() {
        let key = ORIGINAL_REPLICAS_ANNOTATION
            .replace('~', "~0")
            .replace('/', "~1");
        let ops = serde_json::json!([
            {"op": "test", "path": "/spec/replicas", "value": n},
            {"op": "add", "path": format!("/metadata/annotations/{key}"), "value": n.to_string()},
        ]);
        let patch: json_patch::Patch = serde_json::from_value(ops)?;
        interrupt.check()?;
        match api
            .patch(name(rc), &PatchParams::default(), &Patch::<()>::Json(patch))
            .await
        {
            Ok(rc) => return Ok(rc),
            // 422: the test failed; read the RC again below.
            Err(kube::Error::Api(s)) if s.code == 422 => {
                tracing::debug!("original replicas of {}: {}", name(rc), s.message);
            }
            Err(e) => return Err(e.into()),
        }
        interrupt.check()?;
        let fresh = api.get(name(rc)).await?;
        return update_rc_with_retries(api, interrupt, &fresh, set_original).await;
    }
    update_rc_with_retries(api, interrupt, rc, set_original).await
}

fn set_original(rc: &mut ReplicationController) {
    let n = replicas(rc);
    set_annotation(rc, ORIGINAL_REPLICAS_ANNOTATION, n.to_string());
}

/// Removes `update-source-id`, `desired-replicas` and `next-controller-id`: the
/// update is over. (1.17 left `next-controller-id` on a rolled-back RC, pointing at
/// a deleted one.) A merge patch: no fresh copy needed.
pub async fn strip_update_annotations(
    api: &Api<ReplicationController>,
    interrupt: &Interrupt,
    rc: &ReplicationController,
) -> anyhow::Result<ReplicationController> {
    patch_rc(api, interrupt, rc, strip).await
}

/// The change [`strip_update_annotations`] makes.
pub fn strip(rc: &mut ReplicationController) {
    if let Some(a) = rc.metadata.annotations.as_mut() {
        a.remove(SOURCE_ID_ANNOTATION);
        a.remove(DESIRED_REPLICAS_ANNOTATION);
        a.remove(NEXT_CONTROLLER_ANNOTATION);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_annotations_go_away_in_one_patch() {
        let rc: ReplicationController = serde_json::from_value(json!({
            "metadata": {"name": "web", "uid": "u", "annotations": {
                SOURCE_ID_ANNOTATION: "old:u0", DESIRED_REPLICAS_ANNOTATION: "3",
                NEXT_CONTROLLER_ANNOTATION: "web-2", "keep": "me"}},
            "spec": {"replicas": 3}
        }))
        .unwrap();
        assert_eq!(
            change(&rc, strip).unwrap(),
            Some(json!({"metadata": {"annotations": {
                SOURCE_ID_ANNOTATION: null, DESIRED_REPLICAS_ANNOTATION: null,
                NEXT_CONTROLLER_ANNOTATION: null}}}))
        );
        let mut done = rc.clone();
        strip(&mut done);
        assert_eq!(change(&done, strip).unwrap(), None, "nothing left to send");
    }
}
