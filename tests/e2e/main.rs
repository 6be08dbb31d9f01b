//! End-to-end tests against a real local control plane (see `tests::harness`).
//!
//! One test binary, one module per area:
//! - `smoke`: the foundation — the control plane, the simulated node, the real
//!   controller-manager, RBAC, and kubectl's plugin lookup of our binaries.
//! - `node`: the simulated node's behaviour (binding, steering annotations,
//!   restart policies, deletion, node health).
//! - `kubelet`: the node as a process kubelet (container commands as processes,
//!   `kubectl logs`/`attach`/`exec`, kube-rs attach, terminals).

mod kubelet;
mod node;
mod smoke;
