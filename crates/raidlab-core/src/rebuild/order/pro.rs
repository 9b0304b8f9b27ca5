//! PRO, popularity-based reconstruction (Tian et al., seed 000 §3): the lost units users read
//! are rebuilt first.
//!
//! - **Access Monitor** (§3.3 AM, §3.4): from the rebuild's start, every user read of a lost
//!   unit counts one for the *hot zone* holding it. The first read of an unrebuilt unit N
//!   outside every zone creates a zone `[N, N + L)`, clipped at the next zone above it (the
//!   non-overlap rule, §3.4), at most `max_zones` of them. A zone is reclaimed once every
//!   unit of it is rebuilt or being rebuilt.
//! - **Reconstruction Scheduler** (§3.2, §3.3 RS): one thread per zone. When the running
//!   thread has used its time slice of `time_slice_units` units, the thread whose zone was
//!   read most since the last decision gets the next slice, and every popularity restarts
//!   from zero.
//! - **Executor**: whichever executor the run names (the paper's is DOR) asks this order
//!   for its next unit.
//!
//! A decision costs O(1) and a counted read O(log n) for n live zones: the zones read since
//! the last decision sit in a binary max-heap with their positions, and the reset of every
//! popularity is an epoch counter that makes the older counts and positions stale at once
//! (the paper's linear scan is O(n), §4.4).
//!
//! What the paper leaves open (notes A1.7) is a setting in `[rebuild.pro]`, each default the
//! notes' recommendation; `docs/reproduction.md` lists them as raidlab's choices.

use std::collections::{BTreeMap, VecDeque};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{DriveState, Order, ReadSpan};
use crate::array::state::{RebuildUnits, UnitState, UnitStates};
use crate::disk::Geometry;
use crate::error::{Error, Result};
use crate::rebuild::RebuildConfig;

pub const DOC: &str =
    "popularity-based (PRO): hot zones of the units users read, rebuilt first, in time slices to the most-read zone";

/// How units outside every hot zone are rebuilt (notes A1.7 item 1; the paper is silent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum OutsideZones {
    /// A sequential sweep from the lowest unrebuilt unit up, run only while no zone is alive.
    #[default]
    SweepWhenNoZone,
    /// A permanent default thread over every unit, popularity always 0: it takes a slice
    /// whenever no zone was read since the last decision.
    DefaultThread,
}

/// Which thread wins when several share the highest popularity (notes A1.7 item 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum Ties {
    /// The running thread keeps going if it is alive and among the most popular
    /// (sequentiality); else the zone with the lowest start.
    #[default]
    KeepRunning,
    /// Always the zone with the lowest start among the most popular.
    LowestStart,
}

/// When the scheduler generates the jobs of a slice (notes A1.7 item 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum JobQueue {
    /// One job each time the executor asks for a unit: the queue is as deep as the
    /// executor's look-ahead (DOR's buffers), so popularity stays current.
    #[default]
    OnDemand,
    /// The whole slice's jobs at the decision, queued FIFO and handed out in turn.
    WholeSlice,
}

/// How a read that touches several lost units counts (notes A1.7 item 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum MultiUnitReads {
    /// One per request for each zone it touches.
    #[default]
    PerZone,
    /// One per unit it touches.
    PerUnit,
}

/// Which reads count on a mirror, where every read's data is also on the lost drive (notes
/// A1.7 item 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum MirrorReads {
    /// Every read of the lost member's data.
    #[default]
    All,
    /// Only reads whose first unit is not yet rebuilt.
    UnrebuiltOnly,
}

/// PRO's settings (`[rebuild.pro]`), with the paper's values (§3.2, §3.4) and the notes'
/// recommended choices for what the paper leaves open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProConfig {
    /// Hot-zone length L, rebuild units: the default and the most (§3.4: 1024).
    #[serde(default = "default_zone_units")]
    pub zone_units: u64,
    /// Hot zones (and threads) at once (§3.4: 128). A read that would create one more
    /// creates none and is not counted.
    #[serde(default = "default_max_zones")]
    pub max_zones: u32,
    /// Time slice, rebuild units (§3.2: 64 consecutive data units).
    #[serde(default = "default_time_slice")]
    pub time_slice_units: u64,
    /// Popularity of a zone when the read that creates it is counted (choice: 1).
    #[serde(default = "default_initial_popularity")]
    pub initial_popularity: u32,
    #[serde(default)]
    pub outside_zones: OutsideZones,
    #[serde(default)]
    pub ties: Ties,
    #[serde(default)]
    pub job_queue: JobQueue,
    #[serde(default)]
    pub multi_unit_reads: MultiUnitReads,
    #[serde(default)]
    pub mirror_reads: MirrorReads,
}

fn default_zone_units() -> u64 {
    1024
}
fn default_max_zones() -> u32 {
    128
}
fn default_time_slice() -> u64 {
    64
}
fn default_initial_popularity() -> u32 {
    1
}

impl Default for ProConfig {
    fn default() -> Self {
        ProConfig {
            zone_units: default_zone_units(),
            max_zones: default_max_zones(),
            time_slice_units: default_time_slice(),
            initial_popularity: default_initial_popularity(),
            outside_zones: OutsideZones::default(),
            ties: Ties::default(),
            job_queue: JobQueue::default(),
            multi_unit_reads: MultiUnitReads::default(),
            mirror_reads: MirrorReads::default(),
        }
    }
}

impl ProConfig {
    /// Errors name the key under `rebuild.pro.`.
    pub fn validate(&self) -> Result<()> {
        if self.zone_units == 0 {
            return Err(Error::config("rebuild.pro.zone_units", "must be at least 1"));
        }
        if self.max_zones == 0 || self.max_zones > 1 << 20 {
            return Err(Error::config("rebuild.pro.max_zones", "must be between 1 and 1,048,576"));
        }
        if self.time_slice_units == 0 {
            return Err(Error::config("rebuild.pro.time_slice_units", "must be at least 1"));
        }
        Ok(())
    }
}

/// No heap position (a zone not read since the last decision).
const NOWHERE: u32 = u32::MAX;

/// A hot zone and its reconstruction thread.
#[derive(Debug, Clone)]
struct Zone {
    /// Units `[start, end)`.
    start: u64,
    end: u64,
    /// Below it, every unit of the zone is rebuilt or claimed.
    cursor: u64,
    /// Reads since the last decision, valid when `epoch` is the scheduler's.
    popularity: u32,
    epoch: u64,
    /// Position in the heap, valid when `epoch` is the scheduler's.
    heap_pos: u32,
    alive: bool,
}

/// The thread that holds the slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Running {
    Nobody,
    Zone(u32),
    /// The sweep of units outside zones (or the default thread).
    Sweep,
}

/// Popularity-based reconstruction.
pub struct Pro {
    config: ProConfig,
    /// Zone slots (reused once reclaimed) and the free ones.
    zones: Vec<Zone>,
    free: Vec<u32>,
    /// Live zones by start unit.
    by_start: BTreeMap<u64, u32>,
    /// Zones read since the last decision: a max-heap on (popularity, lower start).
    heap: Vec<u32>,
    epoch: u64,
    running: Running,
    slice_left: u64,
    /// The sweep's next unit.
    sweep_cursor: u64,
    /// `job_queue = "whole_slice"`: the units of the slice, in order.
    queue: VecDeque<u64>,
    /// Counts for tests and the summary: scheduling decisions, zones created, and heap steps
    /// (comparisons that moved an entry), to check the O(log n) bound by counting.
    pub decisions: u64,
    pub zones_created: u64,
    pub heap_steps: u64,
    /// User reads of lost units seen.
    pub reads_seen: u64,
}

impl Pro {
    pub fn boxed(config: &RebuildConfig) -> Box<dyn Order> {
        Box::new(Pro::new(config.pro.unwrap_or_default()))
    }

    /// PRO with `config` (validated).
    pub fn new(config: ProConfig) -> Pro {
        Pro {
            config,
            zones: Vec::new(),
            free: Vec::new(),
            by_start: BTreeMap::new(),
            heap: Vec::new(),
            epoch: 1,
            running: Running::Nobody,
            slice_left: 0,
            sweep_cursor: 0,
            queue: VecDeque::new(),
            decisions: 0,
            zones_created: 0,
            heap_steps: 0,
            reads_seen: 0,
        }
    }

    /// Live zones, as `(start, end)` in start order.
    pub fn zones(&self) -> Vec<(u64, u64)> {
        self.by_start.values().map(|&z| (self.zones[z as usize].start, self.zones[z as usize].end)).collect()
    }

    /// The popularity of the live zone starting at `start` since the last decision.
    pub fn popularity(&self, start: u64) -> Option<u32> {
        self.by_start.get(&start).map(|&z| self.current_popularity(z))
    }

    /// The start of the zone whose thread holds the slice (`None` for the sweep or nobody).
    pub fn running_zone(&self) -> Option<u64> {
        match self.running {
            Running::Zone(z) => Some(self.zones[z as usize].start),
            _ => None,
        }
    }

    fn current_popularity(&self, z: u32) -> u32 {
        let zone = &self.zones[z as usize];
        if zone.epoch == self.epoch {
            zone.popularity
        } else {
            0
        }
    }

    /// The live zone holding unit `unit`.
    fn zone_of(&self, unit: u64) -> Option<u32> {
        let (_, &z) = self.by_start.range(..=unit).next_back()?;
        (unit < self.zones[z as usize].end).then_some(z)
    }

    // -- the heap of zones read since the last decision --------------------------------------

    /// Whether zone `a` ranks above zone `b`: more popular, or as popular and lower.
    fn above(&self, a: u32, b: u32) -> bool {
        let (za, zb) = (&self.zones[a as usize], &self.zones[b as usize]);
        (za.popularity, std::cmp::Reverse(za.start)) > (zb.popularity, std::cmp::Reverse(zb.start))
    }

    fn place(&mut self, pos: usize, z: u32) {
        self.heap[pos] = z;
        self.zones[z as usize].heap_pos = pos as u32;
    }

    fn sift_up(&mut self, mut pos: usize) {
        let z = self.heap[pos];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if !self.above(z, self.heap[parent]) {
                break;
            }
            self.heap_steps += 1;
            let p = self.heap[parent];
            self.place(pos, p);
            pos = parent;
        }
        self.place(pos, z);
    }

    fn sift_down(&mut self, mut pos: usize) {
        let z = self.heap[pos];
        loop {
            let left = 2 * pos + 1;
            if left >= self.heap.len() {
                break;
            }
            let right = left + 1;
            let child = if right < self.heap.len() && self.above(self.heap[right], self.heap[left]) { right } else { left };
            if !self.above(self.heap[child], z) {
                break;
            }
            self.heap_steps += 1;
            let c = self.heap[child];
            self.place(pos, c);
            pos = child;
        }
        self.place(pos, z);
    }

    /// Count `amount` reads for zone `z` in this epoch.
    fn bump(&mut self, z: u32, amount: u32) {
        let epoch = self.epoch;
        let zone = &mut self.zones[z as usize];
        if zone.epoch != epoch {
            zone.epoch = epoch;
            zone.popularity = amount;
            zone.heap_pos = self.heap.len() as u32;
            self.heap.push(z);
        } else {
            zone.popularity = zone.popularity.saturating_add(amount);
        }
        let pos = self.zones[z as usize].heap_pos as usize;
        self.sift_up(pos);
    }

    /// Take zone `z` out of the heap, if it is in it.
    fn unheap(&mut self, z: u32) {
        let zone = &self.zones[z as usize];
        if zone.epoch != self.epoch || zone.heap_pos == NOWHERE {
            return;
        }
        let pos = zone.heap_pos as usize;
        self.zones[z as usize].heap_pos = NOWHERE;
        let last = self.heap.pop().expect("a zone in the heap");
        if pos < self.heap.len() {
            self.place(pos, last);
            self.sift_down(pos);
            let at = self.zones[last as usize].heap_pos as usize;
            self.sift_up(at);
        }
    }

    // -- the Access Monitor -------------------------------------------------------------------

    /// One user read of lost units `[first, last]`.
    fn observe(&mut self, first: u64, last: u64, states: &UnitStates, copies: bool) {
        if copies && self.config.mirror_reads == MirrorReads::UnrebuiltOnly && states.get(first) == UnitState::Rebuilt {
            return;
        }
        // Count the live zones it touches, from the highest down.
        let mut upper = last;
        loop {
            let Some(z) = self.by_start.range(..=upper).next_back().map(|(_, &z)| z) else { break };
            let (start, end) = (self.zones[z as usize].start, self.zones[z as usize].end);
            if end <= first {
                break;
            }
            let amount = match self.config.multi_unit_reads {
                MultiUnitReads::PerZone => 1,
                MultiUnitReads::PerUnit => (last.min(end - 1) - first.max(start) + 1).min(u32::MAX as u64) as u32,
            };
            self.bump(z, amount);
            if start == 0 {
                break;
            }
            upper = start - 1;
        }
        // A zone starts at the first unit read that lies outside every zone, if it is not
        // rebuilt yet (notes A1.7 item 4).
        let outside = match self.zone_of(first) {
            None => Some(first),
            Some(z) => {
                let end = self.zones[z as usize].end;
                (end <= last && self.zone_of(end).is_none()).then_some(end)
            }
        };
        let Some(n) = outside else { return };
        if states.get(n) != UnitState::Unrebuilt || self.by_start.len() >= self.config.max_zones as usize {
            return;
        }
        let next_start = self.by_start.range(n..).next().map_or(u64::MAX, |(&s, _)| s);
        let end = n.saturating_add(self.config.zone_units).min(next_start).min(states.count());
        let zone = Zone { start: n, end, cursor: n, popularity: 0, epoch: 0, heap_pos: NOWHERE, alive: true };
        let z = match self.free.pop() {
            Some(z) => {
                self.zones[z as usize] = zone;
                z
            }
            None => {
                self.zones.push(zone);
                (self.zones.len() - 1) as u32
            }
        };
        self.by_start.insert(n, z);
        self.zones_created += 1;
        // The creating read counts as the zone's first access (notes A1.7 item 3). A zone
        // of popularity 0 stays out of the heap: it ranks with the zones not read.
        if self.config.initial_popularity > 0 {
            self.bump(z, self.config.initial_popularity);
        }
    }

    /// Reclaim zone `z`: every unit of it is rebuilt or claimed.
    fn reclaim(&mut self, z: u32) {
        self.unheap(z);
        let start = self.zones[z as usize].start;
        self.by_start.remove(&start);
        self.zones[z as usize].alive = false;
        self.free.push(z);
        if self.running == Running::Zone(z) {
            self.running = Running::Nobody;
            self.slice_left = 0;
        }
    }

    // -- the Reconstruction Scheduler ---------------------------------------------------------

    /// Give the next slice to the most popular thread, and restart every popularity from zero.
    fn decide(&mut self) {
        self.decisions += 1;
        let top = self.heap.first().copied();
        let top_popularity = top.map_or(0, |z| self.zones[z as usize].popularity);
        let running_zone = match self.running {
            Running::Zone(z) if self.zones[z as usize].alive => Some(z),
            _ => None,
        };
        // The default thread's popularity is always 0: it wins when no zone was read.
        let default_wins = top.is_none() && self.config.outside_zones == OutsideZones::DefaultThread;
        let keep = self.config.ties == Ties::KeepRunning
            && !default_wins
            && running_zone.is_some_and(|z| self.current_popularity(z) >= top_popularity);
        self.running = if keep {
            Running::Zone(running_zone.expect("checked"))
        } else if let Some(z) = top {
            Running::Zone(z)
        } else if default_wins {
            Running::Sweep
        } else if let Some(z) = running_zone.filter(|_| self.config.ties == Ties::KeepRunning) {
            Running::Zone(z)
        } else if let Some((_, &z)) = self.by_start.iter().next() {
            Running::Zone(z)
        } else {
            Running::Sweep
        };
        self.slice_left = self.config.time_slice_units;
        // Every popularity back to zero: the heap empties, and older counts are stale.
        self.epoch += 1;
        self.heap.clear();
        self.queue.clear();
    }

    /// The running thread's next unit, or `None` when it has none left (a zone is then
    /// reclaimed; the sweep found nothing anywhere).
    fn take_from_running(&mut self, states: &UnitStates) -> Option<u64> {
        match self.running {
            Running::Nobody => None,
            Running::Zone(z) => {
                let (cursor, end) = (self.zones[z as usize].cursor, self.zones[z as usize].end);
                match states.next_unrebuilt_in(cursor, end) {
                    Some(u) => {
                        self.zones[z as usize].cursor = u + 1;
                        Some(u)
                    }
                    None => {
                        self.reclaim(z);
                        None
                    }
                }
            }
            Running::Sweep => {
                let u = states.next_unrebuilt(self.sweep_cursor)?;
                self.sweep_cursor = u + 1;
                Some(u)
            }
        }
    }

    /// Whether the sweep must give way at once: a zone is alive, and the sweep runs only
    /// while none is.
    fn sweep_yields(&self) -> bool {
        self.running == Running::Sweep
            && self.config.outside_zones == OutsideZones::SweepWhenNoZone
            && !self.by_start.is_empty()
    }
}

impl Order for Pro {
    fn next(&mut self, states: &UnitStates, _: &RebuildUnits, _: &[u32], _: &dyn DriveState, _: &Geometry) -> Option<u64> {
        loop {
            if self.config.job_queue == JobQueue::WholeSlice {
                while let Some(u) = self.queue.pop_front() {
                    if states.get(u) == UnitState::Unrebuilt {
                        return Some(u);
                    }
                }
            }
            if self.slice_left == 0 || self.running == Running::Nobody || self.sweep_yields() {
                self.decide();
            }
            let running = self.running;
            match self.config.job_queue {
                JobQueue::OnDemand => match self.take_from_running(states) {
                    Some(u) => {
                        self.slice_left -= 1;
                        return Some(u);
                    }
                    None if running == Running::Sweep => return None,
                    // A zone finished before its slice ended: decide again (A1.7 item 6).
                    None => self.slice_left = 0,
                },
                JobQueue::WholeSlice => {
                    // The slice's jobs, generated at once; the cursors move past each, and a
                    // sweep that wraps round to a unit already queued stops. (Units made
                    // current before their turn are skipped.)
                    while self.slice_left > 0 {
                        let Some(u) = self.take_from_running(states) else { break };
                        if self.queue.contains(&u) {
                            break;
                        }
                        self.queue.push_back(u);
                        self.slice_left -= 1;
                    }
                    self.slice_left = 0;
                    if self.queue.is_empty() && running == Running::Sweep {
                        return None;
                    }
                }
            }
        }
    }

    fn reset(&mut self) {
        *self = Pro::new(self.config);
    }

    fn watches_reads(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("zones_created", self.zones_created), ("decisions", self.decisions), ("reads_seen", self.reads_seen)]
    }

    fn observe_reads(&mut self, reads: &[ReadSpan], states: &UnitStates, copies: bool) {
        self.reads_seen += reads.len() as u64;
        for r in reads {
            self.observe(r.first, r.last.min(states.count().saturating_sub(1)), states, copies);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::state::UnitMeasure;
    use crate::disk::presets;

    struct Idle;
    impl DriveState for Idle {
        fn cylinder(&self, _: u32) -> u32 {
            0
        }
        fn is_idle(&self, _: u32) -> bool {
            true
        }
    }

    fn geometry() -> Geometry {
        Geometry::new(&presets::preset("ibm0661").unwrap(), "drive").unwrap()
    }

    /// PRO over `count` fixed units with `config`, and its unit states.
    fn pro(count: u64, config: ProConfig) -> (Pro, UnitStates, RebuildUnits) {
        (Pro::new(config), UnitStates::new(count), RebuildUnits::fixed(count * 8, 8))
    }

    fn read(p: &mut Pro, states: &UnitStates, first: u64, last: u64) {
        p.observe_reads(&[ReadSpan { first, last }], states, false);
    }

    /// Take the next unit and claim it, as an executor does.
    fn take(p: &mut Pro, states: &mut UnitStates, units: &RebuildUnits) -> Option<u64> {
        let u = p.next(states, units, &[], &Idle, &geometry())?;
        assert!(states.claim(u), "unit {u} handed out twice");
        Some(u)
    }

    /// A zone starts at the unit read and is L long; one below it is clipped at it; one
    /// that would overlap nothing takes its full length; reads inside a zone create none.
    #[test]
    fn zones_are_created_at_the_unit_read_and_clipped_at_the_next_zone() {
        let (mut p, states, _) = pro(10_000, ProConfig::default());
        read(&mut p, &states, 5000, 5000);
        assert_eq!(p.zones(), vec![(5000, 6024)]);
        read(&mut p, &states, 4500, 4500);
        assert_eq!(p.zones(), vec![(4500, 5000), (5000, 6024)], "clipped at the zone above");
        read(&mut p, &states, 3000, 3000);
        assert_eq!(p.zones(), vec![(3000, 4024), (4500, 5000), (5000, 6024)]);
        read(&mut p, &states, 5500, 5500);
        read(&mut p, &states, 3001, 3001);
        assert_eq!(p.zones().len(), 3, "reads inside zones create none");
        assert_eq!(p.popularity(5000), Some(2));
        assert_eq!(p.popularity(3000), Some(2));
        assert_eq!(p.popularity(4500), Some(1));
        // The last zone stops at the end of the drive.
        read(&mut p, &states, 9500, 9500);
        assert_eq!(p.zones().last(), Some(&(9500, 10_000)));
    }

    /// A read of a rebuilt unit outside every zone creates none; the cap on zones holds, and
    /// a read past it is not counted.
    #[test]
    fn no_zone_for_a_rebuilt_unit_and_no_more_than_the_cap() {
        let config = ProConfig { max_zones: 3, ..Default::default() };
        let (mut p, mut states, _) = pro(100_000, config);
        states.mark_rebuilt(7);
        read(&mut p, &states, 7, 7);
        assert!(p.zones().is_empty());
        for n in [10_000, 20_000, 30_000, 40_000] {
            read(&mut p, &states, n, n);
        }
        assert_eq!(p.zones(), vec![(10_000, 11_024), (20_000, 21_024), (30_000, 31_024)]);
    }

    /// A zone is reclaimed once all its units are rebuilt or claimed, and its units can then
    /// start a new zone only if one is still unrebuilt.
    #[test]
    fn a_zone_is_reclaimed_when_all_its_units_are_taken() {
        let config = ProConfig { zone_units: 8, time_slice_units: 64, ..Default::default() };
        let (mut p, mut states, units) = pro(1000, config);
        read(&mut p, &states, 100, 100);
        let taken: Vec<u64> = (0..8).filter_map(|_| take(&mut p, &mut states, &units)).collect();
        assert_eq!(taken, (100..108).collect::<Vec<_>>());
        // The zone's units are all taken: on the next request it is reclaimed, and with no
        // zone alive the sweep rebuilds from the lowest unit.
        assert_eq!(take(&mut p, &mut states, &units), Some(0));
        assert!(p.zones().is_empty());
        read(&mut p, &states, 104, 104);
        assert!(p.zones().is_empty(), "unit 104 is in flight: no zone");
        read(&mut p, &states, 500, 500);
        assert_eq!(p.zones(), vec![(500, 508)]);
        assert_eq!(take(&mut p, &mut states, &units), Some(500), "a new zone stops the sweep at once");
    }

    /// Slices: the running thread keeps its slice of 64 units whatever is read meanwhile;
    /// at the slice's end the zone read most since the last decision gets the next one.
    #[test]
    fn each_slice_goes_to_the_zone_read_most_since_the_last_decision() {
        let config = ProConfig { time_slice_units: 4, ..Default::default() };
        let (mut p, mut states, units) = pro(100_000, config);
        read(&mut p, &states, 1000, 1000); // zone A = [1000, 2024)
        read(&mut p, &states, 5000, 5000); // zone B = [5000, 6024)
        read(&mut p, &states, 5001, 5001);
        // B was read twice, A once: B's slice.
        let slice: Vec<u64> = (0..4).filter_map(|_| take(&mut p, &mut states, &units)).collect();
        assert_eq!(slice, vec![5000, 5001, 5002, 5003]);
        // Reads during B's slice: A three times, B once. B finishes its slice first.
        for _ in 0..3 {
            read(&mut p, &states, 1500, 1500);
        }
        read(&mut p, &states, 5100, 5100);
        assert_eq!(p.running_zone(), Some(5000));
        let slice: Vec<u64> = (0..4).filter_map(|_| take(&mut p, &mut states, &units)).collect();
        assert_eq!(slice, vec![1000, 1001, 1002, 1003], "A was read most in the last slice");
        // Nothing read during A's slice: with `keep_running` A goes on.
        let slice: Vec<u64> = (0..4).filter_map(|_| take(&mut p, &mut states, &units)).collect();
        assert_eq!(slice, vec![1004, 1005, 1006, 1007]);
    }

    /// Every popularity restarts from zero at each decision: reads before it count for
    /// nothing after it.
    #[test]
    fn popularity_restarts_from_zero_at_each_decision() {
        let config = ProConfig { time_slice_units: 2, ties: Ties::LowestStart, ..Default::default() };
        let (mut p, mut states, units) = pro(100_000, config);
        read(&mut p, &states, 9000, 9000); // zone C
        for _ in 0..10 {
            read(&mut p, &states, 9001, 9001);
        }
        read(&mut p, &states, 3000, 3000); // zone D, read once
        assert_eq!(p.popularity(9000), Some(11));
        assert_eq!(take(&mut p, &mut states, &units), Some(9000), "C: 11 reads against 1");
        assert_eq!(p.popularity(9000), Some(0), "reset at the decision");
        assert_eq!(p.popularity(3000), Some(0));
        take(&mut p, &mut states, &units);
        // No read since: C's 11 earlier reads do not count, and the lowest zone wins the tie.
        assert_eq!(take(&mut p, &mut states, &units), Some(3000));
        assert_eq!(p.decisions, 2);
    }

    /// With the default thread, an unread slice goes to the units outside zones; with the
    /// sweep, it does only once no zone is alive.
    #[test]
    fn units_outside_zones_are_rebuilt_as_configured() {
        for (outside, expected) in [(OutsideZones::SweepWhenNoZone, 2000), (OutsideZones::DefaultThread, 0)] {
            let config = ProConfig { time_slice_units: 2, outside_zones: outside, ..Default::default() };
            let (mut p, mut states, units) = pro(10_000, config);
            read(&mut p, &states, 2000, 2000);
            take(&mut p, &mut states, &units);
            take(&mut p, &mut states, &units);
            // The next slice: no read since the last decision.
            assert_eq!(take(&mut p, &mut states, &units), Some(if expected == 0 { 0 } else { 2002 }), "{outside:?}");
        }
    }

    /// Every unit is handed out exactly once, whatever the reads, in both job-queue modes.
    #[test]
    fn every_unit_is_handed_out_once() {
        for job_queue in [JobQueue::OnDemand, JobQueue::WholeSlice] {
            let config = ProConfig { zone_units: 37, time_slice_units: 5, max_zones: 4, job_queue, ..Default::default() };
            let (mut p, mut states, units) = pro(2000, config);
            let mut x = 12345u64;
            let mut handed = 0;
            while let Some(u) = {
                for _ in 0..3 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let a = (x >> 33) % 2000;
                    read(&mut p, &states, a, (a + (x >> 60)).min(1999));
                }
                take(&mut p, &mut states, &units)
            } {
                states.mark_rebuilt(u);
                handed += 1;
            }
            assert_eq!(handed, 2000, "{job_queue:?}");
            assert!(states.complete());
        }
    }

    /// A decision moves nothing in the heap, and a counted read at most ⌈log₂ n⌉ entries (n
    /// zones read since the last decision; a new zone one more sift): checked by counting.
    #[test]
    fn each_decision_and_each_read_costs_at_most_log_n_heap_steps() {
        let config = ProConfig { zone_units: 16, time_slice_units: 1, ..Default::default() };
        let (mut p, mut states, units) = pro(1 << 20, config);
        let mut x = 99u64;
        let bound = (128f64).log2().ceil() as u64;
        let mut worst_read = 0;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Reads spread over 128 zones' worth of units, skewed so the heap reorders.
            let zone = ((x >> 40) % 128).min((x >> 20) % 128);
            let unit = zone * 4096 + (x >> 58);
            let before = p.heap_steps;
            read(&mut p, &states, unit, unit);
            worst_read = worst_read.max(p.heap_steps - before);
            if (x >> 13) % 50 == 0 {
                let before = p.heap_steps;
                take(&mut p, &mut states, &units);
                assert!(p.heap_steps - before <= bound, "a decision moved {} entries", p.heap_steps - before);
            }
        }
        assert!(p.zones().len() > 64, "the heap was large: {} zones", p.zones().len());
        assert!(worst_read <= bound, "a read moved {worst_read} entries (bound {bound})");
        assert!(p.decisions > 100);
    }

    #[test]
    fn bad_settings_name_their_key() {
        for (toml, key) in [
            ("order = \"pro\"\n[pro]\nzone_units = 0", "rebuild.pro.zone_units"),
            ("order = \"pro\"\n[pro]\nmax_zones = 0", "rebuild.pro.max_zones"),
            ("order = \"pro\"\n[pro]\ntime_slice_units = 0", "rebuild.pro.time_slice_units"),
            ("order = \"sequential\"\n[pro]\nzone_units = 8", "rebuild.pro"),
        ] {
            let config: RebuildConfig = toml::from_str(toml).unwrap();
            let err = config.validate().unwrap_err().to_string();
            assert!(err.contains(key), "{toml}: {err}");
        }
        let err = toml::from_str::<RebuildConfig>("order = \"pro\"\n[pro]\nties = \"random\"").unwrap_err().to_string();
        assert!(err.contains("ties") || err.contains("random"), "{err}");
    }

    /// Units are counted in the rebuild's own measure: tracks work as well as sectors.
    #[test]
    fn pro_works_on_track_units() {
        let g = geometry();
        let units = RebuildUnits::new(&g, g.capacity_sectors(), UnitMeasure::Tracks(1));
        let mut states = UnitStates::new(units.count());
        let mut p = Pro::new(ProConfig::default());
        read(&mut p, &states, 40, 40);
        assert_eq!(take(&mut p, &mut states, &units), Some(40));
    }
}
