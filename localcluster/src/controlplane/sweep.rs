//! etcd data directories in `/dev/shm` left behind by supervisors that died
//! without cleaning up (`kill -9`, OOM, a power cut of the test runner), and
//! removing them when the next cluster starts.
//!
//! A directory is named `kubeplug-etcd-<pid>-<start>-<port>`: the supervisor's
//! pid and its start time (field 22 of `/proc/<pid>/stat`, in clock ticks since
//! boot), so that a pid reused by another process is not mistaken for the owner.
//! Directories of the older `kubeplug-etcd-<pid>-<port>` form carry no start
//! time: they are removed only once no process has that pid.
//!
//! The decision ([`is_stale`]) is a pure function of the name and what the
//! process table says, so it is tested without touching `/proc`.

use std::path::{Path, PathBuf};

/// The prefix of every etcd data directory in `/dev/shm`.
pub const PREFIX: &str = "kubeplug-etcd-";

/// Who made a data directory, as its name tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub pid: u32,
    /// `None` for names of the older form, without a start time.
    pub start_time: Option<u64>,
}

/// What the process table says about a pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessState {
    /// No such process.
    Gone,
    /// A process with this start time (`None` if it could not be read).
    Running { start_time: Option<u64> },
}

/// The directory name for a supervisor (`pid`, `start_time`) and a unique number.
pub fn dir_name(pid: u32, start_time: Option<u64>, unique: u16) -> String {
    match start_time {
        Some(start) => format!("{PREFIX}{pid}-{start}-{unique}"),
        None => format!("{PREFIX}{pid}-{unique}"),
    }
}

/// The owner a directory name records; `None` for names that are not ours.
pub fn owner_of(name: &str) -> Option<Owner> {
    let rest = name.strip_prefix(PREFIX)?;
    let parts: Vec<&str> = rest.split('-').collect();
    let number = |s: &str| s.parse::<u64>().ok();
    match parts.as_slice() {
        [pid, port] => {
            number(port)?;
            Some(Owner {
                pid: pid.parse().ok()?,
                start_time: None,
            })
        }
        [pid, start, port] => {
            number(port)?;
            Some(Owner {
                pid: pid.parse().ok()?,
                start_time: Some(number(start)?),
            })
        }
        _ => None,
    }
}

/// Whether the directory of `owner` may be removed: its process is gone, or
/// the pid now belongs to a process that started at another time. When in
/// doubt (start time unknown on either side, pid alive) the directory stays:
/// it may hold the data of a running cluster.
pub fn is_stale(owner: Owner, state: ProcessState) -> bool {
    match (state, owner.start_time) {
        (ProcessState::Gone, _) => true,
        (
            ProcessState::Running {
                start_time: Some(now),
            },
            Some(recorded),
        ) => now != recorded,
        (ProcessState::Running { .. }, _) => false,
    }
}

/// The state of `pid` from `/proc`; `None` when there is no `/proc` to ask
/// (then nothing is known to be stale).
pub fn probe(pid: u32) -> Option<ProcessState> {
    if !Path::new("/proc/self/stat").exists() {
        return None;
    }
    if pid == 0 || !Path::new(&format!("/proc/{pid}")).exists() {
        return Some(ProcessState::Gone);
    }
    Some(ProcessState::Running {
        start_time: start_time(pid),
    })
}

pub use crate::host::start_time;

/// Removes the stale data directories under `dir` (see [`is_stale`]), asking
/// `probe` about their owners; returns what was removed.
pub fn sweep(dir: &Path, probe: impl Fn(u32) -> Option<ProcessState>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name.to_str().and_then(owner_of) else {
            continue;
        };
        // Only directories (a symlink is not followed: remove_dir_all would
        // not follow it either, but a file of that name is not ours to judge).
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if probe(owner.pid).is_some_and(|state| is_stale(owner, state)) {
            let path = entry.path();
            match std::fs::remove_dir_all(&path) {
                Ok(()) => removed.push(path),
                Err(e) => {
                    tracing::debug!(path = %path.display(), error = %e, "cannot remove a stale etcd data directory");
                }
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::parse_start_time;

    #[test]
    fn names_round_trip_and_foreign_names_are_ignored() {
        assert_eq!(
            owner_of(&dir_name(42, Some(12345), 8080)),
            Some(Owner {
                pid: 42,
                start_time: Some(12345)
            })
        );
        assert_eq!(
            owner_of("kubeplug-etcd-1288-42081"),
            Some(Owner {
                pid: 1288,
                start_time: None
            })
        );
        for foreign in [
            "kubeplug-etcd-",
            "kubeplug-etcd-abc-1",
            "kubeplug-etcd-1",
            "kubeplug-etcd-1-2-3-4",
            "kubeplug-etcd-1-x",
            "other-etcd-1-2",
            "kubeplug-etcd-1-2-x",
        ] {
            assert_eq!(owner_of(foreign), None, "{foreign}");
        }
    }

    #[test]
    fn stale_only_when_the_owner_is_gone_or_the_pid_was_reused() {
        let new = Owner {
            pid: 7,
            start_time: Some(100),
        };
        let old = Owner {
            pid: 7,
            start_time: None,
        };
        let running = |t| ProcessState::Running { start_time: t };
        assert!(is_stale(new, ProcessState::Gone));
        assert!(is_stale(old, ProcessState::Gone));
        assert!(!is_stale(new, running(Some(100))), "the owner itself");
        assert!(is_stale(new, running(Some(555))), "pid reused");
        assert!(!is_stale(new, running(None)), "unknown start time: keep");
        assert!(
            !is_stale(old, running(Some(555))),
            "old names: keep while the pid lives"
        );
    }

    #[test]
    fn start_time_is_field_22_even_with_parentheses_in_the_name() {
        let stat =
            "123 (we ird) (x)) S 1 123 123 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 10";
        assert_eq!(parse_start_time(stat), Some(98765));
        assert_eq!(parse_start_time("garbage"), None);
        let own = start_time(std::process::id());
        assert!(own.is_some(), "our own start time is readable");
        assert_eq!(
            probe(std::process::id()),
            Some(ProcessState::Running { start_time: own })
        );
    }

    #[test]
    fn sweep_removes_exactly_the_stale_directories() {
        let dir = tempfile::tempdir().expect("temp dir");
        let make = |name: &str| {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.join("member/snap")).expect("mkdir");
            std::fs::write(path.join("member/snap/db"), b"data").expect("write");
            path
        };
        let dead = make(&dir_name(10, Some(1), 1));
        let reused = make(&dir_name(11, Some(1), 2));
        let live = make(&dir_name(12, Some(5), 3));
        let legacy_dead = make("kubeplug-etcd-13-4");
        let legacy_live = make("kubeplug-etcd-12-5");
        let foreign = make("something-else-10-1");
        let file = dir.path().join(dir_name(10, Some(1), 9));
        std::fs::write(&file, b"not a directory").expect("write");

        let probe = |pid| {
            Some(match pid {
                11 | 12 => ProcessState::Running {
                    start_time: Some(5),
                },
                _ => ProcessState::Gone,
            })
        };
        let mut removed = sweep(dir.path(), probe);
        removed.sort();
        let mut expected = vec![dead.clone(), reused.clone(), legacy_dead.clone()];
        expected.sort();
        assert_eq!(removed, expected);
        for gone in [&dead, &reused, &legacy_dead] {
            assert!(!gone.exists(), "{}", gone.display());
        }
        for kept in [&live, &legacy_live, &foreign, &file] {
            assert!(kept.exists(), "{}", kept.display());
        }
        assert!(sweep(&dir.path().join("missing"), probe).is_empty());
        // Without a process table nothing is known to be stale.
        let again = make(&dir_name(10, Some(1), 1));
        assert!(sweep(dir.path(), |_| None).is_empty());
        assert!(again.exists());
    }
}
