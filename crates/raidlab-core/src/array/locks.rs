//! Stripe locks: a reader/writer lock per stripe, granted in arrival order.
//!
//! A write of a stripe excludes every other access to it, so parity is always computed from
//! a consistent stripe and a read never sees half of a write. Reads of a stripe share it.
//! Waiters form an intrusive FIFO list through the pieces' `next_waiter` links, so locking
//! allocates nothing per request once the table has grown.

use rustc_hash::FxHashMap;

/// Sentinel for "no piece".
pub const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Entry {
    readers: u32,
    writer: bool,
    head: u32,
    tail: u32,
}

/// The lock table, keyed by stripe.
#[derive(Debug, Default)]
pub struct StripeLocks {
    table: FxHashMap<u64, Entry>,
}

/// What the lock table needs to know about a waiting piece.
pub trait Waiters {
    fn next_waiter(&self, piece: u32) -> u32;
    fn set_next_waiter(&mut self, piece: u32, next: u32);
    fn wants_write(&self, piece: u32) -> bool;
}

impl StripeLocks {
    /// Ask for the lock of `stripe`. Returns true if granted now; otherwise the piece waits
    /// and is handed out later by `release`.
    pub fn acquire(&mut self, stripe: u64, piece: u32, write: bool, w: &mut impl Waiters) -> bool {
        let e = self.table.entry(stripe).or_insert(Entry { readers: 0, writer: false, head: NONE, tail: NONE });
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

    /// Release a lock held by a piece; pushes the pieces now granted onto `granted`.
    pub fn release(&mut self, stripe: u64, write: bool, w: &mut impl Waiters, granted: &mut Vec<u32>) {
        // One search for the stripe, whether its entry stays or goes.
        let std::collections::hash_map::Entry::Occupied(mut occupied) = self.table.entry(stripe) else { return };
        let e = occupied.get_mut();
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
            occupied.remove();
        }
    }

    /// Stripes with a holder or a waiter.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether no stripe is locked.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
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
}
