//! A trace source read on a thread of its own.
//!
//! Reading a text trace (decompressing, splitting lines, parsing numbers, reordering) costs
//! about as much per request as simulating a drive does, and it does not depend on the
//! simulation: the records and their order are fixed by the file. So a replay reads the
//! trace on a second thread, which hands the records over in batches through a bounded
//! channel, while the simulation runs on the first. The records, and an error at the line
//! where it is found, arrive in the order a [`TraceSource`] read inline gives them: the run
//! is the same, byte for byte, only sooner on a machine with a second core.
//!
//! The hand-over ([`crate::workload::handover`]) bounds how far the reader runs ahead
//! (besides the reorder window), so memory stays bounded. A run that stops before the end of
//! the trace (its duration or request limit reached, or cancelled) drops the source, which
//! stops the thread and waits for it: the file is closed when the run is.

use super::{TraceCounts, TraceRecord, TraceSource};
use crate::error::{Error, Result};
use crate::workload::handover::Handover;

/// A [`TraceSource`] read ahead on its own thread.
pub struct ThreadedSource {
    /// The records received and not yet handed out.
    batch: std::vec::IntoIter<TraceRecord>,
    reader: Handover<TraceRecord>,
    /// What the reading thread counts, published after each batch.
    counts: std::sync::Arc<TraceCounts>,
}

impl ThreadedSource {
    /// Start reading `source` on a new thread.
    pub fn start(mut source: TraceSource) -> Result<Self> {
        let path = source.path().to_path_buf();
        let doing = format!("reading {}", path.display());
        let counts = source.counts();
        let reader = Handover::start("raidlab-trace-reader", doing, move |records, len| {
            let mut end = None;
            while records.len() < len {
                match source.next_record() {
                    Ok(Some(record)) => records.push(record),
                    Ok(None) => {
                        end = Some(Ok(()));
                        break;
                    }
                    Err(err) => {
                        end = Some(Err(err));
                        break;
                    }
                }
            }
            source.publish_counts();
            end
        })
        .map_err(|err| Error::io(&path, std::io::Error::new(err.kind(), format!("cannot start a thread to read the trace: {err}"))))?;
        Ok(ThreadedSource { batch: Vec::new().into_iter(), reader, counts })
    }

    /// What the reading thread has counted so far (published after each batch it reads).
    pub fn counts(&self) -> std::sync::Arc<TraceCounts> {
        self.counts.clone()
    }

    /// The next record in arrival order, `None` at the end; errors name file and line.
    /// Exactly what [`TraceSource::next_record`] returns, call for call, up to the first
    /// `None` or error; `None` after that.
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>> {
        match self.batch.next() {
            Some(record) => Ok(Some(record)),
            None => self.next_batch(),
        }
    }

    /// [`ThreadedSource::next_record`] once the batch in hand is used up.
    #[inline(never)]
    fn next_batch(&mut self) -> Result<Option<TraceRecord>> {
        Ok(self.reader.receive()?.and_then(|records| {
            self.batch = records.into_iter();
            self.batch.next()
        }))
    }

    /// The records not handed out yet, a batch at a time (never an empty one): the rest of
    /// the batch in hand, else the next batch; `None` at the end. The records and the errors
    /// are those [`ThreadedSource::next_record`] would return one by one.
    pub fn next_records(&mut self) -> Result<Option<Vec<TraceRecord>>> {
        if self.batch.len() > 0 {
            return Ok(Some(std::mem::take(&mut self.batch).collect()));
        }
        self.reader.receive()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{config, TempFile};
    use super::*;
    use crate::workload::handover::handover_len;

    const KEY: &str = "workload.trace";

    /// Every call of the inline source and of the threaded one, up to and including the
    /// first `None` or error.
    fn calls(mut next: impl FnMut() -> Result<Option<TraceRecord>>) -> Vec<Result<TraceRecord, String>> {
        let mut out = Vec::new();
        loop {
            match next() {
                Ok(Some(record)) => out.push(Ok(record)),
                Ok(None) => return out,
                Err(err) => {
                    out.push(Err(err.to_string()));
                    return out;
                }
            }
        }
    }

    #[test]
    fn the_thread_hands_out_what_the_source_reads_inline_errors_included() {
        // Around the batch size, with a bad line at the end, in the middle of a batch, on a
        // batch's edge, and none; unsorted, so that the reorder window is at work.
        // The first three batches, and some of the fourth; edges of the first two.
        let (first, second) = (handover_len(0), handover_len(0) + handover_len(1));
        let lines = second + handover_len(2) + 17;
        for bad_line in [None, Some(lines), Some(first / 2), Some(first), Some(first + 1), Some(second), Some(second + 1)] {
            let text: String = (1..=lines)
                .map(|line| {
                    if Some(line) == bad_line {
                        "0,1,512,r,soon\n".to_string()
                    } else {
                        format!("0,{line},{},{},{}\n", 512 * (1 + line % 8), ["r", "w"][line % 2], (line * 7919) % 5000)
                    }
                })
                .collect();
            let file = TempFile::new("threaded.spc", text.as_bytes());
            let cfg = config(&file.0, "spc");
            let mut inline = TraceSource::open(&cfg, 1 << 40, KEY).unwrap();
            let expected = calls(|| inline.next_record());
            let mut threaded = ThreadedSource::start(TraceSource::open(&cfg, 1 << 40, KEY).unwrap()).unwrap();
            assert_eq!(calls(|| threaded.next_record()), expected, "bad line {bad_line:?}");
            // After the end or the error, nothing more.
            assert!(matches!(threaded.next_record(), Ok(None)));
            // A record at a time, then a batch at a time (the rest of the batch in hand
            // first): the same records and the same end.
            let mut batched = ThreadedSource::start(TraceSource::open(&cfg, 1 << 40, KEY).unwrap()).unwrap();
            let mut records = Vec::new();
            // (The reorder window is filled before the first record: an error may come first.)
            match batched.next_record() {
                Ok(Some(record)) => records.push(Ok(record)),
                Ok(None) => {}
                Err(err) => records.push(Err(err.to_string())),
            }
            while records.last().is_some_and(|r| r.is_ok()) {
                match batched.next_records() {
                    Ok(Some(batch)) => {
                        assert!(!batch.is_empty());
                        records.extend(batch.into_iter().map(Ok));
                    }
                    Ok(None) => break,
                    Err(err) => {
                        records.push(Err(err.to_string()));
                        break;
                    }
                }
            }
            assert_eq!(records, expected, "batches, bad line {bad_line:?}");
            assert!(matches!(batched.next_records(), Ok(None)));
            match bad_line {
                None => assert_eq!(expected.len(), lines),
                Some(_) => assert!(expected.last().unwrap().as_ref().is_err_and(|e| e.contains("bad timestamp"))),
            }
        }
    }

    #[test]
    fn dropping_the_source_early_stops_the_thread() {
        let text: String = (0..8 * handover_len(u32::MAX)).map(|line| format!("0,{line},512,r,{line}\n")).collect();
        let file = TempFile::new("early.spc", text.as_bytes());
        let mut threaded =
            ThreadedSource::start(TraceSource::open(&config(&file.0, "spc"), 1 << 40, KEY).unwrap()).unwrap();
        assert_eq!(threaded.next_record().unwrap().unwrap().lba, 0);
        // The reader is blocked on a full channel; dropping must not hang.
        drop(threaded);
    }
}
