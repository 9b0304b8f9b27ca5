//! CLOCK (second chance): a FIFO whose blocks carry a reference bit.
//!
//! Blocks are loaded at the head with the bit clear; a hit sets it. The hand is the tail: a
//! block there with its bit set gets a second chance (bit cleared, moved to the head); the
//! first one with its bit clear is the victim. A loaded block counts as unreferenced until
//! its first hit, as in libCacheSim's Clock.
//!
//! As a base of VDF, each drive's blocks also form a local list, the global one restricted
//! to the drive (every move is made in both): VDF asks each drive's hand for its candidate,
//! and a second chance given on the way moves the block in both lists, as the global hand
//! would have. The victim's worth is its last access, CLOCK being an approximation of LRU.

use super::lists::{reserved, DriveStacks, Lists, Slots};
use super::{BasePolicy, Policy, Victim, Worth};

/// One line for the docs.
pub const DOC: &str = "CLOCK (second chance): FIFO order, a hit sets a reference bit that buys one more round";

const RING: usize = 0;

/// CLOCK over the blocks it holds.
#[derive(Debug)]
pub struct ClockCache {
    slots: Slots,
    ring: Lists,
    referenced: Vec<bool>,
    local: Option<DriveStacks>,
}

impl BasePolicy for ClockCache {
    fn new(capacity: usize, drives: Option<u32>) -> Self {
        ClockCache {
            slots: Slots::with_capacity(capacity),
            ring: Lists::new(1, capacity),
            referenced: Vec::with_capacity(reserved(capacity)),
            local: drives.map(|drives| DriveStacks::new(drives, 1, capacity)),
        }
    }
}

impl ClockCache {
    /// Advance the hand (the whole ring's, or `drive`'s) past the referenced blocks, giving
    /// each a second chance, to the first unreferenced one.
    fn hand(&mut self, drive: Option<u32>) -> Option<u32> {
        // Each turn clears one bit, so the hand stops within one round.
        loop {
            let slot = match drive {
                None => self.ring.tail(RING)?,
                Some(drive) => self.local.as_ref()?.tail(drive, 0)?,
            };
            if !self.referenced[slot as usize] {
                return Some(slot);
            }
            self.referenced[slot as usize] = false;
            self.ring.move_to_front(RING, slot);
            if let Some(local) = &mut self.local {
                local.move_to_front(slot, 0, 0);
            }
        }
    }

    fn victim_in(&self, slot: u32) -> Victim {
        let (drive, last_access) = match &self.local {
            Some(local) => (local.drive(slot), local.last_access(slot)),
            None => (0, 0),
        };
        Victim { slot, block: self.slots.block(slot), drive, worth: Worth::Recency { last_access } }
    }

    /// The blocks from head (newest) to hand (tests).
    #[cfg(test)]
    pub(crate) fn ring(&self) -> Vec<u64> {
        self.ring.iter(RING).map(|slot| self.slots.block(slot)).collect()
    }
}

impl Policy for ClockCache {
    #[inline]
    fn len(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    fn lookup(&mut self, block: u64, now: u64) -> bool {
        let Some(slot) = self.slots.find(block) else {
            return false;
        };
        self.referenced[slot as usize] = true;
        if let Some(local) = &mut self.local {
            local.touch(slot, now);
        }
        true
    }

    #[inline]
    fn insert(&mut self, block: u64, drive: u32, now: u64) {
        let slot = self.slots.add(block);
        self.ring.push_front(RING, slot);
        let index = slot as usize;
        if index >= self.referenced.len() {
            self.referenced.resize(index + 1, false);
        }
        self.referenced[index] = false;
        if let Some(local) = &mut self.local {
            local.add(slot, drive, now, 0);
        }
    }

    fn victim(&mut self, drive: Option<u32>) -> Option<Victim> {
        let slot = self.hand(drive)?;
        Some(self.victim_in(slot))
    }

    fn local_bottom(&mut self, drive: u32) -> Option<(u32, Worth)> {
        let slot = self.hand(Some(drive))?;
        Some((slot, Worth::Recency { last_access: self.local.as_ref()?.last_access(slot) }))
    }

    #[inline]
    fn evict(&mut self, victim: &Victim) {
        self.ring.unlink(RING, victim.slot);
        if let Some(local) = &mut self.local {
            local.unlink(victim.slot, 0);
        }
        self.slots.release(victim.slot);
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

    fn clock(capacity: usize) -> Cache<ClockCache> {
        Cache::new("clock", ClockCache::new(capacity, None), capacity, None)
    }

    #[test]
    fn hand_trace_gives_a_referenced_block_a_second_chance() {
        // Ring (head → hand) 3 2 1; 1 hits (bit set). 4: 1 has its bit: cleared, to the head;
        // 2 goes. 1 hits again. 5: 3 goes. 2: 1's bit again: cleared, to the head; 4 goes.
        // 3: 5 goes. 1 is still there: a hit (LRU would have evicted it for 3).
        let trace = [1, 2, 3, 1, 4, 1, 5, 2, 3, 1];
        let mut cache = clock(3);
        assert_eq!(pattern(&replay(&mut cache, &trace, &FaultFree)), "mmmHmHmmmH");
        assert_eq!(cache.policy().ring(), [3, 2, 1]);
    }

    #[test]
    fn when_every_bit_is_set_the_hand_goes_round_and_takes_the_oldest() {
        // 1 and 2 both referenced; 3: 1 and 2 get their second chances (1 moves to the head,
        // then 2), and 1, at the hand again with its bit now clear, goes.
        let mut cache = clock(2);
        assert_eq!(pattern(&replay(&mut cache, &[1, 2, 1, 2, 3, 2, 1], &FaultFree)), "mmHHmHm");
    }
}
