//! kubeplug's local test cluster: the `kubeplug-cluster` supervisor's parts and the
//! addresses xtask and the e2e harness reach the cluster by.
//!
//! Always built (xtask links only these, without the `supervisor` feature):
//! - where the control-plane binaries are ([`Binaries`]) and what a real node runs and
//!   where (`node`: [`NodeBinaries`], the test images);
//! - `state`: the state file a running `kubeplug-cluster` writes
//!   ([`state::ClusterState`]); `process`: probes of its processes; `host`: what a
//!   node changes on the host, to check it was left as it was;
//! - a client for one of its contexts ([`client_for`]); `steering`: how test pods are
//!   made to behave on the node (readiness probes and commands);
//! - `latency`: the latency proxy the e2e tests and the bench both put in front of it.
//!
//! With the `supervisor` feature (the default; Linux only), the cluster itself:
//! - `controlplane`: etcd + kube-apiserver + kube-controller-manager +
//!   kube-scheduler, in the cluster's network namespace;
//! - `realnode`: the node: containerd, the kubelet, kube-proxy, the image registry,
//!   and the host left as it was;
//! - `bootstrap`: what a fresh cluster needs before tests (the limited user's RBAC);
//! - the `kubeplug-cluster` binary supervises a control plane plus the real node;
//!   `cargo xtask cluster up|down|env`, `cargo xtask demo` and the e2e harness
//!   (`tests`) all start it.
//!
//! [`detached::Supervisor`] builds, starts and stops a cluster that outlives its
//! caller (`cargo xtask cluster`, the demo, the bench).
//!
//! xtask runs `kubeplug-cluster` as a program, so `cargo xtask dist|install` never
//! compile the supervisor (which is Linux-only) and xtask builds on every release
//! platform.

mod binaries;
#[cfg(feature = "supervisor")]
pub mod bootstrap;
#[cfg(feature = "supervisor")]
pub mod controlplane;
#[cfg(target_os = "linux")]
pub mod detached;
pub mod host;
pub mod latency;
pub mod node;
pub mod process;
#[cfg(feature = "supervisor")]
pub mod realnode;
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
