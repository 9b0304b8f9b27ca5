//! Batches made on a thread of their own and handed to the simulation through a bounded
//! channel: the requests a synthetic workload draws ahead ([`super::ahead`]) and the records
//! a trace reader reads ahead ([`super::trace::threaded`]). Neither depends on the
//! simulation, so a second core can make them while the first simulates; the batches arrive
//! in the order they were made, and an error that ended them after the batches before it.
//!
//! The thread stays at most [`HANDOVERS_IN_FLIGHT`] batches ahead, batches of
//! [`handover_len`] items, so memory stays bounded. Dropping the handover closes the channel,
//! which makes the thread's next send fail, and waits for the thread.

use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;

use crate::error::{Error, Result};

/// Items in the first batch a thread hands over: few, so that a run starts at once.
pub const FIRST_HANDOVER: usize = 1024;

/// Items in the largest batch a thread hands over (384 KiB of requests).
pub const LARGEST_HANDOVER: usize = 16_384;

/// Batches a thread may be ahead of the simulation.
pub const HANDOVERS_IN_FLIGHT: usize = 2;

/// Items in batch `index` (from 0) a thread hands over: [`FIRST_HANDOVER`], then twice as
/// many each time up to [`LARGEST_HANDOVER`]. A thread that is ahead waits for room in the
/// channel, and each batch taken wakes it again (a system call, and an interrupt to the other
/// core): with 1,024 items a batch all along, the wake-ups took back most of what a drawing
/// thread saved, and a trace replay ran 4-8 % slower than with 16,384.
pub(crate) fn handover_len(index: u32) -> usize {
    (FIRST_HANDOVER << index.min(LARGEST_HANDOVER.ilog2() - FIRST_HANDOVER.ilog2())).min(LARGEST_HANDOVER)
}

/// What the thread sends.
enum Message<T> {
    /// The next items, in order (never empty).
    Batch(Vec<T>),
    /// The end, or the error that ended the items (after the batches before it).
    End(Result<()>),
}

/// Batches of `T` made on a thread of their own.
pub(crate) struct Handover<T> {
    /// `None` once the end (or an error) has been received.
    receiver: Option<Receiver<Message<T>>>,
    thread: Option<JoinHandle<()>>,
    /// What the thread does, for the error if it stops without saying why ("reading
    /// trace.spc").
    doing: String,
}

impl<T: Send + 'static> Handover<T> {
    /// Start a thread named `name` that fills batch after batch with `fill(batch, len)`: it
    /// pushes at most `len` items, and returns `None` to go on, or `Some` with the end (or
    /// the error that ended the items) once there are no more. `doing` says what the thread
    /// does, for the error if it stops without saying why.
    pub fn start(
        name: &str,
        doing: String,
        mut fill: impl FnMut(&mut Vec<T>, usize) -> Option<Result<()>> + Send + 'static,
    ) -> std::io::Result<Self> {
        let (sender, receiver) = sync_channel(HANDOVERS_IN_FLIGHT);
        let thread = std::thread::Builder::new().name(name.into()).spawn(move || {
            for index in 0.. {
                let len = handover_len(index);
                let mut batch = Vec::with_capacity(len);
                let end = fill(&mut batch, len);
                if !batch.is_empty() && sender.send(Message::Batch(batch)).is_err() {
                    return;
                }
                if let Some(end) = end {
                    let _ = sender.send(Message::End(end));
                    return;
                }
            }
        })?;
        Ok(Handover { receiver: Some(receiver), thread: Some(thread), doing })
    }

    /// The next batch (never empty), `None` at the end; the error that ended the items once
    /// the batches before it are received.
    pub fn receive(&mut self) -> Result<Option<Vec<T>>> {
        let Some(receiver) = &self.receiver else { return Ok(None) };
        match receiver.recv() {
            Ok(Message::Batch(batch)) => Ok(Some(batch)),
            Ok(Message::End(end)) => {
                self.receiver = None;
                end.map(|()| None)
            }
            // The thread ended without saying why: it panicked (its message is on stderr).
            Err(_) => {
                self.receiver = None;
                Err(Error::Invariant(format!("the thread {} stopped unexpectedly", self.doing)))
            }
        }
    }
}

impl<T> Drop for Handover<T> {
    fn drop(&mut self) {
        // Closing the channel makes the thread's next send fail, and it returns.
        self.receiver = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches grow from the first size to the largest, and stay there.
    #[test]
    fn handed_over_batches_double_up_to_the_largest() {
        let lens: Vec<usize> = (0..8).map(handover_len).collect();
        assert_eq!(lens[0], FIRST_HANDOVER);
        assert!(lens.windows(2).all(|w| w[1] == (2 * w[0]).min(LARGEST_HANDOVER)));
        assert_eq!(*lens.last().unwrap(), LARGEST_HANDOVER);
        assert_eq!(handover_len(u32::MAX), LARGEST_HANDOVER);
    }

    /// The batches arrive whole and in order, then the end or the error; a thread that
    /// panics is an error naming what it did; dropping the handover early stops a thread that
    /// would go on for ever (the test would hang otherwise).
    #[test]
    fn batches_arrive_in_order_then_the_end() {
        for error in [false, true] {
            let mut next = 0u64;
            let mut handover = Handover::start("test", "counting".into(), move |batch: &mut Vec<u64>, len| {
                while batch.len() < len && next < 5000 {
                    batch.push(next);
                    next += 1;
                }
                (next == 5000).then(|| if error { Err(Error::Invariant("stop".into())) } else { Ok(()) })
            })
            .unwrap();
            let mut all = Vec::new();
            let end = loop {
                match handover.receive() {
                    Ok(Some(batch)) => {
                        assert!(!batch.is_empty());
                        all.extend(batch);
                    }
                    other => break other,
                }
            };
            assert_eq!(all, (0..5000).collect::<Vec<_>>());
            assert_eq!(end.is_err(), error);
            assert!(matches!(handover.receive(), Ok(None)));
        }
        let mut panics = Handover::<u64>::start("test", "panicking".into(), |_, _| panic!("on purpose")).unwrap();
        assert!(panics.receive().unwrap_err().to_string().contains("the thread panicking stopped unexpectedly"));
        let mut endless = Handover::start("test", "counting".into(), |batch: &mut Vec<u64>, len| {
            batch.resize(len, 7);
            None
        })
        .unwrap();
        assert_eq!(endless.receive().unwrap().unwrap().len(), FIRST_HANDOVER);
        drop(endless);
    }
}
