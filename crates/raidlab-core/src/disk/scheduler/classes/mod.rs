//! How a drive's two priority classes share it: one registry of class disciplines.
//!
//! A class discipline owns the per-class queues (built with the drive's queue discipline) and
//! decides which class is served next. Only `foreground_first` exists so far; rebuild
//! disciplines such as the vacationing server (VSM) or the permanent customer (PCM) are one
//! file each plus one line in [`CLASS_DISCIPLINES`].

mod foreground_first;
pub mod mclock;
pub mod time_share;

pub use foreground_first::ForegroundFirst;
pub use mclock::MclockClasses;
pub use time_share::TimeShare;

use super::{MakeScheduler, Priority, QueuedOp};
use crate::disk::Drive;
use crate::sim::Nanos;

/// The index of a class in a two-class discipline's arrays: 0 the user (foreground) class,
/// 1 the rebuild (background) class.
fn index(priority: Priority) -> usize {
    match priority {
        Priority::Foreground => 0,
        Priority::Background => 1,
    }
}

/// The class at index `index` (see [`index`]).
fn priority(index: usize) -> Priority {
    if index == 0 {
        Priority::Foreground
    } else {
        Priority::Background
    }
}

/// How the foreground and background classes share one drive.
pub trait ClassDiscipline: Send + std::fmt::Debug {
    /// Add an operation of class `priority`.
    fn push(&mut self, priority: Priority, op: QueuedOp);
    /// The operation to serve next, with its class; called only when the drive is idle.
    fn pop(&mut self, drive: &Drive, now: Nanos) -> Option<(Priority, QueuedOp)>;
    /// Operations waiting, both classes.
    fn len(&self) -> usize;
    /// Whether nothing waits in either class.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Operations of class `priority` waiting.
    fn len_of(&self, priority: Priority) -> usize;
    /// Remove every waiting operation into `out` (each class in arrival order).
    fn drain_into(&mut self, out: &mut Vec<(Priority, QueuedOp)>);
    /// Whether an op of class `priority`, arriving at this queue while it is empty and the
    /// drive idle, would be served at once. The engine asks before it lets such an op skip
    /// the queue. A work-conserving discipline says yes (the default); one that holds work
    /// back (a bandwidth limit, an idle timer) may say no, and the op is queued instead.
    fn serves_at_once(&self, _priority: Priority, _now: Nanos) -> bool {
        true
    }
    /// A discipline that is not work-conserving (a limit) may answer `pop` with nothing
    /// while operations wait: then, the time at which it will serve one, and the engine
    /// asks again then. By default `None` (work-conserving: never asked).
    fn next_ready(&self, _now: Nanos) -> Option<Nanos> {
        None
    }
}

/// One registered class discipline.
pub struct ClassDisciplineEntry {
    /// Name used in configs.
    pub name: &'static str,
    /// Build it; `scheduler` makes an empty queue of the drive's queue discipline.
    pub make: fn(scheduler: MakeScheduler) -> Box<dyn ClassDiscipline>,
    /// One line for the docs and error messages.
    pub doc: &'static str,
}

/// The class discipline used when none is named.
pub const DEFAULT: &str = "foreground_first";

/// Every class discipline, in documentation order.
pub static CLASS_DISCIPLINES: &[ClassDisciplineEntry] = &[
    ClassDisciplineEntry {
        name: "foreground_first",
        make: ForegroundFirst::boxed,
        doc: "foreground first; background only when no foreground op waits; never preempted",
    },
    ClassDisciplineEntry { name: "mclock", make: MclockClasses::boxed_default, doc: mclock::DOC },
    ClassDisciplineEntry { name: "time_share", make: TimeShare::boxed_default, doc: time_share::DOC },
];

/// Names of the registered class disciplines.
pub fn names() -> Vec<&'static str> {
    CLASS_DISCIPLINES.iter().map(|entry| entry.name).collect()
}

/// The registry entry of class discipline `name`.
pub fn entry(name: &str) -> Option<&'static ClassDisciplineEntry> {
    CLASS_DISCIPLINES.iter().find(|entry| entry.name == name)
}
