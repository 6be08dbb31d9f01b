//! The client stack against a TLS server on loopback: the server verified with the
//! kubeconfig's CA under `tls-server-name`, the client certificate presented, the
//! credentials and kube's extra headers on the request.

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use kube::config::AuthInfo;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::*;

const TOKEN: &str = "t0ken-marker";

const VERSION: &str = r#"{"major":"1","minor":"32","gitVersion":"v1.32.0","gitCommit":"x","gitTreeState":"clean","buildDate":"2025-01-01T00:00:00Z","goVersion":"go1.23","compiler":"gc","platform":"linux/amd64"}"#;

struct Pki {
    ca_der: Vec<u8>,
    client_cert: String,
    client_key: String,
    server: rustls::ServerConfig,
}

/// A CA, a server certificate for `kube.example` only (so the client must send that
/// name), and a client certificate the server requires and checks.
fn pki() -> Pki {
    crate::tls::install_crypto_provider();
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, &ca_key);
    let server_key = KeyPair::generate().unwrap();
    let server_cert = CertificateParams::new(vec!["kube.example".to_string()])
        .unwrap()
        .signed_by(&server_key, &issuer)
        .unwrap();
    let client_key = KeyPair::generate().unwrap();
    let client_cert = CertificateParams::new(vec!["client".to_string()])
        .unwrap()
        .signed_by(&client_key, &issuer)
        .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca_cert.der().clone()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder(Arc::new(roots))
        .build()
        .unwrap();
    let server = rustls::ServerConfig::builder()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![server_cert.der().clone()],
            rustls::pki_types::PrivatePkcs8KeyDer::from(server_key.serialize_der()).into(),
        )
        .unwrap();
    Pki {
        ca_der: ca_cert.der().to_vec(),
        client_cert: client_cert.pem(),
        client_key: client_key.serialize_pem(),
        server,
    }
}

/// Serves `/version` over TLS on loopback; the heads of the requests it read.
async fn serve(config: rustls::ServerConfig) -> (u16, Arc<Mutex<Vec<String>>>) {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let Ok(mut tls) = acceptor.accept(sock).await else {
                continue;
            };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && tls.read(&mut byte).await.unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&head).into_owned());
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{VERSION}",
                VERSION.len()
            );
            let _ = tls.write_all(answer.as_bytes()).await;
            let _ = tls.shutdown().await;
        }
    });
    (port, heads)
}

fn config(port: u16, pki: &Pki, auth: AuthInfo) -> kube::Config {
    let mut config = kube::Config::new(format!("https://127.0.0.1:{port}").parse().unwrap());
    config.root_cert = Some(vec![pki.ca_der.clone()]);
    config.tls_server_name = Some("kube.example".into());
    config.auth_info = auth;
    config
}

/// A user with the client certificate the server requires.
fn identified(pki: &Pki) -> AuthInfo {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    AuthInfo {
        client_certificate_data: Some(b64(&pki.client_cert)),
        client_key_data: Some(b64(&pki.client_key).into()),
        ..AuthInfo::default()
    }
}

fn client(config: &kube::Config) -> Result<kube::Client> {
    let (credentials, identity) = Credentials::of(config)?;
    Ok(builder(config, credentials, identity)?.build())
}

#[tokio::test]
async fn a_request_carries_the_identity_the_credentials_and_kube_s_headers() {
    let pki = pki();
    let (port, heads) = serve(pki.server.clone()).await;
    let auth = AuthInfo {
        token: Some(TOKEN.to_string().into()),
        impersonate: Some("alice".into()),
        ..identified(&pki)
    };
    let version = client(&config(port, &pki, auth))
        .unwrap()
        .apiserver_version()
        .await
        .expect("the server accepted the client certificate");
    assert_eq!(version.git_version, "v1.32.0");
    let heads = heads.lock().unwrap();
    let head = heads[0].to_ascii_lowercase();
    assert!(head.starts_with("get /version "), "{head}");
    assert!(
        head.contains(&format!(
            "authorization: bearer {}",
            TOKEN.to_ascii_lowercase()
        )),
        "{head}"
    );
    assert!(head.contains("impersonate-user: alice"), "{head}");
}

#[tokio::test]
async fn the_server_is_verified() {
    let pki = pki();
    let (port, _) = serve(pki.server.clone()).await;
    // Without the kubeconfig's CA the OS's roots are used, which do not know ours.
    let mut unknown_ca = config(port, &pki, AuthInfo::default());
    unknown_ca.root_cert = None;
    // The certificate names kube.example, not 127.0.0.1.
    let mut wrong_name = config(port, &pki, AuthInfo::default());
    wrong_name.tls_server_name = None;
    for config in [unknown_ca, wrong_name] {
        let err = client(&config)
            .unwrap()
            .apiserver_version()
            .await
            .unwrap_err();
        assert!(
            crate::go_net::error_chain(&err).contains("invalid peer certificate"),
            "{err}"
        );
    }
}

/// A proxy on loopback that sends every connection on to `target` once it has read
/// the client's request for it: an HTTP `CONNECT` (its head is recorded), or a SOCKS5
/// handshake without authentication.
async fn proxy(socks: bool, target: u16) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            if socks {
                // Greeting (version, methods), then the request for an IPv4 address.
                let mut greeting = [0u8; 2];
                client.read_exact(&mut greeting).await.unwrap();
                let mut methods = vec![0u8; usize::from(greeting[1])];
                client.read_exact(&mut methods).await.unwrap();
                client.write_all(&[5, 0]).await.unwrap();
                let mut request = [0u8; 4];
                client.read_exact(&mut request).await.unwrap();
                let mut address = vec![0u8; if request[3] == 1 { 6 } else { 0 }];
                client.read_exact(&mut address).await.unwrap();
                seen.lock()
                    .unwrap()
                    .push(format!("socks {request:?} {address:?}"));
                client
                    .write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0])
                    .await
                    .unwrap();
            } else {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && client.read(&mut byte).await.unwrap_or(0) == 1
                {
                    head.push(byte[0]);
                }
                seen.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&head).into_owned());
                client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await
                    .unwrap();
            }
            let mut server = tokio::net::TcpStream::connect(("127.0.0.1", target))
                .await
                .unwrap();
            tokio::spawn(async move {
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });
    (port, heads)
}

#[tokio::test]
async fn requests_go_through_the_kubeconfig_s_proxy() {
    let pki = pki();
    let (port, _) = serve(pki.server.clone()).await;
    let (http_proxy, connects) = proxy(false, port).await;
    let mut through_http = config(port, &pki, identified(&pki));
    through_http.proxy_url = Some(
        format!("http://user:pw@127.0.0.1:{http_proxy}")
            .parse()
            .unwrap(),
    );
    client(&through_http)
        .unwrap()
        .apiserver_version()
        .await
        .unwrap();
    let head = connects.lock().unwrap()[0].to_ascii_lowercase();
    assert!(
        head.starts_with(&format!("connect 127.0.0.1:{port} http/1.1\r\n")),
        "{head}"
    );
    // user:pw, the proxy's own credentials from its URL.
    assert!(
        head.contains("proxy-authorization: basic dxnlcjpwdw=="),
        "{head}"
    );

    let (socks_proxy, handshakes) = proxy(true, port).await;
    let mut through_socks = config(port, &pki, identified(&pki));
    through_socks.proxy_url = Some(format!("socks5://127.0.0.1:{socks_proxy}").parse().unwrap());
    client(&through_socks)
        .unwrap()
        .apiserver_version()
        .await
        .unwrap();
    let [hi, lo] = port.to_be_bytes();
    assert_eq!(
        handshakes.lock().unwrap()[0],
        format!("socks [5, 1, 0, 1] [127, 0, 0, 1, {hi}, {lo}]")
    );
}

#[test]
fn environment_proxies_never_take_loopback_traffic_as_in_go() {
    let matcher = || Matcher::builder().all("http://proxy.example:3128").build();
    let env = connect::Proxies::environment(matcher());
    let explicit = connect::Proxies::from(matcher());
    for direct in [
        "https://127.0.0.1:6443",
        "https://127.8.9.10:6443",
        "https://localhost:6443",
        "https://[::1]:6443",
    ] {
        let uri: http::Uri = direct.parse().unwrap();
        assert!(env.intercept(&uri).is_none(), "{direct}");
        // A kubeconfig's proxy-url takes every destination, as http.ProxyURL does.
        assert!(explicit.intercept(&uri).is_some(), "{direct}");
    }
    for proxied in [
        "https://kube.example:6443",
        "https://10.0.0.1",
        "https://localhost.example",
    ] {
        let uri: http::Uri = proxied.parse().unwrap();
        assert!(env.intercept(&uri).is_some(), "{proxied}");
    }
}

#[tokio::test]
async fn a_loopback_server_is_reached_directly_whatever_the_environment_says() {
    let pki = pki();
    let (port, _) = serve(pki.server.clone()).await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let proxies = connect::Proxies::environment(
        Matcher::builder()
            .all(format!("http://127.0.0.1:{closed}"))
            .build(),
    );
    let config = config(port, &pki, identified(&pki));
    let (credentials, identity) = Credentials::of(&config).unwrap();
    builder_with(&config, credentials, identity, proxies)
        .unwrap()
        .build()
        .apiserver_version()
        .await
        .expect("not sent to the closed proxy");
}

#[test]
fn unusable_settings_are_refused_before_any_request() {
    let pki = pki();
    let mut socks4 = config(1, &pki, AuthInfo::default());
    socks4.proxy_url = Some("socks4://127.0.0.1:1080".parse().unwrap());
    assert_eq!(
        client(&socks4).err().unwrap().to_string(),
        "unsupported proxy URL socks4://127.0.0.1:1080/: only http, https and socks5 proxies are"
    );
    let bad_base64 = config(
        1,
        &pki,
        AuthInfo {
            client_certificate_data: Some("%%%".into()),
            client_key_data: Some("aw==".to_string().into()),
            ..AuthInfo::default()
        },
    );
    assert_eq!(
        client(&bad_base64).err().unwrap().to_string(),
        "illegal base64 data at input byte 0"
    );
}

/// What a [`serve_http`] server saw: the connections it accepted, and each request's
/// protocol version, path and `Upgrade` header.
#[derive(Default)]
struct Seen {
    connections: std::sync::atomic::AtomicUsize,
    requests: Mutex<Vec<(http::Version, String, bool)>>,
}

/// A real HTTP server over TLS on loopback (hyper's, HTTP/2 or HTTP/1.1 as the TLS
/// handshake's ALPN decides) whose ALPN offers `alpn`; answers every request with
/// `/version`'s body after `delay`.
async fn serve_http(
    config: rustls::ServerConfig,
    alpn: &[&[u8]],
    delay: std::time::Duration,
) -> (u16, Arc<Seen>) {
    serve_answers(config, alpn, delay, false).await
}

/// [`serve_http`]'s server, whose answers stop after their headers when `stall` (a
/// server paused, SIGSTOP, between an answer's HEADERS and DATA frames).
async fn serve_answers(
    mut config: rustls::ServerConfig,
    alpn: &[&[u8]],
    delay: std::time::Duration,
    stall: bool,
) -> (u16, Arc<Seen>) {
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Seen::default());
    let shared = seen.clone();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            shared
                .connections
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let acceptor = acceptor.clone();
            let seen = shared.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(sock).await else {
                    return;
                };
                let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
                let service = hyper::service::service_fn(move |request: http::Request<_>| {
                    let seen = seen.clone();
                    async move {
                        seen.requests.lock().unwrap().push((
                            request.version(),
                            request.uri().path().to_string(),
                            request.headers().contains_key(http::header::UPGRADE),
                        ));
                        tokio::time::sleep(delay).await;
                        use http_body_util::BodyExt as _;
                        let body = if stall {
                            http_body_util::StreamBody::new(futures::stream::pending::<
                                Result<hyper::body::Frame<bytes::Bytes>, std::convert::Infallible>,
                            >())
                            .boxed()
                        } else {
                            http_body_util::Full::new(bytes::Bytes::from(VERSION)).boxed()
                        };
                        Ok::<_, std::convert::Infallible>(http::Response::new(body))
                    }
                });
                let io = hyper_util::rt::TokioIo::new(tls);
                let _ = if h2 {
                    hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(io, service)
                        .await
                } else {
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await
                };
            });
        }
    });
    (port, seen)
}

/// `n` `GET /version` at once.
async fn concurrently(client: &kube::Client, n: usize) {
    let all = (0..n).map(|_| client.apiserver_version());
    for answer in futures::future::join_all(all).await {
        assert_eq!(answer.expect("answered").git_version, "v1.32.0");
    }
}

#[tokio::test]
async fn concurrent_requests_share_one_http2_connection() {
    let pki = pki();
    let (port, seen) = serve_http(
        pki.server.clone(),
        &[b"h2", b"http/1.1"],
        std::time::Duration::from_millis(50),
    )
    .await;
    let client = client(&config(port, &pki, identified(&pki))).unwrap();
    // Sent together before any connection exists, and again once it does.
    concurrently(&client, 16).await;
    concurrently(&client, 16).await;
    assert_eq!(
        seen.connections.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
    let requests = seen.requests.lock().unwrap();
    assert_eq!(requests.len(), 32);
    assert!(
        requests.iter().all(|(v, _, _)| *v == http::Version::HTTP_2),
        "{requests:?}"
    );
}

#[tokio::test]
async fn a_server_without_http2_is_spoken_to_in_http1() {
    let pki = pki();
    let (port, seen) = serve_http(
        pki.server.clone(),
        &[b"http/1.1"],
        std::time::Duration::from_millis(50),
    )
    .await;
    let client = client(&config(port, &pki, identified(&pki))).unwrap();
    concurrently(&client, 4).await;
    let requests = seen.requests.lock().unwrap();
    assert_eq!(requests.len(), 4);
    assert!(
        requests
            .iter()
            .all(|(v, _, _)| *v == http::Version::HTTP_11),
        "{requests:?}"
    );
    // HTTP/1.1 is one request at a time per connection: the ones sent together after
    // the first answer each had their own.
    assert!(seen.connections.load(std::sync::atomic::Ordering::SeqCst) >= 2);
}

#[tokio::test]
async fn an_upgrade_goes_on_its_own_http1_connection() {
    let pki = pki();
    let (port, seen) = serve_http(
        pki.server.clone(),
        &[b"h2", b"http/1.1"],
        std::time::Duration::ZERO,
    )
    .await;
    let client = client(&config(port, &pki, identified(&pki))).unwrap();
    concurrently(&client, 2).await;
    // What kube's attach and exec send (the server answers 200 instead of 101 here:
    // the protocol the request went out on is what is checked).
    let upgrade = http::Request::get("/api/v1/namespaces/ns/pods/p/attach")
        .header(http::header::CONNECTION, "Upgrade")
        .header(http::header::UPGRADE, "websocket")
        .header(http::header::SEC_WEBSOCKET_VERSION, "13")
        .header(http::header::SEC_WEBSOCKET_KEY, "dGhlIHNhbXBsZSBub25jZQ==")
        .body(kube::client::Body::empty())
        .unwrap();
    let response = client.send(upgrade).await.expect("answered");
    assert_eq!(response.version(), http::Version::HTTP_11);
    concurrently(&client, 2).await;
    let requests = seen.requests.lock().unwrap();
    let versions: Vec<_> = requests
        .iter()
        .map(|(v, p, u)| (*v, p.as_str(), *u))
        .collect();
    assert_eq!(
        versions,
        [
            (http::Version::HTTP_2, "/version", false),
            (http::Version::HTTP_2, "/version", false),
            (
                http::Version::HTTP_11,
                "/api/v1/namespaces/ns/pods/p/attach",
                true
            ),
            (http::Version::HTTP_2, "/version", false),
            (http::Version::HTTP_2, "/version", false),
        ]
    );
    assert_eq!(
        seen.connections.load(std::sync::atomic::Ordering::SeqCst),
        2
    );
}

/// Over HTTP/2 an answer cut by the read timeout after its headers fails as a stream
/// whose connection timed out (an `h2::Error` holding the `io::Error`, with no
/// `source()`): still the bound's words, as over HTTP/1.1 (`go_net`'s tests), not
/// "error reading a body from connection: timed out". Seen when the e2e tests paused
/// the API server between an answer's HEADERS and DATA frames.
#[tokio::test]
async fn an_http2_answer_cut_after_its_headers_is_worded_from_the_bound() {
    let pki = pki();
    let (port, seen) = serve_answers(
        pki.server.clone(),
        &[b"h2"],
        std::time::Duration::ZERO,
        true,
    )
    .await;
    let (client, bound) = bounded(
        config(port, &pki, identified(&pki)),
        (
            std::time::Duration::from_secs(1),
            crate::bound::REQUEST_TIMEOUT_FLAG,
        ),
    );
    let err = client
        .apiserver_version()
        .await
        .expect_err("the body never comes");
    assert_eq!(
        seen.requests.lock().unwrap().first().map(|r| r.0),
        Some(http::Version::HTTP_2)
    );
    assert_eq!(
        crate::bound::no_answer(&err),
        Some(bound.no_answer()),
        "{err:?}"
    );
}

/// What a hand-written HTTP/2 server does on its first connection ([`serve_frames`]);
/// later connections answer every request.
#[derive(Clone, Copy)]
enum FirstConnection {
    /// Answers the first request; once `more` further requests have arrived, sends
    /// GOAWAY(NO_ERROR) with `last` as the last-stream-id, answers the streams below
    /// `last` (not `last` itself, which then fails with the connection: it may have
    /// been processed), and closes the connection.
    GoAway { more: usize, last: u32 },
    /// Resets the `nth` request (1-based) with REFUSED_STREAM and answers the rest.
    Refuse { nth: usize },
    /// Dies when the `nth` request arrived, as a killed server does: the connection
    /// closed without TLS's close_notify, no answer.
    Die { nth: usize },
}

/// The streams each connection of [`serve_frames`] received, by connection.
type Received = Arc<Mutex<Vec<Vec<u32>>>>;

/// An HTTP/2 server over TLS on loopback whose frames are written by hand, because
/// no server library lets a test choose a GOAWAY's last-stream-id below streams it
/// received, or refuse one stream: the faults Go's transport recovers from.
async fn serve_frames(mut config: rustls::ServerConfig, first: FirstConnection) -> (u16, Received) {
    config.alpn_protocols = vec![b"h2".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let received: Received = Arc::default();
    let all = received.clone();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let Ok(tls) = acceptor.accept(sock).await else {
                continue;
            };
            let index = {
                let mut all = all.lock().unwrap();
                all.push(Vec::new());
                all.len() - 1
            };
            let plan = (index == 0).then_some(first);
            tokio::spawn(frames(tls, plan, all.clone(), index));
        }
    });
    (port, received)
}

const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const GOAWAY: u8 = 0x7;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const ACK: u8 = 0x1;

async fn frame<W: tokio::io::AsyncWrite + Unpin>(
    w: &mut W,
    kind: u8,
    flags: u8,
    stream: u32,
    payload: &[u8],
) {
    let len = u32::try_from(payload.len()).unwrap().to_be_bytes();
    let mut head = vec![len[1], len[2], len[3], kind, flags];
    head.extend(stream.to_be_bytes());
    let _ = w.write_all(&head).await;
    let _ = w.write_all(payload).await;
    let _ = w.flush().await;
}

/// `200` (HPACK's static index 8) and `/version`'s body.
async fn answer<W: tokio::io::AsyncWrite + Unpin>(w: &mut W, stream: u32) {
    frame(w, HEADERS, END_HEADERS, stream, &[0x88]).await;
    frame(w, DATA, END_STREAM, stream, VERSION.as_bytes()).await;
}

/// One connection of [`serve_frames`]: the client's preface and frames read, the
/// complete requests (their streams) answered by `plan`.
async fn frames<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    mut io: S,
    plan: Option<FirstConnection>,
    received: Received,
    index: usize,
) {
    let mut preface = [0u8; 24];
    if io.read_exact(&mut preface).await.is_err() {
        return;
    }
    frame(&mut io, SETTINGS, 0, 0, &[]).await;
    let mut held = Vec::new();
    let mut count = 0;
    loop {
        let mut head = [0u8; 9];
        if io.read_exact(&mut head).await.is_err() {
            return;
        }
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let (kind, flags) = (head[3], head[4]);
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut payload = vec![0u8; len];
        if io.read_exact(&mut payload).await.is_err() {
            return;
        }
        if kind == SETTINGS && flags & ACK == 0 {
            frame(&mut io, SETTINGS, ACK, 0, &[]).await;
        }
        let complete = matches!(kind, HEADERS | DATA) && flags & END_STREAM != 0;
        if !complete {
            continue;
        }
        received.lock().unwrap()[index].push(stream);
        count += 1;
        match plan {
            Some(FirstConnection::Die { nth }) if count == nth => return,
            Some(FirstConnection::Refuse { nth }) if count == nth => {
                frame(&mut io, RST_STREAM, 0, stream, &7u32.to_be_bytes()).await;
            }
            Some(FirstConnection::GoAway { more, last }) if count > 1 => {
                held.push(stream);
                if held.len() == more {
                    let mut payload = last.to_be_bytes().to_vec();
                    payload.extend(0u32.to_be_bytes());
                    frame(&mut io, GOAWAY, 0, 0, &payload).await;
                    for &s in held.iter().filter(|&&s| s < last) {
                        answer(&mut io, s).await;
                    }
                    let _ = io.shutdown().await;
                    return;
                }
            }
            _ => answer(&mut io, stream).await,
        }
    }
}

/// A POST of `/api/v1/namespaces/ns/configmaps` (a create: a write, which nothing
/// may send twice unless the server provably did not process it).
async fn create(client: &kube::Client) -> std::result::Result<String, kube::Error> {
    let request = http::Request::post("/api/v1/namespaces/ns/configmaps")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(br#"{"kind":"ConfigMap"}"#.to_vec())
        .unwrap();
    client.request_text(request).await
}

/// Go's transport: the creates above a GOAWAY's last-stream-id were never processed
/// and are sent again, on a new connection; the one at the last-stream-id may have
/// been (its connection closed before its answer) and fails, never sent again.
#[tokio::test]
async fn creates_above_a_goaway_s_last_stream_go_again_on_a_new_connection() {
    let pki = pki();
    // Stream 1 alone (the first answer's gate), then 3…17; GOAWAY(last=7): 3 and 5
    // answered, 7 cut with the connection, 9…17 never processed.
    let (port, received) = serve_frames(
        pki.server.clone(),
        FirstConnection::GoAway { more: 8, last: 7 },
    )
    .await;
    let client = client(&config(port, &pki, identified(&pki))).unwrap();
    create(&client).await.expect("the first create");
    let answers = futures::future::join_all((0..8).map(|_| create(&client))).await;
    let failed: Vec<_> = answers.iter().filter_map(|a| a.as_ref().err()).collect();
    assert_eq!(failed.len(), 1, "{answers:?}");
    assert!(!resend::unprocessed(failed[0]), "{:?}", failed[0]);
    let mut received = received.lock().unwrap().clone();
    assert_eq!(received.len(), 2, "one new connection: {received:?}");
    received[0].sort_unstable();
    assert_eq!(received[0], [1, 3, 5, 7, 9, 11, 13, 15, 17]);
    // The five never processed, each once, on the new connection.
    assert_eq!(received[1].len(), 5, "{received:?}");
}

/// A stream the server refused (REFUSED_STREAM) was not processed: sent again, once.
#[tokio::test]
async fn a_refused_stream_goes_again() {
    let pki = pki();
    let (port, received) =
        serve_frames(pki.server.clone(), FirstConnection::Refuse { nth: 3 }).await;
    let client = client(&config(port, &pki, identified(&pki))).unwrap();
    create(&client).await.expect("the first create");
    for answer in futures::future::join_all((0..4).map(|_| create(&client))).await {
        answer.expect("every create answered");
    }
    let requests: usize = received.lock().unwrap().iter().map(Vec::len).sum();
    assert_eq!(requests, 6, "five creates, one of them twice");
}

/// One stream the server holds is cut at the bound, in the bound's words, while the
/// others on the same connection are answered.
#[tokio::test]
async fn a_held_stream_is_cut_at_its_bound_and_the_others_go_on() {
    let pki = pki();
    let mut server = pki.server.clone();
    server.alpn_protocols = vec![b"h2".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = connections.clone();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let Ok(tls) = acceptor.accept(sock).await else {
                continue;
            };
            let service = hyper::service::service_fn(|request: http::Request<_>| async move {
                if request.uri().path() == "/held" {
                    futures::future::pending::<()>().await;
                }
                // Slower than the bound in all, each within it.
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                Ok::<_, std::convert::Infallible>(http::Response::new(http_body_util::Full::new(
                    bytes::Bytes::from(VERSION),
                )))
            });
            tokio::spawn(
                hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), service),
            );
        }
    });
    let (client, bound) = bounded(
        config(port, &pki, identified(&pki)),
        (
            std::time::Duration::from_secs(1),
            crate::bound::REQUEST_TIMEOUT_FLAG,
        ),
    );
    client.apiserver_version().await.expect("the first answer");
    let held = async {
        let request = http::Request::get("/held").body(Vec::new()).unwrap();
        client.request_text(request).await
    };
    let others = async {
        for _ in 0..6 {
            concurrently(&client, 4).await;
        }
    };
    let (held, ()) = tokio::join!(held, others);
    let err = held.expect_err("the held stream is cut");
    assert_eq!(
        crate::bound::no_answer(&err),
        Some(bound.no_answer()),
        "{err:?}"
    );
    assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// kube-apiserver's answer once its in-flight wait group is closed (SIGTERM, default
/// flags): `503`, `Retry-After: 1`, this `Status`.
const SHUTTING_DOWN: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"apiserver is shutting down","reason":"ServiceUnavailable","code":503}"#;

/// A server whose first connection answers every request as a server shutting down
/// does (`message`, with `Retry-After: 1`) and stays open, as a draining server's
/// does; later connections answer `201`. Counts the requests per connection.
async fn serve_shutting_down(
    mut config: rustls::ServerConfig,
    message: &'static str,
) -> (u16, Arc<Mutex<Vec<usize>>>) {
    config.alpn_protocols = vec![b"h2".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let counts = Arc::new(Mutex::new(Vec::new()));
    let shared = counts.clone();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let connection = {
                let mut counts = shared.lock().unwrap();
                counts.push(0);
                counts.len() - 1
            };
            let acceptor = acceptor.clone();
            let counts = shared.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(sock).await else {
                    return;
                };
                let service = hyper::service::service_fn(move |_: http::Request<_>| {
                    counts.lock().unwrap()[connection] += 1;
                    let answer = if connection == 0 {
                        http::Response::builder()
                            .status(503)
                            .header(http::header::RETRY_AFTER, "1")
                            .header(http::header::CONTENT_TYPE, "application/json")
                            .body(http_body_util::Full::new(bytes::Bytes::from(message)))
                    } else {
                        http::Response::builder()
                            .status(201)
                            .body(http_body_util::Full::new(bytes::Bytes::from("{}")))
                    };
                    async move { Ok::<_, std::convert::Infallible>(answer.unwrap()) }
                });
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (port, counts)
}

/// A server that says it is shutting down refused the requests unprocessed, and
/// keeps its connection open while it drains: each goes again at once, on one new
/// connection, never again to the dying one and without waiting its `Retry-After`.
#[tokio::test]
async fn requests_a_shutting_down_server_refused_go_again_at_once_on_a_new_connection() {
    let pki = pki();
    let (port, counts) = serve_shutting_down(pki.server.clone(), SHUTTING_DOWN).await;
    let client = client(&config(port, &pki, identified(&pki))).unwrap();
    let started = std::time::Instant::now();
    for answer in futures::future::join_all((0..8).map(|_| create(&client))).await {
        assert_eq!(answer.expect("created on the new connection"), "{}");
    }
    assert!(
        started.elapsed() < std::time::Duration::from_millis(900),
        "the Retry-After of a dying server is not waited: {:?}",
        started.elapsed()
    );
    let counts = counts.lock().unwrap().clone();
    // The first create alone on the first connection (the first answer's gate), then
    // the others: those answered there before the pool was retired, and every one
    // once more on the second connection.
    assert_eq!(counts.len(), 2, "one new connection: {counts:?}");
    assert_eq!(counts[1], 8, "{counts:?}");
}

/// Another `503` with `Retry-After` is the server's answer, handed on whole.
#[tokio::test]
async fn another_refusal_is_handed_on() {
    let pki = pki();
    let other = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server is currently unable to handle the request","reason":"ServiceUnavailable","code":503}"#;
    let (port, counts) = serve_shutting_down(pki.server.clone(), other).await;
    let client = client(&config(port, &pki, identified(&pki))).unwrap();
    match create(&client).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 503);
            assert_eq!(
                status.message,
                "the server is currently unable to handle the request"
            );
        }
        other => panic!("the server's 503: {other:?}"),
    }
    assert_eq!(counts.lock().unwrap().clone(), [1]);
}

/// A create whose server died under it failed with its answer lost (the caller may
/// resend it: create-file does, by name), in Go's words over HTTP/2 (`unexpected
/// EOF`); the next request goes on a new connection.
#[tokio::test]
async fn a_create_whose_server_died_lost_its_answer_in_go_s_words() {
    let pki = pki();
    let (port, received) = serve_frames(pki.server.clone(), FirstConnection::Die { nth: 2 }).await;
    let client = client(&config(port, &pki, identified(&pki))).unwrap();
    create(&client).await.expect("the first create");
    let err = create(&client).await.expect_err("the server died");
    assert!(resend::connection_lost(&err), "{err:?}");
    assert!(!resend::unprocessed(&err), "{err:?}");
    assert_eq!(
        crate::go_net::request_error(&err).as_deref(),
        Some(
            format!(
                "Post \"https://127.0.0.1:{port}/api/v1/namespaces/ns/configmaps\": unexpected EOF"
            )
            .as_str()
        )
    );
    create(&client).await.expect("on a new connection");
    assert_eq!(received.lock().unwrap().len(), 2);
}

/// A server that resets every connection after its first bytes (SO_LINGER 0), as a
/// dropped connection looks.
async fn serve_resets() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = [0u8; 16];
            let _ = stream.read(&mut buf).await;
            let _ = stream.set_zero_linger();
        }
    });
    port
}

#[tokio::test]
async fn requests_sent_together_to_a_resetting_server_each_meet_the_reset() {
    let pki = pki();
    let port = serve_resets().await;
    let client = client(&config(port, &pki, identified(&pki))).unwrap();
    // The first fails and opens the gate, then shuts it again (a lost connection):
    // the ones that waited for it must take the lead in turn, never wait for an
    // answer nobody is asking for. Three rounds, as the retries of a command do.
    let rounds = async {
        for _ in 0..3 {
            let all = (0..8).map(|_| client.apiserver_version());
            for answer in futures::future::join_all(all).await {
                let err = answer.expect_err("the server resets every connection");
                assert!(
                    crate::retry::is_probable_eof(&err),
                    "a reset, not another failure: {err:?}"
                );
            }
        }
    };
    // Each request fails within milliseconds; the bound only turns a hang into a
    // failure that names it.
    tokio::time::timeout(std::time::Duration::from_secs(60), rounds)
        .await
        .expect("a request waited on the first-answer gate with nobody leading");
}

#[tokio::test]
async fn the_first_answer_gate_is_led_again_after_it_shut() {
    let gate = Arc::new(FirstAnswer::default());
    assert!(matches!(gate.turn().await, Turn::Lead));
    let waiter = tokio::spawn({
        let gate = gate.clone();
        async move { matches!(gate.turn().await, Turn::Lead) }
    });
    // The waiter is waiting (current-thread runtime: it ran up to its wait).
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished());
    // The leader's answer opens the gate, its lost connection shuts it at once.
    gate.open();
    gate.close();
    let waited = tokio::time::timeout(std::time::Duration::from_secs(60), waiter)
        .await
        .expect("the waiter waits on a shut gate with nobody leading");
    assert!(waited.unwrap(), "the waiter leads the shut gate");
    // Led now: the next request waits for that answer.
    let next = tokio::spawn({
        let gate = gate.clone();
        async move { matches!(gate.turn().await, Turn::Go) }
    });
    tokio::task::yield_now().await;
    assert!(!next.is_finished());
    gate.open();
    assert!(next.await.unwrap());
}

#[test]
fn a_key_without_a_certificate_is_not_read() {
    // client-go takes the key only along with a certificate: a key file that cannot
    // be read (here a directory) is then no error, and there is no identity.
    let dir = tempfile::tempdir().expect("tempdir");
    let auth = AuthInfo {
        client_key: Some(dir.path().display().to_string()),
        ..Default::default()
    };
    assert!(kubeconfig_identity(&auth).expect("not read").is_none());
}
