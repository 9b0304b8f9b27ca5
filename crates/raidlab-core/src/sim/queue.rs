//! The event queue: a binary heap ordered by (time, insertion sequence).
//!
//! Ties in time break by insertion order, so a run is deterministic without any reliance on
//! heap internals. Events are small `Copy` values; the heap's storage is reused, so the hot
//! loop allocates nothing once the heap has grown to its working size.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::time::Nanos;

// 16-byte alignment makes the heap's element moves aligned 16-byte copies; unaligned,
// `BinaryHeap::pop` stalls on a partially overlapping store-to-load forward.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(16))]
struct Entry<E> {
    time: Nanos,
    sequence: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.sequence == other.sequence
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the earliest (time, sequence) pops first.
        (other.time, other.sequence).cmp(&(self.time, self.sequence))
    }
}

/// A deterministic future-event list.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_sequence: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), next_sequence: 0 }
    }

    /// Schedule `event` at absolute time `time` (ns).
    #[inline]
    pub fn push(&mut self, time: Nanos, event: E) {
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        self.heap.push(Entry { time, sequence, event });
    }

    /// Remove and return the earliest event with its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }

    /// Time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|e| e.time)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_and_breaks_ties_by_insertion() {
        let mut q = EventQueue::new();
        q.push(30, 'c');
        q.push(10, 'a');
        q.push(30, 'd');
        q.push(10, 'b');
        q.push(20, 'x');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'x', 'c', 'd']);
    }
}
