//! The rebuild lifecycle: which failed member is rebuilt onto which spare, and when.
//!
//! Failed members wait in failure order (an abandoned rebuild's member first), each from the
//! time its `rebuild.delay_s` has passed; spares wait in slot order, each from the time its
//! own delay has passed after it arrived. One rebuild runs at a time: when none does, the
//! first ready member whose data survives is rebuilt onto the first ready spare. The engine
//! only says *when* to look ([`Controller::next_rebuild`]); the decisions and the reasons a
//! member is not being rebuilt are here, on the [`super::state::ArrayState`] they read.

use crate::request::Origin;
use crate::sim::Nanos;

use super::locks::StripeLocks;
use super::state::SlotRole;
use super::Controller;

/// A request a crash caught in flight: it is never answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrashedRequest {
    pub id: u64,
    pub origin: Origin,
    /// When it arrived, ns.
    pub arrival: Nanos,
    pub is_write: bool,
}

impl Controller {
    /// Spare slot `slot` is present and may be rebuilt onto from `ready_at` (ns).
    pub fn add_spare(&mut self, slot: u32, ready_at: Nanos) {
        debug_assert_eq!(self.state.role(slot), SlotRole::Spare);
        self.state.spare_pool.push((slot, ready_at));
    }

    /// Member `member` failed at `now`; with a `[rebuild]` table its rebuild may start from
    /// `ready_at` (`None` without one: it stays failed).
    pub fn member_failed(&mut self, member: u32, now: Nanos, ready_at: Option<Nanos>) {
        self.state.member_failed_at[member as usize] = Some(now);
        if let Some(ready) = ready_at {
            // Whether it can be rebuilt (a source survives) is asked when a spare is free: a
            // member whose data is lost waits, and is reported so at the end.
            self.state.waiting_members.push((member, ready));
        }
    }

    /// Slot `slot` failed: a spare in the pool leaves it.
    pub(super) fn spare_failed(&mut self, slot: u32) {
        self.state.spare_pool.retain(|&(s, _)| s != slot);
    }

    /// The rebuild of `member` onto `target` was abandoned: the member is first in line to
    /// start again, on the next spare, if a source of its data survives (asked when it
    /// starts). A target that still works is not a spare again ([`SlotRole::Retired`]).
    pub(super) fn rebuild_abandoned(&mut self, member: u32, target: u32) {
        self.state.waiting_members.insert(0, (member, 0));
        self.state.roles[target as usize] = SlotRole::Retired;
    }

    /// The rebuild to start now, as (member, target slot), if none runs: the first waiting
    /// member that is ready and can be rebuilt, onto the first ready spare.
    pub fn next_rebuild(&self, now: Nanos) -> Option<(u32, u32)> {
        if self.state.rebuild.is_some() {
            return None;
        }
        self.state.waiting_members.iter().filter(|&&(m, ready)| ready <= now && self.can_rebuild(m)).find_map(|&(member, _)| {
            let &(target, _) = self.state.spare_pool.iter().find(|&&(slot, ready)| ready <= now && self.spare_serves(slot, member))?;
            Some((member, target))
        })
    }

    /// The healing copy to start now, as (member, target slot), if nothing rebuilds and no
    /// member is failed: the first member living in a distributed spare, onto the first
    /// ready spare that is a drive of its own (a replacement that arrived, or a hot spare).
    /// Failed members come first: their rebuild restores redundancy, a healing copy only
    /// frees the distributed spare.
    pub fn next_healing(&self, now: Nanos) -> Option<(u32, u32)> {
        if self.state.rebuild.is_some() || !self.state.failed_members.is_empty() {
            return None;
        }
        let member = self.member_in_distributed_spare()?;
        let &(target, _) = self.state.spare_pool.iter().find(|&&(slot, ready)| ready <= now && !self.state.is_distributed_spare(slot))?;
        Some((member, target))
    }

    /// Whether a healing copy may start, now or once a spare is ready: a member lives in a
    /// distributed spare, a drive of its own is in the pool (or `arriving`: one is to come),
    /// and no member is failed.
    pub fn healing_may_start(&self, arriving: bool) -> bool {
        self.state.failed_members.is_empty()
            && self.member_in_distributed_spare().is_some()
            && (arriving || self.state.spare_pool.iter().any(|&(slot, _)| !self.state.is_distributed_spare(slot)))
    }

    /// The first member (by slot) living in a distributed spare.
    fn member_in_distributed_spare(&self) -> Option<u32> {
        if self.state.first_distributed_spare >= self.state.slots() {
            return None;
        }
        (self.state.first_distributed_spare..self.state.slots()).find_map(|slot| self.state.member_in_slot(slot))
    }

    /// Slot `slot`, working and holding no member, is a spare again from `ready_at` (ns):
    /// back in the pool where it belongs, distributed spares first, each kind in slot order.
    pub(super) fn return_spare(&mut self, slot: u32, ready_at: Nanos) {
        self.state.roles[slot as usize] = SlotRole::Spare;
        let key = |s: u32| (!self.state.is_distributed_spare(s), s);
        let at = self.state.spare_pool.iter().position(|&(s, _)| key(s) > key(slot)).unwrap_or(self.state.spare_pool.len());
        self.state.spare_pool.insert(at, (slot, ready_at));
    }

    /// Whether spare slot `slot` can take member `member`'s rebuild: a distributed spare
    /// only while no other member is failed, since its sectors lie in every member's free
    /// columns (a failed member's columns of it are gone).
    fn spare_serves(&self, slot: u32, member: u32) -> bool {
        !self.state.is_distributed_spare(slot) || self.state.failed_members.iter().all(|&m| m == member)
    }

    /// The member a distributed spare slot `slot` holds or is being rebuilt into, if any.
    pub fn distributed_spare_member(&self, slot: u32) -> Option<u32> {
        if !self.state.is_distributed_spare(slot) {
            return None;
        }
        self.state.member_in_slot(slot).or(self.state.rebuild.as_deref().filter(|r| r.target == slot).map(|r| r.member))
    }

    /// The rebuild of `member` onto `target` started: both leave their queues.
    pub(super) fn rebuild_taken(&mut self, member: u32, target: u32) {
        self.state.spare_pool.retain(|&(s, _)| s != target);
        self.state.waiting_members.retain(|&(m, _)| m != member);
    }

    /// Whether a rebuild may still start: a spare is in the pool (ready now or later) and a
    /// waiting member can be rebuilt.
    pub fn another_rebuild_may_start(&self) -> bool {
        !self.state.spare_pool.is_empty() && self.state.waiting_members.iter().any(|&(m, _)| self.can_rebuild(m))
    }

    /// Why failed member `member` is not being rebuilt at `now` (`rebuilds` says whether the
    /// run has a `[rebuild]` table).
    pub fn why_not_rebuilt(&self, member: u32, now: Nanos, rebuilds: bool) -> &'static str {
        let waiting = self.state.waiting_members.iter().find(|&&(m, _)| m == member);
        if !rebuilds {
            "the run has no [rebuild] table"
        } else if !self.can_rebuild(member) {
            "no surviving source holds its data: it is lost"
        } else if waiting.is_some_and(|&(_, ready)| ready > now) {
            "its rebuild.delay_s had not passed when the run ended"
        } else if self.state.rebuild.is_some() {
            "another member's rebuild was running when the run ended (one rebuild runs at a time)"
        } else if self.state.spare_pool.is_empty() {
            "no spare was left to rebuild it onto"
        } else if self.state.spare_pool.iter().all(|&(slot, _)| !self.spare_serves(slot, member)) {
            "the spares left are distributed spares, whose space lies partly on another failed member"
        } else {
            "the spare's rebuild.delay_s had not passed when the run ended"
        }
    }

    /// The failed members not being rebuilt at `now`, each with why.
    pub fn members_not_rebuilt(&self, now: Nanos, rebuilds: bool) -> Vec<(u32, &'static str)> {
        let rebuilding = self.state.rebuild.as_deref().map(|r| r.member);
        self.state
            .failed_members
            .iter()
            .copied()
            .filter(|&m| Some(m) != rebuilding)
            .map(|m| (m, self.why_not_rebuilt(m, now, rebuilds)))
            .collect()
    }

    /// The controller crashed and restarts at once: everything it held only in memory is
    /// lost. Returns the requests in flight, which are never answered (a request already
    /// answered while the rest of its plan ran is not among them). The caller drops the
    /// drives' queued operations, whose completions must not come back. A write caught in
    /// flight leaves the drives as far as it got (the content model adopts what they hold);
    /// a rebuild's units in flight are unrebuilt again, its progress kept; the layout's
    /// placement state loses what it declares volatile.
    pub fn crash(&mut self) -> Vec<CrashedRequest> {
        let mut crashed = Vec::new();
        let live_request = super::live_entries(self.requests.len(), &self.free_requests);
        let live_piece = super::live_entries(self.pieces.len(), &self.free_pieces);
        // Writes caught in flight: the content model takes what the drives hold.
        if let Some(content) = self.content.as_mut() {
            let per_stripe = self.stripe_data_sectors.size;
            let placement = self.state.placement.as_deref();
            let kept = |lba: u64| placement.is_some_and(|p| p.keeps_value(lba));
            // A unit the rebuild has made current lives on its target (a write reaches it
            // there).
            let rebuild = self.state.rebuild.as_deref().filter(|r| !r.healing);
            let at = |drive: u32, pba: u64| match rebuild {
                Some(r) if r.member_slot == drive && pba < r.units.capacity() && r.states.get(r.units.unit_of(pba)) == super::state::UnitState::Rebuilt => r.target,
                _ => drive,
            };
            for (i, p) in self.pieces.iter().enumerate() {
                let Some(spec) = p.spec.filter(|s| live_piece[i] && s.is_write) else { continue };
                content.adopt_interrupted_write(self.layout.as_ref(), p.stripe * per_stripe + spec.first, spec.sectors, &kept, &at);
            }
        }
        // The layout's state learns which writes were caught, and how far each got.
        if let Some(placement) = self.state.placement.as_deref_mut() {
            for (i, p) in self.pieces.iter_mut().enumerate() {
                if p.spec.is_some_and(|s| live_piece[i] && s.is_write) && (p.phase > 0 || p.outstanding > 0 || p.rewrote) {
                    // (Its rows, as the content model has them for every plan.)
                    p.plan.fill_touched();
                    placement.interrupted(p.stripe, &p.plan, p.phase, self.requests[p.request as usize].write_id);
                }
            }
        }
        for (i, r) in self.requests.iter().enumerate() {
            if live_request[i] && r.pieces_left > 0 {
                crashed.push(CrashedRequest { id: r.id, origin: r.origin, arrival: r.arrival, is_write: r.is_write });
            }
        }
        let live_one_op = super::live_entries(self.one_ops.len(), &self.free_one_ops);
        for (i, op) in self.one_ops.iter().enumerate() {
            if live_one_op[i] {
                crashed.push(CrashedRequest { id: op.id, origin: op.origin, arrival: op.arrival, is_write: op.is_write });
            }
        }
        let healing = self.state.rebuild.as_deref().is_some_and(|r| r.healing);
        self.forget_jobs();
        self.pieces.clear();
        self.free_pieces.clear();
        self.requests.clear();
        self.free_requests.clear();
        self.one_ops.clear();
        self.free_one_ops.clear();
        self.locks = StripeLocks::default();
        self.ready.clear();
        self.granted.clear();
        self.outbox.clear();
        self.completed.clear();
        self.rebuild_events.clear();
        self.in_flight_requests = 0;
        // (The CPU's work in hand went with the pieces; the restarted controller's is free.)
        self.cpu_delayed.clear();
        self.cpu_free_at = 0;
        // A re-sync in flight went with the rest; the placement state may ask for another.
        self.resyncs_in_flight = 0;
        self.resync_wanted = true;
        if let Some(placement) = self.state.placement.as_deref_mut() {
            placement.lose_volatile();
        }
        self.lose_unrecoverable();
        if healing {
            self.abandon_rebuild(super::rebuild_io::AbandonReason::HealingCrashed);
        }
        crashed.sort_by_key(|c| c.id);
        crashed
    }
}
