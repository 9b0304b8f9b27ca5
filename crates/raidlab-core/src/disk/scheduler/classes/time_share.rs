//! A time share between the user and the rebuild class: when both wait, each gets the
//! drive's time in proportion to its weight; when one is empty, the other has the whole
//! drive (work-conserving). This is how raidlab reads a hardware RAID controller's rebuild
//! rate (`rebuild-controls.md` §2.4: MegaRAID/PERC `rebuildrate`, "% of controller resources
//! for rebuild", default 30 %; Dell: at 0 % the background task has the "lowest priority"
//! but "does not mean that [it] is stopped"): rebuild weight = the rate, user weight = 100 −
//! the rate **[inference]**.
//!
//! Each class keeps a virtual time: the drive time it was served, over its weight (start-time
//! fair queueing over time instead of bytes). The waiting class with the smaller virtual time
//! goes next; a class that was empty starts no earlier than the other's virtual time, so idle
//! time is not banked. An op is charged its service time when it starts, computed on a copy
//! of the drive in the state it serves the op from (the same time the drive will take; a
//! controller knows it only afterwards, which over many ops comes to the same). A weight of 0
//! gives the class the drive only when the other class is empty.

use super::{index, priority, ClassDiscipline};
use crate::disk::scheduler::{MakeScheduler, Priority, QueuedOp, Scheduler};
use crate::disk::Drive;
use crate::sim::Nanos;

pub const DOC: &str = "time share: when both classes wait, drive time split by weight (rebuild 30 % unless a rebuild discipline sets it); work-conserving";

/// Time share between the two classes of one drive.
#[derive(Debug)]
pub struct TimeShare {
    /// Index 0: user (foreground), 1: rebuild (background).
    queues: [Box<dyn Scheduler>; 2],
    weights: [f64; 2],
    /// Drive time served over weight, ns per unit of weight.
    virtual_ns: [f64; 2],
}

impl TimeShare {
    /// Both classes ordered by queues from `scheduler`; the rebuild class gets
    /// `rebuild_percent` % of the drive's time when both wait.
    pub fn new(scheduler: MakeScheduler, rebuild_percent: f64) -> Self {
        let rebuild = rebuild_percent.clamp(0.0, 100.0);
        TimeShare {
            queues: [scheduler(), scheduler()],
            weights: [100.0 - rebuild, rebuild],
            virtual_ns: [0.0; 2],
        }
    }

    /// Registry constructor: 30 %, MegaRAID's default rebuild rate (§2.4).
    pub fn boxed_default(scheduler: MakeScheduler) -> Box<dyn ClassDiscipline> {
        Box::new(Self::new(scheduler, 30.0))
    }

    /// The class to serve next, of those waiting.
    fn next_class(&self) -> Option<usize> {
        match (self.queues[0].is_empty(), self.queues[1].is_empty()) {
            (true, true) => None,
            (false, true) => Some(0),
            (true, false) => Some(1),
            (false, false) => {
                // A zero weight yields to the other class whenever it waits.
                if self.weights[1] == 0.0 {
                    Some(0)
                } else if self.weights[0] == 0.0 {
                    Some(1)
                } else if self.virtual_ns[1] < self.virtual_ns[0] {
                    Some(1)
                } else {
                    Some(0)
                }
            }
        }
    }
}

/// The time `drive` will take to serve `op` from `now`: served on a copy of it.
fn service_ns(drive: &Drive, now: Nanos, op: &QueuedOp) -> f64 {
    let mut probe = drive.clone();
    probe.service(now, op.lba, op.sectors, op.kind).total() as f64
}

impl ClassDiscipline for TimeShare {
    fn push(&mut self, priority: Priority, op: QueuedOp) {
        let i = index(priority);
        if self.queues[i].is_empty() && !self.queues[1 - i].is_empty() {
            // No banked idle time.
            self.virtual_ns[i] = self.virtual_ns[i].max(self.virtual_ns[1 - i]);
        }
        self.queues[i].push(op);
    }

    fn pop(&mut self, drive: &Drive, now: Nanos) -> Option<(Priority, QueuedOp)> {
        let i = self.next_class()?;
        let op = self.queues[i].pop(drive, now)?;
        if self.weights[i] > 0.0 {
            self.virtual_ns[i] += service_ns(drive, now, &op) / self.weights[i];
        }
        Some((priority(i), op))
    }

    fn len(&self) -> usize {
        self.queues[0].len() + self.queues[1].len()
    }

    fn len_of(&self, priority: Priority) -> usize {
        self.queues[index(priority)].len()
    }

    fn drain_into(&mut self, out: &mut Vec<(Priority, QueuedOp)>) {
        for (i, queue) in self.queues.iter_mut().enumerate() {
            let mut ops = Vec::with_capacity(queue.len());
            queue.drain_into(&mut ops);
            out.extend(ops.into_iter().map(|op| (priority(i), op)));
        }
    }

    /// Every op is charged, so none skips the queue.
    fn serves_at_once(&self, _priority: Priority, _now: Nanos) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::scheduler::test_support::{drive, op_at};
    use crate::disk::scheduler::FcfsQueue;

    fn fcfs() -> Box<dyn Scheduler> {
        Box::<FcfsQueue>::default()
    }

    /// Both classes backlogged with equal ops: the rebuild class gets its percentage of the
    /// ops (equal ops take equal time), 0 % only when the user class is empty.
    #[test]
    fn backlogged_classes_split_time_by_the_rate() {
        let d = drive();
        for percent in [0.0, 30.0, 50.0, 90.0] {
            let mut classes = TimeShare::new(fcfs, percent);
            let mut token = 0;
            for p in [Priority::Foreground, Priority::Background] {
                for _ in 0..3 {
                    token += 1;
                    classes.push(p, op_at(&d, 5, token));
                }
            }
            let mut rebuild = 0;
            let n = 10_000;
            for _ in 0..n {
                let (p, _) = classes.pop(&d, 0).unwrap();
                rebuild += (p == Priority::Background) as usize;
                token += 1;
                classes.push(p, op_at(&d, 5, token));
            }
            let share = rebuild as f64 / n as f64;
            assert!(
                (share - percent / 100.0).abs() < 0.01,
                "{percent} %: {share}"
            );
        }
        // Alone, the rebuild class has the drive even at 0 %.
        let mut classes = TimeShare::new(fcfs, 0.0);
        classes.push(Priority::Background, op_at(&d, 5, 1));
        assert_eq!(
            classes.pop(&d, 0).map(|(p, _)| p),
            Some(Priority::Background)
        );
    }
}
