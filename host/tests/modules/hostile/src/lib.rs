//! A wasmod module that misbehaves on request, for the host's wasm tests
//! (`host/tests/wasm_hostile.rs`).
//!
//! Its well-behaved entry points (`add`, `items`) come from the wasmod runtime like any
//! module's. Each hostile reducer first writes a row, so that a test can see the write rolled
//! back, then misbehaves: loops forever, allocates without end, recurses without end, panics,
//! overflows an integer, aborts, or traps with its own state half-updated. The `probe` procedure calls one import with one bad pointer or length, through
//! imports declared here by hand (the runtime's wrappers only pass valid slices), and returns
//! the codes the host answered. The `churn` HTTP handler commits an insert and its delete, for
//! tests of what many commits leave behind. The `fetch` procedure waits on an outbound
//! request, and `hoard` sends requests in a loop and never reads their responses.
//!
//! The crate is only meaningful in wasm: on other targets it is empty.

#![cfg(target_arch = "wasm32")]

mod probe;

use core::hint::black_box;
use std::cell::RefCell;

thread_local! {
    /// The ids `add` saw: state that lives in the instance's memory between calls.
    static SEEN: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// The hostile module.
#[wasmod::module]
pub mod hostile {
    use super::black_box;
    use wasmod::prelude::*;

    /// Rows the tests compare before and after each hostile call.
    #[table(public)]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Item {
        #[primary_key]
        /// The key.
        pub id: u32,
        /// A payload.
        pub name: String,
    }

    /// Inserts an item: the well-behaved call that must succeed after every hostile one. It
    /// also records the id in the instance's own memory ([`super::SEEN`]), which a trapped
    /// `trap_while_borrowed` leaves borrowed.
    #[reducer]
    fn add(ctx: &ReducerContext, id: u32, name: String) -> Result<(), String> {
        super::SEEN.with(|seen| seen.borrow_mut().push(id));
        ctx.db
            .item()
            .try_insert(Item { id, name })
            .map(drop)
            .map_err(|error| error.to_string())
    }

    /// Every item, by id.
    #[view]
    fn items(ctx: &AnonymousViewContext) -> Vec<Item> {
        ctx.db.item().iter().collect()
    }

    /// Writes a row, then loops forever.
    #[reducer]
    fn spin(ctx: &ReducerContext) {
        scribble(ctx);
        let mut n = 0u64;
        loop {
            n = black_box(n.wrapping_add(1));
        }
    }

    /// Writes a row, then allocates (and touches) a mebibyte at a time, forever.
    #[reducer]
    fn hog(ctx: &ReducerContext) {
        scribble(ctx);
        let mut chunks = Vec::new();
        loop {
            chunks.push(vec![1u8; 1 << 20]);
            black_box(&chunks);
        }
    }

    /// Writes a row, then recurses without end.
    #[reducer]
    fn recurse(ctx: &ReducerContext) {
        scribble(ctx);
        black_box(super::depth(0));
    }

    /// Writes a row, then panics.
    #[reducer]
    fn panics(ctx: &ReducerContext) {
        scribble(ctx);
        panic!("the hostile module panicked on purpose");
    }

    /// Writes a row, then adds `percent`% interest to `balance` the way a ledger would, and
    /// stores the result: with `balance` near `u64::MAX` the arithmetic overflows, which the
    /// release profile's `overflow-checks` turn into a panic instead of a wrapped balance.
    #[reducer]
    fn add_interest(ctx: &ReducerContext, balance: u64, percent: u64) {
        scribble(ctx);
        let balance = balance + balance * percent / 100;
        ctx.db.item().insert(Item {
            id: 667,
            name: balance.to_string(),
        });
    }

    /// Writes a row, then executes `unreachable` without a panic.
    #[reducer]
    fn abort(ctx: &ReducerContext) {
        scribble(ctx);
        core::arch::wasm32::unreachable();
    }

    /// Writes a row, then traps while it holds a borrow of [`super::SEEN`]: an instance that
    /// outlived the trap would fail every later `add` ("already borrowed").
    #[reducer]
    fn trap_while_borrowed(ctx: &ReducerContext) {
        scribble(ctx);
        super::SEEN.with(|seen| {
            let held = seen.borrow_mut();
            black_box(&held);
            core::arch::wasm32::unreachable()
        })
    }

    /// Calls `import` with its argument `arg` bad in the way `case` numbers, and returns the
    /// codes the host answered (see `probe.rs`).
    #[procedure]
    fn probe(_ctx: &mut ProcedureContext, import: String, arg: String, case: u32) -> Vec<u32> {
        super::probe::run(&import, &arg, case)
    }

    /// Sends `GET url` and returns the status, or `0` if the request failed: against a server
    /// that never answers, the host must end the wait by the call's deadline.
    #[procedure]
    fn fetch(ctx: &mut ProcedureContext, url: String) -> u16 {
        ctx.http_get(&url).map_or(0, |response| response.status)
    }

    /// Sends `GET url` up to `times` times, keeping every response the host holds for it
    /// unread, and returns how many it got and the code of the refusal that stopped it (`0`
    /// if none did): the host must bound what a call makes it hold.
    #[procedure]
    fn hoard(_ctx: &mut ProcedureContext, url: String, times: u32) -> Vec<u32> {
        let request = wasmod::abi::encoding::to_vec(&Request::new(Method::Get, url));
        for fetched in 0..times {
            if let Err(errno) = wasmod::sys::procedure_http_request(&request) {
                return vec![fetched, u32::from(errno.code())];
            }
        }
        vec![times, 0]
    }

    /// Inserts an item and deletes it again, each in a transaction of its own: two commits
    /// that leave no row behind, which a client can make without end (the server's memory
    /// test, `server/tests/handler_memory.rs`, makes 100,000).
    #[http_handler(POST, "/churn")]
    fn churn(ctx: &mut HttpContext, _request: Request) -> Response {
        ctx.with_tx(|tx| {
            tx.db.item().insert(Item {
                id: CHURNED,
                name: "lives for one commit".into(),
            })
        });
        ctx.with_tx(|tx| tx.db.item().id().delete(CHURNED));
        Response::new(204)
    }

    /// The id of the item `churn` inserts and deletes.
    const CHURNED: u32 = 999;

    /// The write every hostile reducer makes before it misbehaves.
    fn scribble(ctx: &ReducerContext) {
        ctx.db.item().insert(Item {
            id: 666,
            name: "written before misbehaving".into(),
        });
    }
}

/// Recursion no compiler can turn into a loop: each frame uses the result of the next.
#[inline(never)]
fn depth(n: u64) -> u64 {
    if black_box(n) == u64::MAX {
        return 0;
    }
    depth(n + 1).wrapping_mul(3) ^ black_box(n)
}
