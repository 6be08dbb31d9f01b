//! The process's stdout and stderr, as every path of every plugin writes them: writers
//! that remember a closed pipe (`| head -1`), so that the command stops its work and
//! ends as kubectl ends (`cli::finish`), whichever path met the closed pipe first.
//!
//! Rust starts a program with SIGPIPE ignored, so a write to a closed pipe fails with
//! `BrokenPipe` where kubectl, a Go program, dies of SIGPIPE at its first write to a
//! closed fd 1 or 2. The error alone is not enough to act on: it surfaces wherever the
//! write happened (a spawned copy task, a log line, a warning), often where it is
//! ignored. So each writer here records the closed stream process-wide ([`closed`],
//! [`wait_closed`]) and returns an `io::Error` whose inner error is [`Closed`], which
//! tells it apart from a `BrokenPipe` of a socket.
//!
//! A bottom module: `warnings` writes its `Warning:` lines through it, and the crates
//! above (resources' klog warnings, cli's writers and `finish`, the plugins' async
//! copies) do too.

use std::io::{self, Write};
use std::pin::Pin;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use tokio::sync::watch;

/// Which of the two outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl std::fmt::Display for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        })
    }
}

/// A write to a closed stdout or stderr, in Go's words for it (`write /dev/stdout:
/// broken pipe`): the inner error of the `BrokenPipe` the writers return.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("write /dev/{0}: broken pipe")]
pub struct Closed(pub Stream);

/// The first output found closed, if any.
static CLOSED: LazyLock<watch::Sender<Option<Stream>>> = LazyLock::new(|| watch::Sender::new(None));

/// Whether each output was found closed (the watch above holds only the first).
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

/// The output found closed first, if one was.
pub fn closed() -> Option<Stream> {
    *CLOSED.borrow()
}

/// Whether a write found `stream` closed.
pub fn is_stream_closed(stream: Stream) -> bool {
    match stream {
        Stream::Stdout => STDOUT_CLOSED.load(Ordering::Relaxed),
        Stream::Stderr => STDERR_CLOSED.load(Ordering::Relaxed),
    }
}

/// Resolves once a write found stdout or stderr closed (at once if one did already).
pub async fn wait_closed() -> Stream {
    let mut rx = CLOSED.subscribe();
    if let Ok(stream) = rx.wait_for(Option::is_some).await
        && let Some(stream) = *stream
    {
        return stream;
    }
    // The sender is a static: it is never dropped, so this is not reached.
    std::future::pending().await
}

/// Whether `err` (anywhere in its chain) is a write to a closed stdout or stderr.
pub fn is_closed(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(err);
    while let Some(e) = cause {
        if e.is::<Closed>() {
            return true;
        }
        if let Some(io) = e.downcast_ref::<io::Error>()
            && io.get_ref().is_some_and(|inner| inner.is::<Closed>())
        {
            return true;
        }
        cause = e.source();
    }
    false
}

/// Records `stream` as closed if `err` says it is, and returns the error to pass on
/// (with [`Closed`] inside, if so).
pub fn note(stream: Stream, err: io::Error) -> io::Error {
    if err.kind() != io::ErrorKind::BrokenPipe || is_closed(&err) {
        return err;
    }
    mark(stream);
    io::Error::new(io::ErrorKind::BrokenPipe, Closed(stream))
}

/// Records `stream` as closed; the first one recorded is kept.
fn mark(stream: Stream) {
    match stream {
        Stream::Stdout => STDOUT_CLOSED.store(true, Ordering::Relaxed),
        Stream::Stderr => STDERR_CLOSED.store(true, Ordering::Relaxed),
    }
    CLOSED.send_if_modified(|closed| {
        if closed.is_some() {
            return false;
        }
        *closed = Some(stream);
        true
    });
}

/// The process's stdout, recording a closed pipe (std's line-buffered stdout inside).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stdout;

/// The process's stderr, recording a closed pipe.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stderr;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        io::stdout().write(buf).map_err(|e| note(Stream::Stdout, e))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        io::stdout()
            .lock()
            .write_all(buf)
            .map_err(|e| note(Stream::Stdout, e))
    }

    /// One lock for the whole line: lines written from several threads stay whole.
    fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> io::Result<()> {
        io::stdout()
            .lock()
            .write_fmt(args)
            .map_err(|e| note(Stream::Stdout, e))
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stdout().flush().map_err(|e| note(Stream::Stdout, e))
    }
}

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        io::stderr().write(buf).map_err(|e| note(Stream::Stderr, e))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        io::stderr()
            .lock()
            .write_all(buf)
            .map_err(|e| note(Stream::Stderr, e))
    }

    /// One lock for the whole line: lines written from several threads stay whole.
    fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> io::Result<()> {
        io::stderr()
            .lock()
            .write_fmt(args)
            .map_err(|e| note(Stream::Stderr, e))
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush().map_err(|e| note(Stream::Stderr, e))
    }
}

/// Writes `line` and a newline to stderr, as `eprintln!` does, without its panic on a
/// closed stderr (recorded instead; there is nowhere left to say anything).
pub fn eprintln(line: impl std::fmt::Display) {
    let _ = writeln!(Stderr, "{line}");
}

/// tokio's stdout or stderr (written from its blocking pool, so that a full pipe
/// blocks the write and not the runtime), recording a closed pipe.
#[derive(Debug)]
pub struct Async<W> {
    inner: W,
    stream: Stream,
}

/// tokio's stdout, recording a closed pipe.
pub fn async_stdout() -> Async<tokio::io::Stdout> {
    Async {
        inner: tokio::io::stdout(),
        stream: Stream::Stdout,
    }
}

/// tokio's stderr, recording a closed pipe.
pub fn async_stderr() -> Async<tokio::io::Stderr> {
    Async {
        inner: tokio::io::stderr(),
        stream: Stream::Stderr,
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for Async<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let stream = self.stream;
        Pin::new(&mut self.inner)
            .poll_write(cx, buf)
            .map_err(|e| note(stream, e))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let stream = self.stream;
        Pin::new(&mut self.inner)
            .poll_flush(cx)
            .map_err(|e| note(stream, e))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let stream = self.stream;
        Pin::new(&mut self.inner)
            .poll_shutdown(cx)
            .map_err(|e| note(stream, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A broken pipe is recorded once, with the first stream, and read back from the
    /// error it becomes; other errors pass through unrecorded. (One test: the state is
    /// the process's.)
    #[tokio::test]
    async fn a_broken_pipe_is_recorded_and_recognised() {
        let other = note(Stream::Stdout, io::Error::other("disk full"));
        assert!(!is_closed(&other));
        assert_eq!(closed(), None);

        let socket = io::Error::from(io::ErrorKind::BrokenPipe);
        assert!(!is_closed(&socket), "a socket's broken pipe is not ours");
        let waiter = tokio::spawn(wait_closed());
        let err = note(Stream::Stderr, socket);
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        assert!(is_closed(&err));
        assert_eq!(err.to_string(), "write /dev/stderr: broken pipe");
        assert_eq!(closed(), Some(Stream::Stderr));
        assert!(!is_stream_closed(Stream::Stdout));
        assert_eq!(waiter.await.expect("joined"), Stream::Stderr);

        let again = note(Stream::Stdout, io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(is_closed(&again));
        assert_eq!(closed(), Some(Stream::Stderr), "the first is kept");
        assert!(is_stream_closed(Stream::Stdout) && is_stream_closed(Stream::Stderr));
        let wrapped = anyhow::Error::new(again).context("printing");
        assert!(is_closed(wrapped.as_ref()));
    }
}
