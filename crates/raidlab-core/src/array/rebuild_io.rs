//! The controller's side of a rebuild: the lost member's rebuild units, the jobs that make
//! them current on the target, and what user requests do while it runs.
//!
//! A **job** rebuilds one rebuild unit. It claims the unit, takes a *shared* lock on every
//! stripe with a unit in it (in increasing stripe order, so that two jobs never wait for
//! each other), reads the unit's sectors from each source member, and writes the XOR (or the
//! copy) to the target; the unit is then rebuilt and the locks go. User reads share the
//! locks; user writes of those stripes wait, so the sources a job reads are never half
//! updated. Which unit, which source when and at which priority is the rebuild policy's
//! choice (`crate::rebuild`); the controller only carries it out and reports back through
//! [`RebuildEvent`]s.
//!
//! While a member is rebuilt, a piece whose stripe has a unit on it sees that unit on the
//! target: readable when every rebuild unit under it is current (and reads are redirected,
//! or the piece writes), else *write-only*: read by reconstruction, but every write of its
//! rows is also written to the target. A write that covers a whole unrebuilt rebuild unit
//! makes it current.

use crate::content::rules::Access;
use crate::layout::StripeMap;
use crate::disk::{OpKind, Priority};
use crate::error::{Error, Result};

use super::locks::NONE;
use super::state::{RebuildUnits, UnitState, UnitStates};
use super::jobs::{JobId, JobKind, OpToken};
use super::state::SlotRole;
use super::{Controller, IssuedOp};

/// Op index of a job's write to the target in its tokens (reads carry the source slot).
const TARGET_WRITE: u32 = u32::MAX;

/// Who made a rebuild unit current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MadeCurrentBy {
    /// The rebuild executor's job.
    Executor = 0,
    /// A user write that covered the whole unit.
    UserWrite = 1,
    /// A degraded user read's reconstruction, written to the target (piggybacking).
    Piggyback = 2,
}

/// What the controller tells the rebuild policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebuildEvent {
    /// Job `job` holds the locks of its unit's stripes: its sources may be read.
    Locked { job: u32 },
    /// Job `job`'s read of source slot `drive` finished (`ok`), or was aborted.
    Read { job: u32, drive: u32, ok: bool },
    /// Job `job`'s write to the target finished: unit `unit` is current (`ok`), or the
    /// write was aborted.
    Written { job: u32, unit: u64, ok: bool },
    /// Every rebuild unit is current: member `member` now lives in slot `slot`. Units made
    /// current, by [`MadeCurrentBy`].
    Complete { member: u32, slot: u32, made_current: [u64; 3] },
    /// The rebuild of `member` stopped unfinished, for `reason`.
    Abandoned { member: u32, made_current: [u64; 3], reason: AbandonReason },
    /// Source slot `slot` of a mirror's rebuild failed while another copy survives: the
    /// rebuild goes on from the surviving copies. Every job in flight was cancelled (its unit
    /// is unrebuilt again once its ops are back), so the policies start afresh on the new
    /// sources; the units already current stay current.
    SourceLost { slot: u32 },
    /// Unit `unit` is unrebuilt again: a job that held it drained after one of its ops was
    /// aborted, or after [`RebuildEvent::SourceLost`] cancelled it. An executor that found
    /// nothing left to claim may claim it now.
    Released { unit: u64 },
    /// A user write waits for job `job`'s stripes: its reads should be forced (issued now,
    /// at user priority), as RAIDframe forces the reconstruction of a stripe a write hits.
    Force { job: u32 },
}

/// One user read of the lost member during a rebuild: the first and last rebuild unit it
/// touched (inclusive; one request, however many stripes it spans).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadSpan {
    pub first: u64,
    pub last: u64,
}

/// Why a rebuild stopped unfinished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbandonReason {
    /// The target slot failed: the rebuild starts again on another spare, if there is one.
    TargetFailed { slot: u32 },
    /// A source the lost data depends on failed (a parity layout's survivor, or a mirror's
    /// last surviving copy): the data of the unrebuilt units is lost.
    SourceFailed { slot: u32 },
    /// The distributed spare a healing copy read from failed (its sectors lay on a member
    /// that failed): the member is failed and waits to be rebuilt from its redundancy; the
    /// healing target is retired, as an abandoned rebuild's target is (copies of user writes
    /// may still be queued at it).
    HealingSourceFailed { slot: u32 },
    /// The controller crashed during a healing copy: a user write in flight may have reached
    /// the distributed spare and not the target, so the copy starts again from its first
    /// unit (conservative: ZFS resumes a resilver from its last checkpoint).
    HealingCrashed,
}

impl AbandonReason {
    /// The reason in words, for the run's outcomes and summary.
    pub fn describe(self) -> String {
        match self {
            AbandonReason::TargetFailed { slot } => format!("its target, slot {slot}, failed"),
            AbandonReason::SourceFailed { slot } => {
                format!("source slot {slot} failed, and no other source holds the unrebuilt units: their data is lost")
            }
            AbandonReason::HealingSourceFailed { slot } => {
                format!("the distributed spare it copied from, slot {slot}, failed: the member is rebuilt again from its redundancy")
            }
            AbandonReason::HealingCrashed => {
                "the controller crashed: the healing copy starts again from its first unit".into()
            }
        }
    }
}

/// The rebuild of one lost member onto a target slot, or a healing copy of a working member
/// out of a distributed spare onto a replacement drive.
#[derive(Debug)]
pub struct Rebuilding {
    /// The lost member and the slot it lived in (for a healing copy: the member, working,
    /// and the distributed spare slot it lives in).
    pub member: u32,
    pub member_slot: u32,
    /// A healing copy ([`Controller::start_healing`]): the member is not lost; each unit is
    /// copied from `member_slot` to the target, user I/O goes on at `member_slot`, and every
    /// user write to it is also written to the target.
    pub healing: bool,
    /// The slot being written.
    pub target: u32,
    /// The source slots and whether the lost sectors are their XOR.
    pub sources: Vec<u32>,
    pub xor: bool,
    /// The layout's reconstruction of the member (its sources as members), which each
    /// unit's reads start from ([`crate::layout::Layout::rebuild_reads`]).
    reconstruction: crate::layout::Reconstruction,
    /// Whether every unit is read whole, at its own sectors, from every source
    /// ([`crate::layout::Layout::rebuilds_units_in_place`]): jobs then list no reads.
    in_place: bool,
    /// The rebuild units and their states.
    pub units: RebuildUnits,
    pub states: UnitStates,
    /// Whether user reads of rebuilt units go to the target.
    pub redirect_reads: bool,
    /// Whether a degraded read of an unrebuilt unit rebuilds the whole unit (piggybacking).
    pub piggyback: bool,
    /// Units made current, by [`MadeCurrentBy`].
    pub made_current: [u64; 3],
    /// Generation of this rebuild (jobs of an abandoned one are told apart).
    generation: u32,
    /// Whether user reads of the lost units are recorded for the rebuild order (PRO's
    /// Access Monitor), the reads recorded and not yet handed over, and a stripe map to
    /// find them with.
    watch_reads: bool,
    reads: Vec<ReadSpan>,
    map: StripeMap,
}

impl Rebuilding {
    /// The rebuild of `member` (living in `member_slot`) onto `target` from the source slots
    /// `sources` by `reconstruction`, every unit unrebuilt; no read redirection, no
    /// piggybacking, not a healing copy.
    #[allow(clippy::too_many_arguments)]
    fn new(
        member: u32,
        member_slot: u32,
        target: u32,
        sources: Vec<u32>,
        reconstruction: crate::layout::Reconstruction,
        in_place: bool,
        units: RebuildUnits,
        generation: u32,
    ) -> Rebuilding {
        let states = UnitStates::new(units.count());
        Rebuilding {
            member,
            member_slot,
            healing: false,
            target,
            sources,
            xor: reconstruction.xor,
            reconstruction,
            in_place,
            units,
            states,
            redirect_reads: false,
            piggyback: false,
            made_current: [0; 3],
            generation,
            watch_reads: false,
            reads: Vec::new(),
            map: StripeMap::default(),
        }
    }
}

/// One rebuild unit being made current.
#[derive(Debug, Default, Clone)]
pub struct Job {
    pub unit: u64,
    /// Physical sectors `[start, end)` of the unit.
    pub start: u64,
    pub end: u64,
    /// Stripes to lock, and the next one to ask for.
    first_stripe: u64,
    last_stripe: u64,
    next_stripe: u64,
    pub locked: bool,
    /// Ops issued and not yet back.
    outstanding: u32,
    /// Whether the job only drains: its rebuild was abandoned, or an op of it was aborted.
    cancelled: bool,
    /// Whether its unit goes back to unrebuilt when it has drained (an op was aborted, the
    /// rebuild goes on).
    give_back: bool,
    generation: u32,
    next_waiter: u32,
    live: bool,
    /// The content model's values of the unit: the XOR (or copy) of what was read.
    values: Vec<u64>,
    /// What the job reads ([`crate::layout::Layout::rebuild_reads`], less the sources that
    /// failed); a read's ops carry its index here. Empty when `in_place`.
    reads: Vec<JobRead>,
    /// The unit is read whole at its own sectors from each of the rebuild's sources
    /// ([`Rebuilding::in_place`]): one op per source, whose index is the source's slot.
    in_place: bool,
    /// A piggybacking job: the user read piece waiting for its reads (or [`NONE`] once
    /// answered), and its reads not yet back.
    piggyback: bool,
    pub(super) piece: u32,
    reads_left: u32,
}

/// One read of a rebuild job: `sectors` sectors of source slot `slot` from sector `pba`,
/// which rebuild the unit's sectors from `offset` on.
#[derive(Debug, Clone, Copy)]
struct JobRead {
    slot: u32,
    pba: u64,
    offset: u64,
    sectors: u64,
    /// Issued and not back.
    outstanding: bool,
}

impl Controller {
    /// Add `spares` drive slots after the members: hot spares, or drives that arrive later.
    /// Call before the first request.
    pub fn set_spare_slots(&mut self, spares: u32) {
        for _ in 0..spares {
            self.state.add_slot(SlotRole::Spare);
        }
        if let Some(c) = self.content.as_mut() {
            c.add_spare_slots(self.state.slots() as usize);
        }
    }

    /// Add `count` distributed spares (the layout's, `Layout::distributed_spares`) as drive
    /// slots after every other: spares to the rebuild, whose operations the engine sends to
    /// the members holding their sectors. Call last, before the first request.
    pub fn set_distributed_spare_slots(&mut self, count: u32) {
        self.state.first_distributed_spare = self.state.slots();
        self.set_spare_slots(count);
    }

    /// Add `count` drive slots after the spares, outside the data layout (a log drive):
    /// the layout's planner addresses them. Call after [`Controller::set_spare_slots`] and
    /// before the first request.
    pub fn set_outside_slots(&mut self, count: u32) {
        for _ in 0..count {
            self.state.add_slot(SlotRole::Outside);
        }
        if let Some(c) = self.content.as_mut() {
            c.add_outside_slots(self.state.slots() as usize);
        }
    }

    /// Drive slots (members, spares and drives outside the layout).
    pub fn slots(&self) -> u32 {
        self.state.slots()
    }

    /// The slot member `member` lives in.
    pub fn member_slot(&self, member: u32) -> u32 {
        self.state.member_slot(member)
    }

    /// The member living in slot `slot`, if any.
    pub fn member_in_slot(&self, slot: u32) -> Option<u32> {
        self.state.member_in_slot(slot)
    }

    /// Whether failed member `member` can be rebuilt now: the layout keeps redundancy, and
    /// its reconstruction's sources survive (every one for parity, but for as many as it may
    /// do without; at least one copy for a mirror). A member whose data is lost cannot be.
    pub fn can_rebuild(&self, member: u32) -> bool {
        let Some(slot) = self.state.member_slot.get(member as usize).copied() else { return false };
        if !self.state.failed[slot as usize] {
            return false;
        }
        let Some(reconstruction) = self.layout.reconstruction(member) else { return false };
        let alive = |m: &u32| !self.state.failed[self.state.member_slot[*m as usize] as usize];
        let lost_sources = reconstruction.sources.iter().filter(|m| !alive(m)).count();
        let sources_left = if reconstruction.xor {
            lost_sources <= reconstruction.erasures as usize
        } else {
            lost_sources < reconstruction.sources.len()
        };
        // (A declustered mirror reads a different source for each part of the member: one
        // copy left is not enough if another part's only copy is gone.)
        sources_left && !self.set_lost(member, None)
    }

    /// Whether the failed members of `member`'s redundancy set, with `member` and `also`
    /// (a member failing now), lose data by the layout's rule: the other sets' losses do not
    /// count, since they do not touch what rebuilds `member`.
    fn set_lost(&self, member: u32, also: Option<u32>) -> bool {
        let set = self.layout.redundancy_set(member);
        let mut failed: Vec<u32> = self.state.failed_members.iter().copied().filter(|m| set.contains(m)).collect();
        failed.push(member);
        failed.extend(also.filter(|m| set.contains(m)));
        failed.sort_unstable();
        failed.dedup();
        self.layout.data_lost(&failed)
    }

    /// The rebuild in progress.
    pub fn rebuilding(&self) -> Option<&Rebuilding> {
        self.state.rebuilding()
    }

    /// Start rebuilding failed member `member` onto working slot `target`, in rebuild units
    /// `units` over the member's used sectors. Errors if the member has not failed, the
    /// layout cannot rebuild it, or a rebuild is already running.
    pub fn start_rebuild(
        &mut self,
        member: u32,
        target: u32,
        units: RebuildUnits,
        redirect_reads: bool,
        piggyback: bool,
    ) -> Result<()> {
        if self.state.rebuild.is_some() {
            return Err(Error::Invariant("a second rebuild started while one runs".into()));
        }
        let member_slot = self.state.member_slot[member as usize];
        if !self.state.failed[member_slot as usize] || self.state.failed[target as usize] {
            return Err(Error::Invariant(format!("rebuild of member {member} (slot {member_slot}) onto slot {target}")));
        }
        let reconstruction = self.layout.reconstruction(member).ok_or_else(|| {
            Error::config("rebuild", format!("layout {} keeps no redundancy: a lost drive cannot be rebuilt", self.layout.name()))
        })?;
        let mut sources: Vec<u32> = reconstruction.sources.iter().map(|&m| self.state.member_slot[m as usize]).collect();
        let all_sources = sources.len();
        // A mirror reads the copies that survive; parity needs them all, but for as many as
        // its code may do without (RAID-6: one).
        sources.retain(|&s| !self.state.failed[s as usize]);
        let usable = if reconstruction.xor {
            all_sources - sources.len() <= reconstruction.erasures as usize
        } else {
            !sources.is_empty()
        };
        if !usable {
            return Err(Error::Invariant(format!(
                "rebuild of member {member} started with no complete set of surviving sources (its data is lost)"
            )));
        }
        // Drives outside the layout that the rebuild reads too (a log).
        sources.extend(self.layout.outside_sources().into_iter().filter(|&s| !self.state.failed[s as usize]));
        self.generation += 1;
        self.rebuild_taken(member, target);
        if let Some(placement) = self.state.placement.as_deref_mut() {
            placement.rebuilding(Some(member));
        }
        let in_place = self.layout.rebuilds_units_in_place();
        let mut r = Rebuilding::new(member, member_slot, target, sources, reconstruction, in_place, units, self.generation);
        (r.redirect_reads, r.piggyback) = (redirect_reads, piggyback);
        self.begin_writing_target(r);
        Ok(())
    }

    /// Rebuild `r` runs from now: until a unit is current, its target takes writes and
    /// serves no read, and whatever it held is garbage.
    fn begin_writing_target(&mut self, r: Rebuilding) {
        let target = r.target;
        self.state.rebuild = Some(Box::new(r));
        self.state.write_only[target as usize] = true;
        self.state.failed[target as usize] = true;
        if let Some(c) = self.content.as_mut() {
            c.start_target(target);
        }
    }

    /// Start the healing copy of member `member`, which lives in a distributed spare, onto
    /// working slot `target` (a replacement drive), in rebuild units `units` over the
    /// member's sectors: ZFS's healing resilver after `zpool replace`, which frees the
    /// distributed spare. Each unit is read from the distributed spare at its own sectors
    /// and written to the target; user reads go on at the distributed spare, and user writes
    /// to it are also written to the target ([`Controller::issue_phase`]), so a unit copied
    /// stays current. When every unit is copied the member lives in `target` and the
    /// distributed spare is a spare again. Errors if a rebuild runs, or the member does not
    /// live, working, in a distributed spare.
    pub fn start_healing(&mut self, member: u32, target: u32, units: RebuildUnits) -> Result<()> {
        if self.state.rebuild.is_some() {
            return Err(Error::Invariant("a healing copy started while a rebuild runs".into()));
        }
        let member_slot = self.state.member_slot[member as usize];
        if !self.state.is_distributed_spare(member_slot)
            || self.state.failed[member_slot as usize]
            || self.state.failed[target as usize]
            || self.state.is_distributed_spare(target)
        {
            return Err(Error::Invariant(format!("healing copy of member {member} (slot {member_slot}) onto slot {target}")));
        }
        // (A plan that writes one unit alone skips `issue_phase`, which mirrors the writes;
        // no layout with distributed spares has one: parity is updated with every write.)
        if self.one_op_writes {
            return Err(Error::Invariant(format!("healing copy on layout {}, whose writes may skip the copy", self.layout.name())));
        }
        self.generation += 1;
        self.rebuild_taken(member, target);
        self.healing_target = target;
        // A copy of the member where it lives, each unit read whole in place. (User reads stay
        // at the distributed spare, which holds every unit: nothing to redirect.)
        let copy = crate::layout::Reconstruction { sources: vec![member], xor: false, erasures: 0 };
        let mut r = Rebuilding::new(member, member_slot, target, vec![member_slot], copy, true, units, self.generation);
        r.healing = true;
        self.begin_writing_target(r);
        Ok(())
    }

    /// Record the user reads of the rebuild's lost units from now on (`watch`), for an order
    /// that watches them; or stop.
    pub fn watch_reads(&mut self, watch: bool) {
        if let Some(r) = self.state.rebuild.as_deref_mut() {
            r.watch_reads = watch;
            r.reads.clear();
        }
    }

    /// The user reads recorded since the last call (their storage is lent: hand it back with
    /// [`Controller::give_back_reads`]), and the rebuild; `None` without a rebuild.
    pub fn take_reads(&mut self) -> Option<(Vec<ReadSpan>, &Rebuilding)> {
        let r = self.state.rebuild.as_deref_mut()?;
        let reads = std::mem::take(&mut r.reads);
        Some((reads, r))
    }

    /// Return the storage [`Controller::take_reads`] lent, emptied.
    pub fn give_back_reads(&mut self, mut reads: Vec<ReadSpan>) {
        if let Some(r) = self.state.rebuild.as_deref_mut() {
            reads.clear();
            if r.reads.is_empty() {
                r.reads = reads;
            }
        }
    }

    /// User reads recorded and not yet handed over.
    #[inline]
    pub fn pending_reads(&self) -> usize {
        self.state.rebuild.as_deref().map_or(0, |r| r.reads.len())
    }

    /// A user read of logical sectors `[lba, lba + sectors)` arrived: if the rebuild watches
    /// reads, record the span of lost rebuild units it touches (nothing if none). For a
    /// mirror, a read of data whose copy lived on the lost member touches it. (Out of line
    /// and cold: normal mode never calls it, and its body would crowd `submit`.)
    #[cold]
    #[inline(never)]
    pub(super) fn note_user_read(&mut self, lba: u64, sectors: u64) {
        let per_stripe = self.stripe_data_sectors.size;
        let unit = self.unit_sectors.size;
        let Some(r) = self.state.rebuild.as_deref_mut() else { return };
        if !r.watch_reads {
            return;
        }
        let end = lba + sectors;
        let mut span: Option<ReadSpan> = None;
        for stripe in lba / per_stripe..=(end - 1) / per_stripe {
            let stripe_start = stripe * per_stripe;
            let first = lba.max(stripe_start) - stripe_start;
            let last = end.min(stripe_start + per_stripe) - stripe_start;
            self.layout.map_stripe(stripe, &mut r.map);
            for i in first / unit..=(last - 1) / unit {
                let lo = first.max(i * unit) - i * unit;
                let hi = last.min((i + 1) * unit) - i * unit;
                for loc in r.map.copies_of(i as usize) {
                    if loc.drive != r.member_slot || loc.pba + hi > r.units.capacity() {
                        continue;
                    }
                    let (a, b) = (r.units.unit_of(loc.pba + lo), r.units.unit_of(loc.pba + hi - 1));
                    span = Some(match span {
                        None => ReadSpan { first: a, last: b },
                        Some(s) => ReadSpan { first: s.first.min(a), last: s.last.max(b) },
                    });
                }
            }
        }
        if let Some(s) = span {
            r.reads.push(s);
        }
    }

    /// The rebuild stops unfinished: its jobs drain, the target is no longer written.
    pub(super) fn abandon_rebuild(&mut self, reason: AbandonReason) {
        let Some(r) = self.state.rebuild.take() else { return };
        if let Some(placement) = self.state.placement.as_deref_mut() {
            placement.rebuilding(None);
        }
        self.state.write_only[r.target as usize] = false;
        // The target slot keeps its own failed flag: a failed target stays failed, a working
        // one is a spare again.
        self.state.failed[r.target as usize] = self.target_dead;
        self.target_dead = false;
        for j in 0..self.jobs.len() {
            if self.jobs[j].live && self.jobs[j].generation == r.generation {
                self.jobs[j].cancelled = true;
                if self.jobs[j].outstanding == 0 && self.jobs[j].locked {
                    self.free_job(j as u32);
                }
            }
        }
        if r.healing {
            // The member was not lost: it stays where it is (or, its distributed spare gone,
            // it waits as a failed member, `Controller::fail_drive`). After a crash the target
            // is a spare again (nothing is queued at it any more); otherwise copies of user
            // writes may still be queued at it, so, as an abandoned rebuild's, it is not.
            if matches!(reason, AbandonReason::HealingCrashed) {
                self.return_spare(r.target, 0);
            } else {
                self.state.roles[r.target as usize] = SlotRole::Retired;
            }
        } else {
            self.rebuild_abandoned(r.member, r.target);
        }
        self.rebuild_events.push(RebuildEvent::Abandoned { member: r.member, made_current: r.made_current, reason });
    }

    /// Slot `slot` failed while a rebuild runs: if it is the target or a source, the rebuild
    /// is abandoned.
    pub(super) fn rebuild_slot_failed(&mut self, slot: u32) {
        let Some(r) = self.state.rebuild.as_deref() else { return };
        if slot == r.target {
            self.target_dead = true;
            self.abandon_rebuild(AbandonReason::TargetFailed { slot });
        } else if r.healing {
            if slot == r.member_slot {
                self.abandon_rebuild(AbandonReason::HealingSourceFailed { slot });
            }
        } else if r.sources.contains(&slot) && self.state.member_in_slot(slot).is_none() {
            // A drive outside the layout (a log): what only it held is lost, which the
            // layout's state has marked; the rest is rebuilt from the members.
            self.drop_rebuild_source(slot);
        } else if r.sources.contains(&slot) {
            // A mirror goes on while the layout says the member's data survives the source's
            // loss too (another copy holds what the source did).
            let member = r.member;
            let tolerates = !r.xor || r.reconstruction.erasures > 0;
            if tolerates && !self.set_lost(member, self.state.member_in_slot(slot)) {
                // A mirror with another copy left, or a code that survives one more loss
                // (RAID-6): go on from the sources that survive.
                self.drop_rebuild_source(slot);
            } else {
                // Parity needs every source; a mirror's last copy is the data itself.
                self.abandon_rebuild(AbandonReason::SourceFailed { slot });
            }
        }
    }

    /// Mirror source `slot` failed and another copy survives: drop it from the sources, and
    /// tell the policies ([`RebuildEvent::SourceLost`]), which restart their jobs on the
    /// copies left ([`Controller::restart_rebuild_jobs`]). The units already current stay so.
    fn drop_rebuild_source(&mut self, slot: u32) {
        let Some(r) = self.state.rebuild.as_deref_mut() else { return };
        r.sources.retain(|&s| s != slot);
        self.rebuild_events.push(RebuildEvent::SourceLost { slot });
    }

    /// Cancel every job of the rebuild in progress, each giving its unit back once its ops
    /// are in ([`RebuildEvent::Released`]), for policies that plan afresh (after
    /// [`RebuildEvent::SourceLost`]). Called by the policies when they handle that event, so
    /// that a job they claimed since the source failed is cancelled too.
    pub fn restart_rebuild_jobs(&mut self) {
        let Some(r) = self.state.rebuild.as_deref() else { return };
        let generation = r.generation;
        for j in 0..self.jobs.len() {
            let job = &mut self.jobs[j];
            if !job.live || job.generation != generation || job.cancelled {
                continue;
            }
            job.cancelled = true;
            job.give_back = true;
            if job.outstanding == 0 && job.locked {
                self.rebuild_release(j as u32);
            }
        }
    }

    /// Claim unrebuilt unit `unit` for a job and start taking its stripes' locks. Returns the
    /// job, or `None` if the unit is not unrebuilt. [`RebuildEvent::Locked`] follows, at once
    /// if no user write holds a stripe.
    pub fn rebuild_claim(&mut self, unit: u64) -> Option<u32> {
        let r = self.state.rebuild.as_deref_mut()?;
        if !r.states.claim(unit) {
            return None;
        }
        let (start, end) = r.units.range(unit);
        let (first_stripe, last_stripe) = self.layout.stripes_in(r.member, start, end, self.state.placement.as_deref());
        let id = self.new_job(unit, first_stripe, last_stripe, false);
        self.lock_next_stripes(id);
        Some(id)
    }

    /// Take job `job`'s locks from its next stripe on, until one must be waited for.
    pub(super) fn lock_next_stripes(&mut self, job: u32) {
        loop {
            let j = &self.jobs[job as usize];
            if j.next_stripe > j.last_stripe {
                self.jobs[job as usize].locked = true;
                if self.state.placement.is_some() && !self.jobs[job as usize].cancelled {
                    // Where the copies are may have changed while the locks were awaited
                    // (a write that held one moved a copy): list the reads again, now that
                    // no write of these stripes can run.
                    self.list_job_reads(job);
                }
                if self.jobs[job as usize].cancelled {
                    if self.jobs[job as usize].give_back {
                        self.rebuild_release(job);
                    } else {
                        self.free_job(job);
                    }
                } else {
                    self.rebuild_events.push(RebuildEvent::Locked { job });
                }
                return;
            }
            let stripe = j.next_stripe;
            self.jobs[job as usize].next_stripe += 1;
            let mut waiting = super::Waiting { pieces: &mut self.pieces, one_ops: &mut self.one_ops, jobs: &mut self.jobs };
            if !self.locks.acquire(stripe, JobId::new(JobKind::RebuildUnit, job).raw(), false, &mut waiting) {
                return; // granted later, through the ready list
            }
        }
    }

    /// Job `job`'s next waiter link (the lock table's intrusive list).
    pub(super) fn job_waiter(jobs: &[Job], job: u32) -> u32 {
        jobs[job as usize].next_waiter
    }

    pub(super) fn set_job_waiter(jobs: &mut [Job], job: u32, next: u32) {
        jobs[job as usize].next_waiter = next;
    }

    /// The sectors `[start, end)` of job `job`'s unit.
    pub fn job_range(&self, job: u32) -> (u64, u64) {
        let j = &self.jobs[job as usize];
        (j.start, j.end)
    }

    /// The unit of job `job`.
    pub fn job_unit(&self, job: u32) -> u64 {
        self.jobs[job as usize].unit
    }

    /// Whether job `job` holds its stripes' locks.
    pub fn job_locked(&self, job: u32) -> bool {
        self.jobs[job as usize].locked
    }

    /// Whether job `job` belongs to an abandoned rebuild.
    pub fn job_cancelled(&self, job: u32) -> bool {
        self.jobs[job as usize].cancelled
    }

    /// Read job `job`'s share of its unit on source slot `drive` at `priority`: one op per
    /// read there (a unit across a boundary of a declustered layout may need two ranges of
    /// one source); the policies hear of the slot once all are back. A unit that needs
    /// nothing from that slot (a declustered layout rebuilds each unit from some of the
    /// sources) is read there at once: its [`RebuildEvent::Read`] comes without an op.
    pub fn rebuild_read(&mut self, job: u32, drive: u32, priority: Priority) {
        let j = &mut self.jobs[job as usize];
        debug_assert!(j.locked && !j.cancelled);
        if j.in_place {
            j.outstanding += 1;
            self.outbox.push(IssuedOp {
                drive,
                priority,
                pba: j.start,
                sectors: (j.end - j.start) as u32,
                kind: OpKind::Read,
                token: OpToken::new(JobId::new(JobKind::RebuildUnit, job), drive).raw(),
            });
            return;
        }
        let mut issued = false;
        for (index, read) in j.reads.iter_mut().enumerate().filter(|(_, r)| r.slot == drive) {
            read.outstanding = true;
            j.outstanding += 1;
            issued = true;
            self.outbox.push(IssuedOp {
                drive,
                priority,
                pba: read.pba,
                sectors: read.sectors as u32,
                kind: OpKind::Read,
                token: OpToken::new(JobId::new(JobKind::RebuildUnit, job), index as u32).raw(),
            });
        }
        if !issued {
            self.rebuild_events.push(RebuildEvent::Read { job, drive, ok: true });
        }
    }

    /// How many distinct source slots job `job` reads from; `None` when it reads the whole
    /// unit in place from every source. (Without allocating: a unit's reads are few.)
    pub fn job_read_slot_count(&self, job: u32) -> Option<usize> {
        let j = &self.jobs[job as usize];
        if j.in_place {
            return None;
        }
        Some(j.reads.iter().enumerate().filter(|&(i, r)| !j.reads[..i].iter().any(|e| e.slot == r.slot)).count())
    }

    /// Sectors job `job` reads from source slot `drive`; `None` when it reads nothing there
    /// (no I/O, which no discipline need let in).
    pub fn job_read_sectors(&self, job: u32, drive: u32) -> Option<u64> {
        let j = &self.jobs[job as usize];
        if j.in_place {
            // (The policies ask of the rebuild's sources only.)
            return Some(j.end - j.start);
        }
        let (mut any, mut sectors) = (false, 0);
        for read in &j.reads {
            if read.slot == drive {
                any = true;
                sectors += read.sectors;
            }
        }
        any.then_some(sectors)
    }

    /// Write job `job`'s unit to the target at `priority` (every source read).
    pub fn rebuild_write(&mut self, job: u32, priority: Priority) {
        let target = self.state.rebuild.as_deref().map_or(u32::MAX, |r| r.target);
        let j = &mut self.jobs[job as usize];
        debug_assert!(j.locked && !j.cancelled);
        j.outstanding += 1;
        self.outbox.push(IssuedOp {
            drive: target,
            priority,
            pba: j.start,
            sectors: (j.end - j.start) as u32,
            kind: OpKind::Write,
            token: OpToken::new(JobId::new(JobKind::RebuildUnit, job), TARGET_WRITE).raw(),
        });
    }

    /// Give up job `job` with nothing outstanding: its unit is unrebuilt again.
    pub fn rebuild_release(&mut self, job: u32) {
        let j = &self.jobs[job as usize];
        if let Some(r) = self.state.rebuild.as_deref_mut() {
            if r.generation == j.generation {
                r.states.release(j.unit);
                self.rebuild_events.push(RebuildEvent::Released { unit: j.unit });
            }
        }
        self.free_job(job);
    }

    /// A crash: every job goes, with its stripes (the lock table goes too) and its ops,
    /// which will not come back; a unit in flight is unrebuilt again.
    pub(super) fn forget_jobs(&mut self) {
        if let Some(r) = self.state.rebuild.as_deref_mut() {
            for job in self.jobs.iter().filter(|j| j.live && j.generation == r.generation) {
                if r.states.get(job.unit) == UnitState::InFlight {
                    r.states.release(job.unit);
                }
            }
        }
        self.jobs.clear();
        self.free_jobs.clear();
        self.target_dead = false;
    }

    /// Unlock job `job`'s stripes and free it.
    fn free_job(&mut self, job: u32) {
        let (first, last) = {
            let j = &self.jobs[job as usize];
            (j.first_stripe, j.next_stripe.min(j.last_stripe + 1))
        };
        for stripe in first..last {
            self.unlock(stripe, false);
        }
        let j = &mut self.jobs[job as usize];
        j.live = false;
        self.free_jobs.push(job);
    }

    /// A job's op finished (`ok`) or was aborted.
    pub(super) fn job_op_done(
        &mut self,
        now: crate::sim::Nanos,
        job: u32,
        op_index: u64,
        ok: bool,
        view: &dyn super::plan::DriveView,
    ) -> Result<()> {
        if job as usize >= self.jobs.len() || !self.jobs[job as usize].live {
            return Err(Error::Invariant(format!("completion of an op of unknown rebuild job {job}")));
        }
        self.jobs[job as usize].outstanding -= 1;
        if !ok && self.jobs[job as usize].piece != NONE {
            // A piggybacking read lost a source: its user read is planned again on its own.
            let piece = std::mem::replace(&mut self.jobs[job as usize].piece, NONE);
            self.pieces[piece as usize].piggyback_job = NONE;
            self.stats.replans += 1;
            self.start_piece(now, piece, view)?;
        }
        if !ok && !self.jobs[job as usize].cancelled {
            // A source or the target went under the op: the unit is given back once the
            // job's other ops are in (the rebuild itself may have been abandoned already).
            self.jobs[job as usize].cancelled = true;
            self.jobs[job as usize].give_back = true;
            let unit = self.jobs[job as usize].unit;
            if self.jobs[job as usize].piggyback {
                // Nothing of the policies' to tell.
            } else if op_index == TARGET_WRITE as u64 {
                self.rebuild_events.push(RebuildEvent::Written { job, unit, ok: false });
            } else {
                let j = &self.jobs[job as usize];
                let drive = if j.in_place { op_index as u32 } else { j.reads[op_index as usize].slot };
                self.rebuild_events.push(RebuildEvent::Read { job, drive, ok: false });
            }
        }
        if self.jobs[job as usize].cancelled {
            if self.jobs[job as usize].outstanding == 0 {
                if self.jobs[job as usize].piece != NONE {
                    // The rebuild was abandoned under a piggybacking read: plan the user's
                    // read again on its own.
                    let piece = std::mem::replace(&mut self.jobs[job as usize].piece, NONE);
                    self.pieces[piece as usize].piggyback_job = NONE;
                    self.stats.replans += 1;
                    self.start_piece(now, piece, view)?;
                }
                if self.jobs[job as usize].give_back {
                    self.rebuild_release(job);
                } else {
                    self.free_job(job);
                }
            }
            return Ok(());
        }
        if op_index == TARGET_WRITE as u64 {
            let unit = self.jobs[job as usize].unit;
            let (start, end) = (self.jobs[job as usize].start, self.jobs[job as usize].end);
            if let (Some(c), Some(r)) = (self.content.as_mut(), self.state.rebuild.as_deref()) {
                let values = &self.jobs[job as usize].values;
                let placement = self.state.placement.as_deref();
                let access = Access::RebuildWrite { member_slot: r.member_slot, target: r.target, start, end, values, placement };
                c.op_done(self.layout.as_ref(), access)?;
            }
            let by = if self.jobs[job as usize].piggyback { MadeCurrentBy::Piggyback } else { MadeCurrentBy::Executor };
            let r = self.state.rebuild.as_deref_mut().expect("a live job has a rebuild");
            if !r.states.mark_rebuilt(unit) {
                return Err(Error::Invariant(format!("rebuild unit {unit} made current twice")));
            }
            let member_slot = r.member_slot;
            if let Some(placement) = self.state.placement.as_deref_mut() {
                placement.rebuilt(self.layout.as_ref(), member_slot, start, end);
                // (It may have found a block the rebuild wrote lost.)
                self.every_piece_planned |= placement.plans_every_read();
            }
            r.made_current[by as usize] += 1;
            self.free_job(job);
            self.rebuild_events.push(RebuildEvent::Written { job, unit, ok: true });
            return self.finish_rebuild_if_complete();
        }
        let read = if self.jobs[job as usize].in_place {
            let j = &self.jobs[job as usize];
            JobRead { slot: op_index as u32, pba: j.start, offset: 0, sectors: j.end - j.start, outstanding: false }
        } else {
            let Some(read) = self.jobs[job as usize].reads.get_mut(op_index as usize) else {
                return Err(Error::Invariant(format!("rebuild job {job} finished read {op_index}, which it does not have")));
            };
            read.outstanding = false;
            *read
        };
        let drive = read.slot;
        if self.content.is_some() {
            let xor = self.state.rebuild.as_deref().is_some_and(|r| r.xor);
            let code = self.state.rebuild.as_deref().filter(|r| r.reconstruction.erasures > 0).map(|r| r.member_slot);
            let j = &mut self.jobs[job as usize];
            let values = &mut j.values[read.offset as usize..(read.offset + read.sectors) as usize];
            let c = self.content.as_mut().expect("checked above");
            let access = Access::RebuildRead { drive, start: read.pba, end: read.pba + read.sectors, xor, code, values };
            c.op_done(self.layout.as_ref(), access)?;
        }
        if self.jobs[job as usize].piggyback {
            self.jobs[job as usize].reads_left -= 1;
            if self.jobs[job as usize].reads_left == 0 {
                self.piggyback_reads_done(job)?;
            }
            return Ok(());
        }
        let j = &self.jobs[job as usize];
        // (A slot with two reads is read once both are back.)
        if j.reads.iter().any(|r| r.slot == drive && r.outstanding) {
            return Ok(());
        }
        self.rebuild_events.push(RebuildEvent::Read { job, drive, ok: true });
        Ok(())
    }

    /// Piggybacking (Fu §2.4): piece `idx`, a read whose rows all lie in one unrebuilt
    /// rebuild unit of the lost member (the map already shows the target, write-only),
    /// becomes that unit's rebuild: every source reads the whole unit at user priority, the
    /// user is answered with the reconstruction, and the unit is then written to the target.
    /// Taken only when every stripe of the unit can be read-locked at once (the piece's own
    /// lock is shared with it), so the piece never waits for another lock while it holds
    /// one. Returns whether the piece was taken.
    pub(super) fn try_piggyback(&mut self, idx: u32, spec: super::plan::PieceSpec) -> bool {
        let Some(r) = self.state.rebuild.as_deref() else { return false };
        // A mirror's degraded read reads another copy: nothing to reconstruct, nothing to
        // piggyback on. Parity layouts only.
        if !r.piggyback || spec.is_write || !r.xor {
            return false;
        }
        let unit_sectors = self.unit_sectors.size;
        let (first, last) = (spec.first / unit_sectors, (spec.first + spec.sectors - 1) / unit_sectors);
        if first != last {
            return false;
        }
        let p = &self.pieces[idx as usize];
        let Some(u) = p.map.data.get(first as usize).copied() else { return false };
        if u.drive != r.target {
            return false;
        }
        let row = spec.first % unit_sectors;
        let (lo, hi) = (u.pba + row, u.pba + row + spec.sectors);
        if hi > r.units.capacity() {
            return false;
        }
        let unit = r.units.unit_of(lo);
        if r.units.unit_of(hi - 1) != unit || r.states.get(unit) != UnitState::Unrebuilt {
            return false;
        }
        let (start, end) = r.units.range(unit);
        let (first_stripe, last_stripe) = self.layout.stripes_in(r.member, start, end, self.state.placement.as_deref());
        for stripe in first_stripe..=last_stripe {
            if !self.locks.try_acquire_read(stripe) {
                for taken in first_stripe..stripe {
                    self.unlock(taken, false);
                }
                return false;
            }
        }
        let Some(job) = self.rebuild_claim_locked(unit, first_stripe, last_stripe) else { return false };
        // The slots read, each once, in the order of the reads (of the rebuild's sources).
        let sources: Vec<u32> = if self.jobs[job as usize].in_place {
            self.state.rebuild.as_deref().map(|r| r.sources.clone()).unwrap_or_default()
        } else {
            let mut slots: Vec<u32> = Vec::new();
            for read in &self.jobs[job as usize].reads {
                if !slots.contains(&read.slot) {
                    slots.push(read.slot);
                }
            }
            slots
        };
        {
            let j = &mut self.jobs[job as usize];
            j.piggyback = true;
            j.piece = idx;
            j.reads_left = if j.in_place { sources.len() as u32 } else { j.reads.len() as u32 };
        }
        let p = &mut self.pieces[idx as usize];
        p.piggyback_job = job;
        p.plan.ops.clear();
        p.plan.phases = 1;
        p.plan.answer_after = None;
        p.plan.degraded = true;
        p.plan.lost_sectors = 0;
        p.outstanding = 0;
        for drive in sources {
            self.rebuild_read(job, drive, Priority::Foreground);
        }
        true
    }

    /// A job for unit `unit` whose stripes' read locks are held already.
    fn rebuild_claim_locked(&mut self, unit: u64, first_stripe: u64, last_stripe: u64) -> Option<u32> {
        let r = self.state.rebuild.as_deref_mut()?;
        if !r.states.claim(unit) {
            return None;
        }
        Some(self.new_job(unit, first_stripe, last_stripe, true))
    }

    /// A new job for claimed unit `unit` over stripes `first_stripe..=last_stripe`, whose
    /// locks are all held (`locked`) or none yet; in a free slot of the slab if there is one.
    fn new_job(&mut self, unit: u64, first_stripe: u64, last_stripe: u64, locked: bool) -> u32 {
        let r = self.state.rebuild.as_deref().expect("a job belongs to a rebuild");
        let (start, end) = r.units.range(unit);
        let job = Job {
            unit,
            start,
            end,
            first_stripe,
            last_stripe,
            next_stripe: if locked { last_stripe + 1 } else { first_stripe },
            locked,
            outstanding: 0,
            cancelled: false,
            give_back: false,
            generation: r.generation,
            next_waiter: NONE,
            live: true,
            values: Vec::new(),
            reads: Vec::new(),
            in_place: r.in_place,
            piggyback: false,
            piece: NONE,
            reads_left: 0,
        };
        let id = match self.free_jobs.pop() {
            Some(i) => {
                let values = std::mem::take(&mut self.jobs[i as usize].values);
                let reads = std::mem::take(&mut self.jobs[i as usize].reads);
                self.jobs[i as usize] = Job { values, reads, ..job };
                i
            }
            None => {
                self.jobs.push(job);
                (self.jobs.len() - 1) as u32
            }
        };
        self.list_job_reads(id);
        id
    }

    /// List job `job`'s reads (the layout's, on the sources that work) and size its value
    /// buffer: when the job is made, and again once its locks are held for a layout whose
    /// copies move.
    fn list_job_reads(&mut self, id: u32) {
        let Some(r) = self.state.rebuild.as_deref() else { return };
        let member = r.member;
        let (start, end) = (self.jobs[id as usize].start, self.jobs[id as usize].end);
        // What the unit is rebuilt from: the layout's reads, on the sources that work (the
        // rebuild's sources are those: a mirror drops a copy that fails, parity gives up).
        self.source_reads.clear();
        if r.in_place {
            #[cfg(debug_assertions)]
            if !r.healing {
                // The shortcut's claim: the layout's own answer is every source, whole, in place.
                self.layout.rebuild_reads(member, &r.reconstruction, start, end, None, &mut self.source_reads);
                let plain: Vec<_> = r
                    .reconstruction
                    .sources
                    .iter()
                    .map(|&source| crate::layout::SourceRead { source, pba: start, offset: 0, sectors: end - start, outside: None })
                    .collect();
                assert_eq!(self.source_reads, plain, "layout {} rebuilds units in place", self.layout.name());
            }
            self.jobs[id as usize].reads.clear();
            if self.content.is_some() {
                let j = &mut self.jobs[id as usize];
                j.values.clear();
                j.values.resize((end - start) as usize, 0);
            }
            return;
        }
        self.layout.rebuild_reads(member, &r.reconstruction, start, end, self.state.placement.as_deref(), &mut self.source_reads);
        let j = &mut self.jobs[id as usize];
        j.reads.clear();
        for read in &self.source_reads {
            let slot = read.outside.unwrap_or(self.state.member_slot[read.source as usize]);
            if !self.state.failed[slot as usize] {
                j.reads.push(JobRead { slot, pba: read.pba, offset: read.offset, sectors: read.sectors, outstanding: false });
            }
        }
        // (A layout whose copies move may leave a slot of the unit with nothing to rebuild:
        // a distorted mirror's free slave slot; and sectors outside every stripe, dRAID's
        // distributed spare space, have nothing to rebuild.)
        debug_assert!(
            self.state.placement.is_some()
                || reads_cover(&j.reads, end - start)
                || (start..end).all(|sector| {
                    let member_slot = self.state.member_slot[member as usize];
                    self.layout.locate(member_slot, sector).is_none()
                        || j.reads.iter().any(|r| r.offset <= sector - start && sector - start < r.offset + r.sectors)
                }),
            "layout {}: reads {:?} do not rebuild unit [{start}, {end}) of member {member}",
            self.layout.name(),
            j.reads
        );
        if self.content.is_some() {
            let j = &mut self.jobs[id as usize];
            j.values.clear();
            j.values.resize((end - start) as usize, 0);
        }
    }

    /// A piggybacking job's reads are back: answer its user read with the reconstruction,
    /// then write the unit to the target.
    fn piggyback_reads_done(&mut self, job: u32) -> Result<()> {
        let piece = std::mem::replace(&mut self.jobs[job as usize].piece, NONE);
        if piece != NONE {
            self.pieces[piece as usize].piggyback_job = NONE;
            self.account_piece(piece);
            if let Some(c) = self.content.as_mut() {
                let p = &self.pieces[piece as usize];
                let spec = p.spec.expect("a live piece has a spec");
                let unit_sectors = self.unit_sectors.size;
                let index = (spec.first / unit_sectors) as u32;
                let row = spec.first % unit_sectors;
                let u = p.map.data[index as usize];
                let j = &self.jobs[job as usize];
                let mut stale = false;
                for k in 0..spec.sectors {
                    let lba = c.logical(p.stripe, index, row + k);
                    let value = j.values[(u.pba + row + k - j.start) as usize];
                    stale |= !c.check(lba, value);
                }
                if stale {
                    c.stats.stale_reads += 1;
                }
            }
            self.finish_piece_checked(piece)?;
        }
        self.rebuild_write(job, Priority::Foreground);
        Ok(())
    }

    /// A user write waits for `stripe`'s lock while a rebuild runs: if jobs hold it (the
    /// units in flight whose stripes include it, wherever the layout puts the lost member's
    /// share of it), ask for their reads to be forced, in unit order.
    #[cold]
    pub(super) fn force_rebuild_of(&mut self, stripe: u64) {
        if self.state.rebuild.is_none() {
            return;
        }
        let mut holders: Vec<(u64, u32)> = (self.jobs.iter().enumerate())
            .filter(|(_, j)| j.live && !j.cancelled && !j.piggyback && j.first_stripe <= stripe && stripe <= j.last_stripe)
            .map(|(index, j)| (j.unit, index as u32))
            .collect();
        holders.sort_unstable();
        holders.dedup_by_key(|&mut (unit, _)| unit);
        for (_, job) in holders {
            self.rebuild_events.push(RebuildEvent::Force { job });
        }
    }

    /// A user write to the target finished over `[start, end)`: the unrebuilt units it
    /// covers whole are current now.
    pub(super) fn user_wrote_target(&mut self, start: u64, end: u64) -> Result<()> {
        let Some(r) = self.state.rebuild.as_deref_mut() else { return Ok(()) };
        let end = end.min(r.units.capacity());
        if start >= end {
            return Ok(());
        }
        let (first, last) = (r.units.unit_of(start), r.units.unit_of(end - 1));
        for unit in first..=last {
            let (a, b) = r.units.range(unit);
            if a >= start && b <= end && r.states.get(unit) == UnitState::Unrebuilt {
                r.states.mark_rebuilt(unit);
                r.made_current[MadeCurrentBy::UserWrite as usize] += 1;
                if let Some(c) = self.content.as_mut() {
                    c.verify_rebuilt(self.layout.as_ref(), r.member_slot, r.target, a, b, self.state.placement.as_deref());
                }
            }
        }
        self.finish_rebuild_if_complete()
    }

    /// When every unit is current: the target takes the member's place.
    fn finish_rebuild_if_complete(&mut self) -> Result<()> {
        if !self.state.rebuild.as_deref().is_some_and(|r| r.states.complete()) {
            return Ok(());
        }
        let r = self.state.rebuild.take().expect("checked above");
        if let Some(placement) = self.state.placement.as_deref_mut().filter(|_| !r.healing) {
            placement.rebuilding(None);
        }
        self.state.write_only[r.target as usize] = false;
        self.state.failed[r.target as usize] = false;
        self.state.member_slot[r.member as usize] = r.target;
        self.state.roles[r.target as usize] = SlotRole::Member(r.member);
        if r.healing {
            // The distributed spare is free again: its space on the members is spare space.
            // What was planned against it goes to the member's new home.
            self.repoint_live_work(r.member_slot, r.target);
            self.return_spare(r.member_slot, 0);
        } else {
            self.state.roles[r.member_slot as usize] = SlotRole::Retired;
        }
        self.state.failed_members.retain(|&m| m != r.member);
        self.state.member_status[r.member as usize] = super::state::MemberStatus::Working;
        self.state.member_failed_at[r.member as usize] = None;
        let layout = std::mem::replace(&mut self.layout, Box::new(super::NoLayout));
        self.layout = crate::layout::Remapped::replace(layout, r.member_slot, r.target);
        self.state.refresh_failed_set(self.layout.as_ref());
        if let Some(c) = self.content.as_mut() {
            c.target_done(r.target);
        }
        self.rebuild_events.push(RebuildEvent::Complete { member: r.member, slot: r.target, made_current: r.made_current });
        Ok(())
    }

    /// A healing copy out of slot `from` onto slot `to` completed: user work planned against
    /// `from` (a piece between its pre-reads and its writes, an op in flight, a one-op
    /// request waiting for its lock) reads and writes `to` from now on, where the member
    /// lives, complete; an op in flight to `from` completes as if it were to `to`, which
    /// holds the same sectors. So `from` takes no more of the member's writes, and is a
    /// spare again at once.
    #[cold]
    fn repoint_live_work(&mut self, from: u32, to: u32) {
        let live_piece = super::live_entries(self.pieces.len(), &self.free_pieces);
        let repoint = |drive: &mut u32| {
            if *drive == from {
                *drive = to;
            }
        };
        for (p, _) in self.pieces.iter_mut().zip(&live_piece).filter(|(_, &live)| live) {
            p.plan.ops.iter_mut().for_each(|op| repoint(&mut op.drive));
            p.map.data.iter_mut().chain(p.map.parity.iter_mut()).for_each(|u| repoint(&mut u.drive));
            p.plan.placed_map.data.iter_mut().chain(p.plan.placed_map.parity.iter_mut()).for_each(|u| repoint(&mut u.drive));
        }
        let live_one_op = super::live_entries(self.one_ops.len(), &self.free_one_ops);
        for (op, _) in self.one_ops.iter_mut().zip(&live_one_op).filter(|(_, &live)| live) {
            repoint(&mut op.drive);
        }
    }

    /// Resolve the rebuild's effect on a piece's freshly mapped stripe: the lost member's
    /// unit moves to the target, readable when every rebuild unit under it is current (and
    /// reads are redirected, or the piece writes), else write-only. Returns the target when
    /// it was made readable for this plan (the caller restores it with
    /// [`Controller::restore_target`]).
    pub(super) fn resolve_rebuild(&mut self, idx: u32, is_write: bool) -> Option<u32> {
        let r = self.state.rebuild.as_deref()?;
        if r.healing {
            // The member works where it lives: its units stay there (writes are copied to the
            // target when issued).
            return None;
        }
        let unit_sectors = self.unit_sectors.size;
        let p = &mut self.pieces[idx as usize];
        let placement = self.state.placement.as_deref();
        let mut readable = true;
        let mut found = false;
        for (i, u) in p.map.data.iter_mut().chain(p.map.parity.iter_mut()).enumerate() {
            if u.drive != r.member_slot {
                continue;
            }
            found = true;
            u.drive = r.target;
            // Where the member keeps that unit now (a moved copy's slot), whose rebuild units
            // say whether the target holds it.
            let at = self.layout.placed_pba(p.stripe, i, u.pba, placement);
            let end = (at + unit_sectors).min(r.units.capacity());
            if at >= end {
                readable = false;
                continue;
            }
            let (first, last) = (r.units.unit_of(at), r.units.unit_of(end - 1));
            readable &= (first..=last).all(|unit| r.states.get(unit) == UnitState::Rebuilt);
        }
        if !found || !readable || !(is_write || r.redirect_reads) {
            return None;
        }
        let target = r.target;
        self.state.failed[target as usize] = false;
        self.state.write_only[target as usize] = false;
        Some(target)
    }

    /// Undo [`Controller::resolve_rebuild`]'s readable target after planning.
    pub(super) fn restore_target(&mut self, target: u32) {
        self.state.failed[target as usize] = true;
        self.state.write_only[target as usize] = true;
    }
}

/// Whether `reads` reach every sector of a unit of `sectors` sectors. (Whether parity has
/// all it needs at each sector is the content model's to prove.)
fn reads_cover(reads: &[JobRead], sectors: u64) -> bool {
    if reads.iter().any(|r| r.offset + r.sectors > sectors) {
        return false;
    }
    let mut spans: Vec<(u64, u64)> = reads.iter().map(|r| (r.offset, r.offset + r.sectors)).collect();
    spans.sort_unstable();
    let mut covered = 0;
    for (from, to) in spans {
        if from > covered {
            return false;
        }
        covered = covered.max(to);
    }
    covered >= sectors
}
