//! What a real node of the local cluster needs, and where `cargo xtask testenv` puts it:
//! the release's kubelet (and kube-proxy), Debian's containerd, runc and CNI plugins,
//! Debian's `docker-registry`, and the test images.
//!
//! No image can be downloaded here, so testenv builds every image the tests, the demo
//! and the bench run as pods ([`IMAGES`]) from Debian's packages, and keeps them as the
//! storage root of a docker registry (its filesystem driver's `rootdirectory`): each
//! cluster serves that directory read-only with its own `docker-registry`
//! ([`registry_config`]) as containerd's mirror for `docker.io` and `registry.k8s.io`.
//! The directory is keyed by a hash of the images' recipe ([`image_store`]), so that a
//! changed recipe is a store testenv has not built yet, never a stale one.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::binaries::{NotInstalled, Release, cache_root};

/// The node's IP (the inner end of its network namespace's veth pair,
/// `realnode::netns`): the API server listens and advertises there, and its
/// certificate names it.
pub const NODE_IP: std::net::Ipv4Addr = std::net::Ipv4Addr::new(10, 200, 0, 2);

/// The port the kubelet serves its API on, at [`NODE_IP`].
pub const KUBELET_PORT: u16 = 10250;

/// The pod sandbox image the kubelet and containerd are given.
pub const SANDBOX_IMAGE: &str = "registry.k8s.io/pause:3.10";

/// Every test image, fully qualified, with what it is. All are linux/amd64, built by
/// `cargo xtask testenv` from Debian's packages; "the idler" is the busybox root file
/// system with tini at `/sbin/tini` as its entrypoint and a command that waits for
/// SIGTERM and then exits 0 (so that its pod deletes at once, as nginx's does), port
/// 80/tcp exposed: it stands in for every application image.
pub const IMAGES: &[(&str, &str)] = &[
    (
        "registry.k8s.io/pause:3.10",
        "the sandbox: a static pause of ours (exits 0 on SIGINT or SIGTERM, reaps children)",
    ),
    ("registry.k8s.io/pause:3.9", "the pause image, as 3.10"),
    ("registry.k8s.io/pause:3.8", "the pause image, as 3.10"),
    ("registry.k8s.io/pause:3.7", "the pause image, as 3.10"),
    (
        "docker.io/library/busybox:latest",
        "Debian's busybox-static with its applets in /bin, Cmd [\"sh\"], no entrypoint",
    ),
    ("docker.io/library/busybox:1.35", "busybox, as latest"),
    ("docker.io/library/busybox:1.36", "busybox, as latest"),
    ("docker.io/library/busybox:2", "busybox, as latest"),
    (
        "docker.io/kubeplug/busybox-tini:1",
        "busybox with Entrypoint [\"/sbin/tini\", \"--\"]: PID 1 forwards signals to the command",
    ),
    ("docker.io/library/nginx:latest", "the idler"),
    ("docker.io/library/nginx:1", "the idler"),
    ("docker.io/library/nginx:1.19", "the idler"),
    ("docker.io/library/nginx:1.25", "the idler"),
    ("docker.io/library/nginx:1.26", "the idler"),
    ("docker.io/library/nginx:1.27", "the idler"),
    ("docker.io/library/nginx:2", "the idler"),
    (
        "docker.io/library/perl:latest",
        "the idler (no perl in it: a `perl …` command fails to start)",
    ),
    ("docker.io/library/migrate:1", "the idler"),
    ("docker.io/library/web:1", "the idler"),
    ("docker.io/library/ci-runner:1", "the idler"),
];

/// The inputs of the images' recipe, hashed into the store's name: the pause
/// program's source, the builder, and the list above.
const RECIPE: [&[u8]; 2] = [
    include_bytes!("../../xtask/testenv/images/pause.c"),
    include_bytes!("../../xtask/src/testenv/images.rs"),
];

/// The registry storage root that holds [`IMAGES`], for the current recipe
/// (`<cache>/images/<hash>`).
pub fn image_store() -> PathBuf {
    let mut hash = Sha256::new();
    for part in RECIPE {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part);
    }
    for (reference, what) in IMAGES {
        hash.update(format!("{reference}\0{what}\0").as_bytes());
    }
    let key: String = hash.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    cache_root().join("images").join(key)
}

/// A reference's repository and tag as the registry stores them: the mirror of a
/// registry host serves `<host>/<repository>:<tag>` as `/v2/<repository>/…`.
pub fn registry_path(reference: &str) -> Option<(&str, &str)> {
    let (host, rest) = reference.split_once('/')?;
    if !host.contains('.') {
        return None;
    }
    let (repository, tag) = rest.rsplit_once(':')?;
    (!repository.is_empty() && !tag.is_empty() && !tag.contains('/')).then_some((repository, tag))
}

/// Whether a registry storage root holds `reference` (its tag's link, and the
/// manifest blob that link names).
pub fn store_holds(store: &Path, reference: &str) -> bool {
    let Some((repository, tag)) = registry_path(reference) else {
        return false;
    };
    let v2 = store.join("docker/registry/v2");
    let link = v2
        .join("repositories")
        .join(repository)
        .join("_manifests/tags")
        .join(tag)
        .join("current/link");
    let Ok(digest) = std::fs::read_to_string(link) else {
        return false;
    };
    let Some(hex) = digest.trim().strip_prefix("sha256:") else {
        return false;
    };
    hex.len() == 64
        && v2
            .join("blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
            .is_file()
}

/// The configuration of a `docker-registry` (distribution 2.8) serving `store` on
/// `listen` (`127.0.0.1:5000`); `read_only` refuses pushes (each cluster's mirror),
/// otherwise testenv pushes the images into it.
pub fn registry_config(store: &Path, listen: &str, read_only: bool) -> String {
    format!(
        "version: 0.1\n\
         log:\n  level: warn\n  accesslog:\n    disabled: true\n\
         storage:\n  filesystem:\n    rootdirectory: {store}\n  \
         maintenance:\n    uploadpurging:\n      enabled: false\n    \
         readonly:\n      enabled: {read_only}\n\
         http:\n  addr: {listen}\n",
        store = store.display(),
    )
}

/// Where Debian's packages put the node's programs (`containerd`, `runc`,
/// `containernetworking-plugins`, `docker-registry`).
const CNI_BIN_DIR: &str = "/usr/lib/cni";
/// The CNI plugins a node's network needs: the pod's loopback, a bridge, its addresses.
const CNI_PLUGINS: [&str; 4] = ["loopback", "bridge", "host-local", "portmap"];

/// The programs and images a real node of `release` runs.
#[derive(Debug, Clone)]
pub struct NodeBinaries {
    pub release: Release,
    /// The release's kubelet, built beside its control plane.
    pub kubelet: PathBuf,
    /// The release's kube-proxy (the in-cluster tests reach the `kubernetes`
    /// Service's ClusterIP through it).
    pub kube_proxy: Option<PathBuf>,
    pub containerd: PathBuf,
    pub ctr: PathBuf,
    pub runc: PathBuf,
    /// Where the CNI plugins are (`bridge`, `host-local`, `loopback`, `portmap`).
    pub cni_bin_dir: PathBuf,
    /// Debian's `docker-registry` (distribution 2.8).
    pub registry: PathBuf,
    /// The registry storage root that holds every image of [`IMAGES`].
    pub image_store: PathBuf,
}

impl NodeBinaries {
    /// Finds everything a node of `release` needs, or says what is missing.
    pub fn locate(release: Release) -> Result<Self, NotInstalled> {
        let missing = |what: &str, searched: &Path| NotInstalled {
            release,
            missing: what.into(),
            searched: searched.display().to_string(),
        };
        let bin = release.bin_dir();
        let kubelet = crate::binaries::executable(&bin.join("kubelet"))
            .ok_or_else(|| missing("kubelet", &bin))?;
        let kube_proxy = crate::binaries::executable(&bin.join("kube-proxy"));
        let system = |name: &str, dir: &str| {
            crate::binaries::executable(&Path::new(dir).join(name))
                .or_else(|| which::which(name).ok())
                .ok_or_else(|| missing(name, Path::new(dir)))
        };
        let containerd = system("containerd", "/usr/bin")?;
        let ctr = system("ctr", "/usr/bin")?;
        let runc = system("runc", "/usr/sbin")?;
        let registry = system("docker-registry", "/usr/bin")?;
        let cni_bin_dir = PathBuf::from(CNI_BIN_DIR);
        if let Some(plugin) = CNI_PLUGINS
            .iter()
            .find(|p| crate::binaries::executable(&cni_bin_dir.join(p)).is_none())
        {
            return Err(missing(&format!("the CNI plugin {plugin}"), &cni_bin_dir));
        }
        let image_store = image_store();
        if let Some((reference, _)) = IMAGES
            .iter()
            .find(|(reference, _)| !store_holds(&image_store, reference))
        {
            return Err(missing(&format!("the image {reference}"), &image_store));
        }
        Ok(Self {
            release,
            kubelet,
            kube_proxy,
            containerd,
            ctr,
            runc,
            cni_bin_dir,
            registry,
            image_store,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_map_to_the_mirror_paths() {
        assert_eq!(
            registry_path("docker.io/library/busybox:latest"),
            Some(("library/busybox", "latest"))
        );
        assert_eq!(registry_path(SANDBOX_IMAGE), Some(("pause", "3.10")));
        for bad in [
            "busybox:1",
            "docker.io/busybox",
            "docker.io/x:",
            "localhost:5000/x",
        ] {
            assert_eq!(registry_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn every_image_is_qualified_and_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for (reference, what) in IMAGES {
            assert!(registry_path(reference).is_some(), "{reference}");
            assert!(!what.is_empty(), "{reference}");
            assert!(seen.insert(*reference), "{reference} twice");
        }
        assert!(seen.contains(SANDBOX_IMAGE));
    }

    #[test]
    fn a_store_holds_an_image_by_its_tag_link_and_manifest() {
        let store = tempfile::tempdir().unwrap();
        let reference = "docker.io/library/busybox:1.36";
        assert!(!store_holds(store.path(), reference));
        let v2 = store.path().join("docker/registry/v2");
        let hex = "ab".repeat(32);
        let tag = v2.join("repositories/library/busybox/_manifests/tags/1.36/current");
        std::fs::create_dir_all(&tag).unwrap();
        std::fs::write(tag.join("link"), format!("sha256:{hex}")).unwrap();
        // A link without its blob is a half-written store.
        assert!(!store_holds(store.path(), reference));
        let blob = v2.join("blobs/sha256/ab").join(&hex);
        std::fs::create_dir_all(&blob).unwrap();
        std::fs::write(blob.join("data"), "{}").unwrap();
        assert!(store_holds(store.path(), reference));
        assert!(!store_holds(store.path(), "docker.io/library/busybox:2"));
    }

    #[test]
    fn the_registry_config_names_the_store_and_address() {
        let config = registry_config(Path::new("/s"), "127.0.0.1:5000", true);
        assert!(config.contains("rootdirectory: /s\n"), "{config}");
        assert!(config.contains("addr: 127.0.0.1:5000\n"), "{config}");
        assert!(
            config.contains("readonly:\n      enabled: true\n"),
            "{config}"
        );
    }
}
