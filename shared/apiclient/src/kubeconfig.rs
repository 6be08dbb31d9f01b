//! client-go's `clientcmd` as the plugins use it: the kubeconfig found, read and
//! merged by its loading rules, the command line's overrides merged over it, and the
//! kube `Config` a client is built from.
//!
//! - [`LoadingRules`]: where the kubeconfig comes from (an explicit path, else every
//!   file of `KUBECONFIG`, else `~/.kube/config`) and the merge of those files
//!   ([`Source`] says which were read).
//! - [`read`]: one kubeconfig file, read as client-go reads it (go-yaml v2, through
//!   `goyaml`), into kube's `Kubeconfig`.
//! - [`Overrides`]: client-go's `ConfigOverrides`, the command line over the
//!   kubeconfig: which entries are selected (and must exist), the server, the
//!   credentials, impersonation, trust and timeouts.
//! - [`Loader`]: the rules and the overrides together (kubectl's
//!   `ToRawKubeConfigLoader`): `ConfirmUsable`, the namespace without a client, and
//!   the client's `Config` (in-cluster when nothing else is given).
//!
//! The flags that fill the overrides are `cli`'s; nothing here knows a flag but by
//! the name an error gives it.

mod file;
mod loader;
mod overrides;
mod rules;

pub use file::read;
pub use loader::Loader;
pub use overrides::{Overrides, Timeout};
pub use rules::{LoadingRules, Source};

#[cfg(test)]
mod tests;
