//! One attach session, as kubectl 1.37's `attach.Run` has it: the terminal set up
//! (`SetupTTY`), the recorded-session warning and the prompt hint, the streams
//! forwarded (stdin through the detach keys on a raw terminal), the terminal size
//! followed, the end recognised, and the line that says how to resume.

use std::io::{IsTerminal as _, Write};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context as _, Result, anyhow};
use futures::SinkExt as _;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, AttachParams, AttachedProcess, TerminalSize};
use tokio::task::JoinHandle;

use super::detach::{self, Detacher};
use super::stdin;

/// How long output may keep arriving after the attach session reported its end.
const STREAM_DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

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

/// Attaches, forwards until the session ends, and restores the terminal. An error
/// means the attach failed (the caller falls back to the logs, as kubectl does).
pub async fn attach(pods: &Api<Pod>, req: &Request<'_>, err: &mut dyn Write) -> Result<()> {
    let tty = setup_tty(req, err)?;
    if !req.quiet {
        // kubectl's attach prints them with or without stdin, before it connects (so
        // they also precede a failed attach's warning).
        writeln!(err, "{RECORDED}")?;
        writeln!(
            err,
            "If you don't see a command prompt, try pressing enter."
        )?;
    }
    let raw = tty.then(RawMode::enable).transpose()?;
    // kubectl binds the keys on its raw terminal, before connecting: a bad value fails
    // the attach (and so falls back to the logs) only in a raw `-it` session.
    let detacher = match req.stdin && tty {
        true => Some(Detacher::new(detach::parse(req.detach_keys)?)),
        false => None,
    };
    let params = AttachParams {
        container: req.container.clone(),
        stdin: req.stdin,
        stdout: true,
        stderr: !tty,
        tty,
        ..Default::default()
    };
    let mut attached = pods.attach(req.pod, &params).await?;
    let outputs = forward_output(&mut attached);
    let stdin = forward_stdin(&mut attached, detacher)?;
    let resize_task = match tty {
        true => attached
            .terminal_size()
            .map(|tx| tokio::spawn(forward_resizes(tx))),
        false => None,
    };
    let joined = session_end(attached).await;
    // The session is over: stop reading the user's terminal before anything else.
    let stdin_task = stdin.map(StdinForward::stop);
    for task in outputs {
        // Output still in flight is copied; a stream the server never ends is not waited for.
        if tokio::time::timeout(STREAM_DRAIN, task).await.is_err() {
            tracing::debug!("an output stream did not end after the session; leaving it");
        }
    }
    for task in stdin_task.into_iter().chain(resize_task) {
        task.abort();
    }
    // kubectl restores the terminal before its last words (`t.Safe` returns first).
    drop(raw);
    joined?;
    // kubectl's reattachMessage: stdin on a raw terminal, not quiet, any restart
    // policy (since 1.36), with the namespace.
    if tty && !req.quiet {
        // A closed stdout is recorded by the writer, for `cli::finish`.
        let _ = writeln!(
            apiclient::output::Stdout,
            "Session ended, resume using 'kubectl attach {} -c {} -n {} -i -t' command",
            req.pod,
            req.container.as_deref().unwrap_or_default(),
            req.namespace
        );
    }
    Ok(())
}

/// kubectl's `SetupTTY`: a TTY needs stdin, and stdin must be a terminal. Whether
/// the session is a raw terminal one.
fn setup_tty(req: &Request<'_>, err: &mut dyn Write) -> Result<bool> {
    let stdin_is_terminal = std::io::stdin().is_terminal();
    if req.tty && req.stdin && !stdin_is_terminal && !req.quiet {
        writeln!(
            err,
            "Unable to use a TTY - input is not a terminal or the right kind of file"
        )?;
    }
    Ok(req.tty && req.stdin && stdin_is_terminal)
}

/// The container's stdout and stderr, copied to ours as they come.
fn forward_output(attached: &mut AttachedProcess) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    if let Some(mut remote_out) = attached.stdout() {
        tasks.push(tokio::spawn(async move {
            // A closed stdout ends the copy; the writer records it, and that ends the
            // session (`Session::run`).
            let _ = tokio::io::copy(&mut remote_out, &mut apiclient::output::async_stdout()).await;
        }));
    }
    if let Some(mut remote_err) = attached.stderr() {
        tasks.push(tokio::spawn(async move {
            let _ = tokio::io::copy(&mut remote_err, &mut apiclient::output::async_stderr()).await;
        }));
    }
    tasks
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
    attached: &mut AttachedProcess,
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

/// The session is over when the connection closes, or when the error channel
/// reports the final status (kubectl's streamer stops there too): a server that
/// sends the status but keeps the socket open must not hang the command.
async fn session_end(mut attached: AttachedProcess) -> Result<()> {
    let Some(status) = attached.take_status() else {
        return attached.join().await.map_err(|e| anyhow!("{e}"));
    };
    let join = attached.join();
    tokio::pin!(join);
    let joined = tokio::select! {
        joined = &mut join => joined,
        _ = status => match tokio::time::timeout(STREAM_DRAIN, &mut join).await {
            Ok(joined) => joined,
            Err(_) => Ok(()),
        },
    };
    joined.map_err(|e| anyhow!("{e}"))
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
