//! The Node objects and their heartbeats: registration, the node Lease in
//! `kube-node-lease`, and the Ready condition's heartbeat, so that the real
//! node-lifecycle controller in kube-controller-manager sees healthy kubelets
//! and never marks the nodes NotReady or taints them.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{
    DaemonEndpoint, Namespace, Node, NodeAddress, NodeCondition, NodeDaemonEndpoints, NodeSpec,
    NodeStatus, NodeSystemInfo,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference, Time};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};

/// What a simulated kubelet advertises about itself in its Node object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeletInfo {
    /// The kubelet API port (`status.daemonEndpoints`).
    pub port: u16,
    /// The version it claims (`status.nodeInfo.kubeletVersion`): the control plane's,
    /// as a kubelet of the same release reports.
    pub version: String,
}

impl KubeletInfo {
    /// `status.declaredFeatures`, which a kubelet since 1.35 reports and the API
    /// server reads (NodeDeclaredFeatures): `ExtendWebSocketsToKubelet` tells it to
    /// proxy attach/exec WebSockets to the kubelet as they are, instead of translating
    /// them to SPDY, which this kubelet does not speak. Empty before 1.35.
    pub fn declared_features(&self) -> Vec<&'static str> {
        let minor = self
            .version
            .split('.')
            .nth(1)
            .and_then(|m| m.parse::<u32>().ok())
            .unwrap_or(0);
        if minor >= 35 {
            vec!["ExtendWebSocketsToKubelet"]
        } else {
            Vec::new()
        }
    }

    /// The status fields k8s-openapi's models (1.33) do not have yet, as a merge patch.
    fn status_extras(&self) -> Option<serde_json::Value> {
        let features = self.declared_features();
        (!features.is_empty())
            .then(|| serde_json::json!({ "status": { "declaredFeatures": features } }))
    }
}
/// Namespace of node leases.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";
/// Label put on every simulated node.
pub const SIMULATED_NODE_LABEL: &str = "sim.kubeplug.io/simulated";
/// The address every simulated node advertises (and hosts pods on).
pub const NODE_IP: &str = "127.0.0.1";
/// Field manager for everything the simulated node writes.
pub const FIELD_MANAGER: &str = "kubeplug-node-sim";

/// The kubelet's default lease duration; the controller-manager's
/// node-monitor grace period (40s) is what actually decides health.
const LEASE_DURATION_SECONDS: i32 = 40;

/// Go's GOARCH for this machine, as `kubernetes.io/arch` spells it.
pub fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64le",
        other => other,
    }
}

/// The Node object a simulated kubelet registers.
pub fn node_object(name: &str, kubelet: &KubeletInfo, now: Timestamp) -> Node {
    let arch = go_arch();
    let labels: BTreeMap<String, String> = [
        ("kubernetes.io/hostname", name),
        ("kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", arch),
        ("beta.kubernetes.io/os", "linux"),
        ("beta.kubernetes.io/arch", arch),
        (SIMULATED_NODE_LABEL, "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec::default()),
        status: Some(node_status(name, kubelet, now, now)),
    }
}

/// The full node status: capacity, conditions, addresses, endpoints, info.
pub fn node_status(
    name: &str,
    kubelet: &KubeletInfo,
    heartbeat: Timestamp,
    ready_since: Timestamp,
) -> NodeStatus {
    let resources: BTreeMap<String, Quantity> = [
        ("cpu", "4"),
        ("memory", "8Gi"),
        ("pods", "110"),
        ("ephemeral-storage", "100Gi"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), Quantity(v.to_owned())))
    .collect();
    NodeStatus {
        capacity: Some(resources.clone()),
        allocatable: Some(resources),
        conditions: Some(node_conditions(heartbeat, ready_since)),
        // Only InternalIP: the API server reaches kubelets (logs, attach) by
        // the first address of its preferred types, and Hostname comes
        // first; the node names here do not resolve.
        addresses: Some(vec![NodeAddress {
            type_: "InternalIP".to_owned(),
            address: NODE_IP.to_owned(),
        }]),
        daemon_endpoints: Some(NodeDaemonEndpoints {
            kubelet_endpoint: Some(DaemonEndpoint {
                port: i32::from(kubelet.port),
            }),
        }),
        node_info: Some(NodeSystemInfo {
            architecture: go_arch().to_owned(),
            operating_system: "linux".to_owned(),
            os_image: "kubeplug simulated node".to_owned(),
            kernel_version: "simulated".to_owned(),
            container_runtime_version: "sim://0.1.0".to_owned(),
            kubelet_version: kubelet.version.clone(),
            kube_proxy_version: kubelet.version.clone(),
            machine_id: name.to_owned(),
            system_uuid: name.to_owned(),
            boot_id: name.to_owned(),
            ..NodeSystemInfo::default()
        }),
        ..NodeStatus::default()
    }
}

/// The kubelet's four standard conditions, all healthy.
pub fn node_conditions(heartbeat: Timestamp, ready_since: Timestamp) -> Vec<NodeCondition> {
    [
        (
            "MemoryPressure",
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
        ),
        (
            "DiskPressure",
            "False",
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure",
        ),
        (
            "PIDPressure",
            "False",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
        ),
        (
            "Ready",
            "True",
            "KubeletReady",
            "kubelet is posting ready status",
        ),
    ]
    .into_iter()
    .map(|(type_, status, reason, message)| NodeCondition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message.to_owned()),
        last_heartbeat_time: Some(Time(heartbeat)),
        last_transition_time: Some(Time(ready_since)),
    })
    .collect()
}

/// The node's Lease, owned by the Node so it goes away with it.
pub fn lease_object(node_name: &str, node_uid: Option<&str>, now: Timestamp) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some(node_name.to_owned()),
            namespace: Some(NODE_LEASE_NAMESPACE.to_owned()),
            owner_references: node_uid.map(|uid| {
                vec![OwnerReference {
                    api_version: "v1".to_owned(),
                    kind: "Node".to_owned(),
                    name: node_name.to_owned(),
                    uid: uid.to_owned(),
                    ..OwnerReference::default()
                }]
            }),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(node_name.to_owned()),
            lease_duration_seconds: Some(LEASE_DURATION_SECONDS),
            renew_time: Some(MicroTime(now)),
            ..LeaseSpec::default()
        }),
    }
}

/// A node this process acts as kubelet for.
#[derive(Clone, Debug)]
pub struct RegisteredNode {
    /// Node name.
    pub name: String,
    /// The Node object's uid (owner of its lease).
    pub uid: Option<String>,
    /// When its Ready condition last turned True.
    pub ready_since: Timestamp,
}

/// Creates the Node, or refreshes the status of one left by an earlier run.
pub(crate) async fn register(
    client: &Client,
    name: &str,
    kubelet: &KubeletInfo,
) -> kube::Result<RegisteredNode> {
    let nodes: Api<Node> = Api::all(client.clone());
    let now = Timestamp::now();
    match nodes
        .create(&post_params(), &node_object(name, kubelet, now))
        .await
    {
        Ok(node) => {
            if let Some(extras) = kubelet.status_extras() {
                nodes
                    .patch_status(name, &patch_params(), &Patch::Merge(&extras))
                    .await?;
            }
            tracing::info!(node = name, "registered node");
            Ok(RegisteredNode {
                name: name.to_owned(),
                uid: node.metadata.uid,
                ready_since: now,
            })
        }
        Err(kube::Error::Api(status)) if status.is_already_exists() => {
            let existing = nodes.get(name).await?;
            // Keep the transition time if the node was still Ready.
            let ready_since = existing
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
                .filter(|c| c.status == "True")
                .and_then(|c| c.last_transition_time.as_ref())
                .map_or(now, |t| t.0);
            let mut patch = serde_json::json!({
                "status": node_status(name, kubelet, now, ready_since)
            });
            if let Some(extras) = kubelet.status_extras() {
                patch["status"]["declaredFeatures"] = extras["status"]["declaredFeatures"].clone();
            }
            nodes
                .patch_status(name, &patch_params(), &Patch::Merge(&patch))
                .await?;
            tracing::info!(node = name, "took over existing node");
            Ok(RegisteredNode {
                name: name.to_owned(),
                uid: existing.metadata.uid,
                ready_since,
            })
        }
        Err(e) => Err(e),
    }
}

/// Makes sure the lease namespace exists: the 1.20 API server creates it at
/// start-up, but a node registering in the first instants can beat it.
pub(crate) async fn ensure_lease_namespace(client: &Client) -> kube::Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    if namespaces.get_opt(NODE_LEASE_NAMESPACE).await?.is_some() {
        return Ok(());
    }
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(NODE_LEASE_NAMESPACE.to_owned()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    match namespaces.create(&post_params(), &ns).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.is_already_exists() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Renews the node's lease like the kubelet: read, set renewTime, update
/// with the read resourceVersion, and on a 409 start over from a fresh read.
pub(crate) async fn renew_lease(client: &Client, node: &RegisteredNode) -> kube::Result<()> {
    const ATTEMPTS: usize = 5;
    let leases: Api<Lease> = Api::namespaced(client.clone(), NODE_LEASE_NAMESPACE);
    let mut last_error = None;
    for _ in 0..ATTEMPTS {
        let now = Timestamp::now();
        let result = match leases.get_opt(&node.name).await? {
            None => {
                leases
                    .create(
                        &post_params(),
                        &lease_object(&node.name, node.uid.as_deref(), now),
                    )
                    .await
            }
            Some(mut lease) => {
                let fresh = lease_object(&node.name, node.uid.as_deref(), now);
                lease.spec = fresh.spec;
                if lease.metadata.owner_references.is_none() {
                    lease.metadata.owner_references = fresh.metadata.owner_references;
                }
                leases.replace(&node.name, &post_params(), &lease).await
            }
        };
        match result {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(s)) if s.is_conflict() || s.is_already_exists() => {
                last_error = Some(kube::Error::Api(s));
            }
            Err(e) => return Err(e),
        }
    }
    Err(last_error.unwrap_or_else(|| {
        kube::Error::Api(Box::new(
            kube::core::Status::failure("lease renewal kept conflicting", "Conflict")
                .with_code(409),
        ))
    }))
}

/// Posts the node's conditions with a fresh heartbeat; re-registers the node
/// if someone deleted it.
pub(crate) async fn post_heartbeat(
    client: &Client,
    node: &mut RegisteredNode,
    kubelet: &KubeletInfo,
) -> kube::Result<()> {
    let nodes: Api<Node> = Api::all(client.clone());
    let patch = serde_json::json!({
        "status": { "conditions": node_conditions(Timestamp::now(), node.ready_since) }
    });
    match nodes
        .patch_status(&node.name, &patch_params(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.is_not_found() => {
            tracing::warn!(node = %node.name, "node object disappeared, registering it again");
            *node = register(client, &node.name, kubelet).await?;
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Renews leases and heartbeats every `period` until cancelled. Errors are
/// logged and retried at the next tick: a missed beat or two is harmless
/// (the controller waits 40s), and the API server may be restarting.
pub(crate) async fn heartbeat_loop(
    client: Client,
    mut nodes: Vec<RegisteredNode>,
    kubelet: KubeletInfo,
    period: Duration,
) {
    let mut ticker = tokio::time::interval(period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        for node in &mut nodes {
            if let Err(e) = renew_lease(&client, node).await {
                tracing::warn!(node = %node.name, error = %e, "lease renewal failed");
            }
            if let Err(e) = post_heartbeat(&client, node, &kubelet).await {
                tracing::warn!(node = %node.name, error = %e, "node status heartbeat failed");
            }
        }
    }
}

pub(crate) fn post_params() -> PostParams {
    PostParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PostParams::default()
    }
}

pub(crate) fn patch_params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap_or(Timestamp::UNIX_EPOCH)
    }

    #[test]
    fn node_object_advertises_what_the_brief_requires() {
        let kubelet = KubeletInfo {
            port: 10250,
            version: "v1.37.2".into(),
        };
        let node = node_object("n0", &kubelet, ts("2026-01-01T00:00:00Z"));
        let json = serde_json::to_value(&node).unwrap_or_default();
        assert_eq!(json["metadata"]["name"], "n0");
        assert_eq!(json["metadata"]["labels"]["kubernetes.io/hostname"], "n0");
        assert_eq!(
            json["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"],
            10250
        );
        assert_eq!(
            json["status"]["addresses"],
            serde_json::json!([{ "type": "InternalIP", "address": "127.0.0.1" }])
        );
        assert_eq!(json["status"]["nodeInfo"]["kubeletVersion"], "v1.37.2");
        for key in ["capacity", "allocatable"] {
            assert_eq!(json["status"][key]["cpu"], "4");
            assert_eq!(json["status"][key]["memory"], "8Gi");
            assert_eq!(json["status"][key]["pods"], "110");
        }
        let ready = json["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(ready["status"], "True");
        assert_eq!(ready["reason"], "KubeletReady");
        assert_eq!(ready["lastHeartbeatTime"], "2026-01-01T00:00:00Z");
    }

    #[test]
    fn current_kubelets_declare_websocket_streaming() {
        let at = |version: &str| KubeletInfo {
            port: 10250,
            version: version.into(),
        };
        assert_eq!(
            at("v1.37.2").declared_features(),
            ["ExtendWebSocketsToKubelet"]
        );
        assert!(at("v1.20.2").declared_features().is_empty());
        assert_eq!(at("v1.20.2").status_extras(), None);
    }

    #[test]
    fn heartbeat_moves_but_transition_time_stays() {
        let conditions = node_conditions(ts("2026-01-01T00:10:00Z"), ts("2026-01-01T00:00:00Z"));
        assert_eq!(conditions.len(), 4);
        for c in &conditions {
            assert_eq!(
                c.last_heartbeat_time,
                Some(Time(ts("2026-01-01T00:10:00Z")))
            );
            assert_eq!(
                c.last_transition_time,
                Some(Time(ts("2026-01-01T00:00:00Z")))
            );
            assert_eq!(c.status, if c.type_ == "Ready" { "True" } else { "False" });
        }
    }

    #[test]
    fn lease_is_held_by_and_owned_by_its_node() {
        let lease = lease_object("n0", Some("uid-1"), ts("2026-01-01T00:00:00.5Z"));
        let json = serde_json::to_value(&lease).unwrap_or_default();
        assert_eq!(json["metadata"]["namespace"], "kube-node-lease");
        assert_eq!(json["metadata"]["ownerReferences"][0]["kind"], "Node");
        assert_eq!(json["metadata"]["ownerReferences"][0]["uid"], "uid-1");
        assert_eq!(json["spec"]["holderIdentity"], "n0");
        assert_eq!(json["spec"]["leaseDurationSeconds"], 40);
        assert_eq!(json["spec"]["renewTime"], "2026-01-01T00:00:00.500000Z");
        assert!(
            lease_object("n0", None, Timestamp::UNIX_EPOCH)
                .metadata
                .owner_references
                .is_none()
        );
    }
}
