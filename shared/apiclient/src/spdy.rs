//! A SPDY/3.1 client session, as much of it as Kubernetes' streaming uses (attach and
//! exec before WebSockets, and on servers without them): kubectl falls back to it
//! when a WebSocket upgrade fails (`remotecommand`).
//!
//! The peer is always `moby/spdystream` (the kubelet's and the container runtimes'
//! streaming servers; the API server passes the upgraded connection through), and
//! what it does decides what is built here:
//!
//! - the client opens every stream (odd ids from 1), with one header block naming it
//!   (`streamType`); the peer answers each with SYN_REPLY;
//! - DATA on a stream the peer has not replied to yet is dropped by it, so a
//!   [`Writer`] waits for the reply before its first frame, as client-go's
//!   `CreateStream` waits before it returns;
//! - the peer's header blocks are never read (nothing in them is needed: the protocol
//!   version was agreed on the HTTP upgrade), so their compression context is not kept;
//! - spdystream has no flow control: its WINDOW_UPDATE and SETTINGS are ignored, and
//!   none are sent;
//! - the peer's PINGs (even ids) are answered, as SPDY requires; ours (odd ids) go
//!   every [`PING_EVERY`], and a peer that has sent nothing at all (no PING reply,
//!   no data) for [`SILENT_FOR`] ends the session as broken: a dead server behind a
//!   balancer, or a partition, sends no FIN, and a quiet container looks the same;
//! - GOAWAY, or the end of the connection, ends every stream.
//!
//! Each stream's incoming data goes into an in-memory pipe whose other end the
//! caller reads; the peer's FIN (or RST_STREAM) ends it. One task reads the
//! connection and one writes it.

pub mod frame;

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _, DuplexStream};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use frame::{Frame, HeaderCompressor};

/// How often the session pings the peer (spdystream echoes a PING of the other
/// side's parity at once).
pub const PING_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
/// How long the peer may send nothing before the session counts as broken.
pub const SILENT_FOR: std::time::Duration = std::time::Duration::from_secs(4);

/// How many bytes of a stream's incoming data wait for its reader before the
/// connection's reader waits too.
const PIPE_BYTES: usize = 256 * 1024;
/// The largest DATA frame sent (the peer takes up to 16 MiB; smaller frames keep a
/// resize or an end of input from waiting behind a long one).
const CHUNK: usize = 32 * 1024;

/// One SPDY connection; dropping it stops reading the connection and closes it.
pub struct Session {
    shared: Arc<Shared>,
    reader: JoinHandle<()>,
    ended: watch::Receiver<Option<String>>,
}

struct Shared {
    /// Frames to write, in order.
    out: mpsc::Sender<Vec<u8>>,
    /// Compresses the header blocks and numbers the streams: both in the order the
    /// SYN_STREAMs are queued, under one lock.
    opening: tokio::sync::Mutex<Opening>,
    streams: Mutex<HashMap<u32, Slot>>,
    /// When the peer was last heard from (or a slow reader of ours last took its
    /// data: a full pipe is no silent peer).
    heard: Mutex<tokio::time::Instant>,
}

struct Opening {
    compressor: HeaderCompressor,
    next_id: u32,
}

/// What the reader needs of an open stream.
struct Slot {
    replied: Option<oneshot::Sender<()>>,
    /// Where its incoming data goes; `None` once the peer ended it or its reader left.
    inbound: Option<DuplexStream>,
}

/// A stream opened by [`Session::open`]: its incoming data, and a writer.
pub struct Stream {
    pub id: u32,
    /// The stream's incoming data; end of file when the peer ends the stream or the
    /// connection.
    pub incoming: DuplexStream,
    /// The peer's SYN_REPLY, until it was waited for.
    replied: Option<oneshot::Receiver<()>>,
    out: mpsc::Sender<Vec<u8>>,
}

impl Stream {
    /// Waits for the peer's SYN_REPLY; an error when the stream or the connection
    /// ended without one.
    pub async fn replied(&mut self) -> io::Result<()> {
        let Some(replied) = self.replied.take() else {
            return Ok(());
        };
        replied.await.map_err(|_| {
            io::Error::new(
                io::ErrorKind::ConnectionReset,
                format!(
                    "SPDY stream {} ended before the server accepted it",
                    self.id
                ),
            )
        })
    }

    /// Splits the stream into its incoming data and a writer that sends after the
    /// reply came.
    pub fn split(self) -> (DuplexStream, Writer) {
        let writer = Writer {
            id: self.id,
            replied: self.replied,
            out: self.out,
        };
        (self.incoming, writer)
    }
}

/// Sends a stream's data.
pub struct Writer {
    id: u32,
    replied: Option<oneshot::Receiver<()>>,
    out: mpsc::Sender<Vec<u8>>,
}

impl Writer {
    /// Sends `data` (in frames of at most [`CHUNK`] bytes); with `fin`, the last
    /// frame ends our half of the stream.
    pub async fn send(&mut self, data: &[u8], fin: bool) -> io::Result<()> {
        if let Some(replied) = self.replied.take() {
            replied.await.map_err(|_| closed())?;
        }
        let mut chunks = data.chunks(CHUNK).peekable();
        if chunks.peek().is_none() {
            return self.queue(frame::data(self.id, fin, &[])).await;
        }
        while let Some(chunk) = chunks.next() {
            let last = chunks.peek().is_none();
            self.queue(frame::data(self.id, fin && last, chunk)).await?;
        }
        Ok(())
    }

    async fn queue(&self, frame: Vec<u8>) -> io::Result<()> {
        self.out.send(frame).await.map_err(|_| closed())
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the SPDY connection is closed")
}

impl Session {
    /// Starts a session on an upgraded connection.
    pub fn start(io: impl AsyncRead + AsyncWrite + Send + 'static) -> Session {
        let (read, write) = tokio::io::split(io);
        let (out, frames) = mpsc::channel(64);
        let (ended_tx, ended) = watch::channel(None);
        let shared = Arc::new(Shared {
            out,
            opening: tokio::sync::Mutex::new(Opening {
                compressor: HeaderCompressor::default(),
                next_id: 1,
            }),
            streams: Mutex::new(HashMap::new()),
            heard: Mutex::new(tokio::time::Instant::now()),
        });
        tokio::spawn(write_frames(write, frames));
        let reader = tokio::spawn(read_frames(read, shared.clone(), ended_tx));
        Session {
            shared,
            reader,
            ended,
        }
    }

    /// Opens a stream with `headers`.
    pub async fn open(&self, headers: &[(&str, &str)]) -> io::Result<Stream> {
        let (mine, incoming) = tokio::io::duplex(PIPE_BYTES);
        let (replied_tx, replied) = oneshot::channel();
        let mut opening = self.shared.opening.lock().await;
        let id = opening.next_id;
        let block = opening.compressor.compress(&frame::header_block(headers))?;
        self.shared.slots().insert(
            id,
            Slot {
                replied: Some(replied_tx),
                inbound: Some(mine),
            },
        );
        // Queued under the lock: the peer must decompress the blocks in the order
        // they were compressed.
        if self
            .shared
            .out
            .send(frame::syn_stream(id, false, &block))
            .await
            .is_err()
        {
            self.shared.slots().remove(&id);
            return Err(closed());
        }
        opening.next_id += 2;
        Ok(Stream {
            id,
            incoming,
            replied: Some(replied),
            out: self.shared.out.clone(),
        })
    }

    /// Resolves when the connection has ended, with why when it was not a clean end.
    pub async fn ended(&self) -> Option<String> {
        let mut ended = self.ended.clone();
        match ended.wait_for(Option::is_some).await {
            Ok(why) => why.clone().filter(|w| !w.is_empty()),
            Err(_) => None,
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Shared {
    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<u32, Slot>> {
        self.streams.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn heard_now(&self) {
        *self.heard.lock().unwrap_or_else(PoisonError::into_inner) = tokio::time::Instant::now();
    }

    fn silent_for(&self) -> std::time::Duration {
        self.heard
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .elapsed()
    }
}

async fn write_frames(mut w: impl AsyncWrite + Unpin, mut frames: mpsc::Receiver<Vec<u8>>) {
    while let Some(frame) = frames.recv().await {
        if w.write_all(&frame).await.is_err() || w.flush().await.is_err() {
            return;
        }
    }
    // Every sender is gone (the session and its writers): the connection is done.
    let _ = w.shutdown().await;
}

async fn read_frames(
    r: impl AsyncRead + Unpin,
    shared: Arc<Shared>,
    ended: watch::Sender<Option<String>>,
) {
    let why = tokio::select! {
        why = read_loop(r, &shared) => why,
        why = heartbeat(&shared) => why,
    };
    // Every stream ends with the connection: their readers see end of file.
    shared.slots().clear();
    let _ = ended.send(Some(why));
}

/// Pings every [`PING_EVERY`]; returns why the session is over once the peer has
/// been silent for [`SILENT_FOR`].
async fn heartbeat(shared: &Shared) -> String {
    let mut tick = tokio::time::interval(PING_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.reset();
    let mut id: u32 = 1;
    loop {
        tick.tick().await;
        if shared.silent_for() >= SILENT_FOR {
            return format!(
                "no answer from the server for {}s (SPDY ping)",
                SILENT_FOR.as_secs()
            );
        }
        // Never waits: a writer stuck on a connection that takes nothing must not
        // keep the silence from being seen.
        if let Err(mpsc::error::TrySendError::Closed(_)) = shared.out.try_send(frame::ping(id)) {
            return String::new();
        }
        id = id.wrapping_add(2);
    }
}

/// Reads frames until the connection ends: why, empty for an orderly end.
async fn read_loop(mut r: impl AsyncRead + Unpin, shared: &Shared) -> String {
    loop {
        let frame = match frame::read(&mut r).await {
            Ok(Some(frame)) => frame,
            Ok(None) => break String::new(),
            Err(e) => break e.to_string(),
        };
        shared.heard_now();
        match frame {
            Frame::Data { stream, fin, data } => {
                deliver(shared, stream, fin, &data).await;
                shared.heard_now();
            }
            Frame::Control {
                kind,
                flags,
                payload,
            } => match kind {
                frame::SYN_REPLY => {
                    let Some(stream) = Frame::control_stream(&payload) else {
                        continue;
                    };
                    let replied = shared
                        .slots()
                        .get_mut(&stream)
                        .and_then(|s| s.replied.take());
                    if let Some(replied) = replied {
                        let _ = replied.send(());
                    }
                    if flags & frame::FLAG_FIN != 0 {
                        deliver(shared, stream, true, &[]).await;
                    }
                }
                frame::RST_STREAM => {
                    if let Some(stream) = Frame::control_stream(&payload) {
                        // spdystream resets every stream when it closes the
                        // connection: the usual end, not news at -v=6.
                        tracing::trace!("SPDY stream {stream} reset by the server");
                        // Its reply and its data will not come.
                        shared.slots().remove(&stream);
                    }
                }
                frame::PING => {
                    // Ours are odd; the server's even ones are echoed.
                    if let Ok(id) = <[u8; 4]>::try_from(payload.as_slice()).map(u32::from_be_bytes)
                        && id % 2 == 0
                    {
                        let _ = shared.out.send(frame::ping(id)).await;
                    }
                }
                frame::GOAWAY => break String::new(),
                frame::SYN_STREAM => {
                    // The server opens no streams in remote commands.
                    if let Some(stream) = Frame::control_stream(&payload) {
                        let _ = shared
                            .out
                            .send(frame::rst_stream(stream, frame::REFUSED_STREAM))
                            .await;
                    }
                }
                // SETTINGS, WINDOW_UPDATE, HEADERS, NOOP and later types.
                _ => {}
            },
        }
    }
}

/// Writes a DATA frame's bytes into its stream's pipe; `fin` ends the pipe.
async fn deliver(shared: &Shared, stream: u32, fin: bool, data: &[u8]) {
    let Some(mut pipe) = shared
        .slots()
        .get_mut(&stream)
        .and_then(|s| s.inbound.take())
    else {
        return;
    };
    // A reader that left takes nothing more; the other streams go on.
    let kept = data.is_empty() || pipe.write_all(data).await.is_ok();
    if kept
        && !fin
        && let Some(slot) = shared.slots().get_mut(&stream)
    {
        slot.inbound = Some(pipe);
    }
}

#[cfg(test)]
mod tests;
