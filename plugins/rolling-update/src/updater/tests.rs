//! The updater against a simulated cluster on tokio's paused clock.
//!
//! The simulation creates new pods when the new RC is scaled up and makes each
//! one Ready `ready_delay` after its creation; old pods are always Ready. With a
//! zero delay this is the "fast readiness" of kubectl 1.17's own unit tests, whose
//! expected output the first table reproduces line for line.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::model::ReplicationController;
use crate::model::replication_controller::ReplicationControllerSpec;
use kube::api::ObjectMeta;
use tokio::time::Instant;

use super::*;
use crate::fencepost::IntOrPercent::{self, Int, Str};
use crate::names::SOURCE_ID_ANNOTATION;

const UID: &str = "7764ae47-9092-11e4-8393-42010af018ff";

fn old_rc(replicas: i32, original: Option<i32>) -> ReplicationController {
    let mut annotations = BTreeMap::new();
    if let Some(n) = original {
        annotations.insert(ORIGINAL_REPLICAS_ANNOTATION.to_string(), n.to_string());
    }
    ReplicationController {
        metadata: ObjectMeta {
            name: Some("foo-v1".into()),
            uid: Some(UID.into()),
            annotations: Some(annotations),
            ..Default::default()
        },
        spec: Some(ReplicationControllerSpec {
            replicas: Some(replicas),
            ..Default::default()
        }),
        status: None,
        ..Default::default()
    }
}

fn new_rc(replicas: i32, desired: &str) -> ReplicationController {
    let annotations = BTreeMap::from([
        (DESIRED_REPLICAS_ANNOTATION.to_string(), desired.to_string()),
        (SOURCE_ID_ANNOTATION.to_string(), format!("foo-v1:{UID}")),
    ]);
    ReplicationController {
        metadata: ObjectMeta {
            name: Some("foo-v2".into()),
            annotations: Some(annotations),
            ..Default::default()
        },
        spec: Some(ReplicationControllerSpec {
            replicas: Some(replicas),
            ..Default::default()
        }),
        status: None,
        ..Default::default()
    }
}

/// A tiny cluster: two RCs, the new RC's pods with their Ready times.
struct Sim {
    existed: bool,
    ready_delay: Duration,
    /// Ready time of each new pod, oldest first.
    new_pods: Vec<Instant>,
    old_replicas: i32,
    calls: Vec<String>,
    /// Lowest `old replicas + ready new pods` seen right after any scale-down.
    min_available_seen: i32,
    /// Highest `old + new replicas` seen after any scale.
    max_total_seen: i32,
    cleaned_up: Option<CleanupPolicy>,
}

impl Sim {
    fn new(
        old: &ReplicationController,
        new: &ReplicationController,
        existed: bool,
        ready_delay: Duration,
    ) -> Self {
        let now = Instant::now();
        Sim {
            existed,
            ready_delay,
            // Pods of a resumed update are already up.
            new_pods: vec![now; replicas(new) as usize],
            old_replicas: replicas(old),
            calls: Vec::new(),
            min_available_seen: i32::MAX,
            max_total_seen: 0,
            cleaned_up: None,
        }
    }

    fn new_ready(&self) -> i32 {
        let now = Instant::now();
        self.new_pods.iter().filter(|t| **t <= now).count() as i32
    }
}

impl UpdaterOps for Sim {
    async fn begin(
        &mut self,
        old_rc: &ReplicationController,
        new_rc: &ReplicationController,
        _known: Target,
        source_id: &str,
        record_original: bool,
    ) -> anyhow::Result<Begun> {
        self.calls
            .push(format!("begin {source_id} record={record_original}"));
        Ok(Begun {
            target: new_rc.clone(),
            existed: self.existed,
            old_rc: if record_original {
                recorded(old_rc)
            } else {
                old_rc.clone()
            },
        })
    }

    async fn record_original_replicas(
        &mut self,
        old_rc: &ReplicationController,
    ) -> anyhow::Result<ReplicationController> {
        self.calls.push("record_original_replicas".into());
        Ok(recorded(old_rc))
    }

    async fn scale_and_wait(
        &mut self,
        rc: &ReplicationController,
        to: i32,
        _timeout: Duration,
    ) -> anyhow::Result<ReplicationController> {
        let mut rc = rc.clone();
        crate::controller::set_replicas(&mut rc, to);
        if name(&rc) == "foo-v2" {
            let now = Instant::now();
            let to = to as usize;
            if to > self.new_pods.len() {
                self.new_pods.resize(to, now + self.ready_delay);
            } else {
                self.new_pods.truncate(to);
            }
        } else {
            self.old_replicas = to;
            self.min_available_seen = self.min_available_seen.min(to + self.new_ready());
        }
        self.max_total_seen = self
            .max_total_seen
            .max(self.old_replicas + self.new_pods.len() as i32);
        self.calls.push(format!("scale {} {to}", name(&rc)));
        Ok(rc)
    }

    async fn wait_synced(
        &mut self,
        rc: &ReplicationController,
        _timeout: Duration,
    ) -> anyhow::Result<ReplicationController> {
        // The simulation's RCs always have the pods they ask for.
        self.calls.push(format!("wait_synced {}", name(rc)));
        Ok(rc.clone())
    }

    async fn ready_pods(
        &mut self,
        _old: &ReplicationController,
        _new: &ReplicationController,
        _min_ready_seconds: i32,
    ) -> anyhow::Result<(i32, i32)> {
        Ok((self.old_replicas, self.new_ready()))
    }

    async fn wait_for_change(&mut self, until: Instant) -> anyhow::Result<()> {
        let now = Instant::now();
        let next = self
            .new_pods
            .iter()
            .copied()
            .filter(|t| *t > now)
            .min()
            .unwrap_or(until);
        tokio::time::sleep_until(next.min(until)).await;
        Ok(())
    }

    async fn sleep_until(&mut self, until: Instant) -> anyhow::Result<()> {
        // As the watch does: a pod becoming ready wakes the sleep.
        let now = Instant::now();
        let next = self
            .new_pods
            .iter()
            .copied()
            .filter(|t| *t > now)
            .min()
            .unwrap_or(until);
        tokio::time::sleep_until(next.min(until)).await;
        Ok(())
    }

    async fn cleanup(
        &mut self,
        _old: &ReplicationController,
        new: &ReplicationController,
        config: &UpdaterConfig,
        _report: &mut dyn Report,
    ) -> anyhow::Result<ReplicationController> {
        self.cleaned_up = Some(config.cleanup_policy);
        Ok(new.clone())
    }
}

/// `old_rc` with `original-replicas` set to its replica count.
fn recorded(old_rc: &ReplicationController) -> ReplicationController {
    let mut rc = old_rc.clone();
    crate::names::set_annotation(
        &mut rc,
        ORIGINAL_REPLICAS_ANNOTATION,
        replicas(old_rc).to_string(),
    );
    rc
}

#[derive(Default)]
struct Lines(String);

impl Report for Lines {
    fn line(&mut self, line: &str) {
        self.0.push_str(line);
        self.0.push('\n');
    }
}

fn config(
    old: ReplicationController,
    new: ReplicationController,
    unavail: IntOrPercent,
    surge: IntOrPercent,
) -> UpdaterConfig {
    UpdaterConfig {
        old_rc: old,
        new_rc: new,
        update_period: Duration::ZERO,
        timeout: Duration::from_secs(300),
        min_ready_seconds: 0,
        cleanup_policy: CleanupPolicy::Delete,
        target: Target::Derived,
        max_unavailable: unavail,
        max_surge: surge,
    }
}

struct Outcome {
    output: String,
    sim: Sim,
    elapsed: Duration,
    result: anyhow::Result<ReplicationController>,
}

async fn run(config: UpdaterConfig, existed: bool, ready_delay: Duration) -> Outcome {
    let sim = Sim::new(&config.old_rc, &config.new_rc, existed, ready_delay);
    let mut updater = RollingUpdater::new(sim);
    let mut lines = Lines::default();
    let start = Instant::now();
    let result = updater.update(&config, &mut lines).await;
    Outcome {
        output: lines.0,
        sim: updater.ops,
        elapsed: start.elapsed(),
        result,
    }
}

fn p(s: &str) -> IntOrPercent {
    Str(s.into())
}

/// (name, old replicas, new replicas, desired, existed, maxUnavailable, maxSurge, output)
type Case = (
    &'static str,
    i32,
    i32,
    i32,
    bool,
    IntOrPercent,
    IntOrPercent,
    &'static str,
);

/// The "fast readiness" cases of kubectl 1.17's `TestUpdate`, with its expected
/// output verbatim.
fn kubectl_fast_readiness_cases() -> Vec<Case> {
    vec![
        ("10->10 30/0", 10, 0, 10, false, p("30%"), p("0%"), "Created foo-v2
Scaling up foo-v2 from 0 to 10, scaling down foo-v1 from 10 to 0 (keep 7 pods available, don't exceed 10 pods)
Scaling foo-v1 down to 7
Scaling foo-v2 up to 3
Scaling foo-v1 down to 4
Scaling foo-v2 up to 6
Scaling foo-v1 down to 1
Scaling foo-v2 up to 9
Scaling foo-v1 down to 0
Scaling foo-v2 up to 10
"),
        ("10->10 30/0 continuation", 7, 3, 10, false, p("30%"), p("0%"), "Created foo-v2
Scaling up foo-v2 from 3 to 10, scaling down foo-v1 from 7 to 0 (keep 7 pods available, don't exceed 10 pods)
Scaling foo-v1 down to 4
Scaling foo-v2 up to 6
Scaling foo-v1 down to 1
Scaling foo-v2 up to 9
Scaling foo-v1 down to 0
Scaling foo-v2 up to 10
"),
        ("10->10 30/0 restart before first scale-up", 7, 0, 10, false, p("30%"), p("0%"), "Created foo-v2
Scaling up foo-v2 from 0 to 10, scaling down foo-v1 from 7 to 0 (keep 7 pods available, don't exceed 10 pods)
Scaling foo-v2 up to 3
Scaling foo-v1 down to 4
Scaling foo-v2 up to 6
Scaling foo-v1 down to 1
Scaling foo-v2 up to 9
Scaling foo-v1 down to 0
Scaling foo-v2 up to 10
"),
        ("10->10 0/30", 10, 0, 10, false, p("0%"), p("30%"), "Created foo-v2
Scaling up foo-v2 from 0 to 10, scaling down foo-v1 from 10 to 0 (keep 10 pods available, don't exceed 13 pods)
Scaling foo-v2 up to 3
Scaling foo-v1 down to 7
Scaling foo-v2 up to 6
Scaling foo-v1 down to 4
Scaling foo-v2 up to 9
Scaling foo-v1 down to 1
Scaling foo-v2 up to 10
Scaling foo-v1 down to 0
"),
        ("10->10 10/20", 10, 0, 10, false, p("10%"), p("20%"), "Created foo-v2
Scaling up foo-v2 from 0 to 10, scaling down foo-v1 from 10 to 0 (keep 9 pods available, don't exceed 12 pods)
Scaling foo-v2 up to 2
Scaling foo-v1 down to 7
Scaling foo-v2 up to 5
Scaling foo-v1 down to 4
Scaling foo-v2 up to 8
Scaling foo-v1 down to 1
Scaling foo-v2 up to 10
Scaling foo-v1 down to 0
"),
        ("10->10 10/20 restart before first scale-down", 10, 2, 10, false, p("10%"), p("20%"), "Created foo-v2
Scaling up foo-v2 from 2 to 10, scaling down foo-v1 from 10 to 0 (keep 9 pods available, don't exceed 12 pods)
Scaling foo-v1 down to 7
Scaling foo-v2 up to 5
Scaling foo-v1 down to 4
Scaling foo-v2 up to 8
Scaling foo-v1 down to 1
Scaling foo-v2 up to 10
Scaling foo-v1 down to 0
"),
        ("10->10 0/100", 10, 0, 10, false, p("0%"), p("100%"), "Created foo-v2
Scaling up foo-v2 from 0 to 10, scaling down foo-v1 from 10 to 0 (keep 10 pods available, don't exceed 20 pods)
Scaling foo-v2 up to 10
Scaling foo-v1 down to 0
"),
        ("10->10 100/0", 10, 0, 10, false, p("100%"), p("0%"), "Created foo-v2
Scaling up foo-v2 from 0 to 10, scaling down foo-v1 from 10 to 0 (keep 0 pods available, don't exceed 10 pods)
Scaling foo-v1 down to 0
Scaling foo-v2 up to 10
"),
        ("3->3 1/1 absolute", 3, 0, 3, false, Int(0), Int(1), "Created foo-v2
Scaling up foo-v2 from 0 to 3, scaling down foo-v1 from 3 to 0 (keep 3 pods available, don't exceed 4 pods)
Scaling foo-v2 up to 1
Scaling foo-v1 down to 2
Scaling foo-v2 up to 2
Scaling foo-v1 down to 1
Scaling foo-v2 up to 3
Scaling foo-v1 down to 0
"),
        ("10->10 0/20 partial first scale-up", 6, 5, 10, false, p("0%"), p("20%"), "Created foo-v2
Scaling up foo-v2 from 5 to 10, scaling down foo-v1 from 6 to 0 (keep 10 pods available, don't exceed 12 pods)
Scaling foo-v2 up to 6
Scaling foo-v1 down to 4
Scaling foo-v2 up to 8
Scaling foo-v1 down to 2
Scaling foo-v2 up to 10
Scaling foo-v1 down to 0
"),
        ("10->20 0/300", 10, 0, 20, false, p("0%"), p("300%"), "Created foo-v2
Scaling up foo-v2 from 0 to 20, scaling down foo-v1 from 10 to 0 (keep 20 pods available, don't exceed 80 pods)
Scaling foo-v2 up to 20
Scaling foo-v1 down to 0
"),
    ]
}

/// Cases of our own: the CLI defaults (1 surge, 0 unavailable), growing and
/// shrinking updates, scaling to zero, resuming.
fn own_cases() -> Vec<Case> {
    vec![
        ("cli defaults 2->2", 2, 0, 2, false, Int(0), Int(1), "Created foo-v2
Scaling up foo-v2 from 0 to 2, scaling down foo-v1 from 2 to 0 (keep 2 pods available, don't exceed 3 pods)
Scaling foo-v2 up to 1
Scaling foo-v1 down to 1
Scaling foo-v2 up to 2
Scaling foo-v1 down to 0
"),
        ("cli defaults 1->1", 1, 0, 1, false, Int(0), Int(1), "Created foo-v2
Scaling up foo-v2 from 0 to 1, scaling down foo-v1 from 1 to 0 (keep 1 pods available, don't exceed 2 pods)
Scaling foo-v2 up to 1
Scaling foo-v1 down to 0
"),
        ("grow 3->5", 3, 0, 5, false, Int(0), Int(1), "Created foo-v2
Scaling up foo-v2 from 0 to 5, scaling down foo-v1 from 3 to 0 (keep 5 pods available, don't exceed 6 pods)
Scaling foo-v2 up to 3
Scaling foo-v1 down to 2
Scaling foo-v2 up to 4
Scaling foo-v1 down to 1
Scaling foo-v2 up to 5
Scaling foo-v1 down to 0
"),
        ("shrink 5->2", 5, 0, 2, false, Int(0), Int(1), "Created foo-v2
Scaling up foo-v2 from 0 to 2, scaling down foo-v1 from 5 to 0 (keep 2 pods available, don't exceed 3 pods)
Scaling foo-v1 down to 2
Scaling foo-v2 up to 1
Scaling foo-v1 down to 1
Scaling foo-v2 up to 2
Scaling foo-v1 down to 0
"),
        ("30->2 50%/0", 30, 0, 2, false, p("50%"), Int(0), "Created foo-v2
Scaling up foo-v2 from 0 to 2, scaling down foo-v1 from 30 to 0 (keep 1 pods available, don't exceed 2 pods)
Scaling foo-v1 down to 1
Scaling foo-v2 up to 1
Scaling foo-v1 down to 0
Scaling foo-v2 up to 2
"),
        ("1->2 25/25", 1, 0, 2, false, p("25%"), p("25%"), "Created foo-v2
Scaling up foo-v2 from 0 to 2, scaling down foo-v1 from 1 to 0 (keep 2 pods available, don't exceed 3 pods)
Scaling foo-v2 up to 2
Scaling foo-v1 down to 0
"),
        ("2->2 25/0 unavailable rounds down then becomes one", 2, 0, 2, false, p("25%"), p("0%"), "Created foo-v2
Scaling up foo-v2 from 0 to 2, scaling down foo-v1 from 2 to 0 (keep 1 pods available, don't exceed 2 pods)
Scaling foo-v1 down to 1
Scaling foo-v2 up to 1
Scaling foo-v1 down to 0
Scaling foo-v2 up to 2
"),
        ("3->0 desired zero", 3, 0, 0, true, Int(1), Int(1), "Continuing update with existing controller foo-v2.
Scaling up foo-v2 from 0 to 0, scaling down foo-v1 from 3 to 0 (keep 0 pods available, don't exceed 1 pods)
Scaling foo-v1 down to 0
"),
        ("0->0 nothing to do", 0, 0, 0, true, Int(1), Int(1), "Continuing update with existing controller foo-v2.
Scaling up foo-v2 from 0 to 0, scaling down foo-v1 from 0 to 0 (keep 0 pods available, don't exceed 1 pods)
"),
        ("resume at the goal, old not yet down", 1, 1, 1, true, Int(0), Int(1), "Continuing update with existing controller foo-v2.
Scaling up foo-v2 from 1 to 1, scaling down foo-v1 from 1 to 0 (keep 1 pods available, don't exceed 2 pods)
Scaling foo-v1 down to 0
"),
        ("resume cli defaults 4->4 half way", 2, 3, 4, true, Int(0), Int(1), "Continuing update with existing controller foo-v2.
Scaling up foo-v2 from 3 to 4, scaling down foo-v1 from 2 to 0 (keep 4 pods available, don't exceed 5 pods)
Scaling foo-v1 down to 1
Scaling foo-v2 up to 4
Scaling foo-v1 down to 0
"),
    ]
}

#[tokio::test(start_paused = true)]
async fn fast_readiness_prints_exactly_what_kubectl_1_17_prints() {
    for (case, old, new, desired, existed, unavail, surge, want) in kubectl_fast_readiness_cases()
        .into_iter()
        .chain(own_cases())
    {
        let cfg = config(
            old_rc(old, Some(old)),
            new_rc(new, &desired.to_string()),
            unavail,
            surge,
        );
        let out = run(cfg, existed, Duration::ZERO).await;
        assert!(out.result.is_ok(), "{case}: {:?}", out.result);
        assert_eq!(out.output, want, "{case}");
        assert_eq!(out.sim.cleaned_up, Some(CleanupPolicy::Delete), "{case}");
        assert_eq!(
            out.elapsed,
            Duration::ZERO,
            "{case}: fast readiness needs no waiting"
        );
    }
}

/// With slow readiness, the loop waits for pods instead of sleeping fixed
/// periods: it never takes a step that breaks the availability floor or the surge
/// ceiling, and finishes as soon as the readiness delays allow.
#[tokio::test(start_paused = true)]
async fn slow_readiness_keeps_the_fenceposts_and_wastes_no_time() {
    let delay = Duration::from_millis(300);
    // (old, desired, maxUnavailable, maxSurge, minAvailable, maxTotal, ready waits)
    let table = [
        (10, 10, Int(0), Int(1), 10, 11, 10),
        (3, 3, Int(0), Int(1), 3, 4, 3),
        (10, 10, p("30%"), p("0%"), 7, 10, 3),
        (10, 10, p("0%"), p("30%"), 10, 13, 4),
        (10, 10, p("10%"), p("20%"), 9, 12, 3),
        (4, 6, Int(1), Int(2), 5, 8, 2),
    ];
    for (old, desired, unavail, surge, min_available, max_total, waits) in table {
        let case = format!("{old}->{desired} {unavail}/{surge}");
        let cfg = config(
            old_rc(old, Some(old)),
            new_rc(0, &desired.to_string()),
            unavail,
            surge,
        );
        let out = run(cfg, false, delay).await;
        assert!(out.result.is_ok(), "{case}: {:?}", out.result);
        assert!(
            out.sim.min_available_seen >= min_available,
            "{case}: {} available",
            out.sim.min_available_seen
        );
        assert!(
            out.sim.max_total_seen <= max_total,
            "{case}: {} pods",
            out.sim.max_total_seen
        );
        assert_eq!(
            out.elapsed,
            delay * waits,
            "{case}: only the readiness delays are waited for"
        );
        assert!(
            out.output
                .ends_with(&format!("Scaling foo-v2 up to {desired}\n"))
                || out.output.ends_with("Scaling foo-v1 down to 0\n"),
            "{case}:\n{}",
            out.output
        );
    }
}

#[tokio::test(start_paused = true)]
async fn slow_readiness_with_cli_defaults_prints_the_fast_lines() {
    let want = "Created foo-v2
Scaling up foo-v2 from 0 to 3, scaling down foo-v1 from 3 to 0 (keep 3 pods available, don't exceed 4 pods)
Scaling foo-v2 up to 1
Scaling foo-v1 down to 2
Scaling foo-v2 up to 2
Scaling foo-v1 down to 1
Scaling foo-v2 up to 3
Scaling foo-v1 down to 0
";
    let cfg = config(old_rc(3, Some(3)), new_rc(0, "3"), Int(0), Int(1));
    let out = run(cfg, false, Duration::from_secs(7)).await;
    assert_eq!(out.output, want);
    assert_eq!(out.elapsed, Duration::from_secs(21));
}

#[tokio::test(start_paused = true)]
async fn update_period_is_the_pause_between_scale_up_and_scale_down() {
    let mut cfg = config(old_rc(3, Some(3)), new_rc(0, "3"), Int(0), Int(1));
    cfg.update_period = Duration::from_secs(60);
    let out = run(cfg.clone(), false, Duration::ZERO).await;
    assert!(out.result.is_ok());
    // Three scale-ups, each followed by a scale-down at least a minute later.
    assert_eq!(out.elapsed, Duration::from_secs(180));
    // Readiness slower than the period: the period is absorbed by the wait.
    let out = run(cfg, false, Duration::from_secs(90)).await;
    assert_eq!(out.elapsed, Duration::from_secs(270));
}

/// What the progress line was told, and when, beside the classic lines.
#[derive(Default)]
struct Timeline {
    start: Option<Instant>,
    events: Vec<(Duration, String)>,
}

impl Timeline {
    /// Records `what`; a progress equal to the one shown is not a new event.
    fn push(&mut self, what: String) {
        if what.starts_with("progress")
            && self
                .events
                .iter()
                .rev()
                .find(|(_, e)| e.starts_with("progress"))
                .map(|(_, e)| e)
                == Some(&what)
        {
            return;
        }
        let start = *self.start.get_or_insert_with(Instant::now);
        self.events.push((start.elapsed(), what));
    }
}

impl Report for Timeline {
    fn line(&mut self, line: &str) {
        self.push(line.to_string());
    }

    fn progress(&mut self, p: &Progress) {
        self.push(format!(
            "progress new {}/{} old {} ready {}",
            p.new_replicas, p.desired, p.old_replicas, p.new_ready
        ));
    }
}

/// The bar used to read `ready 0` through the whole `--update-period` pause while
/// the new pod was Ready. The pause shows each pod as it becomes ready, and the
/// scale-down still waits out the period.
#[tokio::test(start_paused = true)]
async fn the_progress_line_shows_pods_ready_during_the_update_period() {
    let mut cfg = config(old_rc(2, Some(2)), new_rc(0, "2"), Int(0), Int(1));
    cfg.update_period = Duration::from_secs(6);
    let sim = Sim::new(&cfg.old_rc, &cfg.new_rc, false, Duration::from_secs(1));
    let mut updater = RollingUpdater::new(sim);
    let mut timeline = Timeline {
        start: Some(Instant::now()),
        ..Timeline::default()
    };
    updater.update(&cfg, &mut timeline).await.unwrap();
    let s = Duration::from_secs;
    let events: Vec<(Duration, &str)> = timeline
        .events
        .iter()
        .map(|(t, e)| (*t, e.as_str()))
        .collect();
    assert_eq!(
        events,
        [
            (s(0), "Created foo-v2"),
            (
                s(0),
                "Scaling up foo-v2 from 0 to 2, scaling down foo-v1 from 2 to 0 (keep 2 pods available, don't exceed 3 pods)"
            ),
            (s(0), "Scaling foo-v2 up to 1"),
            (s(0), "progress new 1/2 old 2 ready 0"),
            // Ready a second after its creation, shown then, not after the pause.
            (s(1), "progress new 1/2 old 2 ready 1"),
            (s(6), "Scaling foo-v1 down to 1"),
            (s(6), "progress new 1/2 old 1 ready 1"),
            (s(6), "Scaling foo-v2 up to 2"),
            (s(6), "progress new 2/2 old 1 ready 1"),
            (s(7), "progress new 2/2 old 1 ready 2"),
            (s(12), "Scaling foo-v1 down to 0"),
            (s(12), "progress new 2/2 old 0 ready 2"),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn no_progress_times_out_with_kubectl_message() {
    let mut cfg = config(old_rc(2, Some(2)), new_rc(0, "2"), Int(0), Int(1));
    cfg.timeout = Duration::from_secs(42);
    let out = run(cfg, false, Duration::from_secs(3600)).await;
    let err = out.result.expect_err("must time out");
    assert_eq!(
        err.to_string(),
        "timed out waiting for any update progress to be made"
    );
    assert_eq!(
        out.elapsed,
        Duration::from_secs(42),
        "timeout measured from the last progress"
    );
    assert!(
        out.output.ends_with("Scaling foo-v2 up to 1\n"),
        "{}",
        out.output
    );
}

/// Whether the update wrote `original-replicas` on its own (not with `begin`).
fn wrote_original_replicas(calls: &[String]) -> bool {
    calls.iter().any(|c| c == "record_original_replicas")
}

#[tokio::test(start_paused = true)]
async fn records_original_replicas_when_the_update_starts_and_keeps_it_on_resume() {
    let begin = |record: bool| format!("begin foo-v1:{UID} record={record}");
    // None yet: recorded with the update's first requests, whether it starts or
    // resumes (a resumed update whose start was stopped before it recorded).
    for existed in [false, true] {
        let cfg = config(old_rc(1, None), new_rc(0, "1"), Int(0), Int(1));
        let out = run(cfg, existed, Duration::ZERO).await;
        assert!(out.result.is_ok());
        assert_eq!(out.sim.calls[0], begin(true), "existed: {existed}");
        assert!(!wrote_original_replicas(&out.sim.calls));
    }
    // A value left by an earlier, finished update is stale: a new update rewrites it,
    // once the create said it is a new one.
    let cfg = config(old_rc(1, Some(5)), new_rc(0, "1"), Int(0), Int(1));
    let out = run(cfg, false, Duration::ZERO).await;
    assert_eq!(out.sim.calls[0], begin(false));
    assert_eq!(
        out.sim.calls.get(1).map(String::as_str),
        Some("record_original_replicas")
    );
    // ... unless it is the count already: nothing to write.
    let cfg = config(old_rc(1, Some(1)), new_rc(0, "1"), Int(0), Int(1));
    let out = run(cfg, false, Duration::ZERO).await;
    assert!(!wrote_original_replicas(&out.sim.calls));
    // A resumed update keeps what its start recorded.
    let cfg = config(old_rc(1, Some(5)), new_rc(0, "1"), Int(0), Int(1));
    let out = run(cfg, true, Duration::ZERO).await;
    assert_eq!(out.sim.calls[0], begin(false));
    assert!(!wrote_original_replicas(&out.sim.calls));
}

#[tokio::test(start_paused = true)]
async fn bad_desired_annotation() {
    let cfg = config(old_rc(1, Some(1)), new_rc(0, "many"), Int(0), Int(1));
    let out = run(cfg, true, Duration::ZERO).await;
    assert_eq!(
        out.result.unwrap_err().to_string(),
        "Unable to parse annotation for foo-v2: kubectl.kubernetes.io/desired-replicas=many"
    );
}

/// A rollback of a half-done update is an update in the other direction: the
/// original RC is the target, its size comes from `original-replicas`.
#[tokio::test(start_paused = true)]
async fn rollback_of_a_half_done_update() {
    let mut original = old_rc(1, Some(3));
    original.metadata.name = Some("foo-v2".into()); // the target is named foo-v2 in the sim
    let mut partial = new_rc(2, "3");
    partial.metadata.name = Some("foo-v1".into());
    partial.metadata.uid = Some("partial-uid".into());
    let (old, new, message) = crate::controller::abort_rolling_update(&original, &partial).unwrap();
    assert_eq!(message, "Setting \"foo-v2\" replicas to 3");
    let mut cfg = config(old, new, Int(0), Int(1));
    cfg.cleanup_policy = CleanupPolicy::Delete;
    let out = run(cfg, true, Duration::from_secs(1)).await;
    assert!(out.result.is_ok(), "{:?}", out.result);
    assert_eq!(out.sim.calls[0], "begin foo-v1:partial-uid record=true");
    assert_eq!(
        out.output,
        "Continuing update with existing controller foo-v2.
Scaling up foo-v2 from 1 to 3, scaling down foo-v1 from 2 to 0 (keep 3 pods available, don't exceed 4 pods)
Scaling foo-v2 up to 2
Scaling foo-v1 down to 1
Scaling foo-v2 up to 3
Scaling foo-v1 down to 0
"
    );
}

#[test]
fn arithmetic_table() {
    // (new, old, desired, surge) -> scale-up target
    let up = [
        (0, 10, 10, 1, Some(1)),
        (1, 10, 10, 1, None),
        (1, 9, 10, 1, Some(2)),
        (10, 0, 10, 1, None),
        (3, 0, 10, 0, Some(10)),
        (0, 10, 10, 0, None),
        (0, 10, 20, 60, Some(20)),
        (5, 6, 10, 2, Some(6)),
        (0, 30, 2, 0, None),
    ];
    for (new, old, desired, surge, want) in up {
        assert_eq!(
            scale_up_target(new, old, desired, surge),
            want,
            "up {new} {old} {desired} {surge}"
        );
    }
    // (old, new, desired, minAvailable, newAvailable) -> scale-down target
    let down = [
        (10, 1, 10, 10, 0, None),
        (10, 1, 10, 10, 1, Some(9)),
        (10, 0, 10, 7, 0, Some(7)),
        (7, 3, 10, 7, 0, None),
        (7, 3, 10, 7, 1, Some(6)),
        (1, 10, 10, 10, 9, None),
        (1, 10, 10, 10, 10, Some(0)),
        (0, 10, 10, 10, 10, None),
        (30, 0, 2, 1, 0, Some(1)),
        (1, 1, 2, 1, 2, Some(0)),
        (3, 0, 0, 0, 0, Some(0)),
        (5, 3, 3, 3, 3, Some(0)),
    ];
    for (old, new, desired, min, avail, want) in down {
        assert_eq!(
            scale_down_target(old, new, desired, min, avail),
            want,
            "down {old} {new} {desired} {min} {avail}"
        );
    }
}

/// A run that begins (or resumes) scales up only once the RC manager counts no more
/// old pods than the old RC asks for: resumed right after a scale-down, the old pod
/// may still be there, and a scale-up on top would exceed the surge bound.
#[tokio::test(start_paused = true)]
async fn the_first_scale_up_waits_for_the_old_rc_to_be_synced() {
    let cfg = config(old_rc(1, Some(2)), new_rc(1, "2"), Int(0), Int(1));
    let out = run(cfg, true, Duration::ZERO).await;
    assert!(out.result.is_ok(), "{:?}", out.result);
    let calls: Vec<&str> = out.sim.calls.iter().map(String::as_str).collect();
    assert_eq!(
        calls[..3],
        [
            "begin foo-v1:7764ae47-9092-11e4-8393-42010af018ff record=false",
            "wait_synced foo-v1",
            "scale foo-v2 2"
        ],
        "{calls:?}"
    );
    // Nothing to scale up: no wait.
    let cfg = config(old_rc(1, Some(2)), new_rc(2, "2"), Int(0), Int(1));
    let out = run(cfg, true, Duration::ZERO).await;
    assert!(
        !out.sim.calls.iter().any(|c| c.starts_with("wait_synced")),
        "{:?}",
        out.sim.calls
    );
}
