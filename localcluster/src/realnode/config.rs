//! The configuration files of a real node, as pure functions of its [`Layout`]: they
//! are where this machine's needs are written down, so each setting says why.

use std::path::{Path, PathBuf};

use crate::Release;
use crate::node::KUBELET_PORT;

use super::netns::{NODE_IP, POD_SUBNET};

/// Where the registry listens inside the namespace (containerd's mirror).
pub const REGISTRY_ADDRESS: &str = "127.0.0.1:5000";
/// The registries whose images the local registry serves, as containerd names them.
pub const MIRRORED: [(&str, &str); 2] = [
    ("docker.io", "https://registry-1.docker.io"),
    ("registry.k8s.io", "https://registry.k8s.io"),
];
/// The longest crash-loop back-off: the kubelet's default climbs from 10 s to 5 min,
/// which would make every crash-loop test wait minutes for its next restart. 1.37's
/// `crashLoopBackOff.maxContainerRestartPeriod` (feature KubeletCrashLoopBackOffMax,
/// beta and on since 1.35) caps it; the back-off then starts at this value too.
pub const MAX_RESTART_PERIOD: &str = "5s";

/// The directories and sockets of one node. Sockets and the kubelet's root live under
/// `/run/kubeplug/ID` (`run`): a unix socket path must fit in 108 bytes, which a
/// state directory deep in a checkout may not leave room for.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The node's id: its network namespace, its cgroup root and its run directory.
    pub id: String,
    pub run: PathBuf,
    /// Where logs go (the cluster's state directory).
    pub logs: PathBuf,
    /// The registry's storage (read-only), which `cargo xtask testenv` filled.
    pub image_store: PathBuf,
    pub cni_bin_dir: PathBuf,
    pub runc: PathBuf,
}

impl Layout {
    pub fn containerd_socket(&self) -> PathBuf {
        self.run.join("containerd.sock")
    }
    pub fn kubelet_root(&self) -> PathBuf {
        self.run.join("kubelet")
    }
    pub fn file(&self, name: &str) -> PathBuf {
        self.run.join(name)
    }
    /// The kubelet's cgroup root, in every hierarchy.
    pub fn cgroup_root(&self) -> String {
        format!("/{}", self.id)
    }
    /// The CNI network's name, which also names its cached results in
    /// `/var/lib/cni/results` (libcni's cache, which containerd 1.6 keeps there).
    pub fn network_name(&self) -> String {
        format!("kp-{}", self.id)
    }
}

/// containerd 1.6's config: everything under the node's run directory.
pub fn containerd(layout: &Layout) -> String {
    let run = layout.run.display();
    format!(
        r#"version = 2
root = "{run}/containerd/root"
state = "{run}/containerd/state"
# Snapshotters this machine cannot use, and tracing nobody reads.
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "{run}/containerd.sock"

[ttrpc]
  address = "{run}/containerd.sock.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "{run}/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{sandbox}"
  enable_unprivileged_ports = true
  # The machine withholds CAP_SYS_RESOURCE: the sandbox's oom_score_adj of -998 is
  # refused (EACCES) and every sandbox fails in runc without this.
  restrict_oom_score_adj = true
  # Pod network namespaces under the state directory, not the host's /run/netns.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "{runc}"
        # runc's state under the node's directory, not /run/containerd/runc.
        Root = "{run}/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "{run}/certs.d"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{cni}"
    conf_dir = "{run}/cni/net.d"
"#,
        sandbox = crate::SANDBOX_IMAGE,
        runc = layout.runc.display(),
        cni = layout.cni_bin_dir.display(),
    )
}

/// `certs.d/HOST/hosts.toml`: the local registry first; containerd falls back to the
/// real server (which the namespace cannot reach) for what the mirror lacks, so an
/// unknown image fails as a lookup of the real registry's name.
pub fn mirror_hosts(server: &str) -> String {
    format!(
        "server = \"{server}\"\n\n[host.\"http://{REGISTRY_ADDRESS}\"]\n  capabilities = [\"pull\", \"resolve\"]\n"
    )
}

/// The CNI network: a bridge with host-local addresses and no masquerade, routes only
/// to the node's subnet and the Service range (a pod's packets go nowhere else).
pub fn cni_conflist(layout: &Layout) -> String {
    serde_json::json!({
        "cniVersion": "1.0.0",
        "name": layout.network_name(),
        "plugins": [
            {
                "type": "bridge",
                "bridge": "kpcni0",
                "isGateway": true,
                "ipMasq": false,
                "hairpinMode": true,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": POD_SUBNET}]],
                    "routes": [{"dst": "10.200.0.0/24"}, {"dst": crate::controlplane::SERVICE_CIDR}],
                    "dataDir": layout.run.join("cni/ipam"),
                }
            },
            {"type": "loopback"}
        ]
    })
    .to_string()
}

/// docker-registry (distribution 2.8): serves the image store read-only.
pub fn registry(layout: &Layout) -> String {
    crate::node::registry_config(&layout.image_store, REGISTRY_ADDRESS, true)
}

/// The `resolv.conf` pods get: the cluster DNS address (nothing answers there, but
/// without one the kubelet warns `MissingClusterDNS` on every pod).
pub const CLUSTER_DNS: &str = "10.96.0.10";

/// The KubeletConfiguration of `release`.
pub fn kubelet(release: Release, layout: &Layout) -> String {
    let mut config = format!(
        r#"apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
# A cgroup subtree of its own: a kubelet removes pod cgroups it does not know, and
# several clusters' kubelets run side by side.
cgroupRoot: {cgroup_root}
address: {NODE_IP}
port: {KUBELET_PORT}
readOnlyPort: 0
# The bench's rolling-update-30 runs hold 180 pods at once (the pod subnet is a /24).
maxPods: 250
healthzPort: 0
# The apiserver calls the kubelet without client credentials.
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
failSwapOn: false
resolvConf: {resolv}
clusterDomain: cluster.local
clusterDNS: ["{CLUSTER_DNS}"]
hairpinMode: hairpin-veth
# Never collect the test images, and never evict for a full disk of a shared machine.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%"
  imagefs.available: "1%"
  nodefs.inodesFree: "1%"
serializeImagePulls: false
nodeStatusUpdateFrequency: 10s
# A projected token is replaced at 80% of its lifetime, on the pod's next sync: with
# the default minute a token of the shortest lifetime (10 min) could be rewritten so
# late that a client reading its file once a minute still sends the expired one.
syncFrequency: 10s
"#,
        cgroup_root = layout.cgroup_root(),
        resolv = layout.file("resolv.conf").display(),
    );
    if release.minor() >= 27 {
        config.push_str(&format!(
            "containerRuntimeEndpoint: unix://{}\n",
            layout.containerd_socket().display()
        ));
    }
    if release.minor() >= 29 {
        config.push_str(&format!(
            "podLogsDir: {}\n",
            layout.file("pod-logs").display()
        ));
    }
    if release.minor() >= 31 {
        // This machine's cgroups are v1 (hybrid): 1.35 and later refuse them unless told.
        config.push_str("failCgroupV1: false\n");
    }
    if release.minor() >= 35 {
        config.push_str(&format!(
            "crashLoopBackOff:\n  maxContainerRestartPeriod: {MAX_RESTART_PERIOD}\n"
        ));
    }
    config
}

/// The kubelet's flags (what its config file cannot say, or could not before 1.27).
pub fn kubelet_args(
    release: Release,
    layout: &Layout,
    kubeconfig: &Path,
    node: &str,
) -> Vec<String> {
    let mut args = vec![
        format!("--config={}", layout.file("kubelet.yaml").display()),
        format!("--kubeconfig={}", kubeconfig.display()),
        format!("--root-dir={}", layout.kubelet_root().display()),
        format!("--cert-dir={}", layout.file("kubelet-pki").display()),
        format!("--node-ip={NODE_IP}"),
        format!("--hostname-override={node}"),
        "--v=1".to_string(),
    ];
    if release.minor() < 27 {
        args.extend([
            "--container-runtime=remote".to_string(),
            format!(
                "--container-runtime-endpoint=unix://{}",
                layout.containerd_socket().display()
            ),
        ]);
    }
    args
}

/// kube-proxy's configuration: iptables mode, in the node's network namespace, where
/// the `kubernetes` Service's cluster IP leads to the API server on the node IP. Every
/// setting that would write a host-wide sysctl is off: the conntrack table's size and
/// timeouts (0 leaves them as they are), and localhost NodePorts (`route_localnet`).
pub fn kube_proxy(kubeconfig: &Path, node: &str) -> String {
    format!(
        r#"apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: {node}
clusterCIDR: {POD_SUBNET}
clientConnection:
  kubeconfig: {kubeconfig}
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
  udpTimeout: 0s
  udpStreamTimeout: 0s
iptables:
  localhostNodePorts: false
# The supervisor has no CAP_SYS_RESOURCE to lower its score.
oomScoreAdj: 0
healthzBindAddress: {NODE_IP}:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["{NODE_IP}/32"]
"#,
        kubeconfig = kubeconfig.display(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout {
            id: "kubeplug-node-1-2".into(),
            run: "/run/kubeplug/kubeplug-node-1-2".into(),
            logs: "/tmp/state".into(),
            image_store: "/cache/images".into(),
            cni_bin_dir: "/usr/lib/cni".into(),
            runc: "/usr/sbin/runc".into(),
        }
    }

    #[test]
    fn kubelet_config_follows_the_release() {
        let current = kubelet(Release::Current, &layout());
        assert!(current.contains("failCgroupV1: false"));
        assert!(current.contains(
            "containerRuntimeEndpoint: unix:///run/kubeplug/kubeplug-node-1-2/containerd.sock"
        ));
        assert!(current.contains("maxContainerRestartPeriod: 5s"));
        assert!(current.contains("cgroupRoot: /kubeplug-node-1-2"));
        let old = kubelet(Release::V1_20, &layout());
        for field in [
            "failCgroupV1",
            "containerRuntimeEndpoint",
            "podLogsDir",
            "crashLoopBackOff",
        ] {
            assert!(!old.contains(field), "1.20 does not know {field}");
        }
        let args = kubelet_args(Release::V1_20, &layout(), Path::new("/k"), "n");
        assert!(args.contains(&"--container-runtime=remote".to_string()));
    }

    #[test]
    fn the_cni_network_is_named_for_the_node() {
        let conf: serde_json::Value = serde_json::from_str(&cni_conflist(&layout())).expect("json");
        assert_eq!(conf["name"], "kp-kubeplug-node-1-2");
        assert_eq!(conf["plugins"][0]["ipMasq"], false);
    }
}
