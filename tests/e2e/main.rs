//! End-to-end tests against a real local control plane (see `tests::harness`).
//!
//! One test binary, one module per area:
//! - `smoke`: the foundation — the control plane, the simulated node, the real
//!   controller-manager, RBAC, and kubectl's plugin lookup of our binaries.
//! - `rolling_update`: `kubectl rolling-update` (issue 5).

mod rolling_update;
mod smoke;
