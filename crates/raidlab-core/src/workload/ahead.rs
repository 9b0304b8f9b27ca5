//! Requests handed out a batch at a time: synthetic requests with Poisson arrivals, drawn
//! ahead of the simulation, and the requests of a trace replayed at its own timestamps.
//!
//! A synthetic request and its arrival time do not depend on the simulation: they come from
//! two random streams of their own ([`StreamId::Requests`](crate::sim::StreamId) and
//! [`StreamId::Arrivals`](crate::sim::StreamId)), drawn in a fixed order. So they are drawn
//! in batches, which lets the processor overlap the draws of one request with those of the
//! next, and, in a run long enough for it to pay ([`THREAD_ABOVE_REQUESTS`]), on a thread of
//! their own, which hands the batches over while the simulation runs
//! ([`super::handover`]), as a trace's reader does ([`super::trace::threaded`]). Drawing costs about a tenth of a
//! simulated request on one drive (`docs/performance.md`); the thread moves that work off
//! the simulation's core, it does not add to it. Inline or on the thread, the streams are
//! drawn in the same order, so the requests, and the run, are the same byte for byte.
//!
//! A trace's records come in batches from its reader thread already; they are handed out
//! the same way, with the run's request limit and end of arrivals applied as they are taken.
//!
//! A run that stops early (its duration or request limit reached, or cancelled) drops the
//! source, which stops the thread and waits for it.

use super::handover::{Handover, LARGEST_HANDOVER};
use super::{SyntheticGenerator, ThreadedSource};
use crate::request::RequestRecord;
use crate::error::{Error, Result};
use crate::sim::{round_ns, Nanos, RngStream};

/// Requests per batch drawn inline: enough for the draws to overlap.
pub const INLINE_BATCH_REQUESTS: usize = 64;

/// Runs with a request limit at or below this draw inline: starting a thread costs tens of
/// µs, more than such a run gains from it.
pub const THREAD_ABOVE_REQUESTS: u64 = LARGEST_HANDOVER as u64;

/// The draws themselves: one request, then the gap to its arrival, until the request limit
/// or the first arrival past the end of arrivals (drawn, not issued).
pub(crate) struct Drawer {
    generator: SyntheticGenerator,
    arrivals_rng: RngStream,
    mean_interarrival_ns: f64,
    /// Arrival time of the last request drawn, ns (f64: sub-ns parts of the gaps add up).
    clock_ns: f64,
    /// Requests still to draw (`u64::MAX`: no limit).
    left: u64,
    /// End of arrivals, ns.
    end_time: Option<Nanos>,
    /// The last request has been drawn.
    ended: bool,
}

impl Drawer {
    /// Draw from `generator` and `arrivals_rng` (fresh streams) `max_requests` requests, or
    /// until an arrival falls after `end_time`; gaps have mean `mean_interarrival_ns`.
    pub fn new(
        generator: SyntheticGenerator,
        arrivals_rng: RngStream,
        mean_interarrival_ns: f64,
        max_requests: Option<u64>,
        end_time: Option<Nanos>,
    ) -> Self {
        let left = max_requests.unwrap_or(u64::MAX);
        Drawer { generator, arrivals_rng, mean_interarrival_ns, clock_ns: 0.0, left, end_time, ended: left == 0 }
    }

    /// Replace the contents of `requests` with the next (at most `count`) requests. Empty
    /// once every request has been drawn.
    pub fn fill(&mut self, requests: &mut Vec<RequestRecord>, count: usize) {
        requests.clear();
        if self.ended {
            return;
        }
        let count = self.left.min(count as u64) as usize;
        self.left -= count as u64;
        self.ended = self.left == 0;
        for _ in 0..count {
            let (lba, sectors, is_write) = self.generator.next_request();
            self.clock_ns += self.arrivals_rng.exponential(self.mean_interarrival_ns);
            let arrival = round_ns(self.clock_ns);
            if self.end_time.is_some_and(|end| arrival > end) {
                self.ended = true;
                break;
            }
            requests.push(RequestRecord { arrival, lba, sectors, is_write });
        }
    }
}

/// Where the batches come from.
pub(crate) enum Feed {
    /// Drawn on the simulation's thread.
    Inline(Drawer),
    /// Drawn on a thread of its own.
    Thread(Handover<RequestRecord>),
    /// A trace's records at its own timestamps, at most `left` more of them (`u64::MAX`: no
    /// limit), up to the first arriving after `end_time`.
    Trace { source: ThreadedSource, left: u64, end_time: Option<Nanos>, ended: bool },
}

impl Feed {
    /// Draw with `drawer`: inline when `max_requests` is small enough
    /// ([`THREAD_ABOVE_REQUESTS`]), else on a new thread.
    pub fn start(drawer: Drawer, max_requests: Option<u64>) -> Result<Feed> {
        if max_requests.is_some_and(|m| m <= THREAD_ABOVE_REQUESTS) {
            return Ok(Feed::Inline(drawer));
        }
        Feed::thread(drawer)
    }

    /// Draw with `drawer` on a new thread, whatever the run's length.
    pub fn thread(mut drawer: Drawer) -> Result<Feed> {
        let drawing = Handover::start("raidlab-requests", "drawing the requests".into(), move |requests, len| {
            drawer.fill(requests, len);
            drawer.ended.then_some(Ok(()))
        })
        .map_err(|err| Error::Invariant(format!("cannot start a thread to draw the requests: {err}")))?;
        Ok(Feed::Thread(drawing))
    }

    /// A trace's records at its own timestamps, the first `max_requests` of them, up to the
    /// first arriving after `end_time`.
    pub fn trace(source: ThreadedSource, max_requests: Option<u64>, end_time: Option<Nanos>) -> Feed {
        let left = max_requests.unwrap_or(u64::MAX);
        Feed::Trace { source, left, end_time, ended: left == 0 }
    }

    /// Replace the contents of `requests` with the next batch; empty when every request has
    /// been handed out. A trace's error comes once the requests before it are handed out.
    pub fn refill(&mut self, requests: &mut Vec<RequestRecord>) -> Result<()> {
        match self {
            Feed::Inline(drawer) => {
                drawer.fill(requests, INLINE_BATCH_REQUESTS);
                Ok(())
            }
            Feed::Thread(drawing) => {
                *requests = drawing.receive()?.unwrap_or_default();
                Ok(())
            }
            Feed::Trace { source, left, end_time, ended } => {
                requests.clear();
                if *ended {
                    return Ok(());
                }
                let Some(mut records) = source.next_records()? else {
                    *ended = true;
                    return Ok(());
                };
                // Cut at the end of arrivals, then at the request limit; the records are
                // handed over as they are, without a pass over them.
                if let Some(within) = end_time.and_then(|end| records.iter().position(|r| r.arrival > end)) {
                    records.truncate(within);
                    *ended = true;
                }
                if records.len() as u64 >= *left {
                    records.truncate(*left as usize);
                    *ended = true;
                }
                *left -= records.len() as u64;
                *requests = records;
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{s_to_ns, StreamId};
    use crate::workload::handover::{handover_len, FIRST_HANDOVER};
    use crate::workload::{SizeConfig, WorkloadConfig};

    fn drawer(requests: Option<u64>, duration_s: Option<f64>) -> Drawer {
        let cfg = WorkloadConfig {
            read_fraction: 0.7,
            size: Some(SizeConfig::Uniform { min_kib: 4.0, max_kib: 64.0, step_kib: 4.0 }),
            ..toml::from_str("").expect("defaults")
        };
        let generator = SyntheticGenerator::new(&cfg, 1 << 30, RngStream::new(5, StreamId::Requests), "workload")
            .expect("valid workload");
        Drawer::new(generator, RngStream::new(5, StreamId::Arrivals), 250_000.0, requests, duration_s.map(s_to_ns))
    }

    /// Every batch of `feed`, concatenated, and the number of batches.
    fn drain(mut feed: Feed) -> (Vec<RequestRecord>, usize) {
        let (mut all, mut batches, mut batch) = (Vec::new(), 0, Vec::new());
        loop {
            feed.refill(&mut batch).expect("the thread runs");
            if batch.is_empty() {
                return (all, batches);
            }
            batches += 1;
            all.extend_from_slice(&batch);
        }
    }

    /// The thread hands out exactly the requests drawn inline, in order, whether the request
    /// limit or the end of arrivals ends them, at a batch's edge or inside one.
    #[test]
    fn requests_drawn_on_the_thread_are_those_drawn_inline() {
        let batch = LARGEST_HANDOVER as u64;
        let ends = [
            (Some(0), None),
            (Some(1), None),
            (Some(batch), None),
            (Some(2 * batch + 1), None),
            // 250 µs apart: about 4,000 requests a second.
            (None, Some(9.0)),
            (Some(batch / 2), Some(1.0)),
        ];
        for (requests, duration_s) in ends {
            let (inline, _) = drain(Feed::Inline(drawer(requests, duration_s)));
            let (threaded, batches) = drain(Feed::thread(drawer(requests, duration_s)).expect("a thread starts"));
            assert_eq!(threaded, inline, "limit {requests:?}, duration {duration_s:?} s");
            let full = (0..).scan(0, |handed, k| {
                *handed += handover_len(k);
                Some(*handed)
            });
            let expected_batches = full.take_while(|&handed| handed < inline.len()).count() + usize::from(!inline.is_empty());
            assert_eq!(batches, expected_batches, "batches are full but the last");
            if let Some(requests) = requests.filter(|_| duration_s.is_none()) {
                assert_eq!(inline.len() as u64, requests);
            }
            if let Some(end) = duration_s.map(s_to_ns) {
                assert!(inline.iter().all(|r| r.arrival <= end));
            }
            assert!(inline.windows(2).all(|w| w[0].arrival <= w[1].arrival), "arrivals in order");
        }
    }

    /// A run that stops early drops its feed: the thread, drawing without end, stops and is
    /// joined (the test would hang otherwise).
    #[test]
    fn dropping_the_feed_stops_the_thread() {
        let mut feed = Feed::thread(drawer(None, None)).expect("a thread starts");
        let mut batch = Vec::new();
        feed.refill(&mut batch).expect("the thread runs");
        assert_eq!(batch.len(), FIRST_HANDOVER);
        drop(feed);
    }

    /// A trace's requests, a batch at a time, are its records one by one, cut at the request
    /// limit or at the first arrival past the end, at a batch's edge or inside one; a bad
    /// line's error comes after the requests before it, unless a limit comes first.
    #[test]
    fn a_trace_handed_out_in_batches_is_its_records_one_by_one() {
        use crate::workload::trace::tests::{config, TempFile};
        use crate::workload::trace::{ThreadedSource, TraceSource, REORDER_WINDOW};
        // A bad line is found while the reorder window is filled: past the window's worth of
        // lines, requests come before its error.
        let lines = REORDER_WINDOW + 4 * FIRST_HANDOVER + 10;
        // One request per ms, SPC lines (ASU, LBA, bytes, kind, seconds).
        let trace = |bad: Option<usize>| -> String {
            (0..lines)
                .map(|i| match bad {
                    Some(b) if b == i => "0,1,512,r,soon\n".to_string(),
                    _ => format!("0,{},{},{},{}\n", i * 8, 512 * (1 + i % 4), ["r", "w"][i % 3 % 2], i as f64 / 1000.0),
                })
                .collect()
        };
        let batch = FIRST_HANDOVER as u64;
        let ms = 1_000_000;
        for bad in [None, Some(REORDER_WINDOW + FIRST_HANDOVER + 5)] {
            let file = TempFile::new("ahead.spc", trace(bad).as_bytes());
            let open = || ThreadedSource::start(TraceSource::open(&config(&file.0, "spc"), 1 << 40, "t").unwrap()).unwrap();
            for (limit, end) in [(None, None), (Some(batch), None), (Some(batch + 3), None), (None, Some(batch * ms)), (Some(batch / 2), Some(batch * ms))] {
                // The definition: records one by one, until a limit, the end or an error.
                let (mut one_by_one, mut expected_error) = (Vec::new(), None);
                let mut reader = open();
                while limit.is_none_or(|l| (one_by_one.len() as u64) < l) {
                    match reader.next_record() {
                        Ok(Some(r)) if end.is_none_or(|e| r.arrival <= e) => {
                            one_by_one.push(RequestRecord { arrival: r.arrival, lba: r.lba, sectors: r.sectors, is_write: r.is_write })
                        }
                        Ok(_) => break,
                        Err(err) => {
                            expected_error = Some(err.to_string());
                            break;
                        }
                    }
                }
                let mut feed = Feed::trace(open(), limit, end);
                let (mut batched, mut error, mut requests) = (Vec::new(), None, Vec::new());
                loop {
                    match feed.refill(&mut requests) {
                        Ok(()) if requests.is_empty() => break,
                        Ok(()) => batched.extend_from_slice(&requests),
                        Err(err) => {
                            error = Some(err.to_string());
                            break;
                        }
                    }
                }
                let case = format!("bad line {bad:?}, limit {limit:?}, end {end:?}");
                assert_eq!(batched, one_by_one, "{case}");
                assert_eq!(error, expected_error, "{case}");
                assert!(!one_by_one.is_empty(), "{case}");
            }
        }
    }

    /// Short runs draw inline; long ones, and those without a request limit, on a thread.
    #[test]
    fn only_long_runs_start_a_thread() {
        let threaded = |requests: Option<u64>| matches!(Feed::start(drawer(requests, None), requests), Ok(Feed::Thread { .. }));
        assert!(!threaded(Some(THREAD_ABOVE_REQUESTS)));
        assert!(threaded(Some(THREAD_ABOVE_REQUESTS + 1)));
        assert!(threaded(None));
    }
}
