//! The errors of the resource builder.
//!
//! Every variant that concerns one object carries its [`Origin`], so that an error
//! reported at the end of a continue-on-error run still names the file and document it
//! came from. Messages follow kubectl's wording where kubectl has one.

use super::{Info, Origin};

/// The object an error is about, as kubectl names it (boxed in errors to keep them small).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    pub name: String,
    pub namespace: String,
    pub kind: String,
    pub api_version: String,
}

/// Errors raised while turning `-f`/`-k` inputs into [`Info`](super::Info)s.
#[derive(Debug, thiserror::Error)]
pub enum ResourceError {
    /// A path given with `-f` does not exist (kubectl's wording).
    #[error("the path \"{path}\" does not exist")]
    PathNotFound { path: String },
    /// A path exists but cannot be read (permissions, a FIFO gone away, …).
    #[error("unable to read \"{path}\": {error}")]
    Read {
        path: String,
        /// Worded into the message, so not its `source` (said once in a chain).
        error: std::io::Error,
    },
    /// A directory given with `-f` holds no `.json`, `.yaml` or `.yml` file.
    #[error("error reading [{path}]: recognized file extensions are [.json .yaml .yml]")]
    EmptyDirectory { path: String },
    /// `-f http…` that is not a valid URL (kubectl's wording).
    #[error("the URL passed to filename \"{url}\" is not valid: {reason}")]
    InvalidUrl { url: String, reason: String },
    /// Fetching a URL failed for good (after the retries for transient failures).
    #[error("unable to read URL \"{url}\", {reason}")]
    Url { url: String, reason: String },
    /// A URL whose server could not be reached on any attempt: kubectl returns Go's
    /// `url.Error` and its `CheckErr` words it (`The connection to the server
    /// HOST:PORT was refused - did you specify the right host or port?`, `Unable to
    /// connect to the server: dial tcp: lookup HOST on 10.0.0.2:53: no such host`),
    /// without `error: `.
    #[error("{message}")]
    UrlUnreachable { message: String },
    /// `-k` could not run kustomize (no tool, or one that crashed).
    #[error("unable to run kustomize for \"{path}\": {reason}")]
    Kustomize { path: String, reason: String },
    /// kustomize refused the kustomization: its own message, as kubectl returns it
    /// from its kustomize visitor (unwrapped).
    #[error("{message}")]
    KustomizeFailed { message: String },
    /// A stream is not text (binary file, invalid UTF-8).
    #[error("error parsing {source_name}: {reason}")]
    NotText { source_name: String, reason: String },
    /// A document is not valid YAML or JSON, in kubectl's words (`reason` is
    /// `error converting YAML to JSON: yaml: line 3: …`, with go-yaml's line inside
    /// the document); `line` is where the problem is, counted from the start of the source.
    #[error("error parsing {source_name}: {reason}")]
    Parse {
        source_name: String,
        line: usize,
        reason: String,
    },
    /// Client-side schema validation (`--validate`) rejected a document: every problem
    /// found, printed as kubectl's aggregate (one alone, several as `[a, b]`).
    #[error(
        "error validating {origin}: error validating data: {}; if you choose to ignore these errors, turn validation off with --validate=false",
        crate::openapi::aggregate(.problems)
    )]
    Invalid {
        origin: Origin,
        problems: Vec<String>,
    },
    /// Even with validation off, an object without `kind`/`apiVersion` cannot be sent.
    #[error("unable to decode {origin}: {reason}")]
    Decode { origin: Origin, reason: String },
    /// No REST mapping for the object's kind (kubectl's wording, including the hint).
    #[error(
        "resource mapping not found for name: \"{}\" namespace: \"{}\" from {origin}: no matches for kind \"{}\" in version \"{}\"\nensure CRDs are installed first",
        .object.name, .object.namespace, .object.kind, .object.api_version
    )]
    NoMapping {
        origin: Origin,
        object: Box<ObjectRef>,
    },
    /// A List's item without a kind or apiVersion, in the words of kubectl's
    /// flattening (which name neither the source nor the item, and a Go type).
    #[error("unable to get type info from the object \"*unstructured.Unstructured\": {reason}")]
    ItemType { origin: Origin, reason: String },
    /// A List with a list among its items: kubectl's flattening takes such an item for
    /// a list (an `items` array) but cannot extract the items of a decoded object, so
    /// the whole List fails, in reflection's words and naming no source.
    #[error("*unstructured.Unstructured is not a list: no Items field in this object")]
    NestedList { origin: Origin },
    /// A List's item of a kind the server does not know, in the words of kubectl's
    /// flattening (`version` is the item's group-version, as apimachinery's
    /// `NoKindMatchError` names it).
    #[error("unable to recognize no matches for kind \"{kind}\" in version \"{version}\"")]
    ItemNoMapping {
        origin: Origin,
        kind: String,
        version: String,
    },
    /// Discovery itself failed (connection refused, 403 on /apis/…).
    #[error("unable to recognize {origin}: {}", discovery_reason(source))]
    Discovery {
        origin: Origin,
        #[source]
        source: std::sync::Arc<kube::Error>,
    },
    /// `-n` was given explicitly and the object names another namespace.
    #[error(
        "the namespace from the provided object \"{object}\" does not match the namespace \"{flag}\". You must pass '--namespace={object}' to perform this operation."
    )]
    NamespaceMismatch {
        origin: Origin,
        object: String,
        flag: String,
    },
    /// The `-l` value does not parse (`message` in apimachinery's words).
    #[error("the provided selector {} is not valid: {message}", gotext::go_fmt::quote(.selector))]
    Selector { selector: String, message: String },
    /// Inputs that cannot be combined (kubectl's wording).
    #[error("{0}")]
    Usage(String),
    /// Several errors of the command line (paths that do not exist): kubectl's
    /// `Builder` returns them as one aggregate, which `CheckErr` prints one a line,
    /// without `error: ` (the lines, without a trailing newline).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Several(Vec<ResourceError>),
}

impl ResourceError {
    /// Whether kubectl prints the error without its `error: ` prefix even when it is
    /// the only one: its `CheckErr` words a Go `url.Error` itself
    /// (`StandardErrorMessage`). A List's items that do not map print
    /// bare too, as their own nested aggregate (`create-file`'s report).
    pub fn bare_when_alone(&self) -> bool {
        matches!(self, Self::UrlUnreachable { .. })
    }

    /// The object the error is about, for errors about one object (not a whole input).
    pub fn origin(&self) -> Option<&Origin> {
        match self {
            Self::Invalid { origin, .. }
            | Self::Decode { origin, .. }
            | Self::ItemType { origin, .. }
            | Self::NestedList { origin }
            | Self::ItemNoMapping { origin, .. }
            | Self::NoMapping { origin, .. }
            | Self::Discovery { origin, .. }
            | Self::NamespaceMismatch { origin, .. } => Some(origin),
            _ => None,
        }
    }

    /// A copy of the error (`io::Error` is not `Clone`: its kind and message are kept),
    /// for results that are produced more than once.
    pub fn duplicate(&self) -> Self {
        let io = |e: &std::io::Error| std::io::Error::new(e.kind(), e.to_string());
        match self {
            Self::PathNotFound { path } => Self::PathNotFound { path: path.clone() },
            Self::Read { path, error } => Self::Read {
                path: path.clone(),
                error: io(error),
            },
            Self::EmptyDirectory { path } => Self::EmptyDirectory { path: path.clone() },
            Self::InvalidUrl { url, reason } => Self::InvalidUrl {
                url: url.clone(),
                reason: reason.clone(),
            },
            Self::Url { url, reason } => Self::Url {
                url: url.clone(),
                reason: reason.clone(),
            },
            Self::UrlUnreachable { message } => Self::UrlUnreachable {
                message: message.clone(),
            },
            Self::Kustomize { path, reason } => Self::Kustomize {
                path: path.clone(),
                reason: reason.clone(),
            },
            Self::KustomizeFailed { message } => Self::KustomizeFailed {
                message: message.clone(),
            },
            Self::NotText {
                source_name,
                reason,
            } => Self::NotText {
                source_name: source_name.clone(),
                reason: reason.clone(),
            },
            Self::Parse {
                source_name,
                line,
                reason,
            } => Self::Parse {
                source_name: source_name.clone(),
                line: *line,
                reason: reason.clone(),
            },
            Self::Invalid { origin, problems } => Self::Invalid {
                origin: origin.clone(),
                problems: problems.clone(),
            },
            Self::Decode { origin, reason } => Self::Decode {
                origin: origin.clone(),
                reason: reason.clone(),
            },
            Self::ItemType { origin, reason } => Self::ItemType {
                origin: origin.clone(),
                reason: reason.clone(),
            },
            Self::NestedList { origin } => Self::NestedList {
                origin: origin.clone(),
            },
            Self::ItemNoMapping {
                origin,
                kind,
                version,
            } => Self::ItemNoMapping {
                origin: origin.clone(),
                kind: kind.clone(),
                version: version.clone(),
            },
            Self::NoMapping { origin, object } => Self::NoMapping {
                origin: origin.clone(),
                object: object.clone(),
            },
            Self::Discovery { origin, source } => Self::Discovery {
                origin: origin.clone(),
                source: source.clone(),
            },
            Self::NamespaceMismatch {
                origin,
                object,
                flag,
            } => Self::NamespaceMismatch {
                origin: origin.clone(),
                object: object.clone(),
                flag: flag.clone(),
            },
            Self::Several(errors) => Self::Several(errors.iter().map(Self::duplicate).collect()),
            Self::Selector { selector, message } => Self::Selector {
                selector: selector.clone(),
                message: message.clone(),
            },
            Self::Usage(s) => Self::Usage(s.clone()),
        }
    }
}

/// Why discovery failed, as client-go's discovery client says it: kube's own text for
/// an API error carries a `Debug` dump of the whole `Status`.
pub(super) fn discovery_reason(err: &kube::Error) -> String {
    // kubectl's discovery fails at its first request, `/api`: Go's url.Error for it
    // (or the request bound's own words, which `url_error` keeps).
    if let Some(url_error) = apiclient::go_net::url_error(err, "/api") {
        return url_error;
    }
    match err {
        kube::Error::Api(status) if status.code == 401 => {
            "the server has asked for the client to provide credentials".to_string()
        }
        kube::Error::Api(status) => status.message.clone(),
        // kube's "ServiceError: " names its own plumbing; the cause is what matters
        // (a refused connection, a credential plugin that failed).
        kube::Error::Service(cause) => apiclient::go_net::error_chain(cause.as_ref()),
        other => apiclient::go_net::error_chain(other),
    }
}

/// One stage's output: an object, or the error that replaced it (kept in input order).
pub type Entry = Result<Info, ResourceError>;
