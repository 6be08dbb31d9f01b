//! The local stdin of an attach session, read so that the session's end stops the
//! reading at once and not one byte typed afterwards is taken from the user's shell.
//!
//! tokio's `stdin()` reads in its blocking pool: a `read(2)` on the terminal that
//! nothing can cancel. When the remote shell ended, that read was still waiting;
//! dropping the runtime waits for the blocking pool, so the plugin stayed in the
//! foreground until the user pressed Enter, and that line went to the dead session
//! instead of the user's shell. kubectl leaves such a read to the Go
//! runtime, which abandons it when the process exits.
//!
//! Here (on Unix) a thread of its own waits in `poll(2)` for stdin *or* a wake-up
//! pipe, and reads only what `poll` reported as already there. [`Stop::stop`] marks
//! the reader stopped (waiting for a read under way, which returns at once because
//! its bytes were there) and wakes the thread: from then on no `read(2)` starts. The
//! thread is a plain `std::thread`, not part of tokio's blocking pool, so nothing
//! waits for it at exit either. stdin's file status flags are left alone (making the
//! terminal non-blocking would change it for the user's shell too, which shares it).
//!
//! On Windows the console has no `poll`; a detached thread reads (as kubectl's
//! goroutine does) and the process does not wait for it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Chunks of stdin, `None` at end of file.
pub type Chunks = tokio::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>;

const IDLE: u8 = 0;
#[cfg_attr(not(unix), allow(dead_code))]
const READING: u8 = 1;
const STOPPED: u8 = 2;

/// Stops the reader (also when dropped, so an interrupted session stops it too).
pub struct Stop {
    state: Arc<AtomicU8>,
    #[cfg(unix)]
    wake: Option<std::os::fd::OwnedFd>,
}

impl Stop {
    /// After this returns, no read of stdin is under way and none will start.
    pub fn stop(&mut self) {
        off_the_workers(|| self.wait_stopped());
        #[cfg(unix)]
        if let Some(wake) = self.wake.take() {
            // The thread sees the pipe readable (or closed) and returns.
            let _ = rustix::io::write(&wake, &[1]);
        }
    }

    /// Marks the reader stopped, waiting (up to 1 s, spinning) for a read under way.
    fn wait_stopped(&self) {
        let started = std::time::Instant::now();
        loop {
            match self
                .state
                .compare_exchange(IDLE, STOPPED, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) | Err(STOPPED) => break,
                // A read of bytes `poll` saw is under way; it returns without waiting.
                // The bound only matters if someone else took those bytes first, in
                // which case the read waits for new ones and nothing can be promised.
                Err(_) if started.elapsed() < std::time::Duration::from_secs(1) => {
                    std::thread::yield_now();
                }
                Err(_) => {
                    tracing::debug!("stdin: a read is still waiting; leaving it");
                    self.state.store(STOPPED, Ordering::SeqCst);
                    break;
                }
            }
        }
    }
}

/// Runs `wait` (a spin of up to 1 s) so that it blocks no task but its caller: on
/// the multi-threaded runtime the plugins use, a worker hands its other tasks over
/// first (`block_in_place`); elsewhere (a drop outside the runtime, a test's single
/// thread) it runs in place. `stop` is called from the session's task and from
/// `Drop`, which cannot await a blocking-pool task.
fn off_the_workers(wait: impl FnOnce()) {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(wait);
        }
        _ => wait(),
    }
}

impl Drop for Stop {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts reading stdin: the chunks read, and the handle that ends the reading.
pub fn start() -> std::io::Result<(Chunks, Stop)> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd as _;
        // The same open file as fd 0 (the terminal's settings and queue are shared),
        // owned by the reader so that it can be handed over.
        start_on(rustix::io::dup(std::io::stdin().as_fd())?)
    }
    #[cfg(not(unix))]
    {
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let state = Arc::new(AtomicU8::new(IDLE));
        let reader = state.clone();
        std::thread::Builder::new()
            .name("stdin".into())
            .spawn(move || other::read_until_stopped(&reader, &tx))?;
        Ok((rx, Stop { state }))
    }
}

/// [`start`] on any readable file (a terminal, a pipe, a file).
#[cfg(unix)]
fn start_on(input: std::os::fd::OwnedFd) -> std::io::Result<(Chunks, Stop)> {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let state = Arc::new(AtomicU8::new(IDLE));
    let (wake_read, wake_write) = rustix::pipe::pipe()?;
    for fd in [&input, &wake_read, &wake_write] {
        rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC)?;
    }
    let reader = state.clone();
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || unix::read_until_stopped(&input, &reader, &wake_read, &tx))?;
    Ok((
        rx,
        Stop {
            state,
            wake: Some(wake_write),
        },
    ))
}

#[cfg(unix)]
mod unix {
    use std::os::fd::{AsFd as _, OwnedFd};
    use std::sync::atomic::{AtomicU8, Ordering};

    use rustix::event::{PollFd, PollFlags, poll};

    use super::{IDLE, READING};

    type Sender = tokio::sync::mpsc::Sender<std::io::Result<Vec<u8>>>;

    pub fn read_until_stopped(input: &OwnedFd, state: &AtomicU8, wake: &OwnedFd, tx: &Sender) {
        let stdin = input.as_fd();
        let mut buf = vec![0u8; 32 * 1024];
        loop {
            let mut fds = [
                PollFd::new(&stdin, PollFlags::IN),
                PollFd::new(wake, PollFlags::IN),
            ];
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => {
                    let _ = tx.blocking_send(Err(e.into()));
                    return;
                }
            }
            if !fds[1].revents().is_empty() {
                return;
            }
            if fds[0].revents().is_empty() {
                continue;
            }
            // Readable, hung up or in error: the read below returns at once either way.
            if state
                .compare_exchange(IDLE, READING, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                return;
            }
            let read = rustix::io::read(stdin, &mut buf[..]);
            // `stop` waits for IDLE; it gives up only after a read that hung, and then
            // this thread must not go on.
            let stopped = state
                .compare_exchange(READING, IDLE, Ordering::SeqCst, Ordering::SeqCst)
                .is_err();
            let chunk = match read {
                Ok(0) => return, // end of file: dropping the sender says so
                Ok(n) => Ok(buf[..n].to_vec()),
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) if !stopped => continue,
                Err(e) => Err(e.into()),
            };
            let last = chunk.is_err() || stopped;
            // A send fails when the session is gone.
            if tx.blocking_send(chunk).is_err() || last {
                return;
            }
        }
    }
}

#[cfg(not(unix))]
mod other {
    use std::io::Read as _;
    use std::sync::atomic::{AtomicU8, Ordering};

    use super::STOPPED;

    type Sender = tokio::sync::mpsc::Sender<std::io::Result<Vec<u8>>>;

    pub fn read_until_stopped(state: &AtomicU8, tx: &Sender) {
        let mut stdin = std::io::stdin();
        let mut buf = vec![0u8; 32 * 1024];
        while state.load(Ordering::SeqCst) != STOPPED {
            let chunk = match stdin.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => Ok(buf[..n].to_vec()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
            };
            let last = chunk.is_err();
            if tx.blocking_send(chunk).is_err() || last {
                return;
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::time::Duration;

    use rustix::event::{PollFd, PollFlags, poll};

    use super::*;

    /// What is left in `fd` (read within a second of it becoming readable).
    fn left_in(fd: &std::os::fd::OwnedFd) -> Vec<u8> {
        let mut fds = [PollFd::new(fd, PollFlags::IN)];
        let second = rustix::event::Timespec {
            tv_sec: 1,
            tv_nsec: 0,
        };
        if poll(&mut fds, Some(&second)).unwrap_or(0) == 0 {
            return Vec::new();
        }
        let mut buf = [0u8; 64];
        let n = rustix::io::read(fd, &mut buf[..]).expect("read");
        buf[..n].to_vec()
    }

    /// The point of the stoppable reader: once stopped, the reader takes nothing more, and its
    /// thread ends (the channel closes) without any input arriving.
    #[test]
    fn after_stop_every_byte_stays_for_the_next_reader() {
        let (read, write) = rustix::pipe::pipe().expect("pipe");
        let ours = rustix::io::dup(&read).expect("dup");
        let (mut chunks, mut stop) = start_on(read).expect("start");
        rustix::io::write(&write, b"typed during the session").expect("write");
        assert_eq!(
            chunks.blocking_recv().and_then(Result::ok).as_deref(),
            Some(&b"typed during the session"[..])
        );
        stop.stop();
        // The thread is gone: its sender is dropped.
        assert!(chunks.blocking_recv().is_none());
        rustix::io::write(&write, b"echo rc=$?\n").expect("write");
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(left_in(&ours), b"echo rc=$?\n");
    }

    #[test]
    fn end_of_file_closes_the_chunks() {
        let (read, write) = rustix::pipe::pipe().expect("pipe");
        let (mut chunks, _stop) = start_on(read).expect("start");
        rustix::io::write(&write, b"last").expect("write");
        drop(write);
        assert_eq!(
            chunks.blocking_recv().and_then(Result::ok).as_deref(),
            Some(&b"last"[..])
        );
        assert!(chunks.blocking_recv().is_none());
    }

    /// Dropping the handle (a session cut short by Ctrl-C) stops the reader too.
    #[test]
    fn dropping_the_handle_stops_the_reader() {
        let (read, write) = rustix::pipe::pipe().expect("pipe");
        let ours = rustix::io::dup(&read).expect("dup");
        let (mut chunks, stop) = start_on(read).expect("start");
        drop(stop);
        assert!(chunks.blocking_recv().is_none());
        rustix::io::write(&write, b"x").expect("write");
        assert_eq!(left_in(&ours), b"x");
    }
}
