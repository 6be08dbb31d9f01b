//! `--detach-keys`: the key sequence that ends a raw `-it` session from the user's
//! side, as kubectl 1.37 reads it (moby/term v0.5.2's `ToBytes` and escape proxy,
//! which kubectl's `term.NewDetachableReader` wraps). Written here because the two
//! are a few lines of Go whose exact rules (the key names, the error text, how a
//! broken sequence is given back) are what users see; no crate has them.
//!
//! When the whole sequence has been typed, the bytes before it are sent, the
//! sequence and anything after it are not, and stdin ends: the container reads end
//! of file, as with kubectl (its reader turns the escape into `io.EOF`).

/// kubectl's default: Ctrl-P then Ctrl-Q.
pub const DEFAULT: &str = "ctrl-p,ctrl-q";

/// A key name moby/term does not know, in its words (`could not bind detach keys: `
/// is kubectl's prefix).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("could not bind detach keys: Unknown character: '{0}'")]
pub struct UnknownCharacter(String);

/// The bytes of a `--detach-keys` value: comma-separated keys, each one character
/// (one byte) or one of `ctrl-@`, `ctrl-a` … `ctrl-z`, `ctrl-[`, `ctrl-\`, `ctrl-]`,
/// `ctrl-^`, `ctrl-_` (codes 0 to 31), or `DEL` (127). An empty value is the
/// default, as kubectl's attach makes it.
pub fn parse(keys: &str) -> Result<Vec<u8>, UnknownCharacter> {
    const CONTROL: &[u8] = b"@abcdefghijklmnopqrstuvwxyz[\\]^_";
    let keys = if keys.is_empty() { DEFAULT } else { keys };
    keys.split(',')
        .map(|key| match key.as_bytes() {
            // Go's len counts bytes: a one-byte key is itself.
            [byte] => Ok(*byte),
            b"DEL" => Ok(127),
            _ => key
                .strip_prefix("ctrl-")
                .and_then(|rest| match rest.as_bytes() {
                    [c] => CONTROL.iter().position(|k| k == c),
                    _ => None,
                })
                .map(|code| code as u8)
                .ok_or_else(|| UnknownCharacter(key.to_string())),
        })
        .collect()
}

/// Watches stdin for the sequence (moby/term's escape proxy).
#[derive(Debug)]
pub struct Detacher {
    keys: Vec<u8>,
    /// How many of `keys` the bytes seen last matched (held back, not sent yet).
    matched: usize,
}

/// What to send of one chunk of stdin.
#[derive(Debug, PartialEq, Eq)]
pub struct Scanned {
    /// The bytes to send on.
    pub send: Vec<u8>,
    /// The whole sequence was typed: stdin ends after `send`.
    pub detached: bool,
}

impl Detacher {
    pub fn new(keys: Vec<u8>) -> Self {
        Detacher { keys, matched: 0 }
    }

    /// Scans `chunk`. A partial sequence at its end is held back until the next
    /// chunk says whether it is the sequence; a broken one is sent then. As in
    /// moby/term, the byte that breaks a partial sequence is not itself looked at as
    /// the start of a new one.
    pub fn scan(&mut self, chunk: &[u8]) -> Scanned {
        let mut send = Vec::with_capacity(chunk.len() + self.matched);
        if self.keys.is_empty() {
            send.extend_from_slice(chunk);
            return Scanned {
                send,
                detached: false,
            };
        }
        for &byte in chunk {
            if byte == self.keys[self.matched] {
                self.matched += 1;
                if self.matched == self.keys.len() {
                    return Scanned {
                        send,
                        detached: true,
                    };
                }
                continue;
            }
            send.extend_from_slice(&self.keys[..self.matched]);
            self.matched = 0;
            send.push(byte);
        }
        Scanned {
            send,
            detached: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_parsed_as_moby_term_parses_them() {
        assert_eq!(parse("ctrl-p,ctrl-q"), Ok(vec![0x10, 0x11]));
        assert_eq!(parse(""), Ok(vec![0x10, 0x11]));
        assert_eq!(parse("ctrl-@,ctrl-_,ctrl-\\"), Ok(vec![0, 31, 28]));
        assert_eq!(parse("a,DEL,,"), Err(UnknownCharacter(String::new())));
        assert_eq!(parse("x,DEL,ctrl-z"), Ok(vec![b'x', 127, 26]));
        assert_eq!(
            parse("ctrl-P").unwrap_err().to_string(),
            "could not bind detach keys: Unknown character: 'ctrl-P'"
        );
        // One character of two bytes is not one byte.
        assert_eq!(parse("é"), Err(UnknownCharacter("é".into())));
        assert_eq!(parse("ctrl-"), Err(UnknownCharacter("ctrl-".into())));
    }

    fn scan_all(keys: &str, chunks: &[&[u8]]) -> (Vec<u8>, bool) {
        let mut d = Detacher::new(parse(keys).unwrap());
        let mut sent = Vec::new();
        for chunk in chunks {
            let s = d.scan(chunk);
            sent.extend(s.send);
            if s.detached {
                return (sent, true);
            }
        }
        (sent, false)
    }

    #[test]
    fn the_sequence_ends_stdin_and_is_not_sent() {
        // moby/term's and kubectl's own cases.
        assert_eq!(
            scan_all("ctrl-p,ctrl-q", &[b"data before\x10\x11data after"]),
            (b"data before".to_vec(), true)
        );
        assert_eq!(
            scan_all("ctrl-p,ctrl-q", &[b"normal text\x10only ctrl-p no q"]),
            (b"normal text\x10only ctrl-p no q".to_vec(), false)
        );
        assert_eq!(
            scan_all("ctrl-a", &[b"short\x01rest"]),
            (b"short".to_vec(), true)
        );
        // Typed one key at a time, as on a terminal.
        assert_eq!(
            scan_all("ctrl-p,ctrl-q", &[b"ls", b"\x10", b"\x11", b"x"]),
            (b"ls".to_vec(), true)
        );
        // A partial sequence is held back, then given back with what broke it.
        let mut d = Detacher::new(parse("ctrl-p,ctrl-q").unwrap());
        assert_eq!(d.scan(b"\x10").send, b"");
        assert_eq!(d.scan(b"a").send, b"\x10a");
        // The breaking byte does not start a new sequence (moby/term).
        assert_eq!(
            scan_all("ctrl-p,ctrl-q", &[b"\x10\x10\x11"]),
            (b"\x10\x10\x11".to_vec(), false)
        );
    }
}
