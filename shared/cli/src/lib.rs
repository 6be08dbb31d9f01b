//! The edge of every plugin binary: the start-up skeleton every `main.rs` calls
//! ([`run`] with a [`Plugin`], giving the plugin a [`Context`]), start-up chores, and the
//! one place where an error becomes a message on stderr and an exit code ([`finish`]).
//!
//! kubectl's conventions, which CI scripts depend on:
//! - success exits 0; any error prints `error: …` (or `Error from server (Reason): …`
//!   for API errors) and exits 1;
//! - usage errors add `See 'kubectl <cmd> -h' for help and examples` and also exit 1
//!   ([`UsageError`]; several at once, as kubectl 1.17's rolling-update reports them,
//!   are a [`UsageErrors`]);
//! - a run stopped by a signal prints how to go on and exits 128 + the signal
//!   ([`Stopped`]);
//! - command-line (flag) errors are pflag's, `error: …` and `See '… --help' for
//!   usage.`, exit 1 ([`flag_error`]);
//! - a command that reports a container's exit code (`run-pod --attach`) exits with it;
//! - a closed stdout or stderr (`| head -1`) ends the command killed by SIGPIPE, as it
//!   ends kubectl (a shell reports 141), after the command has finished or reported what
//!   it had in flight (`closed_output`, [`apiclient::output`]);
//! - with `--warnings-as-errors`, a command that succeeded but saw server warnings
//!   prints `error: N warning(s) received` and exits 1 ([`apiclient::warnings`]).
//!
//! The crate's modules, the top layer of the library crates (it uses `resources`,
//! `apiclient`, `goyaml` and `gotext`; none of them uses it):
//! - the skeleton: `skeleton` ([`run`], [`Plugin`]), `context` ([`Context`]: the
//!   global flags, the client and the namespace, resolved when first asked for),
//!   [`interrupt`] (Ctrl-C and SIGTERM between API calls), `closed_output` (the end of
//!   a command whose stdout or stderr was closed), `flag_error` (clap's parse
//!   errors in pflag's words), [`version`] (`--version`), `logging` (`-v`'s klog
//!   lines);
//! - [`flags`]: kubectl's global flags ([`flags::ConfigFlags`]) and the flag groups
//!   plugins share (`-o`, `--dry-run`, `--record`, `--save-config`, booleans, durations);
//! - [`printers`]: `-o json|yaml|name|go-template|jsonpath…`, kubectl's typed JSON
//!   ([`printers::gojson`]) and the `pod/web created` line;
//! - [`help`]: `--help` in kubectl's layout; [`completion`]: shell completion;
//! - [`status_line`]: the moving progress line on stderr, drawn so that Ctrl-C's
//!   echo goes when it is cleared;

mod closed_output;
mod context;
mod flag_error;
pub mod interrupt;
mod logging;
mod skeleton;
pub mod version;

pub mod completion;
pub mod flags;
pub mod help;
pub mod printers;
pub mod status_line;

use std::io::Write;
use std::process::ExitCode;

pub use context::Context;
pub use flag_error::{flag_error, flag_error_message};
pub use logging::init_logging;
pub use skeleton::{Plugin, run};

/// A usage error: the command line is wrong, nothing was sent to the server.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct UsageError {
    /// The message, without the `error: ` prefix.
    pub message: String,
}

impl UsageError {
    /// Creates a usage error with kubectl's wording.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// Several usage errors found at once, each reported with the usage hint. One alone is
/// reported as a [`UsageError`] is.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.join(", "))]
pub struct UsageErrors(pub Vec<String>);

/// A run stopped by a signal: the message and what the user needs to go on (printed
/// as they are), and the exit code (128 + the signal's number, as shells report it).
#[derive(Debug, thiserror::Error)]
#[error("{message}\n{hint}")]
pub struct Stopped {
    /// `error: interrupted by SIGINT`.
    pub message: String,
    /// How to resume or roll back.
    pub hint: String,
    /// The process's exit code.
    pub exit_code: u8,
}

/// An error that has already been printed (for example per-object errors in
/// `create-file`), carrying only the exit code to use.
#[derive(Debug, thiserror::Error)]
#[error("exit status {0}")]
pub struct SilentExit(pub u8);

/// Formats an API error as kubectl's `StandardErrorMessage` does (the one-line form;
/// the rules are in [`apiclient::status`]).
pub fn format_api_status(status: &kube::core::Status) -> String {
    apiclient::status::standard_message(status, apiclient::status::Decoded::Typed)
}

/// Formats any error for stderr, kubectl-style (without a trailing newline).
pub fn format_error(err: &anyhow::Error) -> String {
    for cause in err.chain() {
        if let Some(kube::Error::Api(status)) = cause.downcast_ref::<kube::Error>() {
            // An error that is one API status is printed as kubectl's CheckErr does.
            // The plugins' own calls are kubectl's typed ones (run's ClientForMapping,
            // rolling-update's clientset); create -f's per-object errors are not
            // printed here.
            return apiclient::status::check_err(status, apiclient::status::Decoded::Typed);
        }
        // Several problems with the kubeconfig's user: kubectl's list, without `error: `.
        if let Some(apiclient::error::Error::InvalidAuthInfo(errors)) =
            cause.downcast_ref::<apiclient::error::Error>()
            && errors.len() > 1
        {
            return cause.to_string();
        }
        // The Builder's aggregate of command-line errors: CheckErr's lines, bare.
        if let Some(resources::ResourceError::Several(_)) = cause.downcast_ref() {
            return cause.to_string();
        }
        match cause.downcast_ref::<apiclient::error::Error>() {
            // client-go's loader returns an aggregate of the files it could not read;
            // CheckErr prints one of them as any error, several one per line, bare.
            Some(apiclient::error::Error::KubeconfigFiles(errors)) => {
                return errors.iter().map(|e| format!("{e}\n")).collect();
            }
            // ConfirmUsable's ErrConfigurationInvalid: CheckErr's MultilineError.
            Some(e @ apiclient::error::Error::CurrentContextNotFound(_)) => {
                return format!("Error in configuration: {e}\n");
            }
            // kubectl gets credentials while connecting, so its CheckErr says this.
            Some(apiclient::error::Error::Credentials(credentials)) => {
                return format!("Unable to connect to the server: {credentials}");
            }
            _ => {}
        }
        // The same, for credentials that failed while a request was being sent.
        if let Some(credentials) = cause.downcast_ref::<apiclient::credentials::CredentialsError>()
        {
            return format!("Unable to connect to the server: {credentials}");
        }
    }
    // A request that got no answer, not framed by a step of ours: kubectl's
    // StandardErrorMessage of Go's url.Error (apiclient::go_net, the one mapping).
    for cause in err.chain() {
        if cause.is::<apiclient::error::Error>() || cause.is::<resources::ResourceError>() {
            break;
        }
        if let Some(apiclient::go_net::Unreachable(message)) = cause.downcast_ref() {
            return message.clone();
        }
        if (cause.is::<kube::Error>()
            || cause.is::<apiclient::client::Requested>()
            || cause.is::<apiclient::bound::Bounded>())
            && let Some(message) = apiclient::go_net::standard_message(cause)
        {
            return message;
        }
    }
    format!("error: {}", apiclient::go_net::error_chain(err.as_ref()))
}

/// The single place where a plugin's outcome becomes an exit code.
///
/// `command` is the user-facing name (`kubectl run-pod`) for the usage hint.
pub fn finish(command: &str, result: anyhow::Result<ExitCode>) -> ExitCode {
    // A closed stdout or stderr ends every command the same way, whatever it returned:
    // the work whose output could not be written does not count as done.
    if apiclient::output::closed().is_some() {
        if let Err(err) = &result
            && !apiclient::output::is_closed(err.as_ref())
            && !err.is::<SilentExit>()
        {
            // What went wrong besides, for as long as stderr is open.
            let _ = writeln!(
                apiclient::output::Stderr,
                "{}",
                format_error(err).trim_end()
            );
        }
        return closed_output::end();
    }
    let err = match result {
        // kubectl checks --warnings-as-errors only after a command that succeeded.
        Ok(code) if code == ExitCode::SUCCESS => match apiclient::warnings::as_error() {
            Some(message) => anyhow::anyhow!(message),
            None => return code,
        },
        Ok(code) => return code,
        Err(err) => err,
    };
    if let Some(SilentExit(code)) = err.downcast_ref::<SilentExit>() {
        return ExitCode::from(*code);
    }
    let mut stderr = apiclient::output::Stderr;
    if let Some(stopped) = err.downcast_ref::<Stopped>() {
        let _ = writeln!(stderr, "{stopped}");
        return ExitCode::from(stopped.exit_code);
    }
    if let Some(UsageErrors(errors)) = err.downcast_ref::<UsageErrors>() {
        let _ = stderr.write_all(usage_errors(errors, command).as_bytes());
        return ExitCode::from(1);
    }
    // kubectl's `fatal` adds a newline only to a message that lacks one (a Go
    // template's error can end in one, from the value it quotes).
    let message = format_error(&err);
    let _ = if message.ends_with('\n') {
        write!(stderr, "{message}")
    } else {
        writeln!(stderr, "{message}")
    };
    if err.downcast_ref::<UsageError>().is_some() {
        let _ = writeln!(stderr, "See '{command} -h' for help and examples");
    }
    ExitCode::from(1)
}

/// Usage errors as kubectl 1.17 printed an aggregate of them: one as `error: …`, more
/// each on its own line without the prefix, every one followed by the usage hint.
fn usage_errors(errors: &[String], command: &str) -> String {
    let hint = format!("See '{command} -h' for help and examples");
    match errors {
        [one] => format!("error: {one}\n{hint}\n"),
        many => many.iter().map(|e| format!("{e}\n{hint}\n")).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_usage_error_gets_the_prefix_several_do_not() {
        let hint = "See 'kubectl x -h' for help and examples";
        assert_eq!(
            usage_errors(&["a".into()], "kubectl x"),
            format!("error: a\n{hint}\n")
        );
        assert_eq!(
            usage_errors(&["a".into(), "b".into()], "kubectl x"),
            format!("a\n{hint}\nb\n{hint}\n")
        );
    }

    #[test]
    fn a_user_s_problems_read_as_kubectl_prints_them() {
        let one = apiclient::error::Error::InvalidAuthInfo(vec!["a".into()]);
        assert_eq!(format_error(&anyhow::Error::new(one)), "error: a");
        let two = apiclient::error::Error::InvalidAuthInfo(vec!["a".into(), "b".into()]);
        assert_eq!(
            format_error(&anyhow::Error::new(two)),
            "Error in configuration: \n* a\n* b"
        );
    }

    /// client-go's loader aggregate and ConfirmUsable's error, printed as kubectl's
    /// CheckErr prints them: bare lines, each ending in a newline.
    #[test]
    fn kubeconfig_problems_read_as_kubectl_prints_them() {
        let gone = apiclient::error::Error::CurrentContextNotFound("gone".into());
        assert_eq!(
            format_error(&anyhow::Error::new(gone)),
            "Error in configuration: context was not found for specified context: gone\n"
        );
        let file = |p: &str| apiclient::error::Error::Kubeconfig {
            path: p.into(),
            reason: format!("read {p}: is a directory"),
        };
        let two = apiclient::error::Error::KubeconfigFiles(vec![file("a"), file("b")]);
        assert_eq!(
            format_error(&anyhow::Error::new(two)),
            "error loading config file \"a\": read a: is a directory\nerror loading config file \"b\": read b: is a directory\n"
        );
        let missing = apiclient::error::Error::AuthInfoNotFound("nope".into());
        assert_eq!(
            format_error(&anyhow::Error::new(missing)),
            "error: auth info \"nope\" does not exist"
        );
    }

    #[test]
    fn api_errors_look_like_kubectl() {
        let status = kube::core::Status::failure("pods \"web\" already exists", "AlreadyExists")
            .with_code(409);
        let err = anyhow::Error::new(kube::Error::Api(Box::new(status))).context("creating pod");
        assert_eq!(
            format_error(&err),
            "Error from server (AlreadyExists): pods \"web\" already exists"
        );
    }

    #[test]
    fn unauthorized_is_worded_as_kubectl_words_it() {
        let status = kube::core::Status::failure("Unauthorized", "Unauthorized").with_code(401);
        assert_eq!(
            format_api_status(&status),
            "error: You must be logged in to the server (Unauthorized)"
        );
    }

    #[test]
    fn a_cause_its_parent_quotes_is_not_repeated() {
        let inner = std::io::Error::other("connection refused");
        let err = anyhow::Error::new(apiclient::Error::ReadFile {
            what: "certificate authority",
            path: "ca.crt".into(),
            error: inner,
        })
        .context("unable to start");
        assert_eq!(
            format_error(&err),
            "error: unable to start: unable to read certificate authority ca.crt: connection refused"
        );
    }

    #[test]
    fn other_errors_get_the_error_prefix() {
        let err = anyhow::Error::new(UsageError::new("NAME is required for run"));
        assert_eq!(format_error(&err), "error: NAME is required for run");
    }
}
