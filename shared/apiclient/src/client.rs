//! The API server's client of a command, built here from kube's [`kube::Config`] instead
//! of by kube's `Client::try_from(Config)`.
//!
//! Why (the binary-size budget, measured 2026-11-26): kube's builder reaches its credential code from
//! three places (the TLS identity, the `Authorization` layer, the client's expiry), so
//! calling it at all linked that code, with JSONPath, pest, regex and a YAML
//! deserializer, into every plugin; and it ran an exec plugin three times per client.
//! The credentials are [`crate::credentials`]; what is built here is the rest of kube's
//! stack, from the same libraries and in the same order: the TLS configuration
//! ([`crate::tls`]: the kubeconfig's roots or the OS's verifier, its client
//! certificate, `tls-server-name`), the proxy (the kubeconfig's `proxy-url`, else the
//! environment's for the server, as Go's `ProxyFromEnvironment` reads it; http, https
//! and socks5 as in client-go), the
//! connect, read and write timeouts, and kube's own base-URI and extra-header layers
//! (impersonation, the user agent). kube's request tracing is replaced by client-go's
//! debugging round tripper (`debugging`: from `-v=6`, the requests, headers, bodies and
//! curl lines kubectl logs, in klog's structured form, credentials masked).
//!
//! What stays kube's: [`kube::Config`] (the kubeconfig's resolution) and the
//! [`kube::Client`] above this service.

pub mod connect;
mod deadline;
mod debugging;
pub mod query;
pub mod resend;

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::BodyExt as _;
use hyper_util::client::legacy::Error as LegacyError;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kube::client::{Body, ClientBuilder, ConfigExt as _, DynBody};
use secrecy::ExposeSecret as _;
use tower::util::BoxService;
use tower::{BoxError, ServiceBuilder, ServiceExt as _};

use crate::credentials::Credentials;
use crate::error::{Error, Result};
use crate::tls::Identity;

/// The service under a [`kube::Client`] (what kube's own builder makes).
pub type Service = BoxService<http::Request<Body>, http::Response<Box<DynBody>>, BoxError>;

/// A client builder for `config`, authenticating with `credentials`; `identity` is
/// the client certificate an exec plugin returned (else the kubeconfig's is used).
/// No request is sent.
pub fn builder(
    config: &kube::Config,
    credentials: Credentials,
    identity: Option<Identity>,
) -> Result<ClientBuilder<Service>> {
    builder_with(config, credentials, identity, connect::Proxies::from_env())
}

/// [`builder`] with the environment's proxy settings given (`env_proxies`, used when
/// `config` names no proxy), so that tests need not set variables.
fn builder_with(
    config: &kube::Config,
    credentials: Credentials,
    identity: Option<Identity>,
    env_proxies: connect::Proxies,
) -> Result<ClientBuilder<Service>> {
    let identity = match identity {
        Some(identity) => Some(identity),
        None => kubeconfig_identity(&config.auth_info)?,
    };
    let tls = crate::tls::client_config(
        config.root_cert.as_deref(),
        identity,
        config.accept_invalid_certs,
    )
    .map_err(Error::Tls)?;
    let proxies = proxies(config, env_proxies)?;
    let connector = connect::Connector::new(proxies, tls.clone());
    let server_name = tls_server_name(config)?;
    // Two clients over the same connector: HTTP/2 where the server's ALPN agrees (with
    // HTTP/1.1 as the fallback), and HTTP/1.1 alone for the upgrades (attach, exec),
    // which HTTP/2 cannot carry.
    let timeouts = |versions: Versions| {
        let https = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls.clone());
        let https = match &server_name {
            Some(name) => https.https_or_http().with_server_name_resolver(
                hyper_rustls::FixedServerNameResolver::new(name.clone()),
            ),
            None => https.https_or_http(),
        };
        let https = match versions {
            Versions::Http2OrHttp1 => https
                .enable_all_versions()
                .wrap_connector(connector.clone()),
            Versions::Http1 => https.enable_http1().wrap_connector(connector.clone()),
        };
        let mut connector = hyper_timeout::TimeoutConnector::new(https);
        connector.set_connect_timeout(config.connect_timeout);
        // The multiplexed connection's reads and writes are not bounded as a whole:
        // each request is ([`deadline`]), and the PING checks the connection. An
        // upgrade has its HTTP/1.1 connection to itself, so there the connection's
        // timeouts are the request's (reads counted from the last write, so that
        // kube's WebSocket pings keep a quiet attach open).
        if let Versions::Http1 = versions {
            connector.set_read_timeout(config.read_timeout);
            connector.set_write_timeout(config.write_timeout);
            connector.set_reset_reader_on_write(config.reset_reader_on_write);
        }
        debugging::Timed(connector)
    };
    let mut multiplexed = hyper_util::client::legacy::Client::builder(TokioExecutor::new());
    // client-go's health check of an HTTP/2 connection (its `ReadIdleTimeout` and
    // `PingTimeout`): a ping after 30 s without a frame, the connection closed when
    // the answer takes 15 s, so that a request never waits on a connection a NAT
    // or a load balancer dropped silently.
    multiplexed
        .timer(TokioTimer::new())
        .http2_keep_alive_interval(Duration::from_secs(30))
        .http2_keep_alive_timeout(Duration::from_secs(15));
    let multiplexed = Pool::new(multiplexed, timeouts(Versions::Http2OrHttp1));
    let upgrades = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .build(timeouts(Versions::Http1));
    let http = ByProtocol {
        multiplexed,
        upgrades,
        first: Arc::default(),
        // `bound::bound_requests` set it to the bound; without it (kube's default) a
        // request waits as long as the server takes, as kubectl's does.
        limit: config.read_timeout,
    };
    let extra_headers = config
        .extra_headers_layer()
        .map_err(|e| Error::Client(e.to_string()))?;
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .layer(crate::credentials::layer(credentials))
        .layer(extra_headers)
        // Before the log lines, so that they show the URL and headers as sent.
        .map_request(query::tidy_request)
        .map_request(accept_json)
        .layer_fn(debugging::Debugging)
        .service(http)
        .map_err(BoxError::from)
        .map_response(|response| {
            response.map(|body| Box::new(body.map_err(BoxError::from)) as Box<DynBody>)
        });
    Ok(ClientBuilder::new(
        BoxService::new(service),
        config.default_namespace.clone(),
    ))
}

/// client-go's `Accept` for a request that names none (kube names none on most):
/// JSON, else anything, as kubectl's REST client asks for it.
fn accept_json(mut request: http::Request<Body>) -> http::Request<Body> {
    request
        .headers_mut()
        .entry(http::header::ACCEPT)
        .or_insert(http::HeaderValue::from_static("application/json, */*"));
    request
}

/// The proxies to the server: the kubeconfig's `proxy-url` for every request, else
/// `env_proxies`.
fn proxies(config: &kube::Config, env_proxies: connect::Proxies) -> Result<connect::Proxies> {
    match &config.proxy_url {
        Some(proxy) => {
            if !connect::supported(proxy) {
                return Err(Error::Proxy(format!(
                    "unsupported proxy URL {proxy}: only http, https and socks5 proxies are"
                )));
            }
            Ok(connect::Proxies::from(
                Matcher::builder().all(proxy.to_string()).build(),
            ))
        }
        // As client-go without `proxy-url`: `HTTPS_PROXY`/`HTTP_PROXY` by the server's
        // scheme, unless `NO_PROXY` names the server or it is on loopback.
        None => Ok(env_proxies),
    }
}

/// The kubeconfig's `tls-server-name`, the name the server's certificate is checked
/// against instead of the URL's host.
fn tls_server_name(
    config: &kube::Config,
) -> Result<Option<rustls::pki_types::ServerName<'static>>> {
    match &config.tls_server_name {
        Some(name) => Ok(Some(
            rustls::pki_types::ServerName::try_from(name.clone())
                .map_err(|e| Error::Client(format!("invalid tls-server-name {name:?}: {e}")))?,
        )),
        None => Ok(None),
    }
}

/// The kubeconfig's client certificate and key (`*-data` over the files, as in
/// client-go), when the user has both. A file that cannot be read was reported by
/// [`crate::credentials::validate`] already; it is reported here too in case.
/// A key without a certificate is not read at all: client-go's
/// `getUserIdentificationPartialConfig` takes the key only along with a certificate,
/// so `--client-key=DIR` over a token user works in kubectl.
fn kubeconfig_identity(auth: &kube::config::AuthInfo) -> Result<Option<Identity>> {
    let Some(cert) = load(
        auth.client_certificate_data.as_deref(),
        auth.client_certificate.as_deref(),
    )?
    else {
        return Ok(None);
    };
    let key_data = auth.client_key_data.as_ref().map(|k| k.expose_secret());
    let key = load(key_data, auth.client_key.as_deref())?;
    match key {
        Some(key) => Identity::from_pem(&cert, &key)
            .map(Some)
            .map_err(Error::Tls),
        None => Ok(None),
    }
}

/// Base64 `data` (Go's words when it is not), else the file at `path`.
fn load(data: Option<&str>, path: Option<&str>) -> Result<Option<Vec<u8>>> {
    if let Some(data) = data.filter(|d| !d.is_empty()) {
        return crate::error::go_base64(&base64::engine::general_purpose::STANDARD, data)
            .map(Some)
            .map_err(Error::Authentication);
    }
    match path.filter(|p| !p.is_empty()) {
        Some(path) => std::fs::read(path)
            .map(Some)
            .map_err(|error| Error::ReadFile {
                what: "client certificate or key",
                path: path.into(),
                error,
            }),
        None => Ok(None),
    }
}

/// Which protocols a connection's TLS handshake offers (ALPN).
#[derive(Clone, Copy)]
enum Versions {
    Http2OrHttp1,
    Http1,
}

/// The connection pool's HTTP client: hyper-util's, over the connector chain the
/// builder makes (`-v=9`'s connection times, timeouts, TLS, [`connect::Connector`]).
type HttpClient = hyper_util::client::legacy::Client<
    debugging::Timed<
        hyper_timeout::TimeoutConnector<hyper_rustls::HttpsConnector<connect::Connector>>,
    >,
    Body,
>;

/// Sends each request on the client for its protocol: a request that asks for an
/// upgrade (`Upgrade: websocket`, kube's attach and exec) on HTTP/1.1, whose upgrade
/// mechanism HTTP/2 does not have (the API server does not take WebSockets over
/// HTTP/2); everything else on the client that multiplexes over one HTTP/2
/// connection where the server offers it, as client-go's transport does. The two
/// pools never share a connection, so an upgrade never waits on a multiplexed one.
///
/// Each request is bounded on its own ([`deadline`]) and, on the multiplexed client,
/// sent again while the server provably did not process it ([`resend`]).
#[derive(Clone)]
struct ByProtocol {
    multiplexed: Arc<Pool>,
    upgrades: HttpClient,
    first: Arc<FirstAnswer>,
    limit: Option<Duration>,
}

/// An answer's body: the connection's, or one read whole already (an answer
/// [`resend`] read to see whether the server is shutting down, and was not).
type AnswerBody =
    http_body_util::Either<hyper::body::Incoming, http_body_util::Full<hyper::body::Bytes>>;

type Answer = std::result::Result<http::Response<AnswerBody>, LegacyError>;

impl tower::Service<http::Request<Body>> for ByProtocol {
    type Response = http::Response<deadline::Idle<AnswerBody>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // hyper-util's client is always ready: it queues on its pool.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: http::Request<Body>) -> Self::Future {
        let limit = self.limit;
        if request.headers().contains_key(http::header::UPGRADE) {
            crate::remotecommand::websocket_protocols(request.headers_mut());
            let upgrade = self.upgrades.request(request);
            return Box::pin(deadline::bound(limit, async move {
                upgrade
                    .await
                    .map(|answer| answer.map(http_body_util::Either::Left))
            }));
        }
        let pool = self.multiplexed.clone();
        let first = self.first.clone();
        Box::pin(deadline::bound(limit, async move {
            let http2 = pool.http2.clone();
            resend::send(pool, first, request).await.map_err(|source| {
                if http2.load(Ordering::Relaxed) {
                    Box::new(OverHttp2(source)) as BoxError
                } else {
                    Box::new(source) as BoxError
                }
            })
        }))
    }
}

/// The multiplexed client's connection pool, which [`resend`] can retire: a server
/// that answers it is shutting down keeps its connection open while it drains, and
/// every request sent on it would meet the same answer. Retired, the pool's
/// connections are left to the requests already on them, and every later request
/// goes on a new one (through a load balancer, to another server).
struct Pool {
    builder: hyper_util::client::legacy::Builder,
    connector: Connector,
    /// The pool in use and its generation, which a retirement moves on once however
    /// many requests saw the same answer.
    current: std::sync::Mutex<(u64, HttpClient)>,
    /// Whether the server's answers came over HTTP/2 (the last one's version): the
    /// protocol a failed request most likely went on, which Go's words depend on.
    http2: Arc<AtomicBool>,
}

/// A request of the multiplexed client that failed while its connections spoke
/// HTTP/2: [`crate::go_net`] words a lost connection as Go's HTTP/2 transport does
/// (`unexpected EOF`, where HTTP/1.1 says `EOF`). Its text is its cause's.
#[derive(Debug)]
pub struct OverHttp2(LegacyError);

impl std::fmt::Display for OverHttp2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for OverHttp2 {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// The connector chain under the multiplexed client.
type Connector = debugging::Timed<
    hyper_timeout::TimeoutConnector<hyper_rustls::HttpsConnector<connect::Connector>>,
>;

impl Pool {
    fn new(builder: hyper_util::client::legacy::Builder, connector: Connector) -> Arc<Self> {
        let client = builder.build(connector.clone());
        Arc::new(Self {
            builder,
            connector,
            current: std::sync::Mutex::new((0, client)),
            http2: Arc::default(),
        })
    }

    /// The client to send on, and its generation for [`Pool::retire`].
    fn current(&self) -> (u64, HttpClient) {
        let current = self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (current.0, current.1.clone())
    }

    /// Replaces the pool of `generation` with a new one (once: later calls for the
    /// same generation find it replaced already).
    fn retire(&self, generation: u64) {
        let mut current = self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if current.0 == generation {
            *current = (generation + 1, self.builder.build(self.connector.clone()));
        }
    }
}

/// Until the first request has an answer, the requests that come with it wait for it.
///
/// Why: hyper-util's pool learns that a server speaks HTTP/2 only when a connection's
/// TLS handshake ends (ALPN), so requests sent together at the start (create-file's
/// discovery and OpenAPI index, or its first creates) would each open a TCP and TLS
/// connection, of which all but one are closed again: a handshake's round trips and
/// server work for nothing, most of all on a far-away server. After the first answer
/// the connection is in the pool, and every later request shares it (or, on a server
/// without HTTP/2, opens its own HTTP/1.1 connection as before). The wait costs those
/// first concurrent requests one round trip, once per command; a failed first request
/// opens the gate too, and each request then meets the failure itself.
///
/// The gate closes again when the server sends GOAWAY ([`resend`]): the requests it
/// refused would otherwise each open a connection to be sent again on.
///
/// The gate's state is one value under a lock: with two flags changed one after the
/// other, a request could find the gate shut with a leader flag still set by a
/// `close` halfway through, wait for a leader that never came, and hang until its
/// bound (found against a server resetting every connection: discovery and OpenAPI
/// retries waited 75 s each).
#[derive(Default)]
struct FirstAnswer {
    gate: std::sync::Mutex<Gate>,
    answered: tokio::sync::Notify,
}

/// Where the first-answer gate stands.
#[derive(Default, Clone, Copy, PartialEq, Eq, Debug)]
enum Gate {
    /// Nobody has sent yet, or the gate was closed again: the next request leads.
    #[default]
    Shut,
    /// A request is out alone; the others wait for its answer.
    Leading,
    /// Every request goes at once.
    Open,
}

struct OpensOnDrop(Arc<FirstAnswer>);

impl Drop for OpensOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

enum Turn {
    /// Send now.
    Go,
    /// Send now, and [`FirstAnswer::open`] the gate when the answer came (or the
    /// request was given up).
    Lead,
}

impl FirstAnswer {
    fn gate(&self) -> std::sync::MutexGuard<'_, Gate> {
        self.gate
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn turn(&self) -> Turn {
        loop {
            // Made before the state is read, so that an `open` between the read and
            // the wait still wakes it (tokio's `Notify` counts from `notified()`).
            let answered = self.answered.notified();
            {
                let mut gate = self.gate();
                match *gate {
                    Gate::Open => return Turn::Go,
                    Gate::Shut => {
                        *gate = Gate::Leading;
                        return Turn::Lead;
                    }
                    Gate::Leading => {}
                }
            }
            answered.await;
        }
    }

    fn open(&self) {
        *self.gate() = Gate::Open;
        self.answered.notify_waiters();
    }

    /// Shuts the gate if it is open: the next request leads, the others wait for its
    /// answer. A gate with a leader out already stays as it is (the leader opens it).
    fn close(&self) {
        let mut gate = self.gate();
        if *gate == Gate::Open {
            *gate = Gate::Shut;
        }
    }

    /// `send` (a request) through the gate.
    async fn through<F: Future>(self: &Arc<Self>, send: F) -> F::Output {
        match self.turn().await {
            Turn::Go => send.await,
            Turn::Lead => {
                // Opens the gate when the answer came, and also when this request is
                // dropped unanswered (its bound, or its caller gave up), so that
                // nobody waits for an answer that will never come.
                let _opens = OpensOnDrop(self.clone());
                send.await
            }
        }
    }
}

/// A request that got no answer, with its method and URL, which Go's `url.Error`
/// names (`Get "https://…": …`) and hyper's errors do not. Its text is its cause's:
/// the Go wording is [`crate::go_net`]'s, read from the fields.
#[derive(Debug)]
pub struct Requested {
    pub method: http::Method,
    pub uri: http::Uri,
    source: BoxError,
}

impl std::fmt::Display for Requested {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.source.fmt(f)
    }
}

impl std::error::Error for Requested {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.source.as_ref())
    }
}

/// The plugins' client for `config` under `limit` ([`crate::bound`]), with the bound's
/// layer on it as `cli::Context::client` puts it there, and the bound: for the tests of
/// how a cut request is worded.
#[cfg(test)]
pub(crate) fn bounded(
    mut config: kube::Config,
    limit: (std::time::Duration, &'static str),
) -> (kube::Client, crate::bound::Bound) {
    let bound = match limit {
        (given, crate::bound::REQUEST_TIMEOUT_FLAG) => {
            crate::bound::bound_requests(&mut config, Some(given), None)
        }
        own => crate::bound::bound_requests(&mut config, None, Some(own)),
    };
    let (credentials, identity) = Credentials::of(&config).expect("credentials");
    let client = builder(&config, credentials, identity)
        .expect("builder")
        .with_layer(&bound.layer())
        .build();
    (client, bound)
}

#[cfg(test)]
mod tests;
