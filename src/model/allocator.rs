//! A small replay of PyTorch's CUDA caching allocator, to tell what a sequence of allocations
//! and frees reserves (`torch.cuda.max_memory_reserved`) beside what it allocates. From
//! pytorch/pytorch@001074d `c10/cuda/CUDACachingAllocator.cpp` (`DeviceCachingAllocator`),
//! with its default configuration (one stream, no `max_split_size_mb`, no
//! `roundup_power2_divisions`, nothing released: no `empty_cache`, no out-of-memory retry):
//! - `round_size`: every request is rounded up to `kMinBlockSize` = 512 B;
//! - `get_pool`: requests of at most `kSmallSize` = 1 MiB go to the small pool, larger to the
//!   large pool; a block is only reused within its pool;
//! - `get_free_block`: the smallest cached free block that fits (a `std::set` ordered by size,
//!   then address: `lower_bound`); with the default `max_split_size` (`SIZE_MAX`) no block is
//!   "oversize", so any free block that fits may serve;
//! - `get_allocation_size`, when none fits, a new segment (`cudaMalloc`): `kSmallBuffer` = 2 MiB
//!   for a small request, `kLargeBuffer` = 20 MiB for one under `kMinLargeAlloc` = 10 MiB, else
//!   the size rounded up to `kRoundLarge` = 2 MiB;
//! - `should_split`: the block is split when what remains is at least 512 B (small pool) or more
//!   than `kSmallSize` (large pool), the rest going back to the pool; otherwise the request takes
//!   the whole block, and `allocated_bytes` counts the whole block;
//! - `free_block` / `try_merge_blocks`: a freed block merges with free neighbours of its segment
//!   and stays cached; reserved bytes are the segments' sizes and never fall here.
//!
//! With `expandable_segments:True` (Note [Expandable Segments] in the same file) each pool is one
//! segment that grows at its end by pages of 2 MiB (small pool) or 20 MiB (large pool) when no
//! free block fits, blocks split whenever 512 B remain (`should_split`), and the same best fit
//! serves requests inside it.

/// `kMinBlockSize`, `kSmallSize`, `kSmallBuffer`, `kLargeBuffer`, `kMinLargeAlloc`, `kRoundLarge`.
const MIN_BLOCK: u64 = 512;
const SMALL_SIZE: u64 = 1 << 20;
const SMALL_BUFFER: u64 = 2 << 20;
const LARGE_BUFFER: u64 = 20 << 20;
const MIN_LARGE_ALLOC: u64 = 10 << 20;
const ROUND_LARGE: u64 = 2 << 20;

use std::collections::{BTreeMap, BTreeSet};

/// A block: a range of one segment, free or handed out, keyed by `(segment, offset)`.
#[derive(Clone, Copy, Debug)]
struct Block {
    size: u64,
    small: bool,
    /// The request's own bytes while allocated; `None` while free.
    requested: Option<u64>,
}

/// The allocator's state and its peaks.
#[derive(Debug, Default)]
pub struct CachingAllocator {
    expandable: bool,
    /// Every block by `(segment, offset)`.
    blocks: BTreeMap<(usize, u64), Block>,
    /// The free blocks by `(small pool?, size, segment, offset)`: the cached pools.
    free: BTreeSet<(bool, u64, usize, u64)>,
    /// Each segment's size and whether it is the small pool's.
    segments: Vec<(u64, bool)>,
    reserved: u64,
    allocated: u64,
    requested: u64,
    pub peak_allocated: u64,
    pub peak_requested: u64,
    pub peak_reserved: u64,
}

/// A handle to an allocation (`malloc`'s result, for `free`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    segment: usize,
    offset: u64,
}

fn round_size(bytes: u64) -> u64 {
    bytes.max(1).div_ceil(MIN_BLOCK) * MIN_BLOCK
}

fn allocation_size(size: u64) -> u64 {
    if size <= SMALL_SIZE {
        SMALL_BUFFER
    } else if size < MIN_LARGE_ALLOC {
        LARGE_BUFFER
    } else {
        size.div_ceil(ROUND_LARGE) * ROUND_LARGE
    }
}

impl CachingAllocator {
    pub fn new(expandable_segments: bool) -> Self {
        CachingAllocator { expandable: expandable_segments, ..Default::default() }
    }

    /// Bytes held in segments (`memory_reserved`).
    pub fn reserved(&self) -> u64 {
        self.reserved
    }

    fn put_free(&mut self, key: (usize, u64), size: u64, small: bool) {
        self.blocks.insert(key, Block { size, small, requested: None });
        self.free.insert((small, size, key.0, key.1));
    }

    fn take_free(&mut self, key: (usize, u64)) -> Block {
        let b = self.blocks[&key];
        self.free.remove(&(b.small, b.size, key.0, key.1));
        b
    }

    /// Hands out `bytes`, reusing the best-fitting cached block or reserving a new segment.
    pub fn malloc(&mut self, bytes: u64) -> Allocation {
        let size = round_size(bytes);
        let small = size <= SMALL_SIZE;
        // `get_free_block`: the smallest that fits, the lowest address among equals.
        let fit = self.free.range((small, size, 0, 0)..(small, u64::MAX, usize::MAX, u64::MAX)).next().map(|&(_, _, s, o)| (s, o));
        let key = match fit {
            Some(key) => key,
            None => self.grow(size, small),
        };
        let b = self.take_free(key);
        let remaining = b.size - size;
        let split = if small || self.expandable { remaining >= MIN_BLOCK } else { remaining > SMALL_SIZE };
        let taken = if split {
            self.put_free((key.0, key.1 + size), remaining, small);
            size
        } else {
            b.size
        };
        self.blocks.insert(key, Block { size: taken, small, requested: Some(bytes) });
        self.allocated += taken;
        self.requested += bytes;
        self.peak_allocated = self.peak_allocated.max(self.allocated);
        self.peak_requested = self.peak_requested.max(self.requested);
        self.peak_reserved = self.peak_reserved.max(self.reserved);
        Allocation { segment: key.0, offset: key.1 }
    }

    /// Returns an allocation to its pool, merged with its free neighbours.
    pub fn free(&mut self, a: Allocation) {
        let key = (a.segment, a.offset);
        let Some(b) = self.blocks.get(&key).copied().filter(|b| b.requested.is_some()) else {
            return;
        };
        self.allocated -= b.size;
        self.requested -= b.requested.unwrap_or(0);
        let (mut start, mut size) = (key, b.size);
        let next = (key.0, key.1 + b.size);
        if self.blocks.get(&next).is_some_and(|n| n.requested.is_none()) {
            size += self.take_free(next).size;
            self.blocks.remove(&next);
        }
        let prev = self.blocks.range((key.0, 0)..key).next_back().map(|(&k, &p)| (k, p));
        if let Some((k, p)) = prev.filter(|(k, p)| p.requested.is_none() && k.1 + p.size == key.1) {
            self.take_free(k);
            self.blocks.remove(&key);
            start = k;
            size += p.size;
        }
        self.put_free(start, size, b.small);
    }

    /// A new segment for `size` (default), or the pool's one segment grown by whole pages
    /// (expandable): returns the free block that now fits.
    fn grow(&mut self, size: u64, small: bool) -> (usize, u64) {
        if !self.expandable {
            let bytes = allocation_size(size);
            self.segments.push((bytes, small));
            self.reserved += bytes;
            let key = (self.segments.len() - 1, 0);
            self.put_free(key, bytes, small);
            return key;
        }
        let page = if small { SMALL_BUFFER } else { LARGE_BUFFER };
        let segment = match self.segments.iter().position(|s| s.1 == small) {
            Some(s) => s,
            None => {
                self.segments.push((0, small));
                self.segments.len() - 1
            }
        };
        let end = self.segments[segment].0;
        let tail = self.blocks.range((segment, 0)..(segment, end)).next_back().filter(|(k, b)| b.requested.is_none() && k.1 + b.size == end).map(|(&k, _)| k);
        let (key, have) = match tail {
            Some(k) => (k, self.take_free(k).size),
            None => ((segment, end), 0),
        };
        let added = (size - have).div_ceil(page) * page;
        self.segments[segment].0 += added;
        self.reserved += added;
        self.put_free(key, have + added, small);
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MIB: u64 = 1 << 20;

    #[test]
    fn segment_sizes_follow_the_request_classes() {
        let mut a = CachingAllocator::new(false);
        a.malloc(100);
        assert_eq!(a.reserved(), 2 * MIB);
        a.malloc(3 * MIB);
        assert_eq!(a.reserved(), 22 * MIB);
        // No free block fits: a segment rounded up to 2 MiB.
        a.malloc(25 * MIB + 1);
        assert_eq!(a.reserved(), 22 * MIB + 26 * MIB);
        // The 3 MiB request split its 20 MiB segment; 11 MiB and another 3 MiB fit in the rest.
        a.malloc(11 * MIB);
        a.malloc(3 * MIB);
        assert_eq!(a.reserved(), 48 * MIB);
        a.malloc(3 * MIB + 1);
        assert_eq!(a.reserved(), 68 * MIB);
    }

    #[test]
    fn a_freed_block_is_cached_split_and_merged_back() {
        let mut a = CachingAllocator::new(false);
        let big = a.malloc(32 * MIB);
        a.free(big);
        assert_eq!((a.reserved(), a.allocated), (32 * MIB, 0));
        // Best fit: the 32 MiB block serves an 8 MiB request, split; the rest serves 24 MiB.
        let x = a.malloc(8 * MIB);
        let y = a.malloc(24 * MIB);
        assert_eq!(a.reserved(), 32 * MIB);
        a.free(x);
        a.free(y);
        // Merged again: one 32 MiB block fits a 32 MiB request without a new segment.
        a.malloc(32 * MIB);
        assert_eq!(a.reserved(), 32 * MIB);
        // Under 1 MiB left over: not split, the whole block is allocated.
        let mut b = CachingAllocator::new(false);
        let z = b.malloc(12 * MIB);
        b.free(z);
        b.malloc(11 * MIB + 512 * 1024);
        assert_eq!((b.reserved(), b.allocated), (12 * MIB, 12 * MIB));
    }

    #[test]
    fn expandable_segments_grow_one_segment_per_pool() {
        let mut a = CachingAllocator::new(true);
        let x = a.malloc(30 * MIB);
        assert_eq!(a.reserved(), 40 * MIB);
        a.malloc(5 * MIB);
        assert_eq!(a.reserved(), 40 * MIB);
        a.free(x);
        a.malloc(100 * MIB);
        assert_eq!(a.reserved(), 140 * MIB);
        assert_eq!(a.segments.len(), 1);
    }
}

/// One step of a recorded allocation sequence (a quantisation's): an allocation of so many bytes, or the free of the allocation
/// made at that step's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Alloc(u64),
    Free(usize),
}

/// Runs `steps` through the allocator; returns the allocations they keep.
pub fn run_steps(a: &mut CachingAllocator, steps: &[Step]) -> Vec<Allocation> {
    let mut made: Vec<Option<Allocation>> = Vec::with_capacity(steps.len());
    for step in steps {
        match *step {
            Step::Alloc(bytes) => made.push(Some(a.malloc(bytes))),
            Step::Free(i) => {
                if let Some(h) = made.get_mut(i).and_then(Option::take) {
                    a.free(h);
                }
                made.push(None);
            }
        }
    }
    made.into_iter().flatten().collect()
}
