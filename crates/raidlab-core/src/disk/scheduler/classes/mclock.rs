//! mClock (Gulati, Merchant, Varman, OSDI 2010), as Ceph's OSD runs it between its client
//! and background-recovery classes (`rebuild-controls.md` §2.3; Ceph
//! `doc/rados/configuration/mclock-config-ref.rst`): each class has a reservation R (a
//! floor, in I/O units per second), a weight W (its share of what is left) and a limit L (a
//! ceiling, or none). Every request of class i carries three tags:
//!
//! ```text
//!   R-tag = previous R-tag + cost / R_i      (the floor's schedule)
//!   L-tag = previous L-tag + cost / L_i      (the ceiling's schedule)
//!   P-tag = previous P-tag + cost / W_i      (the share's virtual time)
//! ```
//!
//! When the drive is free: if some class's head has an R-tag at or before now, the one
//! with the earliest R-tag is served (the *constraint* phase); else, among classes whose
//! head's L-tag is at or before now, the one with the smallest P-tag (the *weight* phase),
//! and then the class's R-tag does not advance (mClock's Algorithm 1: "subtract 1/r_k from
//! R tags of VM k", so that work served by weight does not use up the reservation). So a
//! class gets its reservation when the drive cannot serve them all, its weight's share of
//! the drive when that is more, and never more than its limit
//! ([`expected_recovery_share`]). With a limit the discipline is not work-conserving:
//! nothing may be served, and the drive is woken when the earliest limit allows
//! ([`ClassDiscipline::next_ready`]).
//!
//! raidlab's choices: the user (foreground) class is Ceph's *client* class, the rebuild
//! (background) class its *background recovery* class (best-effort work, backfill and scrub,
//! is not modelled). A class that was empty does not bank credit: its tags start no earlier
//! than now (R, L) and no earlier than the other class's P-tag (mClock's idle-client
//! adjustment); and a busy class's R- and L-tags are never earlier than the arrival of its
//! request served next (mClock's `max(previous + 1/r, arrival)`): a class served below its
//! reservation for a long time would otherwise owe itself a debt older than any of its
//! requests and shut the other class out until it is paid. An op's cost is in I/O units of the
//! capacity: one unit per op, or its bytes over the bytes one I/O of the capacity moves at the
//! sequential bandwidth if larger (Ceph's cost per I/O is
//! `osd_mclock_max_sequential_bandwidth` / `osd_mclock_max_capacity_iops`; **[inference]**
//! from the option descriptions in `rebuild-controls.md` §2.3).

use std::collections::VecDeque;

use super::{index, priority, ClassDiscipline};
use crate::disk::scheduler::{MakeScheduler, Priority, QueuedOp, Scheduler};
use crate::disk::{Drive, SECTOR_BYTES};
use crate::sim::Nanos;

pub const DOC: &str = "mClock: reservation, weight and limit tags between user and rebuild work (Ceph's balanced profile at 315 IOPS unless a rebuild discipline sets it)";

/// One class's quality of service.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassQos {
    /// Reservation, I/O units per second (0: none).
    pub reservation_per_s: f64,
    /// Weight (relative share of what reservations leave).
    pub weight: f64,
    /// Limit, I/O units per second (`None`: unlimited).
    pub limit_per_s: Option<f64>,
}

/// The parameters of an mClock drive queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MclockParams {
    /// The user (client) class.
    pub client: ClassQos,
    /// The rebuild (background recovery) class.
    pub recovery: ClassQos,
    /// Bytes one I/O unit covers: an op of more bytes costs proportionally more.
    pub bytes_per_io: f64,
}

impl MclockParams {
    /// Ceph's `balanced` profile (the default) over an HDD OSD's default capacity: 315 IOPS,
    /// 150 MiB/s sequential (`rebuild-controls.md` §2.3).
    pub fn balanced_hdd() -> Self {
        let iops = 315.0;
        MclockParams {
            client: ClassQos {
                reservation_per_s: 0.5 * iops,
                weight: 1.0,
                limit_per_s: None,
            },
            recovery: ClassQos {
                reservation_per_s: 0.5 * iops,
                weight: 1.0,
                limit_per_s: None,
            },
            bytes_per_io: 150.0 * 1024.0 * 1024.0 / iops,
        }
    }
}

/// The share of a saturated drive's I/O units mClock gives the rebuild class when both
/// classes always wait, the drive serving `units_per_s` I/O units a second: the weights'
/// shares, raised to a class's reservation (the other class having the rest), and capped by
/// the limits (work the limits leave goes to the other class, or idles). When the drive
/// cannot serve the reservations (a capacity set above what it serves), this gives their
/// ratio, which mClock keeps only while every waiting request's tag is later than its
/// arrival; otherwise the tags fall back to the arrival times and the drive serves the two
/// classes roughly in arrival order. Ceph measures the capacity at an OSD's start so that
/// reservations stay feasible.
pub fn expected_recovery_share(params: &MclockParams, units_per_s: f64) -> f64 {
    let (c, r) = (&params.client, &params.recovery);
    let reserved = c.reservation_per_s + r.reservation_per_s;
    let mut recovery = if units_per_s <= reserved {
        units_per_s * r.reservation_per_s / reserved
    } else {
        let by_weight = (units_per_s * r.weight / (c.weight + r.weight)).max(r.reservation_per_s);
        by_weight.min(units_per_s - c.reservation_per_s)
    };
    if let Some(limit) = r.limit_per_s {
        recovery = recovery.min(limit);
    }
    if let Some(limit) = c.limit_per_s {
        // What the client's limit leaves, if the rebuild's own limit lets it take it.
        recovery = recovery.max((units_per_s - limit).min(r.limit_per_s.unwrap_or(f64::INFINITY)));
    }
    recovery / units_per_s
}

/// One class: its queue, its parameters and the tags of its next request.
#[derive(Debug)]
struct Class {
    queue: Box<dyn Scheduler>,
    qos: ClassQos,
    /// R- and L-tags (ns) and P-tag (virtual) of the request served next from this class.
    r: f64,
    l: f64,
    p: f64,
    /// Arrival times (ns) of the class's waiting requests, oldest first: the request served
    /// next takes the oldest (with FCFS inside the class, its own).
    arrivals: VecDeque<f64>,
}

impl Class {
    fn new(queue: Box<dyn Scheduler>, qos: ClassQos) -> Self {
        Class {
            queue,
            qos,
            r: 0.0,
            l: 0.0,
            p: 0.0,
            arrivals: VecDeque::new(),
        }
    }

    /// The arrival of the request served next (minus infinity when none waits).
    fn next_arrival(&self) -> f64 {
        self.arrivals.front().copied().unwrap_or(f64::NEG_INFINITY)
    }

    /// The next request's R-tag: mClock's `max(previous + cost / r, arrival)`. A class
    /// kept busy below its reservation (a recovery queue that never empties) would
    /// otherwise fall ever further behind the clock, and its stale tags would then win the
    /// constraint phase against every new client request, for as long as it stays busy.
    fn r_tag(&self) -> f64 {
        self.r.max(self.next_arrival())
    }

    /// The next request's L-tag, no earlier than its arrival either.
    fn l_tag(&self) -> f64 {
        self.l.max(self.next_arrival())
    }

    /// Advance the tags past a request of `cost` units; `weighted`: served in the weight
    /// phase (the R-tag advances only in the constraint phase).
    fn charge(&mut self, cost: f64, weighted: bool) {
        if self.qos.reservation_per_s > 0.0 && !weighted {
            self.r = self.r_tag() + cost / self.qos.reservation_per_s * 1e9;
        }
        if let Some(limit) = self.qos.limit_per_s {
            self.l = self.l_tag() + cost / limit * 1e9;
        }
        self.p += cost / self.qos.weight.max(f64::MIN_POSITIVE);
        self.arrivals.pop_front();
    }

    /// Whether the class's next request is within its reservation at `now`.
    fn reserved(&self, now: f64) -> bool {
        self.qos.reservation_per_s > 0.0 && self.r_tag() <= now
    }

    /// Whether the class's next request is within its limit at `now`.
    fn within_limit(&self, now: f64) -> bool {
        self.qos.limit_per_s.is_none() || self.l_tag() <= now
    }
}

/// mClock between the user and the rebuild class of one drive.
#[derive(Debug)]
pub struct MclockClasses {
    /// Index 0: user (foreground), 1: rebuild (background).
    classes: [Class; 2],
    bytes_per_io: f64,
}

impl MclockClasses {
    /// Both classes ordered by queues from `scheduler`, shared by `params`.
    pub fn new(scheduler: MakeScheduler, params: MclockParams) -> Self {
        MclockClasses {
            classes: [
                Class::new(scheduler(), params.client),
                Class::new(scheduler(), params.recovery),
            ],
            bytes_per_io: params.bytes_per_io,
        }
    }

    /// Registry constructor: Ceph's default profile (`balanced`) at an HDD's default capacity.
    pub fn boxed_default(scheduler: MakeScheduler) -> Box<dyn ClassDiscipline> {
        Box::new(Self::new(scheduler, MclockParams::balanced_hdd()))
    }

    /// The cost of `op`, in I/O units.
    fn cost(&self, op: &QueuedOp) -> f64 {
        (op.sectors as f64 * SECTOR_BYTES as f64 / self.bytes_per_io).max(1.0)
    }
}

impl ClassDiscipline for MclockClasses {
    fn push(&mut self, priority: Priority, op: QueuedOp) {
        let i = index(priority);
        if self.classes[i].queue.is_empty() {
            // An idle class banks no credit.
            let now = op.enqueued as f64;
            let other_p = (!self.classes[1 - i].queue.is_empty()).then(|| self.classes[1 - i].p);
            let c = &mut self.classes[i];
            c.r = c.r.max(now);
            c.l = c.l.max(now);
            if let Some(p) = other_p {
                c.p = c.p.max(p);
            }
        }
        self.classes[i].arrivals.push_back(op.enqueued as f64);
        self.classes[i].queue.push(op);
    }

    fn pop(&mut self, drive: &Drive, now: Nanos) -> Option<(Priority, QueuedOp)> {
        let t = now as f64;
        let waiting = |c: &Class| !c.queue.is_empty();
        // Constraint phase: the earliest R-tag due.
        let reserved = (0..2)
            .filter(|&i| waiting(&self.classes[i]) && self.classes[i].reserved(t))
            .min_by(|&a, &b| self.classes[a].r_tag().total_cmp(&self.classes[b].r_tag()));
        let (i, weighted) = match reserved {
            Some(i) => (i, false),
            None => {
                // Weight phase: the smallest P-tag within its limit.
                let i = (0..2)
                    .filter(|&i| waiting(&self.classes[i]) && self.classes[i].within_limit(t))
                    .min_by(|&a, &b| self.classes[a].p.total_cmp(&self.classes[b].p))?;
                (i, true)
            }
        };
        let op = self.classes[i].queue.pop(drive, now)?;
        let cost = self.cost(&op);
        self.classes[i].charge(cost, weighted);
        Some((priority(i), op))
    }

    fn len(&self) -> usize {
        self.classes[0].queue.len() + self.classes[1].queue.len()
    }

    fn len_of(&self, priority: Priority) -> usize {
        self.classes[index(priority)].queue.len()
    }

    fn drain_into(&mut self, out: &mut Vec<(Priority, QueuedOp)>) {
        for (i, class) in self.classes.iter_mut().enumerate() {
            let mut ops = Vec::with_capacity(class.queue.len());
            class.queue.drain_into(&mut ops);
            class.arrivals.clear();
            out.extend(ops.into_iter().map(|op| (priority(i), op)));
        }
    }

    /// Every op is tagged, so none skips the queue.
    fn serves_at_once(&self, _priority: Priority, _now: Nanos) -> bool {
        false
    }

    fn next_ready(&self, now: Nanos) -> Option<Nanos> {
        // Nothing was served: every waiting class is past its limit. The earliest of their
        // L-tags (or R-tags, which would serve them by reservation).
        self.classes
            .iter()
            .filter(|c| !c.queue.is_empty())
            .map(|c| {
                let r = if c.qos.reservation_per_s > 0.0 {
                    c.r_tag()
                } else {
                    f64::INFINITY
                };
                r.min(c.l_tag())
            })
            .min_by(f64::total_cmp)
            .map(|t| (t.ceil() as Nanos).max(now + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::scheduler::FcfsQueue;

    fn fcfs() -> Box<dyn Scheduler> {
        Box::<FcfsQueue>::default()
    }
    use crate::disk::scheduler::test_support::{drive, op_at};

    /// Both classes always backlogged, each op taking `service_ns` of the drive: the share of
    /// ops served from the rebuild class.
    fn recovery_share(params: MclockParams, service_ns: Nanos, ops: usize) -> f64 {
        let d = drive();
        let mut classes = MclockClasses::new(fcfs, params);
        let mut now: Nanos = 0;
        let mut token = 0;
        for _ in 0..4 {
            for p in [Priority::Foreground, Priority::Background] {
                token += 1;
                classes.push(
                    p,
                    QueuedOp {
                        enqueued: now,
                        ..op_at(&d, 1, token)
                    },
                );
            }
        }
        let mut recovery = 0;
        for _ in 0..ops {
            let (p, _) = match classes.pop(&d, now) {
                Some(x) => x,
                None => {
                    now = classes.next_ready(now).unwrap();
                    continue;
                }
            };
            recovery += (p == Priority::Background) as usize;
            now += service_ns;
            token += 1;
            classes.push(
                p,
                QueuedOp {
                    enqueued: now,
                    ..op_at(&d, 1, token)
                },
            );
        }
        recovery as f64 / ops as f64
    }

    fn qos(r: f64, w: f64, l: Option<f64>) -> ClassQos {
        ClassQos {
            reservation_per_s: r,
            weight: w,
            limit_per_s: l,
        }
    }

    /// A drive slower than the reservations: shares follow the reservations. Faster: the
    /// weights, but no less than a reservation. A limit caps a class even on an idle drive.
    #[test]
    fn shares_follow_reservation_then_weight_then_limit() {
        // (Reservations above what the drive serves cannot all be met; mClock then serves
        // the earliest tags, no earlier than each request's arrival: see the next test.)
        let bytes_per_io = 1e6;
        // Ceph's high_client_ops at 315 IOPS: reservations 189 + 126, weights 2 : 1.
        let p = MclockParams {
            client: qos(189.0, 2.0, None),
            recovery: qos(126.0, 1.0, None),
            bytes_per_io,
        };
        // 315 ops/s, the capacity the reservations share: 60/40 by reservation; 1,000
        // ops/s: 2 : 1 by weight; 350 ops/s: the weight's third (117) is less than the
        // reservation (126).
        for (service_ns, expected) in [
            (3_174_603, 0.4),
            (1_000_000, 1.0 / 3.0),
            (2_857_143, 126.0 / 350.0),
        ] {
            let share = recovery_share(p, service_ns, 20_000);
            assert!(
                (share - expected).abs() < 0.005,
                "{service_ns} ns: {share} against {expected}"
            );
            let formula = expected_recovery_share(&p, 1e9 / service_ns as f64);
            assert!((formula - expected).abs() < 0.001, "{formula}");
        }
        // A limit of 100 ops/s on the rebuild class of a 1,000 ops/s drive: a tenth.
        let p = MclockParams {
            client: qos(0.0, 1.0, None),
            recovery: qos(0.0, 5.0, Some(100.0)),
            bytes_per_io,
        };
        let share = recovery_share(p, 1_000_000, 20_000);
        assert!((share - 0.1).abs() < 0.01, "{share}");
        assert!((expected_recovery_share(&p, 1000.0) - 0.1).abs() < 1e-9);
    }

    /// With both classes limited below the drive's rate, the drive waits for the limits.
    #[test]
    fn limits_hold_work_back_and_say_when() {
        let d = drive();
        let p = MclockParams {
            client: qos(0.0, 1.0, Some(10.0)),
            recovery: qos(0.0, 1.0, Some(10.0)),
            bytes_per_io: 1e6,
        };
        let mut classes = MclockClasses::new(fcfs, p);
        classes.push(Priority::Foreground, op_at(&d, 1, 1));
        classes.push(
            Priority::Foreground,
            QueuedOp {
                enqueued: 0,
                ..op_at(&d, 1, 2)
            },
        );
        assert!(!classes.serves_at_once(Priority::Foreground, 0));
        let first = classes.pop(&d, 1).unwrap();
        assert_eq!(first.1.token, 1);
        assert!(
            classes.pop(&d, 2).is_none(),
            "the limit holds the second op back"
        );
        assert_eq!(classes.next_ready(2), Some(100_000_001));
        assert_eq!(
            classes.pop(&d, 100_000_001).map(|(_, op)| op.token),
            Some(2)
        );
    }

    /// A class kept busy below its reservation banks no debt older than its requests: after
    /// 20 s of rebuild ops served at 100 a second against a reservation of 157.5 (Ceph's
    /// balanced profile at 315 IOPS, on a drive that serves 100), a user request that
    /// arrives is served within two ops, not after the rebuild class's 7 s of lag.
    #[test]
    fn a_busy_class_below_its_reservation_does_not_starve_a_new_request() {
        let d = drive();
        let p = MclockParams { client: qos(157.5, 1.0, None), recovery: qos(157.5, 1.0, None), bytes_per_io: 1e6 };
        let mut classes = MclockClasses::new(fcfs, p);
        let service_ns: Nanos = 10_000_000;
        let mut now: Nanos = 0;
        let mut token = 0;
        for _ in 0..2 {
            token += 1;
            classes.push(Priority::Background, QueuedOp { enqueued: now, ..op_at(&d, 1, token) });
        }
        for _ in 0..2_000 {
            let (priority, _) = classes.pop(&d, now).unwrap();
            assert_eq!(priority, Priority::Background);
            now += service_ns;
            token += 1;
            classes.push(Priority::Background, QueuedOp { enqueued: now, ..op_at(&d, 1, token) });
        }
        token += 1;
        classes.push(Priority::Foreground, QueuedOp { enqueued: now, ..op_at(&d, 1, token) });
        let mut served_after = None;
        for k in 0..1_000 {
            let (priority, _) = classes.pop(&d, now).unwrap();
            now += service_ns;
            if priority == Priority::Foreground {
                served_after = Some(k);
                break;
            }
            token += 1;
            classes.push(Priority::Background, QueuedOp { enqueued: now, ..op_at(&d, 1, token) });
        }
        let k = served_after.expect("the user request was served");
        assert!(k <= 2, "the user request waited for {k} rebuild ops");
    }
}
