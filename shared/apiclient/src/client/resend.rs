//! Go's HTTP/2 transport sends a request again, on a new connection, when the server
//! provably did not process it, whatever its method; hyper hands that failure back
//! to the caller instead (hyper-util's pool resends only a request that never left
//! the pool). This is Go's rule on the multiplexed client.
//!
//! Provably not processed, as HTTP/2 defines it (RFC 9113 §8.7):
//! - the stream is above the last-stream-id of the server's GOAWAY (kube-apiserver
//!   sends GOAWAY on shutdown and, with `--goaway-chance`, at random to spread
//!   clients over the servers behind a load balancer), or the request was to open a
//!   stream on a connection the server had already sent GOAWAY on: h2 fails both with
//!   the remote GOAWAY's error;
//! - the server reset the stream with `REFUSED_STREAM`.
//!
//! Anything else that fails a write after it left (a reset connection, a stream at
//! or below the last-stream-id whose connection then closed: h2's "broken pipe") may
//! have been processed and is never sent again here ([`crate::retry`] resends a GET
//! only, as client-go does).

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use kube::client::Body;

use http_body_util::Either;

use super::{Answer, AnswerBody, FirstAnswer, Pool};

/// Go's `http2.Transport.RoundTrip`: up to 6 resends (`retry <= 6`), the first at
/// once, then after 1 s, 2 s, 4 s… (Go adds up to 10 % jitter; without it the
/// waits are the same for every request, which matters only when many requests of
/// one command are refused twice in a row — rare, and bounded by the request's own
/// deadline either way).
const MAX_RESENDS: u32 = 6;

/// Whether the request that failed with `err` was provably not processed by the
/// server (see the module's documentation), so that sending it again is safe for any
/// method.
pub fn unprocessed(err: &(dyn StdError + 'static)) -> bool {
    crate::causes::chain(err).iter().any(|e| {
        e.downcast_ref::<h2::Error>().is_some_and(|h2| {
            h2.is_remote()
                && (h2.is_go_away()
                    || (h2.is_reset() && h2.reason() == Some(h2::Reason::REFUSED_STREAM)))
        })
    })
}

/// How long to wait before the `resend`-th resend (1-based): Go's backoff.
fn backoff(resend: u32) -> Duration {
    match resend {
        0 | 1 => Duration::ZERO,
        n => Duration::from_secs(1 << (n - 2).min(5)),
    }
}

/// Sends `request` on the pool's client through the first-answer gate, again while
/// the server provably did not process it and its body can be sent again (a body held
/// in memory: kube's requests all have one; a streamed body cannot be replayed, as in
/// Go without `GetBody`). The gate closes for the resends: the first goes alone and
/// opens the new connection, the others follow on it.
///
/// Two more answers close the gate, so that what follows goes on one new connection:
/// - a connection lost under the request ([`connection_lost`]): the request fails
///   (it may have been processed: only its caller can tell, as create-file does for
///   a create, which is idempotent by name), and the next ones open a new connection;
/// - a server that says it is shutting down ([`shutting_down`]): it refused the
///   request before processing it, and keeps its connection open while it drains, so
///   the pool is retired and the request goes again at once on a new connection
///   (through a load balancer, to another server), never to the dying one.
pub(super) async fn send(
    pool: Arc<Pool>,
    first: Arc<FirstAnswer>,
    mut request: http::Request<Body>,
) -> Answer {
    let mut resends = 0;
    loop {
        let again = (resends < MAX_RESENDS)
            .then(|| replayable(&request))
            .flatten();
        let (generation, client) = pool.current();
        let answer = first
            .through(async move {
                client
                    .request(request)
                    .await
                    .map(|answer| answer.map(Either::Left))
            })
            .await;
        let (why, again) = match (answer, again) {
            (Err(err), Some(again)) if unprocessed(&err) => {
                first.close();
                // The cause at the bottom: h2's words for the GOAWAY or the reset.
                let cause = crate::causes::chain(&err)
                    .last()
                    .map_or_else(|| err.to_string(), ToString::to_string);
                (format!("was not processed by the server ({cause})"), again)
            }
            (Err(err), _) => {
                if connection_lost(&err) {
                    first.close();
                }
                return Err(err);
            }
            (Ok(answer), Some(again)) if may_be_shutting_down(&answer) => {
                match read_refusal(answer).await {
                    Refusal::Other(answer) => return Ok(answer),
                    Refusal::ShuttingDown(message) => {
                        pool.retire(generation);
                        first.close();
                        (
                            format!(
                                "was refused by a server shutting down ({message}); on a new connection"
                            ),
                            again,
                        )
                    }
                }
            }
            (Ok(answer), _) => {
                pool.http2.store(
                    answer.version() == http::Version::HTTP_2,
                    std::sync::atomic::Ordering::Relaxed,
                );
                return Ok(answer);
            }
        };
        resends += 1;
        tracing::debug!(
            "{} {} {why}; sending it again (resend {resends})",
            again.method(),
            again.uri()
        );
        tokio::time::sleep(backoff(resends)).await;
        request = again;
    }
}

/// Whether the connection under a failed request broke (reset, closed, cut by the
/// server's GOAWAY-then-close), after which the request may or may not have been
/// processed.
pub fn connection_lost(err: &(dyn StdError + 'static)) -> bool {
    crate::retry::is_probable_eof(err)
}

/// kube-apiserver's words when it refuses a request because it is shutting down: the
/// `503` of its in-flight wait group once closed (default flags), or the `429` of
/// `--shutdown-send-retry-after`; both with `Retry-After`.
pub fn shutting_down(status: http::StatusCode, body: &[u8]) -> Option<String> {
    if status != http::StatusCode::SERVICE_UNAVAILABLE
        && status != http::StatusCode::TOO_MANY_REQUESTS
    {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let message = value.get("message")?.as_str()?;
    (value.get("kind").and_then(|k| k.as_str()) == Some("Status")
        && message.to_ascii_lowercase().contains("is shutting down"))
    .then(|| message.to_string())
}

/// Whether `answer` may be a shutting-down refusal ([`shutting_down`]), to be read.
fn may_be_shutting_down(answer: &http::Response<AnswerBody>) -> bool {
    matches!(
        answer.status(),
        http::StatusCode::SERVICE_UNAVAILABLE | http::StatusCode::TOO_MANY_REQUESTS
    ) && answer.headers().contains_key(http::header::RETRY_AFTER)
}

/// What a `429` or `503` with `Retry-After` turned out to be.
enum Refusal {
    /// Another refusal, handed on as it came (its body read whole).
    Other(http::Response<AnswerBody>),
    /// The server is shutting down (its message), or its connection broke while the
    /// refusal was read: either way not processed, and the server is going away.
    ShuttingDown(String),
}

/// The most of a refusal's body read to tell a shutting-down server (its `Status` is
/// a few hundred bytes).
const REFUSAL_BODY: usize = 64 << 10;

async fn read_refusal(answer: http::Response<AnswerBody>) -> Refusal {
    use http_body_util::BodyExt as _;
    let (parts, body) = answer.into_parts();
    match http_body_util::Limited::new(body, REFUSAL_BODY)
        .collect()
        .await
    {
        Ok(body) => {
            let body = body.to_bytes();
            match shutting_down(parts.status, &body) {
                Some(message) => Refusal::ShuttingDown(message),
                None => Refusal::Other(http::Response::from_parts(
                    parts,
                    Either::Right(http_body_util::Full::new(body)),
                )),
            }
        }
        // A refusal whose body the server never finished: it refused the request
        // (the status says so), and its connection is gone.
        Err(err) => Refusal::ShuttingDown(format!("{} and then {err}", parts.status)),
    }
}

/// A copy of `request` to send again, when its body can be.
fn replayable(request: &http::Request<Body>) -> Option<http::Request<Body>> {
    let mut copy = http::Request::new(request.body().try_clone()?);
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    *copy.extensions_mut() = request.extensions().clone();
    Some(copy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_s_backoff() {
        let waits: Vec<u64> = (1..=MAX_RESENDS).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [0, 1, 2, 4, 8, 16]);
    }

    #[test]
    fn only_a_remote_goaway_or_refused_stream_is_unprocessed() {
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(!unprocessed(&io));
        // Not the server's: a reason this side gave.
        let local = h2::Error::from(h2::Reason::REFUSED_STREAM);
        assert!(!unprocessed(&local));
        // The server's GOAWAY and REFUSED_STREAM are proved against a server on
        // loopback (`client::tests`).
    }

    #[test]
    fn a_shutting_down_server_is_told_by_its_status() {
        let status = |code: u16, message: &str| {
            (
                http::StatusCode::from_u16(code).expect("status"),
                serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "message": message, "code": code})
                .to_string(),
            )
        };
        // The wait group's 503 (default flags) and `--shutdown-send-retry-after`'s 429.
        for (code, message) in [
            (503, "apiserver is shutting down"),
            (
                429,
                "The apiserver is shutting down, please try again later.",
            ),
        ] {
            let (code, body) = status(code, message);
            assert_eq!(
                shutting_down(code, body.as_bytes()).as_deref(),
                Some(message)
            );
        }
        // Throttling, another 503, another status, a body that is no Status.
        for (code, body) in [
            status(429, "too many requests, please try again later"),
            status(503, "the server is currently unable to handle the request"),
            status(500, "apiserver is shutting down"),
            (
                http::StatusCode::SERVICE_UNAVAILABLE,
                "apiserver is shutting down".to_string(),
            ),
        ] {
            assert_eq!(shutting_down(code, body.as_bytes()), None, "{body}");
        }
    }
}
