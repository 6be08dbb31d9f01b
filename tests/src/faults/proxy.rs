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
//! It speaks the [`Transport`] a test asks for: HTTP/2 offered by ALPN with HTTP/1.1
//! beside it, as kube-apiserver does (what the plugins use), or HTTP/1.1 alone (the
//! fallback every client also has). Each downstream connection gets its own upstream
//! TLS connection in the protocol the client chose (HTTP/1.1 is one request at a time
//! per connection, so the mapping is 1:1; HTTP/2 multiplexes both sides; watches
//! stream through untouched either way). An upgrade (attach and exec, over a
//! WebSocket or SPDY, always on an HTTP/1.1 connection of its own) becomes a tunnel
//! of the two upgraded connections, which [`ApiProxy::cut_tunnels_after`] can cut as
//! a dying API server cuts them: closed, or gone silent. The proxy runs on its own
//! thread and runtime: tests block on `Child::wait` while it works.

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
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::{TlsAcceptor, TlsConnector};

type Body = BoxBody<Bytes, hyper::Error>;

/// The protocols the proxy offers its clients (ALPN), as a test parameter: the fault
/// matrices run over both, HTTP/2 first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `h2` and `http/1.1`, as kube-apiserver offers them: the plugins speak HTTP/2.
    Http2,
    /// `http/1.1` only: the fallback.
    Http1,
}

impl Transport {
    /// Both, in the order the matrices run them.
    pub const BOTH: [Transport; 2] = [Transport::Http2, Transport::Http1];

    fn alpn(self) -> Vec<Vec<u8>> {
        match self {
            Transport::Http2 => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
            Transport::Http1 => vec![b"http/1.1".to_vec()],
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Transport::Http2 => "h2",
            Transport::Http1 => "h1",
        })
    }
}

/// How [`ApiProxy::cut_tunnels_after`] cuts a tunnel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TunnelCut {
    /// Both connections closed (FIN): what a balancer does to the client's connection
    /// when the API server behind it dies (`kill -9`: the kernel closes its sockets).
    Close,
    /// Nothing forwarded any more either way, both connections left open: a server
    /// gone without a FIN (a machine lost, a partition, a balancer that drops the
    /// flow). Only the client's own heartbeat can tell.
    Silence,
}

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

/// A write to kill the client after (see [`ApiProxy::arm_at`]).
type WriteMatch = Arc<dyn Fn(&Write) -> bool + Send + Sync>;

/// When to kill whom.
#[derive(Default)]
struct Plan {
    /// Kill after this many applied writes (counted from the last [`ApiProxy::arm`]).
    after: Option<usize>,
    /// Or after the first applied write this matches.
    at: Option<WriteMatch>,
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

/// What only HTTP/2 can do to one request (the proxy must offer [`Transport::Http2`]
/// and the client choose it): the `nth` write it sees (counted over every write
/// since [`ApiProxy::stream_fault`], from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFault {
    /// Reset with `RST_STREAM(REFUSED_STREAM)`, not forwarded: the server says it
    /// did not process it, and a client may send it again whatever its method.
    Refuse { nth: usize },
    /// Forwarded, and the connection it came on then shuts down gracefully: GOAWAY
    /// (the streams the server has go on to their answers, a stream the client opens
    /// after it is refused by the client's own HTTP/2 stack), as kube-apiserver does
    /// on shutdown and with `--goaway-chance`.
    GoAway { nth: usize },
    /// Never forwarded, never answered: a server that stops answering one stream
    /// while the others on the connection go on.
    Hold { nth: usize },
    /// Writes are forwarded, and their answers held until `in_flight` of them are
    /// on one connection; then that connection is reset (TCP RST): writes the
    /// server applied, whose answers the client never gets.
    Reset { in_flight: usize },
}

impl StreamFault {
    fn nth(self) -> usize {
        match self {
            StreamFault::Refuse { nth }
            | StreamFault::GoAway { nth }
            | StreamFault::Hold { nth } => nth,
            StreamFault::Reset { .. } => 0,
        }
    }
}

#[derive(Default)]
struct Shared {
    /// [`ApiProxy::relocate`]'s prefix: requests under it go on without it, others
    /// are answered `404`.
    prefix: Mutex<Option<String>>,
    writes: Mutex<Vec<Write>>,
    plan: Mutex<Plan>,
    pid_known: tokio::sync::Notify,
    /// Watches are answered `200` and then never sent an event (a stalled watch, as
    /// behind a load balancer that silently drops a long-lived stream).
    stall_watches: std::sync::atomic::AtomicBool,
    /// The injection and the writes seen since it was set.
    inject: Mutex<Option<(Inject, usize)>>,
    /// The stream fault and the writes seen since it was set.
    stream_fault: Mutex<Option<(StreamFault, usize)>>,
    /// Writes held ([`StreamFault::Hold`]) so far.
    held: std::sync::atomic::AtomicUsize,
    /// The tunnel cut armed: after these bytes pass from the server, once.
    tunnel_cut: Mutex<Option<(Vec<u8>, TunnelCut)>>,
    /// Tunnels cut so far, and when the last one was.
    tunnels_cut: std::sync::atomic::AtomicUsize,
    cut_at: Mutex<Option<std::time::Instant>>,
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

/// What the proxy needs to reach the real server: a connector per protocol, so that
/// the upstream connection speaks what the client chose downstream.
struct Upstream {
    addr: SocketAddr,
    http1: TlsConnector,
    http2: TlsConnector,
}

impl ApiProxy {
    /// Starts a proxy in front of the cluster of `kubeconfig` (its current context,
    /// which must use a bearer token, as `kubeplug-cluster`'s admin context does),
    /// offering HTTP/2 as kube-apiserver does.
    pub fn start(kubeconfig: &Path) -> anyhow::Result<Self> {
        Self::start_over(kubeconfig, Transport::Http2)
    }

    /// [`Self::start`] offering `transport`.
    pub fn start_over(kubeconfig: &Path, transport: Transport) -> anyhow::Result<Self> {
        Self::start_with(kubeconfig, transport, None)
    }

    /// [`Self::start_over`], announcing `max_streams` as its HTTP/2
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` (kube-apiserver's default is 100; a lower one
    /// makes a client queue its requests behind the limit).
    pub fn start_with(
        kubeconfig: &Path,
        transport: Transport,
        max_streams: Option<u32>,
    ) -> anyhow::Result<Self> {
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
        let (acceptor, proxy_ca) = acceptor(transport)?;
        let ca_file = dir.path().join("ca.crt");
        std::fs::write(&ca_file, proxy_ca)?;

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
            http1: connector(&upstream_ca, Transport::Http1)?,
            http2: connector(&upstream_ca, Transport::Http2)?,
        });
        let thread_shared = Arc::clone(&shared);
        let (stop_tx, thread) =
            localcluster::latency::serve_on_own_thread("api-proxy", listener, move |listener| {
                accept_loop(listener, acceptor, upstream, thread_shared, max_streams)
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
            ..Plan::default()
        };
    }

    /// Starts counting writes from zero; the next run is killed right after the
    /// server applied the first write that `at` matches (a point named by its
    /// request, where the k of [`Self::arm`] would depend on the run).
    pub fn arm_at(&self, at: impl Fn(&Write) -> bool + Send + Sync + 'static) {
        lock(&self.shared.writes).clear();
        *lock(&self.shared.plan) = Plan {
            at: Some(Arc::new(at)),
            ..Plan::default()
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

    /// Serves the API under `prefix` (`/x`: `/x/api` is the server's `/api`), as a
    /// proxy in front of a relocated API server does, and answers anything else
    /// `404`: a client that drops `--server`'s path fails. `None` serves it at `/`.
    pub fn relocate(&self, prefix: Option<&str>) {
        *lock(&self.shared.prefix) = prefix.map(str::to_string);
    }

    /// The writes applied since the last [`Self::arm`].
    pub fn writes(&self) -> Vec<Write> {
        lock(&self.shared.writes).clone()
    }

    /// Whether the kill point was reached.
    pub fn fired(&self) -> bool {
        lock(&self.shared.plan).fired
    }

    /// Sets (or with `None` clears) the HTTP/2 fault of a write from now on.
    pub fn stream_fault(&self, fault: Option<StreamFault>) {
        *lock(&self.shared.stream_fault) = fault.map(|f| (f, 0));
    }

    /// How many writes the proxy holds unanswered ([`StreamFault::Hold`]).
    pub fn held(&self) -> usize {
        self.shared.held.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Arms one cut: the first tunnel (an upgraded attach or exec) on which `after`
    /// passes from the server to the client is cut right after the chunk that
    /// brought it was forwarded, as `how` says. Fired once.
    pub fn cut_tunnels_after(&self, after: &[u8], how: TunnelCut) {
        *lock(&self.shared.tunnel_cut) = Some((after.to_vec(), how));
    }

    /// How many tunnels were cut.
    pub fn tunnels_cut(&self) -> usize {
        self.shared
            .tunnels_cut
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// When the last tunnel was cut.
    pub fn cut_at(&self) -> Option<std::time::Instant> {
        *lock(&self.shared.cut_at)
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

/// A fresh CA and a serving certificate for 127.0.0.1 signed by it, offering
/// `transport`'s protocols.
fn acceptor(transport: Transport) -> anyhow::Result<(TlsAcceptor, String)> {
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
    Ok((serving(&cert, &key, transport.alpn())?, ca_cert.pem()))
}

/// A TLS server for `cert` and its `key` offering the `alpn` protocols (the fault
/// proxy's and the admission webhook's).
pub(crate) fn serving(
    cert: &rcgen::Certificate,
    key: &KeyPair,
    alpn: Vec<Vec<u8>>,
) -> anyhow::Result<TlsAcceptor> {
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        key.serialize_der(),
    ));
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(vec![cert.der().clone()], key)?;
    config.alpn_protocols = alpn;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// A TLS connector that trusts the real cluster's CA only and asks for `protocol`
/// alone (`Http2`: `h2`, which kube-apiserver always offers).
fn connector(ca_pem: &[u8], protocol: Transport) -> anyhow::Result<TlsConnector> {
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
    config.alpn_protocols = match protocol {
        Transport::Http2 => vec![b"h2".to_vec()],
        Transport::Http1 => vec![b"http/1.1".to_vec()],
    };
    Ok(TlsConnector::from(Arc::new(config)))
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    upstream: Arc<Upstream>,
    shared: Arc<Shared>,
    max_streams: Option<u32>,
) {
    loop {
        let Ok((tcp, _peer)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let acceptor = acceptor.clone();
        let upstream = Arc::clone(&upstream);
        let shared = Arc::clone(&shared);
        if matches!(
            lock(&shared.stream_fault).as_ref(),
            Some((StreamFault::Reset { .. }, _))
        ) {
            // Its close is then a reset (RST), not an orderly FIN.
            let _ = tcp.set_zero_linger();
        }
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            let Ok(sender) = connect_upstream(&upstream, h2).await else {
                return;
            };
            let sender = Arc::new(sender);
            let conn = Arc::new(Conn::default());
            let this = Arc::clone(&conn);
            let service = hyper::service::service_fn(move |req| {
                let sender = Arc::clone(&sender);
                let shared = Arc::clone(&shared);
                let conn = Arc::clone(&conn);
                async move { forward(req, &sender, &shared, &conn).await }
            });
            let io = TokioIo::new(tls);
            if h2 {
                let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
                if let Some(max) = max_streams {
                    builder.max_concurrent_streams(max);
                }
                let mut connection = std::pin::pin!(builder.serve_connection(io, service));
                tokio::select! {
                    _ = connection.as_mut() => return,
                    () = this.go_away.notified() => {}
                    // Dropped with SO_LINGER 0 (set at accept): a TCP RST.
                    () = this.reset.notified() => return,
                }
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
            } else {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .with_upgrades()
                    .await;
            }
        });
    }
}

/// What a stream fault does to the connection a write came on.
#[derive(Default)]
struct Conn {
    /// [`StreamFault::GoAway`]: shut down gracefully.
    go_away: tokio::sync::Notify,
    /// [`StreamFault::Reset`]: reset.
    reset: tokio::sync::Notify,
    /// Writes forwarded whose answers are held ([`StreamFault::Reset`]).
    in_flight: std::sync::atomic::AtomicUsize,
}

/// The upstream side of one downstream connection, in the client's protocol.
enum Sender {
    /// One request at a time.
    Http1(tokio::sync::Mutex<hyper::client::conn::http1::SendRequest<Incoming>>),
    /// Multiplexed: each request a stream of its own.
    Http2(hyper::client::conn::http2::SendRequest<Incoming>),
}

impl Sender {
    async fn send(&self, req: Request<Incoming>) -> Result<Response<Incoming>, hyper::Error> {
        match self {
            Sender::Http1(sender) => {
                let mut sender = sender.lock().await;
                sender.ready().await?;
                sender.send_request(req).await
            }
            Sender::Http2(sender) => {
                let mut sender = sender.clone();
                sender.ready().await?;
                sender.send_request(req).await
            }
        }
    }
}

async fn connect_upstream(upstream: &Upstream, h2: bool) -> anyhow::Result<Sender> {
    let tcp = TcpStream::connect(upstream.addr).await?;
    tcp.set_nodelay(true)?;
    let name = rustls::pki_types::ServerName::IpAddress(upstream.addr.ip().into());
    let io = if h2 {
        TokioIo::new(upstream.http2.connect(name, tcp).await?)
    } else {
        TokioIo::new(upstream.http1.connect(name, tcp).await?)
    };
    if h2 {
        let (sender, connection) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), io).await?;
        tokio::spawn(connection);
        Ok(Sender::Http2(sender))
    } else {
        let (sender, connection) = hyper::client::conn::http1::handshake(io).await?;
        tokio::spawn(connection.with_upgrades());
        Ok(Sender::Http1(tokio::sync::Mutex::new(sender)))
    }
}

/// `uri` without `prefix` (its path under it, the query kept), `None` when its path
/// is not under it.
fn relocated(uri: &http::Uri, prefix: &str) -> Option<http::Uri> {
    let rest = uri.path().strip_prefix(prefix)?;
    if !rest.starts_with('/') {
        return None;
    }
    let path_and_query = match uri.query() {
        Some(query) => format!("{rest}?{query}"),
        None => rest.to_string(),
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(path_and_query.parse().ok()?);
    http::Uri::from_parts(parts).ok()
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

/// Why the proxy gives a stream no answer.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error(transparent)]
    Upstream(#[from] hyper::Error),
    /// hyper resets the stream with the reason of the `h2::Error` among the
    /// service's failure's causes.
    #[error("refused")]
    Refused(#[source] h2::Error),
}

/// The stream fault due for this write, if any (counts the write).
fn stream_fault(req: &Request<Incoming>, shared: &Shared) -> Option<StreamFault> {
    if !is_write(req) {
        return None;
    }
    let mut fault = lock(&shared.stream_fault);
    let (kind, seen) = fault.as_mut()?;
    *seen += 1;
    (matches!(kind, StreamFault::Reset { .. }) || *seen == kind.nth()).then_some(*kind)
}

async fn forward(
    mut req: Request<Incoming>,
    sender: &Sender,
    shared: &Arc<Shared>,
    conn: &Conn,
) -> Result<Response<Body>, Failure> {
    let prefix = lock(&shared.prefix).clone();
    if let Some(prefix) = prefix {
        match relocated(req.uri(), &prefix) {
            Some(uri) => *req.uri_mut() = uri,
            None => {
                let mut response = Response::new(
                    Full::new(Bytes::from_static(b"not under the proxy's prefix"))
                        .map_err(|never: Infallible| match never {})
                        .boxed(),
                );
                *response.status_mut() = StatusCode::NOT_FOUND;
                return Ok(response);
            }
        }
    }
    if lock(&shared.plan).fired {
        // Past the kill point nothing reaches the server.
        return Ok(refused());
    }
    if req.headers().contains_key(http::header::UPGRADE) {
        return tunnel(req, sender, shared).await;
    }
    if shared
        .stall_watches
        .load(std::sync::atomic::Ordering::SeqCst)
        && is_watch(&req)
    {
        return Ok(silent_watch());
    }
    let fault = stream_fault(&req, shared);
    before_sending(fault, shared, conn).await?;
    let injected = injection(&req, shared);
    if let Some(Inject::Throttle { retry_after, .. }) = injected {
        // Read the request to its end first, as kube-apiserver's Go server does for a
        // handler that answered without it (up to 256 KiB): the connection then stays
        // open. Answered unread, hyper's HTTP/1.1 server closes it after the answer
        // without saying so (no `Connection: close`), and a client that reuses it for
        // its next write meets EOF: a fault no API server makes.
        let _ = req.into_body().collect().await;
        return Ok(status_answer(
            StatusCode::TOO_MANY_REQUESTS,
            "TooManyRequests",
            "Too many requests, please try again later.",
            retry_after,
        ));
    }
    let write = is_write(&req).then(|| (req.method().to_string(), req.uri().path().to_string()));
    let response = sender.send(req).await?;
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
    match record_write(shared, method, path, response.status().as_u16()) {
        Recorded::PastKillPoint => return Ok(refused()),
        Recorded::KillPoint => {
            kill_server(shared).await;
            return Ok(refused());
        }
        Recorded::Counted => {}
    }
    if let Some(StreamFault::Reset { in_flight }) = fault {
        lose_answer_and_reset(in_flight, shared, conn).await;
    }
    Ok(response.map(BodyExt::boxed))
}

/// The answer to a watch while watches stall: headers, then nothing.
fn silent_watch() -> Response<Body> {
    let silent = http_body_util::StreamBody::new(futures::stream::pending::<
        Result<hyper::body::Frame<Bytes>, hyper::Error>,
    >());
    let mut response = Response::new(BodyExt::boxed(silent));
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// What a stream fault does before the request goes on: refuse the stream,
/// hold it forever, or have the connection sent a GOAWAY.
async fn before_sending(
    fault: Option<StreamFault>,
    shared: &Shared,
    conn: &Conn,
) -> Result<(), Failure> {
    match fault {
        // hyper resets a stream whose service failed with the reason of the
        // `h2::Error` among the failure's causes.
        Some(StreamFault::Refuse { .. }) => {
            return Err(Failure::Refused(h2::Error::from(
                h2::Reason::REFUSED_STREAM,
            )));
        }
        Some(StreamFault::Hold { .. }) => {
            shared
                .held
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            futures::future::pending::<()>().await;
        }
        // After this write has gone on (it is the server's, and is answered).
        Some(StreamFault::GoAway { .. }) => conn.go_away.notify_one(),
        Some(StreamFault::Reset { .. }) | None => {}
    }
    Ok(())
}

/// Where a successful write stands against the kill plan.
enum Recorded {
    /// The plan fired meanwhile: the write is not counted, its answer refused.
    PastKillPoint,
    /// This write is the one the plan kills the server after.
    KillPoint,
    /// Counted; the plan has not fired.
    Counted,
}

/// Counts a successful write, and fires the kill plan when it is the one.
fn record_write(shared: &Shared, method: String, path: String, status: u16) -> Recorded {
    let mut writes = lock(&shared.writes);
    let mut plan = lock(&shared.plan);
    if plan.fired {
        return Recorded::PastKillPoint;
    }
    let write = Write {
        method,
        path,
        status,
    };
    let reached =
        plan.after == Some(writes.len() + 1) || plan.at.as_ref().is_some_and(|at| at(&write));
    writes.push(write);
    if reached {
        plan.fired = true;
        Recorded::KillPoint
    } else {
        Recorded::Counted
    }
}

/// SIGKILLs the process under test once its pid is known.
async fn kill_server(shared: &Shared) {
    // Hold the answer until the test has told us the pid (it does so right after
    // spawning; a few seconds is far more than that takes).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let notified = shared.pid_known.notified();
        if let Some(pid) = lock(&shared.plan).pid {
            localcluster::controlplane::signal(pid, libc::SIGKILL);
            break;
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            break;
        }
    }
}

/// Keeps the answer of an applied write from leaving and, at the
/// `in_flight`th such write on the connection, has the connection reset.
async fn lose_answer_and_reset(in_flight: usize, shared: &Shared, conn: &Conn) {
    // The server has applied (or refused) it; its answer never leaves.
    let now = conn
        .in_flight
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        + 1;
    if now == in_flight {
        // Once: the client's next connection is left alone.
        *lock(&shared.stream_fault) = None;
        conn.reset.notify_one();
    }
    futures::future::pending::<()>().await;
}

/// Forwards an upgrade; once the server switched protocols, the two upgraded
/// connections are joined into a tunnel (see [`splice`]).
async fn tunnel(
    mut req: Request<Incoming>,
    sender: &Sender,
    shared: &Arc<Shared>,
) -> Result<Response<Body>, Failure> {
    let downstream = hyper::upgrade::on(&mut req);
    let mut response = sender.send(req).await?;
    if response.status() != StatusCode::SWITCHING_PROTOCOLS {
        return Ok(response.map(BodyExt::boxed));
    }
    let upstream = hyper::upgrade::on(&mut response);
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        let (Ok(client), Ok(server)) = (downstream.await, upstream.await) else {
            return;
        };
        splice(TokioIo::new(client), TokioIo::new(server), &shared).await;
    });
    Ok(response.map(BodyExt::boxed))
}

/// Copies both ways until either side ends, watching the server's bytes for the
/// armed cut (across chunk boundaries).
async fn splice(
    client: impl tokio::io::AsyncRead + tokio::io::AsyncWrite,
    server: impl tokio::io::AsyncRead + tokio::io::AsyncWrite,
    shared: &Shared,
) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let (mut client_r, mut client_w) = tokio::io::split(client);
    let (mut server_r, mut server_w) = tokio::io::split(server);
    let upward = async {
        let _ = tokio::io::copy(&mut client_r, &mut server_w).await;
        let _ = server_w.shutdown().await;
    };
    let downward = async {
        let mut buf = vec![0; 32 * 1024];
        let mut seen: Vec<u8> = Vec::new();
        loop {
            let n = match server_r.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => n,
            };
            if client_w.write_all(&buf[..n]).await.is_err() || client_w.flush().await.is_err() {
                return None;
            }
            seen.extend_from_slice(&buf[..n]);
            let mut armed = lock(&shared.tunnel_cut);
            if let Some((after, how)) = armed.as_ref()
                && seen.windows(after.len()).any(|w| w == after.as_slice())
            {
                let how = *how;
                *armed = None;
                return Some(how);
            }
            let keep = armed.as_ref().map_or(0, |(after, _)| after.len());
            let drop = seen.len().saturating_sub(keep);
            seen.drain(..drop);
        }
    };
    let cut = tokio::select! {
        () = upward => None,
        cut = downward => cut,
    };
    let Some(how) = cut else {
        return;
    };
    *lock(&shared.cut_at) = Some(std::time::Instant::now());
    shared
        .tunnels_cut
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    match how {
        TunnelCut::Close => {
            let _ = client_w.shutdown().await;
            let _ = server_w.shutdown().await;
        }
        // Held open, forwarding nothing, until the proxy stops.
        TunnelCut::Silence => {
            let _held = (client_r, client_w, server_r, server_w);
            futures::future::pending::<()>().await;
        }
    }
}
