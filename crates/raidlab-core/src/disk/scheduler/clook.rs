//! C-LOOK: sweep inward (increasing cylinder) from the arm, then wrap to the lowest.

use super::{QueuedOp, Scheduler};
use crate::disk::Drive;
use crate::sim::Nanos;

/// Serves the lowest cylinder at or beyond the arm; when none is left, the lowest cylinder
/// waiting. Ties at one cylinder go to the earlier arrival.
#[derive(Debug, Default)]
pub struct ClookQueue {
    ops: Vec<QueuedOp>,
}

impl Scheduler for ClookQueue {
    fn push(&mut self, op: QueuedOp) {
        self.ops.push(op);
    }

    fn pop(&mut self, drive: &Drive, _now: Nanos) -> Option<QueuedOp> {
        let arm = drive.cylinder();
        // Ahead of the arm sorts before behind it; then by cylinder; min_by_key keeps the
        // earliest arrival among equals.
        let (index, _) =
            self.ops.iter().enumerate().min_by_key(|(_, op)| (op.cylinder < arm, op.cylinder))?;
        Some(self.ops.remove(index))
    }

    fn len(&self) -> usize {
        self.ops.len()
    }

    fn drain_into(&mut self, out: &mut Vec<QueuedOp>) {
        out.append(&mut self.ops);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{drive, op_at, park, serve_all};
    use super::*;

    #[test]
    fn sweeps_upward_from_the_arm_then_wraps_to_the_lowest() {
        let mut d = drive();
        park(&mut d, 50);
        let mut q = ClookQueue::default();
        for (token, cylinder) in [(0, 10), (1, 60), (2, 55), (3, 90), (4, 20), (5, 55), (6, 50)] {
            q.push(op_at(&d, cylinder, token));
        }
        assert_eq!(serve_all(&mut q, &mut d), vec![6, 2, 5, 1, 3, 0, 4]);
    }

    #[test]
    fn new_arrivals_behind_the_arm_wait_for_the_next_sweep() {
        let mut d = drive();
        park(&mut d, 100);
        let mut q = ClookQueue::default();
        q.push(op_at(&d, 200, 0));
        q.push(op_at(&d, 300, 1));
        let first = q.pop(&d, 0).unwrap();
        assert_eq!(first.token, 0);
        d.service(0, first.lba, first.sectors, first.kind);
        q.push(op_at(&d, 150, 2)); // behind the arm now at 200
        q.push(op_at(&d, 250, 3));
        assert_eq!(serve_all(&mut q, &mut d), vec![3, 1, 2]);
    }
}
