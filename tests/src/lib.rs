//! Test infrastructure for kubeplug: a real local control plane, a simulated node
//! standing in for the kubelet, and the harness the end-to-end tests use.
//!
//! - [`controlplane`]: etcd + kube-apiserver + kube-controller-manager on loopback.
//! - [`bootstrap`]: what a fresh cluster needs before tests (the limited user's RBAC).
//! - [`faults`]: real faults for e2e tests: a loopback API proxy that SIGKILLs a
//!   client right after the server applied its k-th write, signals to control-plane
//!   processes, and the rolling-update invariant checker.
//! - [`harness`]: one control plane per test run, one namespace per test, helpers to
//!   run the plugins directly and through the real `kubectl`.
//! - The `kubeplug-cluster` binary supervises a control plane plus the simulated node;
//!   `cargo xtask cluster up|down|env` and the harness both start it.

pub mod bootstrap;
pub mod controlplane;
pub mod faults;
pub mod harness;
pub mod node;
/// The state file, from [`localcluster`] (which xtask links instead of this crate).
pub use localcluster::{krew_binary, state};
