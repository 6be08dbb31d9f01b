//! `CreateFileOptions`: kubectl's `CreateOptions` in three steps. `complete` resolves
//! flags, the kubeconfig and the client; `validate` checks combinations with kubectl's
//! messages; `run` reads the inputs through the shared Builder and creates the objects.
//!
//! Client dry run and the server: kubectl needs a reachable server even for
//! `--dry-run=client` (it downloads the OpenAPI schema and discovery to map kinds).
//! With a usable kubeconfig this plugin maps as kubectl does, through the server's
//! discovery (from the disk cache when fresh), so a kind the server does not serve in
//! that version fails with kubectl's "no matches for kind" error; CRDs of the input
//! still map their own instances. Without a usable kubeconfig it is offline: built-in
//! kinds map from k8s-openapi's table, CRDs of the input from their definition, and
//! other kinds fail with the same error while the rest is still printed.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use cli::flags::{DryRunStrategy, PrintFlags};
use cli::printers::Printer;
use cli::{Context, UsageError};
use resources::{Builder, DiscoveryCache, FilenameOptions, RestMapper, Validation};

use crate::args::Args;
use crate::writers::Writers;

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
    pub recorder: Option<cli::flags::ChangeCauseRecorder>,
    pub field_manager: String,
    pub raw: String,
    pub edit: bool,
    pub windows_line_endings: bool,
    pub concurrency: usize,
    /// `--timeout`, resolved (see [`resolve_timeout`]).
    pub timeout: Duration,
    /// `--wait`.
    pub wait: bool,
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
    /// The context's stdout and stderr, taken: everything the command prints.
    pub out: Writers,
}

/// The command: complete → validate → run, for `cli::run`.
pub async fn run(args: Args, mut ctx: Context) -> anyhow::Result<ExitCode> {
    let options = CreateFileOptions::complete(args, &mut ctx).await?;
    options.validate()?;
    options.run().await
}

impl CreateFileOptions {
    /// Resolves flags, kubeconfig and client (from `ctx`, which also carries
    /// `--record`). Sends no request.
    pub async fn complete(mut args: Args, ctx: &mut Context) -> anyhow::Result<Self> {
        // `-k ""` is no kustomization to kubectl (`IsFilenameSliceEmpty`).
        args.kustomize = cli::flags::given_path(&args.kustomize).map(Into::into);
        args.filenames = cli::flags::get_string_slice(std::mem::take(&mut args.filenames));
        if args.filenames.is_empty() && args.kustomize.is_none() {
            // kubectl's wording; it is not flagged as a usage error there either.
            anyhow::bail!("must specify one of -f and -k");
        }
        let validation: Validation = args.validate.parse().map_err(anyhow::Error::msg)?;
        let dry_run = args.dry_run.to_strategy(&mut ctx.stderr)?;
        let printer = args.print.to_printer("created", dry_run)?;

        // With `--validate=false` kubectl create's first look at the kubeconfig is
        // `Namespace()`, in its words; otherwise its validator builds a client first,
        // in run's words (`context "x" does not exist`), as `ctx.config()` has them.
        if validation == Validation::Ignore {
            ctx.flags().confirm_usable()?;
        }
        let (namespace, enforce_namespace, client, cache, config_error) = match ctx.config().await {
            Ok(_) => {
                let (namespace, enforce) = ctx.namespace().await?;
                let cache = ctx.discovery_cache().await?;
                (namespace, enforce, Some(ctx.client().await?), cache, None)
            }
            // Kept for `run`: a client dry run can go on without a server (see the
            // module docs), and usage errors should be reported before this one.
            Err(err) => {
                tracing::debug!(error = %err, "no usable kubeconfig");
                let (namespace, enforce) = ctx.offline_namespace()?;
                (namespace, enforce, None, None, Some(err))
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
            save_config: args.save_config.save_config,
            recorder: ctx.recorder(),
            field_manager: args.field_manager.field_manager,
            raw: args.raw,
            edit: args.edit,
            windows_line_endings: args.windows_line_endings,
            // A negative count is refused by `validate`, as 0 is.
            concurrency: usize::try_from(args.concurrency).unwrap_or(0),
            timeout: resolve_timeout(args.timeout, args.wait),
            wait: args.wait,
            namespace,
            enforce_namespace,
            client,
            config_error,
            cache,
            positional: args.args,
            out: Writers::take(ctx),
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
        if self.wait {
            // A dry run creates nothing: a wait would succeed on nothing, and a
            // pipeline would read that as "ready".
            if self.dry_run != DryRunStrategy::None {
                return usage("--dry-run and --wait are mutually exclusive: a dry run creates nothing to wait for".into());
            }
            if !self.raw.is_empty() {
                return usage("--raw and --wait are mutually exclusive".into());
            }
            if self.edit {
                return usage("--edit and --wait are mutually exclusive".into());
            }
        }
        // kubectl's `Validate` words the --raw checks as plain errors, without the
        // usage hint.
        let plain = |msg: String| Err(anyhow::anyhow!(msg));
        if !self.raw.is_empty() {
            if self.edit {
                return plain("--raw and --edit are mutually exclusive".into());
            }
            if self.filenames.filenames.len() != 1 {
                return plain("--raw can only use a single local file or stdin".into());
            }
            let f = &self.filenames.filenames[0];
            if f.starts_with("http://") || f.starts_with("https://") {
                return plain("--raw cannot read from a url".into());
            }
            if self.filenames.recursive {
                return plain("--raw and --recursive are mutually exclusive".into());
            }
            if !self.selector.is_empty() {
                return plain("--raw and --selector (-l) are mutually exclusive".into());
            }
            if self.print.format().is_some() {
                return plain("--raw and --output are mutually exclusive".into());
            }
            // Only a path: the body must go to the configured server and nowhere else.
            if !self.raw.starts_with('/') {
                return plain(format!(
                    "--raw must be a valid URL path: parse {:?}: invalid URI for request",
                    self.raw
                ));
            }
        }
        Ok(())
    }

    /// Does the work.
    pub async fn run(mut self) -> anyhow::Result<ExitCode> {
        // `--timeout` bounds the whole wait, the CRDs' included.
        let deadline = tokio::time::Instant::now() + self.timeout;
        // Offline only for a client dry run without any configuration; a configuration
        // that fails is reported, as kubectl's dry run builds its client first.
        let offline = self
            .config_error
            .as_ref()
            .is_some_and(cli::Context::unconfigured);
        if self.client.is_none()
            && (self.dry_run != DryRunStrategy::Client || !self.raw.is_empty() || !offline)
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
        let mut builder = self.builder(&self.filenames, &self.selector);
        // kubectl validates against what the server publishes (see resources::openapi),
        // fetched once the input's kinds are known.
        if let Some(client) = &self.client {
            builder =
                builder.server_schema_from(resources::server_schema::on_demand::OnDemand::new(
                    client.clone(),
                    self.cache.as_ref(),
                ));
        }
        let visited = builder.build(&mut mapper).await?;
        let create = self.create_step();
        if self.edit {
            let edit = crate::edit::EditStep {
                create,
                format: crate::edit::EditFormat::from_output(self.print.format()),
                cache: self.cache.as_ref(),
                windows_line_endings: self.windows_line_endings,
                validation: self.validation,
                namespace: &self.namespace,
            };
            return crate::edit::run(&edit, visited, &mut mapper).await;
        }
        if self.wait {
            return crate::wait::create_and_wait(
                &create,
                visited,
                &mut mapper,
                deadline,
                self.timeout,
            )
            .await;
        }
        crate::create::create_all(&create, visited).await
    }

    /// What the create step needs, borrowed from the options.
    fn create_step(&self) -> crate::create::CreateStep<'_> {
        crate::create::CreateStep {
            client: self.client.as_ref(),
            dry_run: self.dry_run,
            field_manager: &self.field_manager,
            validation: self.validation,
            printer: self.printer.as_ref(),
            save_config: self.save_config,
            recorder: self.recorder.as_ref(),
            concurrency: self.concurrency,
            crd_timeout: self.timeout,
            wait: self.wait,
            out: &self.out,
        }
    }

    /// The mapper: the configured server's discovery (the disk cache first), for a
    /// client dry run too, as kubectl maps it, so that a kind the server does not serve
    /// fails there as well; built-in kinds only without a usable kubeconfig.
    pub fn mapper(&self) -> RestMapper {
        match &self.client {
            Some(client) => RestMapper::for_client(client.clone(), self.cache.clone()),
            None => RestMapper::offline(),
        }
    }

    /// kubectl's `-f` chain ([`Builder::files`]) with `.ContinueOnError()
    /// .LabelSelectorParam(..)`.
    pub fn builder(&self, filenames: &FilenameOptions, selector: &str) -> Builder {
        Builder::files(
            self.validation,
            self.namespace.clone(),
            self.enforce_namespace,
            filenames,
        )
        .continue_on_error()
        .label_selector_param(selector)
        // A server dry run creates no CRD: its instances fail to map, as in kubectl.
        .input_crds_map(self.dry_run != DryRunStrategy::Server)
    }

    /// `--raw`: POST the file's bytes to the path and print the answer.
    async fn run_raw(&self) -> anyhow::Result<ExitCode> {
        let client = self.client.as_ref().context("--raw needs a server")?;
        let name = self.filenames.filenames[0].clone();
        // Bounded as `-f` is (kubectl reads --raw's input without a bound); read on
        // the blocking pool, as a pipe may take its time.
        let body = tokio::task::spawn_blocking(move || read_raw(&name)).await??;
        let answer = resources::rest::post_raw(client, &self.raw, body).await?;
        self.out.write_stdout(answer.into_bytes()).await?;
        Ok(ExitCode::SUCCESS)
    }
}

/// `--timeout`'s default: a minute for CRDs to become Established (they take
/// seconds), five minutes under `--wait` (a CI step must end; the causes that cannot
/// fix themselves end it sooner). Zero asks for the default, as `kubectl delete
/// --timeout=0` does.
pub fn resolve_timeout(given: Duration, wait: bool) -> Duration {
    match (given.is_zero(), wait) {
        (false, _) => given,
        (true, false) => Duration::from_secs(60),
        (true, true) => Duration::from_secs(300),
    }
}

/// `--raw`'s input: stdin (`-`) or a file, bounded as `-f` is. Blocking.
fn read_raw(name: &str) -> anyhow::Result<Vec<u8>> {
    if name == "-" {
        return resources::read_local(std::io::stdin().lock()).context("unable to read STDIN");
    }
    // kubectl opens the file, a failure its own (`open x: no such file or directory`),
    // and its HTTP client reads it as the body of the POST, so a read failure (`read
    // dir: is a directory`, and here the size limit) is the request's: Go's url.Error,
    // which CheckErr words as `Unable to connect to the server: …`, without `error: `.
    let path = std::path::Path::new(name);
    let file = std::fs::File::open(path)
        .map_err(|e| anyhow::anyhow!(apiclient::error::go_path_error("open", path, &e)))?;
    resources::read_local(file).map_err(|e| {
        apiclient::go_net::Unreachable(format!(
            "Unable to connect to the server: {}",
            apiclient::error::go_path_error("read", path, &e)
        ))
        .into()
    })
}
