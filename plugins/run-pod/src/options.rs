//! `RunPodOptions`: kubectl run's `RunOptions` in three steps.
//!
//! - [`RunPodOptions::complete`] turns raw flags into typed values (restart and pull
//!   policies, timeout, dry-run strategy, printer format, attach default) and resolves
//!   what the command needs of the context ([`Cluster`]: the namespace, the client),
//!   in the order of kubectl's `Complete`, which builds its client there: a kubeconfig
//!   that does not load fails before the printer, `--cascade` and every check of
//!   `validate`. Nothing is sent;
//! - [`RunPodOptions::validate`] checks the rest, in kubectl's order and with kubectl's
//!   messages, before anything is sent;
//! - [`RunPodOptions::run`] generates, creates (or only prints, for a client dry run)
//!   and, when attached, hands over to [`crate::attach`].
//!
//! A client dry run maps its objects through the configured server's discovery, as
//! kubectl's does, from the disk cache when it is fresh (then no client is built and
//! nothing is sent); without a usable kubeconfig it is offline and needs only the
//! namespace, from `-n` (or `default`). `--schedule` falls back from `batch/v1` to a
//! `batch/v1beta1` CronJob where discovery lacks the first; offline it prints `batch/v1`.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use kube::api::PropagationPolicy;
use serde_json::Value;

use cli::flags::{ChangeCauseRecorder, DryRunStrategy, PrintFlags};
use cli::{Context, UsageError};
use kube::core::GroupVersionKind;
use resources::NoMapping;
use resources::generate::{
    self, OverrideType, RunGenerator, RunParams, ServiceGenerator, ServiceParams,
};

use crate::args::{Args, Explicit};
use crate::create::{self, Created};

/// How the generator was chosen: an explicit `--generator` is used as is, an implicit
/// choice (`--schedule` → cron job) may fall back to what the server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeneratorChoice {
    /// `--generator NAME`.
    Explicit(RunGenerator),
    /// Derived from the other flags.
    Implicit(RunGenerator),
}

impl GeneratorChoice {
    /// The generator, whichever way it was chosen.
    pub fn generator(self) -> RunGenerator {
        match self {
            Self::Explicit(g) | Self::Implicit(g) => g,
        }
    }
}

/// Everything `kubectl run-pod` needs, parsed.
#[derive(Debug)]
pub struct RunPodOptions {
    /// `NAME`, `None` when missing (a usage error in [`Self::validate`]).
    pub name: Option<String>,
    /// `--image` as given; `None` when the flag is absent.
    pub image: Option<String>,
    /// Generator parameters (name, image, labels, env, …).
    pub params: RunParams,
    /// `--generator`, raw, checked in [`Self::validate`].
    pub generator_name: Option<String>,
    /// `--replicas` given explicitly.
    pub replicas_explicit: bool,
    /// `--expose`.
    pub expose: bool,
    /// `--service-generator`, raw.
    pub service_generator_name: String,
    /// `--attach`, or `-i` without an explicit `--attach=false`.
    pub attach: bool,
    /// `--rm`.
    pub remove: bool,
    /// `-q`.
    pub quiet: bool,
    /// `--detach-keys`, as typed.
    pub detach_keys: String,
    /// Whether `--restart` was typed.
    pub restart_explicit: bool,
    /// The pod's restart policy: `--restart`, or its default (`OnFailure` with `-i`,
    /// else `Always`).
    pub restart_policy: String,
    /// The parsed `--dry-run`.
    pub dry_run: DryRunStrategy,
    /// `--overrides`, `--override-type`, `--service-overrides`.
    pub overrides: String,
    pub override_type: String,
    pub service_overrides: String,
    /// `--field-manager`.
    pub field_manager: String,
    /// `--save-config`.
    pub save_config: bool,
    /// `--pod-running-timeout`.
    pub pod_running_timeout: Duration,
    /// `-o` and friends.
    pub print: PrintFlags,
    /// `--cascade`: how `--rm` deletes. `--force` and `--grace-period` are accepted
    /// and, as in kubectl 1.32's run, change nothing (see `attach::Deletion`).
    pub cascade: PropagationPolicy,
    /// `--record`: the change-cause annotation for every created object.
    pub recorder: Option<ChangeCauseRecorder>,
    /// What the requests need, resolved from the context.
    pub cluster: Cluster,
}

/// What [`RunPodOptions::complete`] resolved from the context, as kubectl's `Complete`
/// does (`f.DynamicClient()`, then the namespace): only configuration, nothing is sent.
pub enum Cluster {
    /// A client dry run: the namespace (`-n`, the context's, else `default`) and
    /// whether `-n` gave it. Its kinds are mapped through the context's discovery in
    /// `run`, and no client is built unless the cache lacks one.
    DryRun { namespace: String, enforce: bool },
    /// The client, the namespace, and the server-side timeout of each watch, below the
    /// client's bound ([`apiclient::bound::Bound::watch_timeout`]).
    Online {
        client: kube::Client,
        namespace: String,
        watch_timeout: u32,
    },
    /// No kubeconfig, no `--server` and no in-cluster configuration: kubectl would
    /// dial `localhost:8080` at its first request, after every flag was checked, so
    /// the error waits for `run`.
    Unconfigured(anyhow::Error),
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::DryRun { namespace, enforce } => f
                .debug_struct("DryRun")
                .field("namespace", namespace)
                .field("enforce", enforce)
                .finish(),
            Self::Online { namespace, .. } => f
                .debug_struct("Online")
                .field("namespace", namespace)
                .finish_non_exhaustive(),
            Self::Unconfigured(e) => f.debug_tuple("Unconfigured").field(e).finish(),
        }
    }
}

impl Cluster {
    /// Resolves what a run with `dry_run` needs of `ctx`; a configuration that fails
    /// fails here, but the absence of any ([`Cluster::Unconfigured`]).
    async fn resolve(ctx: &Context, dry_run: DryRunStrategy) -> Result<Self> {
        if dry_run == DryRunStrategy::Client {
            let (namespace, enforce) = ctx.offline_namespace()?;
            // Loaded now for its errors (a kubeconfig that does not load, a bad flag
            // over one); without any, the dry run is offline.
            if let Err(e) = ctx.config().await
                && !Context::unconfigured(&e)
            {
                return Err(e);
            }
            return Ok(Self::DryRun { namespace, enforce });
        }
        let resolved = async {
            let (namespace, _enforce) = ctx.namespace().await?;
            let client = ctx.client().await?;
            let watch_timeout = ctx.bound().await?.watch_timeout();
            anyhow::Ok(Self::Online {
                client,
                namespace,
                watch_timeout,
            })
        };
        match resolved.await {
            Err(e) if Context::unconfigured(&e) => Ok(Self::Unconfigured(e)),
            other => other,
        }
    }
}

/// The command: complete → validate → run, for `cli::run`.
pub async fn run(args: Args, mut ctx: Context) -> Result<ExitCode> {
    let mut options = RunPodOptions::complete(args, &mut ctx).await?;
    let validated = options.validate()?;
    options.run(validated, &mut ctx).await
}

/// The result of [`RunPodOptions::validate`]: values that only exist once the flags
/// are known to be valid.
#[derive(Debug, Clone)]
pub struct Validated {
    /// The chosen generator.
    pub generator: GeneratorChoice,
    /// The service generator (`--expose` only).
    pub service_generator: ServiceGenerator,
    /// The pod's effective restart policy (for the attach exit-code logic).
    pub restart_policy: String,
    /// `--override-type`.
    pub override_type: OverrideType,
    /// `--pod-running-timeout`.
    pub pod_running_timeout: Duration,
}

impl RunPodOptions {
    /// Completes the options from the flags (`ctx` tells which were typed, and
    /// carries `--record`) and the context, in the order of kubectl's `Complete`: the
    /// restart and pull policies, `--pod-running-timeout`, `--dry-run` (deprecated
    /// spellings warn on `ctx`'s stderr), the client configuration and namespace
    /// ([`Cluster`]), `-o`, `--cascade`.
    pub async fn complete(args: Args, ctx: &mut Context) -> Result<Self> {
        let explicit = Explicit::from_changed(|id| ctx.changed(id));
        if args.image.is_none() {
            // cobra's required-flag check runs before anything else.
            anyhow::bail!("required flag(s) \"image\" not set");
        }
        let restart_policy = restart_policy(&args.restart, args.stdin)?;
        match args.image_pull_policy.as_str() {
            "" | "Always" | "IfNotPresent" | "Never" => {}
            other => anyhow::bail!(
                "invalid image pull policy: {other}, valid values are: Always, IfNotPresent, Never"
            ),
        }
        // kubectl 1.37 words this check as a plain error, without 1.32's usage hint.
        if args.pod_running_timeout.is_zero() {
            anyhow::bail!("--pod-running-timeout must be higher than zero");
        }
        let dry_run = args.dry_run.to_strategy(&mut ctx.stderr)?;
        let cluster = Cluster::resolve(ctx, dry_run).await?;
        // Build the printer once to reject an unknown -o before anything is sent.
        args.print.to_printer("created", dry_run)?;
        let cascade = parse_cascade(&args.cascade, &mut ctx.stderr)?;
        let attach = if explicit.attach {
            args.attach
        } else {
            args.attach || args.stdin
        };
        // kubectl 1.37 reads the first word after a `--` that comes before any NAME as
        // the NAME (its check of `ArgsLenAtDash` never sees that `--`: `run
        // --image=busybox -- echo` runs a pod named `echo`).
        let mut dash_args = args.dash_args.into_iter();
        let name = args.name.or_else(|| dash_args.next());
        let mut container_args = args.args;
        container_args.extend(dash_args);
        let params = RunParams {
            name: name.clone().unwrap_or_default(),
            image: args.image.clone().unwrap_or_default(),
            labels: args.labels,
            annotations: cli::flags::get_string_array(args.annotations),
            env: cli::flags::get_string_array(args.env),
            port: args.port,
            host_port: args.hostport,
            image_pull_policy: args.image_pull_policy,
            requests: args.requests,
            limits: args.limits,
            service_account: args.serviceaccount,
            privileged: args.privileged,
            stdin: args.stdin,
            leave_stdin_open: args.leave_stdin_open,
            tty: args.tty,
            restart: String::new(),
            command: args.command,
            args: container_args,
            replicas: args.replicas,
            schedule: args.schedule,
        };
        Ok(Self {
            name,
            image: args.image,
            params,
            generator_name: args.generator.filter(|g| !g.is_empty()),
            replicas_explicit: explicit.replicas,
            expose: args.expose,
            service_generator_name: args.service_generator,
            attach,
            remove: args.rm,
            quiet: args.quiet,
            detach_keys: args.detach_keys,
            restart_explicit: explicit.restart,
            restart_policy,
            dry_run,
            overrides: args.overrides,
            override_type: args.override_type,
            service_overrides: args.service_overrides,
            field_manager: args.field_manager.field_manager,
            save_config: args.save_config.save_config,
            pod_running_timeout: args.pod_running_timeout,
            print: args.print,
            cascade,
            recorder: ctx.recorder(),
            cluster,
        })
    }

    /// Checks the flags in the order kubectl's `Run` does, so that the first mistake
    /// reported is the same one, with the same words. Usage errors (those kubectl
    /// follows with "See … -h") are [`UsageError`]s.
    pub fn validate(&mut self) -> Result<Validated> {
        self.validate_flags()?;
        let restart_policy = self.restart_policy.clone();
        let (generator, service_generator) = self.choose_generators()?;
        let p = &self.params;
        if matches!(
            generator.generator(),
            RunGenerator::CronJobV1 | RunGenerator::CronJobV1Beta1 | RunGenerator::CronJobV2Alpha1
        ) && p.schedule.is_empty()
        {
            anyhow::bail!("Parameter: schedule is required");
        }
        // kubectl's `Overrider` reads --override-type only to apply --overrides, and
        // takes an empty one as its default (merge).
        let override_type = match self.override_type.as_str() {
            _ if self.overrides.is_empty() => OverrideType::default(),
            "" => OverrideType::default(),
            given => given.parse()?,
        };
        // The pod gets the flag's value, as in kubectl; the legacy workloads keep their
        // own defaults unless --restart was typed.
        self.params.restart =
            if generator.generator() == RunGenerator::RunPodV1 || self.restart_explicit {
                restart_policy.clone()
            } else {
                String::new()
            };
        Ok(Validated {
            generator,
            service_generator,
            restart_policy,
            override_type,
            pod_running_timeout: self.pod_running_timeout,
        })
    }

    /// The checks of single flags and their pairs, in the order of kubectl's
    /// `Validate` (those of its `Complete` ran in [`Self::complete`]).
    fn validate_flags(&self) -> Result<()> {
        let usage = |msg: String| anyhow::Error::new(UsageError::new(msg));
        let image = self.image.as_deref().unwrap_or_default();
        if self.name.as_deref().is_none_or(str::is_empty) {
            // kubectl 1.37 words its run checks as plain errors, without the usage hint
            // 1.32 added (the newer wording wins where the two differ).
            anyhow::bail!("NAME is required for run");
        }
        // kubectl 1.37 words these checks (--rm without attach, --attach with
        // --dry-run) as plain errors, without 1.32's usage hint.
        if image.is_empty() {
            anyhow::bail!("--image is required");
        }
        if !generate::is_valid_image_reference(image) {
            anyhow::bail!("invalid image name {image:?}: invalid reference format");
        }
        let p = &self.params;
        if p.tty && !p.stdin {
            anyhow::bail!("-i/--stdin is required for containers with -t/--tty=true");
        }
        if p.stdin && p.replicas != 1 {
            return Err(usage(format!(
                "-i/--stdin requires that replicas is 1, found {}",
                p.replicas
            )));
        }
        if self.expose && p.port.is_empty() {
            anyhow::bail!("--port must be set when exposing a service");
        }
        // Go's strconv.Atoi: an optional sign and decimal digits, 64-bit.
        if !p.port.is_empty() && p.port.parse::<i64>().is_err() {
            anyhow::bail!("--port must be a number");
        }
        let restart_policy = &self.restart_policy;
        if restart_policy != "Always" && p.replicas != 1 {
            return Err(usage(format!(
                "--restart={restart_policy} requires that --replicas=1, found {}",
                p.replicas
            )));
        }
        if self.remove && !self.attach {
            anyhow::bail!("--rm should only be used for attached containers");
        }
        if self.attach && self.dry_run != DryRunStrategy::None {
            anyhow::bail!(
                "--dry-run=[server|client] can't be used with attached containers options (--attach, --stdin, or --tty)"
            );
        }
        Ok(())
    }

    /// The workload generator (`--generator`, or the one the flags imply) and, with
    /// `--expose`, the service generator.
    fn choose_generators(&self) -> Result<(GeneratorChoice, ServiceGenerator)> {
        let usage = |msg: String| anyhow::Error::new(UsageError::new(msg));
        let p = &self.params;
        let generator = match &self.generator_name {
            Some(name) => GeneratorChoice::Explicit(
                name.parse()
                    .map_err(|e: generate::Error| usage(e.to_string()))?,
            ),
            None if !p.schedule.is_empty() => GeneratorChoice::Implicit(RunGenerator::CronJobV1),
            None if self.replicas_explicit => {
                GeneratorChoice::Implicit(RunGenerator::DeploymentAppsV1)
            }
            None => GeneratorChoice::Implicit(RunGenerator::RunPodV1),
        };
        let service_generator = if self.expose {
            if self.service_generator_name.is_empty() {
                return Err(usage("No service generator specified".into()));
            }
            self.service_generator_name
                .parse()
                .map_err(|e: generate::Error| usage(e.to_string()))?
        } else {
            ServiceGenerator::default()
        };
        Ok((generator, service_generator))
    }

    /// The run object and, with `--expose`, the service, as they will be sent: generated,
    /// overridden, and (for a client dry run with `-n`) given the namespace.
    pub fn build_objects(
        &self,
        v: &Validated,
        generator: RunGenerator,
        namespace: Option<&str>,
    ) -> Result<(Value, Option<Value>)> {
        let mut obj = generator.generate(&self.params)?;
        obj = generate::apply_overrides(obj, &self.overrides, v.override_type)?;
        let mut service = None;
        if self.expose {
            let mut svc = v
                .service_generator
                .generate(&ServiceParams::for_run(&self.params))?;
            // kubectl applies --service-overrides as a merge patch.
            svc = generate::apply_overrides(svc, &self.service_overrides, OverrideType::Merge)?;
            service = Some(svc);
        }
        // As kubectl: recorded after the overrides, so they cannot drop it.
        if let Some(recorder) = &self.recorder {
            for o in std::iter::once(&mut obj).chain(service.as_mut()) {
                recorder.record(o);
            }
        }
        if let Some(ns) = namespace {
            for o in std::iter::once(&mut obj).chain(service.as_mut()) {
                if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.insert("namespace".into(), Value::from(ns));
                }
            }
        }
        Ok((obj, service))
    }

    /// Runs the command with what [`Self::complete`] resolved: the whole of it for a
    /// client dry run, where a configured server is asked only for what its discovery
    /// cache lacks, and without a kubeconfig nothing at all.
    pub async fn run(mut self, v: Validated, ctx: &mut Context) -> Result<ExitCode> {
        // Taken by value (the client, the deferred error); nothing reads it after.
        let taken = Cluster::Unconfigured(anyhow::anyhow!("resolved once, taken by run"));
        match std::mem::replace(&mut self.cluster, taken) {
            Cluster::DryRun { namespace, enforce } => {
                self.run_dry_run(&v, ctx, &namespace, enforce).await
            }
            Cluster::Online {
                client,
                namespace,
                watch_timeout,
            } => {
                self.run_online(v, ctx, client, namespace, watch_timeout)
                    .await
            }
            // As kubectl's first request would fail, after every flag was checked.
            Cluster::Unconfigured(e) => Err(e),
        }
    }

    /// A client dry run: the objects printed as they would be sent, each mapped
    /// through the server's discovery as kubectl maps it.
    async fn run_dry_run(
        &self,
        v: &Validated,
        ctx: &mut Context,
        namespace: &str,
        enforce: bool,
    ) -> Result<ExitCode> {
        let generator = self.generator(v, ctx).await?;
        let (obj, service) = self.build_objects(v, generator, enforce.then_some(namespace))?;
        // As kubectl's: each object is mapped through the server's discovery, so a
        // group-version the server lacks fails here too (`no matches for kind …`);
        // by the generator's kind, before overrides, as kubectl maps it.
        let (group, version) = match generator.api_version().split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", generator.api_version()),
        };
        let mut kinds = vec![GroupVersionKind::gvk(group, version, generator.kind())];
        if service.is_some() {
            kinds.push(GroupVersionKind::gvk("", "v1", "Service"));
        }
        for gvk in &kinds {
            ctx.server_mapping(gvk).await?;
        }
        let out = &mut ctx.stdout;
        // Printed as kubectl holds them: typed (Go's zero values and field order).
        let printer = self.print.to_typed_printer(
            "created",
            self.dry_run,
            cli::printers::gojson::Structs::Current,
        )?;
        // As kubectl 1.37: the run object, then the service, each printed whatever
        // became of the other; a failure (a template error) is reported at the end.
        let printed = printer.print(&obj, out);
        let service_printed = service.as_ref().map(|svc| printer.print(svc, out));
        printed?;
        match service_printed {
            Some(Err(e)) => Err(e.into()),
            _ => Ok(ExitCode::SUCCESS),
        }
    }

    /// The generator: an implicit `cronjob/v1` (`--schedule`) falls back to
    /// `cronjob/v1beta1`, with 1.17's warning, where the server's discovery has no
    /// `batch/v1` CronJob; offline it stays `cronjob/v1`.
    async fn generator(&self, v: &Validated, ctx: &mut Context) -> Result<RunGenerator> {
        let GeneratorChoice::Implicit(RunGenerator::CronJobV1) = v.generator else {
            return Ok(v.generator.generator());
        };
        let v1 = GroupVersionKind::gvk("batch", "v1", "CronJob");
        match ctx.server_mapping(&v1).await {
            Ok(_) => Ok(RunGenerator::CronJobV1),
            Err(e) if matches!(e.downcast_ref(), Some(NoMapping::NoMatch { .. })) => {
                let fallback = RunGenerator::CronJobV1Beta1;
                writeln!(
                    ctx.stderr,
                    "WARNING: New generator \"{}\" specified, but it isn't available. Falling back to \"{fallback}\".",
                    RunGenerator::CronJobV1,
                )?;
                Ok(fallback)
            }
            Err(e) => Err(e.context("unable to discover the batch/v1 API")),
        }
    }

    async fn run_online(
        self,
        v: Validated,
        ctx: &mut Context,
        client: kube::Client,
        namespace: String,
        watch_timeout: u32,
    ) -> Result<ExitCode> {
        let generator = self.generator(&v, ctx).await?;
        let (out, err) = (&mut ctx.stdout, &mut ctx.stderr);
        let (obj, service) = self.build_objects(&v, generator, None)?;
        // kubectl decodes the server's answer into its typed struct before printing.
        let printer = self.print.to_typed_printer(
            "created",
            self.dry_run,
            cli::printers::gojson::Structs::Current,
        )?;
        let target = create::Target {
            client: client.clone(),
            namespace: namespace.clone(),
            dry_run: self.dry_run,
            field_manager: self.field_manager.clone(),
            save_config: self.save_config,
        };
        let created = target.create(obj, generator.kind()).await?;
        let mut all_created: Vec<Created> = vec![created.clone()];
        let mut service_error = None;
        let mut service_object = None;
        if let Some(svc) = service {
            match target.create(svc, "Service").await {
                Ok(svc) => {
                    service_object = Some(svc.object.clone());
                    all_created.push(svc);
                }
                Err(e) => service_error = Some(e),
            }
        }
        if self.attach {
            let session = crate::attach::Session {
                client,
                namespace,
                created: created.object.clone(),
                created_all: all_created,
                stdin: self.params.stdin,
                tty: self.params.tty,
                quiet: self.quiet,
                leave_stdin_open: self.params.leave_stdin_open,
                detach_keys: self.detach_keys.clone(),
                restart_policy: v.restart_policy.clone(),
                remove: self.remove,
                timeout: v.pod_running_timeout,
                watch_timeout,
                deletion: crate::attach::Deletion {
                    cascade: self.cascade.clone(),
                },
            };
            let code = session.run(out, err).await?;
            if let Some(e) = service_error {
                return Err(e);
            }
            return Ok(code);
        }
        // As kubectl 1.37: every created object printed at the end, the run object
        // first, then the service; the errors (a service that could not be created or
        // printed) after them.
        let printed = printer.print(&created.object, out);
        if let Some(svc) = &service_object
            && let Err(e) = printer.print(svc, out)
            && service_error.is_none()
        {
            service_error = Some(e.into());
        }
        printed?;
        match service_error {
            Some(e) => Err(e),
            None => Ok(ExitCode::SUCCESS),
        }
    }
}

/// kubectl's `--cascade` (its delete flags' `GetCascadingStrategy`): the three
/// strategies, or a deprecated Go boolean (`true` → background, `false` → orphan) with
/// kubectl's warning; anything else is refused with kubectl's message.
pub fn parse_cascade(value: &str, warnings: &mut dyn Write) -> Result<PropagationPolicy> {
    let Ok(boolean) = cli::flags::parse_go_bool(value) else {
        return match value {
            "orphan" => Ok(PropagationPolicy::Orphan),
            "foreground" => Ok(PropagationPolicy::Foreground),
            "background" => Ok(PropagationPolicy::Background),
            _ => anyhow::bail!(
                "invalid cascade value ({value}). Must be \"background\", \"foreground\", or \"orphan\""
            ),
        };
    };
    let (policy, replacement) = if boolean {
        (PropagationPolicy::Background, "background")
    } else {
        (PropagationPolicy::Orphan, "orphan")
    };
    writeln!(
        warnings,
        "warning: --cascade={value} is deprecated (boolean value) and can be replaced with --cascade={replacement}."
    )?;
    Ok(policy)
}

/// kubectl's `getRestartPolicy`: `--restart`, or without it `OnFailure` for an
/// interactive pod (`-i`) and `Always` otherwise.
fn restart_policy(restart: &str, interactive: bool) -> Result<String> {
    Ok(match restart {
        "" if interactive => "OnFailure",
        "" => "Always",
        r @ ("Always" | "OnFailure" | "Never") => r,
        other => anyhow::bail!(
            "invalid restart policy: {other}, valid values are: Always, OnFailure, Never"
        ),
    }
    .to_string())
}

#[cfg(test)]
mod tests;
