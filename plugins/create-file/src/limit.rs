//! How many creates are in flight, adapted to the server: additive increase,
//! multiplicative decrease (AIMD, as TCP does it).
//!
//! `--concurrency` is the ceiling. A create the server throttled (a `429` handed back at
//! once while creates compete, or seen by the client's retries when one is alone:
//! [`apiclient::retry::track_with`]) halves the limit — once per
//! round: only a request started since the last decrease can cause another, so one
//! burst of 429s to requests sent together counts once. Every create that went through
//! without throttling adds `1 / limit`, i.e. one more request in flight per round of
//! unthrottled ones — up to a ceiling: a level that was throttled is not tried again
//! until [`REPROBE_AFTER`] creates went through without a `429` (then one level
//! more). Without it, against a server that admits `c` writes at a time the limit
//! climbs back to `c + 1` a few creates after every decrease and is throttled again,
//! round after round. The limit never drops below one, where create-file behaves as
//! kubectl (one create at a time) and relies on the retries alone.
//!
//! Hand-written: the crates that offer adaptive concurrency (tower's `limit` has only a
//! fixed one) are built for servers shedding load, not for a client following 429s.

use std::sync::Mutex;

use tokio::sync::{Semaphore, SemaphorePermit};

/// Unthrottled creates after which a throttled level may be tried again.
pub const REPROBE_AFTER: u32 = 100;

/// The AIMD arithmetic, without the waiting.
#[derive(Debug, Clone)]
pub struct Aimd {
    max: usize,
    limit: f64,
    round: u64,
    /// Below the lowest level throttled lately (`max` until a throttle).
    ceiling: f64,
    /// Unthrottled creates since the ceiling last moved.
    since_throttled: u32,
}

impl Aimd {
    /// Starts at the ceiling `max` (at least 1).
    pub fn new(max: usize) -> Self {
        let max = max.max(1);
        Self {
            max,
            limit: max as f64,
            round: 0,
            ceiling: max as f64,
            since_throttled: 0,
        }
    }

    /// How many requests may be in flight now.
    pub fn limit(&self) -> usize {
        // Truncation is the point: 1.5 allows one request.
        let limit = self.limit as usize;
        limit.clamp(1, self.max)
    }

    /// The round a request starting now belongs to.
    pub fn round(&self) -> u64 {
        self.round
    }

    /// A request started in `round` was throttled.
    pub fn throttled(&mut self, round: u64) {
        if round == self.round {
            self.ceiling = (self.limit.floor() - 1.0).max(1.0);
            self.since_throttled = 0;
            self.limit = (self.limit / 2.0).max(1.0);
            self.round += 1;
        }
    }

    /// A request went through without throttling.
    pub fn succeeded(&mut self) {
        self.since_throttled += 1;
        if self.since_throttled >= REPROBE_AFTER {
            self.ceiling = (self.ceiling + 1.0).min(self.max as f64);
            self.since_throttled = 0;
        }
        self.limit = (self.limit + 1.0 / self.limit).min(self.ceiling);
    }
}

/// An [`Aimd`] limit enforced with a semaphore whose permits follow the limit.
pub struct Limiter {
    permits: Semaphore,
    state: Mutex<State>,
}

struct State {
    aimd: Aimd,
    /// Permits that exist (held or available).
    granted: usize,
}

/// The right to send one request; give it back with [`Limiter::release`].
pub struct Slot<'a> {
    permit: SemaphorePermit<'a>,
    round: u64,
}

impl Limiter {
    pub fn new(max: usize) -> Self {
        let aimd = Aimd::new(max);
        let granted = aimd.limit();
        Self {
            permits: Semaphore::new(granted),
            state: Mutex::new(State { aimd, granted }),
        }
    }

    /// Waits until one more request may be in flight.
    pub async fn acquire(&self) -> Slot<'_> {
        // The semaphore is never closed.
        let permit = self.permits.acquire().await.expect("semaphore open");
        let round = self.lock().aimd.round();
        Slot { permit, round }
    }

    /// Gives the slot back, telling whether its request was throttled; the permits
    /// then follow the new limit.
    pub fn release(&self, slot: Slot<'_>, throttled: bool) {
        let mut state = self.lock();
        if throttled {
            state.aimd.throttled(slot.round);
        } else {
            state.aimd.succeeded();
        }
        let target = state.aimd.limit();
        if state.granted > target {
            slot.permit.forget();
            state.granted -= 1;
            let excess = state.granted.saturating_sub(target);
            state.granted -= self.permits.forget_permits(excess);
        } else {
            drop(slot.permit);
            if target > state.granted {
                self.permits.add_permits(target - state.granted);
                state.granted = target;
            }
        }
    }

    /// The current limit (for `-v` logging and tests).
    pub fn limit(&self) -> usize {
        self.lock().aimd.limit()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_of_429s_halves_once() {
        let mut aimd = Aimd::new(32);
        let round = aimd.round();
        for _ in 0..10 {
            aimd.throttled(round);
        }
        assert_eq!(aimd.limit(), 16);
        // A request sent after the decrease can halve again.
        aimd.throttled(aimd.round());
        assert_eq!(aimd.limit(), 8);
    }

    #[test]
    fn never_below_one_nor_above_the_ceiling() {
        let mut aimd = Aimd::new(4);
        for _ in 0..10 {
            aimd.throttled(aimd.round());
        }
        assert_eq!(aimd.limit(), 1);
        for _ in 0..1000 {
            aimd.succeeded();
        }
        assert_eq!(aimd.limit(), 4);
        assert_eq!(Aimd::new(0).limit(), 1);
    }

    #[test]
    fn growth_is_one_per_round_of_successes() {
        let mut aimd = Aimd::new(32);
        aimd.throttled(aimd.round());
        aimd.throttled(aimd.round());
        assert_eq!(aimd.limit(), 8);
        for _ in 0..8 {
            aimd.succeeded();
        }
        assert_eq!(aimd.limit(), 8, "8 × 1/8 ≈ 1 but not quite past 9");
        aimd.succeeded();
        assert_eq!(aimd.limit(), 9);
    }

    #[tokio::test]
    async fn the_permits_follow_the_limit() {
        let limiter = Limiter::new(4);
        let slots = futures::future::join_all((0..4).map(|_| limiter.acquire())).await;
        assert_eq!(limiter.permits.available_permits(), 0);
        let mut slots = slots.into_iter();
        // One throttled answer: the limit is 2; the permits shrink as slots return.
        limiter.release(slots.next().expect("slot"), true);
        assert_eq!(limiter.limit(), 2);
        for slot in slots {
            limiter.release(slot, true);
        }
        assert_eq!(limiter.permits.available_permits(), 2);
        assert_eq!(limiter.lock().granted, 2);
        // Successes give permits back, up to below the level that was throttled.
        for _ in 0..8 {
            let slot = limiter.acquire().await;
            limiter.release(slot, false);
        }
        assert_eq!(limiter.limit(), 3);
        assert_eq!(limiter.permits.available_permits(), 3);
        // After REPROBE_AFTER unthrottled creates the throttled level is tried again.
        for _ in 0..REPROBE_AFTER {
            let slot = limiter.acquire().await;
            limiter.release(slot, false);
        }
        assert_eq!(limiter.limit(), 4);
        assert_eq!(limiter.permits.available_permits(), 4);
    }

    #[test]
    fn a_throttled_level_is_not_probed_again_soon() {
        // A server that admits two writes at a time: the burst at 32 is halved down
        // to 2, the probe to 3 is throttled once, and then the limit stays at 2.
        let mut aimd = Aimd::new(32);
        let server = 2;
        let mut throttles = 0;
        for _ in 0..1000 {
            let round = aimd.round();
            if aimd.limit() > server {
                throttles += 1;
                aimd.throttled(round);
            } else {
                aimd.succeeded();
            }
        }
        assert_eq!(aimd.limit(), server);
        // 32 → 16 → 8 → 4 → 2, then one probe of 3 per REPROBE_AFTER creates.
        assert!(
            throttles <= 4 + 1000 / REPROBE_AFTER as usize,
            "{throttles}"
        );
    }
}
