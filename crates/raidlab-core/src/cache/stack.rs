//! LRU at several sizes in one pass.
//!
//! LRU is a stack algorithm (Mattson et al., 1970): a cache of C blocks holds exactly the C
//! most recently used distinct blocks, so an access hits at every size at least as large as
//! its *stack distance* (its block's position in the recency stack). One stack as deep as the
//! largest size answers every size. Only which of the given sizes hit matters, not the exact
//! distance, so the stack is cut into segments at the sizes S₀ < S₁ < … (segment j holds
//! positions S_{j−1}+1 … S_j) and each block records its segment:
//!
//! ```text
//!  head ─ segment 0 (S₀ blocks) ─┬─ segment 1 (S₁ − S₀) ─┬─ … ─┬─ segment k−1 ─ tail
//!                        boundary[0]             boundary[1]        boundary[k−1]
//! ```
//!
//! An access to a block in segment s hits for sizes S_s and up. The block moves to the head;
//! segments 0 … s−1 each grew by one, so each passes its tail-most block (its boundary) to
//! the next: O(1 + s) per access, no search. A block in no segment misses at every size;
//! it enters at the head and, when the stack is full, the tail leaves. The test below holds
//! it to one LRU cache per size.

use super::lists::{reserved, Lists, Slots, NIL};
use crate::error::{Error, Result};

const STACK: usize = 0;

/// The most sizes one stack evaluates (segment numbers are bytes; one value means "miss").
pub const MAX_SIZES: usize = 254;

/// LRU caches of several sizes, simulated together.
#[derive(Debug)]
pub struct LruStack {
    sizes: Vec<usize>,
    /// Blocks each segment holds when the stack is full.
    capacity: Vec<usize>,
    count: Vec<usize>,
    boundary: Vec<u32>,
    slots: Slots,
    stack: Lists,
    segment: Vec<u8>,
}

impl LruStack {
    /// LRU at `sizes` (blocks, each at least 1; in increasing order, distinct). Errors name
    /// `key`.
    pub fn new(sizes: &[usize], key: &str) -> Result<Self> {
        if sizes.is_empty() || sizes.len() > MAX_SIZES || sizes[0] == 0 || sizes.windows(2).any(|pair| pair[0] >= pair[1]) {
            return Err(Error::config(
                key,
                format!("one stack takes 1 to {MAX_SIZES} distinct sizes of at least one block, in increasing order"),
            ));
        }
        let largest = *sizes.last().expect("not empty");
        let capacity = sizes.iter().scan(0, |below, &size| {
            let segment = size - *below;
            *below = size;
            Some(segment)
        });
        Ok(LruStack {
            sizes: sizes.to_vec(),
            capacity: capacity.collect(),
            count: vec![0; sizes.len()],
            boundary: vec![NIL; sizes.len()],
            slots: Slots::with_capacity(largest),
            stack: Lists::new(1, largest),
            segment: Vec::with_capacity(reserved(largest)),
        })
    }

    /// The sizes, blocks.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// Distinct blocks held (the largest size's cache).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no block is held.
    pub fn is_empty(&self) -> bool {
        self.slots.len() == 0
    }

    /// One access: the index of the smallest size that hits (`sizes().len()`: a miss at
    /// every size).
    #[inline]
    pub fn access(&mut self, block: u64) -> u8 {
        let segments = self.sizes.len();
        match self.slots.find(block) {
            Some(slot) => {
                let from = usize::from(self.segment[slot as usize]);
                self.leave(from, slot);
                self.stack.move_to_front(STACK, slot);
                self.enter_head(slot);
                self.cascade(from);
                from as u8
            }
            None => {
                if self.slots.len() == self.sizes[segments - 1] {
                    let last = segments - 1;
                    let tail = self.boundary[last];
                    self.leave(last, tail);
                    self.stack.unlink(STACK, tail);
                    self.slots.release(tail);
                }
                let slot = self.slots.add(block);
                let index = slot as usize;
                if index >= self.segment.len() {
                    self.segment.resize(index + 1, 0);
                }
                self.stack.push_front(STACK, slot);
                self.enter_head(slot);
                self.cascade(segments - 1);
                segments as u8
            }
        }
    }

    /// Take `slot` out of segment `segment`'s count and boundary (not out of the stack).
    #[inline]
    fn leave(&mut self, segment: usize, slot: u32) {
        self.count[segment] -= 1;
        if self.boundary[segment] == slot {
            self.boundary[segment] = if self.count[segment] > 0 {
                self.stack.toward_head(slot).expect("a segment's other blocks are nearer the head")
            } else {
                NIL
            };
        }
    }

    /// `slot`, now at the head, joins segment 0.
    #[inline]
    fn enter_head(&mut self, slot: u32) {
        self.segment[slot as usize] = 0;
        self.count[0] += 1;
        if self.boundary[0] == NIL {
            self.boundary[0] = slot;
        }
    }

    /// Segments `0..upto` pass their overflow down, one block each at most.
    #[inline]
    fn cascade(&mut self, upto: usize) {
        for segment in 0..upto {
            if self.count[segment] <= self.capacity[segment] {
                break;
            }
            let moved = self.boundary[segment];
            self.leave(segment, moved);
            self.segment[moved as usize] = (segment + 1) as u8;
            self.count[segment + 1] += 1;
            if self.boundary[segment + 1] == NIL {
                self.boundary[segment + 1] = moved;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::lru::LruCache;
    use crate::cache::{BasePolicy, Cache, FaultFree};

    #[test]
    fn equals_one_lru_per_size_on_random_traces() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        for round in 0..40 {
            let mut sizes: Vec<usize> = (0..1 + next(5)).map(|_| 1 + next(40) as usize).collect();
            sizes.sort_unstable();
            sizes.dedup();
            let footprint = 1 + next(120);
            let mut stack = LruStack::new(&sizes, "cache.size").unwrap();
            let mut caches: Vec<Cache<LruCache>> =
                sizes.iter().map(|&size| Cache::new("lru", LruCache::new(size, None), size, None)).collect();
            for i in 0..4000 {
                let block = next(footprint).min(next(footprint)) * 7;
                let level = usize::from(stack.access(block));
                for (index, cache) in caches.iter_mut().enumerate() {
                    assert_eq!(cache.access(block, &FaultFree), index >= level, "round {round}, access {i}, sizes {sizes:?}");
                }
                assert_eq!(stack.len(), caches.last().unwrap().policy().stack().len());
            }
        }
    }

    #[test]
    fn sizes_must_increase() {
        for sizes in [&[][..], &[0, 4], &[4, 4], &[8, 4]] {
            let err = LruStack::new(sizes, "cache.size").unwrap_err().to_string();
            assert!(err.starts_with("cache.size: one stack takes"), "{err}");
        }
    }
}
