//! Workloads: what user requests arrive, and when.
//!
//! A workload is a **request source** (synthetic generator or trace) combined with an
//! **arrival process**: open loop (Poisson at a rate, or trace timestamps) or closed loop
//! (N requests outstanding, each followed by a think time).

mod ahead;
pub(crate) mod handover;
pub mod synthetic;
pub mod trace;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::request::RequestRecord;
use crate::error::{Error, Result};
use crate::sim::{ms_to_ns, s_to_ns, Nanos, RngStream};
pub use synthetic::{AddressConfig, SizeConfig, SyntheticGenerator};
pub use trace::{ThreadedSource, TraceConfig, TraceCounts, TraceSource};

/// The user workload.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// Replay this block trace instead of generating requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceConfig>,
    /// Stop issuing after this many requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// Stop issuing requests after this much simulated time, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Synthetic: fraction of requests that are reads, in [0, 1].
    #[serde(default = "one")]
    pub read_fraction: f64,
    /// Synthetic: fixed request size in KiB (shorthand for `size = {distribution = "fixed"}`);
    /// every size is at most 2³² − 1 sectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_kib: Option<f64>,
    /// Synthetic: request size distribution (default: fixed 4 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeConfig>,
    /// Synthetic: request start addresses are multiples of this many KiB (no more than the
    /// array holds).
    #[serde(default = "four")]
    pub align_kib: f64,
    /// Synthetic: where requests go.
    #[serde(default)]
    pub address: AddressConfig,
    /// When requests arrive.
    #[serde(default)]
    pub arrival: ArrivalConfig,
}

/// Keys of `[workload]` that only a synthetic workload reads: a trace brings its own sizes,
/// addresses and mix of reads and writes.
pub const SYNTHETIC_ONLY_KEYS: [&str; 5] = ["read_fraction", "size_kib", "size", "align_kib", "address"];

/// Written as derived serialization would write it, except that a trace workload leaves out
/// the [`SYNTHETIC_ONLY_KEYS`]: it does not use them, and a saved configuration that showed
/// their defaults would say the trace was read at `read_fraction = 1.0`. (The destructuring
/// lists every field, so a new one does not compile until it is written here too.)
impl Serialize for WorkloadConfig {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let WorkloadConfig { trace, requests, duration_s, read_fraction, size_kib, size, align_kib, address, arrival } =
            self;
        let synthetic = trace.is_none();
        let mut out = serializer.serialize_struct("WorkloadConfig", 9)?;
        fn optional<T: Serialize, S: SerializeStruct>(out: &mut S, key: &'static str, value: &Option<T>, keep: bool) -> Result<(), S::Error> {
            match value {
                Some(value) if keep => out.serialize_field(key, value),
                _ => out.skip_field(key),
            }
        }
        optional(&mut out, "trace", trace, true)?;
        optional(&mut out, "requests", requests, true)?;
        optional(&mut out, "duration_s", duration_s, true)?;
        optional(&mut out, "read_fraction", &Some(read_fraction), synthetic)?;
        optional(&mut out, "size_kib", size_kib, synthetic)?;
        optional(&mut out, "size", size, synthetic)?;
        optional(&mut out, "align_kib", &Some(align_kib), synthetic)?;
        optional(&mut out, "address", &Some(address), synthetic)?;
        out.serialize_field("arrival", arrival)?;
        out.end()
    }
}

fn one() -> f64 {
    1.0
}
fn four() -> f64 {
    4.0
}
fn is_false(flag: &bool) -> bool {
    !*flag
}

/// Arrival process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "process", rename_all = "snake_case", deny_unknown_fields)]
pub enum ArrivalConfig {
    /// Open loop, exponential inter-arrival times. Give exactly one of `rate_per_s` and
    /// `target_utilization`.
    Poisson {
        /// Mean arrival rate, requests per second (whole array).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rate_per_s: Option<f64>,
        /// Choose the rate so that the mean utilization of the array's drives in normal mode
        /// is this, in (0, 1): estimated from the drive's mean service time and the layout's
        /// disk operations per request, then corrected by pilot runs of the configuration
        /// (20,000 requests each, no failures) until one lands within 1 % (raidlab run and
        /// raidlab.run; `raidlab bench` keeps the estimate).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target_utilization: Option<f64>,
        /// With `target_utilization`: the mean time of one disk operation the target is
        /// computed from, ms, instead of raidlab's own estimate and pilot runs. The rate is
        /// then target × drives / (disk operations per request × this), as a paper that
        /// defines its load from a stated service time does (Fu et al. §2: u = 0.45 at
        /// 11.54 ms per access).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        service_time_ms: Option<f64>,
    },
    /// Closed loop: `outstanding` requests in the system; each completion is followed by
    /// `think_ms` of think time and a new request.
    Closed {
        /// Requests in the system at once (1 to 2²⁰).
        outstanding: u32,
        /// Think time between a completion and the next request, ms (at most 2⁶² ns).
        #[serde(default)]
        think_ms: f64,
        /// Take each think time from the trace instead: request k+1 is issued
        /// `t[k+1] − t[k]` (the trace's own gap) after request k completes. This is how DiskSim
        /// replays a `validate` trace. Needs a trace, `outstanding = 1` and `think_ms = 0`.
        #[serde(default, skip_serializing_if = "is_false")]
        #[schemars(extend("default" = false))]
        think_from_trace: bool,
    },
    /// Open loop at the trace's own timestamps (the default for a trace workload).
    Trace,
}

impl Default for ArrivalConfig {
    fn default() -> Self {
        ArrivalConfig::Poisson { rate_per_s: Some(100.0), target_utilization: None, service_time_ms: None }
    }
}

enum Source {
    /// Synthetic requests drawn as they are due (a closed loop).
    Synthetic(SyntheticGenerator),
    /// Requests handed out a batch at a time from [`Workload::batch`]: synthetic ones with
    /// Poisson arrivals, or a trace's at its own timestamps.
    Ahead,
    Trace(ThreadedSource),
}

/// Open or closed loop, resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Loop {
    /// Poisson with mean inter-arrival time in ns (f64: sub-ns precision accumulates).
    Poisson { mean_interarrival_ns: f64 },
    /// Trace timestamps.
    Trace,
    /// Closed loop: after each completion, `think` ns pass before the next request. With
    /// `think_from_trace`, [`Workload::next`] sets `think` to the trace's gap before the
    /// following request each time it issues one (one request is outstanding, so the engine
    /// reads it at that request's completion).
    Closed { outstanding: u32, think: Nanos },
}

/// A running workload.
pub struct Workload {
    source: Source,
    /// Requests handed out a batch at a time (see [`Batch`]).
    batch: Option<Batch>,
    /// The resolved arrival process.
    pub arrival: Loop,
    arrivals_rng: RngStream,
    next_arrival_ns: f64,
    issued: u64,
    max_requests: Option<u64>,
    end_time: Option<Nanos>,
    exhausted: bool,
    /// Closed loop with think times from the trace (`ArrivalConfig::Closed::think_from_trace`).
    think_from_trace: bool,
    /// With `think_from_trace`: the trace's request after the one last issued, read ahead.
    looked_ahead: Option<trace::TraceRecord>,
    /// A trace replay's counts (records moved in time, folded; the share of the file read).
    trace_counts: Option<std::sync::Arc<trace::TraceCounts>>,
}

/// Requests handed out a batch at a time ([`ahead`]): synthetic ones with Poisson arrivals,
/// or a trace's at its own timestamps; and the next one to issue.
struct Batch {
    requests: Vec<RequestRecord>,
    /// The next request to issue.
    next: usize,
    feed: ahead::Feed,
}

impl Workload {
    /// Build from the configuration for an array of `capacity` sectors. `rate_per_s` is the
    /// resolved Poisson rate (the engine resolves `target_utilization`).
    pub fn new(
        cfg: &WorkloadConfig,
        capacity: u64,
        rate_per_s: Option<f64>,
        seed: u64,
        key: &str,
    ) -> Result<Self> {
        use crate::sim::StreamId;
        let source = match &cfg.trace {
            Some(t) => Source::Trace(ThreadedSource::start(TraceSource::open(t, capacity, &format!("{key}.trace"))?)?),
            None => Source::Synthetic(SyntheticGenerator::new(cfg, capacity, RngStream::new(seed, StreamId::Requests), key)?),
        };
        let arrival = match (&cfg.arrival, &source) {
            (ArrivalConfig::Trace, Source::Trace(_)) => Loop::Trace,
            (ArrivalConfig::Trace, _) => {
                return Err(Error::config(format!("{key}.arrival.process"), "\"trace\" arrivals need a `workload.trace`"))
            }
            (ArrivalConfig::Poisson { .. }, _) => {
                let rate = rate_per_s.ok_or_else(|| Error::config(format!("{key}.arrival"), "no rate resolved"))?;
                Loop::Poisson { mean_interarrival_ns: 1e9 / rate }
            }
            (ArrivalConfig::Closed { think_from_trace: true, outstanding, think_ms }, source) => {
                let key = format!("{key}.arrival.think_from_trace");
                if !matches!(source, Source::Trace(_)) {
                    return Err(Error::config(key, "think times from the trace need a `workload.trace`"));
                }
                if *outstanding != 1 || *think_ms != 0.0 {
                    return Err(Error::config(
                        key,
                        format!(
                            "think times from the trace need `outstanding = 1` and `think_ms = 0`, not {outstanding} and {think_ms}"
                        ),
                    ));
                }
                Loop::Closed { outstanding: 1, think: 0 }
            }
            (ArrivalConfig::Closed { outstanding, think_ms, .. }, _) => {
                Loop::Closed { outstanding: *outstanding, think: ms_to_ns(*think_ms) }
            }
        };
        let trace_counts = match &source {
            Source::Trace(reader) => Some(reader.counts()),
            _ => None,
        };
        let think_from_trace = matches!(cfg.arrival, ArrivalConfig::Closed { think_from_trace: true, .. });
        let end_time = cfg.duration_s.map(s_to_ns);
        let (source, batch) = match (source, arrival) {
            (Source::Synthetic(generator), Loop::Poisson { mean_interarrival_ns }) => {
                let arrivals = RngStream::new(seed, StreamId::Arrivals);
                let drawer = ahead::Drawer::new(generator, arrivals, mean_interarrival_ns, cfg.requests, end_time);
                let feed = ahead::Feed::start(drawer, cfg.requests)?;
                (Source::Ahead, Some(Batch { requests: Vec::new(), next: 0, feed }))
            }
            (Source::Trace(reader), Loop::Trace) => {
                let feed = ahead::Feed::trace(reader, cfg.requests, end_time);
                (Source::Ahead, Some(Batch { requests: Vec::new(), next: 0, feed }))
            }
            (source, _) => (source, None),
        };
        Ok(Workload {
            source,
            batch,
            arrival,
            arrivals_rng: RngStream::new(seed, StreamId::Arrivals),
            next_arrival_ns: 0.0,
            issued: 0,
            max_requests: cfg.requests,
            end_time,
            exhausted: false,
            think_from_trace,
            looked_ahead: None,
            trace_counts,
        })
    }

    /// A trace replay's counts, `None` for a synthetic workload.
    pub fn trace_counts(&self) -> Option<&trace::TraceCounts> {
        self.trace_counts.as_deref()
    }

    /// How far along the workload is when neither a request limit nor an end time says: the
    /// share of a trace's file read so far (NaN for anything else).
    pub fn fraction_read(&self) -> f64 {
        self.trace_counts.as_ref().map_or(f64::NAN, |counts| counts.fraction_read())
    }

    /// Closed loop: the think time before the request that follows a completion now, or
    /// `None` when no request follows (open loop, or the workload is exhausted). With
    /// `think_from_trace` it is the trace's gap after the request last issued, which
    /// [`Workload::next`] reads ahead.
    #[inline]
    pub fn think_time(&self) -> Option<Nanos> {
        match self.arrival {
            Loop::Closed { think, .. } if !self.exhausted => Some(think),
            _ => None,
        }
    }

    /// Requests issued so far.
    pub fn issued(&self) -> u64 {
        self.issued
    }

    /// Whether the workload will issue no more requests.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// The configured request limit, if any.
    pub fn max_requests(&self) -> Option<u64> {
        self.max_requests
    }

    /// The configured end of arrivals, if any.
    pub fn end_time(&self) -> Option<Nanos> {
        self.end_time
    }

    /// The next request. Open loop: with its own arrival time. Closed loop: arriving `now`.
    /// `None` once the workload is exhausted.
    #[inline(always)]
    pub fn next(&mut self, now: Nanos) -> Result<Option<RequestRecord>> {
        // Once per request: a request generated ahead is handed out inline, everything else
        // (a new batch, a trace record, a closed loop) is done apart.
        match self.take_generated() {
            Some(request) => Ok(Some(request)),
            None => self.next_apart(now),
        }
    }

    /// The next request generated ahead, if one is left.
    #[inline(always)]
    fn take_generated(&mut self) -> Option<RequestRecord> {
        let batch = self.batch.as_mut()?;
        let request = *batch.requests.get(batch.next)?;
        batch.next += 1;
        self.issued += 1;
        Some(request)
    }

    /// [`Workload::next`] when no request generated ahead is left.
    #[inline(never)]
    fn next_apart(&mut self, now: Nanos) -> Result<Option<RequestRecord>> {
        if self.batch.is_some() {
            // Every request generated so far is handed out: take the next ones.
            if !self.next_batch()? {
                self.exhausted = true;
                return Ok(None);
            }
            return Ok(self.take_generated());
        }
        if self.exhausted || self.max_requests.is_some_and(|m| self.issued >= m) {
            self.exhausted = true;
            return Ok(None);
        }
        let (mut arrival, lba, sectors, is_write) = match &mut self.source {
            Source::Synthetic(g) => {
                let (lba, sectors, is_write) = g.next_request();
                (now, lba, sectors, is_write)
            }
            Source::Ahead => return Err(Error::Invariant("requests handed out in batches without a batch".into())),
            Source::Trace(t) => {
                let record = match self.looked_ahead.take() {
                    Some(record) => Some(record),
                    None => t.next_record()?,
                };
                match record {
                    Some(r) => (r.arrival, r.lba, r.sectors, r.is_write),
                    None => {
                        self.exhausted = true;
                        return Ok(None);
                    }
                }
            }
        };
        let trace_time = arrival;
        match self.arrival {
            Loop::Poisson { mean_interarrival_ns } => {
                self.next_arrival_ns += self.arrivals_rng.exponential(mean_interarrival_ns);
                arrival = crate::sim::round_ns(self.next_arrival_ns);
            }
            Loop::Trace => {}
            Loop::Closed { .. } => arrival = now,
        }
        if self.end_time.is_some_and(|end| arrival > end) {
            self.exhausted = true;
            return Ok(None);
        }
        self.issued += 1;
        if self.think_from_trace {
            self.look_ahead_for_think_time(trace_time)?;
        }
        Ok(Some(RequestRecord { arrival, lba, sectors, is_write }))
    }

    /// Take the next batch of requests (synthetic ones with their Poisson arrivals, or a
    /// trace's). Returns false when there is none left; a trace's error once the requests
    /// before it are handed out.
    fn next_batch(&mut self) -> Result<bool> {
        let Some(batch) = &mut self.batch else { return Ok(false) };
        batch.next = 0;
        if self.exhausted {
            batch.requests.clear();
            return Ok(false);
        }
        batch.feed.refill(&mut batch.requests)?;
        Ok(!batch.requests.is_empty())
    }

    /// Closed loop with think times from the trace: read the request after the one just
    /// issued (trace time `issued_at`) and make the gap between them the next think time. At
    /// the end of the trace or of `max_requests` the workload is exhausted now, so that no
    /// arrival is scheduled after the last completion.
    fn look_ahead_for_think_time(&mut self, issued_at: Nanos) -> Result<()> {
        let Source::Trace(t) = &mut self.source else {
            return Err(Error::Invariant("think times from the trace without a trace".into()));
        };
        let next = if self.max_requests.is_some_and(|m| self.issued >= m) { None } else { t.next_record()? };
        match next {
            Some(record) => {
                if let Loop::Closed { think, .. } = &mut self.arrival {
                    *think = record.arrival - issued_at;
                }
            }
            None => self.exhausted = true,
        }
        self.looked_ahead = next;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::StreamId;

    /// Synthetic requests with Poisson arrivals are what drawing one request and one gap at a
    /// time gives: the same requests, the same arrivals, and the same end, whether it comes
    /// from the request limit or from the end of arrivals, inside a batch or at its edge.
    #[test]
    fn requests_generated_ahead_are_those_drawn_one_at_a_time() {
        let capacity = 1 << 24;
        let rate = 2_000.0;
        for (requests, duration_s) in [(Some(1), None), (Some(64), None), (Some(65), None), (Some(1_000), None), (None, Some(0.3)), (Some(5_000), Some(0.5)), (Some(100), Some(10.0))] {
            let cfg = WorkloadConfig {
                requests,
                duration_s,
                read_fraction: 0.7,
                size: Some(SizeConfig::Uniform { min_kib: 4.0, max_kib: 64.0, step_kib: 4.0 }),
                ..toml::from_str("").expect("defaults")
            };
            let mut workload = Workload::new(&cfg, capacity, Some(rate), 11, "workload").expect("valid");
            let mut issued = Vec::new();
            while let Some(r) = workload.next(0).expect("synthetic") {
                issued.push(r);
                assert!(issued.len() <= 10_000, "never ends");
            }
            assert!(workload.exhausted());
            assert!(workload.next(0).expect("synthetic").is_none());
            assert_eq!(workload.issued(), issued.len() as u64);
            // The definition: one request, then one exponential gap, until a limit.
            let mut generator =
                SyntheticGenerator::new(&cfg, capacity, RngStream::new(11, StreamId::Requests), "workload").expect("valid");
            let mut arrivals = RngStream::new(11, StreamId::Arrivals);
            let (mut clock, mut expected) = (0.0, Vec::new());
            let end = duration_s.map(s_to_ns);
            while requests.is_none_or(|m| (expected.len() as u64) < m) {
                let (lba, sectors, is_write) = generator.next_request();
                clock += arrivals.exponential(1e9 / rate);
                let arrival = crate::sim::round_ns(clock);
                if end.is_some_and(|end| arrival > end) {
                    break;
                }
                expected.push(RequestRecord { arrival, lba, sectors, is_write });
            }
            assert!(!expected.is_empty());
            assert_eq!(issued, expected, "requests {requests:?}, duration {duration_s:?} s");
        }
    }
}
