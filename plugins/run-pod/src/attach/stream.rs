//! One attach session, as kubectl 1.37's `attach.Run` has it: the terminal set up
//! (`SetupTTY`), the recorded-session warning and the prompt hint, the streams
//! forwarded (stdin through the detach keys on a raw terminal), the terminal size
//! followed, the end recognised, and the line that says how to resume. Unlike
//! kubectl, it connects before it prints the log written so far, and holds the
//! attach's output until the log up to where that output begins is printed
//! (`replay`), so that what the container writes meanwhile is neither lost nor
//! printed twice; what kubectl prints before it connects still comes after that log.

use std::io::{IsTerminal as _, Write};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context as _, Result};
use apiclient::remotecommand::{self, AttachError, Attached};
use futures::SinkExt as _;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, AttachParams, TerminalSize};
use tokio::task::JoinHandle;

use super::detach::{self, Detacher};
use super::replay::{self, PreAttach};
use super::resume::Printed;
use super::stdin;

/// How long output may keep arriving after the attach session reported its end.
const STREAM_DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

/// How long the attach's first bytes are waited for before the log is read without
/// them: its writer joins within milliseconds of the upgrade's answer.
const JOIN_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// How many chunks of output are held while the log is read (then the attach waits).
const HELD_CHUNKS: usize = 64;

/// kubectl 1.37's attach says this (unless `-q`) before its prompt hint: whoever can
/// read the container's log sees what was typed.
const RECORDED: &str = "All commands and output from this session will be recorded in container logs, including credentials and sensitive information passed through the command prompt.";

/// What to attach to, and how.
pub struct Request<'a> {
    pub pod: &'a str,
    pub namespace: &'a str,
    pub container: Option<String>,
    /// `-i`.
    pub stdin: bool,
    /// `-t`.
    pub tty: bool,
    /// `-q`.
    pub quiet: bool,
    /// `--detach-keys`, as typed.
    pub detach_keys: &'a str,
}

/// How an attach session that started ended.
pub enum Outcome {
    /// The server sent the final status: the container's streams ended.
    Ended,
    /// The connection broke (or went silent) before the final status: what was
    /// printed of the attach's output, for the log to go on from there.
    Cut {
        why: String,
        printed: Printed,
        /// Our stdin had not ended yet: input after the cut never reached the container.
        input_open: bool,
    },
}

/// Attaches, forwards until the session ends, and restores the terminal. The log
/// written before the attach joined is printed first, joined to the attach's output
/// (see `replay`). An error means the attach failed (the caller falls back to the
/// logs since `pre.read_at`, as kubectl does); a session cut once under way is
/// [`Outcome::Cut`], with all of the output it brought printed.
pub async fn attach(
    pods: &Api<Pod>,
    req: &Request<'_>,
    err: &mut dyn Write,
    pre: &mut PreAttach<'_>,
) -> Result<Outcome> {
    let tty = wants_tty(req);
    // kubectl binds the keys on its raw terminal, before connecting: a bad value fails
    // the attach (and so falls back to the logs) only in a raw `-it` session.
    let keys = match req.stdin && tty {
        true => Some(detach::parse(req.detach_keys)).transpose(),
        false => Ok(None),
    };
    let params = AttachParams {
        container: req.container.clone(),
        stdin: req.stdin,
        stdout: true,
        stderr: !tty,
        tty,
        ..Default::default()
    };
    let (keys, connected) = match keys {
        Err(e) => (None, Err(anyhow::Error::new(e))),
        Ok(keys) => (
            keys,
            remotecommand::attach(&pods.clone().into_client(), req.namespace, req.pod, &params)
                .await
                .map_err(|e| match e {
                    // Whole, so that `plain_message` finds the server's refusal.
                    AttachError::Kube(e) => anyhow::Error::new(e),
                    e => anyhow::Error::new(e),
                }),
        ),
    };
    let mut attached = match connected {
        Ok(attached) => attached,
        Err(e) => {
            // Nothing joined: the log so far, then what kubectl says before it connects.
            replay_all(pre, err).await?;
            introduce(req, tty, err)?;
            return Err(e);
        }
    };
    let mut early = Early::start(&mut attached);
    early.wait_for_first().await;
    replay_before(pre, &mut early, err).await?;
    introduce(req, tty, err)?;
    let raw = tty.then(RawMode::enable).transpose()?;
    let printed = std::sync::Arc::new(Mutex::new(Printed::default()));
    let output = tokio::spawn(early.forward(printed.clone()));
    let stdin = forward_stdin(&mut attached, keys.map(Detacher::new))?;
    let resize_task = match tty {
        true => attached
            .terminal_size()
            .map(|tx| tokio::spawn(forward_resizes(tx))),
        false => None,
    };
    let ended = session_end(attached).await;
    // The session is over: stop reading the user's terminal before anything else.
    let stdin_task = stdin.map(StdinForward::stop);
    let input_open = stdin_task.as_ref().is_some_and(|t| !t.is_finished());
    match &ended {
        // Output still in flight is copied; a stream the server never ends is not
        // waited for.
        Ended::Finished => {
            if tokio::time::timeout(STREAM_DRAIN, output).await.is_err() {
                tracing::debug!("an output stream did not end after the session; leaving it");
            }
        }
        // The connection is gone, so its streams have ended: all they brought is
        // printed before the log is asked where to go on from.
        Ended::Cut(_) => {
            let _ = output.await;
        }
    }
    for task in stdin_task.into_iter().chain(resize_task) {
        task.abort();
    }
    // kubectl restores the terminal before its last words (`t.Safe` returns first).
    drop(raw);
    if let Ended::Cut(why) = ended {
        let printed = std::mem::take(&mut *printed.lock().unwrap_or_else(PoisonError::into_inner));
        return Ok(Outcome::Cut {
            why,
            printed,
            input_open,
        });
    }
    if tty && !req.quiet {
        say_how_to_resume(req);
    }
    Ok(Outcome::Ended)
}

/// kubectl's reattachMessage: stdin on a raw terminal, not quiet, any restart
/// policy (since 1.36), with the namespace.
fn say_how_to_resume(req: &Request<'_>) {
    // A closed stdout is recorded by the writer, for `cli::finish`.
    let _ = writeln!(
        apiclient::output::Stdout,
        "Session ended, resume using 'kubectl attach {} -c {} -n {} -i -t' command",
        req.pod,
        req.container.as_deref().unwrap_or_default(),
        req.namespace
    );
}

/// What kubectl's attach prints before it connects, after the pre-attach log: the
/// `SetupTTY` complaint, the recorded-session warning and the prompt hint.
fn introduce(req: &Request<'_>, tty: bool, err: &mut dyn Write) -> Result<()> {
    if req.quiet {
        return Ok(());
    }
    if req.tty && req.stdin && !tty {
        writeln!(
            err,
            "Unable to use a TTY - input is not a terminal or the right kind of file"
        )?;
    }
    // kubectl's attach prints them with or without stdin (so they also precede a
    // failed attach's warning).
    writeln!(err, "{RECORDED}")?;
    writeln!(
        err,
        "If you don't see a command prompt, try pressing enter."
    )?;
    Ok(())
}

/// kubectl's `SetupTTY`: a TTY needs stdin, and stdin must be a terminal. Whether
/// the session is a raw terminal one.
fn wants_tty(req: &Request<'_>) -> bool {
    req.tty && req.stdin && std::io::stdin().is_terminal()
}

/// The log so far, all of it (no attach joined); a log that cannot be read is
/// kubectl's warning.
async fn replay_all(pre: &mut PreAttach<'_>, err: &mut dyn Write) -> Result<()> {
    match pre.read().await {
        Ok(log) => {
            pre.printed_through = log
                .text
                .len()
                .checked_sub(1)
                .and_then(|end| log.written_at(end));
            write_stdout(&log.text).await
        }
        Err(e) => warn_unread(&e, err),
    }
}

/// The log up to where the attach's first bytes begin (`replay::join`).
async fn replay_before(
    pre: &mut PreAttach<'_>,
    early: &mut Early,
    err: &mut dyn Write,
) -> Result<()> {
    // What came before the log is asked for was written before it is read: the log
    // holds all of it, which `join` relies on to tell the true place from a
    // coincidence of text. What comes during the read may be newer than the log.
    early.drain();
    let first = early.first();
    let log = match pre.read().await {
        Ok(log) => log,
        Err(e) => return warn_unread(&e, err),
    };
    early.drain();
    let print = match first {
        Some((bytes, arrived)) => replay::join(&log, &bytes, arrived),
        None => log.text.len(),
    };
    pre.printed_through = print.checked_sub(1).and_then(|end| log.written_at(end));
    let written = write_stdout(&log.text[..print]).await;
    if early.held.is_empty() {
        // The attach brought nothing within `JOIN_WAIT` (a loaded machine can hold its
        // first bytes longer): the whole log is printed, and its tail may come again
        // at the start of the attach's output. `forward` joins them when they come.
        early.late = Some(log);
    }
    written
}

/// kubectl's warning for a log it could not read before attaching; the session goes on.
fn warn_unread(e: &anyhow::Error, err: &mut dyn Write) -> Result<()> {
    writeln!(
        err,
        "warning: couldn't fetch pre-attach logs: {}",
        super::plain_message(e)
    )?;
    Ok(())
}

async fn write_stdout(bytes: &[u8]) -> Result<()> {
    use tokio::io::AsyncWriteExt as _;
    let mut out = apiclient::output::async_stdout();
    out.write_all(bytes).await?;
    out.flush().await?;
    Ok(())
}

/// The container's two output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Out,
    Err,
}

/// A chunk of the container's output, with when it arrived.
type Chunk = (Which, Vec<u8>, Timestamp);

/// The attach's output from its first byte: held until the log before it is printed,
/// then copied to ours as it comes.
struct Early {
    chunks: tokio::sync::mpsc::Receiver<Chunk>,
    held: Vec<Chunk>,
    /// The log printed whole because nothing had come when it was read: the attach's
    /// first bytes are then joined to it as they arrive ([`LateJoin`]).
    late: Option<replay::Log>,
}

impl Early {
    fn start(attached: &mut Attached) -> Early {
        let (tx, chunks) = tokio::sync::mpsc::channel(HELD_CHUNKS);
        if let Some(remote) = attached.stdout() {
            tokio::spawn(read_chunks(remote, Which::Out, tx.clone()));
        }
        if let Some(remote) = attached.stderr() {
            tokio::spawn(read_chunks(remote, Which::Err, tx));
        }
        Early {
            chunks,
            held: Vec::new(),
            late: None,
        }
    }

    /// Waits for the attach's first bytes, which say its writer has joined, up to
    /// [`JOIN_WAIT`]: a container that writes nothing gives no sign.
    async fn wait_for_first(&mut self) {
        if let Ok(Some(chunk)) = tokio::time::timeout(JOIN_WAIT, self.chunks.recv()).await {
            self.held.push(chunk);
        }
    }

    /// Holds whatever else has arrived.
    fn drain(&mut self) {
        while let Ok(chunk) = self.chunks.try_recv() {
            self.held.push(chunk);
        }
    }

    /// The stream that brought the first bytes, all it brought so far, and when the
    /// first of them arrived.
    fn first(&self) -> Option<(Vec<u8>, Timestamp)> {
        let (which, _, arrived) = self.held.first()?;
        let bytes = self
            .held
            .iter()
            .filter(|(w, _, _)| w == which)
            .flat_map(|(_, b, _)| b.iter().copied())
            .collect();
        Some((bytes, *arrived))
    }

    /// Copies what is held, then the rest, to our stdout and stderr, recording what
    /// was written in `printed`; a stream found closed is written no more (the writer
    /// records it, and that ends the session: `Session::run`).
    async fn forward(mut self, printed: Arc<Mutex<Printed>>) {
        let mut out = apiclient::output::async_stdout();
        let mut err = apiclient::output::async_stderr();
        let mut open = [true, true];
        let held = std::mem::take(&mut self.held);
        let mut next = held.into_iter();
        let mut late = self.late.take().map(LateJoin::Waiting);
        loop {
            let (which, mut bytes, arrived) = match next.next() {
                Some(chunk) => chunk,
                None => match self.chunks.recv().await {
                    Some(chunk) => chunk,
                    None => return,
                },
            };
            let index = which as usize;
            if bytes.is_empty() || !open[index] {
                continue;
            }
            if let Some(join) = &mut late {
                let printed_already = join.already_printed(which, &bytes, arrived);
                if printed_already > 0 {
                    // Printed by the log replay: recorded, for a resume to go on from.
                    printed
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .record(index, &bytes[..printed_already], arrived);
                    bytes.drain(..printed_already);
                }
                if join.is_done() {
                    late = None;
                }
                if bytes.is_empty() {
                    continue;
                }
            }
            let written = match which {
                Which::Out => write_flushed(&mut out, &bytes).await,
                Which::Err => write_flushed(&mut err, &bytes).await,
            };
            open[index] = written.is_ok();
            if written.is_ok() {
                printed
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .record(index, &bytes, arrived);
            }
        }
    }
}

/// The join of an attach whose first bytes came after the log was printed whole:
/// where those bytes begin in the log (`replay::join`, the same rule as for bytes
/// that came in time), everything after is in both, and is dropped from the attach's
/// output for as long as the two agree.
enum LateJoin {
    /// No bytes yet: the log that was printed.
    Waiting(replay::Log),
    /// The log's tail still expected at the start of `which`'s output.
    Skipping {
        which: Which,
        tail: Vec<u8>,
    },
    Done,
}

impl LateJoin {
    /// How many of `bytes`, the next chunk of `which`'s output, the log replay has
    /// printed already.
    fn already_printed(&mut self, which: Which, bytes: &[u8], arrived: Timestamp) -> usize {
        if let LateJoin::Waiting(log) = self {
            let at = replay::join(log, bytes, arrived);
            let tail = log.text[at..].to_vec();
            *self = match tail.is_empty() {
                true => LateJoin::Done,
                false => LateJoin::Skipping { which, tail },
            };
        }
        let LateJoin::Skipping { which: on, tail } = self else {
            return 0;
        };
        if *on != which {
            return 0;
        }
        let common = tail.iter().zip(bytes).take_while(|(a, b)| a == b).count();
        if common < tail.len().min(bytes.len()) {
            // They part: what follows is new (the other stream's lines interleaved in
            // the log, or a repeated line taken for the join).
            *self = LateJoin::Done;
            return 0;
        }
        tail.drain(..common);
        if tail.is_empty() {
            *self = LateJoin::Done;
        }
        common
    }

    fn is_done(&self) -> bool {
        matches!(self, LateJoin::Done)
    }
}

async fn write_flushed(
    w: &mut (impl tokio::io::AsyncWrite + Unpin),
    bytes: &[u8],
) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt as _;
    w.write_all(bytes).await?;
    w.flush().await
}

/// Reads one of the attach's streams into chunks until it ends.
async fn read_chunks(
    mut remote: impl tokio::io::AsyncRead + Unpin,
    which: Which,
    tx: tokio::sync::mpsc::Sender<Chunk>,
) {
    use tokio::io::AsyncReadExt as _;
    let mut buf = vec![0; 32 * 1024];
    while let Ok(n) = remote.read(&mut buf).await {
        if n == 0
            || tx
                .send((which, buf[..n].to_vec(), Timestamp::now()))
                .await
                .is_err()
        {
            return;
        }
    }
}

/// Our stdin on its way to the container, and the handle that stops reading it.
struct StdinForward {
    task: JoinHandle<()>,
    stop: Arc<Mutex<stdin::Stop>>,
}

impl StdinForward {
    /// Stops reading stdin (nothing typed from now on is taken from the user's
    /// shell); the task, which may still be sending, is returned to be aborted.
    fn stop(self) -> JoinHandle<()> {
        self.stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop();
        self.task
    }
}

/// Reads stdin until end of file, the detach keys, or the end of the session,
/// whichever comes first (see `stdin`: nothing typed after the session is taken
/// from the shell).
fn forward_stdin(
    attached: &mut Attached,
    mut detacher: Option<Detacher>,
) -> Result<Option<StdinForward>> {
    let Some(mut remote_in) = attached.stdin() else {
        return Ok(None);
    };
    let (mut chunks, stop) = stdin::start().context("unable to read stdin")?;
    let stop = Arc::new(Mutex::new(stop));
    let stop_on_detach = stop.clone();
    let task = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt as _;
        while let Some(Ok(chunk)) = chunks.recv().await {
            let (chunk, detached) = match detacher.as_mut() {
                Some(d) => {
                    let scanned = d.scan(&chunk);
                    (scanned.send, scanned.detached)
                }
                None => (chunk, false),
            };
            if detached {
                // As kubectl's detachable reader: no more reading, and end of file.
                stop_on_detach
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .stop();
            }
            if !chunk.is_empty() && remote_in.write_all(&chunk).await.is_err() {
                return;
            }
            if detached {
                break;
            }
        }
        // End of file for the container, as kubectl sends it (v5 protocol's
        // close-stdin). It must be an explicit shutdown: kube's writer is one half
        // of an in-memory pipe, and dropping it signals nothing, so a container
        // reading stdin would wait forever.
        let _ = remote_in.shutdown().await;
    });
    Ok(Some(StdinForward { task, stop }))
}

/// How a session under way ended.
enum Ended {
    /// With the final status.
    Finished,
    /// Without it: why the connection ended.
    Cut(String),
}

/// The session is over when the connection closes, or when the error channel
/// reports the final status (kubectl's streamer stops there too): a server that
/// sends the status but keeps the socket open must not hang the command. The status
/// says the container's streams ended (the kubelet sends it whatever the
/// container's exit: kubernetes#63694); a connection that ends without it, broken
/// or silent (`remotecommand`'s heartbeat), was cut.
async fn session_end(mut attached: Attached) -> Ended {
    let Some(status) = attached.take_status() else {
        return match attached.join().await {
            Ok(()) => Ended::Finished,
            Err(why) => Ended::Cut(why),
        };
    };
    let join = attached.join();
    tokio::pin!(join);
    tokio::pin!(status);
    let (status, joined) = tokio::select! {
        joined = &mut join => {
            // The status, if it came, is there (or comes with the error stream's
            // end, which the connection's end brings).
            let status = tokio::time::timeout(STREAM_DRAIN, &mut status).await.ok().flatten();
            (status, Some(joined))
        }
        status = &mut status => {
            let joined = tokio::time::timeout(STREAM_DRAIN, &mut join).await.ok();
            (status, joined)
        }
    };
    match (status, joined) {
        (Some(_), _) => Ended::Finished,
        (None, Some(Err(why))) => Ended::Cut(why),
        (None, _) => {
            Ended::Cut("the connection closed before the container's streams ended".into())
        }
    }
}

/// Sends the terminal size now and whenever it changes, as kubectl's resize queue does
/// (an unchanged size is not sent again). The first size is sent one column and one
/// row larger and then as it is, as kubectl does ("so that attach-detach-reattach
/// will result in the screen being redrawn"): a shell with line editing redraws its
/// prompt on the change, so a user attaching to one sees it without pressing Enter.
async fn forward_resizes(mut tx: futures::channel::mpsc::Sender<TerminalSize>) {
    let Some(mut resized) = Resized::listen() else {
        return;
    };
    let mut last = None;
    if let Ok((width, height)) = crossterm::terminal::size() {
        let larger = TerminalSize {
            width: width.saturating_add(1),
            height: height.saturating_add(1),
        };
        if tx.send(larger).await.is_err() {
            return;
        }
    }
    loop {
        if let Ok(size) = crossterm::terminal::size()
            && last != Some(size)
        {
            last = Some(size);
            let (width, height) = size;
            if tx.send(TerminalSize { width, height }).await.is_err() {
                return;
            }
        }
        if !resized.next().await {
            return;
        }
    }
}

/// When to look at the terminal size again: on SIGWINCH on Unix.
#[cfg(unix)]
struct Resized(tokio::signal::unix::Signal);

#[cfg(unix)]
impl Resized {
    fn listen() -> Option<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        signal(SignalKind::window_change()).ok().map(Self)
    }

    /// False once no more signals can arrive.
    async fn next(&mut self) -> bool {
        self.0.recv().await.is_some()
    }
}

/// Windows has no resize signal, and console resize events arrive only to a reader of
/// the console input, which stdin forwarding owns; kubectl polls there
/// (`resizeevents_windows.go`, every 250 ms), and so do we.
#[cfg(not(unix))]
struct Resized(tokio::time::Interval);

#[cfg(not(unix))]
impl Resized {
    fn listen() -> Option<Self> {
        let mut every = tokio::time::interval(std::time::Duration::from_millis(250));
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        Some(Self(every))
    }

    async fn next(&mut self) -> bool {
        self.0.tick().await;
        true
    }
}

/// Raw terminal mode for `-t`, restored when dropped (on every return path, and
/// when a signal cuts the session short). crossterm does it with termios on Unix and
/// with the console modes on Windows (its `windows` feature).
struct RawMode;

impl RawMode {
    fn enable() -> Result<Self> {
        crossterm::terminal::enable_raw_mode().context("unable to put the terminal in raw mode")?;
        Ok(RawMode)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: i64) -> Timestamp {
        Timestamp::from_millisecond(1_700_000_000_000 + ms).expect("time")
    }

    fn printed_log(lines: &[(i64, &str)]) -> replay::Log {
        let raw: String = lines
            .iter()
            .map(|(ms, text)| format!("{} {text}\n", at(*ms)))
            .collect();
        replay::Log::parse(raw.as_bytes())
    }

    /// What a late join lets through of `chunks`, in order.
    fn through(log: replay::Log, chunks: &[(Which, &str)]) -> String {
        let mut join = LateJoin::Waiting(log);
        let mut out = String::new();
        for (which, chunk) in chunks {
            let skip = join.already_printed(*which, chunk.as_bytes(), at(1_000));
            out.push_str(&chunk[skip..]);
        }
        out
    }

    /// Seen once in 100 runs on a loaded machine: the attach's first bytes (from line
    /// 2 on) came after the log had been read and printed whole (lines 1 to 51), and
    /// lines 2 to 51 were printed twice.
    #[test]
    fn a_late_attach_does_not_print_the_log_s_tail_again() {
        let lines: Vec<String> = (1..=5).map(|n| n.to_string()).collect();
        let log = printed_log(&lines.iter().map(|l| (0, l.as_str())).collect::<Vec<_>>());
        let out = through(
            log,
            &[
                (Which::Out, "2\n"),
                (Which::Out, "3\n4\n"),
                (Which::Out, "5\n6\n"),
                (Which::Out, "7\n"),
            ],
        );
        assert_eq!(out, "6\n7\n");
    }

    /// Seen on a loaded node: the attach began with `seq 1 50`'s chunk, which came
    /// after the log (1 to 51, 51 written 3 ms after the chunk) was printed whole. The
    /// log's last line also ends in "1\n": the chunk is all in the log from its start,
    /// so all of it was printed already.
    #[test]
    fn a_late_attach_joins_where_the_log_holds_all_it_brought() {
        let mut lines: Vec<(i64, String)> = (1..=50).map(|n| (0, n.to_string())).collect();
        lines.push((3, "51".to_string()));
        let log = printed_log(
            &lines
                .iter()
                .map(|(t, l)| (*t, l.as_str()))
                .collect::<Vec<_>>(),
        );
        let chunk: String = (1..=50).map(|n| format!("{n}\n")).collect();
        let out = through(
            log,
            &[
                (Which::Out, &chunk),
                (Which::Out, "51\n"),
                (Which::Out, "52\n"),
            ],
        );
        assert_eq!(out, "52\n");
    }

    #[test]
    fn a_late_attach_with_only_new_output_loses_nothing() {
        let log = printed_log(&[(0, "a"), (0, "b")]);
        assert_eq!(
            through(log, &[(Which::Out, "c\n"), (Which::Out, "a\n")]),
            "c\na\n"
        );
    }

    #[test]
    fn a_late_join_that_parts_from_the_log_prints_the_rest() {
        let log = printed_log(&[(0, "1"), (0, "2"), (0, "3")]);
        // The other stream's bytes are not the log's tail; stdout's part from it.
        assert_eq!(
            through(
                log,
                &[
                    (Which::Out, "2\n"),
                    (Which::Err, "e\n"),
                    (Which::Out, "x\n")
                ]
            ),
            "e\nx\n"
        );
    }
}
