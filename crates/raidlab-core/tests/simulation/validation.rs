//! Drive validation against real-drive traces (DiskSim's `validate` format), and the
//! per-request response log it needs.

use raidlab_core::api::{ColumnData, Table};
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
