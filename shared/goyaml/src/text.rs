//! Bytes to text for the YAML and JSON readers: the byte-order marks go-yaml's reader
//! detects (UTF-8, UTF-16 LE and BE), and what an invalid sequence becomes. Two readers,
//! two rules, one decoder: manifests as kubectl's decoder reads them (U+FFFD where the
//! bytes are invalid, as Go's transcoder writes it) and kubeconfig files as kube reads
//! them (refused, naming the encoding). A bottom module.

use std::borrow::Cow;

/// What an invalid sequence becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Invalid {
    /// U+FFFD (kubectl's manifests).
    Replace,
    /// An error naming the encoding (kube's kubeconfig reader).
    Refuse,
}

/// The text of manifest bytes, as kubectl's decoder reads them (invalid → U+FFFD).
pub fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    // `Replace` never refuses; the fallback only keeps this function total.
    decode(bytes, Invalid::Replace).unwrap_or_else(|_| String::from_utf8_lossy(bytes))
}

/// The text of kubeconfig bytes, as kube reads them: the encoding that did not decode.
pub fn strict(bytes: &[u8]) -> Result<Cow<'_, str>, &'static str> {
    decode(bytes, Invalid::Refuse)
}

/// The text of `bytes` after their byte-order mark; with [`Invalid::Refuse`], the
/// encoding that did not decode (`UTF-8`, `UTF-8 BOM`, `UTF-16 LE`, `UTF-16 BE`).
fn decode(bytes: &[u8], invalid: Invalid) -> Result<Cow<'_, str>, &'static str> {
    if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        return utf16(rest, u16::from_le_bytes, invalid)
            .map(Cow::Owned)
            .ok_or("UTF-16 LE");
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        return utf16(rest, u16::from_be_bytes, invalid)
            .map(Cow::Owned)
            .ok_or("UTF-16 BE");
    }
    let (rest, what) = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => (rest, "UTF-8 BOM"),
        None => (bytes, "UTF-8"),
    };
    match invalid {
        Invalid::Replace => Ok(String::from_utf8_lossy(rest)),
        Invalid::Refuse => std::str::from_utf8(rest)
            .map(Cow::Borrowed)
            .map_err(|_| what),
    }
}

/// UTF-16 code units to text: unpaired surrogates and an odd last byte become U+FFFD,
/// or make the whole text invalid (`None`).
fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16, invalid: Invalid) -> Option<String> {
    let chunks = bytes.chunks_exact(2);
    let odd = !chunks.remainder().is_empty();
    let mut text = String::with_capacity(bytes.len() / 2);
    for c in char::decode_utf16(chunks.map(|pair| unit([pair[0], pair[1]]))) {
        match (c, invalid) {
            (Ok(c), _) => text.push(c),
            (Err(_), Invalid::Replace) => text.push(char::REPLACEMENT_CHARACTER),
            (Err(_), Invalid::Refuse) => return None,
        }
    }
    if odd {
        match invalid {
            Invalid::Replace => text.push(char::REPLACEMENT_CHARACTER),
            Invalid::Refuse => return None,
        }
    }
    Some(text)
}

/// What go-yaml's reader refuses ("control characters are not allowed"): C0 controls
/// but tab, line feed and carriage return, DEL, C1 controls but NEL, a BOM inside the
/// text, and the noncharacters U+FFFE and U+FFFF.
pub fn is_control(c: char) -> bool {
    match c {
        '\t' | '\n' | '\r' | '\u{85}' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{feff}' | '\u{fffe}' | '\u{ffff}' => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(text: &str) -> Vec<u8> {
        [0xFF, 0xFE]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect()
    }

    fn be(text: &str) -> Vec<u8> {
        [0xFE, 0xFF]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
            .collect()
    }

    #[test]
    fn byte_order_marks_are_read_and_dropped() {
        for invalid in [Invalid::Replace, Invalid::Refuse] {
            assert_eq!(decode(b"a: 1", invalid).as_deref(), Ok("a: 1"));
            assert_eq!(
                decode(b"\xEF\xBB\xBFa: \xC3\xA9", invalid).as_deref(),
                Ok("a: é")
            );
            assert_eq!(decode(&le("a: é𝄞"), invalid).as_deref(), Ok("a: é𝄞"));
            assert_eq!(decode(&be("a: é𝄞"), invalid).as_deref(), Ok("a: é𝄞"));
        }
        // Plain UTF-8 is borrowed, not copied.
        assert!(matches!(
            decode(b"a: 1", Invalid::Replace),
            Ok(Cow::Borrowed(_))
        ));
    }

    #[test]
    fn invalid_sequences_are_replaced_or_refused_by_name() {
        let mut unpaired = le("a");
        unpaired.extend([0x00, 0xD8]); // a lone high surrogate
        let mut odd = be("a");
        odd.push(0x41);
        let cases: [(&[u8], &str, &str); 4] = [
            (b"a\xFFb", "a\u{FFFD}b", "UTF-8"),
            (b"\xEF\xBB\xBFa\xFF", "a\u{FFFD}", "UTF-8 BOM"),
            (&unpaired, "a\u{FFFD}", "UTF-16 LE"),
            (&odd, "a\u{FFFD}", "UTF-16 BE"),
        ];
        for (bytes, replaced, refused) in cases {
            assert_eq!(decode(bytes, Invalid::Replace).as_deref(), Ok(replaced));
            assert_eq!(decode(bytes, Invalid::Refuse), Err(refused));
        }
    }
}
