//! The core crate of the kubeplug kubectl plugins.
//!
//! Every `kubectl-*` binary in this workspace is a thin `main.rs` over this crate.
//! The modules mirror the packages of kubectl and cli-runtime they are modelled on:
//!
//! - [`flags`]: reusable clap flag groups with `to_*()` conversions — the global
//!   kubeconfig flags every plugin shares ([`flags::ConfigFlags`]), `--dry-run`, `-o`.
//! - [`generate`]: pure generators (parameters in, typed object out) for `run-pod`.
//! - [`help`]: `--help` in kubectl's layout, rendered from the clap definitions.
//! - [`printers`]: `-o json|yaml|name|jsonpath…` and the `pod/web created` line.
//! - [`cli`]: the edge of every binary — logging and the one place where errors
//!   become messages and exit codes.
//! - [`tls`]: the rustls crypto provider, installed once before any client.
//! - [`term`]: whether stderr gets colour (`NO_COLOR`, `TERM=dumb`, a terminal).
//! - [`warnings`]: the API server's `Warning` headers, shown once each on stderr as
//!   kubectl shows them, and `--warnings-as-errors`.
//! - [`credentials`]: credential-plugin failures in client-go's words, without the
//!   secrets kube's own messages carry.
//! - [`fuzzing`]: the entry points of the fuzz targets in `fuzz/`, also replayed as
//!   tests over the saved corpora.
//! - [`completion`]: shell completion — kubectl's `kubectl_complete-*` helper protocol
//!   and clap_complete scripts, behind one call in each plugin's `main`.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use clap::Parser;
//! #[derive(Parser)]
//! struct Args {
//!     #[command(flatten)]
//!     config: shared::flags::ConfigFlags,
//! }
//! let args = Args::parse();
//! let client = args.config.to_client().await?;
//! # Ok(()) }
//! ```

pub mod cli;
pub mod client;
pub mod completion;
pub mod credentials;
pub mod error;
pub mod flags;
pub mod fuzzing;
pub mod generate;
pub mod go_net;
pub mod help;
pub mod home;
pub mod openapi;
pub mod printers;
pub mod resource;
pub mod rest;
pub mod status;
pub mod term;
mod text;
pub mod tls;
pub mod typed;
pub mod waiting;
pub mod warnings;
mod yaml;

pub use error::Error;
