//! `CreateFileOptions`: kubectl's `CreateOptions` in three steps. `complete` resolves
//! flags, the kubeconfig and the client; `validate` checks combinations with kubectl's
//! messages; `run` reads the inputs through the shared Builder and creates the objects.
//!
//! Client dry run and the server: kubectl needs a reachable server even for
//! `--dry-run=client` (it downloads the OpenAPI schema and discovery to map kinds).
//! This plugin does not: with `--dry-run=client` built-in kinds are mapped from
//! k8s-openapi's table and CRDs of the input from their own definition, so no request
//! is sent for them; discovery (from the disk cache if fresh) is used only for other
//! kinds, and without any kubeconfig those fail with kubectl's "no matches for kind"
//! error while the rest is still printed.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use shared::cli::UsageError;
use shared::flags::{DryRunStrategy, PrintFlags};
use shared::printers::Printer;
use shared::resource::{Builder, DiscoveryCache, FilenameOptions, RestMapper, Validation};

use crate::args::Args;

/// Everything `run` needs, resolved.
pub struct CreateFileOptions {
    pub filenames: FilenameOptions,
    pub selector: String,
    pub validation: Validation,
    pub dry_run: DryRunStrategy,
    pub print: PrintFlags,
    pub printer: Box<dyn Printer>,
    pub save_config: bool,
    /// `--record`: the change-cause annotation for every created object.
    pub recorder: Option<shared::flags::ChangeCauseRecorder>,
    pub field_manager: String,
    pub raw: String,
    pub edit: bool,
    pub windows_line_endings: bool,
    pub concurrency: usize,
    pub crd_timeout: Duration,
    /// The namespace from `-n` or the context, and whether `-n` gave it.
    pub namespace: String,
    pub enforce_namespace: bool,
    /// `None` when the kubeconfig is unusable: fine for a client dry run, otherwise
    /// `config_error` is reported when `run` needs the server.
    pub client: Option<kube::Client>,
    pub config_error: Option<anyhow::Error>,
    pub cache: Option<DiscoveryCache>,
    /// Positional arguments (an error: `create -f` takes none).
    pub positional: Vec<String>,
}

impl CreateFileOptions {
    /// Resolves flags, kubeconfig and client. Sends no request.
    pub async fn complete(args: Args) -> anyhow::Result<Self> {
        if args.filenames.is_empty() && args.kustomize.is_none() {
            // kubectl's wording; it is not flagged as a usage error there either.
            anyhow::bail!("must specify one of -f and -k");
        }
        let validation: Validation = args.validate.parse().map_err(anyhow::Error::msg)?;
        let dry_run = args.dry_run.to_strategy(&mut std::io::stderr())?;
        let printer = args.print.to_printer("created", dry_run)?;
        let crd_timeout =
            shared::flags::parse_go_duration(&args.timeout, false).map_err(|reason| {
                anyhow::anyhow!(
                    "invalid argument {:?} for \"--timeout\" flag: {reason}",
                    args.timeout
                )
            })?;

        let (namespace, enforce_namespace, client, cache, config_error) =
            match args.config.to_config().await {
                Ok(mut config) => {
                    shared::rest::bound_requests(&mut config, args.config.request_timeout()?);
                    let (namespace, enforce) = args.config.namespace_of(&config);
                    let cache = args.config.discovery_cache(&config);
                    let client = args.config.client(config)?;
                    (namespace, enforce, Some(client), cache, None)
                }
                // Kept for `run`: a client dry run can go on without a server (see the
                // module docs), and usage errors should be reported before this one.
                Err(err) => {
                    tracing::debug!(error = %err, "no usable kubeconfig");
                    let flag = args.config.namespace.clone().filter(|n| !n.is_empty());
                    let enforce = flag.is_some();
                    (
                        flag.unwrap_or_else(|| "default".into()),
                        enforce,
                        None,
                        None,
                        Some(err.into()),
                    )
                }
            };

        Ok(Self {
            filenames: FilenameOptions {
                filenames: args.filenames,
                recursive: args.recursive,
                kustomize: args.kustomize,
            },
            selector: args.selector,
            validation,
            dry_run,
            print: args.print,
            printer,
            save_config: args.save_config,
            recorder: args.record.to_recorder(),
            field_manager: args.field_manager,
            raw: args.raw,
            edit: args.edit,
            windows_line_endings: args.windows_line_endings,
            concurrency: args.concurrency,
            crd_timeout,
            namespace,
            enforce_namespace,
            client,
            config_error,
            cache,
            positional: args.args,
        })
    }

    /// kubectl's `ValidateArgs`, with its messages (usage errors get the `-h` hint).
    pub fn validate(&self) -> anyhow::Result<()> {
        let usage = |msg: String| Err(UsageError::new(msg).into());
        if !self.positional.is_empty() {
            return usage(format!("Unexpected args: [{}]", self.positional.join(" ")));
        }
        if self.concurrency == 0 {
            return usage("--concurrency must be at least 1".into());
        }
        self.filenames.validate()?;
        if !self.raw.is_empty() {
            if self.edit {
                return usage("--raw and --edit are mutually exclusive".into());
            }
            if self.filenames.filenames.len() != 1 {
                return usage("--raw can only use a single local file or stdin".into());
            }
            let f = &self.filenames.filenames[0];
            if f.starts_with("http://") || f.starts_with("https://") {
                return usage("--raw cannot read from a url".into());
            }
            if self.filenames.recursive {
                return usage("--raw and --recursive are mutually exclusive".into());
            }
            if !self.selector.is_empty() {
                return usage("--raw and --selector (-l) are mutually exclusive".into());
            }
            if self.print.format().is_some() {
                return usage("--raw and --output are mutually exclusive".into());
            }
            // Only a path: the body must go to the configured server and nowhere else.
            if !self.raw.starts_with('/') {
                return usage(format!(
                    "--raw must be a valid URL path: parse {:?}: invalid URI for request",
                    self.raw
                ));
            }
        }
        Ok(())
    }

    /// Does the work.
    pub async fn run(mut self) -> anyhow::Result<ExitCode> {
        if self.client.is_none() && (self.dry_run != DryRunStrategy::Client || !self.raw.is_empty())
        {
            return Err(self
                .config_error
                .take()
                .unwrap_or_else(|| anyhow::anyhow!("no server configured")));
        }
        if !self.raw.is_empty() {
            return self.run_raw().await;
        }
        let mut mapper = self.mapper();
        let visited = self
            .builder(&self.filenames, &self.selector)
            .build(&mut mapper)
            .await?;
        if self.edit {
            return crate::edit::run(&self, visited, &mut mapper).await;
        }
        crate::create::create_all(&self, visited).await
    }

    /// The mapper: discovery through the client (built-in kinds first for a client dry
    /// run), or offline.
    pub fn mapper(&self) -> RestMapper {
        match &self.client {
            Some(client) => RestMapper::for_client(client.clone(), self.cache.clone())
                .prefer_builtins(self.dry_run == DryRunStrategy::Client),
            None => RestMapper::offline(),
        }
    }

    /// kubectl's `f.NewBuilder().Unstructured().Schema(..).ContinueOnError()
    /// .NamespaceParam(ns).DefaultNamespace().FilenameParam(..).LabelSelectorParam(..)
    /// .Flatten()`.
    pub fn builder(&self, filenames: &FilenameOptions, selector: &str) -> Builder {
        Builder::new()
            .schema(self.validation)
            .continue_on_error()
            .namespace_param(self.namespace.clone())
            .default_namespace()
            .filename_param(self.enforce_namespace, filenames)
            .label_selector_param(selector)
            .flatten()
    }

    /// `--raw`: POST the file's bytes to the path and print the answer.
    async fn run_raw(&self) -> anyhow::Result<ExitCode> {
        let client = self.client.as_ref().context("--raw needs a server")?;
        let name = &self.filenames.filenames[0];
        // Bounded as `-f` is (kubectl reads --raw's input without a bound).
        let body = if name == "-" {
            shared::resource::read_local(std::io::stdin().lock()).context("unable to read STDIN")?
        } else {
            std::fs::File::open(name)
                .and_then(shared::resource::read_local)
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => {
                        anyhow::anyhow!("the path {name:?} does not exist")
                    }
                    _ => anyhow::Error::new(e).context(format!("unable to read {name:?}")),
                })?
        };
        let answer = shared::rest::post_raw(client, &self.raw, body).await?;
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        out.write_all(answer.as_bytes())?;
        out.flush()?;
        Ok(ExitCode::SUCCESS)
    }
}
