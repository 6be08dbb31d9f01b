//! The error type of the core crate.
//!
//! Messages are lower-case without a final period, and carry the context a user needs
//! (the path, the flag). They mirror kubectl's wording where kubectl has one.

use std::path::PathBuf;

/// Errors raised while turning flags and kubeconfig files into a client.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--kubeconfig` (or an explicit path) names a file that cannot be read or parsed.
    #[error("error loading config file \"{}\": {source}", path.display())]
    Kubeconfig {
        path: PathBuf,
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Files from `KUBECONFIG` could not be merged.
    #[error("error merging kubeconfig files: {0}")]
    KubeconfigMerge(#[source] kube::config::KubeconfigError),
    /// The kubeconfig does not contain what the flags select.
    #[error("invalid configuration: {0}")]
    InvalidConfig(#[source] kube::config::KubeconfigError),
    /// Neither a kubeconfig, nor `--server`, nor an in-cluster environment.
    #[error(
        "invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable"
    )]
    NoConfiguration,
    /// A flag value that cannot be used.
    #[error("invalid argument {value:?} for \"{flag}\" flag: {reason}")]
    InvalidFlag {
        flag: &'static str,
        value: String,
        reason: String,
    },
    /// A file named by a flag cannot be read.
    #[error("unable to read {what} {}: {source}", path.display())]
    ReadFile {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Building the HTTP client failed (TLS material, proxy settings).
    #[error("unable to create a client: {0}")]
    Client(#[source] kube::Error),
    /// A token and basic auth (`--username`/`--password`) for the same user: client-go's
    /// kubeconfig validation refuses the mix.
    #[error(
        "more than one authentication method found for {user}; found [token basicAuth], only one is allowed"
    )]
    MoreThanOneAuthMethod { user: String },
    /// `--match-server-version`: `/version` could not be read.
    #[error("couldn't read version from server: {0}")]
    ServerVersionUnreadable(#[source] kube::Error),
    /// `--match-server-version`: the server is another version (both in Go's `%#v`).
    #[error("server version ({server}) differs from client version ({client})")]
    ServerVersionMismatch { server: String, client: String },
}

/// Convenience alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
