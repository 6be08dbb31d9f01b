//! The one rule that bounds every request of a command's client, so that no plugin
//! waits forever on an API server that accepted the connection but answers nothing
//! (paused, black-holed, or its process stopped: the kernel still completes TCP
//! handshakes into the listen backlog).
//!
//! kube 5 sets no read timeout by default (so as not to cut exec/attach sessions), and
//! kubectl itself has none unless `--request-timeout` is given. [`bound_requests`] is
//! the one place a client's timeouts are set, once, on the `Config` it is built from,
//! and the [`Bound`] it returns says where the bound came from ([`Origin`]):
//!
//! - `--request-timeout` given (non-zero): that bound, as kubectl honours it.
//! - a command's own bound (rolling-update's `--timeout`), where it is tighter.
//! - otherwise [`DEFAULT_BOUND`]: kube-apiserver answers every request that is not a
//!   stream (watch, attach, logs) within its own `--request-timeout`, 60 s by default,
//!   with a `504` if the work is not done by then; a server that has sent nothing for
//!   longer is not working on our request. The margin lets that `504` arrive.
//!
//! The bound is each request's own (`client::deadline`): from its issue to its
//! answer's headers, whatever it waits for (a connection, the server's stream limit,
//! a resend after GOAWAY), then each frame of the body within the bound of the one
//! before, not a total: a long answer that keeps arriving is never cut. Over HTTP/2
//! a late request fails alone; the others on the connection go on. It is also the
//! connect timeout (TCP and TLS handshakes), and an upgrade's read and write timeout
//! on its own HTTP/1.1 connection, reads counted from the last write
//! (`reset_reader_on_write`), so that an attach session, whose client pings every
//! second (`remotecommand`), stays open however quiet it is. Watches ask the server to end them within the
//! bound ([`watch_timeout`]), so a quiet watch is renewed by the watcher, never cut.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::BodyExt as _;
use kube::client::DynBody;
use tower::BoxError;

/// The bound without `--request-timeout`: kube-apiserver's default request timeout
/// (60 s) plus 15 s for its `504` to travel back.
pub const DEFAULT_BOUND: Duration = Duration::from_secs(75);

/// The flag that bounds requests in every plugin, as in kubectl.
pub const REQUEST_TIMEOUT_FLAG: &str = "--request-timeout";

/// The bound of one client's requests, as [`bound_requests`] set it: everything the
/// words of its failed requests need, carried by each of them ([`Bounded`]), so that
/// those words are a function of the error alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// The bound in effect (the read timeout).
    pub limit: Duration,
    /// Where it came from.
    pub origin: Origin,
    /// `--request-timeout` as given, for a client without a command's own bound:
    /// kubectl's discovery and OpenAPI clients put it in their URLs (`?timeout=2s`),
    /// which [`crate::go_net::url_error`] repeats.
    pub request_timeout: Option<Duration>,
}

/// Where a client's bound came from, known where it is set rather than guessed from
/// the timeouts afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `--request-timeout`, as given.
    Flag,
    /// A command's own bound, named by the flag that set it (rolling-update's
    /// `--timeout`), where it is not looser than `--request-timeout`.
    Command(&'static str),
    /// Neither: [`DEFAULT_BOUND`].
    Default,
}

impl Bound {
    /// kubectl's frame (`Unable to connect to the server: …`) around the rule, for a
    /// request this bound cut. It names the rule, not how long the request waited:
    /// the connect timeout can be tighter (kube's 30 s).
    pub fn no_answer(&self) -> String {
        let Self { limit, origin, .. } = self;
        match origin {
            Origin::Flag | Origin::Default => format!(
                "Unable to connect to the server: no answer in time (each request is bounded by {limit:?}: {REQUEST_TIMEOUT_FLAG}, or {DEFAULT_BOUND:?} without it)"
            ),
            Origin::Command(flag) => format!(
                "Unable to connect to the server: no answer in time (each request is bounded by {limit:?}: {flag})"
            ),
        }
    }

    /// The server-side timeout (`timeoutSeconds`) for a watch under this bound: one
    /// second below it, so the server ends a quiet watch (and the watcher renews it)
    /// before the client's read timeout would cut it; at least 1, at most kube's own 290.
    pub fn watch_timeout(&self) -> u32 {
        watch_timeout_under(self.limit)
    }

    /// The layer for [`kube::client::ClientBuilder::with_layer`] that marks every
    /// failed request of the client, and every failed read of an answer's body, with
    /// this bound ([`Bounded`]).
    pub fn layer(self) -> Layer {
        Layer(self)
    }
}

/// Bounds every request of a client built from `config`, the one place its timeouts
/// are set: by `request_timeout` (`--request-timeout`, parsed once with the other
/// flags; `None` when not given or zero), by `command`'s own bound with the flag that
/// set it (rolling-update's `--timeout`) where that is tighter, else by
/// [`DEFAULT_BOUND`]. Returns the bound in effect and its [`Origin`]; its
/// [`Bound::layer`] goes on the client so that its errors carry it.
pub fn bound_requests(
    config: &mut kube::Config,
    request_timeout: Option<Duration>,
    command: Option<(Duration, &'static str)>,
) -> Bound {
    let (limit, origin) = match (request_timeout, command) {
        // The tighter of the two cuts; at a tie the command's own flag is named.
        (Some(given), Some((own, _))) if given < own => (given, Origin::Flag),
        (_, Some((own, flag))) => (own, Origin::Command(flag)),
        (Some(given), None) => (given, Origin::Flag),
        (None, None) => (DEFAULT_BOUND, Origin::Default),
    };
    for t in [
        &mut config.connect_timeout,
        &mut config.read_timeout,
        &mut config.write_timeout,
    ] {
        // `--request-timeout` bounds the whole request, as client-go's `Timeout`
        // does, so it replaces kube's own connect timeout; a command's bound or the
        // default leaves a tighter one (kube's 30 s connect) as it is.
        let own = request_timeout.or(*t);
        *t = Some(own.map_or(limit, |t| t.min(limit)));
    }
    config.reset_reader_on_write = true;
    Bound {
        limit: config.read_timeout.unwrap_or(limit),
        origin,
        // Under a command's own bound the URLs keep kubectl's 32 s, as they always
        // have here (kubectl 1.17 would put `--request-timeout` there too).
        request_timeout: request_timeout.filter(|_| command.is_none()),
    }
}

fn watch_timeout_under(bound: Duration) -> u32 {
    u32::try_from(bound.as_secs().saturating_sub(1).clamp(1, 290)).unwrap_or(290)
}

/// A failed request (or answer body) of a client under `bound`. Its text is its
/// cause's: the words are [`no_answer`]'s and [`crate::go_net`]'s, read from the
/// fields.
#[derive(Debug, thiserror::Error)]
#[error("{source}")]
pub struct Bounded {
    pub bound: Bound,
    #[source]
    source: BoxError,
}

impl Bounded {
    /// `source`, a failure of a request under `bound`.
    pub fn new(bound: Bound, source: impl Into<BoxError>) -> Self {
        Self {
            bound,
            source: source.into(),
        }
    }
}

/// The [`Bounded`] that `err` or one of its causes is, if any: the bound of the client
/// whose request failed.
pub fn bound_of(err: &(dyn std::error::Error + 'static)) -> Option<Bound> {
    let mut cause = Some(err);
    while let Some(e) = cause {
        if let Some(bounded) = e.downcast_ref::<Bounded>() {
            return Some(bounded.bound);
        }
        cause = e.source();
    }
    None
}

/// A discovery or OpenAPI request with the `timeout` parameter kubectl's discovery and
/// OpenAPI clients send (`/api?timeout=32s`): `--request-timeout` as given, else
/// their 32 s; any other request as it is.
fn with_discovery_timeout<B>(
    mut request: http::Request<B>,
    request_timeout: Option<Duration>,
) -> http::Request<B> {
    let path = request.uri().path();
    let discovery = matches!(path, "/api" | "/apis" | "/version" | "/openapi/v2")
        || path == "/openapi/v3"
        || path.starts_with("/openapi/v3/");
    if request.method() != http::Method::GET || !discovery {
        return request;
    }
    let timeout = request_timeout.map_or_else(|| "32s".to_string(), go_duration);
    let path_and_query = match request.uri().query().filter(|q| !q.is_empty()) {
        Some(query) => format!("{path}?{query}&timeout={timeout}"),
        None => format!("{path}?timeout={timeout}"),
    };
    let mut parts = request.uri().clone().into_parts();
    if let Ok(path_and_query) = path_and_query.parse() {
        parts.path_and_query = Some(path_and_query);
        if let Ok(uri) = http::Uri::from_parts(parts) {
            *request.uri_mut() = uri;
        }
    }
    request
}

/// Go's `time.Duration.String()` (`32s`, `1m0s`, `1.5s`, `500ms`), for the URLs'
/// `timeout` parameter.
pub(crate) fn go_duration(d: std::time::Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".into();
    }
    if nanos < 1_000_000_000 {
        let (unit, per) = match nanos {
            n if n < 1_000 => ("ns", 1),
            n if n < 1_000_000 => ("\u{b5}s", 1_000),
            _ => ("ms", 1_000_000),
        };
        return format!("{}{unit}", fraction(nanos, per));
    }
    let secs = nanos / 1_000_000_000;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, nanos % 60_000_000_000);
    let s = format!("{}s", fraction(s, 1_000_000_000));
    match (h, m) {
        (0, 0) => s,
        (0, m) => format!("{m}m{s}"),
        (h, m) => format!("{h}h{m}m{s}"),
    }
}

/// `n / per` with Go's shortest decimal fraction (`1.5`, `2`).
fn fraction(n: u128, per: u128) -> String {
    let whole = n / per;
    let rest = n % per;
    if rest == 0 {
        return whole.to_string();
    }
    let width = per.to_string().len() - 1;
    let digits = format!("{rest:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// See [`Bound::layer`].
#[derive(Debug, Clone, Copy)]
pub struct Layer(Bound);

impl<S> tower::Layer<S> for Layer {
    type Service = Service<S>;

    fn layer(&self, inner: S) -> Service<S> {
        Service {
            inner,
            bound: self.0,
        }
    }
}

/// The service of [`Layer`].
#[derive(Debug, Clone)]
pub struct Service<S> {
    inner: S,
    bound: Bound,
}

impl<S, B> tower::Service<http::Request<B>> for Service<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<Box<DynBody>>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = http::Response<Box<DynBody>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let bound = self.bound;
        let request = with_discovery_timeout(request, bound.request_timeout);
        let response = self.inner.call(request);
        Box::pin(async move {
            match response.await {
                // A body read cut by the read timeout fails here, after the answer
                // began: marked too.
                Ok(response) => Ok(response.map(|body| {
                    Box::new(body.map_err(move |e| BoxError::from(Bounded::new(bound, e))))
                        as Box<DynBody>
                })),
                Err(e) => Err(Box::new(Bounded::new(bound, e)) as BoxError),
            }
        })
    }
}

/// Whether `err` (any cause of it) is a request cut by the bound: the request's own
/// deadline and hyper-timeout's connect (and an upgrade's read and write) timeouts
/// are all `io::ErrorKind::TimedOut`, over HTTP/2 possibly inside an `h2::Error`.
pub fn is_timeout(err: &(dyn std::error::Error + 'static)) -> bool {
    crate::causes::chain(err).iter().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
    })
}

/// kubectl's words for a request cut by the bound ([`Bound::no_answer`]), when `err`
/// itself is a kube transport error that timed out under a bounded client: the one
/// wording for every plugin and flag, from the bound the error carries.
pub fn no_answer(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let kube_err = err.downcast_ref::<kube::Error>()?;
    if !matches!(
        kube_err,
        kube::Error::HyperError(_) | kube::Error::Service(_)
    ) || !is_timeout(kube_err)
    {
        return None;
    }
    Some(bound_of(kube_err)?.no_answer())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As kubectl's discovery and OpenAPI clients write their URLs.
    #[test]
    fn discovery_and_openapi_requests_carry_kubectl_s_timeout() {
        let get = |uri: &str, timeout: Option<Duration>| {
            let request = http::Request::get(uri).body(()).expect("request");
            with_discovery_timeout(request, timeout).uri().to_string()
        };
        assert_eq!(get("/api", None), "/api?timeout=32s");
        assert_eq!(
            get("/apis", Some(Duration::from_secs(2))),
            "/apis?timeout=2s"
        );
        assert_eq!(get("/openapi/v3", None), "/openapi/v3?timeout=32s");
        assert_eq!(
            get("/openapi/v3/api/v1?hash=AB", None),
            "/openapi/v3/api/v1?hash=AB&timeout=32s"
        );
        assert_eq!(get("/api/v1/pods", None), "/api/v1/pods");
        assert_eq!(get("/openapi/v3x", None), "/openapi/v3x");
        let post = http::Request::post("/api").body(()).expect("request");
        assert_eq!(with_discovery_timeout(post, None).uri(), "/api");
    }

    fn config() -> kube::Config {
        let mut config = kube::Config::new("https://127.0.0.1:6443".parse().unwrap());
        // kube's defaults: 30 s to connect, no read timeout, 295 s to write.
        config.connect_timeout = Some(Duration::from_secs(30));
        config.read_timeout = None;
        config.write_timeout = Some(Duration::from_secs(295));
        config
    }

    #[test]
    fn without_a_limit_the_default_bounds_reads_writes_and_connects() {
        let mut c = config();
        let bound = bound_requests(&mut c, None, None);
        assert_eq!(
            (bound.limit, bound.origin),
            (DEFAULT_BOUND, Origin::Default)
        );
        assert_eq!(c.read_timeout, Some(DEFAULT_BOUND));
        assert_eq!(c.write_timeout, Some(DEFAULT_BOUND));
        // kube's 30 s connect timeout is already tighter.
        assert_eq!(c.connect_timeout, Some(Duration::from_secs(30)));
        assert!(c.reset_reader_on_write);
        // Above kube's 60 s WebSocket ping, so a quiet attach is never cut.
        assert!(DEFAULT_BOUND > Duration::from_secs(60));
    }

    #[test]
    fn a_limit_replaces_the_default_and_a_tighter_setting_stays() {
        let mut c = config();
        let five = Duration::from_secs(5);
        assert_eq!(
            bound_requests(&mut c, None, Some((five, "--timeout"))).limit,
            five
        );
        assert_eq!(
            (c.connect_timeout, c.read_timeout, c.write_timeout),
            (Some(five), Some(five), Some(five))
        );
        // A longer --request-timeout than the default is honoured, kube's 30 s connect
        // timeout included, as client-go's Timeout bounds the whole request.
        let mut c = config();
        let ten_min = Duration::from_secs(600);
        assert_eq!(bound_requests(&mut c, Some(ten_min), None).limit, ten_min);
        assert_eq!(
            (c.connect_timeout, c.read_timeout, c.write_timeout),
            (Some(ten_min), Some(ten_min), Some(ten_min))
        );
        // rolling-update: --request-timeout=3s under --timeout=5m: the tighter cuts.
        let mut c = config();
        let three = Duration::from_secs(3);
        let bound = bound_requests(
            &mut c,
            Some(three),
            Some((Duration::from_secs(300), "--timeout")),
        );
        assert_eq!((bound.limit, bound.origin), (three, Origin::Flag));
        assert_eq!(c.connect_timeout, Some(three));
        // --request-timeout=10m under --timeout=5m: the command's bound cuts, the
        // flag's value still replacing kube's connect timeout below it.
        let mut c = config();
        let five_min = Duration::from_secs(300);
        let bound = bound_requests(&mut c, Some(ten_min), Some((five_min, "--timeout")));
        assert_eq!(
            (bound.limit, bound.origin),
            (five_min, Origin::Command("--timeout"))
        );
        assert_eq!(c.connect_timeout, Some(five_min));
        // A tie names the command's flag.
        let bound = bound_requests(&mut config(), Some(five_min), Some((five_min, "--timeout")));
        assert_eq!(bound.origin, Origin::Command("--timeout"));
    }

    fn cut(bound: Bound) -> kube::Error {
        let io = std::io::Error::new(std::io::ErrorKind::TimedOut, "connection error: timed out");
        kube::Error::Service(Box::new(Bounded::new(bound, io)))
    }

    #[test]
    fn the_words_of_a_cut_request_are_its_bound_s() {
        let given = Bound {
            limit: Duration::from_secs(2),
            origin: Origin::Flag,
            request_timeout: Some(Duration::from_secs(2)),
        };
        assert_eq!(
            given.no_answer(),
            "Unable to connect to the server: no answer in time (each request is bounded by 2s: --request-timeout, or 75s without it)"
        );
        let own = Bound {
            limit: Duration::from_secs(300),
            origin: Origin::Command("--timeout"),
            request_timeout: None,
        };
        assert_eq!(
            own.no_answer(),
            "Unable to connect to the server: no answer in time (each request is bounded by 300s: --timeout)"
        );
        // Two clients' errors side by side, each in its own words: nothing is read
        // from the process.
        assert_eq!(no_answer(&cut(given)), Some(given.no_answer()));
        assert_eq!(no_answer(&cut(own)), Some(own.no_answer()));
    }

    #[test]
    fn the_bound_in_effect_names_the_flag_that_set_it() {
        // Without a limit: the default, named by the flag that would change it.
        let bound = bound_requests(&mut config(), None, None);
        assert_eq!(
            bound,
            Bound {
                limit: DEFAULT_BOUND,
                origin: Origin::Default,
                request_timeout: None,
            }
        );
        assert_eq!(
            bound.no_answer(),
            "Unable to connect to the server: no answer in time (each request is bounded by 75s: --request-timeout, or 75s without it)"
        );
        // --request-timeout=2s: the URLs' timeout too.
        let two = Duration::from_secs(2);
        let bound = bound_requests(&mut config(), Some(two), None);
        assert_eq!((bound.limit, bound.request_timeout), (two, Some(two)));
        // rolling-update's --timeout=5m under --request-timeout=3s: the tighter
        // --request-timeout cuts, but the URLs keep kubectl's default.
        let bound = bound_requests(
            &mut config(),
            Some(Duration::from_secs(3)),
            Some((Duration::from_secs(300), "--timeout")),
        );
        assert_eq!(
            bound,
            Bound {
                limit: Duration::from_secs(3),
                origin: Origin::Flag,
                request_timeout: None,
            }
        );
        assert_eq!(bound.watch_timeout(), 2);
    }

    #[test]
    fn only_a_bounded_request_that_timed_out_reads_as_cut() {
        let bound = bound_requests(
            &mut config(),
            None,
            Some((Duration::from_secs(5), "--timeout")),
        );
        assert!(no_answer(&cut(bound)).is_some());
        // The same timeout from a client without the bound's layer: Go's words apply.
        let io = std::io::Error::new(std::io::ErrorKind::TimedOut, "connection error: timed out");
        assert_eq!(no_answer(&kube::Error::Service(Box::new(io))), None);
        // A bounded request that failed otherwise.
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let err = kube::Error::Service(Box::new(Bounded::new(bound, refused)));
        assert_eq!(no_answer(&err), None);
        assert_eq!(bound_of(&err), Some(bound));
        // The mark itself is worded by the kube error above it, and reads as its cause.
        let io = std::io::Error::new(std::io::ErrorKind::TimedOut, "connection error: timed out");
        let bounded = Bounded::new(bound, io);
        assert_eq!(no_answer(&bounded), None);
        assert_eq!(bounded.to_string(), "connection error: timed out");
    }

    /// The layer marks a failed request and a failed read of an answer's body.
    #[tokio::test]
    async fn the_layer_marks_failed_requests_and_bodies() {
        use tower::{Layer as _, ServiceExt as _};

        /// A body whose first read fails, as a read cut by the timeout does.
        struct Cut;
        impl hyper::body::Body for Cut {
            type Data = hyper::body::Bytes;
            type Error = BoxError;
            fn poll_frame(
                self: Pin<&mut Self>,
                _: &mut Context<'_>,
            ) -> Poll<Option<Result<hyper::body::Frame<hyper::body::Bytes>, BoxError>>>
            {
                Poll::Ready(Some(Err(std::io::Error::from(
                    std::io::ErrorKind::TimedOut,
                )
                .into())))
            }
        }

        let bound = bound_requests(
            &mut config(),
            None,
            Some((Duration::from_secs(5), "--timeout")),
        );
        let request = || {
            http::Request::get("/api/v1/pods")
                .body(())
                .expect("request")
        };
        let failing = tower::service_fn(|_: http::Request<()>| async {
            Err::<http::Response<Box<DynBody>>, BoxError>(
                std::io::Error::from(std::io::ErrorKind::TimedOut).into(),
            )
        });
        let Err(err) = bound.layer().layer(failing).oneshot(request()).await else {
            panic!("the request fails");
        };
        assert_eq!(bound_of(err.as_ref()), Some(bound));
        assert!(is_timeout(err.as_ref()));

        let answering = tower::service_fn(|_: http::Request<()>| async {
            Ok::<_, BoxError>(http::Response::new(Box::new(Cut) as Box<DynBody>))
        });
        let response = bound
            .layer()
            .layer(answering)
            .oneshot(request())
            .await
            .unwrap();
        let err = response.into_body().collect().await.unwrap_err();
        assert_eq!(bound_of(err.as_ref()), Some(bound));
    }

    #[test]
    fn watches_end_on_the_server_before_the_bound() {
        assert_eq!(watch_timeout_under(Duration::from_secs(3)), 2);
        assert_eq!(watch_timeout_under(DEFAULT_BOUND), 74);
        assert_eq!(watch_timeout_under(Duration::from_millis(500)), 1);
        assert_eq!(watch_timeout_under(Duration::from_secs(3600)), 290);
    }

    #[test]
    fn timeouts_are_recognised_through_the_cause_chain() {
        let io = std::io::Error::from(std::io::ErrorKind::TimedOut);
        let wrapped = anyhow::Error::new(io).context("sending request");
        assert!(is_timeout(wrapped.as_ref()));
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(!is_timeout(&refused));
    }
}
