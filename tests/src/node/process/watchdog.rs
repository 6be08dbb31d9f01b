//! Kills the containers' process groups when the process running the node
//! dies, however it dies: `kill -9` included.
//!
//! `PR_SET_PDEATHSIG` (set on every container's main process, see
//! [`super::spawn`]) only reaches the node's direct children: a shell's
//! background job, a grandchild, has no parent-death signal and is adopted by
//! init when its parent goes. A child subreaper (`PR_SET_CHILD_SUBREAPER`)
//! does not help either: it adopts orphans only while it lives, and a process
//! killed with SIGKILL runs no code to kill them. Something must survive the
//! node to do it, so the first container start forks a watchdog:
//!
//! - the node writes each container's process group id into a pipe when the
//!   container starts, and its negation once the group is gone;
//! - the watchdog keeps the set of live groups and blocks reading the pipe;
//! - when the node's process ends, the kernel closes the pipe's write end
//!   (close-on-exec, so no container holds it), the watchdog reads end of
//!   file, SIGKILLs every group still in its set and exits.
//!
//! A real kubelet gets the same from the container runtime (a container's
//! processes share a PID namespace, and its init's death kills them all).
//! Processes that leave their group (`setsid`, `setpgid`) escape, as they
//! would escape a kubelet's process-group signal too.
//!
//! The watchdog is a plain `fork` of the node's process: it runs only
//! async-signal-safe system calls (`read`, `kill`, `close`, `_exit`) and
//! allocates nothing, so forking from a multi-threaded process is sound. It
//! closes every inherited descriptor but its pipe at once, so it keeps no
//! socket, pipe or listener of the node alive.

use std::fs::File;
use std::io::Write as _;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::sync::{Mutex, OnceLock, PoisonError};

/// The most process groups the watchdog tracks at once; more (not expected on
/// a test node) are not tracked, and only their parent-death signal remains.
const CAPACITY: usize = 4096;

/// The write end of the watchdog's pipe, `None` if it could not be started.
static WATCHDOG: OnceLock<Option<Mutex<File>>> = OnceLock::new();

/// Tracks the process group `pgid` of a container that just started.
pub fn register(pgid: i32) {
    if pgid > 0 {
        send(pgid);
    }
}

/// Forgets the process group `pgid` once it was killed or is empty.
pub fn unregister(pgid: i32) {
    if pgid > 0 {
        send(-pgid);
    }
}

fn send(record: i32) {
    let Some(pipe) = WATCHDOG.get_or_init(start) else {
        return;
    };
    // Four bytes are below PIPE_BUF, so every record arrives whole.
    let mut pipe = pipe.lock().unwrap_or_else(PoisonError::into_inner);
    if let Err(e) = pipe.write_all(&record.to_ne_bytes()) {
        tracing::debug!(error = %e, "the container watchdog is gone");
    }
}

fn start() -> Option<Mutex<File>> {
    match fork_watchdog() {
        Ok(pipe) => Some(Mutex::new(pipe)),
        Err(e) => {
            tracing::warn!(error = %e, "cannot start the container watchdog; grandchildren of containers may outlive a killed node");
            None
        }
    }
}

fn fork_watchdog() -> std::io::Result<File> {
    let mut fds = [0 as RawFd; 2];
    #[allow(unsafe_code)]
    // SAFETY: pipe2 writes two descriptors into `fds`, which it may.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    #[allow(unsafe_code)]
    // SAFETY: pipe2 succeeded: both descriptors are open and owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    #[allow(unsafe_code)]
    // SAFETY: the child runs `watch`, which only makes async-signal-safe system
    // calls on memory of its own stack and never returns (see the module doc).
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(std::io::Error::last_os_error()),
        0 => watch(read.as_raw_fd()),
        _ => {
            drop(read);
            Ok(File::from(write))
        }
    }
}

/// The watchdog: collects process groups from `pipe` until end of file, then
/// kills them. Never returns.
fn watch(pipe: RawFd) -> ! {
    #[allow(unsafe_code)]
    // SAFETY: only async-signal-safe calls (setsid, signal, sigprocmask, dup2,
    // close, read, kill, _exit) on local memory; see the module doc.
    unsafe {
        // Out of the node's process group, so a Ctrl-C at the terminal stops
        // the node (which then stops its containers) and not the watchdog first.
        libc::setsid();
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &raw const none, std::ptr::null_mut());
        // The pipe becomes fd 0; every other inherited descriptor is closed.
        if libc::dup2(pipe, 0) < 0 {
            libc::_exit(1);
        }
        if libc::syscall(libc::SYS_close_range, 1u32, u32::MAX, 0u32) != 0 {
            // Kernels before 5.9: close them one by one.
            for fd in 1..65536 {
                libc::close(fd);
            }
        }

        let mut groups = [0i32; CAPACITY];
        let mut count = 0usize;
        let mut record = [0u8; 4];
        let mut filled = 0usize;
        let mut buf = [0u8; 512];
        loop {
            let n = libc::read(0, buf.as_mut_ptr().cast(), buf.len());
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            if n <= 0 {
                break;
            }
            for &byte in &buf[..n.unsigned_abs()] {
                record[filled] = byte;
                filled += 1;
                if filled < record.len() {
                    continue;
                }
                filled = 0;
                let value = i32::from_ne_bytes(record);
                let tracked = &mut groups[..count];
                if value > 0 {
                    if !tracked.contains(&value) && count < CAPACITY {
                        groups[count] = value;
                        count += 1;
                    }
                } else if let Some(at) = tracked.iter().position(|g| *g == -value) {
                    groups[at] = groups[count - 1];
                    count -= 1;
                }
            }
        }
        for &pgid in &groups[..count] {
            libc::kill(-pgid, libc::SIGKILL);
        }
        libc::_exit(0)
    }
}
