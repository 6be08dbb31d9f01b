//! End-to-end tests against a real local control plane (see `tests::harness`).
//!
//! One test binary, one module per area:
//! - `smoke`: the foundation — the control plane, the simulated node, the real
//!   controller-manager, RBAC, and kubectl's plugin lookup of our binaries.
//! - `create_file`: `kubectl create-file` — inputs, ordering, errors, dry runs.

mod create_file;
mod smoke;
