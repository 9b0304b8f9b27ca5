//! VDF, Victim Disk First (`papers/003_…`, §3.3, §4.1, Algorithms 1–2), over any base policy
//! that keeps local stacks ([`BasePolicy`]).
//!
//! Every block is in the base policy's global stack (GS) and in the local stack (LS) of its
//! drive; the base keeps both on every access, so switching between them needs no flush.
//!
//! * **Fault-free** (no failed drive): the victim is the base policy's own, GS's bottom. VDF
//!   then makes exactly the base policy's choices.
//! * **Faulty**: each drive's LS offers its bottom; each is weighed by its block's miss
//!   penalty MP (n − 1 on the failed drive of a RAID-5, 1 elsewhere: the [`PenaltyView`]),
//!   and the one that minimises p × MP goes (§3.3):
//!   - LRU-like bases (LRU, ARC, CLOCK; worth = last access TS): p = 1 / (GTS − TS), so the
//!     victim has the largest (GTS − TS) / MP. With MP ∈ {1, n − 1} this is Algorithm 1's
//!     W = (GTS − TS) on the failed drive, (GTS − TS)(n − 1) on a surviving one, maximum
//!     evicted (the `else` lost from the printed algorithm restored as the notes reconstruct
//!     it). Equal weights: the lower drive number goes.
//!   - LFU-like bases (worth = count F): the victim has the smallest F × MP: Algorithm 2's
//!     W = F(n − 1) on the failed drive, F elsewhere, minimum evicted; equal weights: the
//!     older last access goes (the usual LFU rule; the printed "minimum W and GTS-TS" is
//!     ambiguous, and its literal reading would keep evicting the newest block).
//!   - A block with MP = 0 (rebuilt on the spare, reads redirected) is worth nothing to the
//!     surviving drives: it goes first.
//!
//! The mode follows [`PenaltyView::faulty`] at each eviction: VDF switches at the failure
//! and back when the rebuild ends, without a flush.

use super::placement::Placement;
use super::{BasePolicy, BufferCache, Cache, PenaltyView, Policy, Victim, Worth};

/// VDF over the base policy `P`.
#[derive(Debug)]
pub struct Vdf<P> {
    base: P,
    drives: u32,
}

impl<P: BasePolicy> Vdf<P> {
    /// VDF over `P` for `capacity` blocks on an array of `drives` drives.
    pub fn new(capacity: usize, drives: u32) -> Self {
        Vdf { base: P::new(capacity, Some(drives)), drives }
    }

    /// The base policy (tests).
    pub fn base(&self) -> &P {
        &self.base
    }
}

/// Registry constructor: VDF over `P` as a cache on `placement`'s array.
pub(crate) fn make<P: BasePolicy>(name: &'static str, capacity: usize, placement: Option<Placement>) -> Box<dyn BufferCache> {
    let placement = placement.expect("super::build checks that VDF has a placement");
    let policy = Vdf::<P>::new(capacity, placement.drives());
    Box::new(Cache::new(name, policy, capacity, Some(placement)))
}

/// Whether a candidate worth `a`, whose miss would cost `penalty_a`, goes before one worth
/// `b` (`penalty_b`) at sequence number `now`: the smaller p × MP (module docs).
pub fn evicts_before(a: Worth, penalty_a: u32, b: Worth, penalty_b: u32, now: u64) -> bool {
    let (penalty_a, penalty_b) = (u128::from(penalty_a), u128::from(penalty_b));
    match (a, b) {
        (Worth::Recency { last_access: ta }, Worth::Recency { last_access: tb }) => {
            // age_a / MP_a > age_b / MP_b, without dividing.
            let (age_a, age_b) = (u128::from(now - ta), u128::from(now - tb));
            age_a * penalty_b > age_b * penalty_a
        }
        (Worth::Frequency { count: fa, last_access: ta }, Worth::Frequency { count: fb, last_access: tb }) => {
            let (weight_a, weight_b) = (u128::from(fa) * penalty_a, u128::from(fb) * penalty_b);
            weight_a < weight_b || (weight_a == weight_b && ta < tb)
        }
        // One base policy gives one kind of worth.
        _ => false,
    }
}

impl<P: BasePolicy> Policy for Vdf<P> {
    #[inline]
    fn len(&self) -> usize {
        self.base.len()
    }
    #[inline]
    fn lookup(&mut self, block: u64, now: u64) -> bool {
        self.base.lookup(block, now)
    }
    #[inline]
    fn on_miss(&mut self, block: u64) {
        self.base.on_miss(block)
    }
    #[inline]
    fn insert(&mut self, block: u64, drive: u32, now: u64) {
        self.base.insert(block, drive, now)
    }
    #[inline]
    fn victim(&mut self, drive: Option<u32>) -> Option<Victim> {
        self.base.victim(drive)
    }
    #[inline]
    fn evict(&mut self, victim: &Victim) {
        self.base.evict(victim)
    }
    fn remove(&mut self, block: u64) -> bool {
        self.base.remove(block)
    }

    #[inline]
    fn local_bottom(&mut self, drive: u32) -> Option<(u32, Worth)> {
        self.base.local_bottom(drive)
    }
    #[inline]
    fn block_in(&self, slot: u32) -> u64 {
        self.base.block_in(slot)
    }
    #[inline]
    fn prefetch(&self, block: u64) {
        self.base.prefetch(block)
    }

    fn choose_victim(&mut self, now: u64, penalties: &dyn PenaltyView) -> Option<Victim> {
        if !penalties.faulty() {
            return self.base.victim(None);
        }
        // (slot, worth, drive, penalty) of the candidate that goes so far.
        let mut best: Option<(u32, Worth, u32, u32)> = None;
        for drive in 0..self.drives {
            let Some((slot, worth)) = self.base.local_bottom(drive) else {
                continue;
            };
            let penalty = match penalties.drive_read_miss(drive) {
                Some(penalty) => penalty,
                None => penalties.read_miss(self.base.block_in(slot), drive),
            };
            if best.is_none_or(|(_, chosen, _, chosen_penalty)| evicts_before(worth, penalty, chosen, chosen_penalty, now)) {
                best = Some((slot, worth, drive, penalty));
            }
        }
        best.map(|(slot, worth, drive, _)| Victim { slot, block: self.base.block_in(slot), drive, worth })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A RAID-5 penalty view: `failed` (if any) costs `drives − 1`.
    pub(crate) struct Failed {
        pub drives: u32,
        pub failed: Option<u32>,
    }

    impl PenaltyView for Failed {
        fn faulty(&self) -> bool {
            self.failed.is_some()
        }
        fn read_miss(&self, _block: u64, drive: u32) -> u32 {
            if Some(drive) == self.failed {
                self.drives - 1
            } else {
                1
            }
        }
        fn drive_read_miss(&self, drive: u32) -> Option<u32> {
            Some(self.uniform(drive))
        }
    }

    impl Failed {
        fn uniform(&self, drive: u32) -> u32 {
            self.read_miss(0, drive)
        }
    }

    /// The same array, answering block by block only: VDF looks each candidate block up.
    pub(crate) struct FailedPerBlock(pub Failed);

    impl PenaltyView for FailedPerBlock {
        fn faulty(&self) -> bool {
            self.0.faulty()
        }
        fn read_miss(&self, block: u64, drive: u32) -> u32 {
            self.0.read_miss(block, drive)
        }
    }

    fn recency(last_access: u64) -> Worth {
        Worth::Recency { last_access }
    }

    fn frequency(count: u64, last_access: u64) -> Worth {
        Worth::Frequency { count, last_access }
    }

    #[test]
    fn algorithm_1_weights_the_surviving_drives_age_by_n_minus_1() {
        // n = 5, GTS = 100. A failed-drive block idle for 40 (W = 40) against a surviving
        // one idle for 11 (W = 44): the surviving one goes. Idle for 9 (W = 36): the lost one.
        let lost = recency(60);
        assert!(evicts_before(recency(89), 1, lost, 4, 100));
        assert!(!evicts_before(recency(91), 1, lost, 4, 100));
        assert!(evicts_before(lost, 4, recency(91), 1, 100));
        // Equal weights (idle 40 against 10): neither goes before the other, so the scan
        // keeps the lower drive.
        assert!(!evicts_before(recency(90), 1, lost, 4, 100) && !evicts_before(lost, 4, recency(90), 1, 100));
        // A block costing nothing (rebuilt, redirected) goes before any that costs.
        assert!(evicts_before(recency(99), 0, recency(1), 1, 100));
    }

    #[test]
    fn algorithm_2_weights_the_failed_drives_count_by_n_minus_1() {
        // n = 5: a lost block seen twice weighs 8; a surviving one seen 7 times 7: it goes.
        assert!(evicts_before(frequency(7, 50), 1, frequency(2, 10), 4, 100));
        assert!(!evicts_before(frequency(9, 50), 1, frequency(2, 10), 4, 100));
        // Equal weights: the older last access goes.
        assert!(evicts_before(frequency(8, 5), 1, frequency(2, 10), 4, 100));
        assert!(!evicts_before(frequency(8, 15), 1, frequency(2, 10), 4, 100));
    }
}
