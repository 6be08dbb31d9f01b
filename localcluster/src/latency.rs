//! A TCP proxy on loopback that adds a round-trip time: a far-away API server on this
//! machine, for e2e tests and `cargo xtask bench`.
//!
//! Each direction delays every chunk it reads by half the round trip before writing
//! it on, keeping order, so a request/answer exchange takes one extra round trip and a
//! TLS handshake its usual number of them. TLS passes through untouched: clients keep
//! the cluster's CA and credentials, only the server address changes
//! ([`LatencyProxy::kubeconfig`]). Memory is bounded: each direction of a connection
//! holds at most [`MAX_QUEUED`] chunks of at most [`CHUNK`] bytes; beyond that the
//! proxy stops reading, and TCP's flow control slows the sender, as a long link does.
//! Bandwidth is not limited. The proxy counts what passes ([`LatencyProxy::traffic`]):
//! connections accepted and bytes each way, for the bench's "bytes received" and
//! "connections" (one HTTP/2 connection or one per request in flight).
//!
//! Runs on its own thread and runtime, so tests may block while it works; stops when
//! dropped.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, anyhow};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

/// The largest chunk read at once.
pub const CHUNK: usize = 64 * 1024;
/// Chunks in flight per direction of one connection.
pub const MAX_QUEUED: usize = 64;

/// What has passed through a proxy since it started: subtract two readings to get
/// one client run's share.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    /// TCP connections accepted from clients.
    pub connections: u64,
    /// Bytes read from the server (what the clients receive; TLS records included).
    pub received: u64,
    /// Bytes read from the clients (what they send).
    pub sent: u64,
}

impl std::ops::Sub for Traffic {
    type Output = Traffic;
    fn sub(self, earlier: Traffic) -> Traffic {
        Traffic {
            connections: self.connections.saturating_sub(earlier.connections),
            received: self.received.saturating_sub(earlier.received),
            sent: self.sent.saturating_sub(earlier.sent),
        }
    }
}

/// The proxy's running counts, shared with its connection tasks.
#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    received: AtomicU64,
    sent: AtomicU64,
}

/// The proxy; stops (closing every connection) when dropped.
pub struct LatencyProxy {
    pub addr: SocketAddr,
    pub upstream: SocketAddr,
    pub rtt: Duration,
    counters: Arc<Counters>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    dir: tempfile::TempDir,
}

impl LatencyProxy {
    /// A proxy to the server of `kubeconfig`'s current context (which must be on
    /// loopback) adding `rtt` to every round trip.
    pub fn for_kubeconfig(kubeconfig: &Path, rtt: Duration) -> anyhow::Result<Self> {
        let kc = kube::config::Kubeconfig::read_from(kubeconfig)?;
        Self::start(server_addr(&kc)?, rtt)
    }

    /// A proxy to `upstream` (a loopback address) adding `rtt` to every round trip.
    pub fn start(upstream: SocketAddr, rtt: Duration) -> anyhow::Result<Self> {
        anyhow::ensure!(
            upstream.ip().is_loopback(),
            "the latency proxy forwards to loopback only"
        );
        Self::serve(std::net::TcpListener::bind("127.0.0.1:0")?, upstream, rtt)
    }

    /// The proxy on a listener of the caller's (one bound in another network
    /// namespace, where the clients are), to `upstream` on this one's loopback.
    pub fn serve(
        listener: std::net::TcpListener,
        upstream: SocketAddr,
        rtt: Duration,
    ) -> anyhow::Result<Self> {
        anyhow::ensure!(
            upstream.ip().is_loopback(),
            "the latency proxy forwards to loopback only"
        );
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let one_way = rtt / 2;
        let counters = Arc::new(Counters::default());
        let shared = Arc::clone(&counters);
        let (stop_tx, thread) = serve_on_own_thread("latency-proxy", listener, move |listener| {
            accept_loop(listener, upstream, one_way, shared)
        })?;
        let dir = tempfile::Builder::new()
            .prefix("kubeplug-latency-")
            .tempdir()?;
        Ok(Self {
            addr,
            upstream,
            rtt,
            counters,
            stop: Some(stop_tx),
            thread: Some(thread),
            dir,
        })
    }

    /// Connections and bytes so far. A byte is counted when the proxy reads it, before
    /// it is passed on, so a client that has exited has been counted in full.
    pub fn traffic(&self) -> Traffic {
        Traffic {
            connections: self.counters.connections.load(Ordering::SeqCst),
            received: self.counters.received.load(Ordering::SeqCst),
            sent: self.counters.sent.load(Ordering::SeqCst),
        }
    }

    /// A copy of `kubeconfig` (YAML or JSON) whose servers at the upstream address point
    /// at the proxy instead; mode 0600 (it holds the original's credentials), removed
    /// with the proxy.
    pub fn kubeconfig(&self, kubeconfig: &Path) -> anyhow::Result<PathBuf> {
        let text = std::fs::read_to_string(kubeconfig)
            .with_context(|| format!("reading {}", kubeconfig.display()))?;
        let from = format!("https://{}", self.upstream);
        anyhow::ensure!(
            text.contains(&from),
            "{} has no server {from}",
            kubeconfig.display()
        );
        let name = kubeconfig
            .file_name()
            .map_or_else(|| "kubeconfig".into(), |n| n.to_string_lossy().into_owned());
        let path = self.dir.path().join(name);
        std::fs::write(
            &path,
            text.replace(&from, &format!("https://{}", self.addr)),
        )?;
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        Ok(path)
    }
}

impl Drop for LatencyProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Runs `serve(listener)` on a thread with its own runtime until the returned sender
/// fires or drops (tests block on child processes while a proxy must keep working).
/// Open connections end with the runtime.
pub fn serve_on_own_thread<F, Fut>(
    name: &str,
    listener: std::net::TcpListener,
    serve: F,
) -> std::io::Result<(
    tokio::sync::oneshot::Sender<()>,
    std::thread::JoinHandle<()>,
)>
where
    F: FnOnce(TcpListener) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                let Ok(listener) = TcpListener::from_std(listener) else {
                    return;
                };
                tokio::select! {
                    _ = serve(listener) => {}
                    _ = stop_rx => {}
                }
            });
            runtime.shutdown_timeout(Duration::from_millis(100));
        })?;
    Ok((stop_tx, thread))
}

/// The loopback address of the current context's server.
pub fn server_addr(kc: &kube::config::Kubeconfig) -> anyhow::Result<SocketAddr> {
    let context_name = kc
        .current_context
        .as_ref()
        .ok_or_else(|| anyhow!("kubeconfig has no current context"))?;
    let cluster_name = kc
        .contexts
        .iter()
        .find(|c| &c.name == context_name)
        .and_then(|c| c.context.as_ref())
        .map(|c| c.cluster.clone())
        .ok_or_else(|| anyhow!("context {context_name} not found"))?;
    let server: http::Uri = kc
        .clusters
        .iter()
        .find(|c| c.name == cluster_name)
        .and_then(|c| c.cluster.as_ref())
        .and_then(|c| c.server.clone())
        .ok_or_else(|| anyhow!("cluster {cluster_name} has no server"))?
        .parse()?;
    let authority = server
        .authority()
        .ok_or_else(|| anyhow!("server URL has no host"))?;
    format!(
        "{}:{}",
        authority.host(),
        authority.port_u16().unwrap_or(443)
    )
    .parse()
    .context("the latency proxy forwards to a loopback IP address only")
}

async fn accept_loop(
    listener: TcpListener,
    upstream: SocketAddr,
    one_way: Duration,
    counters: Arc<Counters>,
) {
    loop {
        let Ok((client, _peer)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        counters.connections.fetch_add(1, Ordering::SeqCst);
        let counters = Arc::clone(&counters);
        tokio::spawn(async move {
            let Ok(server) = TcpStream::connect(upstream).await else {
                return;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            tokio::join!(
                delayed_copy(client_read, server_write, one_way, &counters.sent),
                delayed_copy(server_read, client_write, one_way, &counters.received),
            );
        });
    }
}

/// Copies `from` to `to`, each chunk `delay` after it was read, adding what it reads
/// to `count`; a closed read side becomes a shut-down write side once everything
/// before it was written.
async fn delayed_copy(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: Duration,
    count: &AtomicU64,
) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(Instant, Vec<u8>)>(MAX_QUEUED);
    let reader = async move {
        let mut buf = vec![0; CHUNK];
        loop {
            match from.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    count.fetch_add(n as u64, Ordering::SeqCst);
                    if tx
                        .send((Instant::now() + delay, buf[..n].to_vec()))
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    };
    let writer = async move {
        while let Some((due, chunk)) = rx.recv().await {
            tokio::time::sleep_until(due).await;
            if to.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(reader, writer);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server on loopback: what it reads it writes back, then closes.
    fn echo_server() -> SocketAddr {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                std::thread::spawn(move || {
                    let mut reader = stream.try_clone().expect("clone");
                    let _ = std::io::copy(&mut reader, &mut stream);
                    let _ = stream.shutdown(std::net::Shutdown::Write);
                });
            }
        });
        addr
    }

    #[test]
    fn bytes_arrive_intact_in_order_and_a_round_trip_later() {
        use std::io::{Read, Write};
        let upstream = echo_server();
        let rtt = Duration::from_millis(80);
        let proxy = LatencyProxy::start(upstream, rtt).expect("proxy");
        let mut stream = std::net::TcpStream::connect(proxy.addr).expect("connect");
        // More than the proxy's queue holds, so that flow control is exercised too.
        let sent: Vec<u8> = (0..(CHUNK * MAX_QUEUED + 12345))
            .map(|i| (i % 251) as u8)
            .collect();
        let started = std::time::Instant::now();
        let mut writer = stream.try_clone().expect("clone");
        let to_send = sent.clone();
        let sender = std::thread::spawn(move || {
            writer.write_all(&to_send).expect("write");
            writer
                .shutdown(std::net::Shutdown::Write)
                .expect("half-close");
        });
        let mut received = Vec::new();
        stream
            .read_to_end(&mut received)
            .expect("read until the echo closes");
        sender.join().expect("sender");
        assert!(received == sent, "the echo differs from what was sent");
        let len = sent.len() as u64;
        assert_eq!(
            proxy.traffic(),
            Traffic {
                connections: 1,
                received: len,
                sent: len
            }
        );
        let later = Traffic {
            connections: 3,
            received: len + 10,
            sent: len,
        };
        assert_eq!(
            later - proxy.traffic(),
            Traffic {
                connections: 2,
                received: 10,
                sent: 0
            }
        );
        // The delay is the tool's whole point: at least one round trip was added.
        assert!(started.elapsed() >= rtt, "no latency added");
    }

    #[test]
    fn only_loopback_upstreams() {
        let err = LatencyProxy::start("192.0.2.1:443".parse().expect("addr"), Duration::ZERO)
            .err()
            .expect("refused");
        assert!(err.to_string().contains("loopback only"));
    }

    #[test]
    fn the_kubeconfig_points_at_the_proxy() {
        let upstream = echo_server();
        let proxy = LatencyProxy::start(upstream, Duration::ZERO).expect("proxy");
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().join("kubeconfig");
        std::fs::write(
            &base,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://{upstream}\ncontexts:\n- name: x\n  context:\n    cluster: c\ncurrent-context: x\n"
            ),
        )
        .expect("write");
        let kc = kube::config::Kubeconfig::read_from(&base).expect("read");
        assert_eq!(server_addr(&kc).expect("server"), upstream);
        let rewritten =
            std::fs::read_to_string(proxy.kubeconfig(&base).expect("kubeconfig")).expect("read");
        assert!(rewritten.contains(&format!("server: https://{}", proxy.addr)));
        assert!(!rewritten.contains(&upstream.to_string()));
    }
}
