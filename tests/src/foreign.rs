//! What the test cluster does not know, for the error paths: a port nothing listens
//! on, a CA that signed nothing the server has, and klog's lines that kubectl adds to
//! its stderr and a plugin does not.

/// A port on 127.0.0.1 that nothing listens on (bound, then released).
pub fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind a loopback port")
        .local_addr()
        .expect("its address")
        .port()
}

/// A CA certificate (PEM) that signed nothing the server has.
pub fn foreign_ca() -> String {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let key = KeyPair::generate().expect("a key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca.distinguished_name
        .push(DnType::CommonName, "kubeplug-second-ca");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.self_signed(&key).expect("a self-signed CA").pem()
}

/// stderr without klog's lines (`E1126 01:02:03.456789   123 file.go:1] …`: a
/// severity letter, four digits of month and day, then a space), which kubectl's
/// discovery adds and a plugin has no use for; every other line kept, each ending in
/// a line break.
pub fn without_klog(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|line| {
            let b = line.as_bytes();
            !(b.len() > 5
                && matches!(b[0], b'E' | b'W' | b'I')
                && b[1..5].iter().all(u8::is_ascii_digit)
                && b[5] == b' ')
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_klog_lines_go() {
        let stderr = "E1126 01:02:03.456789   123 memcache.go:265] couldn't get\n\
                      error: E1126 is not a klog line here\n\
                      W1126x not klog either\n\
                      I1126 01:02:03.456789   123 x.go:1] gone\n";
        assert_eq!(
            without_klog(stderr),
            "error: E1126 is not a klog line here\nW1126x not klog either\n"
        );
    }
}
