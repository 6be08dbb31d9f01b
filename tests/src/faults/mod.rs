//! Real faults for end-to-end tests, never a fake API:
//! - [`proxy::ApiProxy`]: a loopback TLS proxy in front of the real API server that
//!   counts applied writes and SIGKILLs a client right after the k-th one;
//! - [`ControlPlane`]: SIGSTOP/SIGCONT of the cluster's own processes (a paused API
//!   server black-holes every request; a paused controller-manager stalls the garbage
//!   collector and the ReplicationController manager) and a restart of the API
//!   server on the same etcd; used on `harness::isolated_cluster`, never on the
//!   cluster the other tests share;
//! - [`latency::LatencyProxy`]: a loopback TCP proxy that adds a round-trip time (a
//!   far-away API server), for e2e tests and `cargo xtask bench`;
//! - [`webhook::HoldingWebhook`]: an admission webhook on loopback that holds one
//!   object's create until the test releases it (a slow early object, made by the
//!   API server itself);
//! - [`invariants::RcInvariants`]: what a rolling update must preserve, watched over
//!   the whole run and checked at the end.

pub mod invariants;
pub use localcluster::latency;
pub mod proxy;
pub mod webhook;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::anyhow;

use localcluster::state::ClusterState;

/// The processes of a running `kubeplug-cluster`, found through its state file (the
/// directory holding the cluster's kubeconfig).
pub struct ControlPlane {
    dir: PathBuf,
}

/// A paused process, resumed when dropped (so a failing test never leaves the
/// cluster frozen).
pub struct Paused {
    pid: u32,
}

impl Paused {
    /// Resumes the process now.
    pub fn resume(self) {}
}

impl Drop for Paused {
    fn drop(&mut self) {
        localcluster::controlplane::signal(self.pid, libc::SIGCONT);
    }
}

impl ControlPlane {
    pub fn of(kubeconfig: &Path) -> anyhow::Result<Self> {
        let dir = kubeconfig
            .parent()
            .ok_or_else(|| anyhow!("kubeconfig has no directory"))?;
        Ok(ControlPlane {
            dir: dir.to_path_buf(),
        })
    }

    fn state(&self) -> anyhow::Result<ClusterState> {
        ClusterState::read(&self.dir)?
            .ok_or_else(|| anyhow!("no cluster state file in {}", self.dir.display()))
    }

    fn pid(&self, name: &str) -> anyhow::Result<u32> {
        self.state()?
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
            localcluster::controlplane::signal(pid, libc::SIGSTOP),
            "cannot stop {name}"
        );
        Ok(Paused { pid })
    }

    /// Restarts kube-apiserver on the same etcd (the supervisor does it on
    /// SIGUSR1) and returns once the new one is in the state file; readiness is the
    /// caller's to wait for (a client simply retries until it answers).
    pub async fn restart_apiserver(&self) -> anyhow::Result<()> {
        let state = self.state()?;
        let before = self.pid("kube-apiserver")?;
        anyhow::ensure!(
            localcluster::controlplane::signal(state.supervisor_pid, libc::SIGUSR1),
            "the cluster supervisor is gone"
        );
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        while self.pid("kube-apiserver")? == before {
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "kube-apiserver was not restarted within 120 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }
}
