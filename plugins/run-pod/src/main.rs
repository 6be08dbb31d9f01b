//! `kubectl run-pod` (binary `kubectl-run_pod`): Create and run a particular image in a pod.
//!
//! This is the thin entry point: the shared skeleton (`cli::run`) parses and
//! hands over to [`options::run`] (complete → validate → run). A client dry run never
//! builds a client.

mod args;
mod attach;
mod create;
mod help;
mod options;

fn main() -> std::process::ExitCode {
    cli::run(&args::PLUGIN, options::run)
}
