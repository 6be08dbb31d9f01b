//! Unit tests of the mapping to Go's words, over real failures of the client stack
//! where they can be had on loopback (a closed port, a TLS server with a certificate
//! the client refuses), and over the error values themselves otherwise.

use super::*;
use crate::bound::go_duration;

/// A kube client for `server` trusting `ca` (PEM), through the plugins' own stack.
fn client(server: &str, ca: Option<&str>, tls_server_name: Option<&str>) -> kube::Client {
    crate::tls::install_crypto_provider();
    let mut config = kube::Config::new(server.parse().expect("url"));
    config.root_cert = ca.map(|pem| {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        CertificateDer::pem_slice_iter(pem.as_bytes())
            .map(|c| c.expect("pem").to_vec())
            .collect()
    });
    config.tls_server_name = tls_server_name.map(str::to_string);
    let (credentials, identity) =
        crate::credentials::Credentials::of(&config).expect("credentials");
    crate::client::builder(&config, credentials, identity)
        .expect("builder")
        .build()
}

async fn get(client: &kube::Client) -> kube::Error {
    client
        .request_text(
            http::Request::get("/api")
                .body(Vec::new())
                .expect("request"),
        )
        .await
        .expect_err("the request fails")
}

/// A port nothing listens on (bound, then closed).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

#[tokio::test]
async fn a_refused_connection_reads_as_in_kubectl() {
    let port = closed_port();
    let err = get(&client(&format!("https://127.0.0.1:{port}"), None, None)).await;
    let failure = failure(&err).expect("a transport failure");
    assert_eq!(
        failure.text,
        format!("dial tcp 127.0.0.1:{port}: connect: connection refused")
    );
    assert_eq!(
        standard_message(&err).as_deref(),
        Some(
            format!(
                "The connection to the server 127.0.0.1:{port} was refused - did you specify the right host or port?"
            )
            .as_str()
        )
    );
    assert_eq!(
        url_error(&err, "/api"),
        Some(format!(
            "Get \"https://127.0.0.1:{port}/api?timeout=32s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        ))
    );
}

#[tokio::test]
async fn a_server_path_is_named_in_go_s_url() {
    let port = closed_port();
    let err = get(&client(&format!("http://127.0.0.1:{port}/x"), None, None)).await;
    assert_eq!(
        url_error(&err, "/api"),
        Some(format!(
            "Get \"http://127.0.0.1:{port}/x/api?timeout=32s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        ))
    );
    // Another request than the one kubectl names keeps the prefix too.
    assert_eq!(
        url_error(&err, "/openapi/v2"),
        Some(format!(
            "Get \"http://127.0.0.1:{port}/x/openapi/v2?timeout=32s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        ))
    );
}

#[test]
fn domain_names_are_go_s() {
    for name in ["a", "kubernetes.default.svc", "x-1.example.", "_srv.a"] {
        assert!(is_domain_name(name), "{name}");
    }
    for name in ["", "-x", "x-", "a..b", "123", "ünï✓", "a b", "/tmp"] {
        assert!(!is_domain_name(name), "{name}");
    }
}

#[tokio::test]
async fn a_name_that_is_no_domain_name_names_no_resolver() {
    let err = get(&client("http://-x", None, None)).await;
    assert_eq!(
        standard_message(&err).as_deref(),
        Some("Unable to connect to the server: dial tcp: lookup -x: no such host")
    );
}

#[tokio::test]
async fn a_name_that_does_not_resolve_names_the_resolver() {
    // RFC 6761: `.invalid` never resolves.
    let err = get(&client("https://nonexistent.invalid:6443", None, None)).await;
    let on = resolver().map(|r| format!(" on {r}")).unwrap_or_default();
    assert_eq!(
        standard_message(&err),
        Some(format!(
            "Unable to connect to the server: dial tcp: lookup nonexistent.invalid{on}: no such host"
        ))
    );
}

/// A TLS server on loopback presenting `cert` (signed by a CA it returns), which
/// accepts one connection at a time until dropped.
struct TlsServer {
    port: u16,
    ca: String,
    _task: tokio::task::JoinHandle<()>,
}

fn tls_server(names: &[&str], expired: bool) -> TlsServer {
    tls_server_telling(names, expired, None)
}

/// [`tls_server`], sending the server name of each client's hello (its SNI) on `sni`.
fn tls_server_telling(
    names: &[&str],
    expired: bool,
    sni: Option<tokio::sync::mpsc::UnboundedSender<String>>,
) -> TlsServer {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    static CAS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let ca_key = KeyPair::generate().expect("key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("params");
    // A name of its own: a CA of the same name is a candidate issuer (see below).
    let n = CAS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ca.distinguished_name
        .push(DnType::CommonName, format!("go-net-test-ca-{n}"));
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).expect("ca");
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().expect("key");
    let mut params =
        CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
            .expect("params");
    if expired {
        params.not_before = rcgen::date_time_ymd(2019, 1, 1);
        params.not_after = rcgen::date_time_ymd(2020, 1, 1);
    }
    let cert = params.signed_by(&key, &issuer).expect("cert");
    let server = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).expect("key der"),
        )
        .expect("server config");
    let server = std::sync::Arc::new(server);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    let task = tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = rustls::server::Acceptor::default();
            let Ok(start) = tokio_rustls::LazyConfigAcceptor::new(acceptor, tcp).await else {
                continue;
            };
            if let Some(sni) = &sni {
                let hello = start.client_hello();
                let _ = sni.send(hello.server_name().unwrap_or_default().to_string());
            }
            let _ = start.into_stream(server.clone()).await;
        }
    });
    TlsServer {
        port,
        ca: ca_cert.pem(),
        _task: task,
    }
}

#[tokio::test]
async fn an_unknown_authority_reads_as_in_kubectl() {
    crate::tls::install_crypto_provider();
    let server = tls_server(&["localhost"], false);
    let other = tls_server(&["localhost"], false);
    let url = format!("https://localhost:{}", server.port);
    let err = get(&client(&url, Some(&other.ca), None)).await;
    assert_eq!(
        standard_message(&err).as_deref(),
        Some(
            "Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority"
        )
    );
}

/// A CA of the issuer's name that did not sign the certificate (a rotated CA): Go
/// reports an unknown authority too (with the candidate it tried, which webpki does
/// not name; README).
#[test]
fn a_candidate_issuer_that_did_not_sign_is_an_unknown_authority() {
    let err = rustls::Error::InvalidCertificate(rustls::CertificateError::BadSignature);
    assert_eq!(
        tls_text(&err, None),
        "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    );
}

#[tokio::test]
async fn a_name_not_in_the_certificate_lists_those_that_are() {
    crate::tls::install_crypto_provider();
    let server = tls_server(&["localhost", "kubernetes", "127.0.0.1"], false);
    let url = format!("https://127.0.0.1:{}", server.port);
    let err = get(&client(&url, Some(&server.ca), Some("wrong.example"))).await;
    assert_eq!(
        failure(&err).expect("failure").text,
        "tls: failed to verify certificate: x509: certificate is valid for localhost, kubernetes, not wrong.example"
    );
    // An IP address is matched against the IP names only, as Go does.
    let server = tls_server(&["localhost"], false);
    let url = format!("https://127.0.0.1:{}", server.port);
    let err = get(&client(&url, Some(&server.ca), None)).await;
    assert_eq!(
        failure(&err).expect("failure").text,
        "tls: failed to verify certificate: x509: cannot validate certificate for 127.0.0.1 because it doesn't contain any IP SANs"
    );
}

#[tokio::test]
async fn an_expired_certificate_gives_both_times() {
    crate::tls::install_crypto_provider();
    let server = tls_server(&["localhost"], true);
    let url = format!("https://localhost:{}", server.port);
    let err = get(&client(&url, Some(&server.ca), None)).await;
    let text = failure(&err).expect("failure").text;
    let prefix = "tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time ";
    let rest = text
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("{text}"));
    let (now, after) = rest.split_once(" is after ").expect("two times");
    assert_eq!(after, "2020-01-01T00:00:00Z");
    assert_eq!(now.len(), "2026-11-27T15:40:00Z".len(), "{now}");
    assert!(now.ends_with('Z'), "{now}");
}

#[test]
fn the_resolver_is_the_first_nameserver() {
    assert_eq!(
        resolver_of("# c\nsearch x\nnameserver 10.0.0.2\nnameserver 10.0.0.3\n"),
        "10.0.0.2:53"
    );
    assert_eq!(resolver_of("nameserver ::1\n"), "[::1]:53");
    assert_eq!(resolver_of(""), "127.0.0.1:53");
}

#[test]
fn durations_read_as_go_prints_them() {
    use std::time::Duration;
    assert_eq!(go_duration(Duration::from_secs(32)), "32s");
    assert_eq!(go_duration(Duration::from_secs(60)), "1m0s");
    assert_eq!(go_duration(Duration::from_secs(3725)), "1h2m5s");
    assert_eq!(go_duration(Duration::from_millis(1500)), "1.5s");
    assert_eq!(go_duration(Duration::from_millis(500)), "500ms");
    assert_eq!(go_duration(Duration::ZERO), "0s");
}

#[test]
fn alerts_and_hostnames_read_as_go_words_them() {
    assert_eq!(
        alert_text(rustls::AlertDescription::BadCertificate),
        "bad certificate"
    );
    assert_eq!(
        hostname_error("x.example", &[]),
        "certificate is not valid for any names, but wanted to match x.example"
    );
    assert_eq!(
        hostname_error(
            "10.0.0.9",
            &["DnsName(\"a\")".into(), "IpAddress(10.0.0.1)".into()]
        ),
        "certificate is valid for 10.0.0.1, not 10.0.0.9"
    );
}

#[test]
fn an_api_answer_is_not_a_transport_failure() {
    let status = kube::core::Status::failure("nope", "NotFound").with_code(404);
    let err = kube::Error::Api(Box::new(status));
    assert!(failure(&err).is_none());
    assert!(standard_message(&err).is_none());
}

/// A step of ours that words the failure in Go's words is printed without the client
/// stack's own text after it (`error::error_chain`), as `--match-server-version`'s
/// kubectl does: `couldn't read version from server: Get "…/version?timeout=32s": …`.
#[tokio::test]
async fn a_worded_failure_is_not_followed_by_the_stack_s_text() {
    let port = closed_port();
    let err = get(&client(&format!("https://127.0.0.1:{port}"), None, None)).await;
    let reason = url_error(&err, "/version").expect("a transport failure");
    let err = anyhow::Error::new(crate::error::Error::ServerVersionUnreadable {
        reason,
        source: err,
    });
    // `cli::format_error` ends in this line for an error of ours.
    assert_eq!(
        format!("error: {}", crate::go_net::error_chain(err.as_ref())),
        format!(
            "error: couldn't read version from server: Get \"https://127.0.0.1:{port}/version?timeout=32s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
}

/// The plugins' client for `server` under `limit` ([`crate::bound`]), with the bound's
/// layer on it, as `cli::Context::client` builds it.
fn bounded_client(server: &str, limit: (std::time::Duration, &'static str)) -> kube::Client {
    crate::client::bounded(kube::Config::new(server.parse().expect("url")), limit).0
}

/// The URL's `timeout` is the `--request-timeout` the failed request's client carried,
/// not a value of the process: two clients side by side keep their own.
#[tokio::test]
async fn the_url_s_timeout_is_the_failed_client_s_request_timeout() {
    use std::time::Duration;
    let port = closed_port();
    let server = format!("http://127.0.0.1:{port}");
    let given = bounded_client(
        &server,
        (Duration::from_secs(2), crate::bound::REQUEST_TIMEOUT_FLAG),
    );
    let own = bounded_client(&server, (Duration::from_secs(300), "--timeout"));
    let (given, own) = (get(&given).await, get(&own).await);
    let refused = format!("dial tcp 127.0.0.1:{port}: connect: connection refused");
    assert_eq!(
        url_error(&given, "/api"),
        Some(format!(
            "Get \"http://127.0.0.1:{port}/api?timeout=2s\": {refused}"
        ))
    );
    assert_eq!(
        url_error(&own, "/api"),
        Some(format!(
            "Get \"http://127.0.0.1:{port}/api?timeout=32s\": {refused}"
        ))
    );
    // The bound's mark changes nothing else of the words.
    assert_eq!(
        standard_message(&given),
        Some(format!(
            "The connection to the server 127.0.0.1:{port} was refused - did you specify the right host or port?"
        ))
    );
}

/// A server that accepts connections and then says nothing (a paused API server),
/// or stops in the middle of its answer's body: each request is cut by its client's
/// bound and worded from the bound the error carries.
#[tokio::test]
async fn a_request_cut_by_the_bound_is_worded_from_its_bound() {
    use std::time::Duration;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    // Every other connection gets the start of an answer whose body never comes.
    tokio::spawn(async move {
        let mut held = Vec::new();
        for n in 0.. {
            let Ok((mut conn, _)) = listener.accept().await else {
                return;
            };
            if n % 2 == 1 {
                let mut request = [0; 4096];
                let _ = conn.read(&mut request).await;
                let _ = conn
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"kind\"")
                    .await;
            }
            held.push(conn);
        }
    });
    let server = format!("http://127.0.0.1:{port}");
    let silent = get(&bounded_client(
        &server,
        (
            Duration::from_millis(300),
            crate::bound::REQUEST_TIMEOUT_FLAG,
        ),
    ))
    .await;
    let words = "Unable to connect to the server: no answer in time (each request is bounded by 300ms: --request-timeout, or 75s without it)";
    assert_eq!(standard_message(&silent).as_deref(), Some(words));
    assert_eq!(url_error(&silent, "/api").as_deref(), Some(words));
    assert_eq!(request_error(&silent), None);
    assert_eq!(
        error_chain(anyhow::Error::new(silent).context("listing pods").as_ref()),
        format!("listing pods: {words}")
    );
    let midway = get(&bounded_client(
        &server,
        (Duration::from_millis(400), "--timeout"),
    ))
    .await;
    // Cut in the body: the request itself had its answer (no `Requested` mark).
    assert_eq!(
        failure(&midway).map(|f| f.request),
        Some(None),
        "{midway:?}"
    );
    assert_eq!(
        standard_message(&midway).as_deref(),
        Some(
            "Unable to connect to the server: no answer in time (each request is bounded by 400ms: --timeout)"
        )
    );
}

#[test]
fn times_read_as_go_s_rfc3339() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(1_577_836_800), "2020-01-01T00:00:00Z");
    assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
}

/// Each cause is said once: kube's error words its cause, and the bound's mark is its
/// cause's text, so neither is repeated after it; the crate's own errors never expose
/// a cause they word (`crate::error`), so nothing is left to a text comparison.
#[test]
fn a_chain_says_each_cause_once() {
    let mut config = kube::Config::new("https://127.0.0.1:1".parse().expect("url"));
    let bound = crate::bound::bound_requests(&mut config, None, None);
    let io = std::io::Error::other("tls handshake eof");
    let err = kube::Error::Service(Box::new(Bounded::new(bound, io)));
    assert_eq!(error_chain(&err), "ServiceError: tls handshake eof");
    // A cause below one that does not word it is said after it.
    let err = anyhow::Error::new(std::io::Error::other("connection reset"))
        .context("reading the answer")
        .context("listing pods");
    assert_eq!(
        error_chain(err.as_ref()),
        "listing pods: reading the answer: connection reset"
    );
    // Transparent: the credentials' words once, with no cause behind them.
    let err = crate::error::Error::Credentials(crate::error::CredentialsError::new(
        "exit status 1".into(),
    ));
    assert_eq!(error_chain(&err), "getting credentials: exit status 1");
    assert!(std::error::Error::source(&err).is_none());
    // A cause worded into the message is not exposed as a source.
    let err = crate::error::Error::ReadFile {
        what: "certificate authority",
        path: "ca.crt".into(),
        error: std::io::Error::other("permission denied"),
    };
    assert_eq!(
        error_chain(&err),
        "unable to read certificate authority ca.crt: permission denied"
    );
}

/// A client for `server` (a URL whose host may not be ASCII, as `--server` takes it)
/// whose every request goes through the proxy on loopback `proxy` (a kubeconfig's
/// `proxy-url`), trusting `ca`.
fn client_via(server: &str, ca: Option<&str>, proxy: u16) -> kube::Client {
    crate::tls::install_crypto_provider();
    let url = crate::idn::ascii_url(server);
    let mut config = kube::Config::new(url.parse().expect("url"));
    config.root_cert = ca.map(|pem| {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        CertificateDer::pem_slice_iter(pem.as_bytes())
            .map(|c| c.expect("pem").to_vec())
            .collect()
    });
    config.proxy_url = Some(format!("http://127.0.0.1:{proxy}").parse().expect("proxy"));
    let (credentials, identity) =
        crate::credentials::Credentials::of(&config).expect("credentials");
    crate::client::builder(&config, credentials, identity)
        .expect("builder")
        .build()
}

/// An HTTP proxy on loopback: a CONNECT is tunnelled to `tunnel_to` (a port on
/// loopback) whatever host it names, so that a name no resolver knows reaches a server
/// here; any other request is answered `{}`. The head of each request it gets is
/// sent on the channel.
async fn proxy(tunnel_to: Option<u16>) -> (u16, tokio::sync::mpsc::UnboundedReceiver<String>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (heads, received) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let heads = heads.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if tcp.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let connect = head.starts_with("CONNECT ");
                let _ = heads.send(head);
                match tunnel_to.filter(|_| connect) {
                    Some(port) => {
                        let _ = tcp
                            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                            .await;
                        if let Ok(mut server) =
                            tokio::net::TcpStream::connect(("127.0.0.1", port)).await
                        {
                            let _ = tokio::io::copy_bidirectional(&mut tcp, &mut server).await;
                        }
                    }
                    None => {
                        let _ = tcp
                            .write_all(
                                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
                            )
                            .await;
                    }
                }
            });
        }
    });
    (port, received)
}

/// A host that is not ASCII is dialled in its IDNA form, as Go's transport does, and
/// named in Go's URL as written, percent-encoded (each as kubectl 1.37 printed it for
/// `--server=https://bücher-go.invalid:6443`).
#[tokio::test]
async fn a_host_that_is_not_ascii_is_looked_up_in_its_idna_form() {
    let server = crate::idn::ascii_url("https://bücher-go.invalid:6443").into_owned();
    let err = get(&client(&server, None, None)).await;
    let on = resolver().map(|r| format!(" on {r}")).unwrap_or_default();
    let text = format!("dial tcp: lookup xn--bcher-go-65a.invalid{on}: no such host");
    assert_eq!(
        url_error(&err, "/api"),
        Some(format!(
            "Get \"https://b%C3%BCcher-go.invalid:6443/api?timeout=32s\": {text}"
        ))
    );
    assert_eq!(
        request_error(&err),
        Some(format!(
            "Get \"https://b%C3%BCcher-go.invalid:6443/api\": {text}"
        ))
    );
    assert_eq!(
        standard_message(&err),
        Some(format!("Unable to connect to the server: {text}"))
    );
}

/// A host Go's IDNA conversion refuses (a leading `-`) is dialled as written, and the
/// resolver refuses it as no domain name: no server is asked, none is named.
#[tokio::test]
async fn a_host_the_conversion_refuses_is_no_domain_name() {
    let server = crate::idn::ascii_url("https://-bü-go.invalid").into_owned();
    let err = get(&client(&server, None, None)).await;
    let text = "dial tcp: lookup -bü-go.invalid: no such host";
    assert_eq!(
        url_error(&err, "/api"),
        Some(format!(
            "Get \"https://-b%C3%BC-go.invalid/api?timeout=32s\": {text}"
        ))
    );
    assert_eq!(
        standard_message(&err),
        Some(format!("Unable to connect to the server: {text}"))
    );
}

/// Go's `url.Error` hides a password of the URL (`stripPassword`).
#[tokio::test]
async fn a_password_in_the_url_is_not_named() {
    let port = closed_port();
    let err = get(&client(
        &format!("https://jane:secret@127.0.0.1:{port}"),
        None,
        None,
    ))
    .await;
    let text = format!("dial tcp 127.0.0.1:{port}: connect: connection refused");
    assert_eq!(
        url_error(&err, "/api"),
        Some(format!(
            "Get \"https://jane:***@127.0.0.1:{port}/api?timeout=32s\": {text}"
        ))
    );
    assert_eq!(
        request_error(&err),
        Some(format!(
            "Get \"https://jane:***@127.0.0.1:{port}/api\": {text}"
        ))
    );
}

/// The request to a host that is not ASCII names its IDNA form on the wire, as Go's
/// transport writes it (`cleanHost`): in the request line a proxy gets and in `Host`.
#[tokio::test]
async fn the_request_names_the_idna_host() {
    let (port, mut heads) = proxy(None).await;
    let client = client_via("http://bücher.test:6443", None, port);
    client
        .request_text(
            http::Request::get("/api")
                .body(Vec::new())
                .expect("request"),
        )
        .await
        .expect("the proxy answers");
    let head = heads.recv().await.expect("a request");
    assert!(
        head.starts_with("GET http://xn--bcher-kva.test:6443/api HTTP/1.1\r\n"),
        "{head}"
    );
    assert!(
        head.to_ascii_lowercase()
            .contains("\r\nhost: xn--bcher-kva.test:6443\r\n"),
        "{head}"
    );
}

/// Over TLS, the tunnel, the server name sent (SNI) and the name the certificate is
/// checked against are the IDNA form, as in Go (its `tls.Config.ServerName` is the
/// dialled host): a certificate for `xn--bcher-kva.test` is accepted, another names it.
#[tokio::test]
async fn tls_names_and_checks_the_idna_host() {
    let (sni, mut names) = tokio::sync::mpsc::unbounded_channel();
    let good = tls_server_telling(&["xn--bcher-kva.test"], false, Some(sni.clone()));
    let (port, mut heads) = proxy(Some(good.port)).await;
    let err = get(&client_via("https://bücher.test", Some(&good.ca), port)).await;
    assert_eq!(
        heads.recv().await.expect("a CONNECT").lines().next(),
        Some("CONNECT xn--bcher-kva.test:443 HTTP/1.1")
    );
    assert_eq!(names.recv().await.as_deref(), Some("xn--bcher-kva.test"));
    // The handshake passed: the server closed the connection after it, unanswered.
    let text = failure(&err).expect("failure").text;
    assert!(!text.contains("x509"), "{text}");

    let other = tls_server_telling(&["other.test"], false, Some(sni));
    let (port, _heads) = proxy(Some(other.port)).await;
    let err = get(&client_via("https://bücher.test", Some(&other.ca), port)).await;
    assert_eq!(names.recv().await.as_deref(), Some("xn--bcher-kva.test"));
    assert_eq!(
        failure(&err).expect("failure").text,
        "tls: failed to verify certificate: x509: certificate is valid for other.test, not xn--bcher-kva.test"
    );
}

/// A host with an empty label, which the TLS layer refuses as a server name before
/// anything is dialled: Go dials it, and its resolver refuses it as no domain name
/// (kubectl 1.37 with `--server=https://a..invalid` and `https://bücher..invalid`).
#[tokio::test]
async fn an_empty_label_is_refused_as_go_s_resolver_refuses_it() {
    for (server, host) in [
        ("https://a..invalid", "a..invalid"),
        (
            "https://bücher-label..invalid:6443",
            "xn--bcher-label-thb..invalid",
        ),
    ] {
        let err = get(&client(&crate::idn::ascii_url(server), None, None)).await;
        assert_eq!(
            standard_message(&err),
            Some(format!(
                "Unable to connect to the server: dial tcp: lookup {host}: no such host"
            )),
            "{server}"
        );
    }
}

/// A server URL with a password: kubectl names the host alone in its refusal, and
/// Go's `url.Error` masks the password; neither prints it.
#[tokio::test]
async fn a_refused_connection_never_names_the_url_s_password() {
    let port = closed_port();
    let err = get(&client(
        &format!("https://jane:secret@127.0.0.1:{port}"),
        None,
        None,
    ))
    .await;
    assert_eq!(
        standard_message(&err).as_deref(),
        Some(
            format!(
                "The connection to the server 127.0.0.1:{port} was refused - did you specify the right host or port?"
            )
            .as_str()
        )
    );
    let url = url_error(&err, "/api").expect("a url.Error");
    assert!(
        url.contains("jane:***@") && !url.contains("secret"),
        "{url}"
    );
}
