//! The network namespace a cluster with a real node lives in.
//!
//! Test machines allow network traffic only on loopback and inside namespaces the run
//! made itself, and a kubelet refuses a loopback node IP. So the whole cluster (etcd,
//! the control plane, the registry, containerd, the kubelet and the pods) runs inside a
//! namespace of its own: `lo` up, a veth pair whose inner end carries the node IP
//! ([`NODE_IP`]; this kernel has no `dummy` device), and the host resolver's addresses
//! on `lo`, where [`super::dns`] says "no such host" to every question. Nothing routes
//! out of it.
//!
//! The namespace is made with iproute2 (`ip netns add` pins it at `/run/netns/NAME`,
//! where `ip netns list` and `nsenter --net=/run/netns/NAME` find it). The supervisor
//! then moves its main thread into it before it starts any other thread
//! ([`NetNs::enter`]), so every thread and child process it makes afterwards lives
//! there too. Only the network namespace is entered: a new mount namespace (what `ip
//! netns exec` makes) would hide the host's cgroup mounts from the kubelet and its
//! volume mounts from containerd.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The node's InternalIP, on the inner end of the veth pair.
pub use crate::controlplane::NODE_IP;
/// The pods' subnet (the CNI bridge's host-local range), routed nowhere outside.
pub const POD_SUBNET: &str = "10.201.0.0/24";
/// Where iproute2 pins named network namespaces.
const NETNS_DIR: &str = "/run/netns";

/// A named network namespace made by this run.
#[derive(Debug)]
pub struct NetNs {
    name: String,
}

impl NetNs {
    /// Makes the namespace `name` with its loopback, node address and resolver
    /// addresses. A half-made namespace is removed again.
    pub fn create(name: &str) -> anyhow::Result<Self> {
        ip(&["netns", "add", name])?;
        let ns = Self {
            name: name.to_string(),
        };
        if let Err(e) = ns.configure() {
            ns.delete();
            return Err(e);
        }
        Ok(ns)
    }

    fn configure(&self) -> anyhow::Result<()> {
        let n = self.name.as_str();
        ip(&["-n", n, "link", "set", "lo", "up"])?;
        ip(&[
            "-n", n, "link", "add", "kpnode", "type", "veth", "peer", "name", "kppeer",
        ])?;
        ip(&[
            "-n",
            n,
            "addr",
            "add",
            &format!("{NODE_IP}/24"),
            "dev",
            "kpnode",
        ])?;
        ip(&["-n", n, "link", "set", "kpnode", "up"])?;
        ip(&["-n", n, "link", "set", "kppeer", "up"])?;
        for resolver in host_resolvers() {
            // On `lo`: a question to the host's resolver stays in the namespace, and
            // the NXDOMAIN responder answers it.
            ip(&[
                "-n",
                n,
                "addr",
                "add",
                &format!("{resolver}/32"),
                "dev",
                "lo",
            ])?;
        }
        Ok(())
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `/run/netns/NAME`, for `nsenter --net=…`.
    pub fn path(&self) -> PathBuf {
        Path::new(NETNS_DIR).join(&self.name)
    }

    /// Moves the calling thread into the namespace. Call it on the main thread before
    /// any other thread exists: threads and children inherit the namespace of the
    /// thread that makes them, and sockets keep the one they were made in.
    pub fn enter(&self) -> anyhow::Result<()> {
        let file = std::fs::File::open(self.path())
            .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", self.path().display()))?;
        rustix::thread::move_into_link_name_space(
            std::os::fd::AsFd::as_fd(&file),
            Some(rustix::thread::LinkNameSpaceType::Network),
        )
        .map_err(|e| anyhow::anyhow!("cannot enter network namespace {}: {e}", self.name))
    }

    /// Removes the namespace (its veth pair goes with it).
    pub fn delete(&self) {
        delete(&self.name);
    }
}

/// A TCP listener on 127.0.0.1:0 inside the namespace at `path`, for a server of the
/// caller's that the cluster calls (an admission webhook): the API server runs inside
/// and cannot reach the host's loopback. Bound on a thread of its own that enters the
/// namespace and ends; the socket stays in the namespace it was made in, and is served
/// from any thread.
pub fn listen_inside(path: &Path) -> anyhow::Result<std::net::TcpListener> {
    listen_inside_at(path, std::net::Ipv4Addr::LOCALHOST)
}

/// A TCP listener on `ip`:0 inside the namespace at `path`, as [`listen_inside`]: on the
/// node IP, pods reach it (they cannot reach the namespace's loopback).
pub fn listen_inside_at(
    path: &Path,
    ip: std::net::Ipv4Addr,
) -> anyhow::Result<std::net::TcpListener> {
    let path = path.to_path_buf();
    std::thread::spawn(move || -> anyhow::Result<std::net::TcpListener> {
        let file = std::fs::File::open(&path)
            .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
        rustix::thread::move_into_link_name_space(
            std::os::fd::AsFd::as_fd(&file),
            Some(rustix::thread::LinkNameSpaceType::Network),
        )?;
        Ok(std::net::TcpListener::bind((ip, 0))?)
    })
    .join()
    .map_err(|_| anyhow::anyhow!("the thread binding in the cluster's namespace panicked"))?
}

/// Removes the namespace `name`, if it exists.
pub fn delete(name: &str) {
    if Path::new(NETNS_DIR).join(name).exists()
        && let Err(e) = ip(&["netns", "delete", name])
    {
        tracing::warn!("cannot delete network namespace {name}: {e:#}");
    }
}

/// The names of the namespaces in `/run/netns`.
pub fn list() -> Vec<String> {
    std::fs::read_dir(NETNS_DIR)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect()
}

/// The IPv4 `nameserver`s of the host's `/etc/resolv.conf`, which containerd's Go
/// resolver asks (it reads the host's file: there is no mount namespace).
pub fn host_resolvers() -> Vec<Ipv4Addr> {
    resolvers_in(&std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default())
}

fn resolvers_in(resolv_conf: &str) -> Vec<Ipv4Addr> {
    let mut found: Vec<Ipv4Addr> = resolv_conf
        .lines()
        .filter_map(|line| line.trim().strip_prefix("nameserver"))
        .filter_map(|rest| rest.trim().parse().ok())
        .filter(|ip: &Ipv4Addr| !ip.is_loopback())
        .collect();
    found.dedup();
    found
}

/// Runs `ip ARGS…`, with its stderr in the error.
fn ip(args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("ip").args(args).output().map_err(|e| {
        anyhow::anyhow!("cannot run `ip` (iproute2; `cargo xtask testenv` installs it): {e}")
    })?;
    if out.status.success() {
        Ok(())
    } else {
        anyhow::bail!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolvers_are_the_non_loopback_ipv4_nameservers() {
        let conf = "# generated\nnameserver 10.255.255.53\nnameserver 127.0.0.53\nnameserver ::1\nsearch x\nnameserver 10.255.255.53\n";
        assert_eq!(resolvers_in(conf), vec![Ipv4Addr::new(10, 255, 255, 53)]);
    }
}
