//! The one start-up of every plugin: each `main.rs` is `cli::run(&PLUGIN, body)`.
//!
//! The order is fixed because each step depends on the ones before, and users see
//! it (kubectl's, pflag's and cobra's):
//! 1. completion requests (`kubectl_complete-<plugin>`, `__complete`, `completion`),
//!    answered before any parsing;
//! 2. parsing; a flag error in pflag's words ([`super::flag_error`]);
//! 3. deprecation notices (`--record`): pflag prints them while parsing, so kubectl
//!    1.32 shows them even before `--help`;
//! 4. `-h/--help` in kubectl's layout ([`crate::help`]), then `--version`;
//! 5. logging from `-v`, the rustls crypto provider, the async runtime;
//! 6. the plugin's body (complete → validate → run) with its [`Context`];
//! 7. [`super::finish`]: every outcome becomes a message and an exit code.

use std::ffi::OsString;
use std::future::Future;
use std::io::Write as _;
use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
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
        self.command_for(kuberc_off())
    }

    /// [`Self::command`], with kuberc turned off or not (`KUBECTL_KUBERC=false`: then
    /// kubectl has no `--kuberc`, so the flag is hidden here and refused by
    /// [`Self::parse`]).
    fn command_for(&self, kuberc_off: bool) -> clap::Command {
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
        let cmd = if kuberc_off {
            cmd.mut_arg("kuberc", |a| a.hide(true))
        } else {
            cmd
        };
        // pflag lets any flag repeat, the last value winning (lists append: clap's
        // `Append` args are left alone by this).
        crate::flags::pflag_arguments(crate::flags::go_bool_flags(cmd.args_override_self(true)))
    }

    /// Parses `argv` into the plugin's flags and the matches (for [`Context`]).
    pub fn parse<A: FromArgMatches>(
        &self,
        argv: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    ) -> Result<(A, ArgMatches), clap::Error> {
        self.parse_for(argv, kuberc_off())
    }

    fn parse_for<A: FromArgMatches>(
        &self,
        argv: impl IntoIterator<Item = impl Into<OsString> + Clone>,
        kuberc_off: bool,
    ) -> Result<(A, ArgMatches), clap::Error> {
        let cmd = self.command_for(kuberc_off);
        let matches = cmd.clone().try_get_matches_from(argv)?;
        if kuberc_off && matches.value_source("kuberc") == Some(ValueSource::CommandLine) {
            let mut err = clap::Error::new(ErrorKind::UnknownArgument).with_cmd(&cmd);
            err.insert(
                ContextKind::InvalidArg,
                ContextValue::String("--kuberc".into()),
            );
            return Err(err);
        }
        let args = A::from_arg_matches(&matches)?;
        Ok((args, matches))
    }

    /// The `--help` text.
    pub fn help_text(&self) -> String {
        crate::help::render(&self.command(), &self.help)
    }

    /// The house rules for a plugin's command line, checked by each plugin's tests
    /// (so a flag added to one plugin is held to them): no flag name or shorthand
    /// declared twice, every visible flag with a help text, kubectl's help layout (the
    /// same sections in the same order for every plugin, no clap `[default: …]`),
    /// `-h`/`--help` and `--version` present, no clap `-V`. Returns the violations.
    pub fn lint(&self) -> Vec<String> {
        let cmd = self.command();
        let mut problems = Vec::new();
        let flags: Vec<&Arg> = cmd.get_arguments().filter(|a| !a.is_positional()).collect();
        let mut longs = std::collections::BTreeMap::<String, usize>::new();
        let mut shorts = std::collections::BTreeMap::<char, usize>::new();
        for arg in &flags {
            for long in arg
                .get_long()
                .into_iter()
                .chain(arg.get_all_aliases().unwrap_or_default())
            {
                *longs.entry(long.to_string()).or_default() += 1;
            }
            for short in arg
                .get_short()
                .into_iter()
                .chain(arg.get_all_short_aliases().unwrap_or_default())
            {
                *shorts.entry(short).or_default() += 1;
            }
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            if !arg.is_hide_set() && help.trim().is_empty() {
                problems.push(format!("--{} has no help text", arg.get_id()));
            }
        }
        problems.extend(
            longs
                .iter()
                .filter(|(_, n)| **n > 1)
                .map(|(l, n)| format!("--{l} is declared {n} times")),
        );
        problems.extend(
            shorts
                .iter()
                .filter(|(_, n)| **n > 1)
                .map(|(s, n)| format!("-{s} is declared {n} times")),
        );
        if shorts.contains_key(&'V') {
            problems.push("-V is clap's version flag, not kubectl's".into());
        }
        for (long, short) in [("help", Some('h')), ("version", None)] {
            if !flags
                .iter()
                .any(|a| a.get_long() == Some(long) && a.get_short() == short)
            {
                problems.push(format!("--{long} is missing or has another shorthand"));
            }
        }
        let help = self.help_text();
        if help.contains("[default:") {
            problems.push("the help shows clap's [default: …]".into());
        }
        if help_sections(&help) != HELP_SECTIONS {
            problems.push(format!(
                "help sections {:?}, not kubectl's {HELP_SECTIONS:?}",
                help_sections(&help)
            ));
        }
        if !help.starts_with(self.help.long) {
            problems.push("the help does not start with the description".into());
        }
        if !self.help.usage.starts_with(self.name) {
            problems.push(format!(
                "the usage line does not start with {:?}",
                self.name
            ));
        }
        problems
    }
}

/// The sections of kubectl's help, in order (`kubectl run --help` of 1.32, plus the
/// global flags a plugin parses itself).
const HELP_SECTIONS: [&str; 4] = ["Examples:", "Options:", "Global options:", "Usage:"];

/// The section headers of a help text: unindented lines ending with `:`.
fn help_sections(help: &str) -> Vec<&str> {
    help.lines()
        .filter(|l| {
            !l.starts_with([' ', '\t']) && l.ends_with(':') && !l.contains(' ')
                || *l == "Global options:"
        })
        .collect()
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
    // kubectl reads kuberc first, before it parses any flag.
    let preferences = match read_kuberc(&argv) {
        Ok(preferences) => preferences,
        Err(code) => return code,
    };
    let cmd = plugin.command();
    let (args, matches) = match plugin.parse::<A>(argv.clone()) {
        Ok(parsed) => parsed,
        Err(err) => return super::flag_error(plugin.name, &cmd, &err, &argv),
    };
    let (help, version) = (matches.get_flag("help"), matches.get_flag("version"));
    let ctx = match Context::new(plugin.name, &cmd, matches) {
        Ok(ctx) => ctx.with_preferences(preferences),
        Err(err) => return super::finish(plugin.name, Err(err)),
    };
    // pflag prints it while parsing, before anything else the command says.
    if let Some(notice) = ctx.deprecation() {
        let _ = writeln!(apiclient::output::Stderr, "{notice}");
    }
    if help {
        return print_and_exit(&plugin.help_text());
    }
    if version {
        return print_and_exit(&super::version::text());
    }
    if let Some(refusal) = ctx.flags().profile_refusal(plugin.name) {
        return super::finish(plugin.name, Err(anyhow::anyhow!(refusal)));
    }
    // `-v` takes a negative level as klog does (it then logs as level 0), and a level
    // past 255 logs as everything does.
    let level = u8::try_from(ctx.flags().verbosity.max(0)).unwrap_or(u8::MAX);
    super::init_logging(level, plugin.crate_name);
    apiclient::tls::install_crypto_provider();
    let result = runtime().and_then(|rt| rt.block_on(body(args, ctx)));
    // What std's stdout still buffers: a closed pipe found here is one to end on too.
    let _ = apiclient::output::Stdout.flush();
    super::finish(plugin.name, result)
}

/// kuberc as kubectl reads it before running a command ([`apiclient::kuberc`]): its
/// warnings printed, a failure printed in kubectl's words with its exit code 1.
fn read_kuberc(argv: &[OsString]) -> Result<apiclient::kuberc::Preferences, ExitCode> {
    let env = apiclient::kuberc::Env::from_process();
    if env.disabled() {
        // No kuberc and no `--kuberc`: the parser refuses the flag as unknown.
        return Ok(apiclient::kuberc::Preferences::default());
    }
    // kubectl reads kuberc before it looks for a plugin, and prints its warnings then;
    // since 1.37 it tells its plugins that it ran them by `KUBECTL_PATH`. Run so, the
    // plugin keeps the warnings to itself: the user has seen them once already (a
    // kuberc error stops kubectl before the plugin starts). kubectl 1.34–1.36 read
    // kuberc too but do not say so: there the warnings still show twice.
    let mut warnings: Box<dyn std::io::Write> = if std::env::var_os("KUBECTL_PATH").is_some() {
        Box::new(std::io::sink())
    } else {
        Box::new(std::io::stderr())
    };
    let result = apiclient::kuberc::explicit_path(argv)
        .and_then(|explicit| apiclient::kuberc::load(explicit.as_deref(), &env, &mut warnings));
    let mut stderr = std::io::stderr();
    match result {
        Ok(preferences) => Ok(preferences.unwrap_or_default()),
        Err(e) => {
            let _ = writeln!(stderr, "error occurred while applying preferences {e}");
            Err(ExitCode::from(1))
        }
    }
}

/// `KUBECTL_KUBERC=false`: kubectl's switch for kuberc, `--kuberc` included.
fn kuberc_off() -> bool {
    apiclient::kuberc::Env::from_process().disabled()
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

/// `--help` and `--version`: printed, exit 0; a closed stdout ends them as it ends
/// kubectl's (`--help | head -1`), with nothing to report.
fn print_and_exit(text: &str) -> ExitCode {
    let mut out = apiclient::output::Stdout;
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if apiclient::output::is_closed(&e) => super::closed_output::end(),
        _ => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plugin that breaks every rule [`Plugin::lint`] checks.
    #[derive(clap::Parser, Debug)]
    #[command(name = "kubectl bad")]
    struct Bad {
        #[arg(long)]
        quiet: bool,
        #[arg(short = 'q', long = "quick")]
        quick: bool,
        #[arg(short = 'q', long = "quack", help = "Quack.")]
        quack: bool,
        #[arg(short = 'V', long = "verbose-ish", help = "Clap's letter.")]
        verbose_ish: bool,
    }

    fn bad() -> clap::Command {
        <Bad as clap::CommandFactory>::command()
    }

    #[test]
    fn lint_finds_each_planted_violation() {
        let plugin = Plugin {
            name: "kubectl bad",
            crate_name: "bad",
            flags: bad,
            help: HelpText {
                long: "Bad.",
                examples: "  kubectl bad",
                usage: "bad [options]",
            },
            completion: &[],
        };
        let problems = plugin.lint();
        for expected in [
            "--quiet has no help text",
            "--quick has no help text",
            "-q is declared 2 times",
            "-V is clap's version flag, not kubectl's",
            "the usage line does not start with \"kubectl bad\"",
        ] {
            assert!(
                problems.iter().any(|p| p == expected),
                "{expected}: {problems:?}"
            );
        }
        assert_eq!(problems.len(), 5, "{problems:?}");
    }

    #[test]
    fn kubectls_sections_are_found() {
        let help = "Long.\n\nExamples:\n  x\n\nOptions:\n    --a='':\n\tA:\n\nGlobal options:\n\nUsage:\n  kubectl x\n";
        assert_eq!(help_sections(help), HELP_SECTIONS);
    }

    #[derive(clap::Parser, Debug)]
    struct Nothing {}

    fn nothing() -> clap::Command {
        <Nothing as clap::CommandFactory>::command()
    }

    /// With `KUBECTL_KUBERC=false` kubectl has no `--kuberc`: pflag's unknown flag.
    #[test]
    fn kuberc_off_refuses_and_hides_the_kuberc_flag() {
        let plugin = Plugin {
            name: "kubectl nothing",
            crate_name: "nothing",
            flags: nothing,
            help: HelpText {
                long: "Nothing.",
                examples: "  kubectl nothing",
                usage: "nothing [options]",
            },
            completion: &[],
        };
        let argv = ["kubectl-nothing", "--kuberc=/tmp/k"];
        assert!(plugin.parse_for::<Nothing>(argv, false).is_ok());
        let err = plugin
            .parse_for::<Nothing>(argv, true)
            .expect_err("refused");
        let argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
        assert_eq!(
            crate::flag_error::flag_error_message(&plugin.command_for(true), &err, &argv),
            "unknown flag: --kuberc"
        );
        let hidden = |off: bool| {
            plugin
                .command_for(off)
                .get_arguments()
                .any(|a| a.get_id() == "kuberc" && a.is_hide_set())
        };
        assert!(hidden(true));
        assert!(!hidden(false));
    }
}
