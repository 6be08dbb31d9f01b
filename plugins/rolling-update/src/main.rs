//! `kubectl rolling-update` (binary `kubectl-rolling_update`): Perform a rolling update of the given ReplicationController.
//!
//! This is the thin entry point: parse, then hand over to the options module.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

/// Perform a rolling update of the given ReplicationController.
#[derive(Parser, Debug)]
#[command(name = "kubectl rolling-update", version, about)]
struct Args {
    #[command(flatten)]
    config: shared::flags::ConfigFlags,
}

fn main() -> ExitCode {
    if let Some(code) = shared::completion::maybe_handle(
        Args::command(),
        &[shared::completion::Source::ReplicationControllers],
    ) {
        return code;
    }
    let args = Args::parse();
    shared::cli::init_logging(args.config.verbosity);
    shared::cli::finish(
        "kubectl rolling-update",
        Err(anyhow::anyhow!(
            "kubectl rolling-update is not implemented yet"
        )),
    )
}
