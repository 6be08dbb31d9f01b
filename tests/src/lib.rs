//! The harness of kubeplug's end-to-end tests, over the local test cluster
//! (`localcluster`: the control plane, the real node and the `kubeplug-cluster`
//! supervisor that runs them).
//!
//! - [`faults`]: real faults for e2e tests: a loopback API proxy that SIGKILLs a
//!   client right after the server applied its k-th write, signals to control-plane
//!   processes, and the rolling-update invariant checker.
//! - [`ha`]: more API servers on a cluster's etcd behind a real balancer (haproxy),
//!   for the tests of a server that dies under a command.
//! - [`harness`]: one control plane per test run, one namespace per test, helpers to
//!   run the plugins directly and through the real `kubectl`.
//! - [`klog`]: the klog lines of a `-v` run: the requests they name, and the
//!   normalisation (time, pid, source line, milliseconds) their comparison allows.
//! - [`live`]: a plugin run a test acts on while it runs (its output line by line,
//!   signals, a bounded end).
//! - [`objects`]: objects as tests create and read them back (pod readiness, a
//!   namespace's ConfigMaps, a pod through a fresh namespace's admission).
//! - [`foreign`]: what the cluster does not know, for error paths (a closed port, a
//!   foreign CA), and kubectl's klog lines taken out of its stderr.

pub mod faults;
pub mod foreign;
pub mod ha;
pub mod harness;
pub mod klog;
pub mod live;
pub mod objects;
