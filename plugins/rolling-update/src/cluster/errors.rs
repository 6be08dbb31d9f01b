//! How the cluster's failures are told apart and worded: conflicts and missing
//! objects, transient errors worth another attempt, watch errors no retry can cure,
//! and connection failures in kubectl's words.

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
/// A request cut by the bound gets the shared wording, which names `--timeout`.
pub fn explain_transport(err: anyhow::Error) -> anyhow::Error {
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
    // kubectl's StandardErrorMessage of Go's words (the one mapping, apiclient::go_net);
    // 1.17's was the same for a request that got no answer.
    let explained = apiclient::go_net::standard_message(transport).unwrap_or_else(|| {
        format!(
            "Unable to connect to the server: {}",
            apiclient::go_net::error_chain(transport)
        )
    });
    // Alone, it is kubectl's CheckErr line (no `error: `); after a step of ours, part
    // of that step's message.
    if steps.is_empty() {
        return anyhow::Error::new(apiclient::go_net::Unreachable(explained));
    }
    steps.push(explained);
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
        use std::time::Duration;
        let mut config = kube::Config::new("https://127.0.0.1:6443".parse().unwrap());
        let bound = apiclient::bound::bound_requests(
            &mut config,
            None,
            Some((Duration::from_secs(5), "--timeout")),
        );
        // A request cut by the client's bound carries the bound (its layer's mark).
        let io = std::io::Error::new(std::io::ErrorKind::TimedOut, "connection error: timed out");
        let cut = apiclient::bound::Bounded::new(bound, io);
        let err = anyhow::Error::new(kube::Error::Service(Box::new(cut)))
            .context("scaling replicationcontroller \"web-1\"");
        assert_eq!(
            explain_transport(err).to_string(),
            "scaling replicationcontroller \"web-1\": Unable to connect to the server: no answer in time (each request is bounded by 5s: --timeout)"
        );
        let refused = std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "Connection refused (os error 111)",
        );
        let err = anyhow::Error::new(kube::Error::Service(Box::new(refused)));
        assert_eq!(
            explain_transport(err).to_string(),
            "Unable to connect to the server: dial tcp: connect: connection refused"
        );
        let api = anyhow::Error::new(kube::Error::Api(Box::new(
            kube::core::Status::failure("nope", "NotFound").with_code(404),
        )));
        assert!(
            explain_transport(api)
                .downcast_ref::<kube::Error>()
                .is_some()
        );
    }
}
