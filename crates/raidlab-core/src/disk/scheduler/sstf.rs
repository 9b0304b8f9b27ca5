//! Shortest seek time first, by cylinder distance from the arm.

use super::{QueuedOp, Scheduler};
use crate::disk::Drive;
use crate::sim::Nanos;

/// Serves the operation whose cylinder is nearest the arm; ties go to the earlier arrival.
///
/// Operations are kept in arrival order in a vector (queues are short; a linear scan is
/// cheaper than a tree and allocates nothing once the vector has grown).
#[derive(Debug, Default)]
pub struct SstfQueue {
    ops: Vec<QueuedOp>,
}

impl Scheduler for SstfQueue {
    fn push(&mut self, op: QueuedOp) {
        self.ops.push(op);
    }

    fn pop(&mut self, drive: &Drive, _now: Nanos) -> Option<QueuedOp> {
        let arm = drive.cylinder();
        // min_by_key keeps the first of equal keys: the earliest arrival.
        let (index, _) =
            self.ops.iter().enumerate().min_by_key(|(_, op)| op.cylinder.abs_diff(arm))?;
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
    fn picks_the_nearest_cylinder_and_breaks_ties_by_arrival() {
        let mut d = drive();
        park(&mut d, 500);
        let mut q = SstfQueue::default();
        for (token, cylinder) in [(0, 100), (1, 520), (2, 480), (3, 900), (4, 505), (5, 505)] {
            q.push(op_at(&d, cylinder, token));
        }
        assert_eq!(q.pop(&d, 0).unwrap().token, 4, "505 is nearest to 500; 4 arrived before 5");
        // 480 and 520 are equally far from 500: the earlier arrival (520, token 1) wins.
        let mut q2 = SstfQueue::default();
        q2.push(op_at(&d, 520, 1));
        q2.push(op_at(&d, 480, 2));
        assert_eq!(q2.pop(&d, 0).unwrap().token, 1);
        // Serving moves the arm: 505 (5), 520 (1), 480 (2), 100 (0), 900 (3).
        park(&mut d, 505);
        assert_eq!(serve_all(&mut q, &mut d), vec![5, 1, 2, 0, 3]);
    }
}
