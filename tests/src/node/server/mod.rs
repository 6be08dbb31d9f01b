//! The kubelet's HTTPS API, as much of it as the API server proxies for
//! kubectl: `containerLogs`, `attach` and `exec`, for containers on the
//! process runtime ([`Registry`]).
//!
//! It listens on 127.0.0.1 with a self-signed certificate (the 1.20 API
//! server does not verify kubelets without `--kubelet-certificate-authority`)
//! and speaks HTTP/1.1 only: the API server's upgrade-aware proxy forwards
//! the client's own upgrade request for attach/exec, so what arrives here is
//! the client's WebSocket handshake (see [`stream`]).
//!
//! Errors are plain text with the kubelet's status codes; the API server
//! passes them on to the client.

mod stream;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt as _;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full, StreamBody, combinators::UnsyncBoxBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::process::Registry;
use super::process::io::{Chunk, Follower, LogRenderer, Run, since_start, tail_start};

/// A response body: whole, or streamed.
type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Serves the API on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, registry: Arc<Registry>) {
    let acceptor = match tls_acceptor() {
        Ok(acceptor) => acceptor,
        Err(e) => {
            tracing::error!(error = %e, "the kubelet API has no TLS certificate; not serving");
            return;
        }
    };
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "kubelet API accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let registry = Arc::clone(&registry);
        connections.spawn(async move {
            let tls = match acceptor.accept(tcp).await {
                Ok(tls) => tls,
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "kubelet API TLS handshake failed");
                    return;
                }
            };
            let service = hyper::service::service_fn(move |req| {
                let registry = Arc::clone(&registry);
                async move { Ok::<_, Infallible>(handle(req, &registry).await) }
            });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service)
                .with_upgrades()
                .await
            {
                tracing::debug!(%peer, error = %e, "kubelet API connection ended");
            }
        });
        // Reap finished connections so the set does not grow forever.
        while connections.try_join_next().is_some() {}
    }
}

/// A self-signed certificate for 127.0.0.1/localhost, made at start-up.
fn tls_acceptor() -> anyhow::Result<TlsAcceptor> {
    let certified =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])?;
    let cert = certified.cert.der().clone();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(vec![cert], key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

async fn handle(req: Request<Incoming>, registry: &Registry) -> Response<Body> {
    let path = req.uri().path().to_owned();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let query = Query::parse(req.uri().query().unwrap_or_default());
    tracing::debug!(
        method = %req.method(),
        %path,
        upgrade = ?req.headers().get(http::header::UPGRADE),
        protocols = ?req.headers().get(http::header::SEC_WEBSOCKET_PROTOCOL),
        "kubelet API request"
    );
    match (req.method(), segments.as_slice()) {
        (&Method::GET, ["containerLogs", ns, pod, container]) => {
            logs(registry, ns, pod, container, &query)
        }
        (&Method::GET | &Method::POST, [kind @ ("attach" | "exec"), ns, pod, container]) => {
            let exec = *kind == "exec";
            let (ns, pod, container) =
                ((*ns).to_owned(), (*pod).to_owned(), (*container).to_owned());
            stream::handle(req, registry, &ns, &pod, &container, &query, exec).await
        }
        (&Method::GET, ["healthz"]) => text(StatusCode::OK, "ok"),
        _ => text(StatusCode::NOT_FOUND, "404 page not found"),
    }
}

/// Query parameters, repeated ones in order (exec's `command`).
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    fn parse(query: &str) -> Self {
        Self(
            form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn all(&self, key: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Go's `strconv.ParseBool` truths, as the kubelet parses its flags.
    fn flag(&self, key: &str) -> bool {
        matches!(
            self.get(key),
            Some("1" | "t" | "T" | "true" | "TRUE" | "True")
        )
    }
}

pub(crate) fn text(status: StatusCode, message: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(message.to_owned())).boxed_unsync());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// An error answer before it is built: its status and plain-text message.
struct Refusal(StatusCode, String);

impl Refusal {
    fn response(&self) -> Response<Body> {
        text(self.0, &self.1)
    }
}

/// `GET /containerLogs/{ns}/{pod}/{container}`: the current (or with
/// `previous` the previous) run's output, optionally only what was written
/// since `sinceSeconds` ago or `sinceTime`, of that only the last
/// `tailLines`, at most `limitBytes`, with `timestamps`, and with `follow`
/// streamed until the run ends.
fn logs(
    registry: &Registry,
    ns: &str,
    pod: &str,
    container: &str,
    query: &Query,
) -> Response<Body> {
    let Some(handle) = registry.get(ns, pod, container) else {
        // The API server only proxies here for pods bound to this node and
        // containers in their spec: an unknown one runs on the timer-based
        // runtime, which prints nothing.
        return ok_body(Full::new(Bytes::new()).boxed_unsync());
    };
    let previous = query.flag("previous");
    let run = if previous {
        handle.previous()
    } else {
        handle.current()
    };
    let Some(run) = run else {
        return if previous {
            text(
                StatusCode::BAD_REQUEST,
                &format!("previous terminated container {container:?} in pod {pod:?} not found"),
            )
        } else {
            text(
                StatusCode::BAD_REQUEST,
                &format!(
                    "container {container:?} in pod {pod:?} is waiting to start: ContainerCreating"
                ),
            )
        };
    };
    let (tail, since) = match log_window(query) {
        Ok(window) => window,
        Err(refused) => return refused.response(),
    };
    let limit = query
        .get("limitBytes")
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0);
    let follow = query.flag("follow") && !previous;
    let mut renderer = LogRenderer::new(query.flag("timestamps"));

    let read = run.read_from(0);
    let head = render_head(&read.chunks, since, tail, &mut renderer);
    let mut remaining = limit;
    let head = clip(head, &mut remaining);
    if !follow || remaining == Some(0) {
        return ok_body(Full::new(Bytes::from(head)).boxed_unsync());
    }
    follow_logs(run, read.next, head, renderer, remaining)
}

/// The `tailLines` and the start (`sinceSeconds` or `sinceTime`) of a logs
/// request, or the answer refusing an invalid one.
fn log_window(
    query: &Query,
) -> Result<(Option<usize>, Option<k8s_openapi::jiff::Timestamp>), Refusal> {
    let tail = match query.get("tailLines").map(str::parse::<i64>) {
        None => None,
        Some(Ok(n)) if n >= 0 => usize::try_from(n).ok(),
        Some(_) => {
            return Err(Refusal(
                StatusCode::BAD_REQUEST,
                "tailLines must be a non-negative integer".to_owned(),
            ));
        }
    };
    let since = match (query.get("sinceSeconds"), query.get("sinceTime")) {
        (Some(seconds), _) => match seconds.parse::<i64>() {
            Ok(n) if n > 0 => k8s_openapi::jiff::Timestamp::now()
                .checked_sub(k8s_openapi::jiff::SignedDuration::from_secs(n))
                .ok(),
            _ => {
                return Err(Refusal(
                    StatusCode::BAD_REQUEST,
                    "sinceSeconds must be a positive integer".to_owned(),
                ));
            }
        },
        (None, Some(time)) => match time.parse::<k8s_openapi::jiff::Timestamp>() {
            Ok(t) => Some(t),
            Err(_) => {
                return Err(Refusal(
                    StatusCode::BAD_REQUEST,
                    "sinceTime must be an RFC 3339 time".to_owned(),
                ));
            }
        },
        (None, None) => None,
    };
    Ok((tail, since))
}

/// The output already written: from `since`, of that the last `tail` lines.
fn render_head(
    chunks: &[Chunk],
    since: Option<k8s_openapi::jiff::Timestamp>,
    tail: Option<usize>,
    renderer: &mut LogRenderer,
) -> Vec<u8> {
    let skip = since.map_or(0, |t| since_start(chunks, t));
    let chunks = &chunks[skip..];
    let (first, offset) = tail.map_or((0, 0), |n| tail_start(chunks, n));
    let mut head = Vec::new();
    for (i, chunk) in chunks.iter().enumerate().skip(first) {
        let mut chunk = chunk.clone();
        if i == first {
            chunk.data = chunk.data.slice(offset..);
        }
        head.extend(renderer.render(&chunk));
    }
    head
}

/// Streams `head`, then the run's output from chunk `seen` on until the run
/// ends, the client goes away or `remaining` bytes are used up.
fn follow_logs(
    run: Arc<Run>,
    seen: usize,
    head: Vec<u8>,
    mut renderer: LogRenderer,
    mut remaining: Option<usize>,
) -> Response<Body> {
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(16);
    tokio::spawn(async move {
        if !head.is_empty() && tx.send(Bytes::from(head)).await.is_err() {
            return;
        }
        let mut follower = Follower::new(&run, seen);
        while let Some(chunks) = follower.next(&run).await {
            let mut out = Vec::new();
            for chunk in &chunks {
                out.extend(renderer.render(chunk));
            }
            let out = clip(out, &mut remaining);
            if tx.send(Bytes::from(out)).await.is_err() || remaining == Some(0) {
                return;
            }
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    })
    .boxed();
    ok_body(http_body_util::BodyExt::boxed_unsync(StreamBody::new(
        stream,
    )))
}

/// Cuts `bytes` to what `limitBytes` still allows.
fn clip(mut bytes: Vec<u8>, remaining: &mut Option<usize>) -> Vec<u8> {
    if let Some(left) = remaining {
        bytes.truncate(*left);
        *left -= bytes.len();
    }
    bytes
}

fn ok_body(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain"),
    );
    response
}
