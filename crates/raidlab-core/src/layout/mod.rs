//! Layouts: pure mapping from a logical stripe to the drives and physical sectors holding its
//! data and redundancy. One file per scheme, one registry table. Layout code never issues I/O:
//! planners in `array` read the map and build access plans.
//!
//! Vocabulary: a **stripe unit** is `stripe_unit_sectors` consecutive sectors on one drive; a
//! **stripe** is the set of units that share redundancy (or, for RAID-0/1, one row of units
//! across the array); a **row** is a sector offset within a unit.

pub mod chained;
pub mod declustered;
pub mod distorted;
pub mod draid;
pub mod interleaved;
pub mod keys;
pub mod md_raid10;
pub mod plan;
pub mod raid0;
pub mod raid1;
pub mod raid5;
pub mod raid6;

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use crate::error::{Error, Result};

/// Where one unit of a stripe lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitLocation {
    /// Drive index in the array.
    pub drive: u32,
    /// First physical sector of the unit on that drive.
    pub pba: u64,
}

/// The placement of one stripe. Data unit `i`, copy `c` is `data[i * copies + c]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StripeMap {
    /// Stripe number.
    pub stripe: u64,
    /// Copies of each data unit (1 for striping and parity layouts).
    pub copies: u32,
    /// Data units in logical order, each repeated `copies` times.
    pub data: Vec<UnitLocation>,
    /// Parity units (empty when the layout has none; P first, then Q for dual parity).
    pub parity: Vec<UnitLocation>,
}

impl StripeMap {
    /// Number of data units in the stripe.
    pub fn data_units(&self) -> usize {
        // Striped and parity layouts (one copy) divide by nothing: this is asked per piece.
        if self.copies <= 1 {
            self.data.len()
        } else {
            self.data.len() / self.copies as usize
        }
    }
    /// The copies of data unit `i`.
    /// Start the map of `stripe` afresh, `copies` copies of each data unit, keeping the
    /// storage of its vectors.
    #[inline]
    pub fn reset(&mut self, stripe: u64, copies: u32) {
        self.stripe = stripe;
        self.copies = copies;
        self.data.clear();
        self.parity.clear();
    }

    pub fn copies_of(&self, i: usize) -> &[UnitLocation] {
        let c = self.copies as usize;
        &self.data[i * c..(i + 1) * c]
    }
}

/// A layout's placement chosen at write time: where a write put what the layout leaves open
/// (a distorted mirror's map of the blocks it wrote "anywhere free"). The layout creates it
/// ([`Layout::placement_state`]); the controller keeps it in its
/// [`crate::array::state::ArrayState`]; the layout's planner reads it when it plans and
/// records a finished write's choice in its commit step
/// ([`crate::layout::plan::Planner::commit`]).
pub trait PlacementState: std::fmt::Debug + Send {
    /// What of it a crash loses (what the controller keeps only in memory), in words; `None`
    /// when all of it is on the drives and survives a crash.
    fn volatile(&self) -> Option<&'static str>;
    /// A crash lost what is volatile: forget it (the layout's recovery finds it again).
    fn lose_volatile(&mut self);
    /// Member `member` is being rebuilt from now on (`None`: no rebuild runs any more): a
    /// layout that moves copies keeps them still on it meanwhile, so the rebuild's view of
    /// the member holds. By default nothing to do.
    fn rebuilding(&mut self, _member: Option<u32>) {}
    /// A stripe whose redundancy the state wants re-synchronized now (a log-assisted array's
    /// logged rows, seed 002 §III-D), which the controller submits as a request of origin
    /// [`crate::request::Origin::Resync`], one at a a time; `None` (the default) when there
    /// is none. Asked after each write piece the planner committed, and after each re-sync.
    fn next_resync(&mut self, _now: crate::sim::Nanos) -> Option<u64> {
        None
    }
    /// Whether logical sector `lba`'s last value is kept outside its home (a write-back
    /// journal's cache), so a crash that catches a write of it leaves it as it was: the
    /// content model adopts nothing from the drives there. By default false.
    fn keeps_value(&self, _lba: u64) -> bool {
        false
    }
    /// How many of its re-syncs the controller may have in flight at once (by default one).
    fn concurrent_resyncs(&self) -> u32 {
        1
    }
    /// A crash caught write plan `plan` of `stripe` with its phases before `phase` done and
    /// phase `phase` in flight (the drives hold what it wrote so far); `write_id` is the
    /// content model's id of the write's values. Told before
    /// [`PlacementState::lose_volatile`]; by default nothing.
    fn interrupted(&mut self, _stripe: u64, _plan: &crate::layout::plan::Plan, _phase: u8, _write_id: u64) {}
    /// Drive slot `slot` failed (the controller tells every failure; by default nothing).
    fn drive_failed(&mut self, _slot: u32) {}
    /// Some member sectors cannot be read (`unreadable(slot, first sector, end sector)`: a
    /// failed member's, where its rebuild has not made them current): what only the state
    /// could have recovered there and no longer can (a lost log's records, a stale parity
    /// the state no longer knows of) is lost from now on. The controller asks after every
    /// failure and crash while a member is failed; by default nothing is lost.
    fn lose_unrecoverable(&mut self, _layout: &dyn Layout, _unreadable: &dyn Fn(u32, u64, u64) -> bool) {}
    /// Whether every read must be planned, because a unit's home does not always hold its
    /// data (a write-back cache's blocks; a rebuilt block the state could not recover, lost):
    /// the controller's one-op path, which reads a unit without a plan, is then closed. By
    /// default false.
    fn plans_every_read(&self) -> bool {
        false
    }
    /// Whether sector `sector` (an offset in the unit) of data unit `index` of `stripe` is
    /// lost (its value known to no one, reported as lost when read): the content model skips
    /// it when it proves a rebuilt unit. By default false.
    fn data_lost_at(&self, _stripe: u64, _index: u32, _sector: u64) -> bool {
        false
    }
    /// The array has had no user request for as long as the layout asked
    /// (`log.resync_idle_ms`); by default nothing.
    fn idle(&mut self) {}
    /// Sectors `[start, end)` of the member in slot `member_slot` were rebuilt onto its
    /// target (the unit's stripes are still locked); `layout` maps the stripes. By default
    /// nothing.
    fn rebuilt(&mut self, _layout: &dyn Layout, _member_slot: u32, _start: u64, _end: u64) {}
    /// For the planner that owns it, to read its own type back.
    fn as_any(&self) -> &dyn std::any::Any;
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// What a physical unit holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitRole {
    /// Data unit `index` of the stripe (copy `copy` for mirrored layouts).
    Data { index: u32, copy: u32 },
    /// Parity unit `index` (0 = P).
    Parity { index: u32 },
}

/// Which rotation a RAID-5 layout uses for its parity units (Linux md naming).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ParityRotation {
    /// Parity moves right to left; data starts just after parity and wraps (the default of
    /// Linux md and the PRO paper's RAID-5).
    #[default]
    LeftSymmetric,
    /// Parity moves right to left; data fills the other drives in drive order.
    LeftAsymmetric,
    /// Parity moves left to right; data starts just after parity and wraps.
    RightSymmetric,
    /// Parity moves left to right; data fills the other drives in drive order.
    RightAsymmetric,
}

/// A data layout.
pub trait Layout: Send + Sync + std::fmt::Debug {
    /// Registry name (`raid5`).
    fn name(&self) -> &'static str;
    /// The planner of its stripes (`array::plan`: [`crate::layout::plan::STRIPED`],
    /// [`crate::layout::plan::MIRROR`], [`crate::layout::plan::PARITY`], or one of its own).
    /// Every layout names one, so a layout without a planner cannot be built.
    fn planner(&self) -> &'static dyn crate::layout::plan::Planner;
    /// Failures of one redundancy set (a mirror set, a parity group) its data survives: 0
    /// for RAID-0, `copies − 1` for RAID-1, 1 for RAID-5.
    fn fault_tolerance(&self) -> u32;
    /// Drives, stripe unit and stripe count.
    fn shape(&self) -> &LayoutShape;
    /// Data units per stripe.
    fn data_units_per_stripe(&self) -> u32;
    /// Fill `out` with the placement of `stripe` (reusing its storage).
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap);
    /// What the unit containing physical sector `pba` of `drive` holds, and its stripe;
    /// `None` for sectors outside any stripe (the tail of a drive).
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)>;
    /// Drives whose simultaneous loss loses data, given `failed` drives: returns true when
    /// the failed set defeats the layout's redundancy somewhere.
    fn data_lost(&self, failed: &[u32]) -> bool;
    /// What a further failure means while member `member` is failed: the other members that
    /// share a redundancy set with it (RAID-5: every other member; RAID-1: the other copies of
    /// its mirror set; RAID-0: none, its failure alone loses data). Each of them, with
    /// `member` and at most [`Layout::fault_tolerance`] − 1 others of them, loses data (with
    /// one tolerated, each alone does): these are the drives a rebuild of `member` is exposed
    /// to. In slot order.
    fn redundancy_set(&self, member: u32) -> Vec<u32>;
    /// Where data unit `index` (below [`Layout::data_units_per_stripe`]) of `stripe` lives:
    /// `data[index]` of [`Layout::map_stripe`]'s map, without mapping the whole stripe, for
    /// layouts that keep one copy of each data unit. `None` for the others, and by default
    /// (the controller then maps the stripe).
    fn data_unit(&self, _stripe: u64, _index: u32) -> Option<UnitLocation> {
        None
    }
    /// A new, empty placement state, for a layout that chooses placement at write time
    /// ([`PlacementState`]); `None`, the default, for a layout whose map is fixed.
    fn placement_state(&self) -> Option<Box<dyn PlacementState>> {
        None
    }
    /// What a crash of the controller costs this layout, in words: what it keeps only in
    /// memory (its volatile state), and what a write caught in flight leaves behind. Every
    /// layout states it (no default), since a crash entry in the failure schedule acts on it.
    fn volatile_state(&self) -> &'static str;
    /// How member `member`'s lost sectors are rebuilt: from which members, and how. `None`
    /// when the layout keeps no redundancy (a lost member cannot be rebuilt), the default.
    fn reconstruction(&self, _member: u32) -> Option<Reconstruction> {
        None
    }
    /// Where source member `source` holds its share of member `member`'s lost sectors
    /// `[start, end)`: the first of as many consecutive sectors, in the same order. By
    /// default the same sectors (RAID-1's copies and RAID-5's stripes lie at the same
    /// addresses on every member); a layout that keeps a copy elsewhere (a rotated or
    /// declustered copy) says where, for each rebuild unit and each source. The range is a
    /// rebuild unit, which must not straddle a boundary where the layout's answer changes.
    fn rebuild_source_sectors(&self, _member: u32, _source: u32, start: u64, _end: u64) -> u64 {
        start
    }
    /// The reads that rebuild member `member`'s lost sectors `[start, end)` (a rebuild unit),
    /// appended to `out`: each names a source member of [`Layout::reconstruction`], where to
    /// read it and which sectors of the unit it rebuilds, combined by XOR or copied as the
    /// reconstruction says: each source once per part of the unit it rebuilds (parity
    /// declustering and dRAID read each stripe unit's own stripe, so a source may be read
    /// twice when a rebuild unit spans two stripe units); together they cover every sector
    /// of the unit that lies in a stripe (with parity, every source covers each sector it is
    /// read for). By default every
    /// source of the reconstruction, for the whole unit, at
    /// [`Layout::rebuild_source_sectors`]; for a layout whose
    /// [stripe units lie apart](Layout::stripe_units_apart), each stripe unit of the range
    /// from its own stripe's other units. A layout whose unit is rebuilt from different
    /// members in different places (a declustered copy, a declustered parity group) lists
    /// only the sources this unit needs. `reconstruction` is the layout's own answer for
    /// `member` (asked once per rebuild, not per unit).
    /// `placement` is the layout's placement state, where its copies are now (`None`: as
    /// the array starts).
    fn rebuild_reads(
        &self,
        member: u32,
        reconstruction: &Reconstruction,
        start: u64,
        end: u64,
        _placement: Option<&dyn PlacementState>,
        out: &mut Vec<SourceRead>,
    ) {
        if self.stripe_units_apart() {
            return rebuild_reads_by_stripe(self, member, start, end, out);
        }
        for &source in &reconstruction.sources {
            let pba = self.rebuild_source_sectors(member, source, start, end);
            out.push(SourceRead { source, pba, offset: 0, sectors: end - start, outside: None });
        }
    }
    /// Whether the units of one stripe lie at different sectors of their drives and a drive's
    /// consecutive units belong to scattered stripes (parity declustering, dRAID): then the
    /// defaults of [`Layout::rebuild_reads`] and [`Layout::stripes_in`] find each unit's
    /// stripe with [`Layout::locate`] and [`Layout::map_stripe`] instead of assuming stripe
    /// `s` at unit offset `s` of every member. By default false.
    fn stripe_units_apart(&self) -> bool {
        false
    }
    /// Whether OpenZFS's *sequential* rebuild (`rebuild.zfs.mode`) applies: it copies in LBA
    /// order without the stripe's checksums, which ZFS does for mirrors and dRAID's
    /// fixed-width groups, not RAIDZ's variable-width stripes. By default, for layouts that
    /// rebuild by copy (mirrors).
    fn sequential_rebuild(&self) -> bool {
        self.reconstruction(0).is_some_and(|r| !r.xor)
    }
    /// Drive slots outside the layout that a rebuild reads as well as the members of
    /// [`Layout::reconstruction`] (a log-assisted array's log, whose records rebuild logged
    /// rows): the rebuild's executors read them as sources too. By default none.
    fn outside_sources(&self) -> Vec<u32> {
        Vec::new()
    }
    /// Whether every unit of a lost member is rebuilt from the whole unit at its own sectors
    /// on every source of [`Layout::reconstruction`] (the defaults of
    /// [`Layout::rebuild_reads`] and [`Layout::rebuild_source_sectors`]): then the rebuild
    /// does not ask per unit. A shortcut: every debug build checks it against
    /// `rebuild_reads` for every unit it rebuilds. By default false (asked per unit).
    fn rebuilds_units_in_place(&self) -> bool {
        false
    }
    /// Why a lost member of this layout cannot be rebuilt although it keeps redundancy (a
    /// rebuild the layout does not support yet), for the error that refuses `[rebuild]`;
    /// `None`, the default, when [`Layout::reconstruction`] says how.
    fn rebuild_refusal(&self, _rebuild: &RebuildAsked) -> Option<String> {
        None
    }
    /// The member's sectors in the order of the layout's rebuild phases: each phase a list
    /// of ranges `[start, end)`, rebuilt before the next phase's (a distorted mirror's slave
    /// partition, then its master partition). Empty, the default, when the layout has no
    /// phases. Read by the `replacement` order; the other orders ignore it.
    fn rebuild_phases(&self, _member: u32) -> Vec<Vec<(u64, u64)>> {
        Vec::new()
    }
    /// Where entry `position` of `stripe`'s map (data units' copies in order, then parity),
    /// at sector `pba` in the map the layout gives, is now: a moved copy's sector for a
    /// layout with a placement state; by default `pba`.
    fn placed_pba(&self, _stripe: u64, _position: usize, pba: u64, _placement: Option<&dyn PlacementState>) -> u64 {
        pba
    }
    /// [`Layout::locate`] for a layout with a placement state: what the unit holds now, not
    /// as the array started; by default the placement-free answer.
    fn locate_placed(&self, drive: u32, pba: u64, _placement: Option<&dyn PlacementState>) -> Option<(u64, UnitRole)> {
        self.locate(drive, pba)
    }
    /// Why a controller crash cannot be simulated with this layout yet, for the error that
    /// refuses a `crash` entry in the failure schedule; `None`, the default, when it can.
    fn crash_refusal(&self) -> Option<&'static str> {
        None
    }
    /// The stripes with a unit in physical sectors `[start, end)` of a member, as an
    /// inclusive range (`start < end`). By default stripe `s` occupies sectors
    /// `[s·unit, (s+1)·unit)` of every member; for a layout whose
    /// [stripe units lie apart](Layout::stripe_units_apart), the least to the greatest stripe
    /// of the range's units. `placement` as for [`Layout::rebuild_reads`].
    fn stripes_in(&self, member: u32, start: u64, end: u64, _placement: Option<&dyn PlacementState>) -> (u64, u64) {
        if self.stripe_units_apart() {
            return stripes_of_units(self, member, start, end);
        }
        let unit = self.stripe_unit_sectors();
        let last = self.stripes().saturating_sub(1);
        ((start / unit).min(last), ((end - 1) / unit).min(last))
    }
    /// Distributed spares the layout keeps in its members' free columns (dRAID's S): each is
    /// a drive slot of its own to the controller, a rebuild target like a spare drive, whose
    /// sectors lie on the members ([`Layout::distributed_spare_member`]). By default none.
    fn distributed_spares(&self) -> u32 {
        0
    }
    /// The member whose free column holds sector `pba` of distributed spare `spare` (at the
    /// same sector of that member). Asked only of a layout with distributed spares.
    fn distributed_spare_member(&self, _spare: u32, _pba: u64) -> u32 {
        unreachable!("the layout keeps no distributed spare")
    }
    /// Physical sectors of each member that hold stripe units (the rest of a drive is
    /// unused), by default `stripes × unit`.
    fn member_sectors(&self) -> u64 {
        self.stripes() * self.stripe_unit_sectors()
    }

    /// Drives in the array.
    fn drives(&self) -> u32 {
        self.shape().drives
    }
    /// Sectors per stripe unit.
    fn stripe_unit_sectors(&self) -> u64 {
        self.shape().stripe_unit_sectors
    }
    /// Number of stripes.
    fn stripes(&self) -> u64 {
        self.shape().stripes
    }
    /// Data sectors per stripe.
    fn stripe_data_sectors(&self) -> u64 {
        self.stripe_unit_sectors() * self.data_units_per_stripe() as u64
    }
    /// Logical capacity in sectors.
    fn capacity_sectors(&self) -> u64 {
        self.stripes() * self.stripe_data_sectors()
    }
}

/// For a layout whose stripe units lie apart (parity declustering, dRAID): the stripes with a
/// unit in sectors `[start, end)` of `member`, as the inclusive range from the least to the
/// greatest (the last stripe when none: the range holds only free space).
fn stripes_of_units<L: Layout + ?Sized>(layout: &L, member: u32, start: u64, end: u64) -> (u64, u64) {
    let unit = layout.stripe_unit_sectors();
    let (mut lo, mut hi) = (u64::MAX, 0);
    for offset in start / unit..=(end - 1) / unit {
        if let Some((stripe, _)) = layout.locate(member, offset * unit) {
            lo = lo.min(stripe);
            hi = hi.max(stripe);
        }
    }
    if lo == u64::MAX {
        let last = layout.stripes().saturating_sub(1);
        return (last, last);
    }
    (lo, hi)
}

/// For a layout whose stripe units lie apart: the reads that rebuild `member`'s sectors
/// `[start, end)`, each stripe unit of the range from its own stripe's other units at the same
/// offset in theirs (sectors outside every stripe need none).
fn rebuild_reads_by_stripe<L: Layout + ?Sized>(layout: &L, member: u32, start: u64, end: u64, out: &mut Vec<SourceRead>) {
    let unit = layout.stripe_unit_sectors();
    let mut map = StripeMap::default();
    let mut at = start;
    while at < end {
        let next = ((at / unit + 1) * unit).min(end);
        if let Some((stripe, _)) = layout.locate(member, at) {
            layout.map_stripe(stripe, &mut map);
            for u in map.data.iter().chain(map.parity.iter()).filter(|u| u.drive != member) {
                out.push(SourceRead { source: u.drive, pba: u.pba + at % unit, offset: at - start, sectors: next - at, outside: None });
            }
        }
        at = next;
    }
}

/// What a run's `[rebuild]` asks of the layout, for [`Layout::rebuild_refusal`] (the
/// settings a layout may not support; the layout does not read the rebuild's own types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RebuildAsked {
    /// The rebuild unit, sectors, when given in sectors (`None`: in tracks or cylinders).
    pub unit_sectors: Option<u64>,
    /// Reads of rebuilt units go to the target.
    pub redirect_reads: bool,
    /// Degraded reads' reconstructions are written to the target.
    pub piggyback: bool,
}

/// How a lost member is rebuilt (see [`Layout::reconstruction`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconstruction {
    /// The members read (where on each: [`Layout::rebuild_source_sectors`]).
    pub sources: Vec<u32>,
    /// Whether the lost sectors are computed from the sources (parity), or a copy of any one.
    pub xor: bool,
    /// How many of the sources a parity's lost sectors may be computed without (0: the XOR
    /// of every source, RAID-5; 1: RAID-6's P+Q, solved per stripe from the units that
    /// survive, `raid6::recovery_coefficients`). 0 for copies.
    pub erasures: u32,
}

/// One read of a rebuild unit ([`Layout::rebuild_reads`]): `sectors` sectors of member
/// `source` from its sector `pba`, which rebuild the unit's sectors `offset .. offset +
/// sectors` (counted from the unit's first sector).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceRead {
    /// The member read.
    pub source: u32,
    /// Its first sector read.
    pub pba: u64,
    /// Where in the unit the read's sectors go, sectors from the unit's start.
    pub offset: u64,
    /// Sectors read.
    pub sectors: u64,
    /// A drive slot outside the layout read instead of member `source` (a log-assisted
    /// array's log, whose records rebuild what they hold); `None` for a member's read.
    pub outside: Option<u32>,
}

/// A layout whose member has moved to another drive slot: after a rebuild, the spare that was
/// written takes the lost member's place. Every map and lookup of `inner` is translated from
/// its slots to the new ones (and `locate` back), so planners and the controller see slots
/// only. Installed only once a member has been replaced, so an array that never rebuilt pays
/// nothing; each later replacement wraps the layout once more.
#[derive(Debug)]
pub struct Remapped {
    inner: Box<dyn Layout>,
    /// The slot `inner`'s drive `from` now is.
    from: u32,
    to: u32,
}

impl Remapped {
    /// `layout` with its drive `from` moved to slot `to`.
    pub fn replace(layout: Box<dyn Layout>, from: u32, to: u32) -> Box<dyn Layout> {
        Box::new(Remapped { inner: layout, from, to })
    }

    #[inline]
    fn slot(&self, drive: u32) -> u32 {
        if drive == self.from {
            self.to
        } else {
            drive
        }
    }
}

impl Layout for Remapped {
    fn redundancy_set(&self, member: u32) -> Vec<u32> {
        self.inner.redundancy_set(member)
    }
    fn placement_state(&self) -> Option<Box<dyn PlacementState>> {
        self.inner.placement_state()
    }
    fn volatile_state(&self) -> &'static str {
        self.inner.volatile_state()
    }
    fn rebuild_refusal(&self, rebuild: &RebuildAsked) -> Option<String> {
        self.inner.rebuild_refusal(rebuild)
    }
    fn rebuild_phases(&self, member: u32) -> Vec<Vec<(u64, u64)>> {
        self.inner.rebuild_phases(member)
    }
    fn placed_pba(&self, stripe: u64, position: usize, pba: u64, placement: Option<&dyn PlacementState>) -> u64 {
        self.inner.placed_pba(stripe, position, pba, placement)
    }
    fn locate_placed(&self, drive: u32, pba: u64, placement: Option<&dyn PlacementState>) -> Option<(u64, UnitRole)> {
        if drive == self.from {
            return None;
        }
        self.inner.locate_placed(if drive == self.to { self.from } else { drive }, pba, placement)
    }
    fn outside_sources(&self) -> Vec<u32> {
        self.inner.outside_sources()
    }
    fn crash_refusal(&self) -> Option<&'static str> {
        self.inner.crash_refusal()
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn planner(&self) -> &'static dyn crate::layout::plan::Planner {
        self.inner.planner()
    }
    fn fault_tolerance(&self) -> u32 {
        self.inner.fault_tolerance()
    }
    fn shape(&self) -> &LayoutShape {
        self.inner.shape()
    }
    fn data_units_per_stripe(&self) -> u32 {
        self.inner.data_units_per_stripe()
    }
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
        self.inner.map_stripe(stripe, out);
        for u in out.data.iter_mut().chain(out.parity.iter_mut()) {
            u.drive = self.slot(u.drive);
        }
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        if drive == self.from {
            return None;
        }
        self.inner.locate(if drive == self.to { self.from } else { drive }, pba)
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        self.inner.data_lost(failed)
    }
    fn data_unit(&self, stripe: u64, index: u32) -> Option<UnitLocation> {
        self.inner.data_unit(stripe, index).map(|u| UnitLocation { drive: self.slot(u.drive), pba: u.pba })
    }
    fn reconstruction(&self, member: u32) -> Option<Reconstruction> {
        self.inner.reconstruction(member)
    }
    fn rebuild_source_sectors(&self, member: u32, source: u32, start: u64, end: u64) -> u64 {
        self.inner.rebuild_source_sectors(member, source, start, end)
    }
    fn rebuild_reads(
        &self,
        member: u32,
        reconstruction: &Reconstruction,
        start: u64,
        end: u64,
        placement: Option<&dyn PlacementState>,
        out: &mut Vec<SourceRead>,
    ) {
        self.inner.rebuild_reads(member, reconstruction, start, end, placement, out);
    }
    fn rebuilds_units_in_place(&self) -> bool {
        self.inner.rebuilds_units_in_place()
    }
    fn stripe_units_apart(&self) -> bool {
        self.inner.stripe_units_apart()
    }
    fn sequential_rebuild(&self) -> bool {
        self.inner.sequential_rebuild()
    }
    fn stripes_in(&self, member: u32, start: u64, end: u64, placement: Option<&dyn PlacementState>) -> (u64, u64) {
        self.inner.stripes_in(member, start, end, placement)
    }
    fn member_sectors(&self) -> u64 {
        self.inner.member_sectors()
    }
    fn distributed_spares(&self) -> u32 {
        self.inner.distributed_spares()
    }
    fn distributed_spare_member(&self, spare: u32, pba: u64) -> u32 {
        self.inner.distributed_spare_member(spare, pba)
    }
}

/// Layout parameters from the configuration, already validated for shape.
#[derive(Debug, Clone)]
pub struct LayoutParams {
    /// Drives in the layout (spares are not).
    pub drives: u32,
    /// Stripe unit, sectors.
    pub stripe_unit_sectors: u64,
    /// Sectors of each drive.
    pub drive_capacity_sectors: u64,
    /// The values of the layout's own `[array]` keys ([`LayoutEntry::own_keys`]), by name;
    /// [`build`] fills in the defaults of those missing. Read them with [`LayoutParams::own`].
    pub own: toml::Table,
}

impl LayoutParams {
    /// Parameters without own keys (a layout built through [`build`] gets its defaults).
    pub fn new(drives: u32, stripe_unit_sectors: u64, drive_capacity_sectors: u64) -> Self {
        LayoutParams { drives, stripe_unit_sectors, drive_capacity_sectors, own: toml::Table::new() }
    }

    /// The same, with own key `name` set to `value` (a number, a string, or a value that
    /// serializes as one, such as a [`ParityRotation`]).
    pub fn with<T: Serialize>(mut self, name: &str, value: T) -> Self {
        let value = toml::Value::try_from(value).expect("an own key's value is a TOML value");
        self.own.insert(name.to_string(), value);
        self
    }

    /// Own key `name`, as a `T`; errors name `key.name` (`key`: the array table's path).
    pub fn own<T: serde::de::DeserializeOwned>(&self, name: &str, key: &str) -> Result<T> {
        keys::read(&self.own, name, key)
    }
}

/// Builds a layout from the array's parameters; errors name keys under `key`.
pub type Constructor = fn(&LayoutParams, &str) -> Result<Box<dyn Layout>>;

/// One layout of the registry.
#[derive(Debug, Clone, Copy)]
pub struct LayoutEntry {
    /// Its name in configurations (`array.layout`).
    pub name: &'static str,
    pub build: Constructor,
    /// One line for the catalogue.
    pub doc: &'static str,
    /// The `[array]` keys only this layout reads, with their types, defaults and docs: given
    /// for another layout they are refused, and a saved configuration shows them only for
    /// this one (see [`keys`]).
    pub own_keys: &'static [keys::OwnKey],
}

/// The layout registry. A new layout is its file and one entry here.
pub const LAYOUTS: &[LayoutEntry] = &[
    LayoutEntry { name: "raid0", build: raid0::Raid0Layout::build, doc: "striping without redundancy", own_keys: &[] },
    LayoutEntry {
        name: "raid1",
        build: raid1::Raid1Layout::build,
        doc: "mirror sets of `copies` drives, striped across sets",
        own_keys: raid1::OWN_KEYS,
    },
    LayoutEntry { name: "raid5", build: raid5::Raid5Layout::build, doc: "rotated single parity", own_keys: raid5::OWN_KEYS },
    LayoutEntry {
        name: "raid6",
        build: raid6::Raid6Layout::build,
        doc: "rotated P and Q parity (Reed-Solomon over GF(2^8), as Linux md computes it), md's left-symmetric placement",
        own_keys: &[],
    },
    LayoutEntry {
        name: "declustered",
        build: declustered::DeclusteredLayout::build,
        doc: "parity declustering (Holland & Gibson): RAID-5 stripes of `stripe_width` units spread over more drives by a \
              balanced block design",
        own_keys: declustered::OWN_KEYS,
    },
    LayoutEntry {
        name: "draid",
        build: draid::DraidLayout::build,
        doc: "OpenZFS dRAID (`draid = \"draid2:8d:1s\"`): fixed-width groups of D + P spread over every child by \
              permutation maps, with distributed spare space",
        own_keys: draid::OWN_KEYS,
    },
    LayoutEntry {
        name: "interleaved",
        build: interleaved::InterleavedLayout::build,
        doc: "interleaved declustering (the thesis's ID): each drive's data backed up in fragments across its cluster",
        own_keys: interleaved::OWN_KEYS,
    },
    LayoutEntry {
        name: "distorted",
        build: distorted::DistortedLayout::build,
        doc: "distorted mirrors (the thesis's DM): pairs whose drives keep their own blocks in place and their partner's \
              copies written anywhere free",
        own_keys: distorted::OWN_KEYS,
    },
    LayoutEntry {
        name: "chained",
        build: chained::ChainedLayout::build,
        doc: "chained declustering: each drive's data mirrored on the next drive, half a drive down",
        own_keys: &[],
    },
    LayoutEntry {
        name: "md_raid10",
        build: md_raid10::MdRaid10Layout::build,
        doc: "Linux md's raid10: near, far or offset copies (`md_layout`, in mdadm's notation)",
        own_keys: md_raid10::OWN_KEYS,
    },
];

/// Layouts registered at run time ([`register`]): tests plug a layout of their own in
/// through the registry alone.
static REGISTERED: std::sync::RwLock<Vec<LayoutEntry>> = std::sync::RwLock::new(Vec::new());

/// Add `entry` to the registry for the rest of the process (a layout defined outside the
/// crate, such as a test's). An entry of a name already known replaces nothing: the first
/// one stays.
pub fn register(entry: LayoutEntry) {
    let mut registered = REGISTERED.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    // (Not `entry_named`, which would wait for the lock held here.)
    let known = LAYOUTS.iter().chain(registered.iter()).any(|e| e.name == entry.name);
    if !known {
        registered.push(entry);
    }
}

/// Every layout: the built-in ones, then the registered ones.
pub fn entries() -> Vec<LayoutEntry> {
    let registered = REGISTERED.read().unwrap_or_else(|poisoned| poisoned.into_inner());
    LAYOUTS.iter().chain(registered.iter()).copied().collect()
}

/// The layout called `name`.
pub fn entry_named(name: &str) -> Option<LayoutEntry> {
    match LAYOUTS.iter().find(|e| e.name == name) {
        Some(e) => Some(*e),
        None => REGISTERED.read().unwrap_or_else(|poisoned| poisoned.into_inner()).iter().find(|e| e.name == name).copied(),
    }
}

/// Build the layout called `name`. `key` is the config path of the layout table. Own keys
/// missing from `params` take their defaults; one the layout does not read is refused.
pub fn build(name: &str, params: &LayoutParams, key: &str) -> Result<Box<dyn Layout>> {
    match entry_named(name) {
        Some(entry) => {
            let mut params = params.clone();
            keys::check_and_fill(name, &mut params.own, key, &["drives"])?;
            (entry.build)(&params, key)
        }
        None => Err(Error::config(
            format!("{key}.layout"),
            format!(
                "unknown layout {name:?}; known layouts: {}",
                entries().iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// Stripes that fit when every drive holds `units_per_drive_per_stripe` units of each stripe.
/// What every layout has: its drives, its stripe unit, and how many stripes fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutShape {
    pub drives: u32,
    pub stripe_unit_sectors: u64,
    /// Stripes: one unit per drive each, as many as a drive holds.
    pub stripes: u64,
}

impl LayoutShape {
    /// The shape for `params`: as many stripes as whole units fit on a drive; an error
    /// naming `{key}.stripe_unit_kib` when not even one does.
    pub(crate) fn fit(params: &LayoutParams, key: &str) -> Result<LayoutShape> {
        let stripes = params.drive_capacity_sectors / params.stripe_unit_sectors;
        if stripes == 0 {
            return Err(Error::config(
                format!("{key}.stripe_unit_kib"),
                format!(
                    "stripe unit ({} sectors) is larger than a drive ({} sectors)",
                    params.stripe_unit_sectors, params.drive_capacity_sectors
                ),
            ));
        }
        Ok(LayoutShape { drives: params.drives, stripe_unit_sectors: params.stripe_unit_sectors, stripes })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A member's redundancy set is what a further failure means: with one failure
    /// tolerated, a second failure loses data exactly when it is in the failed member's set;
    /// with `t`, the member and `t − 1` of its set never lose data, and each of its set loses
    /// data with it and some `t − 1` others of the set; with none, the member's failure alone
    /// loses data and its set is empty.
    pub fn check_redundancy_sets(layout: &dyn Layout) {
        let tolerance = layout.fault_tolerance() as usize;
        for member in 0..layout.drives() {
            let set = layout.redundancy_set(member);
            assert!(!set.contains(&member) && set.windows(2).all(|w| w[0] < w[1]), "{}: set of {member}: {set:?}", layout.name());
            if tolerance == 0 {
                assert!(layout.data_lost(&[member]) && set.is_empty(), "{}: member {member}", layout.name());
                continue;
            }
            assert!(!layout.data_lost(&[member]), "{}: member {member} alone", layout.name());
            if tolerance == 1 {
                for other in (0..layout.drives()).filter(|&o| o != member) {
                    assert_eq!(layout.data_lost(&[member, other]), set.contains(&other), "{}: {member} and {other}", layout.name());
                }
            } else {
                // Tolerated: the member and any `t − 1` of its set. Needed: each of its set
                // loses data with the member and some `t − 1` others of the set (a
                // declustered layout need not lose data with any `t` of them).
                for window in set.windows(tolerance - 1) {
                    let failed: Vec<u32> = std::iter::once(member).chain(window.iter().copied()).collect();
                    assert!(!layout.data_lost(&failed), "{}: {failed:?}", layout.name());
                }
                for &other in &set {
                    let rest: Vec<u32> = set.iter().copied().filter(|&o| o != other).collect();
                    let loses = subsets(&rest, tolerance - 1).into_iter().any(|mut failed| {
                        failed.extend([member, other]);
                        layout.data_lost(&failed)
                    });
                    assert!(loses, "{}: {other} is in {member}'s set but loses nothing with it", layout.name());
                }
            }
        }
    }

    /// Every subset of `items` of `size` elements.
    fn subsets(items: &[u32], size: usize) -> Vec<Vec<u32>> {
        if size == 0 {
            return vec![Vec::new()];
        }
        let mut out = Vec::new();
        for (i, &first) in items.iter().enumerate() {
            for mut rest in subsets(&items[i + 1..], size - 1) {
                rest.push(first);
                out.push(rest);
            }
        }
        out
    }

    /// Every (drive, unit) slot is used by at most one stripe unit, and `locate` inverts
    /// `map_stripe`: the shared property every layout must have.
    pub fn check_bijective(layout: &dyn Layout) {
        check_redundancy_sets(layout);
        let mut seen = std::collections::HashSet::new();
        let mut map = StripeMap::default();
        let unit = layout.stripe_unit_sectors();
        for stripe in 0..layout.stripes() {
            layout.map_stripe(stripe, &mut map);
            assert_eq!(map.stripe, stripe);
            for i in 0..map.data_units() {
                // The one-unit lookup agrees with the map where the layout offers it, and
                // is not offered where a data unit has several copies.
                match layout.data_unit(stripe, i as u32) {
                    Some(loc) => assert_eq!((map.copies, loc), (1, map.data[i]), "data unit {i} of stripe {stripe}"),
                    None => assert!(map.copies > 1 || layout.name() == "raid1", "{} maps no single unit", layout.name()),
                }
                for (c, loc) in map.copies_of(i).iter().enumerate() {
                    assert!(seen.insert((loc.drive, loc.pba)), "slot used twice: {loc:?}");
                    let role = UnitRole::Data { index: i as u32, copy: c as u32 };
                    assert_eq!(layout.locate(loc.drive, loc.pba + unit - 1), Some((stripe, role)));
                }
            }
            for (p, loc) in map.parity.iter().enumerate() {
                assert!(seen.insert((loc.drive, loc.pba)), "slot used twice: {loc:?}");
                let role = UnitRole::Parity { index: p as u32 };
                assert_eq!(layout.locate(loc.drive, loc.pba), Some((stripe, role)));
            }
        }
    }

    pub fn params(drives: u32) -> LayoutParams {
        LayoutParams::new(drives, 8, 8 * 12 + 5)
    }

    #[test]
    fn unknown_layout_names_the_key_and_the_choices() {
        let err = build("raid9", &params(4), "array").unwrap_err().to_string();
        assert!(err.starts_with("array.layout: unknown layout \"raid9\""), "{err}");
        assert!(err.contains("raid5"));
    }

    #[test]
    fn stripe_unit_larger_than_a_drive_is_rejected() {
        let mut p = params(4);
        p.stripe_unit_sectors = p.drive_capacity_sectors + 1;
        let err = build("raid0", &p, "array").unwrap_err().to_string();
        assert!(err.starts_with("array.stripe_unit_kib:"), "{err}");
    }
}
