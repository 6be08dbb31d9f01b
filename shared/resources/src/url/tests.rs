//! Tests against a scripted HTTP server on loopback: one canned answer per connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use hyper_util::client::proxy::matcher::Matcher;

use super::*;

/// Serves `answers` in turn (the last one repeats) and counts the requests.
async fn serve(answers: Vec<&'static str>) -> (http::Uri, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let answer = answers[n.min(answers.len() - 1)];
            let mut buf = [0u8; 4096];
            let _ = sock.read(&mut buf).await;
            let _ = sock.write_all(answer.as_bytes()).await;
            let _ = sock.shutdown().await;
        }
    });
    (format!("http://{addr}/m.yaml").parse().expect("url"), count)
}

fn fast() -> UrlOptions {
    UrlOptions {
        retry_delay: Duration::from_millis(10),
        timeout: Duration::from_secs(5),
        ..UrlOptions::default()
    }
}

const OK: &str = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nkind: X\n";
const UNAVAILABLE: &str =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const NOT_FOUND: &str = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

#[tokio::test]
async fn fetches_the_body() {
    let (url, count) = serve(vec![OK]).await;
    assert_eq!(fetch(&url, &fast()).await.expect("fetched"), b"kind: X\n");
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn retries_server_errors_then_succeeds() {
    let (url, count) = serve(vec![UNAVAILABLE, UNAVAILABLE, OK]).await;
    assert_eq!(
        fetch(&url, &fast()).await.expect("third attempt"),
        b"kind: X\n"
    );
    assert_eq!(count.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn gives_up_after_the_attempt_count() {
    let (url, count) = serve(vec![UNAVAILABLE]).await;
    let err = fetch(&url, &fast()).await.expect_err("always 503");
    assert_eq!(
        err.to_string(),
        format!(
            "unable to read URL \"{url}\", server reported 503 Service Unavailable, status code=503 (after 3 attempts)"
        )
    );
    assert_eq!(count.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn not_found_is_not_retried() {
    let (url, count) = serve(vec![NOT_FOUND]).await;
    let err = fetch(&url, &fast()).await.expect_err("404");
    assert_eq!(
        err.to_string(),
        format!("unable to read URL \"{url}\", server reported 404 Not Found, status code=404")
    );
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused() {
    let (url, _) = serve(vec![OK]).await;
    let opts = UrlOptions {
        max_bytes: 4,
        ..fast()
    };
    let err = fetch(&url, &opts).await.expect_err("too big");
    assert!(
        err.to_string().contains("larger than the limit of 4 bytes"),
        "{err}"
    );
}

#[tokio::test]
async fn connection_refused_is_retried_and_reported() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url: http::Uri = format!("http://{}/x", listener.local_addr().expect("addr"))
        .parse()
        .expect("url");
    drop(listener);
    let err = fetch(
        &url,
        &UrlOptions {
            attempts: 2,
            ..fast()
        },
    )
    .await
    .expect_err("refused");
    // Go's url.Error as kubectl's CheckErr words it, bare even alone.
    assert_eq!(
        err.to_string(),
        format!(
            "The connection to the server {} was refused - did you specify the right host or port?",
            url.authority().expect("authority")
        )
    );
    assert!(err.bare_when_alone());
}

/// A host that does not resolve: Go's words in `StandardErrorMessage`'s frame, bare,
/// as kubectl prints the `url.Error` of its `http.Get` (not a name Go would look up, so
/// no resolver is named).
#[tokio::test]
async fn a_host_that_does_not_resolve_is_said_in_go_s_words() {
    let url: http::Uri = "http://-x/y.yaml".parse().expect("url");
    let err = fetch(
        &url,
        &UrlOptions {
            attempts: 2,
            ..fast()
        },
    )
    .await
    .expect_err("no such host");
    assert_eq!(
        err.to_string(),
        "Unable to connect to the server: dial tcp: lookup -x: no such host"
    );
    assert!(err.bare_when_alone());
}

/// A host whose IDNA conversion Go refuses is looked up as written, which Go's
/// resolver refuses without asking a server.
#[tokio::test]
async fn a_host_idna_refuses_is_no_such_host_as_written() {
    let url = parse("http://-bü.example/y.yaml").expect("url");
    let err = fetch(&url, &fast()).await.expect_err("no such host");
    assert_eq!(
        err.to_string(),
        "Unable to connect to the server: dial tcp: lookup -bü.example: no such host"
    );
}

/// Serves one answer per connection from `answer(request head)` and records every
/// request head, for the tests that look at what was sent.
async fn serve_with(
    answer: impl Fn(&str) -> String + Send + Sync + 'static,
) -> (std::net::SocketAddr, Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let n = sock.read(&mut buf).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).into_owned();
            let reply = answer(&head);
            record.lock().expect("lock").push(head);
            let _ = sock.write_all(reply.as_bytes()).await;
            let _ = sock.shutdown().await;
        }
    });
    (addr, seen)
}

/// The request lines seen, in order.
fn request_lines(seen: &std::sync::Mutex<Vec<String>>) -> Vec<String> {
    seen.lock()
        .expect("lock")
        .iter()
        .map(|head| head.lines().next().unwrap_or_default().to_string())
        .collect()
}

/// A header of the first request seen, by its lower-case name.
fn header_of(seen: &std::sync::Mutex<Vec<String>>, index: usize, name: &str) -> Option<String> {
    let heads = seen.lock().expect("lock");
    heads[index].lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
    })
}

fn redirect(status: &str, location: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
}

fn no_proxy() -> Matcher {
    Matcher::builder().build()
}

fn url_of(addr: std::net::SocketAddr, path: &str) -> Uri {
    parse(&format!("http://{addr}{path}")).expect("url")
}

#[tokio::test]
async fn relative_redirects_are_resolved_against_the_current_url() {
    let (addr, seen) = serve_with(|head| {
        if head.starts_with("GET /a/b/m.yaml ") {
            redirect("302 Found", "../c/n.yaml")
        } else if head.starts_with("GET /a/c/n.yaml ") {
            redirect("301 Moved Permanently", "/final?x=1")
        } else if head.starts_with("GET /final?x=1 ") {
            OK.to_string()
        } else {
            NOT_FOUND.to_string()
        }
    })
    .await;
    let url = url_of(addr, "/a/b/m.yaml");
    let body = fetch_with(&url, &fast(), no_proxy())
        .await
        .expect("fetched");
    assert_eq!(body, b"kind: X\n");
    assert_eq!(
        request_lines(&seen),
        [
            "GET /a/b/m.yaml HTTP/1.1",
            "GET /a/c/n.yaml HTTP/1.1",
            "GET /final?x=1 HTTP/1.1"
        ]
    );
    // Go and reqwest send the page that redirected as Referer.
    assert_eq!(
        header_of(&seen, 1, "referer").as_deref(),
        Some(format!("http://{addr}/a/b/m.yaml").as_str())
    );
    assert_eq!(
        header_of(&seen, 0, "user-agent").as_deref(),
        Some(concat!("kubeplug/", env!("CARGO_PKG_VERSION")))
    );
}

#[tokio::test]
async fn nine_redirects_are_followed_and_the_tenth_is_an_error() {
    // /r0 → /r1 → … ; /rN answers 200 for N == `ok_at`.
    async fn chain(ok_at: usize) -> (Result<Vec<u8>, ResourceError>, usize, Uri) {
        let (addr, seen) = serve_with(move |head| {
            let n: usize = head
                .strip_prefix("GET /r")
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(usize::MAX);
            if n == ok_at {
                OK.to_string()
            } else {
                redirect("307 Temporary Redirect", &format!("/r{}", n + 1))
            }
        })
        .await;
        let url = url_of(addr, "/r0");
        let opts = UrlOptions {
            attempts: 1,
            ..fast()
        };
        let result = fetch_with(&url, &opts, no_proxy()).await;
        let sent = seen.lock().expect("lock").len();
        (result, sent, url)
    }
    let (result, sent, _) = chain(9).await;
    assert_eq!(result.expect("nine redirects"), b"kind: X\n");
    assert_eq!(sent, 10);
    let (result, sent, url) = chain(usize::MAX).await;
    assert_eq!(
        result.expect_err("endless redirects").to_string(),
        format!("unable to read URL \"{url}\", stopped after 10 redirects (after 1 attempts)")
    );
    // As Go's client: ten requests, each answered with a redirect.
    assert_eq!(sent, 10);
}

/// Including from https to http, which Go allows.
#[test]
fn locations_are_resolved_as_go_resolves_them() {
    let base: Uri = "https://example.com/dir/m.yaml".parse().expect("uri");
    for (location, expected) in [
        ("http://other.example/x", "http://other.example/x"),
        ("//cdn.example/y", "https://cdn.example/y"),
        ("z.yaml?v=2#frag", "https://example.com/dir/z.yaml?v=2"),
        ("./a/../b/./c", "https://example.com/dir/b/c"),
        ("..", "https://example.com/"),
        ("?q", "https://example.com/dir/m.yaml?q"),
        ("HTTP://Upper.example/", "http://Upper.example/"),
    ] {
        assert_eq!(
            resolve(&base, location).expect(location).to_string(),
            expected,
            "{location}"
        );
    }
    assert_eq!(
        resolve(&base, "ftp://x/y").expect_err("ftp"),
        "unsupported protocol scheme \"ftp\""
    );
}

#[tokio::test]
async fn internal_server_errors_are_retried_then_reported() {
    let (url, count) = serve(vec![
        "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    ])
    .await;
    let opts = UrlOptions {
        attempts: 2,
        ..fast()
    };
    let err = fetch(&url, &opts).await.expect_err("always 500");
    assert_eq!(
        err.to_string(),
        format!(
            "unable to read URL \"{url}\", server reported 500 Internal Server Error, status code=500 (after 2 attempts)"
        )
    );
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn the_server_reason_phrase_is_reported_as_go_does() {
    let (url, _) = serve(vec![
        "HTTP/1.1 418 Short And Stout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    ])
    .await;
    let err = fetch(&url, &fast()).await.expect_err("418");
    assert_eq!(
        err.to_string(),
        format!(
            "unable to read URL \"{url}\", server reported 418 Short And Stout, status code=418"
        )
    );
}

#[tokio::test]
async fn a_streamed_body_over_the_limit_is_refused() {
    // Chunked, no Content-Length: the bound is checked while reading.
    let (url, _) = serve(vec![
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n4\r\nkind\r\n4\r\n: X\n\r\n0\r\n\r\n",
    ])
    .await;
    let opts = UrlOptions {
        max_bytes: 6,
        ..fast()
    };
    let err = fetch(&url, &opts).await.expect_err("too big");
    assert!(
        err.to_string()
            .ends_with("the document is larger than the limit of 6 bytes"),
        "{err}"
    );
    let opts = UrlOptions {
        max_bytes: 8,
        ..fast()
    };
    assert_eq!(fetch(&url, &opts).await.expect("fits"), b"kind: X\n");
}

#[tokio::test]
async fn user_info_becomes_basic_auth_and_stays_off_the_wire() {
    let (addr, seen) = serve_with(|_| OK.to_string()).await;
    let url = parse(&format!("http://al%40ice:s3cret@{addr}/m.yaml")).expect("url");
    fetch_with(&url, &fast(), no_proxy())
        .await
        .expect("fetched");
    assert_eq!(request_lines(&seen), ["GET /m.yaml HTTP/1.1"]);
    assert_eq!(
        header_of(&seen, 0, "authorization").as_deref(),
        Some("Basic YWxAaWNlOnMzY3JldA==") // al@ice:s3cret
    );
    assert_eq!(
        header_of(&seen, 0, "host").as_deref(),
        Some(addr.to_string().as_str())
    );
}

#[tokio::test]
async fn https_urls_are_tunnelled_through_an_http_proxy() {
    let (proxy, seen) = serve_with(|_| {
        "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
    })
    .await;
    let proxies = Matcher::builder()
        .https(format!("http://user:pw@{proxy}"))
        .build();
    let url = parse("https://manifests.example/m.yaml").expect("url");
    let opts = UrlOptions {
        attempts: 1,
        ..fast()
    };
    fetch_with(&url, &opts, proxies)
        .await
        .expect_err("the proxy refuses");
    assert_eq!(
        request_lines(&seen),
        ["CONNECT manifests.example:443 HTTP/1.1"]
    );
    assert_eq!(
        header_of(&seen, 0, "proxy-authorization").as_deref(),
        Some("Basic dXNlcjpwdw==") // user:pw
    );
}

#[tokio::test]
async fn no_proxy_hosts_are_reached_directly() {
    let (proxy, through_proxy) = serve_with(|_| NOT_FOUND.to_string()).await;
    let (addr, direct) = serve_with(|_| OK.to_string()).await;
    let proxies = Matcher::builder()
        .http(format!("http://{proxy}"))
        .no("127.0.0.1")
        .build();
    let body = fetch_with(&url_of(addr, "/m.yaml"), &fast(), proxies)
        .await
        .expect("direct");
    assert_eq!(body, b"kind: X\n");
    assert_eq!(request_lines(&direct), ["GET /m.yaml HTTP/1.1"]);
    assert!(request_lines(&through_proxy).is_empty());
}

/// Set in the child process of [`in_child`].
const CHILD: &str = "KUBEPLUG_URL_TEST_CHILD";

/// Whether this is the child process [`in_child`] started.
fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Runs the test `name` (of this module) alone in a child process, this test binary
/// again, with the proxy variables `env` and no others. The environment is the
/// process's and other tests fetch URLs concurrently, so variables are set only
/// there (which also needs no `unsafe` `set_var`).
async fn in_child(name: &str, env: Vec<(&'static str, String)>) {
    let mut child = std::process::Command::new(std::env::current_exe().expect("test binary"));
    child
        .args([
            &format!("url::tests::{name}"),
            "--exact",
            "--test-threads=1",
        ])
        .env(CHILD, "1");
    for name in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
        "REQUEST_METHOD",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    ] {
        child.env_remove(name);
    }
    child.envs(env);
    let out = tokio::task::spawn_blocking(move || child.output())
        .await
        .expect("join")
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `HTTP_PROXY` from the environment: absolute form, to the proxy, with its
/// credentials (percent-decoded).
#[tokio::test]
async fn a_plain_http_proxy_from_the_environment() {
    if is_child() {
        // The manifest host does not resolve: only the proxy can answer.
        let url = parse("http://manifests.example/m.yaml").expect("url");
        assert_eq!(fetch(&url, &fast()).await.expect("fetched"), b"kind: X\n");
        return;
    }
    let (proxy, seen) = serve_with(|_| OK.to_string()).await;
    in_child(
        "a_plain_http_proxy_from_the_environment",
        vec![("HTTP_PROXY", format!("http://user:p%40ss@{proxy}"))],
    )
    .await;
    assert_eq!(
        request_lines(&seen),
        ["GET http://manifests.example/m.yaml HTTP/1.1"]
    );
    assert_eq!(
        header_of(&seen, 0, "proxy-authorization").as_deref(),
        Some("Basic dXNlcjpwQHNz") // user:p@ss
    );
}

/// A TLS server on loopback for `manifests.example` and 127.0.0.1, its certificate
/// issued by a fresh CA (returned as PEM), answering `answer` to every request.
async fn serve_tls(answer: &'static str) -> (std::net::SocketAddr, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
    apiclient::tls::install_crypto_provider();
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_pem = ca.self_signed(&ca_key).expect("CA").pem();
    let issuer = Issuer::new(ca, &ca_key);
    let key = KeyPair::generate().expect("key");
    let mut leaf = CertificateParams::new(vec!["manifests.example".to_string()]).expect("params");
    leaf.subject_alt_names
        .push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
    let cert = leaf.signed_by(&key, &issuer).expect("certificate");
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
        )
        .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(sock).await else {
                    return;
                };
                let mut buf = [0u8; 4096];
                let _ = tls.read(&mut buf).await;
                let _ = tls.write_all(answer.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    (addr, ca_pem)
}

/// A proxy on loopback: CONNECT is tunnelled to `upstream` whatever its target, any
/// other request answered [`OK`] by the proxy itself. Records the request heads.
async fn serve_proxy(
    upstream: std::net::SocketAddr,
) -> (std::net::SocketAddr, Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let record = record.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let n = sock.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                let connect = head.starts_with("CONNECT ");
                record.lock().expect("lock").push(head);
                if !connect {
                    let _ = sock.write_all(OK.as_bytes()).await;
                    let _ = sock.shutdown().await;
                    return;
                }
                let Ok(mut up) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = sock
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await;
                let _ = tokio::io::copy_bidirectional(&mut sock, &mut up).await;
            });
        }
    });
    (addr, seen)
}

#[tokio::test]
async fn servers_are_verified_against_the_os_roots() {
    let (addr, _) = serve_tls(OK).await;
    let url = parse(&format!("https://{addr}/m.yaml")).expect("url");
    let opts = UrlOptions {
        attempts: 1,
        ..fast()
    };
    let err = fetch_with(&url, &opts, no_proxy())
        .await
        .expect_err("a CA the OS does not know");
    assert!(
        err.to_string()
            .contains("invalid peer certificate: UnknownIssuer"),
        "{err}"
    );
}

/// An https URL through `HTTPS_PROXY`: CONNECT, then TLS checked against the roots of
/// `SSL_CERT_FILE` (how the platform verifier reads the OS's roots on Linux), then a
/// redirect from https to http, which Go follows, through `HTTP_PROXY`.
#[tokio::test]
async fn https_is_tunnelled_and_may_redirect_to_http() {
    if is_child() {
        let url = parse("https://manifests.example/m.yaml").expect("url");
        assert_eq!(fetch(&url, &fast()).await.expect("fetched"), b"kind: X\n");
        return;
    }
    let (server, ca) = serve_tls(
        "HTTP/1.1 302 Found\r\nLocation: http://manifests.example/plain.yaml\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await;
    let (proxy, seen) = serve_proxy(server).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let roots = dir.path().join("ca.pem");
    std::fs::write(&roots, ca).expect("write the CA");
    in_child(
        "https_is_tunnelled_and_may_redirect_to_http",
        vec![
            ("HTTPS_PROXY", format!("http://{proxy}")),
            ("HTTP_PROXY", format!("http://{proxy}")),
            ("SSL_CERT_FILE", roots.display().to_string()),
        ],
    )
    .await;
    assert_eq!(
        request_lines(&seen),
        [
            "CONNECT manifests.example:443 HTTP/1.1",
            "GET http://manifests.example/plain.yaml HTTP/1.1"
        ]
    );
    // No Referer from https to http.
    assert_eq!(header_of(&seen, 1, "referer"), None);
}

#[test]
fn urls_are_parsed_as_kubectl_accepts_them() {
    // Non-ASCII and other characters Go percent-encodes in the path and query.
    assert_eq!(
        parse("https://example.com/dir/ü b.yaml?q=a|b#frag")
            .expect("encoded")
            .to_string(),
        "https://example.com/dir/%C3%BC%20b.yaml?q=a%7Cb"
    );
    assert_eq!(
        parse("http://example.com").expect("bare").to_string(),
        "http://example.com/"
    );
    assert_eq!(
        parse("http://[::1]:8080/x").expect("ipv6").to_string(),
        "http://[::1]:8080/x"
    );
    // A host that is not ASCII is held in its IDNA form, which is dialled, and shown
    // as Go prints the URL.
    let idna = parse("https://bücher.example/m.yaml").expect("idna");
    assert_eq!(idna.to_string(), "https://xn--bcher-kva.example/m.yaml");
    assert_eq!(
        apiclient::idn::shown_uri(&idna),
        "https://b%C3%BCcher.example/m.yaml"
    );
    assert_eq!(
        parse("http://example.com:99999/").expect_err("port"),
        "invalid port \"99999\""
    );
    assert_eq!(
        parse("http://[::1").expect_err("bracket"),
        "invalid authority"
    );
    assert!(parse("http://").is_err());
    assert!(parse("http:///x").is_err());
}

/// The time limit covers the body: a server that stalls after the headers.
#[tokio::test]
async fn an_attempt_is_bounded_in_time_body_included() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = sock.read(&mut buf).await;
            let _ = sock
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nkind")
                .await;
            open.push(sock);
        }
    });
    let url = url_of(addr, "/m.yaml");
    let opts = UrlOptions {
        attempts: 2,
        timeout: Duration::from_millis(300),
        ..fast()
    };
    let err = fetch_with(&url, &opts, no_proxy())
        .await
        .expect_err("stalled");
    assert_eq!(
        err.to_string(),
        format!("unable to read URL \"{url}\", timed out after 300ms (after 2 attempts)")
    );
}
