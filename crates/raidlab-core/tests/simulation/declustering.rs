//! Declustered mirrors through whole runs under the content model: normal, degraded and
//! rebuild modes. Interleaved declustering (the thesis's ID, `layout::interleaved`), with
//! either read rule and both rebuild executors: a lost drive comes back from every other
//! drive of its cluster (its fragments' backups, and the primaries its backups copy), and a
//! second failure loses data inside the cluster only. Chained declustering
//! (`layout::chained`): a lost drive comes back from its two neighbours. Linux md's raid10
//! (`layout::md_raid10`): near, far and offset copies.

use crate::common::*;

fn scenario(reads: &str, executor: &str, failures: &str) -> String {
    format!(
        "seed = 11\n[array]\nlayout = \"interleaved\"\ndrives = 8\ncluster_drives = 4\nid_reads = \"{reads}\"\n\
         stripe_unit_kib = 4\nspares = 1\n{SMALL_DRIVE}\n\
         [workload]\nrequests = 4000\nread_fraction = 0.6\nalign_kib = 0.5\n\
         size = {{ distribution = \"uniform\", min_kib = 0.5, max_kib = 16, step_kib = 0.5 }}\n\
         [workload.arrival]\nprocess = \"closed\"\noutstanding = 8\nthink_ms = 2\n[content]\ncheck = true\n{failures}\
         [rebuild]\nexecutor = \"{executor}\"\n# Units that straddle fragments and halves: two sources, or two ranges of one.\n\
         unit = {{ sectors = 40 }}\n"
    )
}

#[test]
fn a_lost_drive_is_rebuilt_from_its_cluster_and_every_read_returns_the_last_write() {
    for reads in ["either", "primary"] {
        for executor in ["sor", "dor"] {
            let s = run(&scenario(reads, executor, "[[failures]]\ndrive = 2\nat_s = 0.2\n")).summary;
            let what = format!("{reads}/{executor}");
            assert_eq!(s["requests_completed"], 4000, "{what}");
            assert_eq!(f(&s, "content.stale_sectors"), 0.0, "{what}: {s}");
            assert_eq!(f(&s, "content.rebuilt_sectors_wrong"), 0.0, "{what}");
            assert!(f(&s, "content.rebuilt_sectors_checked") > 0.0, "{what}");
            assert_eq!(s["rebuilds"][0]["outcome"], "complete", "{what}");
            assert!(f(&s, "response_ms.degraded_read.count") > 0.0, "{what}: degraded reads before the rebuild ended");
            assert_eq!(s["data_loss"], false, "{what}");
        }
    }
}

#[test]
fn a_second_failure_loses_data_only_inside_the_cluster() {
    // Drive 2 (cluster 0) and drive 5 (cluster 1): each cluster keeps a copy of everything.
    let other = run(&scenario("either", "sor", "[[failures]]\ndrive = 2\nat_s = 0.2\n[[failures]]\ndrive = 5\nat_s = 0.25\n")).summary;
    assert_eq!(other["data_loss"], false, "{other}");
    assert_eq!(f(&other, "content.stale_sectors"), 0.0);
    // Drives 2 and 3, both of cluster 0, before a rebuild could end: data is lost.
    let same = run(&scenario("either", "sor", "[[failures]]\ndrive = 2\nat_s = 0.2\n[[failures]]\ndrive = 3\nat_s = 0.21\n")).summary;
    assert_eq!(same["data_loss"], true, "{same}");
}

#[test]
fn a_cluster_that_does_not_divide_the_drives_is_refused_by_name() {
    let failure = "[[failures]]\ndrive = 2\nat_s = 0.2\n";
    let text = scenario("either", "sor", failure).replace("drives = 8\n", "drives = 6\n");
    let err = raidlab_core::config::Config::from_toml(&text, std::path::Path::new("."))
        .and_then(|c| raidlab_core::engine::Simulation::new(c).map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("array.cluster_drives: clusters of 4 drives do not divide the array's 6 drives"), "{err}");
    let text = scenario("either", "sor", failure).replace("id_reads = \"either\"", "id_reads = \"backup\"");
    let err = raidlab_core::config::Config::from_toml(&text, std::path::Path::new(".")).unwrap_err().to_string();
    assert!(err.starts_with("array.id_reads:"), "{err}");
    let text = scenario("either", "sor", failure).replace("layout = \"interleaved\"", "layout = \"raid5\"");
    let err = raidlab_core::config::Config::from_toml(&text, std::path::Path::new(".")).unwrap_err().to_string();
    assert!(err.starts_with("array.cluster_drives: only the interleaved layout reads it"), "{err}");
}

/// Chained declustering (`layout::chained`) through the same modes: a lost drive comes back
/// from its two neighbours, and a failure two drives away loses nothing.
#[test]
fn chained_declustering_rebuilds_from_both_neighbours_and_survives_a_failure_apart() {
    let chained = |failures: &str| {
        scenario("either", "dor", failures)
            .replace("layout = \"interleaved\"", "layout = \"chained\"")
            .replace("cluster_drives = 4\nid_reads = \"either\"\n", "")
    };
    let s = run(&chained("[[failures]]\ndrive = 3\nat_s = 0.2\n[[failures]]\ndrive = 5\nat_s = 0.3\n")).summary;
    assert_eq!(s["layout"], "chained");
    assert_eq!(f(&s, "content.stale_sectors"), 0.0, "{s}");
    assert_eq!(f(&s, "content.rebuilt_sectors_wrong"), 0.0);
    assert!(f(&s, "content.rebuilt_sectors_checked") > 0.0);
    assert_eq!(s["rebuilds"][0]["outcome"], "complete");
    assert_eq!(s["data_loss"], false);
    let neighbours = run(&chained("[[failures]]\ndrive = 3\nat_s = 0.2\n[[failures]]\ndrive = 4\nat_s = 0.21\n")).summary;
    assert_eq!(neighbours["data_loss"], true, "{neighbours}");
}

/// Linux md's raid10 (`layout::md_raid10`) in its near, far and offset arrangements, on drive
/// counts that do and do not divide by the copies: a lost drive is rebuilt from the drives
/// holding its chunks' other copies, and every rebuilt sector is proved.
#[test]
fn md_raid10_near_far_and_offset_rebuild_a_lost_drive() {
    for (md_layout, drives) in [("n2", 3), ("n2", 4), ("f2", 4), ("o2", 3), ("n3", 4), ("f3", 5)] {
        let text = scenario("either", "sor", "[[failures]]\ndrive = 1\nat_s = 0.2\n")
            .replace("layout = \"interleaved\"", "layout = \"md_raid10\"")
            .replace("drives = 8\ncluster_drives = 4\nid_reads = \"either\"\n", &format!("drives = {drives}\nmd_layout = \"{md_layout}\"\n"));
        let s = run(&text).summary;
        let what = format!("{md_layout} on {drives}");
        assert_eq!(s["layout"], "md_raid10", "{what}");
        assert_eq!(f(&s, "content.stale_sectors"), 0.0, "{what}: {s}");
        assert_eq!(f(&s, "content.rebuilt_sectors_wrong"), 0.0, "{what}");
        assert!(f(&s, "content.rebuilt_sectors_checked") > 0.0, "{what}");
        assert_eq!(s["rebuilds"][0]["outcome"], "complete", "{what}");
        assert_eq!(s["data_loss"], false, "{what}");
    }
}

/// The thesis's reads "that map to the set with a failed disk" (`response_ms.failed_set_read`):
/// with addresses uniform over the array and no failure before, their share of the reads
/// after a failure is the failed member's set's share of the data: its mirror pair's for
/// traditional mirroring (1 of 8 pairs), its cluster's for interleaved declustering (1 of 2
/// clusters), every read for RAID-5 (the parity group is the array).
#[test]
fn reads_in_the_failed_set_are_the_sets_share_of_the_data() {
    let base = |array: &str| {
        format!(
            "seed = 3\n[array]\n{array}\ndrives = 16\nstripe_unit_kib = 4\n{SMALL_DRIVE}\n[workload]\nrequests = 40000\n\
             read_fraction = 1.0\nsize_kib = 4\n[workload.arrival]\nprocess = \"poisson\"\nrate_per_s = 400\n\
             [[failures]]\ndrive = 5\nat_s = 0\n"
        )
    };
    for (array, share) in [
        ("layout = \"raid1\"\ncopies = 2", 1.0 / 8.0),
        ("layout = \"interleaved\"\ncluster_drives = 8", 1.0 / 2.0),
        ("layout = \"raid5\"", 1.0),
    ] {
        let s = run(&base(array)).summary;
        let (in_set, reads) = (f(&s, "response_ms.failed_set_read.count"), f(&s, "response_ms.read.count"));
        let measured = in_set / reads;
        // Binomial: 4 standard deviations of 40,000 draws.
        let tolerance = 4.0 * (share * (1.0 - share) / reads).sqrt() + 1e-9;
        assert!((measured - share).abs() <= tolerance, "{array}: {measured} of reads in the failed set, expected {share}");
        assert!(f(&s, "response_ms.degraded_read.count") <= in_set, "{array}: a degraded read is in the failed set");
    }
}
