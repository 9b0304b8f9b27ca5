//! A first-in first-out ring of queued operations, stored field by field.
//!
//! The drive queues' default discipline (foreground first over FCFS) keeps its operations
//! here rather than in a `VecDeque<QueuedOp>`. An operation is built field by field where it
//! is queued, and a deque copied it in with wide moves that read back those narrow stores
//! before they had reached the cache: the processor cannot forward one load from several
//! stores, and waited every time (2 % of an 8-drive RAID-5 run). Field by field, every load
//! matches one store.

use super::QueuedOp;
use crate::disk::OpKind;
use crate::sim::Nanos;

/// Operations in arrival order; the capacity is a power of two and grows when full.
#[derive(Debug, Default)]
pub(super) struct OpRing {
    lbas: Vec<u64>,
    tokens: Vec<u64>,
    enqueued: Vec<Nanos>,
    sectors: Vec<u32>,
    cylinders: Vec<u32>,
    kinds: Vec<OpKind>,
    /// Index of the oldest operation.
    head: usize,
    len: usize,
}

impl OpRing {
    /// Add `op` at the back.
    #[inline(always)]
    pub(super) fn push_back(&mut self, op: QueuedOp) {
        if self.len == self.lbas.len() {
            self.grow();
        }
        let i = (self.head + self.len) & (self.lbas.len() - 1);
        self.lbas[i] = op.lba;
        self.tokens[i] = op.token;
        self.enqueued[i] = op.enqueued;
        self.sectors[i] = op.sectors;
        self.cylinders[i] = op.cylinder;
        self.kinds[i] = op.kind;
        self.len += 1;
    }

    /// Remove the oldest operation.
    #[inline(always)]
    pub(super) fn pop_front(&mut self) -> Option<QueuedOp> {
        if self.len == 0 {
            return None;
        }
        let i = self.head;
        let op = QueuedOp {
            lba: self.lbas[i],
            sectors: self.sectors[i],
            kind: self.kinds[i],
            cylinder: self.cylinders[i],
            enqueued: self.enqueued[i],
            token: self.tokens[i],
        };
        self.head = (i + 1) & (self.lbas.len() - 1);
        self.len -= 1;
        Some(op)
    }

    /// Operations waiting.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Remove every operation, oldest first.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = QueuedOp> + '_ {
        std::iter::from_fn(move || self.pop_front())
    }

    /// Double the capacity (at least 8), keeping the order.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let capacity = (2 * self.lbas.len()).max(8);
        let mut grown = OpRing {
            lbas: vec![0; capacity],
            tokens: vec![0; capacity],
            enqueued: vec![0; capacity],
            sectors: vec![0; capacity],
            cylinders: vec![0; capacity],
            kinds: vec![OpKind::Read; capacity],
            head: 0,
            len: 0,
        };
        while let Some(op) = self.pop_front() {
            grown.push_back(op);
        }
        *self = grown;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{RngStream, StreamId};
    use std::collections::VecDeque;

    #[test]
    fn behaves_as_a_deque_through_growth_and_wrap_around() {
        let mut rng = RngStream::new(9, StreamId::Policy(0));
        let mut ring = OpRing::default();
        let mut reference = VecDeque::new();
        let op = |n: u64| QueuedOp {
            lba: n * 3,
            sectors: n as u32 + 1,
            kind: if n.is_multiple_of(2) { OpKind::Read } else { OpKind::Write },
            cylinder: n as u32 * 7,
            enqueued: n * 11,
            token: n,
        };
        let fields = |o: QueuedOp| (o.lba, o.sectors, o.kind, o.cylinder, o.enqueued, o.token);
        for n in 0..50_000u64 {
            // Pushes outnumber pops early on (growth), then balance (wrap-around).
            if rng.below(if n < 5_000 { 3 } else { 2 }) != 0 {
                ring.push_back(op(n));
                reference.push_back(op(n));
            } else {
                assert_eq!(ring.pop_front().map(fields), reference.pop_front().map(fields), "step {n}");
            }
            assert_eq!(ring.len(), reference.len());
        }
        let drained: Vec<_> = ring.drain().map(fields).collect();
        let expected: Vec<_> = reference.drain(..).map(fields).collect();
        assert!(drained.len() > 100);
        assert_eq!(drained, expected);
        assert_eq!(ring.len(), 0);
    }
}
