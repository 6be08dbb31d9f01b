//! The fallback's words and the SPDY streams' pumps, against a scripted peer.

use super::*;

#[test]
fn a_refused_upgrade_says_the_status_message_else_the_body() {
    let forbidden = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"web\" is forbidden: User \"limited\" cannot create resource \"pods/attach\"","reason":"Forbidden","code":403}"#;
    assert_eq!(
        upgrade_error_message(forbidden),
        "pods \"web\" is forbidden: User \"limited\" cannot create resource \"pods/attach\""
    );
    assert_eq!(upgrade_error_message(br#"{"error":" gone "}"#), "gone");
    assert_eq!(
        upgrade_error_message(b" 404 page not found\n"),
        "404 page not found"
    );
    assert_eq!(upgrade_error_message(b""), "empty server response");
}

#[test]
fn only_v5_is_offered_over_a_websocket() {
    let mut headers = http::HeaderMap::new();
    headers.insert(
        http::header::SEC_WEBSOCKET_PROTOCOL,
        http::HeaderValue::from_static("v5.channel.k8s.io, v4.channel.k8s.io"),
    );
    websocket_protocols(&mut headers);
    assert_eq!(
        headers[http::header::SEC_WEBSOCKET_PROTOCOL],
        "v5.channel.k8s.io"
    );
    // Another use of WebSockets is left alone.
    let mut other = http::HeaderMap::new();
    other.insert(
        http::header::SEC_WEBSOCKET_PROTOCOL,
        http::HeaderValue::from_static("base64.channel.k8s.io"),
    );
    websocket_protocols(&mut other);
    assert_eq!(
        other[http::header::SEC_WEBSOCKET_PROTOCOL],
        "base64.channel.k8s.io"
    );
}

#[tokio::test]
async fn stdin_s_end_of_file_is_the_stream_s_fin_and_sizes_are_go_s_json() {
    use tokio::io::AsyncWriteExt as _;
    let (ours, mut theirs) = tokio::io::duplex(1 << 16);
    let session = Session::start(ours);
    let stdin = session.open(&[("streamType", "stdin")]).await.unwrap();
    let resize = session.open(&[("streamType", "resize")]).await.unwrap();
    let (_, stdin_writer) = stdin.split();
    let (_, resize_writer) = resize.split();
    let (mut mine, pumped) = tokio::io::duplex(1024);
    tokio::spawn(pump_stdin(pumped, stdin_writer));
    let (mut sizes, rx) = futures::channel::mpsc::channel(1);
    tokio::spawn(pump_resizes(rx, resize_writer));
    // Both SYN_STREAMs, then the replies.
    for _ in 0..2 {
        spdy::frame::read(&mut theirs).await.unwrap().unwrap();
    }
    for id in [1u32, 3] {
        let mut reply = vec![0x80, 3, 0, 2, 0, 0, 0, 4];
        reply.extend_from_slice(&id.to_be_bytes());
        theirs.write_all(&reply).await.unwrap();
    }
    mine.write_all(b"x").await.unwrap();
    mine.shutdown().await.unwrap();
    futures::SinkExt::send(
        &mut sizes,
        TerminalSize {
            width: 80,
            height: 24,
        },
    )
    .await
    .unwrap();
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match spdy::frame::read(&mut theirs).await.unwrap().unwrap() {
            spdy::frame::Frame::Data { stream, fin, data } => seen.push((stream, fin, data)),
            other => panic!("{other:?}"),
        }
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            (1, false, b"x".to_vec()),
            (1, true, vec![]),
            (3, false, b"{\"Width\":80,\"Height\":24}\n".to_vec()),
        ]
    );
}
