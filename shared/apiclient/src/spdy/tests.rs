//! The SPDY session against a scripted server on an in-memory connection.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};

use super::frame::{self, Frame};
use super::*;

/// The server's end of a session: reads our frames, writes its own.
struct Peer {
    io: DuplexStream,
    inflate: flate2::Decompress,
}

impl Peer {
    fn new() -> (Session, Peer) {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        (
            Session::start(ours),
            Peer {
                io: theirs,
                inflate: flate2::Decompress::new(true),
            },
        )
    }

    /// Our next frame but our heartbeat's PINGs (odd ids), which may come between
    /// any two.
    async fn next(&mut self) -> Frame {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(5), frame::read(&mut self.io))
                .await
                .expect("a frame in time")
                .expect("readable")
                .expect("not the end");
            if let Frame::Control {
                kind: frame::PING,
                payload,
                ..
            } = &frame
                && payload.get(3).is_some_and(|low| low % 2 == 1)
            {
                continue;
            }
            return frame;
        }
    }

    /// The next frame, a SYN_STREAM: its stream and its headers.
    async fn syn_stream(&mut self) -> (u32, Vec<(String, String)>) {
        let Frame::Control { kind, payload, .. } = self.next().await else {
            panic!("not a control frame");
        };
        assert_eq!(kind, frame::SYN_STREAM);
        let id = Frame::control_stream(&payload).unwrap();
        let mut block = Vec::with_capacity(4096);
        self.inflate
            .decompress_vec(&payload[10..], &mut block, flate2::FlushDecompress::Sync)
            .expect("a zlib stream the peer can read");
        (id, parse_block(&block))
    }

    async fn send(&mut self, bytes: Vec<u8>) {
        self.io.write_all(&bytes).await.unwrap();
    }

    async fn reply(&mut self, stream: u32, fin: bool) {
        let mut payload = stream.to_be_bytes().to_vec();
        // An empty header block, as spdystream's reply to a remote command's stream
        // carries (its bytes are never read).
        payload.extend_from_slice(&[0x78, 0x9c, 0, 0, 0, 0xff, 0xff]);
        self.send(control(frame::SYN_REPLY, u8::from(fin), &payload))
            .await;
    }
}

fn control(kind: u16, flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0x80, 3, 0, kind as u8, flags];
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    out.extend_from_slice(payload);
    out
}

fn parse_block(mut b: &[u8]) -> Vec<(String, String)> {
    let take = |n: usize, b: &mut &[u8]| {
        let (head, rest) = b.split_at(n);
        *b = rest;
        head.to_vec()
    };
    let count = u32::from_be_bytes(take(4, &mut b).try_into().unwrap());
    (0..count)
        .map(|_| {
            let string = |b: &mut &[u8]| {
                let len = u32::from_be_bytes(take(4, b).try_into().unwrap()) as usize;
                String::from_utf8(take(len, b)).unwrap()
            };
            (string(&mut b), string(&mut b))
        })
        .collect()
}

#[test]
fn a_header_block_counts_its_pairs_and_lowercases_names() {
    let block = frame::header_block(&[("streamType", "error"), ("X", "")]);
    assert_eq!(
        parse_block(&block),
        [
            ("streamtype".into(), "error".into()),
            ("x".into(), String::new())
        ]
    );
}

#[test]
fn header_blocks_are_one_zlib_stream_read_block_by_block() {
    let mut compressor = frame::HeaderCompressor::default();
    let mut inflate = flate2::Decompress::new(true);
    for kind in ["error", "stdin", "stdout"] {
        let compressed = compressor
            .compress(&frame::header_block(&[("streamType", kind)]))
            .unwrap();
        let mut block = Vec::with_capacity(256);
        inflate
            .decompress_vec(&compressed, &mut block, flate2::FlushDecompress::Sync)
            .unwrap();
        assert_eq!(parse_block(&block), [("streamtype".into(), kind.into())]);
    }
}

#[tokio::test]
async fn streams_are_opened_with_odd_ids_and_their_data_comes_through() {
    let (session, mut peer) = Peer::new();
    let mut error = session.open(&[("streamType", "error")]).await.unwrap();
    let stdout = session.open(&[("streamType", "stdout")]).await.unwrap();
    assert_eq!((error.id, stdout.id), (1, 3));
    assert_eq!(
        peer.syn_stream().await,
        (1, vec![("streamtype".into(), "error".into())])
    );
    assert_eq!(peer.syn_stream().await.0, 3);
    peer.reply(1, false).await;
    peer.reply(3, false).await;
    error.replied().await.unwrap();
    peer.send(frame::data(3, false, b"hello ")).await;
    peer.send(frame::data(3, true, b"world")).await;
    peer.send(frame::data(1, true, b"{}")).await;
    let (mut out, _) = stdout.split();
    let mut text = String::new();
    out.read_to_string(&mut text).await.unwrap();
    assert_eq!(text, "hello world");
    let mut status = String::new();
    error.incoming.read_to_string(&mut status).await.unwrap();
    assert_eq!(status, "{}");
}

#[tokio::test]
async fn a_writer_waits_for_the_reply_and_ends_with_fin() {
    let (session, mut peer) = Peer::new();
    let stdin = session.open(&[("streamType", "stdin")]).await.unwrap();
    let (_, mut writer) = stdin.split();
    let sent = tokio::spawn(async move {
        writer.send(b"typed", false).await.unwrap();
        writer.send(b"", true).await.unwrap();
    });
    assert_eq!(peer.syn_stream().await.0, 1);
    // Nothing comes before the reply: spdystream would drop it.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!sent.is_finished());
    peer.reply(1, false).await;
    assert_eq!(
        peer.next().await,
        Frame::Data {
            stream: 1,
            fin: false,
            data: b"typed".to_vec()
        }
    );
    assert_eq!(
        peer.next().await,
        Frame::Data {
            stream: 1,
            fin: true,
            data: vec![]
        }
    );
    sent.await.unwrap();
}

#[tokio::test]
async fn the_server_s_pings_are_answered_and_goaway_ends_every_stream() {
    let (session, mut peer) = Peer::new();
    let stream = session.open(&[("streamType", "stdout")]).await.unwrap();
    peer.syn_stream().await;
    peer.send(frame::ping(2)).await;
    assert_eq!(
        peer.next().await,
        Frame::Control {
            kind: frame::PING,
            flags: 0,
            payload: 2u32.to_be_bytes().to_vec()
        }
    );
    peer.send(control(frame::GOAWAY, 0, &[0; 8])).await;
    let (mut incoming, _) = stream.split();
    let mut rest = Vec::new();
    incoming.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty());
    assert_eq!(session.ended().await, None);
}

#[tokio::test]
async fn a_reset_stream_is_never_accepted_and_a_cut_connection_is_named() {
    let (session, mut peer) = Peer::new();
    let mut stream = session.open(&[("streamType", "stdout")]).await.unwrap();
    peer.syn_stream().await;
    let mut payload = 1u32.to_be_bytes().to_vec();
    payload.extend_from_slice(&frame::REFUSED_STREAM.to_be_bytes());
    peer.send(control(frame::RST_STREAM, 0, &payload)).await;
    assert!(stream.replied().await.is_err());
    // Half a frame header, then the end.
    peer.send(vec![0x80, 3]).await;
    drop(peer);
    assert!(session.ended().await.is_some());
}

/// A server that stops answering (no FIN: a partition, a dead machine behind a
/// balancer) ends the session within [`SILENT_FOR`] of its last frame, while one that
/// answers our PINGs keeps it however quiet its streams are.
#[tokio::test(start_paused = true)]
async fn a_silent_server_ends_the_session_and_an_answering_one_does_not() {
    let (session, mut peer) = Peer::new();
    let started = tokio::time::Instant::now();
    // Answer every PING for a while: the session goes on.
    for _ in 0..10 {
        let frame = frame::read(&mut peer.io).await.unwrap().unwrap();
        let Frame::Control {
            kind: frame::PING,
            payload,
            ..
        } = frame
        else {
            panic!("only pings on a quiet session");
        };
        peer.send(control(frame::PING, 0, &payload)).await;
    }
    assert!(started.elapsed() >= PING_EVERY * 10);
    let silent_from = tokio::time::Instant::now();
    // Now silent, the connection still open.
    let why = session.ended().await.expect("a broken session says why");
    assert!(why.contains("no answer from the server for 4s"), "{why}");
    assert!(silent_from.elapsed() <= SILENT_FOR + PING_EVERY);
    drop(peer);
}
