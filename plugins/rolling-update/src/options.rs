//! `RollingUpdateOptions`: complete → validate → run, the command's flow in
//! kubectl 1.17's order (the README's "kubectl 1.17's flow"), with the deliberate
//! improvements listed in `--help`. As 1.17's `Complete`, `complete` resolves the
//! namespace and the client from the context (nothing is sent), so a kubeconfig that
//! does not load fails before the arguments are checked.

use crate::model::{Pod, ReplicationController};
use kube::Client;
use kube::api::Api;

use crate::args::Args;
use crate::cluster::{CannotProgress, KubeOps, Stall};
use crate::controller;
use crate::file::{FileSource, read_new_controller};
use crate::hint::Hints;
use crate::output::{Console, dry_run_summary, render};
use crate::prepare::{Plan, Prepared, prepare};
use crate::updater::{RollingUpdater, UpdaterConfig};
use crate::validate::validate_arguments;
use cli::flags::DryRunStrategy;
use cli::interrupt::{Interrupt, Interrupted};
use cli::{Context, Stopped, UsageErrors};
use resources::{DiscoveryCache, RestMapper, Validation};

/// What [`RollingUpdateOptions::complete`] resolved from the context, as 1.17's
/// `Complete` does (the namespace, then the client set); nothing is sent.
pub enum Resolved {
    /// The cluster the update acts on.
    Ready(Box<Target>),
    /// No kubeconfig, no `--server` and no in-cluster configuration: kubectl would
    /// dial `localhost:8080` at its first request, after the arguments were checked,
    /// so the error waits for `run`.
    Unconfigured(anyhow::Error),
}

/// The namespace, the resume hints that name it, the server's discovery cache, the
/// client, and each watch's server-side timeout.
pub struct Target {
    namespace: String,
    hints: Hints,
    cache: Option<DiscoveryCache>,
    client: Client,
    /// Below the client's bound (`--timeout`, or a tighter `--request-timeout`), so a
    /// quiet watch is renewed, never cut.
    watch_timeout: u32,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Ready(target) => f
                .debug_struct("Ready")
                .field("namespace", &target.namespace)
                .finish_non_exhaustive(),
            Self::Unconfigured(e) => f.debug_tuple("Unconfigured").field(e).finish(),
        }
    }
}

impl Resolved {
    async fn from(ctx: &Context, names: &[String]) -> anyhow::Result<Self> {
        let resolved = async {
            // `-f` objects are always held to this namespace (see file.rs), so whether
            // -n was explicit does not matter here.
            let (namespace, _explicit) = ctx.namespace().await?;
            let argv: Vec<String> = std::env::args().skip(1).collect();
            let hints = Hints::new(COMMAND, &argv, names, &namespace);
            let cache = ctx.discovery_cache().await?;
            let client = ctx.client().await?;
            let watch_timeout = ctx.bound().await?.watch_timeout();
            anyhow::Ok(Self::Ready(Box::new(Target {
                namespace,
                hints,
                cache,
                client,
                watch_timeout,
            })))
        };
        match resolved.await {
            Err(e) if Context::unconfigured(&e) => Ok(Self::Unconfigured(e)),
            other => other,
        }
    }
}

/// What [`RollingUpdateOptions::run`] hands the update.
struct Cluster<'a> {
    client: Client,
    namespace: &'a str,
    /// The server-side timeout of every watch, below the client's bound.
    watch_timeout: u32,
    interrupt: &'a Interrupt,
}

/// The user-facing command name, for usage hints.
pub const COMMAND: &str = "kubectl rolling-update";

/// The command: complete → validate → run, for `cli::run`.
pub async fn run(args: Args, mut ctx: Context) -> anyhow::Result<std::process::ExitCode> {
    let options = RollingUpdateOptions::complete(args, &mut ctx).await?;
    options.validate()?;
    options.run(ctx).await
}

/// Everything the command needs: the flags as parsed, and what kubectl's `Complete`
/// resolves from them and from the context.
#[derive(Debug)]
pub struct RollingUpdateOptions {
    /// The command line.
    pub flags: Args,
    /// `--dry-run`, resolved.
    pub dry_run: DryRunStrategy,
    /// `--record`'s change cause, for the new RC.
    pub change_cause: Option<String>,
    /// The cluster, resolved from the context.
    pub cluster: Resolved,
}

impl RollingUpdateOptions {
    /// kubectl's `Complete`: the flags (`ctx` carries `--record`; a bad `--dry-run`
    /// was refused while parsing), then the namespace and the client from the context
    /// ([`Resolved`]), bounding every request of that client by `--timeout`: against
    /// a paused or black-holed API server each request would otherwise wait for the
    /// default bound; no request may outlast the whole update. Never fails on bad
    /// arguments: [`Self::validate`] checks them.
    pub async fn complete(flags: Args, ctx: &mut Context) -> anyhow::Result<Self> {
        // A sink: the boolean spellings are this command's syntax (see args.rs).
        let dry_run = flags.dry_run.to_strategy(&mut std::io::sink())?;
        ctx.bound_requests(flags.timeout, "--timeout");
        let cluster = Resolved::from(ctx, &flags.args).await?;
        Ok(RollingUpdateOptions {
            flags,
            dry_run,
            change_cause: ctx.recorder().map(|r| r.change_cause().to_string()),
            cluster,
        })
    }

    /// The controller being updated (the first name).
    fn old_name(&self) -> &str {
        self.flags.args.first().map_or("", String::as_str)
    }

    /// One name given: the new RC is renamed to the old name at the end.
    fn keep_old_name(&self) -> bool {
        self.flags.args.len() == 1
    }

    /// kubectl's `Validate`, plus an early check of `-o` (1.17 only noticed a bad
    /// format after the whole update had run).
    pub fn validate(&self) -> anyhow::Result<()> {
        let flags = &self.flags;
        let errors = validate_arguments(
            &flags.deployment_label_key,
            &flags.filenames,
            &flags.image,
            flags.rollback,
            &flags.args,
        );
        if !errors.is_empty() {
            return Err(UsageErrors(errors.into_iter().map(String::from).collect()).into());
        }
        flags
            .print
            .to_printer("rolling updated", DryRunStrategy::None)?;
        Ok(())
    }

    /// Step 2 of 1.17's `Run` (README, "kubectl 1.17's flow"), taken first: the new RC from `-f` (a
    /// file, stdin or a URL, through the resource Builder), with whether its replica
    /// count was left out; `None` without `-f`. `cache` is the server's discovery
    /// cache, for objects of kinds k8s-openapi does not know.
    ///
    /// Read before anything is sent (1.17 fetched the old RC first), so a bad input
    /// fails fast, the same way with or without a reachable cluster; and before the
    /// signal handlers are installed, so Ctrl-C ends a slow URL or a forgotten stdin at
    /// once (nothing has been changed yet).
    pub async fn read_file(
        &self,
        client: Client,
        cache: Option<DiscoveryCache>,
        namespace: &str,
    ) -> anyhow::Result<Option<(ReplicationController, bool)>> {
        let Some(filename) = self.flags.filenames.first() else {
            return Ok(None);
        };
        let mode = if self.flags.validate {
            Validation::Strict
        } else {
            Validation::Ignore
        };
        // 1.17 validated against the server's OpenAPI document; without one (no
        // reachable server) the built-in kinds' schema validates, so that a bad file
        // still fails before anything is sent, in the same words.
        let schema = resources::server_schema::for_validation(&client, cache.as_ref(), mode)
            .await
            .and_then(|loaded| loaded.ok().map(Ok));
        // Built-in kinds (ReplicationController among them) are mapped from
        // k8s-openapi's table, so a plain RC needs no discovery request; other kinds
        // only need mapping to be reported as "not a ReplicationController".
        let mut mapper = RestMapper::for_client(client, cache).prefer_builtins(true);
        let source = FileSource {
            filename,
            validate: self.flags.validate,
            schema,
            namespace,
            stdin: None,
        };
        Ok(Some(read_new_controller(source, &mut mapper).await?))
    }

    /// kubectl's `Run`, on what [`Self::complete`] resolved: `-f`
    /// ([`Self::read_file`]), read before Ctrl-C is caught (nothing has been changed
    /// yet); then the update, its progress lines and result on `ctx`'s stdout.
    pub async fn run(mut self, ctx: Context) -> anyhow::Result<std::process::ExitCode> {
        // Taken by value (the client, the deferred error); nothing reads it after.
        let taken = Resolved::Unconfigured(anyhow::anyhow!("resolved once, taken by run"));
        let Target {
            namespace,
            hints,
            cache,
            client,
            watch_timeout,
        } = match std::mem::replace(&mut self.cluster, taken) {
            Resolved::Ready(target) => *target,
            // As kubectl's first request would fail, after the arguments were checked.
            Resolved::Unconfigured(e) => return Err(e),
        };
        let from_file = self.read_file(client.clone(), cache, &namespace).await?;
        let interrupt = ctx.install_interrupt(hints.text(self.flags.rollback));
        let mut console = Console::new(ctx.stdout);
        let cluster = Cluster {
            client,
            namespace: &namespace,
            watch_timeout,
            interrupt: &interrupt,
        };
        let result = self.run_inner(cluster, from_file, &mut console).await;
        console.finish();
        result.map_err(|err| self.explain_stop(crate::cluster::explain_transport(err), &hints))?;
        Ok(std::process::ExitCode::SUCCESS)
    }

    async fn run_inner(
        &self,
        cluster: Cluster<'_>,
        from_file: Option<(ReplicationController, bool)>,
        console: &mut Console,
    ) -> anyhow::Result<()> {
        let Cluster {
            client,
            namespace,
            watch_timeout,
            interrupt,
        } = cluster;
        let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), namespace);
        let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
        let mut ops = KubeOps::new(
            rcs.clone(),
            pods,
            interrupt.clone(),
            self.flags.poll_interval,
            self.flags.timeout,
        );
        ops.stall = Some(Stall::new(
            Api::namespaced(client, namespace),
            self.flags.fail_fast,
            console.stderr_sink(),
        ));
        ops.watch_timeout = watch_timeout;

        // 1-8 (2, -f, is already read: see read_file).
        let plan = self.plan(namespace);
        let (old_rc, new_rc, cleanup_policy, target) =
            match prepare(&plan, &mut ops, console, from_file).await? {
                Prepared::Nothing => return Ok(()),
                Prepared::Finished { rc, operation } => {
                    return self.print_final(console, &rc, &operation);
                }
                Prepared::DryRun { old_rc, new_rc } => {
                    console.print(&dry_run_summary(&old_rc, &new_rc, &self.flags.print)?);
                    return Ok(());
                }
                Prepared::Update {
                    old_rc,
                    new_rc,
                    cleanup,
                    target,
                } => (old_rc, new_rc, cleanup, target),
            };

        // 9-11. The update itself.
        let config = UpdaterConfig {
            old_rc,
            new_rc: new_rc.clone(),
            update_period: self.flags.update_period,
            timeout: self.flags.timeout,
            min_ready_seconds: self.flags.min_ready_seconds,
            cleanup_policy,
            target,
            max_unavailable: self.flags.max_unavailable.clone(),
            max_surge: self.flags.max_surge.clone(),
        };
        let rc = RollingUpdater::new(ops).update(&config, console).await?;
        console.finish();

        // 12. The final object, as the update's last write returned it: 1.17 fetched
        // it again (and a two-name rollback fetched the RC it had just deleted).
        let operation = if self.keep_old_name() || self.flags.rollback {
            "rolling updated".to_string()
        } else {
            format!("rolling updated to {:?}", controller::name(&rc))
        };
        self.print_final(console, &rc, &operation)
    }

    /// What the steps before the update need of the options.
    fn plan<'a>(&'a self, namespace: &'a str) -> Plan<'a> {
        let flags = &self.flags;
        Plan {
            args: &flags.args,
            old_name: self.old_name(),
            keep_old_name: self.keep_old_name(),
            filename: flags.filenames.first().map_or("", String::as_str),
            image: &flags.image,
            container: &flags.container,
            pull_policy: &flags.image_pull_policy,
            deployment_key: &flags.deployment_label_key,
            rollback: flags.rollback,
            dry_run: self.dry_run,
            timeout: flags.timeout,
            change_cause: self.change_cause.as_deref(),
            namespace,
        }
    }

    /// Prints the final object with `-o`'s printer.
    fn print_final(
        &self,
        console: &mut Console,
        rc: &ReplicationController,
        operation: &str,
    ) -> anyhow::Result<()> {
        console.finish();
        let printer = self.flags.print.to_typed_printer(
            operation,
            DryRunStrategy::None,
            // kubectl 1.17's structs: a zero creationTimestamp is `null`.
            cli::printers::gojson::Structs::BeforeOmitzero,
        )?;
        console.print(&render(rc, printer.as_ref())?);
        Ok(())
    }

    /// Turns an interruption (the signal's exit code) or an update that cannot
    /// progress (exit 1: the update failed) into its message and the hint that tells
    /// the user how to go on; any other error stays as it is.
    fn explain_stop(&self, err: anyhow::Error, hints: &Hints) -> anyhow::Error {
        let find = |err: &anyhow::Error| {
            let interrupted = err.chain().find_map(|c| c.downcast_ref::<Interrupted>());
            if let Some(interrupted) = interrupted {
                return Some((
                    format!("error: {interrupted}"),
                    cli::interrupt::exit_code(interrupted.signal),
                ));
            }
            let stalled = err.chain().find_map(|c| c.downcast_ref::<CannotProgress>());
            stalled.map(|cause| (format!("error: {cause}"), 1))
        };
        let Some((message, exit_code)) = find(&err) else {
            return err;
        };
        Stopped {
            message,
            hint: hints.text(self.flags.rollback),
            exit_code,
        }
        .into()
    }
}

#[cfg(test)]
mod tests;
