//! The crash-loop (and image-pull) back-off the node applies between a container's
//! runs, shared by the simulated runtime, the process runtime and the image puller.

use std::time::Duration;

/// Crash-loop back-off: `initial * 2^n` before restart n+1, capped at `max`.
/// Much shorter than a kubelet's 10s..5min so tests see restarts quickly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RestartBackoff {
    /// Delay before the first restart.
    pub initial: Duration,
    /// Upper bound.
    pub max: Duration,
}

impl Default for RestartBackoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(200),
            max: Duration::from_secs(5),
        }
    }
}

impl RestartBackoff {
    /// Floor on every delay: a zero back-off with a zero run time would make
    /// the simulated runtime loop without advancing.
    const FLOOR: Duration = Duration::from_millis(10);

    /// The delay after run number `run` (0-based) ended.
    pub fn delay(&self, run: u32) -> Duration {
        let factor = 1u32.checked_shl(run.min(31)).unwrap_or(u32::MAX);
        self.initial
            .checked_mul(factor)
            .unwrap_or(self.max)
            .min(self.max)
            .max(Self::FLOOR)
    }
}
