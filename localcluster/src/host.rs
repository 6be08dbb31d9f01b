//! The names of what a real node leaves on the host until it is removed (the node
//! itself is `realnode`), so that `cargo xtask test` can check after a run that
//! nothing is left ([`Snapshot`]).

use std::path::Path;

/// Where every node's run directory and the host-wide records live.
pub const RUN_ROOT: &str = "/run/kubeplug";
/// The prefix of a node id (`kpn-<supervisor pid>-<its start time>`), which names its
/// network namespace, run directory and cgroup root.
pub const NODE_ID_PREFIX: &str = "kpn-";
/// The sysctls a kubelet may rewrite at start (its `setupKernelTunables`).
pub const SYSCTLS: [&str; 6] = [
    "vm.overcommit_memory",
    "vm.panic_on_oom",
    "kernel.panic",
    "kernel.panic_on_oops",
    "kernel.keys.root_maxkeys",
    "kernel.keys.root_maxbytes",
];
/// Directories the kubelet, containerd and libcni make whatever their configuration.
pub const HOST_PATHS: [&str; 5] = [
    "/var/lib/kubelet",
    "/var/log/containers",
    "/var/log/pods",
    "/var/lib/cni",
    "/run/containerd",
];

/// What of the above the host has at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub sysctls: Vec<(String, Option<String>)>,
    pub host_paths: Vec<&'static str>,
    /// Node network namespaces, run directories and cgroup roots.
    pub nodes: Vec<String>,
}

impl Snapshot {
    pub fn take() -> Self {
        let sysctls = SYSCTLS
            .iter()
            .map(|s| {
                let path = Path::new("/proc/sys").join(s.replace('.', "/"));
                let value = std::fs::read_to_string(path)
                    .ok()
                    .map(|v| v.trim().to_string());
                (s.to_string(), value)
            })
            .collect();
        let host_paths = HOST_PATHS
            .into_iter()
            .filter(|p| Path::new(p).exists())
            .collect();
        let mut nodes: Vec<String> = [
            "/run/netns",
            RUN_ROOT,
            "/sys/fs/cgroup/memory",
            "/sys/fs/cgroup",
        ]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(NODE_ID_PREFIX))
        .collect();
        if Path::new(RUN_ROOT).exists() {
            nodes.push(RUN_ROOT.to_string());
        }
        nodes.sort();
        nodes.dedup();
        Self {
            sysctls,
            host_paths,
            nodes,
        }
    }

    /// What `self` (taken after) has that `before` had not, in words; empty when the
    /// host is as it was.
    pub fn changes_since(&self, before: &Snapshot) -> Vec<String> {
        let mut changes = Vec::new();
        for ((name, now), (_, then)) in self.sysctls.iter().zip(&before.sysctls) {
            if now != then {
                changes.push(format!("{name} is {now:?}, was {then:?}"));
            }
        }
        for path in &self.host_paths {
            if !before.host_paths.contains(path) {
                changes.push(format!("{path} was made"));
            }
        }
        for node in &self.nodes {
            if !before.nodes.contains(node) {
                changes.push(format!("{node} is left"));
            }
        }
        changes
    }
}
