//! LFU, in-cache: evict the block with the fewest accesses since it was loaded, the least
//! recently accessed among equals.
//!
//! Counts live only while a block is cached: a block loaded again starts at 1 (the VDF
//! paper's LFU, §4.1 and Algorithm 2). Blocks of equal count are ordered by their last
//! access's sequence number, so the victim is the minimum of (count, last access).
//!
//! The order is kept in O(1) per access by count buckets (Shah, Mitra and Matani's
//! constant-time LFU): a chain of buckets in increasing count, each a list of its blocks
//! with the most recently accessed at the head. A hit moves the block to the head of the
//! next bucket (created after its own if missing); a load goes to the head of bucket 1; the
//! victim is the tail of the lowest bucket. Built as a base of VDF, it keeps one chain per
//! drive instead (the local stacks) and each block's last access: the global order is their
//! merge, and its minimum, the fault-free victim, the least of the drives' minima by (count,
//! last access), as in [`super::lru`].

use super::lists::{reserved, Lists, Slots, NIL};
use super::{BasePolicy, Policy, Victim, Worth};

/// One line for the docs.
pub const DOC: &str = "least frequently used since loaded (counts restart at 1), ties to the least recently used";

#[derive(Debug, Clone, Copy)]
struct Bucket {
    count: u64,
    /// The bucket of the next lower and next higher count in the same group.
    lower: u32,
    higher: u32,
    group: u32,
}

/// Slots ordered by (count, last access) within groups (one group: the whole cache; one per
/// drive: the local stacks).
#[derive(Debug)]
struct FrequencyOrder {
    buckets: Vec<Bucket>,
    free_buckets: Vec<u32>,
    /// Each group's lowest-count bucket.
    lowest: Vec<u32>,
    /// One list per bucket id: its slots, most recently accessed at the head.
    members: Lists,
    bucket_of: Vec<u32>,
}

impl FrequencyOrder {
    fn new(groups: usize, slots: usize) -> Self {
        FrequencyOrder {
            buckets: Vec::new(),
            free_buckets: Vec::new(),
            lowest: vec![NIL; groups],
            members: Lists::new(0, slots),
            bucket_of: Vec::with_capacity(reserved(slots)),
        }
    }

    /// A new, empty bucket of `count` in `group`, between `lower` and `higher`.
    fn new_bucket(&mut self, count: u64, group: u32, lower: u32, higher: u32) -> u32 {
        let bucket = Bucket { count, lower, higher, group };
        let id = match self.free_buckets.pop() {
            Some(id) => {
                self.buckets[id as usize] = bucket;
                id
            }
            None => {
                self.buckets.push(bucket);
                let id = (self.buckets.len() - 1) as u32;
                self.members.ensure_lists(self.buckets.len());
                id
            }
        };
        if lower == NIL {
            self.lowest[group as usize] = id;
        } else {
            self.buckets[lower as usize].higher = id;
        }
        if higher != NIL {
            self.buckets[higher as usize].lower = id;
        }
        id
    }

    fn drop_bucket(&mut self, id: u32) {
        let Bucket { lower, higher, group, .. } = self.buckets[id as usize];
        if lower == NIL {
            self.lowest[group as usize] = higher;
        } else {
            self.buckets[lower as usize].higher = higher;
        }
        if higher != NIL {
            self.buckets[higher as usize].lower = lower;
        }
        self.free_buckets.push(id);
    }

    fn join(&mut self, bucket: u32, slot: u32) {
        self.members.push_front(bucket as usize, slot);
        let index = slot as usize;
        if index >= self.bucket_of.len() {
            self.bucket_of.resize(index + 1, NIL);
        }
        self.bucket_of[index] = bucket;
    }

    fn leave(&mut self, slot: u32) -> u32 {
        let bucket = self.bucket_of[slot as usize];
        self.members.unlink(bucket as usize, slot);
        if self.members.len(bucket as usize) == 0 {
            self.drop_bucket(bucket);
        }
        bucket
    }

    /// `slot`, just loaded, into `group` with count 1.
    fn insert(&mut self, group: u32, slot: u32) {
        let lowest = self.lowest[group as usize];
        let bucket = if lowest != NIL && self.buckets[lowest as usize].count == 1 {
            lowest
        } else {
            self.new_bucket(1, group, NIL, lowest)
        };
        self.join(bucket, slot);
    }

    /// One more access to `slot`.
    fn touch(&mut self, slot: u32) {
        let bucket = self.bucket_of[slot as usize];
        let Bucket { count, higher, group, .. } = self.buckets[bucket as usize];
        let target = if higher != NIL && self.buckets[higher as usize].count == count + 1 {
            higher
        } else {
            self.new_bucket(count + 1, group, bucket, higher)
        };
        self.members.unlink(bucket as usize, slot);
        if self.members.len(bucket as usize) == 0 {
            self.drop_bucket(bucket);
        }
        self.join(target, slot);
    }

    fn remove(&mut self, slot: u32) {
        self.leave(slot);
    }

    /// The minimum of `group`: its slot and count.
    fn victim(&self, group: u32) -> Option<(u32, u64)> {
        let lowest = *self.lowest.get(group as usize)?;
        if lowest == NIL {
            return None;
        }
        let slot = self.members.tail(lowest as usize)?;
        Some((slot, self.buckets[lowest as usize].count))
    }

    fn count(&self, slot: u32) -> u64 {
        self.buckets[self.bucket_of[slot as usize] as usize].count
    }
}

/// The per-drive order and what VDF needs to weigh a block.
#[derive(Debug)]
struct LocalOrder {
    order: FrequencyOrder,
    drive: Vec<u32>,
    last_access: Vec<u64>,
}

/// In-cache LFU.
#[derive(Debug)]
pub struct LfuCache {
    slots: Slots,
    order: FrequencyOrder,
    local: Option<LocalOrder>,
}

impl BasePolicy for LfuCache {
    fn new(capacity: usize, drives: Option<u32>) -> Self {
        LfuCache {
            slots: Slots::with_capacity(capacity),
            order: FrequencyOrder::new(1, capacity),
            local: drives.map(|drives| LocalOrder {
                order: FrequencyOrder::new(drives as usize, capacity),
                drive: Vec::with_capacity(reserved(capacity)),
                last_access: Vec::with_capacity(reserved(capacity)),
            }),
        }
    }
}

impl LfuCache {
    fn victim_in(&self, slot: u32, count: u64) -> Victim {
        let (drive, last_access) = match &self.local {
            Some(local) => (local.drive[slot as usize], local.last_access[slot as usize]),
            None => (0, 0),
        };
        Victim { slot, block: self.slots.block(slot), drive, worth: Worth::Frequency { count, last_access } }
    }

    /// The global minimum: the chain's, or the least of the drives' by (count, last access).
    fn global_victim(&self) -> Option<(u32, u64)> {
        match &self.local {
            None => self.order.victim(0),
            Some(local) => (0..local.order.lowest.len() as u32)
                .filter_map(|drive| local.order.victim(drive))
                .min_by_key(|&(slot, count)| (count, local.last_access[slot as usize])),
        }
    }

    fn count(&self, slot: u32) -> u64 {
        match &self.local {
            None => self.order.count(slot),
            Some(local) => local.order.count(slot),
        }
    }

    /// The count of `block`, if cached (tests).
    #[cfg(test)]
    pub(crate) fn count_of(&self, block: u64) -> Option<u64> {
        self.slots.find(block).map(|slot| self.count(slot))
    }
}

impl Policy for LfuCache {
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
            None => self.order.touch(slot),
            Some(local) => {
                local.order.touch(slot);
                local.last_access[slot as usize] = now;
            }
        }
        true
    }

    #[inline]
    fn insert(&mut self, block: u64, drive: u32, now: u64) {
        let slot = self.slots.add(block);
        match &mut self.local {
            None => self.order.insert(0, slot),
            Some(local) => {
                assert!((drive as usize) < local.order.lowest.len(), "drive {drive} beyond the local stacks");
                local.order.insert(drive, slot);
                let index = slot as usize;
                if index >= local.drive.len() {
                    local.drive.resize(index + 1, 0);
                    local.last_access.resize(index + 1, 0);
                }
                local.drive[index] = drive;
                local.last_access[index] = now;
            }
        }
    }

    #[inline]
    fn victim(&mut self, drive: Option<u32>) -> Option<Victim> {
        let (slot, count) = match drive {
            None => self.global_victim()?,
            Some(drive) => self.local.as_ref()?.order.victim(drive)?,
        };
        Some(self.victim_in(slot, count))
    }

    #[inline]
    fn local_bottom(&mut self, drive: u32) -> Option<(u32, Worth)> {
        let local = self.local.as_ref()?;
        let (slot, count) = local.order.victim(drive)?;
        Some((slot, Worth::Frequency { count, last_access: local.last_access[slot as usize] }))
    }

    #[inline]
    fn evict(&mut self, victim: &Victim) {
        match &mut self.local {
            None => self.order.remove(victim.slot),
            Some(local) => local.order.remove(victim.slot),
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
        let victim = self.victim_in(slot, self.count(slot));
        self.evict(&victim);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::tests::{pattern, replay};
    use crate::cache::{Cache, FaultFree};

    fn lfu(capacity: usize) -> Cache<LfuCache> {
        Cache::new("lfu", LfuCache::new(capacity, None), capacity, None)
    }

    #[test]
    fn hand_trace_with_ties_broken_by_the_older_access() {
        // 1 2 3 load at count 1; 1 hits twice (count 3), 2 once (2). 4 evicts 3, the only
        // count 1; 3 then evicts 4, and 4 evicts 3. 4 hits (count 2, last access 9). 5 finds
        // 2 and 4 at count 2: 2, accessed at 5, is older and goes. 2 then evicts 5.
        let trace = [1, 2, 3, 1, 1, 2, 4, 3, 4, 4, 5, 2];
        let mut cache = lfu(3);
        assert_eq!(pattern(&replay(&mut cache, &trace, &FaultFree)), "mmmHHHmmmHmm");
        let policy = cache.policy();
        assert_eq!((policy.count_of(1), policy.count_of(4), policy.count_of(2)), (Some(3), Some(2), Some(1)));
        assert_eq!(policy.count_of(5), None);
    }

    #[test]
    fn counts_restart_at_one_when_a_block_is_loaded_again() {
        // 1 reaches count 3 and 4 count 4; 5 evicts 1 (3 < 4). 1 comes back at count 1 and
        // evicts 5; 6 then evicts 1 again (1 < 4): no memory of its three earlier accesses.
        let trace = [1, 1, 1, 2, 2, 3, 4, 4, 4, 4, 5, 1, 6, 1];
        let mut cache = lfu(2);
        assert_eq!(pattern(&replay(&mut cache, &trace, &FaultFree)), "mHHmHmmHHHmmmm");
        assert_eq!((cache.policy().count_of(4), cache.policy().count_of(1)), (Some(4), Some(1)));
    }

    #[test]
    fn buckets_are_reused_and_the_order_matches_a_sort_by_count_then_age() {
        // A pseudo-random trace: after every access, the victim is the minimum of (count,
        // last access) over the cached blocks, computed here by brute force.
        let mut policy = LfuCache::new(8, None);
        let mut count = std::collections::HashMap::<u64, (u64, u64)>::new();
        for now in 0..5000u64 {
            let block = (now * 2654435761) % 23 % (1 + now % 13);
            if policy.lookup(block, now) {
                let entry = count.get_mut(&block).unwrap();
                *entry = (entry.0 + 1, now);
            } else {
                if policy.len() == 8 {
                    let victim = policy.victim(None).unwrap();
                    let expected = count.iter().min_by_key(|(_, &(c, t))| (c, t)).map(|(&b, _)| b).unwrap();
                    assert_eq!(victim.block, expected, "at {now}");
                    policy.evict(&victim);
                    count.remove(&victim.block);
                }
                policy.insert(block, 0, now);
                count.insert(block, (1, now));
            }
        }
        assert!(policy.order.buckets.len() <= 9, "{} buckets", policy.order.buckets.len());
    }
}
