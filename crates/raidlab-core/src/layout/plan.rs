//! Access plans: the disk operations one stripe piece of a user request needs, in ordered
//! phases. Every operation of phase k must finish before phase k+1 starts (fork/join).
//!
//! Planners only *describe* work; the controller executes plans. A plan is built when the
//! piece's stripe lock is granted, from the failure state at that instant; if a drive fails
//! under a running plan, the controller waits for the phase to drain and plans again.

use crate::disk::OpKind;
use crate::layout::{StripeMap, UnitLocation};
use crate::sim::{Nanos, RngStream};

/// One disk operation of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanOp {
    pub drive: u32,
    /// First physical sector.
    pub pba: u64,
    pub sectors: u32,
    pub kind: OpKind,
    /// Phase index (0-based).
    pub phase: u8,
    /// Offset of this op's sector values in the piece's value buffer (content model). Saturates
    /// at `u32::MAX`: the controller refuses plans whose values would not fit
    /// ([`super::MAX_CONTENT_PIECE_SECTORS`]) before it reads any offset.
    pub value_offset: u32,
}

/// How a parity-layout write segment updates its parity (seed 002 §II-A).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMethod {
    /// Pre-read old data and old parity of the updated units.
    ReadModifyWrite,
    /// Pre-read the data units that are not updated.
    ReconstructWrite,
    /// Parity cannot be maintained (its drive failed, or data is already lost): write data only.
    DataOnly,
}

/// A built plan and what the planner learnt while building it.
#[derive(Debug, Default, Clone)]
pub struct Plan {
    pub ops: Vec<PlanOp>,
    pub phases: u8,
    /// The user is answered once the phases before this one are done, and the phases from it
    /// on run after the answer (work the user need not wait for, such as a piggybacked
    /// target write or a deferred parity update); `None`: after the last phase.
    pub answer_after: Option<u8>,
    /// The piece touched a unit on a failed drive.
    pub degraded: bool,
    /// Logical sectors that could not be read or stored (data loss).
    pub lost_sectors: u64,
    /// Sectors pre-read to compute parity (writes only).
    pub pre_read_sectors: u64,
    /// Row segments written by read-modify-write / reconstruct-write.
    pub rmw_segments: u32,
    pub rcw_segments: u32,
    /// The stripe's map as the planner placed it, when that differs from the layout's fixed
    /// map (a copy written where a placement state chose): what the content model matches
    /// the plan's ops against. Read only when [`Plan::placed`] is set.
    pub placed_map: StripeMap,
    /// Whether [`Plan::placed_map`] is this plan's map.
    pub placed: bool,
    /// A log-assisted write's plan (`crate::log`): what its ops on the log drive hold, and
    /// that a parity it writes is computed from whole rows. The content model fills such a
    /// plan's writes by the log rule. Read only when [`Plan::logged`] is set.
    pub log: LogWrites,
    /// Whether [`Plan::log`] describes this plan.
    pub logged: bool,
    /// Controller CPU time spent before the plan is issued, ns (a log index's look-ups,
    /// `log.lookup_us`); 0 for nearly every plan.
    pub cpu_ns: u64,
    /// Scratch: (drive, kind, start pba, end pba) before merging.
    ranges: Vec<(u32, OpKind, u64, u64)>,
    /// Scratch: touched row range [start, end) of every data unit (empty when start == end),
    /// filled by [`Plan::fill_touched`]; the fast paths ask [`Plan::touched_at`] instead.
    pub touched: Vec<(u64, u64)>,
    /// Scratch: the first and last data unit the piece touches (every one between them whole).
    first_unit: usize,
    last_unit: usize,
    /// Scratch: the piece's rows in the first and the last unit it touches.
    first_rows: (u64, u64),
    last_rows: (u64, u64),
    /// Scratch: the stripe unit, sectors, and the stripe's data units.
    unit: u64,
    data_units: usize,
    /// Scratch: the row offsets where the set of updated units changes, in increasing order
    /// (segment `k` is rows `[boundaries[k − 1], boundaries[k])`), filled by
    /// [`Plan::fill_row_boundaries`].
    pub boundaries: Vec<u64>,
}

/// What one record a log-assisted write appends holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogValue {
    /// The block's value before the write (pre-read).
    Old,
    /// The block's value after the write (its sectors the write does not cover pre-read).
    New,
    /// The two XORed (Parity Logging).
    Delta,
    /// What the plan writes home at the same unit and offset (`unit` [`PARITY_UNIT`]: the
    /// parity): md's journal holds the data and parity a write is about to write.
    Home,
    /// The XOR of every data block of the row the write leaves unmodified, from what the plan
    /// pre-read (md's PPL).
    PartialParity,
    /// A record's header (metadata only, no data value).
    Header,
}

/// The `unit` of a [`LogAppend`] or [`LogRecipe`] that is the stripe's parity.
pub const PARITY_UNIT: u32 = u32::MAX;

/// A record a log-assisted write appends: `sectors` sectors of the log drive from `log_pba`
/// hold `value` of data unit `unit`'s sectors from `row` (an offset in the unit) on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogAppend {
    pub log_pba: u64,
    pub unit: u32,
    pub row: u64,
    pub sectors: u32,
    pub value: LogValue,
}

/// What a log-assisted write's plan says beyond its ops, for the content model.
#[derive(Debug, Clone, Default)]
pub struct LogWrites {
    /// The log drive's slot.
    pub log_slot: u32,
    /// The records its ops on the log drive write.
    pub appends: Vec<LogAppend>,
    /// A re-sync's rows (their parity rewritten from the data), whose entries its commit
    /// step drops; also the rows a degraded write rewrote with their parity.
    pub resync_rows: Vec<u64>,
    /// How the plan recovers sectors of a unit on a failed drive (a degraded read's, or a
    /// degraded write's parity): each the XOR of what its reads read.
    pub recipes: Vec<LogRecipe>,
    /// The rows whose records the plan writes, for the commit step to enter into the log's
    /// index once the write is done: (row, first reserved log block, the blocks whose old
    /// value, new value and delta are logged, as masks).
    pub rows: Vec<(u64, u64, [u64; 3])>,
    /// Lost blocks the write overwrites whole, for the commit step to find again: (row,
    /// data block, its drive's slot).
    pub overwritten: Vec<(u64, u32, u32)>,
    /// Sectors a read reports lost: (data unit, first, end), offsets in the unit. The content
    /// model checks none of them, though the plan may read their home for another unit.
    pub lost: Vec<(u32, u64, u64)>,
    /// A re-sync's plan.
    pub resync: bool,
    /// md's schemes (`crate::log::Consistency`): the plan's home writes follow plain RAID-5's
    /// rule (the parity from the pre-reads), a recipe naming a unit (or [`PARITY_UNIT`])
    /// overrides it, and the appends are filled as they say; the log is on `log_slot`, the
    /// journal drive or the stripe's parity drive.
    pub home_rule: bool,
    /// A journal replay: the data it writes home must be the values of the write the crash
    /// caught (`replay_write_id`, the content model's id of it), and become the sectors'
    /// last values.
    pub replay: bool,
    pub replay_write_id: u64,
    /// md's schemes: the phase of the plan's log write (its home writes come after it;
    /// `u8::MAX`: the plan wrote no log, and is unprotected), and where the log write lies
    /// (its slot and first sector), given back to the log's ring when the write is done.
    pub md_phase: u8,
    pub md_ring: Option<(u32, u64)>,
}

/// How a degraded log-assisted plan recovers `sectors` sectors of data unit `unit` from
/// `row` (an offset in the unit) on: the XOR, sector by sector, of what the plan read at
/// each `(drive, first sector)` of `reads` (a member's block, the parity's, or a log record).
/// With [`LogWrites::home_rule`], `unit` may be [`PARITY_UNIT`], and the recipe gives what
/// the plan writes there (a replayed journal entry, a parity recomputed after a crash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecipe {
    pub unit: u32,
    pub row: u64,
    pub sectors: u32,
    pub reads: Vec<(u32, u64)>,
    /// The reads are of memory, which holds what the log holds there (md's write-back
    /// journal caches the data it logged): they cost no op.
    pub memory: bool,
}

/// What the planner may ask about the drives (for mirror-copy selection).
pub trait DriveView {
    /// Whether the drive has nothing in service and nothing queued.
    fn is_idle(&self, drive: u32) -> bool;
    /// Estimated time until the drive could be transferring `pba` if it started now.
    fn positioning_estimate(&self, drive: u32, now: Nanos, pba: u64) -> Nanos;
    /// The controller's estimate of how long a read of `pba` would wait on a busy drive
    /// before transferring, by the run's `array.read_estimate`; by default
    /// [`DriveView::positioning_estimate`].
    fn read_estimate(&self, drive: u32, now: Nanos, pba: u64) -> Nanos {
        self.positioning_estimate(drive, now, pba)
    }
    /// The first sector of the track under the drive's arm now, if the view knows it (for a
    /// layout that writes where the head is).
    fn arm_sector(&self, _drive: u32) -> Option<u64> {
        None
    }
}

/// A stripe piece: `sectors` logical sectors starting `first` sectors into the stripe's data.
#[derive(Debug, Clone, Copy)]
pub struct PieceSpec {
    pub first: u64,
    pub sectors: u64,
    pub is_write: bool,
    /// A re-synchronization of the stripe's redundancy ([`crate::request::Origin::Resync`],
    /// a write for the stripe's lock), not a user write: only a layout with a log plans one.
    pub resync: bool,
}

impl Plan {
    fn reset(&mut self) {
        self.ops.clear();
        self.ranges.clear();
        self.phases = 0;
        self.answer_after = None;
        self.degraded = false;
        self.lost_sectors = 0;
        self.pre_read_sectors = 0;
        self.rmw_segments = 0;
        self.rcw_segments = 0;
        self.placed = false;
        self.logged = false;
        self.cpu_ns = 0;
    }

    #[inline]
    fn add(&mut self, drive: u32, kind: OpKind, start: u64, end: u64) {
        if start < end {
            self.ranges.push((drive, kind, start, end));
        }
    }

    /// Merge overlapping or adjacent ranges per (drive, kind) into ops; reads go in phase 0
    /// and writes in phase 1 when there are reads, else in phase 0.
    fn finish(&mut self) {
        self.ranges.sort_unstable_by_key(|&(d, k, s, _)| (k == OpKind::Write, d, s));
        let has_reads = self.ranges.first().is_some_and(|r| r.1 == OpKind::Read);
        let mut offset = 0u32;
        let mut i = 0;
        while i < self.ranges.len() {
            let (drive, kind, start, mut end) = self.ranges[i];
            i += 1;
            while i < self.ranges.len() {
                let (d, k, s, e) = self.ranges[i];
                if d != drive || k != kind || s > end {
                    break;
                }
                end = end.max(e);
                i += 1;
            }
            let phase = if kind == OpKind::Write && has_reads { 1 } else { 0 };
            let sectors = (end - start) as u32;
            self.ops.push(PlanOp { drive, pba: start, sectors, kind, phase, value_offset: offset });
            offset = offset.saturating_add(sectors);
            self.phases = self.phases.max(phase + 1);
        }
    }

    /// Add `[start, end)` of `drive` to the plan, for a planner outside this module (merged
    /// into ops by [`Plan::finish_ranges`]).
    pub fn add_range(&mut self, drive: u32, kind: OpKind, start: u64, end: u64) {
        self.add(drive, kind, start, end);
    }

    /// Start the plan of piece `spec` of `map`'s stripe (stripe unit `unit` sectors), built
    /// range by range ([`Plan::add_range`]).
    pub fn start_ranges(&mut self, map: &StripeMap, unit: u64, spec: PieceSpec) {
        self.reset();
        self.compute_touched(map, unit, spec);
    }

    /// Merge the ranges added into ops: reads in phase 0, writes after them.
    pub fn finish_ranges(&mut self) {
        self.finish();
    }

    /// Make this the plan of a piece that is the one op `op`, in phase 0, with nothing
    /// degraded, lost or pre-read: what the planners build for a piece inside one data unit
    /// on a working drive that reads, or writes without redundancy.
    pub fn set_single(&mut self, op: PlanOp) {
        self.reset();
        self.ops.push(op);
        self.phases = 1;
    }

    /// Sum of sectors over all ops (the size of the value buffer).
    pub fn value_sectors(&self) -> usize {
        self.ops.iter().map(|o| o.sectors as usize).sum()
    }

    /// Find the units a piece of `spec.sectors` > 0 sectors touches: data units
    /// `first_unit..=last_unit`, the first from its offset in the unit and the last up to
    /// its end; every unit between them whole. The table of every unit's rows is filled only
    /// when a planner needs it ([`Plan::fill_touched`]): the common small piece touches one
    /// unit, and clearing and filling a row range per data unit of the stripe cost as much
    /// as planning it.
    fn compute_touched(&mut self, map: &StripeMap, unit: u64, spec: PieceSpec) {
        let (lo, hi) = (spec.first, spec.first + spec.sectors);
        let (first, last) = ((lo / unit) as usize, ((hi - 1) / unit) as usize);
        self.first_unit = first;
        self.last_unit = last;
        self.first_rows = (lo - first as u64 * unit, if first == last { hi - first as u64 * unit } else { unit });
        self.last_rows = (if first == last { self.first_rows.0 } else { 0 }, hi - last as u64 * unit);
        self.unit = unit;
        self.data_units = map.data_units();
        self.touched.clear();
    }

    /// The rows data unit `i` (in `first_unit..=last_unit`) of the piece covers.
    #[inline]
    fn touched_at(&self, i: usize) -> (u64, u64) {
        if i == self.first_unit {
            self.first_rows
        } else if i == self.last_unit {
            self.last_rows
        } else {
            (0, self.unit)
        }
    }

    /// Fill [`Plan::boundaries`] from `touched` (filled first): a write's row segments, each
    /// with the same units updated throughout, whose parity method a planner chooses apart.
    pub fn fill_row_boundaries(&mut self) {
        self.boundaries.clear();
        for &(a, b) in &self.touched {
            if a < b {
                self.boundaries.push(a);
                self.boundaries.push(b);
            }
        }
        self.boundaries.sort_unstable();
        self.boundaries.dedup();
    }

    /// Fill `touched`, the rows of every data unit of the stripe, from
    /// [`Plan::compute_touched`]'s findings.
    pub fn fill_touched(&mut self) {
        if self.touched.len() == self.data_units {
            return;
        }
        self.touched.clear();
        self.touched.resize(self.data_units, (0, 0));
        for i in self.first_unit..=self.last_unit {
            self.touched[i] = self.touched_at(i);
        }
    }
}

/// What a planner reads to plan one stripe piece: the stripe's map, the stripe unit, the
/// piece, the units' status under the failure and rebuild state of the moment, the layout's
/// placement state (if it chooses placement at write time), the drives (a mirror's read goes
/// to an idle or nearer copy) and the run's copy-choice stream.
pub struct PlanInputs<'a> {
    pub map: &'a StripeMap,
    /// Stripe unit, sectors.
    pub unit_sectors: u64,
    pub spec: PieceSpec,
    pub status: UnitStatus<'a>,
    /// The layout's placement state ([`crate::layout::Layout::placement_state`]), as its
    /// finished writes left it.
    /// The planner may change it (a write taking a slot its commit step records).
    pub placement: Option<&'a mut (dyn crate::layout::PlacementState + 'static)>,
    pub view: &'a dyn DriveView,
    pub now: Nanos,
    pub rng: &'a mut RngStream,
}

/// A planner family: how the pieces of a layout's stripes become access plans. Each layout
/// names its planner ([`crate::layout::Layout::planner`]); the controller asks it for every
/// piece and never matches on the family.
pub trait Planner: Send + Sync + std::fmt::Debug {
    /// The family's name (`striped`, `mirror`, `parity`), for messages.
    fn name(&self) -> &'static str;
    /// Build `inputs.spec`'s plan into `plan`.
    fn plan(&self, inputs: PlanInputs<'_>, plan: &mut Plan);
    /// Whether a write inside one data unit on a working drive is exactly one write of that
    /// unit (nothing else to keep up to date). Such a request, and any read inside one data
    /// unit, may take the controller's one-op path instead of a piece; by default false.
    fn writes_one_unit_alone(&self) -> bool {
        false
    }
    /// Disk operations a write of `units` data units costs on average, for a stripe of
    /// `data_units` data units with `copies` copies of each (the rate estimate behind
    /// `workload.arrival.target_utilization`).
    fn write_ops(&self, units: f64, data_units: f64, copies: f64) -> f64;
    /// A piece's plan of `stripe` will not finish: the controller plans it again after a
    /// drive failed under it. `wrote`: its phase of writes had been issued, and every write
    /// but those to the failed drive is done. Settle `placement` with what the plan did (log
    /// space reserved and not written given back, or records written entered); by default
    /// nothing.
    fn abandon(&self, _placement: &mut dyn crate::layout::PlacementState, _stripe: u64, _plan: &Plan, _wrote: bool) {}
    /// The commit step of a layout that chooses placement at write time: write piece `plan`
    /// of `stripe` finished (every op done), so record where it put what in `placement`.
    /// Called for every finished write piece of a layout with a placement state (whose writes
    /// never take the one-op path), before the stripe's lock goes; by default nothing.
    fn commit(&self, _placement: &mut dyn crate::layout::PlacementState, _stripe: u64, _plan: &Plan) {}
}

/// RAID-0's planner: one copy of each data unit, no redundancy.
#[derive(Debug)]
pub struct StripedPlanner;
/// RAID-1's planner: every data unit on `copies` drives.
#[derive(Debug)]
pub struct MirrorPlanner;
/// RAID-5's planner: data units and one XOR parity unit.
#[derive(Debug)]
pub struct ParityPlanner;

impl Planner for StripedPlanner {
    fn name(&self) -> &'static str {
        "striped"
    }
    fn plan(&self, i: PlanInputs<'_>, plan: &mut Plan) {
        plan_striped(i.map, i.unit_sectors, i.spec, i.status.failed, plan)
    }
    fn writes_one_unit_alone(&self) -> bool {
        true
    }
    fn write_ops(&self, units: f64, _data_units: f64, _copies: f64) -> f64 {
        units
    }
}

impl Planner for MirrorPlanner {
    fn name(&self) -> &'static str {
        "mirror"
    }
    fn plan(&self, i: PlanInputs<'_>, plan: &mut Plan) {
        plan_mirror_with(i.map, i.unit_sectors, i.spec, i.status, i.view, i.now, i.rng, plan)
    }
    fn write_ops(&self, units: f64, _data_units: f64, copies: f64) -> f64 {
        copies * units
    }
}

impl Planner for ParityPlanner {
    fn name(&self) -> &'static str {
        "parity"
    }
    fn plan(&self, i: PlanInputs<'_>, plan: &mut Plan) {
        plan_parity_with(i.map, i.unit_sectors, i.spec, i.status, plan)
    }
    fn write_ops(&self, units: f64, data_units: f64, _copies: f64) -> f64 {
        // Read-modify-write (pre-read and write each unit and the parity) or
        // reconstruct-write (pre-read the others, write the units and the parity).
        (2.0 * (units + 1.0)).min(data_units + 1.0 + (units - 1.0).max(0.0))
    }
}

/// The planners, one per family: layouts hand out references to these.
pub static STRIPED: StripedPlanner = StripedPlanner;
pub static MIRROR: MirrorPlanner = MirrorPlanner;
pub static PARITY: ParityPlanner = ParityPlanner;

/// Build the plan of a piece on a layout with single parity (RAID-5).
pub fn plan_parity(map: &StripeMap, unit: u64, spec: PieceSpec, failed: &[bool], plan: &mut Plan) {
    plan_parity_with(map, unit, spec, UnitStatus::new(failed, &[]), plan)
}

/// The status of a stripe's units as the planners read it, resolved by the controller for
/// one piece under the failure and rebuild state of that moment: a unit is *failed* when it
/// cannot be read, and a failed unit is *write-only* when it still takes writes (on a
/// rebuild target, not every rebuild unit under it current yet). Planners ask per unit,
/// never about drives.
#[derive(Debug, Clone, Copy)]
pub struct UnitStatus<'a> {
    /// Per drive slot, for this piece: cannot be read.
    failed: &'a [bool],
    /// Per drive slot, for this piece: cannot be read but takes writes (may be shorter than
    /// the slot count; missing entries are false).
    write_only: &'a [bool],
}

impl<'a> UnitStatus<'a> {
    /// The status resolved into per-slot flags: `failed` for every slot, `write_only` for
    /// those that take writes though they cannot be read.
    pub fn new(failed: &'a [bool], write_only: &'a [bool]) -> Self {
        UnitStatus { failed, write_only }
    }

    /// Whether unit `u` cannot be read.
    #[inline(always)]
    pub fn is_failed(&self, u: &UnitLocation) -> bool {
        self.failed[u.drive as usize]
    }

    /// Whether unit `u` cannot be read but takes writes.
    #[inline(always)]
    pub fn is_write_only(&self, u: &UnitLocation) -> bool {
        self.write_only.get(u.drive as usize).copied().unwrap_or(false)
    }
}

/// [`plan_parity`] under the units' resolved status: write-only units (see
/// [`UnitStatus::is_write_only`]) are read as failed units are (reconstructed from the
/// others), and every write of their rows is also written to them; a write-only parity unit
/// is written by reconstruct-write.
pub fn plan_parity_with(map: &StripeMap, unit: u64, spec: PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) {
    plan.reset();
    plan.compute_touched(map, unit, spec);
    if !(plan_parity_normal_read(map, spec, status, plan) || plan_parity_single_unit(map, spec, status, plan)) {
        plan_parity_general(map, spec, status, plan);
    }
}

/// A read none of whose units is on a failed drive: one read per touched unit. Builds
/// exactly the plan `plan_parity_general` would (a test compares them) without its ranges,
/// sort and merge. Returns false when the general path is needed.
#[inline]
fn plan_parity_normal_read(map: &StripeMap, spec: PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) -> bool {
    !spec.is_write && plan_units_directly(map, OpKind::Read, status, plan)
}

/// One `kind` op per touched data unit, when none of them is on a failed drive and every
/// unit is on its own drive (`copies` = 1): the plan the general planners build for such a
/// piece, without their ranges, sort and merge (they order ops by drive and lay the values
/// out in that order). Returns false, with the plan untouched, otherwise.
#[inline]
fn plan_units_directly(map: &StripeMap, kind: OpKind, status: UnitStatus<'_>, plan: &mut Plan) -> bool {
    if map.copies > 1 {
        return false;
    }
    for i in plan.first_unit..=plan.last_unit {
        let (a, b) = plan.touched_at(i);
        let u = map.data[i];
        if status.is_failed(&u) {
            plan.ops.clear();
            return false;
        }
        plan.ops.push(PlanOp { drive: u.drive, pba: u.pba + a, sectors: (b - a) as u32, kind, phase: 0, value_offset: 0 });
    }
    plan.ops.sort_unstable_by_key(|o| o.drive);
    debug_assert!(plan.ops.windows(2).all(|w| w[0].drive < w[1].drive), "two units of a stripe on one drive");
    let mut offset = 0;
    for op in plan.ops.iter_mut() {
        op.value_offset = offset;
        offset = offset.saturating_add(op.sectors);
    }
    plan.phases = 1;
    true
}

/// The common small request: the piece lies inside one data unit on a working drive. Builds
/// exactly the plan `plan_parity_general` would (a test compares them), without segments,
/// sorting or merging. Returns false when the general path is needed.
#[inline]
fn plan_parity_single_unit(map: &StripeMap, spec: PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) -> bool {
    let i = plan.first_unit;
    if plan.last_unit != i {
        return false;
    }
    let (a, b) = plan.touched_at(i);
    let data = map.data[i];
    let parity = map.parity[0];
    if status.is_failed(&data) {
        return false;
    }
    let sectors = (b - a) as u32;
    let op = |drive: u32, pba: u64, kind: OpKind, phase: u8, value_offset: u32| PlanOp {
        drive,
        pba: pba + a,
        sectors,
        kind,
        phase,
        value_offset,
    };
    if !spec.is_write {
        plan.ops.push(op(data.drive, data.pba, OpKind::Read, 0, 0));
        plan.phases = 1;
        return true;
    }
    // One updated unit: rmw pre-reads 2 (data, parity), rcw the other n − 1 units. One failed
    // unit that is not updated leaves read-modify-write the right method, as in the general
    // path; a failed parity drive, a second failed unit or rcw ≤ rmw go the general way.
    if status.is_failed(&parity) || map.data_units() - 1 <= 2 {
        return false;
    }
    // Two or more failed units: data is already lost and only data is written.
    if map.data.iter().filter(|u| status.is_failed(u)).count() >= 2 {
        return false;
    }
    // Ops in the general path's order: reads then writes, each by drive.
    let (first, second) = if data.drive < parity.drive { (data, parity) } else { (parity, data) };
    plan.ops.push(op(first.drive, first.pba, OpKind::Read, 0, 0));
    plan.ops.push(op(second.drive, second.pba, OpKind::Read, 0, sectors));
    plan.ops.push(op(first.drive, first.pba, OpKind::Write, 1, sectors.saturating_mul(2)));
    plan.ops.push(op(second.drive, second.pba, OpKind::Write, 1, sectors.saturating_mul(3)));
    plan.phases = 2;
    plan.pre_read_sectors = 2 * (b - a);
    plan.rmw_segments = 1;
    true
}

fn plan_parity_general(map: &StripeMap, spec: PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) {
    plan.fill_touched();
    let parity = map.parity[0];
    let parity_failed = status.is_failed(&parity);
    let parity_write_only = status.is_write_only(&parity);
    let n = map.data_units();
    if !spec.is_write {
        for i in 0..n {
            let (a, b) = plan.touched[i];
            if a == b {
                continue;
            }
            let u = map.data[i];
            if !status.is_failed(&u) {
                plan.add(u.drive, OpKind::Read, u.pba + a, u.pba + b);
                continue;
            }
            // Degraded read: XOR of the same rows of every other unit of the stripe.
            plan.degraded = true;
            let others = map.data.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, u)| *u);
            if others.clone().chain(std::iter::once(parity)).any(|o| status.is_failed(&o)) {
                plan.lost_sectors += b - a;
                continue;
            }
            for o in others.chain(std::iter::once(parity)) {
                plan.add(o.drive, OpKind::Read, o.pba + a, o.pba + b);
            }
        }
        plan.finish();
        return;
    }

    // Writes: split the touched row span into segments where the set of updated units is
    // constant, and choose the parity method per segment by counting pre-reads.
    plan.fill_row_boundaries();
    for k in 1..plan.boundaries.len() {
        let (r0, r1) = (plan.boundaries[k - 1], plan.boundaries[k]);
        let (mut updated, mut failed_updated, mut failed_other) = (0usize, 0usize, 0usize);
        for i in 0..n {
            let (a, b) = plan.touched[i];
            let in_segment = a <= r0 && r1 <= b;
            let f = status.is_failed(&map.data[i]);
            if f {
                plan.degraded |= in_segment;
            }
            match (in_segment, f) {
                (true, true) => failed_updated += 1,
                (false, true) => failed_other += 1,
                (true, false) => {}
                (false, false) => {}
            }
            updated += in_segment as usize;
        }
        if updated == 0 {
            continue; // a gap between two partial units: parity rows untouched
        }
        let method = if (parity_failed && !parity_write_only) || failed_updated + failed_other >= 2 {
            WriteMethod::DataOnly
        } else if failed_updated == 1 || parity_write_only {
            // A write-only parity unit cannot be pre-read: it is computed from the data.
            WriteMethod::ReconstructWrite
        } else if failed_other == 1 {
            WriteMethod::ReadModifyWrite
        } else {
            // rmw pre-reads the updated units and the parity; rcw the units not updated.
            let rmw = updated + 1;
            let rcw = n - updated;
            if rcw <= rmw {
                WriteMethod::ReconstructWrite
            } else {
                WriteMethod::ReadModifyWrite
            }
        };
        plan.degraded |= parity_failed;
        let rows = r1 - r0;
        for i in 0..n {
            let (a, b) = plan.touched[i];
            let in_segment = a <= r0 && r1 <= b;
            let u = map.data[i];
            let alive = !status.is_failed(&u);
            match (method, in_segment, alive) {
                (WriteMethod::ReadModifyWrite, true, true) => {
                    plan.add(u.drive, OpKind::Read, u.pba + r0, u.pba + r1);
                    plan.pre_read_sectors += rows;
                }
                (WriteMethod::ReconstructWrite, false, true) => {
                    plan.add(u.drive, OpKind::Read, u.pba + r0, u.pba + r1);
                    plan.pre_read_sectors += rows;
                }
                _ => {}
            }
            if in_segment {
                if alive || status.is_write_only(&u) {
                    plan.add(u.drive, OpKind::Write, u.pba + r0, u.pba + r1);
                } else if method == WriteMethod::DataOnly {
                    plan.lost_sectors += rows;
                }
            }
        }
        match method {
            WriteMethod::ReadModifyWrite => {
                plan.add(parity.drive, OpKind::Read, parity.pba + r0, parity.pba + r1);
                plan.add(parity.drive, OpKind::Write, parity.pba + r0, parity.pba + r1);
                plan.pre_read_sectors += rows;
                plan.rmw_segments += 1;
            }
            WriteMethod::ReconstructWrite => {
                plan.add(parity.drive, OpKind::Write, parity.pba + r0, parity.pba + r1);
                plan.rcw_segments += 1;
            }
            WriteMethod::DataOnly => {}
        }
    }
    plan.finish();
}

/// Build the plan of a piece on a mirrored layout (copies ≥ 2). Reads go to an idle copy,
/// else to the copy with the shorter expected positioning time; exact ties are broken by the
/// seeded RNG (seed 004 §2.2.1). Writes go to every surviving copy, and to write-only ones
/// (a rebuild target whose unit is not yet current; see [`plan_parity_with`]).
#[allow(clippy::too_many_arguments)]
pub fn plan_mirror(
    map: &StripeMap,
    unit: u64,
    spec: PieceSpec,
    failed: &[bool],
    view: &dyn DriveView,
    now: Nanos,
    rng: &mut RngStream,
    plan: &mut Plan,
) {
    plan_mirror_with(map, unit, spec, UnitStatus::new(failed, &[]), view, now, rng, plan)
}

thread_local! {
    /// The map a read of [`plan_mirror_reading_one`] is planned on: each data unit's one copy.
    static READ_MAP: std::cell::RefCell<StripeMap> = std::cell::RefCell::new(StripeMap::default());
}

/// A mirror's planner whose reads take, for each data unit, the one copy `choose` picks
/// among its copies (`None`: none works) instead of the mirror rule's; writes are the
/// mirror's ([`plan_mirror_with`]). A layout with a fixed read rule (a primary first, md's
/// lowest address for far copies) names a static of its own.
#[derive(Debug)]
pub struct FixedCopyPlanner {
    /// The planner's name in messages (`mirror (primary first)`).
    pub name: &'static str,
    /// The copy a read of a data unit takes.
    pub choose: fn(&[UnitLocation], &UnitStatus<'_>) -> Option<UnitLocation>,
}

impl Planner for FixedCopyPlanner {
    fn name(&self) -> &'static str {
        self.name
    }
    fn plan(&self, i: PlanInputs<'_>, plan: &mut Plan) {
        plan_mirror_reading_one(i, plan, self.choose)
    }
    fn write_ops(&self, units: f64, _data_units: f64, copies: f64) -> f64 {
        copies * units
    }
}

/// [`FixedCopyPlanner`]'s plan. The piece is degraded when a copy it could have read is
/// gone.
fn plan_mirror_reading_one(
    i: PlanInputs<'_>,
    plan: &mut Plan,
    choose: fn(&[UnitLocation], &UnitStatus<'_>) -> Option<UnitLocation>,
) {
    if i.spec.is_write {
        return plan_mirror_with(i.map, i.unit_sectors, i.spec, i.status, i.view, i.now, i.rng, plan);
    }
    READ_MAP.with(|cell| {
        let mut read_map = cell.borrow_mut();
        read_map.reset(i.map.stripe, 1);
        for unit in 0..i.map.data_units() {
            let copies = i.map.copies_of(unit);
            // With no copy working, the first one (the read is then lost, as the mirror's).
            read_map.data.push(choose(copies, &i.status).unwrap_or(copies[0]));
        }
        plan_mirror_with(&read_map, i.unit_sectors, i.spec, i.status, i.view, i.now, i.rng, plan);
        plan.degraded |= (0..i.map.data_units())
            .any(|unit| plan.touched[unit].0 != plan.touched[unit].1 && i.map.copies_of(unit).iter().any(|c| i.status.is_failed(c)));
    });
}

/// [`plan_mirror`] under the units' resolved status (write-only copies take writes).
#[allow(clippy::too_many_arguments)]
pub fn plan_mirror_with(
    map: &StripeMap,
    unit: u64,
    spec: PieceSpec,
    status: UnitStatus<'_>,
    view: &dyn DriveView,
    now: Nanos,
    rng: &mut RngStream,
    plan: &mut Plan,
) {
    plan.reset();
    plan.compute_touched(map, unit, spec);
    plan.fill_touched();
    for i in 0..map.data_units() {
        let (a, b) = plan.touched[i];
        if a == b {
            continue;
        }
        let copies = map.copies_of(i);
        if copies.iter().any(|c| status.is_failed(c)) {
            plan.degraded = true;
        }
        if spec.is_write {
            let mut stored = false;
            for c in copies.iter().filter(|c| !status.is_failed(c)) {
                plan.add(c.drive, OpKind::Write, c.pba + a, c.pba + b);
                stored = true;
            }
            for c in copies.iter().filter(|c| status.is_write_only(c)) {
                plan.add(c.drive, OpKind::Write, c.pba + a, c.pba + b);
            }
            if !stored {
                plan.lost_sectors += b - a;
            }
            continue;
        }
        let alive = || copies.iter().filter(|c| !status.is_failed(c));
        let any_idle = alive().any(|c| view.is_idle(c.drive));
        let mut best: Option<(Nanos, u32, u64)> = None;
        let mut ties = 0u64;
        for c in alive().filter(|c| !any_idle || view.is_idle(c.drive)) {
            // Idle drives are compared by positioning alone; busy ones by the run's estimate.
            let estimate = if any_idle {
                view.positioning_estimate(c.drive, now, c.pba + a)
            } else {
                view.read_estimate(c.drive, now, c.pba + a)
            };
            match best {
                Some((e, _, _)) if estimate > e => {}
                Some((e, _, _)) if estimate == e => {
                    // Reservoir choice among equal estimates: uniform over the ties.
                    ties += 1;
                    if rng.below(ties) == 0 {
                        best = Some((estimate, c.drive, c.pba));
                    }
                }
                _ => {
                    best = Some((estimate, c.drive, c.pba));
                    ties = 1;
                }
            }
        }
        match best {
            Some((_, drive, pba)) => plan.add(drive, OpKind::Read, pba + a, pba + b),
            None => plan.lost_sectors += b - a,
        }
    }
    plan.finish();
}

/// Build the plan of a piece on a layout without redundancy (RAID-0).
pub fn plan_striped(map: &StripeMap, unit: u64, spec: PieceSpec, failed: &[bool], plan: &mut Plan) {
    let status = UnitStatus::new(failed, &[]);
    plan.reset();
    plan.compute_touched(map, unit, spec);
    let kind = if spec.is_write { OpKind::Write } else { OpKind::Read };
    if !plan_units_directly(map, kind, status, plan) {
        plan_striped_general(map, kind, status, plan);
    }
}

fn plan_striped_general(map: &StripeMap, kind: OpKind, status: UnitStatus<'_>, plan: &mut Plan) {
    plan.fill_touched();
    for i in 0..map.data_units() {
        let (a, b) = plan.touched[i];
        if a == b {
            continue;
        }
        let u = map.data[i];
        if status.is_failed(&u) {
            plan.degraded = true;
            plan.lost_sectors += b - a;
        } else {
            plan.add(u.drive, kind, u.pba + a, u.pba + b);
        }
    }
    plan.finish();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{self, LayoutParams};

    /// Layout `name` over `drives` drives of 800 sectors, 8-sector units.
    fn small_layout(name: &str, drives: u32) -> Box<dyn layout::Layout> {
        layout::build(name, &LayoutParams::new(drives, 8, 800), "array").unwrap()
    }

    fn raid5(drives: u32) -> (Box<dyn layout::Layout>, StripeMap) {
        let l = small_layout("raid5", drives);
        let mut m = StripeMap::default();
        l.map_stripe(0, &mut m); // parity on the last drive, data on 0..n-1
        (l, m)
    }

    fn count(plan: &Plan, kind: OpKind) -> usize {
        plan.ops.iter().filter(|o| o.kind == kind).count()
    }

    #[test]
    fn small_write_is_read_modify_write() {
        let (_, m) = raid5(5);
        let mut p = Plan::default();
        plan_parity(&m, 8, PieceSpec { first: 0, sectors: 8, is_write: true, resync: false }, &[false; 5], &mut p);
        // rmw = 1 + 1 = 2 pre-reads < rcw = 3: read old data and old parity, then write both.
        assert_eq!((count(&p, OpKind::Read), count(&p, OpKind::Write)), (2, 2));
        assert_eq!(p.phases, 2);
        assert_eq!(p.rmw_segments, 1);
        assert_eq!(p.pre_read_sectors, 16);
    }

    #[test]
    fn large_write_is_reconstruct_write_and_ties_go_to_reconstruct() {
        let (_, m) = raid5(5);
        let mut p = Plan::default();
        // 3 of 4 units: rcw = 1 < rmw = 4.
        plan_parity(&m, 8, PieceSpec { first: 0, sectors: 24, is_write: true, resync: false }, &[false; 5], &mut p);
        assert_eq!((count(&p, OpKind::Read), count(&p, OpKind::Write)), (1, 4));
        assert_eq!(p.rcw_segments, 1);
        // 2 of 4 units on a 5-drive array: rmw = 3, rcw = 2 → reconstruct-write.
        plan_parity(&m, 8, PieceSpec { first: 0, sectors: 16, is_write: true, resync: false }, &[false; 5], &mut p);
        assert_eq!(p.rcw_segments, 1);
        // 1 of 2 units on a 3-drive array: rmw = 2, rcw = 1 → reconstruct-write.
        let (_, m3) = raid5(3);
        plan_parity(&m3, 8, PieceSpec { first: 0, sectors: 8, is_write: true, resync: false }, &[false; 3], &mut p);
        assert_eq!(p.rcw_segments, 1);
    }

    #[test]
    fn full_stripe_write_needs_no_pre_read() {
        let (_, m) = raid5(5);
        let mut p = Plan::default();
        plan_parity(&m, 8, PieceSpec { first: 0, sectors: 32, is_write: true, resync: false }, &[false; 5], &mut p);
        assert_eq!((count(&p, OpKind::Read), count(&p, OpKind::Write)), (0, 5));
        assert_eq!(p.phases, 1);
        assert_eq!(p.pre_read_sectors, 0);
    }

    #[test]
    fn partial_units_split_into_segments_with_their_own_method() {
        let (_, m) = raid5(5);
        let mut p = Plan::default();
        // Rows 4..8 of unit 0 and 0..8 of unit 1 and 0..2 of unit 2.
        plan_parity(&m, 8, PieceSpec { first: 4, sectors: 14, is_write: true, resync: false }, &[false; 5], &mut p);
        // Segments: [0,2) units {1,2}: rcw 2 ≤ rmw 3 → rcw; [2,4) unit {1}: rmw;
        // [4,8) units {0,1}: rcw.
        assert_eq!((p.rcw_segments, p.rmw_segments), (2, 1));
        // Parity is written over rows 0..8 as one merged op.
        let parity_writes: Vec<_> =
            p.ops.iter().filter(|o| o.drive == 4 && o.kind == OpKind::Write).collect();
        assert_eq!(parity_writes.len(), 1);
        assert_eq!((parity_writes[0].pba, parity_writes[0].sectors), (0, 8));
    }

    /// A random piece of a random stripe of `l` (mapped into `m`), mostly small (one or two
    /// units), some up to the stripe's end; each drive failed with probability 1/`fail_one_in`.
    fn random_piece(
        rng: &mut crate::sim::RngStream,
        l: &dyn layout::Layout,
        m: &mut StripeMap,
        fail_one_in: u64,
    ) -> (PieceSpec, Vec<bool>) {
        l.map_stripe(rng.below(l.stripes()), m);
        let per_stripe = l.stripe_data_sectors();
        let first = rng.below(per_stripe);
        let longest = if rng.below(4) == 0 { per_stripe } else { 12 };
        let sectors = 1 + rng.below((per_stripe - first).min(longest));
        let spec = PieceSpec { first, sectors, is_write: rng.below(2) == 0, resync: false };
        let failed = (0..l.drives()).map(|_| rng.below(fail_one_in) == 0).collect();
        (spec, failed)
    }

    /// On 4,000 random pieces of `l` (each drive failed with probability 1/`fail_one_in`),
    /// `fast` builds the plan `general` builds from a fresh plan holding the piece's touched
    /// units: the same ops and everything learnt.
    fn fast_path_builds_the_general_plan(
        l: &dyn layout::Layout,
        seed: u64,
        fail_one_in: u64,
        fast: impl Fn(&StripeMap, PieceSpec, &[bool], &mut Plan),
        general: impl Fn(&StripeMap, PieceSpec, &[bool], &mut Plan),
    ) {
        let mut rng = crate::sim::RngStream::new(seed, crate::sim::StreamId::Policy(0));
        let mut m = StripeMap::default();
        let (mut a, mut b) = (Plan::default(), Plan::default());
        for _ in 0..4000 {
            let (spec, failed) = random_piece(&mut rng, l, &mut m, fail_one_in);
            fast(&m, spec, &failed, &mut a);
            b.reset();
            b.compute_touched(&m, 8, spec);
            general(&m, spec, &failed, &mut b);
            let what = format!("{} drives, {spec:?} failed {failed:?}", l.drives());
            assert_eq!(a.ops, b.ops, "{what}");
            assert_eq!(a.phases, b.phases, "{what}");
            assert_eq!(a.degraded, b.degraded, "{what}");
            assert_eq!(a.lost_sectors, b.lost_sectors, "{what}");
            assert_eq!(a.pre_read_sectors, b.pre_read_sectors, "{what}");
            assert_eq!((a.rmw_segments, a.rcw_segments), (b.rmw_segments, b.rcw_segments), "{what}");
        }
    }

    #[test]
    fn fast_paths_build_the_general_plan() {
        for drives in [3u32, 4, 5, 8] {
            let (l, _) = raid5(drives);
            fast_path_builds_the_general_plan(
                l.as_ref(),
                3,
                6,
                |m, spec, failed, plan| plan_parity(m, 8, spec, failed, plan),
                |m, spec, failed, plan| plan_parity_general(m, spec, UnitStatus::new(failed, &[]), plan),
            );
        }
    }

    #[test]
    fn striped_fast_path_builds_the_general_plan() {
        for drives in [1u32, 2, 5] {
            fast_path_builds_the_general_plan(
                small_layout("raid0", drives).as_ref(),
                4,
                4,
                |m, spec, failed, plan| plan_striped(m, 8, spec, failed, plan),
                |m, spec, failed, plan| {
                    let kind = if spec.is_write { OpKind::Write } else { OpKind::Read };
                    plan_striped_general(m, kind, UnitStatus::new(failed, &[]), plan)
                },
            );
        }
    }

    #[test]
    fn degraded_read_reads_every_surviving_unit() {
        let (_, m) = raid5(5);
        let mut p = Plan::default();
        let mut failed = [false; 5];
        failed[1] = true;
        plan_parity(&m, 8, PieceSpec { first: 8, sectors: 8, is_write: false, resync: false }, &failed, &mut p);
        assert!(p.degraded);
        let mut drives: Vec<u32> = p.ops.iter().map(|o| o.drive).collect();
        drives.sort();
        assert_eq!(drives, vec![0, 2, 3, 4]);
        assert_eq!(p.lost_sectors, 0);
        // A second failure in the stripe makes the unit unrecoverable.
        failed[3] = true;
        plan_parity(&m, 8, PieceSpec { first: 8, sectors: 8, is_write: false, resync: false }, &failed, &mut p);
        assert_eq!(p.lost_sectors, 8);
    }

    #[test]
    fn degraded_writes_take_the_only_correct_method() {
        let (_, m) = raid5(5);
        let mut p = Plan::default();
        // Updated unit on the failed drive: reconstruct-write from the other data units.
        let mut failed = [false; 5];
        failed[0] = true;
        plan_parity(&m, 8, PieceSpec { first: 0, sectors: 8, is_write: true, resync: false }, &failed, &mut p);
        assert_eq!(p.rcw_segments, 1);
        assert!(p.ops.iter().all(|o| o.drive != 0));
        assert_eq!(count(&p, OpKind::Write), 1); // parity only: it now encodes the new data
        // A unit not updated on the failed drive: read-modify-write even for a large write.
        plan_parity(&m, 8, PieceSpec { first: 8, sectors: 24, is_write: true, resync: false }, &failed, &mut p);
        assert_eq!(p.rmw_segments, 1);
        // Parity drive failed: data only, no pre-reads.
        let mut failed = [false; 5];
        failed[4] = true;
        plan_parity(&m, 8, PieceSpec { first: 0, sectors: 8, is_write: true, resync: false }, &failed, &mut p);
        assert_eq!((count(&p, OpKind::Read), count(&p, OpKind::Write)), (0, 1));
        assert_eq!(p.lost_sectors, 0);
    }
}
