//! SPDY/3 frames: the eight-byte header, the control frames a streaming client
//! meets, and the name/value header block.
//!
//! Written by hand: the protocol is small and frozen (2012), and no maintained crate
//! speaks it; what Kubernetes' peers send is listed in `super`.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt as _};

/// The protocol version in every control frame.
const VERSION: u16 = 3;
/// The most a frame may carry: its length field has 24 bits.
pub const MAX_LENGTH: usize = (1 << 24) - 1;

/// Control frame types (SPDY/3 §2.6).
pub const SYN_STREAM: u16 = 1;
pub const SYN_REPLY: u16 = 2;
pub const RST_STREAM: u16 = 3;
pub const PING: u16 = 6;
pub const GOAWAY: u16 = 7;

/// The flag that ends the sender's half of a stream (DATA, SYN_STREAM, SYN_REPLY).
pub const FLAG_FIN: u8 = 0x01;

/// RST_STREAM's status for a stream the receiver will not take.
pub const REFUSED_STREAM: u32 = 3;

/// A frame as read off the connection.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Data {
        stream: u32,
        fin: bool,
        data: Vec<u8>,
    },
    /// A control frame: its type, flags and payload (the header block of a
    /// SYN_STREAM, SYN_REPLY or HEADERS stays compressed: nothing here reads the
    /// peer's headers, see `super`).
    Control {
        kind: u16,
        flags: u8,
        payload: Vec<u8>,
    },
}

impl Frame {
    /// The stream a control frame's payload names in its first 31 bits (SYN_STREAM,
    /// SYN_REPLY, RST_STREAM, HEADERS, WINDOW_UPDATE).
    pub fn control_stream(payload: &[u8]) -> Option<u32> {
        let bytes: [u8; 4] = payload.get(..4)?.try_into().ok()?;
        Some(u32::from_be_bytes(bytes) & 0x7fff_ffff)
    }
}

/// Reads one frame; `Ok(None)` at a clean end of the connection (between frames).
pub async fn read(r: &mut (impl AsyncRead + Unpin)) -> io::Result<Option<Frame>> {
    let mut head = [0u8; 8];
    match r.read_exact(&mut head[..1]).await {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    r.read_exact(&mut head[1..]).await?;
    let flags = head[4];
    let length = usize::from(head[5]) << 16 | usize::from(head[6]) << 8 | usize::from(head[7]);
    let mut payload = vec![0; length];
    r.read_exact(&mut payload).await?;
    let first = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    if first & 0x8000_0000 == 0 {
        return Ok(Some(Frame::Data {
            stream: first,
            fin: flags & FLAG_FIN != 0,
            data: payload,
        }));
    }
    let version = (first >> 16) as u16 & 0x7fff;
    if version != VERSION {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("SPDY control frame of version {version}, not {VERSION}"),
        ));
    }
    Ok(Some(Frame::Control {
        kind: first as u16,
        flags,
        payload,
    }))
}

fn header(first: u32, flags: u8, length: usize) -> [u8; 8] {
    debug_assert!(length <= MAX_LENGTH);
    let [a, b, c, d] = first.to_be_bytes();
    let [_, l1, l2, l3] = (length as u32).to_be_bytes();
    [a, b, c, d, flags, l1, l2, l3]
}

fn control(kind: u16, flags: u8, payload: &[u8]) -> Vec<u8> {
    let first = 0x8000_0000 | u32::from(VERSION) << 16 | u32::from(kind);
    let mut out = header(first, flags, payload.len()).to_vec();
    out.extend_from_slice(payload);
    out
}

/// A DATA frame (`data` at most [`MAX_LENGTH`] bytes).
pub fn data(stream: u32, fin: bool, data: &[u8]) -> Vec<u8> {
    let flags = if fin { FLAG_FIN } else { 0 };
    let mut out = header(stream & 0x7fff_ffff, flags, data.len()).to_vec();
    out.extend_from_slice(data);
    out
}

/// A SYN_STREAM opening `stream`, with its already compressed header block.
pub fn syn_stream(stream: u32, fin: bool, compressed_headers: &[u8]) -> Vec<u8> {
    let mut payload = Vec::with_capacity(10 + compressed_headers.len());
    payload.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    // No associated stream; priority 0 (the highest) and slot 0, as nothing here
    // weighs one stream against another.
    payload.extend_from_slice(&0u32.to_be_bytes());
    payload.extend_from_slice(&[0, 0]);
    payload.extend_from_slice(compressed_headers);
    control(SYN_STREAM, if fin { FLAG_FIN } else { 0 }, &payload)
}

pub fn rst_stream(stream: u32, status: u32) -> Vec<u8> {
    let mut payload = (stream & 0x7fff_ffff).to_be_bytes().to_vec();
    payload.extend_from_slice(&status.to_be_bytes());
    control(RST_STREAM, 0, &payload)
}

pub fn ping(id: u32) -> Vec<u8> {
    control(PING, 0, &id.to_be_bytes())
}

/// The name/value block of SPDY/3 §2.6.10 before compression: the count, then each
/// name and value with its 32-bit length. Names go lowercase, as the protocol
/// requires (Go's framer reads them back into canonical `http.Header` keys).
pub fn header_block(headers: &[(&str, &str)]) -> Vec<u8> {
    let mut out = (headers.len() as u32).to_be_bytes().to_vec();
    for (name, value) in headers {
        let name = name.to_ascii_lowercase();
        out.extend_from_slice(&(name.len() as u32).to_be_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(value.len() as u32).to_be_bytes());
        out.extend_from_slice(value.as_bytes());
    }
    out
}

/// The header blocks one side of a session sends, compressed as one zlib stream
/// (SPDY/3 §2.6.10.1), each block ending with a sync flush so the peer can read it
/// whole.
///
/// Without SPDY's preset dictionary: the dictionary only makes the first blocks
/// smaller, a zlib stream without one is valid, and Go's reader (the peer of every
/// Kubernetes streaming connection) takes a stream whose header does not ask for a
/// dictionary as it is. That saves carrying the 1,423-byte dictionary here.
pub struct HeaderCompressor(flate2::Compress);

impl Default for HeaderCompressor {
    fn default() -> Self {
        HeaderCompressor(flate2::Compress::new(flate2::Compression::default(), true))
    }
}

impl HeaderCompressor {
    pub fn compress(&mut self, block: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(block.len() + 64);
        let mut input = block;
        loop {
            if out.capacity() - out.len() < 64 {
                out.reserve(256);
            }
            let before = self.0.total_in();
            self.0
                .compress_vec(input, &mut out, flate2::FlushCompress::Sync)
                .map_err(io::Error::other)?;
            let consumed = (self.0.total_in() - before) as usize;
            input = &input[consumed..];
            // Done when all is in and the flush had room to finish.
            if input.is_empty() && out.capacity() > out.len() {
                return Ok(out);
            }
        }
    }
}
