//! The process's TLS crypto provider, chosen once before any client is built.
//!
//! A bottom module: `flags`, `resource`, `rest`, `completion` and the binaries all build
//! clients, and none of them should reach up into `cli` for this.

use std::sync::Once;

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
