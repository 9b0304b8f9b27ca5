//! Array state: what each drive slot is and whether it works, what each member is doing, the
//! rebuild in progress and the rebuilds waiting to start, and any layout's placement state
//! ([`ArrayState`]); and, while a lost member is rebuilt, which of its rebuild units are
//! current on the target.
//!
//! A **rebuild unit** is a range of physical sectors of the lost member (the same range on
//! the target): a fixed number of sectors, or whole tracks or cylinders of the drive's
//! geometry, so that a unit in tracks is read track-aligned. Each unit is *unrebuilt*, *in
//! flight* (the rebuild has claimed it and holds its stripes) or *rebuilt*, in two bit
//! vectors: a 20 TB drive in 1 MiB units is 19 M units, 4.8 MB.

use crate::disk::Geometry;
use crate::sim::Nanos;

use super::rebuild_io::Rebuilding;

/// What a member of the array is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberStatus {
    /// Serving requests.
    Working,
    /// Failed, nothing rebuilding it.
    Failed,
    /// Failed, and being rebuilt onto drive slot `target`.
    Rebuilding { target: u32 },
}

/// What a drive slot is to the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotRole {
    /// Holds member `member` of the data layout (a rebuild's target becomes one when the
    /// rebuild completes).
    Member(u32),
    /// A hot spare, or a slot whose spare arrives later: idle until a rebuild writes it.
    Spare,
    /// Out of use: a failed drive whose member was rebuilt elsewhere, or the target of an
    /// abandoned rebuild (it holds a partial copy, and writes planned while it was the
    /// target may still be queued at it, so it is not a spare again).
    Retired,
    /// Outside the data layout: a drive the array uses for something of its own, such as a
    /// log (the layout's planner addresses it by slot; no member lives there, and rebuilds
    /// neither read nor write it).
    Outside,
}

pub use crate::layout::PlacementState;

/// Everything the array knows of its drives and members that changes as the run goes: the
/// one place planners, the content model, the rebuild and the buffer cache's live penalty
/// read it from. The controller owns it and is the only writer.
///
/// Slots are numbered members first (slot `m` holds member `m` until a rebuild moves it),
/// then spares, then drives outside the data layout.
#[derive(Debug)]
pub struct ArrayState {
    /// Per slot: whether it cannot be read (failed, or a rebuild target not yet current).
    pub(super) failed: Vec<bool>,
    /// The first slot that is a distributed spare (every one from it is); `u32::MAX` when
    /// the layout keeps none.
    pub(super) first_distributed_spare: u32,
    /// Per slot: whether it cannot be read but takes writes (a rebuild target).
    pub(super) write_only: Vec<bool>,
    /// Per slot: what it is.
    pub(super) roles: Vec<SlotRole>,
    /// The slot of every member (a rebuild moves a member to its target).
    pub(super) member_slot: Vec<u32>,
    pub(super) member_status: Vec<MemberStatus>,
    /// The failed members (not slots), in failure order, for the layout's data-loss rule.
    pub(super) failed_members: Vec<u32>,
    /// When each member failed (`None` while it works).
    pub(super) member_failed_at: Vec<Option<Nanos>>,
    /// Per slot: whether it holds a failed member or one of a failed member's redundancy
    /// set (the thesis's "set with a failed disk": a mirror pair, an interleaved cluster).
    /// Empty while no member has failed.
    pub(super) failed_set: Vec<bool>,
    /// Whether [`ArrayState::failed_set`] holds every member (a parity group that is the
    /// whole array): then every piece is in it, with no search.
    pub(super) failed_set_is_every_member: bool,
    /// Whether data has been lost.
    pub(super) data_lost: bool,
    /// The rebuild in progress.
    pub(super) rebuild: Option<Box<Rebuilding>>,
    /// Spare slots present and unused, each with the time from which a rebuild may use it
    /// (`rebuild.delay_s` after its arrival).
    pub(super) spare_pool: Vec<(u32, Nanos)>,
    /// Failed members not being rebuilt, in the order they are served (an abandoned
    /// rebuild's member first), each with the time from which its rebuild may start
    /// (`rebuild.delay_s` after its failure).
    pub(super) waiting_members: Vec<(u32, Nanos)>,
    /// The layout's placement chosen at write time, if it keeps any.
    pub(super) placement: Option<Box<dyn PlacementState>>,
}

impl ArrayState {
    /// The state of an array of `members` working members and no other slot.
    pub fn new(members: u32, placement: Option<Box<dyn PlacementState>>) -> ArrayState {
        let n = members as usize;
        ArrayState {
            failed: vec![false; n],
            write_only: vec![false; n],
            roles: (0..members).map(SlotRole::Member).collect(),
            member_slot: (0..members).collect(),
            member_status: vec![MemberStatus::Working; n],
            failed_members: Vec::new(),
            member_failed_at: vec![None; n],
            failed_set: Vec::new(),
            failed_set_is_every_member: false,
            data_lost: false,
            rebuild: None,
            spare_pool: Vec::new(),
            waiting_members: Vec::new(),
            placement,
            first_distributed_spare: u32::MAX,
        }
    }

    /// Whether slot `slot` is a distributed spare (dRAID's, `Layout::distributed_spares`):
    /// its sectors lie in the members' free columns.
    pub fn is_distributed_spare(&self, slot: u32) -> bool {
        slot >= self.first_distributed_spare
    }

    /// Recompute [`ArrayState::failed_set`] from the failed members and `layout`'s
    /// redundancy sets.
    pub(super) fn refresh_failed_set(&mut self, layout: &dyn crate::layout::Layout) {
        self.failed_set.clear();
        self.failed_set_is_every_member = false;
        if self.failed_members.is_empty() {
            return;
        }
        self.failed_set.resize(self.failed.len(), false);
        for &member in &self.failed_members {
            for m in std::iter::once(member).chain(layout.redundancy_set(member)) {
                self.failed_set[self.member_slot[m as usize] as usize] = true;
            }
        }
        self.failed_set_is_every_member = self.member_slot.iter().all(|&slot| self.failed_set[slot as usize]);
    }

    /// Add a slot of `role` after the last; returns it.
    pub(super) fn add_slot(&mut self, role: SlotRole) -> u32 {
        self.failed.push(false);
        self.write_only.push(false);
        self.roles.push(role);
        (self.roles.len() - 1) as u32
    }

    /// Drive slots (members, spares and drives outside the layout).
    pub fn slots(&self) -> u32 {
        self.roles.len() as u32
    }

    /// What slot `slot` is.
    pub fn role(&self, slot: u32) -> SlotRole {
        self.roles[slot as usize]
    }

    /// Whether slot `slot` cannot be read (failed, or a rebuild target).
    #[inline(always)]
    pub fn is_failed(&self, slot: u32) -> bool {
        self.failed[slot as usize]
    }

    /// Per slot: whether it cannot be read, and whether it takes writes all the same.
    pub fn failed_and_write_only(&self) -> (&[bool], &[bool]) {
        (&self.failed, &self.write_only)
    }

    /// The slot member `member` lives in.
    pub fn member_slot(&self, member: u32) -> u32 {
        self.member_slot[member as usize]
    }

    /// The member living in slot `slot`, if any.
    pub fn member_in_slot(&self, slot: u32) -> Option<u32> {
        match self.roles.get(slot as usize) {
            Some(SlotRole::Member(member)) => Some(*member),
            _ => None,
        }
    }

    /// The status of member `member`.
    pub fn member_status(&self, member: u32) -> MemberStatus {
        match (self.member_status[member as usize], self.rebuild.as_deref()) {
            (MemberStatus::Failed, Some(r)) if r.member == member => MemberStatus::Rebuilding { target: r.target },
            (status, _) => status,
        }
    }

    /// The failed members, in failure order.
    pub fn failed_members(&self) -> &[u32] {
        &self.failed_members
    }

    /// When member `member` failed (`None` while it works).
    pub fn member_failed_at(&self, member: u32) -> Option<Nanos> {
        self.member_failed_at[member as usize]
    }

    /// Whether data has been lost (the failed members defeat the layout's redundancy).
    pub fn data_lost(&self) -> bool {
        self.data_lost
    }

    /// The rebuild in progress.
    pub fn rebuilding(&self) -> Option<&Rebuilding> {
        self.rebuild.as_deref()
    }

    /// The spare slots present and unused, each with the time from which a rebuild may use it.
    pub fn spare_pool(&self) -> &[(u32, Nanos)] {
        &self.spare_pool
    }

    /// The failed members waiting for a rebuild, each with the time from which it may start.
    pub fn waiting_members(&self) -> &[(u32, Nanos)] {
        &self.waiting_members
    }

    /// The layout's placement state, if it keeps one.
    pub fn placement(&self) -> Option<&dyn PlacementState> {
        self.placement.as_deref()
    }
}

/// How the lost member's sectors are cut into rebuild units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnitBounds {
    /// Units of `sectors` sectors each (the last one may be shorter).
    Fixed { sectors: u64 },
    /// Units starting at these sectors (sorted, the first 0): whole tracks or cylinders.
    Starts(Vec<u64>),
}

/// What the rebuild unit is counted in (`rebuild.unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitMeasure {
    Sectors(u64),
    Tracks(u32),
    Cylinders(u32),
}

/// The rebuild units of one drive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuildUnits {
    bounds: UnitBounds,
    /// Sectors of the drive covered (the units end here).
    capacity: u64,
    count: u64,
}

impl RebuildUnits {
    /// Units of `measure` over the first `capacity` sectors of a drive of `geometry`.
    /// Tracks and cylinders follow the geometry: a unit of `k` tracks is `k` consecutive
    /// tracks in LBA order, so its first sector is a track's first LBA.
    pub fn new(geometry: &Geometry, capacity: u64, measure: UnitMeasure) -> RebuildUnits {
        let bounds = match measure {
            UnitMeasure::Sectors(sectors) => UnitBounds::Fixed { sectors: sectors.max(1) },
            UnitMeasure::Tracks(k) => UnitBounds::Starts(track_starts(geometry, capacity, k.max(1), false)),
            UnitMeasure::Cylinders(k) => UnitBounds::Starts(track_starts(geometry, capacity, k.max(1), true)),
        };
        let count = match &bounds {
            UnitBounds::Fixed { sectors } => capacity.div_ceil(*sectors),
            UnitBounds::Starts(starts) => starts.len() as u64,
        };
        RebuildUnits { bounds, capacity, count }
    }

    /// Units of a fixed `sectors` each over `capacity` sectors (tests, and layouts without a
    /// geometry).
    pub fn fixed(capacity: u64, sectors: u64) -> RebuildUnits {
        let sectors = sectors.max(1);
        RebuildUnits { bounds: UnitBounds::Fixed { sectors }, capacity, count: capacity.div_ceil(sectors) }
    }

    /// Number of units.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Sectors covered.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The sectors `[start, end)` of unit `unit`.
    pub fn range(&self, unit: u64) -> (u64, u64) {
        match &self.bounds {
            UnitBounds::Fixed { sectors } => {
                let start = unit * sectors;
                (start, (start + sectors).min(self.capacity))
            }
            UnitBounds::Starts(starts) => {
                let start = starts[unit as usize];
                let end = starts.get(unit as usize + 1).copied().unwrap_or(self.capacity);
                (start, end)
            }
        }
    }

    /// The unit holding sector `pba` (below the capacity).
    pub fn unit_of(&self, pba: u64) -> u64 {
        match &self.bounds {
            UnitBounds::Fixed { sectors } => pba / sectors,
            UnitBounds::Starts(starts) => (starts.partition_point(|&s| s <= pba) - 1) as u64,
        }
    }

    /// The largest unit, sectors.
    pub fn max_sectors(&self) -> u64 {
        match &self.bounds {
            UnitBounds::Fixed { sectors } => (*sectors).min(self.capacity),
            UnitBounds::Starts(starts) => {
                (0..starts.len()).map(|i| self.range(i as u64)).map(|(a, b)| b - a).max().unwrap_or(0)
            }
        }
    }
}

/// First sectors of groups of `k` tracks (or cylinders, when `cylinders`) below `capacity`,
/// found by walking the drive's runs of consecutive sectors in LBA order.
fn track_starts(geometry: &Geometry, capacity: u64, k: u32, cylinders: bool) -> Vec<u64> {
    let capacity = capacity.min(geometry.capacity_sectors());
    let mut starts = Vec::new();
    let mut lba = 0u64;
    let mut previous: Option<(u32, u32)> = None;
    let mut in_group = 0u32;
    let mut run = None;
    while lba < capacity {
        let r = match run {
            None => geometry.locate_run(lba),
            Some(ref p) => geometry.next_run(p, lba),
        };
        let place = (r.address.cylinder, if cylinders { 0 } else { r.address.surface });
        if previous != Some(place) {
            if in_group == 0 {
                starts.push(lba);
            }
            in_group += 1;
            if in_group == k {
                in_group = 0;
            }
            previous = Some(place);
        }
        lba += r.sectors as u64;
        run = Some(r);
    }
    if starts.is_empty() {
        starts.push(0);
    }
    starts
}

/// The state of one rebuild unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitState {
    Unrebuilt,
    InFlight,
    Rebuilt,
}

/// The state of every rebuild unit of a lost member, in two bit vectors.
#[derive(Debug, Clone)]
pub struct UnitStates {
    rebuilt: Vec<u64>,
    in_flight: Vec<u64>,
    count: u64,
    rebuilt_count: u64,
}

impl UnitStates {
    /// `count` units, all unrebuilt.
    pub fn new(count: u64) -> Self {
        let words = count.div_ceil(64) as usize;
        UnitStates { rebuilt: vec![0; words], in_flight: vec![0; words], count, rebuilt_count: 0 }
    }

    #[inline]
    fn bit(v: &[u64], unit: u64) -> bool {
        v[(unit / 64) as usize] >> (unit % 64) & 1 == 1
    }

    /// State of unit `unit`.
    #[inline]
    pub fn get(&self, unit: u64) -> UnitState {
        if Self::bit(&self.rebuilt, unit) {
            UnitState::Rebuilt
        } else if Self::bit(&self.in_flight, unit) {
            UnitState::InFlight
        } else {
            UnitState::Unrebuilt
        }
    }

    /// Claim an unrebuilt unit for the rebuild. Returns false if it was not unrebuilt.
    pub fn claim(&mut self, unit: u64) -> bool {
        if self.get(unit) != UnitState::Unrebuilt {
            return false;
        }
        self.in_flight[(unit / 64) as usize] |= 1 << (unit % 64);
        true
    }

    /// Give a claimed unit back (its rebuild was abandoned).
    pub fn release(&mut self, unit: u64) {
        self.in_flight[(unit / 64) as usize] &= !(1 << (unit % 64));
    }

    /// Mark unit `unit` current. Returns false (and changes nothing) if it already was: a
    /// unit becomes current once.
    pub fn mark_rebuilt(&mut self, unit: u64) -> bool {
        if Self::bit(&self.rebuilt, unit) {
            return false;
        }
        let w = (unit / 64) as usize;
        self.rebuilt[w] |= 1 << (unit % 64);
        self.in_flight[w] &= !(1 << (unit % 64));
        self.rebuilt_count += 1;
        true
    }

    /// Units current.
    pub fn rebuilt(&self) -> u64 {
        self.rebuilt_count
    }

    /// Units in all.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether every unit is current.
    pub fn complete(&self) -> bool {
        self.rebuilt_count == self.count
    }

    /// The last unit before `before` that is unrebuilt, without wrapping; `None` if there is
    /// none.
    pub fn prev_unrebuilt(&self, before: u64) -> Option<u64> {
        self.prev_unrebuilt_in(0, before)
    }

    /// The last unrebuilt unit in `[start, before)`; `None` if there is none. Reads only the
    /// words of the range.
    pub fn prev_unrebuilt_in(&self, start: u64, before: u64) -> Option<u64> {
        let mut end = before.min(self.count);
        while end > start {
            let unit = end - 1;
            let w = (unit / 64) as usize;
            let bits = unit % 64 + 1;
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let free = !(self.rebuilt[w] | self.in_flight[w]) & mask;
            if free != 0 {
                let found = w as u64 * 64 + 63 - free.leading_zeros() as u64;
                return (found >= start).then_some(found);
            }
            end = w as u64 * 64;
        }
        None
    }

    /// The first unrebuilt unit (neither current nor in flight) in `[from, end)`, without
    /// wrapping; `None` if there is none. Reads only the words of the range (64 units a
    /// word), so a search inside a small range of a large drive stays small.
    pub fn next_unrebuilt_in(&self, from: u64, end: u64) -> Option<u64> {
        let end = end.min(self.count);
        let mut unit = from;
        while unit < end {
            let w = (unit / 64) as usize;
            // Free units of this word from `unit` on (bits shifted in at the top are 0).
            let free = !(self.rebuilt[w] | self.in_flight[w]) >> (unit % 64);
            if free == 0 {
                unit = (w as u64 + 1) * 64;
                continue;
            }
            let found = unit + free.trailing_zeros() as u64;
            return (found < end).then_some(found);
        }
        None
    }

    /// The first unit at or after `from` that is unrebuilt (neither current nor in flight),
    /// wrapping around to the start; `None` if there is none.
    pub fn next_unrebuilt(&self, from: u64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let from = from % self.count;
        self.next_unrebuilt_in(from, self.count).or_else(|| self.next_unrebuilt_in(0, from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::presets;

    #[test]
    fn unit_states_move_forward_only_and_count_each_unit_once() {
        let mut s = UnitStates::new(130);
        assert_eq!(s.next_unrebuilt(0), Some(0));
        assert!(s.claim(0));
        assert!(!s.claim(0));
        assert_eq!(s.get(0), UnitState::InFlight);
        assert_eq!(s.next_unrebuilt(0), Some(1));
        assert!(s.mark_rebuilt(0));
        assert!(!s.mark_rebuilt(0));
        for u in 1..129 {
            assert!(s.mark_rebuilt(u));
        }
        assert_eq!(s.next_unrebuilt(5), Some(129));
        assert!(s.claim(129));
        assert_eq!(s.next_unrebuilt(0), None);
        s.release(129);
        assert_eq!(s.next_unrebuilt(3), Some(129));
        assert!(s.mark_rebuilt(129));
        assert!(s.complete());
        assert_eq!(s.rebuilt(), 130);
    }

    #[test]
    fn next_unrebuilt_in_agrees_with_a_plain_scan_of_the_range() {
        let mut states = UnitStates::new(300);
        for u in (0..300).filter(|u| u % 7 != 3 && u % 11 != 5) {
            states.mark_rebuilt(u);
        }
        states.claim(3);
        for from in 0..305 {
            for end in [from, from + 1, from + 9, from + 70, 400] {
                let plain = (from..end.min(300)).find(|&u| states.get(u) == UnitState::Unrebuilt);
                assert_eq!(states.next_unrebuilt_in(from, end), plain, "[{from}, {end})");
            }
        }
    }

    #[test]
    fn next_unrebuilt_agrees_with_a_plain_scan() {
        let mut rng = crate::sim::RngStream::new(9, crate::sim::StreamId::Policy(0));
        for count in [1u64, 63, 64, 65, 200] {
            let mut s = UnitStates::new(count);
            for _ in 0..count {
                let u = rng.below(count);
                if rng.below(2) == 0 {
                    s.claim(u);
                } else {
                    s.mark_rebuilt(u);
                }
                let from = rng.below(count);
                let plain = (from..count).chain(0..from).find(|&u| s.get(u) == UnitState::Unrebuilt);
                assert_eq!(s.next_unrebuilt(from), plain, "{count} units from {from}");
                let before = (0..from).rev().find(|&u| s.get(u) == UnitState::Unrebuilt);
                assert_eq!(s.prev_unrebuilt(from), before, "{count} units before {from}");
            }
        }
    }

    #[test]
    fn track_units_start_on_track_boundaries_and_cover_the_drive() {
        let model = presets::preset("ibm18es").unwrap();
        let geometry = Geometry::new(&model, "drive").unwrap();
        let capacity = geometry.capacity_sectors();
        let one = RebuildUnits::new(&geometry, capacity, UnitMeasure::Tracks(1));
        let four = RebuildUnits::new(&geometry, capacity, UnitMeasure::Tracks(4));
        let cylinders = RebuildUnits::new(&geometry, capacity, UnitMeasure::Cylinders(1));
        // The 18ES has 5 surfaces: tracks per cylinder.
        assert!(one.count() > 50_000, "{} tracks", one.count());
        assert_eq!(four.count(), one.count().div_ceil(4));
        assert!(cylinders.count() * 5 >= one.count() && cylinders.count() * 5 - one.count() < 5 * 50);
        for units in [&one, &four, &cylinders] {
            let mut end = 0;
            for u in 0..units.count() {
                let (a, b) = units.range(u);
                assert_eq!(a, end);
                assert!(b > a);
                assert_eq!(units.unit_of(a), u);
                assert_eq!(units.unit_of(b - 1), u);
                end = b;
            }
            assert_eq!(end, capacity);
        }
        // Every one-track unit lies on one track.
        for u in (0..one.count()).step_by(997) {
            let (a, b) = one.range(u);
            let (x, y) = (geometry.locate(a), geometry.locate(b - 1));
            assert_eq!((x.cylinder, x.surface), (y.cylinder, y.surface), "unit {u}");
            assert!(b - a <= x.sectors_per_track as u64);
        }
    }
}
