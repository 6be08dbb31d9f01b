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
mod interrupt;
mod names;
mod options;
mod output;
mod updater;
mod validate;

use std::error::Error as _;
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

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
    let args = match flags::Args::try_parse_from(&argv) {
        Ok(args) => args,
        Err(err) => return flag_error(err, &argv),
    };
    shared::cli::init_logging(args.config.verbosity);
    let options = RollingUpdateOptions::complete(&args);
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
        let config = args.config.to_config().await?;
        // `-f` objects are always held to this namespace (see file.rs), so whether
        // -n was explicit does not matter here.
        let (namespace, _explicit) = args.config.namespace_of(&config);
        let cache = shared::resource::DiscoveryCache::for_server(&config.cluster_url);
        let client = kube::Client::try_from(config)?;
        // -f is read before Ctrl-C is caught: nothing has been changed yet.
        let from_file = options.read_file(client.clone(), cache, &namespace).await?;
        let interrupt = interrupt::Interrupt::install();
        options.run(client, from_file, &namespace, interrupt).await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
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

/// Flag-parse errors in kubectl's shape (`Error: …` and a pointer to --help);
/// --help and --version print normally. `argv` is the command line that failed.
fn flag_error(err: clap::Error, argv: &[std::ffi::OsString]) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ = err.print();
        return ExitCode::SUCCESS;
    }
    use clap::error::ContextKind;
    let context = |kind| match err.get(kind) {
        Some(clap::error::ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    // pflag's wording, which scripts written for kubectl may match on.
    let message = match err.kind() {
        ErrorKind::UnknownArgument => {
            let arg = context(ContextKind::InvalidArg);
            if arg.starts_with("--") || arg.len() < 2 {
                format!("unknown flag: {arg}")
            } else {
                format!(
                    "unknown shorthand flag: {:?} in {arg}",
                    arg.chars().nth(1).unwrap_or('-')
                )
            }
        }
        ErrorKind::ValueValidation | ErrorKind::InvalidValue => {
            let flag = context(ContextKind::InvalidArg);
            let flag = flag.split([' ', '[', '=']).next().unwrap_or_default();
            let value = context(ContextKind::InvalidValue);
            if value.is_empty() && err.kind() == ErrorKind::InvalidValue {
                return finish_flag_error(&format!(
                    "flag needs an argument: {}",
                    as_typed(flag, argv)
                ));
            }
            let reason = err
                .source()
                .map(|e| e.to_string())
                .unwrap_or_else(|| "invalid value".into());
            format!("invalid argument {value:?} for \"{flag}\" flag: {reason}")
        }
        _ => {
            let rendered = err.render().to_string();
            let first = rendered.lines().next().unwrap_or_default().to_string();
            first.strip_prefix("error: ").unwrap_or(&first).to_string()
        }
    };
    finish_flag_error(&message)
}

/// How pflag names a flag that lacks its value: `'f' in -f` when it was typed as a
/// shorthand (alone or last in a group), `--filename` otherwise. clap's context only
/// holds the long form, so the last word of the command line spelling the flag decides.
fn as_typed(flag: &str, argv: &[std::ffi::OsString]) -> String {
    let Some(long) = flag.strip_prefix("--") else {
        return flag.to_string();
    };
    let command = <flags::Args as clap::CommandFactory>::command();
    let short = command
        .get_arguments()
        .find(|a| a.get_long() == Some(long))
        .and_then(clap::Arg::get_short);
    let typed = argv.iter().skip(1).rev().find_map(|word| {
        let word = word.to_str()?;
        if word == flag || word.starts_with(&format!("{flag}=")) {
            return Some(None);
        }
        let cluster = word.strip_prefix('-').filter(|w| !w.starts_with('-'))?;
        short
            .filter(|c| cluster.contains(*c))
            .map(|c| Some(format!("'{c}' in -{c}")))
    });
    match typed {
        Some(Some(shorthand)) => shorthand,
        _ => flag.to_string(),
    }
}

fn finish_flag_error(message: &str) -> ExitCode {
    // Cobra's own prefix (capital E), not kubectl's `error: `.
    let _ = writeln!(
        std::io::stderr(),
        "Error: {message}\nSee '{COMMAND} --help' for usage."
    );
    ExitCode::from(1)
}
