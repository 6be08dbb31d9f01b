//! Tests against a scripted HTTP server on loopback: one canned answer per connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

/// Serves `answers` in turn (the last one repeats) and counts the requests.
async fn serve(answers: Vec<&'static str>) -> (reqwest::Url, Arc<AtomicUsize>) {
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
    let url: reqwest::Url = format!("http://{}/x", listener.local_addr().expect("addr"))
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
    assert!(err.to_string().contains("(after 2 attempts)"), "{err}");
}
