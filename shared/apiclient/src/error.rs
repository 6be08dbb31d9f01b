//! The error type of the API client crate.
//!
//! Messages are lower-case without a final period, and carry the context a user needs
//! (the path, the flag). They mirror kubectl's wording where kubectl has one.
//!
//! An error says each cause once: a variant that is its cause is
//! `#[error(transparent)]`; one that words its cause into its own message keeps it
//! as a field, not as its `source`, so that a chain (`crate::go_net::error_chain`)
//! never prints it twice.

use std::path::PathBuf;

/// Errors raised while turning flags and kubeconfig files into a client.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--kubeconfig` (or an explicit path) names a file that cannot be read or parsed.
    /// The reason is shown as kubectl shows it, never with the YAML around an error:
    /// the lines near a syntax error of a kubeconfig are often a token or a key.
    #[error("error loading config file \"{}\": {reason}", path.display())]
    Kubeconfig { path: PathBuf, reason: String },
    /// `--kubeconfig` names a file that does not exist: Go's `stat PATH: no such file
    /// or directory`, which client-go returns as it is.
    #[error("{0}")]
    KubeconfigMissing(String),
    /// Several kubeconfig files of `KUBECONFIG` could not be read: client-go's
    /// aggregate, one line each ([`cli::format_error`] prints it without
    /// `error: `, as kubectl's `CheckErr` prints an aggregate).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    KubeconfigFiles(Vec<Error>),
    /// `--user` (or the context's user) names no user of the kubeconfig: client-go's
    /// `getAuthInfo`. Nothing is sent, never anonymously.
    #[error("auth info {0:?} does not exist")]
    AuthInfoNotFound(String),
    /// `--context` names no context of the kubeconfig: client-go's `getContext`.
    #[error("context {0:?} does not exist")]
    ContextNotFound(String),
    /// `--cluster` (or the context's cluster) names no cluster of the kubeconfig:
    /// client-go's `getCluster`.
    #[error("cluster {0:?} does not exist")]
    ClusterNotFound(String),
    /// The kubeconfig's `current-context` names no context: client-go's
    /// `ConfirmUsable`, printed by kubectl's `CheckErr` as `Error in configuration:
    /// …` without `error: ` ([`cli::format_error`]).
    #[error("context was not found for specified context: {0}")]
    CurrentContextNotFound(String),
    /// `--cluster` names no cluster of the kubeconfig, as client-go's `ConfirmUsable`
    /// finds it (`kubectl create -f` meets it before anything else).
    #[error("no server found for cluster {0:?}")]
    NoServerForCluster(String),
    /// Files from `KUBECONFIG` could not be merged.
    #[error("error merging kubeconfig files: {0}")]
    KubeconfigMerge(kube::config::KubeconfigError),
    /// The kubeconfig does not contain what the flags select.
    #[error("invalid configuration: {0}")]
    InvalidConfig(kube::config::KubeconfigError),
    /// Neither a kubeconfig, nor `--server`, nor an in-cluster environment.
    #[error(
        "invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable"
    )]
    NoConfiguration,
    /// `--request-timeout` in neither of client-go's `ParseTimeout` forms, in its words.
    #[error(
        "Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)"
    )]
    InvalidTimeout,

    /// A server that is neither a URL nor a `host:port` pair, in client-go's words
    /// (`DefaultServerURL`).
    #[error("host must be a URL or a host:port pair: {0:?}")]
    ServerNotHost(String),
    /// A flag value that cannot be used.
    #[error("invalid argument {value:?} for \"{flag}\" flag: {reason}")]
    InvalidFlag {
        flag: &'static str,
        value: String,
        reason: String,
    },
    /// A file named by a flag cannot be read.
    #[error("unable to read {what} {}: {error}", path.display())]
    ReadFile {
        what: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    /// A CA to verify the server with, and verification skipped (client-go's transport
    /// refuses the combination with these words).
    #[error("specifying a root certificates file with the insecure flag is not allowed")]
    InsecureWithCa,
    /// The credential plugin failed ([`crate::credentials`]: no secret in the message).
    #[error(transparent)]
    Credentials(CredentialsError),
    /// The user's kubeconfig entry, as client-go's `validateAuthInfo` finds it: one
    /// problem is its message, several are kubectl's `Error in configuration:` list
    /// ([`cli::format_error`] prints that one without `error: `).
    #[error("{}", invalid_auth_info(.0))]
    InvalidAuthInfo(Vec<String>),
    /// kuberc could not be applied: kubectl's `error occurred while applying
    /// preferences …` (printed without `error: `, exit 1).
    #[error("error occurred while applying preferences {0}")]
    Preferences(String),
    /// A method of authentication that cannot be used (kubectl's words: a removed auth
    /// provider, an exec `apiVersion` it does not know, an unreadable token file).
    #[error("{0}")]
    Authentication(String),
    /// The client's TLS material (the kubeconfig's client certificate and key).
    #[error(transparent)]
    Tls(crate::tls::TlsError),
    /// A proxy the client cannot use.
    #[error("{0}")]
    Proxy(String),
    /// client-go's `validateClusterInfo` of a file the cluster names that cannot be
    /// opened (`unable to read certificate-authority PATH for CLUSTER due to open
    /// PATH: no such file or directory`).
    #[error("{0}")]
    ClusterFile(String),
    /// A client setting that cannot be used (a `tls-server-name` that is not a name, a
    /// header value kube refuses).
    #[error("{0}")]
    Client(String),
    /// `--match-server-version`: `/version` could not be read. `reason` is Go's
    /// url.Error for a request that got no answer (`Get "https://…/version?timeout=32s":
    /// dial tcp …`, `crate::go_net::url_error`), worded where the request was made.
    #[error("couldn't read version from server: {reason}")]
    ServerVersionUnreadable {
        reason: String,
        #[source]
        source: kube::Error,
    },
    /// `--match-server-version`: the server is another version (both in Go's `%#v`).
    #[error("server version ({server}) differs from client version ({client})")]
    ServerVersionMismatch { server: String, client: String },
}

fn invalid_auth_info(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => {
            let mut text = "Error in configuration: ".to_string();
            for e in many {
                text.push_str("\n* ");
                text.push_str(e);
            }
            text
        }
    }
}

/// A failed file operation in Go's `*PathError` words: `stat /x: no such file or
/// directory`, `read /x: is a directory` (the path as given, the errno's text as Go's
/// `syscall.Errno` spells it: lower case, no `(os error N)`).
pub fn go_path_error(op: &str, path: &std::path::Path, err: &std::io::Error) -> String {
    format!("{op} {}: {}", path.display(), go_errno_text(err))
}

/// An OS error's text as Go's `syscall.Errno.Error()` gives it. Go's table is
/// strerror's wording with a lower-case first letter, for the errors people meet;
/// anything else is the OS's text treated the same way.
pub fn go_errno_text(err: &std::io::Error) -> String {
    let Some(code) = err.raw_os_error() else {
        return err.to_string();
    };
    // std prints `Description (os error N)`: keep the description.
    let text = err.to_string();
    let text = text
        .strip_suffix(&format!(" (os error {code})"))
        .unwrap_or(&text)
        .to_string();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

/// `data` decoded by `engine` as Go's `base64` decodes it: line breaks skipped, and a
/// failure in Go's words (`illegal base64 data at input byte 4`), which kubectl prints
/// for the kubeconfig's `*-data` fields and client-go for an id-token's claims.
pub fn go_base64(engine: &impl base64::Engine, data: &str) -> Result<Vec<u8>, String> {
    let plain: String = data.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    engine.decode(&plain).map_err(|e| {
        let at = match e {
            base64::DecodeError::InvalidByte(at, _)
            | base64::DecodeError::InvalidLastSymbol(at, _) => at,
            _ => plain.len(),
        };
        format!("illegal base64 data at input byte {at}")
    })
}

/// A failure to get credentials, with only the command name and exit status in it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CredentialsError(String);

impl CredentialsError {
    /// client-go's exec authenticator's failure: `getting credentials: {reason}`.
    pub(crate) fn new(reason: String) -> Self {
        Self(format!("getting credentials: {reason}"))
    }

    /// An auth provider's failure, which client-go returns as it is.
    pub(crate) fn provider(message: &str) -> Self {
        Self(message.to_string())
    }
}

/// Convenience alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
