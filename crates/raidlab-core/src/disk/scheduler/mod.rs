//! Per-drive queues: a scheduling discipline within each priority class.
//!
//! ```text
//!   push(priority, op) ──▶ ClassDiscipline ──┬─ foreground: Scheduler (fcfs | sstf | clook | sptf)
//!                          (foreground_first)└─ background: Scheduler (same discipline)
//!   pop(drive, now)   ◀── next op, chosen when the drive is idle (service is never preempted)
//! ```
//!
//! Two registries, each one table: [`SCHEDULERS`] (the order within a class) and
//! [`classes::CLASS_DISCIPLINES`] (how the classes share the drive). Adding a discipline is one
//! file with its tests plus one line in the table.

pub mod classes;
pub mod clook;
pub mod fcfs;
pub mod keyed;
mod op_ring;
pub mod sptf;
pub mod sstf;

use super::{Drive, OpKind};
use op_ring::OpRing;
use crate::sim::Nanos;

pub use classes::{ClassDiscipline, ForegroundFirst};
pub use clook::ClookQueue;
pub use fcfs::FcfsQueue;
pub use sptf::SptfQueue;
pub use sstf::SstfQueue;

/// Priority class of a disk operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Priority {
    /// User (application) work.
    Foreground,
    /// Rebuild and other internal work.
    Background,
}

/// An operation waiting in a drive's queue.
#[derive(Debug, Clone, Copy)]
pub struct QueuedOp {
    /// First sector.
    pub lba: u64,
    /// Length in sectors.
    pub sectors: u32,
    pub kind: OpKind,
    /// Cylinder of `lba`, cached at enqueue time for seek-ordering disciplines.
    pub cylinder: u32,
    /// When the operation entered the queue, ns.
    pub enqueued: Nanos,
    /// Opaque handle of the controller's operation.
    pub token: u64,
}

/// A queue discipline within one priority class.
pub trait Scheduler: Send + std::fmt::Debug {
    /// Add an operation.
    fn push(&mut self, op: QueuedOp);
    /// Remove the operation to serve next, given the drive's state at `now`.
    fn pop(&mut self, drive: &Drive, now: Nanos) -> Option<QueuedOp>;
    /// Operations waiting.
    fn len(&self) -> usize;
    /// Whether none is waiting.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Remove every waiting operation (in arrival order) into `out`.
    fn drain_into(&mut self, out: &mut Vec<QueuedOp>);
}

/// Builds a new empty queue of one discipline.
pub type MakeScheduler = fn() -> Box<dyn Scheduler>;

/// One registered queue discipline.
pub struct SchedulerEntry {
    /// Name used in configs (`drive.scheduler`).
    pub name: &'static str,
    /// A new empty queue.
    pub make: MakeScheduler,
    /// One line for the docs and error messages.
    pub doc: &'static str,
    /// Whether the discipline reads `QueuedOp::cylinder`; when it does not, callers may
    /// leave it 0 and save a geometry lookup per operation.
    pub orders_by_cylinder: bool,
}

fn boxed<S: Scheduler + Default + 'static>() -> Box<dyn Scheduler> {
    Box::new(S::default())
}

/// Every queue discipline, in documentation order.
pub static SCHEDULERS: &[SchedulerEntry] = &[
    SchedulerEntry {
        name: "fcfs",
        make: boxed::<FcfsQueue>,
        doc: "first come, first served",
        orders_by_cylinder: false,
    },
    SchedulerEntry {
        name: "sstf",
        make: boxed::<SstfQueue>,
        doc: "shortest seek (cylinder distance from the arm) first; ties by arrival",
        orders_by_cylinder: true,
    },
    SchedulerEntry {
        name: "clook",
        make: boxed::<ClookQueue>,
        doc: "C-LOOK: increasing cylinder from the arm, then wrap to the lowest; ties by arrival",
        orders_by_cylinder: true,
    },
    SchedulerEntry {
        name: "sptf",
        make: boxed::<SptfQueue>,
        doc: "shortest positioning (overhead + seek + rotation) time first; ties by arrival",
        orders_by_cylinder: false,
    },
];

/// Names of the registered disciplines.
pub fn names() -> Vec<&'static str> {
    SCHEDULERS.iter().map(|entry| entry.name).collect()
}

/// The registry entry of discipline `name`.
pub fn entry(name: &str) -> Option<&'static SchedulerEntry> {
    SCHEDULERS.iter().find(|entry| entry.name == name)
}

/// A new empty queue of discipline `name`, or `None` if unknown.
pub fn make(name: &str) -> Option<Box<dyn Scheduler>> {
    entry(name).map(|entry| (entry.make)())
}

/// A drive's queue: foreground and background classes, each ordered by the discipline.
#[derive(Debug)]
pub struct DiskQueue {
    classes: Classes,
    orders_by_cylinder: bool,
    /// Operations waiting in both classes, kept here so that asking an empty queue (which
    /// the engine does after every completion) costs no dynamic call.
    waiting: usize,
}

/// The class discipline of a [`DiskQueue`].
// One per drive: the inline variant's size costs nothing, a box around it an indirection
// per operation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Classes {
    /// `foreground_first` over `fcfs`, the default, held inline: the same order as
    /// [`ForegroundFirst`] over two [`FcfsQueue`]s, without the two dynamic calls and the
    /// copies of the operation through them on every push and pop (together some 5 % of
    /// the time of an 8-drive RAID-5 run), in rings stored field by field (see `op_ring`).
    ForegroundFirstFcfs { foreground: OpRing, background: OpRing },
    /// Any other combination, through the registries.
    General(Box<dyn ClassDiscipline>),
}

impl DiskQueue {
    /// Queue with discipline `name` in both classes (`None` if the name is unknown).
    /// Classes share the drive `foreground_first`.
    pub fn new(name: &str) -> Option<Self> {
        Self::with_classes(name, classes::DEFAULT)
    }

    /// Queue with discipline `scheduler` and class discipline `classes` (see
    /// [`classes::CLASS_DISCIPLINES`]); `None` if either name is unknown.
    pub fn with_classes(scheduler: &str, class_discipline: &str) -> Option<Self> {
        Self::build(scheduler, class_discipline, true)
    }

    /// Queue with discipline `scheduler` whose classes share the drive by `classes`, a class
    /// discipline built with parameters (a rebuild discipline's, see
    /// `rebuild::Discipline::class_discipline`); `None` if the scheduler is unknown.
    pub fn with_class_discipline(scheduler: &str, classes: Box<dyn ClassDiscipline>) -> Option<Self> {
        let scheduler = entry(scheduler)?;
        Some(DiskQueue { classes: Classes::General(classes), orders_by_cylinder: scheduler.orders_by_cylinder, waiting: 0 })
    }

    /// The queue of [`DiskQueue::with_classes`]; `inline`: whether the default pair may be
    /// held inline (tests compare it with the registry-built one).
    fn build(scheduler: &str, class_discipline: &str, inline: bool) -> Option<Self> {
        let scheduler = entry(scheduler)?;
        let class_entry = classes::entry(class_discipline)?;
        let classes = if inline && scheduler.name == "fcfs" && class_entry.name == "foreground_first" {
            Classes::ForegroundFirstFcfs { foreground: OpRing::default(), background: OpRing::default() }
        } else {
            Classes::General((class_entry.make)(scheduler.make))
        };
        Some(DiskQueue { classes, orders_by_cylinder: scheduler.orders_by_cylinder, waiting: 0 })
    }

    /// Whether the discipline needs `QueuedOp::cylinder` filled in.
    pub fn orders_by_cylinder(&self) -> bool {
        self.orders_by_cylinder
    }

    #[inline]
    pub fn push(&mut self, priority: Priority, op: QueuedOp) {
        self.waiting += 1;
        match &mut self.classes {
            Classes::ForegroundFirstFcfs { foreground, background } => match priority {
                Priority::Foreground => foreground.push_back(op),
                Priority::Background => background.push_back(op),
            },
            Classes::General(classes) => classes.push(priority, op),
        }
    }

    /// Next operation to serve, with its class: foreground first; background only when no
    /// foreground operation waits. Service is never preempted.
    pub fn pop(&mut self, drive: &Drive, now: Nanos) -> Option<(Priority, QueuedOp)> {
        if let Classes::General(classes) = &mut self.classes {
            let next = classes.pop(drive, now);
            self.waiting -= next.is_some() as usize;
            return next;
        }
        let class = if self.len_of(Priority::Foreground) > 0 { Priority::Foreground } else { Priority::Background };
        self.pop_op(drive, now).map(|op| (class, op))
    }

    /// [`DiskQueue::pop`] without the class, for the engine, which does not need it: the
    /// operation comes back as a plain `Option<QueuedOp>`. The class tag beside it puts the
    /// operation at odd offsets on the stack, and reading it back stalls on every store it
    /// was copied through: some 3 % of an 8-drive RAID-5 run.
    #[inline]
    pub fn pop_op(&mut self, drive: &Drive, now: Nanos) -> Option<QueuedOp> {
        if self.waiting == 0 {
            return None;
        }
        let next = match &mut self.classes {
            Classes::ForegroundFirstFcfs { foreground, background } => {
                foreground.pop_front().or_else(|| background.pop_front())
            }
            Classes::General(classes) => classes.pop(drive, now).map(|(_, op)| op),
        };
        self.waiting -= next.is_some() as usize;
        next
    }

    /// Whether an op of class `priority` arriving now, with the queue empty and the drive
    /// idle, would be served at once, so that it may skip the queue (the class discipline
    /// decides; see [`ClassDiscipline::serves_at_once`]).
    #[inline(always)]
    pub fn serves_at_once(&self, priority: Priority, now: Nanos) -> bool {
        match &self.classes {
            Classes::ForegroundFirstFcfs { .. } => true,
            Classes::General(classes) => classes.serves_at_once(priority, now),
        }
    }

    /// When work that [`DiskQueue::pop`] held back (the class discipline's limit) may be
    /// served: asked only when the drive is idle and a pop found nothing to serve although
    /// operations wait ([`ClassDiscipline::next_ready`]).
    pub fn next_ready(&self, now: Nanos) -> Option<Nanos> {
        match &self.classes {
            Classes::ForegroundFirstFcfs { .. } => None,
            Classes::General(classes) => classes.next_ready(now),
        }
    }

    /// Waiting operations, both classes.
    #[inline]
    pub fn len(&self) -> usize {
        self.waiting
    }

    /// Waiting operations of one class.
    pub fn len_of(&self, priority: Priority) -> usize {
        match &self.classes {
            Classes::ForegroundFirstFcfs { foreground, background } => match priority {
                Priority::Foreground => foreground.len(),
                Priority::Background => background.len(),
            },
            Classes::General(classes) => classes.len_of(priority),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Remove everything waiting (used when the drive fails), each class in arrival order,
    /// foreground first.
    pub fn drain_into(&mut self, out: &mut Vec<(Priority, QueuedOp)>) {
        match &mut self.classes {
            Classes::ForegroundFirstFcfs { foreground, background } => {
                out.extend(foreground.drain().map(|op| (Priority::Foreground, op)));
                out.extend(background.drain().map(|op| (Priority::Background, op)));
            }
            Classes::General(classes) => classes.drain_into(out),
        }
        self.waiting = 0;
    }
}

/// Helpers shared by the discipline tests.
#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::Arc;

    use super::QueuedOp;
    use crate::disk::{presets, Drive, DriveModel, OpKind, RotationModel};
    use crate::sim::{RngStream, StreamId};

    /// The thesis drive with exact rotation (one cylinder = 14 × 48 = 672 sectors).
    pub fn drive() -> Drive {
        let model = DriveModel::new(&presets::preset("ibm0661").unwrap(), "drive.model").unwrap();
        Drive::new(Arc::new(model), RotationModel::Exact, RngStream::new(1, StreamId::Drive(0)))
    }

    /// An 8-sector read at the start of `cylinder`, tagged `token`.
    pub fn op_at(drive: &Drive, cylinder: u32, token: u64) -> QueuedOp {
        let lba = drive.model.geometry.first_lba_of_cylinder(cylinder).expect("cylinder holds data");
        QueuedOp { lba, sectors: 8, kind: OpKind::Read, cylinder, enqueued: token, token }
    }

    /// Move the arm to `cylinder`.
    pub fn park(drive: &mut Drive, cylinder: u32) {
        let lba = drive.model.geometry.first_lba_of_cylinder(cylinder).expect("cylinder holds data");
        drive.service(0, lba, 1, OpKind::Read);
        assert_eq!(drive.cylinder(), cylinder);
    }

    /// Pop everything, serving each popped op on the drive (so the arm follows), and return
    /// the tokens in service order.
    pub fn serve_all(queue: &mut dyn super::Scheduler, drive: &mut Drive) -> Vec<u64> {
        let mut now = 0;
        let mut order = Vec::new();
        while let Some(op) = queue.pop(drive, now) {
            now += drive.service(now, op.lba, op.sectors, op.kind).total();
            order.push(op.token);
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{drive, op_at};
    use super::*;

    #[test]
    fn registry_names_make_and_document_every_discipline() {
        assert_eq!(names(), vec!["fcfs", "sstf", "clook", "sptf"]);
        for name in names() {
            let queue = make(name).unwrap();
            assert!(queue.is_empty(), "{name}");
            assert!(!entry(name).unwrap().doc.is_empty());
            assert!(DiskQueue::new(name).is_some());
        }
        assert!(make("elevator").is_none());
        assert!(DiskQueue::new("elevator").is_none());
        assert!(DiskQueue::with_classes("fcfs", "nonexistent").is_none());
    }

    #[test]
    fn foreground_is_always_served_before_background() {
        let d = drive();
        let mut q = DiskQueue::new("fcfs").unwrap();
        q.push(Priority::Background, op_at(&d, 1, 100));
        q.push(Priority::Foreground, op_at(&d, 2, 1));
        q.push(Priority::Background, op_at(&d, 3, 101));
        q.push(Priority::Foreground, op_at(&d, 4, 2));
        assert_eq!(
            (q.len(), q.len_of(Priority::Foreground), q.len_of(Priority::Background)),
            (4, 2, 2)
        );
        let (p, op) = q.pop(&d, 0).unwrap();
        assert_eq!((p, op.token), (Priority::Foreground, 1));
        // A foreground op arriving while background waits still goes first.
        q.push(Priority::Foreground, op_at(&d, 5, 3));
        let order: Vec<_> =
            std::iter::from_fn(|| q.pop(&d, 0)).map(|(p, op)| (p, op.token)).collect();
        assert_eq!(
            order,
            vec![
                (Priority::Foreground, 2),
                (Priority::Foreground, 3),
                (Priority::Background, 100),
                (Priority::Background, 101)
            ]
        );
        assert!(q.is_empty());
    }

    #[test]
    fn the_inline_default_queue_serves_as_the_registry_built_one_does() {
        // Random pushes of both classes, pops and a drain midway: the inline
        // foreground-first FCFS queue and the same discipline through the registries give
        // the same operations in the same order with the same counts.
        let d = drive();
        let mut rng = crate::sim::RngStream::new(3, crate::sim::StreamId::Policy(0));
        let mut inline = DiskQueue::new("fcfs").unwrap();
        let mut general = DiskQueue::build("fcfs", classes::DEFAULT, false).unwrap();
        assert!(matches!(inline.classes, Classes::ForegroundFirstFcfs { .. }));
        assert!(matches!(general.classes, Classes::General(_)));
        let (mut pushed, mut popped) = (0u64, 0);
        for step in 0..20_000u64 {
            if rng.below(5) < 3 {
                let priority = if rng.below(4) == 0 { Priority::Background } else { Priority::Foreground };
                let op = op_at(&d, rng.below(900) as u32, step);
                inline.push(priority, op);
                general.push(priority, op);
                pushed += 1;
            } else if step % 2 == 0 {
                let (a, b) = (inline.pop(&d, step), general.pop(&d, step));
                assert_eq!(a.map(|(p, op)| (p, op.token)), b.map(|(p, op)| (p, op.token)), "step {step}");
                popped += a.is_some() as u64;
            } else {
                let (a, b) = (inline.pop_op(&d, step), general.pop_op(&d, step));
                assert_eq!(a.map(|op| op.token), b.map(|op| op.token), "step {step}");
                popped += a.is_some() as u64;
            }
            for priority in [Priority::Foreground, Priority::Background] {
                assert_eq!(inline.len_of(priority), general.len_of(priority));
            }
            assert_eq!(inline.len(), general.len());
            if step == 10_000 {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                inline.drain_into(&mut a);
                general.drain_into(&mut b);
                let tokens = |v: &[(Priority, QueuedOp)]| v.iter().map(|(p, op)| (*p, op.token)).collect::<Vec<_>>();
                assert_eq!(tokens(&a), tokens(&b));
                popped += a.len() as u64;
                assert!(inline.is_empty() && general.is_empty());
            }
        }
        assert!(popped > 1000 && pushed > popped, "the sequence exercises both queues");
    }

    #[test]
    fn drain_returns_everything_waiting_in_arrival_order_per_class() {
        let d = drive();
        for name in names() {
            let mut q = DiskQueue::new(name).unwrap();
            for (i, cylinder) in [400u32, 3, 700, 12, 3].into_iter().enumerate() {
                let priority = if i % 2 == 0 { Priority::Foreground } else { Priority::Background };
                q.push(priority, op_at(&d, cylinder, i as u64));
            }
            q.pop(&d, 0).unwrap();
            let mut out = Vec::new();
            q.drain_into(&mut out);
            assert!(q.is_empty(), "{name}");
            assert_eq!(out.len(), 4, "{name}");
            let foreground: Vec<u64> = out
                .iter()
                .filter(|(p, _)| *p == Priority::Foreground)
                .map(|(_, op)| op.token)
                .collect();
            let background: Vec<u64> = out
                .iter()
                .filter(|(p, _)| *p == Priority::Background)
                .map(|(_, op)| op.token)
                .collect();
            assert_eq!(background, vec![1, 3], "{name}");
            assert_eq!(foreground.len(), 2, "{name}");
            assert!(foreground.windows(2).all(|w| w[0] < w[1]), "{name}: {foreground:?}");
        }
    }
}
