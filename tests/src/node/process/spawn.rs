//! Starting one container process: the argv exec'd directly (no shell, as a
//! container runtime does it), in its own process group (session, with a
//! terminal), dying with the node (`PR_SET_PDEATHSIG` for the process itself,
//! the [`watchdog`](super::watchdog) for its whole group), its output pumped
//! into a [`Run`] and its stdin fed from it.
//!
//! When the process exits, what is left of its group is killed at once: a
//! container ends with its main process (its PID namespace's init), so a
//! shell's background job does not outlive it.
//!
//! Output and input are moved by plain threads doing blocking reads and
//! writes: pipes and pseudo-terminals then behave the same, and a container
//! costs two or three mostly idle threads, which a test node can afford.

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::io::{Input, Run, Stream};
use super::volumes::{Mounts, PreparedMounts};

/// What to start.
pub struct Spec<'a> {
    /// argv; `argv[0]` is looked up in the container's `PATH`.
    pub argv: &'a [String],
    /// The complete environment.
    pub env: &'a [(String, String)],
    /// Working directory.
    pub dir: &'a Path,
    /// Volumes bound in a mount namespace of the process's own.
    pub mounts: &'a Mounts,
    /// Allocate a pseudo-terminal.
    pub tty: bool,
    /// Keep stdin open for attach/exec input.
    pub stdin: bool,
}

/// A started process.
pub struct Started {
    /// Process (and process group) id.
    pub pid: i32,
    /// Resolves with the exit code (128+N after signal N) once the process
    /// exited, the rest of its group was killed, and its output was read to
    /// the end (or for at most 2s more, when a process that left the group
    /// keeps the output open).
    pub exited: oneshot::Receiver<i32>,
}

/// Starts `spec`, writing output into `run` and feeding it `input`.
pub fn spawn(
    spec: &Spec<'_>,
    run: &Arc<Run>,
    input: mpsc::UnboundedReceiver<Input>,
) -> std::io::Result<Started> {
    let Some(program) = spec.argv.first() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "no command given",
        ));
    };
    let mut cmd = Command::new(program);
    cmd.args(&spec.argv[1..])
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(spec.dir);
    let mounts = spec.mounts.prepare()?;

    let mut readers = Vec::new();
    let child = if spec.tty {
        let (master, slave) = open_pty()?;
        let slave = File::from(slave);
        cmd.stdin(Stdio::from(slave.try_clone()?))
            .stdout(Stdio::from(slave.try_clone()?))
            .stderr(Stdio::from(slave));
        prepare(&mut cmd, true, mounts);
        let child = cmd.spawn()?;
        // The parent's copies of the terminal's slave side are closed now
        // (the Command owned them), so reads on the master end with EIO
        // once the process and its children are gone.
        drop(cmd);
        let master = Arc::new(File::from(master));
        readers.push(pump(Arc::clone(&master), Arc::clone(run), Stream::Stdout));
        feed(input, Some(master.clone()), Some(master));
        child
    } else {
        cmd.stdin(if spec.stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        prepare(&mut cmd, false, mounts);
        let mut child = cmd.spawn()?;
        if let Some(out) = child.stdout.take() {
            readers.push(pump(
                Arc::new(File::from(OwnedFd::from(out))),
                Arc::clone(run),
                Stream::Stdout,
            ));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(pump(
                Arc::new(File::from(OwnedFd::from(err))),
                Arc::clone(run),
                Stream::Stderr,
            ));
        }
        let stdin = child
            .stdin
            .take()
            .map(|s| Arc::new(File::from(OwnedFd::from(s))));
        feed(input, stdin, None);
        child
    };

    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    super::watchdog::register(pid);
    let (tx, exited) = oneshot::channel();
    let mut child = child;
    std::thread::Builder::new()
        .name(format!("wait-{pid}"))
        .spawn(move || {
            let code = match child.wait() {
                Ok(status) => exit_code(status),
                Err(_) => 128 + libc::SIGKILL,
            };
            signal_group(pid, libc::SIGKILL);
            super::watchdog::unregister(pid);
            let deadline = std::time::Instant::now() + Duration::from_secs(2);
            for reader in readers {
                while !reader.is_finished() && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            let _ = tx.send(code);
        })?;
    Ok(Started { pid, exited })
}

/// The shell's convention: the exit code, or 128 + the terminating signal.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt as _;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(128)
}

/// Copies one output into the run until end of file (or EIO: terminal gone).
fn pump(source: Arc<File>, run: Arc<Run>, stream: Stream) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match (&*source).read(&mut buf) {
                Ok(0) => break,
                Ok(n) => run.push(stream, &buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    })
}

/// Writes input to stdin (or the terminal) until the run ends or stdin is
/// closed; resizes the terminal when there is one.
fn feed(
    mut input: mpsc::UnboundedReceiver<Input>,
    stdin: Option<Arc<File>>,
    terminal: Option<Arc<File>>,
) {
    std::thread::spawn(move || {
        let mut stdin = stdin;
        while let Some(message) = input.blocking_recv() {
            match message {
                Input::Data(bytes) => {
                    if let Some(f) = &stdin
                        && (&**f).write_all(&bytes).is_err()
                    {
                        stdin = None;
                    }
                }
                Input::Eof => {
                    if terminal.is_some() {
                        // A terminal has no end of file of its own: ^D
                        // at the start of a line is how a user sends one.
                        if let Some(f) = &stdin {
                            let _ = (&**f).write_all(&[4]);
                        }
                    }
                    stdin = None;
                }
                Input::Resize { width, height } => {
                    if let Some(t) = &terminal {
                        let _ = resize(t, width, height);
                    }
                }
            }
        }
    });
}

/// Sets a terminal's size (TIOCSWINSZ; the process gets SIGWINCH).
pub fn resize(terminal: &File, width: u16, height: u16) -> std::io::Result<()> {
    let size = rustix::termios::Winsize {
        ws_row: height,
        ws_col: width,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    rustix::termios::tcsetwinsize(terminal, size).map_err(std::io::Error::from)
}

/// A pseudo-terminal pair (master, slave), 80x24 like a fresh terminal.
fn open_pty() -> std::io::Result<(OwnedFd, OwnedFd)> {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let name = ptsname(&master, Vec::new())?;
    let slave = rustix::fs::open(
        name.as_c_str(),
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    let _ = resize(&File::from(slave.try_clone()?), 80, 24);
    Ok((master, slave))
}

/// Between fork and exec: die with the node, and get a process group of
/// its own (a session with the terminal as controlling tty when `tty`), so
/// that signals reach the whole container, shells' children included; then
/// the container's volumes in a mount namespace of its own
/// ([`PreparedMounts::enter`]).
fn prepare(cmd: &mut Command, tty: bool, mounts: PreparedMounts) {
    use std::os::unix::process::CommandExt;
    #[allow(unsafe_code)]
    // SAFETY: the closure runs between fork and exec and only calls
    // async-signal-safe system calls (prctl, setsid, setpgid, ioctl,
    // unshare, mount) that touch no memory of the parent.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if tty {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::setpgid(0, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            mounts.enter()
        });
    }
}

/// Signals a container's whole process group.
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 0 {
        #[allow(unsafe_code)]
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}
