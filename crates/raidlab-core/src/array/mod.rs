//! The array controller: splits user requests into stripe pieces, locks stripes, asks the
//! planner for an access plan under the current failure state, executes the plan phase by
//! phase, and reports completed requests.
//!
//! The controller owns no drives. It writes the disk operations to issue into `outbox`; the
//! engine queues them at the drives and calls back `op_done` when each finishes (or is
//! aborted by a drive failure). Pieces and requests live in slabs whose storage is reused,
//! so steady-state execution allocates nothing.
//!
//! A request that is one disk operation (it lies inside one data unit on a working drive,
//! and reads or writes without redundancy, with the content model off) takes a shorter way:
//! a one-op record instead of a request slot, a piece and a plan. It locks its stripe as a
//! piece would, and becomes a request with a piece if its drive fails before it is done, so
//! the short way changes no result (a test runs both ways side by side).

pub mod jobs;
pub mod lifecycle;
pub mod locks;
/// The planners live with the layouts they plan for ([`crate::layout::plan`]).
pub use crate::layout::plan;
pub mod rebuild_io;
pub mod state;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::content::rules::{Access, UserPiece};
use crate::content::ContentModel;
use crate::disk::{OpKind, Priority};
use crate::error::{Error, Result};
use crate::request::{CompletedRequest, Origin, UserRequest};
use crate::layout::{Layout, StripeMap, UnitLocation};
use crate::sim::{Nanos, RngStream};
use locks::{StripeLocks, Waiters, NONE};
use plan::{DriveView, PieceSpec, Plan, PlanOp};
use jobs::{JobId, JobKind, OpToken};
use rebuild_io::{Job, RebuildEvent};
use state::{ArrayState, MemberStatus};

/// Array organisation.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false), transform = crate::layout::keys::describe_layouts)]
pub struct ArrayConfig {
    /// Layout: a name of the layout registry (the schema lists them).
    #[serde(default = "default_layout")]
    pub layout: String,
    /// Number of drives in the array (1 to 65,536).
    pub drives: u32,
    /// Stripe unit (chunk) size in KiB; a multiple of 0.5 KiB (one sector).
    #[serde(default = "default_stripe_unit")]
    pub stripe_unit_kib: f64,
    /// The keys the array's layout alone reads (its registry entry's `own_keys`: RAID-1's
    /// `copies`, RAID-5's `parity_rotation`), by name. Loading checks them against the
    /// layout ([`ArrayConfig::check_layout_keys`]) and fills in their defaults, so a saved
    /// configuration shows the array's own keys and no other layout's.
    #[serde(flatten)]
    #[schemars(schema_with = "crate::layout::keys::schema")]
    pub layout_keys: toml::Table,
    /// Hot spares: drives beside the array, idle until a failed member is rebuilt onto one
    /// (`[rebuild]`). Their slots follow the members' (drives `drives` … `drives + spares − 1`).
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(extend("default" = 0))]
    pub spares: u32,
    /// How a read that may take any of several copies, none of whose drives is idle, compares
    /// them (the thesis's "minimum service time model", §2.2.1, which it does not define).
    /// Layouts without copies ignore it; an idle copy is always taken first, and two idle
    /// copies are compared by positioning time.
    #[serde(default, skip_serializing_if = "ReadEstimate::is_default")]
    #[schemars(extend("default" = "in_service"))]
    pub read_estimate: ReadEstimate,
}

/// How a mirror's read compares busy copies ([`ArrayConfig::read_estimate`]); ties go at
/// random.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadEstimate {
    /// Positioning time from where the operation in service put the arm (raidlab's choice).
    #[default]
    InService,
    /// Positioning time from the last operation queued, where the arm will be before this
    /// read starts on a first-come queue.
    QueueTail,
    /// Expected time to the transfer: the rest of the operation in service, each queued
    /// operation at the drive's mean service time so far, then the positioning from the last
    /// one queued.
    QueueDrain,
    /// None: a busy copy is chosen at random.
    Random,
}

impl ReadEstimate {
    fn is_default(&self) -> bool {
        *self == ReadEstimate::InService
    }
}

/// The `[array]` keys every layout reads (the others are a layout's own).
pub const COMMON_ARRAY_KEYS: &[&str] = &["layout", "drives", "stripe_unit_kib", "spares", "read_estimate"];

impl ArrayConfig {
    /// Check [`ArrayConfig::layout_keys`] against the layout, and fill in the defaults of its
    /// own keys: a key another layout reads, a key no layout reads, and a value of the wrong
    /// type are errors naming `array.<key>`.
    pub fn check_layout_keys(&mut self) -> crate::error::Result<()> {
        crate::layout::keys::check_and_fill(&self.layout, &mut self.layout_keys, "array", COMMON_ARRAY_KEYS)
    }
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

fn default_layout() -> String {
    "raid5".into()
}
fn default_stripe_unit() -> f64 {
    64.0
}

/// A disk operation the engine must queue.
#[derive(Debug, Clone, Copy)]
pub struct IssuedOp {
    pub drive: u32,
    pub priority: Priority,
    pub pba: u64,
    pub sectors: u32,
    pub kind: OpKind,
    /// Handle to pass back to `op_done`.
    pub token: u64,
}

/// Counters kept by the controller.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ControllerStats {
    /// Write requests accepted (a cache's destages included).
    pub write_requests: u64,
    /// Stripe pieces of writes.
    pub write_pieces: u64,
    /// Sectors pre-read to compute parity.
    pub pre_read_sectors: u64,
    /// Row segments written with read-modify-write / reconstruct-write.
    pub rmw_segments: u64,
    pub rcw_segments: u64,
    /// Pieces planned again because a drive failed under them.
    pub replans: u64,
    /// Logical sectors lost on reads / writes.
    pub lost_read_sectors: u64,
    pub lost_write_sectors: u64,
}

#[derive(Debug)]
struct Piece {
    request: u32,
    stripe: u64,
    spec: Option<PieceSpec>,
    map: StripeMap,
    plan: Plan,
    phase: u8,
    outstanding: u32,
    aborted: bool,
    next_waiter: u32,
    values: Vec<u64>,
    /// The rebuild job answering this read by piggybacking, or [`NONE`].
    piggyback_job: u32,
    /// The request has had this piece's answer (its plan answers before its last phase).
    answered: bool,
    /// An earlier plan of this piece wrote before a drive failed under it: a crash that
    /// catches the piece catches those writes, even before its new plan issues any.
    rewrote: bool,
}

#[derive(Debug, Default, Clone, Copy)]
struct RequestSlot {
    id: u64,
    origin: Origin,
    arrival: Nanos,
    is_write: bool,
    /// Pieces not yet answered, and pieces not yet finished (a piece may be answered
    /// before its last phase: [`Plan::answer_after`]).
    pieces_left: u32,
    pieces_alive: u32,
    degraded: bool,
    /// Some piece's data has a copy (or its stripe a unit) on a drive of a failed member's
    /// set ([`ArrayState::failed_set`]).
    in_failed_set: bool,
    lost: bool,
    write_id: u64,
}

/// A request that is one disk operation, outside the piece machinery (see the module doc).
#[derive(Debug, Default, Clone, Copy)]
struct OneOp {
    id: u64,
    origin: Origin,
    arrival: Nanos,
    stripe: u64,
    /// Offset of the request in its stripe's data, sectors (its piece's `first`, should it
    /// need one).
    first: u64,
    /// Where the operation goes.
    pba: u64,
    drive: u32,
    sectors: u32,
    is_write: bool,
    next_waiter: u32,
}

impl Default for Piece {
    fn default() -> Self {
        Piece {
            request: 0,
            stripe: 0,
            spec: None,
            map: StripeMap::default(),
            plan: Plan::default(),
            phase: 0,
            outstanding: 0,
            aborted: false,
            next_waiter: NONE,
            values: Vec::new(),
            piggyback_job: NONE,
            answered: false,
            rewrote: false,
        }
    }
}

/// Put `value` in a slab: in a freed slot if there is one, else at its end. Returns its index.
#[inline(always)]
/// Which entries of a slab of `len` entries are in use, given its free list `free`.
fn live_entries(len: usize, free: &[u32]) -> Vec<bool> {
    let mut live = vec![true; len];
    for &i in free {
        live[i as usize] = false;
    }
    live
}

fn store<T>(slab: &mut Vec<T>, free: &mut Vec<u32>, value: T) -> u32 {
    match free.pop() {
        Some(i) => {
            slab[i as usize] = value;
            i
        }
        None => {
            slab.push(value);
            (slab.len() - 1) as u32
        }
    }
}

/// The waiters of the lock table: pieces, one-op requests and rebuild jobs.
struct Waiting<'a> {
    pieces: &'a mut [Piece],
    one_ops: &'a mut [OneOp],
    jobs: &'a mut [Job],
}

impl Waiters for Waiting<'_> {
    fn next_waiter(&self, id: u32) -> u32 {
        let job = JobId::from_raw(id);
        match job.kind() {
            Some(JobKind::UserPiece) => self.pieces[id as usize].next_waiter,
            Some(JobKind::UserOneOp) => self.one_ops[job.index() as usize].next_waiter,
            Some(JobKind::RebuildUnit) | None => Controller::job_waiter(self.jobs, job.index()),
        }
    }
    fn set_next_waiter(&mut self, id: u32, next: u32) {
        let job = JobId::from_raw(id);
        match job.kind() {
            Some(JobKind::UserPiece) => self.pieces[id as usize].next_waiter = next,
            Some(JobKind::UserOneOp) => self.one_ops[job.index() as usize].next_waiter = next,
            Some(JobKind::RebuildUnit) | None => Controller::set_job_waiter(self.jobs, job.index(), next),
        }
    }
    fn wants_write(&self, id: u32) -> bool {
        let job = JobId::from_raw(id);
        match job.kind() {
            Some(JobKind::UserPiece) => self.pieces[id as usize].spec.is_some_and(|s| s.is_write),
            Some(JobKind::UserOneOp) => self.one_ops[job.index() as usize].is_write,
            Some(JobKind::RebuildUnit) | None => false,
        }
    }
}

/// A layout that maps nothing: held for an instant while the controller's layout is wrapped
/// (see [`crate::layout::Remapped`]).
#[derive(Debug)]
struct NoLayout;

static NO_SHAPE: crate::layout::LayoutShape =
    crate::layout::LayoutShape { drives: 0, stripe_unit_sectors: 1, stripes: 0 };

impl Layout for NoLayout {
    fn redundancy_set(&self, _member: u32) -> Vec<u32> {
        Vec::new()
    }
    fn volatile_state(&self) -> &'static str {
        "nothing"
    }
    fn name(&self) -> &'static str {
        "none"
    }
    fn planner(&self) -> &'static dyn plan::Planner {
        &plan::STRIPED
    }
    fn fault_tolerance(&self) -> u32 {
        0
    }
    fn shape(&self) -> &crate::layout::LayoutShape {
        &NO_SHAPE
    }
    fn data_units_per_stripe(&self) -> u32 {
        0
    }
    fn map_stripe(&self, _stripe: u64, _out: &mut StripeMap) {}
    fn locate(&self, _drive: u32, _pba: u64) -> Option<(u64, crate::layout::UnitRole)> {
        None
    }
    fn data_lost(&self, _failed: &[u32]) -> bool {
        false
    }
}

/// A layout size (a stripe unit, a stripe's data) that requests are divided by: by a shift
/// and a mask when it is a power of two, as stripe units almost always are, else by a
/// hardware division. The quotient is on the way from a request's address to its drive's
/// first access, which waits for it. (Not [`crate::sim::Divisor`]: its multiply was measured
/// slower than the controller's 32-bit hardware divisions, and a shift is faster than both.)
#[derive(Debug, Clone, Copy)]
struct SizeDivisor {
    size: u64,
    /// log2 of `size` when it is a power of two.
    shift: Option<u32>,
}

impl SizeDivisor {
    fn new(size: u64) -> Self {
        SizeDivisor { size, shift: size.is_power_of_two().then(|| size.trailing_zeros()) }
    }

    /// `(n / size, n % size)`.
    #[inline(always)]
    fn div_rem(self, n: u64) -> (u64, u64) {
        match self.shift {
            Some(shift) => (n >> shift, n & (self.size - 1)),
            None => (n / self.size, n % self.size),
        }
    }
}

/// The controller of one array.
pub struct Controller {
    layout: Box<dyn Layout>,
    /// The layout's stripe unit, data sectors per stripe and capacity, sectors (asked per
    /// request; the layout never changes).
    unit_sectors: SizeDivisor,
    stripe_data_sectors: SizeDivisor,
    capacity_sectors: u64,
    /// The layout's planner.
    planner: &'static dyn plan::Planner,
    /// Its answer to [`plan::Planner::writes_one_unit_alone`], asked once (it is on the path
    /// of every write).
    one_op_writes: bool,
    /// The drive slots, the members, the rebuilds and the layout's placement state.
    state: ArrayState,
    /// Rebuild jobs (a slab) and its free slots.
    jobs: Vec<Job>,
    free_jobs: Vec<u32>,
    /// The layout's answer for the job being made ([`Layout::rebuild_reads`]), kept to reuse
    /// its storage.
    source_reads: Vec<crate::layout::SourceRead>,
    /// Rebuilds started, so that the jobs of an abandoned one are told apart.
    generation: u32,
    /// Whether the target of the rebuild being abandoned failed.
    target_dead: bool,
    /// The slot the last healing copy wrote ([`Controller::start_healing`]): where a copy of
    /// a user write goes in the content model, even when it completes after the copy.
    healing_target: u32,
    /// What happened to rebuild jobs, filled by every call; the engine drains it.
    pub rebuild_events: Vec<RebuildEvent>,
    /// Whether requests that are one op take the short way (see the module doc); switched
    /// off only by the test that compares the two ways.
    one_op_requests: bool,
    /// Whether every piece goes through the planner, none by [`Controller::single_unit`]:
    /// with the content model (which fills values from plans), and while the layout's state
    /// asks for it (a write-back cache, data lost on a readable unit:
    /// [`crate::layout::PlacementState::plans_every_read`]).
    every_piece_planned: bool,
    pieces: Vec<Piece>,
    free_pieces: Vec<u32>,
    requests: Vec<RequestSlot>,
    free_requests: Vec<u32>,
    one_ops: Vec<OneOp>,
    free_one_ops: Vec<u32>,
    locks: StripeLocks,
    content: Option<ContentModel>,
    rng: RngStream,
    next_write_id: u64,
    /// Pieces waiting for their plan's CPU time ([`Plan::cpu_ns`]): (when it is over, piece),
    /// and the wake-ups the engine has yet to schedule.
    cpu_delayed: Vec<(Nanos, u32)>,
    pub cpu_wakeups: Vec<Nanos>,
    /// When the controller's CPU has done the look-ups given to it so far.
    cpu_free_at: Nanos,
    /// Re-sync requests ([`Origin::Resync`]) in flight (at most one).
    resyncs_in_flight: u32,
    /// The layout's placement state may want a re-sync: ask it at the end of this op.
    resync_wanted: bool,
    ready: Vec<u32>,
    granted: Vec<u32>,
    in_flight_requests: u64,
    /// Disk operations to queue, filled by every call; the engine drains it.
    pub outbox: Vec<IssuedOp>,
    /// Requests finished, filled by every call; the engine drains it.
    pub completed: Vec<CompletedRequest>,
    /// Counters.
    pub stats: ControllerStats,
    /// Tests only: answer every plan of two or more phases after its first phase.
    #[cfg(test)]
    answer_after_first_phase: bool,
}

use jobs::OP_BITS;

/// Set in the op index of a healing copy's write ([`Controller::start_healing`]): the copy
/// of the plan's op at the index without it, to the healing target.
const HEALING_COPY: u32 = 1 << (OP_BITS - 1);

/// The most sectors one stripe piece may move with the content model on (8 GiB): the model
/// keeps a value per sector of the piece's plan in memory (8 bytes each, here 128 MiB), and a
/// plan's value offsets are 32-bit.
pub const MAX_CONTENT_PIECE_SECTORS: usize = 1 << 24;

impl Controller {
    /// A controller for `layout`; `check_content` switches the content model on.
    pub fn new(layout: Box<dyn Layout>, check_content: bool, rng: RngStream) -> Self {
        let drives = layout.drives() as usize;
        // The layout names its planner (no probing of a stripe, no matching of names).
        let planner = layout.planner();
        let content = check_content.then(|| ContentModel::new(drives, layout.as_ref()));
        let layout_placement = layout.placement_state();
        let plans_every_read = layout_placement.as_deref().is_some_and(|p| p.plans_every_read());
        Controller {
            unit_sectors: SizeDivisor::new(layout.stripe_unit_sectors()),
            stripe_data_sectors: SizeDivisor::new(layout.stripe_data_sectors()),
            capacity_sectors: layout.capacity_sectors(),
            layout,
            planner,
            // A write whose placement is chosen at write time is committed as a piece.
            one_op_writes: planner.writes_one_unit_alone() && layout_placement.is_none(),
            state: ArrayState::new(drives as u32, layout_placement),
            jobs: Vec::new(),
            free_jobs: Vec::new(),
            source_reads: Vec::new(),
            generation: 0,
            target_dead: false,
            healing_target: NONE,
            rebuild_events: Vec::new(),
            one_op_requests: true,
            every_piece_planned: check_content || plans_every_read,
            pieces: Vec::new(),
            free_pieces: Vec::new(),
            requests: Vec::new(),
            free_requests: Vec::new(),
            one_ops: Vec::new(),
            free_one_ops: Vec::new(),
            locks: StripeLocks::default(),
            content,
            rng,
            next_write_id: 0,
            cpu_delayed: Vec::new(),
            cpu_wakeups: Vec::new(),
            cpu_free_at: 0,
            resyncs_in_flight: 0,
            resync_wanted: false,
            ready: Vec::new(),
            granted: Vec::new(),
            in_flight_requests: 0,
            outbox: Vec::new(),
            completed: Vec::new(),
            stats: ControllerStats::default(),
            #[cfg(test)]
            answer_after_first_phase: false,
        }
    }

    /// The layout.
    pub fn layout(&self) -> &dyn Layout {
        self.layout.as_ref()
    }

    /// Logical capacity, sectors.
    pub fn capacity_sectors(&self) -> u64 {
        self.capacity_sectors
    }

    /// User requests accepted and not yet completed.
    pub fn in_flight(&self) -> u64 {
        self.in_flight_requests
    }

    /// Whether data has been lost (the failed drives defeat the layout's redundancy).
    pub fn data_lost(&self) -> bool {
        self.state.data_lost
    }

    /// The run ended: with the content model on, a log-assisted array's rows are recovered
    /// through the log and checked ([`crate::log::verify`]).
    pub fn verify_at_end(&mut self) -> Result<()> {
        let (Some(content), Some(placement)) = (self.content.as_mut(), self.state.placement.as_deref_mut()) else { return Ok(()) };
        match placement.as_any_mut().downcast_mut::<crate::log::layout::LogState>() {
            Some(state) => crate::log::verify::verify(content, self.layout.as_ref(), state),
            None => Ok(()),
        }
    }

    /// The layout's placement state (a log-assisted array's log index), if it keeps one.
    pub fn placement(&self) -> Option<&dyn crate::layout::PlacementState> {
        self.state.placement.as_deref()
    }

    /// With the content model on, a scrub of the array as it stands
    /// ([`ContentModel::scrub`]): (sectors compared, sectors that differ from what the
    /// layout says they should hold).
    pub fn scrub(&mut self) -> Option<(u64, u64)> {
        let members: Vec<u32> = (0..self.layout.drives()).map(|m| self.state.member_slot(m)).collect();
        let content = self.content.as_mut()?;
        Some(content.scrub(self.layout.as_ref(), &members, self.state.placement.as_deref()))
    }

    /// The content model's counters, if it is on.
    pub fn content(&self) -> Option<&ContentModel> {
        self.content.as_ref()
    }

    /// Accept a user request. (Always inlined into the engine's arrival: the engine's loop is
    /// too large for the compiler to choose it, and the one-op path is the hot one.)
    #[inline(always)]
    pub fn submit(&mut self, now: Nanos, req: UserRequest, view: &dyn DriveView) -> Result<()> {
        self.accept(now, req, 0, view)
    }

    /// [`Controller::submit`], a write writing the values of write `values` (the content
    /// model's [`crate::content::written_value`]s of it) instead of values of its own: a
    /// buffer cache's destage and the parts of a write it sends on carry the user write's
    /// values. `values` = 0 gives the write values of its own, as `submit` does.
    pub fn submit_with_values(&mut self, now: Nanos, req: UserRequest, values: u64, view: &dyn DriveView) -> Result<()> {
        self.accept(now, req, values, view)
    }

    /// Both of the above, one copy in each (the engine's arrival path inlines `submit`).
    #[inline(always)]
    fn accept(&mut self, now: Nanos, req: UserRequest, values: u64, view: &dyn DriveView) -> Result<()> {
        let capacity = self.capacity_sectors;
        if req.sectors == 0 || req.lba + req.sectors as u64 > capacity {
            return Err(Error::Invariant(format!(
                "request [{}, +{}) outside the array's {capacity} sectors",
                req.lba, req.sectors
            )));
        }
        if self.state.rebuild.is_some() && !req.is_write {
            self.note_user_read(req.lba, req.sectors as u64);
        }
        self.stats.write_requests += (req.is_write && req.origin != Origin::Resync) as u64;
        let write_id = if req.is_write && values != 0 {
            values
        } else if req.is_write {
            self.next_write_id += 1;
            self.next_write_id
        } else {
            0
        };
        let per_stripe = self.stripe_data_sectors.size;
        // From the offset into the first stripe: a request rarely leaves it, and then needs
        // no second division.
        let (first_stripe, first) = self.stripe_data_sectors.div_rem(req.lba);
        let last_in_first = first + req.sectors as u64 - 1;
        let last_stripe =
            if last_in_first < per_stripe { first_stripe } else { first_stripe + last_in_first / per_stripe };
        if last_stripe == first_stripe && self.one_op_requests {
            if let Some(u) = self.single_unit(first_stripe, first, req.sectors as u64, req.is_write) {
                let op = OneOp {
                    id: req.id,
                    origin: req.origin,
                    arrival: req.arrival,
                    stripe: first_stripe,
                    first,
                    pba: u.pba,
                    drive: u.drive,
                    sectors: req.sectors,
                    is_write: req.is_write,
                    next_waiter: NONE,
                };
                return self.submit_one_op(now, op, view);
            }
        }
        let pieces = (last_stripe - first_stripe + 1) as u32;
        let slot = RequestSlot {
            id: req.id,
            origin: req.origin,
            arrival: req.arrival,
            is_write: req.is_write,
            pieces_left: pieces,
            pieces_alive: pieces,
            degraded: false,
            in_failed_set: false,
            lost: false,
            write_id,
        };
        let request = self.alloc_request(slot);
        self.in_flight_requests += 1;
        let end = req.lba + req.sectors as u64;
        for stripe in first_stripe..=last_stripe {
            let stripe_start = stripe * per_stripe;
            let first = req.lba.max(stripe_start) - stripe_start;
            let last = end.min(stripe_start + per_stripe) - stripe_start;
            let spec = PieceSpec { first, sectors: last - first, is_write: req.is_write, resync: req.origin == Origin::Resync };
            let piece = self.alloc_piece(request, stripe, spec);
            let mut waiting = Waiting { pieces: &mut self.pieces, one_ops: &mut self.one_ops, jobs: &mut self.jobs };
            let granted = self.locks.acquire(stripe, piece, req.is_write, &mut waiting);
            if granted {
                self.ready.push(piece);
            } else if req.is_write && self.state.rebuild.is_some() {
                self.force_rebuild_of(stripe);
            }
        }
        self.run_ready(now, view)
    }

    /// A request slot holding `slot`, reused when one is free.
    fn alloc_request(&mut self, slot: RequestSlot) -> u32 {
        store(&mut self.requests, &mut self.free_requests, slot)
    }

    /// Where `sectors` sectors from offset `first` into `stripe`'s data lie when they are one
    /// op: inside one data unit, read, or written without redundancy, with the content model
    /// off (it reads the stripe's map). That op is the plan every planner builds for such a
    /// piece on a working drive (a test compares them), found without mapping the whole
    /// stripe. `None` otherwise, and for layouts that keep more than one copy.
    #[inline(always)]
    fn single_unit(&self, stripe: u64, first: u64, sectors: u64, is_write: bool) -> Option<UnitLocation> {
        if self.every_piece_planned || (is_write && !self.one_op_writes) {
            return None;
        }
        let unit = self.unit_sectors.size;
        let (index, offset) = self.unit_sectors.div_rem(first);
        if offset + sectors > unit {
            return None;
        }
        self.layout.data_unit(stripe, index as u32).map(|u| UnitLocation { drive: u.drive, pba: u.pba + offset })
    }

    /// Accept a request that is one op: lock its stripe, and issue the op once granted.
    /// (Inlined into `submit`, which the engine inlines: the one-op path is the fast one.)
    #[inline(always)]
    fn submit_one_op(&mut self, now: Nanos, op: OneOp, view: &dyn DriveView) -> Result<()> {
        // An index past the last one would run into the id's kind bits.
        if self.free_one_ops.is_empty() && self.one_ops.len() > JobId::MAX_INDEX as usize {
            return Err(Error::Invariant(format!("{} one-op requests in flight", self.one_ops.len())));
        }
        let index = store(&mut self.one_ops, &mut self.free_one_ops, op);
        self.in_flight_requests += 1;
        let id = JobId::new(JobKind::UserOneOp, index).raw();
        let mut waiting = Waiting { pieces: &mut self.pieces, one_ops: &mut self.one_ops, jobs: &mut self.jobs };
        if self.locks.acquire(op.stripe, id, op.is_write, &mut waiting) {
            // Issued from the value at hand, not read back from the slab just written.
            self.issue_one_op(now, id, op, view)?;
        }
        self.run_ready(now, view)
    }

    /// Issue the op of one-op request `id`, `op`, which holds its stripe's lock. If its drive
    /// failed while it waited for the lock, it becomes a request with a piece, planned for
    /// the failure.
    #[inline(always)]
    fn issue_one_op(&mut self, now: Nanos, id: u32, op: OneOp, view: &dyn DriveView) -> Result<()> {
        if self.state.failed[op.drive as usize] {
            let piece = self.one_op_as_piece(id);
            return self.start_piece(now, piece, view);
        }
        self.outbox.push(IssuedOp {
            drive: op.drive,
            priority: Priority::Foreground,
            pba: op.pba,
            sectors: op.sectors,
            kind: if op.is_write { OpKind::Write } else { OpKind::Read },
            token: OpToken::new(JobId::from_raw(id), 0).raw(),
        });
        Ok(())
    }

    /// Turn one-op request `id` into a request with one piece, which keeps the stripe's lock
    /// the one-op request holds; returns the piece.
    #[cold]
    fn one_op_as_piece(&mut self, id: u32) -> u32 {
        let index = JobId::from_raw(id).index();
        let op = self.one_ops[index as usize];
        self.free_one_ops.push(index);
        // The write's id only matters to the content model, with which no request is a
        // one-op request.
        let slot = RequestSlot {
            id: op.id,
            origin: op.origin,
            arrival: op.arrival,
            is_write: op.is_write,
            pieces_left: 1,
            pieces_alive: 1,
            degraded: false,
            in_failed_set: false,
            lost: false,
            write_id: 0,
        };
        let request = self.alloc_request(slot);
        let spec = PieceSpec { first: op.first, sectors: op.sectors as u64, is_write: op.is_write, resync: false };
        self.alloc_piece(request, op.stripe, spec)
    }

    /// The op of one-op request `id` finished (`ok`) or was aborted by a drive failure.
    fn one_op_done(&mut self, now: Nanos, id: u32, ok: bool, view: &dyn DriveView) -> Result<()> {
        if !ok {
            // As a piece whose op was aborted: planned again under the new failure state.
            self.stats.replans += 1;
            let piece = self.one_op_as_piece(id);
            self.start_piece(now, piece, view)?;
            return self.run_ready(now, view);
        }
        let index = JobId::from_raw(id).index();
        let op = self.one_ops[index as usize];
        if op.is_write {
            self.stats.write_pieces += 1;
        }
        self.unlock(op.stripe, op.is_write);
        self.free_one_ops.push(index);
        let in_failed_set = self.state.failed_set.get(op.drive as usize).copied().unwrap_or(false);
        self.completed.push(CompletedRequest {
            id: op.id,
            origin: op.origin,
            arrival: op.arrival,
            is_write: op.is_write,
            degraded: false,
            in_failed_set,
            lost: false,
        });
        self.in_flight_requests -= 1;
        self.run_ready(now, view)?;
        // A re-sync the unlock let run may have finished at once (one with nothing to
        // write) and want the next, as after a piece.
        if self.resync_wanted {
            self.start_resyncs(now, view)?;
        }
        Ok(())
    }

    fn alloc_piece(&mut self, request: u32, stripe: u64, spec: PieceSpec) -> u32 {
        let idx = match self.free_pieces.pop() {
            Some(i) => i,
            None => {
                self.pieces.push(Piece::default());
                (self.pieces.len() - 1) as u32
            }
        };
        let p = &mut self.pieces[idx as usize];
        p.request = request;
        p.stripe = stripe;
        p.spec = Some(spec);
        p.phase = 0;
        p.outstanding = 0;
        p.aborted = false;
        p.next_waiter = NONE;
        p.piggyback_job = NONE;
        p.answered = false;
        p.rewrote = false;
        idx
    }

    /// Release a stripe lock held by a piece or a one-op request (a writer if `is_write`);
    /// whoever it grants goes on the ready list.
    #[inline(always)]
    fn unlock(&mut self, stripe: u64, is_write: bool) {
        let mut waiting = Waiting { pieces: &mut self.pieces, one_ops: &mut self.one_ops, jobs: &mut self.jobs };
        self.locks.release(stripe, is_write, &mut waiting, &mut self.granted);
        if !self.granted.is_empty() {
            self.ready.append(&mut self.granted);
        }
    }

    /// Plan and start every piece, and issue every one-op request, whose lock was granted.
    #[inline(always)]
    fn run_ready(&mut self, now: Nanos, view: &dyn DriveView) -> Result<()> {
        // Checked inline: there is usually nothing, and the call is then not worth making.
        if self.ready.is_empty() {
            return Ok(());
        }
        self.run_granted(now, view)
    }

    /// [`Controller::run_ready`]'s work, out of line.
    #[inline(never)]
    fn run_granted(&mut self, now: Nanos, view: &dyn DriveView) -> Result<()> {
        while let Some(id) = self.ready.pop() {
            let job = JobId::from_raw(id);
            match job.kind() {
                Some(JobKind::UserPiece) => self.start_piece(now, id, view)?,
                Some(JobKind::UserOneOp) => {
                    let op = self.one_ops[job.index() as usize];
                    self.issue_one_op(now, id, op, view)?;
                }
                Some(JobKind::RebuildUnit) => self.lock_next_stripes(job.index()),
                None => return Err(Error::Invariant(format!("job id {id:#x} of no kind granted a lock"))),
            }
        }
        Ok(())
    }

    /// Build the piece's plan for the current failure state and issue its first phase.
    fn start_piece(&mut self, now: Nanos, idx: u32, view: &dyn DriveView) -> Result<()> {
        let unit = self.unit_sectors.size;
        let p = &self.pieces[idx as usize];
        let spec = p.spec.expect("a live piece has a spec");
        if let Some(u) = self.single_unit(p.stripe, spec.first, spec.sectors, spec.is_write) {
            if !self.state.failed[u.drive as usize] {
                if self.state.failed_set_is_every_member || self.state.failed_set.get(u.drive as usize).copied().unwrap_or(false) {
                    // Its data's one copy is there (the layout answers `data_unit` only then).
                    let request = self.pieces[idx as usize].request;
                    self.requests[request as usize].in_failed_set = true;
                }
                let kind = if spec.is_write { OpKind::Write } else { OpKind::Read };
                let sectors = spec.sectors as u32;
                let op = PlanOp { drive: u.drive, pba: u.pba, sectors, kind, phase: 0, value_offset: 0 };
                let p = &mut self.pieces[idx as usize];
                p.plan.set_single(op);
                p.phase = 0;
                p.aborted = false;
                // Issued as `issue_phase` would, from the op at hand: reading it back from the
                // plan just written loaded its drive and sectors together over the two
                // narrower stores, and waited for them.
                p.outstanding = 1;
                self.outbox.push(Self::issued(idx, 0, &op));
                return Ok(());
            }
        }
        let p = &mut self.pieces[idx as usize];
        self.layout.map_stripe(p.stripe, &mut p.map);
        let readable_target = if self.state.rebuild.is_some() { self.resolve_rebuild(idx, spec.is_write) } else { None };
        if readable_target.is_none() && self.state.rebuild.is_some() && self.try_piggyback(idx, spec) {
            // A piggybacked read is of a lost member's unit: in its set by definition.
            let request = self.pieces[idx as usize].request;
            self.requests[request as usize].in_failed_set = true;
            return Ok(());
        }
        let p = &mut self.pieces[idx as usize];
        // The units' status for this piece: the failed and write-only slots, with the rebuild
        // target resolved above for the rebuild units under this stripe.
        let status = plan::UnitStatus::new(&self.state.failed, &self.state.write_only);
        let placement = self.state.placement.as_deref_mut();
        let inputs = plan::PlanInputs { map: &p.map, unit_sectors: unit, spec, status, placement, view, now, rng: &mut self.rng };
        self.planner.plan(inputs, &mut p.plan);
        if p.plan.logged && p.plan.degraded && !self.every_piece_planned {
            // (A log's degraded plan may have found a block lost: see `lose_unrecoverable`.)
            self.every_piece_planned = self.state.placement.as_deref().is_some_and(|s| s.plans_every_read());
        }
        if let Some(target) = readable_target {
            self.restore_target(target);
        }
        if !self.state.failed_set.is_empty() && (self.state.failed_set_is_every_member || self.piece_in_failed_set(idx)) {
            let request = self.pieces[idx as usize].request;
            self.requests[request as usize].in_failed_set = true;
        }
        let p = &mut self.pieces[idx as usize];
        #[cfg(test)]
        if self.answer_after_first_phase && p.plan.phases >= 2 {
            p.plan.answer_after = Some(1);
        }
        if p.plan.ops.len() >= 1 << OP_BITS {
            return Err(Error::Invariant(format!("plan with {} operations", p.plan.ops.len())));
        }
        p.phase = 0;
        p.aborted = false;
        if self.content.is_some() {
            let sectors = p.plan.value_sectors();
            if sectors > MAX_CONTENT_PIECE_SECTORS {
                return Err(Error::config(
                    "content.check",
                    format!(
                        "a request moves {} sectors in one stripe; the content model follows at most {} \
                         ({} GiB) per stripe; use smaller requests or switch the check off",
                        sectors,
                        MAX_CONTENT_PIECE_SECTORS,
                        MAX_CONTENT_PIECE_SECTORS >> 21
                    ),
                ));
            }
            p.values.clear();
            p.values.resize(sectors, 0);
            // The content model reads the rows of every unit of the stripe.
            p.plan.fill_touched();
        }
        let cpu_ns = self.pieces[idx as usize].plan.cpu_ns;
        if cpu_ns > 0 {
            return self.delay_piece(now, idx, cpu_ns);
        }
        self.issue_phase(idx)
    }

    /// The controller spends `cpu_ns` on piece `idx`'s plan (a log index's look-ups) before it
    /// issues it: the piece waits, holding its lock, and the engine wakes the controller then
    /// ([`Controller::cpu_wakeups`], [`Controller::cpu_done`]). The CPU is one server, taken
    /// in turn: a plan's look-ups start once the ones before are done (md runs a stripe's
    /// handling in one thread).
    #[cold]
    #[inline(never)]
    fn delay_piece(&mut self, now: Nanos, idx: u32, cpu_ns: Nanos) -> Result<()> {
        let done = self.cpu_free_at.max(now) + cpu_ns;
        self.cpu_free_at = done;
        self.cpu_delayed.push((done, idx));
        self.cpu_wakeups.push(done);
        Ok(())
    }

    /// The engine's wake-up for delayed pieces: issue every piece whose CPU time is over.
    pub fn cpu_done(&mut self, now: Nanos, view: &dyn DriveView) -> Result<()> {
        let mut i = 0;
        while i < self.cpu_delayed.len() {
            if self.cpu_delayed[i].0 <= now {
                // (Removed in order: pieces due at the same time issue in the order delayed.)
                let (_, idx) = self.cpu_delayed.remove(i);
                self.issue_phase(idx)?;
            } else {
                i += 1;
            }
        }
        self.run_ready(now, view)
    }

    /// Issue every op of the piece's current phase, or finish the piece if there is none.
    fn issue_phase(&mut self, idx: u32) -> Result<()> {
        if self.content.is_some() {
            self.compute_write_values(idx);
        }
        let p = &mut self.pieces[idx as usize];
        if p.phase >= p.plan.phases {
            return self.finish_piece(idx);
        }
        if p.plan.answer_after == Some(p.phase) && !p.answered {
            self.answer_piece(idx)?;
        }
        let p = &mut self.pieces[idx as usize];
        let mut issued = 0;
        for (i, op) in p.plan.ops.iter().enumerate() {
            if op.phase == p.phase {
                self.outbox.push(Self::issued(idx, i, op));
                issued += 1;
            }
        }
        p.outstanding = issued;
        if self.state.rebuild.as_deref().is_some_and(|r| r.healing) {
            self.copy_writes_to_healing_target(idx);
        }
        Ok(())
    }

    /// While a healing copy runs ([`Controller::start_healing`]), every write of piece
    /// `idx`'s phase to the member being copied is also written to the target, at the same
    /// sectors, as ZFS writes both children of a replacing vdev: a unit already copied stays
    /// current, and the job that copies a unit not yet copied holds its stripes' locks, so
    /// it reads what the write left. The piece's phase waits for both writes. Each copy's op
    /// index is its original's with [`HEALING_COPY`] set.
    #[cold]
    #[inline(never)]
    fn copy_writes_to_healing_target(&mut self, idx: u32) {
        let Some((source, target)) = self.state.rebuild.as_deref().map(|r| (r.member_slot, r.target)) else { return };
        let p = &mut self.pieces[idx as usize];
        for (i, op) in p.plan.ops.iter().enumerate() {
            if op.phase == p.phase && op.kind == OpKind::Write && op.drive == source {
                let copy = PlanOp { drive: target, ..*op };
                self.outbox.push(Self::issued(idx, i | HEALING_COPY as usize, &copy));
                p.outstanding += 1;
            }
        }
    }

    /// The disk operation to queue for op `op_index`, `op`, of piece `idx`'s plan.
    #[inline(always)]
    fn issued(idx: u32, op_index: usize, op: &PlanOp) -> IssuedOp {
        IssuedOp {
            drive: op.drive,
            priority: Priority::Foreground,
            pba: op.pba,
            sectors: op.sectors,
            kind: op.kind,
            token: OpToken::new(JobId::new(JobKind::UserPiece, idx), op_index as u32).raw(),
        }
    }

    /// A disk operation finished (`ok`) or was aborted by a drive failure (`!ok`).
    pub fn op_done(&mut self, now: Nanos, token: u64, ok: bool, view: &dyn DriveView) -> Result<()> {
        let op_token = OpToken::from_raw(token);
        let job = op_token.job();
        let (idx, op_index) = (job.raw(), op_token.op_index() as usize);
        match job.kind() {
            Some(JobKind::UserPiece) => {}
            Some(JobKind::UserOneOp) => {
                if op_index != 0 || job.index() as usize >= self.one_ops.len() {
                    return Err(Error::Invariant(format!("completion of unknown op {token:#x}")));
                }
                return self.one_op_done(now, idx, ok, view);
            }
            Some(JobKind::RebuildUnit) => {
                self.job_op_done(now, job.index(), op_index as u64, ok, view)?;
                return self.run_ready(now, view);
            }
            None => return Err(Error::Invariant(format!("completion of unknown op {token:#x}"))),
        }
        let ops = self.pieces.get(idx as usize).map_or(0, |p| p.plan.ops.len());
        if op_index >= ops {
            // (A healing copy's write is far past any plan's ops: the check costs the plain
            // completion nothing.)
            let original = op_index & !(HEALING_COPY as usize);
            if op_index & HEALING_COPY as usize == 0 || original >= ops {
                return Err(Error::Invariant(format!("completion of unknown op {token:#x}")));
            }
            if ok && self.content.is_some() {
                self.move_healing_copy_values(idx, original)?;
            }
        } else if ok && self.content.is_some() {
            self.move_values(idx, op_index)?;
        }
        let p = &mut self.pieces[idx as usize];
        p.aborted |= !ok;
        p.outstanding -= 1;
        if p.outstanding > 0 {
            return Ok(());
        }
        if p.aborted {
            // A drive failed under this phase: plan again from the start under the new
            // failure state, keeping the stripe lock. Writes are idempotent, and every value
            // is recomputed from fresh reads, so partial progress is harmless.
            self.stats.replans += 1;
            if let Some(placement) = self.state.placement.as_deref_mut() {
                let p = &mut self.pieces[idx as usize];
                let wrote = p.plan.ops.iter().any(|o| o.kind == OpKind::Write && o.phase <= p.phase);
                p.rewrote |= wrote;
                self.planner.abandon(placement, p.stripe, &p.plan, wrote);
                if wrote {
                    // What it entered may be unrecoverable already (a log lost under it).
                    self.lose_unrecoverable();
                }
            }
            self.start_piece(now, idx, view)?;
        } else {
            p.phase += 1;
            self.issue_phase(idx)?;
        }
        self.run_ready(now, view)?;
        if self.resync_wanted {
            self.start_resyncs(now, view)?;
        }
        Ok(())
    }

    /// User requests in the array (its own re-syncs left out).
    pub fn user_in_flight(&self) -> u64 {
        self.in_flight_requests - self.resyncs_in_flight as u64
    }

    /// The array has had no user request for the layout's idle time: tell the placement
    /// state, and start the re-sync it may ask for.
    pub fn array_idle(&mut self, now: Nanos, view: &dyn DriveView) -> Result<()> {
        if let Some(placement) = self.state.placement.as_deref_mut() {
            placement.idle();
        }
        self.start_resyncs(now, view)
    }

    /// Submit the re-sync the layout's placement state asks for, if none is in flight.
    #[cold]
    #[inline(never)]
    pub fn start_resyncs(&mut self, now: Nanos, view: &dyn DriveView) -> Result<()> {
        self.resync_wanted = false;
        while self.resyncs_in_flight < self.state.placement.as_deref().map_or(1, |p| p.concurrent_resyncs()) {
            let Some(stripe) = self.state.placement.as_deref_mut().and_then(|p| p.next_resync(now)) else { break };
            let per_stripe = self.stripe_data_sectors.size;
            let sectors = u32::try_from(per_stripe)
                .map_err(|_| Error::Invariant(format!("a stripe of {per_stripe} sectors is too large to re-sync")))?;
            self.resyncs_in_flight += 1;
            let req = UserRequest { id: 0, origin: Origin::Resync, arrival: now, lba: stripe * per_stripe, sectors, is_write: true };
            self.accept(now, req, 0, view)?;
        }
        Ok(())
    }

    /// The content model's side of a finished op (its rule for user ops). Kept out of
    /// [`Controller::op_done`], which runs for every op and is leaner without it.
    #[cold]
    #[inline(never)]
    fn move_values(&mut self, idx: u32, op_index: usize) -> Result<()> {
        let Some(content) = self.content.as_mut() else { return Ok(()) };
        let p = &mut self.pieces[idx as usize];
        let op = &p.plan.ops[op_index];
        let values = &mut p.values[op.value_offset as usize..][..op.sectors as usize];
        content.op_done(self.layout.as_ref(), Access::User { op, values })
    }

    /// The content model's side of a healing copy's write of op `op_index` of piece `idx`:
    /// the target stores what the op wrote to the member being copied.
    #[cold]
    fn move_healing_copy_values(&mut self, idx: u32, op_index: usize) -> Result<()> {
        let target = self.healing_target;
        let Some(content) = self.content.as_mut() else { return Ok(()) };
        let p = &mut self.pieces[idx as usize];
        let op = PlanOp { drive: target, ..p.plan.ops[op_index] };
        let values = &mut p.values[op.value_offset as usize..][..op.sectors as usize];
        content.op_done(self.layout.as_ref(), Access::User { op: &op, values })
    }

    fn finish_piece(&mut self, idx: u32) -> Result<()> {
        if !self.pieces[idx as usize].answered {
            self.account_piece(idx);
            if self.content.is_some() {
                self.check_or_commit(idx)?;
            }
        }
        self.finish_piece_checked(idx)
    }

    /// Answer piece `idx`'s part of its request before the rest of its plan runs (the plan's
    /// [`Plan::answer_after`]): its outcome counts and its reads are checked now, and the
    /// request completes if this was its last piece to answer. The piece keeps its stripe
    /// lock until its last phase is done.
    #[cold]
    fn answer_piece(&mut self, idx: u32) -> Result<()> {
        self.account_piece(idx);
        if self.content.is_some() {
            self.check_or_commit(idx)?;
        }
        let p = &mut self.pieces[idx as usize];
        p.answered = true;
        let request = p.request;
        self.answer_request(request);
        Ok(())
    }

    /// One more piece of request `request` is answered: the request completes with the last.
    #[inline(always)]
    fn answer_request(&mut self, request: u32) {
        let r = &mut self.requests[request as usize];
        r.pieces_left -= 1;
        if r.pieces_left == 0 {
            if r.origin == Origin::Resync {
                // The array's own work, answered to no one: the next re-sync may start.
                self.resyncs_in_flight -= 1;
                self.resync_wanted = true;
                return;
            }
            self.completed.push(CompletedRequest {
                id: r.id,
                origin: r.origin,
                arrival: r.arrival,
                is_write: r.is_write,
                degraded: r.degraded,
                in_failed_set: r.in_failed_set,
                lost: r.lost,
            });
        }
    }

    /// Whether piece `idx`, planned on its stripe's map, touches data with a copy (or, with
    /// parity, a stripe with a unit) on a slot of [`ArrayState::failed_set`].
    #[cold]
    #[inline(never)]
    fn piece_in_failed_set(&self, idx: u32) -> bool {
        let p = &self.pieces[idx as usize];
        let in_set = |u: &UnitLocation| self.state.failed_set.get(u.drive as usize).copied().unwrap_or(false);
        let touched = (0..p.map.data_units()).any(|i| {
            p.plan.touched.get(i).is_none_or(|&(a, b)| a < b) && p.map.copies_of(i).iter().any(in_set)
        });
        touched || (!p.map.parity.is_empty() && p.map.parity.iter().any(in_set))
    }

    /// After a failure or a crash: the layout's state marks as lost what it alone could
    /// recover on member sectors that cannot be read now, and from then on, if it lost any,
    /// every piece is planned (a one-op read would not know).
    pub(super) fn lose_unrecoverable(&mut self) {
        let Some(placement) = self.state.placement.as_deref_mut() else { return };
        if !self.state.failed.iter().any(|&f| f) {
            return;
        }
        let (failed, rebuild, unit_sectors) = (&self.state.failed, self.state.rebuild.as_deref(), self.unit_sectors.size);
        let unreadable = |slot: u32, start: u64, end: u64| -> bool {
            if !failed.get(slot as usize).copied().unwrap_or(false) {
                return false;
            }
            // A rebuild's target holds what its current units cover, and a plan reads it
            // there once they cover the whole stripe unit (`resolve_rebuild`).
            let Some(r) = rebuild.filter(|r| r.member_slot == slot && !r.healing) else { return true };
            let start = start - start % unit_sectors;
            let end = (start + unit_sectors).max(end).min(r.units.capacity());
            start >= end || !(r.units.unit_of(start)..=r.units.unit_of(end - 1)).all(|u| r.states.get(u) == state::UnitState::Rebuilt)
        };
        placement.lose_unrecoverable(self.layout.as_ref(), &unreadable);
        self.every_piece_planned |= placement.plans_every_read();
    }

    /// Add a finished piece's plan to its request's outcome and the counters.
    fn account_piece(&mut self, idx: u32) {
        let p = &self.pieces[idx as usize];
        let spec = p.spec.expect("a live piece has a spec");
        let request = p.request;
        let r = &mut self.requests[request as usize];
        r.degraded |= p.plan.degraded;
        r.lost |= p.plan.lost_sectors > 0;
        if spec.is_write && !spec.resync {
            self.stats.write_pieces += 1;
            self.stats.pre_read_sectors += p.plan.pre_read_sectors;
            self.stats.rmw_segments += p.plan.rmw_segments as u64;
            self.stats.rcw_segments += p.plan.rcw_segments as u64;
            self.stats.lost_write_sectors += p.plan.lost_sectors;
        } else {
            self.stats.lost_read_sectors += p.plan.lost_sectors;
        }
    }

    /// [`Controller::finish_piece`] after the content check: release the lock, complete
    /// the request if it was the last piece.
    fn finish_piece_checked(&mut self, idx: u32) -> Result<()> {
        let spec = self.pieces[idx as usize].spec.expect("a live piece has a spec");
        let request = self.pieces[idx as usize].request;
        if spec.is_write && self.state.rebuild.is_some() {
            self.mark_written_units(idx)?;
        }
        let stripe = self.pieces[idx as usize].stripe;
        if spec.is_write {
            if let Some(placement) = self.state.placement.as_deref_mut() {
                self.planner.commit(placement, stripe, &self.pieces[idx as usize].plan);
                // The write may have asked for a re-sync.
                self.resync_wanted = true;
            }
        }
        self.unlock(stripe, spec.is_write);
        let answered = self.pieces[idx as usize].answered;
        self.pieces[idx as usize].spec = None;
        self.free_pieces.push(idx);
        if !answered {
            self.answer_request(request);
        }
        let r = &mut self.requests[request as usize];
        r.pieces_alive -= 1;
        if r.pieces_alive == 0 {
            self.free_requests.push(request);
            self.in_flight_requests -= 1;
        }
        Ok(())
    }

    /// A drive failed. Marks it, drops its contents, and records whether data is now lost.
    /// The engine must then abort the drive's queued and in-service operations through
    /// `op_done(.., false, ..)`. Returns true if this failure lost data.
    pub fn fail_drive(&mut self, drive: u32) -> Result<bool> {
        let d = drive as usize;
        if d >= self.state.failed.len() {
            return Err(Error::Invariant(format!("failure of unknown drive {drive}")));
        }
        let is_target = self.state.rebuild.as_deref().is_some_and(|r| r.target == drive);
        if self.state.failed[d] && !is_target {
            return Ok(false);
        }
        self.state.failed[d] = true;
        if let Some(c) = self.content.as_mut() {
            c.fail_drive(drive);
        }
        self.spare_failed(drive);
        if let Some(placement) = self.state.placement.as_deref_mut() {
            placement.drive_failed(drive);
            self.resync_wanted = true;
        }
        self.lose_unrecoverable();
        self.rebuild_slot_failed(drive);
        let Some(member) = self.member_in_slot(drive) else {
            return Ok(false); // a spare
        };
        if self.state.failed_members.contains(&member) {
            return Ok(false);
        }
        self.state.member_status[member as usize] = MemberStatus::Failed;
        self.state.failed_members.push(member);
        self.state.refresh_failed_set(self.layout.as_ref());
        let lost_now = !self.state.data_lost && self.layout.data_lost(&self.state.failed_members);
        self.state.data_lost |= lost_now;
        Ok(lost_now)
    }

    /// The failed members.
    pub fn failed_members(&self) -> &[u32] {
        &self.state.failed_members
    }

    /// The status of member `member`.
    pub fn member_status(&self, member: u32) -> MemberStatus {
        self.state.member_status(member)
    }

    /// The array's state: its slots, members, rebuilds and placement.
    pub fn state(&self) -> &ArrayState {
        &self.state
    }

    /// After write piece `idx` finished while a rebuild runs: unrebuilt units its writes to
    /// the target covered whole are current.
    fn mark_written_units(&mut self, idx: u32) -> Result<()> {
        let Some(target) = self.state.rebuild.as_deref().map(|r| r.target) else { return Ok(()) };
        let p = &self.pieces[idx as usize];
        for i in 0..p.plan.ops.len() {
            let op = self.pieces[idx as usize].plan.ops[i];
            if op.kind == OpKind::Write && op.drive == target {
                self.user_wrote_target(op.pba, op.pba + op.sectors as u64)?;
                if self.state.rebuild.is_none() {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Whether `drive` has failed.
    pub fn is_failed(&self, drive: u32) -> bool {
        self.state.is_failed(drive)
    }

    // ----- content model -------------------------------------------------------------------

    /// Piece `idx` as the content model's piece rules see it.
    fn user_piece<'a>(pieces: &'a mut [Piece], requests: &[RequestSlot], idx: u32) -> UserPiece<'a> {
        let p = &mut pieces[idx as usize];
        let spec = p.spec.expect("a live piece has a spec");
        UserPiece {
            stripe: p.stripe,
            map: if p.plan.placed { &p.plan.placed_map } else { &p.map },
            ops: &p.plan.ops,
            phase: p.phase,
            phases: p.plan.phases,
            touched: &p.plan.touched,
            lost: p.plan.lost_sectors > 0,
            is_write: spec.is_write,
            write_id: requests[p.request as usize].write_id,
            log: p.plan.logged.then_some(&p.plan.log),
            values: &mut p.values,
        }
    }

    /// Fill the values of the write ops of the current phase.
    fn compute_write_values(&mut self, idx: u32) {
        let content = self.content.as_ref().expect("content model on");
        let mut piece = Self::user_piece(&mut self.pieces, &self.requests, idx);
        content.fill_user_writes(&mut piece);
    }

    /// When a piece is answered: check the values a read returns, or commit a write's values.
    fn check_or_commit(&mut self, idx: u32) -> Result<()> {
        let content = self.content.as_mut().expect("content model on");
        let piece = Self::user_piece(&mut self.pieces, &self.requests, idx);
        content.finish_user_piece(&piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::ParityRotation;
    use crate::layout::{self, LayoutParams};
    use crate::sim::StreamId;

    /// A layout size divides by a shift when it is a power of two and by a division when it
    /// is not, with the same quotients and remainders either way.
    #[test]
    fn layout_sizes_divide_as_integers_do() {
        let mut rng = RngStream::new(4, StreamId::Policy(0));
        for size in [1u64, 2, 3, 7, 8, 128, 896, 1 << 20, (1 << 20) + 1] {
            let divisor = SizeDivisor::new(size);
            assert_eq!(divisor.shift.is_some(), size.is_power_of_two());
            let mut numerators = vec![0, 1, size - 1, size, size + 1, u64::MAX];
            numerators.extend((0..200).map(|_| rng.below(1 << 40)));
            for n in numerators {
                assert_eq!(divisor.div_rem(n), (n / size, n % size), "{n} / {size}");
            }
        }
    }

    struct IdleDrives;
    impl DriveView for IdleDrives {
        fn is_idle(&self, _drive: u32) -> bool {
            true
        }
        fn positioning_estimate(&self, _drive: u32, _now: Nanos, _pba: u64) -> Nanos {
            0
        }
    }

    /// A piece inside one data unit that reads, or writes without redundancy, is issued as
    /// the one op the general planner builds for it, on every drive count and parity
    /// rotation, also with a failed drive elsewhere in the stripe; on the failed drive itself
    /// it takes the planner's degraded way.
    #[test]
    fn a_piece_in_one_unit_is_issued_as_the_general_planner_plans_it() {
        let mut rng = RngStream::new(3, StreamId::Policy(0));
        for (name, drives, rotation) in [
            ("raid0", 1, ParityRotation::LeftSymmetric),
            ("raid0", 4, ParityRotation::LeftSymmetric),
            ("raid5", 3, ParityRotation::LeftSymmetric),
            ("raid5", 5, ParityRotation::RightAsymmetric),
            ("raid5", 6, ParityRotation::LeftAsymmetric),
        ] {
            let mut params = LayoutParams::new(drives, 16, 16 * 40);
            if name == "raid5" {
                params = params.with("parity_rotation", rotation);
            }
            let layout = layout::build(name, &params, "array").unwrap();
            let failed_drive = (drives > 1).then(|| rng.below(drives as u64) as u32);
            let mut controller =
                Controller::new(layout::build(name, &params, "array").unwrap(), false, RngStream::new(1, StreamId::MirrorChoice));
            let mut failed = vec![false; drives as usize];
            if let Some(d) = failed_drive {
                controller.fail_drive(d).unwrap();
                failed[d as usize] = true;
            }
            let (unit, per_stripe) = (layout.stripe_unit_sectors(), layout.stripe_data_sectors());
            let mut map = StripeMap::default();
            let mut plan = Plan::default();
            for _ in 0..500 {
                let is_write = name == "raid0" && rng.below(2) == 1;
                let lba = rng.below(controller.capacity_sectors());
                let sectors = 1 + rng.below(unit - lba % unit);
                controller.submit(0, UserRequest { id: 0, origin: Origin::Workload, arrival: 0, lba, sectors: sectors as u32, is_write }, &IdleDrives).unwrap();
                let stripe = lba / per_stripe;
                let spec = PieceSpec { first: lba % per_stripe, sectors, is_write, resync: false };
                layout.map_stripe(stripe, &mut map);
                if name == "raid0" {
                    plan::plan_striped(&map, unit, spec, &failed, &mut plan);
                } else {
                    plan::plan_parity(&map, unit, spec, &failed, &mut plan);
                }
                let planned: Vec<_> = plan.ops.iter().map(|o| (o.drive, o.pba, o.sectors, o.kind)).collect();
                let issued: Vec<_> = controller.outbox.iter().map(|o| (o.drive, o.pba, o.sectors, o.kind)).collect();
                assert_eq!(issued, planned, "{name} over {drives}: {spec:?} of stripe {stripe}");
                // Finish the request (a read of lost data completes with no op).
                for op in std::mem::take(&mut controller.outbox) {
                    controller.op_done(0, op.token, true, &IdleDrives).unwrap();
                }
                assert_eq!(controller.outbox.len(), 0);
                assert_eq!(controller.completed.len(), 1);
                controller.completed.clear();
            }
        }
    }

    /// One side of [`one_op_requests_change_nothing`]: a controller and its ops in service.
    struct Side {
        controller: Controller,
        in_service: Vec<IssuedOp>,
    }

    impl Side {
        /// Queue what the controller issued, as the engine does: an op for a failed drive is
        /// aborted at once. Returns what was issued, without the tokens, in order.
        fn drain(&mut self) -> Vec<(u32, u64, u32, OpKind)> {
            let mut issued = Vec::new();
            while !self.controller.outbox.is_empty() {
                for op in std::mem::take(&mut self.controller.outbox) {
                    issued.push((op.drive, op.pba, op.sectors, op.kind));
                    if self.controller.is_failed(op.drive) {
                        self.controller.op_done(0, op.token, false, &IdleDrives).unwrap();
                    } else {
                        self.in_service.push(op);
                    }
                }
            }
            issued
        }

        /// Everything observable after a step, ops issued first.
        fn observe(&mut self) -> String {
            let issued = self.drain();
            let completed: Vec<_> = self
                .controller
                .completed
                .drain(..)
                .map(|c| (c.arrival, c.is_write, c.degraded, c.lost))
                .collect();
            let in_service: Vec<_> = self.in_service.iter().map(|o| (o.drive, o.pba, o.sectors, o.kind)).collect();
            format!(
                "issued {issued:?}\ncompleted {completed:?}\nin service {in_service:?}\nin flight {} stats {:?} lost {}",
                self.controller.in_flight(),
                self.controller.stats,
                self.controller.data_lost()
            )
        }
    }

    /// Requests that are one op take the short way (a one-op record, no piece or plan); a
    /// controller that takes the long way for every request issues the same ops in the same
    /// order and completes the same requests with the same outcomes, through lock waits on
    /// a few busy stripes, completions in random order, and drive failures that abort ops in
    /// service and fall on requests waiting for their stripe.
    #[test]
    fn one_op_requests_change_nothing() {
        for (name, drives) in [("raid0", 1), ("raid0", 4), ("raid5", 4), ("raid5", 5), ("raid1", 2)] {
            for seed in 0..4 {
                let params = LayoutParams::new(drives, 16, 16 * 6);
                let side = |one_ops: bool| {
                    let layout = layout::build(name, &params, "array").unwrap();
                    let mut controller = Controller::new(layout, false, RngStream::new(seed, StreamId::MirrorChoice));
                    controller.one_op_requests = one_ops;
                    Side { controller, in_service: Vec::new() }
                };
                let (mut short, mut long) = (side(true), side(false));
                let mut rng = RngStream::new(seed, StreamId::Policy(7));
                let capacity = short.controller.capacity_sectors();
                let mut one_op_waits = 0;
                for step in 0..3000u64 {
                    let choice = rng.below(100);
                    if choice < 45 {
                        // Mostly small requests inside a unit; some across units and stripes.
                        let sectors = if rng.below(4) == 0 { 1 + rng.below(40) } else { 1 + rng.below(8) };
                        let sectors = sectors.min(capacity);
                        let lba = rng.below(capacity - sectors + 1);
                        let req = UserRequest { id: step, origin: Origin::Workload, arrival: step, lba, sectors: sectors as u32, is_write: rng.below(2) == 0 };
                        short.controller.submit(step, req, &IdleDrives).unwrap();
                        long.controller.submit(step, req, &IdleDrives).unwrap();
                        one_op_waits += (short.controller.free_one_ops.len() < short.controller.one_ops.len()
                            && short.controller.outbox.is_empty()) as u32;
                    } else if short.in_service.is_empty() {
                        continue;
                    } else if choice < 99 {
                        let i = rng.below(short.in_service.len() as u64) as usize;
                        let (a, b) = (short.in_service.remove(i), long.in_service.remove(i));
                        short.controller.op_done(step, a.token, true, &IdleDrives).unwrap();
                        long.controller.op_done(step, b.token, true, &IdleDrives).unwrap();
                    } else {
                        // The drive of an op in service, so that the failure aborts something.
                        let drive = short.in_service[0].drive;
                        let lost = short.controller.fail_drive(drive).unwrap();
                        assert_eq!(long.controller.fail_drive(drive).unwrap(), lost);
                        for s in [&mut short, &mut long] {
                            let (aborted, kept) = s.in_service.drain(..).partition(|o| o.drive == drive);
                            s.in_service = kept;
                            for op in aborted {
                                s.controller.op_done(step, op.token, false, &IdleDrives).unwrap();
                            }
                        }
                    }
                    assert_eq!(short.observe(), long.observe(), "{name} over {drives}, seed {seed}, step {step}");
                }
                if name != "raid1" {
                    assert!(one_op_waits > 0, "{name} over {drives}, seed {seed}: no one-op request waited for its stripe");
                    assert!(short.controller.stats.replans > 0, "{name} over {drives}, seed {seed}: no op was aborted");
                }
            }
        }
    }

    /// A layout that chooses placement at write time (here a count of the writes each stripe
    /// had): its planner reads the placement state as the stripe's finished writes left it,
    /// and its commit step runs once per finished write piece, with the plan that ran. Writes
    /// of one stripe are serialized by its lock, so each write piece is planned seeing exactly
    /// the writes granted before it committed, however requests interleave.
    #[test]
    fn a_placement_chosen_at_write_time_is_committed_once_per_write_and_read_by_the_planner() {
        use std::collections::HashMap;
        use std::sync::Mutex;

        #[derive(Debug, Default)]
        struct WritesPerStripe(HashMap<u64, u32>);
        impl crate::layout::PlacementState for WritesPerStripe {
            fn volatile(&self) -> Option<&'static str> {
                Some("the count of writes of each stripe")
            }
            fn lose_volatile(&mut self) {
                self.0.clear();
            }
            fn as_any(&self) -> &dyn std::any::Any {
                self
            }
            fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
                self
            }
        }
        /// What the planner saw for each write piece it planned: (stripe, writes committed).
        static SEEN: Mutex<Vec<(u64, u32)>> = Mutex::new(Vec::new());
        #[derive(Debug)]
        struct CountingPlanner;
        impl plan::Planner for CountingPlanner {
            fn name(&self) -> &'static str {
                "counting mirror"
            }
            fn plan(&self, inputs: plan::PlanInputs<'_>, out: &mut Plan) {
                let counts = inputs.placement.as_deref().and_then(|p| p.as_any().downcast_ref::<WritesPerStripe>()).expect("its state");
                if inputs.spec.is_write {
                    let stripe = inputs.map.stripe;
                    SEEN.lock().unwrap().push((stripe, counts.0.get(&stripe).copied().unwrap_or(0)));
                }
                plan::MIRROR.plan(inputs, out)
            }
            fn write_ops(&self, units: f64, data_units: f64, copies: f64) -> f64 {
                plan::MIRROR.write_ops(units, data_units, copies)
            }
            fn commit(&self, placement: &mut dyn crate::layout::PlacementState, stripe: u64, plan: &Plan) {
                assert!(plan.ops.iter().any(|op| op.kind == OpKind::Write), "committed a plan that wrote nothing");
                let counts = placement.as_any_mut().downcast_mut::<WritesPerStripe>().expect("its state");
                *counts.0.entry(stripe).or_insert(0) += 1;
            }
        }
        static COUNTING: CountingPlanner = CountingPlanner;
        #[derive(Debug)]
        struct Counted(Box<dyn Layout>);
        impl Layout for Counted {
            fn name(&self) -> &'static str {
                "counted mirror"
            }
            fn planner(&self) -> &'static dyn plan::Planner {
                &COUNTING
            }
            fn fault_tolerance(&self) -> u32 {
                self.0.fault_tolerance()
            }
            fn shape(&self) -> &crate::layout::LayoutShape {
                self.0.shape()
            }
            fn data_units_per_stripe(&self) -> u32 {
                self.0.data_units_per_stripe()
            }
            fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
                self.0.map_stripe(stripe, out)
            }
            fn locate(&self, drive: u32, pba: u64) -> Option<(u64, crate::layout::UnitRole)> {
                self.0.locate(drive, pba)
            }
            fn data_lost(&self, failed: &[u32]) -> bool {
                self.0.data_lost(failed)
            }
            fn redundancy_set(&self, member: u32) -> Vec<u32> {
                self.0.redundancy_set(member)
            }
            fn volatile_state(&self) -> &'static str {
                "the count of writes of each stripe"
            }
            fn placement_state(&self) -> Option<Box<dyn crate::layout::PlacementState>> {
                Some(Box::new(WritesPerStripe::default()))
            }
        }

        let params = LayoutParams::new(4, 16, 16 * 8);
        let layout = Box::new(Counted(layout::build("raid1", &params, "array").unwrap()));
        let mut controller = Controller::new(layout, false, RngStream::new(2, StreamId::MirrorChoice));
        let per_stripe = controller.layout().stripe_data_sectors();
        let mut rng = RngStream::new(9, StreamId::Policy(3));
        let mut in_service: Vec<IssuedOp> = Vec::new();
        let mut write_pieces: HashMap<u64, u32> = HashMap::new();
        for step in 0..2000u64 {
            if rng.below(2) == 0 || in_service.is_empty() {
                // Small writes and reads over a few stripes, some across a stripe boundary.
                let sectors = 1 + rng.below(24);
                let lba = rng.below(controller.capacity_sectors() - sectors + 1);
                let is_write = rng.below(3) != 0;
                if is_write {
                    for stripe in lba / per_stripe..=(lba + sectors - 1) / per_stripe {
                        *write_pieces.entry(stripe).or_insert(0) += 1;
                    }
                }
                let req = UserRequest { id: step, origin: Origin::Workload, arrival: step, lba, sectors: sectors as u32, is_write };
                controller.submit(step, req, &IdleDrives).unwrap();
            } else {
                let op = in_service.remove(rng.below(in_service.len() as u64) as usize);
                controller.op_done(step, op.token, true, &IdleDrives).unwrap();
            }
            in_service.append(&mut controller.outbox);
        }
        while let Some(op) = in_service.pop() {
            controller.op_done(0, op.token, true, &IdleDrives).unwrap();
            in_service.append(&mut controller.outbox);
        }
        assert_eq!(controller.in_flight(), 0);
        let counts = controller.state().placement().and_then(|p| p.as_any().downcast_ref::<WritesPerStripe>()).unwrap();
        assert_eq!(counts.0, write_pieces, "one commit per finished write piece");
        assert!(!write_pieces.is_empty());
        // What the placement state holds in memory is lost in a crash.
        controller.crash();
        let counts_after = controller.state().placement().and_then(|p| p.as_any().downcast_ref::<WritesPerStripe>()).unwrap();
        assert!(counts_after.0.is_empty(), "a crash kept the volatile placement state");
        // Each write piece of a stripe saw the writes before it: 0, 1, 2, ... in order.
        let mut next: HashMap<u64, u32> = HashMap::new();
        for &(stripe, seen) in SEEN.lock().unwrap().iter() {
            let expected = next.entry(stripe).or_insert(0);
            assert_eq!(seen, *expected, "stripe {stripe}'s write planned before the previous one committed");
            *expected += 1;
        }
    }

    /// A plan that answers after its first phase completes its request then, while the
    /// rest of the plan runs on under the stripe lock; the request stays in flight until the
    /// plan is done, a read of the stripe waits for it, and reads the values written.
    #[test]
    fn a_plan_answers_the_user_after_the_phase_it_names_and_keeps_its_lock_until_done() {
        let params = LayoutParams::new(4, 16, 16 * 8);
        let layout = layout::build("raid5", &params, "array").unwrap();
        let mut controller = Controller::new(layout, true, RngStream::new(1, StreamId::MirrorChoice));
        controller.answer_after_first_phase = true;
        let request = |id: u64, is_write: bool| UserRequest { id, origin: Origin::Workload, arrival: id, lba: 4, sectors: 4, is_write };
        // A small write: pre-reads of old data and parity (phase 0), then data and parity
        // writes (phase 1).
        controller.submit(0, request(7, true), &IdleDrives).unwrap();
        let pre_reads = std::mem::take(&mut controller.outbox);
        assert!(!pre_reads.is_empty() && pre_reads.iter().all(|o| o.kind == OpKind::Read));
        for op in &pre_reads {
            assert!(controller.completed.is_empty(), "answered before its first phase was done");
            controller.op_done(1, op.token, true, &IdleDrives).unwrap();
        }
        let answered: Vec<_> = controller.completed.drain(..).map(|c| (c.id, c.is_write)).collect();
        assert_eq!(answered, vec![(7, true)], "answered once its first phase is done");
        assert_eq!(controller.in_flight(), 1, "still in flight until its plan is done");
        let writes = std::mem::take(&mut controller.outbox);
        assert!(!writes.is_empty() && writes.iter().all(|o| o.kind == OpKind::Write));
        // A read of the same rows waits for the stripe lock the write still holds.
        controller.submit(2, request(8, false), &IdleDrives).unwrap();
        assert!(controller.outbox.is_empty(), "the read went ahead of the write's last phase");
        for op in &writes {
            controller.op_done(3, op.token, true, &IdleDrives).unwrap();
        }
        assert!(controller.completed.is_empty(), "the write was answered twice");
        let reads = std::mem::take(&mut controller.outbox);
        assert!(!reads.is_empty(), "the read did not start when the write finished");
        for op in &reads {
            controller.op_done(4, op.token, true, &IdleDrives).unwrap();
        }
        let answered: Vec<_> = controller.completed.drain(..).map(|c| (c.id, c.is_write)).collect();
        assert_eq!(answered, vec![(8, false)]);
        assert_eq!(controller.in_flight(), 0);
        let content = controller.content().unwrap();
        assert_eq!(content.stats.sectors_checked, 4);
        assert_eq!(content.stats.stale_sectors, 0, "the read did not return the value written");
    }
}
