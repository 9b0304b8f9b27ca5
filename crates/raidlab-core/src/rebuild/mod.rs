//! Rebuild policies: which lost unit is rebuilt next (**order**), how the reads of the
//! surviving drives and the writes of the target are organised (**executor**), and when a
//! rebuild op may enter a drive's queue (**issue discipline**). Each family is a trait and a
//! registry, one file per policy.
//!
//! ```text
//!  engine ──events──▶ Rebuild ──▶ executor (sor | dor) ──claim/read/write──▶ controller
//!                                  │  asks                                  (jobs, locks,
//!                                  ├─▶ order (sequential | nearest)          unit states)
//!                                  └─▶ discipline (vsm | pcm | rate)
//! ```
//!
//! Names the papers established: **SOR** (stripe-oriented reconstruction) rebuilds a few
//! units at a time, reading every survivor and writing the target before the next; **DOR**
//! (disk-oriented reconstruction, Holland; PRO §3.3) runs one process per surviving drive,
//! each keeping one rebuild read outstanding into a buffer, while a writer writes complete
//! units. **VSM** (vacationing server model) issues a rebuild read only when the drive has no
//! user work; **PCM** (permanent customer model) keeps one rebuild read in the user queue at
//! user priority (Fu et al., seed 001 §1, §2.1).

pub mod discipline;
pub mod executor;
pub mod order;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::array::rebuild_io::RebuildEvent;
use crate::array::state::UnitMeasure;
use crate::array::Controller;
use crate::disk::{Geometry, Priority};
use crate::error::{Error, Result};
use crate::sim::Nanos;

pub use discipline::Discipline;
pub use executor::Executor;
pub use order::Order;

/// The rebuild unit (`rebuild.unit`): exactly one of `sectors`, `tracks` or `cylinders`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct RebuildUnitConfig {
    /// A fixed number of 512-byte sectors per unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sectors: Option<u64>,
    /// Whole tracks of the drive's geometry per unit, read track-aligned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracks: Option<u32>,
    /// Whole cylinders per unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cylinders: Option<u32>,
}

/// How DOR's read buffers are organised (`rebuild.buffer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum BufferModel {
    /// Each surviving drive has `buffer_units` units of buffer; its process blocks when they
    /// all hold units not yet read from every survivor (Fu et al. §1: B per disk).
    #[default]
    PerDrive,
    /// One pool of `buffer_units` units for the array, each holding one unit being rebuilt,
    /// and no process more than `head_separation_units` units ahead of the slowest
    /// (RAIDframe's floating buffers: 20 buffers, head separation 10).
    Shared,
}

/// Rebuilding a failed drive onto a spare (`[rebuild]`). Present: a failed member is rebuilt
/// onto a spare (`array.spares`) as soon as one is there; absent: failed drives stay failed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RebuildConfig {
    /// Executor: `sor` (stripe-oriented) or `dor` (disk-oriented).
    #[serde(default = "default_executor")]
    pub executor: String,
    /// Order in which lost units are rebuilt: `sequential`, `nearest`, `fetch`, `replacement` or `pro`
    /// (popularity-based, settings in `[rebuild.pro]`).
    #[serde(default = "default_order")]
    pub order: String,
    /// Issue discipline of rebuild reads: `vsm`, `vsm_set`, `pcm` or `rate`, or a production throttle:
    /// `md` (Linux md), `zfs` (OpenZFS), `mclock` (Ceph) or `hw_rate` (hardware RAID), each
    /// with its settings table.
    #[serde(default = "default_discipline")]
    pub discipline: String,
    /// The rebuild unit: `{ tracks = 1 }` (default), `{ sectors = 2048 }` or
    /// `{ cylinders = 1 }`.
    #[serde(default = "default_unit")]
    pub unit: RebuildUnitConfig,
    /// DOR buffer size, in rebuild units: per surviving drive (`buffer = "per_drive"`) or
    /// for the whole array (`buffer = "shared"`). At least 1.
    #[serde(default = "default_buffer_units")]
    pub buffer_units: u32,
    /// DOR buffer organisation: `per_drive` (default) or `shared`.
    #[serde(default)]
    pub buffer: BufferModel,
    /// DOR with a shared buffer: how many units the fastest surviving drive may read ahead
    /// of the slowest. At least 1.
    #[serde(default = "default_head_separation")]
    pub head_separation_units: u32,
    /// SOR: rebuild units in progress at once (P). At least 1.
    #[serde(default = "default_parallel")]
    pub parallel_units: u32,
    /// `rate` discipline: the most rebuild bandwidth per surviving drive, MB/s (10⁶ bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mb_s: Option<f64>,
    /// The `pro` order's settings (`[rebuild.pro]`); its defaults when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pro: Option<order::pro::ProConfig>,
    /// The `md` discipline's settings (`[rebuild.md]`, Linux md's resync throttle); its
    /// defaults when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md: Option<discipline::MdConfig>,
    /// The `zfs` discipline's settings (`[rebuild.zfs]`, OpenZFS's scan/rebuild queue depths);
    /// its defaults when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zfs: Option<discipline::ZfsConfig>,
    /// The `mclock` discipline's settings (`[rebuild.mclock]`, Ceph's mClock profiles); its
    /// defaults when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mclock: Option<discipline::MclockConfig>,
    /// The `hw_rate` discipline's settings (`[rebuild.hw_rate]`, a hardware controller's
    /// rebuild rate); its defaults when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_rate: Option<discipline::HwRateConfig>,
    /// Serve reads of rebuilt units from the target (read redirection).
    #[serde(default = "yes")]
    pub redirect_reads: bool,
    /// Write a degraded user read's reconstruction of a whole unrebuilt unit to the target
    /// (piggybacking, Fu §2.4).
    #[serde(default)]
    pub piggyback: bool,
    /// Seconds between a failure (or a spare's arrival) and the rebuild's start.
    #[serde(default)]
    pub delay_s: f64,
    /// After a member was rebuilt onto a distributed spare (dRAID's), copy it onto the first
    /// spare drive that is ready (a hot spare, or a replacement that arrives,
    /// `spare_arrives`), which frees the distributed spare for the next failure: ZFS's
    /// healing resilver after `zpool replace`. The copy reads the distributed spare and
    /// writes the drive, with the same executor, order and discipline as the rebuild (the
    /// `zfs` discipline in its `healing` mode); user writes go to both meanwhile. `false`:
    /// the member stays in the distributed spare.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    #[schemars(extend("default" = true))]
    pub healing: bool,
    /// End the run when a rebuild completes, or is abandoned with no other spare to start
    /// again on, whatever the workload still holds: for experiments that measure the rebuild
    /// itself. Requests still in flight then are left out.
    #[serde(default)]
    pub end_run: bool,
    /// What rebuild I/O pays for rotation before its first sector: `drive` (what the drive
    /// model charges any access, the default) or `none` (nothing: it starts transferring when
    /// the head arrives, as if its unit were read or written in whatever order the platter
    /// brings it). The thesis leaves this cost open (seed 004 §2.1, Table 2's "uniform"
    /// latency); it moves rebuild times most for small units. Transfers across tracks still
    /// pay their switches. Not with an on-drive cache.
    #[serde(default, skip_serializing_if = "RebuildRotation::is_default")]
    #[schemars(extend("default" = "drive"))]
    pub rotational_latency: RebuildRotation,
}

/// What a rebuild op pays for rotation before its first sector ([`RebuildConfig::rotational_latency`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RebuildRotation {
    /// What the drive model charges any access.
    #[default]
    Drive,
    /// Nothing: the transfer starts when the head arrives.
    None,
}

impl RebuildRotation {
    fn is_default(&self) -> bool {
        *self == RebuildRotation::Drive
    }
}

fn default_executor() -> String {
    "dor".into()
}
fn default_order() -> String {
    "sequential".into()
}
fn default_discipline() -> String {
    "vsm".into()
}
fn default_unit() -> RebuildUnitConfig {
    RebuildUnitConfig { tracks: Some(1), ..Default::default() }
}
fn default_buffer_units() -> u32 {
    64
}
fn default_head_separation() -> u32 {
    10
}
fn default_parallel() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn is_true(value: &bool) -> bool {
    *value
}

impl RebuildConfig {
    /// Checks that need no drive model. Errors name the key under `rebuild.`.
    pub fn validate(&self) -> Result<()> {
        let known = |names: Vec<&str>| names.join(", ");
        if executor::entry(&self.executor).is_none() {
            return Err(Error::config(
                "rebuild.executor",
                format!("unknown executor {:?}; known executors: {}", self.executor, known(executor::names())),
            ));
        }
        if order::entry(&self.order).is_none() {
            return Err(Error::config(
                "rebuild.order",
                format!("unknown order {:?}; known orders: {}", self.order, known(order::names())),
            ));
        }
        if discipline::entry(&self.discipline).is_none() {
            return Err(Error::config(
                "rebuild.discipline",
                format!("unknown discipline {:?}; known disciplines: {}", self.discipline, known(discipline::names())),
            ));
        }
        if let Some(pro) = &self.pro {
            if self.order != "pro" {
                return Err(Error::config("rebuild.pro", format!("only the `pro` order takes these settings, not {:?}", self.order)));
            }
            pro.validate()?;
        }
        discipline::validate_tables(self)?;
        let u = &self.unit;
        let given = [u.sectors.is_some(), u.tracks.is_some(), u.cylinders.is_some()].iter().filter(|&&g| g).count();
        if given != 1 {
            return Err(Error::config("rebuild.unit", "give exactly one of `sectors`, `tracks` and `cylinders`"));
        }
        if u.sectors == Some(0) || u.tracks == Some(0) || u.cylinders == Some(0) {
            return Err(Error::config("rebuild.unit", "must be at least 1"));
        }
        if self.buffer_units == 0 {
            return Err(Error::config("rebuild.buffer_units", "must be at least 1 (B = 0 leaves no room to read into)"));
        }
        if self.head_separation_units == 0 {
            return Err(Error::config("rebuild.head_separation_units", "must be at least 1"));
        }
        if self.parallel_units == 0 {
            return Err(Error::config("rebuild.parallel_units", "must be at least 1"));
        }
        // Settings one executor alone reads: given for the other, they would be ignored and
        // still saved in the run's configuration as if they had counted.
        if self.executor != "sor" && self.parallel_units != default_parallel() {
            return Err(Error::config(
                "rebuild.parallel_units",
                format!("only the `sor` executor rebuilds several units at once; `{}` does not read it", self.executor),
            ));
        }
        if self.executor != "dor" && self.buffer == BufferModel::Shared {
            return Err(Error::config(
                "rebuild.buffer",
                format!("only the `dor` executor has read buffers to share; `{}` does not read it", self.executor),
            ));
        }
        match (self.discipline.as_str(), self.rate_mb_s) {
            ("rate", None) => return Err(Error::config("rebuild.rate_mb_s", "the `rate` discipline needs a rate")),
            ("rate", Some(r)) if !(r.is_finite() && r > 0.0) => {
                return Err(Error::config("rebuild.rate_mb_s", "must be a positive number of MB/s"))
            }
            (d, Some(_)) if d != "rate" => {
                return Err(Error::config("rebuild.rate_mb_s", format!("only the `rate` discipline takes a rate, not {d:?}")))
            }
            _ => {}
        }
        if !(self.delay_s.is_finite() && self.delay_s >= 0.0) {
            return Err(Error::config("rebuild.delay_s", "must be a non-negative number of seconds"));
        }
        // A start time is the failure's plus the delay: both within the horizon, the sum
        // cannot overflow the clock (it wrapped, and the rebuild started at once).
        let horizon_s = crate::sim::ns_to_s(crate::sim::MAX_SIM_TIME_NS);
        if self.delay_s > horizon_s {
            return Err(Error::config(
                "rebuild.delay_s",
                format!("{:e} s is beyond the {horizon_s:.0} s (about 146 years) a run may simulate", self.delay_s),
            ));
        }
        Ok(())
    }

    /// The unit as the array state counts it.
    pub fn measure(&self) -> UnitMeasure {
        match (self.unit.sectors, self.unit.tracks, self.unit.cylinders) {
            (Some(s), _, _) => UnitMeasure::Sectors(s),
            (_, Some(t), _) => UnitMeasure::Tracks(t),
            (_, _, Some(c)) => UnitMeasure::Cylinders(c),
            _ => UnitMeasure::Tracks(1),
        }
    }
}

/// What a policy may see and do while it decides: the controller (claim, read, write), the
/// order, the discipline, the drives' state and the clock.
pub struct Ctx<'a> {
    pub now: Nanos,
    pub controller: &'a mut Controller,
    pub order: &'a mut dyn Order,
    pub discipline: &'a mut dyn Discipline,
    pub drives: &'a dyn DriveState,
    pub geometry: &'a Geometry,
    /// Times at which the policy asks to be woken (rate limits).
    pub wake_at: &'a mut Vec<Nanos>,
}

/// What [`Ctx::try_read_or_pass`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadStart {
    /// The read is issued.
    Issued,
    /// The discipline did not let it in now.
    Refused,
    /// The source holds nothing of the unit: there is nothing to read.
    Nothing,
}

/// What the rebuild policies see of the drives: where their heads are, and whether they are
/// idle.
pub trait DriveState {
    /// The cylinder drive slot `drive`'s arm is over.
    fn cylinder(&self, drive: u32) -> u32;
    /// Whether drive slot `drive` has nothing in service and nothing queued, user or rebuild.
    fn is_idle(&self, drive: u32) -> bool;
    /// Sectors of user (not rebuild) operations drive slot `drive` has completed since the
    /// run began (what Linux md's idle test reads from the disk's statistics). By default 0.
    fn user_sectors_done(&self, _drive: u32) -> u64 {
        0
    }
    /// User (not rebuild) operations drive slot `drive` has completed since the run began.
    /// By default 0.
    fn user_ops_done(&self, _drive: u32) -> u64 {
        0
    }
    /// User (not rebuild) operations queued or in service at drive slot `drive`. By default 0.
    fn user_ops_in_flight(&self, _drive: u32) -> u64 {
        0
    }
}

impl Ctx<'_> {
    /// The next unit the order picks, claimed for a job: `(job, unit)`; `None` when every
    /// unit is rebuilt or in flight.
    pub fn claim_next(&mut self) -> Option<(u32, u64)> {
        observe_reads(self.order, self.controller);
        let unit = {
            let r = self.controller.rebuilding()?;
            self.order.next(&r.states, &r.units, &r.sources, self.drives, self.geometry)?
        };
        let job = self.controller.rebuild_claim(unit)?;
        Some((job, unit))
    }

    /// Issue job `job`'s read of source `drive` if the discipline lets it in now; else ask
    /// to be woken when it will (a clock), or wait for the drive's idle pull (a discipline
    /// that [waits for idle](Discipline::waits_for_idle)), and return false.
    pub fn try_read(&mut self, job: u32, drive: u32) -> bool {
        match self.try_read_or_pass(job, drive) {
            ReadStart::Issued => true,
            ReadStart::Refused => false,
            // Nothing of this unit is on that source: no I/O for a discipline to let in.
            ReadStart::Nothing => {
                self.controller.rebuild_read(job, drive, self.discipline.priority());
                true
            }
        }
    }

    /// As [`Ctx::try_read`], for an executor that passes over a source holding nothing of
    /// the unit (a declustered layout's unit lies on a few of its sources): such a source is
    /// told [`ReadStart::Nothing`] and nothing is issued or told to the discipline.
    pub fn try_read_or_pass(&mut self, job: u32, drive: u32) -> ReadStart {
        let Some(sectors) = self.controller.job_read_sectors(job, drive) else { return ReadStart::Nothing };
        if self.discipline.waits_for_idle() && !self.drives.is_idle(drive) {
            return ReadStart::Refused;
        }
        match self.discipline.admit(drive, self.now, self.drives) {
            discipline::Admit::Now => {}
            discipline::Admit::At(ready) => {
                self.wake_at.push(ready.max(self.now));
                return ReadStart::Refused;
            }
            discipline::Admit::Later => return ReadStart::Refused,
        }
        self.discipline.issued(drive, self.now, sectors);
        self.controller.rebuild_read(job, drive, self.discipline.priority());
        ReadStart::Issued
    }

    /// Issue job `job`'s read of source `drive` now at user priority, whatever the
    /// discipline (a forced read: a user write waits for the job).
    pub fn force_read(&mut self, job: u32, drive: u32) {
        if let Some(sectors) = self.controller.job_read_sectors(job, drive) {
            self.discipline.issued(drive, self.now, sectors);
        }
        self.controller.rebuild_read(job, drive, Priority::Foreground);
    }

    /// Write job `job`'s unit to the target, at the discipline's priority. (At user
    /// priority instead, the target's queue filled with unit writes that its redirected
    /// reads and user writes then waited behind: the demo's mean write response doubled.)
    pub fn write(&mut self, job: u32) {
        self.controller.rebuild_write(job, self.discipline.priority());
    }

    /// The source slots of the rebuild in progress.
    pub fn sources(&self) -> Vec<u32> {
        self.controller.rebuilding().map(|r| r.sources.clone()).unwrap_or_default()
    }
}

/// Where the lost member's data lies on the sources that work: the layout's reads of the
/// whole member, as runs ([`order::SourcePiece`]). Empty when no rebuild runs.
fn source_pieces(controller: &Controller) -> Vec<order::SourcePiece> {
    let Some(r) = controller.rebuilding() else { return Vec::new() };
    if r.healing {
        // A healing copy reads the distributed spare, the whole member in place.
        let sectors = r.units.capacity();
        return vec![order::SourcePiece { slot: r.member_slot, member_start: 0, member_end: sectors, source_start: 0 }];
    }
    let mut reads = Vec::new();
    let placement = controller.state().placement();
    let Some(reconstruction) = controller.layout().reconstruction(r.member) else { return Vec::new() };
    controller.layout().rebuild_reads(r.member, &reconstruction, 0, r.units.capacity(), placement, &mut reads);
    reads
        .iter()
        // Reads of a drive outside the layout (a log's records) are not where the member's
        // data lies.
        .filter(|read| read.outside.is_none())
        .map(|read| (controller.member_slot(read.source), read))
        .filter(|&(slot, _)| !controller.is_failed(slot))
        .map(|(slot, read)| order::SourcePiece {
            slot,
            member_start: read.offset,
            member_end: read.offset + read.sectors,
            source_start: read.pba,
        })
        .collect()
}

/// Hand the user reads `controller` recorded since the last call to `order`.
fn observe_reads(order: &mut dyn Order, controller: &mut Controller) {
    let Some((reads, r)) = controller.take_reads() else { return };
    order.observe_reads(&reads, &r.states, !r.xor);
    controller.give_back_reads(reads);
}

/// The rebuild policies of a run, and what they measured.
pub struct Rebuild {
    pub config: RebuildConfig,
    executor: Box<dyn Executor>,
    order: Box<dyn Order>,
    discipline: Box<dyn Discipline>,
    /// Wake-up times asked for, to become timer events.
    pub wake_at: Vec<Nanos>,
}

impl std::fmt::Debug for Rebuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rebuild").field("config", &self.config).finish()
    }
}

impl Rebuild {
    /// The policies `config` names (validated).
    pub fn new(config: RebuildConfig, slots: u32) -> Result<Rebuild> {
        config.validate()?;
        let executor = (executor::entry(&config.executor).expect("validated").make)(&config);
        let order = (order::entry(&config.order).expect("validated").make)(&config);
        let discipline = (discipline::entry(&config.discipline).expect("validated").make)(&config, slots);
        Ok(Rebuild { config, executor, order, discipline, wake_at: Vec::new() })
    }

    /// A rebuild started on `controller`: policies forget any earlier one, and the
    /// controller records user reads of the lost units if the order watches them.
    pub fn begin(&mut self, controller: &mut Controller) {
        self.order.reset();
        controller.watch_reads(self.order.watches_reads());
        self.start_afresh(controller);
    }

    /// The executor and the discipline start over on the rebuild's sources (the order keeps
    /// what it learnt: a restart after a lost source is the same rebuild).
    fn start_afresh(&mut self, controller: &Controller) {
        self.executor.reset();
        if let Some(r) = controller.rebuilding() {
            self.discipline.healing(r.healing);
            self.discipline.begin(&r.sources, r.target, r.xor);
        }
        if self.order.wants_sources() {
            self.order.sources(&source_pieces(controller));
        }
        if let Some(r) = controller.rebuilding() {
            self.order.phases(&controller.layout().rebuild_phases(r.member), r.target);
        }
    }

    /// Hand the user reads the controller recorded to the order (before each decision, and
    /// whenever enough have piled up to keep the record small).
    pub fn observe_reads(&mut self, controller: &mut Controller) {
        observe_reads(self.order.as_mut(), controller);
    }

    /// Issue what the policies want issued now.
    pub fn pump(&mut self, now: Nanos, controller: &mut Controller, drives: &dyn DriveState, geometry: &Geometry) {
        if controller.rebuilding().is_none() {
            return;
        }
        let (executor, mut ctx) = self.parts(now, controller, drives, geometry);
        executor.pump(&mut ctx);
    }

    /// The executor, and the context it works in.
    fn parts<'a>(
        &'a mut self,
        now: Nanos,
        controller: &'a mut Controller,
        drives: &'a dyn DriveState,
        geometry: &'a Geometry,
    ) -> (&'a mut dyn Executor, Ctx<'a>) {
        let ctx = Ctx {
            now,
            controller,
            order: self.order.as_mut(),
            discipline: self.discipline.as_mut(),
            drives,
            geometry,
            wake_at: &mut self.wake_at,
        };
        (self.executor.as_mut(), ctx)
    }

    /// Tell the executor what happened to its jobs.
    pub fn on_event(&mut self, now: Nanos, event: RebuildEvent, controller: &mut Controller, drives: &dyn DriveState, geometry: &Geometry) {
        if matches!(event, RebuildEvent::Abandoned { .. } | RebuildEvent::Complete { .. }) {
            self.executor.reset();
            return;
        }
        if let RebuildEvent::SourceLost { .. } = event {
            // Plan afresh from the surviving copies: every job in flight is cancelled, its
            // unit given back once its ops are in. (The aborts of those jobs that follow in
            // the same batch of events are not handed on: `Simulation::dispatch_rebuild_events`.)
            controller.restart_rebuild_jobs();
            self.start_afresh(controller);
            self.pump(now, controller, drives, geometry);
            return;
        }
        if let RebuildEvent::Read { job, drive, ok: true } = event {
            let (start, end) = controller.job_range(job);
            self.discipline.completed(drive, now, end - start, drives);
        }
        let (executor, mut ctx) = self.parts(now, controller, drives, geometry);
        executor.on_event(event, &mut ctx);
    }

    /// Per drive slot, ns its rebuild process spent blocked on a full buffer over the run
    /// ([`Executor::blocked_ns_by_slot`]; empty under SOR).
    pub fn blocked_ns_by_slot(&self) -> &[u64] {
        self.executor.blocked_ns_by_slot()
    }

    /// What the order counted during the rebuild (PRO: zones, decisions, reads counted).
    pub fn order_counters(&self) -> Vec<(&'static str, u64)> {
        self.order.counters()
    }

    /// The priority rebuild ops carry.
    pub fn priority(&self) -> Priority {
        self.discipline.priority()
    }

    /// Whether a drive that goes idle must pull rebuild work (the discipline issues reads
    /// only to idle drives): the engine then pumps the policies once the event is handled.
    pub fn pulls_on_idle(&self) -> bool {
        self.discipline.waits_for_idle()
    }

    /// Whether the engine must pump the policies after every op a drive completes
    /// ([`Discipline::pulls_on_completion`]).
    pub fn pulls_on_completion(&self) -> bool {
        self.discipline.pulls_on_completion()
    }

    /// The class discipline the drives' queues use under this rebuild discipline, if it
    /// names one ([`Discipline::class_discipline`]).
    pub fn class_discipline(&self, scheduler: crate::disk::scheduler::MakeScheduler) -> Option<Box<dyn crate::disk::scheduler::ClassDiscipline>> {
        self.discipline.class_discipline(scheduler)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::state::{RebuildUnits, UnitMeasure};
    use crate::disk::presets;
    use crate::layout::{self, LayoutParams};
    use crate::sim::{RngStream, StreamId};

    /// Drives of which some are busy.
    struct Busy(Vec<bool>);
    impl DriveState for Busy {
        fn cylinder(&self, _drive: u32) -> u32 {
            0
        }
        fn is_idle(&self, drive: u32) -> bool {
            !self.0[drive as usize]
        }
    }

    /// A 4-drive RAID-5 whose member 0 is rebuilding onto spare slot 4.
    fn rebuilding_controller(geometry: &Geometry) -> Controller {
        let params = LayoutParams::new(4, 16, 16 * 64);
        let layout = layout::build("raid5", &params, "array").unwrap();
        let mut controller = Controller::new(layout, false, RngStream::new(1, StreamId::MirrorChoice));
        controller.set_spare_slots(1);
        controller.fail_drive(0).unwrap();
        let units = RebuildUnits::new(geometry, controller.layout().member_sectors(), UnitMeasure::Sectors(16));
        controller.start_rebuild(0, 4, units, true, false).unwrap();
        controller
    }

    /// A delay beyond the clock's horizon is refused naming its key: added to the failure's
    /// time it wrapped the clock, and the rebuild started at once.
    #[test]
    fn a_delay_beyond_the_horizon_is_refused() {
        let horizon_s = crate::sim::ns_to_s(crate::sim::MAX_SIM_TIME_NS);
        for (delay_s, refused) in [(0.0, false), (horizon_s, false), (horizon_s * 1.01, true), (1e12, true), (1e300, true)] {
            let config: RebuildConfig = toml::from_str(&format!("delay_s = {delay_s:e}")).unwrap();
            match config.validate() {
                Ok(()) => assert!(!refused, "delay {delay_s} accepted"),
                Err(error) => {
                    assert!(refused, "delay {delay_s} refused: {error}");
                    let text = error.to_string();
                    assert!(text.contains("rebuild.delay_s") && text.contains("beyond"), "{text}");
                }
            }
        }
    }

    /// Under VSM a rebuild read enters only an idle drive, and a busy drive's read waits for
    /// the drive's pull rather than for a timer; under PCM it enters a busy drive at once.
    #[test]
    fn vsm_reads_wait_for_an_idle_drive_and_pcm_reads_do_not() {
        let geometry = Geometry::new(&presets::preset("ibm0661").unwrap(), "drive").unwrap();
        for (discipline, enters_busy) in [("vsm", false), ("pcm", true)] {
            let config: RebuildConfig = toml::from_str(&format!("executor = \"sor\"\ndiscipline = \"{discipline}\"")).unwrap();
            let mut rebuild = Rebuild::new(config, 5).unwrap();
            assert_eq!(rebuild.pulls_on_idle(), !enters_busy, "{discipline}");
            let mut controller = rebuilding_controller(&geometry);
            rebuild.begin(&mut controller);
            // Source slot 2 is busy with user work; 1 and 3 are idle.
            let busy = Busy(vec![false, false, true, false, false]);
            rebuild.pump(0, &mut controller, &busy, &geometry);
            let reads: Vec<u32> = controller.outbox.drain(..).map(|op| op.drive).collect();
            let expected: Vec<u32> = if enters_busy { vec![1, 2, 3] } else { vec![1, 3] };
            assert_eq!(reads, expected, "{discipline}");
            assert!(rebuild.wake_at.is_empty(), "{discipline}: no timer stands in for the pull");
            // Drive 2 goes idle and pulls: its read is issued then, once.
            let idle = Busy(vec![false; 5]);
            rebuild.pump(1, &mut controller, &idle, &geometry);
            let reads: Vec<u32> = controller.outbox.drain(..).map(|op| op.drive).collect();
            let expected: Vec<u32> = if enters_busy { vec![] } else { vec![2] };
            assert_eq!(reads, expected, "{discipline}");
        }
    }
}
