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
///   byte;
/// * `locality_hot20`: each touched block is ranked by how many requests touch it; the hot
///   area is the ⌈20 %⌉ highest-ranked of the distinct touched blocks; `locality_hot20` is
///   the share of all block accesses (a request accesses every block it touches) that fall
///   in the hot area. For one-block requests this is the PRO paper's "x % of requests fall
///   in the hottest 20 % of the area"; weighting by blocks keeps it meaningful for traces of
///   large requests, where ranking only the blocks requests start in would call every
///   request hot. Ties at the boundary do not change the value.
///
/// An empty trace gives all zeros. Config errors name the key `trace.…`.
pub fn stats(cfg: &TraceConfig) -> Result<TraceStats> {
    Ok(stats_until(cfg, &mut |_| true)?.expect("never cancelled"))
}

/// Requests read between two questions to [`stats_until`]'s `keep_going`.
const RECORDS_PER_QUESTION: u64 = 1 << 16;

/// [`stats`], asking `keep_going(records read)` every 65,536 records
/// whether to go on: a trace can hold billions. `None` when it said no.
pub fn stats_until(cfg: &TraceConfig, keep_going: &mut dyn FnMut(u64) -> bool) -> Result<Option<TraceStats>> {
    super::check_time_scale(cfg, STATS_KEY)?;
    let (mut records, format) = open_records(cfg, STATS_KEY)?;
    let mut requests = 0u64;
    let mut reads = 0u64;
    let mut size_sum = 0u128;
    let mut earliest = u64::MAX;
    let mut latest = 0u64;
    // Block → number of requests touching it.
    let mut accesses_per_block: FxHashMap<u64, u64> = FxHashMap::default();
    let mut block_accesses = 0u64;
    while let Some((_, raw)) = records.next_record()? {
        if requests % RECORDS_PER_QUESTION == RECORDS_PER_QUESTION - 1 && !keep_going(requests + 1) {
            return Ok(None);
        }
        requests += 1;
        reads += u64::from(!raw.is_write);
        size_sum += u128::from(raw.size_bytes);
        earliest = earliest.min(raw.time_ns);
        latest = latest.max(raw.time_ns);
        let first_block = raw.offset_bytes / BLOCK_BYTES;
        let last_block = raw.offset_bytes.saturating_add(raw.size_bytes - 1) / BLOCK_BYTES;
        for block in first_block..=last_block {
            *accesses_per_block.entry(block).or_insert(0) += 1;
        }
        block_accesses += last_block - first_block + 1;
    }
    if requests == 0 {
        return Ok(Some(TraceStats {
            format,
            requests: 0,
            read_fraction: 0.0,
            mean_size_bytes: 0.0,
            duration_s: 0.0,
            iops: 0.0,
            footprint_bytes: 0,
            locality_hot20: 0.0,
        }));
    }
    let distinct_blocks = accesses_per_block.len();
    let mut accesses: Vec<u64> = accesses_per_block.into_values().collect();
    let hot_blocks = distinct_blocks.div_ceil(HOT_AREA_ONE_IN);
    accesses.sort_unstable_by(|a, b| b.cmp(a));
    let hot_accesses: u64 = accesses[..hot_blocks].iter().sum();
    let duration_s = (latest - earliest) as f64 / 1e9 * cfg.time_scale;
    Ok(Some(TraceStats {
        format,
        requests,
        read_fraction: reads as f64 / requests as f64,
        mean_size_bytes: size_sum as f64 / requests as f64,
        duration_s,
        iops: if duration_s > 0.0 { requests as f64 / duration_s } else { 0.0 },
        footprint_bytes: distinct_blocks as u64 * BLOCK_BYTES,
        locality_hot20: hot_accesses as f64 / block_accesses as f64,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{config, TempFile, MSR_SAMPLE, SYSTOR_SAMPLE, TENCENT_SAMPLE};
    use super::super::FoldMode;
    use super::*;

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
        assert_eq!(tencent.footprint_bytes, 334_782 * 4096);
        assert_eq!(tencent.locality_hot20, 110_428.0 / 378_253.0);
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
