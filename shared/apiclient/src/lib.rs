//! The API client of the kubeplug plugins, and the words of its failures.
//!
//! - [`client`]: the client every command uses, built from kube's `Config`: TLS, the
//!   proxy, connect/read/write timeouts, the credentials layer, and what kubectl logs
//!   of each request from `-v=6` (headers, bodies, curl lines; credentials masked).
//! - [`klog`]: klog's lines (header, structured values) and the `-v` they are written at.
//! - [`tls`]: the rustls crypto provider and a client's rustls configuration.
//! - [`credentials`]: the kubeconfig user's credentials as client-go provides them
//!   (token, basic, token file, exec plugin), never printing a secret.
//! - [`bound`]: the bound on every request of a command (`--request-timeout`).
//! - [`retry`]: client-go's retries of `429` and `5xx` answers with `Retry-After`.
//! - [`warnings`]: the API server's `Warning` headers, shown once each on stderr.
//! - [`go_net`]: transport errors (hyper, rustls, the OS) in Go's words, and
//!   `error_chain` (an error and its causes on one line).
//! - [`causes`]: a transport error's causes down to the `io::Error` (through `io::Error`
//!   and `h2::Error`, whose `source()` stops short).
//! - [`status`]: an API server's refusal in kubectl's words (`CheckErr`).
//! - [`error`]: this crate's error type.
//! - [`home`]: the home directory as client-go finds it.
//! - [`idn`]: a server host that is not ASCII: dialled in its IDNA form, printed as
//!   Go prints the URL.
//! - [`kubeconfig`]: client-go's kubeconfig loader: the loading rules (`--kubeconfig`,
//!   `KUBECONFIG`'s merge, `~/.kube/config`, in-cluster), the overrides merged over
//!   the kubeconfig, and the kube `Config` a client is built from.
//! - [`kuberc`]: kubectl's preferences file, read for its credential plugin policy.
//! - [`term`]: whether stderr gets colour.
//! - [`output`]: the process's stdout and stderr, remembering a closed pipe.
//! - [`spdy`]: a SPDY/3.1 client session, as Kubernetes' streaming servers speak it.
//! - [`remotecommand`]: attaching to a container over a WebSocket, or over SPDY when
//!   the WebSocket upgrade is refused, as kubectl does.
//!
//! The object-status rules (readiness, why a wait is not over), which use no client,
//! are the `objectstatus` crate.

pub mod bound;
pub mod causes;
pub mod client;
pub mod credentials;
pub mod error;
pub mod go_net;
pub mod home;
pub mod idn;
pub mod klog;
pub mod kubeconfig;
pub mod kuberc;
pub mod output;
pub mod remotecommand;
pub mod retry;
pub mod spdy;
pub mod status;
pub mod term;
pub mod tls;
pub mod warnings;

pub use error::Error;
