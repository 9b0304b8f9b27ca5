//! The buffer cache above the array, and a stand-alone cache simulator.
//!
//! (Not to be confused with `disk::cache`, a drive's own on-board cache.) The family follows
//! the VDF paper (`papers/003_…`, Wan et al., *Victim Disk First*): LRU and LFU, their
//! failure-aware VDF variants (Algorithms 1–2), and VDF on ARC and CLOCK, the paper's §7
//! future work. Every request is one 4 KiB block.
//!
//! ```text
//!  block request ─▶ Cache::access (written once, below) ─────────────────────────────┐
//!                    1. policy.lookup(block, now)        hit: promote, count, done    │
//!                    2. policy.on_miss(block)            (ARC: ghost hit, adapt p)    │
//!                    3. full? policy.choose_victim(now, penalties)                    │
//!                         plain policy: victim(None) ── the bottom of its one stack   │
//!                         VDF: fault-free ─▶ victim(None) (the global stack GS)       │
//!                              faulty ─────▶ victim(Some(d)) for every drive d (the   │
//!                                            local stacks LS_d), weighed by the miss  │
//!                                            penalty of each (penalties: PenaltyView) │
//!                       policy.evict(victim)                                          │
//!                    4. policy.insert(block, drive, now)  drive from the Placement    │
//!                                                         (VDF only)                  │
//!  counters: hits, misses, evictions ◀────────────────────────────────────────────────┘
//! ```
//!
//! * **Policies** are small sets of hooks ([`Policy`]): `lookup` (promotes), `on_miss`,
//!   `insert` (assumes room), `victim` (shows the next victim, globally or among one drive's
//!   blocks; it may advance a clock hand but evicts nothing), `evict`, `remove` (an
//!   invalidation, not an eviction). One file per policy; [`CACHES`] is the registry.
//! * **VDF** ([`vdf::Vdf`]) is generic over its base policy: any [`BasePolicy`], which can
//!   keep one local stack per drive beside its global one, becomes failure-aware by one
//!   registry line. A base without local stacks does not implement [`BasePolicy`], so it
//!   cannot be named as one.
//! * **Miss penalties** come from a [`PenaltyView`]: whether the array is faulty now, and what
//!   a read miss of a block would cost in surviving-drive reads. The stand-alone simulator
//!   gives a fixed failure state ([`penalty::MissPenalty`]); the array in front of which the
//!   cache will sit gives its live one (failed members, rebuilt units).
//! * **Ordering.** `now` is the access sequence number (the paper's GTS): it grows by one per
//!   access, hit or miss, so no two accesses share one and ties between blocks are decided
//!   by it wherever a policy compares ages. Ties that remain (VDF-LRU's weights of two local
//!   stacks can be equal) go to the lower drive number.
//!
//! The simulator ([`sim`]) streams a trace through many caches at once (policies × sizes ×
//! drive counts × failed drives), LRU at many sizes in one stack ([`stack`]).

pub mod config;
pub mod arc;
pub mod clock;
pub mod front;
pub mod lfu;
mod lists;
pub mod lru;
pub mod penalty;
pub mod placement;
pub mod sim;
pub mod stack;
pub mod trace;
pub mod vdf;
pub mod vdf_arc;
pub mod vdf_clock;
pub mod vdf_lfu;
pub mod vdf_lru;

use crate::error::{Error, Result};
use placement::Placement;

/// What a base policy knows of a victim's worth: VDF weighs it by the victim's miss penalty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worth {
    /// LRU-like: the sequence number of its last access (Algorithm 1's TS); the older, the
    /// less it is worth (the access probability is taken as 1 / (GTS − TS), §4.1).
    Recency {
        /// Access sequence number of the last access.
        last_access: u64,
    },
    /// LFU-like: accesses since it was loaded (Algorithm 2's F), and the last access's
    /// sequence number for ties.
    Frequency {
        /// Accesses since the block was loaded (1 at its load).
        count: u64,
        /// Access sequence number of the last access.
        last_access: u64,
    },
}

/// A block a policy would evict next ([`Policy::victim`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Victim {
    /// The policy's slot of the block.
    pub slot: u32,
    /// The block.
    pub block: u64,
    /// Its drive, and its worth: meaningful only for a policy built with local stacks
    /// ([`BasePolicy::new`] with drives); 0 and `Recency { last_access: 0 }` otherwise.
    pub drive: u32,
    /// See [`Worth`].
    pub worth: Worth,
}

/// The failure state as a cache sees it.
pub trait PenaltyView {
    /// Whether some drive is failed and not yet rebuilt (VDF's faulty mode).
    fn faulty(&self) -> bool;
    /// Surviving-drive reads that a read miss of `block`, on `drive`, would cost now (the
    /// paper's MP_i).
    fn read_miss(&self, block: u64, drive: u32) -> u32;
    /// The read-miss penalty every block of `drive` shares now, when they all cost the same
    /// (nothing of the drive rebuilt yet); `None` when it varies from block to block. Lets VDF
    /// weigh a drive without looking its candidate block up.
    fn drive_read_miss(&self, _drive: u32) -> Option<u32> {
        None
    }
}

/// A fault-free array: every read miss costs one read.
#[derive(Debug, Clone, Copy, Default)]
pub struct FaultFree;

impl PenaltyView for FaultFree {
    fn faulty(&self) -> bool {
        false
    }
    fn read_miss(&self, _block: u64, _drive: u32) -> u32 {
        1
    }
    fn drive_read_miss(&self, _drive: u32) -> Option<u32> {
        Some(1)
    }
}

/// A replacement policy: the hooks [`Cache::access`] calls.
pub trait Policy: Send {
    /// Blocks cached.
    fn len(&self) -> usize;
    /// Whether no block is cached.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// If `block` is cached, record an access to it at sequence number `now` (promote it)
    /// and return true.
    fn lookup(&mut self, block: u64, now: u64) -> bool;
    /// A miss of `block`, before any eviction for it (ARC adapts to a ghost hit here).
    fn on_miss(&mut self, _block: u64) {}
    /// Load `block`, held on `drive`, at sequence number `now`; the cache has room.
    fn insert(&mut self, block: u64, drive: u32, now: u64);
    /// The block the policy evicts next: among all its blocks (`None`), or among those of
    /// `drive` (its local stack; only for a policy built with local stacks). `None` if there
    /// is no such block. May do what a clock hand does on its way (second chances), but
    /// evicts nothing.
    fn victim(&mut self, drive: Option<u32>) -> Option<Victim>;
    /// Evict `victim`, returned by [`Policy::victim`] with no other call since.
    fn evict(&mut self, victim: &Victim);
    /// The bottom of `drive`'s local stack, as its slot and worth: what
    /// [`Policy::victim`]`(Some(drive))` gives, without looking the block up (VDF weighs every
    /// drive's bottom on each eviction and needs the block of one only).
    fn local_bottom(&mut self, drive: u32) -> Option<(u32, Worth)> {
        self.victim(Some(drive)).map(|victim| (victim.slot, victim.worth))
    }
    /// The block in `slot` (a slot [`Policy::local_bottom`] gave).
    fn block_in(&self, slot: u32) -> u64;
    /// Start fetching what looking `block` up will read: called a few requests ahead.
    fn prefetch(&self, _block: u64) {}
    /// Drop `block` if cached (an invalidation: no ghost, no eviction counted).
    fn remove(&mut self, block: u64) -> bool;
    /// The victim to evict for a miss at `now`. A plain policy takes its own
    /// ([`Policy::victim`]`(None)`); VDF weighs the local stacks' bottoms by `penalties`.
    fn choose_victim(&mut self, _now: u64, _penalties: &dyn PenaltyView) -> Option<Victim> {
        self.victim(None)
    }
}

/// A policy that can keep one local stack per drive beside its global one: a base of VDF.
pub trait BasePolicy: Policy + Sized + 'static {
    /// An empty cache of `capacity` blocks; with `Some(drives)`, keeping local stacks for
    /// drives `0..drives`.
    fn new(capacity: usize, drives: Option<u32>) -> Self;
}

/// Counts of one cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
}

/// A cache as the simulator and the array use it, whatever its policy.
pub trait BufferCache: Send {
    /// Registry name of its policy.
    fn policy(&self) -> &'static str;
    /// Capacity, blocks.
    fn capacity(&self) -> usize;
    /// Blocks cached.
    fn len(&self) -> usize;
    /// Whether no block is cached.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// One access; true for a hit.
    fn access(&mut self, block: u64, penalties: &dyn PenaltyView) -> bool;
    /// One access: whether it hit, and the block it evicted to make room, if any (the
    /// cache in front of the array writes an evicted dirty block back).
    fn access_evicting(&mut self, block: u64, penalties: &dyn PenaltyView) -> (bool, Option<u64>);
    /// One access per block of `blocks`, in order; `missed[i]` becomes 1 for a miss, 0 for
    /// a hit (`missed` is as long as `blocks`). One call per batch, so that the loop is
    /// compiled for the policy.
    fn access_all(&mut self, blocks: &[u64], penalties: &dyn PenaltyView, missed: &mut [u8]);
    /// Drop `block` if cached (invalidation).
    fn remove(&mut self, block: u64) -> bool;
    /// Hits, misses and evictions so far.
    fn counters(&self) -> Counters;
}

/// How many requests ahead [`BufferCache::access_all`] starts fetching a block's table entry.
const PREFETCH_AHEAD: usize = 8;

/// A policy with its capacity and counters: the hit/miss loop, written once.
pub struct Cache<P> {
    name: &'static str,
    policy: P,
    capacity: usize,
    /// The array's placement, for a policy that needs each block's drive (VDF).
    placement: Option<Placement>,
    /// The next access's sequence number (GTS).
    now: u64,
    counters: Counters,
}

impl<P: Policy> Cache<P> {
    /// `policy` as a cache of `capacity` blocks (at least 1) called `name`.
    pub fn new(name: &'static str, policy: P, capacity: usize, placement: Option<Placement>) -> Self {
        assert!(capacity > 0, "a cache holds at least one block");
        Cache { name, policy, capacity, placement, now: 0, counters: Counters::default() }
    }

    /// The policy (tests inspect it).
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// One access: true for a hit.
    #[inline]
    pub fn access(&mut self, block: u64, penalties: &dyn PenaltyView) -> bool {
        self.access_reporting::<false>(block, penalties).0
    }

    /// One access: whether it hit and, with `REPORT`, the block evicted (the stand-alone
    /// simulator does not ask, and keeps its loop as it was).
    #[inline(always)]
    fn access_reporting<const REPORT: bool>(&mut self, block: u64, penalties: &dyn PenaltyView) -> (bool, Option<u64>) {
        let now = self.now;
        self.now += 1;
        if self.policy.lookup(block, now) {
            self.counters.hits += 1;
            return (true, None);
        }
        self.counters.misses += 1;
        self.policy.on_miss(block);
        let mut evicted = None;
        if self.policy.len() >= self.capacity {
            if let Some(victim) = self.policy.choose_victim(now, penalties) {
                self.policy.evict(&victim);
                self.counters.evictions += 1;
                if REPORT {
                    evicted = Some(victim.block);
                }
            }
        }
        let drive = match &self.placement {
            Some(placement) => placement.drive(block),
            None => 0,
        };
        self.policy.insert(block, drive, now);
        (false, evicted)
    }
}

impl<P: Policy> BufferCache for Cache<P> {
    fn policy(&self) -> &'static str {
        self.name
    }
    fn capacity(&self) -> usize {
        self.capacity
    }
    fn len(&self) -> usize {
        self.policy.len()
    }
    fn access(&mut self, block: u64, penalties: &dyn PenaltyView) -> bool {
        Cache::access(self, block, penalties)
    }
    fn access_evicting(&mut self, block: u64, penalties: &dyn PenaltyView) -> (bool, Option<u64>) {
        self.access_reporting::<true>(block, penalties)
    }
    fn access_all(&mut self, blocks: &[u64], penalties: &dyn PenaltyView, missed: &mut [u8]) {
        for (index, (&block, missed)) in blocks.iter().zip(missed.iter_mut()).enumerate() {
            if let Some(&ahead) = blocks.get(index + PREFETCH_AHEAD) {
                self.policy.prefetch(ahead);
            }
            *missed = u8::from(!Cache::access(self, block, penalties));
        }
    }
    fn remove(&mut self, block: u64) -> bool {
        self.policy.remove(block)
    }
    fn counters(&self) -> Counters {
        self.counters
    }
}

/// Builds a cache: registry name, capacity (blocks, at least 1), the array's placement (a
/// VDF policy requires it; the others ignore it).
type Constructor = fn(&'static str, usize, Option<Placement>) -> Box<dyn BufferCache>;

/// One registered policy.
pub struct CacheEntry {
    /// Name in configurations and on the command line.
    pub name: &'static str,
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    /// One line for the docs.
    pub doc: &'static str,
    /// The policy's choices depend on the failure state and the array's placement (VDF): it
    /// needs a placement, and one cache per array and failure state.
    pub failure_aware: bool,
    /// Constructor.
    pub make: Constructor,
}

fn plain<P: BasePolicy>(name: &'static str, capacity: usize, _placement: Option<Placement>) -> Box<dyn BufferCache> {
    Box::new(Cache::new(name, P::new(capacity, None), capacity, None))
}

/// Every policy, in documentation order.
#[rustfmt::skip]
pub static CACHES: &[CacheEntry] = &[
    CacheEntry { name: "lru", aliases: &[], doc: lru::DOC, failure_aware: false, make: plain::<lru::LruCache> },
    CacheEntry { name: "lfu", aliases: &[], doc: lfu::DOC, failure_aware: false, make: plain::<lfu::LfuCache> },
    CacheEntry { name: "arc", aliases: &[], doc: arc::DOC, failure_aware: false, make: plain::<arc::ArcCache> },
    CacheEntry { name: "clock", aliases: &["second-chance"], doc: clock::DOC, failure_aware: false, make: plain::<clock::ClockCache> },
    CacheEntry { name: "vdf-lru", aliases: &["vdf_lru"], doc: vdf_lru::DOC, failure_aware: true, make: vdf::make::<lru::LruCache> },
    CacheEntry { name: "vdf-lfu", aliases: &["vdf_lfu"], doc: vdf_lfu::DOC, failure_aware: true, make: vdf::make::<lfu::LfuCache> },
    CacheEntry { name: "vdf-arc", aliases: &["vdf_arc"], doc: vdf_arc::DOC, failure_aware: true, make: vdf::make::<arc::ArcCache> },
    CacheEntry { name: "vdf-clock", aliases: &["vdf_clock"], doc: vdf_clock::DOC, failure_aware: true, make: vdf::make::<clock::ClockCache> },
];

/// Names of the registered policies.
pub fn names() -> Vec<&'static str> {
    CACHES.iter().map(|entry| entry.name).collect()
}

/// The entry called `name` (or one of its aliases).
pub fn entry(name: &str) -> Option<&'static CacheEntry> {
    CACHES.iter().find(|entry| entry.name == name || entry.aliases.contains(&name))
}

/// The entry called `name`; an error naming `key` and the choices for an unknown one.
pub fn entry_for(name: &str, key: &str) -> Result<&'static CacheEntry> {
    entry(name).ok_or_else(|| {
        Error::config(key, format!("unknown cache policy \"{name}\"; known policies: {}", names().join(", ")))
    })
}

/// Build the cache `name` of `capacity` blocks. `placement` is the array's (required by a
/// failure-aware policy). Errors name `key`.
pub fn build(name: &str, capacity: u64, placement: Option<&Placement>, key: &str) -> Result<Box<dyn BufferCache>> {
    let entry = entry_for(name, &format!("{key}.policy"))?;
    let capacity = checked_capacity(capacity, key)?;
    if entry.failure_aware && placement.is_none() {
        return Err(Error::config(
            format!("{key}.policy"),
            format!("{} weighs blocks by their drive and needs the array's layout", entry.name),
        ));
    }
    Ok((entry.make)(entry.name, capacity, placement.cloned()))
}

/// A capacity of at least one block that fits memory's indices; errors name `{key}.size`.
pub fn checked_capacity(capacity: u64, key: &str) -> Result<usize> {
    // Slots are u32 indices; one is reserved as "none".
    if capacity == 0 || capacity >= u64::from(u32::MAX) {
        return Err(Error::config(
            format!("{key}.size"),
            format!("a cache holds 1 to {} blocks, not {capacity}", u32::MAX - 1),
        ));
    }
    Ok(capacity as usize)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Hits and misses of `trace` through a fresh cache `name` of `capacity` blocks.
    pub(crate) fn replay(cache: &mut dyn BufferCache, trace: &[u64], penalties: &dyn PenaltyView) -> Vec<bool> {
        trace.iter().map(|&block| cache.access(block, penalties)).collect()
    }

    /// `H`/`m` per access, for readable expectations.
    pub(crate) fn pattern(hits: &[bool]) -> String {
        hits.iter().map(|&hit| if hit { 'H' } else { 'm' }).collect()
    }

    #[test]
    fn the_registry_names_each_policy_once_with_docs_and_aliases_that_resolve() {
        let mut seen = std::collections::HashSet::new();
        for entry in CACHES {
            assert!(seen.insert(entry.name), "{} twice", entry.name);
            for alias in entry.aliases {
                assert!(seen.insert(alias), "{alias} twice");
                assert_eq!(super::entry(alias).unwrap().name, entry.name);
            }
            assert!(!entry.doc.is_empty() && entry.doc.len() < 400, "{}", entry.name);
            assert_eq!(entry.failure_aware, entry.name.starts_with("vdf-"), "{}", entry.name);
        }
        assert_eq!(names(), ["lru", "lfu", "arc", "clock", "vdf-lru", "vdf-lfu", "vdf-arc", "vdf-clock"]);
    }

    #[test]
    fn unknown_policy_zero_size_or_vdf_without_a_layout_are_config_errors() {
        let err = build("lirs", 4, None, "cache").err().unwrap().to_string();
        assert!(err.starts_with("cache.policy: unknown cache policy \"lirs\"; known policies: lru, lfu"), "{err}");
        let err = build("lru", 0, None, "cache").err().unwrap().to_string();
        assert!(err.starts_with("cache.size: a cache holds 1 to"), "{err}");
        let err = build("vdf-lru", 4, None, "cache").err().unwrap().to_string();
        assert!(err.starts_with("cache.policy: vdf-lru weighs blocks by their drive"), "{err}");
    }

    #[test]
    fn every_policy_keeps_at_most_its_capacity_and_counts_every_access() {
        let placement = Placement::raid5(4, 1, Default::default(), "cache").unwrap();
        let trace: Vec<u64> = (0..2000u64).map(|i| (i * 7919 + i / 3) % 97).collect();
        for entry in CACHES {
            for capacity in [1, 2, 5, 40] {
                let mut cache = build(entry.name, capacity, Some(&placement), "cache").unwrap();
                let hits = replay(cache.as_mut(), &trace, &FaultFree);
                assert!(cache.len() <= capacity as usize, "{}", entry.name);
                let counters = cache.counters();
                assert_eq!(counters.hits + counters.misses, trace.len() as u64);
                assert_eq!(counters.hits, hits.iter().filter(|&&hit| hit).count() as u64);
                assert_eq!(counters.evictions, counters.misses - cache.len() as u64, "{}", entry.name);
            }
        }
    }

    #[test]
    fn a_removed_block_misses_next_time() {
        let placement = Placement::raid5(4, 1, Default::default(), "cache").unwrap();
        for entry in CACHES {
            let mut cache = build(entry.name, 3, Some(&placement), "cache").unwrap();
            assert!(!cache.access(7, &FaultFree));
            assert!(cache.access(7, &FaultFree), "{}", entry.name);
            assert!(cache.remove(7));
            assert!(!cache.remove(7));
            assert_eq!(cache.len(), 0);
            assert!(!cache.access(7, &FaultFree), "{}", entry.name);
        }
    }
}
