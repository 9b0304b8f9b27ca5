//! Impossible configurations fail at build time with an error naming the key; extreme but
//! possible ones run.

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

fn run_error(text: &str) -> String {
    match api::run_toml(text, Path::new("."), None) {
        Ok(_) => panic!("ran:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn runs_reaching_beyond_what_can_be_simulated_stop_with_an_error_naming_the_key() {
    // Each of these used to abort the process on a failed allocation of the time series
    // (one window per `window_s` up to the last event), or to overflow the clock.
    let poisson = |rate: &str, metrics: &str| {
        format!("{}[workload.arrival]\nprocess = \"poisson\"\nrate_per_s = {rate}\n{metrics}", base("raid5", 4, ""))
    };
    // Where the configuration alone tells how long the run is (requests at a given rate), it
    // is refused before the run starts.
    let e = run_error(&poisson("1e-300", ""));
    assert!(e.starts_with("workload.requests: a run of 9.999999999999999e300 s fills"), "{e}");
    let e = run_error(&poisson("1e-5", "[metrics]\nwindow_s = 0.001\n"));
    assert!(e.starts_with("workload.requests: a run of 999999.9999999999 s fills 1000000000 windows of metrics.window_s"), "{e}");
    let closed = "[workload.arrival]\nprocess = \"closed\"\noutstanding = 1\nthink_ms = 1e12\n";
    let e = run_error(&format!("{}{closed}", base("raid5", 4, "")));
    assert!(e.starts_with("metrics.window_s: the run reached"), "{e}");

    // A trace whose second request comes 10^10 s (three centuries) after the first.
    let path = std::env::temp_dir().join(format!("raidlab-far-future-{}.spc", std::process::id()));
    std::fs::write(&path, "0,1,512,r,0\n0,1,512,r,10000000000\n").unwrap();
    let text = format!(
        "[array]\ndrives = 4\n[workload.trace]\npath = \"{}\"\nformat = \"spc\"\n",
        path.display()
    );
    let e = run_error(&text);
    // A run that ends before it never reaches the record.
    let short = api::run_toml(&text.replace("[workload.trace]", "[workload]\nduration_s = 10\n[workload.trace]"), Path::new("."), None);
    std::fs::remove_file(&path).unwrap();
    // The error names the record and the first one, either of which may be the odd timestamp.
    let expected = format!(
        "{}:2: this record arrives 10000000000 s (about 317 years) after the first record replayed (line 1), beyond the",
        path.display()
    );
    assert!(e.starts_with(&expected), "{e}");
    assert_eq!(short.unwrap_or_else(|e| panic!("{e}")).summary["requests_completed"], 1);
}

#[test]
fn a_raid1_write_to_65536_copies_runs() {
    // One op per copy: 65,536 ops in one plan were once an invariant error.
    let text = "[array]\nlayout = \"raid1\"\ndrives = 65536\ncopies = 65536\n[workload]\nrequests = 3\nread_fraction = 0\n";
    let out = api::run_toml(text, Path::new("."), None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.summary["requests_completed"], 3);
}

#[test]
fn the_content_model_refuses_a_stripe_piece_too_large_to_follow() {
    // One 16 GiB read (2^25 sectors) on a 1.6·10⁹-sector drive: without the check it runs; with
    // it, the values it would keep (256 MiB) are refused with the key, not allocated.
    let text = |check: bool| {
        format!(
            "[array]\nlayout = \"raid0\"\ndrives = 1\nstripe_unit_kib = 33554432\n[drive.model]\nrpm = 7200\nsurfaces = 16\n\
             zones = [{{ cylinders = 100000, sectors_per_track = 1000 }}]\nseek = {{ kind = \"formula\", a_ms = 1, b_ms = 0, c_ms = 0 }}\n\
             [workload]\nrequests = 1\nsize_kib = 16777216\n[content]\ncheck = {check}\n"
        )
    };
    let out = api::run_toml(&text(false), Path::new("."), None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.summary["requests_completed"], 1);
    let e = run_error(&text(true));
    assert!(e.starts_with("content.check: a request moves "), "{e}");
    assert!(e.contains("sectors in one stripe; the content model follows at most 16777216 (8 GiB)"), "{e}");
}

/// Settings that were accepted and ignored, or refused blaming the wrong key (issue of the
/// failure sequences): each is refused naming its own key, or now works as documented.
#[test]
fn rebuild_settings_of_the_other_executor_and_a_rate_too_slow_name_their_own_key() {
    let base = "[array]\nlayout = \"raid5\"\ndrives = 5\nspares = 1\n[drive]\npreset = \"ibm0661\"\ncapacity_sectors = 40000\n\
                [workload]\nduration_s = 5\n[[failures]]\ndrive = 1\nat_s = 1\n[rebuild]\n";
    let refused = |rebuild: &str| {
        let text = format!("{base}{rebuild}\n");
        match raidlab_core::api::run_toml(&text, std::path::Path::new("."), None) {
            Ok(_) => panic!("accepted: {rebuild}"),
            Err(e) => e.to_string(),
        }
    };
    let e = refused("executor = \"dor\"\nparallel_units = 4");
    assert!(e.starts_with("rebuild.parallel_units:"), "{e}");
    let e = refused("executor = \"sor\"\nbuffer = \"shared\"");
    assert!(e.starts_with("rebuild.buffer:"), "{e}");
    let e = refused("discipline = \"rate\"\nrate_mb_s = 1e-9");
    assert!(e.starts_with("rebuild.rate_mb_s:") && e.contains("raise the rate"), "{e}");
    let e = refused("unit = 7");
    assert!(e.contains("expected a table") && e.contains("tracks = 1") && !e.contains("RebuildUnitConfig"), "{e}");
    // A `[drive]` table with only `capacity_sectors` is the default drive's.
    let text = base.replace("preset = \"ibm0661\"\n", "");
    let out = raidlab_core::api::run_toml(&text, std::path::Path::new("."), None).unwrap();
    assert_eq!(out.summary["rebuilds"][0]["outcome"], "complete");
    // One spare is "1 spare".
    let text = "[array]\nlayout = \"raid5\"\ndrives = 5\nspares = 1\n[workload]\nduration_s = 1\n";
    let e = raidlab_core::api::run_toml(text, std::path::Path::new("."), None).unwrap_err().to_string();
    assert!(e.contains("1 spare is never used"), "{e}");
}
