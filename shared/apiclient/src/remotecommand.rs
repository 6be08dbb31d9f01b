//! Attaching to a container's streams as kubectl 1.37 does: over a WebSocket
//! (`v5.channel.k8s.io`, [`websocket`]) first, and over SPDY
//! (`v4.channel.k8s.io`, [`crate::spdy`]) when the WebSocket upgrade is refused, or
//! at once when `KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false`.
//!
//! kubectl offers only v5 over WebSockets ([`websocket_protocols`]); a server
//! without it (before 1.30, or a proxy that does not pass WebSockets) refuses the
//! upgrade, and the same request goes again as SPDY's POST. The fallback is taken on
//! an answer that is not `101` (an API error, or an upgrade with the wrong protocol),
//! never on a transport error, as client-go's `IsUpgradeFailure`.
//!
//! Either way the caller gets one [`Attached`]: the container's streams, the
//! terminal size's sender, the final status, and the end of the session. Both
//! transports ping the server every second and end the session, as broken, once it
//! has said nothing for a few seconds ([`websocket::SILENT_FOR`],
//! [`spdy::SILENT_FOR`]): a session that ends without the final status was cut, and
//! the caller can tell it from the container's end.

use std::future::Future;
use std::io;
use std::pin::Pin;

use futures::StreamExt as _;
use futures::future::BoxFuture;
use http_body_util::BodyExt as _;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kube::api::{AttachParams, TerminalSize};
use kube::core::Resource as _;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite};

use crate::spdy::{self, Session};

pub mod websocket;

/// The one protocol kubectl offers over a WebSocket.
pub const WEBSOCKET_PROTOCOL: &str = "v5.channel.k8s.io";
/// The protocol offered over SPDY: v4 ends stdin with the stream's FIN and reports
/// the exit as a JSON `Status`, and every server since 1.4 speaks it.
pub const SPDY_PROTOCOL: &str = "v4.channel.k8s.io";
/// kubectl's switch (`cmdutil.RemoteCommandWebsockets`): `false` goes to SPDY at once.
pub const WEBSOCKETS_ENV: &str = "KUBECTL_REMOTE_COMMAND_WEBSOCKETS";

/// The most of a refused upgrade's body, or of the final status, that is read.
const BODY_LIMIT: usize = 64 * 1024;
/// How long the server may take to accept the streams (client-go's
/// `createStreamResponseTimeout`).
const STREAMS_ACCEPTED: std::time::Duration = std::time::Duration::from_secs(30);

type Reader = Box<dyn AsyncRead + Send + Unpin>;
type Writer = Box<dyn AsyncWrite + Send + Unpin>;
pub type TerminalSizeSender = futures::channel::mpsc::Sender<TerminalSize>;

/// An attached session, over either transport. Each part can be taken once.
pub struct Attached {
    stdin: Option<Writer>,
    stdout: Option<Reader>,
    stderr: Option<Reader>,
    resize: Option<TerminalSizeSender>,
    status: Option<BoxFuture<'static, Option<Status>>>,
    done: Pin<Box<dyn Future<Output = Result<(), String>> + Send>>,
}

impl Attached {
    /// The container's stdin: end of file for the container once shut down.
    pub fn stdin(&mut self) -> Option<Writer> {
        self.stdin.take()
    }

    pub fn stdout(&mut self) -> Option<Reader> {
        self.stdout.take()
    }

    pub fn stderr(&mut self) -> Option<Reader> {
        self.stderr.take()
    }

    pub fn terminal_size(&mut self) -> Option<TerminalSizeSender> {
        self.resize.take()
    }

    /// The final status the server sends on the error channel; `None` when the
    /// session ended without one.
    pub fn take_status(&mut self) -> Option<BoxFuture<'static, Option<Status>>> {
        self.status.take()
    }

    /// Waits for the session's connection to end.
    pub async fn join(self) -> Result<(), String> {
        self.done.await
    }
}

/// Why an attach did not start.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// SPDY's upgrade was refused; kubectl's words.
    #[error("unable to upgrade connection: {0}")]
    Upgrade(String),
    #[error("{0}")]
    Streams(String),
}

/// Attaches to `name` in `namespace` as kubectl does (see the module's text).
pub async fn attach(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    params: &AttachParams,
) -> Result<Attached, AttachError> {
    if !websockets_disabled() {
        match websocket::attach(client, namespace, name, params).await {
            Ok(attached) => return Ok(attached),
            Err(e) if upgrade_refused(&e) => {
                // client-go's fallback executor logs the same line at -v=4.
                if crate::klog::enabled(4) {
                    let err = e.to_string();
                    crate::klog::info(
                        "fallback.go",
                        line!(),
                        &crate::klog::structured(
                            "RemoteCommand fallback",
                            &[("err", crate::klog::Value::Text(err.as_bytes()))],
                        ),
                    );
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    attach_spdy(client, namespace, name, params).await
}

fn websockets_disabled() -> bool {
    std::env::var(WEBSOCKETS_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("false"))
}

/// client-go's `IsUpgradeFailure`: the server answered, but not with the upgrade.
fn upgrade_refused(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(_) | kube::Error::UpgradeConnection(_))
}

/// On an upgrade request for a remote command over a WebSocket, offers only
/// [`WEBSOCKET_PROTOCOL`], as kubectl does. kube offers v4 after it, which a
/// server before 1.30 takes; v4 over a WebSocket cannot end stdin, so a container
/// that reads it would wait forever, and kubectl's users get SPDY there instead.
pub fn websocket_protocols(headers: &mut http::HeaderMap) {
    let offers_v5 = headers
        .get(http::header::SEC_WEBSOCKET_PROTOCOL)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|p| p.trim() == WEBSOCKET_PROTOCOL));
    if offers_v5 {
        headers.insert(
            http::header::SEC_WEBSOCKET_PROTOCOL,
            http::HeaderValue::from_static(WEBSOCKET_PROTOCOL),
        );
    }
}

async fn attach_spdy(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    params: &AttachParams,
) -> Result<Attached, AttachError> {
    let url = Pod::url_path(&(), Some(namespace));
    let request = kube::core::Request::new(url)
        .attach(name, params)
        .map_err(kube::Error::BuildRequest)?;
    let (mut parts, body) = request.into_parts();
    // SPDY upgrades on a POST (client-go's SPDY executor, as kubectl calls it).
    parts.method = http::Method::POST;
    let headers = &mut parts.headers;
    headers.insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("Upgrade"),
    );
    headers.insert(
        http::header::UPGRADE,
        http::HeaderValue::from_static("SPDY/3.1"),
    );
    headers.insert(
        "X-Stream-Protocol-Version",
        http::HeaderValue::from_static(SPDY_PROTOCOL),
    );
    let request = http::Request::from_parts(parts, kube::client::Body::from(body));
    let mut response = client.send(request).await?;
    let upgraded_to_spdy = response.status() == http::StatusCode::SWITCHING_PROTOCOLS
        && header_has(&response, http::header::CONNECTION, "upgrade")
        && header_has(&response, http::header::UPGRADE, "spdy/3.1");
    if !upgraded_to_spdy {
        let body = bounded_body(response.into_body()).await;
        return Err(AttachError::Upgrade(match body {
            Some(body) => upgrade_error_message(&body),
            None => "unable to read error from server response".into(),
        }));
    }
    let protocol = response
        .headers()
        .get("X-Stream-Protocol-Version")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    if protocol != SPDY_PROTOCOL {
        return Err(AttachError::Streams(format!(
            "the server chose the streaming protocol {protocol:?}, not {SPDY_PROTOCOL:?}"
        )));
    }
    let upgraded = hyper::upgrade::on(&mut response)
        .await
        .map_err(|e| AttachError::Streams(format!("unable to upgrade connection: {e}")))?;
    let session = Session::start(hyper_util::rt::TokioIo::new(upgraded));
    let streams = tokio::time::timeout(STREAMS_ACCEPTED, open_streams(&session, params))
        .await
        .map_err(|_| {
            AttachError::Streams(format!(
                "the server did not accept the attach's streams within {}s",
                STREAMS_ACCEPTED.as_secs()
            ))
        })?
        .map_err(|e| AttachError::Streams(e.to_string()))?;
    Ok(streams.into_attached(session))
}

fn header_has<B>(response: &http::Response<B>, name: http::header::HeaderName, word: &str) -> bool {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains(word))
}

/// A refused upgrade's body, up to [`BODY_LIMIT`]; `None` when it could not be read.
async fn bounded_body(body: kube::client::Body) -> Option<Vec<u8>> {
    let limited = http_body_util::Limited::new(body, BODY_LIMIT);
    limited.collect().await.ok().map(|c| c.to_bytes().to_vec())
}

/// client-go's `upgradeErrorMessage`: a `Status`'s message (or an `error` field),
/// else the body as it is.
fn upgrade_error_message(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct StatusLike {
        #[serde(default)]
        message: String,
        #[serde(default)]
        error: String,
    }
    if let Ok(status) = serde_json::from_slice::<StatusLike>(body) {
        for message in [status.message.trim(), status.error.trim()] {
            if !message.is_empty() {
                return message.to_string();
            }
        }
    }
    let text = String::from_utf8_lossy(body);
    match text.trim() {
        "" => "empty server response".into(),
        text => text.to_string(),
    }
}

/// The streams of one attach, opened in client-go's order (error, stdin, stdout,
/// stderr unless a TTY, resize with a TTY) and all accepted.
struct Streams {
    error: spdy::Stream,
    stdin: Option<spdy::Stream>,
    stdout: Option<spdy::Stream>,
    stderr: Option<spdy::Stream>,
    resize: Option<spdy::Stream>,
}

async fn open_streams(session: &Session, params: &AttachParams) -> io::Result<Streams> {
    let open = |kind: &'static str| async move { session.open(&[("streamType", kind)]).await };
    let error = open("error").await?;
    let stdin = match params.stdin {
        true => Some(open("stdin").await?),
        false => None,
    };
    let stdout = match params.stdout {
        true => Some(open("stdout").await?),
        false => None,
    };
    let stderr = match params.stderr && !params.tty {
        true => Some(open("stderr").await?),
        false => None,
    };
    let resize = match params.tty {
        true => Some(open("resize").await?),
        false => None,
    };
    let mut streams = Streams {
        error,
        stdin,
        stdout,
        stderr,
        resize,
    };
    // Sent together, accepted together: one round trip, where client-go waits for
    // each stream's reply before it opens the next.
    streams.error.replied().await?;
    for stream in [
        &mut streams.stdin,
        &mut streams.stdout,
        &mut streams.stderr,
        &mut streams.resize,
    ]
    .into_iter()
    .flatten()
    {
        stream.replied().await?;
    }
    Ok(streams)
}

impl Streams {
    fn into_attached(self, session: Session) -> Attached {
        let (status_tx, status_rx) = tokio::sync::oneshot::channel();
        let (error, _) = self.error.split();
        tokio::spawn(async move {
            let _ = status_tx.send(read_status(error).await);
        });
        let stdin = self.stdin.map(|s| {
            let (mine, theirs) = tokio::io::duplex(32 * 1024);
            let (_, writer) = s.split();
            tokio::spawn(pump_stdin(theirs, writer));
            Box::new(mine) as Writer
        });
        let resize = self.resize.map(|s| {
            let (tx, rx) = futures::channel::mpsc::channel(4);
            let (_, writer) = s.split();
            tokio::spawn(pump_resizes(rx, writer));
            tx
        });
        let reader = |s: Option<spdy::Stream>| s.map(|s| Box::new(s.split().0) as Reader);
        Attached {
            stdin,
            stdout: reader(self.stdout),
            stderr: reader(self.stderr),
            resize,
            status: Some(Box::pin(async move { status_rx.await.ok().flatten() })),
            done: Box::pin(async move {
                match session.ended().await {
                    None => Ok(()),
                    Some(why) => Err(why),
                }
            }),
        }
    }
}

/// The error stream's one message, the v4 protocol's JSON `Status`; `None` when the
/// stream ended empty or with something else.
async fn read_status(error: tokio::io::DuplexStream) -> Option<Status> {
    let mut bytes = Vec::new();
    error
        .take(BODY_LIMIT as u64)
        .read_to_end(&mut bytes)
        .await
        .ok()?;
    if bytes.is_empty() {
        return None;
    }
    match serde_json::from_slice(&bytes) {
        Ok(status) => Some(status),
        Err(e) => {
            tracing::debug!("the error stream's message is not a Status: {e}");
            None
        }
    }
}

/// Copies what the caller writes to the stdin stream; its end of file ends our half
/// of the stream (FIN), which the container reads as the end of its input.
async fn pump_stdin(mut from: tokio::io::DuplexStream, mut to: spdy::Writer) {
    let mut buf = vec![0; 32 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => {
                let _ = to.send(&[], true).await;
                return;
            }
            Ok(n) => {
                if to.send(&buf[..n], false).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Sends each terminal size as the v3+ protocols' resize stream carries it: Go's
/// JSON encoding of `remotecommand.TerminalSize`, one per line.
async fn pump_resizes(
    mut sizes: futures::channel::mpsc::Receiver<TerminalSize>,
    mut to: spdy::Writer,
) {
    while let Some(size) = sizes.next().await {
        let line = format!("{{\"Width\":{},\"Height\":{}}}\n", size.width, size.height);
        if to.send(line.as_bytes(), false).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests;
