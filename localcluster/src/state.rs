//! The state file of a running `kubeplug-cluster`: what `cargo xtask cluster down|env`
//! and the harness read to find (and stop) it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file name inside the state directory.
pub const STATE_FILE: &str = "cluster.json";

/// One supervised program.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProcessEntry {
    pub name: String,
    pub pid: u32,
}

/// Everything a client of the cluster needs to know.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterState {
    pub supervisor_pid: u32,
    /// The Kubernetes version it runs (`v1.37.2`); empty in files written before the
    /// cluster had a choice, which ran 1.20.2.
    #[serde(default)]
    pub kubernetes: String,
    pub server: String,
    pub kubeconfig: PathBuf,
    pub ca_cert: PathBuf,
    pub audit_log: Option<PathBuf>,
    pub processes: Vec<ProcessEntry>,
    /// With a real node: the network namespace the cluster runs in (`/run/netns/NAME`;
    /// `nsenter --net=/run/netns/NAME` reaches the node IP and the pods).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netns: Option<String>,
    /// With a real node: its run directory (containerd's socket is `containerd.sock`
    /// there, for `ctr --address`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_run_dir: Option<PathBuf>,
}

impl ClusterState {
    pub fn path(state_dir: &Path) -> PathBuf {
        state_dir.join(STATE_FILE)
    }

    /// Writes the file atomically (write + rename) so readers never see half of it.
    pub fn write(&self, state_dir: &Path) -> std::io::Result<()> {
        let tmp = state_dir.join(format!("{STATE_FILE}.tmp"));
        std::fs::write(&tmp, serde_json::to_vec_pretty(self)?)?;
        std::fs::rename(tmp, Self::path(state_dir))
    }

    /// Reads the file; `Ok(None)` if there is none.
    pub fn read(state_dir: &Path) -> anyhow::Result<Option<Self>> {
        let path = Self::path(state_dir);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(serde_json::from_slice(&bytes).map_err(|e| {
                anyhow::anyhow!("corrupt cluster state file {}: {e}", path.display())
            })?)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
        }
    }

    pub fn remove(state_dir: &Path) {
        let _ = std::fs::remove_file(Self::path(state_dir));
    }

    /// The release this cluster runs.
    pub fn release(&self) -> Result<crate::Release, crate::UnknownRelease> {
        if self.kubernetes.is_empty() {
            return Ok(crate::Release::V1_20);
        }
        crate::Release::parse(&self.kubernetes)
    }

    /// Whether the supervisor is still running.
    #[cfg(unix)]
    pub fn is_running(&self) -> bool {
        crate::process::alive(self.supervisor_pid)
    }
}
