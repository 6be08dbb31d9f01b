//! The edge of every plugin binary: start-up chores and the one place where an error
//! becomes a message on stderr and an exit code.
//!
//! kubectl's conventions, which CI scripts depend on:
//! - success exits 0; any error prints `error: …` (or `Error from server (Reason): …`
//!   for API errors) and exits 1;
//! - usage errors add `See 'kubectl <cmd> -h' for help and examples` and also exit 1;
//! - command-line (flag) errors are pflag's, `Error: …` and `See '… --help' for
//!   usage.`, exit 1 ([`flag_error`]);
//! - a command that reports a container's exit code (`run-pod --attach`) exits with it;
//! - with `--warnings-as-errors`, a command that succeeded but saw server warnings
//!   prints `error: N warning(s) received` and exits 1 ([`crate::warnings`]).

mod flag_error;

use std::io::Write;
use std::process::ExitCode;
use std::sync::Once;

pub use flag_error::{flag_error, flag_error_message};

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

/// An error that has already been printed (for example per-object errors in
/// `create-file`), carrying only the exit code to use.
#[derive(Debug, thiserror::Error)]
#[error("exit status {0}")]
pub struct SilentExit(pub u8);

/// Installs rustls's `ring` provider once. kube uses `ring`; if another crate in the
/// tree ever enables `aws-lc-rs`, rustls cannot choose and kube's client panics, so
/// the choice is made explicitly here.
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means another provider was installed first, which is equally fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Turns kubectl's `-v` level into a tracing filter. Levels follow klog loosely:
/// 0–3 warnings only, 4–5 debug for our crates, 6+ debug including kube's requests,
/// 8+ trace. kube marks the `Authorization` header sensitive, so no level prints tokens.
pub fn init_logging(verbosity: u8) {
    let filter = match verbosity {
        // kube-client logs every failed request at ERROR before returning the error we
        // print ourselves, and kube-runtime's watcher every retried watch error with a
        // Debug dump of the Status; kubectl shows nothing extra at these levels.
        0..=3 => "warn,kube_client=off,kube_runtime=off",
        4..=5 => {
            "warn,shared=debug,kubectl_run_pod=debug,kubectl_create_file=debug,kubectl_rolling_update=debug"
        }
        6..=7 => {
            "info,kube=debug,shared=debug,kubectl_run_pod=debug,kubectl_create_file=debug,kubectl_rolling_update=debug"
        }
        _ => "debug,kube=trace,shared=trace",
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        // The one colour decision (a terminal, no NO_COLOR, no TERM=dumb): CI logs and
        // `2>file` get plain text, as klog's. `with_ansi` overrides tracing's own check.
        .with_ansi(crate::term::stderr_allows_color())
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

/// Formats an API error as kubectl does: `Error from server (Reason): message`, and a
/// 401 as `error: You must be logged in to the server (message)`.
pub fn format_api_status(status: &kube::core::Status) -> String {
    if status.reason == "Unauthorized" {
        // kubectl's StandardErrorMessage words a 401 differently from other statuses.
        format!(
            "error: You must be logged in to the server ({})",
            status.message
        )
    } else if status.reason.is_empty() {
        format!("Error from server: {}", status.message)
    } else {
        format!("Error from server ({}): {}", status.reason, status.message)
    }
}

/// Formats any error for stderr, kubectl-style (without a trailing newline).
pub fn format_error(err: &anyhow::Error) -> String {
    for cause in err.chain() {
        if let Some(kube::Error::Api(status)) = cause.downcast_ref::<kube::Error>() {
            return format_api_status(status);
        }
        // kubectl gets credentials while connecting, so its CheckErr says this.
        if let Some(credentials) = cause.downcast_ref::<crate::credentials::CredentialsError>() {
            return format!("Unable to connect to the server: {credentials}");
        }
    }
    format!("error: {}", error_chain(err.as_ref()))
}

/// An error and its causes joined by `: `, without repeating a cause whose text its
/// parent already quotes (thiserror messages often do: `…: {0}` and `#[source]`).
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = String::new();
    let mut source = Some(err);
    while let Some(cause) = source {
        // A request cut by the client's bound: the rule instead of hyper's internals
        // (and nothing below it).
        let no_answer = crate::rest::bound::no_answer(cause);
        let last = no_answer.is_some();
        let text = no_answer.unwrap_or_else(|| cause.to_string());
        if msg.is_empty() {
            msg = text;
        } else if !msg.contains(&text) {
            msg = format!("{msg}: {text}");
        }
        source = if last { None } else { cause.source() };
    }
    msg
}

/// The single place where a plugin's outcome becomes an exit code.
///
/// `command` is the user-facing name (`kubectl run-pod`) for the usage hint.
pub fn finish(command: &str, result: anyhow::Result<ExitCode>) -> ExitCode {
    let err = match result {
        // kubectl checks --warnings-as-errors only after a command that succeeded.
        Ok(code) if code == ExitCode::SUCCESS => match crate::warnings::as_error() {
            Some(message) => anyhow::anyhow!(message),
            None => return code,
        },
        Ok(code) => return code,
        Err(err) => err,
    };
    if let Some(SilentExit(code)) = err.downcast_ref::<SilentExit>() {
        return ExitCode::from(*code);
    }
    // A closed stdout (`| head`) is not an error worth a message.
    if err
        .chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    {
        return ExitCode::SUCCESS;
    }
    let mut stderr = std::io::stderr().lock();
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let err = anyhow::Error::new(crate::Error::ReadFile {
            what: "certificate authority",
            path: "ca.crt".into(),
            source: inner,
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
