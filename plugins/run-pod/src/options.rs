//! `RunPodOptions`: kubectl run's `RunOptions` in three steps.
//!
//! - [`RunPodOptions::complete`] turns raw flags into typed values (dry-run strategy,
//!   printer format, attach default, generator choice) without any request;
//! - [`RunPodOptions::validate`] checks them, in kubectl's order and with kubectl's
//!   messages, before anything is sent;
//! - [`RunPodOptions::run`] generates, creates (or only prints, for a client dry run)
//!   and, when attached, hands over to [`crate::attach`].
//!
//! A client dry run is synchronous and never builds a client: it needs only the
//! namespace, read from `-n` or the kubeconfig's current context (if there is one).
//! Without a server to ask, `--schedule` then prints a `batch/v1` CronJob; a real (or
//! server dry-run) create asks the server once and falls back to `batch/v1beta1`.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result};
use kube::api::PropagationPolicy;
use serde_json::Value;

use shared::cli::UsageError;
use shared::flags::{ChangeCauseRecorder, ConfigFlags, DryRunStrategy, PrintFlags};
use shared::generate::{
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
    /// `--restart` as typed; the default `Always` unless given.
    pub restart: String,
    /// Whether `--restart` was typed.
    pub restart_explicit: bool,
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
    /// `--cascade`, `--force`, `--grace-period`: how `--rm` deletes.
    pub cascade: PropagationPolicy,
    pub force: bool,
    pub grace_period: i64,
    /// `--record`: the change-cause annotation for every created object.
    pub recorder: Option<ChangeCauseRecorder>,
    /// Global kubeconfig flags.
    pub config: ConfigFlags,
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
    /// Completes the options from the flags. Deprecated `--dry-run` spellings warn on
    /// `warnings`; an invalid `--dry-run` or `-o` fails here, before validation, as in
    /// kubectl's `Complete`.
    pub fn complete(args: Args, explicit: Explicit, warnings: &mut dyn Write) -> Result<Self> {
        let dry_run = args.dry_run.to_strategy(warnings)?;
        // Build the printer once to reject an unknown -o before anything else happens.
        args.print.to_printer("created", dry_run)?;
        let cascade = parse_cascade(&args.cascade, warnings)?;
        let attach = if explicit.attach {
            args.attach
        } else {
            args.attach || args.stdin
        };
        let mut container_args = args.args;
        container_args.extend(args.dash_args);
        let params = RunParams {
            name: args.name.clone().unwrap_or_default(),
            image: args.image.clone().unwrap_or_default(),
            labels: args.labels,
            annotations: args.annotations,
            env: args.env,
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
            name: args.name,
            image: args.image,
            params,
            generator_name: args.generator.filter(|g| !g.is_empty()),
            replicas_explicit: explicit.replicas,
            expose: args.expose,
            service_generator_name: args.service_generator,
            attach,
            remove: args.rm,
            quiet: args.quiet,
            restart: args.restart,
            restart_explicit: explicit.restart,
            dry_run,
            overrides: args.overrides,
            override_type: args.override_type,
            service_overrides: args.service_overrides,
            field_manager: args.field_manager,
            save_config: args.save_config,
            pod_running_timeout: args.pod_running_timeout,
            print: args.print,
            cascade,
            force: args.force,
            grace_period: args.grace_period,
            recorder: args.record.to_recorder(),
            config: args.config,
        })
    }

    /// Checks the flags in the order kubectl's `Run` does, so that the first mistake
    /// reported is the same one, with the same words. Usage errors (those kubectl
    /// follows with "See … -h") are [`UsageError`]s.
    pub fn validate(&mut self) -> Result<Validated> {
        let usage = |msg: String| anyhow::Error::new(UsageError::new(msg));
        let Some(image) = &self.image else {
            // cobra's required-flag check runs before anything else.
            anyhow::bail!("required flag(s) \"image\" not set");
        };
        if self.name.as_deref().is_none_or(str::is_empty) {
            return Err(usage("NAME is required for run".into()));
        }
        let timeout = self.pod_running_timeout;
        if timeout.is_zero() {
            return Err(usage(
                "--pod-running-timeout must be higher than zero".into(),
            ));
        }
        if image.is_empty() {
            anyhow::bail!("--image is required");
        }
        if !generate::is_valid_image_reference(image) {
            anyhow::bail!("Invalid image name {image:?}: invalid reference format");
        }
        let p = &self.params;
        if p.tty && !p.stdin {
            return Err(usage(
                "-i/--stdin is required for containers with -t/--tty=true".into(),
            ));
        }
        if p.stdin && p.replicas != 1 {
            return Err(usage(format!(
                "-i/--stdin requires that replicas is 1, found {}",
                p.replicas
            )));
        }
        if self.expose && p.port.is_empty() {
            return Err(usage("--port must be set when exposing a service".into()));
        }
        let restart_policy = match self.restart.as_str() {
            "" if p.stdin => "OnFailure",
            "" => "Always",
            r @ ("Always" | "OnFailure" | "Never") => r,
            other => return Err(usage(format!("invalid restart policy: {other}"))),
        }
        .to_string();
        if restart_policy != "Always" && p.replicas != 1 {
            return Err(usage(format!(
                "--restart={restart_policy} requires that --replicas=1, found {}",
                p.replicas
            )));
        }
        if self.remove && !self.attach {
            return Err(usage(
                "--rm should only be used for attached containers".into(),
            ));
        }
        if self.attach && self.dry_run != DryRunStrategy::None {
            return Err(usage(
                "--dry-run=[server|client] can't be used with attached containers options (--attach, --stdin, or --tty)"
                    .into(),
            ));
        }
        match p.image_pull_policy.as_str() {
            "" | "Always" | "IfNotPresent" | "Never" => {}
            other => return Err(usage(format!("invalid image pull policy: {other}"))),
        }
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
        if matches!(
            generator.generator(),
            RunGenerator::CronJobV1 | RunGenerator::CronJobV1Beta1 | RunGenerator::CronJobV2Alpha1
        ) && p.schedule.is_empty()
        {
            anyhow::bail!("Parameter: schedule is required");
        }
        let override_type: OverrideType = self.override_type.parse()?;
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
            pod_running_timeout: timeout,
        })
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

    /// Runs the command: the whole of it for a client dry run, without any client.
    pub fn run(self, v: Validated, out: &mut dyn Write, err: &mut dyn Write) -> Result<ExitCode> {
        if self.dry_run == DryRunStrategy::Client {
            let (namespace, enforce) = offline_namespace(&self.config)?;
            let (obj, service) = self.build_objects(
                &v,
                v.generator.generator(),
                enforce.then_some(namespace.as_str()),
            )?;
            let (mut obj, mut service) = (obj, service);
            for o in std::iter::once(&mut obj).chain(service.as_mut()) {
                with_go_zero_values(o);
            }
            let printer = self.print.to_printer("created", self.dry_run)?;
            // As kubectl: a service that fails to print (a template error) is
            // reported after the pod, unless the pod fails too.
            let mut service_error = None;
            if let Some(svc) = &service {
                match printer.print(svc, out) {
                    Ok(()) => self.yaml_separator(out)?,
                    Err(e) => service_error = Some(e),
                }
            }
            printer.print(&obj, out)?;
            return match service_error {
                Some(e) => Err(e.into()),
                None => Ok(ExitCode::SUCCESS),
            };
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("unable to start the async runtime")?;
        runtime.block_on(self.run_online(v, out, err))
    }

    /// kubectl run prints an extra `---` after the service in YAML output, on top of
    /// the YAML printer's own separator; kept for byte-identical output.
    fn yaml_separator(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.print.is_yaml() {
            out.write_all(b"---\n")
        } else {
            Ok(())
        }
    }

    async fn run_online(
        self,
        v: Validated,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Result<ExitCode> {
        let mut config = self.config.to_config().await?;
        shared::rest::bound_requests(&mut config, self.config.request_timeout()?);
        let (namespace, _enforce) = self.config.namespace_of(&config);
        let client = self.config.client(config)?;
        let generator = match v.generator {
            GeneratorChoice::Implicit(RunGenerator::CronJobV1) => {
                let g = create::cron_job_generator(&client).await?;
                if g != RunGenerator::CronJobV1 {
                    writeln!(
                        err,
                        "WARNING: New generator \"{}\" specified, but it isn't available. Falling back to \"{}\".",
                        RunGenerator::CronJobV1,
                        g
                    )?;
                }
                g
            }
            choice => choice.generator(),
        };
        let (obj, service) = self.build_objects(&v, generator, None)?;
        let printer = self.print.to_printer("created", self.dry_run)?;
        let target = create::Target {
            client: client.clone(),
            namespace: namespace.clone(),
            dry_run: self.dry_run == DryRunStrategy::Server,
            field_manager: self.field_manager.clone(),
            save_config: self.save_config,
        };
        let created = target.create(obj).await?;
        let mut all_created: Vec<Created> = vec![created.clone()];
        let mut service_error = None;
        if let Some(svc) = service {
            match target.create(svc).await {
                // kubectl reports a service it cannot print (a template error)
                // like one it cannot create: after the pod. Unlike kubectl, which then
                // forgets it, the service is still removed by --rm: it exists.
                Ok(svc) => {
                    match printer.print(&svc.object, out) {
                        Ok(()) => self.yaml_separator(out)?,
                        Err(e) => service_error = Some(e.into()),
                    }
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
                restart_policy: v.restart_policy.clone(),
                remove: self.remove,
                timeout: v.pod_running_timeout,
                deletion: crate::attach::Deletion {
                    cascade: self.cascade.clone(),
                    force: self.force,
                    grace_period: self.grace_period,
                },
            };
            let code = session.run(out, err).await?;
            if let Some(e) = service_error {
                return Err(e);
            }
            return Ok(code);
        }
        printer.print(&created.object, out)?;
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
    let Ok(boolean) = shared::flags::parse_go_bool(value) else {
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

/// Adds the `creationTimestamp: null` that kubectl's client dry run prints for every
/// object metadata Go encodes (a zero `metav1.Time` is not omitted), so that
/// `-o yaml` output is byte-identical to kubectl's. Only the metadata of the object,
/// of a pod template, and of a job template are concerned.
pub fn with_go_zero_values(obj: &mut Value) {
    fn stamp(meta: &mut Value) {
        if let Some(map) = meta.as_object_mut() {
            map.entry("creationTimestamp").or_insert(Value::Null);
        }
    }
    fn stamp_under(parent: Option<&mut Value>) {
        if let Some(map) = parent.and_then(Value::as_object_mut) {
            stamp(
                map.entry("metadata")
                    .or_insert_with(|| Value::Object(Default::default())),
            );
        }
    }
    if let Some(meta) = obj.get_mut("metadata") {
        stamp(meta);
    }
    stamp_under(obj.pointer_mut("/spec/template"));
    stamp_under(obj.pointer_mut("/spec/jobTemplate"));
    stamp_under(obj.pointer_mut("/spec/jobTemplate/spec/template"));
}

/// The namespace without contacting a server: `-n`, else the namespace of the
/// kubeconfig's (or `--context`'s) context, else `default`. The flag is reported as
/// kubectl's `enforceNamespace`.
pub fn offline_namespace(flags: &ConfigFlags) -> Result<(String, bool)> {
    if let Some(ns) = flags.namespace.as_deref().filter(|n| !n.is_empty()) {
        return Ok((ns.to_string(), true));
    }
    let (kubeconfig, _source) = flags.load_kubeconfig()?;
    let namespace = kubeconfig.and_then(|kc| {
        let context = flags.context.clone().or(kc.current_context.clone())?;
        kc.contexts
            .into_iter()
            .find(|c| c.name == context)
            .and_then(|c| c.context)
            .and_then(|c| c.namespace)
            .filter(|n| !n.is_empty())
    });
    Ok((namespace.unwrap_or_else(|| "default".to_string()), false))
}

#[cfg(test)]
mod tests;
