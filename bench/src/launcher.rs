//! The benchmark's launcher: runs one command, measures it, prints one line.
//!
//! `launcher TIMEOUT_MS STDOUT STDERR PROGRAM [ARG…]` prints
//! `code|signal N WALL_NS USER_NS SYS_NS MAXRSS_KIB TIMED_OUT`.
//!
//! Why a separate, tiny program: Linux's `ru_maxrss` of a process that `exec`s keeps
//! the peak RSS of the memory image it had before the exec, i.e. a copy of its
//! parent's. Forked from the bench (8 MiB and more, with the kube client loaded), every
//! command would measure at least that, which swamps a 3 MiB plugin. So the bench
//! compiles this file on its own with `rustc` (std only, no crates: a second or two),
//! and the floor that remains is this launcher's own ~1–2 MiB, which the report
//! states. The same file is also a module of the bench, so it is type-checked, linted and
//! unit-tested with the rest.
//!
//! The child is reaped with `wait4(2)`, which returns the rusage of exactly that
//! process (user and system CPU, `ru_maxrss`), including whatever it `exec`'d — which
//! matters for `kubectl run-pod`, where kubectl execs our binary in its own process.
//! The few libc calls are declared here by hand (the `libc` crate is not available to a
//! bare `rustc`); their signatures and the `rusage` layout are those of Linux on 64-bit
//! targets, where alone the bench runs (its cluster is Linux-only).

#![allow(unsafe_code)]

use std::fs::File;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

/// What the launcher measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw {
    pub exit: Exit,
    pub wall: Duration,
    pub user: Duration,
    pub sys: Duration,
    pub max_rss_kib: u64,
    pub timed_out: bool,
}

/// The launcher's one output line.
pub fn format_report(raw: &Raw) -> String {
    let (kind, value) = match raw.exit {
        Exit::Code(c) => ("code", c),
        Exit::Signal(s) => ("signal", s),
    };
    format!(
        "{kind} {value} {} {} {} {} {}",
        raw.wall.as_nanos(),
        raw.user.as_nanos(),
        raw.sys.as_nanos(),
        raw.max_rss_kib,
        u8::from(raw.timed_out)
    )
}

/// The entry point when compiled on its own (unused as a module of the bench).
#[allow(dead_code)]
pub fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let [timeout, stdout, stderr, program, rest @ ..] = args.as_slice() else {
        eprintln!("usage: launcher TIMEOUT_MS STDOUT STDERR PROGRAM [ARG…]");
        return ExitCode::from(2);
    };
    let Some(timeout) = timeout.to_str().and_then(|t| t.parse::<u64>().ok()) else {
        eprintln!("launcher: bad timeout {timeout:?}");
        return ExitCode::from(2);
    };
    let mut cmd = Command::new(program);
    cmd.args(rest);
    match run_direct(
        &mut cmd,
        Path::new(stdout),
        Path::new(stderr),
        Duration::from_millis(timeout),
    ) {
        Ok(raw) => {
            println!("{}", format_report(&raw));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("launcher: {}: {e}", program.to_string_lossy());
            ExitCode::FAILURE
        }
    }
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Timeval {
    tv_sec: i64,
    tv_usec: i64,
}

/// `struct rusage` (Linux, 64-bit): two timevals, then 14 longs starting with maxrss.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Rusage {
    ru_utime: Timeval,
    ru_stime: Timeval,
    ru_maxrss: i64,
    rest: [i64; 13],
}

unsafe extern "C" {
    fn wait4(pid: i32, status: *mut i32, options: i32, rusage: *mut Rusage) -> i32;
    fn waitid(idtype: i32, id: u32, infop: *mut u64, options: i32) -> i32;
    fn kill(pid: i32, sig: i32) -> i32;
}

const P_PID: i32 = 1;
const WEXITED: i32 = 4;
const WNOWAIT: i32 = 0x0100_0000;
const SIGKILL: i32 = 9;

/// Runs `cmd` with stdin from `/dev/null` and stdout/stderr into the given files (as a
/// user redirecting output would; a pipe would make the benchmark measure a reader),
/// and measures it. A run that outlives `timeout` is killed.
pub fn run_direct(
    cmd: &mut Command,
    stdout: &Path,
    stderr: &Path,
    timeout: Duration,
) -> std::io::Result<Raw> {
    cmd.stdin(Stdio::null())
        .stdout(File::create(stdout)?)
        .stderr(File::create(stderr)?);
    let started = Instant::now();
    let child = cmd.spawn()?;
    let pid = i32::try_from(child.id()).map_err(std::io::Error::other)?;

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
                // SAFETY: kill(2) has no memory-safety preconditions; the pid is our
                // unreaped child (checked under the lock above).
                unsafe { kill(pid, SIGKILL) };
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
    waited?;
    let (exit, usage) = reap(pid)?;
    // The child is reaped: std's handle must not wait for it again (it does not on drop).
    drop(child);
    Ok(Raw {
        exit,
        wall,
        user: duration(usage.ru_utime),
        sys: duration(usage.ru_stime),
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
        timed_out: timed_out.load(Ordering::SeqCst),
    })
}

fn duration(tv: Timeval) -> Duration {
    Duration::from_secs(u64::try_from(tv.tv_sec).unwrap_or(0))
        + Duration::from_micros(u64::try_from(tv.tv_usec).unwrap_or(0))
}

/// Blocks until the child has exited, leaving it unreaped.
fn wait_exited(pid: i32) -> std::io::Result<()> {
    loop {
        // siginfo_t is 128 bytes on Linux; the content is not needed.
        let mut info = [0u64; 16];
        // SAFETY: `info` is a live, large-enough buffer; `pid` is our own child.
        let rc = unsafe {
            waitid(
                P_PID,
                pid.unsigned_abs(),
                info.as_mut_ptr(),
                WEXITED | WNOWAIT,
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

fn reap(pid: i32) -> std::io::Result<(Exit, Rusage)> {
    let mut status = 0i32;
    let mut usage = Rusage::default();
    loop {
        // SAFETY: both pointers are to live locals of the right layout; `pid` is our
        // own child, not yet reaped.
        let rc = unsafe { wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    // WIFEXITED / WEXITSTATUS / WTERMSIG, as glibc defines them.
    let exit = if status & 0x7f == 0 {
        Exit::Code((status >> 8) & 0xff)
    } else {
        Exit::Signal(status & 0x7f)
    };
    Ok((exit, usage))
}
