//! How the cluster's failures are told apart and worded: conflicts and missing
//! objects, transient errors worth another attempt, watch errors no retry can cure,
//! and connection failures in kubectl's words.

use std::time::Duration;

use anyhow::anyhow;
use kube::runtime::watcher;

pub fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.is_conflict())
}

pub fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.is_not_found())
}

/// Whether a failed request may succeed if sent again: throttling (429), a server
/// error (5xx: a restarting or overloaded API server), or a connection that failed
/// or timed out before an answer arrived.
pub fn is_transient(err: &kube::Error) -> bool {
    match err {
        kube::Error::Api(s) => s.code == 429 || s.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Words a connection failure the way kubectl does ("Unable to connect to the
/// server: …") instead of the client stack's nested Debug-like chain
/// (`ServiceError: client error (SendRequest): …`), keeping the step it happened in.
/// A read that ran past the request bound is said to be that.
pub fn explain_transport(err: anyhow::Error, timeout: Duration) -> anyhow::Error {
    let mut steps = Vec::new();
    let mut transport = None;
    for cause in err.chain() {
        if let Some(kube_err) = cause.downcast_ref::<kube::Error>() {
            if matches!(
                kube_err,
                kube::Error::Service(_) | kube::Error::HyperError(_)
            ) {
                transport = Some(kube_err);
            }
            break;
        }
        steps.push(cause.to_string());
    }
    let Some(transport) = transport else {
        return err;
    };
    let mut root: &dyn std::error::Error = transport;
    while let Some(next) = root.source() {
        root = next;
    }
    let root = root.to_string();
    let reason = if root.contains("timed out") || root.contains("deadline") {
        format!("no answer within {timeout:?} (each request is bounded by --timeout)")
    } else {
        root.trim_start_matches("connection error: ").to_string()
    };
    steps.push(format!("Unable to connect to the server: {reason}"));
    anyhow!(steps.join(": "))
}

/// Whether a watch error means the watch can never succeed (no permission, no such
/// resource): reported at once instead of retried until the timeout.
pub fn is_fatal_watch_error(err: &watcher::Error) -> Option<Box<kube::core::Status>> {
    let api = match err {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => e,
        _ => return None,
    };
    match api {
        kube::Error::Api(s) if matches!(s.code, 401 | 403 | 404) => Some(s.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_errors_are_worded_like_kubectl() {
        let io = std::io::Error::new(std::io::ErrorKind::TimedOut, "connection error: timed out");
        let err = anyhow::Error::new(kube::Error::Service(Box::new(io)))
            .context("scaling replicationcontroller \"web-1\"");
        assert_eq!(
            explain_transport(err, Duration::from_secs(5)).to_string(),
            "scaling replicationcontroller \"web-1\": Unable to connect to the server: no answer within 5s (each request is bounded by --timeout)"
        );
        let refused = std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "Connection refused (os error 111)",
        );
        let err = anyhow::Error::new(kube::Error::Service(Box::new(refused)));
        assert_eq!(
            explain_transport(err, Duration::from_secs(5)).to_string(),
            "Unable to connect to the server: Connection refused (os error 111)"
        );
        let api = anyhow::Error::new(kube::Error::Api(Box::new(
            kube::core::Status::failure("nope", "NotFound").with_code(404),
        )));
        assert!(
            explain_transport(api, Duration::from_secs(5))
                .downcast_ref::<kube::Error>()
                .is_some()
        );
    }
}
