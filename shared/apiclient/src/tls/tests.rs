//! Client TLS material read as Go's `tls.X509KeyPair` reads it.

use super::*;

fn pair() -> (String, String) {
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = rcgen::CertificateParams::new(vec!["client".to_string()])
        .expect("params")
        .self_signed(&key)
        .expect("certificate");
    (cert.pem(), key.serialize_pem())
}

#[test]
fn a_certificate_and_its_key_make_an_identity() {
    let (cert, key) = pair();
    let identity = Identity::from_pem(cert.as_bytes(), key.as_bytes()).expect("identity");
    assert_eq!(identity.chain.len(), 1);
    client_config(None, Some(identity), false).expect("config");
}

#[test]
fn bad_material_gets_go_s_words_and_no_key_text() {
    let (cert, key) = pair();
    let err = |cert: &str, key: &str| -> String {
        match Identity::from_pem(cert.as_bytes(), key.as_bytes()) {
            Ok(identity) => client_config(None, Some(identity), false)
                .expect_err("refused")
                .to_string(),
            Err(e) => e.to_string(),
        }
    };
    assert_eq!(
        err("not pem", &key),
        "tls: failed to find any PEM data in certificate input"
    );
    // A block that is not base64 is skipped, so nothing is found.
    let garbage = "-----BEGIN PRIVATE KEY-----\nnot!base64$$\n-----END PRIVATE KEY-----\n";
    assert_eq!(
        err(&cert, garbage),
        "tls: failed to find any PEM data in key input"
    );
    let not_a_key = "-----BEGIN PRIVATE KEY-----\nQUJDRA==\n-----END PRIVATE KEY-----\n";
    assert_eq!(err(&cert, not_a_key), "tls: failed to parse private key");
    let (_, other_key) = pair();
    assert_eq!(
        err(&cert, &other_key),
        "tls: private key does not match public key"
    );
    // The key's text is never in a message: the blocks after a bad one are still read.
    let both = format!("{garbage}{key}");
    assert!(Identity::from_pem(cert.as_bytes(), both.as_bytes()).is_ok());
}

#[test]
fn roots_that_are_not_certificates_are_refused() {
    let err = client_config(Some(&[vec![0x30, 0x00]]), None, false).expect_err("refused");
    assert!(
        err.to_string()
            .starts_with("unable to load root certificates: "),
        "{err}"
    );
    // Without roots the OS verifier is used; insecure replaces any verifier.
    client_config(None, None, false).expect("platform verifier");
    client_config(None, None, true).expect("insecure");
}
