//! `kubectl rolling-update` (binary `kubectl-rolling_update`): kubectl 1.17's
//! rolling update of a ReplicationController, back with its exact semantics.
//!
//! This is the thin entry point: the shared skeleton (`cli::run`) parses and
//! hands over to [`options::run`] (complete → validate → run).

mod args;
mod cluster;
mod controller;
mod fencepost;
mod file;
mod handover;
mod help;
mod hint;
mod merge;
mod model;
mod names;
mod options;
mod output;
mod prepare;
mod updater;
mod validate;

fn main() -> std::process::ExitCode {
    cli::run(&args::PLUGIN, options::run)
}
