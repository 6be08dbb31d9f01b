//! The simulated container runtime: no processes, only time. Each container
//! follows a script built from the pod's steering annotations and restart
//! policy, and its state at any moment is a pure function of that script,
//! the time elapsed since the pod started, and an optional stop request
//! ([`simulate`]). The runtime object only adds timers on top.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::jiff::Timestamp;

pub use super::backoff::RestartBackoff;
use super::pull;
use super::runtime::{
    ContainerObservation, ContainerRunState, PodObservation, PodRuntime, RestartPolicy, Runtime,
    Termination,
};
use super::steering::{Exit, Steering};

#[cfg(test)]
mod tests;

/// Exit code of a container killed by SIGKILL (128 + 9), as runtimes report it.
pub const SIGKILL_EXIT_CODE: i32 = 137;

/// A runtime whose containers exist only as timers.
#[derive(Clone, Debug)]
pub struct SimulatedRuntime {
    /// Readiness delay for pods without [`READY_AFTER_MS`](super::steering::READY_AFTER_MS).
    pub default_ready_after: Duration,
    /// Delay between a container's exit and its restart.
    pub backoff: RestartBackoff,
}

impl SimulatedRuntime {
    /// A runtime with the given default readiness delay and the default
    /// restart back-off.
    pub fn new(default_ready_after: Duration) -> Self {
        Self {
            default_ready_after,
            backoff: RestartBackoff::default(),
        }
    }
}

/// What one container does, derived from the pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerScript {
    /// Readiness delay after each start.
    pub ready_after: Duration,
    /// Never ready.
    pub never_ready: bool,
    /// Scripted exit of each run.
    pub exit: Option<Exit>,
    /// Keeps running after SIGTERM until killed.
    pub ignore_sigterm: bool,
    /// The pod's restart policy.
    pub restart: RestartPolicy,
    /// Back-off between runs.
    pub backoff: RestartBackoff,
}

/// A request to stop the containers, in time elapsed since the pod started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopRequest {
    /// When SIGTERM was sent.
    pub at: Duration,
    /// When SIGKILL follows.
    pub kill_at: Duration,
}

/// A container's state at one moment, in elapsed time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// Restarts so far (= index of the current or last run).
    pub restart_count: u32,
    /// The current state.
    pub state: SimState,
    /// The previous run's termination.
    pub last: Option<SimTermination>,
    /// When the state changes next on its own, if ever.
    pub next_change: Option<Duration>,
}

/// [`Timeline`] state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimState {
    /// Run `run` is running since `started`.
    Running {
        /// Start of the run.
        started: Duration,
        /// Ready now.
        ready: bool,
    },
    /// Waiting to restart after `last`.
    BackOff {
        /// The delay being waited out.
        delay: Duration,
    },
    /// Finished for good.
    Terminated(SimTermination),
}

/// The end of one run, in elapsed time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimTermination {
    /// Run index (0 = first start).
    pub run: u32,
    /// Exit code.
    pub exit_code: i32,
    /// Start of the run.
    pub started: Duration,
    /// End of the run.
    pub finished: Duration,
}

/// Where a container following `script` is, `elapsed` after the pod started,
/// given an optional stop request. Pure: the simulated runtime, the status
/// computation and the tests all rely on it giving the same answer for the
/// same inputs.
pub fn simulate(
    script: &ContainerScript,
    stop: Option<StopRequest>,
    elapsed: Duration,
) -> Timeline {
    let mut run = 0u32;
    let mut start = Duration::ZERO;
    let mut last = None;
    loop {
        let natural_end = script.exit.map(|e| start + e.after);
        // A stop ends the run at SIGTERM, or at SIGKILL when it is ignored.
        let (signal_end, killed) = match stop {
            None => (None, false),
            Some(s) if script.ignore_sigterm => (Some(s.kill_at.max(start)), true),
            Some(s) => (Some(s.at.max(start)), false),
        };
        let end = match (natural_end, signal_end) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let ready_at = (!script.never_ready).then(|| start + script.ready_after);

        let Some(end) = end.filter(|end| elapsed >= *end) else {
            // Still running.
            let ready_at = ready_at.filter(|r| end.is_none_or(|e| *r < e));
            let ready = ready_at.is_some_and(|r| elapsed >= r);
            let next_change = match (ready_at.filter(|r| elapsed < *r), end) {
                (Some(r), Some(e)) => Some(r.min(e)),
                (r, e) => r.or(e),
            };
            return Timeline {
                restart_count: run,
                state: SimState::Running {
                    started: start,
                    ready,
                },
                last,
                next_change,
            };
        };

        let by_signal = natural_end.is_none_or(|n| n > end);
        let exit_code = match (by_signal, killed) {
            (false, _) => script.exit.map_or(0, |e| e.code),
            (true, true) => SIGKILL_EXIT_CODE,
            // The simulated process shuts down cleanly on SIGTERM.
            (true, false) => 0,
        };
        let term = SimTermination {
            run,
            exit_code,
            started: start,
            finished: end,
        };
        if !by_signal && script.restart.restarts(exit_code) {
            let delay = script.backoff.delay(run);
            let next = end + delay;
            match stop {
                Some(s) if s.at <= next => {
                    // Stopped while backing off: the restart never happens.
                    if elapsed < s.at {
                        return Timeline {
                            restart_count: run,
                            state: SimState::BackOff { delay },
                            last: Some(term),
                            next_change: Some(s.at),
                        };
                    }
                }
                _ => {
                    if elapsed < next {
                        return Timeline {
                            restart_count: run,
                            state: SimState::BackOff { delay },
                            last: Some(term),
                            next_change: Some(next),
                        };
                    }
                    last = Some(term);
                    run = run.saturating_add(1);
                    start = next;
                    continue;
                }
            }
        }
        return Timeline {
            restart_count: run,
            state: SimState::Terminated(term),
            last,
            next_change: None,
        };
    }
}

impl Runtime for SimulatedRuntime {
    fn start_pod(&self, pod: &Pod, started_at: Timestamp) -> anyhow::Result<Box<dyn PodRuntime>> {
        let (steering, warnings) = Steering::from_annotations(pod.metadata.annotations.as_ref());
        for warning in warnings {
            tracing::warn!(
                pod = %pod_key(pod),
                "{warning}"
            );
        }
        let spec = pod.spec.as_ref();
        let script = ContainerScript {
            ready_after: steering.ready_after.unwrap_or(self.default_ready_after),
            never_ready: steering.never_ready,
            exit: steering.exit,
            ignore_sigterm: steering.ignore_sigterm,
            restart: RestartPolicy::from_spec(spec.and_then(|s| s.restart_policy.as_deref())),
            backoff: self.backoff,
        };
        let names = |containers: Option<&Vec<Container>>| -> Vec<(String, String)> {
            containers
                .map(|cs| {
                    cs.iter()
                        .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
                        .collect()
                })
                .unwrap_or_default()
        };
        Ok(Box::new(SimulatedPod {
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            kubelet_pod_name: format!(
                "{}_{}",
                pod.metadata.name.as_deref().unwrap_or_default(),
                pod.metadata.namespace.as_deref().unwrap_or_default()
            ),
            started_at,
            script,
            init_containers: names(spec.and_then(|s| s.init_containers.as_ref())),
            containers: names(spec.map(|s| &s.containers)),
            stop: None,
            wake_at: None,
        }))
    }
}

fn pod_key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// One pod on the simulated runtime.
struct SimulatedPod {
    uid: String,
    /// `name_namespace`, as kubelet messages name pods.
    kubelet_pod_name: String,
    started_at: Timestamp,
    script: ContainerScript,
    /// (name, image) in spec order.
    init_containers: Vec<(String, String)>,
    containers: Vec<(String, String)>,
    stop: Option<StopRequest>,
    /// Next timer, set by `observe`.
    wake_at: Option<tokio::time::Instant>,
}

impl PodRuntime for SimulatedPod {
    fn observe(&mut self, now: Timestamp) -> PodObservation {
        let elapsed = elapsed_since(self.started_at, now);
        // Init containers complete the moment the pod starts: they only gate
        // the Initialized condition, which tests have not needed to slow down.
        let init_containers = self
            .init_containers
            .iter()
            .map(|(name, image)| {
                let container_id = container_id(&self.uid, name, 0);
                ContainerObservation {
                    name: name.clone(),
                    image: image.clone(),
                    image_id: image_id(image),
                    container_id: container_id.clone(),
                    restart_count: 0,
                    state: ContainerRunState::Terminated(Termination {
                        exit_code: 0,
                        reason: Termination::reason_for(0).to_owned(),
                        started_at: self.started_at,
                        finished_at: self.started_at,
                        container_id,
                    }),
                    last_termination: None,
                }
            })
            .collect();

        // Every app container follows the same script, so one timeline
        // serves them all; only the names and ids differ.
        let timeline = simulate(&self.script, self.stop, elapsed);
        let mut next_change = timeline.next_change;
        let containers = self
            .containers
            .iter()
            .map(|(name, image)| {
                // An image that does not exist is pulled again and again and never
                // runs; a deletion finds nothing to stop (super::pull).
                if pull::missing(image) {
                    let state = pull::pull_state(&self.script.backoff, elapsed);
                    next_change =
                        Some(next_change.map_or(state.next_change, |n| n.min(state.next_change)));
                    return self.pull_observation(name, image, &state);
                }
                self.container_observation(name, image, &timeline)
            })
            .collect();

        // A change centuries away (ready-after-ms: 1e18) is no change:
        // Instant addition would overflow.
        self.wake_at = next_change
            .and_then(|at| tokio::time::Instant::now().checked_add(at.saturating_sub(elapsed)));
        PodObservation {
            init_containers,
            containers,
        }
    }

    fn changed(&mut self) -> BoxFuture<'_, ()> {
        match self.wake_at {
            Some(at) => tokio::time::sleep_until(at).boxed(),
            None => futures::future::pending().boxed(),
        }
    }

    fn stop(&mut self, now: Timestamp, grace: Duration) {
        let at = elapsed_since(self.started_at, now);
        let kill_at = at.saturating_add(grace);
        self.stop = Some(match self.stop {
            None => StopRequest { at, kill_at },
            Some(prev) => StopRequest {
                at: prev.at,
                kill_at: prev.kill_at.min(kill_at),
            },
        });
    }
}

impl SimulatedPod {
    fn at(&self, elapsed: Duration) -> Timestamp {
        self.started_at
            .checked_add(elapsed)
            .unwrap_or(Timestamp::MAX)
    }

    fn termination(&self, name: &str, t: &SimTermination) -> Termination {
        Termination {
            exit_code: t.exit_code,
            reason: Termination::reason_for(t.exit_code).to_owned(),
            started_at: self.at(t.started),
            finished_at: self.at(t.finished),
            container_id: container_id(&self.uid, name, t.run),
        }
    }

    /// A container whose image cannot be pulled: waiting, never created.
    fn pull_observation(
        &self,
        name: &str,
        image: &str,
        state: &pull::PullState,
    ) -> ContainerObservation {
        let message = if state.reason == "ErrImagePull" {
            pull::pull_error(image)
        } else {
            pull::back_off_message(image)
        };
        ContainerObservation {
            name: name.to_owned(),
            image: image.to_owned(),
            // Never pulled, never created: the kubelet reports neither id.
            image_id: String::new(),
            container_id: String::new(),
            restart_count: 0,
            state: ContainerRunState::Waiting {
                reason: state.reason.to_owned(),
                message: Some(message),
            },
            last_termination: None,
        }
    }

    fn container_observation(
        &self,
        name: &str,
        image: &str,
        timeline: &Timeline,
    ) -> ContainerObservation {
        let state = match &timeline.state {
            SimState::Running { started, ready } => ContainerRunState::Running {
                started_at: self.at(*started),
                ready: *ready,
            },
            SimState::BackOff { delay } => ContainerRunState::Waiting {
                reason: "CrashLoopBackOff".to_owned(),
                message: Some(format!(
                    "back-off {} restarting failed container={name} pod={}({})",
                    go_duration(*delay),
                    self.kubelet_pod_name,
                    self.uid
                )),
            },
            SimState::Terminated(t) => ContainerRunState::Terminated(self.termination(name, t)),
        };
        ContainerObservation {
            name: name.to_owned(),
            image: image.to_owned(),
            image_id: image_id(image),
            container_id: container_id(&self.uid, name, timeline.restart_count),
            restart_count: i32::try_from(timeline.restart_count).unwrap_or(i32::MAX),
            state,
            last_termination: timeline.last.as_ref().map(|t| self.termination(name, t)),
        }
    }
}

/// Time from `start` to `now`, zero if `now` is earlier (clock skew between
/// the API server's `startTime` and this process).
pub fn elapsed_since(start: Timestamp, now: Timestamp) -> Duration {
    Duration::try_from(now.duration_since(start)).unwrap_or(Duration::ZERO)
}

/// A stable, unique-looking container id for one run: 64 hex digits like a
/// real runtime's, derived from the pod uid, container name and run index so
/// that a restarted node reports the same ids.
pub fn container_id(pod_uid: &str, container: &str, run: u32) -> String {
    format!("sim://{}", hex_digest(&(pod_uid, container, run)))
}

/// The `imageID` reported for an image: the image with a made-up digest.
pub fn image_id(image: &str) -> String {
    format!("sim://{image}@sha256:{}", hex_digest(&image))
}

/// 64 hex digits from std's SipHash, salted four ways. Not cryptographic:
/// these ids only need to look distinct, so a hashing crate would be overkill.
pub(crate) fn hex_digest<T: Hash + ?Sized>(value: &T) -> String {
    (0u8..4)
        .map(|salt| {
            let mut hasher = DefaultHasher::new();
            salt.hash(&mut hasher);
            value.hash(&mut hasher);
            format!("{:016x}", hasher.finish())
        })
        .collect()
}

/// Go's `time.Duration` spelling for the short delays used here ("200ms",
/// "1.6s", "5s"), as kubelet messages print them.
pub fn go_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        let text = format!("{}.{:03}", ms / 1000, ms % 1000);
        format!("{}s", text.trim_end_matches('0'))
    }
}
