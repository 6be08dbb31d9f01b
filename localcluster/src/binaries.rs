//! Which Kubernetes the local cluster runs, and where its binaries come from.
//!
//! Two releases ([`Release`]), each for a reason:
//! - **current** (the default): the release users run today, built by `cargo xtask
//!   testenv` from its published Go modules. Its own kubectl, built from the same
//!   modules, is the byte-for-byte reference on it.
//! - **1.20.2**: the last server without server-side field validation, aggregated
//!   discovery or OpenAPI v3 — the paths kubectl still takes against old servers
//!   (client-side validation, the v2 document). Built from Debian's source package;
//!   the installed kubectl (1.32) is the reference on it.
//!
//! Lookup order for a release, first complete set wins:
//! 1. for the current release only, `KUBEBUILDER_ASSETS`: the envtest convention, a
//!    folder with `kube-apiserver`, `etcd` and optionally `kube-controller-manager`,
//!    `kube-scheduler` and `kubectl` of that release (envtest's assets are recent
//!    releases; 1.20.2 is never taken from there);
//! 2. the release's cache, which `cargo xtask testenv` fills;
//! 3. for 1.20.2 only, `PATH` (Debian's `etcd-server` puts its etcd there; a current
//!    apiserver needs the etcd built beside it).

use std::path::{Path, PathBuf};

/// A Kubernetes release the local cluster can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Release {
    /// The newest release that builds here from its Go modules (the default).
    Current,
    /// 1.20.2, from Debian bookworm's source package.
    V1_20,
}

/// The environment variable that picks the release of `cargo xtask cluster up`'s
/// default and of the e2e harness's shared cluster.
pub const RELEASE_ENV: &str = "KUBEPLUG_KUBERNETES";

impl Release {
    /// Every release, the default first.
    pub const ALL: [Release; 2] = [Release::Current, Release::V1_20];

    /// The version as Kubernetes writes it (`/version`'s `gitVersion`).
    pub fn version(self) -> &'static str {
        match self {
            Release::Current => "v1.37.2",
            Release::V1_20 => "v1.20.2",
        }
    }

    /// The minor version (37 for v1.37.2).
    pub fn minor(self) -> u32 {
        let v = self.version();
        v.split('.')
            .nth(1)
            .and_then(|m| m.parse().ok())
            .expect("versions are vMAJOR.MINOR.PATCH")
    }

    /// Reads `v1.37.2`, `1.37.2`, `1.37` or `current`.
    pub fn parse(text: &str) -> Result<Self, UnknownRelease> {
        let trimmed = text.trim();
        if trimmed.eq_ignore_ascii_case("current") {
            return Ok(Release::Current);
        }
        let bare = trimmed.strip_prefix('v').unwrap_or(trimmed);
        Self::ALL
            .into_iter()
            .find(|r| {
                let full = &r.version()[1..];
                bare == full
                    || full
                        .rsplit_once('.')
                        .is_some_and(|(minor, _)| bare == minor)
            })
            .ok_or_else(|| UnknownRelease(text.to_string()))
    }

    /// The release `KUBEPLUG_KUBERNETES` names, or the current one when it is unset.
    pub fn from_env() -> Result<Self, UnknownRelease> {
        match std::env::var(RELEASE_ENV) {
            Ok(v) if !v.trim().is_empty() => Self::parse(&v),
            _ => Ok(Release::Current),
        }
    }

    /// The user cache directory this release's binaries are kept in.
    pub fn cache_dir(self) -> PathBuf {
        cache_root().join(format!("kubernetes-{}", self.version()))
    }

    /// Where `cargo xtask testenv` puts this release's programs.
    pub fn bin_dir(self) -> PathBuf {
        self.cache_dir().join("bin")
    }
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.version())
    }
}

/// A release name that is not one of [`Release::ALL`].
#[derive(Debug, thiserror::Error)]
#[error("unknown Kubernetes release {0:?}: the local cluster runs {known}", known = Release::ALL.map(Release::version).join(" or "))]
pub struct UnknownRelease(pub String);

/// The programs a control plane needs.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub release: Release,
    pub etcd: PathBuf,
    pub kube_apiserver: PathBuf,
    /// Optional with `KUBEBUILDER_ASSETS` (envtest ships none); without it there are no
    /// controllers, and the tests that need them say so.
    pub kube_controller_manager: Option<PathBuf>,
    /// The release's own scheduler, which binds pods to the node; without one (an old
    /// cache), pods stay Pending and the cluster says so.
    pub kube_scheduler: Option<PathBuf>,
    /// kubectl of the release, the reference on its server; `None`: the one on `PATH`.
    pub kubectl: Option<PathBuf>,
}

/// Why the binaries could not be found.
#[derive(Debug, thiserror::Error)]
#[error(
    "the local control plane ({release}) is not installed ({missing} not found in {searched}); run `cargo xtask testenv` to build it"
)]
pub struct NotInstalled {
    pub release: Release,
    pub missing: String,
    pub searched: String,
}

impl Binaries {
    /// Finds the binaries of `release`, or says exactly what is missing.
    pub fn locate(release: Release) -> Result<Self, NotInstalled> {
        if let Some(assets) = std::env::var_os("KUBEBUILDER_ASSETS")
            .filter(|v| !v.is_empty() && release == Release::Current)
        {
            let dir = PathBuf::from(assets);
            let found = |name: &str| executable(&dir.join(name));
            return match (found("etcd"), found("kube-apiserver")) {
                (Some(etcd), Some(kube_apiserver)) => Ok(Self {
                    release,
                    etcd,
                    kube_apiserver,
                    kube_controller_manager: found("kube-controller-manager"),
                    kube_scheduler: found("kube-scheduler"),
                    kubectl: found("kubectl"),
                }),
                (etcd, _) => Err(NotInstalled {
                    release,
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
        let cache = release.bin_dir();
        let on_path = release == Release::V1_20;
        let searched = if on_path {
            format!("{} and PATH", cache.display())
        } else {
            cache.display().to_string()
        };
        let find = |name: &str| {
            executable(&cache.join(name))
                .or_else(|| on_path.then(|| which::which(name).ok()).flatten())
                .ok_or_else(|| NotInstalled {
                    release,
                    missing: name.into(),
                    searched: searched.clone(),
                })
        };
        let etcd = find("etcd")?;
        let kube_apiserver = find("kube-apiserver")?;
        let kube_controller_manager = Some(find("kube-controller-manager")?);
        let (kube_scheduler, kubectl) = match release {
            // testenv builds 1.20.2's scheduler with its node (an older cache may lack
            // it: testenv builds it again). The installed kubectl is the reference.
            Release::V1_20 => (executable(&cache.join("kube-scheduler")), None),
            Release::Current => (Some(find("kube-scheduler")?), Some(find("kubectl")?)),
        };
        Ok(Self {
            release,
            etcd,
            kube_apiserver,
            kube_controller_manager,
            kube_scheduler,
            kubectl,
        })
    }

    /// The kubectl to compare with on this release's server.
    pub fn reference_kubectl(&self) -> PathBuf {
        self.kubectl
            .clone()
            .unwrap_or_else(|| PathBuf::from("kubectl"))
    }
}

#[cfg(unix)]
pub(crate) fn executable(path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    (meta.is_file() && meta.permissions().mode() & 0o111 != 0).then(|| path.to_path_buf())
}

/// Windows has no execute bit; the control plane does not run there anyway, but xtask
/// (which reports what is installed) builds there.
#[cfg(not(unix))]
pub(crate) fn executable(path: &Path) -> Option<PathBuf> {
    path.is_file().then(|| path.to_path_buf())
}

/// The user cache directory of everything `cargo xtask testenv` builds
/// (`$XDG_CACHE_HOME/kubeplug`, else `~/.cache/kubeplug`).
pub fn cache_root() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| std::env::temp_dir().join("kubeplug-cache"))
        .join("kubeplug")
}

/// The krew release the install-in-CI test runs (`docs/install-in-ci.md`).
pub const KREW_VERSION: &str = "v0.4.3";

/// Where `cargo xtask testenv` puts krew, under the name kubectl runs it by.
pub fn krew_binary() -> PathBuf {
    cache_root()
        .join(format!("krew-{KREW_VERSION}"))
        .join("bin")
        .join("kubectl-krew")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_are_named_as_users_write_them() {
        for (text, want) in [
            ("v1.37.2", Release::Current),
            ("1.37.2", Release::Current),
            ("1.37", Release::Current),
            ("current", Release::Current),
            ("v1.20.2", Release::V1_20),
            ("1.20", Release::V1_20),
        ] {
            assert_eq!(Release::parse(text).unwrap(), want, "{text}");
        }
        for bad in ["1.2", "v1.30.0", "", "1.37.3"] {
            let err = Release::parse(bad).unwrap_err().to_string();
            assert!(err.contains("v1.37.2 or v1.20.2"), "{err}");
        }
        assert_eq!(Release::Current.minor(), 37);
        assert_eq!(Release::V1_20.minor(), 20);
    }

    #[test]
    fn each_release_has_its_own_cache() {
        assert_ne!(Release::Current.bin_dir(), Release::V1_20.bin_dir());
        assert!(Release::V1_20.bin_dir().ends_with("kubernetes-v1.20.2/bin"));
    }
}
