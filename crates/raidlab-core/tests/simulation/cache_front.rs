//! The buffer cache in front of the array (`[cache]`): every request is answered once, only
//! user requests count as responses, every read returns the value last written — from the
//! cache or from the array, with write-backs and fills racing each other, a failure and the
//! rebuild — and the miss penalty follows the array's failure state.

use crate::common::*;

/// RAID-5 of `drives` small drives with 4 KiB units, a cache of `size` blocks of `policy`,
/// random reads and writes of 0.5–24 KiB on a hot spot (so that requests, part blocks,
/// write-backs and fills collide), a closed loop of 16; `extra` adds tables.
fn scenario(policy: &str, size: u64, write_policy: &str, seed: u64, requests: u64, extra: &str) -> String {
    format!(
        r#"
seed = {seed}
[array]
layout = "raid5"
drives = 5
stripe_unit_kib = 4
{SMALL_DRIVE}
[workload]
requests = {requests}
read_fraction = 0.6
align_kib = 0.5
size = {{ distribution = "uniform", min_kib = 0.5, max_kib = 24, step_kib = 0.5 }}
address = {{ distribution = "hot_cold", hot_request_fraction = 0.7, hot_space_fraction = 0.05 }}
[workload.arrival]
process = "closed"
outstanding = 16
think_ms = 1
[content]
check = true
[cache]
policy = "{policy}"
size_blocks = {size}
write_policy = "{write_policy}"
{extra}
"#
    )
}

const REBUILD: &str = r#"
[[failures]]
drive = 1
at_s = 0.2
[rebuild]
"#;

/// `scenario`'s text with whole 4 KiB requests at 4 KiB boundaries (one block each), reads
/// only when `reads_only`, and the address distribution `address` (a TOML line) if given.
fn whole_blocks(text: String, reads_only: bool, address: Option<&str>) -> String {
    assert!(text.contains("align_kib = 0.5") && text.contains("read_fraction = 0.6") && text.contains(HOT_SPOT));
    let text = text
        .replace("align_kib = 0.5", "align_kib = 4")
        .replace(r#"size = { distribution = "uniform", min_kib = 0.5, max_kib = 24, step_kib = 0.5 }"#, "size_kib = 4");
    let text = if reads_only { text.replace("read_fraction = 0.6", "read_fraction = 1.0") } else { text };
    match address {
        Some(address) => text.replace(HOT_SPOT, address),
        None => text,
    }
}

/// `scenario`'s address distribution.
const HOT_SPOT: &str = r#"address = { distribution = "hot_cold", hot_request_fraction = 0.7, hot_space_fraction = 0.05 }"#;

/// The invariants of a run with the cache in front, content checked.
fn check_clean(s: &serde_json::Value, requests: u64, what: &str) {
    assert_eq!(s["requests_completed"].as_u64(), Some(requests), "{what}: {s}");
    assert_eq!(f(s, "content.stale_sectors"), 0.0, "{what}: {s}");
    assert_eq!(f(s, "cache.content.stale_sectors"), 0.0, "{what}: {s}");
    assert!(f(s, "cache.content.sectors_checked") > 100.0, "{what}: {s}");
    assert!(f(s, "content.sectors_checked") > 1_000.0, "{what}: {s}");
    assert!(!s["data_loss"].as_bool().unwrap(), "{what}");
}

#[test]
fn every_read_is_current_through_the_cache_write_back_and_write_through() {
    let seeds = if long_tests() { 12 } else { 2 };
    let requests = if long_tests() { 20_000 } else { 3_000 };
    let mut superseded = 0.0;
    for policy in ["lru", "lfu", "arc", "clock", "vdf-lru", "vdf-lfu"] {
        for size in [4, 96] {
            for write_policy in ["write-back", "write-through"] {
                for seed in 1..=seeds {
                    let out = run(&scenario(policy, size, write_policy, seed, requests, ""));
                    let s = &out.summary;
                    let what = format!("{policy} {size} {write_policy} seed {seed}");
                    check_clean(s, requests, &what);
                    if write_policy == "write-back" {
                        assert!(f(s, "cache.destage_writes") > 0.0, "{what}: {s}");
                    } else {
                        assert_eq!(f(s, "cache.destage_writes"), 0.0, "{what}: {s}");
                        assert_eq!(f(s, "cache.dirty_blocks_at_end"), 0.0, "{what}: {s}");
                    }
                    superseded += f(s, "cache.superseded_fill_blocks");
                }
            }
        }
    }
    // The races the check is for did happen: writes overtook fills still in flight.
    assert!(superseded > 0.0);
}

#[test]
fn write_backs_racing_the_rebuild_leave_it_correct() {
    let seeds = if long_tests() { 12 } else { 2 };
    let requests = if long_tests() { 20_000 } else { 4_000 };
    for policy in ["lru", "vdf-lru", "vdf-lfu"] {
        for seed in 1..=seeds {
            let text = scenario(policy, 32, "write-back", seed, requests, REBUILD).replace("drives = 5", "drives = 5\nspares = 1");
            let out = run(&text);
            let s = &out.summary;
            let what = format!("{policy} seed {seed}");
            check_clean(s, requests, &what);
            assert_eq!(s["rebuilds"][0]["outcome"].as_str(), Some("complete"), "{what}: {s}");
            assert_eq!(f(s, "content.rebuilt_sectors_wrong"), 0.0, "{what}: {s}");
            // Every sector of the lost member (5,760 of the small drive) checked once.
            assert_eq!(f(s, "content.rebuilt_sectors_checked"), 5760.0, "{what}: {s}");
            assert!(f(s, "cache.destage_writes") > 100.0, "{what}: {s}");
        }
    }
}

#[test]
fn destage_writes_and_fills_are_not_user_responses() {
    // Writes only, whole blocks, a cache of 8 blocks: nearly every write evicts a dirty block,
    // so the array serves about as many destages as there are user writes; yet the user
    // responses are exactly the requests, each answered at once (write-back).
    let text = whole_blocks(scenario("lru", 8, "write-back", 3, 2_000, ""), false, None).replace("read_fraction = 0.6", "read_fraction = 0.0");
    let out = run(&text);
    let s = &out.summary;
    assert_eq!(s["requests_completed"].as_u64(), Some(2_000), "{s}");
    let destages = f(s, "cache.destage_writes");
    assert!(destages > 1_000.0, "{s}");
    assert_eq!(destages + f(s, "cache.dirty_blocks_at_end"), 2_000.0 - f(s, "cache.write_hits"), "{s}");
    assert_eq!(f(s, "response_ms.all.max"), 0.0, "{s}");
    assert!(f(s, "drives.disk_operations") >= 4.0 * destages, "a destage is a read-modify-write: {s}");
}

#[test]
fn hits_are_answered_after_the_hit_time() {
    // Reads of 32 blocks through a cache of 64: only the first read of each block misses.
    let address = r#"address = { distribution = "hot_cold", hot_request_fraction = 1.0, hot_space_fraction = 0.011 }"#;
    let text = whole_blocks(scenario("lru", 64, "write-back", 1, 3_000, "hit_ms = 0.25"), true, Some(address));
    let out = run(&text);
    let s = &out.summary;
    let misses = f(s, "cache.read_blocks") - f(s, "cache.read_hits");
    assert!(misses <= 40.0, "{s}");
    // The histogram keeps response times to within 0.5 %.
    assert!((f(s, "response_ms.all.p50") - 0.25).abs() < 0.25 * 0.005, "{s}");
}

/// A degraded RAID-5 of `drives` drives (drive 1 failed from the start), uniform 4 KiB reads
/// over the whole array through an LRU cache of `size` blocks.
fn degraded_reads(policy: &str, drives: u32, size: u64, hot: &str) -> serde_json::Value {
    let text = scenario(policy, size, "write-back", 7, 6_000, "[[failures]]\ndrive = 1\nat_s = 0.0\n")
        .replace("drives = 5", &format!("drives = {drives}"));
    let text = whole_blocks(text, true, Some(hot));
    run(&text).summary
}

#[test]
fn a_miss_costs_n_minus_1_reads_on_the_failed_drive_and_1_elsewhere() {
    // With a one-block cache nearly every read misses, and a uniform read is on the failed
    // drive with probability 1/n: RGR = (1/n)(n − 1) + ((n − 1)/n)·1 = 2(n − 1)/n (the notes'
    // closed form, B.1), 1.6 for 5 drives and 1.75 for 8.
    for drives in [5u32, 8] {
        let s = degraded_reads("lru", drives, 1, r#"address = { distribution = "uniform" }"#);
        let n = drives as f64;
        let miss_ratio = 1.0 - f(&s, "cache.read_hit_ratio");
        let expected = 2.0 * (n - 1.0) / n * miss_ratio;
        // 6,000 reads: the failed drive's share has a standard error of about 0.4 points.
        let rgr = f(&s, "cache.rgr_faulty");
        assert!((rgr - expected).abs() < 0.06, "{drives} drives: RGR {rgr}, expected {expected}: {s}");
        assert_eq!(f(&s, "cache.faulty_read_blocks"), f(&s, "cache.read_blocks"), "{s}");
    }
}

#[test]
fn a_raid6_miss_costs_what_its_degraded_read_reads() {
    // RAID-6's degraded read reads every other working unit of the stripe: n − 1 with one
    // member lost, so RGR = (1/n)(n − 1) + ((n − 1)/n)·1 = 2(n − 1)/n, as in RAID-5; with two
    // lost, a block on either costs n − 2: RGR = (2/n)(n − 2) + ((n − 2)/n)·1 = 3(n − 2)/n.
    let drives = 6u32;
    let n = drives as f64;
    for (failures, expected) in [
        ("[[failures]]\ndrive = 1\nat_s = 0.0\n", 2.0 * (n - 1.0) / n),
        ("[[failures]]\ndrive = 1\nat_s = 0.0\n[[failures]]\ndrive = 4\nat_s = 0.0\n", 3.0 * (n - 2.0) / n),
    ] {
        let text = scenario("vdf-lru", 1, "write-back", 7, 6_000, failures)
            .replace("drives = 5", &format!("drives = {drives}"))
            .replace("layout = \"raid5\"", "layout = \"raid6\"");
        let s = run(&whole_blocks(text, true, Some(r#"address = { distribution = "uniform" }"#))).summary;
        let miss_ratio = 1.0 - f(&s, "cache.read_hit_ratio");
        let rgr = f(&s, "cache.rgr_faulty");
        assert!((rgr - expected * miss_ratio).abs() < 0.06, "{failures}: RGR {rgr}, expected {}: {s}", expected * miss_ratio);
    }
}

#[test]
fn the_time_series_counts_every_read_block_once_and_follows_the_failure() {
    // A RAID-5 of 5 with drive 1 failing at 2 s, uniform 4 KiB reads through a one-block
    // cache (nearly every read misses): the windows add up to the run's counts, and their RGR
    // is about 1 before the failure and about 2(n − 1)/n = 1.6 after it.
    let failure = "[[failures]]\ndrive = 1\nat_s = 2.0\n[metrics]\nwindow_s = 0.5\n";
    let text = whole_blocks(scenario("lru", 1, "write-back", 9, 8_000, failure), true, Some(r#"address = { distribution = "uniform" }"#));
    let out = run(&text);
    let s = &out.summary;
    let timeseries = out.tables.iter().find(|t| t.name == "timeseries").expect("a timeseries");
    let column = |name: &str| -> Vec<f64> {
        match &timeseries.columns.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no {name}")).data {
            raidlab_core::api::ColumnData::F64(values) => values.clone(),
            _ => panic!("{name} is not a float column"),
        }
    };
    let (start, rgr) = (column("window_start_s"), column("cache_rgr"));
    let arrivals: Vec<f64> = match &timeseries.columns.iter().find(|c| c.name == "arrivals").unwrap().data {
        raidlab_core::api::ColumnData::I64(values) => values.iter().map(|&v| v as f64).collect(),
        _ => panic!("arrivals"),
    };
    // Each read is one block, accessed as it arrives: a window's accesses are its arrivals.
    let weighted = |keep: &dyn Fn(f64) -> bool| {
        let (mut sum, mut weight) = (0.0, 0.0);
        for i in 0..rgr.len() {
            if keep(start[i]) && rgr[i].is_finite() {
                sum += rgr[i] * arrivals[i];
                weight += arrivals[i];
            }
        }
        (sum, weight)
    };
    let (penalty, accesses) = weighted(&|_| true);
    assert_eq!(accesses, f(s, "cache.read_blocks"), "{s}");
    assert!((penalty - f(s, "cache.rgr") * accesses).abs() < 1e-6 * accesses, "{s}");
    let ratio = |(sum, weight): (f64, f64)| sum / weight;
    let before = ratio(weighted(&|t| t + 0.5 <= 2.0));
    let after = ratio(weighted(&|t| t >= 2.0));
    assert!((before - 1.0).abs() < 0.02, "before the failure: {before}: {s}");
    assert!((after - 1.6).abs() < 0.08, "after the failure: {after}: {s}");
    assert!(f(s, "cache.rgr") > before && f(s, "cache.rgr") < after, "{s}");
}

#[test]
fn vdf_lowers_the_surviving_drive_reads_of_a_degraded_array() {
    // The paper's claim (§3–5) on a hot/cold independent-reference workload: in faulty mode
    // VDF keeps the failed drive's blocks, whose misses cost n − 1, longer.
    let hot = r#"address = { distribution = "hot_cold", hot_request_fraction = 0.8, hot_space_fraction = 0.2 }"#;
    for (base, vdf) in [("lru", "vdf-lru"), ("lfu", "vdf-lfu")] {
        let base_rgr = f(&degraded_reads(base, 6, 256, hot), "cache.rgr_faulty");
        let vdf_rgr = f(&degraded_reads(vdf, 6, 256, hot), "cache.rgr_faulty");
        assert!(vdf_rgr < base_rgr, "{vdf} RGR {vdf_rgr} against {base} {base_rgr}");
    }
}

#[test]
fn a_rebuilt_block_costs_what_rebuilt_miss_reads_says() {
    // LRU decides without penalties, so the two runs hit and miss alike; only the count of a
    // miss on a block already rebuilt (and redirected to the spare) differs: 0 or 1.
    let runs: Vec<serde_json::Value> = [0, 1]
        .iter()
        .map(|reads| {
            let text = scenario("lru", 16, "write-through", 4, 4_000, &format!("rebuilt_miss_reads = {reads}\n{REBUILD}"))
                .replace("drives = 5", "drives = 5\nspares = 1")
                .replace("read_fraction = 0.6", "read_fraction = 1.0");
            run(&text).summary
        })
        .collect();
    let [paper, spare] = [&runs[0], &runs[1]];
    assert_eq!(paper["rebuilds"][0]["outcome"].as_str(), Some("complete"), "{paper}");
    assert_eq!(f(paper, "cache.read_hits"), f(spare, "cache.read_hits"));
    assert!(f(spare, "cache.rgr_faulty") > f(paper, "cache.rgr_faulty"), "{paper}\n{spare}");
}

#[test]
fn the_cache_is_deterministic() {
    let text = scenario("vdf-lru", 16, "write-back", 5, 2_000, REBUILD).replace("drives = 5", "drives = 5\nspares = 1");
    assert_eq!(run(&text).summary, run(&text).summary);
}

#[test]
fn bad_cache_settings_name_their_key() {
    let error = |text: &str| raidlab_core::api::run_toml(text, std::path::Path::new("."), None).expect_err("an error").to_string();
    let base = scenario("lru", 16, "write-back", 1, 100, "");
    let e = error(&base.replace(r#"policy = "lru""#, r#"policy = "lirs""#));
    assert!(e.starts_with("cache.policy: unknown cache policy \"lirs\""), "{e}");
    let e = error(&base.replace("size_blocks = 16", "size_blocks = 0"));
    assert!(e.starts_with("cache.size_blocks:"), "{e}");
    let e = error(&base.replace(r#"write_policy = "write-back""#, r#"write_policy = "back""#));
    assert!(e.contains("write_policy"), "{e}");
    let e = error(&base.replace("layout = \"raid5\"", "layout = \"raid1\"").replace("drives = 5", "drives = 4").replace(r#"policy = "lru""#, r#"policy = "vdf-lru""#));
    assert!(e.starts_with("cache.policy: vdf-lru weighs blocks by their drive in a RAID-5 or RAID-6 array"), "{e}");
    let e = error(&base.replace("requests = 100", "duration_s = 1").replace("think_ms = 1", "think_ms = 0"));
    assert!(e.starts_with("cache.hit_ms: a closed loop with no think time"), "{e}");
    let e = error(&base.replace("[cache]", "[cache]\nhit_ms = -1"));
    assert!(e.starts_with("cache.hit_ms:"), "{e}");
    let e = error(&base.replace("[cache]", "[cache]\nrebuilt_miss_reads = 2"));
    assert!(e.starts_with("cache.rebuilt_miss_reads:"), "{e}");
    // VDF's local stacks hold at most 254 drives; a plain policy in front of a larger array
    // runs, without RGR.
    let wide = base.replace("drives = 5", "drives = 300");
    let e = error(&wide.replace(r#"policy = "lru""#, r#"policy = "vdf-lru""#));
    assert!(e.starts_with("array.drives: RAID-5 needs 3 to 254 drives"), "{e}");
    let s = run(&wide).summary;
    assert_eq!(s["requests_completed"].as_u64(), Some(100), "{s}");
    assert!(s["cache"]["rgr"].is_null(), "{s}");
}
