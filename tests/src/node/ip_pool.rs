//! Pod IPs: unique loopback addresses (127.0.0.2, 127.0.0.3, …), so pods on
//! the simulated node are distinguishable and a later process runtime can
//! bind each pod's servers to its own address (all of 127/8 is local on
//! Linux).

use std::collections::HashSet;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, PoisonError};

/// Hands out pod IPs; cheap to clone (shared state).
#[derive(Clone, Debug, Default)]
pub struct IpPool {
    inner: Arc<Mutex<PoolState>>,
}

#[derive(Debug, Default)]
struct PoolState {
    in_use: HashSet<u32>,
    /// Offset of the next candidate inside 127/8.
    cursor: u32,
}

/// The first address after the node's own 127.0.0.1.
const FIRST: u32 = u32::from_be_bytes([127, 0, 0, 2]);
/// Addresses in 127/8 after FIRST (up to 127.255.255.254).
const SPAN: u32 = u32::from_be_bytes([127, 255, 255, 254]) - FIRST + 1;

/// A pod's address, returned to the pool when dropped.
#[derive(Debug)]
pub struct PodIp {
    addr: Ipv4Addr,
    pool: IpPool,
}

impl PodIp {
    /// The address.
    pub fn addr(&self) -> Ipv4Addr {
        self.addr
    }
}

impl Drop for PodIp {
    fn drop(&mut self) {
        self.pool.lock().in_use.remove(&u32::from(self.addr));
    }
}

impl IpPool {
    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        // A panic while holding this lock cannot leave the set inconsistent
        // (every operation is a single insert or remove), so keep going.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps the address a pod already has (the node restarted), if it is
    /// one of ours and free; otherwise allocates a new one.
    pub fn claim_or_allocate(&self, existing: Option<&str>) -> Option<PodIp> {
        let wanted = existing
            .and_then(|s| s.parse::<Ipv4Addr>().ok())
            .map(u32::from)
            .filter(|ip| (FIRST..FIRST + SPAN).contains(ip) && usable(*ip));
        if let Some(ip) = wanted {
            let mut state = self.lock();
            if state.in_use.insert(ip) {
                return Some(PodIp {
                    addr: Ipv4Addr::from(ip),
                    pool: self.clone(),
                });
            }
        }
        self.allocate()
    }

    /// The next free address, skipping `.0` and `.255` host parts (legal
    /// but confusing in a listing). None when all 16 million are taken.
    pub fn allocate(&self) -> Option<PodIp> {
        let mut state = self.lock();
        for _ in 0..SPAN {
            let ip = FIRST + state.cursor;
            state.cursor = (state.cursor + 1) % SPAN;
            if usable(ip) && state.in_use.insert(ip) {
                return Some(PodIp {
                    addr: Ipv4Addr::from(ip),
                    pool: self.clone(),
                });
            }
        }
        None
    }
}

fn usable(ip: u32) -> bool {
    !matches!(ip & 0xff, 0 | 255)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocates_unique_addresses_and_reuses_released_ones() {
        let pool = IpPool::default();
        let a = pool.allocate();
        let b = pool.allocate();
        assert_eq!(
            a.as_ref().map(PodIp::addr),
            Some(Ipv4Addr::new(127, 0, 0, 2))
        );
        assert_eq!(
            b.as_ref().map(PodIp::addr),
            Some(Ipv4Addr::new(127, 0, 0, 3))
        );
        drop(a);
        // The cursor moves on; the freed address is found again on wrap.
        assert_eq!(
            pool.allocate().map(|p| p.addr()),
            Some(Ipv4Addr::new(127, 0, 0, 4))
        );
        assert!(pool.lock().in_use.len() == 1);
    }

    #[test]
    fn skips_network_and_broadcast_looking_addresses() {
        let pool = IpPool::default();
        let held: Vec<PodIp> = (0..260).filter_map(|_| pool.allocate()).collect();
        let addrs: Vec<Ipv4Addr> = held.iter().map(PodIp::addr).collect();
        assert!(addrs.contains(&Ipv4Addr::new(127, 0, 0, 254)));
        assert!(!addrs.contains(&Ipv4Addr::new(127, 0, 0, 255)));
        assert!(!addrs.contains(&Ipv4Addr::new(127, 0, 1, 0)));
        assert!(addrs.contains(&Ipv4Addr::new(127, 0, 1, 1)));
        let unique: HashSet<_> = addrs.iter().collect();
        assert_eq!(unique.len(), addrs.len());
    }

    #[test]
    fn claims_an_existing_address_once() {
        let pool = IpPool::default();
        let first = pool.claim_or_allocate(Some("127.0.0.9"));
        assert_eq!(
            first.as_ref().map(PodIp::addr),
            Some(Ipv4Addr::new(127, 0, 0, 9))
        );
        // Taken: a second pod claiming it gets a fresh one.
        let second = pool.claim_or_allocate(Some("127.0.0.9"));
        assert_eq!(
            second.as_ref().map(PodIp::addr),
            Some(Ipv4Addr::new(127, 0, 0, 2))
        );
        // Not ours (the node's own address, garbage): allocate.
        assert_eq!(
            pool.claim_or_allocate(Some("127.0.0.1")).map(|p| p.addr()),
            Some(Ipv4Addr::new(127, 0, 0, 3))
        );
        assert_eq!(
            pool.claim_or_allocate(Some("10.0.0.1")).map(|p| p.addr()),
            Some(Ipv4Addr::new(127, 0, 0, 4))
        );
        assert_eq!(
            pool.claim_or_allocate(Some("nonsense")).map(|p| p.addr()),
            Some(Ipv4Addr::new(127, 0, 0, 5))
        );
    }
}
