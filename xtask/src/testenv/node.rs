//! What a real node needs besides the release's own programs: Debian's packages (the
//! container runtime, the CNI plugins, the registry, what the test images are built
//! from and with, and the HA suite's balancer), then the test images (`images`). Shared by every release.

use super::{apt, images};

/// The node's Debian packages (bookworm: containerd 1.6.20).
pub(super) const PACKAGES: [&str; 13] = [
    "containerd",
    "runc",
    "containernetworking-plugins",
    "docker-registry",
    "iproute2",
    "iptables",
    // The images' contents: busybox and tini, both static.
    "busybox-static",
    "tini",
    // The images' tools: the OCI layout, the pushes, the static pause.
    "umoci",
    "skopeo",
    "gcc",
    "libc6-dev",
    // The HA suite's TCP balancer in front of more API servers (`tests::ha`).
    "haproxy",
];

/// Installs the node's packages that are missing, then builds the test images unless
/// they are there (everything with `force`).
pub(super) fn ensure(force: bool) -> anyhow::Result<()> {
    let missing = apt::missing(&PACKAGES);
    if missing.is_empty() {
        eprintln!("testenv: the node's packages are installed");
    } else {
        eprintln!(
            "testenv: installing the node's packages {}",
            missing.join(" ")
        );
        apt::install(&missing)?;
    }
    images::ensure(force)
}
