//! The storage every policy shares: a table of cache slots (block → slot through a hash map,
//! slots reused through a free list) and intrusive doubly-linked lists threaded through the
//! slots by `u32` index. Nothing here allocates once the cache has been filled: slots are
//! reused, links are plain arrays indexed by slot, and the hash map is sized for the capacity
//! when the cache is built.

use rustc_hash::FxHashMap;

/// "No slot": the end of a list, or an empty list's ends.
pub(crate) const NIL: u32 = u32::MAX;

/// The cached blocks and the slot each one occupies.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    map: FxHashMap<u64, u32>,
    blocks: Vec<u64>,
    free: Vec<u32>,
}

impl Slots {
    /// Room for `capacity` blocks without growing.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let mut map = FxHashMap::default();
        map.reserve(capacity);
        Slots { map, blocks: Vec::with_capacity(capacity), free: Vec::new() }
    }

    /// The slot of `block`, if cached.
    #[inline]
    pub(crate) fn find(&self, block: u64) -> Option<u32> {
        self.map.get(&block).copied()
    }

    /// A slot for `block` (not cached yet): a freed one if any, else a new one.
    #[inline]
    pub(crate) fn add(&mut self, block: u64) -> u32 {
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
        self.map.insert(block, slot);
        slot
    }

    /// Free `slot` (its block leaves the map).
    #[inline]
    pub(crate) fn release(&mut self, slot: u32) {
        self.map.remove(&self.blocks[slot as usize]);
        self.free.push(slot);
    }

    /// The block in `slot`.
    #[inline]
    pub(crate) fn block(&self, slot: u32) -> u64 {
        self.blocks[slot as usize]
    }

    /// Blocks cached.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
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
        Lists { links: Vec::with_capacity(slots), ends: vec![EMPTY; lists] }
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

/// VDF's local stacks: for each drive, `per_drive` lists (one for LRU and CLOCK, T1 and T2
/// for ARC) restricted to that drive's blocks, plus each slot's drive and last access.
#[derive(Debug)]
pub(crate) struct DriveStacks {
    lists: Lists,
    per_drive: usize,
    drives: u32,
    drive: Vec<u32>,
    last_access: Vec<u64>,
}

impl DriveStacks {
    /// Local stacks for `drives` drives, `per_drive` lists each, room for `slots` slots.
    pub(crate) fn new(drives: u32, per_drive: usize, slots: usize) -> Self {
        DriveStacks {
            lists: Lists::new(drives as usize * per_drive, slots),
            per_drive,
            drives,
            drive: Vec::with_capacity(slots),
            last_access: Vec::with_capacity(slots),
        }
    }

    #[inline]
    fn list(&self, drive: u32, which: usize) -> usize {
        drive as usize * self.per_drive + which
    }

    /// Record that `slot` now holds a block of `drive`, last accessed at `now`, and put it
    /// at the head of that drive's list `which`.
    #[inline]
    pub(crate) fn add(&mut self, slot: u32, drive: u32, now: u64, which: usize) {
        assert!(drive < self.drives, "drive {drive} beyond the {} local stacks", self.drives);
        let index = slot as usize;
        if index >= self.drive.len() {
            self.drive.resize(index + 1, 0);
            self.last_access.resize(index + 1, 0);
        }
        self.drive[index] = drive;
        self.last_access[index] = now;
        let list = self.list(drive, which);
        self.lists.push_front(list, slot);
    }

    /// An access to `slot` at `now`.
    #[inline]
    pub(crate) fn touch(&mut self, slot: u32, now: u64) {
        self.last_access[slot as usize] = now;
    }

    /// Move `slot` from its drive's list `from` to the head of its list `to` (the same list:
    /// to the head).
    #[inline]
    pub(crate) fn move_to_front(&mut self, slot: u32, from: usize, to: usize) {
        let drive = self.drive[slot as usize];
        let (from, to) = (self.list(drive, from), self.list(drive, to));
        if from == to {
            self.lists.move_to_front(to, slot);
        } else {
            self.lists.unlink(from, slot);
            self.lists.push_front(to, slot);
        }
    }

    /// Take `slot` out of its drive's list `which`.
    #[inline]
    pub(crate) fn unlink(&mut self, slot: u32, which: usize) {
        let list = self.list(self.drive[slot as usize], which);
        self.lists.unlink(list, slot);
    }

    /// The tail of `drive`'s list `which`.
    #[inline]
    pub(crate) fn tail(&self, drive: u32, which: usize) -> Option<u32> {
        if drive >= self.drives {
            return None;
        }
        self.lists.tail(self.list(drive, which))
    }

    /// The drive of `slot`.
    #[inline]
    pub(crate) fn drive(&self, slot: u32) -> u32 {
        self.drive[slot as usize]
    }

    /// The last access of `slot`.
    #[inline]
    pub(crate) fn last_access(&self, slot: u32) -> u64 {
        self.last_access[slot as usize]
    }

    /// The slots of `drive`'s list `which`, head to tail.
    #[cfg(test)]
    pub(crate) fn iter(&self, drive: u32, which: usize) -> impl Iterator<Item = u32> + '_ {
        self.lists.iter(self.list(drive, which))
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
