//! Objects as the end-to-end tests create and read them back: whether a pod is ready,
//! many ConfigMaps as one manifest and a namespace's ConfigMaps by name, and a pod
//! created through a fresh namespace's admission.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::Api;
use kube::api::{ListParams, PostParams};

/// Whether `pod` is Ready and not being deleted (a terminating pod can still report
/// Ready until the kubelet stops it).
pub fn pod_ready(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// `n` ConfigMaps `{prefix}-0000`… as one multi-document manifest (the input of the
/// tests that create many objects at once).
pub fn configmaps(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {prefix}-{i:04}\ndata:\n  k: v{i}\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// The names of the ConfigMaps of `ns`, sorted, without the `kube-root-ca.crt` every
/// namespace gets (a name exists at most once, so a list equal to the input's names
/// means each object was created, and only once).
pub async fn configmap_names(ns: &str) -> Vec<String> {
    let api = Api::namespaced(crate::harness::cluster().client().await, ns);
    configmap_names_in(&api).await
}

/// [`configmap_names`] through `api` (another cluster's, another user's).
pub async fn configmap_names_in(api: &Api<ConfigMap>) -> Vec<String> {
    let mut names: Vec<String> = api
        .list(&ListParams::default())
        .await
        .expect("list configmaps")
        .items
        .into_iter()
        .filter_map(|cm| cm.metadata.name)
        .filter(|n| n != "kube-root-ca.crt")
        .collect();
    names.sort();
    names
}

/// Creates a pod, retrying while the API server asks to: in a namespace a few
/// milliseconds old, the 1.20 ServiceAccount admission answers 500 ServerTimeout "No
/// API token found for service account" (with a retry delay) until the token
/// controller has created the token secret. Any other error, or 15 s of
/// ServerTimeout, fails the test.
pub async fn create_pod(pods: &Api<Pod>, pod: &Pod) -> Pod {
    for _ in 0..30 {
        match pods.create(&PostParams::default(), pod).await {
            Ok(created) => return created,
            Err(kube::Error::Api(s)) if s.reason == "ServerTimeout" => {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => panic!("create pod: {e}"),
        }
    }
    panic!("create pod: the API server kept answering ServerTimeout for 15s")
}
