//! The status of the objects a command created or waits on, by rules alone: pure
//! functions of the objects as the callers' watches last saw them. No request is made
//! here; the plugins read the objects and print the lines.
//!
//! - [`readiness`]: when a created object is ready by its kind's rules, and which
//!   causes mean it never will be (create-file `--wait`).
//! - [`waiting`]: why a wait is not over, in the server's words (the `Waiting:`
//!   lines of rolling-update's stalled steps and run-pod's attach wait).
//! - [`objects`]: the objects as those rules read them, only the fields they look
//!   at (binary size: not k8s-openapi's whole models).

pub mod objects;
pub mod readiness;
pub mod waiting;
