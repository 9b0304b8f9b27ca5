//! Log-assisted RAID-5 (`[log]`, seed 002) in whole simulations. The content model is the
//! judge: every read returns the value last written, and at the end every block of every
//! row the run wrote is recovered through the log (Fig. 5; the deltas for Parity Logging)
//! to its last value, on random workloads with a log small enough to fill (re-syncs and
//! rows written as plain RAID-5), with the log drive failing under load, with a data drive
//! failing (degraded reads and writes through the log's entries), and with a crash that
//! loses the index (every stripe re-synchronized).

use crate::common::*;

const SCHEMES: [&str; 6] = ["data_logging", "raid5l", "raid5l_s", "raid5l_o", "swo", "parity_logging"];

/// A random scenario of `scheme`: drives, chunk, log size and whether the log fails vary
/// with the seed.
fn scenario(scheme: &str, seed: u64) -> String {
    let drives = 3 + seed % 5;
    let chunk_kib = [4, 8, 16, 64][(seed / 5 % 4) as usize];
    // 4 KiB blocks: from 24 to a few hundred records, so most runs fill the log.
    let capacity_gb = [0.0001, 0.0005, 0.002][(seed / 3 % 3) as usize];
    let threshold = [0.5, 0.8, 1.0][(seed % 3) as usize];
    let failures = match seed % 4 {
        1 => "[[failures]]\nkind = \"log_fails\"\nat_s = 0.3\n".to_string(),
        2 => "[[failures]]\nkind = \"crash\"\nat_s = 0.3\n".to_string(),
        3 => format!("[[failures]]\ndrive = {}\nat_s = 0.3\n", seed / 4 % drives),
        _ => String::new(),
    };
    format!(
        r#"
seed = {seed}
[array]
layout = "raid5"
drives = {drives}
stripe_unit_kib = {chunk_kib}
{SMALL_DRIVE}
[workload]
requests = 1500
{MIXED_HOT_REQUESTS}
[workload.arrival]
process = "closed"
outstanding = 8
[content]
check = true
[log]
scheme = "{scheme}"
capacity_gb = {capacity_gb}
resync_threshold = {threshold}
{failures}
"#
    )
}

/// The content model's three judgements of a run: no read returned a stale value, every
/// rebuilt sector held what its member should, and every row recovered through the log.
fn assert_every_value_right(s: &serde_json::Value, what: &str) {
    assert_eq!(f(s, "content.stale_sectors"), 0.0, "{what}");
    assert_eq!(f(s, "content.rebuilt_sectors_wrong"), 0.0, "{what}");
    assert_eq!(f(s, "log.recovery_sectors_wrong"), 0.0, "{what}");
}

/// The run of `text` without the content model reports the losses `s` (with it) did.
fn assert_same_losses_without_content(text: &str, s: &serde_json::Value, what: &str) {
    let plain = run(&text.replace("check = true", "check = false")).summary;
    for key in ["lost_requests", "lost_read_sectors", "log.lost_blocks"] {
        assert_eq!(f(&plain, key), f(s, key), "{key} without the content model: {what}");
    }
}

#[test]
fn every_read_and_every_recovery_through_the_log_returns_the_value_last_written() {
    let seeds = if long_tests() { 10_000 } else { 40 };
    for scheme in SCHEMES {
        let (mut resyncs, mut full_rows, mut checked, mut crashes) = (0.0, 0.0, 0.0, 0.0);
        for seed in 0..seeds {
            let text = scenario(scheme, seed);
            let s = run(&text).summary;
            let what = format!("{scheme} seed {seed}: {}", get(&s, "log"));
            assert_eq!(f(&s, "content.stale_sectors"), 0.0, "{what}");
            assert_eq!(f(&s, "log.recovery_sectors_wrong"), 0.0, "{what}");
            assert!(f(&s, "log.recovery_sectors_checked") > 0.0, "{what}");
            assert_eq!(f(&s, "requests_completed") + f(&s, "crashed_requests"), 1500.0, "{what}");
            assert_eq!(get(&s, "log.resync_running_at_end"), false, "{what}");
            resyncs += f(&s, "log.resyncs");
            full_rows += f(&s, "log.log_full_rows");
            checked += f(&s, "log.recovery_sectors_checked");
            crashes += f(&s, "log.crashes");
        }
        // The scenarios reach the paths they are meant to: re-syncs run to the end, and rows
        // are written as plain RAID-5 (a full or lost log).
        assert!(resyncs > 0.0 && full_rows > 0.0 && checked > 0.0 && crashes > 0.0, "{scheme}: {resyncs} {full_rows} {crashes}");
    }
}

/// After the log drive fails, every logged row is re-synchronized from the data (no log
/// entry is left, and each row recovers plainly); the re-sync's look-ups follow §III-D's
/// rule: one per row for a stripe-oriented index (SWO), one per data block for RAID5L.
#[test]
fn a_lost_log_drive_is_answered_by_re_synchronizing_every_logged_row() {
    let text = |scheme: &str| {
        scenario(scheme, 1).replace("capacity_gb = 0.0001", "capacity_gb = 0.0025").replace("resync_threshold = 0.8", "resync_threshold = 1")
    };
    for (scheme, lookups_per_row) in [("swo", 1.0), ("raid5l", 3.0)] {
        let s = run(&text(scheme)).summary;
        let what = format!("{scheme}: {}", get(&s, "log"));
        assert_eq!(f(&s, "log.resyncs"), 1.0, "{what}");
        assert!(f(&s, "log.resync_rows") > 0.0, "{what}");
        assert_eq!(f(&s, "log.logged_rows_at_end"), 0.0, "{what}");
        assert_eq!(f(&s, "log.resync_lookups"), lookups_per_row * f(&s, "log.resync_rows"), "{what}");
        assert_eq!(f(&s, "log.recovery_sectors_wrong"), 0.0, "{what}");
        assert_eq!(s["failures"][0]["held"], "the log drive", "{what}");
    }
}

/// Request by request the variants decide as their parents (notes A.8): RAID5L_S pre-reads
/// exactly as RAID5L and RAID5L_O as SWO, so their whole runs are the same but for the
/// look-ups; and SWO never pre-reads more than Data Logging.
#[test]
fn the_variants_pre_read_as_their_parents_and_swo_no_more_than_data_logging() {
    for seed in [2, 6, 10] {
        let text = |scheme: &str| scenario(scheme, seed).replace("capacity_gb = 0.0001", "capacity_gb = 0.0025");
        let summary = |scheme: &str| run(&text(scheme)).summary;
        let same = |a: &str, b: &str| {
            let (mut x, mut y) = (summary(a), summary(b));
            for s in [&mut x, &mut y] {
                for key in ["scheme", "lookups", "lookups_per_write_request", "resync_lookups"] {
                    s["log"].as_object_mut().unwrap().remove(key);
                }
                s.as_object_mut().unwrap().remove("config_hash");
            }
            assert_eq!(x, y, "seed {seed}: {a} and {b} differ beyond their look-ups");
        };
        same("raid5l", "raid5l_s");
        same("swo", "raid5l_o");
        let pre = |scheme: &str| f(&summary(scheme), "log.pre_read_blocks");
        assert!(pre("swo") <= pre("data_logging"), "seed {seed}");
    }
}

/// A data drive fails under load and is rebuilt onto a spare through the log (Fig. 5 per
/// row, by either executor, units of any size): every rebuilt sector is what the lost drive
/// should hold, every read returns the value last written, and at the end every row
/// recovers through the log.
#[test]
fn a_lost_data_drive_is_rebuilt_through_the_log_under_load() {
    let seeds = if long_tests() { 2_000 } else { 12 };
    for scheme in SCHEMES {
        let mut rebuilt = 0.0;
        for seed in 0..seeds {
            let executor = ["sor", "dor"][(seed % 2) as usize];
            let unit = [8, 24, 64][(seed / 2 % 3) as usize];
            let text = scenario(scheme, seed * 4)
                .replace("[array]\n", "[array]\nspares = 1\n")
                .replace("requests = 1500", "requests = 2500")
                + &format!(
                    "[[failures]]\ndrive = {}\nat_s = 0.2\n[rebuild]\nexecutor = \"{executor}\"\nunit = {{ sectors = {unit} }}\n",
                    seed % 3
                );
            let s = run(&text).summary;
            let what = format!("{scheme} seed {seed}: {} {}", get(&s, "log"), get(&s, "rebuilds"));
            assert_every_value_right(&s, &what);
            assert_eq!(get(&s, "data_loss"), false, "{what}");
            assert!(get(&s, "rebuild_time_s").is_number(), "the rebuild did not end: {what}");
            rebuilt += f(&s, "content.rebuilt_sectors_checked");
        }
        assert!(rebuilt > 0.0, "{scheme}");
    }
}

/// With `resync_idle_ms`, a re-sync starts once the array has had no user request for that
/// long (§III-D, trigger 1): under an open loop with gaps, and at the end of the workload, so
/// the log ends empty; without it, only the log's threshold starts one, less often.
#[test]
fn an_idle_array_re_synchronizes_its_log() {
    let text = |idle: &str| {
        scenario("swo", 0)
            .replace("capacity_gb = 0.0001", "capacity_gb = 0.0025")
            .replace("process = \"closed\"\noutstanding = 8", "process = \"poisson\"\nrate_per_s = 40")
            .replace("[log]\n", &format!("[log]\n{idle}"))
    };
    let idle = run(&text("resync_idle_ms = 30\n")).summary;
    let what = format!("{}", get(&idle, "log"));
    assert!(f(&idle, "log.idle_resyncs") > 1.0, "{what}");
    assert_eq!(f(&idle, "log.logged_rows_at_end"), 0.0, "{what}");
    assert_eq!(f(&idle, "log.recovery_sectors_wrong"), 0.0, "{what}");
    assert_eq!(f(&idle, "content.stale_sectors"), 0.0, "{what}");
    let busy = run(&text("")).summary;
    assert_eq!(f(&busy, "log.idle_resyncs"), 0.0, "{}", get(&busy, "log"));
    assert!(f(&busy, "log.resyncs") < f(&idle, "log.resyncs"), "{} {what}", get(&busy, "log"));
}

#[test]
fn bad_log_settings_are_errors_naming_the_key() {
    let base = scenario("swo", 0);
    let error = |text: String| raidlab_core::api::run_toml(&text, std::path::Path::new("."), None).unwrap_err().to_string();
    let cases = [
        (base.replace("capacity_gb = 0.0001", "capacity_gb = 0.000001"), "log.capacity_gb"),
        (base.replace("resync_threshold = 0.5", "resync_threshold = 0"), "log.resync_threshold"),
        (base.replace("resync_threshold = 0.5", "resync_threshold = 1.5"), "log.resync_threshold"),
        (base.replace("scheme = \"swo\"", "scheme = \"swoo\""), "log.scheme"),
        (base.replace("layout = \"raid5\"", "layout = \"raid0\""), "log.scheme"),
        (base.replace("stripe_unit_kib = 4", "stripe_unit_kib = 2"), "log.block_kib"),
        (base.replace("[log]\n", "[log]\nresync_idle_ms = -1\n"), "log.resync_idle_ms"),
        (format!("{}\n[rebuild]\nunit = {{ sectors = 8 }}\npiggyback = true\n[[failures]]\ndrive = 1\nat_s = 0.1\n", base.replace("[array]\n", "[array]\nspares = 1\n")), "rebuild"),
        (format!("{}\n[[failures]]\nkind = \"log_fails\"\nat_s = 0.1\n", base.replace("scheme = \"swo\"", "scheme = \"md_ppl\"")), "failures[0].kind"),
    ];
    for (text, key) in cases {
        assert!(text != base, "the case for {key} changed nothing");
        let e = error(text);
        assert!(e.starts_with(key), "expected an error at {key}, got: {e}");
    }
    let no_log = base.replace("[log]\nscheme = \"swo\"", "").replace("capacity_gb = 0.0001\nresync_threshold = 0.5\n", "");
    let e = error(format!("{no_log}\n[[failures]]\nkind = \"log_fails\"\nat_s = 0.1\n"));
    assert!(e.starts_with("failures[0].kind"), "{e}");
}

/// Linux md's schemes (the journal in either mode, `md_ppl`), under crashes that catch writes
/// between their log and their home writes, a lost journal drive, and a lost data drive
/// rebuilt onto a spare: every read returns the value last written, every replayed sector
/// holds the caught write's value, and at the end every written row's parity is the XOR of
/// its data (each block recovers plainly). Every caught write is recovered, once (the
/// write-back journal keeps its records instead).
#[test]
fn md_journal_and_ppl_recover_every_write_a_crash_catches() {
    let seeds = if long_tests() { 10_000 } else { 48 };
    for scheme in ["md_journal", "md_ppl", "md_journal_wb"] {
        let (mut interrupted, mut checked, mut crashes) = (0.0, 0.0, 0.0);
        for seed in 0..seeds {
            let mut text = scenario(scheme, seed);
            if scheme == "md_ppl" && seed % 4 == 1 {
                // (md_ppl has no log drive: a crash instead.)
                text = text.replace("kind = \"log_fails\"", "kind = \"crash\"");
            }
            if seed % 4 == 3 {
                text = text.replace("[array]\n", "[array]\nspares = 1\n") + "[rebuild]\n";
            }
            if seed % 8 == 2 {
                text += "[[failures]]\nkind = \"crash\"\nat_s = 0.45\n";
            }
            let s = run(&text).summary;
            let what = format!("{scheme} seed {seed}: {}", get(&s, "log"));
            assert_every_value_right(&s, &what);
            assert_eq!(f(&s, "requests_completed") + f(&s, "crashed_requests"), 1500.0, "{what}");
            checked += f(&s, "log.recovery_sectors_checked");
            crashes += f(&s, "log.crashes");
            if scheme == "md_journal_wb" {
                // (Its journal is its recovery: nothing is left pending.)
                continue;
            }
            assert_eq!(f(&s, "log.recoveries_pending_at_end"), 0.0, "{what}");
            assert_eq!(f(&s, "log.recovered_stripes"), f(&s, "log.interrupted_writes"), "{what}");
            interrupted += f(&s, "log.interrupted_writes");
        }
        assert!(crashes > 0.0 && checked > 0.0, "{scheme}: no crash, or nothing checked");
        assert!(scheme == "md_journal_wb" || interrupted > 0.0, "{scheme}: the crashes caught no write");
    }
}

/// What md's logs write per write, exactly: aligned 4 KiB writes (read-modify-write of one
/// block) append a 4 KiB header and the block's partial parity under PPL, and a header, the
/// data block and the parity block to the journal; whole-stripe writes log PPL's header
/// alone. Each log write is a phase before the home writes, so a write takes longer than
/// plain RAID-5's.
#[test]
fn md_logs_write_what_the_kernel_documents() {
    let text = |scheme: &str, size_kib: u32| {
        let log = if scheme.is_empty() { String::new() } else { format!("[log]\nscheme = \"{scheme}\"\ncapacity_gb = 0.001\n") };
        format!(
            "seed = 1\n[array]\nlayout = \"raid5\"\ndrives = 5\nstripe_unit_kib = 16\n{SMALL_DRIVE}\n[workload]\nrequests = 400\n\
             read_fraction = 0\nalign_kib = {size_kib}\nsize = {{ distribution = \"fixed\", kib = {size_kib} }}\n\
             [workload.arrival]\nprocess = \"closed\"\noutstanding = 1\n[content]\ncheck = true\n{log}"
        )
    };
    let per_write = |scheme: &str, size: u32| {
        let s = run(&text(scheme, size)).summary;
        assert_eq!(f(&s, "content.stale_sectors"), 0.0);
        assert_eq!(f(&s, "log.unprotected_writes"), 0.0, "{}", get(&s, "log"));
        (f(&s, "log.md_log_bytes_per_write"), f(&s, "response_ms.all.mean"))
    };
    let (ppl_small, ppl_ms) = per_write("md_ppl", 4);
    let (journal_small, journal_ms) = per_write("md_journal", 4);
    assert_eq!(ppl_small, 8192.0);
    assert_eq!(journal_small, 12288.0);
    let (ppl_full, _) = per_write("md_ppl", 64);
    assert_eq!(ppl_full, 4096.0, "a whole-stripe write logs PPL's header alone");
    let (journal_full, _) = per_write("md_journal", 64);
    assert_eq!(journal_full, 4096.0 + 80.0 * 1024.0, "a header, four data units and the parity");
    let plain = run(&text("", 4)).summary;
    let plain_ms = f(&plain, "response_ms.all.mean");
    assert!(ppl_ms > plain_ms && journal_ms > plain_ms, "RAID-5 {plain_ms}, PPL {ppl_ms}, journal {journal_ms}");
}

/// md's write-back journal answers a write once its data is in the journal (a sequential
/// append), so writes answer sooner than under the write-through journal or plain RAID-5; a
/// read of a block still cached is served from memory, with no disk operation; and every
/// read, and every row at the end, holds the value last written.
#[test]
fn a_write_back_journal_answers_at_the_journal_and_reads_from_memory() {
    let text = |scheme: &str, read_fraction: f64| {
        let log = if scheme.is_empty() { String::new() } else { format!("[log]\nscheme = \"{scheme}\"\ncapacity_gb = 0.002\n") };
        format!(
            "seed = 2\n[array]\nlayout = \"raid5\"\ndrives = 5\nstripe_unit_kib = 16\n{SMALL_DRIVE}\n[workload]\nrequests = 600\n\
             read_fraction = {read_fraction}\nalign_kib = 4\nsize = {{ distribution = \"fixed\", kib = 4 }}\n\
             address = {{ distribution = \"hot_cold\", hot_request_fraction = 0.9, hot_space_fraction = 0.002 }}\n\
             [workload.arrival]\nprocess = \"closed\"\noutstanding = 1\n[content]\ncheck = true\n{log}"
        )
    };
    let write_ms = |scheme: &str| {
        let s = run(&text(scheme, 0.0)).summary;
        assert_eq!(f(&s, "content.stale_sectors"), 0.0);
        f(&s, "response_ms.write.mean")
    };
    let (back, through, plain) = (write_ms("md_journal_wb"), write_ms("md_journal"), write_ms(""));
    assert!(back < through && back < plain, "write-back {back} ms, write-through {through} ms, RAID-5 {plain} ms");
    // Reads of a small hot area that writes keep cached: fewer disk operations per request.
    let ops = |scheme: &str| {
        let s = run(&text(scheme, 0.5)).summary;
        assert_eq!(f(&s, "content.stale_sectors"), 0.0, "{}", get(&s, "log"));
        assert_eq!(f(&s, "log.recovery_sectors_wrong"), 0.0, "{}", get(&s, "log"));
        f(&s, "response_ms.read.mean")
    };
    let (back_read, through_read) = (ops("md_journal_wb"), ops("md_journal"));
    assert!(back_read < through_read, "reads: write-back {back_read} ms, write-through {through_read} ms");
}

/// Look-ups cost CPU time only when `log.lookup_us` says so (the paper gives none, notes
/// A.9): without it RAID5L and RAID5L_S plan the same operations and answer alike to the
/// nanosecond, and with it every write waits its look-ups' time before its disk operations,
/// so RAID5L_S (one look-up per row) answers sooner than RAID5L (one per block it might
/// pre-read), Fig. 11's reason; a write's delay is its look-ups times the cost.
#[test]
fn look_ups_cost_cpu_time_only_when_asked_and_then_make_raid5l_s_faster() {
    let text = |scheme: &str, lookup_us: Option<f64>| {
        let cost = lookup_us.map_or(String::new(), |us| format!("lookup_us = {us}\n"));
        format!(
            "seed = 4\n[array]\nlayout = \"raid5\"\ndrives = 5\nstripe_unit_kib = 4\n{SMALL_DRIVE}\n[workload]\nrequests = 80\n\
             read_fraction = 0\nalign_kib = 4\nsize = {{ distribution = \"fixed\", kib = 12 }}\n\
             [workload.arrival]\nprocess = \"closed\"\noutstanding = 1\n[content]\ncheck = true\n\
             [log]\nscheme = \"{scheme}\"\ncapacity_gb = 0.0029\nresync_threshold = 1.0\n{cost}"
        )
    };
    let mean = |s: &serde_json::Value| f(s, "response_ms.write.mean");
    let (plain, plain_s) = (run(&text("raid5l", None)).summary, run(&text("raid5l_s", None)).summary);
    assert_eq!(mean(&plain), mean(&plain_s), "without a look-up cost the two plan alike");
    assert!(f(&plain, "log.lookups") > f(&plain_s, "log.lookups"));
    let cost_us = 20_000.0;
    let (costly, costly_s) = (run(&text("raid5l", Some(cost_us))).summary, run(&text("raid5l_s", Some(cost_us))).summary);
    assert!(mean(&costly_s) < mean(&costly), "RAID5L_S {} ms, RAID5L {} ms", mean(&costly_s), mean(&costly));
    for (with, without) in [(&costly, &plain), (&costly_s, &plain_s)] {
        assert_eq!(f(with, "content.stale_sectors"), 0.0);
        // (The log holds every write: no re-sync's look-ups share the CPU.)
        assert_eq!(f(with, "log.resyncs") + f(with, "log.log_full_rows"), 0.0, "{}", get(with, "log"));
        // The delay is the look-ups' time, give or take a rotation (the drives meet the
        // requests at other angles): the small drive turns in 6 ms.
        let expected_ms = f(with, "log.lookups_per_write_request") * cost_us / 1e3;
        let delay_ms = mean(with) - mean(without);
        assert!((delay_ms - expected_ms).abs() < 6.0, "delay {delay_ms} ms, look-ups' time {expected_ms} ms");
    }
}

/// A data drive and the log drive both failing, in either order, with no rebuild: every row
/// still logged when the second fails loses its block on the data drive, and that is data
/// loss, reported (`log.lost_blocks`, lost requests), never a stale read: a later read of the
/// block is not reconstructed from the row's stale parity, and the re-sync the log's loss
/// started runs to the end. Every other block still reads, and recovers at the end, right.
#[test]
fn a_data_drive_and_the_log_both_lost_is_reported_data_loss_never_stale_data() {
    let seeds = if long_tests() { 10_000 } else { 40 };
    for scheme in SCHEMES {
        let (mut lost_blocks, mut lost_requests) = (0.0, 0.0);
        for seed in 0..seeds {
            let base = scenario(scheme, seed * 4);
            let drives = 3 + (seed * 4) % 5;
            let (data_at, log_at) = if seed % 2 == 0 { (0.2, 0.3) } else { (0.3, 0.2) };
            let text = format!(
                "{base}[[failures]]\ndrive = {}\nat_s = {data_at}\n[[failures]]\nkind = \"log_fails\"\nat_s = {log_at}\n",
                seed % drives
            );
            let s = run(&text).summary;
            let what = format!("{scheme} seed {seed}: {}", get(&s, "log"));
            assert_eq!(f(&s, "content.stale_sectors"), 0.0, "{what}");
            assert_eq!(f(&s, "log.recovery_sectors_wrong"), 0.0, "{what}");
            assert_eq!(get(&s, "log.resync_running_at_end"), false, "{what}");
            assert_eq!(f(&s, "log.logged_rows_at_end"), 0.0, "{what}");
            assert_eq!(f(&s, "log.lost_blocks") > 0.0, f(&s, "lost_requests") > 0.0 || f(&s, "log.lost_blocks") > 0.0, "{what}");
            lost_blocks += f(&s, "log.lost_blocks");
            lost_requests += f(&s, "lost_requests");
        }
        assert!(lost_blocks > 0.0 && lost_requests > 0.0, "{scheme}: nothing was lost with the log");
    }
}

/// The same with a rebuild onto a spare (either executor), the log failing before, during or
/// after it: the rebuild ends, every sector it could recover is right, and a block lost with
/// the log stays lost on the spare (a read of it is reported lost, never answered with what
/// the rebuild wrote there) until a write overwrites it whole. A run without the content
/// model reports the same losses: once something is lost, no read takes the one-op path,
/// which would not know.
#[test]
fn a_data_drive_and_the_log_lost_around_a_rebuild_stay_reported_losses() {
    let seeds = if long_tests() { 2_000 } else { 12 };
    for scheme in SCHEMES {
        let (mut lost_blocks, mut lost_requests) = (0.0, 0.0);
        for seed in 0..seeds {
            let base = scenario(scheme, seed * 4).replace("[array]\n", "[array]\nspares = 1\n").replace("requests = 1500", "requests = 3000");
            let drives = 3 + (seed * 4) % 5;
            let log_at = [0.15, 0.25, 0.6][(seed % 3) as usize];
            let executor = ["sor", "dor"][(seed / 3 % 2) as usize];
            let text = format!(
                "{base}[[failures]]\ndrive = {}\nat_s = 0.2\n[[failures]]\nkind = \"log_fails\"\nat_s = {log_at}\n\
                 [rebuild]\nexecutor = \"{executor}\"\nunit = {{ sectors = 8 }}\n",
                seed % drives
            );
            let s = run(&text).summary;
            let what = format!("{scheme} seed {seed}: {} {}", get(&s, "log"), get(&s, "rebuilds"));
            assert_every_value_right(&s, &what);
            assert!(get(&s, "rebuild_time_s").is_number(), "the rebuild did not end: {what}");
            assert_eq!(f(&s, "requests_completed"), 3000.0, "{what}");
            assert_same_losses_without_content(&text, &s, &what);
            lost_blocks += f(&s, "log.lost_blocks");
            lost_requests += f(&s, "lost_requests");
        }
        assert!(lost_blocks > 0.0 && lost_requests > 0.0, "{scheme}: nothing was lost with the log");
    }
}

/// Run `scheme` (2,500 requests) with a data drive failing before, after or with a crash,
/// rebuilt onto a spare on odd seeds, and check what every such run must show: every value
/// right, every request completed or crashed, and the rebuild ended. Returns the scenario,
/// its summary, and a description for failure messages.
fn run_member_and_crash(scheme: &str, seed: u64) -> (String, serde_json::Value, String) {
    let rebuild = seed % 2 == 1;
    let mut base = scenario(scheme, seed * 4).replace("requests = 1500", "requests = 2500");
    if rebuild {
        base = base.replace("[array]\n", "[array]\nspares = 1\n") + "[rebuild]\nunit = { sectors = 8 }\n";
    }
    let drives = 3 + (seed * 4) % 5;
    let (drive_at, crash_at) = [(0.2, 0.3), (0.3, 0.2), (0.25, 0.25)][(seed / 2 % 3) as usize];
    let text = format!(
        "{base}[[failures]]\ndrive = {}\nat_s = {drive_at}\n[[failures]]\nkind = \"crash\"\nat_s = {crash_at}\n",
        seed % drives
    );
    let s = run(&text).summary;
    let what = format!("{scheme} seed {seed}: {} {}", get(&s, "log"), get(&s, "rebuilds"));
    assert_every_value_right(&s, &what);
    assert_eq!(f(&s, "requests_completed") + f(&s, "crashed_requests"), 2500.0, "{what}");
    if rebuild {
        assert!(get(&s, "rebuild_time_s").is_number(), "the rebuild did not end: {what}");
    }
    (text, s, what)
}

/// A data drive failing before or after a crash that loses the index (with or without a
/// rebuild): a row logged when the index was lost, or written by a write the crash caught,
/// has a parity of unknown state until the walk over every stripe rewrites it, so its block
/// on the lost drive is reported lost, never reconstructed from that parity. Every other
/// read, rebuilt sector and recovery at the end is right.
#[test]
fn a_data_drive_lost_around_a_crash_loses_only_rows_of_unknown_parity() {
    let seeds = if long_tests() { 2_000 } else { 12 };
    for scheme in SCHEMES {
        let (mut lost_blocks, mut crashes) = (0.0, 0.0);
        for seed in 0..seeds {
            let (text, s, what) = run_member_and_crash(scheme, seed);
            assert_same_losses_without_content(&text, &s, &what);
            lost_blocks += f(&s, "log.lost_blocks");
            crashes += f(&s, "log.crashes");
        }
        assert!(lost_blocks > 0.0 && crashes > 0.0, "{scheme}: no row's parity was of unknown state when its drive was lost");
    }
}

/// md's write-back journal with a failed member (rebuilt onto a spare, or not), a lost
/// journal, or both. A lost member loses nothing: its cached blocks are in memory and the
/// journal, and the others are recovered from their homes and the parity, which always
/// agree (degraded reads, merges, flushes and full-journal writes alike). A lost journal
/// loses every block it held (the kernel's documentation: "losing the journal device in
/// write-back mode loses data"), reported as lost, never read from its stale home, until a
/// write overwrites it whole. A run without the content model reports the same losses.
#[test]
fn a_write_back_journal_survives_a_lost_member_and_reports_what_a_lost_journal_takes() {
    let seeds = if long_tests() { 2_000 } else { 16 };
    let (mut lost_with_journal, mut rebuilt) = (0.0, 0.0);
    for seed in 0..seeds {
        let base = scenario("md_journal_wb", seed * 4).replace("requests = 1500", "requests = 2500");
        let drives = 3 + (seed * 4) % 5;
        let member = format!("[[failures]]\ndrive = {}\nat_s = 0.2\n", seed % drives);
        let journal = format!("[[failures]]\nkind = \"log_fails\"\nat_s = {}\n", [0.15, 0.3][(seed / 4 % 2) as usize]);
        let rebuild = "[rebuild]\nunit = { sectors = 8 }\n";
        let (text, journal_lost) = match seed % 4 {
            0 => (format!("{base}{member}"), false),
            1 => (format!("{}{member}{rebuild}", base.replace("[array]\n", "[array]\nspares = 1\n")), false),
            2 => (format!("{base}{journal}"), true),
            _ => (format!("{}{member}{journal}{rebuild}", base.replace("[array]\n", "[array]\nspares = 1\n")), true),
        };
        let s = run(&text).summary;
        let what = format!("seed {seed}: {} {}", get(&s, "log"), get(&s, "rebuilds"));
        assert_every_value_right(&s, &what);
        assert_eq!(f(&s, "requests_completed"), 2500.0, "{what}");
        if text.contains("[rebuild]") {
            assert!(get(&s, "rebuild_time_s").is_number(), "the rebuild did not end: {what}");
            rebuilt += f(&s, "content.rebuilt_sectors_checked");
        }
        if !journal_lost {
            assert_eq!(f(&s, "log.lost_blocks") + f(&s, "lost_requests"), 0.0, "a member's loss lost data: {what}");
        }
        assert_same_losses_without_content(&text, &s, &what);
        lost_with_journal += f(&s, "log.lost_blocks") * journal_lost as u8 as f64;
    }
    assert!(lost_with_journal > 0.0 && rebuilt > 0.0, "lost with the journal {lost_with_journal}, rebuilt {rebuilt}");
}

/// md's three schemes with a member lost around a crash (before it or during the recovery,
/// rebuilt onto a spare or not). A replay from the write-through journal needs no member:
/// nothing is lost while every write found room in the journal. PPL recomputes a parity only
/// with every modified drive readable (the kernel's documented rule): a lost modified
/// member's block of a row a crash caught is reported lost, and so is a lost member's block
/// of a row whose write was unprotected (a degraded stripe's). The write-back journal loses
/// a block neither cached nor readable in a row a crash caught being written home. Nothing
/// else is lost: every other value reads back right, and a run without the content model
/// reports the same losses.
#[test]
fn md_schemes_with_a_member_lost_around_a_crash_lose_only_what_their_rules_cannot_recover() {
    let seeds = if long_tests() { 2_000 } else { 12 };
    for scheme in ["md_journal", "md_ppl", "md_journal_wb"] {
        let (mut lost_blocks, mut interrupted, mut crashes, mut journaled) = (0.0, 0.0, 0.0, 0);
        for seed in 0..seeds {
            let (text, s, what) = run_member_and_crash(scheme, seed);
            if scheme != "md_journal_wb" {
                assert_eq!(f(&s, "log.recoveries_pending_at_end"), 0.0, "{what}");
            }
            if scheme == "md_journal" && f(&s, "log.unprotected_writes") == 0.0 {
                // (A write the journal had no room for is plain RAID-5's, write hole and all.)
                assert_eq!(f(&s, "log.lost_blocks") + f(&s, "lost_requests"), 0.0, "a replay lost data: {what}");
                journaled += 1;
            }
            assert_same_losses_without_content(&text, &s, &what);
            lost_blocks += f(&s, "log.lost_blocks");
            if scheme != "md_journal_wb" {
                interrupted += f(&s, "log.interrupted_writes");
            }
            crashes += f(&s, "log.crashes");
        }
        assert!(crashes > 0.0 && (scheme == "md_journal_wb" || interrupted > 0.0), "{scheme}: the crashes caught no write");
        assert!(scheme != "md_ppl" || lost_blocks > 0.0, "{scheme}: no modified member was lost around a crash");
        assert!(scheme != "md_journal" || journaled > 0, "{scheme}: every run wrote without the journal");
    }
}
