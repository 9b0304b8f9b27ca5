//! Shortest positioning time first.

use super::keyed::{KeyedQueue, ServiceOrder};
use super::QueuedOp;
use crate::disk::Drive;
use crate::sim::Nanos;

/// Order: [`Drive::positioning_estimate`] at `now`.
#[derive(Debug, Default)]
pub struct ShortestPositioning;

impl ServiceOrder for ShortestPositioning {
    type Key = Nanos;
    fn key(op: &QueuedOp, drive: &Drive, now: Nanos) -> Nanos {
        drive.positioning_estimate(now, op.lba)
    }
}

/// Serves the operation the head can reach soonest: the smallest
/// [`Drive::positioning_estimate`] (overhead + seek + rotational wait) at `now`; ties go to
/// the earlier arrival. With uniform rotation the wait is a constant half revolution, so SPTF
/// orders by seek (and head switch) time.
pub type SptfQueue = KeyedQueue<ShortestPositioning>;

#[cfg(test)]
mod tests {
    use super::super::test_support::{drive, park};
    use super::*;
    use crate::disk::scheduler::Scheduler;
    use crate::disk::OpKind;
    use crate::sim::{RngStream, StreamId};

    #[test]
    fn picks_the_smallest_positioning_estimate() {
        let mut d = drive();
        park(&mut d, 300);
        let mut rng = RngStream::new(8, StreamId::Requests);
        let capacity = d.model.capacity_sectors();
        for round in 0..200u64 {
            let now = round * 7_777_777;
            let mut q = SptfQueue::default();
            let mut estimates = Vec::new();
            for token in 0..8 {
                let lba = rng.below(capacity);
                let cylinder = d.model.geometry.locate(lba).cylinder;
                q.push(QueuedOp {
                    lba,
                    sectors: 1,
                    kind: OpKind::Read,
                    cylinder,
                    enqueued: now,
                    token,
                });
                estimates.push(d.positioning_estimate(now, lba));
            }
            let best = *estimates.iter().min().unwrap();
            let expected = estimates.iter().position(|&e| e == best).unwrap() as u64;
            assert_eq!(q.pop(&d, now).unwrap().token, expected);
            assert_eq!(q.len(), 7);
        }
    }

    #[test]
    fn rotation_can_beat_seek_distance_and_ties_go_to_the_earlier_arrival() {
        let mut d = drive();
        park(&mut d, 0);
        // At time 0 sector 0 of the arm's track is under the head (exact rotation, no skew).
        // Sector 47 of the same track is almost a revolution away (13.6 ms); sector 20 of the
        // next cylinder is a 2.47 ms seek plus about a quarter turn away (5.8 ms).
        let now = 0;
        let one_cylinder = d.model.geometry.first_lba_of_cylinder(1).expect("cylinder 1 holds data");
        let op = |lba: u64, cylinder: u32, token: u64| QueuedOp {
            lba,
            sectors: 1,
            kind: OpKind::Read,
            cylinder,
            enqueued: 0,
            token,
        };
        let mut q = SptfQueue::default();
        q.push(op(47, 0, 0));
        q.push(op(one_cylinder + 20, 1, 1));
        q.push(op(one_cylinder + 20, 1, 2));
        assert!(d.positioning_estimate(now, one_cylinder + 20) < d.positioning_estimate(now, 47));
        assert_eq!(q.pop(&d, now).unwrap().token, 1);
        assert_eq!(q.pop(&d, now).unwrap().token, 2);
        assert_eq!(q.pop(&d, now).unwrap().token, 0);
    }
}
