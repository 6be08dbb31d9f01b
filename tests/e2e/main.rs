//! End-to-end tests against a real local control plane (see `tests::harness`).
//!
//! One test binary, one module per area:
//! - `dist`: `cargo xtask install` and kubectl finding, running and completing the plugins.
//! - `smoke`: the foundation — the control plane, the simulated node, the real
//!   controller-manager, RBAC, and kubectl's plugin lookup of our binaries.

mod dist;
mod smoke;
