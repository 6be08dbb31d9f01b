//! TLS for every client the plugins build: the process's crypto provider, chosen once,
//! and the rustls configuration of a client (whom it trusts, who it is).
//!
//! A bottom module: `flags`, `resource`, `rest`, `completion` and the binaries all build
//! clients, and none of them should reach up into `cli` for this.
//!
//! The client certificate and key are read as Go's `tls.X509KeyPair` reads them, and
//! their failures carry its words (`tls: failed to parse private key`), which is what
//! kubectl prints for a kubeconfig's bad key. Never the key's text: a message about a
//! key must not quote it.

use std::sync::{Arc, Once};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::{self, SectionKind};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// Installs rustls's `ring` provider once. kube uses `ring`; if another crate in the
/// tree ever enables `aws-lc-rs`, rustls cannot choose and kube's client panics, so
/// the choice is made explicitly here.
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means another provider was installed first, which is equally fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Why a client's TLS configuration could not be made, in Go's words where kubectl
/// shows Go's.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("tls: failed to find any PEM data in certificate input")]
    NoCertificate,
    #[error("tls: failed to find any PEM data in key input")]
    NoKey,
    #[error("tls: failed to parse private key")]
    BadKey,
    #[error("tls: private key does not match public key")]
    KeyMismatch,
    /// client-go: `unable to load root certificates: …`.
    #[error("unable to load root certificates: {0}")]
    Roots(String),
    /// The OS's verifier could not be set up.
    #[error("unable to use the system's certificate verifier: {0}")]
    Platform(rustls::Error),
}

/// A client certificate chain and its key (the kubeconfig's, or an exec plugin's).
#[derive(Debug)]
pub struct Identity {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

impl Identity {
    /// Go's `tls.X509KeyPair`: every `CERTIFICATE` block of `cert`, and the first
    /// private-key block of `key`. A block that is not valid base64 is skipped, as Go's
    /// `pem.Decode` skips it.
    pub fn from_pem(cert: &[u8], key: &[u8]) -> Result<Self, TlsError> {
        let chain: Vec<CertificateDer<'static>> = pem_blocks(cert)
            .filter(|(kind, _)| *kind == SectionKind::Certificate)
            .map(|(_, der)| CertificateDer::from(der))
            .collect();
        if chain.is_empty() {
            return Err(TlsError::NoCertificate);
        }
        let key = pem_blocks(key)
            .find_map(|(kind, der)| match kind {
                SectionKind::PrivateKey => Some(PrivateKeyDer::Pkcs8(der.into())),
                SectionKind::RsaPrivateKey => Some(PrivateKeyDer::Pkcs1(der.into())),
                SectionKind::EcPrivateKey => Some(PrivateKeyDer::Sec1(der.into())),
                _ => None,
            })
            .ok_or(TlsError::NoKey)?;
        Ok(Self { chain, key })
    }
}

/// The PEM blocks of `data` that decode, in order.
fn pem_blocks(data: &[u8]) -> impl Iterator<Item = (SectionKind, Vec<u8>)> + '_ {
    let mut reader = std::io::Cursor::new(data);
    std::iter::from_fn(move || {
        loop {
            match pem::from_buf(&mut reader) {
                Ok(Some(block)) => return Some(block),
                Ok(None) => return None,
                // A bad block: the reader has moved past it; go on with the rest.
                Err(_) if (reader.position() as usize) < data.len() => {}
                Err(_) => return None,
            }
        }
    })
}

/// The TLS configuration of a client: `roots` (DER) to verify the server with, or the
/// OS's verifier (its roots and policy) when there are none — as client-go leaves
/// `RootCAs` nil; `identity` to present; `insecure` turns verification off
/// (`insecure-skip-tls-verify`, never by default).
pub fn client_config(
    roots: Option<&[Vec<u8>]>,
    identity: Option<Identity>,
    insecure: bool,
) -> Result<ClientConfig, TlsError> {
    install_crypto_provider();
    let builder = match roots {
        Some(roots) => {
            let mut store = RootCertStore::empty();
            for der in roots {
                store
                    .add(CertificateDer::from(der.clone()))
                    .map_err(|e| TlsError::Roots(e.to_string()))?;
            }
            ClientConfig::builder().with_root_certificates(store)
        }
        None => {
            use rustls_platform_verifier::BuilderVerifierExt as _;
            ClientConfig::builder()
                .with_platform_verifier()
                .map_err(TlsError::Platform)?
        }
    };
    let mut config = match identity {
        Some(Identity { chain, key }) => {
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| match e {
                    rustls::Error::InconsistentKeys(_) => TlsError::KeyMismatch,
                    _ => TlsError::BadKey,
                })?
        }
        None => builder.with_no_client_auth(),
    };
    if insecure {
        config
            .dangerous()
            .set_certificate_verifier(Arc::new(NoVerification));
    }
    Ok(config)
}

/// `insecure-skip-tls-verify`: any server certificate is accepted. Signatures are
/// still checked with the provider's algorithms, so the handshake itself stays sound.
#[derive(Debug)]
struct NoVerification;

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &algorithms())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &algorithms())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        algorithms().supported_schemes()
    }
}

fn algorithms() -> rustls::crypto::WebPkiSupportedAlgorithms {
    rustls::crypto::ring::default_provider().signature_verification_algorithms
}

#[cfg(test)]
mod tests;
