//! A real node: kubelet + containerd + runc + the CNI plugins, with a local image
//! registry, inside the cluster's network namespace ([`netns`]).
//!
//! What starts, in order, each as a child of the supervisor's main thread (so that
//! none outlives it, see `controlplane::Process`):
//! 1. NXDOMAIN answers on the host resolver's addresses ([`dns`]);
//! 2. `docker-registry` on 127.0.0.1:5000, serving the test images that `cargo xtask
//!    testenv` built into the image store, read-only: containerd's mirror for
//!    docker.io and registry.k8s.io;
//! 3. containerd (CRI, overlayfs, runc with cgroupfs), everything under the node's run
//!    directory;
//! 4. the kubelet of the cluster's release, which registers its Node; once the Node
//!    is Ready the start writes back the host sysctls the kubelet changed ([`host`]);
//! 5. kube-proxy of the release (iptables mode, the namespace's tables only, no
//!    host-wide sysctl): the start returns once the `kubernetes` Service's cluster IP
//!    leads to the API server, as it does for pods on a real cluster.
//!
//! Stopping ([`RealNode::stop`]) ends them newest first and removes the node from the
//! host ([`host::remove_node`]): the containers and shims, mounts, cgroups, CNI
//! results, the run directory, and with the last node the host paths the kubelet made.
//!
//! To look inside a running cluster: `cluster.json` in its state directory names the
//! network namespace (`netns`) and the node's run directory (`node_run_dir`,
//! `/run/kubeplug/<id>`). `nsenter --net=/run/netns/<id> ctr --address
//! /run/kubeplug/<id>/containerd.sock -n k8s.io containers ls` lists the pods'
//! containers; `nsenter --net=/run/netns/<id>` reaches the node IP and the pods; the
//! state directory holds `kubelet.log`, `containerd.log`, `registry.log` and
//! `kube-proxy.log` beside the control plane's logs.

pub mod config;
pub mod dns;
pub mod host;
pub mod netns;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::{NodeBinaries, Release};
use anyhow::Context as _;
use k8s_openapi::api::core::v1::Node;
use kube::Api;

use crate::controlplane::Process;
use config::Layout;

/// How to start a node.
#[derive(Debug, Clone)]
pub struct Options {
    pub release: Release,
    pub binaries: NodeBinaries,
    /// Where the node's logs go (the cluster's state directory).
    pub state_dir: PathBuf,
    /// The kubeconfig the kubelet uses (the cluster admin's).
    pub kubeconfig: PathBuf,
    /// The Node's name.
    pub name: String,
    /// The node's id ([`host::node_id`]): its network namespace's name too.
    pub id: String,
}

/// A running node. [`RealNode::stop`] takes it away; dropping it without stopping
/// leaves the cleanup to the next cluster's [`host::sweep`].
pub struct RealNode {
    pub name: String,
    layout: Layout,
    processes: Vec<Process>,
    dns: Vec<tokio::task::JoinHandle<()>>,
}

impl RealNode {
    /// Starts the node in the current network namespace and waits until its Node is
    /// Ready (at most two minutes).
    pub async fn start(options: Options, client: &kube::Client) -> anyhow::Result<Self> {
        host::save_host().context("cannot record the host's state before starting a kubelet")?;
        let layout = Layout {
            id: options.id.clone(),
            run: Path::new(host::RUN_ROOT).join(&options.id),
            logs: options.state_dir.clone(),
            image_store: options.binaries.image_store.clone(),
            cni_bin_dir: options.binaries.cni_bin_dir.clone(),
            runc: options.binaries.runc.clone(),
        };
        write_files(&layout, options.release)?;
        let mut node = Self {
            name: options.name.clone(),
            layout,
            processes: Vec::new(),
            dns: Vec::new(),
        };
        for resolver in netns::host_resolvers() {
            node.dns.push(
                dns::serve(resolver)
                    .await
                    .with_context(|| format!("cannot answer DNS on {resolver}:53"))?,
            );
        }
        node.start_registry(&options.binaries)?;
        node.start_containerd(&options.binaries)?;
        host::make_cgroup_root(&node.layout.id).context("cannot make the kubelet's cgroup root")?;
        let args = config::kubelet_args(
            options.release,
            &node.layout,
            &options.kubeconfig,
            &options.name,
        );
        node.spawn("kubelet", &options.binaries.kubelet, &args)?;
        node.wait_ready(client).await?;
        host::restore_sysctls();
        node.start_kube_proxy(&options, client).await?;
        Ok(node)
    }

    /// kube-proxy, so that pods reach Services, the API server's `kubernetes` among
    /// them, by cluster IP; returns once it has written that Service's rules.
    async fn start_kube_proxy(
        &mut self,
        options: &Options,
        client: &kube::Client,
    ) -> anyhow::Result<()> {
        let program = options
            .binaries
            .kube_proxy
            .as_ref()
            .context("no kube-proxy of the release: run `cargo xtask testenv`")?;
        let config = self.layout.file("kube-proxy.yaml");
        std::fs::write(
            &config,
            config::kube_proxy(&options.kubeconfig, &options.name),
        )
        .with_context(|| format!("cannot write {}", config.display()))?;
        self.spawn(
            "kube-proxy",
            program,
            &[
                format!("--config={}", config.display()),
                "--v=1".to_string(),
            ],
        )?;
        self.wait_service_rules(client).await
    }

    /// Waits until kube-proxy's NAT table leads the `kubernetes` Service's cluster IP
    /// somewhere (at most a minute).
    async fn wait_service_rules(&mut self, client: &kube::Client) -> anyhow::Result<()> {
        let services: Api<k8s_openapi::api::core::v1::Service> =
            Api::namespaced(client.clone(), "default");
        let ip = services
            .get("kubernetes")
            .await
            .context("the kubernetes Service")?
            .spec
            .and_then(|s| s.cluster_ip)
            .context("the kubernetes Service's cluster IP")?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let rules = std::process::Command::new("iptables-save")
                .args(["-t", "nat"])
                .output()
                .context("cannot run iptables-save")?;
            let rules = String::from_utf8_lossy(&rules.stdout);
            if rules
                .lines()
                .any(|l| l.starts_with("-A KUBE-SERVICES") && l.contains(&format!("-d {ip}/32")))
            {
                return Ok(());
            }
            if let Some(crash) = self.crashed() {
                anyhow::bail!("{crash}");
            }
            if Instant::now() > deadline {
                let proxy = self.processes.last().context("kube-proxy")?;
                anyhow::bail!(
                    "kube-proxy wrote no rules for {ip} within a minute; last log lines ({}):\n{}",
                    proxy.log.display(),
                    proxy.log_tail(20)
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    fn start_registry(&mut self, binaries: &NodeBinaries) -> anyhow::Result<()> {
        let config = self.layout.file("registry.yml");
        self.spawn(
            "registry",
            &binaries.registry,
            &["serve".to_string(), config.display().to_string()],
        )?;
        let port = config::REGISTRY_ADDRESS
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .context("the registry's port")?;
        let registry = self.processes.last_mut().context("just spawned")?;
        crate::controlplane::wait_for_port(port, Duration::from_secs(30), registry)
            .map_err(anyhow::Error::msg)
    }

    fn start_containerd(&mut self, binaries: &NodeBinaries) -> anyhow::Result<()> {
        let config = self.layout.file("containerd.toml");
        self.spawn(
            "containerd",
            &binaries.containerd,
            &["--config".to_string(), config.display().to_string()],
        )?;
        let socket = self.layout.containerd_socket();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let answered = socket.exists()
                && std::process::Command::new(&binaries.ctr)
                    .arg("--address")
                    .arg(&socket)
                    .arg("version")
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
            if answered {
                return Ok(());
            }
            let containerd = self.processes.last_mut().context("just spawned")?;
            if let Some(status) = containerd.exited() {
                anyhow::bail!(
                    "containerd exited ({status}) during start-up; last log lines ({}):\n{}",
                    containerd.log.display(),
                    containerd.log_tail(20)
                );
            }
            if Instant::now() > deadline {
                anyhow::bail!(
                    "containerd did not answer on {} within 30 s; see {}",
                    socket.display(),
                    containerd.log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the kubelet has registered the Node and it is Ready.
    async fn wait_ready(&mut self, client: &kube::Client) -> anyhow::Result<()> {
        let nodes: Api<Node> = Api::all(client.clone());
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(Some(node)) = nodes.get_opt(&self.name).await
                && is_ready(&node)
            {
                return Ok(());
            }
            if let Some(crash) = self.crashed() {
                anyhow::bail!("{crash}");
            }
            if Instant::now() > deadline {
                let kubelet = self.processes.last().context("the kubelet")?;
                anyhow::bail!(
                    "node {} was not Ready within 2 minutes; last kubelet log lines ({}):\n{}",
                    self.name,
                    kubelet.log.display(),
                    kubelet.log_tail(20)
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    fn spawn(&mut self, name: &'static str, program: &Path, args: &[String]) -> anyhow::Result<()> {
        let log = self.layout.logs.join(format!("{name}.log"));
        let process = Process::spawn(name, program, args, log)?;
        self.processes.push(process);
        Ok(())
    }

    /// The node's run directory (its containerd socket is `containerd.sock` there).
    pub fn run_dir(&self) -> &Path {
        &self.layout.run
    }

    /// Pids of the node's programs, for the state file.
    pub fn pids(&self) -> Vec<(&'static str, u32)> {
        self.processes.iter().map(|p| (p.name, p.pid())).collect()
    }

    /// The first program that has exited unexpectedly, with its log tail.
    pub fn crashed(&mut self) -> Option<String> {
        crate::controlplane::first_crash(&mut self.processes)
    }

    /// Stops the kubelet, containerd and the registry, then removes the node from the
    /// host. The pods' containers are killed, not stopped: the cluster goes with them.
    pub fn stop(mut self) {
        for dns in self.dns.drain(..) {
            dns.abort();
        }
        while let Some(mut process) = self.processes.pop() {
            process.stop(Duration::from_secs(5));
        }
        host::remove_node(&self.layout.id);
    }
}

fn is_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
        })
}

/// Writes the node's configuration files into its run directory.
fn write_files(layout: &Layout, release: Release) -> anyhow::Result<()> {
    let write = |name: &str, body: &str| -> anyhow::Result<()> {
        let path = layout.file(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(&path, body).with_context(|| format!("cannot write {}", path.display()))
    };
    write("containerd.toml", &config::containerd(layout))?;
    for (registry, server) in config::MIRRORED {
        write(
            &format!("certs.d/{registry}/hosts.toml"),
            &config::mirror_hosts(server),
        )?;
    }
    write(
        "cni/net.d/10-kubeplug.conflist",
        &config::cni_conflist(layout),
    )?;
    write("registry.yml", &config::registry(layout))?;
    write("kubelet.yaml", &config::kubelet(release, layout))?;
    write(
        "resolv.conf",
        &format!("nameserver {}\n", config::CLUSTER_DNS),
    )?;
    std::fs::create_dir_all(layout.file("pod-logs"))?;
    Ok(())
}
