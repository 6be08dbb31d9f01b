//! Running one command and measuring it: wall time, CPU time and peak memory.
//!
//! The child is reaped with `wait4(2)`, which returns the rusage of exactly that
//! process (user and system CPU, `ru_maxrss`), including whatever it `exec`'d — which
//! matters for `kubectl run-pod`, where kubectl execs our binary in its own process.
//! `getrusage(RUSAGE_CHILDREN)` would mix every child ever reaped, and std's `Child`
//! has no way to return rusage, hence libc.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;

/// How a run ended, and what it cost.
#[derive(Debug, Clone)]
pub struct Run {
    pub exit: Exit,
    pub wall: Duration,
    pub user: Duration,
    pub sys: Duration,
    pub max_rss_kib: u64,
    /// The start of stderr (for error messages).
    pub stderr: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl Exit {
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
        }
    }
}

/// Runs `cmd` to completion with stdin from `/dev/null`, stdout and stderr into files
/// in `scratch` (as a user redirecting output would; a pipe would make the benchmark
/// measure our reader), and measures it. A run that outlives `timeout` is killed.
pub fn run(cmd: &mut Command, scratch: &Path, timeout: Duration) -> anyhow::Result<Run> {
    let stdout = File::create(scratch.join("stdout"))?;
    let stderr_path = scratch.join("stderr");
    let stderr = File::create(&stderr_path)?;
    cmd.stdin(Stdio::null()).stdout(stdout).stderr(stderr);
    let program = cmd.get_program().to_string_lossy().into_owned();
    let started = Instant::now();
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot run {program}"))?;
    let pid = libc::pid_t::try_from(child.id()).map_err(std::io::Error::other)?;

    // The watchdog may only signal the pid while it is still our child: until the child
    // is reaped its pid cannot be reused. So the main thread first waits for the exit
    // without reaping (WNOWAIT), marks the child finished under the lock, and only then
    // reaps it with wait4.
    let finished = Arc::new((Mutex::new(false), Condvar::new()));
    let timed_out = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let finished = Arc::clone(&finished);
        let timed_out = Arc::clone(&timed_out);
        std::thread::spawn(move || {
            let (lock, cv) = &*finished;
            let Ok(guard) = lock.lock() else { return };
            let Ok((guard, result)) = cv.wait_timeout_while(guard, timeout, |done| !*done) else {
                return;
            };
            if result.timed_out() && !*guard {
                timed_out.store(true, Ordering::SeqCst);
                ::tests::controlplane::signal(pid.unsigned_abs(), libc::SIGKILL);
            }
        })
    };
    let waited = wait_exited(pid);
    let wall = started.elapsed();
    {
        let (lock, cv) = &*finished;
        if let Ok(mut done) = lock.lock() {
            *done = true;
        }
        cv.notify_all();
    }
    let _ = watchdog.join();
    waited.with_context(|| format!("waiting for {program}"))?;
    let (status, usage) = wait4(pid).with_context(|| format!("reaping {program}"))?;
    // The child is reaped: std's handle must not wait for it again (it does not on drop).
    drop(child);
    let mut text = String::new();
    File::open(&stderr_path)?
        .take(4096)
        .read_to_string(&mut text)
        .ok();
    if timed_out.load(Ordering::SeqCst) {
        text = format!("timed out after {timeout:?} and was killed\n{text}");
    }
    Ok(Run {
        exit: status,
        wall,
        user: timeval(usage.ru_utime),
        sys: timeval(usage.ru_stime),
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
        stderr: text,
    })
}

/// Blocks until the child has exited, leaving it unreaped.
fn wait_exited(pid: libc::pid_t) -> std::io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain old data; all-zero is a valid value.
        #[allow(unsafe_code)]
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a live local; `pid` is our own child.
        #[allow(unsafe_code)]
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid.unsigned_abs(),
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(u64::try_from(tv.tv_sec).unwrap_or(0))
        + Duration::from_micros(u64::try_from(tv.tv_usec).unwrap_or(0))
}

fn wait4(pid: libc::pid_t) -> std::io::Result<(Exit, libc::rusage)> {
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; all-zero is a valid value.
    #[allow(unsafe_code)]
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: both pointers are to live locals of the right types; `pid` is our
        // own child, not yet reaped.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    let exit = if libc::WIFEXITED(status) {
        Exit::Code(libc::WEXITSTATUS(status))
    } else {
        Exit::Signal(libc::WTERMSIG(status))
    };
    Ok((exit, usage))
}

/// The first line of stderr that says something, for one-line reports.
pub fn first_line(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no message)")
        .chars()
        .take(160)
        .collect()
}

/// Whether a failed run says the feature is not there yet: the plugin's own
/// "not implemented", or a command-line parser that does not know the case's flags
/// or arguments (a plugin whose flags are not written yet). Judged from the real
/// output of the real command, never from a list of what is done.
pub fn looks_unimplemented(exit: Exit, stderr: &str) -> bool {
    let text = stderr.to_ascii_lowercase();
    text.contains("not implemented")
        || (exit == Exit::Code(2)
            && (text.contains("unexpected argument") || text.contains("unrecognized")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_a_real_child() {
        let dir = tempfile::tempdir().unwrap();
        let run = run(
            Command::new("sh").args(["-c", "echo oops >&2; exit 3"]),
            dir.path(),
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(run.exit, Exit::Code(3));
        assert_eq!(run.stderr, "oops\n");
        assert!(run.max_rss_kib > 0);
        assert!(run.wall > Duration::ZERO);
    }

    #[test]
    fn a_run_past_its_timeout_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let run = run(
            Command::new("sleep").arg("30"),
            dir.path(),
            Duration::from_millis(200),
        )
        .unwrap();
        assert_eq!(run.exit, Exit::Signal(libc::SIGKILL));
        assert!(run.stderr.starts_with("timed out after"), "{}", run.stderr);
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn unimplemented_is_recognised_from_messages() {
        assert!(looks_unimplemented(
            Exit::Code(1),
            "error: kubectl run-pod is not implemented yet\n"
        ));
        assert!(looks_unimplemented(
            Exit::Code(2),
            "error: unexpected argument '--image' found\n"
        ));
        assert!(!looks_unimplemented(
            Exit::Code(1),
            "error: unexpected argument '--image' found\n"
        ));
        assert!(!looks_unimplemented(
            Exit::Code(1),
            "Error from server (Forbidden): pods is forbidden\n"
        ));
    }

    #[test]
    fn first_line_skips_blank_lines() {
        assert_eq!(first_line("\n  \nerror: x\nmore"), "error: x");
        assert_eq!(first_line(""), "(no message)");
    }
}
