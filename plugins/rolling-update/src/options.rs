//! `RollingUpdateOptions`: complete → validate → run, the command's flow in
//! kubectl 1.17's order (spec §1.5), with the deliberate improvements listed in
//! `--help`.

use std::time::Duration;

use anyhow::bail;
use k8s_openapi::api::core::v1::{Pod, ReplicationController};
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};

use crate::cluster::{
    KubeOps, strip_update_annotations, update_pod_with_retries, update_rc_with_retries,
};
use crate::controller::{
    self, NewControllerConfig, abort_rolling_update, add_selector_label, add_template_label,
    current_image, needs_deployment_key, new_controller_from_current, original_deployment_value,
    selectors_differ, set_next_controller, set_replicas,
};
use crate::fencepost::IntOrPercent;
use crate::file::{FileSource, read_new_controller};
use crate::flags::Args;
use crate::handover;
use crate::hint::Hints;
use crate::names::{
    DESIRED_REPLICAS_ANNOTATION, SOURCE_ID_ANNOTATION, annotation, find_new_name, set_annotation,
    source_id_names,
};
use crate::output::{Console, dry_run_summary, render};
use crate::updater::{CleanupPolicy, RollingUpdater, UpdaterConfig};
use crate::validate::validate_arguments;
use shared::cli::interrupt::{Interrupt, Interrupted};
use shared::cli::{Context, Stopped, UsageErrors};
use shared::flags::{DryRunStrategy, PrintFlags};
use shared::resource::{DiscoveryCache, RestMapper};

/// The user-facing command name, for usage hints.
pub const COMMAND: &str = "kubectl rolling-update";

/// The command, for `shared::cli::run`: complete and validate (no cluster needed),
/// then the client, `-f`, the signal handlers, and [`RollingUpdateOptions::run`].
pub async fn run(args: Args, mut ctx: Context) -> anyhow::Result<std::process::ExitCode> {
    let mut options = RollingUpdateOptions::complete(&args, &ctx)?;
    options.validate()?;
    // No request may outlast --timeout: against a paused or black-holed API server
    // every request would otherwise wait for kube's 295 s read timeout (or forever for
    // a connection that never answers). Watches ask the server to end them before it.
    ctx.bound_requests(options.timeout);
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

    /// Step 2 of 1.17's `Run` (spec §1.5), taken first: the new RC from `-f` (a
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
        // Built-in kinds (ReplicationController among them) are mapped from
        // k8s-openapi's table, so a plain RC needs no discovery request; other kinds
        // only need mapping to be reported as "not a ReplicationController".
        let mut mapper = RestMapper::for_client(client, cache).prefer_builtins(true);
        let source = FileSource {
            filename,
            validate: self.validate_schema,
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
            self.explain_interrupt(crate::cluster::explain_transport(err, self.timeout))
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
        let dry = self.dry_run != DryRunStrategy::None;
        let filename = self.filenames.first().cloned().unwrap_or_default();
        // 2. -f, already read (see read_file).
        let (mut new_rc, replicas_defaulted) = match from_file {
            Some((rc, defaulted)) => (Some(rc), defaulted),
            None => (None, false),
        };

        let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), namespace);
        let pods: Api<Pod> = Api::namespaced(client, namespace);

        // 1. The old RC. When it is missing, an earlier run may have been stopped
        //    after deleting it: with one name, the rename is still to do (1.17 did
        //    this for --image only; -f one-name updates rename too, so they are
        //    recovered the same way); with two names, only the new RC's
        //    annotations are left to remove (1.17 failed with NotFound here).
        // An old RC being deleted is an update stopped right after its delete:
        // wait until it is gone (its garbage collection is quick), then finish
        // the update the way a missing old RC is finished.
        let mut current = rcs.get(&self.old_name).await;
        if let Ok(rc) = &current
            && rc.metadata.deletion_timestamp.is_some()
        {
            let deadline = tokio::time::Instant::now() + self.timeout;
            handover::wait_gone(&rcs, interrupt, &self.old_name, deadline).await?;
            current = rcs.get(&self.old_name).await;
        }
        let mut old_rc = match current {
            // A one-name update stopped in its hand-over (see handover.rs): the old
            // name already holds the pending copy; only the hand-over is left.
            Ok(pending) if handover::renamed_from(&pending).is_some() => {
                return self
                    .finish_hand_over(&rcs, interrupt, console, pending, dry)
                    .await;
            }
            Ok(rc) => rc,
            Err(kube::Error::Api(s))
                if s.is_not_found() && !self.rollback && self.keep_old_name =>
            {
                let list = rcs.list(&ListParams::default()).await?;
                let found = list.items.into_iter().find(|rc| {
                    annotation(rc, SOURCE_ID_ANNOTATION)
                        .is_some_and(|v| source_id_names(v, &self.old_name))
                });
                let Some(found) = found else {
                    bail!(
                        "couldn't find a replication controller with source id == {namespace}/{}",
                        self.old_name
                    );
                };
                self.check_in_progress_image(&found)?;
                if dry {
                    return Ok(());
                }
                let found = self.finish_scaling(&rcs, interrupt, console, found).await?;
                console.println(&format!(
                    "Renaming {} to {}",
                    controller::name(&found),
                    self.old_name
                ));
                let done =
                    handover::hand_over(&rcs, interrupt, &found, &self.old_name, self.timeout)
                        .await?;
                return self.print_final(console, &done, "rolling updated");
            }
            Err(kube::Error::Api(s))
                if s.is_not_found() && !self.rollback && self.args.len() > 1 =>
            {
                let finished = match rcs.get_opt(&self.args[1]).await? {
                    Some(rc)
                        if annotation(&rc, SOURCE_ID_ANNOTATION)
                            .is_some_and(|v| source_id_names(v, &self.old_name)) =>
                    {
                        rc
                    }
                    _ => return Err(kube::Error::Api(s).into()),
                };
                self.check_in_progress_image(&finished)?;
                if !dry {
                    let finished = self
                        .finish_scaling(&rcs, interrupt, console, finished)
                        .await?;
                    let done = strip_update_annotations(&rcs, interrupt, &finished).await?;
                    let operation = format!("rolling updated to {:?}", controller::name(&done));
                    return self.print_final(console, &done, &operation);
                }
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };

        // 3. --image: resume an in-progress update or derive the next RC.
        if !self.image.is_empty() {
            let new_name = find_new_name(&self.args, &old_rc);
            let existing = if new_name.is_empty() {
                None
            } else {
                rcs.get_opt(&new_name).await?
            };
            let next = match existing {
                Some(existing) => {
                    let in_progress = current_image(&existing, &self.container)
                        .unwrap_or_default()
                        .to_string();
                    if in_progress != self.image {
                        bail!(
                            "Found existing in-progress update to image ({in_progress}).\nEither continue in-progress update with --image={in_progress} or rollback with --rollback"
                        );
                    }
                    console.println(&format!(
                        "Found existing update in progress ({}), resuming.",
                        controller::name(&existing)
                    ));
                    existing
                }
                None => {
                    let mut cfg = NewControllerConfig {
                        new_name,
                        image: self.image.clone(),
                        container: self.container.clone(),
                        pull_policy: String::new(),
                        deployment_key: self.deployment_key.clone(),
                    };
                    if current_image(&old_rc, &self.container) == Some(self.image.as_str()) {
                        if self.pull_policy.is_empty() {
                            bail!(
                                "--image-pull-policy (Always|Never|IfNotPresent) must be provided when --image is the same as existing container image"
                            );
                        }
                        cfg.pull_policy = self.pull_policy.clone();
                    }
                    new_controller_from_current(&old_rc, &cfg)?
                }
            };
            let old_value = original_deployment_value(&old_rc);
            let next_name = controller::name(&next).to_string();
            old_rc = if dry {
                // Show the marks the old RC would get, without writing them.
                let mut rc = old_rc.clone();
                set_next_controller(&mut rc, &next_name);
                if needs_deployment_key(&rc, &self.deployment_key) {
                    add_template_label(&mut rc, &self.deployment_key, &old_value);
                    add_selector_label(&mut rc, &self.deployment_key, &old_value);
                }
                rc
            } else {
                mark_old_controller(
                    &rcs,
                    &pods,
                    interrupt,
                    &old_rc,
                    &next_name,
                    &self.deployment_key,
                    &old_value,
                )
                .await?
            };
            new_rc = Some(next);
        }

        // 4. --rollback: the partially rolled-out RC.
        if self.rollback {
            let new_name = find_new_name(&self.args, &old_rc);
            let found = if new_name.is_empty() {
                None
            } else {
                rcs.get_opt(&new_name).await?
            };
            let Some(found) = found else {
                // A rollback stopped after deleting the partial RC left only the
                // original's update annotations behind: finish by removing them.
                let finished = annotation(&old_rc, SOURCE_ID_ANNOTATION)
                    .is_some_and(|v| !new_name.is_empty() && source_id_names(v, &new_name));
                if finished && !dry {
                    let done = strip_update_annotations(&rcs, interrupt, &old_rc).await?;
                    return self.print_final(console, &done, "rolling updated");
                }
                // 1.17's message ends in "\n", which CheckErr does not double.
                bail!("Could not find {new_name} to rollback.");
            };
            new_rc = Some(found);
        }

        let Some(mut new_rc) = new_rc else {
            bail!("internal error: no new replication controller");
        };

        // 5-7. The name and selector rules, then the replica default.
        if self.old_name == controller::name(&new_rc) {
            bail!(
                "{filename} cannot have the same name as the existing ReplicationController {}",
                self.old_name
            );
        }
        if !selectors_differ(&old_rc, &new_rc) {
            bail!(
                "{filename} must specify a matching key with non-equal value in Selector for {}",
                self.old_name
            );
        }
        if replicas_defaulted {
            set_replicas(&mut new_rc, controller::replicas(&old_rc));
        }
        // --record: the change cause goes on the RC this update creates (an RC found
        // in progress keeps what its first run wrote). The hand-over copies it to the
        // final RC of a one-name update.
        if let Some(cause) = &self.change_cause
            && !self.rollback
        {
            set_annotation(&mut new_rc, shared::flags::CHANGE_CAUSE, cause.clone());
        }

        // 8. Dry run: print and stop.
        match self.dry_run {
            DryRunStrategy::None => {}
            DryRunStrategy::Client => {
                console.print(&dry_run_summary(&old_rc, &new_rc, &self.print)?);
                return Ok(());
            }
            DryRunStrategy::Server => {
                // Let the server validate and default the new RC without persisting it.
                let shown =
                    if self.rollback || rcs.get_opt(controller::name(&new_rc)).await?.is_some() {
                        new_rc.clone()
                    } else {
                        let mut probe = new_rc.clone();
                        probe.metadata.namespace = None;
                        rcs.create(
                            &PostParams {
                                dry_run: true,
                                ..Default::default()
                            },
                            &probe,
                        )
                        .await?
                    };
                console.print(&dry_run_summary(&old_rc, &shown, &self.print)?);
                return Ok(());
            }
        }

        // 9-11. The update itself.
        let mut config = UpdaterConfig {
            old_rc: old_rc.clone(),
            new_rc: new_rc.clone(),
            update_period: self.update_period,
            timeout: self.timeout,
            min_ready_seconds: self.min_ready_seconds,
            cleanup_policy: if self.keep_old_name {
                CleanupPolicy::Rename
            } else {
                CleanupPolicy::Delete
            },
            max_unavailable: self.max_unavailable.clone(),
            max_surge: self.max_surge.clone(),
        };
        if self.rollback {
            let (partial, original, message) = abort_rolling_update(&old_rc, &new_rc)?;
            console.println(&message);
            let source = annotation(&original, SOURCE_ID_ANNOTATION)
                .unwrap_or_default()
                .to_string();
            let desired = annotation(&original, DESIRED_REPLICAS_ANNOTATION)
                .unwrap_or_default()
                .to_string();
            // 1.17 ignored this update's error and failed later with a confusing
            // annotation message; ours retries conflicts and reports failures.
            let original = update_rc_with_retries(&rcs, interrupt, &original, |rc| {
                set_annotation(rc, SOURCE_ID_ANNOTATION, source.clone());
                set_annotation(rc, DESIRED_REPLICAS_ANNOTATION, desired.clone());
            })
            .await?;
            config.old_rc = partial;
            config.new_rc = original;
            config.cleanup_policy = CleanupPolicy::Delete;
        }
        let mut ops = KubeOps::new(
            rcs.clone(),
            pods,
            interrupt.clone(),
            self.poll_interval,
            self.timeout,
        );
        // Below the client's read timeout (main.rs bounds it by --timeout), so the
        // server ends a quiet watch before the client would cut it.
        ops.watch_timeout = u32::try_from(self.timeout.as_secs().saturating_sub(1))
            .unwrap_or(290)
            .clamp(1, 290);
        RollingUpdater::new(ops).update(&config, console).await?;
        console.finish();

        // 12. The final object.
        let (final_name, operation) = if self.keep_old_name || self.rollback {
            // A two-name rollback ends with the original RC; 1.17 fetched the RC it
            // had just deleted and could fail with NotFound here.
            (self.old_name.clone(), "rolling updated".to_string())
        } else {
            let n = controller::name(&new_rc).to_string();
            (n.clone(), format!("rolling updated to {n:?}"))
        };
        interrupt.check()?;
        let rc = rcs.get(&final_name).await?;
        self.print_final(console, &rc, &operation)
    }

    /// Prints the final object with `-o`'s printer.
    fn print_final(
        &self,
        console: &mut Console,
        rc: &ReplicationController,
        operation: &str,
    ) -> anyhow::Result<()> {
        console.finish();
        let printer = self.print.to_printer(operation, DryRunStrategy::None)?;
        console.print(&render(rc, printer.as_ref())?);
        Ok(())
    }

    /// With `--image`, an update found in progress must be to the same image (1.17's
    /// rule for a resumed update, applied as well when the old RC is already gone).
    fn check_in_progress_image(&self, rc: &ReplicationController) -> anyhow::Result<()> {
        if self.image.is_empty() {
            return Ok(());
        }
        let in_progress = current_image(rc, &self.container).unwrap_or_default();
        if in_progress != self.image {
            bail!(
                "Found existing in-progress update to image ({in_progress}).\nEither continue in-progress update with --image={in_progress} or rollback with --rollback"
            );
        }
        Ok(())
    }

    /// Finishes a one-name hand-over found pending on the cluster.
    async fn finish_hand_over(
        &self,
        rcs: &Api<ReplicationController>,
        interrupt: &Interrupt,
        console: &mut Console,
        pending: ReplicationController,
        dry: bool,
    ) -> anyhow::Result<()> {
        let from = handover::renamed_from(&pending)
            .unwrap_or_default()
            .to_string();
        if self.rollback {
            bail!(
                "the update of {:?} is past its last step (its old replication controller is deleted and {from:?} is being renamed to it); finish it by running the update again, then roll back with a new update",
                self.old_name
            );
        }
        self.check_in_progress_image(&pending)?;
        if dry {
            return Ok(());
        }
        console.println(&format!("Renaming {from} to {}", self.old_name));
        let deadline = tokio::time::Instant::now() + self.timeout;
        let done = handover::resume(rcs, interrupt, &pending, deadline).await?;
        self.print_final(console, &done, "rolling updated")
    }

    /// An update whose old RC is gone: before the last step, the new RC gets the
    /// replicas its `desired-replicas` annotation asks for, all available. (A run
    /// stopped half-way whose old RC was then deleted by hand would otherwise be
    /// renamed or finished at half its size.)
    async fn finish_scaling(
        &self,
        rcs: &Api<ReplicationController>,
        interrupt: &Interrupt,
        console: &mut Console,
        rc: ReplicationController,
    ) -> anyhow::Result<ReplicationController> {
        let rc_name = controller::name(&rc).to_string();
        let text = annotation(&rc, DESIRED_REPLICAS_ANNOTATION).unwrap_or_default();
        let desired: i32 = text.parse().map_err(|_| {
            anyhow::anyhow!(
                "Unable to parse annotation for {rc_name}: {DESIRED_REPLICAS_ANNOTATION}={text}"
            )
        })?;
        console.println(&format!(
            "Continuing update with existing controller {rc_name}."
        ));
        if controller::replicas(&rc) != desired {
            console.println(&format!("Scaling {rc_name} up to {desired}"));
            interrupt.check()?;
            let patch = serde_json::json!({ "spec": { "replicas": desired } });
            rcs.patch_scale(&rc_name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
        }
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            interrupt.check()?;
            let current = rcs.get(&rc_name).await?;
            let status = current.status.clone().unwrap_or_default();
            let synced =
                status.observed_generation.unwrap_or(0) >= current.metadata.generation.unwrap_or(0);
            if synced
                && status.replicas == desired
                && status.available_replicas.unwrap_or(0) >= desired
            {
                return Ok(current);
            }
            if tokio::time::Instant::now() >= deadline {
                bail!("timed out waiting for {rc_name:?} to have {desired} available pods");
            }
            interrupt
                .sleep_until(tokio::time::Instant::now() + Duration::from_millis(250))
                .await?;
        }
    }

    /// Turns an interruption into the message that tells the user how to go on.
    fn explain_interrupt(&self, err: anyhow::Error) -> anyhow::Error {
        let Some(interrupted) = err.chain().find_map(|c| c.downcast_ref::<Interrupted>()) else {
            return err;
        };
        Stopped {
            message: format!("error: {interrupted}"),
            hint: self.hints.text(self.rollback),
            exit_code: shared::cli::interrupt::exit_code(interrupted.signal),
        }
        .into()
    }
}

/// kubectl's `UpdateExistingReplicationController` (with
/// `AddDeploymentKeyToReplicationController`): point the old RC at the new one
/// and, if its selector lacks the deployment key, add it to its template, its
/// pods and its selector, in that order, so no pod is ever outside the selector.
async fn mark_old_controller(
    rcs: &Api<ReplicationController>,
    pods: &Api<Pod>,
    interrupt: &Interrupt,
    old: &ReplicationController,
    next_name: &str,
    key: &str,
    value: &str,
) -> anyhow::Result<ReplicationController> {
    if !needs_deployment_key(old, key) {
        return update_rc_with_retries(rcs, interrupt, old, |rc| {
            set_next_controller(rc, next_name)
        })
        .await;
    }
    let rc = update_rc_with_retries(rcs, interrupt, old, |rc| {
        set_next_controller(rc, next_name);
        add_template_label(rc, key, value);
    })
    .await?;
    interrupt.check()?;
    let selector = controller::selector_string(&rc);
    let listed = pods.list(&ListParams::default().labels(&selector)).await?;
    for pod in &listed.items {
        update_pod_with_retries(pods, interrupt, pod, |p| {
            p.metadata
                .labels
                .get_or_insert_with(Default::default)
                .insert(key.to_string(), value.to_string());
        })
        .await?;
    }
    let original_selector = selector;
    let rc = update_rc_with_retries(rcs, interrupt, &rc, |rc| add_selector_label(rc, key, value))
        .await?;
    // 1.17's `selectorCopy` clean-up: the RC manager may have created a pod from the
    // template it had cached before our first write, i.e. without the key. Such a pod
    // no longer matches the RC's selector and would be left running the old image
    // with no controller: delete it. Pods of another controller are not ours to touch.
    interrupt.check()?;
    let uid = rc.metadata.uid.clone();
    let stray = pods
        .list(&ListParams::default().labels(&original_selector))
        .await?;
    for pod in &stray.items {
        let labelled = pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(key))
            .is_some_and(|v| v == value);
        let controller = pod
            .metadata
            .owner_references
            .as_ref()
            .and_then(|refs| refs.iter().find(|o| o.controller == Some(true)))
            .map(|o| o.uid.clone());
        if labelled || (controller.is_some() && controller != uid) {
            continue;
        }
        interrupt.check()?;
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        match pods.delete(&pod_name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(rc)
}
