//! Probes of the cluster's processes by pid (Unix only: the cluster runs on Linux), and
//! the log tail that error messages quote.

use std::path::Path;

/// Sends `sig` to `pid`; false if there is no such process.
#[cfg(unix)]
pub fn signal(pid: u32, sig: i32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    #[allow(unsafe_code)]
    // SAFETY: kill(2) has no memory-safety preconditions.
    let rc = unsafe { libc::kill(pid, sig) };
    rc == 0
}

/// Whether a process with this pid exists (signal 0 probes without sending).
#[cfg(unix)]
pub fn alive(pid: u32) -> bool {
    signal(pid, 0)
}

/// The last `n` lines of a text file ("" if unreadable).
pub fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
