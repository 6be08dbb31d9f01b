//! client-go's `ConfigOverrides`: what the command line sets over the kubeconfig, and
//! how it is merged (the entries it selects, then the settings it replaces).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use kube::Config;
use kube::config::Kubeconfig;

use crate::error::{Error, Result};

/// The command line's settings over the kubeconfig, each `None` (or empty) when not
/// given. Filled from kubectl's global flags by `cli`; the errors name those flags.
/// No `Debug`: it holds the token and the password.
#[derive(Default)]
pub struct Overrides {
    /// The kubeconfig context to use (`--context`).
    pub context: Option<String>,
    /// The kubeconfig cluster to use (`--cluster`).
    pub cluster: Option<String>,
    /// The kubeconfig user to use (`--user`).
    pub user: Option<String>,
    /// The namespace (`-n`).
    pub namespace: Option<String>,
    /// The API server's address (`--server`); a bare `host:port` is https.
    pub server: Option<String>,
    /// A bearer token, which replaces every other credential of the user (`--token`).
    pub token: Option<String>,
    /// Basic authentication's user name (`--username`).
    pub username: Option<String>,
    /// Basic authentication's password (`--password`).
    pub password: Option<String>,
    /// The user to impersonate (`--as`).
    pub impersonate: Option<String>,
    /// The UID to impersonate (`--as-uid`).
    pub impersonate_uid: Option<String>,
    /// The groups to impersonate (`--as-group`).
    pub impersonate_groups: Vec<String>,
    /// The user extras to impersonate, each key's values in order (`--as-user-extra`).
    pub impersonate_user_extra: HashMap<String, Vec<String>>,
    /// A CA file, which replaces the kubeconfig's trust (`--certificate-authority`).
    pub certificate_authority: Option<PathBuf>,
    /// A client certificate file (`--client-certificate`).
    pub client_certificate: Option<PathBuf>,
    /// A client key file (`--client-key`).
    pub client_key: Option<PathBuf>,
    /// Verification off, which replaces the kubeconfig's trust
    /// (`--insecure-skip-tls-verify`).
    pub insecure_skip_tls_verify: bool,
    /// The name to verify the server's certificate against (`--tls-server-name`).
    pub tls_server_name: Option<String>,
    /// The proxy, which replaces the cluster's `proxy-url` (`--proxy-url`).
    pub proxy_url: Option<String>,
    /// The timeout of every request (`--request-timeout`), checked here for its place
    /// among the kubeconfig's errors; set on the client by `crate::bound`.
    pub timeout: Timeout,
}

/// `--request-timeout` as the command line gave it, parsed once, with the flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Timeout {
    /// Not given, or zero: no timeout.
    #[default]
    None,
    /// The bound of every request's connect, read and write.
    After(Duration),
    /// A value that did not parse, reported where client-go's `ClientConfig` parses
    /// it: after every problem of the kubeconfig and of the other overrides.
    Invalid,
}

impl Timeout {
    /// The bound of every request, `None` for none; a value that did not parse is
    /// client-go's error, in its words.
    pub fn bound(self) -> Result<Option<Duration>> {
        match self {
            Timeout::None => Ok(None),
            Timeout::After(d) => Ok((!d.is_zero()).then_some(d)),
            Timeout::Invalid => Err(Error::InvalidTimeout),
        }
    }
}

impl Overrides {
    /// client-go's `DirectClientConfig.ClientConfig` checks, before anything else is
    /// done with the kubeconfig: a user, context or cluster *named by a flag* must
    /// exist (in that order: `auth info "x" does not exist`, `context "x" does not
    /// exist`, `cluster "x" does not exist`), then `ConfirmUsable`'s: the current
    /// context must exist (`Error in configuration: context was not found for
    /// specified context: x`). Where client-go would go on without the entry a
    /// context names (its user, its cluster), the plugins stop too, in the same words
    /// as for a flag: never anonymous, never kubectl's `http://localhost:8080`
    /// default (README).
    pub fn check_selection(&self, kc: Option<&Kubeconfig>) -> Result<()> {
        let empty = Kubeconfig::default();
        let kc = kc.unwrap_or(&empty);
        let named = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
        let has_user = |name: &str| kc.auth_infos.iter().any(|u| u.name == name);
        let has_context = |name: &str| kc.contexts.iter().any(|c| c.name == name);
        let has_cluster = |name: &str| kc.clusters.iter().any(|c| c.name == name);
        if let Some(user) = named(&self.user)
            && !has_user(&user)
        {
            return Err(Error::AuthInfoNotFound(user));
        }
        if let Some(context) = named(&self.context)
            && !has_context(&context)
        {
            return Err(Error::ContextNotFound(context));
        }
        if let Some(cluster) = named(&self.cluster)
            && !has_cluster(&cluster)
        {
            return Err(Error::ClusterNotFound(cluster));
        }
        let context_name = named(&self.context).or_else(|| named(&kc.current_context));
        let Some(context_name) = context_name else {
            return Ok(());
        };
        let Some(context) = kc
            .contexts
            .iter()
            .find(|c| c.name == context_name)
            .map(|c| c.context.clone().unwrap_or_default())
        else {
            return Err(Error::CurrentContextNotFound(context_name));
        };
        // The entries the context names, where no flag names another.
        if named(&self.user).is_none()
            && let Some(user) = context.user.filter(|u| !u.is_empty())
            && !has_user(&user)
        {
            return Err(Error::AuthInfoNotFound(user));
        }
        if named(&self.cluster).is_none()
            && !context.cluster.is_empty()
            && !has_cluster(&context.cluster)
            && self.server.as_deref().is_none_or(str::is_empty)
        {
            return Err(Error::ClusterNotFound(context.cluster));
        }
        Ok(())
    }

    /// The name of the kubeconfig cluster the flags select (`--cluster`, else the
    /// context's).
    pub(super) fn cluster_name(&self, kc: &Kubeconfig) -> Option<String> {
        match self.cluster.as_deref().filter(|c| !c.is_empty()) {
            Some(cluster) => Some(cluster.to_string()),
            None => {
                let context = self.context.as_ref().or(kc.current_context.as_ref())?;
                kc.contexts
                    .iter()
                    .find(|c| &c.name == context)
                    .and_then(|c| c.context.as_ref())
                    .map(|c| c.cluster.clone())
            }
        }
    }

    /// The `proxy-url` of the kubeconfig cluster the flags select (`--cluster`, else
    /// the context's), if it has one.
    pub(super) fn cluster_proxy_url(&self, kc: &Kubeconfig) -> Option<String> {
        let name = self.cluster_name(kc)?;
        kc.clusters
            .iter()
            .find(|c| c.name == name)
            .and_then(|c| c.cluster.as_ref())
            .and_then(|c| c.proxy_url.clone())
            .filter(|p| !p.is_empty())
    }

    /// The kubeconfig user the flags select: `--user`, else the context's.
    pub(super) fn auth_info_name(&self, kc: &Kubeconfig) -> Option<String> {
        if let Some(user) = self.user.as_deref().filter(|u| !u.is_empty()) {
            return Some(user.to_string());
        }
        let context = self.context.as_ref().or(kc.current_context.as_ref())?;
        kc.contexts
            .iter()
            .find(|c| &c.name == context)
            .and_then(|c| c.context.as_ref())
            .and_then(|c| c.user.clone())
    }

    /// Applies the server, namespace, credentials, impersonation, trust and timeout
    /// overrides to `config` (kube's, from the kubeconfig's selected entries).
    pub fn apply(&self, config: &mut Config) -> Result<()> {
        if let Some(server) = self.server.as_deref().filter(|s| !s.is_empty()) {
            config.cluster_url = server_url(server)?;
        }
        if let Some(ns) = self.namespace.as_deref().filter(|s| !s.is_empty()) {
            config.default_namespace = ns.to_string();
        }
        if let Some(token) = self.token.as_deref().filter(|s| !s.is_empty()) {
            // An explicit token replaces every other credential of the selected user,
            // as kubectl's override does.
            config.auth_info.token = Some(token.to_string().into());
            config.auth_info.token_file = None;
            config.auth_info.exec = None;
            config.auth_info.auth_provider = None;
            config.auth_info.username = None;
            config.auth_info.password = None;
        }
        // Basic auth as client-go does it: either flag replaces the kubeconfig's value.
        if let Some(username) = self.username.as_deref().filter(|s| !s.is_empty()) {
            config.auth_info.username = Some(username.to_string());
        }
        if let Some(password) = self.password.as_deref().filter(|s| !s.is_empty()) {
            config.auth_info.password = Some(password.to_string().into());
        }
        if let Some(user) = self.impersonate.as_deref().filter(|s| !s.is_empty()) {
            config.auth_info.impersonate = Some(user.to_string());
        }
        if let Some(uid) = self.impersonate_uid.as_deref().filter(|s| !s.is_empty()) {
            config.auth_info.impersonate_uid = Some(uid.to_string());
        }
        if !self.impersonate_user_extra.is_empty() {
            config.auth_info.impersonate_user_extra = Some(self.impersonate_user_extra.clone());
        }
        if !self.impersonate_groups.is_empty() {
            config.auth_info.impersonate_groups = Some(self.impersonate_groups.clone());
        }
        self.apply_tls(config)?;
        if let Some(path) = &self.client_certificate {
            config.auth_info.client_certificate = Some(path.display().to_string());
            config.auth_info.client_certificate_data = None;
        }
        if let Some(path) = &self.client_key {
            config.auth_info.client_key = Some(path.display().to_string());
            config.auth_info.client_key_data = None;
        }
        // Only checked here, where client-go's `ClientConfig` reports a bad value; the
        // client's timeouts are set in one place, `crate::bound::bound_requests`.
        self.timeout.bound()?;
        config.headers.push((
            http::header::USER_AGENT,
            http::HeaderValue::from_static(concat!("kubeplug/", env!("CARGO_PKG_VERSION"))),
        ));
        // kube retries 429/503/504 up to 15 times with a 1000 s cap, with or without
        // Retry-After: far too patient for an interactive command that a user (or a CI
        // step) is waiting on, and not what kubectl does. `cli`'s client adds client-go's
        // own rule instead (`crate::retry`). Commands that need other retries
        // (rolling-update's conflict loop) do their own, bounded ones.
        config.default_retry = false;
        Ok(())
    }

    /// The server-trust flags, merged as client-go's `getCluster` merges them:
    /// `--certificate-authority` or `--insecure-skip-tls-verify` replaces the
    /// kubeconfig's whole trust setting (so a CA flag turns verification back on over
    /// `insecure-skip-tls-verify: true`, and the insecure flag drops the kubeconfig's
    /// CA), and `--server` takes `--tls-server-name` with it (so a kubeconfig's
    /// `tls-server-name`, which named the kubeconfig's server, is cleared). A CA
    /// together with skipped verification is refused, as client-go's transport does.
    fn apply_tls(&self, config: &mut Config) -> Result<()> {
        if self.certificate_authority.is_some() || self.insecure_skip_tls_verify {
            config.accept_invalid_certs = self.insecure_skip_tls_verify;
            config.root_cert = None;
            config.root_cert_file = None;
        }
        if let Some(path) = &self.certificate_authority {
            // client-go's `dataFromSliceOrFile` (`os.ReadFile`), in Go's words: a
            // directory opens (client-go's open check passed) and fails to read.
            let pem = std::fs::read(path).map_err(|e| {
                let op = if e.kind() == std::io::ErrorKind::IsADirectory {
                    "read"
                } else {
                    "open"
                };
                Error::ClusterFile(format!(
                    "{op} {}: {}",
                    path.display(),
                    crate::credentials::go_errno_text(&e)
                ))
            })?;
            config.root_cert = Some(pem_to_der_certs(&pem));
        }
        let server_flag = self.server.as_deref().is_some_and(|s| !s.is_empty());
        let name_flag = self.tls_server_name.as_deref().filter(|s| !s.is_empty());
        if server_flag || name_flag.is_some() {
            config.tls_server_name = name_flag.map(str::to_string);
        }
        if config.accept_invalid_certs
            && (config.root_cert.is_some() || config.root_cert_file.is_some())
        {
            return Err(Error::InsecureWithCa);
        }
        Ok(())
    }
}

/// client-go's `DefaultServerURL` of a server as `ClientConfig` first reads it (no CA
/// nor client certificate merged yet, so not `defaultTLS`): a URL with a scheme and a
/// host is kept whole, its path too (a prefix of every request, for a server behind
/// a proxy that relocates it: kube's base-URI layer prepends it); anything else is
/// `http://` + it, and must then have no path (`host must be a URL or a host:port
/// pair: "/some/dir"`). So a bare `host:port` is dialed over http, as kubectl does.
pub(super) fn server_url(server: &str) -> Result<http::Uri> {
    let invalid = |reason: String| Error::InvalidFlag {
        flag: "server",
        value: server.to_string(),
        reason,
    };
    // A host that is not ASCII is held in its IDNA form (`crate::idn`).
    let whole = crate::idn::ascii_url(server)
        .parse::<http::Uri>()
        .ok()
        .filter(|u| u.scheme().is_some() && u.authority().is_some_and(|a| !a.host().is_empty()));
    if let Some(url) = whole {
        return Ok(url);
    }
    // Go parses `http:///some/dir` as a URL without a host.
    if server.starts_with('/') {
        return Err(Error::ServerNotHost(server.to_string()));
    }
    let url: http::Uri = crate::idn::ascii_url(&format!("http://{server}"))
        .parse()
        .map_err(|e: http::uri::InvalidUri| invalid(e.to_string()))?;
    let host_empty = url.authority().is_none_or(|a| a.host().is_empty());
    if host_empty || !matches!(url.path(), "" | "/") {
        return Err(Error::ServerNotHost(server.to_string()));
    }
    Ok(url)
}

/// Splits a PEM bundle into DER certificates, the shape `Config::root_cert` wants.
fn pem_to_der_certs(pem: &[u8]) -> Vec<Vec<u8>> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    CertificateDer::pem_slice_iter(pem)
        .filter_map(|c| c.ok())
        .map(|c| c.to_vec())
        .collect()
}
