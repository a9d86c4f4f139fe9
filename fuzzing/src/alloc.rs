//! A counting global allocator: how many bytes one call allocates on this thread.
//!
//! A decoder given `n` bytes must not allocate far more than a bound in `n` (a forged count
//! must not reserve gigabytes). A test binary installs [`Counting`] as its global allocator
//! and wraps each decode in [`allocated`]:
//!
//! ```text
//! #[global_allocator]
//! static ALLOCATOR: wasmod_fuzzing::alloc::Counting = wasmod_fuzzing::alloc::Counting;
//! ```
//!
//! The count is of every byte requested (a reallocation counts its new size), so it bounds
//! the peak of live memory from above. It is kept per thread, so that tests running in
//! parallel do not see each other's allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the bytes each thread requests.
pub struct Counting;

/// What one thread requested of the allocator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Allocations {
    /// How many requests (allocations and reallocations).
    pub calls: usize,
    /// The bytes requested, all requests together.
    pub bytes: usize,
    /// The largest single request.
    pub largest: usize,
}

thread_local! {
    static REQUESTED: Cell<Allocations> = const {
        Cell::new(Allocations { calls: 0, bytes: 0, largest: 0 })
    };
}

/// Adds a request of `size` bytes to this thread's counts. `try_with`: the counts may be
/// gone while the thread ends.
fn count(size: usize) {
    let _ = REQUESTED.try_with(|cell| {
        let counts = cell.get();
        cell.set(Allocations {
            calls: counts.calls.saturating_add(1),
            bytes: counts.bytes.saturating_add(size),
            largest: counts.largest.max(size),
        });
    });
}

// SAFETY: every call is passed to the system allocator unchanged; the counting only reads
// the size.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is `System.alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `run` and returns its result with the bytes it requested on this thread: `0` unless
/// [`Counting`] is the binary's global allocator.
pub fn allocated<R>(run: impl FnOnce() -> R) -> (R, usize) {
    let (result, counts) = allocations(run);
    (result, counts.bytes)
}

/// Runs `run` and returns its result with what it requested on this thread (all zero unless
/// [`Counting`] is the binary's global allocator).
pub fn allocations<R>(run: impl FnOnce() -> R) -> (R, Allocations) {
    REQUESTED.with(|cell| cell.set(Allocations::default()));
    let result = run();
    (result, REQUESTED.with(Cell::get))
}

/// Whether [`Counting`] is this binary's global allocator (a test checks it, so that an
/// allocation bound cannot pass because nothing was counted).
pub fn is_counting() -> bool {
    allocated(|| drop(std::hint::black_box(vec![0u8; 64]))).1 >= 64
}
