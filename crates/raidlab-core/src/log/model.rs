//! A block-level model of a log-assisted array, for the schemes' tests: every block holds a
//! value, and the log holds the records the schemes append. It proves the schemes' rules
//! (what they pre-read, log and recover) on values, apart from the simulator's timing.

use super::{raid5_row, recovery, BlockMask, LogIndex, LogScheme, Method, RecordKind, Recovery, RowPlan, RowState};
use crate::sim::{RngStream, StreamId};

/// Rows of `n` data blocks, their on-disk parity, the log's values and the index.
pub struct Model {
    pub n: u32,
    pub data: Vec<Vec<u64>>,
    pub parity: Vec<u64>,
    pub log: Vec<u64>,
    pub index: LogIndex,
    next_value: u64,
}

impl Model {
    pub fn new(rows: usize, n: u32, log_blocks: u64) -> Model {
        let data: Vec<Vec<u64>> = (0..rows).map(|r| (0..n).map(|i| (r as u64) << 8 | i as u64).collect()).collect();
        let parity = data.iter().map(|row| row.iter().fold(0, |a, v| a ^ v)).collect();
        Model { n, data, parity, log: vec![0; log_blocks as usize], index: LogIndex::new(log_blocks), next_value: 1 << 40 }
    }

    /// The state `scheme` sees for a write of `updated` in `row`.
    pub fn state(&self, row: usize, updated: BlockMask) -> RowState {
        let entry = self.index.row(row as u64);
        RowState {
            data_blocks: self.n,
            updated,
            logged: entry.map_or(0, |e| e.logged()),
            has_old: entry.map_or(0, |e| e.has_old()),
        }
    }

    /// Write fresh values to `updated` blocks of `row` under `scheme`; returns its plan, or
    /// `None` when the log was full and the row was written as plain RAID-5 (reconstruct-write
    /// with the parity, dropping the row's entry).
    pub fn write(&mut self, scheme: &dyn LogScheme, row: usize, updated: BlockMask) -> Option<RowPlan> {
        let plan = scheme.plan_row(&self.state(row, updated));
        // A scheme can only log an old value it read.
        assert_eq!(plan.log_old & !plan.pre_read, 0, "logs an old value it did not pre-read: {plan:?}");
        assert_eq!(plan.log_delta & !plan.pre_read, 0, "logs a delta without the old value: {plan:?}");
        assert_eq!(plan.log_new | plan.log_delta, plan.log_new ^ plan.log_delta);
        let new: Vec<u64> = (0..self.n)
            .map(|_| {
                self.next_value += 1;
                self.next_value
            })
            .collect();
        let fits = self.index.fits(plan.records());
        if !fits {
            for i in 0..self.n as usize {
                if updated >> i & 1 == 1 {
                    self.data[row][i] = new[i];
                }
            }
            self.resync(row);
            return None;
        }
        let records = self.index.append(row as u64, &plan).expect("it fits");
        for r in records {
            let (old, new) = (self.data[row][r.block as usize], new[r.block as usize]);
            self.log[r.address as usize] = match r.kind {
                RecordKind::Old => old,
                RecordKind::New => new,
                RecordKind::Delta => old ^ new,
            };
        }
        for i in 0..self.n as usize {
            if updated >> i & 1 == 1 {
                self.data[row][i] = new[i];
            }
        }
        if scheme.consistency() != super::Consistency::Deferred {
            // md's schemes write the parity with the data.
            self.parity[row] = self.data[row].iter().fold(0, |a, v| a ^ v);
        }
        Some(plan)
    }

    /// Re-synchronize `row`: parity from the data, entry dropped.
    pub fn resync(&mut self, row: usize) {
        self.parity[row] = self.data[row].iter().fold(0, |a, v| a ^ v);
        self.index.drop_row(row as u64);
    }

    /// Recover data block `failed` of `row` as if its drive were lost, by the scheme's rule.
    pub fn recover(&self, scheme: &dyn LogScheme, row: usize, failed: u32) -> u64 {
        let entry = self.index.row(row as u64);
        let survivors = |skip: BlockMask| -> u64 {
            (0..self.n).filter(|&i| i != failed && skip >> i & 1 == 0).fold(0, |a, i| a ^ self.data[row][i as usize])
        };
        match recovery(scheme.recovery_rule(), entry, failed).unwrap() {
            Recovery::Plain => self.parity[row] ^ survivors(0),
            Recovery::Record(address) => self.log[address as usize],
            Recovery::OldValues { from_log } => {
                let mask = from_log.iter().fold(0, |m, &(i, _)| m | 1 << i);
                from_log.iter().fold(self.parity[row] ^ survivors(mask), |a, &(_, address)| a ^ self.log[address as usize])
            }
            Recovery::ParityAndDeltas { deltas } => {
                deltas.iter().fold(self.parity[row] ^ survivors(0), |a, &address| a ^ self.log[address as usize])
            }
        }
    }
}

/// A random write mask of a row of `n` blocks: mostly one to three blocks, sometimes more.
pub fn random_updated(rng: &mut RngStream, n: u32) -> BlockMask {
    let k = if rng.unit() < 0.8 { 1 + rng.below(3) as u32 } else { 1 + rng.below(n as u64) as u32 };
    let mut mask: BlockMask = 0;
    while mask.count_ones() < k.min(n) {
        mask |= 1 << rng.below(n as u64);
    }
    mask
}

/// Scenarios by default, and behind `RAIDLAB_LONG_TESTS`.
pub fn scenarios() -> u64 {
    if std::env::var_os("RAIDLAB_LONG_TESTS").is_some() {
        10_000
    } else {
        300
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::SCHEMES;

    /// Every scheme, on random writes to a few rows with random re-syncs and a small log that
    /// fills: every block of every row is recovered from the log and the survivors to the
    /// value last written, at every step; after re-syncing every row the parity is the XOR
    /// of its row.
    #[test]
    fn every_lost_block_is_recovered_to_its_last_value_through_the_log() {
        for entry in SCHEMES {
            let scheme = entry.scheme;
            for scenario in 0..scenarios() {
                let mut rng = RngStream::new(scenario, StreamId::Policy(7));
                let n = 3 + rng.below(6) as u32;
                let mut model = Model::new(4, n, 8 + rng.below(40));
                for _ in 0..40 {
                    let row = rng.below(4) as usize;
                    if rng.unit() < 0.1 {
                        model.resync(row);
                    } else {
                        model.write(scheme, row, random_updated(&mut rng, n));
                    }
                    for row in 0..4 {
                        for failed in 0..n {
                            let value = model.recover(scheme, row, failed);
                            assert_eq!(
                                value, model.data[row][failed as usize],
                                "{} scenario {scenario}: block {failed} of row {row} recovered wrong",
                                entry.name
                            );
                        }
                    }
                }
                for row in 0..4 {
                    model.resync(row);
                    assert_eq!(model.parity[row], model.data[row].iter().fold(0, |a, v| a ^ v));
                }
                assert_eq!((model.index.rows(), model.index.used_blocks()), (0, 0));
            }
        }
    }

    /// Request by request on the same random write streams: RAID5L_S pre-reads exactly as
    /// RAID5L, RAID5L_O exactly as SWO, and SWO never more than Data Logging or RAID-5 (its
    /// parity pre-read counted or not) (notes A.8).
    #[test]
    fn pre_read_identities_and_bounds_hold_write_by_write() {
        let scheme = |name| crate::log::entry(name).unwrap().scheme;
        let names = ["raid5l", "raid5l_s", "raid5l_o", "swo", "data_logging"];
        for scenario in 0..scenarios() {
            let mut rng = RngStream::new(scenario, StreamId::Policy(8));
            let n = 3 + rng.below(6) as u32;
            let mut models: Vec<Model> = names.iter().map(|_| Model::new(3, n, 1 << 20)).collect();
            for _ in 0..60 {
                let row = rng.below(3) as usize;
                let updated = random_updated(&mut rng, n);
                let pre: Vec<u32> = names
                    .iter()
                    .zip(models.iter_mut())
                    .map(|(name, model)| model.write(scheme(name), row, updated).unwrap().pre_read.count_ones())
                    .collect();
                let (raid5l, raid5l_s, raid5l_o, swo, dl) = (pre[0], pre[1], pre[2], pre[3], pre[4]);
                assert_eq!(raid5l_s, raid5l, "scenario {scenario}");
                assert_eq!(raid5l_o, swo, "scenario {scenario}");
                assert!(swo <= dl, "scenario {scenario}: SWO {swo} > DL {dl}");
                let (_, raid5_blocks) = raid5_row(n, updated);
                assert!(swo <= raid5_blocks.count_ones(), "scenario {scenario}: SWO {swo} > RAID-5's data pre-reads");
                if rng.unit() < 0.05 {
                    models.iter_mut().for_each(|m| m.resync(row));
                }
            }
        }
    }

    /// Under plain RAID-5's counting a write of one block of a 7-drive row pre-reads it and
    /// the parity (the small write's four I/Os, §I); a full row pre-reads nothing.
    #[test]
    fn raid5_small_write_is_read_modify_write() {
        assert_eq!(raid5_row(6, 0b1), (Method::ReadModifyWrite, 0b1));
        assert_eq!(raid5_row(6, 0b111), (Method::ReconstructWrite, 0b111000));
        assert_eq!(raid5_row(6, 63), (Method::ReconstructWrite, 0));
    }
}
