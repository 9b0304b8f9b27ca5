//! Stripe locks: a reader/writer lock per stripe, granted in arrival order.
//!
//! A write of a stripe excludes every other access to it, so parity is always computed from
//! a consistent stripe and a read never sees half of a write. Reads of a stripe share it.
//! Waiters form an intrusive FIFO list through `next_waiter` links kept by the controller
//! (in its pieces and one-op requests, which a holder id tells apart), so locking allocates
//! nothing per request once the table has grown. Holders and waiters are named "pieces"
//! below.

/// Sentinel for "no piece".
pub const NONE: u32 = u32::MAX;

/// Sentinel stripe of an empty slot (stripe numbers stay far below it).
const EMPTY: u64 = u64::MAX;

/// Slots of a new table (a power of two).
const INITIAL_SLOTS: usize = 16;

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The stripe, or [`EMPTY`].
    stripe: u64,
    readers: u32,
    writer: bool,
    head: u32,
    tail: u32,
}

const VACANT: Entry = Entry { stripe: EMPTY, readers: 0, writer: false, head: NONE, tail: NONE };

/// The lock table: an entry per stripe with a holder or a waiter.
///
/// Open addressing with linear probing over a power-of-two array kept at most half full,
/// emptied by shifting the entries that follow back (no tombstones). Every piece inserts
/// an entry and removes it again, usually with no other piece on its stripe: here that is
/// one multiply and one slot each way. Locking cost a one-drive simulation about 155
/// instructions per request (6 % of them) with an `FxHashMap` (its group probing, control
/// bytes and erase); this table takes 35 of them off.
#[derive(Debug)]
pub struct StripeLocks {
    slots: Vec<Entry>,
    /// Entries in use.
    len: usize,
    /// 64 minus log2 of the slot count: a stripe's home slot is the top bits of its hash.
    shift: u32,
}

impl Default for StripeLocks {
    fn default() -> Self {
        StripeLocks { slots: vec![VACANT; INITIAL_SLOTS], len: 0, shift: 64 - INITIAL_SLOTS.trailing_zeros() }
    }
}

/// What the lock table needs to know about a waiting piece.
pub trait Waiters {
    fn next_waiter(&self, piece: u32) -> u32;
    fn set_next_waiter(&mut self, piece: u32, next: u32);
    fn wants_write(&self, piece: u32) -> bool;
}

impl StripeLocks {
    /// The slot a stripe's search starts at (Fibonacci hashing: neighbouring stripes land
    /// far apart).
    #[inline]
    fn home(&self, stripe: u64) -> usize {
        (stripe.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// The slot holding `stripe`, or the empty slot where it would go.
    #[inline]
    fn slot_of(&self, stripe: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(stripe);
        loop {
            let s = self.slots[i].stripe;
            if s == stripe || s == EMPTY {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Double the slots and put every entry back.
    #[cold]
    fn grow(&mut self) {
        let doubled = vec![VACANT; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        self.shift -= 1;
        for e in old.into_iter().filter(|e| e.stripe != EMPTY) {
            let i = self.slot_of(e.stripe);
            self.slots[i] = e;
        }
    }

    /// Empty slot `hole`, moving back the entries after it that may not be found past an
    /// empty slot otherwise (each goes to the hole when the hole lies between its home slot
    /// and where it is).
    #[inline]
    fn remove_at(&mut self, mut hole: usize) {
        let mask = self.slots.len() - 1;
        let mut i = hole;
        loop {
            i = (i + 1) & mask;
            let stripe = self.slots[i].stripe;
            if stripe == EMPTY {
                break;
            }
            let home = self.home(stripe);
            if i.wrapping_sub(home) & mask >= i.wrapping_sub(hole) & mask {
                self.slots[hole] = self.slots[i];
                hole = i;
            }
        }
        self.slots[hole] = VACANT;
        self.len -= 1;
    }

    /// The slot of `stripe`'s entry, made (free) if it has none.
    #[inline(always)]
    fn entry(&mut self, stripe: u64) -> usize {
        debug_assert_ne!(stripe, EMPTY, "stripe number reserved for empty slots");
        let mut i = self.slot_of(stripe);
        if self.slots[i].stripe == EMPTY {
            if 2 * (self.len + 1) > self.slots.len() {
                self.grow();
                i = self.slot_of(stripe);
            }
            self.slots[i] = Entry { stripe, ..VACANT };
            self.len += 1;
        }
        i
    }

    /// Ask for the lock of `stripe`. Returns true if granted now; otherwise the piece waits
    /// and is handed out later by `release`.
    #[inline(always)]
    pub fn acquire(&mut self, stripe: u64, piece: u32, write: bool, w: &mut impl Waiters) -> bool {
        let i = self.entry(stripe);
        let e = &mut self.slots[i];
        let free = e.head == NONE && !e.writer && (!write || e.readers == 0);
        if free {
            if write {
                e.writer = true;
            } else {
                e.readers += 1;
            }
            return true;
        }
        w.set_next_waiter(piece, NONE);
        if e.tail == NONE {
            e.head = piece;
        } else {
            w.set_next_waiter(e.tail, piece);
        }
        e.tail = piece;
        false
    }

    /// Take a read lock of `stripe` only if it can be granted at once (no writer holds it and
    /// nobody waits); returns whether it was. Never queues, so a holder of other locks may
    /// ask without risking a wait cycle.
    pub fn try_acquire_read(&mut self, stripe: u64) -> bool {
        let i = self.entry(stripe);
        let e = &mut self.slots[i];
        if e.head == NONE && !e.writer {
            e.readers += 1;
            return true;
        }
        false
    }

    /// Release a lock held by a piece; pushes the pieces now granted onto `granted`.
    #[inline(always)]
    pub fn release(&mut self, stripe: u64, write: bool, w: &mut impl Waiters, granted: &mut Vec<u32>) {
        let i = self.slot_of(stripe);
        let e = &mut self.slots[i];
        if e.stripe == EMPTY {
            return;
        }
        if write {
            e.writer = false;
        } else {
            e.readers -= 1;
        }
        // Grant from the head while compatible: one writer, or a run of readers.
        while e.head != NONE {
            let p = e.head;
            let wants_write = w.wants_write(p);
            if e.writer || (wants_write && e.readers > 0) {
                break;
            }
            if wants_write {
                e.writer = true;
            } else {
                e.readers += 1;
            }
            e.head = w.next_waiter(p);
            if e.head == NONE {
                e.tail = NONE;
            }
            granted.push(p);
            if wants_write {
                break;
            }
        }
        if !e.writer && e.readers == 0 && e.head == NONE {
            self.remove_at(i);
        }
    }

    /// Stripes with a holder or a waiter.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no stripe is locked.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct W {
        next: Vec<u32>,
        write: Vec<bool>,
    }
    impl Waiters for W {
        fn next_waiter(&self, p: u32) -> u32 {
            self.next[p as usize]
        }
        fn set_next_waiter(&mut self, p: u32, n: u32) {
            self.next[p as usize] = n;
        }
        fn wants_write(&self, p: u32) -> bool {
            self.write[p as usize]
        }
    }

    #[test]
    fn readers_share_writers_exclude_and_order_is_fifo() {
        // Pieces: 0 read, 1 read, 2 write, 3 read, 4 read.
        let mut w = W { next: vec![NONE; 5], write: vec![false, false, true, false, false] };
        let mut l = StripeLocks::default();
        let mut g = Vec::new();
        assert!(l.acquire(7, 0, false, &mut w));
        assert!(l.acquire(7, 1, false, &mut w));
        assert!(!l.acquire(7, 2, true, &mut w));
        // A reader behind a waiting writer waits too (no writer starvation).
        assert!(!l.acquire(7, 3, false, &mut w));
        assert!(!l.acquire(7, 4, false, &mut w));
        l.release(7, false, &mut w, &mut g);
        assert!(g.is_empty());
        l.release(7, false, &mut w, &mut g);
        assert_eq!(g, vec![2]);
        g.clear();
        l.release(7, true, &mut w, &mut g);
        assert_eq!(g, vec![3, 4]);
        g.clear();
        l.release(7, false, &mut w, &mut g);
        l.release(7, false, &mut w, &mut g);
        assert!(g.is_empty());
        assert!(l.is_empty());
    }

    /// The table against a plain model of the locks (a map of stripes to holders and FIFO
    /// waiters), over random acquires and releases: the same grants in the same order, and
    /// the same number of locked stripes. Stripes are drawn from a few hot ones (queues
    /// form), from 64 stripes whose home slots are the last and the first of every table up
    /// to 2^18 slots (their hashes are `j << 40` for j in −32..32: probing wraps around the
    /// end, and removal moves entries back across it), and from anywhere (the table grows to
    /// hundreds of entries and empties again).
    #[test]
    fn grants_as_a_plain_model_does_through_growth_collisions_and_removal() {
        use std::collections::{BTreeMap, VecDeque};
        #[derive(Default)]
        struct Model {
            readers: u32,
            writer: bool,
            queue: VecDeque<(u32, bool)>,
        }
        let mut rng = crate::sim::RngStream::new(11, crate::sim::StreamId::Policy(0));
        // The multiplicative inverse of the hash's multiplier (Newton's iteration, mod 2^64).
        let multiplier = 0x9e37_79b9_7f4a_7c15u64;
        let mut inverse = multiplier;
        for _ in 0..6 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(multiplier.wrapping_mul(inverse)));
        }
        assert_eq!(multiplier.wrapping_mul(inverse), 1);
        let pieces = 4_000u32;
        let mut w = W { next: vec![NONE; pieces as usize], write: vec![false; pieces as usize] };
        let mut table = StripeLocks::default();
        let mut model: BTreeMap<u64, Model> = BTreeMap::new();
        // Holders: (piece, stripe, write).
        let mut holders: Vec<(u32, u64, bool)> = Vec::new();
        let mut stripe_of = vec![0u64; pieces as usize];
        let (mut next_piece, mut granted, mut peak) = (0u32, Vec::new(), 0);
        while next_piece < pieces || !holders.is_empty() {
            let acquire = next_piece < pieces && (holders.is_empty() || rng.below(100) < 55);
            if acquire {
                let p = next_piece;
                next_piece += 1;
                let stripe = match rng.below(3) {
                    0 => rng.below(4),
                    1 => (((rng.below(64) as i64 - 32) << 40) as u64).wrapping_mul(inverse),
                    _ => rng.below(1 << 50),
                };
                let write = rng.below(3) == 0;
                w.write[p as usize] = write;
                stripe_of[p as usize] = stripe;
                let m = model.entry(stripe).or_default();
                let free = m.queue.is_empty() && !m.writer && (!write || m.readers == 0);
                if free {
                    if write {
                        m.writer = true;
                    } else {
                        m.readers += 1;
                    }
                    holders.push((p, stripe, write));
                } else {
                    m.queue.push_back((p, write));
                }
                assert_eq!(table.acquire(stripe, p, write, &mut w), free, "piece {p} on stripe {stripe}");
            } else {
                let (p, stripe, write) = holders.swap_remove(rng.below(holders.len() as u64) as usize);
                let m = model.get_mut(&stripe).expect("a holder's stripe is locked");
                if write {
                    m.writer = false;
                } else {
                    m.readers -= 1;
                }
                let mut expected = Vec::new();
                while let Some(&(q, wants_write)) = m.queue.front() {
                    if m.writer || (wants_write && m.readers > 0) {
                        break;
                    }
                    m.queue.pop_front();
                    if wants_write {
                        m.writer = true;
                    } else {
                        m.readers += 1;
                    }
                    expected.push(q);
                    holders.push((q, stripe, wants_write));
                    if wants_write {
                        break;
                    }
                }
                if !m.writer && m.readers == 0 && m.queue.is_empty() {
                    model.remove(&stripe);
                }
                granted.clear();
                table.release(stripe, write, &mut w, &mut granted);
                assert_eq!(granted, expected, "release by piece {p} of stripe {stripe}");
                assert!(granted.iter().all(|&q| stripe_of[q as usize] == stripe));
            }
            assert_eq!(table.len(), model.len());
            peak = peak.max(table.len());
        }
        assert!(table.is_empty());
        assert!(peak > INITIAL_SLOTS * 4, "the table grew (peak {peak} stripes)");
    }
}
