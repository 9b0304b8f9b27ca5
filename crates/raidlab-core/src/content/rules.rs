//! The content model's rules, one per kind of access: what a read takes from the drives,
//! what a write stores, how a user read is checked, and how a rebuilt unit is proved.
//!
//! The controller calls [`ContentModel::op_done`] when an op finishes, naming the access
//! kind, and the piece-level rules ([`ContentModel::fill_user_writes`],
//! [`ContentModel::finish_user_piece`]) at a piece's phase boundaries. A new kind of work
//! (a log append, a destage) is one more [`Access`] variant and its rule here; the
//! controller's execution of plans does not change.

use super::{written_value, ContentModel};
use crate::layout::plan::{LogValue, LogWrites, PlanOp, PARITY_UNIT};
use crate::disk::OpKind;
use crate::error::{Error, Result};
use crate::layout::{raid6, Layout, StripeMap, UnitRole};

/// A finished op, by the kind of work it was.
pub enum Access<'a> {
    /// An op of a user request's plan: a read fills `values` from the drive, a write
    /// stores them.
    User { op: &'a PlanOp, values: &'a mut [u64] },
    /// A rebuild job read sectors `[start, end)` of source slot `drive`: combined into
    /// `values` by XOR (`xor`, parity layouts) or copied (mirrors).
    /// `code`: the lost member's slot when the layout's parity is P+Q (its lost sectors are
    /// solved per stripe, not XORed).
    RebuildRead { drive: u32, start: u64, end: u64, xor: bool, code: Option<u32>, values: &'a mut [u64] },
    /// A rebuild job wrote `values` to sectors `[start, end)` of `target`, which now hold
    /// what member slot `member_slot` lost: stored, then proved against the layout.
    /// `placement`: the layout's placement state, where its copies are now.
    RebuildWrite {
        member_slot: u32,
        target: u32,
        start: u64,
        end: u64,
        values: &'a [u64],
        placement: Option<&'a dyn crate::layout::PlacementState>,
    },
}

/// A user request's stripe piece as the piece-level rules see it.
pub struct UserPiece<'a> {
    pub stripe: u64,
    pub map: &'a StripeMap,
    pub ops: &'a [PlanOp],
    /// The phase about to be issued (for writes) or reached (for checks), and the plan's
    /// phase count.
    pub phase: u8,
    pub phases: u8,
    /// Touched row range `[start, end)` of every data unit of the stripe.
    pub touched: &'a [(u64, u64)],
    /// Some sector could not be read or stored (reported as data loss, not as stale).
    pub lost: bool,
    pub is_write: bool,
    /// The write's id (its values are [`written_value`]s of it).
    pub write_id: u64,
    /// A log-assisted write's records ([`crate::layout::plan::Plan::log`]); its writes are
    /// filled by the log rule.
    pub log: Option<&'a LogWrites>,
    /// One value per sector of the plan's ops (at each op's `value_offset`).
    pub values: &'a mut [u64],
}

impl ContentModel {
    /// Apply the rule of a finished op's access kind.
    pub fn op_done(&mut self, layout: &dyn Layout, access: Access<'_>) -> Result<()> {
        match access {
            Access::User { op, values } => {
                for (k, v) in values.iter_mut().enumerate() {
                    let pba = op.pba + k as u64;
                    match op.kind {
                        OpKind::Read => {
                            *v = self.read_physical(layout, op.drive, pba).ok_or_else(|| {
                                Error::Invariant(format!("read of failed drive {} succeeded", op.drive))
                            })?
                        }
                        OpKind::Write => self.write_physical(op.drive, pba, *v),
                    }
                }
            }
            Access::RebuildRead { drive, start, end, code: Some(member_slot), values, .. } => {
                self.pq_rebuild_read(layout, member_slot, drive, start, end, values)?;
            }
            Access::RebuildRead { drive, start, end, xor, code: None, values } => {
                for (k, pba) in (start..end).enumerate() {
                    let v = self
                        .read_physical(layout, drive, pba)
                        .ok_or_else(|| Error::Invariant(format!("rebuild read of failed slot {drive} succeeded")))?;
                    if xor {
                        values[k] ^= v;
                    } else {
                        values[k] = v;
                    }
                }
            }
            Access::RebuildWrite { member_slot, target, start, end, values, placement } => {
                for (k, pba) in (start..end).enumerate() {
                    self.write_physical(target, pba, values[k]);
                }
                self.verify_rebuilt(layout, member_slot, target, start, end, placement);
            }
        }
        Ok(())
    }

    /// Before a write piece's phase is issued: the values its write ops of that phase store.
    /// Data units take the write's values; parity takes the XOR of everything the plan
    /// pre-read at the row and of the new values of the units updated at it (a unit on a
    /// failed drive included).
    pub fn fill_user_writes(&self, piece: &mut UserPiece<'_>) {
        if !piece.is_write {
            return;
        }
        if let Some(log) = piece.log {
            if log.home_rule {
                return self.fill_md_writes(piece, log);
            }
            return self.fill_log_writes(piece, log);
        }
        fill_phase_writes(piece, |piece, op, pba| self.plain_value(piece, op.drive, pba));
    }

    /// What a plain write plan stores at `pba` of `drive`: a data unit the write's value, a
    /// parity the XOR of everything the plan pre-read at the row and of the new values of the
    /// units updated at it (a unit on a failed drive included).
    #[inline(always)]
    fn plain_value(&self, piece: &UserPiece<'_>, drive: u32, pba: u64) -> u64 {
        let copies = piece.map.copies.max(1) as usize;
        let unit_sectors = self.unit_sectors;
        // (A drive may hold two units of a stripe: one's primary and another's backup,
        // in a declustered mirror.)
        let holds = |u: &&crate::layout::UnitLocation| u.drive == drive && pba >= u.pba && pba - u.pba < unit_sectors;
        if let Some(pos) = piece.map.data.iter().position(|u| holds(&u)) {
            let unit = piece.map.data[pos];
            let index = (pos / copies) as u32;
            written_value(piece.write_id, self.logical(piece.stripe, index, pba - unit.pba))
        } else if piece.map.parity.len() >= 2 {
            let k = piece.map.parity.iter().position(|u| u.drive == drive).expect("a parity unit's drive") as u32;
            self.pq_parity_value(piece, k, pba - piece.map.parity[k as usize].pba)
        } else {
            let row = pba - piece.map.parity[0].pba;
            let mut x = xor_of_reads(piece, row, usize::MAX, true).unwrap_or(0);
            for (i, &(a, b)) in piece.touched.iter().enumerate() {
                if a <= row && row < b {
                    x ^= written_value(piece.write_id, self.logical(piece.stripe, i as u32, row));
                }
            }
            x
        }
    }

    /// md's rule (`crate::log::md_journal`, `crate::log::md_ppl`): a journal record holds
    /// what the plan writes home at its unit and offset; a partial parity is the XOR of what
    /// the plan pre-read at the row (the old parity and the old modified blocks, or the
    /// unmodified blocks: either way the XOR of the unmodified blocks); a home write takes its
    /// recipe's XOR where the plan has one (a replay, a parity recomputed after a crash), else
    /// plain RAID-5's value.
    fn fill_md_writes(&self, piece: &mut UserPiece<'_>, log: &LogWrites) {
        let home = |piece: &UserPiece<'_>, unit: u32, offset: u64| -> u64 {
            if let Some(recipe) = log.recipes.iter().find(|r| r.unit == unit && offset >= r.row && offset < r.row + r.sectors as u64) {
                let k = offset - recipe.row;
                return recipe.reads.iter().fold(0, |x, &(drive, pba)| x ^ value_read(piece, drive, pba + k).unwrap_or(0));
            }
            let u = if unit == PARITY_UNIT { piece.map.parity[0] } else { piece.map.data[unit as usize] };
            self.plain_value(piece, u.drive, u.pba + offset)
        };
        fill_phase_writes(piece, |piece, op, pba| {
            if op.drive == log.log_slot && op.phase == log.md_phase {
                // The log write (the phase before the home writes): its records, headers and
                // the padding to whole blocks.
                let Some(append) = log.appends.iter().find(|a| pba >= a.log_pba && pba < a.log_pba + a.sectors as u64) else { return 0 };
                let offset = append.row + pba - append.log_pba;
                return match append.value {
                    LogValue::Home => home(piece, append.unit, offset),
                    LogValue::PartialParity => xor_of_reads(piece, offset, usize::MAX, true).unwrap_or(0),
                    _ => 0,
                };
            }
            let unit = match piece.map.data.iter().position(|u| u.drive == op.drive) {
                Some(i) => i as u32,
                None => PARITY_UNIT,
            };
            let base = if unit == PARITY_UNIT { piece.map.parity[0].pba } else { piece.map.data[unit as usize].pba };
            home(piece, unit, pba - base)
        });
    }

    /// The log rule: a log-assisted write's data units take the write's values; a record on
    /// the log drive takes the block's old value as pre-read, its new value (the write's
    /// values where it writes, the pre-read values elsewhere), or the two XORed; a parity
    /// (a row the log had no room for) takes the XOR of the row's new data, from the write
    /// where it writes and from the pre-reads elsewhere.
    fn fill_log_writes(&self, piece: &mut UserPiece<'_>, log: &LogWrites) {
        let new_value = |piece: &UserPiece<'_>, unit: usize, row: u64| -> u64 {
            let (a, b) = piece.touched[unit];
            if a <= row && row < b {
                written_value(piece.write_id, self.logical(piece.stripe, unit as u32, row))
            } else {
                self.recovered_or_read(piece, log, unit, row).unwrap_or(0)
            }
        };
        fill_phase_writes(piece, |piece, op, pba| {
            if op.drive == log.log_slot {
                let append = log
                    .appends
                    .iter()
                    .find(|a| pba >= a.log_pba && pba < a.log_pba + a.sectors as u64)
                    .expect("every sector a log write writes is a record's");
                let (unit, row) = (append.unit as usize, append.row + pba - append.log_pba);
                if append.unit == PARITY_UNIT {
                    // A flush appends the row's new parity (md's write-back journal).
                    return (0..piece.map.data.len()).fold(0, |x, unit| x ^ new_value(piece, unit, row));
                }
                let u = piece.map.data[unit];
                let old = || value_read(piece, u.drive, u.pba + row).unwrap_or(0);
                match append.value {
                    LogValue::Old => old(),
                    LogValue::New => new_value(piece, unit, row),
                    LogValue::Delta => old() ^ new_value(piece, unit, row),
                    // (md's records are filled by md's rule, never here.)
                    LogValue::Home | LogValue::PartialParity | LogValue::Header => 0,
                }
            } else if let Some(unit) = piece.map.data.iter().position(|u| u.drive == op.drive) {
                new_value(piece, unit, pba - piece.map.data[unit].pba)
            } else {
                let row = pba - piece.map.parity[0].pba;
                (0..piece.map.data.len()).fold(0, |x, unit| x ^ new_value(piece, unit, row))
            }
        });
    }

    /// When a user piece is answered: a read's values are checked against the values last
    /// written (directly, or reconstructed from what the plan read), a write's are
    /// committed as the logical sectors' new values. Counts a read with a stale sector in
    /// `stale_reads`.
    pub fn finish_user_piece(&mut self, piece: &UserPiece<'_>) -> Result<()> {
        if piece.is_write {
            // (A replay's touched sectors are the caught write's, on a home it could not
            // write: the parity it writes carries them.)
            let mut write_id = piece.write_id;
            if let Some(log) = piece.log.filter(|l| l.replay) {
                self.commit_replayed(piece, log);
                write_id = log.replay_write_id;
            }
            for (i, &(a, b)) in piece.touched.iter().enumerate() {
                for row in a..b {
                    let lba = self.logical(piece.stripe, i as u32, row);
                    self.commit(lba, written_value(write_id, lba));
                }
            }
            return Ok(());
        }
        match piece.log {
            // A log-assisted plan: what it read where the unit lies, or what its recipe
            // recovers (Fig. 5).
            Some(log) => {
                // (What the recipes give is found first: checking counts into the model.)
                let values: Vec<Vec<Option<u64>>> = piece
                    .touched
                    .iter()
                    .enumerate()
                    .map(|(i, &(a, b))| {
                        (a..b)
                            .map(|row| {
                                // (A sector the plan reports lost is not answered, even where
                                // the plan read its home for another unit's recovery.)
                                let lost = log.lost.iter().any(|&(unit, from, to)| unit as usize == i && row >= from && row < to);
                                if lost {
                                    None
                                } else {
                                    self.recovered_or_read(piece, log, i, row)
                                }
                            })
                            .collect()
                    })
                    .collect();
                self.check_reads(piece, |i, row| values[i][(row - piece.touched[i].0) as usize])
            }
            None => {
                let copies = piece.map.copies.max(1) as usize;
                self.check_reads(piece, |i, row| {
                    let direct = piece.map.data[i * copies..(i + 1) * copies]
                        .iter()
                        .find_map(|u| value_read(piece, u.drive, u.pba + row));
                    match direct {
                        Some(v) => Some(v),
                        None if piece.map.parity.len() >= 2 => pq_recover(piece, row, UnitRole::Data { index: i as u32, copy: 0 }),
                        None if !piece.map.parity.is_empty() => xor_of_reads(piece, row, i, false),
                        None => None,
                    }
                })
            }
        }
    }

    /// A journal replay wrote home the data of a write a crash caught: each sector must hold
    /// that write's value (md's journal makes the stripe's write whole), which is now the
    /// sector's last value. A replayed sector with any other value counts as stale.
    fn commit_replayed(&mut self, piece: &UserPiece<'_>, log: &LogWrites) {
        for op in piece.ops.iter().filter(|o| o.kind == OpKind::Write && o.drive != log.log_slot) {
            let Some(i) = piece.map.data.iter().position(|u| u.drive == op.drive) else { continue };
            let u = piece.map.data[i];
            for k in 0..op.sectors as u64 {
                let lba = self.logical(piece.stripe, i as u32, op.pba + k - u.pba);
                let (expected, actual) = (written_value(log.replay_write_id, lba), piece.values[op.value_offset as usize + k as usize]);
                self.stats.sectors_checked += 1;
                if actual != expected {
                    self.stats.stale_sectors += 1;
                    self.first_stale.get_or_insert((lba, expected, actual));
                }
                self.commit(lba, expected);
            }
        }
    }

    /// Check every sector a read piece touches, data unit `i` at `row` taken as `value(i,
    /// row)` gives it, against the value last written; `None` is a loss when the plan reports
    /// one, else a plan that read nothing there.
    fn check_reads(&mut self, piece: &UserPiece<'_>, value: impl Fn(usize, u64) -> Option<u64>) -> Result<()> {
        let mut stale = false;
        for (i, &(a, b)) in piece.touched.iter().enumerate() {
            for row in a..b {
                let lba = self.logical(piece.stripe, i as u32, row);
                match value(i, row) {
                    Some(v) => stale |= !self.check(lba, v),
                    None if piece.lost => {} // reported as loss
                    None => {
                        return Err(Error::Invariant(format!(
                            "read plan for stripe {} row {row} of unit {i} read nothing",
                            piece.stripe
                        )))
                    }
                }
            }
        }
        if stale {
            self.stats.stale_reads += 1;
        }
        Ok(())
    }
}

/// Store `value(piece, op, sector)` for every sector of the piece's write ops of its current
/// phase.
fn fill_phase_writes(piece: &mut UserPiece<'_>, value: impl Fn(&UserPiece<'_>, &PlanOp, u64) -> u64) {
    for oi in 0..piece.ops.len() {
        let op = piece.ops[oi];
        if op.kind != OpKind::Write || op.phase != piece.phase {
            continue;
        }
        for k in 0..op.sectors as u64 {
            let v = value(piece, &op, op.pba + k);
            piece.values[op.value_offset as usize + k as usize] = v;
        }
    }
}

impl ContentModel {
    /// The value of data unit `unit` at `row` as a log-assisted plan has it: recovered by
    /// its recipe if it has one there (a memory recipe's reads are of what the log holds),
    /// else read where the unit lies.
    fn recovered_or_read(&self, piece: &UserPiece<'_>, log: &LogWrites, unit: usize, row: u64) -> Option<u64> {
        if let Some(recipe) = log.recipes.iter().find(|r| r.unit as usize == unit && row >= r.row && row < r.row + r.sectors as u64) {
            let k = row - recipe.row;
            return recipe.reads.iter().try_fold(0, |x, &(drive, pba)| {
                let value = if recipe.memory { self.held(drive, pba + k) } else { value_read(piece, drive, pba + k) };
                value.map(|v| x ^ v)
            });
        }
        let u = piece.map.data[unit];
        value_read(piece, u.drive, u.pba + row)
    }
}

impl ContentModel {
    /// P+Q (`crate::layout::raid6`): the value parity `k` (0: P, 1: Q) of a write plan
    /// stores at `row`. With the parity's old value and the old values of the units updated
    /// at the row pre-read (read-modify-write), the old parity plus each unit's change times
    /// its coefficient; else computed from the row's new data: the write's values where it
    /// writes, the pre-read values elsewhere, and units not read recovered from what was.
    fn pq_parity_value(&self, piece: &UserPiece<'_>, k: u32, row: u64) -> u64 {
        let n = piece.map.data.len();
        let updated = |i: usize| piece.touched[i].0 <= row && row < piece.touched[i].1;
        let old = |u: &crate::layout::UnitLocation| value_read(piece, u.drive, u.pba + row);
        let new = |i: usize| written_value(piece.write_id, self.logical(piece.stripe, i as u32, row));
        if let Some(old_parity) = old(&piece.map.parity[k as usize]) {
            if (0..n).filter(|&i| updated(i)).all(|i| old(&piece.map.data[i]).is_some()) {
                return (0..n).filter(|&i| updated(i)).fold(old_parity, |x, i| {
                    x ^ raid6::scale(raid6::parity_coefficient(k, i as u32), old(&piece.map.data[i]).unwrap_or(0) ^ new(i))
                });
            }
        }
        let data = (0..n).map(|i| {
            if updated(i) {
                new(i)
            } else {
                old(&piece.map.data[i])
                    .or_else(|| pq_recover(piece, row, UnitRole::Data { index: i as u32, copy: 0 }))
                    .unwrap_or(0)
            }
        });
        raid6::parity_of(k, data)
    }

    /// P+Q: what sectors `[start, end)` of source slot `drive` contribute to rebuilding member
    /// slot `member_slot`'s unit of the same stripe and row: each sector's value times its
    /// coefficient in the recovery of the lost unit from the stripe's units on working drives
    /// (those on failed drives are the erased ones), XORed into `values`.
    fn pq_rebuild_read(&mut self, layout: &dyn Layout, member_slot: u32, drive: u32, start: u64, end: u64, values: &mut [u64]) -> Result<()> {
        let mut map = StripeMap::default();
        let mut cached: Option<(u64, Coefficient)> = None;
        for (k, pba) in (start..end).enumerate() {
            let Some((stripe, source)) = layout.locate(drive, pba) else {
                return Err(Error::Invariant(format!("rebuild read of slot {drive} sector {pba} outside a stripe")));
            };
            let coefficient = match cached {
                Some((s, c)) if s == stripe => c,
                _ => {
                    layout.map_stripe(stripe, &mut map);
                    let target = match map.data.iter().position(|u| u.drive == member_slot) {
                        Some(i) => UnitRole::Data { index: i as u32, copy: 0 },
                        None => match map.parity.iter().position(|u| u.drive == member_slot) {
                            Some(p) => UnitRole::Parity { index: p as u32 },
                            None => return Err(Error::Invariant(format!("stripe {stripe} has no unit on slot {member_slot}"))),
                        },
                    };
                    let erased: Vec<UnitRole> = map
                        .data
                        .iter()
                        .enumerate()
                        .filter(|(_, u)| self.failed[u.drive as usize])
                        .map(|(i, _)| UnitRole::Data { index: i as u32, copy: 0 })
                        .chain(map.parity.iter().enumerate().filter(|(_, u)| self.failed[u.drive as usize]).map(|(p, _)| UnitRole::Parity { index: p as u32 }))
                        .collect();
                    let coefficients = raid6::recovery_coefficients(map.data.len() as u32, &erased, target).ok_or_else(|| {
                        Error::Invariant(format!("rebuild of stripe {stripe}: {} of its units are lost", erased.len()))
                    })?;
                    let c = coefficients.iter().find(|&&(r, _)| r == source).map(|&(_, c)| c).unwrap_or(gf256::gf256(0));
                    cached = Some((stripe, c));
                    c
                }
            };
            let v = self
                .read_physical(layout, drive, pba)
                .ok_or_else(|| Error::Invariant(format!("rebuild read of failed slot {drive} succeeded")))?;
            values[k] ^= raid6::scale(coefficient, v);
        }
        Ok(())
    }
}

/// A GF(2⁸) coefficient.
type Coefficient = gf256::gf256;

/// P+Q: unit `target` of the piece's stripe at `row`, recovered from what the plan read there
/// (the units it did not read are the erased ones); `None` when it read too little.
fn pq_recover(piece: &UserPiece<'_>, row: u64, target: UnitRole) -> Option<u64> {
    let map = piece.map;
    let roles = (0..map.data.len())
        .map(|i| (UnitRole::Data { index: i as u32, copy: 0 }, map.data[i]))
        .chain(map.parity.iter().enumerate().map(|(p, &u)| (UnitRole::Parity { index: p as u32 }, u)));
    let read: Vec<(UnitRole, Option<u64>)> = roles.map(|(r, u)| (r, value_read(piece, u.drive, u.pba + row))).collect();
    let erased: Vec<UnitRole> = read.iter().filter(|(_, v)| v.is_none()).map(|&(r, _)| r).collect();
    let coefficients = raid6::recovery_coefficients(map.data.len() as u32, &erased, target)?;
    Some(coefficients.iter().fold(0, |x, &(r, c)| {
        let v = read.iter().find(|&&(role, _)| role == r).and_then(|&(_, v)| v).unwrap_or(0);
        x ^ raid6::scale(c, v)
    }))
}

/// The value the piece's plan read at (drive, pba), if a read op of a finished phase covers
/// it.
fn value_read(piece: &UserPiece<'_>, drive: u32, pba: u64) -> Option<u64> {
    let done = piece.phase.max(1).min(piece.phases);
    piece.ops.iter().find_map(|o| {
        (o.kind == OpKind::Read && o.drive == drive && o.phase < done && pba >= o.pba && pba < o.pba + o.sectors as u64)
            .then(|| piece.values[o.value_offset as usize + (pba - o.pba) as usize])
    })
}

/// XOR of every value the plan read at row `row` of the stripe's units other than data unit
/// `skip` (`usize::MAX`: skip none). `None` if some needed unit was not read, unless
/// `only_read` (then the units read are XORed and the others left out).
fn xor_of_reads(piece: &UserPiece<'_>, row: u64, skip: usize, only_read: bool) -> Option<u64> {
    let mut x = 0;
    let units = piece.map.data.iter().enumerate().chain(piece.map.parity.iter().map(|u| (usize::MAX - 1, u)));
    for (i, u) in units {
        if i == skip {
            continue;
        }
        match value_read(piece, u.drive, u.pba + row) {
            Some(v) => x ^= v,
            None if only_read => {}
            None => return None,
        }
    }
    Some(x)
}
