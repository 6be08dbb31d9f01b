//! The simulated node: one or more fake kubelets that make a control plane
//! without kubelets (etcd + kube-apiserver + kube-controller-manager, and
//! kube-scheduler where the release has one) behave like a cluster, entirely
//! through the real API.
//!
//! [`run`] registers the Node objects, keeps them healthy, binds
//! unscheduled pods where no kube-scheduler runs, runs bound pods on a container [`Runtime`] and reports
//! their status, and finalizes their deletion:
//!
//! - **Nodes** ([`nodes`]): Node objects with a Ready condition, capacity and
//!   allocatable (cpu 4, memory 8Gi, pods 110), `InternalIP` 127.0.0.1, the
//!   kubelet port in `daemonEndpoints`, kubelet version v1.20.2 by default (the
//!   harness gives the release's). Every
//!   [`NodeSimConfig::heartbeat`] their Lease in `kube-node-lease` is renewed
//!   and the conditions get a fresh `lastHeartbeatTime`, so the
//!   node-lifecycle controller never marks them NotReady or taints them.
//! - **Scheduling** ([`scheduler`]): where no kube-scheduler runs (1.20.2),
//!   pods with no `spec.nodeName` and scheduler `default-scheduler` are bound
//!   round-robin to the nodes through `POST pods/NAME/binding`; otherwise the
//!   release's scheduler binds them.
//! - **Pods** (`kubelet`): one watch on all pods (with back-off and
//!   re-lists); each pod bound to one of our nodes gets a worker task that
//!   sleeps on per-pod timers (never polls) and posts `status` when it
//!   changes: phase, hostIP, a unique podIP (127.0.0.2, …), startTime, the
//!   PodScheduled/Initialized/ContainersReady/Ready conditions with their
//!   transition times, and kubelet-shaped `containerStatuses`
//!   ([`status::pod_status`]). Pods bound to other nodes are left alone.
//! - **Deletion**: a pod with a `deletionTimestamp` has its containers
//!   stopped (SIGTERM, SIGKILL after the grace period), its terminated status
//!   posted, and is then deleted with `gracePeriodSeconds: 0` and a uid
//!   precondition, as the kubelet does.
//! - **Events** ([`events`]): `Scheduled` from `default-scheduler` on
//!   binding; `Pulling`/`Pulled`/`Created`/`Started` for every container run,
//!   `BackOff` in a crash loop, `Pulling`/`Failed`/`BackOff` for an image that
//!   does not exist, and `Killing` on deletion from `kubelet`, with
//!   the kubelet's reasons, messages and field paths, so `kubectl describe
//!   pod` shows what it shows on a real cluster.
//!
//! # Steering annotations
//!
//! Tests shape a pod's behaviour with annotations on the pod (or on the pod
//! template of a ReplicationController, ReplicaSet or Deployment). They apply
//! to every app container of the pod and are read once, when the pod starts:
//!
//! | annotation | value | effect |
//! |---|---|---|
//! | [`sim.kubeplug.io/ready-after-ms`](steering::READY_AFTER_MS) | `"N"` | containers become ready N ms after each start (default: [`NodeSimConfig::default_ready_after`]) |
//! | [`sim.kubeplug.io/never-ready`](steering::NEVER_READY) | `"true"` | Running, never Ready |
//! | [`sim.kubeplug.io/exit-code`](steering::EXIT_CODE) | `"K"` | containers terminate with exit code K (default 0 when only exit-after is set) |
//! | [`sim.kubeplug.io/exit-after-ms`](steering::EXIT_AFTER_MS) | `"N"` | … N ms after each start (default 0 when only exit-code is set) |
//! | [`sim.kubeplug.io/ignore-sigterm`](steering::IGNORE_SIGTERM) | `"true"` | deletion waits for the whole grace period, then SIGKILL (exit code 137) |
//! | [`sim.kubeplug.io/token-refresh-after-ms`](process::volumes::TOKEN_REFRESH_AFTER_MS) | `"N"` | process pods: the service-account token is requested again N ms after the last one, not at 80% of its lifetime |
//! | [`sim.kubeplug.io/token-bound-secret`](process::volumes::TOKEN_BOUND_SECRET) | `"NAME"` | process pods: the first token is bound to Secret NAME (deleting it revokes that token), later ones to the pod |
//! | *(no annotation)* an image whose registry host ends in `.invalid` ([`pull`]) | `registry.invalid/web:2` | the image does not exist: the container is never created; `ErrImagePull` with containerd's `… lookup registry.invalid: no such host` for 1 s after each pull, then `ImagePullBackOff` (`Back-off pulling image "…": ErrImagePull: …`) for the crash-loop back-off below, then the next pull; events `Pulling`, `Failed`, `BackOff` as the kubelet posts them. `.invalid` is reserved (RFC 2606), so a real runtime fails the same way; a test fixes it by using another image |
//!
//! Terminations follow the pod's `restartPolicy` like a kubelet: reason
//! `Completed` for exit code 0, `Error` otherwise; with `Never` the pod ends
//! `Succeeded` (all 0) or `Failed`; `OnFailure` restarts containers that
//! exited non-zero and `Always` restarts every exit, after a short
//! crash-loop back-off (200ms doubling to 5s; state `waiting` with reason
//! `CrashLoopBackOff` meanwhile), incrementing `restartCount` and keeping
//! the previous run in `lastState.terminated`. Containers stopped by a
//! deletion exit 0 on SIGTERM. Malformed values are logged and ignored.
//!
//! # Processes and the kubelet API
//!
//! Everything that depends on *how* containers run sits behind
//! [`Runtime`]/[`PodRuntime`]: workers only start pods, observe container
//! states, wait for changes and request stops. [`run`] uses two runtimes:
//!
//! - a pod in which some container has `command` or `args` runs on the
//!   [`process`] runtime: real child processes, real exit codes, output kept
//!   for `kubectl logs`, stdin and terminals for `kubectl attach`; its
//!   containers without a command idle until the pod is deleted. Of the
//!   steering annotations only `ready-after-ms`, `never-ready` and the two
//!   token ones apply (readiness has no process to ask). With
//!   [`NodeSimConfig::api_server`] its containers get `KUBERNETES_SERVICE_HOST`
//!   and `_PORT` and the pod's projected volumes (the service-account token,
//!   refreshed as a kubelet refreshes it) in a mount namespace of their own
//!   ([`process::volumes`]);
//! - every other pod, and any pod with an `exit-code`, `exit-after-ms` or
//!   `ignore-sigterm` annotation (the script wins over the command), runs on
//!   the timer-based [`SimulatedRuntime`] described above; its logs are empty
//!   and it cannot be attached to.
//!
//! The kubelet HTTPS API (`containerLogs`, `attach`, `exec` over WebSocket
//! v4/v5 channel protocols) is served on 127.0.0.1:[`NodeSimConfig::kubelet_port`],
//! which the nodes advertise, so the API server proxies `pods/log`,
//! `pods/attach` and `pods/exec` to it.

pub mod backoff;
pub mod events;
pub mod ip_pool;
mod kubelet;
pub mod nodes;
pub mod process;
pub mod pull;
pub mod runtime;
pub mod scheduler;
mod server;
pub mod simulated;
pub mod status;
pub mod steering;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

pub use runtime::{PodRuntime, Runtime};
pub use simulated::SimulatedRuntime;
pub use steering::{EXIT_AFTER_MS, EXIT_CODE, IGNORE_SIGTERM, NEVER_READY, READY_AFTER_MS};

/// What the simulated node acts as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSimConfig {
    /// Names of the Node objects to register and serve (at least one).
    pub node_names: Vec<String>,
    /// How long containers take to become ready, unless a pod says otherwise
    /// with [`READY_AFTER_MS`].
    pub default_ready_after: Duration,
    /// The kubelet port advertised in `status.daemonEndpoints`.
    pub kubelet_port: u16,
    /// Lease renewal and node status heartbeat period (kubelet: 10s; the
    /// controller-manager declares a node unhealthy after 40s of silence).
    pub heartbeat: Duration,
    /// The version the kubelets report: the control plane's.
    pub kubelet_version: String,
    /// Bind unscheduled pods ([`scheduler`]): for a control plane without a
    /// kube-scheduler. With one, the real scheduler binds them.
    pub bind_pods: bool,
    /// The API server's URL (`https://127.0.0.1:PORT`) as the containers
    /// reach it: with it, process containers get `KUBERNETES_SERVICE_HOST`
    /// and `_PORT` and their projected volumes, the service-account token
    /// among them ([`process::volumes`]); without it, neither.
    pub api_server: Option<String>,
}

impl Default for NodeSimConfig {
    /// One node, `kubeplug-node-0`, pods ready after 200ms, kubelet port
    /// 10250, heartbeat every 10s, kubelet v1.20.2 binding pods itself (the
    /// 1.20.2 control plane has no scheduler).
    fn default() -> Self {
        Self {
            node_names: vec!["kubeplug-node-0".to_owned()],
            default_ready_after: Duration::from_millis(200),
            kubelet_port: 10250,
            heartbeat: Duration::from_secs(10),
            kubelet_version: "v1.20.2".to_owned(),
            bind_pods: true,
            api_server: None,
        }
    }
}

/// Runs the simulated node until `shutdown` resolves, then returns
/// `Ok(())`: pods with commands on the [`process`] runtime, the others on
/// the [`SimulatedRuntime`] (see [`process::runs_processes`]), and the
/// kubelet API on 127.0.0.1:[`NodeSimConfig::kubelet_port`].
///
/// Fails only at start-up: on an invalid config, when the kubelet port is
/// taken, or when the nodes cannot be registered (API server unreachable
/// for about half a minute, forbidden). Once running, API errors are logged
/// and retried. Every container process is killed when this returns.
pub async fn run(
    client: kube::Client,
    config: NodeSimConfig,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    validate(&config)?;
    let listener = tokio::net::TcpListener::bind((nodes::NODE_IP, config.kubelet_port))
        .await
        .with_context(|| {
            format!(
                "cannot serve the kubelet API on {}:{}",
                nodes::NODE_IP,
                config.kubelet_port
            )
        })?;
    let scratch = tempfile::Builder::new()
        .prefix("kubeplug-node-")
        .tempdir()
        .context("cannot create the pods' scratch directory")?;
    let registry = Arc::new(process::Registry::default());
    let server = tokio::spawn(server::serve(listener, Arc::clone(&registry)));
    let mut runtime = process::NodeRuntime::new(
        config.default_ready_after,
        registry,
        scratch.path().to_owned(),
    );
    if let Some(server) = &config.api_server {
        runtime = runtime.with_api(api_access(&client, server)?);
    }
    let runtime = Arc::new(runtime);
    let result = run_with_runtime(client, config, runtime, shutdown).await;
    server.abort();
    result
}

/// [`run`] with another container runtime. `config.default_ready_after` is
/// not used here: it configures the [`SimulatedRuntime`] that [`run`] builds.
pub async fn run_with_runtime(
    client: kube::Client,
    config: NodeSimConfig,
    runtime: Arc<dyn Runtime>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    validate(&config)?;
    let mut shutdown = std::pin::pin!(shutdown);
    let registered = tokio::select! {
        () = &mut shutdown => return Ok(()),
        registered = register_all(&client, &config) => registered?,
    };

    let kubelet = kubelet_info(&config);
    let node_labels: Vec<(String, BTreeMap<String, String>)> = config
        .node_names
        .iter()
        .map(|name| {
            let labels = nodes::node_object(name, &kubelet, k8s_openapi::jiff::Timestamp::now())
                .metadata
                .labels
                .unwrap_or_default();
            (name.clone(), labels)
        })
        .collect();

    let heartbeat = tokio::spawn(nodes::heartbeat_loop(
        client.clone(),
        registered,
        kubelet,
        config.heartbeat,
    ));
    kubelet::Kubelet::new(client, node_labels, runtime, config.bind_pods)
        .run(shutdown)
        .await;
    heartbeat.abort();
    Ok(())
}

/// The API server as pods reach it, from its URL.
fn api_access(client: &kube::Client, server: &str) -> anyhow::Result<process::volumes::Api> {
    let uri: http::Uri = server
        .parse()
        .with_context(|| format!("invalid API server URL {server:?}"))?;
    let host = uri
        .host()
        .with_context(|| format!("no host in the API server URL {server:?}"))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    Ok(process::volumes::Api {
        client: client.clone(),
        host,
        port: uri.port_u16().unwrap_or(443),
    })
}

fn kubelet_info(config: &NodeSimConfig) -> nodes::KubeletInfo {
    nodes::KubeletInfo {
        port: config.kubelet_port,
        version: config.kubelet_version.clone(),
    }
}

fn validate(config: &NodeSimConfig) -> anyhow::Result<()> {
    anyhow::ensure!(
        !config.node_names.is_empty(),
        "the simulated node needs at least one node name"
    );
    let mut seen = std::collections::HashSet::new();
    for name in &config.node_names {
        anyhow::ensure!(
            is_dns_subdomain(name),
            "invalid node name {name:?}: must be a DNS subdomain"
        );
        anyhow::ensure!(seen.insert(name), "node name {name:?} is listed twice");
    }
    anyhow::ensure!(
        !config.heartbeat.is_zero(),
        "the heartbeat period must be positive"
    );
    Ok(())
}

/// RFC 1123 subdomain, the rule for Node names.
fn is_dns_subdomain(name: &str) -> bool {
    name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// Registers every node and its first lease, retrying transient failures
/// for about 30 seconds (the API server may still be settling).
async fn register_all(
    client: &kube::Client,
    config: &NodeSimConfig,
) -> anyhow::Result<Vec<nodes::RegisteredNode>> {
    let mut delay = Duration::from_millis(250);
    let mut attempt = 0;
    loop {
        attempt += 1;
        match try_register_all(client, config).await {
            Ok(registered) => return Ok(registered),
            Err(e) if attempt >= 8 || is_permanent(&e) => {
                return Err(e).context("the simulated node could not register its nodes");
            }
            Err(e) => {
                tracing::warn!(error = %e, ?delay, "node registration failed; retrying");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(8));
            }
        }
    }
}

async fn try_register_all(
    client: &kube::Client,
    config: &NodeSimConfig,
) -> kube::Result<Vec<nodes::RegisteredNode>> {
    nodes::ensure_lease_namespace(client).await?;
    let mut registered = Vec::new();
    for name in &config.node_names {
        let node = nodes::register(client, name, &kubelet_info(config)).await?;
        nodes::renew_lease(client, &node).await?;
        registered.push(node);
    }
    Ok(registered)
}

/// Errors no retry will fix: the request itself is wrong or not allowed.
fn is_permanent(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(s) if matches!(s.code, 400 | 401 | 403 | 422))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_matches_the_documented_one() {
        let config = NodeSimConfig::default();
        assert_eq!(config.node_names, ["kubeplug-node-0"]);
        assert_eq!(config.default_ready_after, Duration::from_millis(200));
        assert_eq!(config.kubelet_port, 10250);
        assert_eq!(config.heartbeat, Duration::from_secs(10));
        assert!(validate(&config).is_ok());
    }

    #[test]
    fn rejects_unusable_configs() {
        let with = |f: fn(&mut NodeSimConfig)| {
            let mut c = NodeSimConfig::default();
            f(&mut c);
            validate(&c).map_err(|e| e.to_string())
        };
        assert_eq!(
            with(|c| c.node_names.clear()),
            Err("the simulated node needs at least one node name".to_owned())
        );
        assert_eq!(
            with(|c| c.node_names = vec!["Node_A".to_owned()]),
            Err("invalid node name \"Node_A\": must be a DNS subdomain".to_owned())
        );
        assert_eq!(
            with(|c| c.node_names = vec!["a".to_owned(), "a".to_owned()]),
            Err("node name \"a\" is listed twice".to_owned())
        );
        assert_eq!(
            with(|c| c.heartbeat = Duration::ZERO),
            Err("the heartbeat period must be positive".to_owned())
        );
        assert!(with(|c| c.node_names = vec!["n-1.example".to_owned(), "n2".to_owned()]).is_ok());
    }
}
