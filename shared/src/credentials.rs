//! Credential failures in client-go's words, carrying nothing of the kubeconfig's secrets.
//!
//! kube's own auth errors are unfit to show: a failed exec plugin is reported with the
//! `Debug` form of its whole `Command` (every `env:` value of the kubeconfig, such as an
//! `API_KEY`, in clear) and of its captured `Output`. CI logs keep what a plugin prints,
//! so these errors never reach a message: [`CredentialsError::report`] replaces them,
//! at client construction ([`crate::flags::ConfigFlags::client`]) and for the token
//! refreshes kube runs before a request ([`layer`]).
//!
//! The wording is client-go's exec authenticator's, as kubectl 1.32 prints it:
//! `getting credentials: exec: executable /bin/sh failed with exit code 3`, shown by
//! [`crate::cli::finish`] after kubectl's `Unable to connect to the server: `. Like
//! client-go, the plugin's own stderr goes to ours (kube captures it when the
//! kubeconfig says `interactiveMode: Never`; it is passed through here).

use std::io::Write;

use kube::client::AuthError;

/// A failure to get credentials, with only the command name and exit status in it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("getting credentials: {0}")]
pub struct CredentialsError(String);

/// What a message may name about the user's credentials: the program that provides
/// them (the exec plugin's `command`, or an auth-provider's `cmd-path`).
#[derive(Debug, Clone, Default)]
pub struct CredentialSource {
    program: Option<String>,
    install_hint: Option<String>,
}

impl CredentialSource {
    /// The credential program of the selected user of `config`.
    pub fn of(config: &kube::Config) -> Self {
        let auth = &config.auth_info;
        if let Some(exec) = &auth.exec {
            return Self {
                program: exec.command.clone(),
                install_hint: exec.install_hint.clone().filter(|h| !h.is_empty()),
            };
        }
        Self {
            program: auth
                .auth_provider
                .as_ref()
                .and_then(|p| p.config.get("cmd-path").cloned()),
            install_hint: None,
        }
    }

    fn program(&self) -> &str {
        self.program.as_deref().unwrap_or("")
    }
}

/// client-go's text for a credential plugin that is not on `PATH` (its
/// `installHintVerboseHelp`).
const INSTALL_HINT_HELP: &str = "\n\nIt looks like you are trying to use a client-go credential plugin that is not installed.\n\nTo learn more about this feature, consult the documentation available at:\n      https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins";

impl CredentialsError {
    /// The message of the failure `err` of `source`'s program. Writes what the plugin
    /// wrote on its stderr to ours first, as client-go does.
    pub fn report(err: &AuthError, source: &CredentialSource) -> Self {
        Self::report_to(err, source, &mut std::io::stderr().lock())
    }

    /// [`Self::report`] with the plugin's stderr going to `stderr`.
    pub fn report_to(err: &AuthError, source: &CredentialSource, stderr: &mut dyn Write) -> Self {
        let program = source.program();
        let message = match err {
            AuthError::AuthExecRun { out, .. } => {
                let _ = stderr.write_all(&out.stderr);
                // Go's ExitCode() is -1 for a process killed by a signal.
                let code = out.status.code().unwrap_or(-1);
                format!("exec: executable {program} failed with exit code {code}")
            }
            AuthError::AuthExecStart(io) if io.kind() == std::io::ErrorKind::NotFound => {
                if program.contains('/') {
                    format!("exec: fork/exec {program}: {}", go_errno_text(io))
                } else {
                    // Go's LookPath failed: client-go adds its help and the hint.
                    let mut msg =
                        format!("exec: executable {program} not found{INSTALL_HINT_HELP}");
                    if let Some(hint) = &source.install_hint {
                        msg.push_str("\n\n");
                        msg.push_str(hint);
                    }
                    msg
                }
            }
            AuthError::AuthExecStart(io) => {
                format!("exec: fork/exec {program}: {}", go_errno_text(io))
            }
            // The parser's own message can quote the output, which holds the token:
            // only its position is kept.
            AuthError::AuthExecParse(e) => match e.location() {
                Some(at) => format!(
                    "decoding stdout: not an ExecCredential (line {} column {})",
                    at.line(),
                    at.column()
                ),
                None => "decoding stdout: not an ExecCredential".to_string(),
            },
            AuthError::ExecPluginFailed => "exec plugin didn't return a status field".to_string(),
            AuthError::MalformedTokenExpirationDate(_) => {
                "decoding stdout: invalid expirationTimestamp".to_string()
            }
            AuthError::AuthExecSerialize(_) => {
                "exec: cannot serialize the ExecCredential request".to_string()
            }
            // kube's `AuthExec` texts come from the auth-provider paths; some carry
            // `Debug` values of the plugin's output, so none is repeated.
            AuthError::AuthExec(_) => match &source.program {
                Some(program) => format!("auth provider: {program} failed"),
                None => "auth provider failed".to_string(),
            },
            AuthError::ReadTokenFile(io, path) => {
                format!("open {}: {}", path.display(), go_errno_text(io))
            }
            // A header value that cannot be sent; kube's text names the header only.
            AuthError::InvalidBearerToken(_) | AuthError::InvalidBasicAuth(_) => {
                "invalid characters in the credentials".to_string()
            }
            // The remaining variants quote nothing of the kubeconfig or of the
            // plugin's output.
            other => other.to_string(),
        };
        Self(message)
    }
}

/// A system error as Go prints it (`no such file or directory`), without Rust's
/// capital letter and ` (os error 2)`.
fn go_errno_text(io: &std::io::Error) -> String {
    let text = match io.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
        None => io.to_string(),
    };
    let text = match text.rfind(" (os error ") {
        Some(at) => &text[..at],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A tower layer for the kube client: a failed request's error with any credential
/// failure in it replaced by a [`CredentialsError`]. kube refreshes an expiring exec
/// token before a request, and the failure it returns then is the same secret-laden
/// `AuthError` as at construction.
pub fn layer(
    source: CredentialSource,
) -> tower::util::MapErrLayer<impl Fn(tower::BoxError) -> tower::BoxError + Clone> {
    tower::util::MapErrLayer::new(
        move |err: tower::BoxError| match err.downcast::<AuthError>() {
            Ok(auth) => Box::new(CredentialsError::report(&auth, &source)) as tower::BoxError,
            Err(other) => other,
        },
    )
}

#[cfg(test)]
mod tests;
