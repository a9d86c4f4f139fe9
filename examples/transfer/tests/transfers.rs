//! The transfer module, run natively against the real host: what the load generator relies
//! on (seeding, moving money, refusing bad transfers without changing anything).

use transfer::transfers::{self, AccountAccess};
use wasmod::Identity;
use wasmod_testing::{Outcome, TestModule};

const CALLER: Identity = Identity::from_bytes([0x42; 32]);

fn seeded(count: u32, balance: i64) -> TestModule<transfers::Module> {
    let module = TestModule::<transfers::Module>::new();
    let seeded = module.call_reducer(CALLER, "seed", (0u32, count, balance));
    assert!(seeded.is_success(), "{seeded}");
    module
}

fn balances(module: &TestModule<transfers::Module>) -> Vec<i64> {
    module.read(|db| {
        let mut accounts: Vec<_> = db.accounts().iter().collect();
        accounts.sort_by_key(|account| account.id);
        accounts.iter().map(|account| account.balance).collect()
    })
}

fn failure(outcome: Outcome) -> String {
    match outcome {
        Outcome::Failed { message, .. } => message,
        other => panic!("expected a failure, got {other}"),
    }
}

#[test]
fn seeding_opens_the_accounts_once() {
    let module = seeded(4, 100);
    assert_eq!(balances(&module), [100, 100, 100, 100]);
    // A range that overlaps the seeded accounts changes nothing, not even its new accounts.
    let again = failure(module.call_reducer(CALLER, "seed", (2u32, 4u32, 100i64)));
    assert!(again.contains("account 2 is seeded already"), "{again}");
    assert_eq!(balances(&module), [100, 100, 100, 100]);
    // The next range is seeded beside them.
    let next = module.call_reducer(CALLER, "seed", (4u32, 2u32, 50i64));
    assert!(next.is_success(), "{next}");
    assert_eq!(balances(&module), [100, 100, 100, 100, 50, 50]);
    let past = failure(module.call_reducer(CALLER, "seed", (u32::MAX, 2u32, 1i64)));
    assert!(past.contains("u32::MAX"), "{past}");
}

#[test]
fn a_transfer_moves_money_between_two_accounts() {
    let module = seeded(3, 100);
    let moved = module.call_reducer(CALLER, "transfer", (0u32, 2u32, 30i64));
    assert!(moved.is_success(), "{moved}");
    assert_eq!(balances(&module), [70, 100, 130]);
}

#[test]
fn bad_transfers_fail_and_change_nothing() {
    let module = seeded(2, 100);
    let cases: [((u32, u32, i64), &str); 5] = [
        ((0, 0, 1), "two accounts"),
        ((0, 1, 0), "positive amount"),
        ((7, 1, 1), "no such account to take from"),
        ((0, 7, 1), "no such account to pay into"),
        ((0, 1, 101), "insufficient funds"),
    ];
    for (args, expected) in cases {
        let message = failure(module.call_reducer(CALLER, "transfer", args));
        assert!(message.contains(expected), "{args:?}: {message}");
    }
    assert_eq!(balances(&module), [100, 100]);
}
