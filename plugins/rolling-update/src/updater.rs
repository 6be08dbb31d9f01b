//! The rolling updater: kubectl 1.17's `RollingUpdater.Update`, with its cluster
//! operations behind the [`UpdaterOps`] seam so the whole algorithm runs in unit
//! tests against a simulated cluster (see `updater/tests.rs`).
//!
//! The arithmetic ([`scale_up_target`], [`scale_down_target`]) and the order of
//! operations are 1.17's, so the printed `Scaling …` lines are the same whenever
//! pods become ready as fast as 1.17's unit tests assume. What differs is only
//! *when* the loop re-evaluates: 1.17 slept `--update-period` on every iteration;
//! here an iteration that made no progress waits for the next change the cluster
//! reports ([`UpdaterOps::wait_for_change`]), and `--update-period` is only the
//! minimum time between a scale-up and the scale-down that follows it.

use std::time::Duration;

use crate::model::ReplicationController;
use anyhow::bail;
use tokio::time::Instant;

use crate::controller::{name, replicas};
use crate::fencepost::{IntOrPercent, resolve_fenceposts};
use crate::names::{
    DESIRED_REPLICAS_ANNOTATION, ORIGINAL_REPLICAS_ANNOTATION, annotation, source_id,
};

/// What happens to the old RC once the new one has all the replicas. (1.17's
/// library also had `Preserve`, which the command never used.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CleanupPolicy {
    /// Delete the old RC (two names given, or a rollback).
    Delete,
    /// Delete the old RC, then rename the new one to the old name (one name given).
    Rename,
}

/// The updater's inputs (kubectl's `RollingUpdaterConfig`).
#[derive(Debug, Clone)]
pub struct UpdaterConfig {
    pub old_rc: ReplicationController,
    pub new_rc: ReplicationController,
    /// Minimum time between scaling the new RC up and scaling the old RC down.
    pub update_period: Duration,
    /// Bound on each wait, and on the time without progress.
    pub timeout: Duration,
    pub min_ready_seconds: i32,
    pub cleanup_policy: CleanupPolicy,
    /// What the steps before knew of `new_rc` on the server.
    pub target: Target,
    pub max_unavailable: IntOrPercent,
    pub max_surge: IntOrPercent,
}

/// What the steps before the update (`prepare`) learnt about the RC the update scales
/// up, so that the updater asks the server only what they did not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Read (or written) on the server by these steps: the copy is current.
    Found,
    /// Derived from the old RC for `--image`, its name not found on the server: the
    /// updater creates it, reading it only if the create finds it there.
    Derived,
    /// From `-f`: the updater looks it up, then creates it if it is not there.
    Unknown,
}

/// Where progress goes: the classic lines (stdout) and, on a terminal, a bar.
pub trait Report {
    /// One classic output line, without the newline.
    fn line(&mut self, line: &str);
    /// The replica counts after a step or a readiness change.
    fn progress(&mut self, _progress: &Progress) {}
}

/// A snapshot for the progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub new_replicas: i32,
    pub old_replicas: i32,
    pub desired: i32,
    pub new_ready: i32,
}

/// The cluster operations the algorithm needs; `cluster.rs` implements them with
/// kube, the unit tests with a simulation. Every method may fail with
/// [`cli::interrupt::Interrupted`] when the user pressed Ctrl-C.
#[allow(async_fn_in_trait)] // used with concrete types only, never as `dyn`
pub trait UpdaterOps {
    /// The update's first requests, at once: finds the target RC of an interrupted
    /// update (checking it belongs to `source_id`) or creates it with `replicas: 0`,
    /// asking the server only what `known` leaves open; starts watching `old_rc`, the
    /// target and their pods; and, with `record_original`, records
    /// `original-replicas` on `old_rc` ([`Self::record_original_replicas`]). Returns
    /// the target, whether it existed, and the old RC as the recording left it.
    async fn begin(
        &mut self,
        old_rc: &ReplicationController,
        new_rc: &ReplicationController,
        known: Target,
        source_id: &str,
        record_original: bool,
    ) -> anyhow::Result<Begun>;

    /// Records `original-replicas` (the replica count `old_rc` has now) on the old RC.
    async fn record_original_replicas(
        &mut self,
        old_rc: &ReplicationController,
    ) -> anyhow::Result<ReplicationController>;

    /// Sets `spec.replicas` and waits until the RC's status reports that many pods.
    async fn scale_and_wait(
        &mut self,
        rc: &ReplicationController,
        replicas: i32,
        timeout: Duration,
    ) -> anyhow::Result<ReplicationController>;

    /// Waits until the RC manager has acted on `rc`'s spec: it has observed its
    /// generation and counts no more pods than it asks for. Sends nothing.
    async fn wait_synced(
        &mut self,
        rc: &ReplicationController,
        timeout: Duration,
    ) -> anyhow::Result<ReplicationController>;

    /// `(old, new)` available pods: Ready, not being deleted, and ready for at
    /// least `min_ready_seconds`.
    async fn ready_pods(
        &mut self,
        old_rc: &ReplicationController,
        new_rc: &ReplicationController,
        min_ready_seconds: i32,
    ) -> anyhow::Result<(i32, i32)>;

    /// Returns once pod readiness may have changed since the last
    /// [`Self::ready_pods`], or at `until`.
    async fn wait_for_change(&mut self, until: Instant) -> anyhow::Result<()>;

    /// Sleeps until `until`, or less: it returns as soon as a pod of either RC may
    /// have changed since the last [`Self::ready_pods`] (the clock seam;
    /// interruptible). The `--update-period` pause sleeps through it in a loop, so
    /// that the progress line's ready count follows the pods while it waits.
    async fn sleep_until(&mut self, until: Instant) -> anyhow::Result<()>;

    /// Waits for the new RC to settle, applies the cleanup policy (printing its lines
    /// through `report`) and strips the update annotations. Returns the RC that is
    /// left, as the last write returned it (1.17 fetched it again to print it).
    async fn cleanup(
        &mut self,
        old_rc: &ReplicationController,
        new_rc: &ReplicationController,
        config: &UpdaterConfig,
        report: &mut dyn Report,
    ) -> anyhow::Result<ReplicationController>;
}

/// What [`UpdaterOps::begin`] found or made.
#[derive(Debug, Clone)]
pub struct Begun {
    /// The RC the update scales up.
    pub target: ReplicationController,
    /// Whether it existed (an interrupted update is resumed).
    pub existed: bool,
    /// The old RC, with `original-replicas` when it was recorded.
    pub old_rc: ReplicationController,
}

/// The scale-up step: the new RC's next replica count, or `None` for no step.
pub fn scale_up_target(
    new_replicas: i32,
    old_replicas: i32,
    desired: i32,
    max_surge: i32,
) -> Option<i32> {
    if new_replicas == desired {
        return None;
    }
    let increment = if old_replicas == 0 {
        // Nothing left to surge over: go straight to the goal.
        desired - new_replicas
    } else {
        (desired + max_surge) - (old_replicas + new_replicas)
    };
    if increment <= 0 {
        return None;
    }
    Some((new_replicas + increment).min(desired))
}

/// The scale-down step: the old RC's next replica count, or `None` for no step.
/// Only the *new* RC's availability counts, so a flapping old RC cannot stall the
/// rollout (1.17's rule).
pub fn scale_down_target(
    old_replicas: i32,
    new_replicas: i32,
    desired: i32,
    min_available: i32,
    new_available: i32,
) -> Option<i32> {
    if old_replicas == 0 {
        return None;
    }
    let all_pods = old_replicas + new_replicas;
    let new_unavailable = new_replicas - new_available;
    let decrement = all_pods - min_available - new_unavailable;
    if decrement <= 0 {
        return None;
    }
    let mut target = (old_replicas - decrement).max(0);
    if new_replicas == desired && new_available == desired {
        target = 0;
    }
    Some(target)
}

/// The header line printed before the first step.
pub fn header_line(
    new_rc: &str,
    new_replicas: i32,
    desired: i32,
    old_rc: &str,
    old_replicas: i32,
    min_available: i32,
    max_total: i32,
) -> String {
    format!(
        "Scaling up {new_rc} from {new_replicas} to {desired}, scaling down {old_rc} from {old_replicas} to 0 (keep {min_available} pods available, don't exceed {max_total} pods)"
    )
}

/// Drives one update with the given operations.
pub struct RollingUpdater<O> {
    pub ops: O,
}

impl<O: UpdaterOps> RollingUpdater<O> {
    pub fn new(ops: O) -> Self {
        Self { ops }
    }

    /// Runs the update to completion (kubectl's `Update`); returns the RC that is left.
    pub async fn update(
        &mut self,
        config: &UpdaterConfig,
        report: &mut dyn Report,
    ) -> anyhow::Result<ReplicationController> {
        let (new_rc, old_rc, desired) = self.begin(config, report).await?;
        let mut run = limits(config, report, new_rc, old_rc, desired)?;
        if replicas(&run.new_rc) != desired && replicas(&run.old_rc) != 0 {
            // maxSurge bounds the two RCs' replicas, and so their pods only once the
            // RC manager has made the old RC's count true: a run resumed right after
            // a scale-down (its pod not yet deleted), or an old RC whose pods the RC
            // manager is still sorting out after the deployment key's relabelling,
            // would otherwise get a scale-up on top. Each later scale-up follows a
            // scale-down that waited for the same (1.17 did not wait here).
            run.old_rc = self.ops.wait_synced(&run.old_rc, config.timeout).await?;
        }
        let mut deadline = Instant::now() + config.timeout;
        while replicas(&run.new_rc) != desired || replicas(&run.old_rc) != 0 {
            let before = run.sizes();
            self.scale_up(config, report, &mut run).await?;
            if replicas(&run.old_rc) != 0 {
                self.scale_down(config, report, &mut run).await?;
            }
            if before != run.sizes() {
                deadline = Instant::now() + config.timeout;
            } else if Instant::now() >= deadline {
                bail!("timed out waiting for any update progress to be made");
            } else {
                // Nothing could move: wait for readiness to change instead of
                // polling on a fixed period.
                self.ops.wait_for_change(deadline).await?;
            }
        }
        report.progress(&snapshot(&run.old_rc, &run.new_rc, desired, desired));
        self.ops
            .cleanup(&run.old_rc, &run.new_rc, config, report)
            .await
    }

    /// Creates the new RC or continues with the existing one, and records the old
    /// RC's original size; returns the new RC, the old one and the desired replicas.
    async fn begin(
        &mut self,
        config: &UpdaterConfig,
        report: &mut dyn Report,
    ) -> anyhow::Result<(ReplicationController, ReplicationController, i32)> {
        let source = source_id(&config.old_rc);
        // The original size is what a later --rollback restores: written when this
        // update starts (a value left by an earlier, finished update would make a
        // rollback restore a stale size), kept when it is resumed. Without one it is
        // written either way, so that write goes out with the create; a value already
        // there is only replaced once the create said the update is a new one.
        let missing = annotation(&config.old_rc, ORIGINAL_REPLICAS_ANNOTATION).is_none();
        let Begun {
            target: new_rc,
            existed,
            mut old_rc,
        } = self
            .ops
            .begin(
                &config.old_rc,
                &config.new_rc,
                config.target,
                &source,
                missing,
            )
            .await?;
        if existed {
            report.line(&format!(
                "Continuing update with existing controller {}.",
                name(&new_rc)
            ));
        } else {
            report.line(&format!("Created {}", name(&new_rc)));
        }
        let desired_text = annotation(&new_rc, DESIRED_REPLICAS_ANNOTATION).unwrap_or_default();
        let desired: i32 = desired_text.parse().map_err(|_| {
            anyhow::anyhow!(
                "Unable to parse annotation for {}: {DESIRED_REPLICAS_ANNOTATION}={desired_text}",
                name(&new_rc)
            )
        })?;
        let current = replicas(&old_rc).to_string();
        if !missing
            && !existed
            && annotation(&old_rc, ORIGINAL_REPLICAS_ANNOTATION) != Some(current.as_str())
        {
            old_rc = self.ops.record_original_replicas(&old_rc).await?;
        }
        Ok((new_rc, old_rc, desired))
    }

    /// Scales the new RC up by as much as the surge allows, if it is not there yet.
    async fn scale_up(
        &mut self,
        config: &UpdaterConfig,
        report: &mut dyn Report,
        run: &mut Run,
    ) -> anyhow::Result<()> {
        let Some(to) = scale_up_target(
            replicas(&run.new_rc),
            replicas(&run.old_rc),
            run.desired,
            run.max_surge,
        ) else {
            return Ok(());
        };
        report.line(&format!("Scaling {} up to {to}", name(&run.new_rc)));
        run.new_rc = self
            .ops
            .scale_and_wait(&run.new_rc, to, config.timeout)
            .await?;
        run.last_up = Some(Instant::now());
        // The count of the last scale-down is stale by now (pods may have become
        // ready while this step waited): count again, from the watch's store.
        run.new_ready = self.count_ready(config, run).await?;
        report.progress(&run.progress());
        Ok(())
    }

    /// Scales the old RC down by as much as the new RC's ready pods allow, once the
    /// update period since the last scale-up has passed.
    async fn scale_down(
        &mut self,
        config: &UpdaterConfig,
        report: &mut dyn Report,
        run: &mut Run,
    ) -> anyhow::Result<()> {
        let mut target = self.scale_down_now(config, run).await?;
        if target.is_some() && pause_needed(config, run.last_up) {
            // Readiness may drop while we pause: decide again afterwards, as
            // 1.17 did by measuring only after its sleep.
            if let Some(t) = run.last_up {
                self.pause(config, report, run, t + config.update_period)
                    .await?;
            }
            target = self.scale_down_now(config, run).await?;
        }
        if let Some(to) = target {
            report.line(&format!("Scaling {} down to {to}", name(&run.old_rc)));
            run.old_rc = self
                .ops
                .scale_and_wait(&run.old_rc, to, config.timeout)
                .await?;
        }
        report.progress(&run.progress());
        Ok(())
    }

    /// Waits out `--update-period` until `until`. The progress line shows the new
    /// RC's ready pods as they become ready, not the count from before the pause
    /// (it read `ready 0` for the whole pause while the new pod was Ready): first
    /// the count that started the pause, then, as each pod change wakes the sleep,
    /// the count read again from the watch's store (no request).
    async fn pause(
        &mut self,
        config: &UpdaterConfig,
        report: &mut dyn Report,
        run: &mut Run,
        until: Instant,
    ) -> anyhow::Result<()> {
        report.progress(&run.progress());
        while Instant::now() < until {
            self.ops.sleep_until(until).await?;
            let ready = self.count_ready(config, run).await?;
            if ready != run.new_ready {
                run.new_ready = ready;
                report.progress(&run.progress());
            }
        }
        Ok(())
    }

    /// The new RC's available pods now.
    async fn count_ready(&mut self, config: &UpdaterConfig, run: &Run) -> anyhow::Result<i32> {
        Ok(self
            .ops
            .ready_pods(&run.old_rc, &run.new_rc, config.min_ready_seconds)
            .await?
            .1)
    }

    /// The old RC's next size from the new RC's pods ready now (kept in `run`).
    async fn scale_down_now(
        &mut self,
        config: &UpdaterConfig,
        run: &mut Run,
    ) -> anyhow::Result<Option<i32>> {
        let available = self.count_ready(config, run).await?;
        run.new_ready = available;
        Ok(scale_down_target(
            replicas(&run.old_rc),
            replicas(&run.new_rc),
            run.desired,
            run.min_available,
            available,
        ))
    }
}

/// An update between its steps.
struct Run {
    new_rc: ReplicationController,
    old_rc: ReplicationController,
    desired: i32,
    max_surge: i32,
    min_available: i32,
    /// --update-period is measured from the last scale-up to the next scale-down:
    /// the settling time new pods get before old ones go (1.17 slept it between
    /// the two halves of every iteration).
    last_up: Option<Instant>,
    /// The new RC's ready pods when last counted.
    new_ready: i32,
}

impl Run {
    /// Where the update stands, with the new RC's ready pods as last counted.
    fn progress(&self) -> Progress {
        snapshot(&self.old_rc, &self.new_rc, self.desired, self.new_ready)
    }

    /// The new RC's and the old RC's sizes: whether a step moved anything.
    fn sizes(&self) -> (i32, i32) {
        (replicas(&self.new_rc), replicas(&self.old_rc))
    }
}

/// The surge and availability bounds for `desired` replicas, with the header line
/// that states them; the update's starting point.
fn limits(
    config: &UpdaterConfig,
    report: &mut dyn Report,
    new_rc: ReplicationController,
    old_rc: ReplicationController,
    desired: i32,
) -> anyhow::Result<Run> {
    let (max_surge, max_unavailable) =
        resolve_fenceposts(&config.max_surge, &config.max_unavailable, desired)?;
    if desired > 0 && max_surge == 0 && max_unavailable == 0 {
        // Unreachable through resolve_fenceposts, kept as 1.17 has it.
        bail!("one of maxSurge or maxUnavailable must be specified");
    }
    // Scaling to zero keeps nothing available (1.17 also widened maxUnavailable
    // to the old size here, but nothing reads it afterwards).
    let min_available = if desired == 0 {
        0
    } else {
        (desired - max_unavailable).max(0)
    };
    report.line(&header_line(
        name(&new_rc),
        replicas(&new_rc),
        desired,
        name(&old_rc),
        replicas(&old_rc),
        min_available,
        desired + max_surge,
    ));
    Ok(Run {
        new_rc,
        old_rc,
        desired,
        max_surge,
        min_available,
        last_up: None,
        new_ready: 0,
    })
}

fn pause_needed(config: &UpdaterConfig, last_up: Option<Instant>) -> bool {
    last_up.is_some_and(|t| Instant::now() < t + config.update_period)
}

fn snapshot(
    old_rc: &ReplicationController,
    new_rc: &ReplicationController,
    desired: i32,
    new_ready: i32,
) -> Progress {
    Progress {
        new_replicas: replicas(new_rc),
        old_replicas: replicas(old_rc),
        desired,
        new_ready,
    }
}

#[cfg(test)]
mod tests;
