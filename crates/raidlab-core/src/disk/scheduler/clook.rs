//! C-LOOK: sweep inward (increasing cylinder) from the arm, then wrap to the lowest.

use super::keyed::{KeyedQueue, ServiceOrder};
use super::QueuedOp;
use crate::disk::Drive;
use crate::sim::Nanos;

/// Order: cylinders at or beyond the arm first, then those behind it; by cylinder within each.
#[derive(Debug, Default)]
pub struct CircularLook;

impl ServiceOrder for CircularLook {
    type Key = (bool, u32);
    fn key(op: &QueuedOp, drive: &Drive, _now: Nanos) -> (bool, u32) {
        (op.cylinder < drive.cylinder(), op.cylinder)
    }
}

/// Serves the lowest cylinder at or beyond the arm; when none is left, the lowest cylinder
/// waiting. Ties at one cylinder go to the earlier arrival.
pub type ClookQueue = KeyedQueue<CircularLook>;

#[cfg(test)]
mod tests {
    use super::super::test_support::{drive, op_at, park, serve_all};
    use super::*;
    use crate::disk::scheduler::Scheduler;

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
