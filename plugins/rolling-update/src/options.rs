//! `RollingUpdateOptions`: complete → validate → run, the command's flow in
//! kubectl 1.17's order (the README's "kubectl 1.17's flow"), with the deliberate
//! improvements listed in `--help`.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, ReplicationController};
use kube::Client;
use kube::api::Api;

use crate::cluster::{CannotProgress, KubeOps, Stall};
use crate::controller;
use crate::fencepost::IntOrPercent;
use crate::file::{FileSource, read_new_controller};
use crate::flags::Args;
use crate::hint::Hints;
use crate::output::{Console, dry_run_summary, render};
use crate::prepare::{Plan, Prepared, prepare};
use crate::updater::{RollingUpdater, UpdaterConfig};
use crate::validate::validate_arguments;
use cli::flags::{DryRunStrategy, PrintFlags};
use cli::interrupt::{Interrupt, Interrupted};
use cli::{Context, Stopped, UsageErrors};
use resources::{DiscoveryCache, RestMapper, Validation};

/// The user-facing command name, for usage hints.
pub const COMMAND: &str = "kubectl rolling-update";

/// The command, for `cli::run`: complete and validate (no cluster needed),
/// then the client, `-f`, the signal handlers, and [`RollingUpdateOptions::run`].
pub async fn run(args: Args, mut ctx: Context) -> anyhow::Result<std::process::ExitCode> {
    let mut options = RollingUpdateOptions::complete(&args, &ctx)?;
    options.validate()?;
    // No request may outlast --timeout: against a paused or black-holed API server
    // every request would otherwise wait for kube's 295 s read timeout (or forever for
    // a connection that never answers). Watches ask the server to end them before it.
    ctx.bound_requests(options.timeout, "--timeout");
    // `-f` objects are always held to this namespace (see file.rs), so whether -n was
    // explicit does not matter here.
    let (namespace, _explicit) = ctx.namespace().await?;
    let argv: Vec<String> = std::env::args().skip(1).collect();
    options.hints = Hints::new(COMMAND, &argv, &options.args, &namespace);
    let cache = ctx.discovery_cache().await?;
    let client = ctx.client().await?;
    // -f is read before Ctrl-C is caught: nothing has been changed yet.
    let from_file = options.read_file(client.clone(), cache, &namespace).await?;
    let interrupt = ctx.install_interrupt(options.hints.text(options.rollback));
    options
        .run(client, from_file, &namespace, interrupt, ctx.stdout)
        .await?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// Everything the command needs, resolved from the flags.
#[derive(Debug, Clone)]
pub struct RollingUpdateOptions {
    pub args: Vec<String>,
    pub old_name: String,
    /// One name given: the new RC is renamed to the old name at the end.
    pub keep_old_name: bool,
    pub filenames: Vec<String>,
    /// `--validate`: schema validation of the `-f` object.
    pub validate_schema: bool,
    pub image: String,
    pub deployment_key: String,
    pub container: String,
    pub pull_policy: String,
    pub rollback: bool,
    pub update_period: Duration,
    pub poll_interval: Duration,
    pub timeout: Duration,
    pub dry_run: DryRunStrategy,
    pub print: PrintFlags,
    pub max_surge: IntOrPercent,
    pub max_unavailable: IntOrPercent,
    pub min_ready_seconds: i32,
    /// `--fail-fast`: end a stalled update whose cause cannot fix itself.
    pub fail_fast: bool,
    /// What to print when the run is stopped; set once the namespace is known.
    pub hints: Hints,
    /// `--record`'s change cause, for the new RC.
    pub change_cause: Option<String>,
}

impl RollingUpdateOptions {
    /// kubectl's `Complete`: reads flags only (`ctx` carries `--record`), never fails
    /// on bad arguments (a bad `--dry-run` was refused while parsing).
    pub fn complete(args: &Args, ctx: &Context) -> anyhow::Result<Self> {
        // A sink: the boolean spellings are this command's syntax (see flags.rs).
        let dry_run = args.dry_run.to_strategy(&mut std::io::sink())?;
        Ok(RollingUpdateOptions {
            args: args.args.clone(),
            old_name: args.args.first().cloned().unwrap_or_default(),
            keep_old_name: args.args.len() == 1,
            filenames: args.filenames.clone(),
            validate_schema: args.validate,
            image: args.image.clone(),
            deployment_key: args.deployment_label_key.clone(),
            container: args.container.clone(),
            pull_policy: args.image_pull_policy.clone(),
            rollback: args.rollback,
            update_period: args.update_period,
            poll_interval: args.poll_interval,
            timeout: args.timeout,
            dry_run,
            print: args.print.clone(),
            max_surge: args.max_surge.clone(),
            max_unavailable: args.max_unavailable.clone(),
            min_ready_seconds: args.min_ready_seconds,
            fail_fast: args.fail_fast,
            hints: Hints::new(COMMAND, &[], &[], ""),
            change_cause: ctx.recorder().map(|r| r.change_cause().to_string()),
        })
    }

    /// kubectl's `Validate`, plus an early check of `-o` (1.17 only noticed a bad
    /// format after the whole update had run).
    pub fn validate(&self) -> anyhow::Result<()> {
        let errors = validate_arguments(
            &self.deployment_key,
            &self.filenames,
            &self.image,
            self.rollback,
            &self.args,
        );
        if !errors.is_empty() {
            return Err(UsageErrors(errors.into_iter().map(String::from).collect()).into());
        }
        self.print
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
        let Some(filename) = self.filenames.first() else {
            return Ok(None);
        };
        let mode = if self.validate_schema {
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
            validate: self.validate_schema,
            schema,
            namespace,
            stdin: None,
        };
        Ok(Some(read_new_controller(source, &mut mapper).await?))
    }

    /// kubectl's `Run`; `from_file` is what [`Self::read_file`] returned, `stdout`
    /// where the progress lines and the result go.
    pub async fn run(
        &self,
        client: Client,
        from_file: Option<(ReplicationController, bool)>,
        namespace: &str,
        interrupt: Interrupt,
        stdout: Box<dyn std::io::Write + Send>,
    ) -> anyhow::Result<()> {
        let mut console = Console::new(stdout);
        let result = self
            .run_inner(client, from_file, namespace, &interrupt, &mut console)
            .await;
        console.finish();
        result.map_err(|err| {
            self.explain_stall(self.explain_interrupt(crate::cluster::explain_transport(err)))
        })
    }

    async fn run_inner(
        &self,
        client: Client,
        from_file: Option<(ReplicationController, bool)>,
        namespace: &str,
        interrupt: &Interrupt,
        console: &mut Console,
    ) -> anyhow::Result<()> {
        let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), namespace);
        let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
        let mut ops = KubeOps::new(
            rcs.clone(),
            pods,
            interrupt.clone(),
            self.poll_interval,
            self.timeout,
        );
        ops.stall = Some(Stall::new(
            Api::namespaced(client, namespace),
            self.fail_fast,
            console.stderr_sink(),
        ));
        // Below the client's read timeout (main.rs bounds it by --timeout), so the
        // server ends a quiet watch before the client would cut it.
        ops.watch_timeout = u32::try_from(self.timeout.as_secs().saturating_sub(1))
            .unwrap_or(290)
            .clamp(1, 290);

        // 1-8 (2, -f, is already read: see read_file).
        let plan = self.plan(namespace);
        let (old_rc, new_rc, cleanup_policy, target) =
            match prepare(&plan, &mut ops, console, from_file).await? {
                Prepared::Nothing => return Ok(()),
                Prepared::Finished { rc, operation } => {
                    return self.print_final(console, &rc, &operation);
                }
                Prepared::DryRun { old_rc, new_rc } => {
                    console.print(&dry_run_summary(&old_rc, &new_rc, &self.print)?);
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
            update_period: self.update_period,
            timeout: self.timeout,
            min_ready_seconds: self.min_ready_seconds,
            cleanup_policy,
            target,
            max_unavailable: self.max_unavailable.clone(),
            max_surge: self.max_surge.clone(),
        };
        let rc = RollingUpdater::new(ops).update(&config, console).await?;
        console.finish();

        // 12. The final object, as the update's last write returned it: 1.17 fetched
        // it again (and a two-name rollback fetched the RC it had just deleted).
        let operation = if self.keep_old_name || self.rollback {
            "rolling updated".to_string()
        } else {
            format!("rolling updated to {:?}", controller::name(&rc))
        };
        self.print_final(console, &rc, &operation)
    }

    /// What the steps before the update need of the options.
    fn plan<'a>(&'a self, namespace: &'a str) -> Plan<'a> {
        Plan {
            args: &self.args,
            old_name: &self.old_name,
            keep_old_name: self.keep_old_name,
            filename: self.filenames.first().map_or("", String::as_str),
            image: &self.image,
            container: &self.container,
            pull_policy: &self.pull_policy,
            deployment_key: &self.deployment_key,
            rollback: self.rollback,
            dry_run: self.dry_run,
            timeout: self.timeout,
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
        let printer = self.print.to_typed_printer(
            operation,
            DryRunStrategy::None,
            // kubectl 1.17's structs: a zero creationTimestamp is `null`.
            cli::printers::gojson::Structs::BeforeOmitzero,
        )?;
        console.print(&render(rc, printer.as_ref())?);
        Ok(())
    }

    /// Turns an update that cannot progress into its error and the resume hint,
    /// as an interruption is (exit 1: the update failed).
    fn explain_stall(&self, err: anyhow::Error) -> anyhow::Error {
        let Some(cause) = err.chain().find_map(|c| c.downcast_ref::<CannotProgress>()) else {
            return err;
        };
        Stopped {
            message: format!("error: {cause}"),
            hint: self.hints.text(self.rollback),
            exit_code: 1,
        }
        .into()
    }

    /// Turns an interruption into the message that tells the user how to go on.
    fn explain_interrupt(&self, err: anyhow::Error) -> anyhow::Error {
        let Some(interrupted) = err.chain().find_map(|c| c.downcast_ref::<Interrupted>()) else {
            return err;
        };
        Stopped {
            message: format!("error: {interrupted}"),
            hint: self.hints.text(self.rollback),
            exit_code: cli::interrupt::exit_code(interrupted.signal),
        }
        .into()
    }
}
