//! A tiny deterministic random generator (xorshift) for the crate's randomized tests, so that
//! every run, and every failure, is the same.

// Each includer uses a part of it.
#![allow(dead_code)]

/// A deterministic xorshift generator, from a non-zero seed.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (zero when `n` is zero).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True with `percent` per cent chance.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    /// One of `items`, which must not be empty.
    pub fn pick<'a, X>(&mut self, items: &'a [X]) -> &'a X {
        &items[self.below(items.len())]
    }
}
