//! Reusable clap flag groups, in the shape of cli-runtime's `genericclioptions`.
//!
//! Each group is a `#[derive(clap::Args)]` struct that a plugin flattens into its own
//! `Args`, and converts with a `to_*()` method. Nothing here sends a request except
//! [`ConfigFlags::to_client`], which builds (but does not use) the HTTP client.

mod config;
mod duration;

pub use config::ConfigFlags;
pub use duration::parse_go_duration;
