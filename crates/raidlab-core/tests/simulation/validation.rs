//! Drive validation against real-drive traces (DiskSim's `validate` format), and the
//! per-request response log it needs.

use std::path::Path;

use raidlab_core::api::{self, ColumnData, Table};
use raidlab_core::workload::trace::read_validate_trace;

use crate::common::*;

/// DiskSim's validation trace of the IBM Ultrastar 18ES (10,000 requests).
pub const IBM18ES_TRACE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/diskspecs/ibm18es.trace");

fn table<'a>(tables: &'a [Table], name: &str) -> Option<&'a Table> {
    tables.iter().find(|t| t.name == name)
}

fn ints(table: &Table, column: &str) -> Vec<i64> {
    match &table.columns.iter().find(|c| c.name == column).unwrap().data {
        ColumnData::I64(values) => values.clone(),
        other => panic!("{column} is not an integer column: {other:?}"),
    }
}

/// One ibm0661 drive replaying the first `requests` lines of the ibm18es trace with
/// `arrival`, responses recorded.
fn one_drive_replay(arrival: &str, requests: u64) -> String {
    format!(
        r#"
[array]
layout = "raid0"
drives = 1
[drive]
preset = "ibm0661"
[workload]
trace = {{ path = "{IBM18ES_TRACE}", format = "validate" }}
requests = {requests}
arrival = {arrival}
[metrics]
record_responses = true
"#
    )
}

#[test]
fn responses_table_holds_every_request_in_order_of_arrival_only_when_asked() {
    let text = one_drive_replay(r#"{ process = "trace" }"#, 2_000);
    let output = run(&text);
    let responses = table(&output.tables, "responses").expect("a responses table");
    let arrivals = ints(responses, "arrival_ns");
    let response = ints(responses, "response_ns");
    assert_eq!(arrivals.len(), 2_000);
    assert!(arrivals.windows(2).all(|pair| pair[0] <= pair[1]));
    assert!(response.iter().all(|&r| r > 0));
    // Writes as the trace says (R/W of the first 2,000 lines).
    let trace = read_validate_trace(std::path::Path::new(IBM18ES_TRACE)).unwrap();
    let writes: Vec<i64> = trace[..2_000].iter().map(|r| r.is_write as i64).collect();
    assert_eq!(ints(responses, "is_write"), writes);
    // The histogram's mean is the mean of the log.
    let mean_ms = response.iter().sum::<i64>() as f64 / 2_000.0 / 1e6;
    assert!((mean_ms - f(&output.summary, "response_ms.all.mean")).abs() < 1e-9 * mean_ms.max(1.0));

    let without = run(&text.replace("record_responses = true", ""));
    assert!(table(&without.tables, "responses").is_none());
    assert!(!without.resolved_config.contains("record_responses"));
}

/// The closed loop with think times from the trace: request k+1 arrives exactly the trace's
/// gap after request k completes (DiskSim's replay of a validate trace).
#[test]
fn think_from_trace_issues_each_request_its_gap_after_the_previous_completes() {
    let closed = r#"{ process = "closed", outstanding = 1, think_from_trace = true }"#;
    let output = run(&one_drive_replay(closed, 3_000));
    let responses = table(&output.tables, "responses").unwrap();
    let (arrivals, response) = (ints(responses, "arrival_ns"), ints(responses, "response_ns"));
    let trace = read_validate_trace(std::path::Path::new(IBM18ES_TRACE)).unwrap();
    assert_eq!(arrivals.len(), 3_000);
    assert_eq!(arrivals[0], 0);
    for k in 0..2_999 {
        let gap = trace[k].next_interarrival_ns as i64;
        assert_eq!(arrivals[k + 1], arrivals[k] + response[k] + gap, "request {k}");
    }
    // Nothing is scheduled after the last completion.
    let last_completion = (arrivals[2_999] + response[2_999]) as f64 / 1e9;
    assert_eq!(f(&output.summary, "simulated_seconds"), last_completion);
}

#[test]
fn think_from_trace_needs_a_trace_and_one_request_outstanding() {
    let key = |text: &str| match raidlab_core::engine::Simulation::new(config(text)) {
        Err(raidlab_core::Error::Config { key, message }) => format!("{key}: {message}"),
        Err(other) => panic!("expected a config error, got {other}"),
        Ok(_) => panic!("accepted:\n{text}"),
    };
    let e = key(&one_drive_replay(r#"{ process = "closed", outstanding = 2, think_from_trace = true }"#, 10));
    assert!(e.starts_with("workload.arrival.think_from_trace: "), "{e}");
    assert!(e.contains("outstanding = 1"), "{e}");
    let e = key(&one_drive_replay(
        r#"{ process = "closed", outstanding = 1, think_ms = 2, think_from_trace = true }"#,
        10,
    ));
    assert!(e.contains("think_ms = 0"), "{e}");
    let synthetic = "[array]\nlayout = \"raid0\"\ndrives = 1\n[workload]\nrequests = 5\n\
                     arrival = { process = \"closed\", outstanding = 1, think_from_trace = true }\n";
    assert!(key(synthetic).contains("need a `workload.trace`"));
}

fn floats(table: &Table, column: &str) -> Vec<f64> {
    match &table.columns.iter().find(|c| c.name == column).unwrap().data {
        ColumnData::F64(values) => values.clone(),
        other => panic!("{column} is not a float column: {other:?}"),
    }
}

/// The wrong drive for the trace (the trace's addresses are folded onto it), but every part
/// of the validation runs: structure, pairing of requests and the figures' definitions.
#[test]
fn validate_replays_the_trace_on_one_drive_and_compares_every_request() {
    let output = api::validate_toml("preset = \"ibm0661\"", Path::new(IBM18ES_TRACE), Path::new(".")).unwrap();
    let summary = &output.summary;
    let trace = read_validate_trace(Path::new(IBM18ES_TRACE)).unwrap();
    assert_eq!(f(summary, "requests"), 10_000.0);
    assert_eq!((f(summary, "reads"), f(summary, "writes")), (6_582.0, 3_418.0));
    assert!((f(summary, "measured_mean_ms") - 5.2605174).abs() < 1e-9);
    assert!(f(summary, "beyond_capacity") > 0.0, "ibm0661 is far smaller than the 18ES");
    assert_eq!(get(summary, "replay").as_str(), Some(api::VALIDATION_REPLAY));

    // Requests are paired with trace lines in order.
    let requests = table(&output.tables, "requests").unwrap();
    assert_eq!(ints(requests, "line"), (1..=10_000).collect::<Vec<i64>>());
    let measured = floats(requests, "measured_ms");
    let simulated = floats(requests, "simulated_ms");
    assert_eq!(measured[0], 13.661);
    assert_eq!(measured, trace.iter().map(|r| r.measured_ns as f64 / 1e6).collect::<Vec<_>>());
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    assert!((mean(&simulated) - f(summary, "simulated_mean_ms")).abs() < 1e-9);

    // The demerit is the exact one of the two samples, in ms and in % of the measured mean.
    let demerit = raidlab_core::metrics::demerit::Demerit::of(&measured, &simulated).unwrap();
    assert_eq!(f(summary, "demerit_ms"), demerit.rms_distance);
    let percent = 100.0 * f(summary, "demerit_ms") / f(summary, "measured_mean_ms");
    assert!((f(summary, "demerit_percent") - percent).abs() < 1e-9);
    assert_eq!(f(summary, "read.requests") + f(summary, "write.requests"), 10_000.0);

    // The CDF tables are the corners of the two empirical CDFs.
    for (name, sample) in [("measured_cdf", &measured), ("simulated_cdf", &simulated)] {
        let cdf = table(&output.tables, name).unwrap();
        let (x, p) = (floats(cdf, "response_ms"), floats(cdf, "fraction"));
        assert!(x.windows(2).all(|w| w[0] < w[1]) && p.windows(2).all(|w| w[0] < w[1]), "{name}");
        assert_eq!(*p.last().unwrap(), 1.0);
        let below_first = sample.iter().filter(|&&v| v <= x[0]).count() as f64 / 1e4;
        assert_eq!(p[0], below_first);
    }

    // Deterministic, and the drive may come inside a configuration document.
    let again = api::validate_toml("seed = 1\n[drive]\npreset = \"ibm0661\"\n", Path::new(IBM18ES_TRACE), Path::new("."))
        .unwrap();
    assert_eq!(again.summary, output.summary);
    assert_eq!(again.tables, output.tables);
}

#[test]
fn validate_runs_one_disk_operation_per_request_over_the_whole_drive() {
    let config = api::validation_config("preset = \"ibm0661\"", Path::new(IBM18ES_TRACE), Path::new(".")).unwrap();
    let mut sim = raidlab_core::engine::Simulation::new(config).unwrap();
    sim.run(None).unwrap();
    assert_eq!(sim.drives[0].operations, 10_000);
    assert_eq!(sim.controller.capacity_sectors(), 949 * 14 * 48);
}

#[test]
fn validate_errors_name_the_key_or_the_line() {
    let run = |drive: &str, trace: &Path| api::validate_toml(drive, trace, Path::new(".")).unwrap_err();
    match run("preset = \"ibm9999\"", Path::new(IBM18ES_TRACE)) {
        raidlab_core::Error::Config { key, .. } => assert_eq!(key, "drive.preset"),
        other => panic!("{other}"),
    }
    match run("[drive]\nspeed = 3\n", Path::new(IBM18ES_TRACE)) {
        // Only what is wrong: the line of the generated configuration would mislead.
        raidlab_core::Error::Config { key, message } => {
            assert_eq!(key, "drive.speed");
            assert!(message.starts_with("unknown field `speed`, expected one of"), "{message}");
        }
        other => panic!("{other}"),
    }
    assert!(matches!(run("preset = ", Path::new(IBM18ES_TRACE)), raidlab_core::Error::Config { .. }));
    assert!(matches!(
        run("preset = \"ibm0661\"", Path::new("/nonexistent/x.trace")),
        raidlab_core::Error::Io { .. }
    ));
    let dir = std::env::temp_dir().join(format!("raidlab-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.trace");
    std::fs::write(&bad, "R Hit 1 4 100.0 5\nR Hit 2 4 100.0 5\nR Hit 3 4\n").unwrap();
    let error = run("preset = \"ibm0661\"", &bad);
    assert!(error.to_string().starts_with(&format!("{}:3: expected 6 fields", bad.display())), "{error}");
    let empty = dir.join("empty.trace");
    std::fs::write(&empty, "\n").unwrap();
    assert!(run("preset = \"ibm0661\"", &empty).to_string().contains("holds no requests"));
    std::fs::remove_dir_all(&dir).unwrap();
}
