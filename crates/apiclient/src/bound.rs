//! The one rule that bounds every request of a command's client, so that no plugin
//! waits forever on an API server that accepted the connection but answers nothing
//! (paused, black-holed, or its process stopped: the kernel still completes TCP
//! handshakes into the listen backlog).
//!
//! kube 5 sets no read timeout by default (so as not to cut exec/attach sessions), and
//! kubectl itself has none unless `--request-timeout` is given. Each plugin calls
//! [`bound_requests`] once, on the `Config` it builds its client from:
//!
//! - `--request-timeout` given (non-zero): that bound, as kubectl honours it.
//! - otherwise [`DEFAULT_BOUND`]: kube-apiserver answers every request that is not a
//!   stream (watch, attach, logs) within its own `--request-timeout`, 60 s by default,
//!   with a `504` if the work is not done by then; a server that has sent nothing for
//!   longer is not working on our request. The margin lets that `504` arrive.
//!
//! The bound is a connect timeout (TCP and TLS handshakes) and a read and write
//! timeout *per read/write*, not a total: a long answer that keeps arriving is never
//! cut. Reads count from the last write (`reset_reader_on_write`), so a connection's
//! idle time in the pool does not count, and an attach session, whose client sends a
//! WebSocket ping every 60 s (kube's `remote_command`), stays open however quiet it is
//! as long as the bound exceeds 60 s. Watches ask the server to end them within the
//! bound ([`watch_timeout`]), so a quiet watch is renewed by the watcher, never cut.

use std::sync::Mutex;
use std::time::Duration;

/// The bound without `--request-timeout`: kube-apiserver's default request timeout
/// (60 s) plus 15 s for its `504` to travel back.
pub const DEFAULT_BOUND: Duration = Duration::from_secs(75);

/// The bound of this process's client and the flag that set it (`None`: none set
/// yet). Process-wide like the warning writer: the error formatter
/// ([`cli::format_error`]) names it.
static BOUND: Mutex<Option<(Duration, &'static str)>> = Mutex::new(None);

/// The flag that bounds requests in every plugin, as in kubectl.
pub const REQUEST_TIMEOUT_FLAG: &str = "--request-timeout";

/// Bounds every request of a client built from `config`: `limit` when given (a
/// command's `--request-timeout`, or a tighter bound such as rolling-update's
/// `--timeout`, with the flag that set it), else [`DEFAULT_BOUND`]; a timeout already
/// set lower in `config` (by `--request-timeout`) stays. Returns the bound in effect
/// (the read timeout).
pub fn bound_requests(
    config: &mut kube::Config,
    limit: Option<(Duration, &'static str)>,
) -> Duration {
    let (effective, flag) = apply(config, limit);
    *BOUND.lock().unwrap_or_else(|e| e.into_inner()) = Some((effective, flag));
    if let Some((given, REQUEST_TIMEOUT_FLAG)) = limit {
        *REQUEST_TIMEOUT.lock().unwrap_or_else(|e| e.into_inner()) = Some(given);
    }
    effective
}

/// [`bound_requests`] on `config` alone: the bound in effect and the flag that set it,
/// recorded nowhere (the tests' entry, which must not change the process's bound
/// under the error tests running beside them).
fn apply(
    config: &mut kube::Config,
    limit: Option<(Duration, &'static str)>,
) -> (Duration, &'static str) {
    let bound = limit
        .map_or(DEFAULT_BOUND, |(d, _)| d)
        .max(Duration::from_millis(1));
    for t in [
        &mut config.connect_timeout,
        &mut config.read_timeout,
        &mut config.write_timeout,
    ] {
        *t = Some(t.map_or(bound, |t| t.min(bound)));
    }
    config.reset_reader_on_write = true;
    let effective = config.read_timeout.unwrap_or(bound);
    // A tighter read timeout than the limit was set by --request-timeout.
    let flag = match limit {
        Some((_, flag)) if effective >= bound => flag,
        _ => REQUEST_TIMEOUT_FLAG,
    };
    (effective, flag)
}

/// `--request-timeout` as [`bound_requests`] was given it in this process (not the
/// default bound): kubectl's discovery and OpenAPI clients put it in their URLs
/// (`?timeout=2s`), which [`crate::go_net::url_error`] repeats.
pub fn request_timeout() -> Option<Duration> {
    *REQUEST_TIMEOUT.lock().unwrap_or_else(|e| e.into_inner())
}

static REQUEST_TIMEOUT: std::sync::Mutex<Option<Duration>> = std::sync::Mutex::new(None);

/// The bound set by [`bound_requests`] in this process, if any, and its flag.
fn set() -> Option<(Duration, &'static str)> {
    *BOUND.lock().unwrap_or_else(|e| e.into_inner())
}

/// The bound set by [`bound_requests`] in this process, if any.
pub fn current() -> Option<Duration> {
    set().map(|(d, _)| d)
}

/// The server-side timeout (`timeoutSeconds`) for a watch under the bound in effect:
/// one second below it, so the server ends a quiet watch (and the watcher renews it)
/// before the client's read timeout would cut it; at least 1, at most kube's own 290.
pub fn watch_timeout() -> u32 {
    watch_timeout_under(current().unwrap_or(DEFAULT_BOUND))
}

fn watch_timeout_under(bound: Duration) -> u32 {
    u32::try_from(bound.as_secs().saturating_sub(1).clamp(1, 290)).unwrap_or(290)
}

/// Whether `err` (any cause of it) is a request cut by the bound: hyper-timeout's
/// connect, read and write timeouts are all `io::ErrorKind::TimedOut`.
pub fn is_timeout(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(err);
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::TimedOut
        {
            return true;
        }
        cause = e.source();
    }
    false
}

/// kubectl's words for a request cut by the bound (`Unable to connect to the server:
/// …`), when `err` itself is a kube transport error that timed out: the one wording
/// for every plugin and flag. It names the rule, not how long this request waited:
/// the connect timeout can be tighter (kube's 30 s).
pub fn no_answer(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let kube_err = err.downcast_ref::<kube::Error>()?;
    if !matches!(
        kube_err,
        kube::Error::HyperError(_) | kube::Error::Service(_)
    ) || !is_timeout(kube_err)
    {
        return None;
    }
    let (bound, flag) = set()?;
    Some(if flag == REQUEST_TIMEOUT_FLAG {
        format!(
            "Unable to connect to the server: no answer in time (each request is bounded by {bound:?}: {flag}, or {DEFAULT_BOUND:?} without it)"
        )
    } else {
        format!(
            "Unable to connect to the server: no answer in time (each request is bounded by {bound:?}: {flag})"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(apply(&mut c, None).0, DEFAULT_BOUND);
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
        assert_eq!(apply(&mut c, Some((five, "--timeout"))).0, five);
        assert_eq!(
            (c.connect_timeout, c.read_timeout, c.write_timeout),
            (Some(five), Some(five), Some(five))
        );
        // A longer --request-timeout than the default is honoured (to_config has set
        // all three to it already).
        let mut c = config();
        let ten_min = Duration::from_secs(600);
        c.connect_timeout = Some(ten_min);
        c.read_timeout = Some(ten_min);
        c.write_timeout = Some(ten_min);
        assert_eq!(
            apply(&mut c, Some((ten_min, REQUEST_TIMEOUT_FLAG))).0,
            ten_min
        );
        assert_eq!(c.write_timeout, Some(ten_min));
        // rolling-update: --request-timeout=3s set by to_config, --timeout=5m as the limit.
        let mut c = config();
        c.read_timeout = Some(Duration::from_secs(3));
        assert_eq!(
            apply(&mut c, Some((Duration::from_secs(300), "--timeout"))).0,
            Duration::from_secs(3)
        );
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
