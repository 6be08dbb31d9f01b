//! kubectl's `ToRawKubeConfigLoader`: the loading rules and the overrides together,
//! answering what client-go's `ClientConfig` answers (`ConfirmUsable`, `Namespace`,
//! `ClientConfig`).

use kube::Config;
use kube::config::{KubeConfigOptions, Kubeconfig};

use super::{LoadingRules, Overrides, Source};
use crate::credentials::policy::PluginPolicy;
use crate::error::{Error, Result};

/// The kubeconfig as the loading rules find it, with the overrides over it.
#[derive(Default)]
pub struct Loader {
    pub rules: LoadingRules,
    pub overrides: Overrides,
}

impl Loader {
    /// The merged kubeconfig (client-go's `RawConfig`) and where it came from.
    pub fn load(&self) -> Result<(Option<Kubeconfig>, Source)> {
        self.rules.load()
    }

    /// client-go's `Namespace()` as `kubectl create -f --validate=false` calls it
    /// before anything else (with validation, its validator builds a client first):
    /// without `-n` it first runs `ConfirmUsable`, whose words differ from the
    /// lookups of [`Overrides::check_selection`]: a missing `--context` (or current
    /// context) is `Error in configuration: context was not found for specified
    /// context: x`, a missing `--cluster` is `no server found for cluster "x"` (the
    /// server defaults of kubectl's loader keep every other cluster usable). With
    /// `-n` nothing is checked here, as client-go returns `-n` at once.
    pub fn confirm_usable(&self) -> Result<()> {
        let o = &self.overrides;
        if o.namespace.as_deref().is_some_and(|n| !n.is_empty()) {
            return Ok(());
        }
        let (kubeconfig, _source) = self.load()?;
        let Some(kc) = kubeconfig else {
            return Ok(());
        };
        let named = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
        if let Some(context) = named(&o.context).or_else(|| named(&kc.current_context))
            && !kc.contexts.iter().any(|c| c.name == context)
        {
            return Err(Error::CurrentContextNotFound(context));
        }
        if let Some(cluster) = named(&o.cluster)
            && !kc.clusters.iter().any(|c| c.name == cluster)
        {
            return Err(Error::NoServerForCluster(cluster));
        }
        Ok(())
    }

    /// The namespace without building a client configuration (for client dry runs,
    /// which send nothing): `-n`, else the namespace of the kubeconfig's (or
    /// `--context`'s) context, else `default`; with whether `-n` gave it.
    pub fn namespace(&self) -> Result<(String, bool)> {
        let o = &self.overrides;
        if let Some(ns) = o.namespace.as_deref().filter(|n| !n.is_empty()) {
            return Ok((ns.to_string(), true));
        }
        let (kubeconfig, _source) = self.load()?;
        // kubectl refuses a missing user, context or cluster even for a client dry run.
        o.check_selection(kubeconfig.as_ref())?;
        let namespace = kubeconfig.and_then(|kc| {
            let context = o.context.clone().or(kc.current_context.clone())?;
            kc.contexts
                .into_iter()
                .find(|c| c.name == context)
                .and_then(|c| c.context)
                .and_then(|c| c.namespace)
                .filter(|n| !n.is_empty())
        });
        Ok((namespace.unwrap_or_else(|| "default".to_string()), false))
    }

    /// The client configuration (client-go's `ClientConfig`): the kubeconfig's
    /// selected entries as kube's loader reads them, then the overrides
    /// `KubeConfigOptions` has no room for; without a kubeconfig, the server override
    /// alone or the in-cluster environment. An exec plugin's user gets
    /// `plugin_policy` (kuberc's, asked for only then), and the user is validated as
    /// client-go validates it, the overrides applied. Sends no request.
    pub async fn config(
        &self,
        plugin_policy: impl FnOnce() -> Result<PluginPolicy>,
    ) -> Result<Config> {
        let o = &self.overrides;
        let (kubeconfig, _source) = self.load()?;
        // Before kube's loader, which would fall back to an anonymous user for a
        // `--user` it cannot find.
        o.check_selection(kubeconfig.as_ref())?;
        // An empty name is not given, as in client-go's overrides (`--user=` selects
        // the context's user, where kube's loader would look for a user named "").
        let named = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
        let options = KubeConfigOptions {
            context: named(&o.context),
            cluster: named(&o.cluster),
            user: named(&o.user),
        };
        let auth_info_name = kubeconfig
            .as_ref()
            .and_then(|kc| o.auth_info_name(kc))
            .unwrap_or_default();
        let proxy_url = kubeconfig.as_ref().and_then(|kc| o.cluster_proxy_url(kc));
        let kubeconfig_cluster = kubeconfig.as_ref().and_then(|kc| o.cluster_name(kc));
        let kubeconfig = kubeconfig.map(|kc| idn_server(kc, kubeconfig_cluster.as_deref()));
        let mut config = match kubeconfig {
            Some(kc) => match Config::from_custom_kubeconfig(kc, &options).await {
                Ok(config) => config,
                // A kubeconfig without a server is fine when --server supplies one.
                Err(kube::config::KubeconfigError::MissingClusterUrl) if o.server.is_some() => {
                    Config::new(placeholder_uri())
                }
                Err(e) => return Err(Error::InvalidConfig(e)),
            },
            None if o.server.is_some() => Config::new(placeholder_uri()),
            None => match Config::incluster() {
                Ok(config) => config,
                Err(_) => return Err(Error::NoConfiguration),
            },
        };
        // Only the kubeconfig's own `proxy-url` is kept. kube also fills this from
        // `HTTPS_PROXY` alone, and tests `NO_PROXY` against the proxy's address rather
        // than the server's; without `proxy-url` the client reads the environment per
        // destination as Go's `ProxyFromEnvironment` does (`crate::client`).
        // And it is kept whatever `NO_PROXY` says (kube drops it when `NO_PROXY` names
        // the server): client-go's `http.ProxyURL` takes every request through it.
        // `--proxy-url` (kubectl 1.36+) replaces the kubeconfig's.
        let proxy_url = o.proxy_url.clone().filter(|p| !p.is_empty()).or(proxy_url);
        match proxy_url {
            None => config.proxy_url = None,
            Some(proxy) => {
                let cluster = kubeconfig_cluster.clone().unwrap_or_default();
                check_proxy_url(&proxy, &cluster)?;
                config.proxy_url = Some(proxy.parse().map_err(|e| {
                    Error::Proxy(format!("unable to parse proxy-url {proxy:?}: {e}"))
                })?);
            }
        }
        // client-go's validateClusterInfo, which opens the CA file before any use of it,
        // and names the kubeconfig's cluster.
        if let Some(path) = o.certificate_authority.as_deref()
            && let Err(e) = std::fs::File::open(path)
        {
            let path = path.display();
            return Err(Error::ClusterFile(format!(
                "unable to read certificate-authority {path} for {} due to open {path}: {}",
                kubeconfig_cluster.as_deref().unwrap_or_default(),
                crate::credentials::go_errno_text(&e)
            )));
        }
        o.apply(&mut config)?;
        if let Some(exec) = config.auth_info.exec.as_mut() {
            // Always set, so that nothing in the kubeconfig stands in for it.
            crate::credentials::policy::attach(exec, &plugin_policy()?);
        }
        // client-go's kubeconfig validation of the user, flags applied.
        crate::credentials::validate(&auth_info_name, &config.auth_info)?;
        // client-go merges the user's credentials and the server's trust only for a
        // server it reaches over TLS (`IsConfigTransportTLS`, before any CA is
        // merged): over http it sends no credential (no token in clear) and runs no
        // exec plugin; impersonation is set before that check and stays.
        if config.cluster_url.scheme_str() == Some("http") {
            let auth = std::mem::take(&mut config.auth_info);
            config.auth_info.impersonate = auth.impersonate;
            config.auth_info.impersonate_uid = auth.impersonate_uid;
            config.auth_info.impersonate_groups = auth.impersonate_groups;
            config.auth_info.impersonate_user_extra = auth.impersonate_user_extra;
            config.root_cert = None;
            config.root_cert_file = None;
        }
        Ok(config)
    }
}

/// `kc` with the selected cluster's server holding its host in the IDNA form when it
/// is not ASCII (`crate::idn`), where kube's loader would refuse it as no URI.
fn idn_server(mut kc: Kubeconfig, cluster: Option<&str>) -> Kubeconfig {
    let server = kc
        .clusters
        .iter_mut()
        .filter(|c| Some(c.name.as_str()) == cluster)
        .find_map(|c| c.cluster.as_mut()?.server.as_mut());
    if let Some(server) = server
        && let std::borrow::Cow::Owned(ascii) = crate::idn::ascii_url(server)
    {
        *server = ascii;
    }
    kc
}

/// client-go's `validateClusterInfo` of a `proxy-url` (its `parseProxyURL` over Go's
/// `url.Parse`): a URL, of scheme `http`, `https` or `socks5`, in its words.
pub(super) fn check_proxy_url(proxy: &str, cluster: &str) -> Result<()> {
    let fail = |reason: String| {
        Err(Error::Proxy(format!(
            "invalid 'proxy-url' {proxy:?} for cluster {cluster:?}: {reason}"
        )))
    };
    // Go's `getScheme`: letters, then letters, digits, `+`, `-` or `.`, up to a `:`;
    // a `:` first is an error, anything else before a `:` means no scheme at all.
    if proxy.starts_with(':') {
        return fail(format!("could not parse: {proxy}"));
    }
    let scheme = match proxy.split_once(':') {
        Some((scheme, _))
            if scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
        {
            scheme.to_ascii_lowercase()
        }
        _ => String::new(),
    };
    match scheme.as_str() {
        "http" | "https" | "socks5" => Ok(()),
        other => fail(format!(
            "unsupported scheme {other:?}, must be http, https, or socks5"
        )),
    }
}

/// The server of a `Config` whose server the overrides give.
pub(super) fn placeholder_uri() -> http::Uri {
    http::Uri::from_static("https://localhost")
}
