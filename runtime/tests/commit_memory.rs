//! The commit pipeline keeps nothing it does not need: 100,000 commits made by procedures and
//! HTTP handlers that insert and delete leave the host's memory where it was, with nobody
//! subscribed to the commits and with a subscriber that keeps up.
//!
//! Memory is measured, not assumed: this test binary counts every byte allocated and freed
//! (its own global allocator), so the check is exact and does not depend on the allocator's
//! or the operating system's accounting. It holds one test only, so that nothing else
//! allocates meanwhile.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use wasmod::http::{Method, Request};
use wasmod::Identity;
use wasmod_testing::TestModule;

/// The system allocator, counting the bytes live.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; only counts are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[wasmod::module]
mod churn {
    use wasmod::prelude::*;

    /// Rows that live for one transaction each.
    #[table]
    pub struct Scratch {
        #[primary_key]
        #[auto_inc]
        pub id: u64,
        pub payload: String,
    }

    /// Commits an insert, then the delete of what it inserted: two commits.
    fn insert_then_delete(ctx: &mut impl Transactions) {
        let id = ctx.insert();
        ctx.delete(id);
    }

    /// What procedures and handlers share here: their explicit transactions.
    pub trait Transactions {
        /// Inserts a row in a transaction of its own; its id.
        fn insert(&mut self) -> u64;
        /// Deletes row `id` in a transaction of its own.
        fn delete(&mut self, id: u64);
    }

    macro_rules! transactions {
        ($context:ty) => {
            impl Transactions for $context {
                fn insert(&mut self) -> u64 {
                    self.with_tx(|tx| {
                        tx.db
                            .scratch()
                            .insert(Scratch {
                                id: 0,
                                payload: "a row that lives for one commit".into(),
                            })
                            .id
                    })
                }

                fn delete(&mut self, id: u64) {
                    self.with_tx(|tx| tx.db.scratch().id().delete(id));
                }
            }
        };
    }
    transactions!(ProcedureContext);
    transactions!(HttpContext);

    #[procedure]
    fn churn(ctx: &mut ProcedureContext) -> u64 {
        insert_then_delete(ctx);
        ctx.with_read_tx(|tx| tx.db.scratch().count())
    }

    #[http_handler(POST, "/churn")]
    fn churn_over_http(ctx: &mut HttpContext, _request: Request) -> Response {
        insert_then_delete(ctx);
        Response::new(204)
    }
}

/// Makes `calls` calls, half to the procedure and half to the handler (two commits each).
fn churn(module: &TestModule<churn::Module>, calls: usize) {
    for call in 0..calls {
        if call % 2 == 0 {
            let left: u64 = module
                .call_procedure(Identity::ZERO, "churn", ())
                .expect("the procedure returns");
            assert_eq!(left, 0, "the procedure deleted what it inserted");
        } else {
            let response = module
                .call_http(Request::new(Method::Post, "/churn"))
                .expect("the handler answers");
            assert_eq!(response.status, 204);
        }
    }
}

/// The bytes live now.
fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// At most this many bytes may remain after 100,000 commits: what a commit leaves behind must
/// be under 3 bytes on average, where a kept commit holds well over 100 (its row, its changes'
/// vectors, its metadata). Room for one-time growth (a hash map doubling, a spare buffer).
const SLACK: isize = 256 << 10;

#[test]
fn commits_that_nobody_keeps_leave_no_memory_behind() {
    let module = TestModule::<churn::Module>::new();
    let database = module.database();
    // Warm up: the first calls size the host's reusable buffers.
    churn(&module, 2_000);

    let before = live();
    churn(&module, 50_000);
    let grown = live() - before;
    assert!(
        grown < SLACK,
        "100,000 commits with no subscriber grew live memory by {grown} bytes"
    );

    // A subscriber that keeps up: each commit is released once it has been received.
    let mut feed = database.feed().subscribe();
    let mut received = 0u64;
    let mut next_offset = None;
    churn(&module, 2_000);
    while let Ok(commit) = feed.try_recv() {
        received += 1;
        next_offset = Some(commit.offset + 1);
    }
    let before = live();
    for _ in 0..25 {
        churn(&module, 2_000);
        while let Ok(commit) = feed.try_recv() {
            assert_eq!(Some(commit.offset), next_offset, "commits arrive in order");
            next_offset = Some(commit.offset + 1);
            received += 1;
        }
    }
    let grown = live() - before;
    assert_eq!(
        received,
        2 * 26 * 2_000,
        "two commits per call, each received once"
    );
    assert!(
        grown < SLACK,
        "100,000 commits received by a subscriber grew live memory by {grown} bytes"
    );
}
