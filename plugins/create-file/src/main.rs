//! `kubectl create-file` (binary `kubectl-create_file`): Create a resource from a file or
//! from stdin — kubectl's `create -f` on the shared resource Builder.
//!
//! This is the thin entry point: the shared skeleton (`cli::run`) parses and
//! hands over to [`options::run`] (complete → validate → run).

mod args;
mod create;
mod edit;
mod help;
mod limit;
mod options;
mod order;
mod report;
mod resolve;
mod wait;
mod writers;

fn main() -> std::process::ExitCode {
    cli::run(&args::PLUGIN, options::run)
}
