//! A global allocator that counts, for the benches that report what an operation allocates
//! (issue 12's tables give allocated bytes beside times). Shared by path with the client's
//! and the server's benches: `#[path = ".../allocations.rs"] mod allocations;`, then
//! `#[global_allocator] static GLOBAL: allocations::Counting = allocations::Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting allocations and their bytes.
pub struct Counting;

static CALLS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; the counting only reads
// the layout.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        CALLS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is `System.alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        CALLS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `operation` and prints how many allocations it made and how many bytes they asked
/// for (a `realloc` counts as one, of its new size), under `name`. Counts are exact only in a
/// binary whose global allocator is [`Counting`].
pub fn print_allocations<T>(name: &str, operation: impl FnOnce() -> T) -> T {
    let (calls, bytes) = counters();
    let output = operation();
    let (calls_after, bytes_after) = counters();
    println!(
        "{name}: {} allocations, {} bytes",
        calls_after - calls,
        bytes_after - bytes
    );
    output
}

/// The allocations made so far and the bytes they asked for (a `realloc` counts as one, of
/// its new size): exact only in a binary whose global allocator is [`Counting`].
pub fn counters() -> (u64, u64) {
    (
        CALLS.load(Ordering::Relaxed) as u64,
        BYTES.load(Ordering::Relaxed) as u64,
    )
}
