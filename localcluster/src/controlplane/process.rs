//! Child processes of the control plane: started with their output in a log file,
//! tied to the supervisor's life, stopped politely and then firmly.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use crate::process::{alive, signal, tail};

/// One running program (etcd, kube-apiserver, kube-controller-manager).
pub struct Process {
    pub name: &'static str,
    pub log: PathBuf,
    child: Child,
    /// How it was started, to start it again ([`Process::restart`]).
    program: PathBuf,
    args: Vec<String>,
}

impl Process {
    /// Starts `program args…` with stdout and stderr appended to `log`.
    ///
    /// The child gets `PR_SET_PDEATHSIG = SIGKILL`: if the supervisor dies, even by
    /// `kill -9`, the kernel kills the child too, so no etcd or apiserver outlives it.
    /// The signal fires when the *thread* that forked exits, so callers must spawn from
    /// a thread that lives as long as the supervisor (its main thread).
    pub fn spawn(
        name: &'static str,
        program: &Path,
        args: &[String],
        log: PathBuf,
    ) -> std::io::Result<Self> {
        let out = File::options().create(true).append(true).open(&log)?;
        let err = out.try_clone()?;
        let mut cmd = Command::new(program);
        cmd.args(args).stdin(Stdio::null()).stdout(out).stderr(err);
        set_parent_death_signal(&mut cmd);
        let child = cmd.spawn().map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot start {name} ({}): {e}", program.display()),
            )
        })?;
        Ok(Self {
            name,
            log,
            child,
            program: program.to_path_buf(),
            args: args.to_vec(),
        })
    }

    /// Stops the program (SIGTERM, then SIGKILL after `grace`) and starts it again
    /// with the same arguments (a restart on the same data, as after an upgrade or
    /// a crash-loop of a real control plane).
    pub fn restart(&mut self, grace: Duration) -> std::io::Result<()> {
        self.stop(grace);
        let restarted = Self::spawn(self.name, &self.program, &self.args, self.log.clone())?;
        *self = restarted;
        Ok(())
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `Some(status)` once the process has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The last `n` lines of the log, for error messages.
    pub fn log_tail(&self, n: usize) -> String {
        tail(&self.log, n)
    }

    /// SIGTERM, then SIGKILL after `grace`.
    pub fn stop(&mut self, grace: Duration) {
        if self.exited().is_some() {
            return;
        }
        signal(self.child.id(), libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if self.exited().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The first of `processes` that has exited, as "NAME exited (STATUS); last log lines
/// (LOG):" and its log's tail: what a supervisor reports when a component crashed.
pub fn first_crash(processes: &mut [Process]) -> Option<String> {
    processes.iter_mut().find_map(|p| {
        p.exited().map(|status| {
            format!(
                "{} exited ({status}); last log lines ({}):\n{}",
                p.name,
                p.log.display(),
                p.log_tail(20)
            )
        })
    })
}

fn set_parent_death_signal(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    #[allow(unsafe_code)]
    // SAFETY: the closure runs between fork and exec and only calls prctl(2), which is
    // async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
///
/// There is a window between releasing it and the child binding it; the caller
/// notices a lost race as a start-up failure with "address already in use" in the log.
pub fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

/// Waits until something accepts TCP connections on 127.0.0.1:`port`.
pub fn wait_for_port(port: u16, timeout: Duration, process: &mut Process) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        if std::net::TcpStream::connect_timeout(
            &([127, 0, 0, 1], port).into(),
            Duration::from_millis(200),
        )
        .is_ok()
        {
            return Ok(());
        }
        if let Some(status) = process.exited() {
            return Err(format!(
                "{} exited ({status}) before listening on port {port}; last log lines ({}):\n{}",
                process.name,
                process.log.display(),
                process.log_tail(15)
            ));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "{} did not listen on port {port} within {timeout:?}; see {}",
                process.name,
                process.log.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
