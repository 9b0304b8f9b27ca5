//! LRU: evict the block whose last access is the oldest.
//!
//! One stack (a doubly-linked list through the slots, most recent at the head): a hit moves
//! the block to the head, a miss loads it there, the victim is the tail. Built as a base of
//! VDF, it also keeps one local stack per drive (the paper's LS), the global stack restricted
//! to that drive's blocks, and each block's last access (TS).

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

    /// The blocks from the most to the least recently used (tests).
    #[cfg(test)]
    pub(crate) fn stack(&self) -> Vec<u64> {
        self.stack.iter(GLOBAL).map(|slot| self.slots.block(slot)).collect()
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
        self.stack.move_to_front(GLOBAL, slot);
        if let Some(local) = &mut self.local {
            local.move_to_front(slot, 0, 0);
            local.touch(slot, now);
        }
        true
    }

    #[inline]
    fn insert(&mut self, block: u64, drive: u32, now: u64) {
        let slot = self.slots.add(block);
        self.stack.push_front(GLOBAL, slot);
        if let Some(local) = &mut self.local {
            local.add(slot, drive, now, 0);
        }
    }

    #[inline]
    fn victim(&mut self, drive: Option<u32>) -> Option<Victim> {
        let slot = match drive {
            None => self.stack.tail(GLOBAL)?,
            Some(drive) => self.local.as_ref()?.tail(drive, 0)?,
        };
        Some(self.victim_in(slot))
    }

    #[inline]
    fn evict(&mut self, victim: &Victim) {
        self.stack.unlink(GLOBAL, victim.slot);
        if let Some(local) = &mut self.local {
            local.unlink(victim.slot, 0);
        }
        self.slots.release(victim.slot);
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
        let mut policy = LruCache::new(6, Some(3));
        for (now, block) in [10u64, 11, 12, 13, 10, 14, 11].into_iter().enumerate() {
            if !policy.lookup(block, now as u64) {
                policy.insert(block, (block % 3) as u32, now as u64);
            }
        }
        let global = policy.stack();
        let local = policy.local.as_ref().unwrap();
        for drive in 0..3 {
            let restricted: Vec<u64> = global.iter().copied().filter(|block| block % 3 == u64::from(drive)).collect();
            let stack: Vec<u64> = local.iter(drive, 0).map(|slot| policy.slots.block(slot)).collect();
            assert_eq!(stack, restricted, "drive {drive}");
        }
        // Block 13 (drive 1), last accessed at 3, is drive 1's bottom; 11 (accessed at 6) its top.
        let bottom = policy.victim(Some(1)).unwrap();
        assert_eq!((bottom.block, bottom.worth), (13, Worth::Recency { last_access: 3 }));
    }
}
