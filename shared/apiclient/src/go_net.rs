//! The one mapping from the client's transport errors (hyper, hyper-util, rustls, the
//! OS) to the words of Go's `net`, `net/http` and `crypto/x509`, which kubectl prints:
//! `dial tcp 127.0.0.1:1: connect: connection refused`, `dial tcp: lookup HOST on
//! 10.0.0.2:53: no such host`, `tls: failed to verify certificate: x509: certificate
//! signed by unknown authority`, and so on.
//!
//! Every path that reports a failed request uses it, each in kubectl's frame for that
//! path: [`standard_message`] is `CheckErr`'s (`Unable to connect to the server: …`, or
//! `The connection to the server HOST:PORT was refused - did you specify the right host
//! or port?`) for `cli::format_error` and rolling-update; [`url_error`] is Go's
//! `url.Error` (`Get "https://…/api?timeout=32s": …`) inside the Builder's `unable to
//! recognize "f.yaml": …` and the OpenAPI download's `failed to download openapi: …`.
//!
//! What the client stack does not carry is added where the connection and the request
//! are made ([`crate::client::connect::Dialed`]: the address dialled and whether it was
//! a proxy; [`crate::client::Requested`]: the method and URL; [`crate::bound::Bounded`]:
//! the client's bound and `--request-timeout`), so that every wording here is a
//! function of the error alone. What cannot be known is
//! decided here and listed in the README: the resolver a DNS failure names is the first
//! `nameserver` of `/etc/resolv.conf` (Go's pure resolver, which kubectl's Linux builds
//! use, names the server that answered, normally that one); a reset connection has no
//! local address to name. A request cut by the client's own bound keeps the project's
//! wording ([`crate::bound::no_answer`]).

use std::error::Error as StdError;

use crate::bound::Bounded;
use crate::causes::chain;
use crate::client::Requested;
use crate::client::connect::Dialed;

/// What Go would say about a failed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Go's text of the failure (a `url.Error`'s `Err`): `dial tcp …: connect:
    /// connection refused`.
    pub text: String,
    /// Whether kubectl's `StandardErrorMessage` reads it as a refused connection (its
    /// text says `connection refused`).
    pub refused: bool,
    /// The request's method and URL, when the failure came from a request.
    pub request: Option<(http::Method, http::Uri)>,
}

/// Whether `err` is a failure to reach the server at all (no HTTP answer), as opposed
/// to an answer the server gave.
pub fn is_transport(err: &(dyn StdError + 'static)) -> bool {
    chain(err).iter().any(|e| {
        e.is::<Requested>()
            || e.is::<Bounded>()
            || e.is::<Dialed>()
            || matches!(
                e.downcast_ref::<kube::Error>(),
                Some(kube::Error::Service(_) | kube::Error::HyperError(_))
            )
    })
}

/// Go's words for a transport failure anywhere in `err`'s chain; `None` when `err`
/// is not one (an API status, a decoding error).
pub fn failure(err: &(dyn StdError + 'static)) -> Option<Failure> {
    if !is_transport(err) {
        return None;
    }
    let all = chain(err);
    let request = all
        .iter()
        .find_map(|e| e.downcast_ref::<Requested>())
        .map(|r| (r.method.clone(), r.uri.clone()));
    let dialed = all.iter().find_map(|e| e.downcast_ref::<Dialed>());
    let text = go_text(&all, dialed);
    let refused = text.contains("connection refused");
    Some(Failure {
        text,
        refused,
        request,
    })
}

/// Go's `net.isDomainName`: letters, digits, `_` and `-` in labels of 1 to 63 bytes
/// (a label neither starting nor ending with `-`), at most 253 bytes (254 with the
/// final dot), not all digits.
fn is_domain_name(s: &str) -> bool {
    if s == "." {
        return true;
    }
    let l = s.len();
    if l == 0 || l > 254 || (l == 254 && !s.ends_with('.')) {
        return false;
    }
    let (mut last, mut non_numeric, mut part) = (b'.', false, 0);
    for &c in s.as_bytes() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                non_numeric = true;
                part += 1;
            }
            b'0'..=b'9' => part += 1,
            b'-' if last != b'.' => {
                non_numeric = true;
                part += 1;
            }
            b'.' if last != b'.' && last != b'-' && (1..=63).contains(&part) => part = 0,
            _ => return false,
        }
        last = c;
    }
    last != b'-' && part <= 63 && non_numeric
}

/// The text of the deepest cause Go would have, from the chain.
fn go_text(all: &[&(dyn StdError + 'static)], dialed: Option<&Dialed>) -> String {
    let proxy = if dialed.is_some_and(|d| d.proxy) {
        "proxyconnect tcp: "
    } else {
        ""
    };
    if let Some(tls) = all.iter().find_map(|e| e.downcast_ref::<rustls::Error>()) {
        return format!("{proxy}{}", tls_text(tls, dialed.map(|d| d.host.as_str())));
    }
    // The TLS layer names the server before anything is dialled, and refuses a host
    // that is no DNS name (an empty label: `a..example`, `xn--bcher-kva..example`).
    // Go dials first, and its resolver refuses such a name without asking a server.
    if all
        .iter()
        .any(|e| e.is::<rustls::pki_types::InvalidDnsNameError>())
        && let Some(host) = all
            .iter()
            .find_map(|e| e.downcast_ref::<Requested>())
            .and_then(|r| r.uri.host())
            .filter(|host| !is_domain_name(host))
    {
        return format!("dial tcp: lookup {host}: no such host");
    }
    // hyper-util's resolver failure: its connector's error says "dns error".
    if let Some(dialed) = dialed
        && all.iter().any(|e| e.to_string() == "dns error")
    {
        // Go's resolver refuses a name that is no domain name before asking a
        // server (`isDomainName`), and so names none.
        return match resolver().filter(|_| is_domain_name(&dialed.host)) {
            Some(server) => format!(
                "{proxy}dial tcp: lookup {} on {server}: no such host",
                dialed.host
            ),
            None => format!("{proxy}dial tcp: lookup {}: no such host", dialed.host),
        };
    }
    for e in all {
        let Some(io) = e.downcast_ref::<std::io::Error>() else {
            continue;
        };
        match io.kind() {
            std::io::ErrorKind::ConnectionRefused => {
                return match dialed {
                    Some(d) => format!("{proxy}dial tcp {}: connect: connection refused", d.addr),
                    None => "dial tcp: connect: connection refused".into(),
                };
            }
            std::io::ErrorKind::ConnectionReset => {
                return "read: connection reset by peer".into();
            }
            // Go's HTTP/2 transport turns the connection's EOF into
            // `io.ErrUnexpectedEOF` for every stream still open on it (its read
            // loop's clean-up); HTTP/1.1 says `EOF`.
            std::io::ErrorKind::UnexpectedEof if over_http2(all) => {
                return "unexpected EOF".into();
            }
            std::io::ErrorKind::UnexpectedEof => return "EOF".into(),
            _ => {}
        }
    }
    // hyper's "connection closed before message completed": Go's `EOF`.
    if all
        .iter()
        .any(|e| e.to_string() == "connection closed before message completed")
    {
        return "EOF".into();
    }
    // Anything else: the causes below kube's and hyper-util's own plumbing (from the
    // connection's own error when there is one: a proxy's refusal of the tunnel).
    if let Some(dialed) = dialed {
        return format!("{proxy}{}", crate::go_net::error_chain(dialed));
    }
    let below = all
        .iter()
        .position(|e| e.is::<Requested>())
        .and_then(|i| all.get(i + 1))
        .copied()
        .unwrap_or(all[0]);
    crate::go_net::error_chain(below)
}

/// Go's `tls` and `crypto/x509` words for a handshake that failed.
fn tls_text(err: &rustls::Error, host: Option<&str>) -> String {
    use rustls::CertificateError as C;
    const VERIFY: &str = "tls: failed to verify certificate: x509: ";
    match err {
        rustls::Error::InvalidCertificate(cert) => match cert {
            // BadSignature: a CA of the issuer's name that did not sign it (a rotated
            // CA); Go adds the candidate it tried, which webpki does not name.
            C::UnknownIssuer | C::BadSignature => {
                format!("{VERIFY}certificate signed by unknown authority")
            }
            C::NotValidForNameContext {
                expected,
                presented,
            } => {
                let wanted = host.map_or_else(|| server_name(expected), str::to_string);
                format!("{VERIFY}{}", hostname_error(&wanted, presented))
            }
            C::NotValidForName => {
                format!(
                    "{VERIFY}certificate is not valid for {}",
                    host.unwrap_or("")
                )
            }
            C::ExpiredContext { time, not_after } => format!(
                "{VERIFY}certificate has expired or is not yet valid: current time {} is after {}",
                rfc3339(time.as_secs()),
                rfc3339(not_after.as_secs())
            ),
            C::NotValidYetContext { time, not_before } => format!(
                "{VERIFY}certificate has expired or is not yet valid: current time {} is before {}",
                rfc3339(time.as_secs()),
                rfc3339(not_before.as_secs())
            ),
            C::Expired | C::NotValidYet => {
                format!("{VERIFY}certificate has expired or is not yet valid")
            }
            other => format!("tls: failed to verify certificate: {other:?}"),
        },
        rustls::Error::AlertReceived(alert) => format!("remote error: tls: {}", alert_text(*alert)),
        other => other.to_string(),
    }
}

/// Go's `x509.HostnameError`: the certificate's DNS names for a host name, its IP
/// addresses for an IP.
fn hostname_error(host: &str, presented: &[String]) -> String {
    let is_ip = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .is_ok();
    // webpki's Debug forms: `DnsName("x")`, `IpAddress(1.2.3.4)`.
    let names: Vec<&str> = presented
        .iter()
        .filter_map(|p| {
            if is_ip {
                p.strip_prefix("IpAddress(")?.strip_suffix(')')
            } else {
                p.strip_prefix("DnsName(\"")?.strip_suffix("\")")
            }
        })
        .collect();
    if names.is_empty() {
        if is_ip {
            return format!(
                "cannot validate certificate for {host} because it doesn't contain any IP SANs"
            );
        }
        return format!("certificate is not valid for any names, but wanted to match {host}");
    }
    format!("certificate is valid for {}, not {host}", names.join(", "))
}

fn server_name(name: &rustls::pki_types::ServerName<'_>) -> String {
    match name {
        rustls::pki_types::ServerName::DnsName(dns) => dns.as_ref().to_string(),
        rustls::pki_types::ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        other => format!("{other:?}"),
    }
}

/// Go's `time.RFC3339` of a UTC instant (`2020-01-01T00:00:00Z`).
/// jiff's `Display` of a whole-second `Timestamp` is exactly that form, and is linked
/// anyway; its `strftime` would add 19 KB of formatter to every plugin for this one
/// line (measured 2026-11-27, docs/binary-size.md).
fn rfc3339(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .map_or_else(|| secs.to_string(), |t| t.to_string())
}

/// Go's `tls.alert` texts for the alerts a server sends about a client certificate
/// or the handshake.
fn alert_text(alert: rustls::AlertDescription) -> String {
    use rustls::AlertDescription as A;
    match alert {
        A::BadCertificate => "bad certificate".into(),
        A::UnsupportedCertificate => "unsupported certificate".into(),
        A::CertificateRevoked => "revoked certificate".into(),
        A::CertificateExpired => "expired certificate".into(),
        A::CertificateUnknown => "unknown certificate".into(),
        A::UnknownCA => "unknown certificate authority".into(),
        A::HandshakeFailure => "handshake failure".into(),
        A::AccessDenied => "access denied".into(),
        A::DecryptError => "error decrypting message".into(),
        A::ProtocolVersion => "protocol version not supported".into(),
        A::InternalError => "internal error".into(),
        A::CertificateRequired => "certificate required".into(),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// The resolver Go's pure resolver names (kubectl's Linux builds): the first
/// `nameserver` of `/etc/resolv.conf`, as `IP:53` (`[IPv6]:53`), or Go's default
/// without one. Elsewhere kubectl asks the system's resolver, whose error names none.
fn resolver() -> Option<String> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let conf = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    Some(resolver_of(&conf))
}

fn resolver_of(conf: &str) -> String {
    conf.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some("nameserver")).then(|| words.next())?
        })
        .find_map(|ip| ip.parse::<std::net::IpAddr>().ok())
        .map_or_else(
            || "127.0.0.1:53".to_string(),
            |ip| std::net::SocketAddr::new(ip, 53).to_string(),
        )
}

/// Whether the failure came through an HTTP/2 connection.
fn over_http2(all: &[&(dyn StdError + 'static)]) -> bool {
    all.iter()
        .any(|e| e.is::<h2::Error>() || e.is::<crate::client::OverHttp2>())
}

/// A request that got no answer, already in kubectl's `StandardErrorMessage` words
/// ([`standard_message`]): printed as it is by `cli::format_error`, without `error: `,
/// as kubectl's `CheckErr` prints it. For a command that words its errors before
/// they reach the edge (rolling-update's cluster layer).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unreachable(pub String);

/// kubectl's `StandardErrorMessage` of a failed request: `The connection to the
/// server HOST:PORT was refused - did you specify the right host or port?` when Go's
/// text says the connection was refused, else `Unable to connect to the server: …`.
/// A request cut by the client's bound keeps the project's wording.
pub fn standard_message(err: &(dyn StdError + 'static)) -> Option<String> {
    if let Some(no_answer) = chain(err).iter().find_map(|e| crate::bound::no_answer(*e)) {
        return Some(no_answer);
    }
    let failure = failure(err)?;
    if let Some((method, uri)) = &failure.request {
        log_connection_error(method, uri, &failure.text);
    }
    Some(checkerr_words(
        &failure,
        failure.request.as_ref().map(|(_, uri)| uri),
    ))
}

/// `StandardErrorMessage`'s words for a `url.Error` of a request to `uri`: the
/// server's host and port for a refused connection (when the URL is known), else Go's
/// text.
pub fn checkerr_words(failure: &Failure, uri: Option<&http::Uri>) -> String {
    if failure.refused
        && let Some(uri) = uri
    {
        // kubectl names `url.Parse`'s `Host`: a host that is not ASCII as written,
        // and never the userinfo (`jane:password@`) the authority may hold.
        let authority = uri.authority().map_or("", |a| a.as_str());
        let host = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        return format!(
            "The connection to the server {} was refused - did you specify the right host or port?",
            crate::idn::written_authority(host)
        );
    }
    format!("Unable to connect to the server: {}", failure.text)
}

/// `StandardErrorMessage`'s `-v=4` log of a `url.Error` (`%s %s: %v`: no quotes):
/// `Connection error: Get https://host/path: dial tcp …`.
pub fn log_connection_error(method: &http::Method, uri: &http::Uri, text: &str) {
    if crate::klog::enabled(4) {
        crate::klog::info(
            "helpers.go",
            CONNECTION_ERROR_LINE,
            &format!(
                "Connection error: {} {}: {text}",
                go_op(method),
                without_password(&crate::idn::shown_uri(uri)),
            ),
        );
    }
}

/// Go's `url.Error` for the request that failed, as it was sent (`Post
/// "https://…/api/v1/namespaces/ns/configmaps?…": dial tcp …`): create -f's words
/// after `error when creating "f.yaml": `. `None` when `err` is no transport failure
/// or no request is known, and for a request cut by the client's bound (its own
/// words, from `error::error_chain`).
pub fn request_error(err: &(dyn StdError + 'static)) -> Option<String> {
    if chain(err)
        .iter()
        .any(|e| crate::bound::no_answer(*e).is_some())
    {
        return None;
    }
    let failure = failure(err)?;
    let (method, uri) = failure.request?;
    Some(format!(
        "{} \"{}\": {}",
        go_op(&method),
        without_password(&crate::idn::shown_uri(&uri)),
        failure.text
    ))
}

/// The source line of kubectl 1.37's `Connection error:` log in `StandardErrorMessage`
/// (`helpers.go:265`), so that a log of ours reads as kubectl's does.
const CONNECTION_ERROR_LINE: u32 = 265;

/// A `url.Error`'s `Op`: the method as net/http's client names it (`Post`, `Get`).
fn go_op(method: &http::Method) -> String {
    let method = method.as_str();
    method
        .chars()
        .take(1)
        .chain(method.chars().skip(1).flat_map(char::to_lowercase))
        .collect()
}

/// The URL as net/http's client names it in a `url.Error` (`stripPassword`): a
/// password in the userinfo replaced by `***` (`https://jane:***@host/…`).
fn without_password(url: &str) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let end = url[start..].find('/').map_or(url.len(), |i| start + i);
    let Some(at) = url[start..end].rfind('@').map(|i| start + i) else {
        return url.to_string();
    };
    match url[start..at].split_once(':') {
        Some((user, _)) => format!("{}{user}:***{}", &url[..start], &url[at..]),
        None => url.to_string(),
    }
}

/// Go's `url.Error` for a failed request to `path` of the server (`Get
/// "https://host:port/api?timeout=32s": dial tcp …`), with the URL kubectl's client
/// would have asked: the server of the request that failed, `path`, and the discovery
/// and OpenAPI clients' `timeout` parameter (`--request-timeout` as the client's
/// bound carried it in `err`, else 32 s). `None` when `err` is no transport failure; a
/// request cut by the client's bound keeps the project's wording.
pub fn url_error(err: &(dyn StdError + 'static), path: &str) -> Option<String> {
    let all = chain(err);
    if let Some(no_answer) = all.iter().find_map(|e| crate::bound::no_answer(*e)) {
        return Some(no_answer);
    }
    let request_timeout = all
        .iter()
        .find_map(|e| e.downcast_ref::<Bounded>())
        .and_then(|b| b.bound.request_timeout);
    let failure = failure(err)?;
    let Some((_, uri)) = &failure.request else {
        return Some(failure.text);
    };
    // `--server`'s path prefixes every request (kube's base-URI layer), and Go's
    // URL names it: what the sent path holds before the one kubectl names (or, for
    // another request, before its API root).
    let sent = uri.path();
    let prefix = sent
        .strip_suffix(path)
        .or_else(|| {
            ["/api", "/openapi", "/version"]
                .iter()
                .filter_map(|root| sent.find(root))
                .min()
                .map(|at| &sent[..at])
        })
        .unwrap_or_default()
        .trim_end_matches('/');
    let server = without_password(&format!(
        "{}://{}{prefix}",
        uri.scheme_str().unwrap_or("https"),
        crate::idn::shown_authority(uri.authority().map_or("", |a| a.as_str()))
    ));
    let timeout = request_timeout.map_or_else(|| "32s".to_string(), crate::bound::go_duration);
    Some(format!(
        "Get \"{server}{path}?timeout={timeout}\": {}",
        failure.text
    ))
}

/// An error and its causes joined by `: `. The crate's own errors say each cause once
/// (see `crate::error`); the types that word their cause into their own message
/// ([`words_its_cause`]) have that cause, and its own worded causes, left out.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = String::new();
    let mut source = Some(err);
    // kube's error around the request's own (both are the same failure).
    let mut parent_is_request = false;
    // Whether the cause's text is already in its parent's.
    let mut said = false;
    while let Some(cause) = source {
        // A request cut by the client's bound: the rule instead of hyper's internals
        // (and nothing below it).
        let no_answer = crate::bound::no_answer(cause);
        // A request that got no answer, under a parent that worded it already in Go's
        // words (this module): the client stack's own text would only repeat it.
        let request_failure = is_request_failure(cause);
        if no_answer.is_none() && !msg.is_empty() && request_failure && !parent_is_request {
            break;
        }
        parent_is_request = request_failure;
        let last = no_answer.is_some();
        let text = match no_answer {
            // The rule is none of the causes' words: never said by a parent.
            Some(rule) => Some(rule),
            None if said => None,
            None => Some(cause.to_string()),
        };
        if let Some(text) = text {
            msg = if msg.is_empty() {
                text
            } else {
                format!("{msg}: {text}")
            };
        }
        // What a cause words is its own cause: said, and so on down while each
        // cause words the next (a said cause that words its cause says that one too).
        said = words_its_cause(cause);
        source = if last { None } else { cause.source() };
    }
    msg
}

/// Whether `err`'s message already holds its cause's text (thiserror's `…: {0}` with
/// `#[source]`): kube's errors (`ServiceError: …`, `HyperError: …`), its kubeconfig
/// errors, tungstenite's, and [`Bounded`], a mark whose text is its cause's.
fn words_its_cause(err: &(dyn std::error::Error + 'static)) -> bool {
    err.is::<kube::Error>()
        || err.is::<kube::config::KubeconfigError>()
        || err.is::<tokio_tungstenite::tungstenite::Error>()
        || err.is::<Bounded>()
}

/// Whether `err` itself (not a cause of it) is a request the client could not send or
/// get an answer to.
fn is_request_failure(err: &(dyn std::error::Error + 'static)) -> bool {
    err.is::<Requested>()
        || err.is::<Bounded>()
        || matches!(
            err.downcast_ref::<kube::Error>(),
            Some(kube::Error::Service(_) | kube::Error::HyperError(_))
        )
}

#[cfg(test)]
mod tests;
