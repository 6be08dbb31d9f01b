//! A server whose host is not ASCII (`--server=https://bücher.example:6443`, or a
//! kubeconfig's `cluster.server`), as kubectl 1.37 handles it.
//!
//! kubectl keeps the URL as Go's `url.Parse` reads it, the host as written; Go's
//! `URL.String` prints that host percent-encoded (`Get
//! "https://b%C3%BCcher.example:6443/api?timeout=32s": …`), and `net/http`'s transport
//! dials its IDNA form (`canonicalAddr` and `cleanHost` over `idna.Lookup.ToASCII`):
//! the address looked up (`dial tcp: lookup xn--bcher-kva.example on …: no such
//! host`), the `Host` header, the TLS server name and the name the certificate is
//! checked against are all `xn--bcher-kva.example`. A host the conversion refuses (a
//! label that starts with `-`, a `_`, a misplaced joiner) is dialled as written, and
//! Go's resolver refuses it as no domain name without asking a server (`dial tcp:
//! lookup -bücher.example: no such host`).
//!
//! The client stack carries [`http::Uri`] (kube's `Config`, hyper), which holds ASCII
//! only: so the URL is made to hold the IDNA form from the start ([`ascii_url`]), and
//! the connection, SNI, `Host` header and certificate check follow from it unchanged,
//! as Go's do. What is written in place of the host is remembered here, for the
//! process (a command talks to one server), for the places that name the URL as Go
//! prints it ([`shown_uri`], [`shown_authority`]) or its host as `url.Parse` reads it
//! ([`written_authority`]). A host the conversion refuses is held in the URL as a
//! reserved name that never resolves (RFC 6761's `.invalid`), which the connector fails
//! in Go's words without a lookup ([`refused`]).
//!
//! The conversion is the `idna` crate's UTS #46 ToASCII with Go's `idna.Lookup`
//! profile: nontransitional (`ß` stays, `xn--strae-oqa`), the STD3 ASCII rules,
//! hyphens checked, joiners and bidi rules checked, DNS lengths not verified (Go's
//! lookup converts `bücher..example` and lets the resolver refuse the empty label).

use std::borrow::Cow;
use std::sync::Mutex;

use idna::uts46::{AsciiDenyList, DnsLength, Hyphens, Uts46};

/// A host written otherwise than the URL holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Known {
    /// The host in the [`http::Uri`]: its IDNA form, or a reserved name when refused.
    held: String,
    /// The host as written (Go's `URL.Hostname()`).
    written: String,
    /// Whether Go's conversion refused it (then Go dials `written` itself).
    refused: bool,
}

static KNOWN: Mutex<Vec<Known>> = Mutex::new(Vec::new());

fn known() -> std::sync::MutexGuard<'static, Vec<Known>> {
    KNOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Go's `idnaASCII` (net/http): an ASCII host as it is, else its IDNA form by
/// `idna.Lookup.ToASCII`; `None` when the conversion fails.
pub fn to_ascii(host: &str) -> Option<String> {
    if host.is_ascii() {
        return Some(host.to_string());
    }
    Uts46::new()
        .to_ascii(
            host.as_bytes(),
            AsciiDenyList::STD3,
            Hyphens::Check,
            DnsLength::Ignore,
        )
        .ok()
        .map(Cow::into_owned)
}

/// The parts of an authority: userinfo with its `@`, host, and `:port` (empty when
/// absent). An IPv6 literal keeps its brackets.
fn split_authority(authority: &str) -> (&str, &str, &str) {
    let at = authority.rfind('@').map_or(0, |i| i + 1);
    let (userinfo, hostport) = authority.split_at(at);
    let port_at = match hostport.rfind(':') {
        Some(i) if !hostport[i..].contains(']') => i,
        _ => hostport.len(),
    };
    let (host, port) = hostport.split_at(port_at);
    (userinfo, host, port)
}

/// Whether Go's `url.Parse` takes `c` in a host (`shouldEscape` in host mode is false
/// for it; anything else not ASCII is taken as it is).
fn host_char(c: char) -> bool {
    !c.is_ascii() || c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:[]<>\"".contains(c)
}

/// `url` with its host in the form the client holds: a host that is not ASCII is
/// replaced by its IDNA form (or, when the conversion fails, a reserved name that
/// [`refused`] knows), and remembered with its written form. Anything else — an ASCII
/// host, no `scheme://`, a host Go's `url.Parse` would refuse — is returned as it is,
/// for the caller's parser to judge as before.
pub fn ascii_url(url: &str) -> Cow<'_, str> {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return Cow::Borrowed(url);
    };
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let (_, host, _) = split_authority(&url[start..end]);
    if host.is_ascii() || host.starts_with('[') || !host.chars().all(host_char) {
        return Cow::Borrowed(url);
    }
    let host_at = url[start..end].rfind(host).map_or(start, |i| start + i);
    let held = remember(host);
    Cow::Owned(format!(
        "{}{held}{}",
        &url[..host_at],
        &url[host_at + host.len()..]
    ))
}

/// The host the URL holds for the written `host`, remembered.
fn remember(host: &str) -> String {
    let mut known = known();
    if let Some(k) = known.iter().find(|k| k.written == host) {
        return k.held.clone();
    }
    let (held, refused) = match to_ascii(host) {
        Some(ascii) => (ascii, false),
        None => {
            let n = known.iter().filter(|k| k.refused).count();
            (format!("idna-refused-{n}.invalid"), true)
        }
    };
    // One written form per held host: a second written form of the same IDNA host
    // (`BÜCHER` beside `bücher`) is the last one given, the one in use.
    known.retain(|k| k.held != held);
    known.push(Known {
        held: held.clone(),
        written: host.to_string(),
        refused,
    });
    held
}

/// The written host for the host `held` of a URL, if it was written otherwise.
fn written(held: &str) -> Option<(String, bool)> {
    known()
        .iter()
        .find(|k| k.held == held)
        .map(|k| (k.written.clone(), k.refused))
}

/// The host as written, when the client holds `host` for one that Go's conversion
/// refused: the connector fails it as Go's resolver does, without a lookup.
pub fn refused(host: &str) -> Option<String> {
    written(host).and_then(|(written, refused)| refused.then_some(written))
}

/// Go's `escape(host, encodeHost)`: every byte that is not ASCII percent-encoded (the
/// ASCII a host may hold passed `url.Parse` already).
fn escape_host(host: &str) -> String {
    let mut out = String::with_capacity(host.len() * 3);
    for c in host.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// `authority` with its host replaced by `f` of the written host, when it was
/// written otherwise.
fn map_authority(authority: &str, f: impl FnOnce(&str) -> String) -> Cow<'_, str> {
    let (userinfo, host, port) = split_authority(authority);
    match written(host) {
        Some((written, _)) => Cow::Owned(format!("{userinfo}{}{port}", f(&written))),
        None => Cow::Borrowed(authority),
    }
}

/// The authority as Go's `URL.String` prints it: a host written otherwise than held
/// percent-encoded (`b%C3%BCcher.example:6443`).
pub fn shown_authority(authority: &str) -> Cow<'_, str> {
    map_authority(authority, escape_host)
}

/// The authority as Go's `url.Parse` reads it (`URL.Host`): the host as written
/// (`bücher.example:6443`), which kubectl names in `The connection to the server …
/// was refused` and in its discovery cache's directory.
pub fn written_authority(authority: &str) -> Cow<'_, str> {
    map_authority(authority, str::to_string)
}

/// `uri` as Go's `URL.String` prints it ([`shown_authority`]).
pub fn shown_uri(uri: &http::Uri) -> String {
    let text = uri.to_string();
    let Some(authority) = uri.authority().map(|a| a.as_str()) else {
        return text;
    };
    match shown_authority(authority) {
        Cow::Borrowed(_) => text,
        Cow::Owned(shown) => text.replacen(authority, &shown, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conversion_is_go_s_lookup_profile() {
        // Each as kubectl 1.37 dialled it (`dial tcp: lookup …`), measured.
        for (written, ascii) in [
            ("bücher.invalid", "xn--bcher-kva.invalid"),
            ("BÜCHER.invalid", "xn--bcher-kva.invalid"),
            ("кубер.invalid", "xn--90ain0am.invalid"),
            ("ünï✓", "xn--n-nga1b6211a"),
            // Nontransitional: ß is kept.
            ("straße.invalid", "xn--strae-oqa.invalid"),
            ("ab☃.invalid", "xn--ab-gsx.invalid"),
            // Mapped to ASCII altogether (fullwidth letters).
            ("ＢＵＣＨ.invalid", "buch.invalid"),
            ("عربي.invalid", "xn--ngbrx4e.invalid"),
            ("bücher.invalid.", "xn--bcher-kva.invalid."),
            // The empty label is the resolver's to refuse.
            ("bücher..invalid", "xn--bcher-kva..invalid"),
            // ASCII is left as it is, case and `_` too.
            ("A_b.invalid", "A_b.invalid"),
        ] {
            assert_eq!(to_ascii(written).as_deref(), Some(ascii), "{written}");
        }
        // Refused: a leading hyphen, `_` (STD3), a joiner out of place.
        for refused in ["-bücher.invalid", "bü_cher.invalid", "a\u{200d}b.invalid"] {
            assert_eq!(to_ascii(refused), None, "{refused}");
        }
    }

    #[test]
    fn a_url_holds_the_idna_host_and_prints_the_written_one() {
        let url = ascii_url("https://u:p@Bücher-test.invalid:6443/pfx?x=1");
        assert_eq!(url, "https://u:p@xn--bcher-test-9db.invalid:6443/pfx?x=1");
        let uri: http::Uri = url.parse().expect("uri");
        assert_eq!(uri.host(), Some("xn--bcher-test-9db.invalid"));
        assert_eq!(
            shown_uri(&uri),
            "https://u:p@B%C3%BCcher-test.invalid:6443/pfx?x=1"
        );
        assert_eq!(
            written_authority(uri.authority().expect("authority").as_str()),
            "u:p@Bücher-test.invalid:6443"
        );
        assert_eq!(refused("xn--bcher-test-9db.invalid"), None);
        // Without a port or a path.
        assert_eq!(
            ascii_url("http://wörter.invalid"),
            "http://xn--wrter-jua.invalid"
        );
        assert_eq!(
            shown_authority("xn--wrter-jua.invalid"),
            "w%C3%B6rter.invalid"
        );
    }

    #[test]
    fn a_refused_host_is_held_as_a_name_that_never_resolves() {
        let url = ascii_url("https://-nö.invalid:6443");
        let uri: http::Uri = url.parse().expect("uri");
        let held = uri.host().expect("host");
        assert!(held.ends_with(".invalid") && held.is_ascii(), "{held}");
        assert_eq!(refused(held).as_deref(), Some("-nö.invalid"));
        assert_eq!(shown_uri(&uri), "https://-n%C3%B6.invalid:6443/");
    }

    #[test]
    fn what_is_not_an_idn_is_left_to_the_parser() {
        for url in [
            "https://ascii.invalid:6443/ü",
            "bücher.invalid",
            "https://bü cher.invalid",
            "https://[::1]:6443",
            "https://ü:p@ascii.invalid",
        ] {
            assert!(matches!(ascii_url(url), Cow::Borrowed(_)), "{url}");
        }
        // An ASCII host nobody wrote otherwise prints as it is.
        let uri: http::Uri = "https://127.0.0.1:6443/api".parse().expect("uri");
        assert_eq!(shown_uri(&uri), "https://127.0.0.1:6443/api");
    }
}
