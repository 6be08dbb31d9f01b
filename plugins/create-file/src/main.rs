//! `kubectl create-file` (binary `kubectl-create_file`): Create a resource from a file or from stdin.
//!
//! This is the thin entry point: parse, then hand over to the options module.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

/// Create a resource from a file or from stdin.
#[derive(Parser, Debug)]
#[command(name = "kubectl create-file", version, about)]
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
        "kubectl create-file",
        Err(anyhow::anyhow!(
            "kubectl create-file is not implemented yet"
        )),
    )
}
