//! REST helpers: the verbs sent to the API server for one kind of object.
//!
//! - [`helper`]: cli-runtime's `resource.Helper` for dynamic objects (create with
//!   dry-run and field manager, raw POST), used by `create-file` and `run-pod`;
//! - [`dry_run`]: the `--dry-run` strategy the Helper sends by.
//!
//! The bound on every request of a client and client-go's retries are the API
//! client's (`apiclient::bound`, `apiclient::retry`).

pub mod dry_run;
pub mod helper;

pub use dry_run::DryRunStrategy;
pub use helper::{Helper, post_raw};
