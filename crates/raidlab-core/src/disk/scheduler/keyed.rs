//! Queues that serve the waiting operation with the smallest key: the shared mechanism of the
//! seek-ordering disciplines. A discipline of this kind is one [`ServiceOrder`] — a key
//! function — and a type alias.

use std::marker::PhantomData;

use super::{QueuedOp, Scheduler};
use crate::disk::Drive;
use crate::sim::Nanos;

/// How a keyed queue orders waiting operations: smallest key first.
pub trait ServiceOrder: std::fmt::Debug + Default + Send + 'static {
    /// The ordering key.
    type Key: Ord;
    /// The key of `op` for a drive in state `drive` at time `now`.
    fn key(op: &QueuedOp, drive: &Drive, now: Nanos) -> Self::Key;
}

/// Serves the operation with the smallest [`ServiceOrder::key`]; ties go to the earlier
/// arrival.
///
/// Operations are kept in arrival order in a vector (queues are short; a linear scan is
/// cheaper than a tree and allocates nothing once the vector has grown).
#[derive(Debug)]
pub struct KeyedQueue<O: ServiceOrder> {
    ops: Vec<QueuedOp>,
    order: PhantomData<O>,
}

impl<O: ServiceOrder> Default for KeyedQueue<O> {
    fn default() -> Self {
        KeyedQueue { ops: Vec::new(), order: PhantomData }
    }
}

impl<O: ServiceOrder> Scheduler for KeyedQueue<O> {
    fn push(&mut self, op: QueuedOp) {
        self.ops.push(op);
    }

    fn pop(&mut self, drive: &Drive, now: Nanos) -> Option<QueuedOp> {
        // min_by_key keeps the first of equal keys: the earliest arrival.
        let (index, _) = self.ops.iter().enumerate().min_by_key(|(_, op)| O::key(op, drive, now))?;
        Some(self.ops.remove(index))
    }

    fn len(&self) -> usize {
        self.ops.len()
    }

    fn drain_into(&mut self, out: &mut Vec<QueuedOp>) {
        out.append(&mut self.ops);
    }
}
