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

/// Field 22 (`starttime`) of `/proc/<pid>/stat`: with the pid, what names a process
/// across pid reuse.
///
/// Read by hand rather than with a /proc crate: one field of one file. The
/// second field (the command name) is in parentheses and may contain spaces
/// and parentheses itself, so counting starts after the last `)`.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_start_time(&stat)
}

pub(crate) fn parse_start_time(stat: &str) -> Option<u64> {
    let after_comm = &stat[stat.rfind(')')? + 1..];
    // Fields from 3 (state) on; starttime is field 22.
    after_comm.split_whitespace().nth(22 - 3)?.parse().ok()
}

/// The environment variable naming a file to which every node's supervisor appends
/// its id as it starts: `cargo xtask test` sets it for the e2e run, so that its check
/// of the host tells the run's own nodes from a cluster someone else started beside
/// it (`cargo xtask cluster up` in another shell).
pub const RUN_NODES_ENV: &str = "KUBEPLUG_RUN_NODES";

/// Appends `id` to the file of [`RUN_NODES_ENV`], when it is set.
pub fn record_run_node(id: &str) -> std::io::Result<()> {
    use std::io::Write;
    let Some(path) = std::env::var_os(RUN_NODES_ENV) else {
        return Ok(());
    };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(format!("{id}\n").as_bytes())
}

/// What [`Snapshot::changes_since`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// What the run's own nodes left: the host is not as it was.
    pub left: Vec<String>,
    /// What clusters the run did not start account for (theirs while they run).
    pub others: Vec<String>,
}

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

    /// What `self` (taken after) has that `before` had not, in words. The nodes in
    /// `ours` are the run's own: whatever they leave is [`Changes::left`]. A node the
    /// run did not start is another's, and while one of those runs, the host-wide
    /// records, directories and sysctls are its to keep ([`Changes::others`]).
    pub fn changes_since(&self, before: &Snapshot, ours: &[String]) -> Changes {
        let new_nodes: Vec<&String> = self
            .nodes
            .iter()
            .filter(|n| !before.nodes.contains(n) && n.as_str() != RUN_ROOT)
            .collect();
        let others_running = self
            .nodes
            .iter()
            .filter(|n| n.as_str() != RUN_ROOT && !ours.contains(n))
            .any(|n| supervisor_runs(n));
        let mut changes = Changes::default();
        let mut host = |change: String| {
            if others_running {
                changes.others.push(change);
            } else {
                changes.left.push(change);
            }
        };
        for ((name, now), (_, then)) in self.sysctls.iter().zip(&before.sysctls) {
            if now != then {
                host(format!("{name} is {now:?}, was {then:?}"));
            }
        }
        for path in &self.host_paths {
            if !before.host_paths.contains(path) {
                host(format!("{path} was made"));
            }
        }
        if self.nodes.iter().any(|n| n == RUN_ROOT) && !before.nodes.iter().any(|n| n == RUN_ROOT) {
            host(format!("{RUN_ROOT} is left"));
        }
        for node in new_nodes {
            if ours.contains(node) {
                changes.left.push(format!("{node} is left"));
            } else {
                let state = if supervisor_runs(node) {
                    "running"
                } else {
                    "stopped"
                };
                changes.others.push(format!(
                    "{node} is a cluster this run did not start ({state})"
                ));
            }
        }
        changes
    }
}

/// Whether the supervisor a node id names (`kpn-<pid>-<start time>`) still runs.
fn supervisor_runs(id: &str) -> bool {
    let Some((pid, start)) = id
        .strip_prefix(NODE_ID_PREFIX)
        .and_then(|rest| rest.split_once('-'))
        .and_then(|(pid, start)| Some((pid.parse::<u32>().ok()?, start.parse::<u64>().ok()?)))
    else {
        return false;
    };
    start_time(pid) == Some(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(paths: &[&'static str], nodes: &[&str]) -> Snapshot {
        Snapshot {
            sysctls: vec![("kernel.panic".into(), Some("0".into()))],
            host_paths: paths.to_vec(),
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
        }
    }

    #[test]
    fn what_the_run_s_own_nodes_leave_is_left() {
        let before = snapshot(&[], &[]);
        let ours = "kpn-4000000-1".to_string();
        let after = snapshot(&["/var/lib/kubelet"], &[&ours, RUN_ROOT]);
        let changes = after.changes_since(&before, std::slice::from_ref(&ours));
        assert_eq!(
            changes.left,
            [
                "/var/lib/kubelet was made",
                "/run/kubeplug is left",
                "kpn-4000000-1 is left"
            ]
        );
        assert!(changes.others.is_empty());
        assert_eq!(before.changes_since(&before, &[]), Changes::default());
    }

    /// A cluster someone started beside the run (this process stands for its
    /// supervisor) keeps the host-wide directories while it runs: not the run's.
    #[test]
    fn a_cluster_the_run_did_not_start_is_another_s() {
        let pid = std::process::id();
        let running = format!(
            "{NODE_ID_PREFIX}{pid}-{}",
            start_time(pid).expect("own start time")
        );
        let before = snapshot(&[], &[]);
        let after = snapshot(&["/var/lib/kubelet"], &[&running, RUN_ROOT]);
        let changes = after.changes_since(&before, &[]);
        assert!(changes.left.is_empty(), "{changes:?}");
        assert_eq!(
            changes.others,
            [
                "/var/lib/kubelet was made".to_string(),
                "/run/kubeplug is left".to_string(),
                format!("{running} is a cluster this run did not start (running)")
            ]
        );
        // One that stopped explains nothing else.
        let stopped = "kpn-4000000-1";
        let after = snapshot(&["/var/lib/kubelet"], &[stopped]);
        let changes = after.changes_since(&before, &[]);
        assert_eq!(changes.left, ["/var/lib/kubelet was made"]);
        assert_eq!(
            changes.others,
            ["kpn-4000000-1 is a cluster this run did not start (stopped)"]
        );
    }
}
