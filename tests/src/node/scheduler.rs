//! Scheduling: the local control plane has no kube-scheduler, so the
//! simulated node binds unscheduled pods to its own nodes, round-robin,
//! through the Binding subresource exactly as the scheduler would.
//!
//! Placement honours what a single-purpose test cluster needs: the scheduler
//! name, `spec.nodeSelector` against the nodes' labels, and the
//! `matchFields: metadata.name` node affinity the DaemonSet controller uses.
//! Other affinity rules, taints and resources are not considered.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Binding, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Client;
use kube::api::{Api, PostParams};

/// The scheduler name this node answers for.
pub const DEFAULT_SCHEDULER: &str = "default-scheduler";

/// Whether `pod` waits for a scheduler this node stands in for.
pub fn needs_binding(pod: &Pod) -> bool {
    let Some(spec) = pod.spec.as_ref() else {
        return false;
    };
    spec.node_name.as_deref().is_none_or(str::is_empty)
        && spec.scheduler_name.as_deref().unwrap_or(DEFAULT_SCHEDULER) == DEFAULT_SCHEDULER
        && pod.metadata.deletion_timestamp.is_none()
        && !super::status::phase::is_terminal(pod.status.as_ref().and_then(|s| s.phase.as_deref()))
}

/// The node for `pod` among `nodes` (name, labels), starting the round-robin
/// at `*cursor` and advancing it past the chosen node. None if no node fits.
pub fn pick_node<'a>(
    pod: &Pod,
    nodes: &'a [(String, BTreeMap<String, String>)],
    cursor: &mut usize,
) -> Option<&'a str> {
    if nodes.is_empty() {
        return None;
    }
    for offset in 0..nodes.len() {
        let index = (*cursor + offset) % nodes.len();
        let (name, labels) = &nodes[index];
        if fits(pod, name, labels) {
            *cursor = (index + 1) % nodes.len();
            return Some(name);
        }
    }
    None
}

fn fits(pod: &Pod, node_name: &str, labels: &BTreeMap<String, String>) -> bool {
    let Some(spec) = pod.spec.as_ref() else {
        return false;
    };
    let selector_ok = spec
        .node_selector
        .as_ref()
        .is_none_or(|sel| sel.iter().all(|(k, v)| labels.get(k) == Some(v)));
    // Required node affinity: terms are ORed; within a term, we evaluate
    // only `matchFields` on metadata.name (what DaemonSets use) and treat
    // other requirements as satisfied.
    let affinity_ok = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .is_none_or(|required| {
            required.node_selector_terms.iter().any(|term| {
                term.match_fields
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .all(|req| {
                        if req.key != "metadata.name" {
                            return true;
                        }
                        let values = req.values.as_deref().unwrap_or_default();
                        let listed = values.iter().any(|v| v == node_name);
                        match req.operator.as_str() {
                            "In" => listed,
                            "NotIn" => !listed,
                            _ => true,
                        }
                    })
            })
        });
    selector_ok && affinity_ok
}

/// The Binding object that assigns `pod` to `node`.
pub fn binding(pod: &Pod, node: &str) -> Binding {
    Binding {
        metadata: ObjectMeta {
            name: pod.metadata.name.clone(),
            namespace: pod.metadata.namespace.clone(),
            // The API server rejects the binding if the pod was replaced.
            uid: pod.metadata.uid.clone(),
            ..ObjectMeta::default()
        },
        target: ObjectReference {
            api_version: Some("v1".to_owned()),
            kind: Some("Node".to_owned()),
            name: Some(node.to_owned()),
            ..ObjectReference::default()
        },
    }
}

/// POSTs `pods/NAME/binding`; true when this call bound the pod. A pod that
/// is gone or already bound is not an error (another node process, or a re-delivered event, got there first);
/// server-side and connection trouble is retried with back-off until it
/// passes; other client errors (403, 422) are returned.
pub(crate) async fn bind(client: &Client, pod: &Pod, node: &str) -> kube::Result<bool> {
    let (Some(name), Some(namespace)) = (
        pod.metadata.name.as_deref(),
        pod.metadata.namespace.as_deref(),
    ) else {
        return Ok(false);
    };
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let body = binding(pod, node);
    let mut delay = Duration::from_millis(100);
    let mut attempt: u32 = 0;
    loop {
        attempt = attempt.wrapping_add(1);
        let result = pods
            .create_subresource::<_, serde_json::Value>(
                "binding",
                name,
                &PostParams::default(),
                &body,
            )
            .await;
        match result {
            Ok(_) => {
                tracing::debug!(pod = %format!("{namespace}/{name}"), node, "bound pod");
                return Ok(true);
            }
            Err(kube::Error::Api(s)) if s.is_not_found() || s.is_conflict() => {
                tracing::debug!(pod = %format!("{namespace}/{name}"), reason = %s.reason, "binding skipped");
                return Ok(false);
            }
            Err(kube::Error::Api(s)) if s.code < 500 && s.code != 429 => {
                return Err(kube::Error::Api(s));
            }
            Err(e) => {
                // No later event may come for this pod, so keep trying
                // (the task ends with the node).
                if attempt.is_multiple_of(5) {
                    tracing::warn!(pod = %format!("{namespace}/{name}"), error = %e, "binding keeps failing; retrying");
                }
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(10));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodSpec,
        PodStatus,
    };

    fn nodes() -> Vec<(String, BTreeMap<String, String>)> {
        ["n0", "n1", "n2"]
            .iter()
            .map(|n| {
                let labels = [("kubernetes.io/hostname".to_owned(), (*n).to_owned())].into();
                ((*n).to_owned(), labels)
            })
            .collect()
    }

    fn pod(spec: PodSpec) -> Pod {
        Pod {
            spec: Some(spec),
            ..Pod::default()
        }
    }

    #[test]
    fn round_robin() {
        let nodes = nodes();
        let mut cursor = 0;
        let p = pod(PodSpec::default());
        let picks: Vec<_> = (0..4)
            .filter_map(|_| pick_node(&p, &nodes, &mut cursor))
            .collect();
        assert_eq!(picks, ["n0", "n1", "n2", "n0"]);
        assert_eq!(pick_node(&p, &[], &mut cursor), None);
    }

    #[test]
    fn node_selector_and_daemonset_affinity() {
        let nodes = nodes();
        let mut cursor = 0;
        let selected = pod(PodSpec {
            node_selector: Some([("kubernetes.io/hostname".to_owned(), "n2".to_owned())].into()),
            ..PodSpec::default()
        });
        assert_eq!(pick_node(&selected, &nodes, &mut cursor), Some("n2"));
        assert_eq!(cursor, 0);
        let nowhere = pod(PodSpec {
            node_selector: Some([("disk".to_owned(), "ssd".to_owned())].into()),
            ..PodSpec::default()
        });
        assert_eq!(pick_node(&nowhere, &nodes, &mut cursor), None);

        let daemon = pod(PodSpec {
            affinity: Some(Affinity {
                node_affinity: Some(NodeAffinity {
                    required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                        node_selector_terms: vec![NodeSelectorTerm {
                            match_fields: Some(vec![NodeSelectorRequirement {
                                key: "metadata.name".to_owned(),
                                operator: "In".to_owned(),
                                values: Some(vec!["n1".to_owned()]),
                            }]),
                            ..NodeSelectorTerm::default()
                        }],
                    }),
                    ..NodeAffinity::default()
                }),
                ..Affinity::default()
            }),
            ..PodSpec::default()
        });
        assert_eq!(pick_node(&daemon, &nodes, &mut cursor), Some("n1"));
    }

    #[test]
    fn which_pods_need_binding() {
        assert!(needs_binding(&pod(PodSpec::default())));
        assert!(needs_binding(&pod(PodSpec {
            scheduler_name: Some(DEFAULT_SCHEDULER.to_owned()),
            node_name: Some(String::new()),
            ..PodSpec::default()
        })));
        assert!(!needs_binding(&pod(PodSpec {
            node_name: Some("elsewhere".to_owned()),
            ..PodSpec::default()
        })));
        assert!(!needs_binding(&pod(PodSpec {
            scheduler_name: Some("my-scheduler".to_owned()),
            ..PodSpec::default()
        })));
        let mut done = pod(PodSpec::default());
        done.status = Some(PodStatus {
            phase: Some("Failed".to_owned()),
            ..PodStatus::default()
        });
        assert!(!needs_binding(&done));
        assert!(!needs_binding(&Pod::default()));
    }

    #[test]
    fn binding_targets_the_node_and_pins_the_uid() {
        let mut p = pod(PodSpec::default());
        p.metadata.name = Some("web".to_owned());
        p.metadata.namespace = Some("ns".to_owned());
        p.metadata.uid = Some("u1".to_owned());
        let json = serde_json::to_value(binding(&p, "n0")).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": { "name": "web", "namespace": "ns", "uid": "u1" },
                "target": { "apiVersion": "v1", "kind": "Node", "name": "n0" }
            })
        );
    }
}
