//! Shortest seek time first, by cylinder distance from the arm.

use super::keyed::{KeyedQueue, ServiceOrder};
use super::QueuedOp;
use crate::disk::Drive;
use crate::sim::Nanos;

/// Order: cylinder distance from the arm.
#[derive(Debug, Default)]
pub struct ShortestSeek;

impl ServiceOrder for ShortestSeek {
    type Key = u32;
    fn key(op: &QueuedOp, drive: &Drive, _now: Nanos) -> u32 {
        op.cylinder.abs_diff(drive.cylinder())
    }
}

/// Serves the operation whose cylinder is nearest the arm; ties go to the earlier arrival.
pub type SstfQueue = KeyedQueue<ShortestSeek>;

#[cfg(test)]
mod tests {
    use super::super::test_support::{drive, op_at, park, serve_all};
    use super::*;
    use crate::disk::scheduler::Scheduler;

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
