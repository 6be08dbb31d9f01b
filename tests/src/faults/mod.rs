//! Real faults for end-to-end tests, never a fake API:
//! - [`proxy::ApiProxy`]: a loopback TLS proxy in front of the real API server that
//!   counts applied writes and SIGKILLs a client right after the k-th one;
//! - [`ControlPlane`]: SIGSTOP/SIGCONT of the cluster's own processes (a paused API
//!   server black-holes every request; a paused controller-manager stalls the garbage
//!   collector and the ReplicationController manager);
//! - [`invariants::RcInvariants`]: what a rolling update must preserve, watched over
//!   the whole run and checked at the end.

pub mod invariants;
pub mod proxy;

use std::path::Path;

use anyhow::anyhow;

use crate::state::ClusterState;

/// The processes of a running `kubeplug-cluster`, found through its state file (the
/// directory holding the cluster's kubeconfig).
pub struct ControlPlane {
    state: ClusterState,
}

/// A paused process, resumed when dropped (so a failing test never leaves the shared
/// cluster frozen).
pub struct Paused {
    pid: u32,
}

impl Drop for Paused {
    fn drop(&mut self) {
        crate::controlplane::signal(self.pid, libc::SIGCONT);
    }
}

impl ControlPlane {
    pub fn of(kubeconfig: &Path) -> anyhow::Result<Self> {
        let dir = kubeconfig
            .parent()
            .ok_or_else(|| anyhow!("kubeconfig has no directory"))?;
        let state = ClusterState::read(dir)?
            .ok_or_else(|| anyhow!("no cluster state file in {}", dir.display()))?;
        Ok(ControlPlane { state })
    }

    fn pid(&self, name: &str) -> anyhow::Result<u32> {
        self.state
            .processes
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.pid)
            .ok_or_else(|| anyhow!("no process {name} in the cluster state"))
    }

    /// Stops `name` (`kube-apiserver`, `kube-controller-manager`, `etcd`) with
    /// SIGSTOP until the guard drops.
    pub fn pause(&self, name: &str) -> anyhow::Result<Paused> {
        let pid = self.pid(name)?;
        anyhow::ensure!(
            crate::controlplane::signal(pid, libc::SIGSTOP),
            "cannot stop {name}"
        );
        Ok(Paused { pid })
    }
}
