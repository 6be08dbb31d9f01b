//! How the e2e tests and the bench make a pod behave as a test needs, on the real node,
//! with nothing but what a user would write in a pod: readiness probes and commands.
//! The kubelet runs them for real; its timings (probe periods, start-up) are real too.

use serde_json::{Value, json};

use crate::node::{KUBELET_PORT, NODE_IP};

/// A readiness probe that passes from `delay_secs` seconds after the container
/// started (to within the one-second period): a TCP probe of the node's kubelet port,
/// which is open while the node runs. TCP, not an exec of `true`, so that it works in
/// every test image, the pause images too (they hold one program and no shell).
///
/// Once passed it keeps passing: the probe is there to delay readiness, not to take
/// it away, and on a loaded machine a probe can miss its one-second timeout (the
/// kubelet's prober not scheduled in time), which with one failure allowed made a
/// Ready pod unready for a second under a rolling update that then counted one
/// ready pod too few. Three failures in a row with five seconds each is never a
/// loaded machine's, and the start of readiness (one success) is unchanged.
pub fn ready_after(delay_secs: u32) -> Value {
    json!({
        "tcpSocket": {"host": NODE_IP.to_string(), "port": KUBELET_PORT},
        "initialDelaySeconds": delay_secs,
        "periodSeconds": 1,
        "timeoutSeconds": 5,
        "failureThreshold": 3,
    })
}

/// A readiness probe that never passes: a TCP probe of a port on the node that
/// nothing listens on (connection refused).
pub fn never_ready() -> Value {
    json!({
        "tcpSocket": {"host": NODE_IP.to_string(), "port": 1},
        "periodSeconds": 1,
        "failureThreshold": 1,
    })
}

/// The command of a container that ends with exit `code` about `after_ms` after it
/// started (busybox images: it runs `sh`).
pub fn exit_after(after_ms: u64, code: i32) -> Vec<String> {
    let secs = format!("{}.{:03}", after_ms / 1000, after_ms % 1000);
    vec![
        "sh".into(),
        "-c".into(),
        format!("sleep {secs}; exit {code}"),
    ]
}

/// A shell fragment that reads one line of stdin into `$x`, then waits a second before
/// the script goes on to answer it. Why the wait: containerd's attach
/// (`ContainerIO.Attach` in its CRI plugin) starts copying the client's stdin into the
/// container before it adds the client to the container's outputs, so an answer
/// written at once can fall between the two and be lost, to kubectl and run-pod alike
/// (seen once in a full run: kubectl's `second hi` missing, run-pod's there). The
/// window is a goroutine's start; a second is far past it on a loaded machine. A
/// macro, so that scripts can be `concat!`ed constants.
#[macro_export]
macro_rules! read_line {
    () => {
        "read x; sleep 1"
    };
}

/// The flags that give the one container of `kubectl run-pod NAME` (the container is
/// named as the pod) a readiness probe: a strategic-merge `--overrides`, which merges
/// containers by name.
pub fn run_pod_probe(name: &str, probe: Value) -> [String; 2] {
    let overrides = json!({"spec": {"containers": [{"name": name, "readinessProbe": probe}]}});
    [
        "--override-type=strategic".into(),
        format!("--overrides={overrides}"),
    ]
}

/// When a test pod's containers become ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// As soon as they start (no probe): the kubelet's own pace.
    Started,
    /// [`ready_after`] this many seconds.
    AfterSecs(u32),
    /// Never ([`never_ready`]).
    Never,
}

impl Readiness {
    /// The readiness probe that gives this behaviour (`None` for [`Readiness::Started`]).
    pub fn probe(self) -> Option<Value> {
        match self {
            Readiness::Started => None,
            Readiness::AfterSecs(secs) => Some(ready_after(secs)),
            Readiness::Never => Some(never_ready()),
        }
    }
}
