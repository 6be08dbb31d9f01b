//! The names of the simulated node's per-pod steering annotations (parsed by
//! `tests::node::steering`), for whoever writes such pods: the e2e tests and the bench.

/// `"N"` (milliseconds): the containers become ready N ms after they start
/// (again after every restart). Overrides the node's default delay.
pub const READY_AFTER_MS: &str = "sim.kubeplug.io/ready-after-ms";
/// `"true"`: the containers run but never become ready.
pub const NEVER_READY: &str = "sim.kubeplug.io/never-ready";
/// `"K"`: the containers terminate with exit code K (0..=255, or any i32 a
/// kubelet could report). Defaults to 0 when only [`EXIT_AFTER_MS`] is set.
pub const EXIT_CODE: &str = "sim.kubeplug.io/exit-code";
/// `"N"` (milliseconds): the containers terminate N ms after they start
/// (again after every restart). Defaults to 0 when only [`EXIT_CODE`] is set.
pub const EXIT_AFTER_MS: &str = "sim.kubeplug.io/exit-after-ms";
/// `"true"`: the containers ignore SIGTERM, so deleting the pod takes the
/// whole grace period and ends in a SIGKILL (exit code 137).
pub const IGNORE_SIGTERM: &str = "sim.kubeplug.io/ignore-sigterm";
