//! [`Context`]: what every plugin's `run` is given by the skeleton — the global flags,
//! the kubeconfig, namespace, discovery cache and client (each resolved once, when first
//! asked for), `--record`'s recorder, which flags were typed, and the output writers.
//!
//! Resolution is lazy on purpose: a client dry run without a usable kubeconfig never
//! loads credentials nor builds a client, so it works offline, as the plugins promise;
//! with one, it maps its kinds through the server's discovery as kubectl does, from
//! the disk cache when fresh (`server_mapping`), and builds a client only on a miss.

use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use apiclient::bound::Bound;
use clap::ArgMatches;
use clap::parser::ValueSource;
use kube::{Client, Config};
use tokio::sync::OnceCell;

use crate::flags::{ChangeCauseRecorder, ConfigFlags, RecordFlags};
use kube::core::GroupVersionKind;
use resources::{DiscoveryCache, Mapping, NoMapping, RestMapper};

/// The run-time context of one plugin invocation.
pub struct Context {
    command: &'static str,
    matches: ArgMatches,
    flags: ConfigFlags,
    record: RecordFlags,
    config: OnceCell<Config>,
    client: OnceCell<(Client, Bound)>,
    request_bound: Option<(Duration, &'static str)>,
    /// Standard output, remembering a closed pipe (`apiclient::output`). Not locked for the whole run: run-pod's attach writes through
    /// tokio's stdout from another thread, and would wait forever on a lock held here.
    pub stdout: Box<dyn Write + Send>,
    /// Standard error.
    pub stderr: Box<dyn Write + Send>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // ConfigFlags's Debug redacts the secrets; the writers have nothing to show.
        f.debug_struct("Context")
            .field("command", &self.command)
            .field("flags", &self.flags)
            .field("request_bound", &self.request_bound)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// The context of `command` (`kubectl run-pod`) from its parsed command line,
    /// writing to the process's stdout and stderr.
    pub fn new(command: &'static str, cmd: &clap::Command, matches: ArgMatches) -> Result<Self> {
        let flags = <ConfigFlags as clap::FromArgMatches>::from_arg_matches(&matches)?;
        let mut record = <RecordFlags as clap::FromArgMatches>::from_arg_matches(&matches)?;
        record.complete(command, cmd, &matches);
        Ok(Self {
            command,
            matches,
            flags,
            record,
            config: OnceCell::new(),
            client: OnceCell::new(),
            request_bound: None,
            stdout: Box::new(apiclient::output::Stdout),
            stderr: Box::new(apiclient::output::Stderr),
        })
    }

    /// The context with kuberc's preferences, as the skeleton read them at start.
    pub fn with_preferences(mut self, preferences: apiclient::kuberc::Preferences) -> Self {
        self.flags.preferences = Some(preferences);
        self
    }

    /// The user-facing command name (`kubectl run-pod`).
    pub fn command(&self) -> &'static str {
        self.command
    }

    /// Whether flag `id` was typed on the command line rather than defaulted:
    /// kubectl's `cmd.Flags().Changed(…)`, for defaults that mean "choose for me".
    pub fn changed(&self, id: &str) -> bool {
        self.matches
            .try_get_raw(id)
            .is_ok_and(|_| self.matches.value_source(id) == Some(ValueSource::CommandLine))
    }

    /// kubectl's global flags.
    pub fn flags(&self) -> &ConfigFlags {
        &self.flags
    }

    /// `--record`'s deprecation notice, when it was given.
    pub fn deprecation(&self) -> Option<&'static str> {
        self.record.deprecation()
    }

    /// `--record`'s change-cause recorder, `None` without `--record`.
    pub fn recorder(&self) -> Option<ChangeCauseRecorder> {
        self.record.to_recorder()
    }

    /// Bounds every request of the client built afterwards (connect, read and write
    /// timeouts) by `bound` (at least a second), for commands whose own `--timeout`
    /// must also hold against a server that stops answering. The read timeout is per
    /// read, so watches stay open.
    /// `flag` names it in the message of a request it cuts.
    pub fn bound_requests(&mut self, bound: Duration, flag: &'static str) {
        self.request_bound = Some((bound.max(Duration::from_secs(1)), flag));
    }

    /// The client configuration from the kubeconfig and the flags, loaded once.
    /// Sends no request (but `--match-server-version`'s one).
    pub async fn config(&self) -> Result<&Config> {
        Ok(self
            .config
            .get_or_try_init(|| self.flags.to_config())
            .await?)
    }

    /// The namespace the command works in and whether `-n` gave it (kubectl's
    /// `enforceNamespace`).
    pub async fn namespace(&self) -> Result<(String, bool)> {
        Ok(self.flags.namespace_of(self.config().await?))
    }

    /// The namespace without building a client configuration, for client dry runs:
    /// `-n`, else the kubeconfig context's, else `default`.
    pub fn offline_namespace(&self) -> Result<(String, bool)> {
        Ok(self.flags.offline_namespace()?)
    }

    /// The server's discovery cache directory (`None` without a home or `--cache-dir`).
    pub async fn discovery_cache(&self) -> Result<Option<DiscoveryCache>> {
        let config = self.config().await?;
        Ok(DiscoveryCache::for_cache_dir(
            crate::flags::given_path(&self.flags.cache_dir),
            &config.cluster_url,
        ))
    }

    /// The REST mapping of `gvk` as the configured server's discovery has it, for a
    /// command that sends nothing else (a client dry run maps its objects as kubectl's
    /// does, so that it fails where the server lacks the kind): from the disk cache
    /// when it is fresh and names the kind — no client is built and nothing is sent —,
    /// else from one discovery request. `Ok(None)` when no kubeconfig is usable (none
    /// found, or one that does not load): the command is offline and maps from the
    /// built-in kinds itself. Any other failure of the configuration is the
    /// command's, as kubectl's `ToRESTMapper` fails with it ([`Self::unconfigured`]).
    /// A kind the server lacks is a [`resources::NoMapping`] error.
    pub async fn server_mapping(&self, gvk: &GroupVersionKind) -> Result<Option<Mapping>> {
        if let Err(err) = self.config().await {
            if !Self::unconfigured(&err) {
                return Err(err);
            }
            tracing::debug!(error = %err, "no kubeconfig: mapping offline");
            return Ok(None);
        }
        let cache = self.discovery_cache().await?;
        if let Some(mapping) = cache.as_ref().and_then(|c| c.mapping(gvk)) {
            return Ok(Some(mapping));
        }
        let mut mapper = RestMapper::for_client(self.client().await?, cache);
        match mapper.mapping(gvk).await {
            Ok(mapping) => Ok(Some(mapping)),
            Err(err @ NoMapping::Discovery(_)) => Err(discovery_failed(&err).into()),
            Err(err) => Err(err.into()),
        }
    }

    /// Whether `err` (from [`Self::config`]) is the one failure after which a client
    /// dry run goes on offline: no kubeconfig, no `--server` and no in-cluster
    /// environment (kubectl would dial its default `localhost:8080`; the plugins
    /// promise to work offline there). Every other failure — a bad flag over a
    /// kubeconfig (impersonation without a user, two credentials, a CA that cannot be
    /// read, a bad `--request-timeout`, `--server` or `--proxy-url`) or a kubeconfig
    /// that does not load — is what kubectl's client dry run reports too, as it builds
    /// its client configuration to map (and validate) the objects.
    pub fn unconfigured(err: &anyhow::Error) -> bool {
        err.chain().any(|e| {
            matches!(
                e.downcast_ref::<apiclient::error::Error>(),
                Some(apiclient::error::Error::NoConfiguration)
            )
        })
    }

    /// Installs the SIGINT/SIGTERM handlers and returns the handle the command checks
    /// between API calls. `hint` is printed if a second signal ends the process at
    /// once. Called where the command starts changing things: before that, Ctrl-C
    /// ends the process as usual.
    pub fn install_interrupt(&self, hint: String) -> super::interrupt::Interrupt {
        super::interrupt::Interrupt::install(hint)
    }

    /// The client, built once: the one place a plugin's client is made (its retries,
    /// warnings and credential layers come from [`ConfigFlags::client`]).
    pub async fn client(&self) -> Result<Client> {
        Ok(self.built().await?.0.clone())
    }

    /// The bound on every request of [`Self::client`] (building the client if it is
    /// not yet): what a watch's server-side timeout stays below
    /// ([`apiclient::bound::Bound::watch_timeout`]).
    pub async fn bound(&self) -> Result<Bound> {
        Ok(self.built().await?.1)
    }

    /// The client and its bound, built once.
    async fn built(&self) -> Result<&(Client, Bound)> {
        self.client
            .get_or_try_init(|| async {
                let mut config = self.config().await?.clone();
                // Every request is bounded (see apiclient::bound): by --request-timeout
                // and a command's own bound (rolling-update's --timeout), the tighter of
                // the two, else the default.
                let bound = apiclient::bound::bound_requests(
                    &mut config,
                    self.flags.request_timeout()?,
                    self.request_bound,
                );
                anyhow::Ok((self.flags.client(config, bound)?, bound))
            })
            .await
    }
}

/// A discovery that failed, as kubectl's mapper meets it: client-go's memory cache
/// logs it (`E… memcache.go:381] "Couldn't get current server API group list"
/// err="…"`, at every verbosity), then `CheckErr` words the error as its
/// `StandardErrorMessage` does (`The connection to the server … was refused …`,
/// `Unable to connect to the server: …`, `error: You must be logged in to the server
/// (…)`), printed as it is.
fn discovery_failed(err: &NoMapping) -> apiclient::go_net::Unreachable {
    let reason = err.to_string();
    resources::log_failed_discovery(&reason);
    let NoMapping::Discovery(source) = err else {
        return apiclient::go_net::Unreachable(format!("error: {reason}"));
    };
    if let Some(message) = apiclient::go_net::standard_message(source.as_ref()) {
        return apiclient::go_net::Unreachable(message);
    }
    let message = match source.as_ref() {
        // The status as client-go's discovery returns it: its reason's words (a 401's
        // body says only `Unauthorized`).
        kube::Error::Api(status) => apiclient::status::check_err(
            &kube::core::Status {
                message: reason,
                ..(**status).clone()
            },
            // client-go's discovery client is a typed one.
            apiclient::status::Decoded::Typed,
        ),
        _ => format!("error: {reason}"),
    };
    apiclient::go_net::Unreachable(message)
}
