//! One streaming pass over a trace's raw records to summarise it ([`stats`]), in memory that
//! does not grow with the trace.
//!
//! Counting every distinct 4 KiB block exactly took 6.7 GB on a 20 M-line trace, and a single
//! 1 TB request allocated an entry for each of its 244 M blocks. Two sketches bound it:
//!
//! * **Footprint**: a HyperLogLog of the blocks touched ([`HyperLogLog`], 2¹⁶ one-byte
//!   registers: a relative standard error of 1.04 / √65536 = 0.41 %).
//! * **Hot-20 % share**: a *distinct sample* of blocks with their exact access counts
//!   ([`BlockSample`]): a block is in the sample when the top `level` bits of its hash are
//!   zero, so the sample is a uniform random sample of the distinct blocks, of at most
//!   [`SAMPLE_CAPACITY`] of them; when it fills, `level` grows by one and the blocks no
//!   longer chosen leave. A block chosen now was chosen all along, so its count is exact. The
//!   share of accesses in the hottest fifth of the *sampled* blocks estimates the share in
//!   the hottest fifth of all blocks; its error is estimated from 16 disjoint sub-samples
//!   (by other hash bits), each an independent sample at a sixteenth of the rate.
//!
//! A sample of *accesses* (Space-Saving, count-min) answers a different question: it finds
//! the few blocks hotter than N / k, while the hot fifth of a large trace is millions of
//! blocks, most far below N / k, where those sketches bound the share only to [20 %, 100 %].
//! Sampling *blocks* keeps the whole distribution of counts, which is what the share needs.
//!
//! While the trace touches at most [`SAMPLE_CAPACITY`] blocks, the sample holds them all: both
//! figures are then exact (and marked so).

use rustc_hash::{FxHashMap, FxHashSet};

use super::{open_records, to_sectors, TraceConfig, TraceStats};
use super::oracle_general::{is_oracle_general, OracleRecords, ORACLE_GENERAL};
use crate::error::{Error, Result};
use crate::sim::SECONDS_PER_YEAR;

/// Block size of footprint and locality.
const BLOCK_BYTES: u64 = 4096;

/// The hot area of `locality_hot20` is one block in this many (20 %), rounded up.
const HOT_AREA_ONE_IN: usize = 5;

/// Config key path used for configuration errors (`stats` has no caller-given key).
const STATS_KEY: &str = "trace";

/// Most blocks the distinct sample holds (about 8 MiB of map): below it every figure is exact.
pub const SAMPLE_CAPACITY: usize = 1 << 18;

/// Sub-samples the hot-share's error is estimated from.
const SUB_SAMPLES: usize = 16;

/// Registers of the HyperLogLog, 2^[`HLL_PRECISION`] (64 KiB).
const HLL_PRECISION: u32 = 16;

/// Standard errors in the error bounds `trace info` states: three, which an estimate exceeds
/// 0.3 % of the time.
const ERRORS_IN_BOUND: f64 = 3.0;

/// Most distinct volumes `trace info` tells apart (it only says "more" beyond).
const MAX_VOLUMES: usize = 1024;

/// The widest step between consecutive records is noted when it spans at least half the
/// trace, [`WIDE_STEP_MIN_NS`] and this many times the mean of the other steps: one
/// timestamp far from its neighbours (a year's typo) makes such a step, and a replay would
/// wait through it.
const WIDE_STEP_OVER_MEAN: f64 = 1000.0;

/// The narrowest step noted, ns (a minute): a step of a second is the resolution of a
/// whole-second trace, not a surprise.
const WIDE_STEP_MIN_NS: u64 = 60_000_000_000;

/// Blocks between two questions to `keep_going` inside one large request (a 1 TB request
/// has 244 M).
const BLOCKS_PER_QUESTION: u64 = 1 << 24;

/// A 64-bit mix of a block number (SplitMix64's finaliser): every bit depends on every bit of
/// the input, which both sketches need of their hash.
fn hash(block: u64) -> u64 {
    let mut z = block.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// HyperLogLog (Flajolet et al., 2007) over 64-bit hashes: the top [`HLL_PRECISION`] bits
/// pick a register, which keeps the largest rank (leading zeros + 1) of the other bits seen.
#[derive(Debug, Clone)]
pub struct HyperLogLog {
    registers: Vec<u8>,
}

impl HyperLogLog {
    /// Relative standard error of [`HyperLogLog::estimate`]: 1.04 / √registers.
    pub const RELATIVE_STANDARD_ERROR: f64 = 1.04 / 256.0;

    pub fn new() -> Self {
        HyperLogLog { registers: vec![0; 1 << HLL_PRECISION] }
    }

    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        let index = (hash >> (64 - HLL_PRECISION)) as usize;
        let rest = hash << HLL_PRECISION;
        // Leading zeros of the 48 remaining bits, plus one (a rest of zero has rank 49).
        let rank = (rest.leading_zeros().min(64 - HLL_PRECISION) + 1) as u8;
        if rank > self.registers[index] {
            self.registers[index] = rank;
        }
    }

    /// The estimated number of distinct hashes inserted: the harmonic-mean estimate, or
    /// linear counting while it is below 2.5 × registers and some register is empty (the
    /// published small-range correction). 64-bit hashes need no large-range correction.
    pub fn estimate(&self) -> f64 {
        let m = self.registers.len() as f64;
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let sum: f64 = self.registers.iter().map(|&r| (-(r as f64)).exp2()).sum();
        let raw = alpha * m * m / sum;
        let zeros = self.registers.iter().filter(|&&r| r == 0).count();
        if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            raw
        }
    }
}

impl Default for HyperLogLog {
    fn default() -> Self {
        Self::new()
    }
}

/// A uniform sample of the distinct blocks of a trace, each with its exact access count (see
/// the module docs): a block is kept while the top `level` bits of its hash are zero.
#[derive(Debug, Clone, Default)]
#[allow(clippy::len_without_is_empty)]
pub struct BlockSample {
    /// Block → accesses (the hash is worked out again where needed: 16 bytes an entry).
    counts: FxHashMap<u64, u64>,
    level: u32,
}

impl BlockSample {
    /// Whether a block of this hash is in the sample at the current level.
    #[inline]
    fn chosen(&self, hash: u64) -> bool {
        self.level == 0 || hash >> (64 - self.level) == 0
    }

    /// Count one access to `block` (of hash `block_hash`).
    #[inline]
    pub fn access(&mut self, block: u64, block_hash: u64) {
        if !self.chosen(block_hash) {
            return;
        }
        *self.counts.entry(block).or_insert(0) += 1;
        while self.counts.len() > SAMPLE_CAPACITY {
            self.level += 1;
            let level = self.level;
            self.counts.retain(|&block, _| hash(block) >> (64 - level) == 0);
        }
    }

    /// Whether the sample holds every block touched (level 0).
    pub fn is_exact(&self) -> bool {
        self.level == 0
    }

    /// Distinct blocks sampled.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// The share of accesses in the hottest ⌈1/5⌉ of the sampled blocks, and its standard
    /// error estimated from [`SUB_SAMPLES`] disjoint sub-samples (0 when exact).
    pub fn hot_share(&self) -> (f64, f64) {
        let all: Vec<u64> = self.counts.values().copied().collect();
        let share = hot_share_of(all);
        if self.is_exact() {
            return (share, 0.0);
        }
        let mut groups: Vec<Vec<u64>> = vec![Vec::new(); SUB_SAMPLES];
        for (&block, &count) in &self.counts {
            groups[(hash(block) & (SUB_SAMPLES as u64 - 1)) as usize].push(count);
        }
        let shares: Vec<f64> = groups.into_iter().filter(|g| !g.is_empty()).map(hot_share_of).collect();
        let n = shares.len() as f64;
        if n < 2.0 {
            return (share, f64::NAN);
        }
        let mean = shares.iter().sum::<f64>() / n;
        let variance = shares.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / (n - 1.0);
        // Each sub-sample has 1/n of the blocks; the whole sample's error is 1/√n of theirs.
        (share, (variance / n).sqrt())
    }
}

/// The share of all accesses in the ⌈len / 5⌉ blocks with the most (ties at the boundary do
/// not change it).
fn hot_share_of(mut counts: Vec<u64>) -> f64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0.0;
    }
    let hot = counts.len().div_ceil(HOT_AREA_ONE_IN);
    counts.sort_unstable_by(|a, b| b.cmp(a));
    counts[..hot].iter().sum::<u64>() as f64 / total as f64
}

/// Read the whole trace once (streaming) and summarise it.
///
/// Uses the trace's own addresses (no folding) and times (no reordering); `max_requests`
/// applies, and `time_scale` scales the duration (so the rate is the one a replay would
/// offer). With `n` requests:
///
/// * `requests` = `n`; `read_fraction` = reads / `n`;
/// * `mean_size_bytes` = mean request size in bytes, as stated in the trace;
/// * `duration_s` = (latest − earliest timestamp) × `time_scale` (the trace need not be
///   sorted), seconds;
/// * `iops` = `n` / `duration_s` (0 when the duration is 0);
/// * `footprint_bytes` = 4096 × the number of distinct 4 KiB blocks touched, a block being
///   `byte address / 4096` and a request touching every block from its first to its last
///   byte; exact up to [`SAMPLE_CAPACITY`] blocks, a HyperLogLog estimate beyond
///   (`footprint_exact`, `footprint_error` = three relative standard errors, 1.2 %);
/// * `locality_hot20`: each touched block is ranked by how many requests touch it; the hot
///   area is the ⌈20 %⌉ highest-ranked of the distinct touched blocks; `locality_hot20` is
///   the share of all block accesses (a request accesses every block it touches) that fall
///   in the hot area. For one-block requests this is the PRO paper's "x % of requests fall
///   in the hottest 20 % of the area"; weighting by blocks keeps it meaningful for traces of
///   large requests, where ranking only the blocks requests start in would call every
///   request hot. Ties at the boundary do not change the value. Exact up to
///   [`SAMPLE_CAPACITY`] blocks, estimated from a distinct sample beyond
///   (`locality_hot20_exact`, `locality_hot20_error` = three standard errors, absolute);
/// * `volumes`: distinct volumes named by the format's volume field (ASU, LUN, host and
///   disk, volume id; up to 1,024, `None` for formats without one); a replay puts them all
///   in one address space;
/// * `whole_second_timestamps`: every timestamp is a whole second (Tencent CBS), so the
///   duration and rate are coarse and requests of one second replay together;
/// * `notes`: those two said in words, when they apply, and the widest step between
///   consecutive records in file order, when it is most of the span, a minute or more, and
///   a thousand times the others' mean (a timestamp far from its neighbours).
///
/// A request larger than a replay supports (2³² − 1 sectors, 2 TiB) is an error naming its
/// file and line, as in a replay. An empty trace gives all zeros. Config errors name the key
/// `trace.…`.
pub fn stats(cfg: &TraceConfig) -> Result<TraceStats> {
    Ok(stats_until(cfg, &mut |_| true)?.expect("never cancelled"))
}

/// Requests read between two questions to [`stats_until`]'s `keep_going`.
const RECORDS_PER_QUESTION: u64 = 1 << 16;

/// [`stats`], asking `keep_going(records read)` every 65,536 records, and every 2²⁴ blocks
/// inside a large request, whether to go on: a trace can hold billions. `None` when it said
/// no.
pub fn stats_until(cfg: &TraceConfig, keep_going: &mut dyn FnMut(u64) -> bool) -> Result<Option<TraceStats>> {
    super::check_time_scale(cfg, STATS_KEY)?;
    if cfg.format == ORACLE_GENERAL || (cfg.format == "auto" && cfg.csv.is_none() && is_oracle_general(&cfg.path)?) {
        return oracle_stats_until(cfg, keep_going);
    }
    let (mut records, format) = open_records(cfg, STATS_KEY)?;
    let mut requests = 0u64;
    let mut reads = 0u64;
    let mut size_sum = 0u128;
    let mut earliest = u64::MAX;
    let mut latest = 0u64;
    let mut whole_seconds = true;
    // (time, line) of the previous record, and the widest step between two consecutive
    // records in file order: (ns, line before, line after).
    let mut previous: Option<(u64, u64)> = None;
    let mut widest_step = (0u64, 0u64, 0u64);
    let mut footprint = HyperLogLog::new();
    let mut sample = BlockSample::default();
    let mut volumes: FxHashSet<u64> = FxHashSet::default();
    let mut has_volumes = false;
    let mut blocks_since_question = 0u64;
    while let Some((line, raw)) = records.next_record()? {
        if requests % RECORDS_PER_QUESTION == RECORDS_PER_QUESTION - 1 && !keep_going(requests + 1) {
            return Ok(None);
        }
        // What a replay refuses, trace info refuses too, at the same line.
        to_sectors(&raw).map_err(|message| Error::trace(records.path(), line, message))?;
        requests += 1;
        reads += u64::from(!raw.is_write);
        size_sum += u128::from(raw.size_bytes);
        earliest = earliest.min(raw.time_ns);
        latest = latest.max(raw.time_ns);
        whole_seconds &= raw.time_ns % 1_000_000_000 == 0;
        if let Some((time_ns, previous_line)) = previous {
            let step = raw.time_ns.abs_diff(time_ns);
            if step > widest_step.0 {
                widest_step = (step, previous_line, line);
            }
        }
        previous = Some((raw.time_ns, line));
        if let Some(volume) = records.last_volume() {
            has_volumes = true;
            if volumes.len() <= MAX_VOLUMES {
                volumes.insert(volume_hash(volume));
            }
        }
        let first_block = raw.offset_bytes / BLOCK_BYTES;
        let last_block = raw.offset_bytes.saturating_add(raw.size_bytes - 1) / BLOCK_BYTES;
        for block in first_block..=last_block {
            let h = hash(block);
            footprint.insert_hash(h);
            sample.access(block, h);
            blocks_since_question += 1;
            if blocks_since_question == BLOCKS_PER_QUESTION {
                blocks_since_question = 0;
                if !keep_going(requests) {
                    return Ok(None);
                }
            }
        }
    }
    if requests == 0 {
        return Ok(Some(TraceStats::empty(format, Vec::new())));
    }
    let exact = sample.is_exact();
    let distinct_blocks = if exact { sample.len() as f64 } else { footprint.estimate().round() };
    let (hot_share, hot_error) = sample.hot_share();
    let duration_s = (latest - earliest) as f64 / 1e9 * cfg.time_scale;
    let volumes = has_volumes.then_some(volumes.len() as u64);
    let whole_second_timestamps = whole_seconds && requests > 1;
    let mut notes = Vec::new();
    if let Some(n) = volumes.filter(|&n| n > 1) {
        let count = if n as usize > MAX_VOLUMES { format!("more than {MAX_VOLUMES}") } else { n.to_string() };
        notes.push(format!(
            "the trace mixes {count} volumes: a replay puts their addresses in one address space, where requests of \
             different volumes to the same offset meet (split the trace by volume to replay one)"
        ));
    }
    if whole_second_timestamps {
        notes.push(
            "every timestamp is a whole second: the duration and the rate are known to a second, and a replay issues \
             each second's requests at the same instant"
                .to_string(),
        );
    }
    if let Some(note) = wide_step_note(widest_step, latest - earliest, requests, cfg.time_scale) {
        notes.push(note);
    }
    if !exact {
        notes.push(format!(
            "footprint and hot-20 % share are estimates: the trace touches more than {SAMPLE_CAPACITY} distinct 4 KiB \
             blocks (± is three standard errors)"
        ));
    }
    Ok(Some(TraceStats {
        format,
        requests,
        read_fraction: reads as f64 / requests as f64,
        mean_size_bytes: size_sum as f64 / requests as f64,
        duration_s,
        iops: if duration_s > 0.0 { requests as f64 / duration_s } else { 0.0 },
        footprint_bytes: distinct_blocks as u64 * BLOCK_BYTES,
        footprint_exact: exact,
        footprint_error: if exact { 0.0 } else { ERRORS_IN_BOUND * HyperLogLog::RELATIVE_STANDARD_ERROR },
        locality_hot20: hot_share,
        locality_hot20_exact: exact,
        locality_hot20_error: ERRORS_IN_BOUND * hot_error,
        volumes,
        whole_second_timestamps,
        notes,
    }))
}

/// [`stats_until`] of libCacheSim's binary `oracleGeneral` trace, which `raidlab cache` reads:
/// its records name objects, not addresses, and carry no operation, so each object counts as
/// one 4 KiB block (as the cache counts it: `footprint_bytes` is 4 KiB per distinct object,
/// `locality_hot20` the share of requests to the hottest fifth of the objects) and every
/// request as a read. `mean_size_bytes` is the objects' stated size; records of size 0 are
/// left out, as the cache and libCacheSim leave them out. `max_requests` counts records.
fn oracle_stats_until(cfg: &TraceConfig, keep_going: &mut dyn FnMut(u64) -> bool) -> Result<Option<TraceStats>> {
    if cfg.csv.is_some() {
        return Err(Error::config(format!("{STATS_KEY}.csv"), "a column mapping is only used with format = \"csv\""));
    }
    let mut records = OracleRecords::open(&cfg.path, cfg.max_requests)?;
    let mut read = 0u64;
    let mut requests = 0u64;
    let mut size_zero = 0u64;
    let mut size_sum = 0u128;
    let mut earliest = u32::MAX;
    let mut latest = 0u32;
    let mut footprint = HyperLogLog::new();
    let mut sample = BlockSample::default();
    while let Some(record) = records.next_record()? {
        read += 1;
        if read.is_multiple_of(RECORDS_PER_QUESTION) && !keep_going(read) {
            return Ok(None);
        }
        if record.size == 0 {
            size_zero += 1;
            continue;
        }
        requests += 1;
        size_sum += u128::from(record.size);
        earliest = earliest.min(record.time_s);
        latest = latest.max(record.time_s);
        let h = hash(record.object);
        footprint.insert_hash(h);
        sample.access(record.object, h);
    }
    let mut notes = vec![
        "an oracleGeneral trace names objects, not addresses, and has no reads or writes: each object counts as one \
         4 KiB block, as raidlab cache counts it (footprint: 4 KiB per distinct object), and every request as a read"
            .to_string(),
    ];
    if size_zero > 0 {
        notes.push(format!("{size_zero} records of size 0 left out, as raidlab cache and libCacheSim leave them out"));
    }
    if requests == 0 {
        return Ok(Some(TraceStats::empty(ORACLE_GENERAL, notes)));
    }
    let exact = sample.is_exact();
    let distinct = if exact { sample.len() as f64 } else { footprint.estimate().round() };
    let (hot_share, hot_error) = sample.hot_share();
    let duration_s = f64::from(latest - earliest) * cfg.time_scale;
    let whole_second_timestamps = requests > 1;
    if whole_second_timestamps {
        notes.push(
            "every timestamp is a whole second (oracleGeneral keeps seconds): the duration and the rate are known to a \
             second"
                .to_string(),
        );
    }
    if !exact {
        notes.push(format!(
            "footprint and hot-20 % share are estimates: the trace names more than {SAMPLE_CAPACITY} distinct objects \
             (± is three standard errors)"
        ));
    }
    Ok(Some(TraceStats {
        format: ORACLE_GENERAL,
        requests,
        read_fraction: 1.0,
        mean_size_bytes: size_sum as f64 / requests as f64,
        duration_s,
        iops: if duration_s > 0.0 { requests as f64 / duration_s } else { 0.0 },
        footprint_bytes: distinct as u64 * BLOCK_BYTES,
        footprint_exact: exact,
        footprint_error: if exact { 0.0 } else { ERRORS_IN_BOUND * HyperLogLog::RELATIVE_STANDARD_ERROR },
        locality_hot20: hot_share,
        locality_hot20_exact: exact,
        locality_hot20_error: ERRORS_IN_BOUND * hot_error,
        volumes: None,
        whole_second_timestamps,
        notes,
    }))
}

/// The note on the widest step between consecutive records (`(ns, line before, line
/// after)`) when it is most of the trace's `span_ns` and far wider than the others (see
/// [`WIDE_STEP_OVER_MEAN`]).
fn wide_step_note(widest_step: (u64, u64, u64), span_ns: u64, requests: u64, time_scale: f64) -> Option<String> {
    let (step_ns, before, after) = widest_step;
    if requests < 3 || step_ns < WIDE_STEP_MIN_NS || step_ns.saturating_mul(2) < span_ns {
        return None;
    }
    // The other steps' mean, from the span they leave (a far record's step back, in the
    // middle of a trace, leaves next to nothing).
    let others_mean_ns = span_ns.saturating_sub(step_ns) as f64 / (requests - 2) as f64;
    if (step_ns as f64) < WIDE_STEP_OVER_MEAN * others_mean_ns {
        return None;
    }
    let step_s = step_ns as f64 / 1e9 * time_scale;
    let years = if step_s >= SECONDS_PER_YEAR { format!(" (about {:.0} years)", step_s / SECONDS_PER_YEAR) } else { String::new() };
    Some(format!(
        "{:.1} % of the trace's span lies in one step between consecutive records, of {step_s:.0} s{years} between \
         lines {before} and {after}: a timestamp far from the others stretches the duration and lowers the rate, \
         and a replay waits through the gap",
        step_ns as f64 * 100.0 / span_ns as f64
    ))
}

/// A volume field's text as a 64-bit key (FNV-1a): volumes are told apart, not kept.
fn volume_hash(volume: &str) -> u64 {
    volume.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{config, TempFile, MSR_SAMPLE, SYSTOR_SAMPLE, TENCENT_SAMPLE};
    use super::super::FoldMode;
    use super::*;

    #[test]
    fn oracle_general_traces_are_summarised_as_the_cache_reads_them() {
        // Objects 7 7 8 9 (and one of size 0) over 10 s: 3 distinct objects, 4 requests.
        let records = [(100, 7, 4096), (104, 7, 4096), (105, 8, 512), (107, 3, 0), (110, 9, 8192)];
        let bytes = crate::cache::trace::tests::oracle_bytes(&records);
        let file = TempFile::new("stats.oracleGeneral.bin", &bytes);
        let unnamed = TempFile::new("stats-oracle.bin", &bytes);
        for (file, format) in [(&file, "auto"), (&unnamed, "auto"), (&unnamed, "oracleGeneral")] {
            let stats = stats(&config(&file.0, format)).unwrap();
            assert_eq!(stats.format, "oracleGeneral");
            assert_eq!((stats.requests, stats.read_fraction), (4, 1.0));
            assert_eq!(stats.mean_size_bytes, (4096.0 * 2.0 + 512.0 + 8192.0) / 4.0);
            assert_eq!((stats.duration_s, stats.iops), (10.0, 0.4));
            assert_eq!(stats.footprint_bytes, 3 * 4096);
            // The hottest fifth of 3 objects is one, object 7: 2 of the 4 requests.
            assert_eq!(stats.locality_hot20, 0.5);
            assert!(stats.notes.iter().any(|note| note.contains("1 records of size 0")), "{:?}", stats.notes);
        }
        let text = TempFile::new("stats-text.csv", b"0,1,512,r,0\n0,2,512,r,1\n0,3,512,r,2\n0,4,512,r,3\n");
        let err = stats(&config(&text.0, "oracleGeneral")).unwrap_err().to_string();
        assert!(err.contains("not an oracleGeneral trace"), "{err}");
    }

    #[test]
    fn msr_sample_stats() {
        let stats = stats(&config(MSR_SAMPLE, "msr")).unwrap();
        eprintln!("MSR sample stats: {stats:?}");
        assert_eq!(stats.requests, 1000);
        assert_eq!(stats.read_fraction, 0.508);
        assert_eq!(stats.mean_size_bytes, 9689.6);
        assert!((stats.duration_s - 127.233_494_1).abs() < 1e-9);
        assert!((stats.iops - 1000.0 / 127.233_494_1).abs() < 1e-9);
        // Independently computed from the file: 1917 distinct 4 KiB blocks, 2473 block
        // accesses, 940 of them in the hottest 384 blocks.
        assert_eq!(stats.footprint_bytes, 1917 * 4096);
        assert_eq!(stats.locality_hot20, 940.0 / 2473.0);
    }

    #[test]
    fn systor_and_tencent_sample_stats() {
        // Expected values computed independently from the files (block accesses in the
        // hottest fifth of touched blocks / all block accesses).
        let systor = stats(&config(SYSTOR_SAMPLE, "systor")).unwrap();
        eprintln!("Systor sample stats: {systor:?}");
        assert_eq!(systor.requests, 999);
        assert_eq!(systor.read_fraction, 826.0 / 999.0);
        assert!((systor.mean_size_bytes - 39_161.593_593_593_59).abs() < 1e-6);
        assert!((systor.duration_s - 2.447_767).abs() < 1e-9);
        assert_eq!(systor.footprint_bytes, 9831 * 4096);
        assert_eq!(systor.locality_hot20, 2602.0 / 10466.0);

        let tencent = stats(&config(TENCENT_SAMPLE, "tencent")).unwrap();
        eprintln!("Tencent sample stats: {tencent:?}");
        assert_eq!(tencent.requests, 50_000);
        assert_eq!(tencent.read_fraction, 0.490_42);
        assert!((tencent.mean_size_bytes - 30_367.846_4).abs() < 1e-6);
        // Whole-second timestamps: the sample spans seconds …199 and …200.
        assert_eq!(tencent.duration_s, 1.0);
        assert_eq!(tencent.iops, 50_000.0);
        // 334,782 distinct blocks: more than the sample holds, so both are estimates, each
        // within the error it states of the exact figure.
        assert!(!tencent.footprint_exact && !tencent.locality_hot20_exact);
        let exact_blocks = 334_782.0;
        let blocks = tencent.footprint_bytes as f64 / 4096.0;
        assert!((blocks - exact_blocks).abs() <= tencent.footprint_error * exact_blocks, "{blocks} blocks");
        let exact_share = 110_428.0 / 378_253.0;
        assert!(tencent.locality_hot20_error > 0.0 && tencent.locality_hot20_error < 0.05, "{tencent:?}");
        assert!((tencent.locality_hot20 - exact_share).abs() <= tencent.locality_hot20_error, "{tencent:?}");
        // Volumes and whole seconds are flagged.
        assert!(tencent.volumes.is_some_and(|v| v > 1), "{:?}", tencent.volumes);
        assert!(tencent.whole_second_timestamps);
        assert!(tencent.notes.iter().any(|n| n.starts_with("the trace mixes")), "{:?}", tencent.notes);
        assert!(tencent.notes.iter().any(|n| n.starts_with("every timestamp is a whole second")), "{:?}", tencent.notes);
        // The others are exact, and not whole seconds; the MSR sample is one host's one disk.
        assert!(systor.footprint_exact && systor.locality_hot20_exact && !systor.whole_second_timestamps);
        let msr = stats(&config(MSR_SAMPLE, "msr")).unwrap();
        assert_eq!(msr.volumes, Some(1));
        assert!(msr.notes.is_empty(), "{:?}", msr.notes);
    }

    #[test]
    fn a_timestamp_far_from_its_neighbours_is_named_by_its_lines() {
        // 1,000 records a millisecond apart in 2023 (Unix seconds, as MSR and Systor keep
        // them); record 500 is stamped 1970 instead.
        let trace = |far: Option<f64>| {
            let mut text = String::new();
            for i in 0..1000u64 {
                let time = match far {
                    Some(far) if i == 499 => far,
                    _ => 1.7e9 + i as f64 * 1e-3,
                };
                text.push_str(&format!("0,{},4096,r,{time:.3}\n", i * 8));
            }
            TempFile::new("far.spc", text.as_bytes())
        };
        let file = trace(Some(0.0));
        let far = stats(&config(&file.0, "spc")).unwrap();
        assert!(far.duration_s > 1.6e9, "{far:?}");
        let note = far.notes.iter().find(|n| n.contains("one step between consecutive records")).expect("noted");
        // Line 500 is on both sides of a step that wide; the widest of the two is named.
        assert!(note.contains("of 1700000000 s (about 54 years) between lines 500 and 501"), "{note}");
        // The same trace in order is not noted, nor are the real samples (whole seconds:
        // Tencent's one-second step is its whole span).
        let file = trace(None);
        assert!(stats(&config(&file.0, "spc")).unwrap().notes.is_empty());
        for (sample, format) in [(TENCENT_SAMPLE, "tencent"), (MSR_SAMPLE, "msr"), (SYSTOR_SAMPLE, "systor")] {
            let notes = stats(&config(sample, format)).unwrap().notes;
            assert!(!notes.iter().any(|n| n.contains("one step")), "{sample}: {notes:?}");
        }
        // A pause of an hour in a busy trace is most of its span: noted, as a replay waits
        // through it; a pause of ten seconds is under the floor of a minute.
        for (pause_s, noted) in [(3600.0, true), (10.0, false)] {
            let mut text = String::new();
            for i in 0..200u64 {
                let time = i as f64 * 1e-3 + if i >= 100 { pause_s } else { 0.0 };
                text.push_str(&format!("0,{},4096,r,{time:.3}\n", i * 8));
            }
            let file = TempFile::new("pause.spc", text.as_bytes());
            let notes = stats(&config(&file.0, "spc")).unwrap().notes;
            assert_eq!(notes.iter().any(|n| n.contains("between lines 100 and 101")), noted, "{pause_s}: {notes:?}");
        }
    }

    #[test]
    fn a_one_terabyte_request_is_summarised_and_a_larger_than_replay_allows_is_an_error() {
        // Used to allocate an entry per block (244 M of them) and abort.
        let file = TempFile::new("huge.spc", b"0,0,512,r,0\n0,0,1000000000000,w,1\n");
        let stats = stats(&config(&file.0, "spc")).unwrap();
        let blocks = 1e12_f64 / 4096.0;
        let estimated = stats.footprint_bytes as f64 / 4096.0;
        assert!(!stats.footprint_exact);
        assert!((estimated - blocks.ceil()).abs() <= stats.footprint_error * blocks, "{estimated} blocks");
        // Every block accessed once but block 0 twice: the hot fifth holds a fifth of the accesses.
        assert!((stats.locality_hot20 - 0.2).abs() <= stats.locality_hot20_error.max(1e-3), "{stats:?}");
        // Beyond 2^32 − 1 sectors a replay refuses the request: so does trace info, at its line.
        let file = TempFile::new("huger.spc", b"0,0,512,r,0\n0,0,2199023255552,w,1\n");
        let err = stats_until(&config(&file.0, "spc"), &mut |_| true).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}:2: request of 2199023255552 bytes is larger than raidlab supports", file.0.display())), "{err}");
    }

    #[test]
    fn the_sample_stays_within_its_capacity_and_its_estimate_within_its_error() {
        // 4 M distinct blocks, block b accessed (b mod 10) + 1 times: the exact hot-fifth share
        // is that of the blocks accessed 9 and 10 times, 19 / 55.
        let mut sample = BlockSample::default();
        let mut footprint = HyperLogLog::new();
        let blocks = 4_000_000u64;
        for block in 0..blocks {
            let h = hash(block);
            footprint.insert_hash(h);
            for _ in 0..=(block % 10) {
                sample.access(block, h);
            }
            assert!(sample.len() <= SAMPLE_CAPACITY);
        }
        assert!(!sample.is_exact());
        let (share, error) = sample.hot_share();
        assert!((share - 19.0 / 55.0).abs() <= ERRORS_IN_BOUND * error && error < 0.01, "{share} ± {error}");
        let estimate = footprint.estimate();
        let bound = ERRORS_IN_BOUND * HyperLogLog::RELATIVE_STANDARD_ERROR * blocks as f64;
        assert!((estimate - blocks as f64).abs() <= bound, "{estimate}");
    }

    #[test]
    fn hyperloglog_counts_small_sets_almost_exactly() {
        // Linear counting below 2.5 × 65,536 registers.
        for n in [1u64, 10, 1_000, 20_000] {
            let mut hll = HyperLogLog::new();
            for block in 0..n {
                hll.insert_hash(hash(block));
                hll.insert_hash(hash(block)); // duplicates change nothing
            }
            let estimate = hll.estimate();
            assert!((estimate - n as f64).abs() <= 0.02 * n as f64 + 1.0, "{n}: {estimate}");
        }
    }

    #[test]
    fn stats_use_raw_addresses_and_respect_max_requests() {
        let mut cfg = config(MSR_SAMPLE, "msr");
        cfg.max_requests = Some(3);
        cfg.fold = FoldMode::Scale;
        cfg.time_scale = 0.5;
        let stats = stats(&cfg).unwrap();
        // Lines 1–3: writes of 2048, 512 and 4096 B at 9056014336, 11855351808, 5548077056
        // (three distinct blocks), 512 ticks (51.2 µs) apart at most, halved by the scale.
        assert_eq!(stats.requests, 3);
        assert_eq!(stats.read_fraction, 0.0);
        assert_eq!(stats.mean_size_bytes, 6656.0 / 3.0);
        assert_eq!(stats.footprint_bytes, 3 * 4096);
        assert!((stats.duration_s - 25_600e-9).abs() < 1e-15);
        assert!((stats.iops - 3.0 / 25_600e-9).abs() < 1e-3);
    }

    #[test]
    fn keep_going_is_asked_every_65536_records_and_stops_the_pass() {
        // 200,000 one-line SPC records: asked at 65,536, 131,072 and 196,608 records.
        let lines: String = (0..200_000).map(|i| format!("0,{i},512,r,{}\n", i as f64 / 1000.0)).collect();
        let file = TempFile::new("long.spc", lines.as_bytes());
        let cfg = config(&file.0, "spc");
        let mut asked = Vec::new();
        let all = stats_until(&cfg, &mut |read| {
            asked.push(read);
            true
        })
        .unwrap()
        .unwrap();
        assert_eq!(all.requests, 200_000);
        assert_eq!(asked, [65_536, 131_072, 196_608]);
        let mut asked = 0;
        let stopped = stats_until(&cfg, &mut |_| {
            asked += 1;
            false
        })
        .unwrap();
        assert_eq!((stopped, asked), (None, 1));
    }

    #[test]
    fn a_time_scale_a_replay_would_refuse_is_refused() {
        for time_scale in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let mut cfg = config(MSR_SAMPLE, "msr");
            cfg.time_scale = time_scale;
            let err = stats(&cfg).unwrap_err().to_string();
            assert!(err.starts_with("trace.time_scale: expected a positive finite factor"), "{err}");
        }
    }

    #[test]
    fn locality_counts_block_accesses_in_the_hottest_fifth_of_touched_blocks() {
        // Accesses per block: 0 → 3, 1 → 2 (a tail and a start), 2 → 1, 3 → 1 (a tail),
        // 10 → 1: 8 accesses to 5 distinct blocks; the hot area is ⌈5 / 5⌉ = 1 block
        // (block 0) with 3 of the 8 accesses.
        let lines = [
            "0,0,512,r,0",     // block 0
            "0,1,512,r,1",     // block 0
            "0,7,1024,w,2",    // block 0, tail in block 1
            "0,8,512,r,3",     // block 1
            "0,16,8192,w,4",   // block 2, tail in block 3
            "0,80,4096,r,4.5", // block 10
        ];
        let file = TempFile::new("locality.spc", lines.join("\n").as_bytes());
        let stats = stats(&config(&file.0, "spc")).unwrap();
        assert_eq!(stats.requests, 6);
        assert_eq!(stats.footprint_bytes, 5 * 4096);
        assert_eq!(stats.locality_hot20, 3.0 / 8.0);
        assert_eq!(stats.duration_s, 4.5);
        assert_eq!(stats.iops, 6.0 / 4.5);
        assert_eq!(stats.read_fraction, 4.0 / 6.0);
    }

    #[test]
    fn empty_trace_stats_are_zero() {
        let file = TempFile::new("empty.spc", b"\n\n");
        let stats = stats(&config(&file.0, "spc")).unwrap();
        assert_eq!(stats.requests, 0);
        assert_eq!(stats.footprint_bytes, 0);
        assert_eq!(stats.iops, 0.0);
    }

    #[test]
    fn stats_config_errors_use_the_trace_key() {
        match stats(&config(MSR_SAMPLE, "nope")) {
            Err(crate::error::Error::Config { key, .. }) => assert_eq!(key, "trace.format"),
            other => panic!("expected a config error, got {other:?}"),
        }
    }
}
