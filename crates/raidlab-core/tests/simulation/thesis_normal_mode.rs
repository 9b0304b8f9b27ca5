//! The thesis's normal mode (seed 004 §2.1 and §3.2, Figures 6–7), and its comparison of
//! interleaved declustering with traditional mirroring. Traditional: 16 IBM 0661 drives as 8
//! mirror pairs, 4 KB uniform requests, 75 % reads, 250 I/O per second. The thesis reports a
//! 90th-percentile read response of 41.65 ms and a mean drive utilization of 40.33 %.
//! Parameters are the thesis's; nothing is tuned to the published figures.

use crate::common::*;

#[test]
fn traditional_mirroring_at_250_ios_matches_the_thesis() {
    let requests = if long_tests() { 1_000_000 } else { 150_000 };
    let text = format!(
        r#"
seed = 4
[array]
layout = "raid1"
drives = 16
copies = 2
stripe_unit_kib = 4
[drive]
preset = "ibm0661"
scheduler = "fcfs"
[workload]
requests = {requests}
read_fraction = 0.75
size_kib = 4
[workload.arrival]
process = "poisson"
rate_per_s = 250
[metrics]
warmup_s = 10
"#
    );
    let out = run(&text);
    let p90 = f(&out.summary, "response_ms.read.p90");
    let util = f(&out.summary, "drives.mean_utilization");
    eprintln!("thesis normal mode: p90 read {p90:.2} ms (thesis 41.65), utilization {:.2} % (thesis 40.33)", util * 100.0);
    assert!((p90 - 41.65).abs() / 41.65 < 0.10, "p90 read {p90} ms vs 41.65 ms");
    assert!((util - 0.4033).abs() / 0.4033 < 0.10, "utilization {util} vs 0.4033");
}

/// The thesis's configuration for any mirroring layout (`array` lines), at `read_fraction`,
/// with `failures` (TOML) appended.
fn thesis_mirroring(array: &str, read_fraction: f64, failures: &str) -> String {
    let requests = if long_tests() { 1_000_000 } else { 150_000 };
    format!(
        "seed = 4\n[array]\n{array}\ndrives = 16\nstripe_unit_kib = 4\n[drive]\npreset = \"ibm0661\"\nscheduler = \"fcfs\"\n\
         [workload]\nrequests = {requests}\nread_fraction = {read_fraction}\nsize_kib = 4\n\
         [workload.arrival]\nprocess = \"poisson\"\nrate_per_s = 250\n{failures}[metrics]\nwarmup_s = 10\n"
    )
}

/// Interleaved declustering (ID, two clusters of 8) against traditional mirroring (TM), as
/// the thesis compares them at 250 I/O per second (§3.2–3.3): with reads free to take either
/// copy, ID's 90th-percentile read response is below TM's at 75 % reads (Fig. 6: 32.12 against
/// 41.65 ms) and in degraded mode at 100 % reads (30.92 against 41.06 ms), and at 100 % reads
/// the schemes' utilizations are "identical". With primary-only reads (what the thesis's
/// text says) ID's p90 is above TM's: the thesis's numbers fit either-copy reads (the notes'
/// reading, which raidlab's figures in `docs/reproduction.md` bear out).
#[test]
fn interleaved_declustering_beats_traditional_mirroring_only_with_either_copy_reads() {
    let tm = "layout = \"raid1\"\ncopies = 2";
    let id = |reads: &str| format!("layout = \"interleaved\"\ncluster_drives = 8\nid_reads = \"{reads}\"");
    let p90 = |array: &str, read_fraction: f64, failures: &str| {
        let s = run(&thesis_mirroring(array, read_fraction, failures)).summary;
        (f(&s, "response_ms.read.p90"), f(&s, "drives.mean_utilization"))
    };
    let (tm_p90, _) = p90(tm, 0.75, "");
    let (id_p90, _) = p90(&id("either"), 0.75, "");
    let (primary_p90, _) = p90(&id("primary"), 0.75, "");
    eprintln!("75 % reads, p90: TM {tm_p90:.2} ms, ID either {id_p90:.2} ms, ID primary {primary_p90:.2} ms");
    assert!(id_p90 < 0.9 * tm_p90, "ID (either) {id_p90} ms against TM {tm_p90} ms");
    assert!(primary_p90 > tm_p90, "ID (primary) {primary_p90} ms against TM {tm_p90} ms");
    let (_, tm_util) = p90(tm, 1.0, "");
    let (_, id_util) = p90(&id("either"), 1.0, "");
    eprintln!("100 % reads, utilization: TM {:.2} %, ID either {:.2} %", tm_util * 100.0, id_util * 100.0);
    assert!((id_util - tm_util).abs() / tm_util < 0.03, "utilization ID {id_util} against TM {tm_util}");
    let failure = "[[failures]]\ndrive = 1\nat_s = 1\n";
    let (tm_degraded, _) = p90(tm, 1.0, failure);
    let (id_degraded, _) = p90(&id("either"), 1.0, failure);
    eprintln!("degraded, 100 % reads, p90: TM {tm_degraded:.2} ms, ID either {id_degraded:.2} ms");
    assert!(id_degraded < 0.9 * tm_degraded, "degraded: ID {id_degraded} ms against TM {tm_degraded} ms");
}

/// The thesis's Fig. 11 (75 % reads, 250 I/O per second, one drive failed and not rebuilt):
/// the 90th-percentile response of the reads that map to the set with the failed disk rises
/// by 113.2 % over normal mode for TM, and by "about 7.3 %" for ID. raidlab's TM lands on the
/// thesis's figure (checked within 15 % of it); ID rises far less than TM, whichever set its
/// reads are counted over (its cluster here; `docs/reproduction.md` gives the other readings).
#[test]
fn failed_set_reads_slow_down_for_tm_and_barely_for_id() {
    let tm = "layout = \"raid1\"\ncopies = 2";
    let id = "layout = \"interleaved\"\ncluster_drives = 8\nid_reads = \"either\"";
    let rise = |array: &str| {
        let normal = f(&run(&thesis_mirroring(array, 0.75, "")).summary, "response_ms.read.p90");
        let degraded = run(&thesis_mirroring(array, 0.75, "[[failures]]\ndrive = 1\nat_s = 1\n")).summary;
        f(&degraded, "response_ms.failed_set_read.p90") / normal - 1.0
    };
    let (tm_rise, id_rise) = (rise(tm), rise(id));
    eprintln!("failed-set reads' p90 over normal mode: TM +{:.1} % (thesis 113.2), ID +{:.1} % (thesis about 7.3)", tm_rise * 100.0, id_rise * 100.0);
    assert!((tm_rise - 1.132).abs() / 1.132 < 0.15, "TM rises {tm_rise}");
    assert!(id_rise < tm_rise / 4.0, "ID rises {id_rise}, TM {tm_rise}");
}

/// The thesis's rebuild mode with the block unit (Fig. 13 and the failed-set figure, 75 %
/// reads, 250 I/O per second): while a failed drive is rebuilt (one 4 KB block at a time, the
/// nearest unrebuilt block first, rebuild I/O only on a drive with no user request: VSM, the
/// thesis's §2.1 rule; no read redirection), the p90 of all reads rises 17.88 % over normal
/// mode for TM and 12.0 % for ID, and of the failed set's reads 119.2 % for TM and 19.3 % for
/// ID. raidlab's TM failed-set rise lands within 15 % of the thesis's; ID rises less than TM
/// over all reads and far less over the failed set.
#[test]
fn block_unit_rebuild_slows_tm_more_than_id() {
    let tm = "layout = \"raid1\"\ncopies = 2";
    let id = "layout = \"interleaved\"\ncluster_drives = 8\nid_reads = \"either\"";
    let rebuild = "[[failures]]\ndrive = 1\nat_s = 10\n[rebuild]\nexecutor = \"sor\"\norder = \"nearest\"\n\
                   discipline = \"vsm\"\nunit = { sectors = 8 }\nredirect_reads = false\nend_run = true\n";
    // Requests arriving in the first 10 s are left out: the rest arrive while rebuilding.
    let rises = |array: &str| {
        let normal = f(&run(&thesis_mirroring(array, 0.75, "")).summary, "response_ms.read.p90");
        let text = thesis_mirroring(array, 0.75, rebuild)
            .replace("drives = 16\n", "drives = 16\nspares = 1\n")
            .replace("requests = 150000", "requests = 5000000")
            .replace("requests = 1000000", "requests = 5000000");
        let s = run(&text).summary;
        assert_eq!(s["rebuilds"][0]["outcome"], "complete", "{array}");
        (f(&s, "response_ms.read.p90") / normal - 1.0, f(&s, "response_ms.failed_set_read.p90") / normal - 1.0)
    };
    let ((tm_all, tm_set), (id_all, id_set)) = (rises(tm), rises(id));
    eprintln!(
        "block rebuild, p90 over normal: all reads TM +{:.1} % (thesis 17.88), ID +{:.1} % (12.0); \
         failed set TM +{:.1} % (119.2), ID +{:.1} % (19.3)",
        tm_all * 100.0,
        id_all * 100.0,
        tm_set * 100.0,
        id_set * 100.0
    );
    assert!(id_all < tm_all, "all reads: ID {id_all}, TM {tm_all}");
    assert!((tm_set - 1.192).abs() / 1.192 < 0.15, "TM's failed set rises {tm_set}");
    assert!(id_set < tm_set / 4.0, "failed set: ID {id_set}, TM {tm_set}");
}

/// Distorted mirrors (DM, DFF 80 %) against TM and ID at 250 I/O per second (§3.2–3.3): with
/// writes (75 % reads) DM has the lowest drive utilization of the three (Fig. 7: 31.20 against
/// 40.33 and 39.12 %) and a p90 read response below TM's (Fig. 6: 33.61 against 41.65 ms);
/// with a drive failed, the reads of its pair slow down more than TM's (Fig. 11: +148.5
/// against +113.2 %), since the survivor takes the pair's writes as well as its reads.
#[test]
fn distorted_mirrors_have_the_lowest_utilization_and_the_steepest_failed_pair() {
    let tm = "layout = \"raid1\"\ncopies = 2";
    let id = "layout = \"interleaved\"\ncluster_drives = 8\nid_reads = \"either\"";
    let dm = "layout = \"distorted\"\ndff = 0.8";
    let normal = |array: &str| {
        let s = run(&thesis_mirroring(array, 0.75, "")).summary;
        (f(&s, "response_ms.read.p90"), f(&s, "drives.mean_utilization"))
    };
    let ((tm_p90, tm_util), (_, id_util), (dm_p90, dm_util)) = (normal(tm), normal(id), normal(dm));
    eprintln!("75 % reads: utilization TM {tm_util:.4}, ID {id_util:.4}, DM {dm_util:.4}; p90 TM {tm_p90:.2}, DM {dm_p90:.2} ms");
    assert!(dm_util < tm_util && dm_util < id_util, "DM {dm_util}, TM {tm_util}, ID {id_util}");
    assert!(dm_p90 < tm_p90, "DM {dm_p90} ms, TM {tm_p90} ms");
    let rise = |array: &str, normal_p90: f64| {
        let s = run(&thesis_mirroring(array, 0.75, "[[failures]]\ndrive = 1\nat_s = 1\n")).summary;
        f(&s, "response_ms.failed_set_read.p90") / normal_p90 - 1.0
    };
    let (tm_rise, dm_rise) = (rise(tm, tm_p90), rise(dm, dm_p90));
    eprintln!("failed pair's p90 over normal mode: TM +{:.1} % (thesis 113.2), DM +{:.1} % (148.5)", tm_rise * 100.0, dm_rise * 100.0);
    assert!(dm_rise > tm_rise, "DM rises {dm_rise}, TM {tm_rise}");
}

/// The thesis's "minimum service time model" for busy copies (§2.2.1) is undefined, and the
/// reading moves TM's p90 at 250 I/O per second and 75 % reads: the notes' independent model
/// gives 39.4 ms for the expected completion (queue drain), 43.1 for the seek from the queue's
/// tail, 43.6 from the operation in service (raidlab's default) and 45.5 at random, with
/// utilization 41.1–41.8 % in all four. Each `array.read_estimate` keeps that order against the
/// default, and none moves utilization by more than a point.
#[test]
fn the_busy_copy_estimate_orders_tm_p90_as_the_notes_model_does() {
    let measure = |estimate: &str| {
        let s = run(&thesis_mirroring(&format!("layout = \"raid1\"\ncopies = 2\nread_estimate = \"{estimate}\""), 0.75, "")).summary;
        (f(&s, "response_ms.read.p90"), f(&s, "drives.mean_utilization"))
    };
    let (in_service, utilization) = measure("in_service");
    let (queue_drain, drain_utilization) = measure("queue_drain");
    let (queue_tail, tail_utilization) = measure("queue_tail");
    let (random, random_utilization) = measure("random");
    eprintln!("TM p90: queue_drain {queue_drain:.2}, queue_tail {queue_tail:.2}, in_service {in_service:.2}, random {random:.2} ms");
    assert!(queue_drain < queue_tail && queue_tail < in_service && in_service < random, "{queue_drain} {queue_tail} {in_service} {random}");
    for other in [drain_utilization, tail_utilization, random_utilization] {
        assert!((other - utilization).abs() < 0.01, "utilization {other} against {utilization}");
    }
}

const TM: &str = "layout = \"raid1\"\ncopies = 2";
const DM: &str = "layout = \"distorted\"\ndff = 0.8";
const ID: &str = "layout = \"interleaved\"\ncluster_drives = 8\nid_reads = \"either\"";

/// The thesis's rebuild (§2.1–2.2, raidlab's choices as in the block-unit test above): drive 1
/// fails at 10 s onto a hot spare and the run ends with the rebuild. Returns the summary.
fn thesis_rebuild(array: &str, read_fraction: f64, rate: u32, unit: &str) -> serde_json::Value {
    let rebuild = format!(
        "[[failures]]\ndrive = 1\nat_s = 10\n[rebuild]\nexecutor = \"sor\"\norder = \"nearest\"\ndiscipline = \"vsm\"\n\
         unit = {unit}\nredirect_reads = false\nend_run = true\n"
    );
    let text = thesis_mirroring(array, read_fraction, &rebuild)
        .replace("drives = 16\n", "drives = 16\nspares = 1\n")
        .replace("rate_per_s = 250", &format!("rate_per_s = {rate}"))
        .replace("requests = 150000", "requests = 5000000")
        .replace("requests = 1000000", "requests = 5000000");
    let s = run(&text).summary;
    assert_eq!(s["rebuilds"][0]["outcome"], "complete", "{array}, {unit}");
    s
}

/// Fig. 27 (block unit, 0 % reads, 200 I/O per second): ID's rebuild takes longest, then
/// DM's, then TM's (29.21, 18.71 and 13.50 min). raidlab keeps the order (its times are
/// 2–3 times the thesis's: `docs/reproduction.md` gives them and the hypotheses).
#[test]
fn at_zero_percent_reads_id_rebuilds_slowest_then_dm_then_tm() {
    let minutes = |array: &str| f(&thesis_rebuild(array, 0.0, 200, "{ sectors = 8 }")["rebuilds"][0], "rebuild_time_s") / 60.0;
    let (tm, dm, id) = (minutes(TM), minutes(DM), minutes(ID));
    eprintln!("block rebuild at 0 % reads, 200 I/O/s: TM {tm:.2}, DM {dm:.2}, ID {id:.2} min (thesis 13.50, 18.71, 29.21)");
    assert!(id > dm && dm > tm, "ID {id}, DM {dm}, TM {tm} min");
}

/// §3.4 and §4.1: the cylinder unit gives the shortest rebuild and the block unit the
/// longest, and the block unit raises the p90 of reads least and the cylinder unit most
/// (TM, 75 % reads, 200 I/O per second).
#[test]
fn the_cylinder_unit_rebuilds_fastest_and_the_block_unit_slows_reads_least() {
    let normal = f(&run(&thesis_mirroring(TM, 0.75, "").replace("rate_per_s = 250", "rate_per_s = 200")).summary, "response_ms.read.p90");
    let measure = |unit: &str| {
        let s = thesis_rebuild(TM, 0.75, 200, unit);
        (f(&s["rebuilds"][0], "rebuild_time_s") / 60.0, f(&s, "response_ms.read.p90") / normal - 1.0)
    };
    let (block, track, cylinder) = (measure("{ sectors = 8 }"), measure("{ tracks = 1 }"), measure("{ cylinders = 1 }"));
    eprintln!("TM, 75 % reads, 200 I/O/s: (minutes, p90 rise) block {block:?}, track {track:?}, cylinder {cylinder:?}");
    assert!(cylinder.0 < track.0 && track.0 < block.0, "rebuild times {block:?} {track:?} {cylinder:?}");
    assert!(block.1 < track.1 && track.1 < cylinder.1, "p90 rises {block:?} {track:?} {cylinder:?}");
}

/// §3.2 and §4.1: writes are inefficient in TM, so with them it saturates first: at 50 %
/// reads and 350 I/O per second its p90 read response is the highest of the three schemes.
#[test]
fn with_writes_tm_saturates_first() {
    let p90 = |array: &str| {
        let text = thesis_mirroring(array, 0.5, "").replace("rate_per_s = 250", "rate_per_s = 350");
        f(&run(&text).summary, "response_ms.read.p90")
    };
    let (tm, dm, id) = (p90(TM), p90(DM), p90(ID));
    eprintln!("50 % reads, 350 I/O/s, p90: TM {tm:.2}, DM {dm:.2}, ID {id:.2} ms");
    assert!(tm > dm && tm > id, "TM {tm}, DM {dm}, ID {id} ms");
}

/// For traditional mirroring the `fetch` order (the thesis's option 1: the unit the survivor
/// fetches soonest) and `nearest` (the unit nearest the survivors' heads) are the same rule,
/// since the one survivor holds every unit at the lost drive's own address: the same rebuild,
/// to the nanosecond, and the same responses.
#[test]
fn for_traditional_mirroring_fetch_and_nearest_are_the_same_rule() {
    let text = |order: &str| {
        thesis_mirroring(TM, 0.75, &format!(
            "[[failures]]\ndrive = 1\nat_s = 10\n[rebuild]\nexecutor = \"sor\"\norder = \"{order}\"\nunit = {{ tracks = 1 }}\n\
             redirect_reads = false\nend_run = true\n"
        ))
        .replace("drives = 16\n", "drives = 16\nspares = 1\n")
        .replace("requests = 150000", "requests = 5000000")
        .replace("requests = 1000000", "requests = 5000000")
    };
    let (nearest, fetch) = (run(&text("nearest")).summary, run(&text("fetch")).summary);
    assert_eq!(nearest["rebuilds"], fetch["rebuilds"]);
    assert_eq!(nearest["response_ms"], fetch["response_ms"]);
}
