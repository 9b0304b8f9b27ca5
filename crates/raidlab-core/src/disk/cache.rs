//! The on-drive buffer cache: segmented read cache with read-ahead, and write-back.
//!
//! The engine calls [`super::Drive::service`] when the drive starts a command and knows
//! nothing of what the drive does between commands. The cache therefore works lazily: the
//! drive remembers its background work (a read-ahead that started when a read's last sector
//! left the medium, dirty segments waiting to be destaged) and, when the next command
//! arrives at `now`, first plays that work out up to `now`.
//!
//! * **Read-ahead.** After a read miss the mechanism keeps reading sequentially from where
//!   the read ended (the same mechanics: runs, head switches, one-cylinder seeks, skews),
//!   into the read's segment, up to DiskSim's target ([`PrefetchMode`],
//!   `read_ahead_max_sectors`; see `Drive::prefetch_target`) or until the next command
//!   arrives; the segment keeps only its last `segment_sectors` sectors. A read
//!   hit does not stop it (the mechanism is not needed); a hit in the segment it fills
//!   raises its target, and a read that starts there and ends past what it has read is
//!   served by it as it goes; any other command stops it, at the next sector boundary (or
//!   at once with `stop_prefetch_in_sector`). The arm stays where the read-ahead stopped.
//! * **Read hits.** A read whose sectors all lie in a segment (read-ahead counted up to
//!   `now`) costs the hit overhead plus the host transfer, no mechanics. A read whose first
//!   sectors are cached (a partial hit) sends them at once (DiskSim's "Immed transfer partial
//!   hit", set on every shipped drive) and reads the rest from the medium with the miss
//!   overheads. With `read_any_free_blocks`, a miss whose head lands past its first sector
//!   also caches the track's sectors before it.
//! * **Segments for writes.** A write drops every segment holding its sectors and, unless a
//!   segment is reserved for writes, takes one from the shared pool, which then holds the
//!   written sectors for later reads (`read_hits_on_write_data`) or nothing
//!   (`CacheState::place_write`).
//! * **Write-back** (`fast_write_level` ≥ 1). A write of at most one segment completes after
//!   the write-hit overhead and its host transfer into a write segment (appended to the last
//!   dirty segment when it continues it and `combine_sequential_writes`). Dirty segments are
//!   destaged in order during idle time, each as one media write; a destage that has begun
//!   finishes before the next command gets the mechanism. When no write segment is free the
//!   write waits for the oldest destage. Level 1 allows one dirty segment (appending
//!   writes); level 2 `write_segments`.
//!
//! Not modelled (reported by the importer): minimum read-ahead, the write water mark (the
//! read water mark is the bus protocol's, `super::interface`); DiskSim's fast write starting
//! its media write right after the write-hit overhead (here: once its data is in), and its
//! rule that even a full hit waits for a media write in progress (here only misses wait).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::sim::{ms_to_ns, Nanos};

/// How far a drive prefetches after a read miss (DiskSim's "Buffer continuous read").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PrefetchMode {
    /// No read-ahead (0).
    None,
    /// To the end of the track holding the read's last sector (1).
    Track,
    /// To the end of the cylinder holding the read's last sector (2).
    Cylinder,
    /// Until the segment is full (3).
    #[default]
    Segment,
    /// To the end of the track holding the sector after the read, and one track further
    /// when the read's segment began before that track, a sequential stream (4, as DiskSim's
    /// `disk_buffer_get_max_readahead`).
    NextTrack,
}

/// The on-drive cache (`drive.model.cache`); absent: no cache, every access is mechanical.
/// Sizes in 512-byte sectors, times in ms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriveCacheConfig {
    /// Buffer segments (DiskSim's "Number of buffer segments"), at least 1.
    pub segments: u32,
    /// Size of one segment, in sectors (DiskSim's "Segment size (in blks)"), at least 1.
    #[schemars(extend("x-unit" = "sectors (512 B)"))]
    pub segment_sectors: u32,
    /// One segment is reserved for write data and never caches reads (DiskSim's "Use
    /// separate write segment").
    #[serde(default)]
    pub separate_write_segment: bool,
    /// Segments that may hold dirty data at once (DiskSim's "Maximum number of write
    /// segments").
    #[serde(default = "one")]
    pub write_segments: u32,
    /// Write-back (DiskSim's "Fast write level"): 0 off (write-through), 1 one dirty
    /// segment, which sequential writes append to, 2 up to `write_segments` dirty segments.
    #[serde(default)]
    pub fast_write_level: u32,
    /// A write that continues the last dirty segment is appended to it (DiskSim's "Combine
    /// seq writes").
    #[serde(default)]
    pub combine_sequential_writes: bool,
    /// Written data stays in its segment, where later reads hit it (DiskSim's "Allow read
    /// hits on write data"); otherwise a write leaves its segment empty.
    #[serde(default)]
    pub read_hits_on_write_data: bool,
    /// How far a read miss prefetches (DiskSim's "Buffer continuous read").
    #[serde(default)]
    pub prefetch: PrefetchMode,
    /// Most sectors prefetched after a read (DiskSim's "Maximum read-ahead (blks)").
    #[schemars(extend("x-unit" = "sectors (512 B)"))]
    pub read_ahead_max_sectors: u32,
    /// Prefetched data may push the read's own data out of its segment (DiskSim's
    /// "Read-ahead over requested"); otherwise the read-ahead stops when the segment is full.
    #[serde(default)]
    pub read_ahead_over_requested: bool,
    /// A read hit on an idle drive starts a read-ahead from the end of its segment
    /// (DiskSim's "Read-ahead on idle hit").
    #[serde(default)]
    pub read_ahead_on_idle_hit: bool,
    /// A read miss whose head lands past its first sector caches the sectors from the
    /// track's first one on as they pass under the head on the way round (DiskSim's "Read
    /// any free blocks").
    #[serde(default)]
    pub read_any_free_blocks: bool,
    /// A read-ahead is stopped at once when a command arrives; otherwise at the end of the
    /// sector being read (DiskSim's "Stop prefetch in sector").
    #[serde(default)]
    pub stop_prefetch_in_sector: bool,
    /// Processing of a read hit after a read, ms (DiskSim's "Read hit over. after read").
    #[serde(default)]
    pub read_hit_after_read_ms: f64,
    /// Processing of a read hit after a write, ms.
    #[serde(default)]
    pub read_hit_after_write_ms: f64,
    /// Processing of a write acknowledged from the cache after a read, ms (DiskSim's
    /// "Write hit over. after read").
    #[serde(default)]
    pub write_hit_after_read_ms: f64,
    /// Processing of a write acknowledged from the cache after a write, ms.
    #[serde(default)]
    pub write_hit_after_write_ms: f64,
}

fn one() -> u32 {
    1
}

/// The cache parameters in the units the drive uses.
#[derive(Debug, Clone)]
pub(crate) struct CacheParams {
    pub read_segments: usize,
    pub segment_sectors: u64,
    /// Dirty segments allowed at once (0: write-through).
    pub write_segments: usize,
    pub combine: bool,
    /// Writes take a segment of the shared pool (no segment reserved for them).
    pub writes_share_segments: bool,
    pub read_hits_on_write_data: bool,
    pub prefetch: PrefetchMode,
    pub read_ahead_max: u64,
    pub over_requested: bool,
    pub on_idle_hit: bool,
    pub read_any_free_blocks: bool,
    pub stop_in_sector: bool,
    /// Read-hit overhead, indexed by [previous was a write].
    pub read_hit_ns: [Nanos; 2],
    /// Write-hit overhead, indexed by [previous was a write].
    pub write_hit_ns: [Nanos; 2],
}

impl CacheParams {
    pub fn new(cfg: &DriveCacheConfig, key: &str) -> Result<Self> {
        if cfg.segments == 0 {
            return Err(Error::config(format!("{key}.segments"), "must be at least 1"));
        }
        if cfg.segment_sectors == 0 {
            return Err(Error::config(format!("{key}.segment_sectors"), "must be at least 1"));
        }
        if cfg.fast_write_level > 2 {
            return Err(Error::config(
                format!("{key}.fast_write_level"),
                format!("must be 0, 1 or 2, got {}", cfg.fast_write_level),
            ));
        }
        for (value, name) in [
            (cfg.read_hit_after_read_ms, "read_hit_after_read_ms"),
            (cfg.read_hit_after_write_ms, "read_hit_after_write_ms"),
            (cfg.write_hit_after_read_ms, "write_hit_after_read_ms"),
            (cfg.write_hit_after_write_ms, "write_hit_after_write_ms"),
        ] {
            super::mechanics::check_duration_ms(value, format!("{key}.{name}"))?;
        }
        let write_segments = match cfg.fast_write_level {
            0 => 0,
            1 => cfg.write_segments.min(1),
            _ => cfg.write_segments,
        } as usize;
        Ok(CacheParams {
            read_segments: (cfg.segments - (cfg.separate_write_segment && cfg.segments > 1) as u32) as usize,
            segment_sectors: cfg.segment_sectors as u64,
            write_segments,
            combine: cfg.combine_sequential_writes,
            writes_share_segments: !(cfg.separate_write_segment && cfg.segments > 1),
            read_hits_on_write_data: cfg.read_hits_on_write_data,
            prefetch: cfg.prefetch,
            read_ahead_max: cfg.read_ahead_max_sectors as u64,
            over_requested: cfg.read_ahead_over_requested,
            on_idle_hit: cfg.read_ahead_on_idle_hit,
            read_any_free_blocks: cfg.read_any_free_blocks,
            stop_in_sector: cfg.stop_prefetch_in_sector,
            read_hit_ns: [ms_to_ns(cfg.read_hit_after_read_ms), ms_to_ns(cfg.read_hit_after_write_ms)],
            write_hit_ns: [ms_to_ns(cfg.write_hit_after_read_ms), ms_to_ns(cfg.write_hit_after_write_ms)],
        })
    }
}

/// A read segment: the sectors `[start, end)` are in the buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Segment {
    pub start: u64,
    pub end: u64,
    /// Last use, for LRU replacement (a counter).
    pub used: u64,
}

/// A read-ahead in progress into segment `segment`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prefetch {
    pub segment: usize,
    /// When the mechanism started it (the end of the read that triggered it).
    pub start: Nanos,
    /// First sector it reads.
    pub lba: u64,
    /// Most sectors it may read.
    pub limit: u64,
    /// Platter phase offset (uniform rotation), that of the read it continues.
    pub phase_offset: u64,
}

/// Dirty data waiting for the medium: `[start, end)`, in the buffer from `ready`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dirty {
    pub start: u64,
    pub end: u64,
    pub ready: Nanos,
}

/// One drive's cache contents and background work.
#[derive(Debug, Clone)]
pub(crate) struct CacheState {
    pub segments: Vec<Segment>,
    pub clock: u64,
    pub prefetch: Option<Prefetch>,
    /// Dirty segments in arrival order (none has begun its destage).
    pub dirty: Vec<Dirty>,
    /// When the mechanism is free of its last media work (command, destage or read-ahead).
    pub mechanism_free: Nanos,
}

impl CacheState {
    pub fn new() -> Self {
        CacheState { segments: Vec::new(), clock: 0, prefetch: None, dirty: Vec::new(), mechanism_free: 0 }
    }

    /// Mark segment `i` used now.
    pub fn touch(&mut self, i: usize) {
        self.clock += 1;
        self.segments[i].used = self.clock;
    }

    /// `Ok` with the index of the segment holding `lba`, or `Err` with the segment new data
    /// would take (of `capacity` segments): a free one (the index one past the last; see
    /// [`CacheState::claim`]), else the first empty one, else the least recently used. One
    /// pass for both, as a read miss needs both.
    pub fn lookup(&self, lba: u64, capacity: usize) -> Result<usize, usize> {
        let (mut empty, mut oldest, mut oldest_used) = (None, 0, u64::MAX);
        for (i, s) in self.segments.iter().enumerate() {
            if s.start <= lba && lba < s.end {
                return Ok(i);
            }
            if s.start == s.end && empty.is_none() {
                empty = Some(i);
            }
            if s.used < oldest_used {
                (oldest, oldest_used) = (i, s.used);
            }
        }
        if self.segments.len() < capacity {
            return Err(self.segments.len());
        }
        Err(empty.unwrap_or(oldest))
    }

    /// Take segment `victim` (from [`CacheState::lookup`]) for new data; the index one past
    /// the last adds a segment.
    pub fn claim(&mut self, victim: usize) -> usize {
        if victim == self.segments.len() {
            self.segments.push(Segment { start: 0, end: 0, used: 0 });
        }
        victim
    }

    /// A segment for new data: a free or empty one, or the least recently used.
    pub fn allocate(&mut self, capacity: usize) -> usize {
        // No segment holds the sector past every LBA: the lookup names the victim alone.
        let victim = self.lookup(u64::MAX, capacity).unwrap_or_else(|i| i);
        self.claim(victim)
    }

    /// Put a write of `[start, end)` in the buffer, as DiskSim's `disk_buffer_select_write_segment`
    /// and `disk_buffer_set_segment` do: every segment holding any of its sectors is stale and
    /// dropped whole. Unless a segment is reserved for writes, the write takes a segment of
    /// the shared pool — one that held its sectors, else an empty one, else the least
    /// recently used — and that segment then holds the written sectors for later reads
    /// (`read_hits_on_write_data`) or nothing. An `append` continues the segment holding the
    /// previous write instead.
    pub fn place_write(&mut self, params: &CacheParams, start: u64, end: u64, append: bool) {
        let mut chosen = None;
        for (i, s) in self.segments.iter_mut().enumerate() {
            if s.start < end && start < s.end {
                if chosen.is_none() && !append {
                    chosen = Some(i);
                }
                s.end = s.start;
            }
        }
        if append {
            if params.read_hits_on_write_data {
                if let Some(i) = self.segments.iter().position(|s| s.end == start && s.start < s.end) {
                    self.segments[i].end = end;
                    self.segments[i].start = self.segments[i].start.max(end.saturating_sub(params.segment_sectors));
                    self.touch(i);
                }
            }
            return;
        }
        if !params.writes_share_segments {
            return;
        }
        let i = chosen.unwrap_or_else(|| self.allocate(params.read_segments));
        let kept = if params.read_hits_on_write_data { start } else { end };
        self.segments[i].start = kept;
        self.segments[i].end = end;
        self.touch(i);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::disk::{presets, Drive, DriveModel, OpKind, RotationModel};
    use crate::sim::{RngStream, StreamId};

    /// The IBM Ultrastar 18ES with the cache of its DiskSim specification (the built-in
    /// preset's, so the tests follow the imported parameters).
    fn ibm18es_cache() -> DriveCacheConfig {
        crate::disk::presets::preset("ibm18es").and_then(|m| m.cache).expect("ibm18es preset has a cache")
    }

    fn drive(cache: Option<DriveCacheConfig>, bus_sector_ms: Option<f64>) -> Drive {
        let mut cfg = presets::preset("ibm18es").unwrap();
        cfg.cache = cache;
        if let Some(bus) = bus_sector_ms {
            cfg.bus_sector_ms = bus;
        }
        let model = Arc::new(DriveModel::new(&cfg, "drive.model").unwrap());
        Drive::new(model, RotationModel::Exact, RngStream::new(1, StreamId::Drive(0)))
    }

    fn is_hit(s: &crate::disk::ServiceTime) -> bool {
        s.seek == 0 && s.rotation == 0 && s.transfer == 0
    }

    /// One pass finds the segment holding a sector, or the one new data takes, as the rule
    /// says it in three steps: a segment not yet in use, else the first empty one, else the
    /// least recently used.
    #[test]
    fn a_lookup_names_the_holding_segment_or_the_victim() {
        let mut rng = RngStream::new(3, StreamId::Requests);
        let (mut hits, mut fresh, mut empties, mut oldest) = (0, 0, 0, 0);
        for _ in 0..2000 {
            let capacity = 1 + rng.below(7) as usize;
            let mut st = CacheState::new();
            for _ in 0..rng.below(capacity as u64 + 1) {
                let start = rng.below(1000);
                let end = if rng.below(4) == 0 { start } else { start + 1 + rng.below(50) };
                // Few distinct uses, so that ties (between fresh segments) occur.
                st.segments.push(Segment { start, end, used: rng.below(6) });
            }
            let lba = rng.below(1100);
            let expected = match st.segments.iter().position(|s| s.start <= lba && lba < s.end) {
                Some(i) => Ok(i),
                None if st.segments.len() < capacity => Err(st.segments.len()),
                None => Err(st.segments.iter().position(|s| s.start == s.end).unwrap_or_else(|| {
                    let oldest = st.segments.iter().map(|s| s.used).min().unwrap();
                    st.segments.iter().position(|s| s.used == oldest).unwrap()
                })),
            };
            assert_eq!(st.lookup(lba, capacity), expected, "{:?} at {lba}", st.segments);
            match expected {
                Ok(_) => hits += 1,
                Err(i) if i == st.segments.len() => fresh += 1,
                Err(i) if st.segments[i].start == st.segments[i].end => empties += 1,
                Err(_) => oldest += 1,
            }
        }
        assert!(hits > 50 && fresh > 50 && empties > 50 && oldest > 50, "{hits} {fresh} {empties} {oldest}");
    }

    #[test]
    fn sequential_read_after_idle_time_is_a_hit() {
        let mut d = drive(Some(ibm18es_cache()), None);
        let bus = d.model.config.bus_sector_ms;
        let first = d.service(0, 100_000, 16, OpKind::Read);
        assert!(!is_hit(&first) && first.total() > 1_000_000, "{first:?}");
        // 20 ms of idle time: several revolutions of read-ahead.
        let now = first.total() + 20_000_000;
        let s = d.service(now, 100_016, 16, OpKind::Read);
        assert!(is_hit(&s), "{s:?}");
        assert_eq!(s.total(), ms_to_ns(0.082) + 16 * ms_to_ns(bus));
        // Further on, still within the 511-sector segment the read-ahead filled.
        let s = d.service(now + s.total(), 100_200, 64, OpKind::Read);
        assert!(is_hit(&s), "{s:?}");
        // Beyond the read-ahead target (the read's end + the 511-sector maximum read-ahead):
        // a miss.
        let s = d.service(now + 10_000_000, 100_016 + 511, 8, OpKind::Read);
        assert!(!is_hit(&s), "{s:?}");
    }

    /// The segment keeps its last `segment_sectors` sectors: a read-ahead of a full segment
    /// pushes the read's own data out (DiskSim's sliding segment), so reading it again misses.
    #[test]
    fn a_full_segment_of_read_ahead_pushes_the_read_out() {
        let mut d = drive(Some(ibm18es_cache()), None);
        let first = d.service(0, 100_000, 16, OpKind::Read);
        let now = first.total() + 20_000_000;
        assert!(is_hit(&d.service(now, 100_016 + 500, 11, OpKind::Read)));
        assert!(!is_hit(&d.service(now + 5_000_000, 100_000, 16, OpKind::Read)));
    }

    #[test]
    fn sequential_read_without_idle_time_is_not_a_hit() {
        // No host-interface time: the read completes when its last sector is read, so a
        // command issued at its completion leaves the read-ahead no time at all.
        let mut d = drive(Some(ibm18es_cache()), Some(0.0));
        let first = d.service(0, 100_000, 16, OpKind::Read);
        let s = d.service(first.total(), 100_016, 16, OpKind::Read);
        assert!(!is_hit(&s), "{s:?}");
        // The arm is where the previous read ended; the next sector passed during the miss
        // overhead, so the read waits most of a revolution.
        assert_eq!(s.seek, 0);
        assert!(s.rotation > s.overhead, "{s:?}");
    }

    #[test]
    fn random_reads_over_a_large_space_do_not_hit() {
        let mut d = drive(Some(ibm18es_cache()), None);
        let mut rng = RngStream::new(11, StreamId::Requests);
        let space = d.model.capacity_sectors() - 64;
        let (mut now, mut hits) = (0, 0);
        for _ in 0..3000 {
            let s = d.service(now, rng.below(space), 8, OpKind::Read);
            hits += is_hit(&s) as u32;
            now += s.total() + rng.below(10_000_000);
        }
        assert!(hits <= 3, "{hits} hits out of 3000");
    }

    #[test]
    fn write_back_acknowledges_from_the_buffer_and_destages_in_idle_time() {
        let bus = ms_to_ns(0.101);
        let mut d = drive(Some(ibm18es_cache()), None);
        let w = d.service(0, 2_000_000, 16, OpKind::Write);
        assert_eq!(w.total(), ms_to_ns(0.083) + 16 * bus, "{w:?}");
        // A read 0.1 ms after the write's completion finds the destage under way.
        let soon = d.service(w.total() + 100_000, 9_000_000, 8, OpKind::Read);
        assert!(soon.wait > 1_000_000, "{soon:?}");

        let mut d = drive(Some(ibm18es_cache()), None);
        let w = d.service(0, 2_000_000, 16, OpKind::Write);
        let late = d.service(w.total() + 50_000_000, 9_000_000, 8, OpKind::Read);
        assert_eq!(late.wait, 0, "{late:?}");
        // The same read on a drive without cache after the same write costs the same,
        // but for the destage having moved the arm.
        assert!(late.overhead > 0 && !is_hit(&late));
    }

    #[test]
    fn a_burst_of_writes_beyond_the_write_segments_runs_at_media_speed() {
        let mut rng = RngStream::new(5, StreamId::Requests);
        let lbas: Vec<u64> = (0..200).map(|_| rng.below(17_000_000)).collect();
        let mean = |cache: Option<DriveCacheConfig>| {
            let mut d = drive(cache, None);
            let mut now = 0;
            let mut sum = 0;
            for (i, &lba) in lbas.iter().enumerate() {
                let s = d.service(now, lba, 8, OpKind::Write);
                if i > 0 {
                    sum += s.total();
                }
                now += s.total();
            }
            sum as f64 / (lbas.len() - 1) as f64
        };
        let back = mean(Some(ibm18es_cache()));
        let through = mean(None);
        assert!(back > 0.7 * through && back < 1.3 * through, "write-back {back} ns, write-through {through} ns");
        // Spaced out, the same writes are all acknowledged from the buffer.
        let mut d = drive(Some(ibm18es_cache()), None);
        for (i, &lba) in lbas.iter().enumerate() {
            let s = d.service(i as u64 * 50_000_000, lba, 8, OpKind::Write);
            assert_eq!(s.wait, 0);
            assert!(s.total() < 2_000_000, "{s:?}");
        }
    }

    #[test]
    fn sequential_writes_combine_into_one_segment() {
        let mut d = drive(Some(ibm18es_cache()), None);
        let mut now = 0;
        for k in 0..8 {
            let s = d.service(now, 500_000 + 16 * k, 16, OpKind::Write);
            assert!(s.total() < 2_000_000, "write {k}: {s:?}");
            now += s.total();
        }
    }

    #[test]
    fn next_track_prefetch_goes_one_track_further_for_a_sequential_stream() {
        let cache = DriveCacheConfig {
            prefetch: PrefetchMode::NextTrack,
            segment_sectors: 4000,
            read_ahead_max_sectors: 4000,
            ..ibm18es_cache()
        };
        let d = drive(Some(cache), None);
        let params = d.model.cache.clone().unwrap();
        let geometry = &d.model.geometry;
        // A track without slips: its first run is the whole track.
        let whole = |l: u64| {
            let r = geometry.locate_run(l);
            r.address.sector == 0 && r.sectors == geometry.zones()[r.zone_index as usize].sectors_per_track
        };
        // A slip-free track after another one (and no slip on the track after it).
        let track = (1..).map(|t| t * 1000).find(|&l| whole(l) && whole(l + geometry.locate_run(l).sectors as u64));
        let start = track.unwrap();
        let spt = geometry.locate_run(start).sectors as u64;
        // A read of 8 sectors at the track's start, its segment starting there: to the end
        // of the track, whatever the maximum read-ahead and the segment size.
        for max in [0, 16, 4000] {
            let params = CacheParams { read_ahead_max: max, segment_sectors: 8, ..params.clone() };
            assert_eq!(d.prefetch_target(&params, start, start + 8, start), start + spt);
            // The same read with a segment that began on the track before: one track (of the
            // read's first sector's zone) more.
            assert_eq!(d.prefetch_target(&params, start, start + 8, start - 1), start + 2 * spt);
        }
    }

    /// A hit in the segment a read-ahead is filling raises the read-ahead's target (DiskSim):
    /// a sequential stream read while the read-ahead runs keeps it going past the first
    /// read's target.
    #[test]
    fn a_hit_during_read_ahead_extends_it() {
        let cache = DriveCacheConfig { prefetch: PrefetchMode::Segment, read_ahead_max_sectors: 256, ..ibm18es_cache() };
        let mut d = drive(Some(cache), None);
        let start = 1_000_000;
        let first = d.service(0, start, 16, OpKind::Read);
        // The first read's target is start + 16 + 256, some 7 ms of reading. Half a
        // millisecond after the read, the next 16 sectors are in: a hit while the read-ahead
        // runs, which moves the target to start + 32 + 256.
        let t = first.total() + 500_000;
        let second = d.service(t, start + 16, 16, OpKind::Read);
        assert!(is_hit(&second), "{second:?}");
        // Sectors past the first target, read by the extended read-ahead.
        let third = d.service(t + 20_000_000, start + 272, 16, OpKind::Read);
        assert!(is_hit(&third), "{third:?}");
        // Past the extended target: a miss.
        let fourth = d.service(t + 40_000_000, start + 288, 16, OpKind::Read);
        assert!(!is_hit(&fourth), "{fourth:?}");
    }

    /// A hit in another segment lets a running read-ahead go on, but does not move its
    /// target.
    #[test]
    fn a_hit_elsewhere_does_not_extend_a_read_ahead() {
        let mut d = drive(Some(ibm18es_cache()), None);
        let mut now = 0;
        // Segment A, at high LBAs, filled and idle.
        now += d.service(now, 5_000_000, 16, OpKind::Read).total() + 50_000_000;
        // A read at lower LBAs starts a read-ahead into segment B (target: its end + 511).
        now += d.service(now, 3_000_000, 16, OpKind::Read).total() + 200_000;
        // A hit in A while B's read-ahead runs.
        let hit = d.service(now, 5_000_016, 16, OpKind::Read);
        assert!(is_hit(&hit), "{hit:?}");
        // Long after: B holds up to its target, not beyond.
        now += hit.total() + 100_000_000;
        assert!(is_hit(&d.service(now, 3_000_016 + 400, 16, OpKind::Read)));
        assert!(!is_hit(&d.service(now + 50_000_000, 3_000_016 + 511, 16, OpKind::Read)));
    }

    /// A read that starts in the segment a read-ahead is filling and ends past what it has
    /// read is served by the read-ahead as it goes (DiskSim): no repositioning, no rotational
    /// wait; the host transfer starts after the hit overhead; and the read-ahead goes on past
    /// the read, so the stream's next read hits.
    #[test]
    fn a_read_ahead_serves_a_read_that_starts_in_its_segment() {
        let cache = DriveCacheConfig { prefetch: PrefetchMode::Segment, read_ahead_max_sectors: 256, ..ibm18es_cache() };
        let mut d = drive(Some(cache.clone()), None);
        let bus = ms_to_ns(d.model.config.bus_sector_ms);
        let revolution = d.model.revolution_ns() as u64;
        let start = 1_000_000;
        let first = d.service(0, start, 16, OpKind::Read);
        let t = first.total() + 200_000;
        let second = d.service(t, start + 16, 200, OpKind::Read);
        assert_eq!((second.seek, second.rotation, second.wait), (0, 0, 0), "{second:?}");
        assert_eq!(second.bus, 200 * bus);
        assert!(second.transfer < revolution, "{second:?}");
        let third = d.service(t + second.total() + 5_000_000, start + 216, 16, OpKind::Read);
        assert!(is_hit(&third), "{third:?}");
        // The hit overhead (after a read), as a full hit pays it.
        assert_eq!(second.overhead, third.overhead);
        assert!(second.overhead < ms_to_ns(cache.read_hit_after_read_ms) + 1_000_000);
    }

    /// "Read any free blocks": a read miss whose head lands past its first sector reads on
    /// round the track, so the track's sectors before it are cached too; a head that lands
    /// before it waits and caches nothing more.
    #[test]
    fn a_read_landing_past_its_sector_caches_the_track_before_it() {
        let cache = DriveCacheConfig { prefetch: PrefetchMode::None, read_any_free_blocks: true, ..ibm18es_cache() };
        let probe = drive(Some(cache.clone()), None);
        let geometry = &probe.model.geometry;
        let whole = |l: u64| {
            let r = geometry.locate_run(l);
            r.address.sector == 0 && r.sectors == geometry.zones()[r.zone_index as usize].sectors_per_track
        };
        let start = (1..).map(|t| t * 1000).find(|&l| whole(l)).unwrap();
        let spt = geometry.locate_run(start).sectors as u64;
        let sector_ns = 60e9 / probe.model.config.rpm / spt as f64;
        let lba = start + spt / 2;
        let (mut past, mut before) = (0, 0);
        for step in 0..40u64 {
            let mut d = drive(Some(cache.clone()), None);
            let now = step * 173_000;
            let first = d.service(now, lba, 8, OpKind::Read);
            let behind = first.rotation as f64 - (spt / 2) as f64 * sector_ns;
            if behind.abs() < 1_000.0 {
                continue; // too close to the edge to say
            }
            let again = d.service(now + first.total() + 1_000_000, start, 8, OpKind::Read);
            assert_eq!(is_hit(&again), behind > 0.0, "step {step}: {first:?}");
            if behind > 0.0 { past += 1 } else { before += 1 }
        }
        assert!(past > 5 && before > 5, "both cases seen: {past} past, {before} before");
    }

    /// DiskSim's target for "Buffer continuous read" 3 (to segment full) and 1 (track):
    /// `end` + the maximum read-ahead when there is one, whatever "Read-ahead over
    /// requested" says; without one, a segment past the end, or a segment from the start
    /// when the read's own data must stay. Track prefetch stops at the end of the track
    /// holding the read's last sector.
    #[test]
    fn read_ahead_targets_follow_disksim() {
        let d = drive(Some(ibm18es_cache()), None);
        let base = d.model.cache.clone().unwrap();
        let geometry = &d.model.geometry;
        let (start, end) = (1_000_000u64, 1_000_016u64);
        for over_requested in [false, true] {
            let p = CacheParams { prefetch: PrefetchMode::Segment, read_ahead_max: 100, segment_sectors: 64, over_requested, ..base.clone() };
            assert_eq!(d.prefetch_target(&p, start, end, start), end + 100);
        }
        let p = CacheParams { prefetch: PrefetchMode::Segment, read_ahead_max: 0, segment_sectors: 64, over_requested: true, ..base.clone() };
        assert_eq!(d.prefetch_target(&p, start, end, start), end + 64);
        let p = CacheParams { over_requested: false, ..p };
        assert_eq!(d.prefetch_target(&p, start, end, start), start + 64);
        // Track prefetch: to the end of the track (or of the maximum read-ahead, if sooner).
        let run = geometry.locate_run(end - 1);
        let track_end = end - 1 + run.sectors as u64;
        let p = CacheParams { prefetch: PrefetchMode::Track, read_ahead_max: 100_000, segment_sectors: 64, ..base.clone() };
        assert_eq!(d.prefetch_target(&p, start, end, start), track_end);
        let p = CacheParams { read_ahead_max: 1, ..p };
        assert_eq!(d.prefetch_target(&p, start, end, start), (end + 1).min(track_end));
    }

    #[test]
    fn a_write_invalidates_cached_reads() {
        let mut d = drive(Some(ibm18es_cache()), None);
        let first = d.service(0, 100_000, 16, OpKind::Read);
        let now = first.total() + 20_000_000;
        let w = d.service(now, 100_020, 4, OpKind::Write);
        let s = d.service(now + w.total() + 50_000_000, 100_016, 16, OpKind::Read);
        // The segment held the written sectors, so it is dropped whole: even the sectors
        // before the write miss.
        assert!(!is_hit(&s), "{s:?}");
        let s = d.service(now + 100_000_000, 100_016, 4, OpKind::Read);
        assert!(!is_hit(&s), "{s:?}");
    }

    /// Writes take segments from the shared pool (no segment reserved for writes): the
    /// written data can be read back from the buffer when the drive allows read hits on
    /// write data, and the write displaces the least recently used read segment.
    #[test]
    fn writes_share_the_segments_with_reads() {
        let shared = |hits: bool| DriveCacheConfig {
            segments: 2,
            separate_write_segment: false,
            read_hits_on_write_data: hits,
            ..ibm18es_cache()
        };
        for hits in [true, false] {
            let mut d = drive(Some(shared(hits)), None);
            let mut now = 0;
            let mut step = |d: &mut Drive, lba: u64, kind: OpKind| {
                let s = d.service(now, lba, 8, kind);
                now += s.total() + 50_000_000;
                s
            };
            // Two read segments, the one at 100 000 the least recently used.
            step(&mut d, 100_000, OpKind::Read);
            step(&mut d, 3_000_000, OpKind::Read);
            // A write elsewhere takes the least recently used segment.
            step(&mut d, 7_000_000, OpKind::Write);
            assert_eq!(is_hit(&step(&mut d, 7_000_000, OpKind::Read)), hits, "read hits on write data: {hits}");
            assert!(!is_hit(&step(&mut d, 100_008, OpKind::Read)), "the write displaced this segment");
        }
        // With a segment reserved for writes, the read segments stay.
        let mut d = drive(Some(DriveCacheConfig { separate_write_segment: true, segments: 3, ..shared(true) }), None);
        let first = d.service(0, 100_000, 8, OpKind::Read);
        let w = d.service(first.total() + 50_000_000, 7_000_000, 8, OpKind::Write);
        assert!(is_hit(&d.service(first.total() + w.total() + 100_000_000, 100_008, 8, OpKind::Read)));
    }
}

#[cfg(test)]
mod cache_off {
    use std::path::Path;

    /// Without `cache` the drives behave exactly as before the cache existed: the figures
    /// were recorded from the commit before it (54e0736). The configuration hashes are
    /// today's: the resolved configuration of a RAID-5 no longer shows RAID-1's `copies`.
    #[test]
    fn presets_without_cache_give_the_results_from_before_the_cache() {
        let expected = [
            ("ibm0661", "f341931c9d689e8b", 7091, 5916, 1041.6835691123404, 4412.4078075, 0.9798305094427613),
            ("hc550", "d5e896c8b16888cf", 7137, 5962, 38.290987317446806, 151.5192315, 0.5916570053689915),
        ];
        for (preset, hash, events, ops, mean, write_p99, utilization) in expected {
            let text = format!(
                "seed = 7\n[array]\nlayout = \"raid5\"\ndrives = 5\nstripe_unit_kib = 16\n[drive]\npreset = \"{preset}\"\nscheduler = \"sstf\"\n[workload]\nduration_s = 20\nread_fraction = 0.6\nsize = {{ distribution = \"uniform\", min_kib = 4, max_kib = 64, step_kib = 4 }}\n[workload.arrival]\nprocess = \"poisson\"\nrate_per_s = 60\n"
            );
            let out = crate::api::run_toml(&text, Path::new("."), None).unwrap();
            let s = &out.summary;
            assert_eq!(s["config_hash"], hash, "{preset}");
            assert_eq!(s["events"], events, "{preset}");
            assert_eq!(s["drives"]["disk_operations"], ops, "{preset}");
            assert_eq!(s["response_ms"]["all"]["mean"].as_f64(), Some(mean), "{preset}");
            assert_eq!(s["response_ms"]["write"]["p99"].as_f64(), Some(write_p99), "{preset}");
            assert_eq!(s["drives"]["mean_utilization"].as_f64(), Some(utilization), "{preset}");
        }
    }
}
