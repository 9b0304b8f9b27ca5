//! DOR, disk-oriented reconstruction (Holland; PRO §3.3; Fu §1): one process per surviving
//! drive, each with one rebuild read outstanding, reading the units in one common sequence
//! into its buffer; a unit read from every survivor is XORed and written to the target by the
//! writer, which frees its buffers. A process whose buffer is full blocks. A source that holds
//! nothing of a unit (a declustered layout spreads each unit over a few of its sources) passes
//! over it at once: no read, no event, no buffer slot, nothing told to the discipline.
//!
//! Buffers (`rebuild.buffer`): `per_drive`, B units per survivor (Fu: "buffer size per disk B
//! specified as number of tracks"; a slot is freed when the unit has been read on all
//! survivors, notes B1.2); or `shared`, a pool of B units for the array, one per unit in
//! progress, with no process more than `head_separation_units` ahead of the slowest
//! (RAIDframe's floating buffers).
//!
//! A user write that waits for a unit in progress *forces* it (RAIDframe's
//! `rf_ForceOrBlockRecon`): the survivors that have not read it yet read it at once, at user
//! priority, and skip it when their own sequence reaches it. Without this a write would wait
//! until the slowest survivor's process got there, as much as B units later.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::Executor;
use crate::array::rebuild_io::RebuildEvent;
use crate::rebuild::{BufferModel, Ctx, ReadStart, RebuildConfig};
use crate::sim::Nanos;

pub const DOC: &str = "disk-oriented: one process per survivor, one read outstanding each, into per-drive or shared buffers";

/// Where a source stands with a unit of the common sequence.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Share {
    /// Its read is not issued yet.
    Pending,
    /// Its read is issued (by its process or forced): it holds a buffer slot until the unit
    /// is read everywhere.
    Issued,
    /// It holds nothing of the unit (a declustered layout's unit lies on a few sources): read
    /// back at once, with no I/O and no buffer.
    Nothing,
}

/// A unit in the common sequence.
struct Entry {
    job: u32,
    reads_back: usize,
    /// Per source.
    shares: Vec<Share>,
}

/// Disk-oriented reconstruction.
pub struct Dor {
    buffer: BufferModel,
    buffer_units: u64,
    head_separation: u64,
    /// The common sequence of units in progress; `base` is the sequence number of its front.
    seq: VecDeque<Entry>,
    base: u64,
    /// Per source (in the rebuild's source order): the sequence number it reads next, the
    /// job of its process's outstanding read, and the units it holds in its buffer.
    cursor: Vec<u64>,
    reading: Vec<Option<u32>>,
    buffered: Vec<u64>,
    sources: Vec<u32>,
    /// The source index of every drive slot (`u32::MAX` for none).
    source_of_slot: Vec<u32>,
    /// The sequence number of each job still waiting for reads (a job's id is reused once
    /// its unit is done).
    entry_of: FxHashMap<u32, u64>,
    exhausted: bool,
    /// Per source: since when its process has been blocked on a full buffer (it has units
    /// left to read, no read outstanding, and no room), if it is.
    blocked_since: Vec<Option<Nanos>>,
    /// Per drive slot, over the run's rebuilds: ns its process spent blocked on a full buffer.
    blocked_ns_by_slot: Vec<u64>,
    /// The time of the last pump, which closes the blocked intervals still open at a reset.
    last_now: Nanos,
    /// Units claimed, and the sources holding a piece of them, summed: while some unit lies
    /// on fewer than all sources, they bound the sequence (see [`Dor::sequence_full`]).
    claimed: u64,
    pieces: u64,
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
            source_of_slot: Vec::new(),
            entry_of: FxHashMap::default(),
            exhausted: false,
            blocked_since: Vec::new(),
            blocked_ns_by_slot: Vec::new(),
            last_now: 0,
            claimed: 0,
            pieces: 0,
        })
    }

    fn end(&self) -> u64 {
        self.base + self.seq.len() as u64
    }

    /// The index in `seq` of job `job`'s entry, while it waits for reads. (A unit forced
    /// ahead of the ones before it completes out of order and stays in the sequence until
    /// they do; its job's id may by then belong to a new unit further on.)
    fn live_entry(&self, job: u32) -> Option<usize> {
        self.entry_of.get(&job).map(|&c| (c - self.base) as usize)
    }

    /// One more source has read entry `k` (or holds nothing of it). Once every source has,
    /// the unit is XORed and written, and the sources that read it free their buffer slots.
    fn read_back(&mut self, k: usize, ctx: &mut Ctx<'_>) {
        let entry = &mut self.seq[k];
        entry.reads_back += 1;
        if entry.reads_back == self.sources.len() {
            self.entry_of.remove(&entry.job);
            ctx.write(entry.job);
            for (buffered, share) in self.buffered.iter_mut().zip(&entry.shares) {
                if *share == Share::Issued {
                    *buffered -= 1;
                }
            }
        }
    }

    /// Units read everywhere leave the front of the sequence; a source whose cursor fell
    /// behind the front had its units forced or passed over.
    fn drop_done_front(&mut self) {
        let before = self.base;
        while self.seq.front().is_some_and(|e| e.reads_back == self.sources.len()) {
            self.seq.pop_front();
            self.base += 1;
        }
        if self.base != before {
            for c in &mut self.cursor {
                *c = (*c).max(self.base);
            }
        }
    }

    /// Source `i` is not blocked on its buffer (any more) at `now`.
    fn unblock(&mut self, i: usize, now: Nanos) {
        if let Some(since) = self.blocked_since[i].take() {
            self.blocked_ns_by_slot[self.sources[i] as usize] += now - since;
        }
    }

    /// Whether the sequence holds as many units as the buffers can: with per-drive buffers
    /// the sources hold `buffer_units` units each, n·B slots in all, and a unit takes one
    /// slot on each source that holds a piece of it, k on average, so n·B/k units. Where
    /// every unit lies on every source (k = n) a source's own buffer bounds it first and this
    /// never binds; where units lie on a few sources (declustering, dRAID), a source that
    /// holds nothing of the units it claims would otherwise claim without end.
    fn sequence_full(&self) -> bool {
        let n = self.sources.len() as u64;
        self.pieces < self.claimed * n
            && (self.seq.len() as u64) * self.pieces >= self.buffer_units * n * self.claimed
    }

    /// Whether source `i` may start reading sequence number `c`.
    fn has_room(&self, i: usize, c: u64) -> bool {
        match self.buffer {
            BufferModel::PerDrive => self.buffered[i] < self.buffer_units && (c < self.end() || !self.sequence_full()),
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
            self.reading = vec![None; n];
            self.buffered = vec![0; n];
            self.blocked_since = vec![None; n];
            let slots = self.sources.iter().max().map_or(0, |&m| m as usize + 1);
            self.source_of_slot = vec![u32::MAX; slots];
            for (i, &slot) in self.sources.iter().enumerate() {
                self.source_of_slot[slot as usize] = i as u32;
            }
            if self.blocked_ns_by_slot.len() < slots {
                self.blocked_ns_by_slot.resize(slots, 0);
            }
        }
        self.last_now = ctx.now;
        for i in 0..self.sources.len() {
            if self.reading[i].is_some() {
                continue;
            }
            // Each pass either issues the source's read, stops it, or passes over a unit it
            // holds nothing of and looks at the next.
            loop {
                // Units a forced read already took, or it holds nothing of, are passed over.
                while self.cursor[i] < self.end() && self.seq[(self.cursor[i] - self.base) as usize].shares[i] != Share::Pending {
                    self.cursor[i] += 1;
                }
                let c = self.cursor[i];
                if !self.has_room(i, c) {
                    // Blocked only while it has units left to read: at the end of the
                    // sequence, with nothing more to claim, it is done, not blocked.
                    if self.blocked_since[i].is_none() && (c < self.end() || !self.exhausted) {
                        self.blocked_since[i] = Some(ctx.now);
                    }
                    break;
                }
                self.unblock(i, ctx.now);
                if c == self.end() {
                    if self.exhausted {
                        break;
                    }
                    match ctx.claim_next() {
                        Some((job, _)) => {
                            let n = self.sources.len();
                            self.claimed += 1;
                            self.pieces += ctx.controller.job_read_slot_count(job).map_or(n, |k| k.min(n)) as u64;
                            let shares = vec![Share::Pending; n];
                            self.entry_of.insert(job, self.end());
                            self.seq.push_back(Entry { job, reads_back: 0, shares });
                        }
                        None => {
                            self.exhausted = true;
                            break;
                        }
                    }
                }
                let k = (c - self.base) as usize;
                let job = self.seq[k].job;
                if !ctx.controller.job_locked(job) {
                    break;
                }
                match ctx.try_read_or_pass(job, self.sources[i]) {
                    ReadStart::Issued => {
                        self.reading[i] = Some(job);
                        self.seq[k].shares[i] = Share::Issued;
                        self.cursor[i] += 1;
                        self.buffered[i] += 1;
                        break;
                    }
                    ReadStart::Refused => break,
                    ReadStart::Nothing => {
                        self.seq[k].shares[i] = Share::Nothing;
                        self.cursor[i] += 1;
                        self.read_back(k, ctx);
                    }
                }
            }
        }
        self.drop_done_front();
    }

    fn on_event(&mut self, event: RebuildEvent, ctx: &mut Ctx<'_>) {
        match event {
            RebuildEvent::Read { job, drive, ok: true } => {
                if let Some(&i) = self.source_of_slot.get(drive as usize).filter(|&&i| i != u32::MAX) {
                    if self.reading[i as usize] == Some(job) {
                        self.reading[i as usize] = None;
                    }
                }
                if let Some(k) = self.live_entry(job) {
                    self.read_back(k, ctx);
                }
                self.drop_done_front();
            }
            RebuildEvent::Force { job } => {
                if let Some(k) = self.live_entry(job) {
                    if ctx.controller.job_locked(job) {
                        for i in 0..self.sources.len() {
                            if self.seq[k].shares[i] != Share::Pending {
                                continue;
                            }
                            if ctx.controller.job_read_sectors(job, self.sources[i]).is_none() {
                                self.seq[k].shares[i] = Share::Nothing;
                                self.read_back(k, ctx);
                            } else {
                                self.seq[k].shares[i] = Share::Issued;
                                self.buffered[i] += 1;
                                ctx.force_read(job, self.sources[i]);
                            }
                        }
                        self.drop_done_front();
                    }
                }
            }
            // A unit given back once its job drained: it may be claimed again.
            RebuildEvent::Released { .. } => self.exhausted = false,
            RebuildEvent::Read { ok: false, .. } | RebuildEvent::Written { ok: false, .. } => {
                // Only when a drive failed under the rebuild, which abandons it.
                self.reset();
                return;
            }
            _ => {}
        }
        self.pump(ctx);
    }

    fn blocked_ns_by_slot(&self) -> &[u64] {
        &self.blocked_ns_by_slot
    }

    fn reset(&mut self) {
        for i in 0..self.blocked_since.len() {
            self.unblock(i, self.last_now);
        }
        self.blocked_since.clear();
        self.seq.clear();
        self.base = 0;
        self.sources.clear();
        self.source_of_slot.clear();
        self.entry_of.clear();
        self.cursor.clear();
        self.reading.clear();
        self.buffered.clear();
        self.exhausted = false;
        self.claimed = 0;
        self.pieces = 0;
    }
}
