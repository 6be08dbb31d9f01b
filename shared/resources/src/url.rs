//! `-f http(s)://…`: kubectl's `URLVisitor` with its `readHttpWithRetries`.
//!
//! Like kubectl, transport errors and 5xx answers are retried (after a pause) up to a
//! number of attempts, and any other non-200 answer is an error at once. Unlike
//! kubectl, the size of the body and the time per attempt are bounded, so a wrong URL
//! cannot stream gigabytes into memory or hang the command.
//!
//! **The hyper stack kube already brings, not reqwest** (the binary-size budget, measured
//! 2026-11-25): reqwest 0.13 added 28 crates to every plugin (`url` with `idna` and
//! its ICU tables, a second `tower-http`), while hyper, hyper-util's client and proxy
//! matcher, hyper-rustls and the platform verifier are in every plugin anyway for kube.
//! Without it, Cargo.lock holds 355 → 327 packages and the plugins 207 → 179
//! (run-pod), 204 → 176 (create-file) and 209 → 181 (rolling-update) crates; the
//! release binaries (stripped) went 7,980,264 → 7,668,880 bytes (create-file) and
//! 8,253,736 → 7,945,912 (rolling-update), −0.30 MiB each, and run-pod, which never
//! reads a URL (LTO had dropped reqwest), 7,439,848 → 7,432,608.
//!
//! What reqwest did for us is taken from the same libraries where they have it:
//! hyper-util's [`Matcher`] reads `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY`/`NO_PROXY`
//! as reqwest (built on it) did, its [`Tunnel`] sends the CONNECT for an https URL
//! through an http(s) proxy, and the TLS configuration is kube's (rustls with the
//! platform verifier, the roots and checks of the OS). Hand-written here, each for a
//! reason given where it is: Go's redirect loop (hyper has none), the absolute-form
//! request of a plain-http URL through a proxy (hyper-util's client only sends it for a
//! connection that says it is proxied), and the parsing of the URL with [`http::Uri`].
//!
//! One thing `url` did that [`http::Uri`] does not: internationalised host names. A
//! host that is not ASCII is held in its IDNA form (`apiclient::idn`, as for
//! `--server`), which is what Go's transport dials, and named as Go prints it
//! (percent-encoded); paths and queries keep working, their non-ASCII bytes
//! percent-encoded as `url` and Go encode them.

use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::uri::{Scheme, Uri};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use apiclient::client::connect::{Connector, Proxies};

use super::ResourceError;

/// Limits for fetching manifests over HTTP.
#[derive(Debug, Clone)]
pub struct UrlOptions {
    /// How many attempts in total (kubectl's `HttpAttemptCount`, 3 by default).
    pub attempts: u32,
    /// The pause between attempts (kubectl sleeps one second).
    pub retry_delay: Duration,
    /// The time limit of one attempt, connection, redirects and body included.
    pub timeout: Duration,
    /// The largest body accepted.
    pub max_bytes: u64,
}

impl Default for UrlOptions {
    fn default() -> Self {
        Self {
            attempts: 3,
            retry_delay: Duration::from_secs(1),
            timeout: Duration::from_secs(30),
            max_bytes: 32 << 20,
        }
    }
}

/// Go's `http.Client` gives up at the tenth redirect (`defaultCheckRedirect`: ten
/// requests sent, each answered with a redirect).
const MAX_REDIRECTS: usize = 10;

const USER_AGENT: &str = concat!("kubeplug/", env!("CARGO_PKG_VERSION"));

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Parses a `-f` value that starts with `http://` or `https://`, as kubectl's
/// `url.Parse` accepts it. [`http::Uri`] refuses what is not ASCII and a few ASCII
/// characters (space, `|`, `^`, …) that Go and the `url` crate percent-encode, so the
/// path and query are percent-encoded first; the host must be ASCII (see the module
/// documentation). The reason of an error is [`http::Uri`]'s own wording (kubectl's
/// would be Go's, and before reqwest's removal it was the `url` crate's).
pub(crate) fn parse(value: &str) -> Result<Uri, String> {
    // A host that is not ASCII is held in its IDNA form, as Go's transport dials it.
    let value = apiclient::idn::ascii_url(value);
    let (scheme, rest) = value.split_once("://").ok_or("missing \"://\"")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if !host.is_ascii() {
        return Err(format!(
            "the host {host:?} is not ASCII: write it in its punycode form (xn--…)"
        ));
    }
    let mut encoded = format!("{scheme}://{authority}");
    // The fragment is never sent (Uri would drop it too).
    let tail = tail.split('#').next().unwrap_or_default();
    for c in tail.chars() {
        if c.is_ascii_graphic() && !"\"<>\\^`{|}".contains(c) {
            encoded.push(c);
        } else {
            let mut buf = [0; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                encoded.push_str(&format!("%{b:02X}"));
            }
        }
    }
    let uri: Uri = encoded
        .parse()
        .map_err(|e: http::uri::InvalidUri| e.to_string())?;
    let (Some(authority), Some(host)) = (uri.authority(), uri.host()) else {
        return Err("missing host".into());
    };
    if host.is_empty() {
        return Err("empty host".into());
    }
    // Uri keeps a port it cannot read as a number (then dials the scheme's port).
    let port = &authority.as_str()[authority.as_str().rfind(host).unwrap_or(0) + host.len()..];
    if let Some(port) = port.strip_prefix(':')
        && !port.is_empty()
        && port.parse::<u16>().is_err()
    {
        return Err(format!("invalid port {port:?}"));
    }
    Ok(uri)
}

/// Why one attempt failed, and whether another attempt may help.
enum Failure {
    Retry(String),
    /// No answer at all (retried as any transport error): Go's words for why
    /// (`dial tcp 127.0.0.1:1: connect: connection refused`), which kubectl's
    /// `StandardErrorMessage` frames.
    Unreachable(apiclient::go_net::Failure),
    Fatal(String),
}

/// Fetches `url`, retrying transient failures; proxies from the environment
/// (reqwest called `Matcher::from_system`, which is `from_env` without hyper-util's
/// `client-proxy-system`, off here as it was there).
pub(crate) async fn fetch(url: &Uri, opts: &UrlOptions) -> Result<Vec<u8>, ResourceError> {
    fetch_with(url, opts, Proxies::from_env()).await
}

/// [`fetch`] with the proxies given (the tests give them without touching the
/// process's environment).
async fn fetch_with(
    url: &Uri,
    opts: &UrlOptions,
    proxies: impl Into<Proxies>,
) -> Result<Vec<u8>, ResourceError> {
    let error = |reason: String| ResourceError::Url {
        url: apiclient::idn::shown_uri(url),
        reason,
    };
    let client = HttpClient::new(proxies.into())
        .map_err(|e| error(format!("unable to create an HTTP client: {e}")))?;
    let attempts = opts.attempts.max(1);
    let mut last = Failure::Retry(String::new());
    for attempt in 1..=attempts {
        let once = tokio::time::timeout(opts.timeout, client.get(url, opts.max_bytes));
        let failure = match once.await {
            Ok(Ok(bytes)) => return Ok(bytes),
            Ok(Err(failure)) => failure,
            Err(_) => Failure::Retry(format!("timed out after {:?}", opts.timeout)),
        };
        match failure {
            Failure::Fatal(reason) => return Err(error(reason)),
            // Retried without a log line, as kubectl's `readHttpWithRetries` does:
            // the error after the last attempt says what happened.
            Failure::Retry(_) | Failure::Unreachable(_) => {
                last = failure;
                if attempt < attempts {
                    tokio::time::sleep(opts.retry_delay).await;
                }
            }
        }
    }
    Err(match last {
        Failure::Unreachable(failure) => {
            apiclient::go_net::log_connection_error(&http::Method::GET, url, &failure.text);
            ResourceError::UrlUnreachable {
                message: apiclient::go_net::checkerr_words(&failure, Some(url)),
            }
        }
        Failure::Retry(last) | Failure::Fatal(last) => {
            error(format!("{last} (after {attempts} attempts)"))
        }
    })
}

/// A request that got no answer, in Go's words when the client stack knows them (the
/// connection was dialled through [`Connector`]), else the client's, retried.
fn transport_failure(err: &(dyn std::error::Error + 'static)) -> Failure {
    match apiclient::go_net::failure(err) {
        Some(failure) => Failure::Unreachable(failure),
        None => Failure::Retry(apiclient::go_net::error_chain(err)),
    }
}

/// hyper-util's pooling client over [`Connector`], with TLS (kube's configuration) for
/// https URLs.
struct HttpClient {
    client: Client<HttpsConnector<Connector>, Empty<Bytes>>,
    proxies: Proxies,
}

impl HttpClient {
    fn new(proxies: Proxies) -> Result<Self, apiclient::tls::TlsError> {
        // As kube-client 5 builds it for a cluster without a CA (and reqwest 0.13 did):
        // the process's provider (ring) and rustls-platform-verifier, so servers are
        // checked against the OS's roots and policy. Never turned off.
        let tls = apiclient::tls::client_config(None, None, false)?;
        let connector = Connector::new(proxies, tls.clone());
        let proxies = connector.proxies();
        let https = HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(connector);
        let client = Client::builder(TokioExecutor::new()).build(https);
        Ok(Self { client, proxies })
    }

    /// One attempt: GET, following redirects, then the body if the answer is 200.
    async fn get(&self, url: &Uri, max_bytes: u64) -> Result<Vec<u8>, Failure> {
        let mut current = url.clone();
        let mut referer = None;
        let mut sent = 0;
        loop {
            // hyper's Display stops at "client error (Connect)"; the causes (connection
            // refused, a certificate the OS does not trust) are what the user needs.
            let response = self
                .send(&current, referer.take())
                .await
                .map_err(|e| transport_failure(&*e))?;
            sent += 1;
            // Hand-written, as Go's `http.Client` does it. hyper has no redirect
            // policy, and tower-http's `follow-redirect` (a feature kube's tower-http
            // does not build, so new code in every plugin) returns the last 3xx at its
            // limit where Go fails. 301, 302, 303, 307 and 308 with a Location are
            // followed, always with a GET (the only method sent here), from https to
            // http as well; a 3xx without Location is the answer. Errors here are
            // transport errors to kubectl (`http.Get` fails), so they are retried.
            let location = match response.status().as_u16() {
                301 | 302 | 303 | 307 | 308 => response
                    .headers()
                    .get(header::LOCATION)
                    .filter(|l| !l.is_empty()),
                _ => None,
            };
            let Some(location) = location else {
                return read(response, max_bytes).await;
            };
            let location = String::from_utf8_lossy(location.as_bytes()).into_owned();
            if sent >= MAX_REDIRECTS {
                return Err(Failure::Retry(format!(
                    "stopped after {MAX_REDIRECTS} redirects"
                )));
            }
            let next = resolve(&current, &location).map_err(|e| {
                Failure::Retry(format!("failed to parse Location header {location:?}: {e}"))
            })?;
            // Go and reqwest send the previous URL as Referer, but not from https to http.
            if !(current.scheme() == Some(&Scheme::HTTPS) && next.scheme() == Some(&Scheme::HTTP)) {
                referer = HeaderValue::from_str(&without_userinfo(&current).to_string()).ok();
            }
            current = next;
        }
    }

    async fn send(
        &self,
        uri: &Uri,
        referer: Option<HeaderValue>,
    ) -> Result<Response<Incoming>, BoxError> {
        let mut request = Request::get(without_userinfo(uri))
            .header(header::USER_AGENT, USER_AGENT)
            .body(Empty::new())?;
        let headers = request.headers_mut();
        if let Some(referer) = referer {
            headers.insert(header::REFERER, referer);
        }
        // Go's `http.Get` and reqwest turn the URL's user:password into Basic auth,
        // per request: a redirect carries it only when its URL still has it (a
        // relative Location keeps the authority, see `resolve`, as Go's does).
        if let Some(auth) = basic_auth(uri) {
            headers.insert(header::AUTHORIZATION, auth);
        }
        // A plain-http URL goes to the proxy as an absolute-form request (the
        // connection says it is proxied, see Connector), with the proxy's credentials
        // here; an https one is tunnelled, the credentials are on the CONNECT.
        if uri.scheme() == Some(&Scheme::HTTP)
            && let Some(auth) = self
                .proxies
                .intercept(uri)
                .and_then(|proxy| proxy.basic_auth().cloned())
        {
            headers.insert(header::PROXY_AUTHORIZATION, auth);
        }
        Ok(self.client.request(request).await?)
    }
}

/// The body of a final answer: 200 only, within `max_bytes`.
async fn read(response: Response<Incoming>, max_bytes: u64) -> Result<Vec<u8>, Failure> {
    let status = response.status();
    if status != StatusCode::OK {
        let reason = format!(
            "server reported {}, status code={}",
            status_text(&response),
            status.as_u16()
        );
        // kubectl retries 5xx only.
        return Err(if status.is_server_error() {
            Failure::Retry(reason)
        } else {
            Failure::Fatal(reason)
        });
    }
    let too_big = || {
        Failure::Fatal(format!(
            "the document is larger than the limit of {max_bytes} bytes"
        ))
    };
    let length = response
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if length.is_some_and(|len| len > max_bytes) {
        return Err(too_big());
    }
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Failure::Retry(apiclient::go_net::error_chain(&e)))?;
        if let Ok(chunk) = frame.into_data() {
            if bytes.len() as u64 + chunk.len() as u64 > max_bytes {
                return Err(too_big());
            }
            bytes.extend_from_slice(&chunk);
        }
    }
    Ok(bytes)
}

/// Go's `resp.Status`: the code and the server's reason phrase, which hyper keeps only
/// when it is not the canonical one.
fn status_text(response: &Response<Incoming>) -> String {
    let status = response.status();
    match response.extensions().get::<hyper::ext::ReasonPhrase>() {
        Some(reason) => format!(
            "{} {}",
            status.as_u16(),
            String::from_utf8_lossy(reason.as_bytes())
        ),
        None => match status.canonical_reason() {
            Some(reason) => format!("{} {reason}", status.as_u16()),
            None => status.as_u16().to_string(),
        },
    }
}

/// A `Location` resolved against the URL that answered with it (RFC 3986 §5.2, as
/// Go's `URL.Parse` does it): absolute, scheme-relative (`//host/…`), absolute path,
/// or relative path and query, dot segments removed. The fragment is dropped.
fn resolve(base: &Uri, location: &str) -> Result<Uri, String> {
    let location = location.split('#').next().unwrap_or_default();
    let scheme_end = location.find(':').filter(|&i| {
        let scheme = &location[..i];
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if let Some(i) = scheme_end {
        let scheme = location[..i].to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(format!("unsupported protocol scheme {scheme:?}"));
        }
        return parse(&format!("{scheme}{}", &location[i..]));
    }
    let scheme = base.scheme_str().unwrap_or("http");
    if location.starts_with("//") {
        return parse(&format!("{scheme}:{location}"));
    }
    let authority = base.authority().map_or("", |a| a.as_str());
    let (path, query) = match location.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (location, None),
    };
    // An empty path keeps the base's path, and its query unless one is given.
    let query = match query {
        Some(query) => format!("?{query}"),
        None if path.is_empty() => base.query().map(|q| format!("?{q}")).unwrap_or_default(),
        None => String::new(),
    };
    let path = if path.is_empty() {
        base.path().to_string()
    } else if path.starts_with('/') {
        path.to_string()
    } else {
        let base = base.path();
        format!("{}{path}", &base[..base.rfind('/').map_or(0, |i| i + 1)])
    };
    parse(&format!(
        "{scheme}://{authority}{}{query}",
        remove_dot_segments(&path)
    ))
}

/// RFC 3986 §5.2.4 on an absolute path.
fn remove_dot_segments(path: &str) -> String {
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let mut out: Vec<&str> = Vec::new();
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *segment {
            "." => {}
            ".." => {
                out.pop();
            }
            s => {
                out.push(s);
                continue;
            }
        }
        if last {
            out.push("");
        }
    }
    format!("/{}", out.join("/"))
}

/// The URL without `user:password@`, which goes into a header, never on the wire.
fn without_userinfo(uri: &Uri) -> Uri {
    let Some(authority) = uri.authority() else {
        return uri.clone();
    };
    let Some((_, host)) = authority.as_str().rsplit_once('@') else {
        return uri.clone();
    };
    let mut parts = uri.clone().into_parts();
    parts.authority = host.parse().ok();
    Uri::from_parts(parts).unwrap_or_else(|_| uri.clone())
}

/// Basic auth from the URL's userinfo, percent-decoded (`http::Uri` keeps escapes),
/// as Go's `req.URL.User` and reqwest give it.
fn basic_auth(uri: &Uri) -> Option<HeaderValue> {
    use base64::Engine as _;
    let (userinfo, _) = uri.authority()?.as_str().rsplit_once('@')?;
    let mut plain: Vec<u8> = percent_encoding::percent_decode_str(userinfo).collect();
    if !userinfo.contains(':') {
        plain.push(b':');
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(plain);
    let mut value = HeaderValue::from_str(&format!("Basic {encoded}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

#[cfg(test)]
mod tests;
