//! The attach's `v5.channel.k8s.io` WebSocket, read and written by a loop of our own
//! (kube's `AttachedProcess` does the same, but cannot tell a dead peer from a quiet
//! one): each binary message is a channel byte (0 stdin, 1 stdout, 2 stderr, 3 the
//! final status, 4 resize) and its data; v5 adds `[255, 0]`, the end of stdin.
//!
//! A peer can die without closing the connection (a machine gone, a balancer that
//! drops the flow, a partition): no FIN ever comes, and a quiet container's session
//! looks exactly like it. So the loop pings every [`PING_EVERY`] and the session is
//! over once nothing at all (a pong, output, anything) has come for [`SILENT_FOR`]:
//! the caller learns of the cut within seconds and resumes from the log. kubectl
//! pings every 5 s but allows 61 s without a pong; the API server answers each ping at
//! once (its WebSocket reader), whatever the container does.

use std::time::Duration;

use futures::{SinkExt as _, StreamExt as _};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kube::api::{AttachParams, TerminalSize};
use kube::core::Resource as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_tungstenite::tungstenite::Message;

use super::{Attached, Reader, Writer};

/// How often the loop pings the server.
pub const PING_EVERY: Duration = Duration::from_secs(1);
/// How long the server may say nothing (no pong either) before the session counts
/// as cut: three pings unanswered, well above a loaded loopback's round trip.
pub const SILENT_FOR: Duration = Duration::from_secs(4);

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const STATUS: u8 = 3;
const RESIZE: u8 = 4;
const CLOSE: u8 = 255;

/// Bytes of one stream that wait for their reader before the loop waits too.
const PIPE_BYTES: usize = 1024 * 1024;

/// Upgrades `name`'s attach to a WebSocket (the client stack offers only v5:
/// [`super::websocket_protocols`]); a refusal is kube's error, for the fallback.
pub async fn attach(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    params: &AttachParams,
) -> Result<Attached, kube::Error> {
    let url = Pod::url_path(&(), Some(namespace));
    let mut request = kube::core::Request::new(url)
        .attach(name, params)
        .map_err(kube::Error::BuildRequest)?;
    request.extensions_mut().insert("attach");
    let connection = client.connect(request).await?;
    Ok(run(connection.into_stream(), params))
}

/// Starts the loop on an upgraded WebSocket and hands out its ends.
pub fn run<S>(socket: S, params: &AttachParams) -> Attached
where
    S: futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>>
        + futures::Sink<Message, Error = tokio_tungstenite::tungstenite::Error>
        + Send
        + Unpin
        + 'static,
{
    let (stdin_mine, stdin_theirs) = tokio::io::duplex(32 * 1024);
    let pipe = |wanted: bool| wanted.then(|| tokio::io::duplex(PIPE_BYTES));
    let stdout = pipe(params.stdout);
    let stderr = pipe(params.stderr && !params.tty);
    let (resize_tx, resize_rx) = futures::channel::mpsc::channel(4);
    let (status_tx, status_rx) = tokio::sync::oneshot::channel();
    let (stdout_mine, stdout_theirs) = split_pipe(stdout);
    let (stderr_mine, stderr_theirs) = split_pipe(stderr);
    let ends = Ends {
        stdin: params.stdin.then_some(stdin_theirs),
        stdout: stdout_theirs,
        stderr: stderr_theirs,
        resize: params.tty.then_some(resize_rx),
        status: status_tx,
    };
    let task = tokio::spawn(message_loop(socket, ends));
    Attached {
        stdin: params.stdin.then(|| Box::new(stdin_mine) as Writer),
        stdout: stdout_mine.map(|r| Box::new(r) as Reader),
        stderr: stderr_mine.map(|r| Box::new(r) as Reader),
        resize: params.tty.then_some(resize_tx),
        status: Some(Box::pin(async move { status_rx.await.ok() })),
        done: Box::pin(async move {
            task.await
                .unwrap_or_else(|e| Err(format!("the attach's task failed: {e}")))
        }),
    }
}

fn split_pipe(
    pipe: Option<(tokio::io::DuplexStream, tokio::io::DuplexStream)>,
) -> (
    Option<tokio::io::DuplexStream>,
    Option<tokio::io::DuplexStream>,
) {
    match pipe {
        Some((mine, theirs)) => (Some(mine), Some(theirs)),
        None => (None, None),
    }
}

/// The loop's side of the caller's ends.
struct Ends {
    stdin: Option<tokio::io::DuplexStream>,
    stdout: Option<tokio::io::DuplexStream>,
    stderr: Option<tokio::io::DuplexStream>,
    resize: Option<futures::channel::mpsc::Receiver<TerminalSize>>,
    status: tokio::sync::oneshot::Sender<Status>,
}

/// Forwards until the server sends the final status or the connection ends: `Ok`
/// for an orderly end (a status, or a close), `Err` with why for a broken
/// connection or a server silent for [`SILENT_FOR`].
async fn message_loop<S>(mut socket: S, ends: Ends) -> Result<(), String>
where
    S: futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>>
        + futures::Sink<Message, Error = tokio_tungstenite::tungstenite::Error>
        + Unpin,
{
    let Ends {
        stdin,
        mut stdout,
        mut stderr,
        resize,
        status,
    } = ends;
    // What the caller sends (stdin, its end, sizes) comes as ready messages.
    let (outgoing_tx, mut outgoing) = tokio::sync::mpsc::channel(8);
    let pumps = [
        stdin.map(|stdin| tokio::spawn(pump_stdin(stdin, outgoing_tx.clone()))),
        resize.map(|sizes| tokio::spawn(pump_resizes(sizes, outgoing_tx.clone()))),
    ];
    drop(outgoing_tx);
    let _abort_pumps = AbortOnDrop(pumps.into_iter().flatten().collect());
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ping.reset();
    let mut heard = tokio::time::Instant::now();
    let mut outgoing_open = true;
    loop {
        tokio::select! {
            _ = ping.tick() => {
                if heard.elapsed() >= SILENT_FOR {
                    return Err(format!(
                        "no answer from the server for {}s (WebSocket ping)",
                        SILENT_FOR.as_secs()
                    ));
                }
                send_within(&mut socket, Message::Ping(Default::default())).await?;
            }
            message = socket.next() => {
                let data = match message {
                    None | Some(Ok(Message::Close(_))) => return Ok(()),
                    Some(Err(e)) => return Err(e.to_string()),
                    Some(Ok(Message::Binary(data))) => data,
                    // Pongs and pings (answered by tungstenite) only say it is alive.
                    Some(Ok(_)) => {
                        heard = tokio::time::Instant::now();
                        continue;
                    }
                };
                let Some((&channel, data)) = data.split_first() else { continue };
                let to = match channel {
                    STDOUT => &mut stdout,
                    STDERR => &mut stderr,
                    STATUS => {
                        match serde_json::from_slice::<Status>(data) {
                            Ok(s) => { let _ = status.send(s); }
                            Err(e) => tracing::debug!("the status channel's message is not a Status: {e}"),
                        }
                        return Ok(());
                    }
                    _ => continue,
                };
                // A reader that left takes nothing more; the session goes on.
                if let Some(pipe) = to
                    && !data.is_empty()
                    && pipe.write_all(data).await.is_err()
                {
                    *to = None;
                }
                // Counted once our reader took it: a slow reader is no silent server.
                heard = tokio::time::Instant::now();
            }
            message = outgoing.recv(), if outgoing_open => match message {
                Some(message) => send_within(&mut socket, message).await?,
                None => outgoing_open = false,
            },
        }
    }
}

/// Sends `message`, within [`SILENT_FOR`]: a server that takes nothing (its side of
/// the connection full, and it gone) is as silent as one that sends nothing.
async fn send_within<S>(socket: &mut S, message: Message) -> Result<(), String>
where
    S: futures::Sink<Message, Error = tokio_tungstenite::tungstenite::Error> + Unpin,
{
    match tokio::time::timeout(SILENT_FOR, socket.send(message)).await {
        Ok(sent) => sent.map_err(|e| e.to_string()),
        Err(_) => Err(format!(
            "the server took nothing for {}s (WebSocket)",
            SILENT_FOR.as_secs()
        )),
    }
}

/// Aborts the pumps when the loop ends.
struct AbortOnDrop(Vec<tokio::task::JoinHandle<()>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// The caller's stdin as channel 0's messages, then v5's close of it at its end.
async fn pump_stdin(mut stdin: tokio::io::DuplexStream, to: tokio::sync::mpsc::Sender<Message>) {
    let mut buf = vec![0; 32 * 1024];
    loop {
        buf[0] = STDIN;
        match stdin.read(&mut buf[1..]).await {
            Ok(n) if n > 0 => {
                if to.send(Message::binary(buf[..=n].to_vec())).await.is_err() {
                    return;
                }
            }
            _ => {
                let _ = to.send(Message::binary(vec![CLOSE, STDIN])).await;
                return;
            }
        }
    }
}

/// Each terminal size as channel 4 carries it: Go's JSON of `TerminalSize`.
async fn pump_resizes(
    mut sizes: futures::channel::mpsc::Receiver<TerminalSize>,
    to: tokio::sync::mpsc::Sender<Message>,
) {
    while let Some(size) = sizes.next().await {
        let mut message = vec![RESIZE];
        message.extend_from_slice(
            format!("{{\"Width\":{},\"Height\":{}}}", size.width, size.height).as_bytes(),
        );
        if to.send(Message::binary(message)).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests;
