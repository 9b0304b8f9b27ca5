//! First come, first served.

use std::collections::VecDeque;

use super::{QueuedOp, Scheduler};
use crate::disk::Drive;
use crate::sim::Nanos;

/// Serves operations in arrival order.
#[derive(Debug, Default)]
pub struct FcfsQueue {
    ops: VecDeque<QueuedOp>,
}

impl Scheduler for FcfsQueue {
    fn push(&mut self, op: QueuedOp) {
        self.ops.push_back(op);
    }

    fn pop(&mut self, _drive: &Drive, _now: Nanos) -> Option<QueuedOp> {
        self.ops.pop_front()
    }

    fn len(&self) -> usize {
        self.ops.len()
    }

    fn drain_into(&mut self, out: &mut Vec<QueuedOp>) {
        out.extend(self.ops.drain(..));
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{drive, op_at, serve_all};
    use super::*;

    #[test]
    fn serves_in_arrival_order_whatever_the_cylinders() {
        let mut d = drive();
        let mut q = FcfsQueue::default();
        for (token, cylinder) in [(0, 900), (1, 5), (2, 450), (3, 5), (4, 0)] {
            q.push(op_at(&d, cylinder, token));
        }
        assert_eq!(q.len(), 5);
        assert_eq!(serve_all(&mut q, &mut d), vec![0, 1, 2, 3, 4]);
        assert!(q.is_empty());
    }
}
