//! `kubectl create-file` (binary `kubectl-create_file`): Create a resource from a file or
//! from stdin — kubectl's `create -f` on the shared resource Builder.
//!
//! This is the thin entry point: parse, then complete → validate → run (options.rs).

use std::process::ExitCode;

mod args;
mod create;
mod edit;
mod help;
mod limit;
mod options;
mod order;
mod report;

const COMMAND: &str = "kubectl create-file";

fn main() -> ExitCode {
    // `kubectl_complete-<plugin>` (a link to this binary), `__complete` and
    // `completion SHELL` are answered before any parsing; see shared::completion.
    if let Some(code) = shared::completion::maybe_handle(args::command(), &[]) {
        return code;
    }
    let argv: Vec<_> = std::env::args_os().collect();
    let args = match args::parse(argv.clone()) {
        Ok(args) => args,
        Err(err) => return shared::cli::flag_error(COMMAND, &args::command(), &err, &argv),
    };
    // pflag prints it while parsing, before anything else.
    if let Some(notice) = args.record.deprecation() {
        eprintln!("{notice}");
    }
    if args.help {
        print!("{}", help::render(&args::command()));
        return ExitCode::SUCCESS;
    }
    shared::cli::init_logging(args.config.verbosity);
    shared::tls::install_crypto_provider();
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
