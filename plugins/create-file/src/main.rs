//! `kubectl create-file` (binary `kubectl-create_file`): Create a resource from a file or
//! from stdin — kubectl's `create -f` on the shared resource Builder.
//!
//! This is the thin entry point: parse, then complete → validate → run (options.rs).

use std::process::ExitCode;

use clap::CommandFactory;

mod args;
mod create;
mod edit;
mod help;
mod options;
mod report;

const COMMAND: &str = "kubectl create-file";

fn main() -> ExitCode {
    // `kubectl_complete-<plugin>` (a link to this binary), `__complete` and
    // `completion SHELL` are answered before any parsing; see shared::completion.
    if let Some(code) =
        shared::completion::maybe_handle(<args::Args as clap::CommandFactory>::command(), &[])
    {
        return code;
    }
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let args = match args::parse(argv.clone()) {
        Ok(args) => args,
        Err(err) => {
            eprintln!("{}", args::flag_error_message(&err, &argv));
            return ExitCode::from(1);
        }
    };
    if args.help {
        print!("{}", help::render(&args::Args::command()));
        return ExitCode::SUCCESS;
    }
    shared::cli::init_logging(args.config.verbosity);
    shared::cli::install_crypto_provider();
    let result = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(async move {
            let options = options::CreateFileOptions::complete(args).await?;
            options.validate()?;
            options.run().await
        }),
        Err(e) => Err(anyhow::Error::new(e).context("unable to start the async runtime")),
    };
    shared::cli::finish(COMMAND, result)
}
