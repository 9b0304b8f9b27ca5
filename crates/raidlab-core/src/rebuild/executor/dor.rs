//! DOR, disk-oriented reconstruction (Holland; PRO §3.3; Fu §1): one process per surviving
//! drive, each with one rebuild read outstanding, reading the units in one common sequence
//! into its buffer; a unit read from every survivor is XORed and written to the target by the
//! writer, which frees its buffers. A process whose buffer is full blocks.
//!
//! Buffers (`rebuild.buffer`): `per_drive`, B units per survivor (Fu: "buffer size per disk B
//! specified as number of tracks"; a slot is freed when the unit has been read on all
//! survivors, notes B1.2); or `shared`, a pool of B units for the array, one per unit in
//! progress, with no process more than `head_separation_units` ahead of the slowest
//! (RAIDframe's floating buffers).

use std::collections::VecDeque;

use super::Executor;
use crate::array::rebuild_io::RebuildEvent;
use crate::rebuild::{BufferModel, Ctx, RebuildConfig};

pub const DOC: &str = "disk-oriented: one process per survivor, one read outstanding each, into per-drive or shared buffers";

/// A unit in the common sequence.
struct Entry {
    job: u32,
    reads_back: usize,
}

/// Disk-oriented reconstruction.
pub struct Dor {
    buffer: BufferModel,
    buffer_units: u64,
    head_separation: u64,
    /// The common sequence of units in progress; `base` is the sequence number of its front.
    seq: VecDeque<Entry>,
    base: u64,
    /// Per source (in the rebuild's source order): the sequence number it reads next,
    /// whether its read is outstanding, and the units it holds in its buffer.
    cursor: Vec<u64>,
    reading: Vec<bool>,
    buffered: Vec<u64>,
    sources: Vec<u32>,
    exhausted: bool,
}

impl Dor {
    pub fn boxed(config: &RebuildConfig) -> Box<dyn Executor> {
        Box::new(Dor {
            buffer: config.buffer,
            buffer_units: config.buffer_units as u64,
            head_separation: config.head_separation_units as u64,
            seq: VecDeque::new(),
            base: 0,
            cursor: Vec::new(),
            reading: Vec::new(),
            buffered: Vec::new(),
            sources: Vec::new(),
            exhausted: false,
        })
    }

    fn end(&self) -> u64 {
        self.base + self.seq.len() as u64
    }

    /// Whether source `i` may start reading sequence number `c`.
    fn has_room(&self, i: usize, c: u64) -> bool {
        match self.buffer {
            BufferModel::PerDrive => self.buffered[i] < self.buffer_units,
            BufferModel::Shared => {
                let slowest = self.cursor.iter().copied().min().unwrap_or(c);
                c - slowest < self.head_separation && (c < self.end() || (self.seq.len() as u64) < self.buffer_units)
            }
        }
    }
}

impl Executor for Dor {
    fn pump(&mut self, ctx: &mut Ctx<'_>) {
        if self.sources.is_empty() {
            self.sources = ctx.sources();
            let n = self.sources.len();
            self.cursor = vec![self.base; n];
            self.reading = vec![false; n];
            self.buffered = vec![0; n];
        }
        for i in 0..self.sources.len() {
            if self.reading[i] {
                continue;
            }
            let c = self.cursor[i];
            if !self.has_room(i, c) {
                continue;
            }
            if c == self.end() {
                if self.exhausted {
                    continue;
                }
                match ctx.claim_next() {
                    Some((job, _)) => self.seq.push_back(Entry { job, reads_back: 0 }),
                    None => {
                        self.exhausted = true;
                        continue;
                    }
                }
            }
            let job = self.seq[(c - self.base) as usize].job;
            if !ctx.controller.job_locked(job) {
                continue;
            }
            if ctx.try_read(job, self.sources[i]) {
                self.reading[i] = true;
                self.cursor[i] += 1;
                self.buffered[i] += 1;
            }
        }
    }

    fn on_event(&mut self, event: RebuildEvent, ctx: &mut Ctx<'_>) {
        match event {
            RebuildEvent::Read { job, drive, ok: true } => {
                if let Some(i) = self.sources.iter().position(|&s| s == drive) {
                    self.reading[i] = false;
                }
                if let Some(k) = self.seq.iter().position(|e| e.job == job) {
                    self.seq[k].reads_back += 1;
                    if self.seq[k].reads_back == self.sources.len() {
                        // Read everywhere: XORed, written, and its buffers free.
                        ctx.write(job);
                        for b in &mut self.buffered {
                            *b -= 1;
                        }
                    }
                }
                while self.seq.front().is_some_and(|e| e.reads_back == self.sources.len()) {
                    self.seq.pop_front();
                    self.base += 1;
                }
            }
            RebuildEvent::Read { ok: false, .. } | RebuildEvent::Written { ok: false, .. } => {
                // Only when a drive failed under the rebuild, which abandons it.
                self.reset();
                return;
            }
            _ => {}
        }
        self.pump(ctx);
    }

    fn reset(&mut self) {
        self.seq.clear();
        self.base = 0;
        self.sources.clear();
        self.cursor.clear();
        self.reading.clear();
        self.buffered.clear();
        self.exhausted = false;
    }
}
