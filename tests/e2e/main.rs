//! End-to-end tests against a real local control plane (see `tests::harness`).
//!
//! One test binary, one module per area:
//! - `run_pod`: `kubectl run-pod` (plugin issue 3).
//! - `smoke`: the foundation — the control plane, the simulated node, the real
//!   controller-manager, RBAC, and kubectl's plugin lookup of our binaries.
//! - `create_file`: `kubectl create-file` — inputs, ordering, errors, dry runs.

mod create_file;
mod run_pod;
mod smoke;
