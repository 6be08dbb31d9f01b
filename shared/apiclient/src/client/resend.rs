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

use super::{Answer, FirstAnswer, HttpClient};

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

/// Sends `request` on `client` through the first-answer gate, again while the
/// server provably did not process it and its body can be sent again (a body held
/// in memory: kube's requests all have one; a streamed body cannot be replayed, as
/// in Go without `GetBody`). The gate closes for the resends: the first goes alone
/// and opens the new connection, the others follow on it.
pub(super) async fn send(
    client: HttpClient,
    first: Arc<FirstAnswer>,
    mut request: http::Request<Body>,
) -> Answer {
    let mut resends = 0;
    loop {
        let again = (resends < MAX_RESENDS)
            .then(|| replayable(&request))
            .flatten();
        let answer = first.through(client.request(request)).await;
        match (answer, again) {
            (Err(err), Some(again)) if unprocessed(&err) => {
                first.close();
                resends += 1;
                // The cause at the bottom: h2's words for the GOAWAY or the reset.
                let cause = crate::causes::chain(&err)
                    .last()
                    .map_or_else(|| err.to_string(), ToString::to_string);
                tracing::debug!(
                    "{} {} was not processed by the server ({cause}); sending it again (resend {resends})",
                    again.method(),
                    again.uri()
                );
                tokio::time::sleep(backoff(resends)).await;
                request = again;
            }
            (answer, _) => return answer,
        }
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
}
