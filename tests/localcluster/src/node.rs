//! STAND-IN (replaced by the testenv branch's module at merge): where a real node's programs are.
use std::path::PathBuf;

use crate::{NotInstalled, Release};

pub const SANDBOX_IMAGE: &str = "registry.k8s.io/pause:3.10";

#[derive(Debug, Clone)]
pub struct NodeBinaries {
    pub release: Release,
    pub kubelet: PathBuf,
    pub kube_proxy: Option<PathBuf>,
    pub containerd: PathBuf,
    pub ctr: PathBuf,
    pub runc: PathBuf,
    pub cni_bin_dir: PathBuf,
    pub registry: PathBuf,
    pub image_store: PathBuf,
}

impl NodeBinaries {
    pub fn locate(release: Release) -> Result<Self, NotInstalled> {
        let missing = |what: &str| NotInstalled {
            release,
            missing: what.to_string(),
            searched: release.bin_dir().display().to_string(),
        };
        let kubelet = std::env::var_os("KP_KUBELET")
            .map(PathBuf::from)
            .unwrap_or_else(|| release.bin_dir().join("kubelet"));
        if !kubelet.is_file() {
            return Err(missing("kubelet"));
        }
        let image_store = std::env::var_os("KP_STORE")
            .map(PathBuf::from)
            .unwrap_or_else(|| crate::cache_root().join("images").join("registry"));
        if !image_store.is_dir() {
            return Err(missing("the image store"));
        }
        Ok(Self {
            release,
            kubelet,
            kube_proxy: None,
            containerd: "/usr/bin/containerd".into(),
            ctr: "/usr/bin/ctr".into(),
            runc: "/usr/sbin/runc".into(),
            cni_bin_dir: "/usr/lib/cni".into(),
            registry: "/usr/bin/docker-registry".into(),
            image_store,
        })
    }
}
