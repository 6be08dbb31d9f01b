//! REST helpers: the verbs sent to the API server for one kind of object.
//!
//! - [`helper`]: cli-runtime's `resource.Helper` for dynamic objects (create with
//!   dry-run and field manager, raw POST), used by `create-file`.
//! - [`bound`]: the bound on every request of a client (`--request-timeout`, or a
//!   default that a paused server cannot outwait).
//! - [`retry`]: client-go's retries of `429` and `5xx` answers with `Retry-After`, a
//!   layer on every plugin's client.

pub mod helper;

pub use helper::{Helper, post_raw};
