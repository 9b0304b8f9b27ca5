//! One streaming pass over a trace's raw records to summarise it ([`stats`]).

use rustc_hash::FxHashMap;

use super::{open_records, TraceConfig, TraceStats};
use crate::error::Result;

/// Block size of footprint and locality.
const BLOCK_BYTES: u64 = 4096;

/// The hot area of `locality_hot20` is one block in this many (20 %), rounded up.
const HOT_AREA_ONE_IN: usize = 5;

/// Config key path used for configuration errors (`stats` has no caller-given key).
const STATS_KEY: &str = "trace";

/// Read the whole trace once (streaming) and summarise it.
///
/// Uses the trace's own addresses (no folding) and times (no `time_scale`, no reordering);
/// `max_requests` applies. With `n` requests:
///
/// * `requests` = `n`; `read_fraction` = reads / `n`;
/// * `mean_size_bytes` = mean request size in bytes, as stated in the trace;
/// * `duration_s` = latest − earliest timestamp (the trace need not be sorted), seconds;
/// * `iops` = `n` / `duration_s` (0 when the duration is 0);
/// * `footprint_bytes` = 4096 × the number of distinct 4 KiB blocks touched, a block being
///   `byte address / 4096` and a request touching every block from its first to its last
///   byte;
/// * `locality_hot20`: each touched block is ranked by how many requests *start* in it (a
///   block only ever covered by the tail of a request counts 0); the hot area is the
///   ⌈20 %⌉ highest-ranked of the distinct touched blocks; `locality_hot20` is the share of
///   requests whose first block is in the hot area — the PRO paper's "x % of requests fall
///   in the hottest 20 % of the area" (ties at the boundary do not change the value).
///
/// An empty trace gives all zeros. Config errors name the key `trace.…`.
pub fn stats(cfg: &TraceConfig) -> Result<TraceStats> {
    let mut records = open_records(cfg, STATS_KEY)?;
    let mut requests = 0u64;
    let mut reads = 0u64;
    let mut size_sum = 0u128;
    let mut earliest = u64::MAX;
    let mut latest = 0u64;
    // Block → number of requests starting in it (0 for blocks only covered by a tail).
    let mut starts_per_block: FxHashMap<u64, u64> = FxHashMap::default();
    while let Some((_, raw)) = records.next_record()? {
        requests += 1;
        reads += u64::from(!raw.is_write);
        size_sum += u128::from(raw.size_bytes);
        earliest = earliest.min(raw.time_ns);
        latest = latest.max(raw.time_ns);
        let first_block = raw.offset_bytes / BLOCK_BYTES;
        let last_block = raw.offset_bytes.saturating_add(raw.size_bytes - 1) / BLOCK_BYTES;
        *starts_per_block.entry(first_block).or_insert(0) += 1;
        for block in first_block + 1..=last_block {
            starts_per_block.entry(block).or_insert(0);
        }
    }
    if requests == 0 {
        return Ok(TraceStats {
            requests: 0,
            read_fraction: 0.0,
            mean_size_bytes: 0.0,
            duration_s: 0.0,
            iops: 0.0,
            footprint_bytes: 0,
            locality_hot20: 0.0,
        });
    }
    let distinct_blocks = starts_per_block.len();
    let mut starts: Vec<u64> = starts_per_block.into_values().collect();
    let hot_blocks = distinct_blocks.div_ceil(HOT_AREA_ONE_IN);
    starts.sort_unstable_by(|a, b| b.cmp(a));
    let hot_requests: u64 = starts[..hot_blocks].iter().sum();
    let duration_s = (latest - earliest) as f64 / 1e9;
    Ok(TraceStats {
        requests,
        read_fraction: reads as f64 / requests as f64,
        mean_size_bytes: size_sum as f64 / requests as f64,
        duration_s,
        iops: if duration_s > 0.0 { requests as f64 / duration_s } else { 0.0 },
        footprint_bytes: distinct_blocks as u64 * BLOCK_BYTES,
        locality_hot20: hot_requests as f64 / requests as f64,
    })
}
