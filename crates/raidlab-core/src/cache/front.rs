//! The buffer cache in front of the array (`[cache]`): user requests pass it first, and only
//! its misses and write-backs reach the array.
//!
//! ```text
//!  user request ─▶ FrontCache::arrive ── one access per 4 KiB block (the policy decides)
//!                    read  hit ─────────▶ answered from the cache (after `hit_ms`), or when
//!                                          the block's fill, still in flight, returns
//!                    read  miss ────────▶ a fill read of each run of missed blocks
//!                                          (origin `CacheFill`)
//!                    write, whole block ─▶ write-back: the block is cached dirty, the user
//!                                          answered at once; write-through: sent on
//!                    write, part block ──▶ sent on (origin `CacheWrite`), the cached copy
//!                                          dropped first (destaged if dirty)
//!                    evicted dirty block ▶ a destage write (origin `CacheDestage`)
//!  array completion ─▶ FrontCache::child_done ─▶ the user requests it finishes
//! ```
//!
//! * **Origins.** Every array request the cache issues carries an origin of its own, so the
//!   metrics never take a fill, a write-back or a destage for a user response: the user's
//!   response is recorded when the last array request it waits on completes.
//! * **Miss penalty, live.** The policy's victims are weighed by [`LivePenalty`]: the
//!   controller's failure and rebuild state now (a miss on the failed member costs n − 1
//!   surviving-drive reads, 0 once its rebuild unit is rebuilt and reads are redirected, 1
//!   elsewhere). VDF switches to faulty mode at the failure and back when the rebuild ends,
//!   as `docs/cache.md` describes; RGR is counted with the same penalties.
//! * **Values.** A write's values are those of its own id ([`CACHE_CONTENT_IDS`] + request
//!   id); its destage, and its parts sent on, write exactly those values to the array
//!   ([`crate::array::Controller::submit_with_values`]), so the array's content model checks
//!   what the user wrote. With `content.check`, the cache also keeps the values of each
//!   cached block and checks every hit against the value the user last wrote, and every
//!   fill against it too (a fill overtaken by a newer write is not used).
//! * **Ordering.** The array grants stripe locks in arrival order, so a destage submitted
//!   before a read miss of the same block is on the array before the read is served; a fill
//!   overtaken by a write of its block (the write is cached, or the block dropped) is
//!   *superseded*: its data still answers the reads that were waiting, which arrived before
//!   the write, but never enters the cache.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::placement::{Placement, BLOCK_SECTORS};
use super::{BufferCache, PenaltyView};
use crate::layout::plan::DriveView;
use crate::layout::Layout;
use crate::array::state::UnitState;
use crate::array::state::ArrayState;
use crate::array::Controller;
use crate::content::{initial_value, written_value, ContentStats};
use crate::error::{Error, Result};
use crate::request::{CompletedRequest, Origin, RequestRecord, UserRequest};
use crate::sim::{s_to_ns, Nanos};

/// A user write's values are [`written_value`]s of this plus its request id: far above the
/// ids the array gives the writes it numbers itself (1, 2, …), so the two never meet.
pub const CACHE_CONTENT_IDS: u64 = 1 << 62;

pub use super::config::{CacheConfig, WritePolicy};

/// What the cache in front of the array counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrontStats {
    /// Block accesses by reads, and of them hits (including hits on blocks still filling).
    pub read_blocks: u64,
    pub read_hits: u64,
    /// Block accesses by whole-block writes (a part block is sent on, not counted here), and
    /// of them hits.
    pub write_blocks: u64,
    pub write_hits: u64,
    /// Blocks evicted, and of them dirty blocks written back.
    pub evictions: u64,
    pub destage_writes: u64,
    /// Array requests the cache issued: fill reads (one per run of missed blocks), and
    /// writes sent on (write-through, or the part blocks of a write).
    pub fill_reads: u64,
    pub writes_sent_on: u64,
    /// Surviving-drive reads the read misses cost when they happened (Σ MP_i of Eq. 1), and
    /// of them those of misses while the array was faulty.
    pub miss_penalty: u64,
    /// Read block accesses while the array was faulty, and their miss penalties.
    pub faulty_read_blocks: u64,
    pub faulty_miss_penalty: u64,
    /// Fills whose blocks a newer write overtook (their data answered only the reads waiting).
    pub superseded_fill_blocks: u64,
    /// Destage writes that lost data (a second failure).
    pub lost_destages: u64,
    /// Blocks a fill could not bring because the array lost their data: not cached.
    pub lost_fill_blocks: u64,
}

/// One time-series window's read block accesses, hits and miss penalties (surviving-drive
/// reads): its hit ratio is `read_hits / read_blocks`, its RGR `miss_penalty / read_blocks`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowCounts {
    pub read_blocks: u64,
    pub read_hits: u64,
    pub miss_penalty: u64,
}

/// A user request the cache answers once the array requests it waits on are done.
#[derive(Debug, Clone, Copy)]
struct Parent {
    arrival: Nanos,
    is_write: bool,
    waiting: u32,
    degraded: bool,
    in_failed_set: bool,
    lost: bool,
}

/// An array request the cache issued.
#[derive(Debug)]
enum Child {
    /// A read of blocks `[first, end)`, for the user requests in `waiters`; `seq` is the id
    /// of the request that missed (values written after it are not expected of the fill).
    Fill { first: u64, end: u64, seq: u64, waiters: Vec<u64> },
    /// A write sent on for user request `parent`.
    Write { parent: u64 },
    /// A dirty block written back.
    Destage,
}

/// A user request the cache has answered: what the metrics record of it.
#[derive(Debug, Clone, Copy)]
pub struct Answered {
    pub arrival: Nanos,
    pub is_write: bool,
    pub degraded: bool,
    /// The array's answer lay in a failed member's set ([`CompletedRequest::in_failed_set`]).
    pub in_failed_set: bool,
    pub lost: bool,
}

/// The array's failure and rebuild state ([`ArrayState`]) as a miss penalty
/// ([`PenaltyView`]), for a RAID-5 array whose blocks `placement` locates.
pub struct LivePenalty<'a> {
    state: &'a ArrayState,
    layout: &'a dyn Layout,
    placement: Option<&'a Placement>,
    /// What a miss of a block rebuilt and redirected costs (`cache.rebuilt_miss_reads`).
    rebuilt_miss_reads: u32,
}

impl LivePenalty<'_> {
    /// Whether member `drive` is failed and not yet rebuilt.
    #[inline]
    fn failed(&self, drive: u32) -> bool {
        self.state.failed_members().contains(&drive)
    }

    /// What a read miss of a block on a failed member costs: the array's degraded read reads
    /// every other working unit of the stripe (RAID-5: n − 1; RAID-6: n − 1 with one member
    /// lost, n − 2 with two), each stripe spanning every member; with more members lost than
    /// the layout tolerates, the read is lost and reads nothing.
    #[inline]
    fn degraded_read_cost(&self, placement: &Placement) -> u32 {
        let lost = self.state.failed_members().len() as u32;
        if lost > self.layout.fault_tolerance() {
            return 0;
        }
        placement.drives().saturating_sub(lost)
    }

    /// Whether `block`, on the member being rebuilt, is rebuilt and its reads redirected.
    fn rebuilt(&self, block: u64, member: u32) -> bool {
        let Some(rebuilding) = self.state.rebuilding() else { return false };
        if rebuilding.member != member || !rebuilding.redirect_reads {
            return false;
        }
        let layout = self.layout;
        let lba = block * BLOCK_SECTORS;
        let stripe_sectors = layout.stripe_data_sectors();
        let unit = layout.stripe_unit_sectors();
        let (stripe, offset) = (lba / stripe_sectors, lba % stripe_sectors);
        let Some(location) = layout.data_unit(stripe, (offset / unit) as u32) else { return false };
        let pba = location.pba + offset % unit;
        pba < rebuilding.units.capacity() && rebuilding.states.get(rebuilding.units.unit_of(pba)) == UnitState::Rebuilt
    }
}

impl PenaltyView for LivePenalty<'_> {
    #[inline]
    fn faulty(&self) -> bool {
        self.placement.is_some() && !self.state.failed_members().is_empty()
    }
    fn read_miss(&self, block: u64, drive: u32) -> u32 {
        match self.placement {
            Some(placement) if self.failed(drive) => {
                if self.rebuilt(block, drive) {
                    self.rebuilt_miss_reads
                } else {
                    self.degraded_read_cost(placement)
                }
            }
            _ => 1,
        }
    }
    fn drive_read_miss(&self, drive: u32) -> Option<u32> {
        match self.placement {
            Some(placement) if self.failed(drive) => {
                let started = self.state.rebuilding().is_some_and(|r| r.member == drive && r.redirect_reads && r.states.rebuilt() > 0);
                (!started).then(|| self.degraded_read_cost(placement))
            }
            _ => Some(1),
        }
    }
}

/// The buffer cache in front of the array (see the module docs).
pub struct FrontCache {
    cache: Box<dyn BufferCache>,
    placement: Option<Placement>,
    write_back: bool,
    hit_ns: Nanos,
    rebuilt_miss_reads: u32,
    capacity_sectors: u64,
    parents: FxHashMap<u64, Parent>,
    children: FxHashMap<u64, Child>,
    /// Blocks whose fill is in flight, and the fill's request id.
    filling: FxHashMap<u64, u64>,
    /// Dirty blocks, and the id of the values they hold.
    dirty: FxHashMap<u64, u64>,
    /// Requests answered from the cache, due at `hit_ns` after arrival (in arrival order).
    hits_due: VecDeque<(Nanos, Answered)>,
    /// With `content.check`: each cached block's values, the user's last written value of
    /// each sector written with the id of the write, and the check's counters.
    held: Option<FxHashMap<u64, [u64; BLOCK_SECTORS as usize]>>,
    truth: FxHashMap<u64, (u64, u64)>,
    /// Time-series windows (`metrics.window_s`, ns), and per window the read block
    /// accesses, their hits and their miss penalties (the RGR of each window).
    window_ns: Nanos,
    windows: Vec<WindowCounts>,
    /// Content checks of cached values and fills (the array counts its own).
    pub content: ContentStats,
    /// The first stale sector the cache saw: (lba, expected, actual).
    pub first_stale: Option<(u64, u64, u64)>,
    /// Counters.
    pub stats: FrontStats,
}

impl FrontCache {
    /// The cache `config` describes, in front of `controller`'s array; `check_content` keeps
    /// values for the content check. Errors name `cache.…`.
    pub fn new(
        config: &CacheConfig,
        controller: &Controller,
        check_content: bool,
        window_ns: Nanos,
    ) -> Result<Self> {
        config.validate()?;
        let entry = super::entry_for(&config.policy, "cache.policy")?;
        let layout = controller.layout();
        let unit = layout.stripe_unit_sectors();
        let layout_name = layout.name();
        let placement = if (layout_name == "raid5" || layout_name == "raid6") && unit.is_multiple_of(BLOCK_SECTORS) {
            match Placement::of_parity_layout(layout, "array") {
                Ok(placement) => Some(placement),
                // A plain policy needs no placement (RGR is then not reported); VDF does.
                Err(error) if entry.failure_aware => return Err(error),
                Err(_) => None,
            }
        } else {
            None
        };
        if entry.failure_aware && placement.is_none() {
            return Err(Error::config(
                "cache.policy",
                format!(
                    "{} weighs blocks by their drive in a RAID-5 or RAID-6 array whose stripe unit is a whole number of 4 KiB \
                     blocks; this array is {layout_name} with {} KiB units",
                    entry.name,
                    unit as f64 / 2.0
                ),
            ));
        }
        let cache = super::build(entry.name, config.size_blocks, placement.as_ref(), "cache")?;
        Ok(FrontCache {
            cache,
            placement,
            write_back: config.write_policy == WritePolicy::WriteBack,
            hit_ns: s_to_ns(config.hit_ms / 1e3),
            rebuilt_miss_reads: config.rebuilt_miss_reads,
            capacity_sectors: controller.capacity_sectors(),
            parents: FxHashMap::default(),
            children: FxHashMap::default(),
            filling: FxHashMap::default(),
            dirty: FxHashMap::default(),
            hits_due: VecDeque::new(),
            held: check_content.then(FxHashMap::default),
            truth: FxHashMap::default(),
            window_ns: window_ns.max(1),
            windows: Vec::new(),
            content: ContentStats::default(),
            first_stale: None,
            stats: FrontStats::default(),
        })
    }

    /// The policy's registry name.
    pub fn policy(&self) -> &'static str {
        self.cache.policy()
    }

    /// Capacity, blocks.
    pub fn capacity(&self) -> usize {
        self.cache.capacity()
    }

    /// Blocks cached, and of them dirty.
    pub fn occupancy(&self) -> (usize, usize) {
        (self.cache.len(), self.dirty.len())
    }

    /// User requests waiting on the array.
    pub fn waiting(&self) -> usize {
        self.parents.len()
    }

    /// The hit time, ns.
    pub fn hit_ns(&self) -> Nanos {
        self.hit_ns
    }

    /// Requests answered from the cache and due by `now`, in arrival order.
    pub fn take_due(&mut self, now: Nanos) -> Option<Answered> {
        match self.hits_due.front() {
            Some(&(due, _)) if due <= now => self.hits_due.pop_front().map(|(_, answered)| answered),
            _ => None,
        }
    }

    /// User request `id` (`record`) arrives at `now`: pass it through the cache, submitting
    /// what it must to `controller`, with request ids taken from `next_id`. Says whether the
    /// request waits on the array, was answered at once (nothing to wait for and `hit_ms` =
    /// 0), or is answered at a later time (queued for [`FrontCache::take_due`]).
    pub fn arrive(
        &mut self,
        now: Nanos,
        id: u64,
        record: RequestRecord,
        controller: &mut Controller,
        view: &dyn DriveView,
        next_id: &mut u64,
    ) -> Result<Arrived> {
        let parent = Parent { arrival: now, is_write: record.is_write, waiting: 0, degraded: false, in_failed_set: false, lost: false };
        let mut arrival = Arrival { now, id, record, parent, controller, view, next_id };
        if record.is_write {
            self.write(&mut arrival)?;
        } else {
            self.read(&mut arrival)?;
        }
        if arrival.parent.waiting > 0 {
            self.parents.insert(id, arrival.parent);
            return Ok(Arrived::Waiting);
        }
        let answered = Answered { arrival: now, is_write: record.is_write, degraded: false, in_failed_set: false, lost: false };
        if self.hit_ns == 0 {
            return Ok(Arrived::Answered(answered));
        }
        let due = now + self.hit_ns;
        self.hits_due.push_back((due, answered));
        Ok(Arrived::Due(due))
    }

    fn read(&mut self, a: &mut Arrival<'_>) -> Result<()> {
        let (first, end) = a.blocks();
        // The run of missed blocks not yet submitted, and its fill's id.
        let mut run: Option<(u64, u64)> = None;
        for block in first..end {
            let penalties = LivePenalty { state: a.controller.state(), layout: a.controller.layout(), placement: self.placement.as_ref(), rebuilt_miss_reads: self.rebuilt_miss_reads };
            let faulty = penalties.faulty();
            let (hit, evicted) = self.cache.access_evicting(block, &penalties);
            // A hit costs nothing; only a miss needs its block's penalty looked up.
            let penalty = if hit { 0 } else { self.penalty_of(&penalties, block) };
            self.stats.read_blocks += 1;
            self.stats.faulty_read_blocks += u64::from(faulty);
            self.count_window(a.now, hit, penalty);
            if let Some(evicted) = evicted {
                self.evict(a, evicted)?;
            }
            if hit {
                self.stats.read_hits += 1;
                if let Some((start, fill)) = run.take() {
                    self.submit_fill(a, start, block, fill)?;
                }
                if let Some(&fill) = self.filling.get(&block) {
                    // The block is on its way: answer with the fill.
                    if let Some(Child::Fill { waiters, .. }) = self.children.get_mut(&fill) {
                        if waiters.last() != Some(&a.id) {
                            waiters.push(a.id);
                            a.parent.waiting += 1;
                        }
                    }
                } else {
                    self.check_hit(block, a.record);
                }
                continue;
            }
            self.stats.miss_penalty += u64::from(penalty);
            if faulty {
                self.stats.faulty_miss_penalty += u64::from(penalty);
            }
            let fill = match run {
                Some((_, fill)) => fill,
                None => {
                    let fill = a.next_request_id();
                    run = Some((block, fill));
                    fill
                }
            };
            self.filling.insert(block, fill);
        }
        if let Some((start, fill)) = run {
            self.submit_fill(a, start, end, fill)?;
        }
        Ok(())
    }

    /// Count a read block access at `now` into its window.
    #[inline]
    fn count_window(&mut self, now: Nanos, hit: bool, penalty: u32) {
        let window = now / self.window_ns;
        if window >= crate::metrics::MAX_WINDOWS {
            return;
        }
        let window = window as usize;
        if self.windows.len() <= window {
            self.windows.resize(window + 1, WindowCounts::default());
        }
        let counts = &mut self.windows[window];
        counts.read_blocks += 1;
        counts.read_hits += u64::from(hit);
        counts.miss_penalty += u64::from(penalty);
    }

    /// The read block accesses, hits and miss penalties of each time-series window from the
    /// first (windows after the last read are not kept).
    pub fn windows(&self) -> &[WindowCounts] {
        &self.windows
    }

    /// What a read miss of `block` costs now, surviving-drive reads.
    #[inline]
    fn penalty_of(&self, penalties: &LivePenalty<'_>, block: u64) -> u32 {
        match &self.placement {
            Some(placement) => penalties.read_miss(block, placement.drive(block)),
            None => 1,
        }
    }

    /// Submit fill `fill`, a read of blocks `[first, end)` that the arriving request waits on.
    fn submit_fill(&mut self, a: &mut Arrival<'_>, first: u64, end: u64, fill: u64) -> Result<()> {
        a.parent.waiting += 1;
        self.stats.fill_reads += 1;
        self.children.insert(fill, Child::Fill { first, end, seq: a.id, waiters: vec![a.id] });
        let (lba, sectors) = self.extent(first, end);
        a.submit(fill, Origin::CacheFill, lba, sectors, false, 0)
    }

    /// Sectors of blocks `[first, end)` within the array.
    fn extent(&self, first: u64, end: u64) -> (u64, u32) {
        let lba = first * BLOCK_SECTORS;
        let end = (end * BLOCK_SECTORS).min(self.capacity_sectors);
        (lba, (end - lba) as u32)
    }

    fn write(&mut self, a: &mut Arrival<'_>) -> Result<()> {
        let (first, end) = a.blocks();
        let (id, record) = (a.id, a.record);
        let values = CACHE_CONTENT_IDS + id;
        let write_end = record.lba + record.sectors as u64;
        if self.held.is_some() {
            for lba in record.lba..write_end {
                self.truth.insert(lba, (written_value(values, lba), id));
            }
        }
        if !self.write_back {
            for block in first..end {
                if self.supersede_fill(block) {
                    // Its fill would bring the old values: the block goes, to be read again.
                    self.cache.remove(block);
                } else if let Some(held) = self.held.as_mut().and_then(|held| held.get_mut(&block)) {
                    // A cached copy takes the new values of the sectors written.
                    let start = block * BLOCK_SECTORS;
                    for lba in record.lba.max(start)..write_end.min(start + BLOCK_SECTORS) {
                        held[(lba - start) as usize] = written_value(values, lba);
                    }
                }
            }
            return self.send_on(a, record.lba, write_end);
        }
        // Write-back: whole blocks are cached dirty; a part block at either end is sent on,
        // its cached copy dropped (written back first if dirty, so that the array holds the
        // rest of the block before the part lands on it).
        let mut parts: [Option<u64>; 2] = [None; 2];
        for block in first..end {
            let start = block * BLOCK_SECTORS;
            if record.lba <= start && start + BLOCK_SECTORS <= write_end {
                let penalties = LivePenalty { state: a.controller.state(), layout: a.controller.layout(), placement: self.placement.as_ref(), rebuilt_miss_reads: self.rebuilt_miss_reads };
                let (hit, evicted) = self.cache.access_evicting(block, &penalties);
                self.stats.write_blocks += 1;
                self.stats.write_hits += u64::from(hit);
                if let Some(evicted) = evicted {
                    self.evict(a, evicted)?;
                }
                self.supersede_fill(block);
                self.dirty.insert(block, values);
                if let Some(held) = self.held.as_mut() {
                    held.insert(block, std::array::from_fn(|row| written_value(values, start + row as u64)));
                }
                continue;
            }
            if let Some(dirty_values) = self.dirty.remove(&block) {
                self.destage(a, block, dirty_values)?;
            }
            self.supersede_fill(block);
            self.cache.remove(block);
            if let Some(held) = self.held.as_mut() {
                held.remove(&block);
            }
            parts[usize::from(block != first)] = Some(block);
        }
        match parts {
            [Some(head), Some(tail)] if tail == head + 1 => self.send_on(a, record.lba, write_end),
            _ => {
                for block in parts.into_iter().flatten() {
                    let start = block * BLOCK_SECTORS;
                    self.send_on(a, record.lba.max(start), write_end.min(start + BLOCK_SECTORS))?;
                }
                Ok(())
            }
        }
    }

    /// Send sectors `[from, to)` of the arriving write on to the array, with its values.
    fn send_on(&mut self, a: &mut Arrival<'_>, from: u64, to: u64) -> Result<()> {
        let child = a.next_request_id();
        a.parent.waiting += 1;
        self.stats.writes_sent_on += 1;
        self.children.insert(child, Child::Write { parent: a.id });
        a.submit(child, Origin::CacheWrite, from, (to - from) as u32, true, CACHE_CONTENT_IDS + a.id)
    }

    /// The policy evicted `block`: write it back if dirty; a fill still bringing it no longer
    /// fills the cache.
    fn evict(&mut self, a: &mut Arrival<'_>, block: u64) -> Result<()> {
        self.stats.evictions += 1;
        self.supersede_fill(block);
        if let Some(held) = self.held.as_mut() {
            held.remove(&block);
        }
        if let Some(values) = self.dirty.remove(&block) {
            self.destage(a, block, values)?;
        }
        Ok(())
    }

    /// A write or an eviction overtook the fill still bringing `block`, if any: that fill
    /// answers its readers but no longer enters the cache. True if there was one.
    fn supersede_fill(&mut self, block: u64) -> bool {
        let superseded = self.filling.remove(&block).is_some();
        self.stats.superseded_fill_blocks += u64::from(superseded);
        superseded
    }

    /// Write dirty `block`, holding the values of write `values`, back to the array.
    fn destage(&mut self, a: &mut Arrival<'_>, block: u64, values: u64) -> Result<()> {
        let child = a.next_request_id();
        self.stats.destage_writes += 1;
        self.children.insert(child, Child::Destage);
        let (lba, sectors) = self.extent(block, block + 1);
        a.submit(child, Origin::CacheDestage, lba, sectors, true, values)
    }

    /// A hit on cached `block` by `record`: check the values it returns.
    fn check_hit(&mut self, block: u64, record: RequestRecord) {
        let Some(held) = self.held.as_ref() else { return };
        let start = block * BLOCK_SECTORS;
        let (from, to) = (record.lba.max(start), (record.lba + record.sectors as u64).min(start + BLOCK_SECTORS));
        let values = held.get(&block).copied();
        let mut stale = false;
        for lba in from..to {
            let actual = values.map_or(!0, |values| values[(lba - start) as usize]);
            let expected = self.truth.get(&lba).map_or_else(|| initial_value(lba), |&(value, _)| value);
            stale |= expected != actual;
            self.note_check(lba, expected, actual);
        }
        if stale {
            self.content.stale_reads += 1;
        }
    }

    fn note_check(&mut self, lba: u64, expected: u64, actual: u64) {
        self.content.sectors_checked += 1;
        if expected != actual {
            self.content.stale_sectors += 1;
            self.first_stale.get_or_insert((lba, expected, actual));
        }
    }

    /// An array request the cache issued completed (`done`): the user requests it finishes,
    /// into `answered`.
    pub fn child_done(&mut self, done: &CompletedRequest, controller: &Controller, answered: &mut Vec<Answered>) -> Result<()> {
        let child = self
            .children
            .remove(&done.id)
            .ok_or_else(|| Error::Invariant(format!("the cache's array request {} completed twice or was never issued", done.id)))?;
        match child {
            Child::Destage => {
                self.stats.lost_destages += u64::from(done.lost);
            }
            Child::Write { parent } => self.finish_one(parent, done, answered)?,
            Child::Fill { first, end, seq, waiters } => {
                let mut stale = false;
                for block in first..end {
                    if self.filling.get(&block) != Some(&done.id) {
                        continue; // superseded: not cached any more, or newer values cached
                    }
                    self.filling.remove(&block);
                    if done.lost {
                        // The array lost the block's data: the read failed, and nothing
                        // was brought to keep. A later read misses and asks the array again.
                        self.cache.remove(block);
                        if let Some(held) = self.held.as_mut() {
                            held.remove(&block);
                        }
                        self.stats.lost_fill_blocks += 1;
                    } else if self.held.is_some() {
                        stale |= self.fill_values(block, seq, controller);
                    }
                }
                if stale {
                    self.content.stale_reads += 1;
                }
                for parent in waiters {
                    self.finish_one(parent, done, answered)?;
                }
            }
        }
        Ok(())
    }

    /// Keep the values fill `seq` brought for `block` (what the array's content model holds
    /// now, which it checked the read against), checked against what the user last wrote
    /// before the fill. Returns whether some sector was stale.
    fn fill_values(&mut self, block: u64, seq: u64, controller: &Controller) -> bool {
        let Some(model) = controller.content() else { return false };
        let start = block * BLOCK_SECTORS;
        let values: [u64; BLOCK_SECTORS as usize] = std::array::from_fn(|row| model.expected(start + row as u64));
        let mut stale = false;
        for (row, &actual) in values.iter().enumerate() {
            let lba = start + row as u64;
            if lba >= self.capacity_sectors {
                break;
            }
            match self.truth.get(&lba) {
                Some(&(_, written_by)) if written_by > seq => {} // written after the miss
                truth => {
                    let expected = truth.map_or_else(|| initial_value(lba), |&(value, _)| value);
                    stale |= expected != actual;
                    self.note_check(lba, expected, actual);
                }
            }
        }
        if let Some(held) = self.held.as_mut() {
            held.insert(block, values);
        }
        stale
    }

    fn finish_one(&mut self, parent: u64, done: &CompletedRequest, answered: &mut Vec<Answered>) -> Result<()> {
        let waiting = self
            .parents
            .get_mut(&parent)
            .ok_or_else(|| Error::Invariant(format!("user request {parent} answered twice by the cache")))?;
        waiting.waiting -= 1;
        waiting.degraded |= done.degraded;
        waiting.in_failed_set |= done.in_failed_set;
        waiting.lost |= done.lost;
        if waiting.waiting == 0 {
            let p = self.parents.remove(&parent).expect("just seen");
            answered.push(Answered {
                arrival: p.arrival,
                is_write: p.is_write,
                degraded: p.degraded,
                in_failed_set: p.in_failed_set,
                lost: p.lost,
            });
        }
        Ok(())
    }

    /// Hit ratio of reads, and RGR: surviving-drive reads per read block request (Eq. 1),
    /// over the run and over the time the array was faulty.
    pub fn ratios(&self) -> (f64, f64, f64) {
        let s = &self.stats;
        let ratio = |a: u64, b: u64| if b == 0 { f64::NAN } else { a as f64 / b as f64 };
        (ratio(s.read_hits, s.read_blocks), ratio(s.miss_penalty, s.read_blocks), ratio(s.faulty_miss_penalty, s.faulty_read_blocks))
    }

    /// Whether RGR is counted in surviving-drive reads (a RAID-5 placement); else every
    /// miss counts one read.
    pub fn has_placement(&self) -> bool {
        self.placement.is_some()
    }
}

/// A user request passing the cache, and what its passage submits to the array with.
struct Arrival<'a> {
    now: Nanos,
    id: u64,
    record: RequestRecord,
    /// The array requests it waits on, and what the answer will say.
    parent: Parent,
    controller: &'a mut Controller,
    view: &'a dyn DriveView,
    /// The engine's next request id.
    next_id: &'a mut u64,
}

impl Arrival<'_> {
    /// The 4 KiB blocks `[first, end)` the request touches.
    fn blocks(&self) -> (u64, u64) {
        let end = self.record.lba + self.record.sectors as u64;
        (self.record.lba / BLOCK_SECTORS, end.div_ceil(BLOCK_SECTORS))
    }

    /// An id for an array request of the cache's.
    fn next_request_id(&mut self) -> u64 {
        let id = *self.next_id;
        *self.next_id += 1;
        id
    }

    /// Submit array request `id` of `origin` (a write with the values of write `values`).
    fn submit(&mut self, id: u64, origin: Origin, lba: u64, sectors: u32, is_write: bool, values: u64) -> Result<()> {
        let request = UserRequest::new(id, origin, RequestRecord { arrival: self.now, lba, sectors, is_write });
        self.controller.submit_with_values(self.now, request, values, self.view)
    }
}

/// What [`FrontCache::arrive`] did with a request.
#[derive(Debug, Clone, Copy)]
pub enum Arrived {
    /// It waits on the array.
    Waiting,
    /// The cache answered it at once.
    Answered(Answered),
    /// The cache answers it at this time.
    Due(Nanos),
}
