//! The addresses of kubeplug's local test cluster, without the cluster itself: where
//! the control-plane binaries are ([`Binaries`]), what a real node runs and where
//! (`node`: [`NodeBinaries`], the test images), the state file a running
//! `kubeplug-cluster` writes ([`state::ClusterState`]), probes of its processes, a
//! client for one of its contexts, how test pods are made to behave on the node
//! (`steering`: readiness probes and commands), and the latency proxy the e2e tests and the bench both put in front
//! of it. [`detached::Supervisor`] builds, starts and stops a cluster that outlives its
//! caller (`cargo xtask cluster`, the demo, the bench).
//!
//! The `tests` crate (the supervisor, the real node, the harness) re-exports all
//! of it; `xtask` and `bench` link only this crate and run `kubeplug-cluster` as a program, so
//! `cargo xtask dist|install` never compile the test infrastructure (which is
//! Linux-only) and xtask builds on every release platform.

mod binaries;
#[cfg(target_os = "linux")]
pub mod detached;
pub mod host;
pub mod latency;
pub mod node;
pub mod process;
pub mod state;
pub mod steering;

use std::path::Path;

pub use binaries::{
    Binaries, KREW_VERSION, NotInstalled, RELEASE_ENV, Release, UnknownRelease, cache_root,
    krew_binary,
};
pub use node::{IMAGES, NodeBinaries, SANDBOX_IMAGE};

/// Builds a client for one context of a kubeconfig file.
pub async fn client_for(kubeconfig: &Path, context: &str) -> anyhow::Result<kube::Client> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let kc = kube::config::Kubeconfig::read_from(kubeconfig)?;
    let options = kube::config::KubeConfigOptions {
        context: Some(context.to_string()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kc, &options).await?;
    Ok(kube::Client::try_from(config)?)
}
