//! The host's side of scheduled reducers, over the `scheduled` test module built to wasm32:
//! the call a due row makes (as the host, a one-shot row deleted with it, or after it if the
//! reducer fails), the refusal of clients' calls, and the refusal at load of a schedule whose
//! reducer does not take its rows. When rows come due is the server's scheduler's, tested in
//! the server's suite.

mod wasm_support;

use wasm_support::{binaries, compiled, rows};
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::{ConnectionId, Encode, Errno, Identity, ScheduleAt, TimeDuration, Timestamp};
use wasmod_host::datastore::Row;
use wasmod_host::{InstanceEnv, Outcome, WasmConfig, WasmEngine, WasmModule};

const ALICE: Identity = Identity::from_bytes([0xa1; 32]);

/// A row of the module's `timer` table.
type Timer = (u64, ScheduleAt, bool);
/// A row of its `fired` table: sequence, timer, caller.
type Fired = (u64, u64, Identity);

fn module() -> WasmModule {
    WasmModule::load(
        compiled("scheduled"),
        WasmConfig::default(),
        InstanceEnv::unloaded(),
    )
    .expect("the scheduled module loads")
}

fn table(module: &WasmModule, name: &str) -> u32 {
    module.datastore().table_id(name).expect("the table exists")
}

/// Calls the client-facing reducer `name` with `args` (a tuple of its parameters), which must
/// commit.
fn call(module: &mut WasmModule, name: &str, args: impl Encode) {
    let outcome = module.call_reducer(name, ALICE, ConnectionId::ZERO, &to_vec(&args));
    assert!(outcome.is_success(), "{name}: {outcome}");
}

fn timers(module: &WasmModule) -> Vec<Row> {
    rows(module, table(module, "timer"))
}

fn fired(module: &WasmModule) -> Vec<Fired> {
    let fired = rows(module, table(module, "fired"));
    fired
        .iter()
        .map(|row| from_slice(row).expect("a fired row"))
        .collect()
}

/// The one row of the timer table.
fn only_timer(module: &WasmModule) -> Row {
    let [row] = &timers(module)[..] else {
        panic!("one timer: {:?}", timers(module));
    };
    row.clone()
}

#[test]
fn a_one_shot_row_calls_its_reducer_as_the_host_and_is_deleted_with_the_call() {
    let mut module = module();
    call(&mut module, "once", (7u64, 1_000i64, false));
    let row = only_timer(&module);
    let decoded: Timer = from_slice(&row).expect("a timer");
    assert_eq!(
        decoded,
        (
            7,
            ScheduleAt::Time(Timestamp::from_micros_since_unix_epoch(1_000)),
            false
        )
    );

    let timer_table = table(&module, "timer");
    let outcome = module.call_scheduled(timer_table, &row);
    let Some(Outcome::Committed {
        commit: Some(commit),
        ..
    }) = &outcome
    else {
        panic!("the call commits: {outcome:?}");
    };
    let deleted = commit
        .changes
        .table(timer_table)
        .expect("the timer table changed");
    assert_eq!(
        deleted.deleted,
        std::slice::from_ref(&row),
        "deleted in the reducer's own commit"
    );
    assert_eq!(
        fired(&module),
        [(1, 7, Identity::ZERO)],
        "called once, by the host"
    );
    assert!(timers(&module).is_empty());
    assert_eq!(
        module.call_scheduled(timer_table, &row),
        None,
        "gone: no second call"
    );
    assert_eq!(fired(&module).len(), 1);
}

#[test]
fn a_failing_one_shot_row_is_deleted_in_a_transaction_of_its_own() {
    let mut module = module();
    call(&mut module, "once", (3u64, 0i64, true));
    let row = only_timer(&module);
    let outcome = module.call_scheduled(table(&module, "timer"), &row);
    let Some(Outcome::Failed { message, .. }) = &outcome else {
        panic!("the reducer fails: {outcome:?}");
    };
    assert!(message.contains("timer 3 fails on purpose"), "{message}");
    assert!(timers(&module).is_empty(), "not retried forever");
    assert!(
        fired(&module).is_empty(),
        "the reducer's writes rolled back"
    );
}

#[test]
fn a_repeating_row_stays_and_a_changed_row_is_not_called() {
    let mut module = module();
    call(&mut module, "every", (5u64, 60_000_000i64));
    let row = only_timer(&module);
    let timer_table = table(&module, "timer");
    for _ in 0..2 {
        let outcome = module.call_scheduled(timer_table, &row);
        assert!(
            outcome.as_ref().is_some_and(Outcome::is_success),
            "{outcome:?}"
        );
    }
    assert_eq!(
        timers(&module),
        std::slice::from_ref(&row),
        "the repeating row stays"
    );
    assert_eq!(fired(&module).len(), 2);

    call(&mut module, "move_to", (5u64, 9_000i64));
    assert_eq!(
        module.call_scheduled(timer_table, &row),
        None,
        "the row read before the change is not the table's any more"
    );
    let moved: Timer = from_slice(&only_timer(&module)).expect("a timer");
    assert_eq!(
        moved.1,
        ScheduleAt::Time(Timestamp::from_micros_since_unix_epoch(9_000))
    );
    assert_eq!(
        module.call_scheduled(table(&module, "fired"), &row),
        None,
        "not a schedule table"
    );
    assert_eq!(fired(&module).len(), 2);
}

#[test]
fn clients_may_not_call_a_scheduled_reducer() {
    let mut module = module();
    let timer: Timer = (1, ScheduleAt::Interval(TimeDuration::from_micros(1)), false);
    let outcome = module.call_reducer("fire", ALICE, ConnectionId::ZERO, &to_vec(&(timer,)));
    assert_eq!(outcome.errno(), Some(Errno::NOT_ALLOWED), "{outcome}");
    assert!(
        outcome.to_string().contains("schedule table `timer`"),
        "{outcome}"
    );
    assert!(fired(&module).is_empty());
}

#[test]
fn a_schedule_whose_reducer_does_not_take_its_rows_is_refused_at_load() {
    let engine = WasmEngine::shared().expect("the shared engine");
    let binary = engine
        .compile(&binaries().example("wrong_reducer"))
        .expect("it compiles");
    let error = WasmModule::load(&binary, WasmConfig::default(), InstanceEnv::unloaded())
        .expect_err("refused");
    let message = error.to_string();
    assert!(message.contains("table `job`"), "{message}");
    assert!(message.contains("reducer `run`"), "{message}");
    assert!(
        message.contains("not exactly one row of the table"),
        "{message}"
    );
}
