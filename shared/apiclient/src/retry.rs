//! client-go's retries of throttled and failing requests, as a tower layer on the client.
//!
//! client-go (`rest.Request` with `withRetry`) retries a request when the server
//! answers `429 Too Many Requests` or any `5xx` *with* a `Retry-After` header whose
//! value is a whole number of seconds (`checkWait`, `retryAfterSeconds`), waits that
//! many seconds, and gives up after 10 retries (`maxRetries`); a request whose body
//! cannot be replayed is never retried. When it gives up, the last answer is the
//! result, so the user sees the server's own error (`Error from server
//! (TooManyRequests): …`). A GET whose connection was reset or cut mid-answer is
//! retried too, after 1 s (`IsRetryableError`); a write never is. [`retry_after`] and
//! [`retry_after_error`] are those decisions as pure functions and [`layer`] applies
//! them to every request of a plugin's client.
//!
//! kube's own retry policy stays off ([`crate::kubeconfig::Overrides::apply`]):
//! it also retries without `Retry-After`, with exponential backoff up to 1000 s and
//! 15 retries — not what kubectl does, and far too patient for a command a user waits
//! on.
//!
//! Each request's retries are also recorded for the caller in a task-local
//! [`Attempts`] (see [`track`]), so that a command can react to throttling (create-file
//! lowers its concurrency) and recognise a create the server applied before failing
//! (a `5xx` followed by `AlreadyExists` on the retry).

use std::cell::RefCell;
use std::time::Duration;

use http::{HeaderMap, Request, Response, StatusCode};
use kube::client::Body;
use tower::BoxError;

/// client-go's `maxRetries` for `rest.Request` (set by `NewRequest`).
pub const MAX_RETRIES: u32 = 10;

/// client-go's `checkWait` with the retry bound of `withRetry.IsNextRetry`: after the
/// `retries`-th retry (0 for the first answer) got `status` with `headers`, how long
/// to wait before the next attempt, or `None` to take this answer as the result.
///
/// A negative `Retry-After` (Go's `strconv.Atoi` accepts a sign) waits nothing, as
/// Go's `time.Sleep` of a negative duration does. An HTTP date is not a number of
/// seconds and is not retried, as in client-go.
pub fn retry_after(status: StatusCode, headers: &HeaderMap, retries: u32) -> Option<Duration> {
    if retries >= MAX_RETRIES {
        return None;
    }
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let seconds = retry_after_seconds(headers)?;
    Some(Duration::from_secs(seconds.max(0).unsigned_abs()))
}

/// client-go's `IsRetryableError` for `rest.Request.Do`: a GET whose connection was
/// reset, or closed before the answer was complete, is retried after 1 s (client-go
/// makes up a `Retry-After: 1` answer for it), within the same [`MAX_RETRIES`]. Writes
/// are not retried on connection errors: the server may have applied them.
pub fn retry_after_error(
    method: &http::Method,
    error: &(dyn std::error::Error + 'static),
    retries: u32,
) -> Option<Duration> {
    if retries >= MAX_RETRIES || method != http::Method::GET {
        return None;
    }
    is_probable_eof(error).then_some(Duration::from_secs(1))
}

/// Go's `net.IsConnectionReset` or `net.IsProbableEOF` anywhere in the error's chain.
/// Partly by message, as Go's is: hyper's "incomplete message" has no public type to
/// test without depending on hyper here.
pub(crate) fn is_probable_eof(error: &(dyn std::error::Error + 'static)) -> bool {
    const MESSAGES: [&str; 4] = [
        "connection reset by peer",
        "connection closed before message completed",
        "use of closed network connection",
        "unexpected end of file",
    ];
    // Through `causes::chain`, which looks into HTTP/2's errors: a stream at or below a
    // GOAWAY's last-stream-id whose connection then closed fails as h2's broken pipe,
    // Go's "http2: server sent GOAWAY and closed the connection", which it counts too.
    crate::causes::chain(error).iter().any(|e| {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::UnexpectedEof
                    | std::io::ErrorKind::BrokenPipe
            )
        {
            return true;
        }
        let text = e.to_string().to_ascii_lowercase();
        MESSAGES.iter().any(|m| text.contains(m))
    })
}

/// client-go's `retryAfterSeconds`: the first `Retry-After` value as a Go `Atoi`
/// integer (optional sign, ASCII digits, nothing else).
fn retry_after_seconds(headers: &HeaderMap) -> Option<i64> {
    let value = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?;
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

/// What happened to the attempts of one request: the statuses that were retried, in
/// order. Empty when the first answer was taken.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Attempts {
    pub retried: Vec<StatusCode>,
    /// Set by [`track_with`]: a `429` is the answer, not retried here.
    return_throttled: bool,
}

/// What a tracked request does with a `429`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Throttled {
    /// Wait `Retry-After` and send it again, as client-go does (the default).
    Retry,
    /// Hand the `429` to the caller at once. For a caller that sends many requests
    /// at a time and has a better answer than waiting: create-file sends fewer at
    /// once and queues the throttled create again, where waiting a second per
    /// throttled create would hold every one of a burst for the whole second.
    Return,
}

impl Attempts {
    /// Whether the server throttled the request at least once.
    pub fn throttled(&self) -> bool {
        self.retried.contains(&StatusCode::TOO_MANY_REQUESTS)
    }

    /// Whether an earlier attempt failed on the server side (`5xx`), after which the
    /// server may or may not have applied it.
    pub fn server_failed(&self) -> bool {
        self.retried.iter().any(StatusCode::is_server_error)
    }
}

tokio::task_local! {
    static ATTEMPTS: RefCell<Attempts>;
}

/// Runs `request` (a future that sends one request through a client with [`layer`])
/// and returns its output with what its retries were. The record is task-local, so
/// concurrent requests polled by one task (`buffer_unordered`) each get their own.
pub async fn track<F: Future>(request: F) -> (F::Output, Attempts) {
    track_with(request, Throttled::Retry).await
}

/// [`track`], choosing what a `429` does ([`Throttled`]); `5xx` and connection
/// failures are retried either way.
pub async fn track_with<F: Future>(request: F, throttled: Throttled) -> (F::Output, Attempts) {
    let attempts = Attempts {
        return_throttled: throttled == Throttled::Return,
        ..Attempts::default()
    };
    ATTEMPTS
        .scope(RefCell::new(attempts), async {
            let output = request.await;
            (output, ATTEMPTS.with(|a| a.replace(Attempts::default())))
        })
        .await
}

/// The tower retry policy: [`retry_after`] per answer, requests cloned while their
/// body can be replayed.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    retries: u32,
}

impl<B> tower::retry::Policy<Request<Body>, Response<B>, BoxError> for Policy {
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        req: &mut Request<Body>,
        result: &mut Result<Response<B>, BoxError>,
    ) -> Option<Self::Future> {
        let response = match result {
            Ok(response) => response,
            Err(error) => {
                let wait = retry_after_error(req.method(), error.as_ref(), self.retries)?;
                self.retries += 1;
                tracing::debug!(
                    "Got a connection error ({error}) for attempt {} to {}; retrying in 1s",
                    self.retries,
                    req.uri()
                );
                return Some(tokio::time::sleep(wait));
            }
        };
        // The policy runs in the caller's task (the buffer hands the response future
        // back to it), so the caller's `track_with` choice is visible here.
        if response.status() == StatusCode::TOO_MANY_REQUESTS
            && ATTEMPTS
                .try_with(|a| a.borrow().return_throttled)
                .unwrap_or(false)
        {
            return None;
        }
        let wait = retry_after(response.status(), response.headers(), self.retries)?;
        self.retries += 1;
        // client-go's V(4) line.
        tracing::debug!(
            "Got a Retry-After {}s response (status {}) for attempt {} to {}",
            wait.as_secs(),
            response.status().as_u16(),
            self.retries,
            req.uri()
        );
        // Outside `track` (a command that does not ask) there is nothing to record.
        let _ = ATTEMPTS.try_with(|a| a.borrow_mut().retried.push(response.status()));
        Some(tokio::time::sleep(wait))
    }

    fn clone_request(&mut self, req: &Request<Body>) -> Option<Request<Body>> {
        // Only a body held in memory can be sent again (client-go: no opaque reader).
        let body = req.body().try_clone()?;
        let mut clone = Request::new(body);
        *clone.method_mut() = req.method().clone();
        *clone.uri_mut() = req.uri().clone();
        *clone.version_mut() = req.version();
        *clone.headers_mut() = req.headers().clone();
        *clone.extensions_mut() = req.extensions().clone();
        Some(clone)
    }
}

/// The layers for [`kube::client::ClientBuilder::with_layer`]: tower's retry needs a
/// clonable service, and the stack kube builds is a boxed one, so a buffer goes first
/// (kube's `Client` puts one in front of its stack for the same reason).
pub fn layer() -> tower::layer::util::Stack<
    tower::buffer::BufferLayer<Request<Body>>,
    tower::retry::RetryLayer<Policy>,
> {
    tower::layer::util::Stack::new(
        tower::buffer::BufferLayer::new(1024),
        tower::retry::RetryLayer::new(Policy::default()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(retry_after: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(v) = retry_after {
            h.insert(http::header::RETRY_AFTER, v.parse().expect("header value"));
        }
        h
    }

    #[test]
    fn throttled_and_server_errors_with_retry_after_are_retried() {
        let one = headers(Some("1"));
        assert_eq!(
            retry_after(StatusCode::TOO_MANY_REQUESTS, &one, 0),
            Some(Duration::from_secs(1))
        );
        for code in [500, 502, 503, 504, 599] {
            let status = StatusCode::from_u16(code).expect("status");
            assert_eq!(
                retry_after(status, &headers(Some("3")), 2),
                Some(Duration::from_secs(3)),
                "{code}"
            );
        }
        assert_eq!(
            retry_after(StatusCode::SERVICE_UNAVAILABLE, &headers(Some("0")), 0),
            Some(Duration::ZERO)
        );
        assert_eq!(
            retry_after(StatusCode::TOO_MANY_REQUESTS, &headers(Some("+2")), 0),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(StatusCode::TOO_MANY_REQUESTS, &headers(Some("-5")), 0),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn without_a_numeric_retry_after_the_answer_stands() {
        for value in [
            None,
            Some(""),
            Some("1.5"),
            Some(" 1"),
            Some("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some("+"),
            Some("99999999999999999999999"),
        ] {
            assert_eq!(
                retry_after(StatusCode::TOO_MANY_REQUESTS, &headers(value), 0),
                None,
                "{value:?}"
            );
        }
    }

    #[test]
    fn other_statuses_are_never_retried() {
        for code in [200, 201, 301, 400, 401, 403, 404, 409, 410, 422, 428] {
            let status = StatusCode::from_u16(code).expect("status");
            assert_eq!(retry_after(status, &headers(Some("1")), 0), None, "{code}");
        }
    }

    #[test]
    fn at_most_ten_retries() {
        let one = headers(Some("1"));
        for retries in 0..MAX_RETRIES {
            assert!(retry_after(StatusCode::TOO_MANY_REQUESTS, &one, retries).is_some());
        }
        assert_eq!(
            retry_after(StatusCode::TOO_MANY_REQUESTS, &one, MAX_RETRIES),
            None
        );
    }

    #[test]
    fn gets_cut_off_are_retried_after_a_second_writes_never() {
        use std::io::{Error as IoError, ErrorKind};
        let reset = IoError::from(ErrorKind::ConnectionReset);
        let get = http::Method::GET;
        assert_eq!(
            retry_after_error(&get, &reset, 0),
            Some(Duration::from_secs(1))
        );
        assert_eq!(retry_after_error(&get, &reset, MAX_RETRIES), None);
        for method in [
            http::Method::POST,
            http::Method::PUT,
            http::Method::PATCH,
            http::Method::DELETE,
        ] {
            assert_eq!(retry_after_error(&method, &reset, 0), None, "{method}");
        }
        // Deep in a chain, and by hyper's message.
        #[derive(Debug)]
        struct Wrapper(Box<dyn std::error::Error + Send + Sync>);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("client error (SendRequest)")
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(self.0.as_ref())
            }
        }
        let incomplete = Wrapper("connection closed before message completed".into());
        assert!(retry_after_error(&get, &incomplete, 0).is_some());
        let eof = Wrapper(Box::new(IoError::from(ErrorKind::UnexpectedEof)));
        assert!(retry_after_error(&get, &eof, 0).is_some());
        // Refused (the server is down) and timeouts are not client-go's retryable ones.
        for kind in [ErrorKind::ConnectionRefused, ErrorKind::TimedOut] {
            let e = Wrapper(Box::new(IoError::from(kind)));
            assert_eq!(retry_after_error(&get, &e, 0), None, "{kind:?}");
        }
    }

    #[test]
    fn attempts_tell_throttling_from_server_failures() {
        let throttled = Attempts {
            retried: vec![StatusCode::TOO_MANY_REQUESTS],
            ..Attempts::default()
        };
        assert!(throttled.throttled() && !throttled.server_failed());
        let failed = Attempts {
            retried: vec![StatusCode::SERVICE_UNAVAILABLE],
            ..Attempts::default()
        };
        assert!(!failed.throttled() && failed.server_failed());
        assert!(!Attempts::default().throttled());
    }

    /// The policy drives tower's retry loop: the answers of a scripted service are
    /// retried until one stands, the same body is sent each time, and `track` sees
    /// the retried statuses.
    #[tokio::test]
    async fn the_layer_retries_and_records() {
        use http_body_util::BodyExt as _;
        use std::sync::{Arc, Mutex};
        use tower::{Layer as _, ServiceExt as _};

        let answers = Arc::new(Mutex::new(vec![
            (StatusCode::CREATED, None),
            (StatusCode::SERVICE_UNAVAILABLE, Some("0")),
            (StatusCode::TOO_MANY_REQUESTS, Some("0")),
        ]));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let (answers2, bodies2) = (answers.clone(), bodies.clone());
        let inner = tower::service_fn(move |req: Request<Body>| {
            let next = answers2.lock().expect("lock").pop().expect("an answer");
            let bodies = bodies2.clone();
            async move {
                let body = req.into_body().collect().await?.to_bytes();
                bodies.lock().expect("lock").push(body);
                let mut response = Response::new(());
                *response.status_mut() = next.0;
                if let Some(v) = next.1 {
                    response
                        .headers_mut()
                        .insert(http::header::RETRY_AFTER, v.parse().expect("value"));
                }
                Ok::<_, BoxError>(response)
            }
        });
        let client = layer().layer(tower::util::BoxService::new(inner));
        let request = Request::post("/api/v1/namespaces/default/configmaps")
            .body(Body::from(b"{}".to_vec()))
            .expect("request");
        let (response, attempts) = track(client.oneshot(request)).await;
        assert_eq!(response.expect("answer").status(), StatusCode::CREATED);
        assert_eq!(
            attempts.retried,
            vec![
                StatusCode::TOO_MANY_REQUESTS,
                StatusCode::SERVICE_UNAVAILABLE
            ]
        );
        assert_eq!(*bodies.lock().expect("lock"), vec![&b"{}"[..]; 3]);
        assert!(answers.lock().expect("lock").is_empty());
    }

    /// After ten retries the eleventh answer stands, whatever it is.
    #[tokio::test]
    async fn the_layer_gives_up_with_the_servers_answer() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicU32, Ordering};
        use tower::{Layer as _, ServiceExt as _};

        let calls = Arc::new(AtomicU32::new(0));
        let calls2 = calls.clone();
        let inner = tower::service_fn(move |_req: Request<Body>| {
            calls2.fetch_add(1, Ordering::SeqCst);
            async {
                let mut response = Response::new(());
                *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
                response
                    .headers_mut()
                    .insert(http::header::RETRY_AFTER, "0".parse().expect("value"));
                Ok::<_, BoxError>(response)
            }
        });
        let client = layer().layer(tower::util::BoxService::new(inner));
        let request = Request::get("/api/v1/namespaces")
            .body(Body::empty())
            .expect("request");
        let (response, attempts) = track(client.oneshot(request)).await;
        assert_eq!(
            response.expect("answer").status(),
            StatusCode::TOO_MANY_REQUESTS
        );
        assert_eq!(calls.load(Ordering::SeqCst), MAX_RETRIES + 1);
        assert_eq!(attempts.retried.len(), MAX_RETRIES as usize);
    }

    /// `Throttled::Return`: the first `429` is the answer, while a `5xx` with
    /// `Retry-After` is still retried; `track` (the default) keeps retrying `429`s.
    #[tokio::test]
    async fn a_caller_can_take_a_429_at_once() {
        use std::sync::{Arc, Mutex};
        use tower::{Layer as _, ServiceExt as _};

        let script = |answers: Vec<StatusCode>| {
            let answers = Arc::new(Mutex::new(answers));
            let calls = Arc::new(Mutex::new(0u32));
            let (answers2, calls2) = (answers.clone(), calls.clone());
            let inner = tower::service_fn(move |_req: Request<Body>| {
                *calls2.lock().expect("lock") += 1;
                let status = answers2.lock().expect("lock").pop().expect("an answer");
                async move {
                    let mut response = Response::new(());
                    *response.status_mut() = status;
                    response
                        .headers_mut()
                        .insert(http::header::RETRY_AFTER, "0".parse().expect("value"));
                    Ok::<_, BoxError>(response)
                }
            });
            (layer().layer(tower::util::BoxService::new(inner)), calls)
        };
        let post = || {
            Request::post("/api/v1/namespaces/default/configmaps")
                .body(Body::from(b"{}".to_vec()))
                .expect("request")
        };
        // Answers are popped from the end: 503, then 429, then 201.
        let answers = vec![
            StatusCode::CREATED,
            StatusCode::TOO_MANY_REQUESTS,
            StatusCode::SERVICE_UNAVAILABLE,
        ];
        let (client, calls) = script(answers.clone());
        let (response, attempts) = track_with(client.oneshot(post()), Throttled::Return).await;
        assert_eq!(
            response.expect("answer").status(),
            StatusCode::TOO_MANY_REQUESTS
        );
        assert_eq!(attempts.retried, vec![StatusCode::SERVICE_UNAVAILABLE]);
        assert_eq!(*calls.lock().expect("lock"), 2);

        let (client, calls) = script(answers);
        let (response, _) = track(client.oneshot(post())).await;
        assert_eq!(response.expect("answer").status(), StatusCode::CREATED);
        assert_eq!(*calls.lock().expect("lock"), 3);
    }
}
