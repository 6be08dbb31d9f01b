//! `attach` and `exec` over WebSocket with the Kubernetes channel
//! protocols `v5.channel.k8s.io` and `v4.channel.k8s.io`.
//!
//! Every binary message starts with a channel byte: 0 stdin, 1 stdout,
//! 2 stderr, 3 error (one JSON `Status` when the stream ends), 4 resize
//! (`{"Width":…,"Height":…}`); v5 adds 255 + channel to close a channel
//! (stdin: end of file). A terminal has a single output, sent on stdout.
//!
//! Attach streams the current run's output from the moment of attaching and
//! ends with `Success` when the run ends, as a container runtime's attach
//! does (the exit code is in the pod status). Exec starts a new process in
//! the container's directory and environment and ends with its exit code:
//! `Success`, or `Failure`/`NonZeroExitCode` like the kubelet.
//!
//! SPDY (the other transport kubectl knows) is refused with 400, which makes
//! clients that try WebSocket first keep using it.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt as _, StreamExt as _};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Empty};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};

use super::{Body, Query, Refusal, text};
use crate::node::process::io::{Follower, Input, Run, Stream};
use crate::node::process::{ContainerHandle, Registry, spawn};

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
const RESIZE: u8 = 4;
const CLOSE: u8 = 255;

/// Protocols in order of preference.
const PROTOCOLS: [&str; 2] = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

/// What the client asked to stream.
#[derive(Clone, Copy)]
struct Wanted {
    stdin: bool,
    stdout: bool,
    stderr: bool,
    v5: bool,
    exec: bool,
}

pub(super) async fn handle(
    req: Request<Incoming>,
    registry: &Registry,
    ns: &str,
    pod: &str,
    container: &str,
    query: &Query,
    exec: bool,
) -> Response<Body> {
    let (protocol, key) = match negotiate(&req) {
        Ok(negotiated) => negotiated,
        Err(refused) => return refused.response(),
    };
    let Some(handle) = registry.get(ns, pod, container) else {
        return text(
            StatusCode::NOT_FOUND,
            &format!("container {container:?} in pod {pod:?} is not available"),
        );
    };
    let wanted = Wanted {
        // The API server forwards the streams with the kubelet's own names
        // (`input`, `output`, `error`); clients talking to a kubelet
        // directly use the pod API's.
        stdin: query.flag("input") || query.flag("stdin"),
        stdout: query.flag("output") || query.flag("stdout"),
        stderr: query.flag("error") || query.flag("stderr"),
        v5: protocol == PROTOCOLS[0],
        exec,
    };

    let run = if exec {
        match start_exec(&handle, container, query, wanted) {
            Ok(run) => run,
            Err(refused) => return refused.response(),
        }
    } else {
        match handle.running(Duration::from_secs(5)).await {
            Some(run) => run,
            None => {
                return text(
                    StatusCode::BAD_REQUEST,
                    &format!("container {container:?} in pod {pod:?} is not running"),
                );
            }
        }
    };
    // Attach sees output from now on; exec all of its process's output.
    let from = if exec { 0 } else { run.len() };

    let upgrade = hyper::upgrade::on(req);
    tokio::spawn(async move {
        match upgrade.await {
            Ok(upgraded) => {
                let ws =
                    WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None)
                        .await;
                session(ws, run, from, wanted).await;
            }
            Err(e) => tracing::debug!(error = %e, "kubelet API upgrade failed"),
        }
    });

    switching_protocols(&key, protocol)
}

/// The channel protocol to speak and the client's `Sec-WebSocket-Key`, or the
/// answer refusing a request that is no WebSocket upgrade to one of
/// [`PROTOCOLS`].
fn negotiate(req: &Request<Incoming>) -> Result<(&'static str, String), Refusal> {
    let header = |name: http::header::HeaderName| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let upgrade = header(http::header::UPGRADE).to_ascii_lowercase();
    if !upgrade.contains("websocket") {
        return Err(Refusal(
            StatusCode::BAD_REQUEST,
            "the simulated kubelet streams over WebSocket (v5.channel.k8s.io, v4.channel.k8s.io) only"
                .to_owned(),
        ));
    }
    let offered = header(http::header::SEC_WEBSOCKET_PROTOCOL);
    let Some(protocol) = PROTOCOLS
        .into_iter()
        .find(|p| offered.split(',').any(|o| o.trim() == *p))
    else {
        return Err(Refusal(
            StatusCode::BAD_REQUEST,
            format!("unsupported streaming protocols {offered:?}; supported: {PROTOCOLS:?}"),
        ));
    };
    Ok((protocol, header(http::header::SEC_WEBSOCKET_KEY)))
}

/// Starts the exec's process in the container's directory and environment; the
/// run finishes with its exit code.
fn start_exec(
    handle: &ContainerHandle,
    container: &str,
    query: &Query,
    wanted: Wanted,
) -> Result<Arc<Run>, Refusal> {
    let argv = query.all("command");
    if argv.is_empty() {
        return Err(Refusal(
            StatusCode::BAD_REQUEST,
            "you must specify at least 1 command".to_owned(),
        ));
    }
    let tty = query.flag("tty");
    let (input_tx, input_rx) = tokio::sync::mpsc::unbounded_channel();
    let run = Arc::new(Run::new(tty, false, wanted.stdin.then_some(input_tx)));
    let spec = spawn::Spec {
        argv: &argv,
        env: &handle.env,
        dir: &handle.dir,
        mounts: &handle.mounts,
        tty,
        stdin: wanted.stdin,
    };
    match spawn::spawn(&spec, &run, input_rx) {
        Ok(started) => {
            let finisher = Arc::clone(&run);
            tokio::spawn(async move {
                // `spawn` killed the rest of the group when it exited.
                let code = started.exited.await.unwrap_or(128 + libc::SIGKILL);
                finisher.finish(code);
            });
            Ok(run)
        }
        Err(e) => Err(Refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "failed to exec in container {container:?}: {:?}: {e}",
                argv[0]
            ),
        )),
    }
}

/// The `101 Switching Protocols` answer accepting the upgrade.
fn switching_protocols(key: &str, protocol: &'static str) -> Response<Body> {
    let mut response = Response::new(Empty::<Bytes>::new().map_err(|e| match e {}).boxed_unsync());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("Upgrade"),
    );
    headers.insert(
        http::header::UPGRADE,
        http::HeaderValue::from_static("websocket"),
    );
    if let Ok(accept) = http::HeaderValue::from_str(&derive_accept_key(key.as_bytes())) {
        headers.insert(http::header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    headers.insert(
        http::header::SEC_WEBSOCKET_PROTOCOL,
        http::HeaderValue::from_static(protocol),
    );
    response
}

type Ws = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// How long the end of a session waits for the client's answer to our close
/// frame before closing the connection anyway.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

async fn session(ws: Ws, run: Arc<Run>, from: usize, wanted: Wanted) {
    let (mut sink, mut source) = ws.split();
    let output_run = Arc::clone(&run);
    let mut output = tokio::spawn(async move {
        let mut follower = Follower::new(&output_run, from);
        while let Some(chunks) = follower.next(&output_run).await {
            for chunk in chunks {
                let channel = match (chunk.stream, output_run.tty) {
                    (Stream::Stderr, false) if wanted.stderr => STDERR,
                    (Stream::Stderr, false) => continue,
                    _ if wanted.stdout => STDOUT,
                    _ => continue,
                };
                let mut frame = Vec::with_capacity(chunk.data.len() + 1);
                frame.push(channel);
                frame.extend_from_slice(&chunk.data);
                if sink.send(Message::Binary(frame.into())).await.is_err() {
                    return None;
                }
            }
        }
        let status = final_status(output_run.exit_code().unwrap_or(0), wanted.exec);
        let mut frame = vec![ERROR];
        frame.extend_from_slice(status.to_string().as_bytes());
        if sink.send(Message::Binary(frame.into())).await.is_err() {
            return None;
        }
        // A close frame without a code reads as an error (1005) to Go
        // clients; 1000 is the end of the streams.
        sink.send(Message::Close(Some(CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        })))
        .await
        .ok()?;
        Some(sink)
    });

    let mut wrote_stdin = false;
    let mut sink = None;
    loop {
        tokio::select! {
            ended = &mut output => {
                sink = ended.ok().flatten();
                break;
            }
            message = source.next() => {
                let data = match message {
                    Some(Ok(Message::Binary(data))) => data,
                    Some(Ok(Message::Text(text))) => Bytes::from(text.as_str().to_owned()),
                    Some(Ok(Message::Close(_)) | Err(_)) | None => {
                        // The client left; the output has no reader any more.
                        output.abort();
                        break;
                    }
                    Some(Ok(_)) => continue,
                };
                let Some((&channel, payload)) = data.split_first() else { continue };
                match channel {
                    STDIN if wanted.stdin => {
                        wrote_stdin = true;
                        run.send_input(Input::Data(payload.to_vec()));
                    }
                    RESIZE => {
                        if let Ok(size) = serde_json::from_slice::<TerminalSize>(payload) {
                            run.send_input(Input::Resize { width: size.width, height: size.height });
                        }
                    }
                    CLOSE if wanted.v5 && payload.first() == Some(&STDIN) && wanted.stdin => {
                        run.send_input(Input::Eof);
                    }
                    _ => {}
                }
            }
        }
    }
    if wanted.stdin && (wrote_stdin || !wanted.exec) {
        run.detached();
    }
    if wanted.exec && wanted.stdin {
        // An exec'd process whose client left reads end of file.
        run.send_input(Input::Eof);
    }
    if let Some(sink) = sink
        && let Ok(ws) = sink.reunite(source)
    {
        close(ws).await;
    }
}

/// Ends a session whose close frame was sent: reads (and drops) what the
/// client still sends until its close frame answers ours, then shuts the
/// connection down (TLS close_notify, then FIN) rather than just dropping it.
///
/// The kubelet closes the connection right after its close frame; dropping a
/// socket with unread input (stdin in flight, the client's close frame) makes
/// the kernel answer with a reset instead of a FIN, and a reset may discard
/// the last frames (the status) before the API server has passed them on.
async fn close(mut ws: Ws) {
    let drained = tokio::time::timeout(CLOSE_WAIT, async {
        while let Some(Ok(message)) = ws.next().await {
            if message.is_close() {
                break;
            }
        }
    })
    .await;
    if drained.is_err() {
        tracing::debug!("the attach/exec client did not answer the close frame");
    }
    let _ = tokio::io::AsyncWriteExt::shutdown(ws.get_mut()).await;
}

#[derive(serde::Deserialize)]
struct TerminalSize {
    #[serde(rename = "Width")]
    width: u16,
    #[serde(rename = "Height")]
    height: u16,
}

/// The `Status` sent on the error channel when the stream ends.
fn final_status(exit_code: i32, exec: bool) -> serde_json::Value {
    if exit_code == 0 || !exec {
        return serde_json::json!({"metadata": {}, "status": "Success"});
    }
    serde_json::json!({
        "metadata": {},
        "status": "Failure",
        "message": format!("command terminated with non-zero exit code: error executing command, exit code {exit_code}"),
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": exit_code.to_string()}]},
    })
}
