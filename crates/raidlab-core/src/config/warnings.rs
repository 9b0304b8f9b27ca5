//! Settings that are valid one by one but make no sense together, found from the
//! configuration alone, before a run starts.
//!
//! Each is either *refused* (an [`Error::Config`] naming the key, from
//! [`Config::validate`]), when no run could mean what it asks for, or *warned about* (a line
//! in `summary.json`'s `warnings`, which `raidlab run` also prints), when the run is
//! well defined but probably not what was meant:
//!
//! | setting | what happens |
//! |---|---|
//! | the same drive slot fails twice | refused: a failed drive cannot fail again |
//! | `metrics.warmup_s` at or past `workload.duration_s` | refused: no request would be measured |
//! | `metrics.warmup_s` at or past the expected end of `requests` Poisson arrivals | warned |
//! | a failure at or after the workload's end | warned: the run goes on, idle, to the failure, which stretches it and dilutes utilization and throughput |
//!
//! Synthetic-only keys beside a trace are refused where the TOML is read
//! ([`Config::from_toml`]), since only the text tells a key given from a default. What only
//! the trace tells (records moved forward in time, addresses folded onto the array) is
//! counted while it is read and warned about after the run
//! ([`crate::workload::trace::TraceCounts`]).

use super::{Config, FailureKind};
use crate::error::{readable, Error, Result};

/// Refuse the combinations no run could mean (the table in the module docs).
pub fn refuse_nonsense(config: &Config) -> Result<()> {
    let mut failed_at: Vec<(u32, usize, f64)> = Vec::new();
    for (i, failure) in config.failures.iter().enumerate() {
        let (FailureKind::DriveFails, Some(drive)) = (failure.kind, failure.drive) else { continue };
        if let Some(&(_, first, at_s)) = failed_at.iter().find(|(d, _, _)| *d == drive) {
            return Err(Error::config(
                format!("failures[{i}].drive"),
                format!(
                    "drive {drive} already fails at {} s (failures[{first}]); a failed drive cannot fail again",
                    readable(at_s)
                ),
            ));
        }
        failed_at.push((drive, i, failure.at_s));
    }
    let warmup_s = config.metrics.warmup_s;
    if let Some(end) = config.planned_workload_end().filter(|end| !end.expected) {
        if warmup_s > 0.0 && warmup_s >= end.seconds {
            return Err(Error::config(
                "metrics.warmup_s",
                format!(
                    "a warm-up of {} s is not shorter than the workload's {} s ({}): no request would be measured",
                    readable(warmup_s),
                    readable(end.seconds),
                    end.key
                ),
            ));
        }
    }
    Ok(())
}

/// Warnings about the configuration, decided before the run (the table in the module docs),
/// each naming its key.
pub fn config_warnings(config: &Config) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some(end) = config.planned_workload_end() else { return warnings };
    let ends = if end.expected {
        format!("is expected to end at about {} s ({} at the arrival rate)", readable(end.seconds), end.key)
    } else {
        format!("ends at {} s ({})", readable(end.seconds), end.key)
    };
    let warmup_s = config.metrics.warmup_s;
    if end.expected && warmup_s > 0.0 && warmup_s >= end.seconds {
        warnings.push(format!(
            "metrics.warmup_s: the warm-up of {} s is not shorter than the workload, which {ends}: few or no requests are measured",
            readable(warmup_s)
        ));
    }
    for (i, failure) in config.failures.iter().enumerate() {
        if failure.at_s < end.seconds {
            continue;
        }
        let what = match (failure.kind, failure.drive) {
            (FailureKind::DriveFails, Some(drive)) => format!("drive {drive} fails"),
            (FailureKind::DriveFails, None) => "a drive fails".to_string(),
            (FailureKind::Crash, _) => "the controller crashes".to_string(),
            (FailureKind::LogFails, _) => "the log drive fails".to_string(),
            (FailureKind::SpareArrives, _) => "a spare arrives".to_string(),
        };
        warnings.push(format!(
            "failures[{i}].at_s: {what} at {} s, after the workload, which {ends}: the run goes on without requests \
             until then, which stretches it and dilutes utilization and throughput",
            readable(failure.at_s)
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const BASE: &str = "[array]\nlayout = \"raid5\"\ndrives = 5\n[workload]\nduration_s = 100\n\
                        [workload.arrival]\nprocess = \"poisson\"\nrate_per_s = 50\n";

    fn parsed(text: &str) -> Result<Config> {
        Config::from_toml(text, Path::new("."))
    }

    #[test]
    fn a_drive_failing_twice_is_refused_naming_the_second_entry() {
        let text = format!("{BASE}[[failures]]\ndrive = 2\nat_s = 10\n[[failures]]\ndrive = 1\nat_s = 20\n[[failures]]\ndrive = 2\nat_s = 30\n");
        let err = parsed(&text).unwrap_err().to_string();
        assert_eq!(err, "failures[2].drive: drive 2 already fails at 10 s (failures[0]); a failed drive cannot fail again");
        // Two different drives are a double failure, which is what a user may mean.
        parsed(&format!("{BASE}[[failures]]\ndrive = 2\nat_s = 10\n[[failures]]\ndrive = 1\nat_s = 20\n")).unwrap();
    }

    #[test]
    fn a_warm_up_as_long_as_the_run_is_refused() {
        let err = parsed(&format!("{BASE}[metrics]\nwarmup_s = 100\n")).unwrap_err().to_string();
        assert!(err.starts_with("metrics.warmup_s: a warm-up of 100 s is not shorter than the workload's 100 s (workload.duration_s)"), "{err}");
        parsed(&format!("{BASE}[metrics]\nwarmup_s = 99\n")).unwrap();
        // By requests at a rate the end is an expectation: warned about, not refused.
        let by_requests = BASE.replace("duration_s = 100", "requests = 1000");
        let config = parsed(&format!("{by_requests}[metrics]\nwarmup_s = 25\n")).unwrap();
        let warnings = config_warnings(&config);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("metrics.warmup_s: the warm-up of 25 s is not shorter than the workload, which is expected to end at about 20 s"), "{warnings:?}");
    }

    #[test]
    fn a_failure_after_the_workload_is_warned_about() {
        let config = parsed(&format!("{BASE}[[failures]]\ndrive = 2\nat_s = 500\n")).unwrap();
        let warnings = config_warnings(&config);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("failures[0].at_s: drive 2 fails at 500 s, after the workload, which ends at 100 s (workload.duration_s)"), "{warnings:?}");
        // Each kind of entry is named for what it is.
        let log = parsed(&format!("{BASE}[log]\nscheme = \"swo\"\n[[failures]]\nkind = \"log_fails\"\nat_s = 500\n")).unwrap();
        assert!(config_warnings(&log)[0].starts_with("failures[0].at_s: the log drive fails at 500 s"), "{:?}", config_warnings(&log));
        // During the workload, nothing to say.
        assert!(config_warnings(&parsed(&format!("{BASE}[[failures]]\ndrive = 2\nat_s = 50\n")).unwrap()).is_empty());
        // A trace's end is not known before it is read: no warning from the configuration.
        let trace = "[array]\ndrives = 5\n[workload.trace]\npath = \"t.csv\"\nformat = \"spc\"\n[[failures]]\ndrive = 2\nat_s = 1e6\n";
        assert!(config_warnings(&parsed(trace).unwrap()).is_empty());
    }
}
