use std::path::Path;

use raidlab_core::api::{self, RunOutput};
use raidlab_core::engine::Simulation;
use raidlab_core::Config;

/// `[workload]` lines of the content tests' requests: half reads, 0.5–24 KiB at any sector
/// (so they cross units and stripes), 60 % of them to 5 % of the space (so they revisit
/// data while it is being rebuilt).
pub const MIXED_HOT_REQUESTS: &str = "read_fraction = 0.5\nalign_kib = 0.5\n\
     size = { distribution = \"uniform\", min_kib = 0.5, max_kib = 24, step_kib = 0.5 }\n\
     address = { distribution = \"hot_cold\", hot_request_fraction = 0.6, hot_space_fraction = 0.05 }";

/// A small, fast drive (6,400 sectors) so random workloads collide on stripes often.
pub const SMALL_DRIVE: &str = r#"
[drive.model]
rpm = 10000
surfaces = 2
zones = [{ cylinders = 30, sectors_per_track = 64 }, { cylinders = 20, sectors_per_track = 48 }]
seek = { kind = "formula", a_ms = 0.5, b_ms = 0.01, c_ms = 0.1 }
head_switch_ms = 0.2
command_overhead_ms = 0.1
"#;

/// The `[drive]` tables of a zero-latency drive of 1,600 tracks (400 cylinders, 4 surfaces,
/// 96 sectors a track: 75 MiB) at `rpm`: small enough for a test, large enough for a rebuild
/// under load to last minutes of simulated time (the Fu and PRO small-array tests).
pub fn rebuild_test_drive(rpm: u32) -> String {
    format!(
        r#"[drive]
zero_latency = true
[drive.model]
rpm = {rpm}
surfaces = 4
zones = [{{ cylinders = 400, sectors_per_track = 96 }}]
seek = {{ kind = "formula", a_ms = 1.0, b_ms = 0.002, c_ms = 0.25 }}
head_switch_ms = 0.3
command_overhead_ms = 0.2"#
    )
}

pub fn long_tests() -> bool {
    std::env::var("RAIDLAB_LONG_TESTS").is_ok_and(|v| v == "1")
}

pub fn config(text: &str) -> Config {
    Config::from_toml(text, Path::new(".")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

pub fn run(text: &str) -> RunOutput {
    api::run_toml(text, Path::new("."), None).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

pub fn simulate(text: &str) -> Simulation {
    let mut sim = Simulation::new(config(text)).unwrap();
    sim.run(None).unwrap();
    sim
}

pub fn get<'a>(v: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    path.split('.').fold(v, |v, k| &v[k])
}

pub fn f(v: &serde_json::Value, path: &str) -> f64 {
    get(v, path).as_f64().unwrap_or_else(|| panic!("{path} is not a number: {v}"))
}

/// Run `text`, check that nothing stale was read or rebuilt, and, with `scrub`, that a scrub
/// at the end finds every unit on a working member exact; the run and its summary.
pub fn run_checked(text: &str, scrub: bool) -> (Simulation, serde_json::Value) {
    let mut sim = Simulation::new(config(text)).unwrap_or_else(|e| panic!("{e}\n{text}"));
    sim.run(None).unwrap();
    let s = api::summary(&sim, "");
    let what = format!("{text}\n{}", s["content"]);
    assert_eq!(f(&s, "content.stale_sectors"), 0.0, "{what}");
    assert_eq!(f(&s, "content.rebuilt_sectors_wrong"), 0.0, "{what}");
    if scrub {
        let (compared, differ) = sim.controller.scrub().expect("the content model is on");
        assert!(compared > 10_000, "{what}: the scrub compared {compared} sectors");
        assert_eq!(differ, 0, "{what}: the scrub found {differ} of {compared} sectors wrong");
    }
    (sim, s)
}

/// A content-checked run of small drives under a closed load of mixed requests racing on few
/// stripes: `array` is the `[array]` table's layout lines (layout, drives, its own keys), with
/// 4 KiB stripe units and `spares` spare drives; each failure is (drive, at_s); a `[rebuild]`
/// table (holding `rebuild`) when there are spares or `rebuild` is given.
pub fn content_scenario(array: &str, seed: u64, requests: u64, spares: u32, failures: &[(u32, f64)], rebuild: &str) -> String {
    let mut text = format!(
        "seed = {seed}\n[array]\n{array}\nstripe_unit_kib = 4\nspares = {spares}\n{SMALL_DRIVE}\n[workload]\n\
         requests = {requests}\n{MIXED_HOT_REQUESTS}\n[workload.arrival]\nprocess = \"closed\"\noutstanding = 16\n\
         [content]\ncheck = true\n"
    );
    for &(drive, at_s) in failures {
        text += &format!("[[failures]]\ndrive = {drive}\nat_s = {at_s}\n");
    }
    if !rebuild.is_empty() || spares > 0 {
        text += &format!("[rebuild]\n{rebuild}\n");
    }
    text
}

/// A column of table `name` of a run's output, as f64.
pub fn table_column(out: &raidlab_core::api::RunOutput, name: &str, column: &str) -> Vec<f64> {
    let table = out.tables.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no table {name}"));
    match &table.columns.iter().find(|c| c.name == column).unwrap_or_else(|| panic!("no column {name}.{column}")).data {
        raidlab_core::api::ColumnData::F64(v) => v.clone(),
        raidlab_core::api::ColumnData::I64(v) => v.iter().map(|&x| x as f64).collect(),
        raidlab_core::api::ColumnData::Str(_) => panic!("{name}.{column} is not a number"),
    }
}
