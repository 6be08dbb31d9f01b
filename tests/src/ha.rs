//! An HA control plane for the tests of what a client does when an API server dies
//! under it: more kube-apiservers on a cluster's etcd, behind a real TCP balancer
//! (Debian's `haproxy`, `cargo xtask testenv` installs it), as every HA cluster and
//! every control-plane upgrade has them.
//!
//! ```text
//! plugin ──▶ 127.0.0.1:F (haproxy, host loopback, mode tcp, round robin)
//!              ├─▶ 127.0.0.1:P0 in the cluster's namespace (kube-apiserver 0)
//!              └─▶ 127.0.0.1:P1 in the cluster's namespace (kube-apiserver 1)
//! ```
//!
//! - The extra servers run inside the cluster's network namespace on its loopback, as
//!   the cluster's own server does, with that server's flags (read from its command
//!   line: the same etcd, certificates, tokens and service-account keys), each on a
//!   port of its own, without an audit log and with `--endpoint-reconciler-type=none`
//!   (they share the node IP, and a dying one must not take the `kubernetes`
//!   Service's endpoint away from the pods of the tests beside it).
//! - haproxy listens on the host's 127.0.0.1 and reaches them through its `namespace`
//!   server keyword, checks each with TLS on `GET /readyz` (every 500 ms; down after 2
//!   failures, up after 1 success), and resends a connection a dead server refused to
//!   another (`retries`, `option redispatch`). Like most balancers it leaves the
//!   connections of a server marked down alone: a server shutting down drains its
//!   own. The cluster's own server is not a
//!   backend: the controllers and the kubelet stay on it, and it is the supervisor's
//!   (killing it ends the cluster).
//! - Which server holds a client's connection is haproxy's to say (its runtime API on
//!   a Unix socket: the current sessions per server), so a test kills the one serving
//!   the command, not a guess.
//! - Every process is started by one thread of the [`HaCluster`], with a parent-death
//!   signal: they end when it is dropped, and with the test process however it ends.
//!
//! Traffic stays on the host's loopback and in the cluster's namespace.
//!
//! Use: [`HaCluster::start`] on a cluster with a real node (its network namespace),
//! then [`HaCluster::plugin`] / [`HaCluster::kubectl`] (or [`HaCluster::live`]) to run
//! a command through the balancer, [`HaCluster::serving`] to find the server that
//! holds its connection, and [`HaCluster::signal`] to kill or stop it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::harness::{Cluster, Cmd};
use crate::live::Live;

/// How long the extra servers may take to be ready (as the cluster's own start).
const READY_WITHIN: Duration = Duration::from_secs(120);

/// One API server behind the balancer.
#[derive(Debug, Clone)]
pub struct Server {
    /// haproxy's name for it (`apiserver-0`…).
    pub name: String,
    pub pid: u32,
    /// Its port on the cluster namespace's loopback.
    pub port: u16,
    pub log: PathBuf,
}

/// A server as haproxy's runtime API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStat {
    pub name: String,
    /// `UP`, `DOWN`, `UP 1/2`… (haproxy's check status).
    pub status: String,
    /// Client connections it holds now.
    pub sessions: u64,
    /// Client connections it was given in all.
    pub total: u64,
    /// Bytes it sent to its clients in all.
    pub bytes_out: u64,
}

/// Extra API servers of a cluster behind haproxy (see the module). Dropping it stops
/// them and the balancer.
pub struct HaCluster {
    pub cluster: &'static Cluster,
    /// The cluster's kubeconfig with the balancer as its server.
    pub kubeconfig: PathBuf,
    /// The balancer's address on the host's loopback.
    pub balancer: std::net::SocketAddr,
    servers: Vec<Server>,
    socket: PathBuf,
    haproxy_log: PathBuf,
    orders: Option<mpsc::Sender<Order>>,
    launches: Vec<Launch>,
    keeper: Option<std::thread::JoinHandle<()>>,
    dir: tempfile::TempDir,
}

impl HaCluster {
    /// Starts `servers` (at least 2) more API servers of `cluster` and the balancer in
    /// front of them; returns when haproxy's checks see every one of them ready.
    pub async fn start(cluster: &'static Cluster, servers: usize) -> Self {
        assert!(servers >= 2, "an HA control plane has two servers or more");
        which::which("haproxy").unwrap_or_else(|_| {
            panic!("haproxy is not installed: run `cargo xtask testenv` (it installs Debian's)")
        });
        let netns = cluster
            .netns
            .clone()
            .expect("an HA control plane needs a cluster with a real node (its network namespace)");
        let netns_path = Path::new("/run/netns").join(&netns);
        let state_dir = cluster.kubeconfig.parent().expect("state directory");
        let state = localcluster::state::ClusterState::read(state_dir)
            .ok()
            .flatten()
            .expect("the cluster's state file");
        let original = state
            .processes
            .iter()
            .find(|p| p.name == "kube-apiserver")
            .expect("the cluster's kube-apiserver")
            .pid;
        let (program, original_args) = command_line(original);

        let dir = tempfile::Builder::new()
            .prefix("kubeplug-ha-")
            .tempdir()
            .expect("tempdir");
        // Free ports on the namespace's loopback: bound there, then let go for the
        // servers (a lost race shows as `address already in use` in a server's log).
        let ports: Vec<u16> = (0..servers)
            .map(|_| {
                localcluster::realnode::netns::listen_inside(&netns_path)
                    .and_then(|l| Ok(l.local_addr()?.port()))
                    .expect("a free port in the cluster's namespace")
            })
            .collect();
        let front = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("a loopback port");
        let balancer = front.local_addr().expect("local address");
        drop(front);

        let servers: Vec<Server> = ports
            .iter()
            .enumerate()
            .map(|(i, &port)| Server {
                name: format!("apiserver-{i}"),
                pid: 0,
                port,
                log: dir.path().join(format!("apiserver-{i}.log")),
            })
            .collect();
        let socket = dir.path().join("haproxy.sock");
        let haproxy_log = dir.path().join("haproxy.log");
        let launches = launches(
            dir.path(),
            &haproxy_config(balancer, &socket, &netns, &servers),
            &program,
            &original_args,
            &servers,
        );
        let (orders, pids, keeper) = keep(launches.clone(), netns_path);
        let pids = pids.unwrap_or_else(|e| panic!("cannot start the HA control plane: {e}"));
        let servers = servers
            .into_iter()
            .zip(pids.into_iter().skip(1))
            .map(|(server, pid)| Server { pid, ..server })
            .collect();

        let kubeconfig = dir.path().join("kubeconfig");
        let text = std::fs::read_to_string(&cluster.kubeconfig).expect("read kubeconfig");
        std::fs::write(
            &kubeconfig,
            text.replace(&state.server, &format!("https://{balancer}")),
        )
        .expect("write kubeconfig");

        let ha = Self {
            cluster,
            kubeconfig,
            balancer,
            servers,
            socket,
            haproxy_log,
            orders: Some(orders),
            launches,
            keeper: Some(keeper),
            dir,
        };
        ha.wait_all_up().await;
        ha
    }

    /// Runs a plugin binary through the balancer.
    pub fn plugin(&self, plugin: &str) -> Cmd {
        self.cluster
            .plugin(plugin)
            .env("KUBECONFIG", &self.kubeconfig)
    }

    /// Runs the release's kubectl through the balancer.
    pub fn kubectl(&self) -> Cmd {
        self.cluster.kubectl().env("KUBECONFIG", &self.kubeconfig)
    }

    /// Starts the release's kubectl with `args` through the balancer as a [`Live`]
    /// run (`kubectl create-file …` runs the plugin in kubectl's place, so the same
    /// call serves both sides of a comparison).
    pub fn live(&self, args: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>) -> Live {
        let mut command = tokio::process::Command::new(&self.cluster.kubectl_binary);
        command
            .args(args)
            .env("PATH", self.cluster.child_path())
            .env("KUBECONFIG", &self.kubeconfig)
            .env("NO_PROXY", "127.0.0.1,localhost");
        Live::command(command)
    }

    /// The servers as haproxy sees them now, in [`HaCluster::servers`]' order.
    pub async fn stats(&self) -> Vec<ServerStat> {
        self.try_stats()
            .await
            .unwrap_or_else(|e| panic!("haproxy's socket: {e}\n{}", self.logs()))
    }

    async fn try_stats(&self) -> std::io::Result<Vec<ServerStat>> {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let mut stream = tokio::net::UnixStream::connect(&self.socket).await?;
        stream.write_all(b"show stat\n").await?;
        let mut csv = String::new();
        stream.read_to_string(&mut csv).await?;
        Ok(parse_stats(&csv))
    }

    /// Waits (up to 10 s) until some server holds a client connection, and returns
    /// the servers that hold one: those a command just started is talking to (a test
    /// that asks this runs one command at a time through the balancer).
    pub async fn serving(&self) -> Vec<usize> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let stats = self.stats().await;
            let busy: Vec<usize> = (0..stats.len())
                .filter(|&i| stats[i].sessions > 0)
                .collect();
            if !busy.is_empty() {
                return busy;
            }
            assert!(
                Instant::now() < deadline,
                "no server holds a connection: {stats:?}"
            );
            // haproxy says nothing when a session starts: asked again at once.
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Sends `sig` to server `index` (`libc::SIGKILL`, `libc::SIGTERM`…).
    pub fn signal(&self, index: usize, sig: i32) {
        let server = &self.servers[index];
        assert!(
            localcluster::controlplane::signal(server.pid, sig),
            "signal {sig} to {} ({})",
            server.name,
            server.pid
        );
    }

    /// The servers behind the balancer, in haproxy's order.
    pub fn servers(&self) -> &[Server] {
        &self.servers
    }

    /// Waits for server `index` to end (after [`HaCluster::signal`]), starts it again
    /// with the same flags and port, and waits until haproxy sees every server ready:
    /// the HA control plane is whole again for the next command.
    pub async fn restart(&mut self, index: usize) {
        let (reply, answer) = mpsc::channel();
        let order = Order::Restart {
            pid: self.servers[index].pid,
            launch: self.launches[index + 1].clone(),
            reply,
        };
        self.orders
            .as_ref()
            .expect("the keeper runs")
            .send(order)
            .expect("the keeper runs");
        // The keeper waits for the old server to exit (a SIGTERM'd one drains first).
        let pid = tokio::task::spawn_blocking(move || answer.recv())
            .await
            .expect("the keeper's answer")
            .expect("the keeper answers")
            .unwrap_or_else(|e| panic!("cannot start {} again: {e}", self.servers[index].name));
        self.servers[index].pid = pid;
        self.wait_all_up().await;
    }

    /// Waits (up to 10 s) until haproxy's checks see server `index` down.
    pub async fn wait_down(&self, index: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let stats = self.stats().await;
            if stats[index].status.starts_with("DOWN") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} is not down: {stats:?}",
                self.servers[index].name
            );
            // haproxy's checks run every 500 ms; nothing announces a change.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The logs of the balancer and of the servers (their tails), for failures.
    pub fn logs(&self) -> String {
        let mut text = format!(
            "haproxy ({}):\n{}\n",
            self.haproxy_log.display(),
            localcluster::controlplane::tail(&self.haproxy_log, 20)
        );
        for server in &self.servers {
            text.push_str(&format!(
                "{} ({}):\n{}\n",
                server.name,
                server.log.display(),
                localcluster::controlplane::tail(&server.log, 10)
            ));
        }
        text
    }

    /// Where the logs and configuration are (kept while the cluster runs).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    async fn wait_all_up(&self) {
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            // Until haproxy has made its socket, it has nothing to say.
            let stats = self.try_stats().await.unwrap_or_default();
            if stats.len() == self.servers.len() && stats.iter().all(|s| s.status == "UP") {
                return;
            }
            let exited = self
                .servers
                .iter()
                .find(|s| !localcluster::controlplane::alive(s.pid) || zombie(s.pid));
            if let Some(server) = exited {
                panic!("{} exited while starting\n{}", server.name, self.logs());
            }
            assert!(
                Instant::now() < deadline,
                "the HA servers were not all ready within {READY_WITHIN:?}: {stats:?}\n{}",
                self.logs()
            );
            // haproxy's checks run every 500 ms; nothing announces a change.
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

impl Drop for HaCluster {
    fn drop(&mut self) {
        drop(self.orders.take());
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
    }
}

/// What the keeper starts: haproxy with `config` (written into `dir`), then each
/// server with the cluster server's `args` on its own port.
fn launches(
    dir: &Path,
    config: &str,
    program: &Path,
    args: &[String],
    servers: &[Server],
) -> Vec<Launch> {
    let config_file = dir.join("haproxy.cfg");
    std::fs::write(&config_file, config).expect("write haproxy.cfg");
    let mut launches = vec![Launch {
        program: PathBuf::from("haproxy"),
        args: vec!["-db".into(), "-f".into(), config_file.display().to_string()],
        log: dir.join("haproxy.log"),
        inside: false,
    }];
    for server in servers {
        launches.push(Launch {
            program: program.to_path_buf(),
            args: server_args(args, server.port, dir, &server.name),
            log: server.log.clone(),
            inside: true,
        });
    }
    launches
}

/// One program for the keeper thread to start.
#[derive(Clone)]
struct Launch {
    program: PathBuf,
    args: Vec<String>,
    log: PathBuf,
    /// In the cluster's network namespace (else the host's).
    inside: bool,
}

/// What the keeper thread is asked to do.
enum Order {
    /// Wait for the program of `pid` to end (it was killed or stopped), then start
    /// `launch` again and answer its new pid.
    Restart {
        pid: u32,
        launch: Launch,
        reply: mpsc::Sender<Result<u32, String>>,
    },
}

type Started = Result<Vec<u32>, String>;

/// Starts `launches` (the host's first, then those inside `netns`) from a thread of
/// their own, which keeps them and carries out [`Order`]s until the returned sender
/// is dropped, then kills and reaps them. Each child has `PR_SET_PDEATHSIG =
/// SIGKILL`, which fires when the thread that forked it ends: this thread, so with
/// the [`HaCluster`] or the test process, however it ends.
fn keep(
    launches: Vec<Launch>,
    netns: PathBuf,
) -> (mpsc::Sender<Order>, Started, std::thread::JoinHandle<()>) {
    let (orders, received) = mpsc::channel::<Order>();
    let (started_tx, started_rx) = mpsc::channel::<Started>();
    let keeper = std::thread::spawn(move || {
        let mut children: Vec<Child> = Vec::new();
        let mut entered = false;
        let mut started = Ok(Vec::new());
        for launch in &launches {
            if launch.inside && !entered {
                if let Err(e) = enter(&netns) {
                    started = Err(e);
                    break;
                }
                entered = true;
            }
            match spawn(launch) {
                Ok(child) => {
                    if let Ok(pids) = &mut started {
                        pids.push(child.id());
                    }
                    children.push(child);
                }
                Err(e) => {
                    started = Err(format!("cannot start {}: {e}", launch.program.display()));
                    break;
                }
            }
        }
        let failed = started.is_err();
        let _ = started_tx.send(started);
        // Until the HaCluster drops its sender.
        while let (false, Ok(order)) = (failed, received.recv()) {
            match order {
                Order::Restart { pid, launch, reply } => {
                    if let Some(old) = children.iter_mut().find(|c| c.id() == pid) {
                        let _ = old.wait();
                    }
                    children.retain(|c| c.id() != pid);
                    let restarted = spawn(&launch)
                        .map(|child| {
                            let pid = child.id();
                            children.push(child);
                            pid
                        })
                        .map_err(|e| e.to_string());
                    let _ = reply.send(restarted);
                }
            }
        }
        for child in &mut children {
            let _ = child.kill();
        }
        for child in &mut children {
            let _ = child.wait();
        }
    });
    let started = started_rx
        .recv()
        .unwrap_or_else(|_| Err("the keeper thread ended".into()));
    (orders, started, keeper)
}

/// Moves the calling thread into the network namespace at `path`.
fn enter(path: &Path) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    rustix::thread::move_into_link_name_space(
        std::os::fd::AsFd::as_fd(&file),
        Some(rustix::thread::LinkNameSpaceType::Network),
    )
    .map_err(|e| format!("cannot enter {}: {e}", path.display()))
}

fn spawn(launch: &Launch) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt as _;
    let out = std::fs::File::create(&launch.log)?;
    let err = out.try_clone()?;
    let mut command = Command::new(&launch.program);
    command
        .args(&launch.args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    #[allow(unsafe_code)]
    // SAFETY: the closure runs between fork and exec and only calls prctl(2), which is
    // async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.spawn()
}

/// The program and arguments of the running process `pid`.
fn command_line(pid: u32) -> (PathBuf, Vec<String>) {
    let program = std::fs::read_link(format!("/proc/{pid}/exe"))
        .unwrap_or_else(|e| panic!("kube-apiserver's program (pid {pid}): {e}"));
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_else(|e| panic!("kube-apiserver's command line (pid {pid}): {e}"));
    let args = cmdline
        .split(|&b| b == 0)
        .skip(1)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    (program, args)
}

/// The cluster server's flags for one more server on `port`: its own port on the
/// namespace's loopback and certificate directory, no audit log (the cluster's is
/// its own server's), no endpoint reconciler (see the module).
fn server_args(original: &[String], port: u16, dir: &Path, name: &str) -> Vec<String> {
    let dropped = [
        "--secure-port",
        "--bind-address",
        "--cert-dir",
        "--audit-log-path",
        "--audit-policy-file",
        "--audit-log-maxsize",
        "--endpoint-reconciler-type",
    ];
    let mut args: Vec<String> = original
        .iter()
        .filter(|a| {
            let flag = a.split_once('=').map_or(a.as_str(), |(f, _)| f);
            !dropped.contains(&flag)
        })
        .cloned()
        .collect();
    args.extend([
        format!("--secure-port={port}"),
        "--bind-address=127.0.0.1".into(),
        format!("--cert-dir={}", dir.join(format!("{name}-certs")).display()),
        "--endpoint-reconciler-type=none".into(),
    ]);
    args
}

/// haproxy's configuration (see the module).
fn haproxy_config(
    front: std::net::SocketAddr,
    socket: &Path,
    netns: &str,
    servers: &[Server],
) -> String {
    let mut config = format!(
        "global
  stats socket {socket} mode 600 level admin
defaults
  mode tcp
  timeout connect 2s
  timeout client 10m
  timeout server 10m
  retries 3
  option redispatch
frontend api
  bind {front}
  default_backend apiservers
backend apiservers
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server check check-ssl verify none inter 500ms fall 2 rise 1
",
        socket = socket.display()
    );
    for server in servers {
        config.push_str(&format!(
            "  server {} 127.0.0.1:{} namespace {netns}\n",
            server.name, server.port
        ));
    }
    config
}

/// The backend's servers out of haproxy's `show stat` CSV.
fn parse_stats(csv: &str) -> Vec<ServerStat> {
    let mut lines = csv.lines();
    let Some(header) = lines.next().and_then(|h| h.strip_prefix("# ")) else {
        return Vec::new();
    };
    let columns: Vec<&str> = header.split(',').collect();
    let column = |name: &str| columns.iter().position(|c| *c == name);
    let (Some(px), Some(sv), Some(scur), Some(stot), Some(bout), Some(status)) = (
        column("pxname"),
        column("svname"),
        column("scur"),
        column("stot"),
        column("bout"),
        column("status"),
    ) else {
        return Vec::new();
    };
    lines
        .map(|line| line.split(',').collect::<Vec<_>>())
        .filter(|f| f.get(px) == Some(&"apiservers"))
        .filter(|f| !matches!(f.get(sv), Some(&"BACKEND" | &"FRONTEND")))
        .map(|f| ServerStat {
            name: f.get(sv).unwrap_or(&"").to_string(),
            status: f.get(status).unwrap_or(&"").to_string(),
            sessions: f.get(scur).and_then(|n| n.parse().ok()).unwrap_or(0),
            total: f.get(stot).and_then(|n| n.parse().ok()).unwrap_or(0),
            bytes_out: f.get(bout).and_then(|n| n.parse().ok()).unwrap_or(0),
        })
        .collect()
}

/// Whether `pid` is a zombie (exited, not yet reaped by the keeper).
fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| rest.starts_with('Z')))
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_the_backend_s_servers() {
        let csv = "# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status\n\
api,FRONTEND,,,1,2,,5,0,0,0,0,0,,,,,OPEN\n\
apiservers,apiserver-0,0,0,1,1,,3,0,900,,0,,0,0,0,0,UP\n\
apiservers,apiserver-1,0,0,0,1,,2,0,0,,0,,0,0,0,0,DOWN\n\
apiservers,BACKEND,0,0,1,2,,5,0,0,0,0,,0,0,0,0,UP\n";
        assert_eq!(
            parse_stats(csv),
            vec![
                ServerStat {
                    name: "apiserver-0".into(),
                    status: "UP".into(),
                    sessions: 1,
                    total: 3,
                    bytes_out: 900,
                },
                ServerStat {
                    name: "apiserver-1".into(),
                    status: "DOWN".into(),
                    sessions: 0,
                    total: 2,
                    bytes_out: 0,
                },
            ]
        );
    }

    #[test]
    fn a_server_takes_the_cluster_s_flags_on_its_own_port() {
        let original = [
            "--etcd-servers=http://127.0.0.1:2379",
            "--bind-address=0.0.0.0",
            "--secure-port=6443",
            "--audit-log-path=/x/audit.log",
            "--endpoint-reconciler-type=lease",
            "--v=1",
        ]
        .map(String::from);
        let args = server_args(&original, 7000, Path::new("/d"), "apiserver-1");
        assert_eq!(
            args,
            [
                "--etcd-servers=http://127.0.0.1:2379",
                "--v=1",
                "--secure-port=7000",
                "--bind-address=127.0.0.1",
                "--cert-dir=/d/apiserver-1-certs",
                "--endpoint-reconciler-type=none",
            ]
        );
    }
}
