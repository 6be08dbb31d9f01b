//! Each request's own bound, as kubectl's `http.Client.Timeout` is one: from the
//! moment the request is issued to its answer's headers, including the wait at the
//! first-answer gate, for a connection, and behind the server's stream limit, and
//! any resend of a request the server did not process ([`super::resend`]); then
//! each frame of the answer's body within the bound of the one before (a long
//! answer that keeps arriving is never cut; watches ask the server to end them
//! below the bound, `bound::Bound::watch_timeout`).
//!
//! Why not the connection's read timeout alone (hyper-timeout, which the client had
//! for this): over HTTP/2 one connection carries every request, so a read timeout on
//! it either cuts every stream at once when one is late, or — while other streams
//! keep the connection busy, or while a request waits outside any connection's I/O
//! (for a connection after a GOAWAY, behind a stream limit) — cuts none. A late
//! request must fail alone, and no request may wait forever. The connection's health
//! is the PING's business (`client`), not a request's.
//!
//! The failure is the one a timed-out read gives (`io::ErrorKind::TimedOut`), so
//! that the bound's layer words it as every cut request is worded
//! (`bound::Bounded`: `no answer in time (each request is bounded by …)`).

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tower::BoxError;

/// The error of a request or body cut by its bound.
pub(super) fn timed_out() -> BoxError {
    Box::new(std::io::Error::from(std::io::ErrorKind::TimedOut))
}

/// `exchange` (a request up to its answer's headers) within `limit`, when there is
/// one; the answer's body then bounded frame by frame ([`Idle`]).
pub(super) async fn bound<B, E>(
    limit: Option<Duration>,
    exchange: impl Future<Output = Result<http::Response<B>, E>>,
) -> Result<http::Response<Idle<B>>, BoxError>
where
    E: Into<BoxError>,
{
    let answer = match limit {
        Some(limit) => tokio::time::timeout(limit, exchange)
            .await
            .map_err(|_elapsed| timed_out())?,
        None => exchange.await,
    };
    Ok(answer
        .map_err(Into::into)?
        .map(|body| Idle::new(body, limit)))
}

/// A body whose every frame must come within `limit` of the one before (or of the
/// headers).
pub struct Idle<B> {
    body: B,
    limit: Option<Duration>,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<B> Idle<B> {
    fn new(body: B, limit: Option<Duration>) -> Self {
        Self {
            body,
            limit,
            timer: limit.map(|l| Box::pin(tokio::time::sleep(l))),
        }
    }
}

impl<B> HttpBody for Idle<B>
where
    B: HttpBody + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Ready(frame) => {
                if let (Some(timer), Some(limit)) = (this.timer.as_mut(), this.limit) {
                    timer.as_mut().reset(tokio::time::Instant::now() + limit);
                }
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => {
                let expired = this
                    .timer
                    .as_mut()
                    .is_some_and(|timer| timer.as_mut().poll(cx).is_ready());
                if expired {
                    Poll::Ready(Some(Err(timed_out())))
                } else {
                    Poll::Pending
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;

    #[tokio::test(start_paused = true)]
    async fn a_late_answer_is_cut_at_the_bound() {
        let late = async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok::<_, BoxError>(http::Response::new(
                http_body_util::Empty::<bytes::Bytes>::new(),
            ))
        };
        let start = tokio::time::Instant::now();
        let err = bound(Some(Duration::from_secs(3)), late)
            .await
            .err()
            .unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(3));
        assert!(crate::bound::is_timeout(err.as_ref()));
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_keeps_coming_is_never_cut_one_that_stops_is() {
        // A frame each second for 10 s under a 3 s bound, then silence.
        let frames = futures::stream::unfold(0, |n| async move {
            if n == 10 {
                futures::future::pending::<()>().await;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
            Some((
                Ok::<_, std::convert::Infallible>(Frame::data(bytes::Bytes::from_static(b"x"))),
                n + 1,
            ))
        });
        let body = http_body_util::StreamBody::new(Box::pin(frames));
        let answer = async { Ok::<_, BoxError>(http::Response::new(body)) };
        let mut body = bound(Some(Duration::from_secs(3)), answer)
            .await
            .unwrap()
            .into_body();
        let mut got = 0;
        let err = loop {
            match body.frame().await {
                Some(Ok(_)) => got += 1,
                Some(Err(e)) => break e,
                None => panic!("the body never ends"),
            }
        };
        assert_eq!(got, 10);
        assert!(crate::bound::is_timeout(err.as_ref()));
    }
}
