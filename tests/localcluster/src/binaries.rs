//! Where the control-plane binaries come from.
//!
//! Lookup order, first complete set wins:
//! 1. `KUBEBUILDER_ASSETS`: the envtest convention, a folder with `kube-apiserver`,
//!    `etcd` and optionally `kube-controller-manager`;
//! 2. the cache that `cargo xtask testenv` fills (built from Debian's `kubernetes`
//!    source package), with `etcd` from Debian's `etcd-server`;
//! 3. `PATH`.

use std::path::{Path, PathBuf};

/// The Kubernetes version `cargo xtask testenv` builds (Debian bookworm's source package).
pub const KUBERNETES_VERSION: &str = "v1.20.2";

/// The three programs a control plane needs.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub etcd: PathBuf,
    pub kube_apiserver: PathBuf,
    /// Optional with `KUBEBUILDER_ASSETS` (envtest ships none); without it there are no
    /// controllers, and the tests that need them say so.
    pub kube_controller_manager: Option<PathBuf>,
}

/// Why the binaries could not be found.
#[derive(Debug, thiserror::Error)]
#[error(
    "the local control plane is not installed ({missing} not found in {searched}); run `cargo xtask testenv` to build it"
)]
pub struct NotInstalled {
    pub missing: String,
    pub searched: String,
}

/// The user cache directory kubeplug keeps built binaries in, keyed by version.
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| std::env::temp_dir().join("kubeplug-cache"));
    base.join("kubeplug")
        .join(format!("kubernetes-{KUBERNETES_VERSION}"))
}

/// Where `cargo xtask testenv` puts `kube-apiserver` and `kube-controller-manager`.
pub fn cache_bin_dir() -> PathBuf {
    cache_dir().join("bin")
}

impl Binaries {
    /// Finds the binaries, or says exactly what is missing.
    pub fn locate() -> Result<Self, NotInstalled> {
        if let Some(assets) = std::env::var_os("KUBEBUILDER_ASSETS").filter(|v| !v.is_empty()) {
            let dir = PathBuf::from(assets);
            let found = |name: &str| executable(&dir.join(name));
            return match (found("etcd"), found("kube-apiserver")) {
                (Some(etcd), Some(kube_apiserver)) => Ok(Self {
                    etcd,
                    kube_apiserver,
                    kube_controller_manager: found("kube-controller-manager"),
                }),
                (etcd, _) => Err(NotInstalled {
                    missing: if etcd.is_none() {
                        "etcd"
                    } else {
                        "kube-apiserver"
                    }
                    .into(),
                    searched: format!("KUBEBUILDER_ASSETS={}", dir.display()),
                }),
            };
        }
        let cache = cache_bin_dir();
        let find = |name: &str| executable(&cache.join(name)).or_else(|| which::which(name).ok());
        let searched = format!("{} and PATH", cache.display());
        let etcd = find("etcd").ok_or_else(|| NotInstalled {
            missing: "etcd".into(),
            searched: searched.clone(),
        })?;
        let kube_apiserver = find("kube-apiserver").ok_or_else(|| NotInstalled {
            missing: "kube-apiserver".into(),
            searched: searched.clone(),
        })?;
        let kube_controller_manager =
            find("kube-controller-manager").ok_or_else(|| NotInstalled {
                missing: "kube-controller-manager".into(),
                searched,
            })?;
        Ok(Self {
            etcd,
            kube_apiserver,
            kube_controller_manager: Some(kube_controller_manager),
        })
    }
}

#[cfg(unix)]
fn executable(path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    (meta.is_file() && meta.permissions().mode() & 0o111 != 0).then(|| path.to_path_buf())
}

/// Windows has no execute bit; the control plane does not run there anyway, but xtask
/// (which reports what is installed) builds there.
#[cfg(not(unix))]
fn executable(path: &Path) -> Option<PathBuf> {
    path.is_file().then(|| path.to_path_buf())
}
