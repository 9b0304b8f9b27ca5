//! Impossible configurations fail at build time with an error naming the key.

use std::path::Path;

use raidlab_core::api;

fn error(text: &str) -> String {
    match api::resolve_toml(text, Path::new(".")) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn base(layout: &str, drives: u32, extra: &str) -> String {
    format!("[array]\nlayout = \"{layout}\"\ndrives = {drives}\n{extra}\n[workload]\nrequests = 10\n")
}

#[test]
fn impossible_geometries_name_the_key() {
    assert!(error(&base("raid5", 0, "")).starts_with("array.drives: must be at least 1"));
    assert!(error(&base("raid5", 2, "")).starts_with("array.drives: RAID-5 needs at least 3 drives"));
    assert!(error(&base("raid1", 3, "")).starts_with("array.drives:"));
    // ibm0661 holds 637,728 sectors (≈ 311 MiB): a 1 GiB stripe unit cannot fit.
    let e = error(&base("raid0", 2, "stripe_unit_kib = 1048576"));
    assert!(e.starts_with("array.stripe_unit_kib: stripe unit"), "{e}");
    assert!(error(&base("raid0", 2, "stripe_unit_kib = 0.3")).starts_with("array.stripe_unit_kib:"));
}

#[test]
fn unknown_policy_names_list_the_known_ones() {
    let e = error(&base("raid7", 4, ""));
    assert!(e.starts_with("array.layout: unknown layout \"raid7\"") && e.contains("raid5"), "{e}");
    let e = error(&format!("{}[drive]\nscheduler = \"elevator\"\n", base("raid5", 4, "")));
    assert!(e.starts_with("drive.scheduler: unknown scheduler") && e.contains("sptf"), "{e}");
    let e = error(&format!("{}[drive]\npreset = \"floppy\"\n", base("raid5", 4, "")));
    assert!(e.starts_with("drive.preset: unknown drive preset") && e.contains("ibm0661"), "{e}");
    let e = error(&base("raid5", 4, "parity_rotation = \"diagonal\""));
    assert!(e.starts_with("array.parity_rotation:"), "{e}");
}

#[test]
fn requests_larger_than_the_array_are_rejected() {
    let text = "[array]\nlayout = \"raid0\"\ndrives = 1\nstripe_unit_kib = 4\n[drive.model]\nrpm = 5400\nsurfaces = 1\nzones = [{ cylinders = 2, sectors_per_track = 8 }]\nseek = { kind = \"formula\", a_ms = 1, b_ms = 0, c_ms = 0 }\n[workload]\nrequests = 10\nsize_kib = 64\n";
    assert!(error(text).starts_with("workload.size:"));
}
