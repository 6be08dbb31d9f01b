//! Writes that survive conflicts: kubectl's `updateRcWithRetries` for RCs and pods
//! (a fresh GET and another attempt after a 409), and the removal of the update
//! annotations at the end of an update.

use std::time::Duration;

use anyhow::anyhow;
use k8s_openapi::api::core::v1::{Pod, ReplicationController};
use kube::Resource;
use kube::api::{Api, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::errors::is_conflict;
use crate::names::{DESIRED_REPLICAS_ANNOTATION, NEXT_CONTROLLER_ANNOTATION, SOURCE_ID_ANNOTATION};
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

/// The same for a pod's labels (used when the old RC gets the deployment key).
pub async fn update_pod_with_retries(
    api: &Api<Pod>,
    interrupt: &Interrupt,
    pod: &Pod,
    mutate: impl Fn(&mut Pod),
) -> anyhow::Result<Pod> {
    update_with_retries(api, interrupt, pod, mutate).await
}

/// Both of the above: one loop for any kind, named in its messages by its plural.
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

/// Removes `update-source-id`, `desired-replicas` and `next-controller-id`: the
/// update is over. (1.17 left `next-controller-id` on a rolled-back RC, pointing at
/// a deleted one.)
pub async fn strip_update_annotations(
    api: &Api<ReplicationController>,
    interrupt: &Interrupt,
    rc: &ReplicationController,
) -> anyhow::Result<ReplicationController> {
    update_rc_with_retries(api, interrupt, rc, |rc| {
        if let Some(a) = rc.metadata.annotations.as_mut() {
            a.remove(SOURCE_ID_ANNOTATION);
            a.remove(DESIRED_REPLICAS_ANNOTATION);
            a.remove(NEXT_CONTROLLER_ANNOTATION);
        }
    })
    .await
}
