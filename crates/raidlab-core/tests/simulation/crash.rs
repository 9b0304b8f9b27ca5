//! A crash of the controller (`kind = "crash"` in the failure schedule): every request ends
//! once, answered or caught by the crash; reads return what the drives hold where no
//! redundancy is relied on; a RAID-5 write caught by a crash can leave its parity stale, which
//! a degraded read later finds (the write hole); a rebuild goes on after the crash and every
//! rebuilt sector is right.

use crate::common::*;

fn scenario(layout: &str, seed: u64, failures: &str, rebuild: bool) -> String {
    let (spares, rebuild) = if rebuild { ("spares = 1\n", "[rebuild]\nunit = { sectors = 64 }\n") } else { ("", "") };
    format!(
        r#"
seed = {seed}
[array]
layout = "{layout}"
drives = 4
stripe_unit_kib = 4
{spares}
{SMALL_DRIVE}
[workload]
requests = 6000
{MIXED_HOT_REQUESTS}
[workload.arrival]
process = "closed"
outstanding = 16
[content]
check = true
{failures}
{rebuild}
"#
    )
}

const CRASH: &str = "[[failures]]\nkind = \"crash\"\nat_s = 0.4\n";

/// Every request ends once: answered, or caught in flight by the crash; the run goes on after
/// it. Where nothing relies on redundancy (RAID-0, and RAID-5's and RAID-6's reads of working
/// drives), every read returns what the drives hold, an interrupted write's sectors included.
#[test]
fn every_request_ends_once_and_reads_return_what_the_drives_hold() {
    for layout in ["raid0", "raid5", "raid6"] {
        for seed in 1..=4 {
            let s = run(&scenario(layout, seed, CRASH, false)).summary;
            let what = format!("{layout} seed {seed}: {s}");
            let crashed = f(&s, "crashed_requests");
            assert!(crashed > 0.0, "the crash caught no request in flight: {what}");
            assert_eq!(f(&s, "requests_completed") + crashed, 6000.0, "{what}");
            assert!(f(&s, "simulated_seconds") > 0.8, "the run stopped at the crash: {what}");
            assert_eq!(f(&s, "content.stale_sectors"), 0.0, "{what}");
        }
    }
}

/// The RAID-5 write hole: a crash caught writes whose data reached a drive and whose parity
/// did not (or the other way round); a drive failure after it makes reads of those stripes
/// reconstruct from the stale parity, and the content model finds values that were never
/// written. Without the crash, the same failure returns every value last written.
#[test]
fn a_crash_then_a_failure_exposes_the_raid5_write_hole() {
    let failure = "[[failures]]\ndrive = 1\nat_s = 0.41\n";
    let mut stale = 0.0;
    for seed in 1..=6 {
        let s = run(&scenario("raid5", seed, &format!("{CRASH}{failure}"), false)).summary;
        stale += f(&s, "content.stale_sectors");
        let clean = run(&scenario("raid5", seed, failure, false)).summary;
        assert_eq!(f(&clean, "content.stale_sectors"), 0.0, "seed {seed}: {clean}");
    }
    assert!(stale > 0.0, "no degraded read found a stripe the crash left inconsistent");
}

/// A crash during a rebuild: its units in flight are unrebuilt again, it goes on from the
/// units already current, completes, and every rebuilt sector holds what the lost drive held:
/// on a mirror with writes caught by the crash, and on RAID-5 and RAID-6 under reads only. (A
/// RAID-5
/// write a crash catches in degraded mode can leave the lost unit's parity stale: the write
/// hole corrupts data the failed drive held, which its rebuild then writes as it finds it.)
#[test]
fn a_rebuild_goes_on_after_a_crash_and_completes_correctly() {
    let failures = "[[failures]]\ndrive = 1\nat_s = 0.2\n[[failures]]\nkind = \"crash\"\nat_s = 1.0\n";
    for layout in ["raid1", "raid5", "raid6"] {
        let mut text = scenario(layout, 3, failures, true);
        if layout != "raid1" {
            text = text.replace("read_fraction = 0.5", "read_fraction = 1.0");
        }
        let s = run(&text).summary;
        let what = format!("{layout}: {s}");
        assert_eq!(s["rebuilds"][0]["outcome"], "complete", "{what}");
        assert!(s["rebuilds"][0]["ended_at_s"].as_f64().is_some_and(|t| t > 1.0), "the rebuild ended before the crash: {what}");
        assert!(f(&s, "crashed_requests") > 0.0, "{what}");
        assert_eq!(f(&s, "content.rebuilt_sectors_wrong"), 0.0, "{what}");
        assert!(f(&s, "content.rebuilt_sectors_checked") > 0.0, "{what}");
        assert_eq!(f(&s, "requests_completed") + f(&s, "crashed_requests"), 6000.0, "{what}");
    }
}

/// A crash is the controller's: naming a drive is an error naming the key, and so is a crash
/// with a buffer cache, whose memory through a crash is not modelled yet.
#[test]
fn a_crash_names_no_drive_and_is_refused_with_a_cache() {
    let error = |text: &str| raidlab_core::Config::from_toml(text, std::path::Path::new(".")).unwrap_err().to_string();
    let with_drive = scenario("raid5", 1, "[[failures]]\nkind = \"crash\"\ndrive = 2\nat_s = 0.4\n", false);
    let e = error(&with_drive);
    assert!(e.starts_with("failures[0].drive:") && e.contains("leave `drive` out"), "{e}");
    let with_cache = format!("{}[cache]\npolicy = \"lru\"\nsize_blocks = 100\n", scenario("raid5", 1, CRASH, false));
    let e = error(&with_cache);
    assert!(e.starts_with("failures[0].kind:") && e.contains("[cache]"), "{e}");
}
