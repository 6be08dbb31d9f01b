//! The global flags every plugin shares: kubectl's `ConfigFlags`.
//!
//! kubectl does not forward its own global flags to a plugin (it only passes
//! `KUBECONFIG` through the environment), so each plugin parses `--context`, `-n` and
//! the rest itself, with the same names, defaults and help text as kubectl.
//!
//! What the flags mean for the kubeconfig is [`apiclient::kubeconfig`]'s: here they
//! become its loading rules and overrides, as kubectl's `ConfigFlags` fills
//! client-go's; the client is then built from the `Config` its loader returns.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use kube::config::Kubeconfig;
use kube::{Client, Config};

use apiclient::error::{Error, Result};
use apiclient::kubeconfig;

/// kubectl's global kubeconfig flags (`genericclioptions.ConfigFlags`).
#[derive(clap::Args, Clone, Default)]
#[command(next_help_heading = "Global options")]
pub struct ConfigFlags {
    /// Path to the kubeconfig file to use for CLI requests.
    #[arg(verbatim_doc_comment, long, global = true, value_name = "PATH", value_parser = super::go_path())]
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
    #[arg(long, global = true, value_name = "PATH", value_parser = super::go_path())]
    pub certificate_authority: Option<PathBuf>,

    /// Path to a client certificate file for TLS
    #[arg(long, global = true, value_name = "PATH", value_parser = super::go_path())]
    pub client_certificate: Option<PathBuf>,

    /// Path to a client key file for TLS
    #[arg(long, global = true, value_name = "PATH", value_parser = super::go_path())]
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
        default_value = "0",
        value_parser = parse_request_timeout,
    )]
    pub request_timeout: kubeconfig::Timeout,

    /// Default cache directory
    #[arg(long, global = true, value_name = "PATH", value_parser = super::go_path())]
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
        default_value_t = 0,
        allow_negative_numbers = true,
        value_parser = super::klog_level
    )]
    pub verbosity: i32,

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

    // Go runtime profiles (pprof) of kubectl itself: the name is checked after parsing,
    // where kubectl's `initProfiling` checks it (`ConfigFlags::profile_refusal`), and any
    // but `none` is refused before the command runs: the plugins are not Go programs.
    // `None`: flags built in code (`Default`), not parsed.
    /// Name of profile to capture. One of (none|cpu|heap|goroutine|threadcreate|block|mutex|trace)
    #[arg(long, global = true, value_name = "PROFILE", default_value = "none")]
    pub profile: Option<String>,

    // Never written: see `--profile`, whose `none` leaves nothing to write.
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

impl ConfigFlags {
    /// `--profile` other than `none`: kubectl writes a Go runtime profile of itself
    /// (pprof) to `--profile-output`; a plugin has no Go runtime to profile and says
    /// so rather than ignore the flag. A name kubectl does not know gets kubectl's
    /// words, after parsing as its `initProfiling` says them (`""` too: pflag takes an
    /// empty string as given). `command` is the plugin's name (`kubectl run-pod`).
    pub fn profile_refusal(&self, command: &str) -> Option<String> {
        let profile = self.profile.as_deref()?;
        match profile {
            "none" => None,
            // `initProfiling`'s own cases, then what Go's `pprof.Lookup` finds.
            "cpu" | "trace" | "block" | "mutex" | "goroutine" | "threadcreate" | "heap"
            | "allocs" => Some(format!(
                "--profile={profile}: {command} is not a Go program and writes no Go runtime profile; profile it with a native profiler such as perf"
            )),
            unknown => Some(format!("unknown profile '{unknown}'")),
        }
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

/// `--request-timeout`, parsed once, as clap reads the command line: client-go's
/// `ParseTimeout`, a whole number of seconds that is not negative, else a Go duration
/// (a negative one too); zero or negative is "no timeout" (as Go's HTTP client reads
/// its `Timeout`). A value in neither form never fails here: it is
/// [`kubeconfig::Timeout::Invalid`], reported where client-go's `ClientConfig`
/// reports it, after the kubeconfig's own problems.
pub fn parse_request_timeout(
    value: &str,
) -> std::result::Result<kubeconfig::Timeout, std::convert::Infallible> {
    // Empty is "not given" to client-go.
    if value.is_empty() {
        return Ok(kubeconfig::Timeout::None);
    }
    let given = |d: Duration| {
        if d.is_zero() {
            kubeconfig::Timeout::None
        } else {
            kubeconfig::Timeout::After(d)
        }
    };
    if let Ok(seconds) = super::parse_go_int(value, 10, 64)
        && let Ok(seconds) = u64::try_from(seconds)
    {
        return Ok(given(Duration::from_secs(seconds)));
    }
    Ok(match super::parse_go_duration_signed(value) {
        Ok((false, d)) => given(d),
        Ok((true, _)) => kubeconfig::Timeout::None,
        Err(_) => kubeconfig::Timeout::Invalid,
    })
}

impl ConfigFlags {
    /// The request timeout as a [`Duration`]; `None` means "no timeout" (`0`).
    pub fn request_timeout(&self) -> Result<Option<Duration>> {
        self.request_timeout.bound()
    }

    /// kubectl's `ToRawKubeConfigLoader`: the loading rules (`--kubeconfig`, else
    /// `KUBECONFIG`, else `~/.kube/config`) and the flags as client-go's overrides.
    pub fn to_raw_kubeconfig_loader(&self) -> kubeconfig::Loader {
        kubeconfig::Loader {
            rules: kubeconfig::LoadingRules::from_process(
                super::given_path(&self.kubeconfig).map(Into::into),
            ),
            overrides: self.overrides(),
        }
    }

    /// The flags over the kubeconfig, as kubectl's `ConfigFlags` fills client-go's
    /// `ConfigOverrides`.
    fn overrides(&self) -> kubeconfig::Overrides {
        // client-go's: `KEY=VALUE`, values of one key gathered in order; an entry
        // without `=` is dropped without a word.
        let mut extras = HashMap::<String, Vec<String>>::new();
        for extra in &self.impersonate_user_extra {
            if let Some((key, value)) = extra.split_once('=') {
                extras.entry(key.into()).or_default().push(value.into());
            }
        }
        kubeconfig::Overrides {
            context: self.context.clone(),
            cluster: self.cluster.clone(),
            user: self.user.clone(),
            namespace: self.namespace.clone(),
            server: self.server.clone(),
            token: self.token.clone(),
            username: self.username.clone(),
            password: self.password.clone(),
            impersonate: self.impersonate.clone(),
            impersonate_uid: self.impersonate_uid.clone(),
            impersonate_groups: self.impersonate_group.clone(),
            impersonate_user_extra: extras,
            certificate_authority: super::given_path(&self.certificate_authority).map(Into::into),
            client_certificate: super::given_path(&self.client_certificate).map(Into::into),
            client_key: super::given_path(&self.client_key).map(Into::into),
            insecure_skip_tls_verify: self.insecure_skip_tls_verify,
            tls_server_name: self.tls_server_name.clone(),
            proxy_url: self.proxy_url.clone(),
            timeout: self.request_timeout,
        }
    }

    /// The merged kubeconfig and where it came from ([`kubeconfig::LoadingRules`]).
    pub fn load_kubeconfig(&self) -> Result<(Option<Kubeconfig>, kubeconfig::Source)> {
        self.to_raw_kubeconfig_loader().load()
    }

    /// client-go's `Namespace()` as `kubectl create -f --validate=false` calls it
    /// before anything else: `ConfirmUsable`'s checks without `-n`
    /// ([`kubeconfig::Loader::confirm_usable`]).
    pub fn confirm_usable(&self) -> Result<()> {
        self.to_raw_kubeconfig_loader().confirm_usable()
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
    /// which send nothing): `-n`, else the kubeconfig context's, else `default`; with
    /// whether `-n` gave it ([`kubeconfig::Loader::namespace`]).
    pub fn offline_namespace(&self) -> Result<(String, bool)> {
        self.to_raw_kubeconfig_loader().namespace()
    }

    /// Builds the client configuration ([`kubeconfig::Loader::config`], kuberc's
    /// credential plugin policy for an exec user), then `--match-server-version`'s
    /// one `/version` request.
    pub async fn to_config(&self) -> Result<Config> {
        let config = self
            .to_raw_kubeconfig_loader()
            .config(|| self.plugin_policy())
            .await?;
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

/// `--match-server-version`: kubectl's `discovery.MatchesServerVersion`, one request
/// to `/version`, comparing git version, commit and tree state. The plugins report
/// the kubectl they follow ([`client_version`]), so the check passes where kubectl
/// 1.37.2 built from its Go module would pass, and fails in its words elsewhere.
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

/// The kubectl release the plugins follow, whose version they report.
pub const KUBECTL_RELEASE: (&str, &str, &str) = ("1", "37", "v1.37.2");

/// The client `version.Info` the plugins report: kubectl 1.37.2's as kubectl built
/// from its published Go module reports it (`go install`, and the project's
/// `cargo xtask testenv`): component-base's defaults for what `hack/lib/version.sh`
/// sets only from a git checkout (`$Format:%H$`, no tree state, the 1970 build date).
/// A server of the same release built the same way matches; an official release
/// build (its commit, `clean`) does not, as that kubectl does not match it either.
/// The compiler and platform are this build's, in Go's names.
fn client_version() -> k8s_openapi::apimachinery::pkg::version::Info {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    let (major, minor, git_version) = KUBECTL_RELEASE;
    k8s_openapi::apimachinery::pkg::version::Info {
        major: major.into(),
        minor: minor.into(),
        git_version: git_version.into(),
        git_commit: "$Format:%H$".into(),
        build_date: "1970-01-01T00:00:00Z".into(),
        compiler: "rustc".into(),
        platform: format!("{}/{arch}", std::env::consts::OS),
        ..Default::default()
    }
}

/// Go's `%#v` of apimachinery 1.37's `version.Info`, every field in its order (its
/// strings are ASCII, where Rust's `{:?}` quotes as Go's `%q` does).
fn go_version_info(info: &k8s_openapi::apimachinery::pkg::version::Info) -> String {
    let opt = |s: &Option<String>| s.clone().unwrap_or_default();
    format!(
        "version.Info{{Major:{:?}, Minor:{:?}, EmulationMajor:{:?}, EmulationMinor:{:?}, MinCompatibilityMajor:{:?}, MinCompatibilityMinor:{:?}, GitVersion:{:?}, GitCommit:{:?}, GitTreeState:{:?}, BuildDate:{:?}, GoVersion:{:?}, Compiler:{:?}, Platform:{:?}}}",
        info.major,
        info.minor,
        opt(&info.emulation_major),
        opt(&info.emulation_minor),
        opt(&info.min_compatibility_major),
        opt(&info.min_compatibility_minor),
        info.git_version,
        info.git_commit,
        info.git_tree_state,
        info.build_date,
        info.go_version,
        info.compiler,
        info.platform
    )
}

#[cfg(test)]
mod tests;
