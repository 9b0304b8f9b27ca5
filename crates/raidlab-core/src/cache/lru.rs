//! LRU: evict the block whose last access is the oldest.
//!
//! One stack (a doubly-linked list through the slots, most recent at the head): a hit moves
//! the block to the head, a miss loads it there, the victim is the tail.
//!
//! Built as a base of VDF, it keeps one local stack per drive instead (the paper's LS: the
//! global stack restricted to that drive's blocks) and each block's last access (TS). The
//! global stack GS is then their merge by TS: its bottom, the fault-free victim, is the oldest
//! of the local bottoms (each list keeps its bottom's TS beside its ends, so finding it reads
//! one small array). That is the same order as a second list would keep, with half the
//! pointer updates per hit; the tests hold VDF-LRU in fault-free mode to this file's plain
//! LRU, hit for hit.

use super::lists::{DriveStacks, Lists, Slots};
use super::{BasePolicy, Policy, Victim, Worth};

/// One line for the docs.
pub const DOC: &str = "least recently used: one stack, the victim is its bottom";

const GLOBAL: usize = 0;

/// LRU over the blocks it holds.
#[derive(Debug)]
pub struct LruCache {
    slots: Slots,
    stack: Lists,
    local: Option<DriveStacks>,
}

impl BasePolicy for LruCache {
    fn new(capacity: usize, drives: Option<u32>) -> Self {
        LruCache {
            slots: Slots::with_capacity(capacity),
            stack: Lists::new(1, capacity),
            local: drives.map(|drives| DriveStacks::new(drives, 1, capacity)),
        }
    }
}

impl LruCache {
    fn victim_in(&self, slot: u32) -> Victim {
        let (drive, last_access) = match &self.local {
            Some(local) => (local.drive(slot), local.last_access(slot)),
            None => (0, 0),
        };
        Victim { slot, block: self.slots.block(slot), drive, worth: Worth::Recency { last_access } }
    }

    /// The global bottom: the stack's tail, or the oldest of the local bottoms.
    #[inline]
    fn global_bottom(&mut self) -> Option<u32> {
        match &mut self.local {
            None => self.stack.tail(GLOBAL),
            Some(local) => (0..local.drives())
                .filter_map(|drive| local.tail_and_access(drive, 0))
                .min_by_key(|&(_, last_access)| last_access)
                .map(|(slot, _)| slot),
        }
    }

    /// The blocks from the most to the least recently used (tests).
    #[cfg(test)]
    pub(crate) fn stack(&self) -> Vec<u64> {
        match &self.local {
            None => self.stack.iter(GLOBAL).map(|slot| self.slots.block(slot)).collect(),
            Some(local) => {
                let mut slots: Vec<u32> = (0..local.drives()).flat_map(|drive| local.iter(drive, 0)).collect();
                slots.sort_by_key(|&slot| std::cmp::Reverse(local.last_access(slot)));
                slots.into_iter().map(|slot| self.slots.block(slot)).collect()
            }
        }
    }
}

impl Policy for LruCache {
    #[inline]
    fn len(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    fn lookup(&mut self, block: u64, now: u64) -> bool {
        let Some(slot) = self.slots.find(block) else {
            return false;
        };
        match &mut self.local {
            None => self.stack.move_to_front(GLOBAL, slot),
            Some(local) => {
                local.move_to_front(slot, 0, 0);
                local.touch(slot, now);
            }
        }
        true
    }

    #[inline]
    fn insert(&mut self, block: u64, drive: u32, now: u64) {
        let slot = self.slots.add(block);
        match &mut self.local {
            None => self.stack.push_front(GLOBAL, slot),
            Some(local) => local.add(slot, drive, now, 0),
        }
    }

    #[inline]
    fn victim(&mut self, drive: Option<u32>) -> Option<Victim> {
        let slot = match drive {
            None => self.global_bottom()?,
            Some(drive) => self.local.as_ref()?.tail(drive, 0)?,
        };
        Some(self.victim_in(slot))
    }

    #[inline]
    fn evict(&mut self, victim: &Victim) {
        match &mut self.local {
            None => {
                self.stack.unlink(GLOBAL, victim.slot);
                self.slots.release(victim.slot);
                // The next victim, if nothing touches it first: its table entry is a line no
                // request has read for a long time.
                if let Some(tail) = self.stack.tail(GLOBAL) {
                    self.slots.prefetch_slot(tail);
                }
            }
            Some(local) => {
                let drive = local.drive(victim.slot);
                local.unlink(victim.slot, 0);
                self.slots.release(victim.slot);
                // The drive's new bottom may be a coming victim: fetch its entry now, as above
                // (a drive's bottom changes mostly by eviction, so the other drives' bottoms
                // were mostly fetched when they became bottoms).
                if let Some(tail) = local.tail(drive, 0) {
                    self.slots.prefetch_slot(tail);
                }
            }
        }
    }

    #[inline]
    fn local_bottom(&mut self, drive: u32) -> Option<(u32, Worth)> {
        let (slot, last_access) = self.local.as_mut()?.tail_and_access(drive, 0)?;
        Some((slot, Worth::Recency { last_access }))
    }

    #[inline]
    fn block_in(&self, slot: u32) -> u64 {
        self.slots.block(slot)
    }

    #[inline]
    fn prefetch(&self, block: u64) {
        self.slots.prefetch(block);
    }

    fn remove(&mut self, block: u64) -> bool {
        let Some(slot) = self.slots.find(block) else {
            return false;
        };
        let victim = self.victim_in(slot);
        self.evict(&victim);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::tests::{pattern, replay};
    use crate::cache::{Cache, FaultFree};

    fn lru(capacity: usize) -> Cache<LruCache> {
        Cache::new("lru", LruCache::new(capacity, None), capacity, None)
    }

    #[test]
    fn hand_trace_hits_and_misses() {
        // 1 2 3 fill the cache; 1 hits; 4 evicts 2 (stack 4 1 3); 2 evicts 3; 5 evicts 1;
        // 1 evicts 4; 2 hits (2 1 5); 3 evicts 5; 4 evicts 1; 5 evicts 2.
        let trace = [1, 2, 3, 1, 4, 2, 5, 1, 2, 3, 4, 5];
        let mut cache = lru(3);
        assert_eq!(pattern(&replay(&mut cache, &trace, &FaultFree)), "mmmHmmmmHmmm");
        assert_eq!(cache.policy().stack(), [5, 4, 3]);
        // With four blocks: 4 loads (4 1 3 2); 2 hits; 5 evicts 3; 1 and 2 hit; 3 evicts 4;
        // 4 evicts 5; 5 evicts 1.
        let mut cache = lru(4);
        assert_eq!(pattern(&replay(&mut cache, &trace, &FaultFree)), "mmmHmHmHHmmm");
        assert_eq!(cache.policy().stack(), [5, 4, 3, 2]);
    }

    #[test]
    fn a_one_block_cache_hits_only_repeats() {
        let mut cache = lru(1);
        assert_eq!(pattern(&replay(&mut cache, &[4, 4, 5, 4, 4, 4, 5], &FaultFree)), "mHmmHHm");
    }

    #[test]
    fn local_stacks_are_the_global_stack_restricted_to_each_drive() {
        let mut plain = LruCache::new(6, None);
        let mut local = LruCache::new(6, Some(3));
        let trace = [10u64, 11, 12, 13, 10, 14, 11, 15, 16, 12, 17, 18, 13];
        for (now, &block) in trace.iter().enumerate() {
            let now = now as u64;
            for policy in [&mut plain, &mut local] {
                if !policy.lookup(block, now) {
                    if policy.len() == 6 {
                        let victim = policy.victim(None).unwrap();
                        policy.evict(&victim);
                    }
                    policy.insert(block, (block % 3) as u32, now);
                }
            }
            assert_eq!(local.stack(), plain.stack(), "after access {now}");
        }
        let stacks = local.local.as_ref().unwrap();
        for drive in 0..3 {
            let restricted: Vec<u64> = plain.stack().into_iter().filter(|block| block % 3 == u64::from(drive)).collect();
            let stack: Vec<u64> = stacks.iter(drive, 0).map(|slot| local.slots.block(slot)).collect();
            assert_eq!(stack, restricted, "drive {drive}");
        }
        // Drive 1's blocks are 13 (accessed last at 12) and 16 (at 8): 16 is its bottom.
        let bottom = local.victim(Some(1)).unwrap();
        assert_eq!((bottom.block, bottom.worth), (16, Worth::Recency { last_access: 8 }));
        assert_eq!(local.local_bottom(1), Some((bottom.slot, bottom.worth)));
    }
}
