//! `kubectl rolling-update` (binary `kubectl-rolling_update`): kubectl 1.17's
//! rolling update of a ReplicationController, back with its exact semantics.
//!
//! This is the thin entry point: parse, validate (no cluster needed), build the
//! client, then hand over to [`options::RollingUpdateOptions`].

mod cluster;
mod controller;
mod fencepost;
mod file;
mod flags;
mod handover;
mod hint;
mod interrupt;
mod names;
mod options;
mod output;
mod updater;
mod validate;

use std::io::Write;
use std::process::ExitCode;

use crate::options::{COMMAND, RollingUpdateOptions, Stopped, UsageErrors};

fn main() -> ExitCode {
    // `kubectl_complete-<plugin>` (a link to this binary), `__complete` and
    // `completion SHELL` are answered before any parsing; see shared::completion.
    if let Some(code) = shared::completion::maybe_handle(
        <flags::Args as clap::CommandFactory>::command(),
        &[shared::completion::Source::ReplicationControllers],
    ) {
        return code;
    }
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let args = match flags::parse(&argv) {
        Ok(args) => args,
        Err(err) => {
            let cmd = <flags::Args as clap::CommandFactory>::command();
            return shared::cli::flag_error(COMMAND, &cmd, &err, &argv);
        }
    };
    // pflag prints it while parsing, before anything else.
    if let Some(notice) = args.record.deprecation() {
        eprintln!("{notice}");
    }
    shared::cli::init_logging(args.config.verbosity);
    let mut options = RollingUpdateOptions::complete(&args);
    if let Err(err) = options.validate() {
        return report(err);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => return report(anyhow::Error::new(err).context("starting the async runtime")),
    };
    let result = runtime.block_on(async {
        shared::cli::install_crypto_provider();
        let mut config = args.config.to_config().await?;
        // No request may outlast --timeout (nor --request-timeout, set by to_config):
        // the shared bound, with --timeout as the limit; watches ask the server to end
        // them below it (options.rs).
        shared::rest::bound_requests(
            &mut config,
            Some(options.timeout.max(std::time::Duration::from_secs(1))),
        );
        // `-f` objects are always held to this namespace (see file.rs), so whether
        // -n was explicit does not matter here.
        let (namespace, _explicit) = args.config.namespace_of(&config);
        let argv: Vec<String> = std::env::args().skip(1).collect();
        options.hints = hint::Hints::new(COMMAND, &argv, &options.args, &namespace);
        let cache = args.config.discovery_cache(&config);
        let client = args.config.client(config)?;
        // -f is read before Ctrl-C is caught: nothing has been changed yet.
        let from_file = options.read_file(client.clone(), cache, &namespace).await?;
        let interrupt = interrupt::Interrupt::install(options.hints.text(options.rollback));
        options.run(client, from_file, &namespace, interrupt).await
    });
    match result {
        // Through finish for --warnings-as-errors.
        Ok(()) => shared::cli::finish(COMMAND, Ok(ExitCode::SUCCESS)),
        Err(err) => report(err),
    }
}

/// Prints an error: usage aggregates and interruptions as prepared, everything
/// else through the shared kubectl-shaped formatter.
fn report(err: anyhow::Error) -> ExitCode {
    if let Some(UsageErrors(text)) = err.downcast_ref::<UsageErrors>() {
        let _ = std::io::stderr().write_all(text.as_bytes());
        return ExitCode::from(1);
    }
    if let Some(stopped) = err.downcast_ref::<Stopped>() {
        let _ = writeln!(std::io::stderr(), "{stopped}");
        return ExitCode::from(stopped.exit_code);
    }
    shared::cli::finish(COMMAND, Err(err))
}
