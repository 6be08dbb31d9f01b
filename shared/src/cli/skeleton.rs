//! The one start-up of every plugin: each `main.rs` is `cli::run(&PLUGIN, body)`.
//!
//! The order is fixed because each step depends on the ones before, and users see
//! it (kubectl's, pflag's and cobra's):
//! 1. completion requests (`kubectl_complete-<plugin>`, `__complete`, `completion`),
//!    answered before any parsing;
//! 2. parsing; a flag error in pflag's words ([`super::flag_error`]);
//! 3. `-h/--help` in kubectl's layout ([`crate::help`]), then `--version`;
//! 4. deprecation notices (`--record`), which pflag prints while parsing;
//! 5. logging from `-v`, the rustls crypto provider, the async runtime;
//! 6. the plugin's body (complete → validate → run) with its [`Context`];
//! 7. [`super::finish`]: every outcome becomes a message and an exit code.

use std::ffi::OsString;
use std::future::Future;
use std::io::Write as _;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Args as _, FromArgMatches};

use super::Context;
use crate::completion::Source;
use crate::flags::{ConfigFlags, RecordFlags};
use crate::help::HelpText;

/// What a plugin tells the skeleton about itself. Its own flags are a clap command;
/// the skeleton adds kubectl's global flags, `--record`, `-h/--help` and `--version`.
#[derive(Debug, Clone, Copy)]
pub struct Plugin {
    /// The user-facing name, `kubectl run-pod`: usage hints, `--record`'s cause.
    pub name: &'static str,
    /// `env!("CARGO_CRATE_NAME")`: the tracing target the plugin logs under at `-v=4`.
    pub crate_name: &'static str,
    /// The plugin's own flags (a derived `Args::command`, help and version disabled).
    pub flags: fn() -> clap::Command,
    /// kubectl's help texts around the flags.
    pub help: HelpText<'static>,
    /// Completion sources of the positional arguments, in order.
    pub completion: &'static [Source],
}

impl Plugin {
    /// The complete clap command: the plugin's flags, kubectl's global flags,
    /// `--record`, `-h/--help`, `--version`, every switch taking pflag's `--x=false`.
    /// The one definition behind parsing, `--help` and completion.
    pub fn command(&self) -> clap::Command {
        let cmd = (self.flags)()
            .disable_help_flag(true)
            .disable_version_flag(true);
        let cmd = RecordFlags::augment_args(ConfigFlags::augment_args(cmd));
        let sub = self.name.rsplit(' ').next().unwrap_or(self.name);
        let cmd = cmd
            .arg(
                Arg::new("help")
                    .short('h')
                    .long("help")
                    .action(ArgAction::SetTrue)
                    .help(format!("help for {sub}")),
            )
            .arg(
                // Hidden as kubectl's own `--version` was: the help texts stay kubectl's.
                Arg::new("version")
                    .long("version")
                    .action(ArgAction::SetTrue)
                    .hide(true)
                    .help("Print the version information and quit"),
            );
        crate::flags::go_bool_flags(cmd)
    }

    /// Parses `argv` into the plugin's flags and the matches (for [`Context`]).
    pub fn parse<A: FromArgMatches>(
        &self,
        argv: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    ) -> Result<(A, ArgMatches), clap::Error> {
        let matches = self.command().try_get_matches_from(argv)?;
        let args = A::from_arg_matches(&matches)?;
        Ok((args, matches))
    }

    /// The `--help` text.
    pub fn help_text(&self) -> String {
        crate::help::render(&self.command(), &self.help)
    }
}

/// Runs a plugin from start to exit code, in the order of the module docs. `body` is
/// the plugin's complete → validate → run.
pub fn run<A, F, Fut>(plugin: &Plugin, body: F) -> ExitCode
where
    A: FromArgMatches,
    F: FnOnce(A, Context) -> Fut,
    Fut: Future<Output = anyhow::Result<ExitCode>>,
{
    if let Some(code) = crate::completion::maybe_handle(plugin.command(), plugin.completion) {
        return code;
    }
    let argv: Vec<OsString> = std::env::args_os().collect();
    let cmd = plugin.command();
    let (args, matches) = match plugin.parse::<A>(argv.clone()) {
        Ok(parsed) => parsed,
        Err(err) => return super::flag_error(plugin.name, &cmd, &err, &argv),
    };
    let flag = |id: &str| matches.get_flag(id);
    if flag("help") {
        return print_and_exit(&plugin.help_text());
    }
    if flag("version") {
        return print_and_exit(&super::version::text());
    }
    let ctx = match Context::new(plugin.name, &cmd, matches) {
        Ok(ctx) => ctx,
        Err(err) => return super::finish(plugin.name, Err(err)),
    };
    // pflag prints it while parsing, before anything else the command says.
    if let Some(notice) = ctx.deprecation() {
        let _ = writeln!(std::io::stderr(), "{notice}");
    }
    super::init_logging(ctx.flags().verbosity, plugin.crate_name);
    super::install_crypto_provider();
    let result = runtime().and_then(|rt| rt.block_on(body(args, ctx)));
    let _ = std::io::stdout().flush();
    super::finish(plugin.name, result)
}

/// One runtime flavour for the three plugins: multi-threaded. create-file decodes and
/// creates many objects at once and uses the cores; rolling-update's signal task must
/// run (a second Ctrl-C exits at once) even while the main task is in a blocking step;
/// run-pod's attach pumps stdin, stdout and the WebSocket at the same time, tokio's
/// stdout writing from its blocking pool.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow::Error::new(e).context("unable to start the async runtime"))
}

/// `--help` and `--version`: printed, exit 0 (a closed stdout is no error to report).
fn print_and_exit(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    ExitCode::SUCCESS
}
