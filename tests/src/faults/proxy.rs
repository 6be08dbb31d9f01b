//! A TLS-terminating proxy on loopback in front of the real API server, for
//! deterministic crash tests: it counts the writes the server *applied* and can
//! SIGKILL a client right after the k-th one, before the client sees the answer.
//!
//! Why a proxy and not a stdout-line race or a sleep: the kill must land at an exact
//! point of the client's protocol. The proxy sees every request; when the server has
//! answered the k-th mutating request (POST/PUT/PATCH/DELETE, 2xx, not a dry run)
//! the proxy kills the client process and from then on forwards nothing, so the
//! server's state is exactly "k writes applied", whatever the client was doing
//! concurrently.
//!
//! Each downstream connection gets its own upstream TLS connection (HTTP/1.1 is one
//! request at a time per connection, so the mapping is 1:1 and watches stream
//! through untouched). The proxy runs on its own thread and runtime: tests block on
//! `Child::wait` while it works.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::anyhow;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::{TlsAcceptor, TlsConnector};

type Body = BoxBody<Bytes, hyper::Error>;

/// One write the server applied, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    pub method: String,
    pub path: String,
    pub status: u16,
}

impl std::fmt::Display for Write {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} → {}", self.method, self.path, self.status)
    }
}

/// When to kill whom.
#[derive(Debug, Default)]
struct Plan {
    /// Kill after this many applied writes (counted from the last [`ApiProxy::arm`]).
    after: Option<usize>,
    pid: Option<u32>,
    /// Set once the kill point was reached: from then on nothing is forwarded.
    fired: bool,
}

/// Answers the proxy puts in place of the server's, for the retry tests: every
/// `every`-th write (counted over all writes it sees, applied or not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inject {
    /// `429 TooManyRequests` with `Retry-After: retry_after`, not forwarded (what a
    /// busy API server answers).
    Throttle { every: usize, retry_after: u64 },
    /// Forwarded; when the server applied it, the answer is replaced by `504 Timeout`
    /// with `Retry-After: retry_after` (an answer lost after the write was applied).
    LoseAnswer { every: usize, retry_after: u64 },
}

#[derive(Default)]
struct Shared {
    writes: Mutex<Vec<Write>>,
    plan: Mutex<Plan>,
    pid_known: tokio::sync::Notify,
    /// Watches are answered `200` and then never sent an event (a stalled watch, as
    /// behind a load balancer that silently drops a long-lived stream).
    stall_watches: std::sync::atomic::AtomicBool,
    /// The injection and the writes seen since it was set.
    inject: Mutex<Option<(Inject, usize)>>,
}

/// The proxy; stops when dropped.
pub struct ApiProxy {
    /// A kubeconfig for the proxy, with the admin credentials of the real cluster.
    pub kubeconfig: PathBuf,
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

/// What the proxy needs to reach the real server.
struct Upstream {
    addr: SocketAddr,
    connector: TlsConnector,
}

impl ApiProxy {
    /// Starts a proxy in front of the cluster of `kubeconfig` (its current context,
    /// which must use a bearer token, as `kubeplug-cluster`'s admin context does).
    pub fn start(kubeconfig: &Path) -> anyhow::Result<Self> {
        let kc = kube::config::Kubeconfig::read_from(kubeconfig)?;
        let context_name = kc
            .current_context
            .clone()
            .ok_or_else(|| anyhow!("kubeconfig has no current context"))?;
        let context = kc
            .contexts
            .iter()
            .find(|c| c.name == context_name)
            .and_then(|c| c.context.clone())
            .ok_or_else(|| anyhow!("context {context_name} not found"))?;
        let cluster = kc
            .clusters
            .iter()
            .find(|c| c.name == context.cluster)
            .and_then(|c| c.cluster.clone())
            .ok_or_else(|| anyhow!("cluster {} not found", context.cluster))?;
        let user = kc
            .auth_infos
            .iter()
            .find(|a| Some(&a.name) == context.user.as_ref())
            .and_then(|a| a.auth_info.clone())
            .ok_or_else(|| anyhow!("user of context {context_name} not found"))?;
        let token = user
            .token
            .ok_or_else(|| anyhow!("the proxy needs a token user"))?;
        let upstream_addr = localcluster::latency::server_addr(&kc)?;
        anyhow::ensure!(
            upstream_addr.ip().is_loopback(),
            "the proxy forwards to loopback only"
        );
        let ca_path = cluster
            .certificate_authority
            .clone()
            .ok_or_else(|| anyhow!("cluster has no certificate-authority file"))?;
        let upstream_ca = std::fs::read(&ca_path)?;

        let dir = tempfile::Builder::new()
            .prefix("kubeplug-proxy-")
            .tempdir()?;
        let (acceptor, proxy_ca) = acceptor()?;
        let ca_file = dir.path().join("ca.crt");
        std::fs::write(&ca_file, proxy_ca)?;
        let connector = connector(&upstream_ca)?;

        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let kubeconfig_path = dir.path().join("kubeconfig");
        let namespace = context
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        std::fs::write(
            &kubeconfig_path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: proxy\n  cluster:\n    server: https://{addr}\n    certificate-authority: {}\nusers:\n- name: admin\n  user:\n    token: {}\ncontexts:\n- name: proxy\n  context:\n    cluster: proxy\n    user: admin\n    namespace: {namespace}\ncurrent-context: proxy\n",
                ca_file.display(),
                secrecy_expose(&token)
            ),
        )?;

        let shared = Arc::new(Shared::default());
        let upstream = Arc::new(Upstream {
            addr: upstream_addr,
            connector,
        });
        let thread_shared = Arc::clone(&shared);
        let (stop_tx, thread) =
            localcluster::latency::serve_on_own_thread("api-proxy", listener, move |listener| {
                accept_loop(listener, acceptor, upstream, thread_shared)
            })?;
        Ok(ApiProxy {
            kubeconfig: kubeconfig_path,
            addr,
            shared,
            stop: Some(stop_tx),
            thread: Some(thread),
            _dir: dir,
        })
    }

    /// Starts counting writes from zero; the next run is killed after `after`
    /// applied writes (`None`: never).
    pub fn arm(&self, after: Option<usize>) {
        lock(&self.shared.writes).clear();
        *lock(&self.shared.plan) = Plan {
            after,
            pid: None,
            fired: false,
        };
    }

    /// The process to kill; call right after spawning it. (The proxy holds the k-th
    /// answer until it knows whom to kill, so a fast client cannot slip through.)
    pub fn target(&self, pid: u32) {
        lock(&self.shared.plan).pid = Some(pid);
        self.shared.pid_known.notify_waiters();
    }

    /// Makes every later watch go silent (see `Shared::stall_watches`).
    pub fn stall_watches(&self, stall: bool) {
        self.shared
            .stall_watches
            .store(stall, std::sync::atomic::Ordering::SeqCst);
    }

    /// The writes applied since the last [`Self::arm`].
    pub fn writes(&self) -> Vec<Write> {
        lock(&self.shared.writes).clone()
    }

    /// Whether the kill point was reached.
    pub fn fired(&self) -> bool {
        lock(&self.shared.plan).fired
    }

    /// Sets (or with `None` clears) the answers injected from now on.
    pub fn inject(&self, inject: Option<Inject>) {
        *lock(&self.shared.inject) = inject.map(|i| (i, 0));
    }
}

impl Drop for ApiProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

// The kubeconfig type keeps tokens behind `secrecy`; this is the one place that
// needs the value (to write the proxy's own kubeconfig).
fn secrecy_expose(token: &secrecy::SecretString) -> String {
    use secrecy::ExposeSecret as _;
    token.expose_secret().to_string()
}

/// A fresh CA and a serving certificate for 127.0.0.1 signed by it.
fn acceptor() -> anyhow::Result<(TlsAcceptor, String)> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.distinguished_name
        .push(DnType::CommonName, "kubeplug-proxy-ca");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca, &ca_key);
    let key = KeyPair::generate()?;
    let mut leaf = CertificateParams::new(vec!["localhost".to_string()])?;
    leaf.subject_alt_names
        .push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
    let cert = leaf.signed_by(&key, &issuer)?;
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        key.serialize_der(),
    ));
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(vec![cert.der().clone()], key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((TlsAcceptor::from(Arc::new(config)), ca_cert.pem()))
}

/// A TLS connector that trusts the real cluster's CA only.
fn connector(ca_pem: &[u8]) -> anyhow::Result<TlsConnector> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::pem::PemObject::pem_slice_iter(ca_pem) {
        let cert: rustls::pki_types::CertificateDer<'static> = cert?;
        roots.add(cert)?;
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsConnector::from(Arc::new(config)))
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    upstream: Arc<Upstream>,
    shared: Arc<Shared>,
) {
    loop {
        let Ok((tcp, _peer)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let acceptor = acceptor.clone();
        let upstream = Arc::clone(&upstream);
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let Ok(sender) = connect_upstream(&upstream).await else {
                return;
            };
            let sender = Arc::new(tokio::sync::Mutex::new(sender));
            let service = hyper::service::service_fn(move |req| {
                let sender = Arc::clone(&sender);
                let shared = Arc::clone(&shared);
                async move { forward(req, &sender, &shared).await }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

async fn connect_upstream(
    upstream: &Upstream,
) -> anyhow::Result<hyper::client::conn::http1::SendRequest<Incoming>> {
    let tcp = TcpStream::connect(upstream.addr).await?;
    let name = rustls::pki_types::ServerName::IpAddress(upstream.addr.ip().into());
    let tls = upstream.connector.connect(name, tcp).await?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

fn is_write(req: &Request<Incoming>) -> bool {
    let mutating = matches!(
        *req.method(),
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    // A server-side dry run changes nothing.
    let dry_run = req
        .uri()
        .query()
        .is_some_and(|q| q.split('&').any(|kv| kv.starts_with("dryRun=")));
    mutating && !dry_run
}

fn is_watch(req: &Request<Incoming>) -> bool {
    *req.method() == Method::GET
        && req
            .uri()
            .query()
            .is_some_and(|q| q.split('&').any(|kv| kv == "watch=true" || kv == "watch=1"))
}

fn refused() -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from_static(b"killed by the fault proxy"))
            .map_err(|never: Infallible| match never {})
            .boxed(),
    );
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    response
}

/// The injection due for this write, if any (counts the write).
fn injection(req: &Request<Incoming>, shared: &Shared) -> Option<Inject> {
    if !is_write(req) {
        return None;
    }
    let mut inject = lock(&shared.inject);
    let (kind, seen) = inject.as_mut()?;
    *seen += 1;
    let every = match *kind {
        Inject::Throttle { every, .. } | Inject::LoseAnswer { every, .. } => every,
    };
    (every > 0 && *seen % every == 0).then_some(*kind)
}

/// A `Status` answer as the API server writes it, with `Retry-After`.
fn status_answer(
    code: StatusCode,
    reason: &str,
    message: &str,
    retry_after: u64,
) -> Response<Body> {
    let body = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason,
        "details": {"retryAfterSeconds": retry_after}, "code": code.as_u16(),
    });
    let mut response = Response::new(
        Full::new(Bytes::from(body.to_string()))
            .map_err(|never: Infallible| match never {})
            .boxed(),
    );
    *response.status_mut() = code;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
        .headers_mut()
        .insert(http::header::RETRY_AFTER, retry_after.into());
    response
}

async fn forward(
    req: Request<Incoming>,
    sender: &tokio::sync::Mutex<hyper::client::conn::http1::SendRequest<Incoming>>,
    shared: &Shared,
) -> Result<Response<Body>, hyper::Error> {
    if lock(&shared.plan).fired {
        // Past the kill point nothing reaches the server.
        return Ok(refused());
    }
    if shared
        .stall_watches
        .load(std::sync::atomic::Ordering::SeqCst)
        && is_watch(&req)
    {
        let silent = http_body_util::StreamBody::new(futures::stream::pending::<
            Result<hyper::body::Frame<Bytes>, hyper::Error>,
        >());
        let mut response = Response::new(BodyExt::boxed(silent));
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        return Ok(response);
    }
    let injected = injection(&req, shared);
    if let Some(Inject::Throttle { retry_after, .. }) = injected {
        return Ok(status_answer(
            StatusCode::TOO_MANY_REQUESTS,
            "TooManyRequests",
            "Too many requests, please try again later.",
            retry_after,
        ));
    }
    let write = is_write(&req).then(|| (req.method().to_string(), req.uri().path().to_string()));
    let response = {
        let mut sender = sender.lock().await;
        sender.ready().await?;
        sender.send_request(req).await?
    };
    if let Some(Inject::LoseAnswer { retry_after, .. }) = injected
        && response.status().is_success()
    {
        return Ok(status_answer(
            StatusCode::GATEWAY_TIMEOUT,
            "Timeout",
            "Timeout: request did not complete within the allotted timeout",
            retry_after,
        ));
    }
    let Some((method, path)) = write else {
        return Ok(response.map(BodyExt::boxed));
    };
    if !response.status().is_success() {
        return Ok(response.map(BodyExt::boxed));
    }
    let kill_now = {
        let mut writes = lock(&shared.writes);
        let mut plan = lock(&shared.plan);
        if plan.fired {
            return Ok(refused());
        }
        writes.push(Write {
            method,
            path,
            status: response.status().as_u16(),
        });
        let reached = plan.after == Some(writes.len());
        if reached {
            plan.fired = true;
        }
        reached
    };
    if kill_now {
        // Hold the answer until the test has told us the pid (it does so right after
        // spawning; a few seconds is far more than that takes).
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let notified = shared.pid_known.notified();
            if let Some(pid) = lock(&shared.plan).pid {
                crate::controlplane::signal(pid, libc::SIGKILL);
                break;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break;
            }
        }
        return Ok(refused());
    }
    Ok(response.map(BodyExt::boxed))
}
