//! The engine: one discrete-event loop connecting the workload, the controller, the drives
//! and the metrics.
//!
//! ```text
//!  workload ──UserRequest──▶ controller ──IssuedOp──▶ drive queue ──▶ drive mechanism
//!     ▲                       (plans,     ◀──op_done──  (scheduler)     (seek, rotate,
//!     │ closed loop            locks)                                     transfer)
//!     └──────── CompletedRequest ──▶ metrics (histograms, windows)
//! ```
//!
//! With `[cache]`, a user request passes the buffer cache first (`cache::front`): it answers
//! hits itself and sends fills, writes and destages to the controller under origins of their
//! own, whose completions come back to it; only user requests reach the metrics.
//!
//! Events are `Arrival`, `DiskDone` and `Failure` (and the rebuild's, the drives' wake-ups
//! and the cache's answers); time is integer ns and ties break by insertion order, so a run
//! is a pure function of its configuration and seed.

use std::sync::Arc;

use crate::layout::plan::DriveView;
use crate::cache::front::{Answered, Arrived, FrontCache};
use crate::array::jobs::OpToken;
use crate::array::Controller;
use crate::array::rebuild_io::RebuildEvent;
use crate::array::state::RebuildUnits;
use crate::array::ReadEstimate;
use crate::config::{Config, FailureKind};
use crate::rebuild::{DriveState, Rebuild};
use crate::disk::{self, Drive, DriveModel, Priority, QueuedOp};
use crate::error::{Error, Result};
use crate::layout;
use crate::metrics::{Outcome, Recorder};
use crate::request::{Origin, RequestRecord, UserRequest};
use crate::sim::{gcd, ns_to_s, s_to_ns, EventQueue, Nanos, RngStream, StreamId, MAX_SIM_TIME_NS, SECONDS_PER_YEAR};
use crate::workload::{ArrivalConfig, Loop, SyntheticGenerator, Workload};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Arrival,
    DiskDone { drive: u32, epoch: u32 },
    Failure { drive: u32 },
    /// A spare arrives in slot `slot`.
    SpareArrives { slot: u32 },
    /// The controller crashes and restarts at once.
    Crash,
    /// Start the next rebuild, if a failed member that can be rebuilt and a spare are both
    /// ready (`rebuild.delay_s` after the member's failure and the spare's arrival).
    RebuildStart,
    /// A timer `owner` set: it is woken, if the timer is of the owner's current `epoch`.
    Timer { owner: OwnerCode, epoch: u32 },
}

/// A component of the run that sets timers ([`Event::Timer`]) or is woken when a drive goes
/// idle ([`IdleSubscription`]). A new kind of timed work (a log's flush, a crash's restart) is
/// one more owner and its arm in [`Simulation::wake`], not a new event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// The rebuild policies: a rate limit's wake-up, or a drive gone idle to pull work onto.
    Rebuild,
    /// Drive `drive`'s class discipline, which held its queued work back until now (a
    /// limit): start what it lets through, if the drive is still idle.
    Drive(u32),
    /// The buffer cache in front of the array, whose answers (its hits) are due now.
    Cache,
    /// A log-assisted array's idle detector (`log.resync_idle_ms`): the array may have been
    /// idle long enough to re-synchronize.
    LogIdle,
    /// The controller's CPU: a plan it delayed by its CPU time (a log index's look-ups) is
    /// due.
    ControllerCpu,
    /// Operations that need no drive (a distributed spare's sectors in the free column of
    /// the member it holds), answered as a drive's completion would be, at the same instant.
    NoDrive,
}

/// An [`Owner`] as the event queue holds it: a drive's slot, or a code above every slot. (An
/// event stays the size of a completion's, 12 bytes, with a plain tag: an `Owner` inside it
/// made the event loop's dispatch decode a niche, 520,000 more instructions in 60,000 RAID-5
/// requests, 0.3 %.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OwnerCode(u32);

impl OwnerCode {
    const REBUILD: u32 = u32::MAX;
    const CACHE: u32 = u32::MAX - 1;
    const LOG_IDLE: u32 = u32::MAX - 2;
    const CONTROLLER_CPU: u32 = u32::MAX - 3;
    const NO_DRIVE: u32 = u32::MAX - 4;

    fn of(owner: Owner) -> OwnerCode {
        OwnerCode(match owner {
            Owner::Rebuild => Self::REBUILD,
            Owner::Cache => Self::CACHE,
            Owner::LogIdle => Self::LOG_IDLE,
            Owner::ControllerCpu => Self::CONTROLLER_CPU,
            Owner::NoDrive => Self::NO_DRIVE,
            Owner::Drive(drive) => drive,
        })
    }

    fn owner(self) -> Owner {
        match self.0 {
            Self::REBUILD => Owner::Rebuild,
            Self::CACHE => Owner::Cache,
            Self::LOG_IDLE => Owner::LogIdle,
            Self::CONTROLLER_CPU => Owner::ControllerCpu,
            Self::NO_DRIVE => Owner::NoDrive,
            drive => Owner::Drive(drive),
        }
    }
}

impl Owner {
    /// The owner in words, for the watchdog's error.
    fn describe(self) -> String {
        match self {
            Owner::Rebuild => "the rebuild discipline's timer".into(),
            Owner::Drive(drive) => format!("drive {drive}'s class discipline (wake-ups)"),
            Owner::Cache => "the buffer cache (answers)".into(),
            Owner::LogIdle => "the log's idle re-sync detector".into(),
            Owner::ControllerCpu => "the controller's CPU (plans delayed by their look-ups)".into(),
            Owner::NoDrive => "operations that need no drive (a distributed spare's free column)".into(),
        }
    }
}

/// An owner woken once the handling of an event is done, if a drive went idle during it (or,
/// with `after_every_completion`, if any drive completed an operation). It is woken after the
/// event's own work is queued, so that a drive that work keeps busy is not taken for idle.
#[derive(Debug, Clone, Copy)]
struct IdleSubscription {
    owner: Owner,
    after_every_completion: bool,
}

/// [`Simulation`]'s `idle_pending` bits: a drive went idle; a drive completed an operation.
const DRIVE_WENT_IDLE: u8 = 1;
const DRIVE_COMPLETED: u8 = 2;

impl Event {
    /// Who owns the event, in words, for the watchdog's error.
    fn owner(self) -> String {
        match self {
            Event::Arrival => "the workload (arrivals)".into(),
            Event::DiskDone { drive, .. } => format!("drive {drive} (completions)"),
            Event::Failure { drive } => format!("the failure schedule (drive {drive})"),
            Event::SpareArrives { slot } => format!("the failure schedule (spare slot {slot})"),
            Event::Crash => "the failure schedule (a crash)".into(),
            Event::RebuildStart => "the rebuild's start".into(),
            Event::Timer { owner, .. } => owner.owner().describe(),
        }
    }
}

/// The watchdog's bound on events handled at one simulated instant, beyond those the user
/// requests arriving then may need ([`EVENTS_PER_ARRIVAL`] each): a run that handles more
/// without its clock moving is stuck in a loop, and stops with an error naming the owner of
/// the event, instead of spinning for ever.
const STUCK_EVENTS: u64 = 1 << 20;
/// Events one arrival may cause at its own instant (its ops, a cache's answers, the rebuild
/// pulls its completions start), for the watchdog.
const EVENTS_PER_ARRIVAL: u64 = 64;
/// The watchdog's bound on rounds of one event's handling (operations issued, failed at once
/// and issued again) before the run stops with an error.
const STUCK_ROUNDS: u64 = 1 << 20;

/// User reads a rebuild order may have waiting before they are handed to it without a
/// decision.
const PENDING_READS_BATCH: usize = 4096;

/// One rebuild of a run: when it started and ended, and its progress.
#[derive(Debug, Clone)]
pub struct RebuildRecord {
    /// The member rebuilt and the slot written.
    pub member: u32,
    pub target: u32,
    /// When the member failed, the rebuild started, and ended (`None` if it did not finish).
    pub failed_at: Nanos,
    pub started_at: Nanos,
    pub ended_at: Option<Nanos>,
    /// How it ended: `complete`, `abandoned`, or `running` at the end of the run.
    pub outcome: &'static str,
    /// Why it was abandoned, or why it was still running when the run ended (empty for a
    /// complete one).
    pub reason: String,
    /// Rebuild units, and units made current by the executor, user writes and piggybacking.
    pub units: u64,
    pub made_current: [u64; 3],
    /// What the rebuild order counted, when it ended (PRO's zones and decisions).
    pub order_counters: Vec<(&'static str, u64)>,
    /// A healing copy out of a distributed spare (`rebuild.healing`), not a rebuild of a
    /// lost member.
    pub healing: bool,
}

impl DriveState for Vec<DriveSlot> {
    fn cylinder(&self, drive: u32) -> u32 {
        self[drive as usize].drive.cylinder()
    }
    fn is_idle(&self, drive: u32) -> bool {
        let d = &self[drive as usize];
        d.in_service.is_none() && d.queue.is_empty()
    }
    fn user_sectors_done(&self, drive: u32) -> u64 {
        let d = &self[drive as usize];
        d.sectors_done - d.rebuild_sectors_done
    }
    fn user_ops_done(&self, drive: u32) -> u64 {
        let d = &self[drive as usize];
        d.operations - d.rebuild_ops_done
    }
    fn user_ops_in_flight(&self, drive: u32) -> u64 {
        let d = &self[drive as usize];
        d.depth - d.rebuild_ops_in_flight
    }
}

/// One drive of the array with its queue and accounting.
#[derive(Debug)]
pub struct DriveSlot {
    pub drive: Drive,
    queue: disk::DiskQueue,
    in_service: Option<(u64, Nanos)>,
    /// When the operation in service ends (meaningful while there is one).
    in_service_until: Nanos,
    /// First sector of the last operation queued (meaningful while the queue holds any).
    last_queued_lba: u64,
    /// When the drive failed.
    pub failed_at: Option<Nanos>,
    epoch: u32,
    /// Time spent serving operations, ns.
    pub busy_ns: u64,
    /// Of it, time spent serving rebuild operations, ns.
    pub rebuild_busy_ns: u64,
    /// Sectors moved by rebuild operations.
    pub rebuild_sectors: u64,
    /// Whether the slot holds a drive (a spare that arrives later does not, until then).
    pub present: bool,
    /// Operations served to completion.
    pub operations: u64,
    /// Sectors of the operation in service, and of every operation served to completion.
    in_service_sectors: u32,
    sectors_done: u64,
    /// Of them, rebuild operations: served to completion, their sectors, and those queued or
    /// in service (what a rebuild discipline that watches user work subtracts).
    rebuild_ops_done: u64,
    rebuild_sectors_done: u64,
    rebuild_ops_in_flight: u64,
    /// Runs of rebuild operations between user operations (in completion order): an idle
    /// period's worth of rebuild reads under VSM. And the busy time of each run's first
    /// operation, which carries the seek from wherever the user left the arm, ns.
    pub rebuild_runs: u64,
    pub rebuild_run_first_busy_ns: u64,
    /// Whether the last operation completed was rebuild work.
    last_done_rebuild: bool,
    depth: u64,
    depth_area: u128,
    last_change: Nanos,
}

impl DriveSlot {
    /// Rebuild operations served to completion.
    pub fn rebuild_operations(&self) -> u64 {
        self.rebuild_ops_done
    }

    #[inline]
    fn set_depth(&mut self, now: Nanos, depth: u64) {
        self.depth_area += self.depth as u128 * (now - self.last_change) as u128;
        self.last_change = now;
        self.depth = depth;
    }

    /// Share of its working life the drive spent serving operations: busy time over the time
    /// from the start until it failed (or until `now`).
    pub fn utilization(&self, now: Nanos) -> f64 {
        let life = self.failed_at.unwrap_or(now);
        if life == 0 {
            0.0
        } else {
            self.busy_ns as f64 / life as f64
        }
    }

    /// Time-averaged number of operations waiting or in service up to `now`.
    pub fn mean_queue_length(&self, now: Nanos) -> f64 {
        let area = self.depth_area + self.depth as u128 * (now.saturating_sub(self.last_change)) as u128;
        if now == 0 {
            0.0
        } else {
            area as f64 / now as f64
        }
    }
}

/// The drives as planners see them, with the run's estimate for busy copies.
struct Drives<'a>(&'a [DriveSlot], ReadEstimate);

impl DriveView for Drives<'_> {
    fn is_idle(&self, drive: u32) -> bool {
        let d = &self.0[drive as usize];
        d.in_service.is_none() && d.queue.is_empty()
    }
    fn positioning_estimate(&self, drive: u32, now: Nanos, pba: u64) -> Nanos {
        self.0[drive as usize].drive.positioning_estimate(now, pba)
    }
    fn read_estimate(&self, drive: u32, now: Nanos, pba: u64) -> Nanos {
        let slot = &self.0[drive as usize];
        // Where the arm will start this read from on a first-come queue: after the last
        // operation queued, or where it is.
        let positioning = || {
            if slot.queue.is_empty() {
                slot.drive.positioning_estimate(now, pba)
            } else {
                slot.drive.positioning_estimate_from(slot.last_queued_lba, pba)
            }
        };
        match self.1 {
            ReadEstimate::InService => slot.drive.positioning_estimate(now, pba),
            ReadEstimate::QueueTail => positioning(),
            ReadEstimate::QueueDrain => {
                let in_service = if slot.in_service.is_some() { slot.in_service_until.saturating_sub(now) } else { 0 };
                let mean_service = slot.busy_ns.checked_div(slot.operations).unwrap_or(0);
                in_service + slot.queue.len() as u64 * mean_service + positioning()
            }
            ReadEstimate::Random => 0,
        }
    }
    fn arm_sector(&self, drive: u32) -> Option<u64> {
        let drive = &self.0[drive as usize].drive;
        drive.model.geometry.first_lba_of_track(drive.cylinder(), drive.surface())
    }
}

/// Progress report hook: called with (fraction done or NaN, completed requests); returning
/// false cancels the run.
pub type ProgressHook<'a> = &'a mut dyn FnMut(f64, u64) -> bool;

/// A simulation, built from a validated configuration.
pub struct Simulation {
    pub config: Config,
    /// How a mirror's read compares busy copies (`array.read_estimate`).
    read_estimate: ReadEstimate,
    /// Rebuild ops pay no rotational wait before their first sector
    /// (`rebuild.rotational_latency = "none"`).
    rebuild_rotation_free: bool,
    /// The first drive slot that is a distributed spare (dRAID's), after every real slot:
    /// its operations are served by the member whose free column holds the sector. The slot
    /// count when there is none.
    first_distributed_spare: u32,
    /// Operations answered without a drive, at the next [`Owner::NoDrive`] timer (now).
    no_drive_done: std::collections::VecDeque<(u64, u32)>,
    /// Operations of distributed spares queued on members, by token: the spare's slot (a
    /// spare that fails fails them when they complete).
    distributed_in_flight: rustc_hash::FxHashMap<u64, u32>,
    now: Nanos,
    events: EventQueue<Event>,
    /// The drives.
    pub drives: Vec<DriveSlot>,
    /// The controller.
    pub controller: Controller,
    workload: Workload,
    pending: Option<RequestRecord>,
    /// The id the next submitted request gets.
    next_request_id: u64,
    /// Recorded metrics.
    pub recorder: Recorder,
    /// Resolved Poisson rate, requests/s (None for closed loop and trace timing).
    pub arrival_rate_per_s: Option<f64>,
    aborted: Vec<(Priority, QueuedOp)>,
    /// Events processed.
    pub events_processed: u64,
    /// Whether the progress hook cancelled the run.
    pub cancelled: bool,
    /// What the configuration asked for that raidlab does not model (for example DiskSim
    /// parameters of an imported drive), each with its file and line where known.
    pub warnings: Vec<String>,
    /// The drive model every slot is.
    pub model: Arc<DriveModel>,
    /// The rebuild policies (with `[rebuild]`).
    pub rebuild: Option<Rebuild>,
    /// Every rebuild of the run, in start order.
    pub rebuilds: Vec<RebuildRecord>,
    /// Rebuild progress c(t): the fraction of the lost units current at the end of each
    /// time-series window (NaN before the first rebuild starts).
    pub rebuilt_fraction: Vec<f64>,
    /// With `metrics.record_rebuild_progress`: per drive slot, its rebuild operations
    /// completed in each time-series window.
    pub rebuild_progress: Option<Vec<Vec<u32>>>,
    /// The rebuild's timer is set for this time (the earliest wake-up its policies asked for).
    timer_pending: Option<Nanos>,
    /// `log.resync_idle_ms`, ns: how long the array must have no user request before a
    /// log-assisted array re-synchronizes (`None`: never for idleness).
    log_idle_ns: Option<Nanos>,
    /// The idle detector's timer, when set: the requests the workload had issued then.
    log_idle_armed: Option<u64>,
    /// A rebuild ended and `rebuild.end_run` asks the run to end with it.
    stop_now: bool,
    /// The owners woken when a drive goes idle (the rebuild, when its discipline issues reads
    /// only to idle drives, which pull them).
    idle_subscriptions: Vec<IdleSubscription>,
    /// Whether some subscriber wants waking after every completion, not only when a drive
    /// goes idle.
    idle_after_every_completion: bool,
    /// What happened to the drives during the event being handled, for the subscribers to
    /// wake after it: [`DRIVE_WENT_IDLE`] and [`DRIVE_COMPLETED`] bits.
    idle_pending: u8,
    /// When the backlog passed `metrics.max_backlog_requests` and the run ended there.
    pub overloaded_at: Option<Nanos>,
    /// User requests a crash caught in flight, never answered.
    pub crashed_requests: u64,
    /// The last arrival so far, and the user requests in flight just after it.
    last_arrival: (Nanos, u64),
    /// User requests that arrived at the instant of the last arrival (for the watchdog).
    arrivals_at_last_instant: u64,
    /// The buffer cache in front of the array (`[cache]`).
    pub front: Option<Box<FrontCache>>,
    /// Requests the cache issued that completed, and user requests it answered, to handle
    /// after the controller's completions.
    cache_done: Vec<crate::request::CompletedRequest>,
    cache_answered: Vec<Answered>,
}

/// Mean service time (ns) of random accesses of `sectors` sectors on `model`, measured on the
/// model itself: a drive serves 20,000 uniformly random reads one after another (what a FCFS
/// drive does under load), so every modelled component — overheads, seek, settle, rotation,
/// transfer, bus — counts. A fixed seed keeps it deterministic.
/// Count one rebuild operation of drive slot `drive` in time-series window `window` (windows
/// past the recorder's limit are not kept, as `rebuilt_fraction`'s are not).
fn record_progress(progress: &mut [Vec<u32>], drive: u32, window: u64) {
    if window >= crate::metrics::MAX_WINDOWS {
        return;
    }
    let counts = &mut progress[drive as usize];
    if counts.len() <= window as usize {
        counts.resize(window as usize + 1, 0);
    }
    counts[window as usize] += 1;
}

pub fn mean_random_service_ns(model: &Arc<DriveModel>, sectors: f64) -> f64 {
    let mut drive = Drive::new(model.clone(), model.config.rotation, RngStream::new(0x5eed, StreamId::Policy(0)));
    let mut rng = RngStream::new(0x5eed, StreamId::Policy(1));
    let length = (sectors.round() as u64).clamp(1, model.capacity_sectors()) as u32;
    let starts = model.capacity_sectors() - length as u64 + 1;
    let n = 20_000;
    // Back to back, so that with exact rotation each access starts at its own platter angle.
    let mut now: Nanos = 0;
    for _ in 0..n {
        now += drive.service(now, rng.below(starts), length, disk::OpKind::Read).total();
    }
    now as f64 / n as f64
}

impl Simulation {
    /// Build every component. Errors name the offending key.
    pub fn new(config: Config) -> Result<Simulation> {
        config.validate()?;
        let (model_cfg, warnings) = config.drive_model_with_warnings()?;
        let model = Arc::new(DriveModel::new(&model_cfg, "drive.model")?);
        let rotation = config.drive.rotation.unwrap_or(model_cfg.rotation);
        let layout = config.build_layout(model.capacity_sectors())?;
        let capacity = layout.capacity_sectors();
        let arriving = config.failures.iter().filter(|f| f.kind == FailureKind::SpareArrives).count() as u32;
        // A log drive takes the slot after every spare's.
        let log_drive = config.log.as_ref().is_some_and(|l| l.has_log_drive());
        let real_slots = config.array.drives + config.array.spares + arriving + log_drive as u32;
        // Distributed spares (dRAID's) take slots after every real one; their entries here are
        // never served (their operations go to members), and hold their failure state.
        let slots = real_slots + layout.distributed_spares();
        let drives = (0..slots)
            .map(|i| {
                let queue = disk::DiskQueue::with_classes(&config.drive.scheduler, &config.drive.classes)
                    .ok_or_else(|| Error::config("drive.scheduler", "unknown scheduler or class discipline"))?;
                Ok(DriveSlot {
                    drive: Drive::new(model.clone(), rotation, RngStream::new(config.seed, StreamId::Drive(i))),
                    queue,
                    in_service: None,
                    in_service_until: 0,
                    last_queued_lba: 0,
                    failed_at: None,
                    epoch: 0,
                    busy_ns: 0,
                    rebuild_busy_ns: 0,
                    rebuild_sectors: 0,
                    present: i < config.array.drives + config.array.spares
                        || (log_drive && i == config.log_slot())
                        || i >= real_slots,
                    operations: 0,
                    in_service_sectors: 0,
                    sectors_done: 0,
                    rebuild_ops_done: 0,
                    rebuild_sectors_done: 0,
                    rebuild_ops_in_flight: 0,
                    rebuild_runs: 0,
                    rebuild_run_first_busy_ns: 0,
                    last_done_rebuild: false,
                    depth: 0,
                    depth_area: 0,
                    last_change: 0,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let rate = match &config.workload.arrival {
            ArrivalConfig::Poisson { rate_per_s: Some(r), .. } => Some(*r),
            ArrivalConfig::Poisson { target_utilization: Some(u), service_time_ms, .. } => {
                Some(Self::rate_for_utilization(&config, &model, layout.as_ref(), capacity, *u, *service_time_ms)?)
            }
            _ => None,
        };
        let rebuild_progress = config.metrics.record_rebuild_progress.then(|| vec![Vec::new(); slots as usize]);
        let mut warnings = warnings;
        if let (ArrivalConfig::Poisson { rate_per_s: Some(r), .. }, None) = (&config.workload.arrival, &config.workload.trace) {
            // The rate that would keep the drives busy all the time, by the same estimate
            // `target_utilization` uses.
            let capacity_rate = Self::rate_for_utilization(&config, &model, layout.as_ref(), capacity, 1.0, None)?;
            if *r > capacity_rate {
                warnings.push(format!(
                    "workload.arrival.rate_per_s = {} is about {} × the {:.0} requests/s the array can serve by \
                     raidlab's estimate: queues will grow for as long as requests arrive",
                    crate::error::readable(*r),
                    // One decimal, in scientific notation when the ratio runs to many digits.
                    crate::error::readable((r / capacity_rate * 10.0).round() / 10.0),
                    capacity_rate
                ));
            }
        }
        let workload = Workload::new(&config.workload, capacity, rate, config.seed, "workload")?;
        let mut controller = Controller::new(layout, config.content.check, RngStream::new(config.seed, StreamId::MirrorChoice));
        let outside = config.log.as_ref().is_some_and(|l| l.has_log_drive()) as u32;
        if real_slots - outside > config.array.drives {
            controller.set_spare_slots(real_slots - outside - config.array.drives);
        }
        if outside > 0 {
            controller.set_outside_slots(outside);
        }
        if slots > real_slots {
            controller.set_distributed_spare_slots(slots - real_slots);
        }
        if let Some(why) = controller.layout().crash_refusal() {
            if let Some(i) = config.failures.iter().position(|f| f.kind == FailureKind::Crash) {
                return Err(Error::config(format!("failures[{i}].kind"), format!("{why} (layout {})", config.array.layout)));
            }
        }
        let rebuild = match &config.rebuild {
            Some(r) => {
                let asked = crate::layout::RebuildAsked { unit_sectors: r.unit.sectors, redirect_reads: r.redirect_reads, piggyback: r.piggyback };
                if let Some(why) = controller.layout().rebuild_refusal(&asked) {
                    return Err(Error::config("rebuild", format!("layout {}: {why}", config.array.layout)));
                }
                if controller.layout().reconstruction(0).is_none() {
                    return Err(Error::config(
                        "rebuild",
                        format!("layout {} keeps no redundancy: a lost drive cannot be rebuilt", config.array.layout),
                    ));
                }
                if r.rotational_latency == crate::rebuild::RebuildRotation::None && model.cache.is_some() {
                    return Err(Error::config(
                        "rebuild.rotational_latency",
                        "\"none\" is not modelled for a drive with an on-drive cache (`drive.model.cache`): remove one of the two",
                    ));
                }
                let unit_sectors = r.unit.sectors;
                let used = controller.layout().member_sectors();
                if unit_sectors.is_some_and(|s| s > used) {
                    return Err(Error::config(
                        "rebuild.unit",
                        format!("{} sectors is larger than the {used} sectors a member holds", unit_sectors.unwrap_or(0)),
                    ));
                }
                if let Some(rate) = r.rate_mb_s {
                    // Each survivor reads the whole member at most at this rate: a rebuild
                    // longer than the time series holds ends the run in an error about
                    // `metrics.window_s`, which is not what is wrong.
                    let bytes = used as f64 * crate::disk::SECTOR_BYTES as f64;
                    let seconds = bytes / (rate * 1e6);
                    let series_s = config.metrics.window_s * crate::metrics::MAX_WINDOWS as f64;
                    let horizon_s = ns_to_s(MAX_SIM_TIME_NS);
                    if seconds > series_s.min(horizon_s) {
                        return Err(Error::config(
                            "rebuild.rate_mb_s",
                            format!(
                                "at {} MB/s, rebuilding a member's {:.1} MB takes at least {} s (about {} years), longer \
                                 than a run may simulate ({:.0} s: {} windows of metrics.window_s = {} s): raise the rate",
                                crate::error::readable(rate),
                                bytes / 1e6,
                                crate::error::readable(seconds.round()),
                                crate::error::readable((seconds / SECONDS_PER_YEAR).round()),
                                series_s.min(horizon_s),
                                crate::metrics::MAX_WINDOWS,
                                config.metrics.window_s
                            ),
                        ));
                    }
                }
                let fits = |k: u32, per: u64| (k as u64).saturating_mul(per) <= used;
                let shortest_track = model.geometry.zones().iter().map(|z| z.sectors_per_track as u64).min().unwrap_or(1);
                if let Some(k) = r.unit.tracks.filter(|&k| !fits(k, shortest_track)) {
                    return Err(Error::config("rebuild.unit", format!("{k} tracks is more than a drive holds")));
                }
                if let Some(k) = r.unit.cylinders.filter(|&k| k > model.geometry.cylinders()) {
                    return Err(Error::config("rebuild.unit", format!("{k} cylinders is more than a drive has")));
                }
                let sequential = r.zfs.as_ref().is_some_and(|z| z.mode == "sequential");
                if r.discipline == "zfs" && sequential && !controller.layout().sequential_rebuild() {
                    return Err(Error::config(
                        "rebuild.zfs.mode",
                        "OpenZFS's sequential rebuild is for mirrors and dRAID only, \"not possible on RAIDZ due to its \
                         variable stripe width\": use `healing` with this parity layout",
                    ));
                }
                Some(Rebuild::new(r.clone(), slots)?)
            }
            None => None,
        };
        let mut drives = drives;
        if let Some(r) = &rebuild {
            // A rebuild discipline that shares each drive between user and rebuild work at
            // the queue (mClock, a time share) hands every drive its class discipline.
            if let Some(entry) = disk::scheduler::entry(&config.drive.scheduler) {
                if r.class_discipline(entry.make).is_some() {
                    if config.drive.classes != disk::scheduler::classes::DEFAULT {
                        return Err(Error::config(
                            "drive.classes",
                            format!(
                                "the `{}` rebuild discipline shares each drive by its own class discipline, not {:?}",
                                r.config.discipline, config.drive.classes
                            ),
                        ));
                    }
                    for slot in &mut drives {
                        let classes = r.class_discipline(entry.make).expect("it names one");
                        slot.queue = disk::DiskQueue::with_class_discipline(entry.name, classes).expect("a known scheduler");
                    }
                }
            }
        }
        let front = match &config.cache {
            Some(cache) => Some(Box::new(FrontCache::new(
                cache,
                &controller,
                config.content.check,
                s_to_ns(config.metrics.window_s),
            )?)),
            None => None,
        };
        let recorder = Recorder::new(s_to_ns(config.metrics.window_s), s_to_ns(config.metrics.warmup_s))
            .recording_responses(config.metrics.record_responses);
        let (config_drives, config_spares) = (config.array.drives, config.array.spares);
        let read_estimate = config.array.read_estimate;
        let rebuild_rotation_free =
            config.rebuild.as_ref().is_some_and(|r| r.rotational_latency == crate::rebuild::RebuildRotation::None);
        let log_idle_ns = config.log.as_ref().and_then(|l| l.resync_idle_ms).map(crate::sim::ms_to_ns);
        let mut sim = Simulation {
            config,
            now: 0,
            events: EventQueue::new(),
            drives,
            controller,
            workload,
            pending: None,
            next_request_id: 0,
            recorder,
            arrival_rate_per_s: rate,
            aborted: Vec::new(),
            events_processed: 0,
            cancelled: false,
            warnings,
            rebuilds: Vec::new(),
            rebuilt_fraction: Vec::new(),
            rebuild_progress,
            timer_pending: None,
            log_idle_ns,
            log_idle_armed: None,
            stop_now: false,
            idle_subscriptions: rebuild
                .as_ref()
                .filter(|r| r.pulls_on_idle() || r.pulls_on_completion())
                .map(|r| IdleSubscription { owner: Owner::Rebuild, after_every_completion: r.pulls_on_completion() })
                .into_iter()
                .collect(),
            idle_after_every_completion: rebuild.as_ref().is_some_and(Rebuild::pulls_on_completion),
            idle_pending: 0,
            overloaded_at: None,
            crashed_requests: 0,
            last_arrival: (0, 0),
            arrivals_at_last_instant: 0,
            front,
            cache_done: Vec::new(),
            cache_answered: Vec::new(),
            model,
            rebuild,
            read_estimate,
            rebuild_rotation_free,
            first_distributed_spare: real_slots,
            no_drive_done: std::collections::VecDeque::new(),
            distributed_in_flight: rustc_hash::FxHashMap::default(),
        };
        // The distributed spares first: ZFS rebuilds a dRAID child onto its distributed spare.
        for slot in real_slots..slots {
            sim.controller.add_spare(slot, 0);
        }
        for slot in config_drives..config_drives + config_spares {
            sim.controller.add_spare(slot, 0);
        }
        let mut next_arriving = config_drives + config_spares;
        for f in sim.config.failures.clone() {
            match f.kind {
                FailureKind::DriveFails => {
                    sim.events.push(s_to_ns(f.at_s), Event::Failure { drive: f.drive.expect("validated") })
                }
                FailureKind::SpareArrives => {
                    sim.events.push(s_to_ns(f.at_s), Event::SpareArrives { slot: next_arriving });
                    next_arriving += 1;
                }
                FailureKind::Crash => sim.events.push(s_to_ns(f.at_s), Event::Crash),
                FailureKind::LogFails => sim.events.push(s_to_ns(f.at_s), Event::Failure { drive: sim.config.log_slot() }),
            }
        }
        Ok(sim)
    }

    /// The Poisson rate that loads the drives to `utilization` on average: utilization ×
    /// drives / (disk operations per request × mean random service time), the service time
    /// `service_time_ms` when given. An estimate; the summary reports the utilization reached.
    fn rate_for_utilization(
        config: &Config,
        model: &Arc<DriveModel>,
        layout: &dyn layout::Layout,
        capacity: u64,
        utilization: f64,
        service_time_ms: Option<f64>,
    ) -> Result<f64> {
        let generator = SyntheticGenerator::new(
            &config.workload,
            capacity,
            RngStream::new(config.seed, StreamId::Requests),
            "workload",
        )?;
        let size = generator.mean_sectors();
        let unit_sectors = layout.stripe_unit_sectors();
        // Expected units touched by a request of the mean size: starts are multiples of the
        // alignment, so within a unit they fall on multiples of gcd(alignment, unit).
        let step = gcd(generator.align_sectors(), unit_sectors);
        let length = (size.round() as u64).max(1);
        let offsets = unit_sectors / step;
        let units = (0..offsets).map(|k| ((k * step + length - 1) / unit_sectors + 1) as f64).sum::<f64>()
            / offsets as f64;
        let data_units = layout.data_units_per_stripe() as f64;
        // Copies of each data unit (RAID-1's `copies`; one where redundancy is parity).
        let mut map = layout::StripeMap::default();
        layout.map_stripe(0, &mut map);
        let copies = f64::from(map.copies.max(1));
        let write_ops = layout.planner().write_ops(units, data_units, copies);
        let r = config.workload.read_fraction;
        let ops_per_request = r * units + (1.0 - r) * write_ops;
        let per_op = match service_time_ms {
            Some(ms) => ms / 1e3,
            None => mean_random_service_ns(model, size / units) / 1e9,
        };
        Ok(utilization * layout.drives() as f64 / (ops_per_request * per_op))
    }

    /// Current simulated time, ns.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// The workload (a trace replay's counts of records moved in time or folded, for the
    /// summary's warnings).
    pub fn workload(&self) -> &Workload {
        &self.workload
    }

    /// Run to the end (or until `progress` cancels).
    pub fn run(&mut self, mut progress: Option<ProgressHook<'_>>) -> Result<()> {
        self.start_workload()?;
        let mut last_report = std::time::Instant::now();
        // The watchdog: events handled at this instant. Past the bound, the arrivals at this
        // instant are asked for (out of line), so that the loop counts only.
        let mut instant_events = 0u64;
        while let Some((t, event)) = self.events.pop() {
            if t == self.now {
                instant_events += 1;
                if instant_events > STUCK_EVENTS {
                    self.watch_instant(event, instant_events)?;
                }
            } else {
                instant_events = 0;
            }
            self.now = t;
            match event {
                Event::Arrival => self.on_arrival()?,
                Event::DiskDone { drive, epoch } => {
                    if self.drives[drive as usize].epoch == epoch {
                        self.on_disk_done(drive)?;
                    }
                }
                Event::Failure { drive } => self.on_failure(drive)?,
                Event::SpareArrives { slot } => self.on_spare_arrives(slot)?,
                Event::Crash => self.on_crash()?,
                Event::RebuildStart => self.on_rebuild_start()?,
                Event::Timer { owner, epoch } => {
                    let owner = owner.owner();
                    if self.timer_is_current(owner, epoch) {
                        self.timer_fired(owner);
                        self.wake(owner)?;
                    }
                }
            }
            loop {
                self.flush()?;
                if self.idle_pending == 0 {
                    break;
                }
                // A drive went idle: its subscribers are woken once the event's own work is
                // queued, so that a drive it kept busy is not taken for idle. (One call of
                // `flush`, which stays inlined here.)
                let happened = std::mem::take(&mut self.idle_pending);
                self.wake_idle_subscribers(happened)?;
            }
            self.events_processed += 1;
            if self.stop_now {
                break;
            }
            if self.events_processed & 0xffff == 0 {
                if let Some(hook) = progress.as_mut() {
                    if last_report.elapsed().as_millis() >= 100 {
                        last_report = std::time::Instant::now();
                        if !hook(self.fraction_done(), self.recorder.completed) {
                            self.cancelled = true;
                            break;
                        }
                    }
                }
            }
        }
        if self.rebuild.is_some() {
            // The series reaches the end of the run, which a rebuild may hold past the last
            // request (c(t) then shows its end).
            self.recorder.extend_to(self.now)?;
            self.rebuild_at_the_end()?;
        }
        if !self.cancelled {
            self.load_warnings();
        }
        if !self.cancelled && !self.stop_now {
            if self.controller.in_flight() != 0 {
                return Err(Error::Invariant(format!(
                    "{} requests never completed",
                    self.controller.in_flight()
                )));
            }
            if let Some(waiting) = self.front.as_ref().map(|front| front.waiting()).filter(|&n| n != 0) {
                return Err(Error::Invariant(format!("{waiting} requests the cache took were never answered")));
            }
            self.controller.verify_at_end()?;
            if let Some(hook) = progress.as_mut() {
                hook(1.0, self.recorder.completed);
            }
        }
        Ok(())
    }

    fn fraction_done(&self) -> f64 {
        let by_requests = self.workload.max_requests().map(|m| self.workload.issued() as f64 / m as f64);
        let by_time = self.workload.end_time().map(|end| self.now as f64 / end as f64);
        let workload = match (by_requests, by_time) {
            (Some(a), Some(b)) => a.max(b).min(1.0),
            (Some(a), None) | (None, Some(a)) => a.min(1.0),
            // A trace replayed to its end: the share of its file read.
            (None, None) => self.workload.fraction_read(),
        };
        // A run that ends with its rebuild, or whose rebuild outlasts the workload, is as far
        // along as the rebuild is.
        let rebuilt = self.controller.rebuilding().map(|r| r.states.rebuilt() as f64 / r.states.count().max(1) as f64);
        let ends_with_rebuild = self.config.rebuild.as_ref().is_some_and(|r| r.end_run);
        match rebuilt {
            Some(c) if ends_with_rebuild || workload >= 1.0 || workload.is_nan() => c,
            _ => workload,
        }
    }

    /// A request arrives later than a run may simulate ([`MAX_SIM_TIME_NS`]): clock arithmetic
    /// beyond it could overflow. The error names what sets the arrival times.
    fn arrival_beyond_the_horizon(&self, now: Nanos) -> Error {
        // A trace's error names the record, and the first one, whose timestamps set the gap.
        let beyond = self.workload.trace_counts().and_then(|counts| counts.beyond_horizon());
        if let (Some(beyond), Some(trace)) = (beyond, &self.config.workload.trace) {
            return Error::trace(
                &trace.path,
                beyond.line,
                format!(
                    "this record arrives {:.0} s (about {:.0} years) after the first record replayed (line {}), \
                     beyond the {:.0} s (about 146 years) a run may simulate: one of the two timestamps is far from \
                     the others (`raidlab trace info` names the widest step between records), or `time_scale` is too \
                     large",
                    ns_to_s(beyond.arrival_ns),
                    ns_to_s(beyond.arrival_ns) / SECONDS_PER_YEAR,
                    beyond.first_line,
                    ns_to_s(MAX_SIM_TIME_NS)
                ),
            );
        }
        let key = match self.workload.arrival {
            Loop::Poisson { .. } => "workload.arrival",
            Loop::Trace => "workload.trace",
            Loop::Closed { .. } => "workload.arrival.think_ms",
        };
        let cause = match self.workload.arrival {
            Loop::Trace => "check the trace's timestamps and `time_scale`",
            _ => "the arrival rate is too low or the think time too long",
        };
        Error::config(
            key,
            format!(
                "a request arrives at {} s, beyond the {:.0} s (about 146 years) a run may simulate; {cause}",
                ns_to_s(now),
                ns_to_s(MAX_SIM_TIME_NS)
            ),
        )
    }

    fn start_workload(&mut self) -> Result<()> {
        match self.workload.arrival {
            Loop::Closed { outstanding, .. } => {
                for _ in 0..outstanding {
                    self.events.push(0, Event::Arrival);
                }
            }
            Loop::Poisson { .. } | Loop::Trace => {
                if let Some(req) = self.workload.next(0)? {
                    self.events.push_aside(req.arrival, Event::Arrival);
                    self.pending = Some(req);
                }
            }
        }
        Ok(())
    }

    fn on_arrival(&mut self) -> Result<()> {
        let now = self.now;
        if now > MAX_SIM_TIME_NS {
            return Err(self.arrival_beyond_the_horizon(now));
        }
        let req = match self.workload.arrival {
            Loop::Closed { .. } => match self.workload.next(now)? {
                Some(r) => r,
                None => return Ok(()),
            },
            _ => {
                let req = self.pending.take().ok_or_else(|| Error::Invariant("arrival without a request".into()))?;
                if let Some(next) = self.workload.next(now)? {
                    self.events.push_aside(next.arrival.max(now), Event::Arrival);
                    self.pending = Some(next);
                }
                req
            }
        };
        self.recorder.arrival(now)?;
        let id = self.next_request_id;
        self.next_request_id += 1;
        let record = RequestRecord { arrival: now, ..req };
        if self.front.is_some() {
            self.arrive_at_cache(id, record)?;
        } else {
            self.controller.submit(now, UserRequest::new(id, Origin::Workload, record), &Drives(&self.drives, self.read_estimate))?;
        }
        // Reads recorded for a rebuild order that watches them go to it in batches, so the
        // record stays small while the order makes no decision (every drive busy).
        if self.controller.pending_reads() >= PENDING_READS_BATCH {
            if let Some(rebuild) = self.rebuild.as_mut() {
                rebuild.observe_reads(&mut self.controller);
            }
        }
        let backlog = self.controller.in_flight();
        self.arrivals_at_last_instant = if self.last_arrival.0 == now { self.arrivals_at_last_instant + 1 } else { 1 };
        self.last_arrival = (now, backlog);
        if backlog > self.config.metrics.max_backlog_requests {
            self.overloaded(backlog);
        }
        Ok(())
    }

    /// The backlog passed its bound: the array cannot serve what it is offered. The run ends
    /// now, with an `overloaded` outcome and a warning, before its queues outgrow memory.
    #[cold]
    fn overloaded(&mut self, backlog: u64) {
        let now = self.now;
        let detail = format!(
            "{backlog} requests were waiting at {:.3} s, more than metrics.max_backlog_requests = {}: the array \
             cannot serve the load it is offered, and the run ended there (the requests in flight are left out)",
            ns_to_s(now),
            self.config.metrics.max_backlog_requests
        );
        self.recorder.outcomes.push(Outcome { time: now, kind: "overloaded", drive: -1, detail: detail.clone() });
        self.warnings.push(format!("overloaded: {detail}"));
        self.overloaded_at = Some(now);
        self.stop_now = true;
    }

    /// Warnings about a load the array served only just, or not at all: drives busy with
    /// user work more than 98 % of their working life, or a backlog left at the last arrival that took long
    /// to drain. Decided once the run is over.
    fn load_warnings(&mut self) {
        let now = self.now;
        for (i, d) in self.drives.iter().enumerate() {
            // User work only: a rebuild keeps survivors busy by design, and says nothing of
            // the load the array is offered.
            let life = d.failed_at.unwrap_or(now);
            let u = if life == 0 { 0.0 } else { (d.busy_ns - d.rebuild_busy_ns) as f64 / life as f64 };
            if d.present && u > 0.98 {
                self.warnings.push(format!(
                    "drive {i} was busy with user requests {:.1} % of its working life: the array is at or past saturation, and \
                     response times reflect queueing more than service",
                    100.0 * u
                ));
            }
        }
        let (last, backlog) = self.last_arrival;
        let drain = now.saturating_sub(last);
        if self.overloaded_at.is_none() && backlog > 1_000 && drain > last / 10 {
            self.warnings.push(format!(
                "{backlog} requests were still waiting at the last arrival ({:.3} s), and serving them took {:.3} s \
                 more: the offered load exceeds what the array serves",
                ns_to_s(last),
                ns_to_s(drain)
            ));
        }
    }

    fn on_disk_done(&mut self, drive: u32) -> Result<()> {
        let now = self.now;
        let slot = &mut self.drives[drive as usize];
        let Some((token, start)) = slot.in_service.take() else {
            return Err(Error::Invariant(format!("drive {drive} finished with nothing in service")));
        };
        slot.busy_ns += now - start;
        let rebuild_work = OpToken::from_raw(token).is_rebuild_work();
        if rebuild_work {
            slot.rebuild_busy_ns += now - start;
            slot.rebuild_ops_done += 1;
            slot.rebuild_sectors_done += slot.in_service_sectors as u64;
            slot.rebuild_ops_in_flight -= 1;
            if !slot.last_done_rebuild {
                slot.rebuild_runs += 1;
                slot.rebuild_run_first_busy_ns += now - start;
            }
            if let Some(progress) = self.rebuild_progress.as_mut() {
                record_progress(progress, drive, now / self.recorder.window_ns());
            }
        }
        slot.last_done_rebuild = rebuild_work;
        slot.operations += 1;
        slot.sectors_done += slot.in_service_sectors as u64;
        let depth = slot.depth - 1;
        slot.set_depth(now, depth);
        // An operation of a distributed spare that failed while it was queued here failed too.
        let ok = self.distributed_in_flight.is_empty() || self.distributed_op_ok(token);
        self.controller.op_done(now, token, ok, &Drives(&self.drives, self.read_estimate))?;
        self.start_next(drive);
        if !self.idle_subscriptions.is_empty() {
            let idle = self.drives[drive as usize].in_service.is_none();
            if idle {
                self.idle_pending |= DRIVE_WENT_IDLE | DRIVE_COMPLETED;
            } else if self.idle_after_every_completion {
                self.idle_pending |= DRIVE_COMPLETED;
            }
        }
        Ok(())
    }

    /// Whether a timer of `owner` set in `epoch` still stands: a drive's wake-up is void once
    /// the drive failed (its epoch moved on); the rebuild's and the cache's never go stale
    /// (a wake-up with nothing to do does nothing).
    #[inline]
    fn timer_is_current(&self, owner: Owner, epoch: u32) -> bool {
        match owner {
            Owner::Drive(drive) => self.drives[drive as usize].epoch == epoch,
            Owner::Rebuild | Owner::Cache | Owner::LogIdle | Owner::ControllerCpu | Owner::NoDrive => true,
        }
    }

    /// A timer of `owner` fired: an owner that keeps one timer at a time (the rebuild: the
    /// earliest wake-up its policies asked for, `arm_timer`) has none set any more.
    fn timer_fired(&mut self, owner: Owner) {
        if owner == Owner::Rebuild && self.timer_pending == Some(self.now) {
            self.timer_pending = None;
        }
    }

    /// Wake `owner`: its timer is due, or a drive went idle.
    #[cold]
    #[inline(never)]
    fn wake(&mut self, owner: Owner) -> Result<()> {
        match owner {
            Owner::Rebuild => self.pump_rebuild(),
            Owner::Drive(drive) => self.start_next(drive),
            Owner::Cache => self.on_cache_answer()?,
            Owner::LogIdle => self.on_log_idle()?,
            Owner::ControllerCpu => {
                let now = self.now;
                self.controller.cpu_done(now, &Drives(&self.drives, self.read_estimate))?;
            }
            Owner::NoDrive => {
                // One completion per timer, as one per drive event: the rebuild's policies
                // hear of each before the next (a job's id is free again once it is done).
                let now = self.now;
                if let Some((token, spare)) = self.no_drive_done.pop_front() {
                    let ok = self.drives[spare as usize].failed_at.is_none();
                    self.controller.op_done(now, token, ok, &Drives(&self.drives, self.read_estimate))?;
                }
            }
        }
        Ok(())
    }

    /// A drive went idle (or completed: `happened`'s bits) during the event just handled:
    /// wake each subscriber to that.
    #[cold]
    #[inline(never)]
    fn wake_idle_subscribers(&mut self, happened: u8) -> Result<()> {
        for i in 0..self.idle_subscriptions.len() {
            let IdleSubscription { owner, after_every_completion } = self.idle_subscriptions[i];
            if happened & DRIVE_WENT_IDLE == 0 && !after_every_completion {
                continue;
            }
            self.wake(owner)?;
        }
        Ok(())
    }

    /// Start the next queued operation if the drive is idle.
    #[inline(always)]
    fn start_next(&mut self, drive: u32) {
        let slot = &self.drives[drive as usize];
        // Checked here, inline: a drive is usually busy, or idle with nothing queued, and the
        // call to the rest (which saves and restores registers) is then not worth making.
        if slot.in_service.is_none() && slot.failed_at.is_none() && !slot.queue.is_empty() {
            self.start_queued(drive);
        }
    }

    /// Start the next queued operation on idle, working `drive`.
    #[inline(never)]
    fn start_queued(&mut self, drive: u32) {
        let now = self.now;
        let slot = &mut self.drives[drive as usize];
        if let Some(op) = slot.queue.pop_op(&slot.drive, now) {
            let service = if self.rebuild_rotation_free && OpToken::from_raw(op.token).is_rebuild_work() {
                slot.drive.service_without_first_wait(now, op.lba, op.sectors, op.kind)
            } else {
                slot.drive.service(now, op.lba, op.sectors, op.kind)
            };
            slot.in_service = Some((op.token, now));
            slot.in_service_until = now + service.total();
            slot.in_service_sectors = op.sectors;
            self.events.push(now + service.total(), Event::DiskDone { drive, epoch: slot.epoch });
        } else if let Some(at) = slot.queue.next_ready(now) {
            // The class discipline holds its work back until `at` (a limit).
            self.events.push(at.max(now), Event::Timer { owner: OwnerCode::of(Owner::Drive(drive)), epoch: slot.epoch });
        }
    }

    #[cold]
    #[inline(never)]
    fn on_failure(&mut self, drive: u32) -> Result<()> {
        let now = self.now;
        let lost = self.controller.fail_drive(drive)?;
        let slot = &mut self.drives[drive as usize];
        if slot.failed_at.is_some() {
            return Ok(());
        }
        slot.failed_at = Some(now);
        slot.epoch += 1;
        let member = self.controller.member_in_slot(drive);
        let detail = match member {
            Some(m) if m != drive => format!("member {m}, rebuilt into spare slot {drive}"),
            Some(m) => format!("member {m}"),
            None if self.rebuilds.last().is_some_and(|r| r.target == drive && r.outcome == "running") => {
                "the target of the rebuild in progress".into()
            }
            None if self.config.log.as_ref().is_some_and(|l| l.has_log_drive()) && drive == self.config.log_slot() => "the log drive".into(),
            None => "a spare".into(),
        };
        self.recorder.outcomes.push(Outcome { time: now, kind: "drive_failed", drive: drive as i64, detail });
        if let Some(member) = member {
            let ready = self.config.rebuild.as_ref().map(|r| now + s_to_ns(r.delay_s));
            self.controller.member_failed(member, now, ready);
            if let Some(ready) = ready {
                self.events.push(ready, Event::RebuildStart);
            }
        }
        if lost {
            let layout = self.controller.layout();
            let failed: Vec<u32> = (0..layout.drives()).filter(|d| self.controller.is_failed(*d)).collect();
            self.recorder.outcomes.push(Outcome {
                time: now,
                kind: "data_loss",
                drive: drive as i64,
                detail: format!(
                    "failed drives {failed:?} defeat {}'s redundancy; every stripe unit they held ({} units of {} sectors) is lost",
                    layout.name(),
                    layout.stripes() * failed.len() as u64,
                    layout.stripe_unit_sectors()
                ),
            });
        }
        // Abort what the drive was doing and everything waiting for it.
        let slot = &mut self.drives[drive as usize];
        if let Some((token, start)) = slot.in_service.take() {
            slot.busy_ns += now - start;
            self.aborted.push((Priority::Foreground, QueuedOp { lba: 0, sectors: 0, kind: disk::OpKind::Read, cylinder: 0, enqueued: now, token }));
        }
        slot.queue.drain_into(&mut self.aborted);
        slot.set_depth(now, 0);
        slot.rebuild_ops_in_flight = 0;
        let aborted = std::mem::take(&mut self.aborted);
        for (_, op) in &aborted {
            if !self.distributed_in_flight.is_empty() {
                self.distributed_in_flight.remove(&op.token);
            }
            self.controller.op_done(now, op.token, false, &Drives(&self.drives, self.read_estimate))?;
        }
        self.aborted = aborted;
        self.aborted.clear();
        // A distributed spare holding (or being rebuilt into) another member loses its
        // sectors on this member: raidlab fails it whole (ZFS would repair only the blocks
        // that lay there; the whole member is rebuilt again here, a conservative choice).
        if member.is_some() {
            for spare in self.first_distributed_spare..self.drives.len() as u32 {
                if self.drives[spare as usize].failed_at.is_none() && self.controller.distributed_spare_member(spare).is_some() {
                    self.on_failure(spare)?;
                }
            }
        }
        // The layout may want its redundancy re-synchronized (a log-assisted array's lost log).
        self.controller.start_resyncs(now, &Drives(&self.drives, self.read_estimate))?;
        self.update_period();
        Ok(())
    }

    /// The controller crashed and restarts at once (`FailureKind::Crash`): the requests in
    /// flight end unanswered, every drive drops what was queued or in service for it (a
    /// drive's epoch moves on, so no completion or wake-up of before comes back), and a
    /// rebuild's policies start afresh on the units left.
    #[cold]
    #[inline(never)]
    fn on_crash(&mut self) -> Result<()> {
        let now = self.now;
        for slot in &mut self.drives {
            if let Some((token, start)) = slot.in_service.take() {
                slot.busy_ns += now - start;
                if OpToken::from_raw(token).is_rebuild_work() {
                    slot.rebuild_busy_ns += now - start;
                }
            }
            slot.queue.drain_into(&mut self.aborted);
            slot.set_depth(now, 0);
            slot.rebuild_ops_in_flight = 0;
            slot.epoch += 1;
        }
        // (Operations that needed no drive are dropped with the queues: their timers then
        // find nothing.)
        let dropped = self.aborted.len() + self.no_drive_done.len();
        self.no_drive_done.clear();
        self.distributed_in_flight.clear();
        self.aborted.clear();
        let crashed = self.controller.crash();
        // (The array's own re-syncs are no one's requests.)
        let unanswered = crashed.iter().filter(|c| c.origin != crate::request::Origin::Resync).count();
        self.crashed_requests += unanswered as u64;
        let layout = self.controller.layout();
        let volatile = self.controller.state().placement().and_then(|p| p.volatile());
        self.recorder.outcomes.push(Outcome {
            time: now,
            kind: "controller_crashed",
            drive: -1,
            detail: format!(
                "{} requests in flight were never answered, {dropped} queued operations dropped; {} lost {}",
                unanswered,
                layout.name(),
                volatile.unwrap_or(layout.volatile_state())
            ),
        });
        // A closed loop's users see their requests fail and go on with the next.
        if let Some(think) = self.workload.think_time() {
            for _ in crashed.iter().filter(|c| c.origin.is_user()) {
                self.events.push(now + think, Event::Arrival);
            }
        }
        // A layout that lost its index re-synchronizes (a log-assisted array). Its
        // recoveries take their stripes' locks first, before the rebuild's jobs resume: a
        // job must not read a stripe a crash left torn.
        self.controller.start_resyncs(now, &Drives(&self.drives, self.read_estimate))?;
        if let Some(rebuild) = self.rebuild.as_mut() {
            if self.controller.rebuilding().is_some() {
                rebuild.begin(&mut self.controller);
            }
        }
        self.note_progress();
        self.pump_rebuild();
        Ok(())
    }

    /// The array may just have gone idle: set the log's idle timer, unless one is set.
    #[cold]
    #[inline(never)]
    fn arm_log_idle(&mut self) {
        if let (Some(idle), None) = (self.log_idle_ns, self.log_idle_armed) {
            if self.controller.user_in_flight() == 0 {
                self.log_idle_armed = Some(self.workload.issued());
                self.events.push(self.now + idle, Event::Timer { owner: OwnerCode::of(Owner::LogIdle), epoch: 0 });
            }
        }
    }

    /// Timers for the plans the controller delayed by their CPU time.
    #[cold]
    #[inline(never)]
    fn schedule_cpu_wakeups(&mut self) {
        for at in std::mem::take(&mut self.controller.cpu_wakeups) {
            self.events.push(at, Event::Timer { owner: OwnerCode::of(Owner::ControllerCpu), epoch: 0 });
        }
    }

    /// The log's idle timer fired: if no request arrived since it was set and none is in the
    /// array, the array has been idle that long (or longer) and re-synchronizes (seed 002
    /// §III-D, trigger 1); if it is idle again, the timer is set anew from now.
    #[cold]
    #[inline(never)]
    fn on_log_idle(&mut self) -> Result<()> {
        let Some(issued) = self.log_idle_armed.take() else { return Ok(()) };
        if self.controller.user_in_flight() != 0 {
            return Ok(());
        }
        if self.workload.issued() == issued {
            let now = self.now;
            self.controller.array_idle(now, &Drives(&self.drives, self.read_estimate))?;
        } else {
            self.arm_log_idle();
        }
        Ok(())
    }

    /// The run ended with a rebuild running: say why in its record. A rebuild left running
    /// when nothing else was left to happen has stalled: an error naming it, not a result.
    fn rebuild_at_the_end(&mut self) -> Result<()> {
        let reason = if self.cancelled {
            "the run was cancelled"
        } else if self.overloaded_at.is_some() {
            "the run ended overloaded (metrics.max_backlog_requests)"
        } else {
            "the run ended"
        };
        let Some(record) = self.rebuilds.last_mut().filter(|r| r.outcome == "running") else { return Ok(()) };
        if !self.cancelled && !self.stop_now {
            let (done, count) = self.controller.rebuilding().map_or((0, 0), |r| (r.states.rebuilt(), r.states.count()));
            let in_flight = self.controller.rebuilding().map_or(0, |r| {
                (0..r.states.count()).filter(|&u| r.states.get(u) == crate::array::state::UnitState::InFlight).count()
            });
            return Err(Error::Invariant(format!(
                "the rebuild of member {} onto slot {} stalled at {:.3} s with {done} of {count} units current: nothing \
                 was left to happen, and it issued no more work ({in_flight} units claimed; the executor `{}`, discipline `{}`)",
                record.member,
                record.target,
                ns_to_s(self.now),
                self.config.rebuild.as_ref().map_or("", |r| r.executor.as_str()),
                self.config.rebuild.as_ref().map_or("", |r| r.discipline.as_str()),
            )));
        }
        record.reason = reason.into();
        Ok(())
    }

    /// The watchdog, past [`STUCK_EVENTS`] events at this instant: an error unless the user
    /// requests that arrived at it account for them ([`EVENTS_PER_ARRIVAL`] each).
    #[cold]
    #[inline(never)]
    fn watch_instant(&self, event: Event, events: u64) -> Result<()> {
        let arrivals = if self.last_arrival.0 == self.now { self.arrivals_at_last_instant } else { 0 };
        if events > STUCK_EVENTS + arrivals * EVENTS_PER_ARRIVAL {
            return Err(self.stuck(event, events));
        }
        Ok(())
    }

    /// The watchdog's error: `events` events at this instant, the last of them `event`.
    #[cold]
    fn stuck(&self, event: Event, events: u64) -> Error {
        let rebuild = match self.controller.rebuilding() {
            Some(r) => format!(
                "; the rebuild of member {} onto slot {} has {} of {} units current",
                r.member,
                r.target,
                r.states.rebuilt(),
                r.states.count()
            ),
            None => String::new(),
        };
        Error::Invariant(format!(
            "the run made no progress in simulated time: {events} events at {:.6} s without the clock moving, the \
             last owned by {}{rebuild}",
            ns_to_s(self.now),
            event.owner()
        ))
    }

    /// The failed members not being rebuilt at the end of the run, each with why.
    pub fn members_not_rebuilt(&self) -> Vec<(u32, &'static str)> {
        self.controller.members_not_rebuilt(self.now, self.rebuild.is_some())
    }

    /// Tell the recorder which period the array is in now.
    fn update_period(&mut self) {
        use crate::metrics::Period;
        let period = if self.controller.data_lost() {
            Period::DataLoss
        } else if self.controller.rebuilding().is_some_and(|r| r.healing) {
            Period::Healing
        } else if self.controller.rebuilding().is_some() {
            Period::Rebuilding
        } else if !self.controller.failed_members().is_empty() {
            Period::Degraded
        } else if self.rebuilds.is_empty() {
            Period::Normal
        } else {
            Period::After
        };
        self.recorder.enter_period(self.now, period);
    }

    #[cold]
    #[inline(never)]
    fn on_spare_arrives(&mut self, slot: u32) -> Result<()> {
        let now = self.now;
        self.drives[slot as usize].present = true;
        let ready = now + s_to_ns(self.config.rebuild.as_ref().map_or(0.0, |r| r.delay_s));
        self.controller.add_spare(slot, ready);
        self.recorder.outcomes.push(Outcome { time: now, kind: "spare_arrived", drive: slot as i64, detail: String::new() });
        if !self.controller.state().waiting_members().is_empty() || self.healing_may_start() {
            self.events.push(ready, Event::RebuildStart);
        }
        Ok(())
    }

    /// Whether a healing copy may start (`rebuild.healing`): a member lives in a distributed
    /// spare and a spare drive is in the pool.
    fn healing_may_start(&self) -> bool {
        self.config.rebuild.as_ref().is_some_and(|r| r.healing) && self.controller.healing_may_start(false)
    }

    /// Whether a healing copy is to follow: one may start now, or once a spare drive the
    /// failure schedule brings later arrives.
    fn healing_to_follow(&self) -> bool {
        let arriving = self.config.failures.iter().any(|f| f.kind == FailureKind::SpareArrives && s_to_ns(f.at_s) > self.now);
        self.config.rebuild.as_ref().is_some_and(|r| r.healing) && self.controller.healing_may_start(arriving)
    }

    /// Start the next rebuild if nothing rebuilds, a spare is ready, and a waiting member is
    /// ready and can be rebuilt (a source of its data survives): the first such member, in
    /// the order they wait, onto the first ready spare.
    #[cold]
    #[inline(never)]
    fn on_rebuild_start(&mut self) -> Result<()> {
        let now = self.now;
        let Some(rebuild) = self.rebuild.as_mut() else { return Ok(()) };
        let (member, target, healing) = match self.controller.next_rebuild(now) {
            Some((member, target)) => (member, target, false),
            None => match self.controller.next_healing(now).filter(|_| rebuild.config.healing) {
                Some((member, target)) => (member, target, true),
                None => return Ok(()),
            },
        };
        let units = RebuildUnits::new(&self.model.geometry, self.controller.layout().member_sectors(), rebuild.config.measure());
        let count = units.count();
        let from = self.controller.member_slot(member);
        if healing {
            self.controller.start_healing(member, target, units)?;
        } else {
            self.controller.start_rebuild(member, target, units, rebuild.config.redirect_reads, rebuild.config.piggyback)?;
        }
        rebuild.begin(&mut self.controller);
        self.rebuilds.push(RebuildRecord {
            member,
            target,
            failed_at: self.controller.state().member_failed_at(member).unwrap_or(now),
            started_at: now,
            ended_at: None,
            outcome: "running",
            reason: String::new(),
            units: count,
            made_current: [0; 3],
            order_counters: Vec::new(),
            healing,
        });
        self.recorder.outcomes.push(Outcome {
            time: now,
            kind: if healing { "healing_started" } else { "rebuild_started" },
            drive: member as i64,
            detail: if healing {
                format!("member {member} copied out of distributed spare slot {from} onto slot {target}, {count} units")
            } else {
                format!("member {member} onto slot {target}, {count} units")
            },
        });
        self.update_period();
        self.note_progress();
        self.pump_rebuild();
        Ok(())
    }

    /// Let the rebuild policies issue what they may now.
    fn pump_rebuild(&mut self) {
        let Some(rebuild) = self.rebuild.as_mut() else { return };
        rebuild.pump(self.now, &mut self.controller, &self.drives, &self.model.geometry);
        self.arm_timer();
    }

    /// Turn the policies' wake-up requests into one timer event (the earliest).
    fn arm_timer(&mut self) {
        let Some(rebuild) = self.rebuild.as_mut() else { return };
        if rebuild.wake_at.is_empty() {
            return;
        }
        let earliest = rebuild.wake_at.drain(..).min().unwrap_or(self.now);
        if self.timer_pending.is_none_or(|t| earliest < t) {
            self.timer_pending = Some(earliest);
            self.events.push(earliest, Event::Timer { owner: OwnerCode::of(Owner::Rebuild), epoch: 0 });
        }
    }

    /// The fraction of lost units current now, into the window of now.
    fn note_progress(&mut self) {
        let Some(r) = self.controller.rebuilding() else { return };
        let fraction = r.states.rebuilt() as f64 / r.states.count().max(1) as f64;
        self.set_progress(fraction);
    }

    fn set_progress(&mut self, fraction: f64) {
        let window = (self.now / self.recorder.window_ns()) as usize;
        if window >= crate::metrics::MAX_WINDOWS as usize {
            return;
        }
        if self.rebuilt_fraction.len() <= window {
            let last = self.rebuilt_fraction.last().copied().unwrap_or(f64::NAN);
            self.rebuilt_fraction.resize(window + 1, last);
        }
        self.rebuilt_fraction[window] = fraction;
    }

    /// The last rebuild ended now with `outcome`: its record and an outcome row.
    fn end_rebuild(&mut self, outcome: &'static str, made_current: [u64; 3], member: u32, detail: String) {
        let now = self.now;
        if let Some(record) = self.rebuilds.last_mut() {
            record.ended_at = Some(now);
            record.outcome = outcome;
            if outcome != "complete" {
                record.reason = detail.clone();
            }
            record.made_current = made_current;
            record.order_counters = self.rebuild.as_ref().map(Rebuild::order_counters).unwrap_or_default();
        }
        let healing = self.rebuilds.last().is_some_and(|r| r.healing);
        let kind = match (healing, outcome == "complete") {
            (false, true) => "rebuild_complete",
            (false, false) => "rebuild_abandoned",
            (true, true) => "healing_complete",
            (true, false) => "healing_abandoned",
        };
        self.recorder.outcomes.push(Outcome { time: now, kind, drive: member as i64, detail });
    }

    /// Hand the controller's rebuild events to the policies.
    #[cold]
    #[inline(never)]
    fn dispatch_rebuild_events(&mut self) {
        let events = std::mem::take(&mut self.controller.rebuild_events);
        let now = self.now;
        // Once a lost source restarted the rebuild's jobs, the aborts in the rest of this
        // batch are of jobs from before it, whose ids the restart may have given to new ones.
        let mut restarted = false;
        for &event in &events {
            if restarted && matches!(event, RebuildEvent::Read { ok: false, .. } | RebuildEvent::Written { ok: false, .. }) {
                continue;
            }
            restarted |= matches!(event, RebuildEvent::SourceLost { .. });
            match event {
                RebuildEvent::Written { ok: true, .. } => self.note_progress(),
                RebuildEvent::Complete { member, slot, made_current } => {
                    self.set_progress(1.0);
                    self.end_rebuild("complete", made_current, member, format!("member {member} now in slot {slot}"));
                }
                RebuildEvent::Abandoned { member, made_current, reason } => {
                    self.end_rebuild("abandoned", made_current, member, reason.describe());
                    // Nothing is being rebuilt from now on: c(t) has no value (the units the
                    // abandoned rebuild made current are not the member's any more).
                    // (The controller put the member first in line to start again, and retired
                    // the target: `array::lifecycle`.)
                    self.set_progress(f64::NAN);
                }
                RebuildEvent::SourceLost { slot } => {
                    let sources = self.controller.rebuilding().map(|r| r.sources.clone()).unwrap_or_default();
                    let member = self.rebuilds.last().map_or(-1, |r| r.member as i64);
                    self.recorder.outcomes.push(Outcome {
                        time: now,
                        kind: "rebuild_source_lost",
                        drive: member,
                        detail: format!(
                            "source slot {slot} failed; the rebuild goes on from {} (the units in flight start again)",
                            plural_slots(&sources)
                        ),
                    });
                }
                _ => {}
            }
            if let Some(rebuild) = self.rebuild.as_mut() {
                rebuild.on_event(now, event, &mut self.controller, &self.drives, &self.model.geometry);
            }
        }
        if let (Some(r), Some(record)) = (self.controller.rebuilding(), self.rebuilds.last_mut()) {
            record.made_current = r.made_current;
        }
        if events.iter().any(|e| matches!(e, RebuildEvent::Complete { .. } | RebuildEvent::Abandoned { .. })) {
            self.update_period();
            // A rebuild that can start again on another spare is not the end.
            // (A healing copy that is to follow the rebuild is part of it: `rebuild.healing`.)
            let ended = (events.iter().any(|e| matches!(e, RebuildEvent::Complete { .. }))
                || !self.controller.another_rebuild_may_start())
                && !self.healing_to_follow();
            self.stop_now |= ended && self.config.rebuild.as_ref().is_some_and(|r| r.end_run);
            if !self.controller.state().waiting_members().is_empty() || self.healing_may_start() {
                self.events.push(now, Event::RebuildStart);
            }
        }
        let mut events = events;
        events.clear();
        if self.controller.rebuild_events.is_empty() {
            self.controller.rebuild_events = events;
        }
        self.arm_timer();
    }

    /// Queue the controller's new operations and account completed requests, until quiet.
    fn flush(&mut self) -> Result<()> {
        let mut rounds = 0u64;
        loop {
            rounds += 1;
            if rounds > STUCK_ROUNDS {
                return Err(self.stuck_in_flush());
            }
            // The operations issued so far, read in place: an op issued while these are
            // queued (a drive failed under one of them) lands after them and is queued on the
            // next round. Swapping the outbox for an empty one instead would read the vectors
            // with wide loads over the narrow stores that just grew them, and wait for those
            // stores every round.
            let issued = self.controller.outbox.len();
            let completed = !self.controller.completed.is_empty();
            if issued == 0 && !completed {
                if self.controller.rebuild_events.is_empty() {
                    if !self.controller.cpu_wakeups.is_empty() {
                        self.schedule_cpu_wakeups();
                    }
                    return Ok(());
                }
                self.dispatch_rebuild_events();
                continue;
            }
            for i in 0..issued {
                let mut op = self.controller.outbox[i];
                let now = self.now;
                if op.drive >= self.first_distributed_spare {
                    match self.distributed_spare_drive(op.drive, op.pba) {
                        Some(drive) => {
                            // (Tokens are reused: one is remembered only while its op is
                            // queued or served, from here to its completion or abort.)
                            if self.drives[drive as usize].failed_at.is_none() {
                                self.distributed_in_flight.insert(op.token, op.drive);
                            }
                            op.drive = drive;
                        }
                        None => {
                            // The spare's column on the member it holds: no stripe has a unit
                            // there (a rebuild writes it with the rest of its unit), no drive.
                            // Answered by a timer at this instant, as a completion would be
                            // (not here, inside the issue of other work).
                            self.events.push(now, Event::Timer { owner: OwnerCode::of(Owner::NoDrive), epoch: 0 });
                            self.no_drive_done.push_back((op.token, op.drive));
                            continue;
                        }
                    }
                }
                let slot = &mut self.drives[op.drive as usize];
                if slot.failed_at.is_some() {
                    self.controller.op_done(now, op.token, false, &Drives(&self.drives, self.read_estimate))?;
                    continue;
                }
                let depth = slot.depth + 1;
                slot.set_depth(now, depth);
                if OpToken::from_raw(op.token).is_rebuild_work() {
                    slot.rebuild_sectors += op.sectors as u64;
                    slot.rebuild_ops_in_flight += 1;
                }
                if slot.in_service.is_none() && slot.queue.is_empty() && slot.queue.serves_at_once(op.priority, now) {
                    // An idle drive with nothing waiting serves the operation at once, if its
                    // class discipline says it would: skip the queue.
                    let service = if self.rebuild_rotation_free && OpToken::from_raw(op.token).is_rebuild_work() {
                        slot.drive.service_without_first_wait(now, op.pba, op.sectors, op.kind)
                    } else {
                        slot.drive.service(now, op.pba, op.sectors, op.kind)
                    };
                    slot.in_service = Some((op.token, now));
                    slot.in_service_until = now + service.total();
                    slot.in_service_sectors = op.sectors;
                    self.events.push(now + service.total(), Event::DiskDone { drive: op.drive, epoch: slot.epoch });
                    continue;
                }
                let cylinder = if slot.queue.orders_by_cylinder() {
                    slot.drive.model.geometry.locate(op.pba).cylinder
                } else {
                    0
                };
                slot.last_queued_lba = op.pba;
                slot.queue.push(
                    op.priority,
                    QueuedOp { lba: op.pba, sectors: op.sectors, kind: op.kind, cylinder, enqueued: now, token: op.token },
                );
                self.start_next(op.drive);
            }
            if self.controller.outbox.len() == issued {
                // The common round: nothing was issued while these were queued.
                self.controller.outbox.clear();
            } else {
                self.controller.outbox.drain(..issued);
            }
            if completed {
                let now = self.now;
                for c in self.controller.completed.drain(..) {
                    if !c.origin.is_user() {
                        Self::defer(&mut self.cache_done, c);
                        continue;
                    }
                    self.recorder.completion(now, c.arrival, c.is_write, c.degraded, c.in_failed_set, c.lost)?;
                    if let Some(think) = self.workload.think_time() {
                        self.events.push(now + think, Event::Arrival);
                    }
                }
                if !self.cache_done.is_empty() {
                    self.cache_children_done()?;
                }
                if self.log_idle_ns.is_some() {
                    self.arm_log_idle();
                }
            }
        }
    }

    /// Whether an operation that completed on a drive succeeded for its issuer: false for a
    /// distributed spare's operation when the spare failed meanwhile.
    #[cold]
    fn distributed_op_ok(&mut self, token: u64) -> bool {
        match self.distributed_in_flight.remove(&token) {
            Some(spare) => self.drives[spare as usize].failed_at.is_none(),
            None => true,
        }
    }

    /// The drive slot that serves sector `pba` of distributed spare slot `slot`: the member
    /// whose free column holds it, wherever that member lives now; `None` when that member
    /// is the one the spare holds (or is being rebuilt into): where it was the free column,
    /// it held nothing.
    #[cold]
    fn distributed_spare_drive(&self, slot: u32, pba: u64) -> Option<u32> {
        let member = self.controller.layout().distributed_spare_member(slot - self.first_distributed_spare, pba);
        if self.controller.distributed_spare_member(slot) == Some(member) {
            return None;
        }
        Some(self.controller.member_slot(member))
    }

    /// The watchdog's error for one event whose handling does not end.
    #[cold]
    fn stuck_in_flush(&self) -> Error {
        let owner = if !self.controller.rebuild_events.is_empty() || self.controller.rebuilding().is_some() {
            "the rebuild (its operations fail at once and are issued again)"
        } else {
            "the controller (its operations fail at once and are issued again)"
        };
        Error::Invariant(format!(
            "the run made no progress in simulated time: one event at {:.6} s was handled for {STUCK_ROUNDS} rounds, \
             owned by {owner}",
            ns_to_s(self.now)
        ))
    }

    /// Keep a completion of a request the cache issued, for `cache_children_done` (out of
    /// line: the completion loop of a run without a cache stays as it was).
    #[cold]
    #[inline(never)]
    fn defer(cache_done: &mut Vec<crate::request::CompletedRequest>, c: crate::request::CompletedRequest) {
        cache_done.push(c);
    }

    /// Pass user request `id` (`record`) through the buffer cache.
    #[cold]
    fn arrive_at_cache(&mut self, id: u64, record: RequestRecord) -> Result<()> {
        let now = self.now;
        let front = self.front.as_mut().expect("a cache");
        let arrived = front.arrive(now, id, record, &mut self.controller, &Drives(&self.drives, self.read_estimate), &mut self.next_request_id)?;
        match arrived {
            Arrived::Waiting => {}
            Arrived::Answered(answered) => self.answer(answered)?,
            Arrived::Due(at) => self.events.push(at, Event::Timer { owner: OwnerCode::of(Owner::Cache), epoch: 0 }),
        }
        Ok(())
    }

    /// The cache's hits due now are answered.
    #[cold]
    fn on_cache_answer(&mut self) -> Result<()> {
        let now = self.now;
        while let Some(answered) = self.front.as_mut().and_then(|front| front.take_due(now)) {
            self.answer(answered)?;
        }
        Ok(())
    }

    /// Requests the cache issued completed: answer the user requests they finish. (Out of
    /// line, as the rest of the cache's path: a run without a cache keeps its loop as small
    /// as it was.)
    #[cold]
    #[inline(never)]
    fn cache_children_done(&mut self) -> Result<()> {
        let mut done = std::mem::take(&mut self.cache_done);
        let mut answered = std::mem::take(&mut self.cache_answered);
        if let Some(front) = self.front.as_mut() {
            for child in &done {
                front.child_done(child, &self.controller, &mut answered)?;
            }
        } else {
            return Err(Error::Invariant(format!("request {} of a cache completed with no cache", done[0].id)));
        }
        for &a in &answered {
            self.answer(a)?;
        }
        done.clear();
        answered.clear();
        self.cache_done = done;
        self.cache_answered = answered;
        Ok(())
    }

    /// A user response the cache gave: record it, and in a closed loop issue the next.
    #[inline(never)]
    fn answer(&mut self, answered: Answered) -> Result<()> {
        let now = self.now;
        self.recorder.completion(now, answered.arrival, answered.is_write, answered.degraded, answered.in_failed_set, answered.lost)?;
        if let Some(think) = self.workload.think_time() {
            self.events.push(now + think, Event::Arrival);
        }
        Ok(())
    }
}

/// "slot 2" or "slots [2, 3]".
fn plural_slots(slots: &[u32]) -> String {
    match slots {
        [one] => format!("slot {one}"),
        _ => format!("slots {slots:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The watchdog: a run whose events keep coming at one instant, without the clock moving
    /// and without arrivals to account for them, stops with an error naming their owner
    /// instead of spinning.
    #[test]
    fn a_run_stuck_at_one_instant_stops_with_an_error_naming_the_owner() {
        let text = "[array]\nlayout = \"raid0\"\ndrives = 2\n[workload]\nrequests = 10\n";
        let config = Config::from_toml(text, std::path::Path::new(".")).unwrap();
        let mut sim = Simulation::new(config).unwrap();
        for _ in 0..STUCK_EVENTS + 2 {
            sim.events.push(0, Event::Timer { owner: OwnerCode::of(Owner::Rebuild), epoch: 0 });
        }
        let error = sim.run(None).unwrap_err().to_string();
        assert!(error.contains("no progress in simulated time") && error.contains("the rebuild discipline's timer"), "{error}");
        // Fewer than the bound run to the end.
        let config = Config::from_toml(text, std::path::Path::new(".")).unwrap();
        let mut sim = Simulation::new(config).unwrap();
        for _ in 0..1000 {
            sim.events.push(0, Event::Timer { owner: OwnerCode::of(Owner::Rebuild), epoch: 0 });
        }
        sim.run(None).unwrap();
        assert_eq!(sim.recorder.completed, 10);
    }
}
