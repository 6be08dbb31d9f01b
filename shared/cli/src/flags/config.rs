//! The global flags every plugin shares: kubectl's `ConfigFlags`.
//!
//! kubectl does not forward its own global flags to a plugin (it only passes
//! `KUBECONFIG` through the environment), so each plugin parses `--context`, `-n` and
//! the rest itself, with the same names, defaults and help text as kubectl.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use apiclient::error::{Error, Result};

/// kubectl's global kubeconfig flags (`genericclioptions.ConfigFlags`).
#[derive(clap::Args, Clone, Default)]
#[command(next_help_heading = "Global options")]
pub struct ConfigFlags {
    /// Path to the kubeconfig file to use for CLI requests.
    #[arg(verbatim_doc_comment, long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// The name of the kubeconfig context to use
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// The name of the kubeconfig cluster to use
    #[arg(long, global = true, value_name = "NAME")]
    pub cluster: Option<String>,

    /// The name of the kubeconfig user to use
    #[arg(long, global = true, value_name = "NAME")]
    pub user: Option<String>,

    /// If present, the namespace scope for this CLI request
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,

    /// The address and port of the Kubernetes API server
    #[arg(short = 's', long, global = true, value_name = "URL")]
    pub server: Option<String>,

    /// Bearer token for authentication to the API server
    #[arg(long, global = true, value_name = "TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Username to impersonate for the operation. User could be a regular user or a service account in a namespace.
    #[arg(verbatim_doc_comment, long = "as", global = true, value_name = "USER")]
    pub impersonate: Option<String>,

    /// Group to impersonate for the operation, this flag can be repeated to specify multiple groups.
    #[arg(
        verbatim_doc_comment,
        long = "as-group",
        global = true,
        value_name = "GROUP"
    )]
    pub impersonate_group: Vec<String>,

    /// UID to impersonate for the operation.
    #[arg(
        verbatim_doc_comment,
        long = "as-uid",
        global = true,
        value_name = "UID"
    )]
    pub impersonate_uid: Option<String>,

    /// User extras to impersonate for the operation, this flag can be repeated to specify multiple values for the same key.
    #[arg(
        verbatim_doc_comment,
        long = "as-user-extra",
        global = true,
        value_name = "KEY=VALUE"
    )]
    pub impersonate_user_extra: Vec<String>,

    /// Path to a cert file for the certificate authority
    #[arg(long, global = true, value_name = "PATH")]
    pub certificate_authority: Option<PathBuf>,

    /// Path to a client certificate file for TLS
    #[arg(long, global = true, value_name = "PATH")]
    pub client_certificate: Option<PathBuf>,

    /// Path to a client key file for TLS
    #[arg(long, global = true, value_name = "PATH")]
    pub client_key: Option<PathBuf>,

    /// If true, the server's certificate will not be checked for validity. This will make your HTTPS connections insecure
    #[arg(long, global = true, value_name = "BOOL")]
    pub insecure_skip_tls_verify: bool,

    /// Server name to use for server certificate validation. If it is not provided, the hostname used to contact the server is used
    #[arg(long, global = true, value_name = "NAME")]
    pub tls_server_name: Option<String>,

    /// The length of time to wait before giving up on a single server request. Non-zero values should contain a corresponding time unit (e.g. 1s, 2m, 3h). A value of zero means don't timeout requests.
    #[arg(
        verbatim_doc_comment,
        long,
        global = true,
        value_name = "DURATION",
        default_value = "0"
    )]
    pub request_timeout: String,

    /// Default cache directory
    #[arg(long, global = true, value_name = "PATH")]
    pub cache_dir: Option<PathBuf>,

    /// Path to the kuberc file to use for preferences. This can be disabled by exporting KUBECTL_KUBERC=false feature gate or turning off the feature KUBERC=off.
    #[arg(verbatim_doc_comment, long, global = true, value_name = "PATH")]
    pub kuberc: Option<String>,

    /// kuberc as the skeleton read it at start (`None`: not read yet, so
    /// [`Self::to_config`] reads it).
    #[arg(skip)]
    pub preferences: Option<apiclient::kuberc::Preferences>,

    /// Treat warnings received from the server as errors and exit with a non-zero exit code
    #[arg(long, global = true, value_name = "BOOL")]
    pub warnings_as_errors: bool,

    /// number for the log level verbosity
    #[arg(
        short = 'v',
        long = "v",
        global = true,
        value_name = "LEVEL",
        default_value_t = 0
    )]
    pub verbosity: u8,

    /// Username for basic authentication to the API server
    #[arg(long, global = true, value_name = "USERNAME")]
    pub username: Option<String>,

    /// Password for basic authentication to the API server
    #[arg(long, global = true, value_name = "PASSWORD", hide_env_values = true)]
    pub password: Option<String>,

    /// Require server version to match client version
    #[arg(long, global = true, value_name = "BOOL")]
    pub match_server_version: bool,

    // Always in effect: the client never asks for compressed responses (kube's `gzip`
    // feature is off), so there is nothing to opt out of.
    /// Proxy URL to use for requests to the API server
    #[arg(long, global = true, value_name = "URL")]
    pub proxy_url: Option<String>,

    /// If true, opt-out of response compression for all requests to the server
    #[arg(long, global = true, value_name = "BOOL")]
    pub disable_compression: bool,

    // Go runtime profiles (pprof) of kubectl itself: the names are checked as kubectl
    // checks them, nothing is captured (the plugins are not Go programs).
    /// Name of profile to capture. One of (none|cpu|heap|goroutine|threadcreate|block|mutex|trace)
    #[arg(long, global = true, value_name = "PROFILE", default_value = "none", value_parser = parse_profile)]
    pub profile: String,

    // Never written: see `--profile`.
    /// Name of the file to write the profile to
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        default_value = "profile.pprof"
    )]
    pub profile_output: String,

    // A Go duration, checked as klog's flag checks it; the logs are written unbuffered,
    // so there is nothing to flush.
    /// Maximum number of seconds between log flushes
    #[arg(long, global = true, value_name = "DURATION", default_value = "5s", value_parser = parse_flush_frequency)]
    pub log_flush_frequency: String,

    // Checked as klog checks it; the patterns name Go source files of kubectl, so
    // nothing here matches them and only `-v` sets the verbosity.
    /// comma-separated list of pattern=N settings for file-filtered logging (only works for the default text log format)
    #[arg(long, global = true, value_name = "PATTERN=N", value_parser = parse_vmodule)]
    pub vmodule: Option<String>,
}

/// kubectl's `--profile` names (its `initProfiling` refuses any other).
fn parse_profile(value: &str) -> std::result::Result<String, String> {
    match value {
        "none" | "cpu" | "heap" | "goroutine" | "threadcreate" | "block" | "mutex" | "trace" => {
            Ok(value.to_string())
        }
        other => Err(format!("unknown profile '{other}'")),
    }
}

/// `--log-flush-frequency` is a Go `flag.Duration` (klog's), whose only error text is
/// `parse error`.
fn parse_flush_frequency(value: &str) -> std::result::Result<String, String> {
    super::parse_go_duration_signed(value)
        .map(|_| value.to_string())
        .map_err(|_| "parse error".to_string())
}

/// klog's `--vmodule` syntax: `pattern=N[,pattern=N…]`, N a non-negative 32-bit
/// integer; empty entries (a trailing comma) are skipped.
fn parse_vmodule(value: &str) -> std::result::Result<String, String> {
    const SYNTAX: &str = "syntax error: expect comma-separated list of filename=N";
    for entry in value.split(',').filter(|e| !e.is_empty()) {
        let mut parts = entry.split('=');
        let (Some(pattern), Some(level), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(SYNTAX.into());
        };
        if pattern.is_empty() || level.is_empty() {
            return Err(SYNTAX.into());
        }
        let level: i32 = level.parse().map_err(|_| SYNTAX.to_string())?;
        if level < 0 {
            return Err("negative value for vmodule level".into());
        }
    }
    Ok(value.to_string())
}

// Hand-written so that `{:?}` (used by `-v` logging and panics) never shows the token.
impl std::fmt::Debug for ConfigFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigFlags")
            .field("kubeconfig", &self.kubeconfig)
            .field("context", &self.context)
            .field("cluster", &self.cluster)
            .field("user", &self.user)
            .field("namespace", &self.namespace)
            .field("server", &self.server)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("impersonate", &self.impersonate)
            .field("impersonate_group", &self.impersonate_group)
            .field("impersonate_uid", &self.impersonate_uid)
            .field("impersonate_user_extra", &self.impersonate_user_extra)
            .field("certificate_authority", &self.certificate_authority)
            .field("client_certificate", &self.client_certificate)
            .field("client_key", &self.client_key)
            .field("insecure_skip_tls_verify", &self.insecure_skip_tls_verify)
            .field("tls_server_name", &self.tls_server_name)
            .field("request_timeout", &self.request_timeout)
            .field("cache_dir", &self.cache_dir)
            .field("warnings_as_errors", &self.warnings_as_errors)
            .field("verbosity", &self.verbosity)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("match_server_version", &self.match_server_version)
            .field("disable_compression", &self.disable_compression)
            .field("profile", &self.profile)
            .field("profile_output", &self.profile_output)
            .field("log_flush_frequency", &self.log_flush_frequency)
            .field("vmodule", &self.vmodule)
            .field("kuberc", &self.kuberc)
            .field("proxy_url", &self.proxy_url)
            .field("preferences", &self.preferences)
            .finish()
    }
}

/// Where the kubeconfig came from, for error messages and `cluster env`-style output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// `--kubeconfig PATH`.
    Flag(PathBuf),
    /// The existing files of `KUBECONFIG`, in order.
    Env(Vec<PathBuf>),
    /// `~/.kube/config`.
    Home(PathBuf),
    /// Neither: `--server` alone or the in-cluster environment.
    None,
}

impl ConfigFlags {
    /// The request timeout as a [`Duration`]; `None` means "no timeout" (`0`).
    pub fn request_timeout(&self) -> Result<Option<Duration>> {
        // `Default` (used when a plugin builds flags programmatically) leaves it empty.
        if self.request_timeout.is_empty() {
            return Ok(None);
        }
        let d = super::parse_go_duration(&self.request_timeout, true).map_err(|reason| {
            Error::InvalidFlag {
                flag: "request-timeout",
                value: self.request_timeout.clone(),
                reason,
            }
        })?;
        Ok((!d.is_zero()).then_some(d))
    }

    /// Finds and merges the kubeconfig files the way client-go's loading rules do:
    /// `--kubeconfig` (which must exist: `stat PATH: no such file or directory`), else
    /// every file of `KUBECONFIG` (each once, missing ones skipped), else
    /// `~/.kube/config`. Every file is read before any problem is reported, and every
    /// file that exists but cannot be read or parsed is reported, as client-go's
    /// aggregate does.
    pub fn load_kubeconfig(&self) -> Result<(Option<Kubeconfig>, ConfigSource)> {
        self.load_kubeconfig_with(
            std::env::var_os("KUBECONFIG").as_deref(),
            home_dir().as_deref(),
        )
    }

    /// [`Self::load_kubeconfig`] with the environment passed in, so tests need not
    /// mutate the process environment.
    pub fn load_kubeconfig_with(
        &self,
        kubeconfig_env: Option<&std::ffi::OsStr>,
        home: Option<&Path>,
    ) -> Result<(Option<Kubeconfig>, ConfigSource)> {
        if let Some(path) = self
            .kubeconfig
            .as_ref()
            .filter(|p| !p.as_os_str().is_empty())
        {
            // client-go stats the explicit file first and returns that error when the
            // file does not exist; any other problem is the reading's.
            if let Err(e) = std::fs::metadata(path)
                && e.kind() == std::io::ErrorKind::NotFound
            {
                return Err(Error::KubeconfigMissing(apiclient::error::go_path_error(
                    "stat", path, &e,
                )));
            }
            let kc = read_kubeconfig(path)?;
            return Ok((Some(kc), ConfigSource::Flag(path.clone())));
        }
        if let Some(list) = kubeconfig_env.filter(|v| !v.is_empty()) {
            // client-go's `deduplicate`: a file listed twice is read once.
            let mut listed: Vec<PathBuf> = Vec::new();
            for path in std::env::split_paths(list) {
                if !path.as_os_str().is_empty() && !listed.contains(&path) {
                    listed.push(path);
                }
            }
            let (merged, read) = read_all(&listed)?;
            return Ok((merged, ConfigSource::Env(read)));
        }
        if let Some(home) = home {
            let path = home.join(".kube").join("config");
            let (merged, read) = read_all(std::slice::from_ref(&path))?;
            if let Some(kc) = merged {
                return Ok((
                    Some(kc),
                    ConfigSource::Home(read.into_iter().next().unwrap_or(path)),
                ));
            }
        }
        Ok((None, ConfigSource::None))
    }

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

    /// client-go's `Namespace()` as `kubectl create -f --validate=false` calls it
    /// before anything else (with validation, its validator builds a client first):
    /// without `-n` it first runs `ConfirmUsable`, whose words differ from the
    /// lookups of [`Self::check_selection`]: a missing `--context` (or current
    /// context) is `Error in configuration: context was not found for specified
    /// context: x`, a missing `--cluster` is `no server found for cluster "x"` (the
    /// server defaults of kubectl's loader keep every other cluster usable). With
    /// `-n` nothing is checked here, as client-go returns `-n` at once.
    pub fn confirm_usable(&self) -> Result<()> {
        if self.namespace.as_deref().is_some_and(|n| !n.is_empty()) {
            return Ok(());
        }
        let (kubeconfig, _source) = self.load_kubeconfig()?;
        let Some(kc) = kubeconfig else {
            return Ok(());
        };
        let named = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
        if let Some(context) = named(&self.context).or_else(|| named(&kc.current_context))
            && !kc.contexts.iter().any(|c| c.name == context)
        {
            return Err(Error::CurrentContextNotFound(context));
        }
        if let Some(cluster) = named(&self.cluster)
            && !kc.clusters.iter().any(|c| c.name == cluster)
        {
            return Err(Error::NoServerForCluster(cluster));
        }
        Ok(())
    }

    /// The namespace the command works in: `-n`, else the context's, else `default`.
    /// Also reports whether it was given explicitly (kubectl's `enforceNamespace`).
    pub fn namespace_of(&self, config: &Config) -> (String, bool) {
        match &self.namespace {
            Some(ns) if !ns.is_empty() => (ns.clone(), true),
            _ => (config.default_namespace.clone(), false),
        }
    }

    /// The namespace without building a client configuration (for client dry runs,
    /// which send nothing): `-n`, else the namespace of the kubeconfig's (or
    /// `--context`'s) context, else `default`; with whether `-n` gave it.
    pub fn offline_namespace(&self) -> Result<(String, bool)> {
        if let Some(ns) = self.namespace.as_deref().filter(|n| !n.is_empty()) {
            return Ok((ns.to_string(), true));
        }
        let (kubeconfig, _source) = self.load_kubeconfig()?;
        // kubectl refuses a missing user, context or cluster even for a client dry run.
        self.check_selection(kubeconfig.as_ref())?;
        let namespace = kubeconfig.and_then(|kc| {
            let context = self.context.clone().or(kc.current_context.clone())?;
            kc.contexts
                .into_iter()
                .find(|c| c.name == context)
                .and_then(|c| c.context)
                .and_then(|c| c.namespace)
                .filter(|n| !n.is_empty())
        });
        Ok((namespace.unwrap_or_else(|| "default".to_string()), false))
    }

    /// Builds the client configuration: kubeconfig selection, then the flag overrides
    /// kube-rs's `KubeConfigOptions` has no room for.
    pub async fn to_config(&self) -> Result<Config> {
        let (kubeconfig, _source) = self.load_kubeconfig()?;
        // Before kube's loader, which would fall back to an anonymous user for a
        // `--user` it cannot find.
        self.check_selection(kubeconfig.as_ref())?;
        let options = KubeConfigOptions {
            context: self.context.clone(),
            cluster: self.cluster.clone(),
            user: self.user.clone(),
        };
        let auth_info_name = kubeconfig
            .as_ref()
            .and_then(|kc| self.auth_info_name(kc))
            .unwrap_or_default();
        let proxy_url = kubeconfig
            .as_ref()
            .and_then(|kc| self.cluster_proxy_url(kc));
        let kubeconfig_cluster = kubeconfig.as_ref().and_then(|kc| self.cluster_name(kc));
        let mut config = match kubeconfig {
            Some(kc) => match Config::from_custom_kubeconfig(kc, &options).await {
                Ok(config) => config,
                // A kubeconfig without a server is fine when --server supplies one.
                Err(kube::config::KubeconfigError::MissingClusterUrl) if self.server.is_some() => {
                    Config::new(placeholder_uri())
                }
                Err(e) => return Err(Error::InvalidConfig(e)),
            },
            None if self.server.is_some() => Config::new(placeholder_uri()),
            None => match Config::incluster() {
                Ok(config) => config,
                Err(_) => return Err(Error::NoConfiguration),
            },
        };
        // Only the kubeconfig's own `proxy-url` is kept. kube also fills this from
        // `HTTPS_PROXY` alone, and tests `NO_PROXY` against the proxy's address rather
        // than the server's; without `proxy-url` the client reads the environment per
        // destination as Go's `ProxyFromEnvironment` does (`apiclient::client`).
        // And it is kept whatever `NO_PROXY` says (kube drops it when `NO_PROXY` names
        // the server): client-go's `http.ProxyURL` takes every request through it.
        // `--proxy-url` (kubectl 1.36+) replaces the kubeconfig's.
        let proxy_url = self
            .proxy_url
            .clone()
            .filter(|p| !p.is_empty())
            .or(proxy_url);
        match proxy_url {
            None => config.proxy_url = None,
            Some(proxy) => {
                let cluster = kubeconfig_cluster.unwrap_or_default();
                check_proxy_url(&proxy, &cluster)?;
                config.proxy_url = Some(proxy.parse().map_err(|e| {
                    Error::Proxy(format!("unable to parse proxy-url {proxy:?}: {e}"))
                })?);
            }
        }
        self.apply_overrides(&mut config)?;
        if let Some(exec) = config.auth_info.exec.as_mut() {
            // Always set, so that nothing in the kubeconfig stands in for it.
            apiclient::credentials::policy::attach(exec, &self.plugin_policy()?);
        }
        // client-go's kubeconfig validation of the user, flags applied.
        apiclient::credentials::validate(&auth_info_name, &config.auth_info)?;
        if self.match_server_version {
            check_server_version(&config).await?;
        }
        Ok(config)
    }

    /// kuberc's credential plugin policy: as read at start, else read now, quietly
    /// (shell completion, which must not print), a problem failing the command.
    fn plugin_policy(&self) -> Result<apiclient::credentials::policy::PluginPolicy> {
        if let Some(prefs) = &self.preferences {
            return Ok(prefs.policy.clone());
        }
        let env = apiclient::kuberc::Env::from_process();
        let prefs = apiclient::kuberc::load(self.kuberc.as_deref(), &env, &mut std::io::sink())
            .map_err(Error::Preferences)?;
        Ok(prefs.map(|p| p.policy).unwrap_or_default())
    }

    /// The name of the kubeconfig cluster the flags select (`--cluster`, else the
    /// context's).
    fn cluster_name(&self, kc: &Kubeconfig) -> Option<String> {
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
    fn cluster_proxy_url(&self, kc: &Kubeconfig) -> Option<String> {
        let name = self.cluster_name(kc)?;
        kc.clusters
            .iter()
            .find(|c| c.name == name)
            .and_then(|c| c.cluster.as_ref())
            .and_then(|c| c.proxy_url.clone())
            .filter(|p| !p.is_empty())
    }

    /// The kubeconfig user the flags select: `--user`, else the context's.
    fn auth_info_name(&self, kc: &Kubeconfig) -> Option<String> {
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

    /// Applies `--server`, `-n`, `--token`, impersonation, TLS and timeout flags.
    pub fn apply_overrides(&self, config: &mut Config) -> Result<()> {
        if let Some(server) = self.server.as_deref().filter(|s| !s.is_empty()) {
            // kubectl accepts a bare host:port and assumes https.
            let url = if server.contains("://") {
                server.to_string()
            } else {
                format!("https://{server}")
            };
            config.cluster_url =
                url.parse()
                    .map_err(|e: http::uri::InvalidUri| Error::InvalidFlag {
                        flag: "server",
                        value: server.to_string(),
                        reason: e.to_string(),
                    })?;
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
        // client-go's: `KEY=VALUE`, values of one key gathered in order; an entry
        // without `=` is dropped without a word.
        let mut extras = std::collections::HashMap::<String, Vec<String>>::new();
        for extra in &self.impersonate_user_extra {
            if let Some((key, value)) = extra.split_once('=') {
                extras.entry(key.into()).or_default().push(value.into());
            }
        }
        if !extras.is_empty() {
            config.auth_info.impersonate_user_extra = Some(extras);
        }
        if !self.impersonate_group.is_empty() {
            config.auth_info.impersonate_groups = Some(self.impersonate_group.clone());
        }
        self.apply_tls_overrides(config)?;
        if let Some(path) = &self.client_certificate {
            config.auth_info.client_certificate = Some(path.display().to_string());
            config.auth_info.client_certificate_data = None;
        }
        if let Some(path) = &self.client_key {
            config.auth_info.client_key = Some(path.display().to_string());
            config.auth_info.client_key_data = None;
        }
        if let Some(timeout) = self.request_timeout()? {
            config.connect_timeout = Some(timeout);
            config.read_timeout = Some(timeout);
            config.write_timeout = Some(timeout);
            config.reset_reader_on_write = true;
        }
        config.headers.push((
            http::header::USER_AGENT,
            http::HeaderValue::from_static(concat!("kubeplug/", env!("CARGO_PKG_VERSION"))),
        ));
        // kube retries 429/503/504 up to 15 times with a 1000 s cap, with or without
        // Retry-After: far too patient for an interactive command that a user (or a CI
        // step) is waiting on, and not what kubectl does. `Self::client` adds client-go's
        // own rule instead (`apiclient::retry`). Commands that need other retries
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
    fn apply_tls_overrides(&self, config: &mut Config) -> Result<()> {
        if self.certificate_authority.is_some() || self.insecure_skip_tls_verify {
            config.accept_invalid_certs = self.insecure_skip_tls_verify;
            config.root_cert = None;
            config.root_cert_file = None;
        }
        if let Some(path) = &self.certificate_authority {
            let pem = std::fs::read(path).map_err(|source| Error::ReadFile {
                what: "certificate authority",
                path: path.clone(),
                source,
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

    /// The client of a command for `config` (from [`Self::to_config`], bounded by
    /// `bound`, whose layer marks each failed request with it for the error's words):
    /// our stack ([`apiclient::client`], with the user's [`apiclient::credentials`]) plus client-go's
    /// retries of `429` and `5xx` answers that carry `Retry-After`
    /// ([`apiclient::retry`]) and the API server's warnings shown as kubectl shows
    /// them ([`apiclient::warnings`]), which also records `--warnings-as-errors` for
    /// `cli::finish`. Runs the user's exec plugin, if it has one; sends no request.
    pub fn client(&self, config: Config, bound: apiclient::bound::Bound) -> Result<Client> {
        apiclient::warnings::set_as_errors(self.warnings_as_errors);
        let (credentials, identity) = apiclient::credentials::Credentials::of(&config)?;
        let builder = apiclient::client::builder(&config, credentials, identity)?;
        // Warnings outermost: like client-go, only the answer that stands is read for
        // them, not the retried ones.
        Ok(builder
            .with_layer(&bound.layer())
            .with_layer(&apiclient::retry::layer())
            .with_layer(&apiclient::warnings::layer())
            .build())
    }
}

/// client-go's `validateClusterInfo` of a `proxy-url` (its `parseProxyURL` over Go's
/// `url.Parse`): a URL, of scheme `http`, `https` or `socks5`, in its words.
fn check_proxy_url(proxy: &str, cluster: &str) -> Result<()> {
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

/// `--match-server-version`: kubectl's `discovery.MatchesServerVersion`, one request
/// to `/version`. kubectl compares its own build (git version, commit and tree state)
/// with the server's; a plugin's build never equals a server's, so with the flag every
/// command that reaches a server stops here with kubectl's message.
async fn check_server_version(config: &Config) -> Result<()> {
    let (credentials, identity) = apiclient::credentials::Credentials::of(config)?;
    let client = apiclient::client::builder(config, credentials, identity)?.build();
    let server =
        client
            .apiserver_version()
            .await
            .map_err(|source| Error::ServerVersionUnreadable {
                reason: apiclient::go_net::url_error(&source, "/version")
                    .unwrap_or_else(|| source.to_string()),
                source,
            })?;
    let client_info = client_version();
    if server.git_version == client_info.git_version
        && server.git_commit == client_info.git_commit
        && server.git_tree_state == client_info.git_tree_state
    {
        return Ok(());
    }
    Err(Error::ServerVersionMismatch {
        server: format!("&{}", go_version_info(&server)),
        client: go_version_info(&client_info),
    })
}

/// This build's `version.Info`, in the fields kubectl fills from its build: the
/// plugin's version, the compiler and the platform in Go's names.
fn client_version() -> k8s_openapi::apimachinery::pkg::version::Info {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    k8s_openapi::apimachinery::pkg::version::Info {
        git_version: concat!("v", env!("CARGO_PKG_VERSION")).into(),
        compiler: "rustc".into(),
        platform: format!("{}/{arch}", std::env::consts::OS),
        ..Default::default()
    }
}

/// Go's `%#v` of a `version.Info` (its strings are ASCII, where Rust's `{:?}` quotes
/// as Go's `%q` does).
fn go_version_info(info: &k8s_openapi::apimachinery::pkg::version::Info) -> String {
    format!(
        "version.Info{{Major:{:?}, Minor:{:?}, GitVersion:{:?}, GitCommit:{:?}, GitTreeState:{:?}, BuildDate:{:?}, GoVersion:{:?}, Compiler:{:?}, Platform:{:?}}}",
        info.major,
        info.minor,
        info.git_version,
        info.git_commit,
        info.git_tree_state,
        info.build_date,
        info.go_version,
        info.compiler,
        info.platform
    )
}

/// One kubeconfig file, as kube's `Kubeconfig::read_from` reads it (every document
/// merged, the first to set a value wins; relative file references made absolute
/// against the file's directory) but with the YAML read by `goyaml`, go-yaml v2
/// as client-go reads it, into JSON and then into kube's types. Why not kube's reader:
/// its serde-saphyr decoder monomorphised over the kubeconfig types is code the
/// binaries carry only for this (issue 21, binary size), and go-yaml's reading is
/// kubectl's (`yes` is a boolean, errors in go-yaml's words).
fn read_kubeconfig(path: &Path) -> Result<Kubeconfig> {
    let fail = |reason: String| Error::Kubeconfig {
        path: path.to_path_buf(),
        reason,
    };
    let text = read_kubeconfig_text(path).map_err(fail)?;
    let dir = path.parent();
    let mut merged: Option<Kubeconfig> = None;
    for document in kubeconfig_documents(&text).map_err(fail)? {
        let mut config = document;
        if let Some(dir) = dir {
            absolute_references(&mut config, dir);
        }
        merged = Some(match merged {
            None => config,
            Some(acc) => acc.merge(config).map_err(|e| fail(e.to_string()))?,
        });
    }
    // An empty file is an empty kubeconfig.
    Ok(merged.unwrap_or_default())
}

/// The documents of a kubeconfig's text, each read as go-yaml v2 reads it and decoded
/// into kube's `Kubeconfig`; empty and `null` documents skipped. The error is the
/// reason only (`yaml: line 6: mapping values are not allowed in this context`), never
/// the text around it (often a token or a key).
fn kubeconfig_documents(text: &str) -> std::result::Result<Vec<Kubeconfig>, String> {
    let mut configs = Vec::new();
    for document in goyaml::documents(text) {
        // apimachinery's YAMLReader's words for `--- text`.
        let document =
            document.map_err(|(_, rest)| format!("invalid Yaml document separator: {rest}"))?;
        // go-yaml's words, its line counted in the document as create -f counts it
        // (in the file for the first document, the only one client-go reads).
        let mut value = document.value.map_err(|e| goyaml::yaml_reason(&e))?;
        set_aside_invalid_interactive_modes(&mut value);
        let config = serde_json::from_value::<Kubeconfig>(value).map_err(|e| e.to_string())?;
        check_base64(&config)?;
        configs.push(config);
    }
    Ok(configs)
}

/// An exec `interactiveMode` string kube's enum cannot hold, moved where kube keeps
/// unknown fields (`credentials::INVALID_INTERACTIVE_MODE`), so that the file loads as
/// kubectl loads it and the user's validation reports it in kubectl's words.
fn set_aside_invalid_interactive_modes(value: &mut serde_json::Value) {
    let users = value
        .get_mut("users")
        .and_then(serde_json::Value::as_array_mut);
    for user in users.into_iter().flatten() {
        let Some(exec) = user
            .pointer_mut("/user/exec")
            .and_then(serde_json::Value::as_object_mut)
        else {
            continue;
        };
        let invalid = exec
            .get("interactiveMode")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|m| !matches!(m, "Never" | "IfAvailable" | "Always"));
        if invalid && let Some(mode) = exec.remove("interactiveMode") {
            // An empty string is Go's "not set".
            if mode.as_str() != Some("") {
                exec.insert(
                    apiclient::credentials::INVALID_INTERACTIVE_MODE.into(),
                    mode,
                );
            }
        }
    }
}

/// The `*-data` fields of every cluster and user, which client-go decodes as `[]byte`
/// when it loads the file: base64, or the file is refused in Go's words (`illegal
/// base64 data at input byte 0`), whichever context is used (checked beside kubectl
/// 1.32).
fn check_base64(config: &Kubeconfig) -> std::result::Result<(), String> {
    use secrecy::ExposeSecret as _;
    let clusters = config
        .clusters
        .iter()
        .filter_map(|c| c.cluster.as_ref()?.certificate_authority_data.as_deref());
    // In the order Go meets them: its YAML reaches the decoder as JSON with sorted
    // keys (`clusters` before `users`, `client-certificate-data` before
    // `client-key-data`), and the first error is the one reported.
    let users = config
        .auth_infos
        .iter()
        .filter_map(|u| u.auth_info.as_ref())
        .flat_map(|u| {
            let key = u.client_key_data.as_ref().map(|k| k.expose_secret());
            [u.client_certificate_data.as_deref(), key]
        })
        .flatten();
    for data in clusters.chain(users) {
        apiclient::error::go_base64(&base64::engine::general_purpose::STANDARD, data)?;
    }
    Ok(())
}

/// kube's `read_path`: the file as text, UTF-16 with a byte-order mark decoded, a UTF-8
/// one dropped. Opened and read in two steps, so that a failure names its step as
/// Go's `os.ReadFile` does (`open PATH: permission denied`, `read PATH: is a
/// directory`).
fn read_kubeconfig_text(path: &Path) -> std::result::Result<String, String> {
    use std::io::Read as _;
    let mut file =
        std::fs::File::open(path).map_err(|e| apiclient::error::go_path_error("open", path, &e))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| apiclient::error::go_path_error("read", path, &e))?;
    goyaml::text::strict(&bytes)
        .map(std::borrow::Cow::into_owned)
        .map_err(|what| format!("Invalid {what}"))
}

/// client-go's loop over the files of its precedence list: a file that does not exist
/// is skipped, every other one read; each failure is reported (one is an
/// [`Error::Kubeconfig`], several an [`Error::KubeconfigFiles`]), after all were
/// tried. The first file to set a value wins. Also returns the files read.
fn read_all(paths: &[PathBuf]) -> Result<(Option<Kubeconfig>, Vec<PathBuf>)> {
    let mut merged: Option<Kubeconfig> = None;
    let mut read = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        if let Err(e) = std::fs::metadata(path)
            && e.kind() == std::io::ErrorKind::NotFound
        {
            continue;
        }
        match read_kubeconfig(path) {
            Ok(kc) => {
                merged = Some(match merged {
                    None => kc,
                    Some(acc) => acc.merge(kc).map_err(Error::KubeconfigMerge)?,
                });
                read.push(path.clone());
            }
            Err(e) => errors.push(e),
        }
    }
    match errors.len() {
        0 => Ok((merged, read)),
        1 => Err(errors.remove(0)),
        _ => Err(Error::KubeconfigFiles(errors)),
    }
}

/// kube's (and client-go's `ResolvePaths`) rule: the file references of a kubeconfig
/// are relative to its directory; an exec command only when it holds a separator (a
/// bare name is looked up on `PATH`).
fn absolute_references(config: &mut Kubeconfig, dir: &Path) {
    let absolute = |file: &mut String| {
        if Path::new(file.as_str()).is_relative()
            && let Some(abs) = dir.join(file.as_str()).to_str()
        {
            *file = abs.to_owned();
        }
    };
    for cluster in config
        .clusters
        .iter_mut()
        .filter_map(|n| n.cluster.as_mut())
    {
        if let Some(ca) = &mut cluster.certificate_authority {
            absolute(ca);
        }
    }
    for auth in config
        .auth_infos
        .iter_mut()
        .filter_map(|n| n.auth_info.as_mut())
    {
        for file in [
            &mut auth.client_certificate,
            &mut auth.client_key,
            &mut auth.token_file,
        ]
        .into_iter()
        .flatten()
        {
            absolute(file);
        }
        if let Some(command) = auth.exec.as_mut().and_then(|e| e.command.as_mut())
            && command.contains(std::path::MAIN_SEPARATOR)
        {
            absolute(command);
        }
    }
}

fn placeholder_uri() -> http::Uri {
    http::Uri::from_static("https://localhost")
}

fn home_dir() -> Option<PathBuf> {
    apiclient::home::dir()
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

#[cfg(test)]
mod tests;
