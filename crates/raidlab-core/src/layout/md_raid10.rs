//! Linux md's raid10: `K` copies of every chunk, placed by the kernel's `__raid10_find_phys`
//! in one of three arrangements, named as mdadm's `--layout` names them (`md_layout`):
//!
//! - **near** (`nK`, mdadm's default `n2`): the chunks are numbered in array order and their
//!   copies written row by row across the drives, `K` consecutive slots per chunk. On a drive
//!   count that `K` divides this is RAID-1+0; on 3 drives with `n2` it is what other vendors
//!   call RAID-1E (rows `A A B / B C C / …`).
//! - **far** (`fK`): the first copies are striped like RAID-0 over the first `1/K` of every
//!   drive; copy `f` repeats that stripe `f` such parts further on, shifted by `f` drives.
//! - **offset** (`oK`): each row of `N` chunks is followed by `K − 1` rows holding its copies,
//!   each shifted one drive further.
//!
//! ```text
//!   n2, 3 drives      f2, 4 drives (4 chunks each)     o2, 4 drives
//!   0  0  1           0  1  2  3                       0  1  2  3
//!   1  2  2           4  5  6  7                       3  0  1  2
//!   3  3  4           3  0  1  2   <- far copies       4  5  6  7
//!   4  5  5           7  4  5  6                       7  4  5  6
//! ```
//!
//! Mapping (near copies `nc`, far copies `fc`, `N` drives; here one of the two is 1): logical
//! chunk `c` goes to slot `c · nc` of the row-major order, that is device `(c · nc) mod N` at
//! chunk row `(c · nc) / N` (times `fc` for offset); near copies take the next slots, wrapping
//! to device 0 one row on; far copy `f` moves the device on by `f · nc` (mod `N`) and the row on
//! by `f · stride`, where the stride is the first copies' share of the drive (far) or one row
//! (offset). Capacity is md's (`raid10_size`, `calc_sectors`): with `D` whole chunks per drive,
//! near holds `⌊D · N / K⌋` chunks (its last row may be partly unused), far and offset
//! `⌊D / K⌋ · N`.
//!
//! What this layout leaves out of md: md can combine near and far copies in one array (a
//! layout word with both counts above 1); here an array has one arrangement. The kernel's
//! "far sets" (layout bits 17–18, which shift far copies within groups of drives) are not
//! modelled: the far copies shift over the whole array, as mdadm's plain `fK` does.
//!
//! Reads follow md's `read_balance` as far as the simulator sees the drives: far copies read
//! the working copy at the lowest address (the first part of the drives, its faster zones);
//! near and offset copies take an idle drive first, else the copy nearest the head, which
//! md measures in sectors from where it last sent the drive and the simulator by the drive's
//! positioning estimate (the mirror rule's).

use super::keys::OwnKey;
use super::plan::{FixedCopyPlanner, Planner, MIRROR};
use super::{Layout, LayoutParams, LayoutShape, Reconstruction, SourceRead, StripeMap, UnitLocation, UnitRole};
use crate::error::{Error, Result};

/// md raid10's own `[array]` keys.
pub const OWN_KEYS: &[OwnKey] = &[OwnKey {
    name: "md_layout",
    doc: "md raid10's copy arrangement in mdadm's notation: `n` (near), `f` (far) or `o` (offset) followed \
          by the number of copies, at least 2 and at most the drives (`n2`, md's default; `f2`; `o3`).",
    default: || toml::Value::String("n2".into()),
    check: check_md_layout,
    schema: OwnKey::schema_of::<String>,
}];

/// How the copies of a chunk are arranged (md's near, far and offset layouts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CopyArrangement {
    /// `nK`: the copies on consecutive drives, in consecutive slots of the row-major order.
    Near,
    /// `fK`: copy `f` in part `f` of every drive (each part `1/K` of the used drive), shifted
    /// by `f` drives.
    Far,
    /// `oK`: copy `f` in the `f`-th row after the chunk's own, shifted by `f` drives.
    Offset,
}

impl CopyArrangement {
    /// The word md's documentation uses for it.
    fn word(self) -> &'static str {
        match self {
            CopyArrangement::Near => "near",
            CopyArrangement::Far => "far",
            CopyArrangement::Offset => "offset",
        }
    }
}

/// Read mdadm's layout notation (`n2`, `f3`, `o2`): the arrangement and the copy count. The
/// count against the array's drives is checked where the drives are known (in `build`).
fn parse_md_layout(text: &str) -> std::result::Result<(CopyArrangement, u32), String> {
    let mut chars = text.chars();
    let Some(letter) = chars.next() else {
        return Err("empty: write `n`, `f` or `o` and the number of copies, as mdadm does (`n2`, `f2`, `o3`)".into());
    };
    let arrangement = match letter {
        'n' => CopyArrangement::Near,
        'f' => CopyArrangement::Far,
        'o' => CopyArrangement::Offset,
        _ => {
            return Err(format!(
                "unknown arrangement `{letter}` in {text:?}: md's raid10 layouts are `n` (near), `f` (far) and `o` \
                 (offset), each followed by the number of copies (`n2`, `f2`, `o3`)"
            ))
        }
    };
    let count = chars.as_str();
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{text:?} is not a layout: after `{letter}` comes the number of copies, in digits (`{letter}2`); an array \
             has one arrangement (this layout does not combine near and far copies)"
        ));
    }
    let copies: u32 = count.parse().map_err(|_| format!("the copy count of {text:?} is too large"))?;
    if copies < 2 {
        return Err(format!("{text:?} keeps {copies} copy: md's raid10 needs at least 2 copies (`{letter}2`)"));
    }
    Ok((arrangement, copies))
}

/// The check of `md_layout` when a configuration loads: a string in mdadm's notation.
fn check_md_layout(value: &toml::Value) -> std::result::Result<(), String> {
    OwnKey::check_as::<String>(value)?;
    parse_md_layout(value.as_str().unwrap_or_default()).map(|_| ())
}

/// Greatest common divisor (Euclid).
fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Linux md's raid10 over `drives` drives, in chunks of `stripe_unit_sectors`.
///
/// A stripe of this layout is **one md chunk** (one data unit with its `copies` copies). On a
/// drive count that the copies do not divide, md's near arrangement lets a chunk's copies
/// straddle two rows (RAID-1E) and its capacity (`⌊D · N / K⌋` chunks) need not fill whole
/// rows, so a row is no group of whole chunks; one chunk per stripe keeps md's capacity
/// exactly, keeps `data_units_per_stripe` the same for every arrangement, and makes
/// `map_stripe` and `locate` direct transcriptions of md's formula. (md itself has no
/// stripes: it maps each chunk on its own.)
#[derive(Debug, Clone)]
pub struct MdRaid10Layout {
    /// `stripes` is the array's chunks.
    shape: LayoutShape,
    arrangement: CopyArrangement,
    /// Copies of each chunk (K, from 2 to the drives).
    copies: u32,
    /// Far and offset: the chunk rows of each drive that first copies take (md's stride, in
    /// chunks, for far); each such row has `copies − 1` rows of copies. Near: unused (0).
    first_copy_rows: u64,
    /// Chunk rows of each drive that hold copies (near: the last may be partly empty).
    used_rows: u64,
}

impl MdRaid10Layout {
    /// The layout for `params`; errors name `key.md_layout` (or `key.stripe_unit_kib` when a
    /// drive cannot hold one chunk in every copy's part).
    pub fn build(params: &LayoutParams, key: &str) -> Result<Box<dyn Layout>> {
        let text: String = params.own("md_layout", key)?;
        let (arrangement, copies) = parse_md_layout(&text).map_err(|why| Error::config(format!("{key}.md_layout"), why))?;
        let drives = params.drives;
        if copies > drives {
            return Err(Error::config(
                format!("{key}.md_layout"),
                format!(
                    "md's {} layout with more copies than drives: {text:?} keeps {copies} copies and the array has \
                     {drives} drives (md refuses it too)",
                    arrangement.word()
                ),
            ));
        }
        // Whole chunks per drive: md rounds each device down to whole chunks.
        let chunks_per_drive = LayoutShape::fit(params, key)?.stripes;
        let n = u64::from(drives);
        let k = u64::from(copies);
        let (chunks, first_copy_rows, used_rows) = match arrangement {
            CopyArrangement::Near => {
                // md: ⌊D · N / nc⌋ chunks; their K · chunks copies fill whole rows but the last.
                let chunks = chunks_per_drive * n / k;
                (chunks, 0, (chunks * k).div_ceil(n))
            }
            CopyArrangement::Far | CopyArrangement::Offset => {
                // md: each drive keeps a multiple of fc chunks, ⌊D / fc⌋ rows of first copies.
                let rows = chunks_per_drive / k;
                if rows == 0 {
                    return Err(Error::config(
                        format!("{key}.stripe_unit_kib"),
                        format!(
                            "a drive of {chunks_per_drive} chunks cannot hold {copies} {} copies of even one chunk",
                            arrangement.word()
                        ),
                    ));
                }
                (rows * n, rows, rows * k)
            }
        };
        let shape = LayoutShape { drives, stripe_unit_sectors: params.stripe_unit_sectors, stripes: chunks };
        Ok(Box::new(MdRaid10Layout { shape, arrangement, copies, first_copy_rows, used_rows }))
    }

    /// Where copy `copy` of chunk `chunk` lies: drive and chunk row.
    fn place(&self, chunk: u64, copy: u32) -> (u32, u64) {
        let n = u64::from(self.shape.drives);
        match self.arrangement {
            CopyArrangement::Near => {
                // The copies take consecutive slots of the row-major order: wrapping past the
                // last drive moves them one row on (md's `dev = 0; sector += chunk`).
                let slot = chunk * u64::from(self.copies) + u64::from(copy);
                ((slot % n) as u32, slot / n)
            }
            CopyArrangement::Far | CopyArrangement::Offset => {
                let (row, drive) = (chunk / n, chunk % n);
                let shifted = ((drive + u64::from(copy)) % n) as u32;
                let copy_row = match self.arrangement {
                    CopyArrangement::Far => row + u64::from(copy) * self.first_copy_rows,
                    _ => row * u64::from(self.copies) + u64::from(copy),
                };
                (shifted, copy_row)
            }
        }
    }

    /// What chunk row `row` of `drive` holds: chunk and copy; `None` for an unused row (past
    /// the used rows, or the empty end of near's last row).
    fn chunk_at(&self, drive: u32, row: u64) -> Option<(u64, u32)> {
        if drive >= self.shape.drives || row >= self.used_rows {
            return None;
        }
        let n = u64::from(self.shape.drives);
        let k = u64::from(self.copies);
        match self.arrangement {
            CopyArrangement::Near => {
                let slot = row * n + u64::from(drive);
                let chunk = slot / k;
                (chunk < self.shape.stripes).then_some((chunk, (slot % k) as u32))
            }
            CopyArrangement::Far | CopyArrangement::Offset => {
                let (data_row, copy) = match self.arrangement {
                    CopyArrangement::Far => (row % self.first_copy_rows, row / self.first_copy_rows),
                    _ => (row / k, row % k),
                };
                // Copy f was shifted f drives on (f < K ≤ N).
                let first_drive = (u64::from(drive) + n - copy) % n;
                Some((data_row * n + first_drive, copy as u32))
            }
        }
    }

    /// Whether some chunk's copy 0 lies on `drive`. Every arrangement puts a chunk's copies on
    /// the `K` drives from its copy 0's on, cyclically, so these "first drives" name every
    /// set of drives holding a chunk. For near, chunk `c`'s first drive is `c · K mod N`: the
    /// multiples of `g = gcd(N, K)`, repeating every `N / g` chunks; for far and offset it is
    /// `c mod N`: every drive, repeating every `N` chunks. An array shorter than that period
    /// (a drive of a chunk or two) has only its own chunks' first drives.
    fn copies_start_on(&self, drive: u32) -> bool {
        let n = u64::from(self.shape.drives);
        let (period, step) = match self.arrangement {
            CopyArrangement::Near => {
                let g = gcd(n, u64::from(self.copies));
                (n / g, g)
            }
            CopyArrangement::Far | CopyArrangement::Offset => (n, 1),
        };
        if self.shape.stripes >= period {
            u64::from(drive) % step == 0
        } else {
            (0..self.shape.stripes).any(|chunk| self.place(chunk, 0).0 == drive)
        }
    }

    /// The chunk of `member`'s chunk row `row` for stripe ranges: an unused row (only at the
    /// end of near's last row, past every chunk) counts as the last chunk.
    fn chunk_or_last(&self, member: u32, row: u64) -> u64 {
        self.chunk_at(member, row).map_or(self.shape.stripes - 1, |(chunk, _)| chunk)
    }
}

impl Layout for MdRaid10Layout {
    fn name(&self) -> &'static str {
        "md_raid10"
    }
    fn planner(&self) -> &'static dyn Planner {
        match self.arrangement {
            CopyArrangement::Far => &FAR_LOWEST_ADDRESS,
            CopyArrangement::Near | CopyArrangement::Offset => &MIRROR,
        }
    }
    fn fault_tolerance(&self) -> u32 {
        // Every chunk has K copies on K distinct drives, so any K − 1 failures leave a copy;
        // K failures lose data only when they are one chunk's drives (see `data_lost`).
        self.copies - 1
    }
    fn shape(&self) -> &LayoutShape {
        &self.shape
    }
    fn data_units_per_stripe(&self) -> u32 {
        1
    }
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
        let unit = self.shape.stripe_unit_sectors;
        out.reset(stripe, self.copies);
        for copy in 0..self.copies {
            let (drive, row) = self.place(stripe, copy);
            out.data.push(UnitLocation { drive, pba: row * unit });
        }
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        let (chunk, copy) = self.chunk_at(drive, pba / self.shape.stripe_unit_sectors)?;
        Some((chunk, UnitRole::Data { index: 0, copy }))
    }
    fn member_sectors(&self) -> u64 {
        self.used_rows * self.shape.stripe_unit_sectors
    }
    fn stripes_in(&self, member: u32, start: u64, end: u64, _placement: Option<&dyn super::PlacementState>) -> (u64, u64) {
        let unit = self.shape.stripe_unit_sectors;
        let last_row = self.used_rows - 1;
        let (first, last) = ((start / unit).min(last_row), ((end - 1) / unit).min(last_row));
        let chunk = |row: u64| self.chunk_or_last(member, row);
        match self.arrangement {
            CopyArrangement::Near => {
                // A drive's chunks grow with its rows: the ends suffice, but for an empty end
                // of the last row, whose chunk is the one before.
                let last_held = if last > first && self.chunk_at(member, last).is_none() { last - 1 } else { last };
                (chunk(first), chunk(last_held))
            }
            CopyArrangement::Far => {
                // They grow within each copy's part; a range across parts holds chunks far
                // apart, and every chunk between is named (more locks than needed, none missed).
                let part_rows = self.first_copy_rows;
                let (mut lo, mut hi) = (u64::MAX, 0);
                for part in first / part_rows..=last / part_rows {
                    let from = first.max(part * part_rows);
                    let to = last.min(part * part_rows + part_rows - 1);
                    lo = lo.min(chunk(from));
                    hi = hi.max(chunk(to));
                }
                (lo, hi)
            }
            CopyArrangement::Offset => {
                // Data row r's copies fill K consecutive rows, in an order that depends on the
                // drive, and hold chunks r·N .. r·N + N − 1: the least lies in the first data
                // row of the range, the greatest in its last.
                let k = u64::from(self.copies);
                let lo = (first..=last.min(first / k * k + k - 1)).map(chunk).min().unwrap_or(0);
                let hi = (first.max(last / k * k)..=last).map(chunk).max().unwrap_or(0);
                (lo, hi)
            }
        }
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        // A chunk's copies are on the K drives from its first drive on, cyclically: data is
        // lost when every drive of such a run whose first drive starts some chunk has failed.
        let n = self.shape.drives;
        failed.iter().any(|&first| {
            first < n
                && self.copies_start_on(first)
                && (1..self.copies).all(|next| failed.contains(&((first + next) % n)))
        })
    }
    fn redundancy_set(&self, member: u32) -> Vec<u32> {
        // The drives sharing a chunk with `member`: the runs of K drives that contain it and
        // start some chunk's copies.
        let n = self.shape.drives;
        let mut set = Vec::new();
        for back in 0..self.copies {
            let first = (member + n - back) % n;
            if self.copies_start_on(first) {
                set.extend((0..self.copies).map(|next| (first + next) % n).filter(|&d| d != member));
            }
        }
        set.sort_unstable();
        set.dedup();
        set
    }
    fn volatile_state(&self) -> &'static str {
        "nothing of its own (its map is fixed); a write caught in flight may leave the copies of its sectors \
         different, until a resynchronization copies one over the others"
    }
    fn reconstruction(&self, member: u32) -> Option<Reconstruction> {
        Some(Reconstruction { sources: self.redundancy_set(member), xor: false, erasures: 0 })
    }
    /// For each chunk of the lost member, the chunk's other copies, at the same sectors of
    /// their chunks: with 2 copies one read, so the reads tile the unit exactly. With more,
    /// every other copy is named (each covering the chunk's sectors once), because the layout is
    /// not told which members have failed: the controller drops the reads of failed sources,
    /// and one copy left must still cover the unit. (md reads one working copy; the cost of
    /// the others is this simulation's, as RAID-1's rebuild with 3 copies reads both others.)
    /// Consecutive chunks whose copy on a source continues its previous read extend that read.
    fn rebuild_reads(&self, member: u32, reconstruction: &Reconstruction, start: u64, end: u64, _placement: Option<&dyn super::PlacementState>, out: &mut Vec<SourceRead>) {
        let unit = self.shape.stripe_unit_sectors;
        let first_read = out.len();
        let mut at = start;
        while at < end {
            let row = at / unit;
            let run_end = ((row + 1) * unit).min(end);
            let (offset, sectors) = (at - start, run_end - at);
            let mut read = |source: u32, pba: u64| {
                // A read to extend is one the previous chunk pushed or extended, among the
                // last few; one further back is only a merge missed (an op more, no sector).
                let recent = out.len().saturating_sub(reconstruction.sources.len()).max(first_read);
                let continues = out[recent..]
                    .iter_mut()
                    .find(|r| r.source == source && r.pba + r.sectors == pba && r.offset + r.sectors == offset);
                match continues {
                    Some(r) => r.sectors += sectors,
                    None => out.push(SourceRead { source, pba, offset, sectors, outside: None }),
                }
            };
            match self.chunk_at(member, row) {
                Some((chunk, copy)) => {
                    for next in 1..self.copies {
                        let (source, source_row) = self.place(chunk, (copy + next) % self.copies);
                        read(source, source_row * unit + at % unit);
                    }
                }
                None => {
                    // An unused unit (the empty end of near's last row): nothing to copy, but
                    // the target's unit is written whole; any survivor's same sectors will do.
                    for &source in &reconstruction.sources {
                        read(source, at);
                    }
                }
            }
            at = run_end;
        }
    }
}

/// md's read balancing for far copies: a read takes the working copy at the lowest address
/// (`read_balance`'s rule for far layouts); writes update every copy.
pub static FAR_LOWEST_ADDRESS: FixedCopyPlanner = FixedCopyPlanner {
    name: "mirror (far: lowest address)",
    choose: |copies, status| copies.iter().filter(|c| !status.is_failed(c)).min_by_key(|c| c.pba).copied(),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tests::check_bijective;

    /// An md raid10 of `drives` drives with `chunks_per_drive` whole chunks of `unit`
    /// sectors each (and a part chunk, unused, at the end of every drive).
    fn layout_with_unit(md_layout: &str, drives: u32, chunks_per_drive: u64, unit: u64) -> Box<dyn Layout> {
        let params = LayoutParams::new(drives, unit, chunks_per_drive * unit + unit / 2).with("md_layout", md_layout);
        MdRaid10Layout::build(&params, "array").unwrap_or_else(|e| panic!("{md_layout} on {drives} drives: {e}"))
    }

    fn layout(md_layout: &str, drives: u32, chunks_per_drive: u64) -> Box<dyn Layout> {
        layout_with_unit(md_layout, drives, chunks_per_drive, 8)
    }

    fn build_error(md_layout: &str, drives: u32) -> String {
        let params = LayoutParams::new(drives, 8, 8 * 16).with("md_layout", md_layout);
        MdRaid10Layout::build(&params, "array").unwrap_err().to_string()
    }

    /// Every arrangement and copy count up to 3 that fits `drives`.
    fn md_layouts(drives: u32) -> Vec<String> {
        let mut names = Vec::new();
        for copies in 2..=3.min(drives) {
            for letter in ['n', 'f', 'o'] {
                names.push(format!("{letter}{copies}"));
            }
        }
        names
    }

    /// Marks a chunk row of a drive that no copy uses.
    const UNUSED: i64 = -1;

    /// The layout's placement equals `table` (row `r`, column `d`: the chunk whose copy is at
    /// chunk row `r` of drive `d`), and `locate` reads it back with the copy `map_stripe`
    /// lists it as.
    fn assert_placement(l: &dyn Layout, table: &[&[i64]]) {
        let unit = l.stripe_unit_sectors();
        let drives = l.drives() as usize;
        let mut from_map = vec![vec![UNUSED; drives]; table.len()];
        let mut map = StripeMap::default();
        for chunk in 0..l.stripes() {
            l.map_stripe(chunk, &mut map);
            for (copy, loc) in map.data.iter().enumerate() {
                let row = (loc.pba / unit) as usize;
                assert_eq!(loc.pba % unit, 0);
                assert!(row < table.len(), "{}: chunk {chunk} copy {copy} at row {row}", l.name());
                from_map[row][loc.drive as usize] = chunk as i64;
                let role = UnitRole::Data { index: 0, copy: copy as u32 };
                assert_eq!(l.locate(loc.drive, loc.pba), Some((chunk, role)));
            }
        }
        let expected: Vec<Vec<i64>> = table.iter().map(|row| row.to_vec()).collect();
        assert_eq!(from_map, expected);
        for (row, cells) in table.iter().enumerate() {
            for (drive, &chunk) in cells.iter().enumerate() {
                let found = l.locate(drive as u32, row as u64 * unit + unit - 1).map(|(c, _)| c as i64);
                assert_eq!(found.unwrap_or(UNUSED), chunk, "row {row}, drive {drive}");
            }
        }
        assert_eq!(l.member_sectors(), table.len() as u64 * unit);
        assert_eq!(l.locate(0, l.member_sectors()), None, "past the used rows");
    }

    /// Placement tables worked by hand from md's rules.
    #[test]
    fn placement_matches_hand_worked_tables() {
        // n2, 4 drives: slots 2c and 2c + 1 row-major, RAID-1+0.
        assert_placement(layout("n2", 4, 3).as_ref(), &[&[0, 0, 1, 1], &[2, 2, 3, 3], &[4, 4, 5, 5]]);
        // n2, 3 drives (RAID-1E): ⌊4 · 3 / 2⌋ = 6 chunks.
        assert_placement(layout("n2", 3, 4).as_ref(), &[&[0, 0, 1], &[1, 2, 2], &[3, 3, 4], &[4, 5, 5]]);
        // The same with 3 chunks per drive: ⌊3 · 3 / 2⌋ = 4 chunks leave the last slot empty.
        assert_placement(layout("n2", 3, 3).as_ref(), &[&[0, 0, 1], &[1, 2, 2], &[3, 3, UNUSED]]);
        // f2, 4 drives of 4 chunks: stride 2 rows; the far copies shifted one drive on.
        assert_placement(layout("f2", 4, 4).as_ref(), &[&[0, 1, 2, 3], &[4, 5, 6, 7], &[3, 0, 1, 2], &[7, 4, 5, 6]]);
        // f2 with 5 chunks per drive: md keeps a multiple of 2, the fifth is unused.
        assert_placement(layout("f2", 4, 5).as_ref(), &[&[0, 1, 2, 3], &[4, 5, 6, 7], &[3, 0, 1, 2], &[7, 4, 5, 6]]);
        // o2, 4 drives: each row followed by its copy, shifted one drive on.
        assert_placement(layout("o2", 4, 5).as_ref(), &[&[0, 1, 2, 3], &[3, 0, 1, 2], &[4, 5, 6, 7], &[7, 4, 5, 6]]);
        // n3, 3 drives: three full mirrors.
        assert_placement(layout("n3", 3, 2).as_ref(), &[&[0, 0, 0], &[1, 1, 1]]);
        // n3, 4 drives: ⌊3 · 4 / 3⌋ = 4 chunks, 12 slots.
        assert_placement(layout("n3", 4, 3).as_ref(), &[&[0, 0, 0, 1], &[1, 1, 2, 2], &[2, 3, 3, 3]]);
        // f3, 3 drives of 3 chunks: stride 1 row.
        assert_placement(layout("f3", 3, 3).as_ref(), &[&[0, 1, 2], &[2, 0, 1], &[1, 2, 0]]);
        // o3, 4 drives: rows of copies shifted one and two drives on.
        assert_placement(layout("o3", 4, 3).as_ref(), &[&[0, 1, 2, 3], &[3, 0, 1, 2], &[2, 3, 0, 1]]);
    }

    #[test]
    fn capacity_is_mds() {
        // Near: ⌊D · N / K⌋ chunks; far and offset: ⌊D / K⌋ · N.
        for (md_layout, drives, per_drive, chunks) in
            [("n2", 4, 10, 20), ("n2", 3, 5, 7), ("n3", 5, 4, 6), ("f2", 4, 5, 8), ("f3", 5, 7, 10), ("o2", 3, 5, 6)]
        {
            let l = layout(md_layout, drives, per_drive);
            assert_eq!(l.stripes(), chunks, "{md_layout} on {drives}");
            assert_eq!(l.capacity_sectors(), chunks * 8);
        }
    }

    /// The drives of each chunk's copies, from the map.
    fn copy_sets(l: &dyn Layout) -> Vec<Vec<u32>> {
        let mut map = StripeMap::default();
        (0..l.stripes())
            .map(|chunk| {
                l.map_stripe(chunk, &mut map);
                let mut drives: Vec<u32> = map.data.iter().map(|u| u.drive).collect();
                drives.sort_unstable();
                drives
            })
            .collect()
    }

    /// `data_lost`, `redundancy_set` and `reconstruction` against the copies the map places:
    /// every set of failed drives, and every pair of drives.
    fn check_losses_against_the_map(l: &dyn Layout, label: &str) {
        let sets = copy_sets(l);
        let drives = l.drives();
        for mask in 0u32..1 << drives {
            let failed: Vec<u32> = (0..drives).filter(|d| mask & 1 << d != 0).collect();
            let lost = sets.iter().any(|set| set.iter().all(|d| failed.contains(d)));
            assert_eq!(l.data_lost(&failed), lost, "{label}: failed {failed:?}");
            if failed.len() < l.fault_tolerance() as usize + 1 {
                assert!(!lost, "{label}: {failed:?} within the tolerance");
            }
        }
        for member in 0..drives {
            let shares: Vec<u32> = (0..drives)
                .filter(|&d| d != member && sets.iter().any(|set| set.contains(&member) && set.contains(&d)))
                .collect();
            assert_eq!(l.redundancy_set(member), shares, "{label}: set of {member}");
            assert_eq!(l.reconstruction(member), Some(Reconstruction { sources: shares, xor: false, erasures: 0 }));
        }
    }

    /// Every (drive, row) is used by at most one copy, `locate` inverts the map (the shared
    /// check's placement half) and names nothing the map does not place.
    fn check_placement(l: &dyn Layout, label: &str) {
        let unit = l.stripe_unit_sectors();
        let mut used = std::collections::HashSet::new();
        let mut map = StripeMap::default();
        for chunk in 0..l.stripes() {
            l.map_stripe(chunk, &mut map);
            assert_eq!((map.stripe, map.data_units(), map.parity.len()), (chunk, 1, 0));
            for (copy, loc) in map.data.iter().enumerate() {
                assert!(loc.pba + unit <= l.member_sectors(), "{label}: {loc:?} past the used sectors");
                assert!(used.insert((loc.drive, loc.pba)), "{label}: slot used twice: {loc:?}");
                let role = UnitRole::Data { index: 0, copy: copy as u32 };
                assert_eq!(l.locate(loc.drive, loc.pba), Some((chunk, role)), "{label}");
                assert_eq!(l.locate(loc.drive, loc.pba + unit - 1), Some((chunk, role)), "{label}");
            }
        }
        for drive in 0..l.drives() {
            for row in 0..l.member_sectors() / unit + 2 {
                let placed = used.contains(&(drive, row * unit));
                assert_eq!(l.locate(drive, row * unit).is_some(), placed, "{label}: drive {drive}, row {row}");
            }
        }
        assert_eq!(l.locate(l.drives(), 0), None);
    }

    /// Every size: a bijection, with losses exactly where the map puts a chunk's copies.
    #[test]
    fn every_size_is_a_bijection_with_exact_losses() {
        for drives in 2..=7u32 {
            for md_layout in md_layouts(drives) {
                for chunks_per_drive in [3u64, 4, 5, 7, 12] {
                    let label = format!("{md_layout} on {drives} drives of {chunks_per_drive} chunks");
                    let l = layout(&md_layout, drives, chunks_per_drive);
                    check_placement(l.as_ref(), &label);
                    check_losses_against_the_map(l.as_ref(), &label);
                    check_bijective(l.as_ref());
                }
            }
        }
        // Drives of a single chunk: near arrays shorter than their pattern's period.
        for drives in 2..=7u32 {
            for copies in 2..=3.min(drives) {
                let l = layout(&format!("n{copies}"), drives, 1);
                check_placement(l.as_ref(), &format!("n{copies} on {drives} drives of 1 chunk"));
                check_losses_against_the_map(l.as_ref(), &format!("n{copies} on {drives} drives of 1 chunk"));
            }
        }
    }

    /// Every chunk has exactly K copies, on K distinct drives.
    #[test]
    fn every_chunk_has_its_copies_on_distinct_drives() {
        let mut map = StripeMap::default();
        for drives in 2..=7u32 {
            for md_layout in md_layouts(drives) {
                let copies: usize = md_layout[1..].parse().unwrap();
                let l = layout(&md_layout, drives, 9);
                assert_eq!(l.data_units_per_stripe(), 1);
                assert_eq!(l.fault_tolerance() as usize, copies - 1);
                for chunk in 0..l.stripes() {
                    l.map_stripe(chunk, &mut map);
                    assert_eq!((map.copies as usize, map.data.len()), (copies, copies));
                    let mut on: Vec<u32> = map.data.iter().map(|u| u.drive).collect();
                    on.sort_unstable();
                    on.dedup();
                    assert_eq!(on.len(), copies, "{md_layout} on {drives}: chunk {chunk} on {:?}", map.data);
                }
            }
        }
    }

    /// Every sector of every member is rebuilt from the other copies of its chunk, at the
    /// sectors those copies lie at, whatever the rebuild unit's size and position: with 2
    /// copies one read per sector; with more, one per other copy, so that any one copy
    /// surviving covers the unit.
    #[test]
    fn rebuild_reads_find_the_other_copies_of_every_sector() {
        let mut reads = Vec::new();
        for (md_layout, drives) in [("n2", 4), ("n2", 3), ("n2", 5), ("n3", 5), ("f2", 4), ("f3", 5), ("o2", 3), ("o3", 4)] {
            let copies: u64 = md_layout[1..].parse().unwrap();
            for unit in [1u64, 3, 8] {
                let l = layout_with_unit(md_layout, drives, 7, unit);
                for member in 0..drives {
                    let reconstruction = l.reconstruction(member).unwrap();
                    for size in [1u64, 3, 8, 24] {
                        let mut start = 0;
                        while start < l.member_sectors() {
                            let end = (start + size).min(l.member_sectors());
                            reads.clear();
                            l.rebuild_reads(member, &reconstruction, start, end, None, &mut reads);
                            let label = format!("{md_layout} on {drives}, unit {unit}, member {member}, [{start}, {end})");
                            // Per sector of the unit, the sources read for it.
                            let mut sources: Vec<Vec<u32>> = vec![Vec::new(); (end - start) as usize];
                            for (i, r) in reads.iter().enumerate() {
                                assert!(r.sectors > 0 && r.offset + r.sectors <= end - start, "{label}: {r:?}");
                                assert!(reconstruction.sources.contains(&r.source), "{label}: {r:?}");
                                assert!(i == 0 || reads[i - 1].offset <= r.offset, "{label}: reads in order");
                                for s in 0..r.sectors {
                                    sources[(r.offset + s) as usize].push(r.source);
                                    let lost = l.locate(member, start + r.offset + s);
                                    let read = l.locate(r.source, r.pba + s);
                                    let Some((chunk, UnitRole::Data { index: 0, copy })) = lost else {
                                        continue; // an unused unit: nothing to match
                                    };
                                    let Some((read_chunk, UnitRole::Data { index: 0, copy: read_copy })) = read else {
                                        panic!("{label}: {r:?} reads sector {} of nothing", r.pba + s)
                                    };
                                    assert_eq!(read_chunk, chunk, "{label}: {r:?}");
                                    assert_ne!(read_copy, copy, "{label}: {r:?}");
                                    // The same sector of the chunk.
                                    assert_eq!((r.pba + s) % unit, (start + r.offset + s) % unit, "{label}: {r:?}");
                                }
                            }
                            for (s, on) in sources.iter_mut().enumerate() {
                                let used = l.locate(member, start + s as u64).is_some();
                                let count = on.len();
                                on.sort_unstable();
                                on.dedup();
                                assert_eq!(on.len(), count, "{label}: sector {s} read twice from one source");
                                if used {
                                    assert_eq!(count as u64, copies - 1, "{label}: sector {s} from {on:?}");
                                } else {
                                    assert!(count > 0, "{label}: unused sector {s} not covered");
                                }
                            }
                            let all_used = (start..end).all(|s| l.locate(member, s).is_some());
                            if copies == 2 && all_used {
                                // One read per sector: the reads tile the unit in order.
                                let mut covered = 0;
                                for r in &reads {
                                    assert_eq!(r.offset, covered, "{label}: no gap, no overlap");
                                    covered += r.sectors;
                                }
                                assert_eq!(covered, end - start, "{label}");
                            }
                            start = end;
                        }
                    }
                }
            }
        }
    }

    /// Where the other copy is on the same sectors of one drive, a unit is one read: RAID-1+0's
    /// neighbour, and far's first part from the next drive's second part.
    #[test]
    fn rebuild_reads_merge_contiguous_copies() {
        let mut reads = Vec::new();
        let l = layout("n2", 4, 6);
        let r = l.reconstruction(2).unwrap();
        assert_eq!(r.sources, vec![3]);
        l.rebuild_reads(2, &r, 8, 40, None, &mut reads);
        assert_eq!(reads, vec![SourceRead { source: 3, pba: 8, offset: 0, sectors: 32, outside: None }]);
        let l = layout("f2", 4, 6);
        let r = l.reconstruction(1).unwrap();
        assert_eq!(r.sources, vec![0, 2]);
        reads.clear();
        // Rows 0–2 of drive 1: chunks 1, 5, 9, whose far copies are on drive 2 at rows 3–5.
        l.rebuild_reads(1, &r, 0, 24, None, &mut reads);
        assert_eq!(reads, vec![SourceRead { source: 2, pba: 24, offset: 0, sectors: 24, outside: None }]);
    }

    /// `stripes_in` names every chunk with a unit in the range (brute force), and for near
    /// exactly those.
    #[test]
    fn stripes_in_covers_every_chunk_of_the_range() {
        for (md_layout, drives) in [("n2", 3), ("n3", 5), ("f2", 4), ("f3", 5), ("o2", 3), ("o3", 4)] {
            let l = layout_with_unit(md_layout, drives, 7, 4);
            let member_sectors = l.member_sectors();
            for member in 0..drives {
                for start in 0..member_sectors {
                    for end in start + 1..=(start + 30).min(member_sectors) {
                        let (lo, hi) = l.stripes_in(member, start, end, None);
                        let held: Vec<u64> = (start..end).filter_map(|s| l.locate(member, s)).map(|(c, _)| c).collect();
                        assert!(lo <= hi && hi < l.stripes(), "{md_layout}: [{start}, {end}) of {member}: {lo}..={hi}");
                        assert!(held.iter().all(|c| (lo..=hi).contains(c)), "{md_layout}: [{start}, {end}) of {member}");
                        if md_layout.starts_with('n') && !held.is_empty() {
                            let (min, max) = (*held.iter().min().unwrap(), *held.iter().max().unwrap());
                            assert_eq!((lo, hi), (min, max), "{md_layout}: [{start}, {end}) of {member}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn losses_follow_the_copies() {
        // n2, 4 drives: mirrors {0, 1} and {2, 3}.
        let l = layout("n2", 4, 6);
        assert!(l.data_lost(&[0, 1]) && l.data_lost(&[3, 2]));
        assert!(!l.data_lost(&[0, 2]) && !l.data_lost(&[1, 2]) && !l.data_lost(&[0]));
        assert_eq!(l.redundancy_set(1), vec![0]);
        // n2, 3 drives: the chunks' pairs are {0, 1}, {2, 0}, {1, 2}: any two drives.
        let l = layout("n2", 3, 6);
        for pair in [[0, 1], [0, 2], [1, 2]] {
            assert!(l.data_lost(&pair), "{pair:?}");
        }
        assert_eq!(l.redundancy_set(0), vec![1, 2]);
        // f2, 4 drives: chunk c's far copy is one drive on, so the pairs are the neighbours
        // {0, 1}, {1, 2}, {2, 3}, {3, 0}; the opposite drives {0, 2} and {1, 3} hold none.
        let l = layout("f2", 4, 6);
        for pair in [[0, 1], [1, 2], [2, 3], [3, 0]] {
            assert!(l.data_lost(&pair), "{pair:?}");
        }
        assert!(!l.data_lost(&[0, 2]) && !l.data_lost(&[1, 3]));
        assert_eq!(l.redundancy_set(0), vec![1, 3]);
        // o2 the same as f2.
        let l = layout("o2", 4, 6);
        assert!(l.data_lost(&[1, 2]) && !l.data_lost(&[1, 3]));
        // n3, 5 drives: chunks on the runs {0, 1, 2}, {3, 4, 0}, {1, 2, 3}, {4, 0, 1}, {2, 3, 4}.
        // Every drive shares chunks with all others, yet only runs of three lose data.
        let l = layout("n3", 5, 6);
        assert_eq!(l.fault_tolerance(), 2);
        assert_eq!(l.redundancy_set(0), vec![1, 2, 3, 4]);
        assert!(l.data_lost(&[0, 1, 2]) && l.data_lost(&[4, 0, 3]));
        assert!(!l.data_lost(&[0, 2, 3]) && !l.data_lost(&[0, 1, 3]));
        // n3, 6 drives: two 3-way mirrors.
        let l = layout("n3", 6, 6);
        assert!(l.data_lost(&[3, 4, 5]) && !l.data_lost(&[2, 3, 4]));
        assert_eq!(l.redundancy_set(4), vec![3, 5]);
    }

    #[test]
    fn bad_layouts_name_their_key() {
        let err = build_error("x2", 4);
        assert!(err.starts_with("array.md_layout: unknown arrangement `x`"), "{err}");
        let err = build_error("n1", 4);
        assert!(err.starts_with("array.md_layout: \"n1\" keeps 1 copy"), "{err}");
        let err = build_error("f5", 4);
        assert!(err.starts_with("array.md_layout: md's far layout with more copies than drives"), "{err}");
        let err = build_error("n3", 2);
        assert!(err.starts_with("array.md_layout: md's near layout with more copies than drives"), "{err}");
        for text in ["", "n", "n2f2", "N2", "n+2", "n99999999999"] {
            let err = build_error(text, 4);
            assert!(err.starts_with("array.md_layout: "), "{text:?}: {err}");
        }
        // A far layout whose drives cannot hold a chunk in each copy's part.
        let params = LayoutParams::new(4, 8, 8 * 2 + 1).with("md_layout", "f3");
        let err = MdRaid10Layout::build(&params, "array").unwrap_err().to_string();
        assert!(err.starts_with("array.stripe_unit_kib: a drive of 2 chunks cannot hold 3 far copies"), "{err}");
        // The check when a configuration loads: the default passes, a bad string and a
        // number do not.
        let check = OWN_KEYS[0].check;
        assert_eq!(check(&(OWN_KEYS[0].default)()), Ok(()));
        assert!(check(&toml::Value::String("o3".into())).is_ok());
        assert!(check(&toml::Value::String("q2".into())).unwrap_err().contains("unknown arrangement"));
        assert!(check(&toml::Value::Integer(2)).is_err());
    }

    /// Drives all busy, the far part's copy always the quicker to reach: md's far rule still
    /// reads the copy at the lower address; with that drive failed, the other copy.
    #[test]
    fn far_copies_read_the_lowest_address() {
        use crate::layout::plan::{DriveView, PieceSpec, Plan, PlanInputs, UnitStatus};
        use crate::sim::{Nanos, RngStream, StreamId};
        struct FarIsQuicker(u64);
        impl DriveView for FarIsQuicker {
            fn is_idle(&self, _drive: u32) -> bool {
                false
            }
            fn positioning_estimate(&self, _drive: u32, _now: Nanos, pba: u64) -> Nanos {
                if pba >= self.0 { 1 } else { 1_000_000 }
            }
        }
        let l = layout("f2", 4, 8);
        let unit = l.stripe_unit_sectors();
        let half = l.member_sectors() / 2;
        let view = FarIsQuicker(half);
        let mut rng = RngStream::new(1, StreamId::MirrorChoice);
        let (mut map, mut plan) = (StripeMap::default(), Plan::default());
        for stripe in 0..l.stripes() {
            l.map_stripe(stripe, &mut map);
            let first = map.data.iter().min_by_key(|u| u.pba).copied().unwrap();
            for failed_first in [false, true] {
                let mut failed = vec![false; 4];
                failed[first.drive as usize] = failed_first;
                let inputs = PlanInputs {
                    map: &map,
                    unit_sectors: unit,
                    spec: PieceSpec { first: 0, sectors: unit, is_write: false, resync: false },
                    status: UnitStatus::new(&failed, &[]),
                    placement: None,
                    view: &view,
                    now: 0,
                    rng: &mut rng,
                };
                l.planner().plan(inputs, &mut plan);
                assert_eq!(plan.ops.len(), 1);
                let read = (plan.ops[0].drive, plan.ops[0].pba);
                if failed_first {
                    assert!(read.1 >= half && read.0 != first.drive, "stripe {stripe}: {read:?}");
                    assert!(plan.degraded);
                } else {
                    assert_eq!(read, (first.drive, first.pba), "stripe {stripe}");
                    assert!(first.pba < half);
                }
            }
        }
        // Near copies keep the mirror rule (the quicker copy).
        assert_eq!(layout("n2", 4, 8).planner().name(), "mirror");
    }
}
