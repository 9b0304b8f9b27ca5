//! A failure with requests in flight: every request still completes exactly once, aborted
//! plans are re-planned, and degraded reads are recorded.

use crate::common::*;

#[test]
fn every_request_completes_once_across_a_failure_under_load() {
    for (layout, drives) in [("raid5", 5), ("raid1", 4), ("raid0", 4)] {
        let text = format!(
            r#"
seed = 3
[array]
layout = "{layout}"
drives = {drives}
stripe_unit_kib = 8
[drive]
preset = "ibm0661"
scheduler = "sstf"
[workload]
requests = 5000
read_fraction = 0.6
size = {{ distribution = "uniform", min_kib = 4, max_kib = 32 }}
[workload.arrival]
process = "closed"
outstanding = 24
[content]
check = true
[[failures]]
drive = 1
at_s = 5.0
"#
        );
        let sim = simulate(&text);
        assert_eq!(sim.recorder.completed, 5000, "{layout}");
        assert_eq!(sim.controller.in_flight(), 0, "{layout}");
        // At 24 outstanding the failed drive had work queued: some plans had to be re-made.
        assert!(sim.controller.stats.replans > 0, "{layout}: no plan was aborted");
        let content = sim.controller.content().unwrap();
        assert_eq!(content.stats.stale_sectors, 0, "{layout}: {:?}", content.first_stale);
        let failed = &sim.drives[1];
        assert_eq!(failed.failed_at, Some(5_000_000_000));
        // The failed drive does nothing after its failure.
        let others_ops: u64 = sim.drives.iter().map(|d| d.operations).sum::<u64>() - failed.operations;
        assert!(others_ops > failed.operations, "{layout}");
    }
}

/// An open loop offered far more than the array serves ends as soon as its backlog passes
/// `metrics.max_backlog_requests`, with an `overloaded` outcome and a warning, instead of
/// growing its queues without bound.
#[test]
fn an_overloaded_run_ends_at_its_backlog_bound_with_an_overloaded_outcome() {
    let text = "seed = 3\n[array]\nlayout = \"raid5\"\ndrives = 5\n[drive]\npreset = \"hc550\"\n\
                [workload]\nduration_s = 60\n[workload.arrival]\nprocess = \"poisson\"\nrate_per_s = 1e12\n\
                [metrics]\nmax_backlog_requests = 5000\n";
    let out = raidlab_core::api::run_toml(text, std::path::Path::new("."), None).unwrap();
    let s = &out.summary;
    assert_eq!(s["overloaded"], true);
    let at = s["overloaded_at_s"].as_f64().unwrap();
    // 5,001 arrivals at 10¹² per second come within a few microseconds.
    assert!(at < 1e-3, "overloaded at {at} s");
    let warnings = s["warnings"].as_array().unwrap();
    assert!(warnings.iter().any(|w| w.as_str().unwrap().starts_with("overloaded: 5001 requests were waiting")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.as_str().unwrap().contains("can serve by raidlab's estimate")), "{warnings:?}");
    let outcomes = out.tables.iter().find(|t| t.name == "outcomes").unwrap();
    let kinds = format!("{:?}", outcomes.columns[1].data);
    assert!(kinds.contains("overloaded"), "{kinds}");
}

/// A run that keeps up gets no load warning; one offered about twice what it serves, too
/// briefly to pass the backlog bound, is warned about its saturated drives and its backlog.
#[test]
fn mild_overload_is_warned_about_and_a_light_load_is_not() {
    let run = |rate: f64| {
        let text = format!(
            "seed = 3\n[array]\nlayout = \"raid5\"\ndrives = 5\n[drive]\npreset = \"hc550\"\n\
             [workload]\nduration_s = 20\n[workload.arrival]\nprocess = \"poisson\"\nrate_per_s = {rate}\n"
        );
        raidlab_core::api::run_toml(&text, std::path::Path::new("."), None).unwrap().summary
    };
    let light = run(50.0);
    assert_eq!(light["overloaded"], false);
    assert!(light["warnings"].as_array().unwrap().is_empty(), "{}", light["warnings"]);
    let heavy = run(2000.0);
    assert_eq!(heavy["overloaded"], false, "20 s at 2000/s stays under the default bound");
    let warnings: Vec<String> = heavy["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect();
    assert!(warnings.iter().any(|w| w.contains("can serve by raidlab's estimate")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("% of its working life")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("still waiting at the last arrival")), "{warnings:?}");
}

/// A rate far beyond any array is echoed, and compared with what the array serves, in a few
/// characters: its ratio ran to 300 digits.
#[test]
fn the_overload_warning_of_an_absurd_rate_stays_short() {
    let text = "seed = 3\n[array]\nlayout = \"raid0\"\ndrives = 2\n[drive]\npreset = \"hc550\"\n\
                [workload]\nrequests = 100\n[workload.arrival]\nprocess = \"poisson\"\nrate_per_s = 1e308\n";
    let summary = raidlab_core::api::run_toml(text, std::path::Path::new("."), None).unwrap().summary;
    let warnings: Vec<&str> = summary["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    let warning = warnings.iter().find(|w| w.contains("can serve by raidlab's estimate")).expect("warned");
    assert!(warning.starts_with("workload.arrival.rate_per_s = 1e308 is about "), "{warning}");
    assert!(warning.len() < 250, "{warning}");
}

/// Requests that lose data (a RAID-5 with two failed drives) stay out of the response
/// statistics: every read counted in the histograms was served, the lost ones are counted
/// apart, and none of them is reported as a degraded read.
#[test]
fn lost_requests_are_counted_apart_from_response_times() {
    let text = "seed = 5\n[array]\nlayout = \"raid5\"\ndrives = 5\n[drive]\npreset = \"hc550\"\n\
                [workload]\nduration_s = 20\nread_fraction = 1.0\n[workload.arrival]\nprocess = \"poisson\"\nrate_per_s = 100\n\
                [[failures]]\ndrive = 1\nat_s = 5\n[[failures]]\ndrive = 3\nat_s = 10\n";
    let out = raidlab_core::api::run_toml(text, std::path::Path::new("."), None).unwrap();
    let s = &out.summary;
    let lost = s["lost_requests"].as_u64().unwrap();
    let completed = s["requests_completed"].as_u64().unwrap();
    let reads = s["response_ms"]["read"]["count"].as_u64().unwrap();
    assert!(lost > 100, "{lost} lost");
    assert_eq!(reads + lost, completed, "a lost read entered the read statistics");
    let degraded = s["response_ms"]["degraded_read"]["count"].as_u64().unwrap();
    // Degraded reads happen only between the two failures (5 s to 10 s): about 2/5 of 500.
    assert!(degraded < 400, "{degraded} degraded reads: lost reads counted among them");
    // Half the reads lost data after the second failure: counted as 0 ms responses, they
    // would pull the median read below a millisecond.
    let median_ms = s["response_ms"]["read"]["p50"].as_f64().unwrap();
    assert!(median_ms > 1.0, "median read {median_ms} ms");
    let timeseries = out.tables.iter().find(|t| t.name == "timeseries").unwrap();
    let lost_column = timeseries.columns.iter().find(|c| c.name == "lost").expect("a lost column per window");
    let per_window: i64 = match &lost_column.data {
        raidlab_core::api::ColumnData::I64(v) => v.iter().sum(),
        other => panic!("{other:?}"),
    };
    assert_eq!(per_window as u64, lost);
}
