//! The content model's judgement of a log-assisted array at the end of a run: every block of
//! every row the run wrote (logged or not) is recovered as if its drive were lost (only the
//! lost member's blocks, when a member is lost), by the
//! scheme's rule (Fig. 5; the deltas for Parity Logging; plain reconstruction for a row
//! with no entry), from what the drives and the log really hold, and compared with the value
//! last written. A wrong record, a stale parity left without an entry, or a missing pre-read
//! shows up here as a wrong sector.

use super::layout::LogState;
use super::{recovery, Recovery};
use crate::content::ContentModel;
use crate::error::{Error, Result};
use crate::layout::{Layout, StripeMap};

/// Recover every block of every row the run wrote, and count the sectors checked and wrong
/// into `state.stats`.
pub fn verify(content: &mut ContentModel, layout: &dyn Layout, state: &mut LogState) -> Result<()> {
    let block = state.block_sectors;
    let unit = layout.stripe_unit_sectors();
    let rows_per_unit = unit / block;
    let mut rows: Vec<u64> = state.index.logged_rows();
    for drive in 0..layout.drives() {
        for pba in content.written_sectors(drive) {
            if pba / unit < layout.stripes() {
                rows.push(pba / unit * rows_per_unit + pba % unit / block);
            }
        }
    }
    rows.sort_unstable();
    rows.dedup();
    let mut map = StripeMap::default();
    let rule = state.scheme.recovery_rule();
    for row_id in rows {
        let (stripe, row) = (row_id / rows_per_unit, row_id % rows_per_unit);
        layout.map_stripe(stripe, &mut map);
        let entry = state.index.row(row_id);
        let n = map.data.len() as u32;
        // With a member lost, only its blocks are recovered (what a degraded read does); a
        // stripe that lost two units, or only its parity, has nothing to recover here.
        let lost: Vec<u32> = (0..n).filter(|&i| content.is_failed(map.data[i as usize].drive)).collect();
        let lost_units = lost.len() + content.is_failed(map.parity[0].drive) as usize;
        if lost_units > 1 {
            continue;
        }
        for failed in 0..n {
            if lost_units == 1 && !lost.contains(&failed) {
                continue;
            }
            if state.lost_blocks.get(&row_id).is_some_and(|m| m >> failed & 1 == 1) {
                // Gone with the log, and reported so (`log.lost_blocks`).
                continue;
            }
            let how = recovery(rule, entry, failed).map_err(|e| Error::Invariant(format!("log row {row_id}: {e}")))?;
            for k in 0..block {
                let sector = row * block + k;
                let mut read = |drive: u32, pba: u64| content.read_physical(layout, drive, pba).unwrap_or(0);
                let log = |address: u64| address * block + k;
                let parity = map.parity[0];
                let survivors = |skip: &dyn Fn(u32) -> bool, read: &mut dyn FnMut(u32, u64) -> u64| {
                    (0..n).filter(|&i| i != failed && !skip(i)).fold(0, |x, i| x ^ read(map.data[i as usize].drive, map.data[i as usize].pba + sector))
                };
                let value = match &how {
                    Recovery::Plain => read(parity.drive, parity.pba + sector) ^ survivors(&|_| false, &mut read),
                    Recovery::Record(address) => read(state.log_slot, log(*address)),
                    Recovery::OldValues { from_log } => {
                        let logged = |i: u32| from_log.iter().any(|&(b, _)| b == i);
                        let mut x = read(parity.drive, parity.pba + sector) ^ survivors(&logged, &mut read);
                        for &(_, address) in from_log {
                            x ^= read(state.log_slot, log(address));
                        }
                        x
                    }
                    Recovery::ParityAndDeltas { deltas } => {
                        let mut x = read(parity.drive, parity.pba + sector) ^ survivors(&|_| false, &mut read);
                        for &address in deltas {
                            x ^= read(state.log_slot, log(address));
                        }
                        x
                    }
                };
                let expected = content.expected(content.logical(stripe, failed, sector));
                state.stats.recovery_sectors_checked += 1;
                if value != expected {
                    state.stats.recovery_sectors_wrong += 1;
                    state.first_wrong_recovery.get_or_insert((row_id, failed, k));
                }
            }
        }
    }
    Ok(())
}
