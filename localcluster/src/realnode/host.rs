//! What a kubelet and containerd change on the host, whatever their flags say, and how
//! the run puts it back.
//!
//! - Three host-wide sysctls at the kubelet's start (`vm.overcommit_memory` 0→1,
//!   `kernel.panic` →10, `kernel.panic_on_oops` →1; `protectKernelDefaults` would make
//!   it refuse to start instead). The first node of a boot saves the host's values in
//!   `/run/kubeplug/sysctl.saved`; they are written back once each kubelet is up, at
//!   every node's stop, and the file goes with the last node.
//! - Host directories made outside any root it is given ([`HOST_PATHS`]): whichever
//!   did not exist before the first node of a boot is removed with the last node.
//! - Per node: its run directory (sockets, containerd's and the kubelet's state, the
//!   pods' network namespaces), its cgroup subtree in every hierarchy, the mounts below
//!   them, its CNI results in libcni's cache and its network namespace. [`remove_node`]
//!   takes all of it away, and [`sweep`] does so for every node whose supervisor died
//!   without doing it (`kill -9`), when the next cluster starts.

use std::path::{Path, PathBuf};

use crate::controlplane::sweep::{ProcessState, is_stale, probe, start_time};

pub use crate::host::{HOST_PATHS, NODE_ID_PREFIX as ID_PREFIX, RUN_ROOT, SYSCTLS};

/// The id of the node this supervisor runs.
pub fn node_id() -> String {
    let pid = std::process::id();
    format!("{ID_PREFIX}{pid}-{}", start_time(pid).unwrap_or(0))
}

fn owner(id: &str) -> Option<(u32, u64)> {
    let (pid, start) = id.strip_prefix(ID_PREFIX)?.split_once('-')?;
    Some((pid.parse().ok()?, start.parse().ok()?))
}

fn record(name: &str) -> PathBuf {
    Path::new(RUN_ROOT).join(name)
}

/// Before the first node of a boot: the host's sysctls and which [`HOST_PATHS`]
/// exist, unless an earlier node recorded them already.
pub fn save_host() -> std::io::Result<()> {
    std::fs::create_dir_all(RUN_ROOT)?;
    let saved = record("sysctl.saved");
    if !saved.exists() {
        let lines: String = SYSCTLS
            .iter()
            .filter_map(|s| Some(format!("{s}={}\n", read_sysctl(s)?)))
            .collect();
        write_new(&saved, &lines)?;
    }
    let absent = record("host-paths.absent");
    if !absent.exists() {
        let lines: String = HOST_PATHS
            .iter()
            .filter(|p| !Path::new(p).exists())
            .map(|p| format!("{p}\n"))
            .collect();
        write_new(&absent, &lines)?;
    }
    Ok(())
}

/// Writes `body` to `path` through a temporary file, so a reader never sees half.
fn write_new(path: &Path, body: &str) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, body)?;
    std::fs::rename(tmp, path)
}

/// Writes the saved sysctls back (what a kubelet changed at its start).
pub fn restore_sysctls() {
    let Ok(saved) = std::fs::read_to_string(record("sysctl.saved")) else {
        return;
    };
    for (name, value) in saved.lines().filter_map(|l| l.split_once('=')) {
        if read_sysctl(name).as_deref() != Some(value)
            && let Err(e) = std::fs::write(sysctl_path(name), value)
        {
            tracing::warn!("cannot restore {name}={value}: {e}");
        }
    }
}

fn sysctl_path(name: &str) -> PathBuf {
    Path::new("/proc/sys").join(name.replace('.', "/"))
}

fn read_sysctl(name: &str) -> Option<String> {
    Some(
        std::fs::read_to_string(sysctl_path(name))
            .ok()?
            .trim()
            .to_string(),
    )
}

/// The cgroup hierarchies mounted under `/sys/fs/cgroup` (v1's one per controller
/// and the unified one, or v2's single root).
pub fn cgroup_hierarchies() -> Vec<PathBuf> {
    let root = Path::new("/sys/fs/cgroup");
    if root.join("cgroup.controllers").exists() {
        return vec![root.to_path_buf()];
    }
    std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect()
}

/// Makes the node's cgroup root in every hierarchy (the kubelet refuses a root that
/// does not exist), with the host's cpus and memory nodes for cpuset.
pub fn make_cgroup_root(id: &str) -> std::io::Result<()> {
    for hierarchy in cgroup_hierarchies() {
        let dir = hierarchy.join(id);
        std::fs::create_dir_all(&dir)?;
        for file in ["cpuset.cpus", "cpuset.mems"] {
            if let Ok(value) = std::fs::read_to_string(hierarchy.join(file))
                && std::fs::read_to_string(dir.join(file)).is_ok_and(|v| v.trim().is_empty())
            {
                std::fs::write(dir.join(file), value.trim())?;
            }
        }
    }
    Ok(())
}

/// Takes away everything of node `id` (its processes must be stopped first, as far
/// as they can be): stray processes in its cgroups and containerd's shims, mounts,
/// cgroups, CNI results, the network namespace and the run directory.
pub fn remove_node(id: &str) {
    let run = Path::new(RUN_ROOT).join(id);
    kill_leftovers(id, &run);
    unmount_below(&[run.as_path()]);
    for hierarchy in cgroup_hierarchies() {
        remove_cgroup_tree(&hierarchy.join(id));
    }
    if let Ok(entries) = std::fs::read_dir("/var/lib/cni/results") {
        let network = format!("kp-{id}-");
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(&network) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    super::netns::delete(id);
    if let Err(e) = std::fs::remove_dir_all(&run)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!("cannot remove {}: {e}", run.display());
    }
    restore_sysctls();
    if live_nodes().is_empty() {
        restore_host();
    }
}

/// With no node left: the host directories that were not there before, and the records.
fn restore_host() {
    if let Ok(absent) = std::fs::read_to_string(record("host-paths.absent")) {
        for path in absent.lines().filter(|p| HOST_PATHS.contains(p)) {
            unmount_below(&[Path::new(path)]);
            let _ = std::fs::remove_dir_all(path);
        }
    }
    let _ = std::fs::remove_file(record("host-paths.absent"));
    let _ = std::fs::remove_file(record("sysctl.saved"));
    let _ = std::fs::remove_dir(RUN_ROOT);
}

/// Ids of the nodes whose run directory exists and whose supervisor lives.
pub fn live_nodes() -> Vec<String> {
    node_dirs().into_iter().filter(|id| !stale(id)).collect()
}

fn node_dirs() -> Vec<String> {
    std::fs::read_dir(RUN_ROOT)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| owner(name).is_some())
        .collect()
}

fn stale(id: &str) -> bool {
    owner(id).is_some_and(|(pid, start)| {
        probe(pid).is_some_and(|state: ProcessState| {
            is_stale(
                crate::controlplane::sweep::Owner {
                    pid,
                    start_time: Some(start),
                },
                state,
            )
        })
    })
}

/// Removes every node whose supervisor is gone, with its namespace and cgroups (also
/// those whose run directory went first); returns their ids.
pub fn sweep() -> Vec<String> {
    let mut ids: Vec<String> = node_dirs();
    ids.extend(
        super::netns::list()
            .into_iter()
            .filter(|n| owner(n).is_some()),
    );
    for hierarchy in cgroup_hierarchies() {
        ids.extend(
            std::fs::read_dir(&hierarchy)
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| owner(n).is_some()),
        );
    }
    ids.sort();
    ids.dedup();
    ids.retain(|id| stale(id));
    for id in &ids {
        tracing::info!("removing node {id}, whose supervisor is gone");
        remove_node(id);
    }
    ids
}

/// SIGKILLs what still runs of node `id`: every process in its cgroups (containers
/// and their shims' children) and containerd's shims, which leave their parent.
fn kill_leftovers(id: &str, run: &Path) {
    let socket = run.join("containerd.sock");
    let address = format!("-address {}", socket.display());
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let cgroup = std::fs::read_to_string(entry.path().join("cgroup")).unwrap_or_default();
        let in_our_cgroups = cgroup.lines().any(|l| {
            l.split(':')
                .nth(2)
                .is_some_and(|p| p.starts_with(&format!("/{id}/")) || p == format!("/{id}"))
        });
        if cmdline.contains(&address) || in_our_cgroups {
            crate::controlplane::signal(pid, libc::SIGKILL);
        }
    }
}

/// Lazily unmounts every mount point at or below `roots`, deepest first.
fn unmount_below(roots: &[&Path]) {
    let Ok(mountinfo) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return;
    };
    let mut points: Vec<PathBuf> = mountinfo
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(unescape_mount_path)
        .filter(|p| roots.iter().any(|r| p.starts_with(r)))
        .collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    points.dedup();
    for point in points {
        if let Err(e) = rustix::mount::unmount(&point, rustix::mount::UnmountFlags::DETACH) {
            tracing::debug!("cannot unmount {}: {e}", point.display());
        }
    }
}

/// mountinfo escapes space, tab, newline and backslash as octal (`\040`).
fn unescape_mount_path(field: &str) -> PathBuf {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let digits: String = chars.by_ref().take(3).collect();
            match u8::from_str_radix(&digits, 8) {
                Ok(byte) => out.push(byte as char),
                Err(_) => {
                    out.push('\\');
                    out.push_str(&digits);
                }
            }
        } else {
            out.push(c);
        }
    }
    PathBuf::from(out)
}

/// Removes a cgroup directory and all below it, children first. A cgroup is removed
/// with rmdir only once no task is left in it, and a SIGKILLed task leaves its cgroup
/// a moment after the signal: what is still there is killed again and waited for, up
/// to 10 s in all.
fn remove_cgroup_tree(dir: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while dir.exists() {
        remove_empty_cgroups(dir);
        if !dir.exists() || std::time::Instant::now() > deadline {
            break;
        }
        for pid in tasks_below(dir) {
            crate::controlplane::signal(pid, libc::SIGKILL);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    if dir.exists() {
        tracing::warn!(
            "cannot remove cgroup {}: tasks are left in it",
            dir.display()
        );
    }
}

/// rmdir of `dir` and every cgroup below it, children first; a busy one stays.
fn remove_empty_cgroups(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_cgroups(&entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// The pids in `dir`'s `cgroup.procs` and those of every cgroup below it.
fn tasks_below(dir: &Path) -> Vec<u32> {
    let mut pids: Vec<u32> = std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            pids.extend(tasks_below(&entry.path()));
        }
    }
    pids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_id_names_its_supervisor() {
        assert_eq!(owner("kpn-123-456"), Some((123, 456)));
        assert_eq!(owner("kpn-123"), None);
        assert_eq!(owner("cni-1234-5678"), None);
        let id = node_id();
        assert_eq!(owner(&id).map(|(pid, _)| pid), Some(std::process::id()));
    }

    #[test]
    fn mountinfo_paths_are_unescaped() {
        assert_eq!(
            unescape_mount_path(r"/run/a\040b"),
            PathBuf::from("/run/a b")
        );
        assert_eq!(unescape_mount_path("/plain"), PathBuf::from("/plain"));
    }
}
