//! Foreground first: the thesis's priority rule (seed 004 §2.1): "A rebuild request is
//! serviced if and only if there is no outstanding application request; however, once
//! started, a rebuild request cannot be preempted by an application request."

use super::ClassDiscipline;
use crate::disk::scheduler::{MakeScheduler, Priority, QueuedOp, Scheduler};
use crate::disk::Drive;
use crate::sim::Nanos;

/// Two queues of the same discipline; background is served only when foreground is empty.
#[derive(Debug)]
pub struct ForegroundFirst {
    foreground: Box<dyn Scheduler>,
    background: Box<dyn Scheduler>,
}

impl ForegroundFirst {
    /// Both classes ordered by queues from `scheduler`.
    pub fn new(scheduler: MakeScheduler) -> Self {
        ForegroundFirst { foreground: scheduler(), background: scheduler() }
    }

    /// Registry constructor.
    pub fn boxed(scheduler: MakeScheduler) -> Box<dyn ClassDiscipline> {
        Box::new(Self::new(scheduler))
    }
}

impl ClassDiscipline for ForegroundFirst {
    fn push(&mut self, priority: Priority, op: QueuedOp) {
        match priority {
            Priority::Foreground => self.foreground.push(op),
            Priority::Background => self.background.push(op),
        }
    }

    fn pop(&mut self, drive: &Drive, now: Nanos) -> Option<(Priority, QueuedOp)> {
        if let Some(op) = self.foreground.pop(drive, now) {
            return Some((Priority::Foreground, op));
        }
        self.background.pop(drive, now).map(|op| (Priority::Background, op))
    }

    fn len(&self) -> usize {
        self.foreground.len() + self.background.len()
    }

    fn len_of(&self, priority: Priority) -> usize {
        match priority {
            Priority::Foreground => self.foreground.len(),
            Priority::Background => self.background.len(),
        }
    }

    fn drain_into(&mut self, out: &mut Vec<(Priority, QueuedOp)>) {
        // Draining happens when a drive fails, not per event: a scratch vector is fine.
        for (priority, queue) in [
            (Priority::Foreground, &mut self.foreground),
            (Priority::Background, &mut self.background),
        ] {
            let mut ops = Vec::with_capacity(queue.len());
            queue.drain_into(&mut ops);
            out.extend(ops.into_iter().map(|op| (priority, op)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::scheduler::test_support::{drive, op_at};
    use crate::disk::scheduler::SstfQueue;

    #[test]
    fn background_waits_until_the_foreground_queue_is_empty() {
        let d = drive();
        let make = || -> Box<dyn Scheduler> { Box::<SstfQueue>::default() };
        let mut classes = ForegroundFirst::new(make);
        classes.push(Priority::Background, op_at(&d, 0, 10));
        classes.push(Priority::Foreground, op_at(&d, 900, 1));
        // The background op is far nearer the arm (cylinder 0), but foreground goes first.
        assert_eq!(
            classes.pop(&d, 0).map(|(p, op)| (p, op.token)),
            Some((Priority::Foreground, 1))
        );
        assert_eq!(
            classes.pop(&d, 0).map(|(p, op)| (p, op.token)),
            Some((Priority::Background, 10))
        );
        assert!(classes.pop(&d, 0).is_none());
        assert_eq!(classes.len(), 0);
    }
}
