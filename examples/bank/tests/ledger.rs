//! The bank module, run natively against the real host.

use bank::ledger::{self, Account, AccountAccess, InterestPaymentAccess, Kind, TransferAccess};
use bank::INTEREST_PERIOD;
use wasmod::http::{Method, Request};
use wasmod::Identity;
use wasmod::ScheduleAt;
use wasmod_testing::{Outcome, TestModule};

const ANN: Identity = Identity::from_bytes([0xa1; 32]);
const BOB: Identity = Identity::from_bytes([0xb0; 32]);

fn failure(outcome: Outcome) -> String {
    match outcome {
        Outcome::Failed { message, .. } => message,
        other => panic!("expected a failure, got {other}"),
    }
}

/// A bank where Ann has a checking account with 100.00 and Bob a savings account with 50.00.
fn bank_with_ann_and_bob() -> TestModule<ledger::Module> {
    let module = TestModule::<ledger::Module>::new();
    let open = |who, name: &str, kind, cents: u64| {
        let opened = module.call_reducer(who, "open_account", (name.to_string(), kind));
        assert!(opened.is_success(), "{opened}");
        let deposited = module.call_reducer(who, "deposit", (name.to_string(), cents));
        assert!(deposited.is_success(), "{deposited}");
    };
    open(ANN, "ann", Kind::Checking, 10_000);
    open(BOB, "bob", Kind::Savings, 5_000);
    module
}

fn balance(module: &TestModule<ledger::Module>, name: &str) -> u64 {
    let name = name.to_string();
    module.read(|db| {
        db.account()
            .name()
            .find(&name)
            .expect("the account")
            .balance
    })
}

#[test]
fn a_transfer_moves_money_and_is_recorded() {
    let module = bank_with_ann_and_bob();
    let moved = module.call_reducer(
        ANN,
        "transfer",
        ("ann".to_string(), "bob".to_string(), 3_000u64),
    );
    assert!(moved.is_success(), "{moved}");
    assert_eq!(
        (balance(&module, "ann"), balance(&module, "bob")),
        (7_000, 8_000)
    );
    let ledger = module.read(|db| {
        db.transfer()
            .iter()
            .map(|transfer| (transfer.from, transfer.to, transfer.amount))
            .collect::<Vec<_>>()
    });
    assert_eq!(ledger, [("ann".to_string(), "bob".to_string(), 3_000)]);
}

#[test]
fn a_failed_transfer_changes_nothing() {
    let module = bank_with_ann_and_bob();
    let transfer = |who, from: &str, to: &str, amount: u64| {
        failure(module.call_reducer(who, "transfer", (from.to_string(), to.to_string(), amount)))
    };
    assert_eq!(transfer(ANN, "ann", "bob", 10_001), "insufficient funds");
    // The debit is written before the missing account is found: the rollback undoes it.
    assert_eq!(
        transfer(ANN, "ann", "carol", 1_000),
        "no such account to pay into"
    );
    assert_eq!(
        transfer(BOB, "ann", "bob", 1_000),
        "only its owner takes money out of an account"
    );
    assert_eq!(
        transfer(ANN, "ann", "ann", 1),
        "a transfer needs two accounts"
    );
    assert_eq!(
        (balance(&module, "ann"), balance(&module, "bob")),
        (10_000, 5_000)
    );
    assert_eq!(module.read(|db| db.transfer().count()), 0);
}

#[test]
fn overflowing_deposits_are_refused() {
    let module = bank_with_ann_and_bob();
    let too_much = module.call_reducer(ANN, "deposit", ("ann".to_string(), u64::MAX));
    assert_eq!(failure(too_much), "too much money");
    assert_eq!(balance(&module, "ann"), 10_000);
}

#[test]
fn account_names_are_unique_and_bounded() {
    let module = bank_with_ann_and_bob();
    let again = module.call_reducer(BOB, "open_account", ("ann".to_string(), Kind::Savings));
    assert_eq!(failure(again), "an account of that name exists");
    let empty = module.call_reducer(BOB, "open_account", (String::new(), Kind::Savings));
    assert_eq!(failure(empty), "an account's name has 1 to 64 bytes");
    let owners = module.read(|db| db.account().owner().filter(BOB).count());
    assert_eq!(owners, 1);
    let savings: Vec<Account> =
        module.read(|db| db.account().kind().filter(Kind::Savings).collect());
    assert_eq!(savings.len(), 1);
    assert_eq!(savings[0].name, "bob");
}

#[test]
fn the_http_handler_answers_a_summary_as_json() {
    let module = bank_with_ann_and_bob();
    let found = module
        .call_http(Request::new(Method::Get, "/accounts/bob"))
        .expect("the handler answers");
    assert_eq!(found.status, 200);
    assert_eq!(found.header("content-type"), Some("application/json"));
    let body = String::from_utf8(found.body).expect("UTF-8");
    let opened = module.read(|db| db.account().name().find("bob".to_string()).unwrap().opened);
    assert_eq!(
        body,
        format!(
            r#"{{"kind":"Savings","name":"bob","opened":{},"owner":"{}"}}"#,
            opened.to_micros_since_unix_epoch(),
            BOB.to_hex()
        )
    );
    let missing = module
        .call_http(Request::new(Method::Get, "/accounts/carol"))
        .expect("the handler answers");
    assert_eq!(
        (missing.status, missing.body.as_slice()),
        (404, &b"no account carol"[..])
    );
}

#[test]
fn interest_is_scheduled_by_init_and_paid_to_savings_only() {
    let module = bank_with_ann_and_bob();
    let schedule: Vec<ScheduleAt> =
        module.read(|db| db.interest_payment().iter().map(|row| row.at).collect());
    assert_eq!(schedule, [ScheduleAt::from(INTEREST_PERIOD)]);
    let paid = module.run_scheduled("interest_payment");
    assert_eq!(paid.len(), 1);
    assert!(paid[0].is_success(), "{}", paid[0]);
    // Half a percent of Bob's 50.00 savings; Ann's checking account earns nothing.
    assert_eq!(
        (balance(&module, "ann"), balance(&module, "bob")),
        (10_000, 5_025)
    );
    // The schedule repeats: its row stays for the next period.
    assert_eq!(module.read(|db| db.interest_payment().count()), 1);
}

#[test]
fn clients_cannot_pay_themselves_interest() {
    let module = bank_with_ann_and_bob();
    let payment = module.read(|db| db.interest_payment().iter().next().expect("the schedule"));
    match module.call_reducer(BOB, "pay_interest", (payment,)) {
        Outcome::Failed { code, message } => {
            assert_eq!(
                i32::from(code),
                i32::from(wasmod::Errno::NOT_ALLOWED.code()),
                "{message}"
            );
            assert!(message.contains("interest_payment"), "{message}");
        }
        other => panic!("expected a refusal, got {other}"),
    }
    assert_eq!(balance(&module, "bob"), 5_000);
}
