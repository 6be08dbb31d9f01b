//! One run of a container process as the kubelet API sees it: its output
//! kept in memory (the container log), its exit, and a way to feed its
//! stdin or resize its terminal.
//!
//! The log is bounded like the kubelet's: it rotates a container's log file
//! at `containerLogMaxSize` (10Mi by default) and `kubectl logs` reads the
//! current file only, so older output is lost. Here the last
//! [`LOG_MAX_BYTES`] bytes of a run are kept (a rolling window rather than
//! whole files), and readers that fell behind the window continue at its
//! start, as a reader of a rotated file would.
//!
//! Readers (`containerLogs?follow`, attach, exec) never block writers: they
//! remember how many chunks they have seen and sleep on a version counter
//! that every write bumps.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;
use k8s_openapi::jiff::Timestamp;
use tokio::sync::{mpsc, watch};

/// Which output stream a chunk came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Standard output (and everything written to a terminal).
    Stdout,
    /// Standard error.
    Stderr,
}

/// A piece of output as it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// When it was read.
    pub at: Timestamp,
    /// Where it came from.
    pub stream: Stream,
    /// The bytes.
    pub data: Bytes,
}

/// Something for the process's stdin or terminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// Bytes to write.
    Data(Vec<u8>),
    /// Close stdin (the process reads end of file).
    Eof,
    /// New terminal size.
    Resize {
        /// Columns.
        width: u16,
        /// Rows.
        height: u16,
    },
}

/// The kubelet's default `containerLogMaxSize` (10Mi): how much output of a
/// run is kept.
pub const LOG_MAX_BYTES: usize = 10 * 1024 * 1024;

#[derive(Default)]
struct Output {
    /// The kept chunks; chunk `i` (counting every chunk ever pushed) is at
    /// `i - dropped`.
    chunks: VecDeque<Chunk>,
    /// Chunks dropped from the front to stay within the limit.
    dropped: usize,
    /// Bytes in `chunks`.
    bytes: usize,
    exit: Option<i32>,
}

impl Output {
    /// Drops the oldest output until at most `limit` bytes are left.
    fn trim(&mut self, limit: usize) {
        while self.bytes > limit {
            let excess = self.bytes - limit;
            let Some(front) = self.chunks.front_mut() else {
                break;
            };
            if front.data.len() <= excess {
                self.bytes -= front.data.len();
                self.chunks.pop_front();
                self.dropped += 1;
            } else {
                front.data = front.data.slice(excess..);
                self.bytes -= excess;
            }
        }
    }
}

/// Output read from a [`Run`].
pub struct Read {
    /// The chunks from the requested index on (or from the oldest one kept).
    pub chunks: Vec<Chunk>,
    /// The exit code, once the run is over.
    pub exit: Option<i32>,
    /// The index of the next chunk to read.
    pub next: usize,
}

/// One process run.
pub struct Run {
    /// Runs on a pseudo-terminal (stdout and stderr are one stream).
    pub tty: bool,
    output: Mutex<Output>,
    version: watch::Sender<u64>,
    input: Mutex<Option<mpsc::UnboundedSender<Input>>>,
    /// `stdinOnce`: the first attach session that detaches closes stdin.
    stdin_once: bool,
    stdin_closed: AtomicBool,
    /// How many bytes of output are kept.
    log_limit: usize,
}

impl Run {
    /// A run whose stdin (if any) is fed through `input`.
    pub fn new(tty: bool, stdin_once: bool, input: Option<mpsc::UnboundedSender<Input>>) -> Self {
        Self {
            tty,
            output: Mutex::default(),
            version: watch::Sender::new(0),
            input: Mutex::new(input),
            stdin_once,
            stdin_closed: AtomicBool::new(false),
            log_limit: LOG_MAX_BYTES,
        }
    }

    /// The same run keeping only the last `bytes` bytes of output.
    #[must_use]
    pub fn with_log_limit(mut self, bytes: usize) -> Self {
        self.log_limit = bytes;
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Output> {
        self.output.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends output.
    pub fn push(&self, stream: Stream, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        {
            let mut out = self.lock();
            out.chunks.push_back(Chunk {
                at: Timestamp::now(),
                stream,
                data: Bytes::copy_from_slice(data),
            });
            out.bytes += data.len();
            out.trim(self.log_limit);
        }
        self.version.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// Records the exit, after all output was pushed.
    pub fn finish(&self, exit_code: i32) {
        self.lock().exit = Some(exit_code);
        *self.input.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.version.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// The exit code, once the run is over and its output complete.
    pub fn exit_code(&self) -> Option<i32> {
        self.lock().exit
    }

    /// Chunks from index `from` on (or from the oldest one still kept), and
    /// the exit code if the run is over.
    pub fn read_from(&self, from: usize) -> Read {
        let out = self.lock();
        let start = from.saturating_sub(out.dropped);
        Read {
            chunks: out.chunks.iter().skip(start).cloned().collect(),
            exit: out.exit,
            next: out.dropped + out.chunks.len(),
        }
    }

    /// Number of chunks pushed so far (the index of the next one).
    pub fn len(&self) -> usize {
        let out = self.lock();
        out.dropped + out.chunks.len()
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of output kept.
    pub fn kept_bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Wakes on every change; see [`Follower`].
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// Whether the run takes input.
    pub fn has_stdin(&self) -> bool {
        self.input
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Sends input; false when the run takes none (any more).
    pub fn send_input(&self, input: Input) -> bool {
        let mut guard = self.input.lock().unwrap_or_else(PoisonError::into_inner);
        let sent = guard
            .as_ref()
            .is_some_and(|tx| tx.send(input.clone()).is_ok());
        if input == Input::Eof {
            self.stdin_closed.store(true, Ordering::SeqCst);
            *guard = None;
        }
        sent
    }

    /// An attach session that wrote to stdin detached: with `stdinOnce` the
    /// process now reads end of file, as a container runtime does it.
    pub fn detached(&self) {
        if self.stdin_once && !self.stdin_closed.load(Ordering::SeqCst) {
            self.send_input(Input::Eof);
        }
    }
}

/// Reads a [`Run`]'s output as it grows, without missing or repeating any.
pub struct Follower {
    next: usize,
    changes: watch::Receiver<u64>,
}

impl Follower {
    /// Starts at chunk index `from`.
    pub fn new(run: &Run, from: usize) -> Self {
        Self {
            next: from,
            changes: run.subscribe(),
        }
    }

    /// The next chunks, waiting for some; `None` once the run is over and
    /// everything was read (then the exit code is final).
    pub async fn next(&mut self, run: &Run) -> Option<Vec<Chunk>> {
        loop {
            self.changes.mark_unchanged();
            let read = run.read_from(self.next);
            if !read.chunks.is_empty() {
                self.next = read.next;
                return Some(read.chunks);
            }
            if read.exit.is_some() {
                return None;
            }
            if self.changes.changed().await.is_err() {
                return None;
            }
        }
    }
}

/// Turns chunks into container-log text, optionally with kubelet-style
/// RFC 3339 timestamps at the start of every line.
#[derive(Clone, Debug)]
pub struct LogRenderer {
    timestamps: bool,
    at_line_start: bool,
}

impl LogRenderer {
    /// A renderer at the start of a line.
    pub fn new(timestamps: bool) -> Self {
        Self {
            timestamps,
            at_line_start: true,
        }
    }

    /// Renders one chunk.
    pub fn render(&mut self, chunk: &Chunk) -> Vec<u8> {
        if !self.timestamps {
            return chunk.data.to_vec();
        }
        let mut out = Vec::with_capacity(chunk.data.len() + 40);
        for piece in chunk.data.split_inclusive(|b| *b == b'\n') {
            if self.at_line_start {
                out.extend_from_slice(format_timestamp(chunk.at).as_bytes());
                out.push(b' ');
            }
            out.extend_from_slice(piece);
            self.at_line_start = piece.ends_with(b"\n");
        }
        out
    }
}

/// RFC 3339 with nanoseconds, as the kubelet prints log timestamps.
pub fn format_timestamp(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S.%9fZ").to_string()
}

/// The index of the first chunk written at or after `since` (`sinceSeconds`,
/// `sinceTime`): the kubelet filters log lines by their timestamps, which
/// here are the chunks'.
pub fn since_start(chunks: &[Chunk], since: Timestamp) -> usize {
    chunks.partition_point(|c| c.at < since)
}

/// The index of the first chunk and byte offset in it where the last
/// `lines` lines begin (a trailing line without newline counts as a line).
pub fn tail_start(chunks: &[Chunk], lines: usize) -> (usize, usize) {
    if lines == 0 {
        return (chunks.len(), 0);
    }
    let mut seen = 0usize;
    // Walk backwards counting newlines; the final newline of the output ends
    // the last line rather than starting a new one.
    let mut skip_final = true;
    for (ci, chunk) in chunks.iter().enumerate().rev() {
        for (bi, byte) in chunk.data.iter().enumerate().rev() {
            if *byte != b'\n' {
                skip_final = false;
                continue;
            }
            if skip_final {
                skip_final = false;
                continue;
            }
            seen += 1;
            if seen == lines {
                return if bi + 1 == chunk.data.len() {
                    (ci + 1, 0)
                } else {
                    (ci, bi + 1)
                };
            }
        }
    }
    (0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(text: &str) -> Chunk {
        Chunk {
            at: Timestamp::UNIX_EPOCH,
            stream: Stream::Stdout,
            data: Bytes::copy_from_slice(text.as_bytes()),
        }
    }

    fn tail(chunks: &[Chunk], n: usize) -> String {
        let (ci, off) = tail_start(chunks, n);
        let mut out = Vec::new();
        for (i, c) in chunks.iter().enumerate().skip(ci) {
            out.extend_from_slice(if i == ci { &c.data[off..] } else { &c.data });
        }
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn tail_counts_lines_across_chunks() {
        let chunks = [chunk("a\nb"), chunk("\nc\n"), chunk("d\n")];
        assert_eq!(tail(&chunks, 1), "d\n");
        assert_eq!(tail(&chunks, 2), "c\nd\n");
        assert_eq!(tail(&chunks, 3), "b\nc\nd\n");
        assert_eq!(tail(&chunks, 10), "a\nb\nc\nd\n");
        assert_eq!(tail(&chunks, 0), "");
        let partial = [chunk("a\nb\npart")];
        assert_eq!(tail(&partial, 1), "part");
        assert_eq!(tail(&partial, 2), "b\npart");
    }

    #[test]
    fn since_skips_chunks_written_before() {
        let at = |s| Chunk {
            at: Timestamp::from_second(s).unwrap_or(Timestamp::UNIX_EPOCH),
            ..chunk("x")
        };
        let chunks = [at(10), at(20), at(20), at(30)];
        let second = |s| Timestamp::from_second(s).unwrap_or(Timestamp::UNIX_EPOCH);
        assert_eq!(since_start(&chunks, second(0)), 0);
        assert_eq!(since_start(&chunks, second(20)), 1);
        assert_eq!(since_start(&chunks, second(21)), 3);
        assert_eq!(since_start(&chunks, second(31)), 4);
    }

    #[test]
    fn timestamps_prefix_every_line_even_across_chunks() {
        let mut r = LogRenderer::new(true);
        let first = String::from_utf8(r.render(&chunk("a\nb"))).unwrap_or_default();
        let second = String::from_utf8(r.render(&chunk("c\nd\n"))).unwrap_or_default();
        let ts = "1970-01-01T00:00:00.000000000Z";
        assert_eq!(first, format!("{ts} a\n{ts} b"));
        assert_eq!(second, format!("c\n{ts} d\n"));
        assert_eq!(LogRenderer::new(false).render(&chunk("x\n")), b"x\n");
    }

    #[tokio::test]
    async fn followers_see_everything_then_the_end() {
        let run = std::sync::Arc::new(Run::new(false, false, None));
        let mut follower = Follower::new(&run, 0);
        let writer = std::sync::Arc::clone(&run);
        tokio::spawn(async move {
            writer.push(Stream::Stdout, b"one");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            writer.push(Stream::Stderr, b"two");
            writer.finish(3);
        });
        let mut text = Vec::new();
        while let Some(chunks) = follower.next(&run).await {
            for c in chunks {
                text.extend_from_slice(&c.data);
            }
        }
        assert_eq!(text, b"onetwo");
        assert_eq!(run.exit_code(), Some(3));
    }

    #[test]
    fn output_beyond_the_limit_drops_the_oldest_bytes() {
        let run = Run::new(false, false, None).with_log_limit(10);
        let text = |run: &Run, from| {
            let read = run.read_from(from);
            let bytes: Vec<u8> = read.chunks.iter().flat_map(|c| c.data.to_vec()).collect();
            (String::from_utf8(bytes).unwrap_or_default(), read.next)
        };
        run.push(Stream::Stdout, b"0123");
        run.push(Stream::Stdout, b"4567");
        assert_eq!(text(&run, 0), ("01234567".to_owned(), 2));
        run.push(Stream::Stderr, b"89ab");
        // 12 bytes: the first two are gone, from the middle of a chunk.
        assert_eq!(text(&run, 0), ("23456789ab".to_owned(), 3));
        assert_eq!(run.kept_bytes(), 10);
        run.push(Stream::Stdout, b"cdefgh");
        // Whole chunks dropped; indices keep counting every chunk pushed.
        assert_eq!(run.len(), 4);
        assert_eq!(text(&run, 0), ("89abcdefgh".to_owned(), 4));
        assert_eq!(text(&run, 3), ("cdefgh".to_owned(), 4));
        assert_eq!(text(&run, 4), (String::new(), 4));
        // One chunk larger than the limit keeps its tail.
        run.push(Stream::Stdout, b"ABCDEFGHIJKLMNOP");
        assert_eq!(text(&run, 0), ("GHIJKLMNOP".to_owned(), 5));
        assert_eq!(run.kept_bytes(), 10);
    }

    #[tokio::test]
    async fn a_follower_behind_the_window_continues_at_its_start() {
        let run = Run::new(false, false, None).with_log_limit(4);
        let mut follower = Follower::new(&run, 0);
        for piece in [b"aa", b"bb", b"cc", b"dd"] {
            run.push(Stream::Stdout, piece);
        }
        run.finish(0);
        let mut seen = Vec::new();
        while let Some(chunks) = follower.next(&run).await {
            seen.extend(chunks.iter().flat_map(|c| c.data.to_vec()));
        }
        assert_eq!(seen, b"ccdd");
    }

    #[test]
    fn the_default_limit_is_the_kubelets_container_log_max_size() {
        let run = Run::new(false, false, None);
        let mib = vec![b'x'; 1024 * 1024];
        for _ in 0..12 {
            run.push(Stream::Stdout, &mib);
        }
        assert_eq!(run.kept_bytes(), 10 * 1024 * 1024);
        assert_eq!(run.len(), 12);
    }

    #[test]
    fn stdin_once_closes_input_on_detach() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let run = Run::new(false, true, Some(tx));
        assert!(run.send_input(Input::Data(b"x".to_vec())));
        run.detached();
        assert_eq!(rx.try_recv().ok(), Some(Input::Data(b"x".to_vec())));
        assert_eq!(rx.try_recv().ok(), Some(Input::Eof));
        assert!(!run.has_stdin());
    }
}
