//! Scheduled reducers through a served server, on a clock the tests move: the `scheduled`
//! test module's `timer` table schedules its `fire` reducer, which records each call in
//! `fired`. Timers are written through the module's ordinary reducers over the API, and the
//! tests watch the tables.
//!
//! The clock starts at the real time, so that the commits' timestamps (which a repeating
//! row's first period counts from) agree with it. Waiting for a call that must come is
//! bounded by [`PATIENCE`]; checking that a call does not come waits [`SETTLE`], which can
//! only let a wrong call pass unseen, never fail a right one (the timer queue's own tests pin
//! the exact due times).

use crate::live::{Live, PATIENCE};
use crate::support::{identity, post};
use axum::http::StatusCode;
use axum::Router;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use wasmod_abi::encoding::from_slice;
use wasmod_abi::{Identity, ScheduleAt, Timestamp};
use wasmod_host::datastore::{durability, Database};
use wasmod_host::{CompiledModule, InstanceEnv, Persistence, WasmConfig, WasmEngine, WasmModule};
use wasmod_node::ManualClock;
use wasmod_server::{Secret, Server, ServerConfig, Sides};
use wasmod_wasm_tests::{built, Profile};

/// How long a test waits to see that a call it does not expect has not come.
const SETTLE: Duration = Duration::from_millis(300);

/// A row of `fired`: sequence, timer, caller.
type Fired = (u64, u64, Identity);
/// A row of `timer`.
type Timer = (u64, ScheduleAt, bool);

fn compiled() -> &'static CompiledModule {
    static COMPILED: OnceLock<CompiledModule> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let wasm = built(Profile::Release).library("scheduled");
        let engine = WasmEngine::shared().expect("the shared engine");
        engine
            .compile(&wasm)
            .expect("the scheduled module compiles")
    })
}

/// A server over the `scheduled` module on `clock`, with its tables in a commit log in `dir`
/// if given, and an admin side; its router; and the server served.
async fn serve(clock: &Arc<ManualClock>, dir: Option<&Path>) -> (Router, Live) {
    let env = match dir {
        Some(dir) => InstanceEnv::unloaded()
            .with_persistence(Persistence::new(dir, durability::Options::default())),
        None => InstanceEnv::unloaded(),
    };
    let module =
        WasmModule::load(compiled(), WasmConfig::default(), env).expect("the module loads");
    let admin = wasmod_server::AdminOptions {
        token: wasmod_server::OperatorToken::new(crate::support::OPERATOR).expect("a token"),
        dispatch_report: None,
        keep_published: None,
        inspect: None,
    };
    let sides = Sides {
        clock: Some(clock.clone()),
        admin: Some(admin),
        ..Sides::default()
    };
    let server = Server::with_sides(
        module,
        Secret::from_bytes(crate::support::SECRET),
        ServerConfig::default(),
        sides,
    )
    .expect("the server starts");
    let router = server.router();
    let live = Live::serve(server).await;
    // The scheduler reads its tables as the node starts: wait for it, so that the clock is
    // not moved before (a repeating row read later would be due a period after the reading).
    live.answering().await;
    (router, live)
}

/// A manual clock at the real time now, the module compiled first (which takes long enough
/// that commits made after it would be far from the clock's time).
fn clock() -> Arc<ManualClock> {
    compiled();
    Arc::new(ManualClock::new(Timestamp::now()))
}

/// The clock's time now plus `by`, in microseconds since the Unix epoch.
fn after(clock: &ManualClock, by: Duration) -> i64 {
    use wasmod_node::ScheduleClock;
    (clock.now() + by.into()).to_micros_since_unix_epoch()
}

async fn call(router: &Router, token: &str, reducer: &str, args: Value) {
    let answer = post(
        router,
        &format!("/v1/reducers/{reducer}"),
        Some(token),
        args,
    )
    .await;
    assert_eq!(
        answer.status,
        StatusCode::OK,
        "{reducer}: {:?}",
        answer.json()
    );
}

fn rows<T: wasmod_abi::Decode>(database: &Database, table: &str) -> Vec<T> {
    let id = database.datastore().table_id(table).expect("the table");
    let tables = database.begin_read();
    let rows = tables
        .rows(id)
        .expect("the table")
        .map(|row| from_slice(row).expect("a row"));
    rows.collect()
}

fn fired(live: &Live) -> Vec<Fired> {
    rows(&live.database, "fired")
}

fn timers(live: &Live) -> Vec<Timer> {
    rows(&live.database, "timer")
}

/// Waits until `done` holds of the server, for at most [`PATIENCE`].
async fn until(live: &Live, what: &str, done: impl Fn(&Live) -> bool) {
    let waited = tokio::time::timeout(PATIENCE, async {
        while !done(live) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    waited.await.unwrap_or_else(|_| {
        panic!(
            "{what}: not within {PATIENCE:?}; fired {:?}, timers {:?}",
            fired(live),
            timers(live)
        )
    });
}

/// Stops the server, once the test's handle on its router (which holds the module's thread
/// open) is gone.
async fn stop(router: Router, live: Live) {
    drop(router);
    // Some tests start again on the same data next.
    live.stop_releasing().await;
}

fn fired_timers(live: &Live) -> Vec<u64> {
    fired(live).into_iter().map(|(_, timer, _)| timer).collect()
}

#[tokio::test]
async fn a_one_shot_timer_fires_once_its_time_has_passed_and_its_row_goes() {
    let clock = clock();
    let (router, live) = serve(&clock, None).await;
    let (_, token) = identity(&router).await;
    call(
        &router,
        &token,
        "once",
        json!([1, after(&clock, Duration::from_secs(60)), false]),
    )
    .await;

    clock.advance(Duration::from_secs(59));
    tokio::time::sleep(SETTLE).await;
    assert!(fired(&live).is_empty(), "not due yet");

    clock.advance(Duration::from_secs(2));
    until(&live, "the timer fired", |live| !fired(live).is_empty()).await;
    assert_eq!(fired(&live), [(1, 1, Identity::ZERO)], "once, by the host");
    assert!(timers(&live).is_empty(), "the one-shot row is deleted");
    clock.advance(Duration::from_secs(3600));
    tokio::time::sleep(SETTLE).await;
    assert_eq!(fired(&live).len(), 1);
    let metrics = live.metrics().await;
    assert!(
        metrics.contains(r#"wasmod_calls_total{kind="scheduled",outcome="ok"} 1"#),
        "{metrics}"
    );
    stop(router, live).await;
}

#[tokio::test]
async fn a_repeating_timer_fires_every_period_and_skips_the_missed_ones() {
    let clock = clock();
    let (router, live) = serve(&clock, None).await;
    let (_, token) = identity(&router).await;
    call(&router, &token, "every", json!([2, 60_000_000])).await;
    // The row's first period counts from its commit, just before now: the clock starts there,
    // however long the server took to start on a loaded machine.
    clock.set(Timestamp::now());

    // Ten seconds' room for the time from the commit to the clock's start.
    for count in 1..=2 {
        clock.advance(Duration::from_secs(70));
        until(&live, "a period passed", |live| fired(live).len() == count).await;
    }
    // A long time at once: one call, not one per missed period.
    clock.advance(Duration::from_secs(3600));
    until(&live, "the next period", |live| fired(live).len() == 3).await;
    tokio::time::sleep(SETTLE).await;
    assert_eq!(fired_timers(&live), [2, 2, 2]);
    assert_eq!(timers(&live).len(), 1, "the repeating row stays");

    call(&router, &token, "cancel", json!([2])).await;
    clock.advance(Duration::from_secs(3600));
    tokio::time::sleep(SETTLE).await;
    assert_eq!(fired(&live).len(), 3, "deleting the row cancels it");
    stop(router, live).await;
}

#[tokio::test]
async fn deleting_a_timer_cancels_it_and_moving_it_reschedules_it() {
    let clock = clock();
    let (router, live) = serve(&clock, None).await;
    let (_, token) = identity(&router).await;
    let minute = after(&clock, Duration::from_secs(60));
    call(&router, &token, "once", json!([3, minute, false])).await;
    call(&router, &token, "once", json!([4, minute, false])).await;
    call(&router, &token, "cancel", json!([3])).await;
    let later = after(&clock, Duration::from_secs(120));
    call(&router, &token, "move_to", json!([4, later])).await;

    clock.advance(Duration::from_secs(61));
    tokio::time::sleep(SETTLE).await;
    assert!(fired(&live).is_empty(), "3 is cancelled and 4 moved later");
    clock.advance(Duration::from_secs(60));
    until(&live, "the moved timer fired", |live| {
        !fired(live).is_empty()
    })
    .await;
    assert_eq!(fired_timers(&live), [4]);
    assert!(timers(&live).is_empty());
    stop(router, live).await;
}

#[tokio::test]
async fn a_failing_one_shot_timer_is_deleted_and_counted_as_failed() {
    let clock = clock();
    let (router, live) = serve(&clock, None).await;
    let (_, token) = identity(&router).await;
    call(
        &router,
        &token,
        "once",
        json!([5, after(&clock, Duration::ZERO), true]),
    )
    .await;
    until(&live, "the failing row was deleted", |live| {
        timers(live).is_empty()
    })
    .await;
    assert!(
        fired(&live).is_empty(),
        "the reducer's writes are rolled back"
    );
    let metrics = live.metrics().await;
    assert!(
        metrics.contains(r#"wasmod_calls_total{kind="scheduled",outcome="entry_failed"} 1"#),
        "{metrics}"
    );
    stop(router, live).await;
}

#[tokio::test]
async fn clients_may_not_call_a_scheduled_reducer() {
    let clock = clock();
    let (router, live) = serve(&clock, None).await;
    let (_, token) = identity(&router).await;
    let timer = json!([{"id": 6, "at": {"Time": 0}, "fail": false}]);
    let answer = post(&router, "/v1/reducers/fire", Some(&token), timer).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{:?}", answer.json());
    assert_eq!(answer.code(), "scheduled_reducer");
    assert!(
        answer.message().contains("schedule table `timer`"),
        "{}",
        answer.message()
    );
    assert!(fired(&live).is_empty());
    stop(router, live).await;
}

#[tokio::test]
async fn timers_missed_while_stopped_fire_at_start() {
    let dir = tempfile::tempdir().expect("a directory");
    let clock = clock();
    let (router, live) = serve(&clock, Some(dir.path())).await;
    let (_, token) = identity(&router).await;
    let hour = after(&clock, Duration::from_secs(3600));
    call(&router, &token, "once", json!([7, hour, false])).await;
    call(&router, &token, "every", json!([8, 600_000_000])).await;
    stop(router, live).await;

    // Two hours later, the one-shot timer's time has passed: it runs at once.
    clock.advance(Duration::from_secs(7200));
    let (router, live) = serve(&clock, Some(dir.path())).await;
    until(&live, "the missed timer fired at start", |live| {
        !fired(live).is_empty()
    })
    .await;
    tokio::time::sleep(SETTLE).await;
    assert_eq!(
        fired_timers(&live),
        [7],
        "the repeating one waits a period from the start"
    );
    assert_eq!(timers(&live).len(), 1);
    clock.advance(Duration::from_secs(601));
    until(&live, "the repeating timer fired", |live| {
        fired(live).len() == 2
    })
    .await;
    assert_eq!(fired_timers(&live), [7, 8]);
    stop(router, live).await;
}

#[tokio::test]
async fn timers_fire_after_a_new_build_is_published() {
    let clock = clock();
    let (router, live) = serve(&clock, None).await;
    let (_, token) = identity(&router).await;
    call(
        &router,
        &token,
        "once",
        json!([1, after(&clock, Duration::from_secs(60)), false]),
    )
    .await;

    let wasm = built(Profile::Release).library("scheduled");
    let published = crate::support::send(
        &router,
        axum::http::Method::POST,
        "/v1/admin/module",
        Some(crate::support::OPERATOR),
        wasm,
    )
    .await;
    assert_eq!(published.status, StatusCode::OK, "{:?}", published.json());

    // The timer set before the swap, and one set after it, fire on the new build's scheduler.
    call(
        &router,
        &token,
        "once",
        json!([2, after(&clock, Duration::from_secs(90)), false]),
    )
    .await;
    clock.advance(Duration::from_secs(61));
    until(&live, "the first timer fired", |live| {
        fired(live).len() == 1
    })
    .await;
    clock.advance(Duration::from_secs(30));
    until(&live, "the second timer fired", |live| {
        fired(live).len() == 2
    })
    .await;
    assert_eq!(fired_timers(&live), [1, 2]);
    stop(router, live).await;
}
