//! End-to-end tests against a real local control plane (see `tests::harness`).
//!
//! One test binary, one module per area:
//! - `run_pod`: `kubectl run-pod` (plugin issue 3).
//! - `smoke`: the foundation — the control plane, the simulated node, the real
//!   controller-manager, RBAC, and kubectl's plugin lookup of our binaries.
//! - `node`: the simulated node's behaviour (binding, steering annotations,
//!   restart policies, deletion, node health).

mod node;
mod run_pod;
//! - `create_file`: `kubectl create-file` — inputs, ordering, errors, dry runs.
mod create_file;
//! - `rolling_update`: `kubectl rolling-update` (issue 5).
mod rolling_update;
mod smoke;
