//! The storage every policy shares: a table of cache slots (block → slot through an
//! open-addressing hash table, slots reused through a free list) and intrusive
//! doubly-linked lists threaded through the slots by `u32` index. Nothing here allocates once
//! the cache has been filled: slots are reused, links are plain arrays indexed by slot, and
//! the table is sized for the capacity when the cache is built.
//!
//! The table is the simulator's hot spot: a hit is one probe, a miss one probe, one insert
//! and (when full) one removal, and with 100,000 blocks or more each of them waits on a cache
//! line no other request touched lately. So it is as small and as direct as the job allows:
//! linear probing over 16-byte entries (block, slot) kept at most half full, Fibonacci
//! hashing (one multiply), removal by shifting the rest of the run back (no tombstones, so
//! probes never lengthen with use), and [`Slots::prefetch`] to ask for a block's line a few
//! requests before it is needed.

/// The most slots any structure reserves when it is built: a larger cache grows to its size
/// as blocks arrive (a few doublings while it fills, none after), so memory follows the
/// blocks a trace actually brings, not the size asked for.
const RESERVE_AT_MOST: usize = 1 << 20;

/// Room to reserve for `capacity` slots (see [`RESERVE_AT_MOST`]).
#[inline]
pub(crate) fn reserved(capacity: usize) -> usize {
    capacity.min(RESERVE_AT_MOST)
}

/// "No slot": the end of a list, or an empty list's ends; in the table, a free entry.
pub(crate) const NIL: u32 = u32::MAX;

/// Knuth's multiplicative constant, 2⁶⁴ / φ: consecutive block numbers land far apart.
const FIBONACCI: u64 = 0x9e37_79b9_7f4a_7c15;

#[derive(Debug, Clone, Copy)]
struct Entry {
    block: u64,
    slot: u32,
}

const FREE: Entry = Entry { block: 0, slot: NIL };

/// Ask the processor to bring `value`'s cache line in, without waiting for it.
#[inline(always)]
fn prefetch_line<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it reads nothing into the program, cannot fault, and the
    // pointer comes from a live reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// The cached blocks and the slot each one occupies.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    table: Vec<Entry>,
    /// `64 − log2(table length)`: a block's home entry is the top bits of its hash.
    shift: u32,
    blocks: Vec<u64>,
    free: Vec<u32>,
    len: usize,
}

impl Slots {
    /// Room for `capacity` blocks (up to [`RESERVE_AT_MOST`]) without growing.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let capacity = reserved(capacity);
        let entries = (2 * capacity.max(8)).next_power_of_two();
        Slots {
            table: vec![FREE; entries],
            shift: 64 - entries.trailing_zeros(),
            blocks: Vec::with_capacity(capacity),
            free: Vec::new(),
            len: 0,
        }
    }

    #[inline(always)]
    fn home(&self, block: u64) -> usize {
        (block.wrapping_mul(FIBONACCI) >> self.shift) as usize
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.table.len() - 1
    }

    /// Start fetching the table entry `block` would be found at.
    #[inline(always)]
    pub(crate) fn prefetch(&self, block: u64) {
        prefetch_line(&self.table[self.home(block)]);
    }

    /// The table index holding `block`, if cached.
    #[inline]
    fn position(&self, block: u64) -> Option<usize> {
        let mask = self.mask();
        let mut at = self.home(block);
        loop {
            let entry = self.table[at];
            if entry.slot == NIL {
                return None;
            }
            if entry.block == block {
                return Some(at);
            }
            at = (at + 1) & mask;
        }
    }

    /// The slot of `block`, if cached.
    #[inline]
    pub(crate) fn find(&self, block: u64) -> Option<u32> {
        self.position(block).map(|at| self.table[at].slot)
    }

    /// A slot for `block` (not cached yet): a freed one if any, else a new one.
    #[inline]
    pub(crate) fn add(&mut self, block: u64) -> u32 {
        if 2 * (self.len + 1) > self.table.len() {
            self.grow();
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                self.blocks[slot as usize] = block;
                slot
            }
            None => {
                self.blocks.push(block);
                (self.blocks.len() - 1) as u32
            }
        };
        self.place(Entry { block, slot });
        self.len += 1;
        slot
    }

    fn place(&mut self, entry: Entry) {
        let mask = self.mask();
        let mut at = self.home(entry.block);
        while self.table[at].slot != NIL {
            at = (at + 1) & mask;
        }
        self.table[at] = entry;
    }

    /// Twice the entries (more blocks than the table was sized for).
    #[cold]
    fn grow(&mut self) {
        let entries = 2 * self.table.len().max(8);
        let old = std::mem::replace(&mut self.table, vec![FREE; entries]);
        self.shift = 64 - self.table.len().trailing_zeros();
        for entry in old.into_iter().filter(|entry| entry.slot != NIL) {
            self.place(entry);
        }
    }

    /// Free `slot` (its block leaves the table).
    #[inline]
    pub(crate) fn release(&mut self, slot: u32) {
        let block = self.blocks[slot as usize];
        let mut hole = self.position(block).expect("a slot in use has its block in the table");
        // Shift back every later entry of the run that may sit in the hole: one whose home
        // lies cyclically at or before the hole.
        let mask = self.mask();
        let mut at = hole;
        loop {
            at = (at + 1) & mask;
            let entry = self.table[at];
            if entry.slot == NIL {
                break;
            }
            let home = self.home(entry.block);
            if (at.wrapping_sub(home) & mask) >= (at.wrapping_sub(hole) & mask) {
                self.table[hole] = entry;
                hole = at;
            }
        }
        self.table[hole] = FREE;
        self.len -= 1;
        self.free.push(slot);
    }

    /// The block in `slot`.
    #[inline]
    pub(crate) fn block(&self, slot: u32) -> u64 {
        self.blocks[slot as usize]
    }

    /// Start fetching `slot`'s block.
    #[inline(always)]
    pub(crate) fn prefetch_slot(&self, slot: u32) {
        if let Some(block) = self.blocks.get(slot as usize) {
            prefetch_line(&self.table[self.home(*block)]);
        }
    }

    /// Blocks cached.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Slots ever used (the length of per-slot arrays).
    #[cfg(test)]
    pub(crate) fn slots(&self) -> usize {
        self.blocks.len()
    }
}

#[derive(Debug, Clone, Copy)]
struct Link {
    prev: u32,
    next: u32,
}

const UNLINKED: Link = Link { prev: NIL, next: NIL };

#[derive(Debug, Clone, Copy)]
struct Ends {
    head: u32,
    tail: u32,
    len: u32,
}

const EMPTY: Ends = Ends { head: NIL, tail: NIL, len: 0 };

/// Several doubly-linked lists over the same slots (each slot in at most one of them):
/// `head` is the most recently pushed end, `tail` the other. An LRU stack is one list; the
/// per-drive local stacks of VDF are one list per drive; ARC's T1 and T2 are two.
#[derive(Debug, Default)]
pub(crate) struct Lists {
    links: Vec<Link>,
    ends: Vec<Ends>,
}

impl Lists {
    /// `lists` empty lists, with room for `slots` slots.
    pub(crate) fn new(lists: usize, slots: usize) -> Self {
        Lists { links: Vec::with_capacity(reserved(slots)), ends: vec![EMPTY; lists] }
    }

    /// Make lists `0..count` exist (new ones empty).
    pub(crate) fn ensure_lists(&mut self, count: usize) {
        if count > self.ends.len() {
            self.ends.resize(count, EMPTY);
        }
    }

    /// Put `slot` (in no list) at the head of `list`.
    #[inline]
    pub(crate) fn push_front(&mut self, list: usize, slot: u32) {
        let index = slot as usize;
        if index >= self.links.len() {
            self.links.resize(index + 1, UNLINKED);
        }
        let ends = &mut self.ends[list];
        let old_head = ends.head;
        self.links[index] = Link { prev: NIL, next: old_head };
        if old_head == NIL {
            ends.tail = slot;
        } else {
            self.links[old_head as usize].prev = slot;
        }
        ends.head = slot;
        ends.len += 1;
    }

    /// Take `slot` out of `list` (which holds it).
    #[inline]
    pub(crate) fn unlink(&mut self, list: usize, slot: u32) {
        let Link { prev, next } = self.links[slot as usize];
        let ends = &mut self.ends[list];
        if prev == NIL {
            ends.head = next;
        } else {
            self.links[prev as usize].next = next;
        }
        if next == NIL {
            ends.tail = prev;
        } else {
            self.links[next as usize].prev = prev;
        }
        ends.len -= 1;
    }

    /// Move `slot` (in `list`) to the head of `list`.
    #[inline]
    pub(crate) fn move_to_front(&mut self, list: usize, slot: u32) {
        if self.ends[list].head != slot {
            self.unlink(list, slot);
            self.push_front(list, slot);
        }
    }

    /// The tail of `list` (its least recently pushed slot).
    #[inline]
    pub(crate) fn tail(&self, list: usize) -> Option<u32> {
        let tail = self.ends[list].tail;
        (tail != NIL).then_some(tail)
    }

    /// The slot before `slot` towards the head, if any.
    #[inline]
    pub(crate) fn toward_head(&self, slot: u32) -> Option<u32> {
        let prev = self.links[slot as usize].prev;
        (prev != NIL).then_some(prev)
    }

    /// Slots in `list`.
    #[inline]
    pub(crate) fn len(&self, list: usize) -> usize {
        self.ends[list].len as usize
    }

    /// The slots of `list` from head to tail (tests and checks).
    #[cfg(test)]
    pub(crate) fn iter(&self, list: usize) -> impl Iterator<Item = u32> + '_ {
        let mut at = self.ends[list].head;
        std::iter::from_fn(move || {
            (at != NIL).then(|| {
                let slot = at;
                at = self.links[slot as usize].next;
                slot
            })
        })
    }
}

/// A local list's ends, and its tail's last access kept beside them, so that comparing the
/// drives' bottoms (every eviction of VDF) reads one small array and no node.
#[derive(Debug, Clone, Copy)]
struct LocalEnds {
    head: u32,
    tail: u32,
    /// The tail's last access, or [`UNREAD`] while it is being fetched.
    tail_access: u64,
}

const NO_ENDS: LocalEnds = LocalEnds { head: NIL, tail: NIL, tail_access: 0 };

/// A tail's last access not read yet. A new tail is the least recently used block of its
/// drive, so its line is cold: rather than wait for it when the tail changes (an eviction),
/// the read is started then and finished when the drives are next compared, a few requests
/// later.
const UNREAD: u64 = u64::MAX;

/// VDF's local stacks: for each drive, `per_drive` lists (one for LRU and CLOCK, T1 and T2
/// for ARC) restricted to that drive's blocks, plus each slot's list and last access.
///
/// Three arrays rather than one array of records: a hit reads the links of four slots (its
/// own, its neighbours', the head's) and only its own list and access, so the links, 8 bytes
/// a slot, stay in the second-level cache for caches of 100,000 blocks, where 24-byte records
/// did not (measured: twice the time per hit).
#[derive(Debug)]
pub(crate) struct DriveStacks {
    links: Vec<Link>,
    /// Each slot's list: `drive × per_drive + which`.
    list: Vec<u16>,
    last_access: Vec<u64>,
    ends: Vec<LocalEnds>,
    per_drive: usize,
    drives: u32,
}

impl DriveStacks {
    /// Local stacks for `drives` drives, `per_drive` lists each, room for `slots` slots.
    pub(crate) fn new(drives: u32, per_drive: usize, slots: usize) -> Self {
        assert!(drives as usize * per_drive <= usize::from(u16::MAX), "{drives} drives is too many local stacks");
        DriveStacks {
            links: Vec::with_capacity(reserved(slots)),
            list: Vec::with_capacity(reserved(slots)),
            last_access: Vec::with_capacity(reserved(slots)),
            ends: vec![NO_ENDS; drives as usize * per_drive],
            per_drive,
            drives,
        }
    }

    #[inline]
    fn list(&self, drive: u32, which: usize) -> usize {
        drive as usize * self.per_drive + which
    }

    #[inline]
    fn push_front(&mut self, list: usize, slot: u32) {
        let index = slot as usize;
        let old_head = self.ends[list].head;
        self.links[index] = Link { prev: NIL, next: old_head };
        self.list[index] = list as u16;
        if old_head == NIL {
            self.ends[list].tail = slot;
            self.ends[list].tail_access = self.last_access[index];
        } else {
            self.links[old_head as usize].prev = slot;
        }
        self.ends[list].head = slot;
    }

    #[inline]
    fn unlink_from(&mut self, list: usize, slot: u32) {
        let Link { prev, next } = self.links[slot as usize];
        if prev == NIL {
            self.ends[list].head = next;
        } else {
            self.links[prev as usize].next = next;
        }
        if next == NIL {
            self.ends[list].tail = prev;
            if prev != NIL {
                prefetch_line(&self.last_access[prev as usize]);
                self.ends[list].tail_access = UNREAD;
            }
        } else {
            self.links[next as usize].prev = prev;
        }
    }

    /// Record that `slot` now holds a block of `drive`, last accessed at `now`, and put it
    /// at the head of that drive's list `which`.
    #[inline]
    pub(crate) fn add(&mut self, slot: u32, drive: u32, now: u64, which: usize) {
        assert!(drive < self.drives, "drive {drive} beyond the {} local stacks", self.drives);
        let index = slot as usize;
        if index >= self.links.len() {
            self.links.resize(index + 1, UNLINKED);
            self.list.resize(index + 1, 0);
            self.last_access.resize(index + 1, 0);
        }
        self.last_access[index] = now;
        let list = self.list(drive, which);
        self.push_front(list, slot);
    }

    /// An access to `slot` at `now`.
    #[inline]
    pub(crate) fn touch(&mut self, slot: u32, now: u64) {
        self.last_access[slot as usize] = now;
        let list = usize::from(self.list[slot as usize]);
        if self.ends[list].tail == slot {
            self.ends[list].tail_access = now;
        }
    }

    /// Move `slot` from its list (its drive's list `from`) to the head of its drive's list
    /// `to` (the same list: to the head).
    #[inline]
    pub(crate) fn move_to_front(&mut self, slot: u32, from: usize, to: usize) {
        let list = usize::from(self.list[slot as usize]);
        debug_assert_eq!(list % self.per_drive, from);
        let to = list - from + to;
        if list == to && self.ends[to].head == slot {
            return;
        }
        self.unlink_from(list, slot);
        self.push_front(to, slot);
    }

    /// Take `slot` out of its list.
    #[inline]
    pub(crate) fn unlink(&mut self, slot: u32, which: usize) {
        let list = usize::from(self.list[slot as usize]);
        debug_assert_eq!(list % self.per_drive, which);
        self.unlink_from(list, slot);
    }

    /// The tail of `drive`'s list `which`.
    #[inline]
    pub(crate) fn tail(&self, drive: u32, which: usize) -> Option<u32> {
        if drive >= self.drives {
            return None;
        }
        let tail = self.ends[self.list(drive, which)].tail;
        (tail != NIL).then_some(tail)
    }

    /// The tail of `drive`'s list `which` and its last access.
    #[inline]
    pub(crate) fn tail_and_access(&mut self, drive: u32, which: usize) -> Option<(u32, u64)> {
        if drive >= self.drives {
            return None;
        }
        let list = self.list(drive, which);
        let ends = &mut self.ends[list];
        if ends.tail == NIL {
            return None;
        }
        if ends.tail_access == UNREAD {
            ends.tail_access = self.last_access[ends.tail as usize];
        }
        Some((ends.tail, ends.tail_access))
    }

    /// Drives.
    #[inline]
    pub(crate) fn drives(&self) -> u32 {
        self.drives
    }

    /// The drive of `slot`.
    #[inline]
    pub(crate) fn drive(&self, slot: u32) -> u32 {
        u32::from(self.list[slot as usize]) / self.per_drive as u32
    }

    /// The last access of `slot`.
    #[inline]
    pub(crate) fn last_access(&self, slot: u32) -> u64 {
        self.last_access[slot as usize]
    }

    /// The slots of `drive`'s list `which`, head to tail.
    #[cfg(test)]
    pub(crate) fn iter(&self, drive: u32, which: usize) -> impl Iterator<Item = u32> + '_ {
        let mut at = self.ends[self.list(drive, which)].head;
        std::iter::from_fn(move || {
            (at != NIL).then(|| {
                let slot = at;
                at = self.links[slot as usize].next;
                slot
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_keep_their_order_through_moves_and_unlinks() {
        let mut lists = Lists::new(2, 0);
        for slot in 0..4 {
            lists.push_front(0, slot);
        }
        lists.push_front(1, 9);
        assert_eq!(lists.iter(0).collect::<Vec<_>>(), [3, 2, 1, 0]);
        lists.move_to_front(0, 1);
        assert_eq!(lists.iter(0).collect::<Vec<_>>(), [1, 3, 2, 0]);
        lists.unlink(0, 0);
        lists.unlink(0, 1);
        assert_eq!(lists.iter(0).collect::<Vec<_>>(), [3, 2]);
        assert_eq!((lists.tail(0), lists.len(0)), (Some(2), 2));
        assert_eq!(lists.toward_head(2), Some(3));
        assert_eq!(lists.iter(1).collect::<Vec<_>>(), [9]);
        lists.unlink(1, 9);
        assert_eq!((lists.tail(1), lists.len(1)), (None, 0));
    }

    #[test]
    fn the_table_agrees_with_a_hash_map_through_adds_and_releases() {
        // A small table and clustered keys: long runs, wrap-around at the end of the table,
        // removals from the middle of runs, and one growth beyond the sized capacity.
        let mut slots = Slots::with_capacity(8);
        let mut reference = std::collections::HashMap::new();
        let mut state = 0x1234_5678_9abc_def1_u64;
        for step in 0..20_000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let block = (state % 40) * 1024 + (state >> 60);
            let limit = if step < 10_000 { 8 } else { 30 };
            match reference.get(&block) {
                Some(&slot) => {
                    assert_eq!(slots.find(block), Some(slot));
                    if state.is_multiple_of(3) {
                        slots.release(slot);
                        reference.remove(&block);
                    }
                }
                None => {
                    assert_eq!(slots.find(block), None);
                    if reference.len() < limit {
                        let slot = slots.add(block);
                        assert_eq!(slots.block(slot), block);
                        reference.insert(block, slot);
                    }
                }
            }
            assert_eq!(slots.len(), reference.len());
        }
        for (&block, &slot) in &reference {
            assert_eq!(slots.find(block), Some(slot));
        }
    }

    #[test]
    fn slots_are_reused_after_release() {
        let mut slots = Slots::with_capacity(2);
        let a = slots.add(10);
        let b = slots.add(20);
        slots.release(a);
        assert_eq!(slots.find(10), None);
        let c = slots.add(30);
        assert_eq!((c, slots.block(c), slots.find(20), slots.len(), slots.slots()), (a, 30, Some(b), 2, 2));
    }
}
