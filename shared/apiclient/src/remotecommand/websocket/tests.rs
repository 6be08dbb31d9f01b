//! The v5 loop against a scripted server on an in-memory WebSocket.

use futures::{SinkExt as _, StreamExt as _};
use tokio::io::AsyncReadExt as _;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::*;

async fn pair(params: &AttachParams) -> (Attached, WebSocketStream<tokio::io::DuplexStream>) {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let client = WebSocketStream::from_raw_socket(ours, Role::Client, None).await;
    let server = WebSocketStream::from_raw_socket(theirs, Role::Server, None).await;
    (run(client, params), server)
}

fn output() -> AttachParams {
    AttachParams {
        stdin: true,
        stdout: true,
        stderr: true,
        ..Default::default()
    }
}

#[tokio::test(start_paused = true)]
async fn output_then_the_status_is_an_orderly_end() {
    let (mut attached, mut server) = pair(&output()).await;
    let mut stdout = attached.stdout().expect("stdout");
    let status = attached.take_status().expect("status");
    for message in [&b"\x01"[..], b"\x01one\n", b"\x02err\n", b"\x01two\n"] {
        server
            .send(Message::binary(message.to_vec()))
            .await
            .unwrap();
    }
    server
        .send(Message::binary(
            b"\x03{\"kind\":\"Status\",\"status\":\"Success\",\"metadata\":{}}".to_vec(),
        ))
        .await
        .unwrap();
    let mut out = String::new();
    stdout.read_to_string(&mut out).await.unwrap();
    assert_eq!(out, "one\ntwo\n");
    assert_eq!(
        status.await.and_then(|s| s.status).as_deref(),
        Some("Success")
    );
    assert_eq!(attached.join().await, Ok(()));
}

#[tokio::test(start_paused = true)]
async fn stdin_goes_on_channel_0_and_its_end_is_v5_s_close() {
    let (mut attached, mut server) = pair(&output()).await;
    let mut stdin = attached.stdin().expect("stdin");
    tokio::io::AsyncWriteExt::write_all(&mut stdin, b"hi\n")
        .await
        .unwrap();
    tokio::io::AsyncWriteExt::shutdown(&mut stdin)
        .await
        .unwrap();
    let mut got = Vec::new();
    while got.len() < 2 {
        match server.next().await.unwrap().unwrap() {
            Message::Binary(data) => got.push(data.to_vec()),
            // The heartbeat's pings, answered by tungstenite.
            _ => continue,
        }
    }
    assert_eq!(got, vec![b"\x00hi\n".to_vec(), vec![CLOSE, STDIN]]);
}

/// A server that goes silent without closing the connection (a dead machine behind
/// a balancer) ends the session as broken within [`SILENT_FOR`], with no status;
/// one that answers the pings keeps it open however quiet the container is.
#[tokio::test(start_paused = true)]
async fn a_silent_server_ends_the_session_without_a_status() {
    let (mut attached, mut server) = pair(&output()).await;
    let status = attached.take_status().expect("status");
    let started = tokio::time::Instant::now();
    // Reading answers the pings (tungstenite queues each pong and sends it).
    let answering = async {
        loop {
            if server.next().await.is_none() {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(PING_EVERY * 10, answering).await;
    assert!(started.elapsed() >= PING_EVERY * 10);
    let silent_from = tokio::time::Instant::now();
    let joined = attached.join().await;
    let why = joined.expect_err("a silent server is a broken session");
    assert!(why.contains("no answer from the server for 4s"), "{why}");
    assert!(silent_from.elapsed() <= SILENT_FOR + PING_EVERY * 2);
    assert!(status.await.is_none(), "no status: the session was cut");
    drop(server);
}
