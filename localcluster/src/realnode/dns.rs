//! A DNS server that knows no names: every question gets NXDOMAIN.
//!
//! containerd resolves a registry's name through the host's `/etc/resolv.conf`. Inside
//! the cluster's namespace nothing routes to that resolver, so without an answer a pull
//! of an image nobody mirrors (`registry.invalid/x:1`, or a Docker Hub name the local
//! registry lacks) would fail with "network is unreachable", which no real cluster
//! says. With this server on the resolver's address it fails as a misspelt registry
//! fails everywhere: `no such host`.
//!
//! Hand-written (a header and the echoed question, 20 lines): a DNS server crate
//! would bring a resolver, a zone model and async plumbing for one fixed answer.

use std::net::{Ipv4Addr, SocketAddr};

use tokio::net::UdpSocket;

/// DNS header flags of the answer: QR (a response), RA (recursion available) and
/// RCODE 3 (NXDOMAIN); the question's opcode and RD bit are copied in [`answer`].
const RESPONSE_NXDOMAIN: u16 = 0x8000 | 0x0080 | 0x0003;

/// Answers on `address`:53 until the task is dropped.
pub async fn serve(address: Ipv4Addr) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let socket = UdpSocket::bind(SocketAddr::from((address, 53))).await?;
    Ok(tokio::spawn(async move {
        let mut buf = [0u8; 512];
        loop {
            let Ok((len, from)) = socket.recv_from(&mut buf).await else {
                continue;
            };
            if let Some(reply) = answer(&buf[..len]) {
                let _ = socket.send_to(&reply, from).await;
            }
        }
    }))
}

/// The NXDOMAIN answer to one query, or `None` for what is not a query.
fn answer(query: &[u8]) -> Option<Vec<u8>> {
    if query.len() < 12 || query[2] & 0x80 != 0 {
        return None;
    }
    let asked = u16::from_be_bytes([query[2], query[3]]);
    // Keep the opcode and RD of the question.
    let flags = RESPONSE_NXDOMAIN | (asked & 0x7900);
    let mut reply = Vec::with_capacity(query.len());
    reply.extend_from_slice(&query[..2]); // id
    reply.extend_from_slice(&flags.to_be_bytes());
    reply.extend_from_slice(&query[4..6]); // QDCOUNT: the question is echoed
    reply.extend_from_slice(&[0, 0, 0, 0, 0, 0]); // no answer, authority or additional records
    reply.extend_from_slice(question(query)?);
    Some(reply)
}

/// The first question section of `query` (name, type, class), without EDNS records.
fn question(query: &[u8]) -> Option<&[u8]> {
    let mut at = 12;
    loop {
        let label = *query.get(at)? as usize;
        at += 1;
        if label == 0 {
            break;
        }
        if label & 0xC0 != 0 {
            // A compression pointer cannot start a question's name.
            return None;
        }
        at += label;
    }
    query.get(12..at + 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query for `registry-1.docker.io` A, with RD set.
    fn query() -> Vec<u8> {
        let mut q = vec![0xAB, 0xCD, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for label in ["registry-1", "docker", "io"] {
            q.push(label.len() as u8);
            q.extend_from_slice(label.as_bytes());
        }
        q.extend_from_slice(&[0, 0, 1, 0, 1]);
        q
    }

    #[test]
    fn every_question_is_answered_nxdomain_with_its_id_and_question() {
        let q = query();
        let a = answer(&q).expect("an answer");
        assert_eq!(&a[..2], &[0xAB, 0xCD]);
        assert_eq!(
            u16::from_be_bytes([a[2], a[3]]) & 0x000F,
            3,
            "RCODE NXDOMAIN"
        );
        assert_ne!(a[2] & 0x80, 0, "QR set");
        assert_ne!(a[2] & 0x01, 0, "RD copied");
        assert_eq!(&a[4..12], &[0, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&a[12..], &q[12..]);
    }

    #[test]
    fn answers_and_garbage_get_no_answer() {
        let mut a = query();
        a[2] |= 0x80;
        assert_eq!(answer(&a), None);
        assert_eq!(answer(&[1, 2, 3]), None);
        let mut cut = query();
        cut.truncate(20);
        assert_eq!(answer(&cut), None);
    }
}
