//! `kubectl run-pod` (binary `kubectl-run_pod`): Create and run a particular image in a pod.
//!
//! This is the thin entry point: parse, then hand over to the options module.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

/// Create and run a particular image in a pod.
#[derive(Parser, Debug)]
#[command(name = "kubectl run-pod", version, about)]
struct Args {
    #[command(flatten)]
    config: shared::flags::ConfigFlags,
}

fn main() -> ExitCode {
    if let Some(code) = shared::completion::maybe_handle(Args::command(), &[]) {
        return code;
    }
    let args = Args::parse();
    shared::cli::init_logging(args.config.verbosity);
    shared::cli::finish(
        "kubectl run-pod",
        Err(anyhow::anyhow!("kubectl run-pod is not implemented yet")),
    )
}
