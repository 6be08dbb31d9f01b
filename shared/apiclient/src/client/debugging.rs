//! What kubectl logs of each request from `-v=6` up, in client-go 1.37's words and
//! klog's structured form ([`crate::klog`]): its debugging round tripper
//! (`transport/round_trippers.go`) and its REST client's bodies (`rest/request.go`,
//! logged as called from cli-runtime's `helper.go`).
//!
//! | `-v` | before the request | after its answer's headers | after its body |
//! |---|---|---|---|
//! | 6 | | `"Response" verb url status milliseconds` | |
//! | 7 | `"Request" verb url headers` | `"Response" status milliseconds` | |
//! | 8 | `"Request Body"`, then 7's | `"Response" status headers milliseconds` | `"Response Body"` |
//! | 9 | `"Request Body"`, `"Request" curlCommand` | `"Response" verb url status headers milliseconds` | `"Response Body"` |
//!
//! Bodies are cut at 1024 bytes at 8 and 10240 at 9 (whole from 10), as client-go
//! cuts them, and one with a byte below `\n` is written as Go's `hex.Dump`. Headers
//! are sorted, under Go's canonical names, and `Authorization` is masked as client-go
//! masks it (`Bearer <masked>`) at every level, in the curl line too: no level shows
//! a credential. A watch's or a followed log's body is a stream that client-go does
//! not log either.
//!
//! At `-v=9` client-go also traces its connections: `"HTTP Trace: Dial succeed"` when
//! one is dialled, and on the `"Response"` line the dial and TLS handshake times of a
//! new one (`dnsLookupMilliseconds`, `dialMilliseconds`, `tlsHandshakeMilliseconds`)
//! or the wait for a pooled one (`getConnectionMilliseconds`), then the server's time
//! (`serverProcessingMilliseconds`). Here the connector ([`dialed`], [`Timed`]) records
//! each new connection and the next answered request claims it; a name's lookup is
//! counted in the dial (hyper's connector resolves and dials in one step, so the
//! lookup reads 0), a pooled connection is handed over at once (0), and the server's
//! time is the rest of the request's.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::body::{Body as _, Bytes, Frame, SizeHint};
use kube::client::Body;
use tower::BoxError;

use super::Requested;
use crate::klog::{self, Value};

/// The debugging layer over `S`, and the place a failed request gets its method and
/// URL ([`Requested`]).
#[derive(Clone, Debug)]
pub(super) struct Debugging<S>(pub(super) S);

impl<S, R> tower::Service<http::Request<Body>> for Debugging<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<R>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
{
    type Response = http::Response<LoggedBody<R>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let level = klog::verbosity();
        let method = request.method().clone();
        let uri = request.uri().clone();
        if level >= 8
            && let Some(body) = body_bytes(request.body())
        {
            log_body("Request Body", &body, level);
        }
        log_request(&request, level);
        let streamed = is_stream(&uri);
        let start = Instant::now();
        let response = self.0.call(request);
        Box::pin(async move {
            let response = response.await;
            let ms = start.elapsed().as_millis() as i128;
            match response {
                Ok(response) => {
                    log_response(&method, &uri, level, ms, Some(&response));
                    let log = level >= 8 && !streamed;
                    Ok(response.map(|inner| LoggedBody::new(inner, log, level)))
                }
                Err(source) => {
                    log_response(&method, &uri, level, ms, None::<&http::Response<()>>);
                    // The request a failure belongs to, which Go's `url.Error` names.
                    Err(Box::new(Requested {
                        method,
                        uri,
                        source: source.into(),
                    }) as BoxError)
                }
            }
        })
    }
}

/// The body of a request that carries its bytes (kube's `Once` body: every request
/// but a streamed upload), without taking it.
fn body_bytes(body: &Body) -> Option<Bytes> {
    let mut copy = body.try_clone()?;
    let mut cx = Context::from_waker(std::task::Waker::noop());
    match Pin::new(&mut copy).poll_frame(&mut cx) {
        Poll::Ready(Some(Ok(frame))) => frame.into_data().ok(),
        Poll::Ready(None) => Some(Bytes::new()),
        _ => None,
    }
}

/// A watch or a followed log: its answer is a stream, never logged whole.
fn is_stream(uri: &http::Uri) -> bool {
    uri.query().is_some_and(|q| {
        q.split('&')
            .any(|p| matches!(p, "watch=true" | "watch=1" | "follow=true" | "follow=1"))
    })
}

/// The `"Request"` line of `-v=7` and up.
fn log_request(request: &http::Request<Body>, level: u8) {
    // Go's `URL.String`: a host that is not ASCII percent-encoded, as written.
    let url = crate::idn::shown_uri(request.uri());
    let line = match level {
        0..=6 => return,
        7 | 8 => {
            let headers = headers_text(request.headers());
            klog::structured(
                "Request",
                &[
                    ("verb", Value::Text(request.method().as_str().as_bytes())),
                    ("url", Value::Text(url.as_bytes())),
                    ("headers", Value::Text(headers.as_bytes())),
                ],
            )
        }
        _ => {
            let curl = curl(request.method(), &url, request.headers());
            klog::structured("Request", &[("curlCommand", Value::Text(curl.as_bytes()))])
        }
    };
    klog::info("round_trippers.go", line!(), &line);
}

/// The `"Response"` line of `-v=6` and up; `response` is `None` when the request
/// failed (client-go's empty status and headers then).
fn log_response(
    method: &http::Method,
    uri: &http::Uri,
    level: u8,
    ms: i128,
    response: Option<&http::Response<impl Sized>>,
) {
    if level < 6 {
        return;
    }
    let url = crate::idn::shown_uri(uri);
    let status = response
        .map(|r| status_text(r.status()))
        .unwrap_or_default();
    let headers = response
        .map(|r| headers_text(r.headers()))
        .unwrap_or_default();
    let mut pairs = Vec::with_capacity(5);
    if level == 6 || level >= 9 {
        pairs.push(("verb", Value::Text(method.as_str().as_bytes())));
        pairs.push(("url", Value::Text(url.as_bytes())));
    }
    pairs.push(("status", Value::Text(status.as_bytes())));
    if level >= 8 {
        pairs.push(("headers", Value::Text(headers.as_bytes())));
    }
    pairs.push(("milliseconds", Value::Int(ms)));
    if level >= 9 && response.is_some() {
        timings(&mut pairs, ms);
    }
    klog::info(
        "round_trippers.go",
        line!(),
        &klog::structured("Response", &pairs),
    );
}

/// `-v=9`'s connection and server times of a request that took `ms` (client-go's
/// `DebugDetailedTiming`).
fn timings(pairs: &mut Vec<(&str, Value<'_>)>, ms: i128) {
    let connecting = match take_connection() {
        Some(new) => {
            let (dial, tls) = (new.dial.as_millis() as i128, new.tls.as_millis() as i128);
            pairs.push(("dnsLookupMilliseconds", Value::Int(0)));
            pairs.push(("dialMilliseconds", Value::Int(dial)));
            pairs.push(("tlsHandshakeMilliseconds", Value::Int(tls)));
            dial + tls
        }
        None => {
            pairs.push(("getConnectionMilliseconds", Value::Int(0)));
            0
        }
    };
    let server = ms - connecting;
    if server > 0 {
        pairs.push(("serverProcessingMilliseconds", Value::Int(server)));
    }
}

/// A new connection's times, from the connector to the request it was made for.
#[derive(Debug, Default)]
struct Connection {
    dial: Duration,
    tls: Duration,
}

/// The dial of the connection being made ([`dialed`]), until [`Timed`] has its TLS
/// handshake too.
static DIAL: Mutex<Option<Duration>> = Mutex::new(None);

/// New connections not yet claimed by a request's `-v=9` line.
static CONNECTIONS: Mutex<VecDeque<Connection>> = Mutex::new(VecDeque::new());

fn take_connection() -> Option<Connection> {
    CONNECTIONS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .pop_front()
}

/// A TCP connection to `address` made in `took`: client-go's `-v=9` trace line, and
/// the dial time of the connection's [`Timed`] record.
pub(super) fn dialed(address: &str, took: Duration) {
    if !klog::enabled(9) {
        return;
    }
    *DIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(took);
    klog::info(
        "round_trippers.go",
        line!(),
        &klog::structured(
            "HTTP Trace: Dial succeed",
            &[
                ("network", Value::Text(b"tcp")),
                ("address", Value::Text(address.as_bytes())),
            ],
        ),
    );
}

/// A connector that records, at `-v=9`, how long each of its connections took to
/// dial ([`dialed`]) and then to shake hands (the rest of its time).
#[derive(Clone, Debug)]
pub(super) struct Timed<C>(pub(super) C);

impl<C> tower::Service<http::Uri> for Timed<C>
where
    C: tower::Service<http::Uri>,
    C::Future: Send + 'static,
{
    type Response = C::Response;
    type Error = C::Error;
    type Future = Pin<Box<dyn Future<Output = Result<C::Response, C::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), C::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let start = Instant::now();
        let connecting = self.0.call(uri);
        Box::pin(async move {
            let connection = connecting.await?;
            if klog::enabled(9) {
                let total = start.elapsed();
                let dial = DIAL
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take()
                    .unwrap_or_default();
                CONNECTIONS
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push_back(Connection {
                        dial,
                        tls: total.saturating_sub(dial),
                    });
            }
            Ok(connection)
        })
    }
}

/// A body line of `-v=8` and up (client-go's `logBody`).
fn log_body(message: &str, body: &[u8], level: u8) {
    // client-go's test for a body that is not text: a character below `\n`.
    let text = if body.iter().any(|&b| b < b'\n') {
        klog::hex_dump(body).into_bytes()
    } else {
        body.to_vec()
    };
    let text = truncated(text, level);
    // kubectl's body lines name cli-runtime's `helper.go`, its REST verbs' caller.
    klog::info(
        "helper.go",
        line!(),
        &klog::structured(message, &[("body", Value::Text(&text))]),
    );
}

/// client-go's `truncateBody`: 1024 bytes at `-v=8`, 10240 at 9, all from 10.
fn truncated(mut text: Vec<u8>, level: u8) -> Vec<u8> {
    let max = match level {
        0..=8 => 1024,
        9 => 10240,
        _ => return text,
    };
    if text.len() <= max {
        return text;
    }
    let cut = text.len() - max;
    text.truncate(max);
    text.extend_from_slice(format!(" [truncated {cut} chars]").as_bytes());
    text
}

/// Go's `Response.Status`: the code and Go's text for it (`http.StatusText`, which
/// names a few codes otherwise than the `http` crate).
fn status_text(status: http::StatusCode) -> String {
    let text = match status.as_u16() {
        413 => "Request Entity Too Large",
        414 => "Request URI Too Long",
        416 => "Requested Range Not Satisfiable",
        _ => status.canonical_reason().unwrap_or(""),
    };
    format!("{} {text}", status.as_u16())
}

/// `headers` as (Go's canonical name, value) pairs, `Authorization` masked, sorted by
/// name. Stable: one name's values keep their order, as in Go's header map.
fn masked_sorted(headers: &http::HeaderMap) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = headers
        .iter()
        .map(|(name, value)| {
            let name = canonical(name.as_str());
            let value = mask(&name, &String::from_utf8_lossy(value.as_bytes()));
            (name, value)
        })
        .collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    pairs
}

/// client-go's `headersMap.String()`: `Name: value` lines sorted by Go's canonical
/// name, each value its own line, `Authorization` masked.
fn headers_text(headers: &http::HeaderMap) -> String {
    masked_sorted(headers)
        .into_iter()
        .map(|(name, value)| format!("{name}: {value}\n"))
        .collect()
}

/// client-go's `toCurl`: `curl -v -XVERB  -H "Name: value" … 'URL'` and a newline,
/// `Authorization` masked.
fn curl(method: &http::Method, url: &str, headers: &http::HeaderMap) -> String {
    let flags: String = masked_sorted(headers)
        .iter()
        .map(|(name, value)| format!(" -H {}", klog::quote(format!("{name}: {value}").as_bytes())))
        .collect();
    format!("curl -v -X{method} {flags} '{url}'\n")
}

/// Go's `CanonicalMIMEHeaderKey`: the first letter and each one after a `-` upper
/// case, the rest lower (`x-kubernetes-pf-flowschema-uid` →
/// `X-Kubernetes-Pf-Flowschema-Uid`).
fn canonical(name: &str) -> String {
    let mut upper = true;
    name.chars()
        .map(|c| {
            let c = if upper {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            };
            upper = c == '-';
            c
        })
        .collect()
}

/// client-go's `maskValue`: an `Authorization` value keeps only a known scheme
/// (`Bearer`, `Basic`, `Negotiate`) and `<masked>`; any other value is `<masked>`.
fn mask(name: &str, value: &str) -> String {
    if !name.eq_ignore_ascii_case("authorization") || value.is_empty() {
        return value.to_string();
    }
    let scheme = match value.find(' ') {
        Some(i) if i > 0 => &value[..i],
        _ => value,
    };
    if !["bearer", "basic", "negotiate"].contains(&scheme.to_ascii_lowercase().as_str()) {
        return "<masked>".into();
    }
    if value.len() > scheme.len() + 1 {
        format!("{scheme} <masked>")
    } else {
        scheme.to_string()
    }
}

/// An answer's body that logs itself (`"Response Body"`) once read to its end, as
/// client-go logs it once read; `log` false passes it through untouched.
pub(super) struct LoggedBody<B> {
    inner: B,
    seen: Option<Vec<u8>>,
    level: u8,
}

impl<B> LoggedBody<B> {
    fn new(inner: B, log: bool, level: u8) -> Self {
        Self {
            inner,
            seen: log.then(Vec::new),
            level,
        }
    }
}

impl<B> hyper::body::Body for LoggedBody<B>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.get_mut();
        let frame = std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx));
        match &frame {
            Some(Ok(frame)) => {
                if let (Some(seen), Some(data)) = (this.seen.as_mut(), frame.data_ref()) {
                    seen.extend_from_slice(data);
                }
            }
            None => {
                if let Some(seen) = this.seen.take() {
                    log_body("Response Body", &seen, this.level);
                }
            }
            Some(Err(_)) => this.seen = None,
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        // Never ends early while it has a line to write, so that the end is polled.
        self.seen.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorization_is_masked_as_client_go_masks_it() {
        assert_eq!(mask("Authorization", "Bearer s3cr3t"), "Bearer <masked>");
        assert_eq!(
            mask("Authorization", "basic amFuZTpwdw=="),
            "basic <masked>"
        );
        assert_eq!(mask("Authorization", "Bearer"), "Bearer");
        assert_eq!(mask("Authorization", "s3cr3t"), "<masked>");
        assert_eq!(mask("Authorization", "Token s3cr3t"), "<masked>");
        assert_eq!(mask("Authorization", ""), "");
        assert_eq!(mask("Accept", "application/json"), "application/json");
    }

    fn headers() -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        h.insert("user-agent", "kubectl/v1.37.2".parse().expect("value"));
        h.insert("authorization", "Bearer s3cr3t".parse().expect("value"));
        h.insert("accept", "application/json, */*".parse().expect("value"));
        h.append(
            "x-kubernetes-pf-flowschema-uid",
            "a".parse().expect("value"),
        );
        h
    }

    #[test]
    fn headers_are_sorted_canonical_and_masked() {
        assert_eq!(
            headers_text(&headers()),
            "Accept: application/json, */*\nAuthorization: Bearer <masked>\nUser-Agent: kubectl/v1.37.2\nX-Kubernetes-Pf-Flowschema-Uid: a\n"
        );
        assert_eq!(headers_text(&http::HeaderMap::new()), "");
    }

    #[test]
    fn the_curl_line_is_client_go_s_and_masked() {
        let mut h = http::HeaderMap::new();
        h.insert("authorization", "Bearer s3cr3t".parse().expect("value"));
        h.insert("accept", "application/json".parse().expect("value"));
        assert_eq!(
            curl(&http::Method::POST, "https://h:1/api/v1/pods", &h),
            "curl -v -XPOST  -H \"Accept: application/json\" -H \"Authorization: Bearer <masked>\" 'https://h:1/api/v1/pods'\n"
        );
        assert_eq!(
            curl(
                &http::Method::GET,
                "https://h:1/version",
                &http::HeaderMap::new()
            ),
            "curl -v -XGET  'https://h:1/version'\n"
        );
    }

    #[test]
    fn bodies_are_cut_as_client_go_cuts_them() {
        let long = vec![b'a'; 1030];
        let at8 = truncated(long.clone(), 8);
        assert_eq!(at8.len(), 1024 + " [truncated 6 chars]".len());
        assert!(at8.ends_with(b"a [truncated 6 chars]"));
        assert_eq!(truncated(long.clone(), 9), long);
        let longer = vec![b'a'; 10250];
        assert!(truncated(longer.clone(), 9).ends_with(b" [truncated 10 chars]"));
        assert_eq!(truncated(longer.clone(), 10), longer);
    }

    #[test]
    fn status_texts_are_go_s() {
        assert_eq!(status_text(http::StatusCode::CREATED), "201 Created");
        assert_eq!(
            status_text(http::StatusCode::UNPROCESSABLE_ENTITY),
            "422 Unprocessable Entity"
        );
        assert_eq!(
            status_text(http::StatusCode::PAYLOAD_TOO_LARGE),
            "413 Request Entity Too Large"
        );
    }

    #[test]
    fn streams_are_watches_and_followed_logs() {
        let uri = |s: &str| s.parse::<http::Uri>().expect("uri");
        assert!(is_stream(&uri("/api/v1/pods?fieldSelector=a&watch=true")));
        assert!(is_stream(&uri(
            "/api/v1/namespaces/a/pods/b/log?follow=true"
        )));
        assert!(!is_stream(&uri("/api/v1/pods?watch=false")));
        assert!(!is_stream(&uri("/api/v1/pods")));
    }

    #[test]
    fn a_request_s_bytes_are_read_without_taking_them() {
        let body = Body::from(b"{}\n".to_vec());
        assert_eq!(body_bytes(&body).as_deref(), Some(&b"{}\n"[..]));
        assert_eq!(body.size_hint().exact(), Some(3));
        assert_eq!(body_bytes(&Body::empty()).as_deref(), Some(&b""[..]));
    }
}
