//! The watch stores of an update: watchers on the two RCs (by name) and on the pods of
//! each RC's selector keep local stores current, a change counter wakes the waits,
//! and a watch error no retry can cure ends them at once. Also when a pod counts as
//! available (`min_ready_seconds`), and when the next one will.

use std::sync::Arc;
use std::time::Duration;

use crate::model::{Pod, ReplicationController};
use anyhow::anyhow;
use futures::StreamExt;
use kube::api::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::errors::is_fatal_watch_error;
use crate::controller::{name, selector_string};

/// A store kept current by a watcher task, plus the task.
pub(super) struct Watched<K: kube::Resource + 'static>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    pub(super) store: Store<K>,
    task: JoinHandle<()>,
}

impl<K: kube::Resource + 'static> Drop for Watched<K>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The first watch error that retrying cannot cure, shared by an observer's watches.
type Fatal = Arc<std::sync::Mutex<Option<Box<kube::core::Status>>>>;

fn watch_into_store<K>(
    api: Api<K>,
    config: watcher::Config,
    changed: Arc<watch::Sender<u64>>,
    fatal: Fatal,
) -> Watched<K>
where
    K: kube::Resource
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Default,
{
    let (store, writer) = reflector::store();
    let stream = reflector::reflector(writer, watcher(api, config).default_backoff());
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            match event {
                Ok(_) => changed.send_modify(|n| *n = n.wrapping_add(1)),
                Err(e) => match is_fatal_watch_error(&e) {
                    Some(status) => {
                        // 1.17 had no watch; a 403 here used to be logged at debug
                        // level while the user waited out the whole timeout.
                        *fatal
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(status);
                        changed.send_modify(|n| *n = n.wrapping_add(1));
                        return;
                    }
                    None => tracing::debug!("watch error (retrying): {e}"),
                },
            }
        }
    });
    Watched { store, task }
}

/// Watches over the two RCs of an update and their pods.
pub(super) struct Observer {
    pub(super) old_rc: Watched<ReplicationController>,
    pub(super) new_rc: Watched<ReplicationController>,
    pub(super) old_pods: Watched<Pod>,
    pub(super) new_pods: Watched<Pod>,
    pub(super) old_name: String,
    pub(super) new_name: String,
    pub(super) rc_changes: watch::Receiver<u64>,
    pub(super) pod_changes: watch::Receiver<u64>,
    pub(super) fatal: Fatal,
}

impl Observer {
    /// `watch_timeout` is the server-side bound of each watch request; it stays
    /// below the client's read timeout, so a quiet watch is renewed, not cut.
    pub(super) fn start(
        rcs: &Api<ReplicationController>,
        pods: &Api<Pod>,
        old_rc: &ReplicationController,
        new_rc: &ReplicationController,
        watch_timeout: u32,
    ) -> Self {
        let (rc_tx, rc_changes) = watch::channel(0u64);
        let (pod_tx, pod_changes) = watch::channel(0u64);
        let (rc_tx, pod_tx) = (Arc::new(rc_tx), Arc::new(pod_tx));
        let fatal: Fatal = Arc::default();
        // Lists served from the API server's watch cache (`resourceVersion=0`), not
        // consistent reads: on a current server a consistent list waits until the
        // cache has caught up with etcd, about a tenth of a second while pods change
        // (measured on v1.37), once per watch and per re-list. A list a moment old
        // is enough here: the watch that follows it delivers every change after it,
        // and each step waits for the events that follow its own write. Without a
        // page size, which kube would send instead of `resourceVersion=0` (the cache
        // answers such a list whole anyway).
        let mut base = watcher::Config::default()
            .timeout(watch_timeout)
            .any_semantic();
        base.page_size = None;
        let by_name = |rc: &ReplicationController| {
            base.clone().fields(&format!("metadata.name={}", name(rc)))
        };
        let by_selector = |rc: &ReplicationController| base.clone().labels(&selector_string(rc));
        Observer {
            old_rc: watch_into_store(rcs.clone(), by_name(old_rc), rc_tx.clone(), fatal.clone()),
            new_rc: watch_into_store(rcs.clone(), by_name(new_rc), rc_tx, fatal.clone()),
            old_pods: watch_into_store(
                pods.clone(),
                by_selector(old_rc),
                pod_tx.clone(),
                fatal.clone(),
            ),
            new_pods: watch_into_store(pods.clone(), by_selector(new_rc), pod_tx, fatal.clone()),
            old_name: name(old_rc).to_string(),
            new_name: name(new_rc).to_string(),
            rc_changes,
            pod_changes,
            fatal,
        }
    }

    /// The error that ended a watch for good, as the API error it was.
    pub(super) fn fatal(&self) -> anyhow::Result<()> {
        match self
            .fatal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
        {
            Some(status) => Err(kube::Error::Api(status).into()),
            None => Ok(()),
        }
    }

    pub(super) async fn ready(&self, timeout: Duration) -> anyhow::Result<()> {
        let all = async {
            self.old_rc.store.wait_until_ready().await?;
            self.new_rc.store.wait_until_ready().await?;
            self.old_pods.store.wait_until_ready().await?;
            self.new_pods.store.wait_until_ready().await
        };
        let (mut rcs, mut pods) = (self.rc_changes.clone(), self.pod_changes.clone());
        let failed = async {
            while self.fatal().is_ok() {
                tokio::select! {
                    r = rcs.changed() => if r.is_err() { std::future::pending::<()>().await },
                    r = pods.changed() => if r.is_err() { std::future::pending::<()>().await },
                }
            }
        };
        tokio::select! {
            r = tokio::time::timeout(timeout, all) => r
                .map_err(|_| anyhow!("timed out waiting for the watches on the replication controllers and their pods"))?
                .map_err(|e| anyhow!("watch ended: {e}")),
            () = failed => self.fatal(),
        }
    }

    /// Active pods (not being deleted) of the old or new RC, by name.
    pub(super) fn active_pods(&self, rc_name: &str) -> Option<i32> {
        let store = if self.old_name == rc_name {
            &self.old_pods.store
        } else if self.new_name == rc_name {
            &self.new_pods.store
        } else {
            return None;
        };
        let active = store
            .state()
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .count();
        Some(active as i32)
    }

    /// Whether one of the RC watches follows the name `rc_name`.
    pub(super) fn follows(&self, rc_name: &str) -> bool {
        self.old_name == rc_name || self.new_name == rc_name
    }

    pub(super) fn rc(&self, rc_name: &str) -> Option<ReplicationController> {
        [&self.old_rc.store, &self.new_rc.store]
            .iter()
            .flat_map(|s| s.state())
            .find(|rc| name(rc) == rc_name)
            .map(|rc| (*rc).clone())
    }
}

/// Whether a pod counts as available (kubectl's `podutils.IsPodAvailable`, and not
/// being deleted).
pub fn pod_available(pod: &Pod, min_ready_seconds: i32, now: k8s_openapi::jiff::Timestamp) -> bool {
    if pod.metadata.deletion_timestamp.is_some() {
        return false;
    }
    let Some(ready) = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
    else {
        return false;
    };
    if ready.status != "True" {
        return false;
    }
    if min_ready_seconds <= 0 {
        return true;
    }
    let Some(since) = &ready.last_transition_time else {
        return false;
    };
    let needed = k8s_openapi::jiff::SignedDuration::from_secs(i64::from(min_ready_seconds));
    since.0.checked_add(needed).is_ok_and(|t| t < now)
}

/// The earliest time after `now` at which a Ready pod that is not yet available
/// (because of `min_ready_seconds`) becomes available.
pub fn next_available_at(
    pods: &[Arc<Pod>],
    min_ready_seconds: i32,
    now: k8s_openapi::jiff::Timestamp,
) -> Option<k8s_openapi::jiff::Timestamp> {
    if min_ready_seconds <= 0 {
        return None;
    }
    let needed = k8s_openapi::jiff::SignedDuration::from_secs(i64::from(min_ready_seconds));
    pods.iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| {
            let ready = p
                .status
                .as_ref()?
                .conditions
                .as_ref()?
                .iter()
                .find(|c| c.type_ == "Ready" && c.status == "True")?;
            ready
                .last_transition_time
                .as_ref()?
                .0
                .checked_add(needed)
                .ok()
        })
        .filter(|at| *at > now)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pod::{PodCondition, PodStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::{SignedDuration, Timestamp};

    fn pod(ready: Option<(&str, Timestamp)>, deleting: bool) -> Pod {
        let mut p = Pod::default();
        if deleting {
            p.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
        }
        p.status = Some(PodStatus {
            conditions: ready.map(|(status, since)| {
                vec![PodCondition {
                    type_: "Ready".into(),
                    status: status.into(),
                    last_transition_time: Some(Time(since)),
                    ..Default::default()
                }]
            }),
            ..Default::default()
        });
        p
    }

    #[test]
    fn availability() {
        let now = Timestamp::UNIX_EPOCH + SignedDuration::from_secs(1000);
        let ten_ago = now - SignedDuration::from_secs(10);
        let table = [
            (pod(Some(("True", ten_ago)), false), 0, true),
            (pod(Some(("True", ten_ago)), true), 0, false),
            (pod(Some(("False", ten_ago)), false), 0, false),
            (pod(None, false), 0, false),
            (pod(Some(("True", ten_ago)), false), 5, true),
            (pod(Some(("True", ten_ago)), false), 10, false),
            (pod(Some(("True", ten_ago)), false), 11, false),
        ];
        for (i, (p, min_ready, want)) in table.into_iter().enumerate() {
            assert_eq!(pod_available(&p, min_ready, now), want, "row {i}");
        }
    }

    #[test]
    fn next_availability_with_min_ready_seconds() {
        let now = Timestamp::UNIX_EPOCH + SignedDuration::from_secs(1000);
        let ready_at = |secs_ago: i64| {
            Arc::new(pod(
                Some(("True", now - SignedDuration::from_secs(secs_ago))),
                false,
            ))
        };
        let pods = vec![
            ready_at(2),
            ready_at(8),
            ready_at(30),
            Arc::new(pod(Some(("False", now)), false)),
        ];
        // min-ready 10 s: the pod ready for 8 s is first (in 2 s), then the one ready for 2 s.
        assert_eq!(
            next_available_at(&pods, 10, now),
            Some(now + SignedDuration::from_secs(2))
        );
        assert_eq!(
            next_available_at(&pods, 0, now),
            None,
            "no threshold, no timer"
        );
        assert_eq!(
            next_available_at(&pods[2..], 10, now),
            None,
            "already available: no timer"
        );
    }
}
