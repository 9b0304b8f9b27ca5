//! Metrics: response-time histograms, time series in windows, per-drive accounting and
//! outcome records.

pub mod demerit;
pub mod histogram;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use histogram::Histogram;

use crate::error::{Error, Result};
use crate::sim::{ns_to_s, Nanos};

/// Most time-series windows a run may fill (2^24, 1 GiB of counters): the series is dense, so
/// a run spanning centuries in 1 s windows would otherwise exhaust memory and abort.
pub const MAX_WINDOWS: u64 = 1 << 24;

/// What to measure.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// Width of a time-series window, seconds (at least 0.001). A run may fill at most 2²⁴
    /// windows (16.7 million: 4.7 hours of simulated time in 1 ms windows, 194 days in 1 s
    /// ones); a run reaching further stops with an error naming this key.
    #[serde(default = "one")]
    pub window_s: f64,
    /// Requests arriving before this time (s) are left out of the response-time statistics
    /// (they still load the array).
    #[serde(default)]
    pub warmup_s: f64,
    /// Record every request's arrival, response time and kind (the `responses` table, in
    /// order of arrival; warm-up requests left out). Costs 24 bytes per request; off by
    /// default.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    pub record_responses: bool,
    /// Record each drive's rebuild operations per time-series window (the
    /// `rebuild_progress` table: how far each survivor has read, over time). Off by default.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    pub record_rebuild_progress: bool,
    /// The most user requests that may wait in the array at once. A run whose backlog
    /// passes it is offered more than the array can serve: it ends there with the outcome
    /// `overloaded` (and a warning), in bounded memory (a request in flight takes a few
    /// hundred bytes).
    // Left out of the resolved configuration at its default, so that configurations
    // written before it keep their hash.
    #[serde(default = "default_max_backlog", skip_serializing_if = "is_default_max_backlog")]
    #[schemars(extend("default" = 100_000, "minimum" = 1))]
    pub max_backlog_requests: u64,
}

fn default_max_backlog() -> u64 {
    100_000
}
fn is_default_max_backlog(n: &u64) -> bool {
    *n == default_max_backlog()
}

fn one() -> f64 {
    1.0
}
fn is_false(flag: &bool) -> bool {
    !*flag
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig { window_s: 1.0, warmup_s: 0.0, record_responses: false, record_rebuild_progress: false, max_backlog_requests: default_max_backlog() }
    }
}

/// Counters of one time-series window.
#[derive(Debug, Clone, Copy, Default)]
pub struct Window {
    pub arrivals: u64,
    /// Requests answered with their data (lost requests are counted apart, in `lost`).
    pub completions: u64,
    /// Requests answered with data loss (a sector could not be read or stored): no
    /// response time of theirs enters any statistic.
    pub lost: u64,
    pub response_sum_ns: u128,
    pub read_completions: u64,
    pub read_response_sum_ns: u128,
}

/// A notable event of the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Simulated time, ns.
    pub time: Nanos,
    /// `drive_failed` or `data_loss`.
    pub kind: &'static str,
    /// Drive concerned (-1 if none).
    pub drive: i64,
    /// Human-readable detail.
    pub detail: String,
}

/// Response-time classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    All = 0,
    Read = 1,
    Write = 2,
    /// Reads that touched a unit on a failed drive.
    DegradedRead = 3,
    /// Reads of data in a failed member's set (its mirror pair, its interleaved cluster, its
    /// parity group): the thesis's reads "that map to the set with a failed disk" (seed 004
    /// §3.3, Figs. 10–11).
    FailedSetRead = 4,
}

/// The array's mode over a run: a request belongs to the period it arrived in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    /// Every member working.
    Normal = 0,
    /// A member failed, nothing rebuilding it.
    Degraded = 1,
    /// A member being rebuilt onto a spare.
    Rebuilding = 2,
    /// After the last rebuild ended, every member working again.
    After = 3,
    /// After the failures lost data: some of it has no surviving copy or parity group, for
    /// the rest of the run.
    DataLoss = 4,
    /// Every member working, one being copied out of a distributed spare onto a spare drive
    /// (`rebuild.healing`).
    Healing = 5,
}

/// Periods there are.
pub const PERIODS: usize = 6;

/// Names of the periods in results, in `Period` order.
pub const PERIOD_NAMES: [&str; PERIODS] = ["normal", "degraded", "rebuilding", "after", "data_loss", "healing"];

/// Names of the classes in result tables, in `Class` order.
pub const CLASS_NAMES: [&str; 5] = ["all", "read", "write", "degraded_read", "failed_set_read"];

/// Everything recorded about user requests.
#[derive(Debug)]
pub struct Recorder {
    window_ns: Nanos,
    /// The window of the last time recorded, `[start, end)` ns, and its index: times come
    /// in order, so nearly every one falls in it and needs no division.
    current_window: (Nanos, Nanos, usize),
    /// The most windows the series may hold ([`MAX_WINDOWS`]; smaller in tests).
    max_windows: u64,
    warmup_ns: Nanos,
    /// Response-time histograms by `Class`; the `All` entry stays empty (see
    /// [`Recorder::histograms`]).
    histograms: [Histogram; CLASS_NAMES.len()],
    /// Time-series windows.
    pub windows: Vec<Window>,
    /// Outcome records in time order.
    pub outcomes: Vec<Outcome>,
    /// Requests that lost data (a sector could not be read or stored).
    pub lost_requests: u64,
    /// Requests completed (including warm-up).
    pub completed: u64,
    /// Every response after warm-up, in completion order, when `metrics.record_responses`
    /// is on (see [`Recorder::responses_by_arrival`]).
    responses: Option<Vec<ResponseRecord>>,
    /// Where each period began, in time order; empty while the run is all normal (and then
    /// nothing is recorded per period: `period_histograms` cover normal mode).
    period_starts: Vec<(Nanos, Period)>,
    /// Response times after warm-up by the period each request arrived in.
    period_histograms: [Histogram; PERIODS],
}

/// One completed request, as `metrics.record_responses` records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseRecord {
    /// Arrival time, ns.
    pub arrival: Nanos,
    /// Completion minus arrival, ns.
    pub response: Nanos,
    /// Write (true) or read (false).
    pub is_write: bool,
    /// Some piece touched a unit on a failed drive, and the request was served.
    pub degraded: bool,
    /// The request lost data; its `response` is when the loss was reported, not a service
    /// time.
    pub lost: bool,
}

impl Recorder {
    /// A recorder with windows of `window_ns` (> 0).
    pub fn new(window_ns: Nanos, warmup_ns: Nanos) -> Self {
        Recorder {
            window_ns: window_ns.max(1),
            current_window: (0, 0, 0),
            max_windows: MAX_WINDOWS,
            warmup_ns,
            histograms: Default::default(),
            windows: Vec::new(),
            outcomes: Vec::new(),
            lost_requests: 0,
            completed: 0,
            responses: None,
            period_starts: Vec::new(),
            period_histograms: Default::default(),
        }
    }

    /// Record every response (`metrics.record_responses`).
    pub fn recording_responses(mut self, on: bool) -> Self {
        self.responses = on.then(Vec::new);
        self
    }

    /// The recorded responses in order of arrival (ties in completion order); `None` unless
    /// recording is on.
    pub fn responses_by_arrival(&self) -> Option<Vec<ResponseRecord>> {
        let mut responses = self.responses.clone()?;
        responses.sort_by_key(|r| r.arrival);
        Some(responses)
    }

    /// Window width, ns.
    pub fn window_ns(&self) -> Nanos {
        self.window_ns
    }

    /// The window of time `t`; an error once the series would need more than
    /// `max_windows` windows (memory grows with the simulated time, not with the requests).
    /// Asked twice per request, almost always for the current window: that check is inlined
    /// and the move to another window kept apart.
    #[inline(always)]
    fn window(&mut self, t: Nanos) -> Result<&mut Window> {
        let (start, end, index) = self.current_window;
        if start <= t && t < end {
            return Ok(&mut self.windows[index]);
        }
        self.move_window(t)
    }

    /// The window of time `t`, made the current one (see [`Recorder::window`]).
    #[inline(never)]
    fn move_window(&mut self, t: Nanos) -> Result<&mut Window> {
        let i = t / self.window_ns;
        if i >= self.windows.len() as u64 {
            if i >= self.max_windows {
                return Err(Error::config(
                    "metrics.window_s",
                    format!(
                        "the run reached {} s of simulated time, more than {} windows of {} s; \
                         make the windows wider, or check the arrival rate, think times and trace timestamps",
                        ns_to_s(t),
                        self.max_windows,
                        ns_to_s(self.window_ns)
                    ),
                ));
            }
            self.windows.resize(i as usize + 1, Window::default());
        }
        let start = i * self.window_ns;
        self.current_window = (start, start.saturating_add(self.window_ns), i as usize);
        Ok(&mut self.windows[i as usize])
    }

    /// Response-time histograms by `Class`. `All` is the union of reads and writes, put
    /// together here instead of recorded with every completion.
    pub fn histograms(&self) -> [Histogram; CLASS_NAMES.len()] {
        let mut histograms = self.histograms.clone();
        let [all, read, write, ..] = &mut histograms;
        all.merge(read);
        all.merge(write);
        histograms
    }

    /// The array enters period `period` at `t` (times in order).
    pub fn enter_period(&mut self, t: Nanos, period: Period) {
        if self.period_starts.is_empty() {
            if period == Period::Normal {
                return;
            }
            // Every request recorded so far arrived in normal mode.
            self.period_histograms[Period::Normal as usize] = self.histograms()[Class::All as usize].clone();
            self.period_starts.push((0, Period::Normal));
        }
        if self.period_starts.last().map(|p| p.1) != Some(period) {
            self.period_starts.push((t, period));
        }
    }

    /// Where each period began (empty for a run that stayed normal).
    pub fn period_starts(&self) -> &[(Nanos, Period)] {
        &self.period_starts
    }

    /// Response-time histograms by period; for a run that stayed normal, the `Normal` entry
    /// is every request's.
    pub fn period_histograms(&self) -> [Histogram; PERIODS] {
        if self.period_starts.is_empty() {
            let mut h: [Histogram; PERIODS] = Default::default();
            h[0] = self.histograms()[Class::All as usize].clone();
            return h;
        }
        self.period_histograms.clone()
    }

    /// The period a request arriving at `arrival` belongs to.
    #[cold]
    fn record_period(&mut self, arrival: Nanos, response: Nanos) {
        let period = self.period_starts.iter().rev().find(|p| p.0 <= arrival).map_or(Period::Normal, |p| p.1);
        self.period_histograms[period as usize].record(response);
    }

    /// Make the series reach time `t` (empty windows up to it).
    pub fn extend_to(&mut self, t: Nanos) -> Result<()> {
        self.window(t).map(|_| ())
    }

    /// A request arrived at `t`.
    #[inline]
    pub fn arrival(&mut self, t: Nanos) -> Result<()> {
        self.window(t)?.arrivals += 1;
        Ok(())
    }

    /// A request that arrived at `arrival` completed at `now`. (Always inlined: the
    /// engine's completion loop is where it runs, once per request.)
    #[inline(always)]
    pub fn completion(
        &mut self,
        now: Nanos,
        arrival: Nanos,
        is_write: bool,
        degraded: bool,
        in_failed_set: bool,
        lost: bool,
    ) -> Result<()> {
        let response = now - arrival;
        self.completed += 1;
        if lost {
            // No response time of a request that lost data is a service time: kept out of
            // every statistic, counted on its own, and flagged in the responses table.
            self.lost_requests += 1;
            self.window(now)?.lost += 1;
            if arrival >= self.warmup_ns {
                if let Some(responses) = &mut self.responses {
                    responses.push(ResponseRecord { arrival, response, is_write, degraded: false, lost: true });
                }
            }
            return Ok(());
        }
        let w = self.window(now)?;
        w.completions += 1;
        w.response_sum_ns += response as u128;
        if !is_write {
            w.read_completions += 1;
            w.read_response_sum_ns += response as u128;
        }
        if arrival < self.warmup_ns {
            return Ok(());
        }
        if let Some(responses) = &mut self.responses {
            responses.push(ResponseRecord { arrival, response, is_write, degraded, lost: false });
        }
        if !self.period_starts.is_empty() {
            self.record_period(arrival, response);
        }
        if is_write {
            self.histograms[Class::Write as usize].record(response);
        } else {
            self.histograms[Class::Read as usize].record(response);
            if degraded {
                self.histograms[Class::DegradedRead as usize].record(response);
            }
            if in_failed_set {
                self.histograms[Class::FailedSetRead as usize].record(response);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_recorded_only_when_asked_in_order_of_arrival_after_warm_up() {
        let mut off = Recorder::new(1_000, 0);
        off.completion(50, 10, false, false, false, false).unwrap();
        assert_eq!(off.responses_by_arrival(), None);

        let mut on = Recorder::new(1_000, 20).recording_responses(true);
        assert_eq!(on.responses_by_arrival(), Some(vec![]));
        on.completion(50, 10, false, false, false, false).unwrap(); // arrived in the warm-up: left out
        on.completion(90, 40, true, false, false, false).unwrap();
        on.completion(95, 30, false, true, true, false).unwrap(); // completes later, arrived earlier
        on.completion(99, 40, false, false, false, false).unwrap(); // same arrival: completion order
        assert_eq!(
            on.responses_by_arrival().unwrap(),
            [
                ResponseRecord { arrival: 30, response: 65, is_write: false, degraded: true, lost: false },
                ResponseRecord { arrival: 40, response: 50, is_write: true, degraded: false, lost: false },
                ResponseRecord { arrival: 40, response: 59, is_write: false, degraded: false, lost: false },
            ]
        );
        assert_eq!(on.histograms()[Class::All as usize].count(), 3);
    }

    /// A request that lost data enters no response statistic (histograms, window means,
    /// periods) and is counted on its own, per run and per window, and flagged in the
    /// responses table.
    #[test]
    fn lost_requests_stay_out_of_every_response_statistic() {
        let mut rec = Recorder::new(1_000, 0).recording_responses(true);
        rec.completion(500, 100, false, true, true, false).unwrap(); // a degraded read, served
        rec.completion(600, 590, false, true, true, true).unwrap(); // a read of lost data: 10 ns
        rec.completion(1_700, 1_600, true, false, false, true).unwrap(); // a write that lost data
        assert_eq!(rec.lost_requests, 2);
        assert_eq!(rec.completed, 3);
        let h = rec.histograms();
        assert_eq!(h[Class::Read as usize].count(), 1);
        assert_eq!(h[Class::DegradedRead as usize].count(), 1, "a lost read counted as a degraded read");
        assert_eq!(h[Class::Write as usize].count(), 0);
        assert_eq!(rec.windows[0].completions, 1);
        assert_eq!(rec.windows[0].response_sum_ns, 400, "the lost read's 10 ns entered the window's mean");
        assert_eq!((rec.windows[0].lost, rec.windows[1].lost), (1, 1));
        let flags: Vec<_> = rec.responses_by_arrival().unwrap().iter().map(|r| (r.degraded, r.lost)).collect();
        assert_eq!(flags, vec![(true, false), (false, true), (false, true)]);
    }

    /// Every time lands in window ⌊t / width⌋, whether it falls in the window of the time
    /// before (no division) or not, in order or not, and on a window's edges.
    #[test]
    fn every_time_is_counted_in_its_window() {
        let width = 1_000;
        let mut times: Vec<Nanos> = vec![0, 999, 1_000, 1_001, 5_999, 6_000, 2_500, 0, 7_000, 6_999];
        let mut rng = crate::sim::RngStream::new(3, crate::sim::StreamId::Policy(0));
        let mut t = 0;
        for _ in 0..2_000 {
            t += rng.below(400);
            times.push(t);
        }
        times.extend((0..200).map(|_| rng.below(t)));
        let mut recorder = Recorder::new(width, 0);
        for &t in &times {
            recorder.arrival(t).unwrap();
        }
        let mut expected = vec![0u64; (t / width + 1) as usize];
        for &t in &times {
            expected[(t / width) as usize] += 1;
        }
        let counted: Vec<u64> = recorder.windows.iter().map(|w| w.arrivals).collect();
        assert_eq!(counted, expected);
    }

    #[test]
    fn a_run_longer_than_the_window_limit_is_an_error_naming_window_s() {
        // The limit at its real size would take a gigabyte of windows: a small one checks
        // the same arithmetic.
        let mut rec = Recorder { max_windows: 16, ..Recorder::new(1_000, 0) };
        rec.arrival(16 * 1_000 - 1).unwrap();
        assert_eq!(rec.windows.len(), 16);
        let e = rec.arrival(16 * 1_000).unwrap_err().to_string();
        assert!(e.starts_with("metrics.window_s: the run reached 0.000016 s of simulated time, more than 16 windows"), "{e}");
        let e = rec.completion(u64::MAX, 0, false, false, false, false).unwrap_err().to_string();
        assert!(e.starts_with("metrics.window_s:"), "{e}");
        assert_eq!(rec.windows.len(), 16);
        // A time in a window already held is still counted.
        rec.arrival(5).unwrap();
        assert_eq!(rec.windows[0].arrivals, 1);
    }

    #[test]
    fn record_responses_is_off_by_default_and_left_out_of_the_resolved_config() {
        let config: MetricsConfig = toml::from_str("").unwrap();
        assert!(!config.record_responses);
        assert!(!toml::to_string(&config).unwrap().contains("record_responses"));
        let config: MetricsConfig = toml::from_str("record_responses = true").unwrap();
        assert!(toml::to_string(&config).unwrap().contains("record_responses = true"));
    }
}
