//! Certificates, keys and tokens for a throwaway control plane.
//!
//! Everything is generated fresh per cluster with rcgen (ECDSA P-256, which
//! kube-apiserver 1.20 accepts for serving, client CA and service-account keys).

use std::net::{IpAddr, Ipv4Addr};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
};

/// PEM material written to the state directory.
pub struct Pki {
    pub ca_cert: String,
    pub serving_cert: String,
    pub serving_key: String,
    pub service_account_key: String,
    pub service_account_pub: String,
}

impl Pki {
    /// A CA, a serving certificate for 127.0.0.1/localhost/kubernetes(.default…), and a
    /// service-account signing key pair.
    pub fn generate() -> Result<Self, rcgen::Error> {
        let ca_key = KeyPair::generate()?;
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.distinguished_name
            .push(DnType::CommonName, "kubeplug-local-ca");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca, &ca_key);

        let serving_key = KeyPair::generate()?;
        let mut serving = CertificateParams::new(vec![
            "localhost".to_string(),
            "kubernetes".to_string(),
            "kubernetes.default".to_string(),
            "kubernetes.default.svc".to_string(),
            "kubernetes.default.svc.cluster.local".to_string(),
        ])?;
        serving
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        // The first address of --service-cluster-ip-range: the `kubernetes` Service.
        serving
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::new(10, 96, 0, 1))));
        // The node IP, where pods and the kubelet of a real node reach the server.
        serving
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::V4(super::NODE_IP)));
        serving
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        let serving_cert = serving.signed_by(&serving_key, &issuer)?;

        let sa_key = KeyPair::generate()?;
        Ok(Self {
            ca_cert: ca_cert.pem(),
            serving_cert: serving_cert.pem(),
            serving_key: serving_key.serialize_pem(),
            service_account_key: sa_key.serialize_pem(),
            service_account_pub: sa_key.public_key_pem(),
        })
    }
}

/// A random bearer token (32 hex characters) from the kernel's CSPRNG.
pub fn random_token() -> std::io::Result<String> {
    use std::io::Read;
    // Linux-only like the rest of the control plane; /dev/urandom avoids a dependency
    // for sixteen bytes.
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
