//! ARC (Megiddo and Modha, *ARC: A Self-Tuning, Low Overhead Replacement Cache*, FAST 2003,
//! Fig. 4), over `c` blocks.
//!
//! Cached blocks are in T1 (seen once recently) or T2 (seen at least twice); the ghosts of
//! blocks evicted from them, block numbers only, are in B1 and B2. `p` is the target size of
//! T1. With δ1 = max(1, ⌊|B2| / |B1|⌋) and δ2 = max(1, ⌊|B1| / |B2|⌋) (the paper's ratios,
//! in whole blocks):
//!
//! * hit in T1 or T2: to the head (MRU) of T2;
//! * miss found in B1: p ← min(p + δ1, c); REPLACE; load into T2;
//! * miss found in B2: p ← max(p − δ2, 0); REPLACE; load into T2;
//! * other miss: if |T1| + |B1| = c, drop B1's tail and REPLACE when |T1| < c, else evict T1's
//!   tail without a ghost; otherwise, if |T1| + |T2| + |B1| + |B2| ≥ c, drop B2's tail when
//!   the total is 2c, then REPLACE; load into T1;
//! * REPLACE evicts T1's tail into B1 when |T1| ≥ 1 and (|T1| > p, or the miss was in B2 and
//!   |T1| = p), else T2's tail into B2.
//!
//! Evictions happen only when the cache is full ([`super::Cache::access`]), which is when
//! the paper calls REPLACE. As a base of VDF, each drive has local T1 and T2 lists: REPLACE
//! still chooses the list, and VDF chooses among the drives' tails of that list (a drive
//! with no block there offers its tail of the other list). The victim's worth is its last
//! access (ARC is LRU-like within each list).

use super::lists::{reserved, DriveStacks, Lists, Slots};
use super::{BasePolicy, Policy, Victim, Worth};

/// One line for the docs.
pub const DOC: &str = "adaptive replacement cache (Megiddo and Modha): recency and frequency lists with ghosts, self-tuning";

const T1: usize = 0;
const T2: usize = 1;
const B1: usize = 0;
const B2: usize = 1;

/// What the miss being served asks of the eviction and the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    /// REPLACE, then load into T2 (`into_t2`) or T1; `in_b2` says the miss was in B2.
    Replace { in_b2: bool, into_t2: bool },
    /// |T1| = c: T1's tail goes without a ghost; load into T1.
    EvictT1WithoutGhost,
}

/// ARC over `capacity` blocks.
#[derive(Debug)]
pub struct ArcCache {
    capacity: usize,
    slots: Slots,
    /// T1 and T2.
    resident: Lists,
    in_t2: Vec<bool>,
    local: Option<DriveStacks>,
    ghosts: Slots,
    /// B1 and B2.
    ghost_lists: Lists,
    ghost_in_b2: Vec<bool>,
    /// Target size of T1.
    target_t1: usize,
    pending: Pending,
}

impl BasePolicy for ArcCache {
    fn new(capacity: usize, drives: Option<u32>) -> Self {
        ArcCache {
            capacity,
            slots: Slots::with_capacity(capacity),
            resident: Lists::new(2, capacity),
            in_t2: Vec::with_capacity(reserved(capacity)),
            local: drives.map(|drives| DriveStacks::new(drives, 2, capacity)),
            ghosts: Slots::with_capacity(capacity + 1),
            ghost_lists: Lists::new(2, capacity + 1),
            ghost_in_b2: Vec::with_capacity(reserved(capacity + 1)),
            target_t1: 0,
            pending: Pending::Replace { in_b2: false, into_t2: false },
        }
    }
}

impl ArcCache {
    fn list_of(&self, slot: u32) -> usize {
        if self.in_t2[slot as usize] {
            T2
        } else {
            T1
        }
    }

    fn victim_in(&self, slot: u32) -> Victim {
        let (drive, last_access) = match &self.local {
            Some(local) => (local.drive(slot), local.last_access(slot)),
            None => (0, 0),
        };
        Victim { slot, block: self.slots.block(slot), drive, worth: Worth::Recency { last_access } }
    }

    /// The tail of list `which` (T1 or T2): the whole cache's, or `drive`'s.
    fn tail(&self, which: usize, drive: Option<u32>) -> Option<u32> {
        match drive {
            None => self.resident.tail(which),
            Some(drive) => self.local.as_ref()?.tail(drive, which),
        }
    }

    /// The block REPLACE (or the ghostless eviction of case IV) takes, among all blocks or
    /// `drive`'s: the tail of the list ARC's rule picks, or of the other when `drive` has no
    /// block in it.
    fn replace_candidate(&self, drive: Option<u32>) -> Option<u32> {
        let t1 = self.resident.len(T1);
        let first = match self.pending {
            Pending::EvictT1WithoutGhost => T1,
            Pending::Replace { in_b2, .. } => {
                if t1 >= 1 && (t1 > self.target_t1 || (in_b2 && t1 == self.target_t1)) {
                    T1
                } else {
                    T2
                }
            }
        };
        self.tail(first, drive).or_else(|| self.tail(1 - first, drive))
    }

    fn drop_ghost_tail(&mut self, which: usize) {
        if let Some(ghost) = self.ghost_lists.tail(which) {
            self.ghost_lists.unlink(which, ghost);
            self.ghosts.release(ghost);
        }
    }

    fn add_ghost(&mut self, block: u64, which: usize) {
        let ghost = self.ghosts.add(block);
        self.ghost_lists.push_front(which, ghost);
        let index = ghost as usize;
        if index >= self.ghost_in_b2.len() {
            self.ghost_in_b2.resize(index + 1, false);
        }
        self.ghost_in_b2[index] = which == B2;
    }

    fn unlink_resident(&mut self, slot: u32) {
        let list = self.list_of(slot);
        self.resident.unlink(list, slot);
        if let Some(local) = &mut self.local {
            local.unlink(slot, list);
        }
    }

    /// (|T1|, |T2|, |B1|, |B2|) and p (tests).
    #[cfg(test)]
    pub(crate) fn sizes(&self) -> (usize, usize, usize, usize, usize) {
        (
            self.resident.len(T1),
            self.resident.len(T2),
            self.ghost_lists.len(B1),
            self.ghost_lists.len(B2),
            self.target_t1,
        )
    }

    /// The blocks of T1, T2, B1 and B2 from head to tail (tests).
    #[cfg(test)]
    pub(crate) fn lists(&self) -> [Vec<u64>; 4] {
        let resident = |list| self.resident.iter(list).map(|slot| self.slots.block(slot)).collect();
        let ghost = |list| self.ghost_lists.iter(list).map(|slot| self.ghosts.block(slot)).collect();
        [resident(T1), resident(T2), ghost(B1), ghost(B2)]
    }
}

impl Policy for ArcCache {
    #[inline]
    fn len(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    fn lookup(&mut self, block: u64, now: u64) -> bool {
        let Some(slot) = self.slots.find(block) else {
            return false;
        };
        let from = self.list_of(slot);
        if from == T2 {
            self.resident.move_to_front(T2, slot);
        } else {
            self.resident.unlink(T1, slot);
            self.resident.push_front(T2, slot);
            self.in_t2[slot as usize] = true;
        }
        if let Some(local) = &mut self.local {
            local.move_to_front(slot, from, T2);
            local.touch(slot, now);
        }
        true
    }

    fn on_miss(&mut self, block: u64) {
        let capacity = self.capacity;
        if let Some(ghost) = self.ghosts.find(block) {
            let (b1, b2) = (self.ghost_lists.len(B1), self.ghost_lists.len(B2));
            let in_b2 = self.ghost_in_b2[ghost as usize];
            if in_b2 {
                let delta = if b2 >= b1 { 1 } else { b1 / b2 };
                self.target_t1 = self.target_t1.saturating_sub(delta);
            } else {
                let delta = if b1 >= b2 { 1 } else { b2 / b1 };
                self.target_t1 = (self.target_t1 + delta).min(capacity);
            }
            self.ghost_lists.unlink(if in_b2 { B2 } else { B1 }, ghost);
            self.ghosts.release(ghost);
            self.pending = Pending::Replace { in_b2, into_t2: true };
            return;
        }
        let t1 = self.resident.len(T1);
        let l1 = t1 + self.ghost_lists.len(B1);
        let total = l1 + self.resident.len(T2) + self.ghost_lists.len(B2);
        self.pending = Pending::Replace { in_b2: false, into_t2: false };
        if l1 >= capacity {
            if t1 < capacity {
                self.drop_ghost_tail(B1);
            } else {
                self.pending = Pending::EvictT1WithoutGhost;
            }
        } else if total >= 2 * capacity {
            self.drop_ghost_tail(B2);
        }
    }

    #[inline]
    fn insert(&mut self, block: u64, drive: u32, now: u64) {
        let into_t2 = matches!(self.pending, Pending::Replace { into_t2: true, .. });
        let list = if into_t2 { T2 } else { T1 };
        let slot = self.slots.add(block);
        self.resident.push_front(list, slot);
        let index = slot as usize;
        if index >= self.in_t2.len() {
            self.in_t2.resize(index + 1, false);
        }
        self.in_t2[index] = into_t2;
        if let Some(local) = &mut self.local {
            local.add(slot, drive, now, list);
        }
        self.pending = Pending::Replace { in_b2: false, into_t2: false };
    }

    fn victim(&mut self, drive: Option<u32>) -> Option<Victim> {
        let slot = self.replace_candidate(drive)?;
        Some(self.victim_in(slot))
    }

    fn local_bottom(&mut self, drive: u32) -> Option<(u32, Worth)> {
        let slot = self.replace_candidate(Some(drive))?;
        Some((slot, Worth::Recency { last_access: self.local.as_ref()?.last_access(slot) }))
    }

    fn evict(&mut self, victim: &Victim) {
        let list = self.list_of(victim.slot);
        self.unlink_resident(victim.slot);
        self.slots.release(victim.slot);
        if let Pending::Replace { .. } = self.pending {
            self.add_ghost(victim.block, if list == T2 { B2 } else { B1 });
        }
    }

    #[inline]
    fn block_in(&self, slot: u32) -> u64 {
        self.slots.block(slot)
    }

    #[inline]
    fn prefetch(&self, block: u64) {
        self.slots.prefetch(block);
        self.ghosts.prefetch(block);
    }

    fn remove(&mut self, block: u64) -> bool {
        let Some(slot) = self.slots.find(block) else {
            return false;
        };
        self.unlink_resident(slot);
        self.slots.release(slot);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::tests::{pattern, replay};
    use crate::cache::{Cache, FaultFree};

    fn arc(capacity: usize) -> Cache<ArcCache> {
        Cache::new("arc", ArcCache::new(capacity, None), capacity, None)
    }

    #[test]
    fn hand_trace_through_every_case() {
        // c = 2. 1 2 load into T1 (T1 = 2 1). 1 hits: T1 = 2, T2 = 1.
        // 3: |T1| + |B1| = 1 < 2, total 2 ≥ 2: REPLACE with p = 0: |T1| = 1 > 0, so 2 goes to
        //    B1. T1 = 3, T2 = 1, B1 = 2.
        // 2: in B1: p = min(0 + 1, 2) = 1; REPLACE: |T1| = 1, not > 1: T2's tail 1 to B2;
        //    2 into T2. T1 = 3, T2 = 2, B1 = -, B2 = 1.
        // 1: in B2: p = max(1 − 1, 0) = 0; REPLACE: |T1| = 1 > 0: 3 to B1; 1 into T2.
        //    T1 = -, T2 = 1 2, B1 = 3, B2 = -.
        // 4: |T1| + |B1| = 1 < 2, total 3 ≥ 2: REPLACE: |T1| = 0: T2's tail 2 to B2; 4 into T1.
        //    T1 = 4, T2 = 1, B1 = 3, B2 = 2.
        // 5: |T1| + |B1| = 2 = c and |T1| < c: drop 3 from B1; REPLACE: |T1| = 1 > 0: 4 to B1.
        //    T1 = 5, T2 = 1, B1 = 4, B2 = 2.
        let trace = [1, 2, 1, 3, 2, 1, 4, 5];
        let mut cache = arc(2);
        assert_eq!(pattern(&replay(&mut cache, &trace, &FaultFree)), "mmHmmmmm");
        assert_eq!(cache.policy().lists(), [vec![5], vec![1], vec![4], vec![2]]);
        assert_eq!(cache.policy().sizes().4, 0);
        // 1 hits in T2. 4 is in B1 (|B1| = |B2| = 1): p = 0 + 1 = 1; REPLACE: |T1| = 1 is not
        // above p, so T2's tail 1 goes to B2; 4 into T2. T1 = 5, T2 = 4, B2 = 1 2.
        let hits = replay(&mut cache, &[1, 4], &FaultFree);
        assert_eq!(pattern(&hits), "Hm");
        assert_eq!(cache.policy().lists(), [vec![5], vec![4], vec![], vec![1, 2]]);
        assert_eq!(cache.policy().sizes().4, 1);
    }

    #[test]
    fn a_scan_longer_than_the_cache_evicts_from_t1_without_ghosts() {
        // c = 3, no reuse: once T1 holds 3 and B1 is empty, |T1| + |B1| = c with |T1| = c, so
        // each new block evicts T1's tail without leaving a ghost.
        let mut cache = arc(3);
        let hits = replay(&mut cache, &[1, 2, 3, 4, 5, 6], &FaultFree);
        assert_eq!(pattern(&hits), "mmmmmm");
        assert_eq!(cache.policy().lists(), [vec![6, 5, 4], vec![], vec![], vec![]]);
    }

    #[test]
    fn the_directory_never_exceeds_twice_the_capacity() {
        for capacity in [1usize, 2, 3, 7] {
            let mut cache = arc(capacity);
            for i in 0..20_000u64 {
                let block = (i * 2654435761 + i / 7) % (4 * capacity as u64 + 3) + (i % 5) * (i % 3);
                cache.access(block, &FaultFree);
                let (t1, t2, b1, b2, p) = cache.policy().sizes();
                assert!(t1 + t2 <= capacity && t1 + b1 <= capacity && t1 + t2 + b1 + b2 <= 2 * capacity && p <= capacity,
                        "c = {capacity} at {i}: {:?}", cache.policy().sizes());
            }
        }
    }
}
