//! The command's stdout and stderr: the writers the skeleton put in `cli::Context`
//! (the process's, remembering a closed pipe: `apiclient::output`), or a test's
//! buffers. Every line create-file prints goes through them, so that a test of the
//! create path (the scripted server's, the `scripted` crate) sees exactly what a user
//! would, and so that the closed-pipe rules hold on one path.
//!
//! The results go to stdout off the async workers ([`Writers::write_stdout`]): a
//! stdout that is a full pipe (a reader that stopped reading) then blocks a thread of
//! the blocking pool, not the runtime, as tokio's own stdout would. Lines on stderr
//! (warnings, the wait's causes, the report) are short and written where they are
//! said, as `eprintln!` would.

use std::io::{self, Write};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A writer the command owns (the context's are `Box<dyn Write + Send>`).
pub type Writer = Box<dyn Write + Send>;

/// stdout and stderr, shared by the creates in flight.
pub struct Writers {
    /// `None` only while a write is on the blocking pool.
    stdout: Mutex<Option<Writer>>,
    stderr: Mutex<Writer>,
}

impl Writers {
    pub fn new(stdout: Writer, stderr: Writer) -> Self {
        Self {
            stdout: Mutex::new(Some(stdout)),
            stderr: Mutex::new(stderr),
        }
    }

    /// The writers of `ctx`, taken: from here on the command writes through these
    /// only (the context keeps sinks it no longer uses).
    pub fn take(ctx: &mut cli::Context) -> Self {
        Self::new(
            std::mem::replace(&mut ctx.stdout, Box::new(io::sink())),
            std::mem::replace(&mut ctx.stderr, Box::new(io::sink())),
        )
    }

    /// Writes `bytes` to stdout and flushes, on the blocking pool. A closed stdout is
    /// the writer's error (`apiclient::output::is_closed` tells it).
    pub async fn write_stdout(&self, bytes: Vec<u8>) -> io::Result<()> {
        // One result is written at a time (the output is in order); a second writer
        // would find the slot empty and is a bug, said as an error rather than a
        // panic.
        let taken = lock(&self.stdout).take();
        let Some(mut out) = taken else {
            return Err(io::Error::other("stdout is being written already"));
        };
        let joined = tokio::task::spawn_blocking(move || {
            let written = out.write_all(&bytes).and_then(|()| out.flush());
            (out, written)
        })
        .await;
        match joined {
            Ok((out, written)) => {
                *lock(&self.stdout) = Some(out);
                written
            }
            // The write panicked (not ours to hide) or the runtime is shutting down.
            Err(e) => Err(io::Error::other(e)),
        }
    }

    /// Writes `line` and a newline to stderr, as `eprintln!` does, without its panic
    /// on a closed stderr (the process's writer records it; there is nowhere left to
    /// say anything).
    pub fn eprintln(&self, line: impl std::fmt::Display) {
        let _ = writeln!(self.stderr(), "{line}");
    }

    /// stderr, for a longer text written at once (the report of failures).
    pub fn stderr(&self) -> MutexGuard<'_, Writer> {
        lock(&self.stderr)
    }
}

/// A writer is left whole by a panicking writer: the lock is taken regardless.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
