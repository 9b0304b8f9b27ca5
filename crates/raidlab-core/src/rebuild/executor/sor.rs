//! SOR, stripe-oriented reconstruction (Holland's single- and parallel-stripe reconstruction,
//! as PRO §2.1 and Fu §1 describe it): `parallel_units` units at a time, each read from every
//! surviving drive, XORed, and written to the target before the next takes its place.

use super::Executor;
use crate::array::rebuild_io::RebuildEvent;
use crate::rebuild::{Ctx, RebuildConfig};

pub const DOC: &str = "stripe-oriented: P units at a time, each read from every survivor and written before the next";

struct Active {
    job: u32,
    /// Sources whose read is issued, and how many reads are back.
    issued: Vec<bool>,
    reads_back: usize,
}

/// Stripe-oriented reconstruction.
pub struct Sor {
    parallel: usize,
    active: Vec<Active>,
    /// The rebuild's source slots, read once when it starts.
    sources: Vec<u32>,
    exhausted: bool,
}

impl Sor {
    pub fn boxed(config: &RebuildConfig) -> Box<dyn Executor> {
        Box::new(Sor { parallel: config.parallel_units as usize, active: Vec::new(), sources: Vec::new(), exhausted: false })
    }
}

impl Executor for Sor {
    fn pump(&mut self, ctx: &mut Ctx<'_>) {
        if self.sources.is_empty() {
            self.sources = ctx.sources();
        }
        while self.active.len() < self.parallel && !self.exhausted {
            match ctx.claim_next() {
                Some((job, _)) => {
                    self.active.push(Active { job, issued: vec![false; self.sources.len()], reads_back: 0 });
                }
                None => self.exhausted = true,
            }
        }
        for a in &mut self.active {
            if !ctx.controller.job_locked(a.job) {
                continue;
            }
            for (i, &drive) in self.sources.iter().enumerate() {
                if !a.issued[i] && ctx.try_read(a.job, drive) {
                    a.issued[i] = true;
                }
            }
        }
    }

    fn on_event(&mut self, event: RebuildEvent, ctx: &mut Ctx<'_>) {
        match event {
            RebuildEvent::Read { job, ok: true, .. } => {
                if let Some(a) = self.active.iter_mut().find(|a| a.job == job) {
                    a.reads_back += 1;
                    if a.reads_back == a.issued.len() {
                        ctx.write(job);
                    }
                }
            }
            RebuildEvent::Written { job, .. } | RebuildEvent::Read { job, ok: false, .. } => {
                self.active.retain(|a| a.job != job);
                // A unit given back may be claimed again.
                self.exhausted = false;
            }
            // A unit given back once its job drained: it may be claimed again.
            RebuildEvent::Released { .. } => self.exhausted = false,
            _ => {}
        }
        self.pump(ctx);
    }

    fn reset(&mut self) {
        self.active.clear();
        self.sources.clear();
        self.exhausted = false;
    }
}
