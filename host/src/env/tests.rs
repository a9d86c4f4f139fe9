//! Every import over slices: handles, buffers, transactions and their misuse.

use super::*;
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::http::{Method, Request, Response};
use wasmod_abi::names::EMPTY_SOURCE;
use wasmod_abi::{AlgebraicType, IndexDef, TableDef, Typespace};

/// One table, `item (id: u32 primary key, name: String)`.
fn module() -> ModuleDef {
    let columns = [("id", AlgebraicType::U32), ("name", AlgebraicType::String)];
    let mut typespace = Typespace::default();
    let table = TableDef {
        primary_key: Some(0),
        indexes: vec![IndexDef {
            name: "item_id".into(),
            columns: vec![0],
            unique: true,
        }],
        ..TableDef::of_columns(&mut typespace, "Item", "item", &columns)
    };
    ModuleDef {
        typespace,
        tables: vec![table],
        ..ModuleDef::default()
    }
}

fn env() -> InstanceEnv {
    let module = module();
    let database = Database::in_memory(&module).unwrap();
    InstanceEnv::new(Arc::new(module), Arc::new(database))
}

fn item(id: u32, name: &str) -> Vec<u8> {
    to_vec(&(id, name.to_owned()))
}

/// `env` in a reducer call.
fn reducer(env: &mut InstanceEnv) {
    let tx = Tx::Reducer(env.datastore().begin_mut());
    env.begin_call(CallKind::Reducer, tx);
}

fn commit(env: &mut InstanceEnv) {
    if let Tx::Reducer(tx) = env.end_call() {
        tx.commit();
    }
}

fn seed(env: &mut InstanceEnv, items: &[(u32, &str)]) {
    reducer(env);
    for (id, name) in items {
        env.insert(0, &mut item(*id, name)).unwrap();
    }
    commit(env);
}

#[test]
fn an_instance_can_move_between_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<InstanceEnv>();
}

#[test]
fn byte_sources_read_to_the_end_then_close() {
    let mut env = env();
    let source = env.create_source(b"hello".to_vec());
    assert_ne!(source, 0);
    assert_eq!(env.bytes_source_remaining(source), Ok(5));
    let mut buf = [0; 3];
    assert_eq!(env.bytes_source_read(source, &mut buf), Ok((3, false)));
    assert_eq!(&buf, b"hel");
    assert_eq!(env.bytes_source_remaining(source), Ok(2));
    assert_eq!(env.bytes_source_read(source, &mut []), Ok((0, false)));
    assert_eq!(env.bytes_source_read(source, &mut buf), Ok((2, true)));
    assert_eq!(&buf[..2], b"lo");
    assert_eq!(
        env.bytes_source_read(source, &mut buf),
        Err(Errno::NO_SUCH_SOURCE)
    );
    assert_eq!(
        env.bytes_source_remaining(source),
        Err(Errno::NO_SUCH_SOURCE)
    );

    let empty = env.create_source(Vec::new());
    assert_eq!(empty, EMPTY_SOURCE, "no bytes make no source");
    assert_eq!(env.bytes_source_remaining(empty), Ok(0));
    assert_eq!(env.bytes_source_read(empty, &mut buf), Ok((0, true)));
    assert_eq!(
        env.bytes_source_read(empty, &mut buf),
        Ok((0, true)),
        "the empty source is never closed"
    );
}

#[test]
fn byte_sinks_collect_and_cap() {
    let mut env = env().with_limits(Limits {
        max_sink_bytes: 4,
        ..Limits::default()
    });
    let sink = env.create_sink();
    env.bytes_sink_write(sink, b"ab").unwrap();
    env.bytes_sink_write(sink, b"cd").unwrap();
    assert_eq!(env.bytes_sink_write(sink, b"e"), Err(Errno::TOO_LARGE));
    assert_eq!(env.take_sink(sink), Some(b"abcd".to_vec()));
    assert_eq!(env.bytes_sink_write(sink, b"x"), Err(Errno::NO_SUCH_SINK));
    assert_eq!(env.bytes_sink_write(0, b"x"), Err(Errno::NO_SUCH_SINK));
    assert_eq!(env.take_sink(sink), None);
}

#[test]
fn table_imports_need_a_transaction() {
    let mut env = env();
    assert_eq!(env.table_row_count(0), Err(Errno::NO_TX));
    assert_eq!(env.table_scan(0), Err(Errno::NO_TX));
    assert_eq!(env.index_scan(0, 0, &[]), Err(Errno::NO_TX));
    assert_eq!(env.insert(0, &mut item(1, "a")), Err(Errno::NO_TX));
    assert_eq!(env.update_by_unique(0, 0, &item(1, "a")), Err(Errno::NO_TX));
    assert_eq!(env.delete_by_index_scan(0, 0, &[]), Err(Errno::NO_TX));
    assert_eq!(env.delete_rows(0, &[]), Err(Errno::NO_TX));
    assert_eq!(env.clear_table(0), Err(Errno::NO_TX));
}

#[test]
fn reducers_read_and_write() {
    let mut env = env();
    reducer(&mut env);
    env.insert(0, &mut item(1, "a")).unwrap();
    env.insert(0, &mut item(2, "b")).unwrap();
    assert_eq!(
        env.insert(0, &mut item(2, "c")),
        Err(Errno::UNIQUE_VIOLATION)
    );
    assert_eq!(env.insert(1, &mut item(3, "c")), Err(Errno::NO_SUCH_TABLE));
    assert_eq!(env.insert(0, &mut [1]), Err(Errno::BAD_ENCODING));
    env.update_by_unique(0, 0, &item(2, "bb")).unwrap();
    assert_eq!(
        env.update_by_unique(0, 0, &item(9, "z")),
        Err(Errno::NO_SUCH_ROW)
    );
    assert_eq!(env.table_row_count(0), Ok(2));
    assert_eq!(env.delete_rows(0, &item(1, "a")), Ok(1));
    let mut scan = 1u32.to_le_bytes().to_vec();
    scan.extend(2u32.to_le_bytes());
    scan.extend([0, 0]);
    assert_eq!(env.delete_by_index_scan(0, 0, &scan), Ok(1));
    assert_eq!(
        env.delete_by_index_scan(0, 1, &scan),
        Err(Errno::NO_SUCH_INDEX)
    );
    assert_eq!(
        env.delete_by_index_scan(0, 0, &[9]),
        Err(Errno::BAD_ENCODING)
    );
    env.insert(0, &mut item(5, "e")).unwrap();
    assert_eq!(env.clear_table(0), Ok(1));
    commit(&mut env);
}

#[test]
fn row_iterators_fill_the_buffer_with_whole_rows() {
    let mut env = env();
    seed(&mut env, &[(1, "a"), (2, "bb"), (3, "ccc")]);
    let rows = [item(1, "a"), item(2, "bb"), item(3, "ccc")];
    reducer(&mut env);

    let iter = env.table_scan(0).unwrap();
    let mut big = [0; 256];
    let total: usize = rows.iter().map(Vec::len).sum();
    assert_eq!(
        env.row_iter_advance(iter, &mut big),
        Ok(Advance::Exhausted { written: total })
    );
    assert_eq!(big[..total], rows.concat());
    assert_eq!(
        env.row_iter_advance(iter, &mut big),
        Err(Errno::NO_SUCH_ITER),
        "closed when exhausted"
    );

    let iter = env.table_scan(0).unwrap();
    let mut tiny = [0; 4];
    assert_eq!(
        env.row_iter_advance(iter, &mut tiny),
        Ok(Advance::BufferTooSmall {
            needed: rows[0].len()
        })
    );
    let written = rows[0].len() + rows[1].len();
    let mut two = vec![0; written + 1];
    assert_eq!(
        env.row_iter_advance(iter, &mut two),
        Ok(Advance::More { written })
    );
    assert_eq!(two[..written], [rows[0].clone(), rows[1].clone()].concat());
    assert_eq!(
        env.row_iter_advance(iter, &mut two[..rows[2].len() - 1]),
        Ok(Advance::BufferTooSmall {
            needed: rows[2].len()
        })
    );
    env.row_iter_close(iter).unwrap();
    assert_eq!(env.row_iter_close(iter), Err(Errno::NO_SUCH_ITER));
    assert_eq!(env.row_iter_advance(0, &mut big), Err(Errno::NO_SUCH_ITER));

    let empty = env.index_scan(0, 0, &{
        let mut scan = 1u32.to_le_bytes().to_vec();
        scan.extend(9u32.to_le_bytes());
        scan.extend([0, 0]);
        scan
    });
    assert_eq!(
        env.row_iter_advance(empty.unwrap(), &mut []),
        Ok(Advance::Exhausted { written: 0 })
    );
    assert_eq!(env.index_scan(0, 4, &[]), Err(Errno::NO_SUCH_INDEX));
    assert_eq!(env.index_scan(0, 0, &[1]), Err(Errno::BAD_ENCODING));
    assert_eq!(env.table_scan(7), Err(Errno::NO_SUCH_TABLE));
}

#[test]
fn iterators_left_open_die_with_the_call_and_their_buffers_serve_again() {
    let mut env = env();
    seed(&mut env, &[(1, "a"), (2, "bb")]);
    reducer(&mut env);
    let open = env.table_scan(0).unwrap();
    let mut buf = [0; 64];
    let first = item(1, "a").len();
    assert_eq!(
        env.row_iter_advance(open, &mut buf[..first]),
        Ok(Advance::More { written: first })
    );
    drop(env.end_call());

    reducer(&mut env);
    assert_eq!(
        env.row_iter_advance(open, &mut buf),
        Err(Errno::NO_SUCH_ITER)
    );
    let point = env.index_scan(0, 0, &{
        let mut scan = 1u32.to_le_bytes().to_vec();
        scan.extend(2u32.to_le_bytes());
        scan.extend([0, 0]);
        scan
    });
    let only = item(2, "bb");
    assert_eq!(
        env.row_iter_advance(point.unwrap(), &mut buf),
        Ok(Advance::Exhausted {
            written: only.len()
        }),
        "a recycled buffer holds this scan's rows only"
    );
    assert_eq!(buf[..only.len()], only);
}

#[test]
fn an_iterator_is_a_snapshot_of_its_scan() {
    let mut env = env();
    seed(&mut env, &[(1, "a")]);
    reducer(&mut env);
    let iter = env.table_scan(0).unwrap();
    env.clear_table(0).unwrap();
    let mut buf = [0; 64];
    assert_eq!(
        env.row_iter_advance(iter, &mut buf),
        Ok(Advance::Exhausted {
            written: item(1, "a").len()
        })
    );
}

/// A scan loop that never reads cannot grow the host: open iterators are bounded in bytes
/// and in number per call, past which scans fail with `TOO_LARGE`; closing one makes room;
/// and the next call starts afresh.
#[test]
fn open_iterators_are_bounded_in_bytes_and_in_number() {
    let long = "x".repeat(1000);
    let mut bytes = env().with_limits(Limits {
        max_held_bytes: 140_000,
        max_live_handles: 8,
        ..Limits::default()
    });
    let items: Vec<(u32, &str)> = (0..50).map(|id| (id, long.as_str())).collect();
    seed(&mut bytes, &items);
    reducer(&mut bytes);
    let first = bytes.table_scan(0).expect("~66 KB (the buffer doubles)");
    bytes.table_scan(0).expect("~132 KB in all");
    assert_eq!(bytes.table_scan(0), Err(Errno::TOO_LARGE), "past 140 KB");
    assert_eq!(
        bytes.index_scan(0, 0, &[0, 0, 0, 0, 0, 0]),
        Err(Errno::TOO_LARGE),
        "index scans count too"
    );
    bytes.row_iter_close(first).expect("closed");
    bytes.table_scan(0).expect("room again");
    commit(&mut bytes);

    let mut count = env().with_limits(Limits {
        max_live_handles: 8,
        ..Limits::default()
    });
    reducer(&mut count);
    for _ in 0..8 {
        count.table_scan(0).expect("an empty table's scan");
    }
    assert_eq!(count.table_scan(0), Err(Errno::TOO_LARGE), "past 8 open");
    commit(&mut count);
    reducer(&mut count);
    count.table_scan(0).expect("a new call starts afresh");
    commit(&mut count);
}

#[test]
fn views_cannot_write() {
    let mut env = env();
    seed(&mut env, &[(1, "a")]);
    let tx = Tx::Read(env.datastore().begin_read());
    env.begin_call(CallKind::View, tx);
    assert_eq!(env.table_row_count(0), Ok(1));
    assert!(env.table_scan(0).is_ok());
    assert_eq!(env.insert(0, &mut item(2, "b")), Err(Errno::NOT_ALLOWED));
    assert_eq!(
        env.update_by_unique(0, 0, &item(1, "b")),
        Err(Errno::NOT_ALLOWED)
    );
    assert_eq!(env.delete_by_index_scan(0, 0, &[]), Err(Errno::NOT_ALLOWED));
    assert_eq!(env.delete_rows(0, &item(1, "a")), Err(Errno::NOT_ALLOWED));
    assert_eq!(env.clear_table(0), Err(Errno::NOT_ALLOWED));
    assert_eq!(env.procedure_start_tx(), Err(Errno::NOT_ALLOWED));
    env.end_call();
}

#[test]
fn ending_a_call_invalidates_handles_and_hands_back_the_transaction() {
    let mut env = env();
    seed(&mut env, &[(1, "a")]);
    reducer(&mut env);
    let iter = env.table_scan(0).unwrap();
    let source = env.create_source(vec![1]);
    let sink = env.create_sink();
    env.insert(0, &mut item(2, "b")).unwrap();
    drop(env.end_call());
    assert_eq!(env.row_iter_close(iter), Err(Errno::NO_SUCH_ITER));
    assert_eq!(
        env.bytes_source_remaining(source),
        Err(Errno::NO_SUCH_SOURCE)
    );
    assert_eq!(env.bytes_sink_write(sink, &[]), Err(Errno::NO_SUCH_SINK));
    assert_eq!(
        env.datastore().begin_read().row_count(0).unwrap(),
        1,
        "dropping the tx rolled it back"
    );
}

#[test]
fn procedures_open_their_own_transactions() {
    let mut env = env();
    assert_eq!(
        env.procedure_start_tx(),
        Err(Errno::NOT_ALLOWED),
        "not in a procedure"
    );
    let mut feed = env.database().feed().subscribe();
    env.begin_call(CallKind::Procedure, Tx::None);
    assert_eq!(env.insert(0, &mut item(1, "a")), Err(Errno::NO_TX));
    assert_eq!(env.procedure_commit_tx(), Err(Errno::NO_TX));
    assert_eq!(env.procedure_abort_tx(), Err(Errno::NO_TX));

    env.procedure_start_tx().unwrap();
    assert_eq!(env.procedure_start_tx(), Err(Errno::TX_ALREADY_OPEN));
    env.insert(0, &mut item(1, "a")).unwrap();
    env.procedure_commit_tx().unwrap();
    assert_eq!(env.procedure_commit_tx(), Err(Errno::NO_TX));

    env.procedure_start_tx().unwrap();
    env.insert(0, &mut item(2, "b")).unwrap();
    env.procedure_abort_tx().unwrap();
    env.end_call();

    assert_eq!(env.datastore().begin_read().row_count(0).unwrap(), 1);
    let commit = feed.try_recv().unwrap();
    assert_eq!(commit.offset, 0);
    assert_eq!(
        commit.changes.table(0).unwrap().inserted[0].to_vec(),
        item(1, "a")
    );
    assert_eq!(
        feed.try_recv().unwrap_err(),
        wasmod_datastore::FeedError::Empty,
        "the aborted transaction published nothing"
    );

    reducer(&mut env);
    assert_eq!(
        env.procedure_commit_tx(),
        Err(Errno::NOT_ALLOWED),
        "a reducer's tx is the host's"
    );
    assert_eq!(env.procedure_start_read_tx(), Err(Errno::NOT_ALLOWED));
    env.end_call();
}

#[test]
fn procedures_read_in_read_only_transactions() {
    let mut env = env();
    reducer(&mut env);
    env.insert(0, &mut item(1, "a")).unwrap();
    let Tx::Reducer(tx) = env.end_call() else {
        panic!("the reducer's transaction")
    };
    env.commit(tx, Timestamp::now(), Durable::Deferred).unwrap();

    env.begin_call(CallKind::Procedure, Tx::None);
    env.procedure_start_read_tx().unwrap();
    assert_eq!(env.procedure_start_tx(), Err(Errno::TX_ALREADY_OPEN));
    assert_eq!(env.procedure_start_read_tx(), Err(Errno::TX_ALREADY_OPEN));
    assert_eq!(env.table_row_count(0), Ok(1));
    assert_eq!(
        env.insert(0, &mut item(2, "b")),
        Err(Errno::NOT_ALLOWED),
        "a read-only transaction does not write"
    );
    assert_eq!(
        env.procedure_http_request(&to_vec(&Request::new(Method::Get, "http://x"))),
        Err(Errno::NOT_ALLOWED),
        "no network I/O inside a transaction"
    );
    // Other readers share the committed state meanwhile, from another thread.
    let datastore = env.datastore().clone();
    let rows = std::thread::spawn(move || datastore.begin_read().row_count(0).unwrap());
    assert_eq!(rows.join().unwrap(), 1);
    env.procedure_commit_tx().unwrap();
    assert_eq!(env.procedure_commit_tx(), Err(Errno::NO_TX));
    env.procedure_start_read_tx().unwrap();
    env.procedure_abort_tx().unwrap();
    assert_eq!(env.table_row_count(0), Err(Errno::NO_TX));
    env.end_call();
}

#[test]
fn the_hosts_tables_are_not_the_modules() {
    let mut env = env();
    let system = env.database().module_tables();
    assert!(env.database().is_system_table(system));
    reducer(&mut env);
    assert_eq!(env.table_row_count(system), Err(Errno::NO_SUCH_TABLE));
    assert_eq!(env.table_scan(system), Err(Errno::NO_SUCH_TABLE));
    assert_eq!(env.clear_table(system), Err(Errno::NO_SUCH_TABLE));
    let row = to_vec(&(ConnectionId::ZERO, Identity::ZERO));
    assert_eq!(
        env.insert(system, &mut row.clone()),
        Err(Errno::NO_SUCH_TABLE)
    );
    assert_eq!(env.delete_rows(system, &row), Err(Errno::NO_SUCH_TABLE));
    env.end_call();
}

struct Echo;

impl HttpClient for Echo {
    fn send(&self, request: Request, _deadline: Option<Instant>) -> Result<Response, String> {
        Ok(Response::text(request.uri))
    }
}

#[test]
fn outbound_http_is_denied_unless_configured() {
    let request = to_vec(&Request::new(Method::Get, "https://example.invalid/x"));
    let mut env = env();
    assert_eq!(
        env.procedure_http_request(&request),
        Err(Errno::NOT_ALLOWED)
    );
    env.begin_call(CallKind::Procedure, Tx::None);
    assert_eq!(
        env.procedure_http_request(&request),
        Err(Errno::HTTP_FAILED)
    );
    let logged: Vec<_> = env.logs().map(|record| record.message.clone()).collect();
    assert!(
        logged[0].contains("outbound HTTP is not configured"),
        "{logged:?}"
    );
    assert_eq!(
        env.procedure_http_request(&[1, 2]),
        Err(Errno::BAD_ENCODING)
    );

    let mut env = self::env().with_http_client(Arc::new(Echo));
    env.begin_call(CallKind::Procedure, Tx::None);
    let source = env.procedure_http_request(&request).unwrap();
    let mut buf = vec![0; env.bytes_source_remaining(source).unwrap() as usize];
    assert_eq!(
        env.bytes_source_read(source, &mut buf)
            .map(|(_, done)| done),
        Ok(true)
    );
    let response: Response = from_slice(&buf).unwrap();
    assert_eq!(response.body, b"https://example.invalid/x");

    env.procedure_start_tx().unwrap();
    assert_eq!(
        env.procedure_http_request(&request),
        Err(Errno::NOT_ALLOWED),
        "not while a tx is open"
    );
}

/// A request made once the call's deadline has passed is refused without reaching the client
/// (which would have answered), and the refusal is logged; the next call has no deadline
/// until its transport sets one.
#[test]
fn outbound_http_past_the_deadline_is_refused_at_once() {
    let request = to_vec(&Request::new(Method::Get, "https://example.invalid/x"));
    let mut env = self::env().with_http_client(Arc::new(Echo));
    env.begin_call(CallKind::Procedure, Tx::None);
    env.set_deadline(Some(Instant::now()));
    assert_eq!(
        env.procedure_http_request(&request),
        Err(Errno::HTTP_FAILED)
    );
    let logged: Vec<_> = env.logs().map(|record| record.message.clone()).collect();
    assert_eq!(
        logged,
        ["outbound HTTP GET https://example.invalid/x refused: the call is past its deadline"]
    );
    env.end_call();
    env.begin_call(CallKind::Procedure, Tx::None);
    assert!(env.procedure_http_request(&request).is_ok());
    env.end_call();
}

/// Byte sources (outbound responses among them), sinks and row iterators share one budget per
/// call, in bytes and in live handles, past which the module gets `TOO_LARGE` and a logged
/// reason; reading a source to its end gives its share back; the next call starts afresh.
#[test]
fn handles_of_every_kind_share_the_calls_budget() {
    let uri = format!("https://example.invalid/{}", "x".repeat(400));
    let request = to_vec(&Request::new(Method::Get, &uri));
    let response = to_vec(&Response::text(uri.clone())).len();
    let mut env = self::env()
        .with_http_client(Arc::new(Echo))
        .with_limits(Limits {
            max_held_bytes: 2 * response + 100,
            max_live_handles: 4,
            ..Limits::default()
        });
    let last_log = |env: &InstanceEnv| env.logs().last().unwrap().message.clone();
    env.begin_call(CallKind::Procedure, Tx::None);
    let first = env.procedure_http_request(&request).expect("one response");
    env.procedure_http_request(&request).expect("two");
    assert_eq!(
        env.procedure_http_request(&request),
        Err(Errno::TOO_LARGE),
        "a third does not fit"
    );
    assert_eq!(
        last_log(&env),
        format!(
            "outbound HTTP response of {response} bytes dropped: the call's handles hold {} bytes, and may hold {} (read or close some first)",
            2 * response,
            2 * response + 100
        )
    );
    let sink = env.create_sink();
    assert_eq!(
        env.bytes_sink_write(sink, &[0; 101]),
        Err(Errno::TOO_LARGE),
        "sinks share the budget"
    );
    env.bytes_sink_write(sink, &[0; 100]).expect("what is left");
    let mut buf = vec![0; response];
    assert_eq!(env.bytes_source_read(first, &mut buf), Ok((response, true)));
    env.procedure_http_request(&request)
        .expect("a source read to its end gave its share back");
    env.create_source(vec![1]);
    assert_eq!(
        env.procedure_http_request(&request),
        Err(Errno::TOO_LARGE),
        "four handles are open: two sources, a sink and the host's own source"
    );
    assert_eq!(
        last_log(&env),
        "outbound HTTP refused: the call has 4 handles open, the most it may (read or close some first)"
    );
    env.procedure_start_read_tx().expect("a read transaction");
    assert_eq!(env.table_scan(0), Err(Errno::TOO_LARGE), "iterators too");
    env.procedure_abort_tx().expect("ended");
    env.end_call();
    env.begin_call(CallKind::Procedure, Tx::None);
    env.procedure_http_request(&request)
        .expect("a new call starts afresh");
    env.end_call();
}

/// A call that opened thousands of handles leaves neither their bytes nor the room of their
/// tables pinned for the instance's life.
#[test]
fn a_large_call_gives_back_its_room() {
    let mut env = self::env();
    env.begin_call(CallKind::Procedure, Tx::None);
    for _ in 0..10_000 {
        env.create_source(vec![1; 16]);
        env.create_sink();
    }
    assert_eq!(env.held_bytes, 160_000);
    env.end_call();
    assert_eq!(env.held_bytes, 0);
    assert!(env.sources.capacity() <= budget::KEPT_HANDLES);
    assert!(env.sinks.capacity() <= budget::KEPT_HANDLES);
}

/// What reaches `tracing` while `run` runs, as its fmt layer writes it (no colours).
fn host_log_of(run: impl FnOnce()) -> String {
    #[derive(Clone, Default)]
    struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, run);
    let bytes = captured.0.lock().unwrap().clone();
    String::from_utf8(bytes).unwrap()
}

#[test]
fn a_flood_reaches_the_host_log_within_its_budget_and_cannot_forge_lines() {
    let mut env = env().with_limits(Limits {
        max_log_lines_per_call: 5,
        ..Limits::default()
    });
    let forged = "hello\n2026-12-01T00:00:00.000000Z  INFO wasmod::host: forged";
    let log = host_log_of(|| {
        env.begin_call(CallKind::Reducer, Tx::None);
        env.console_log(LogLevel::Info, b"m", b"lib.rs", 1, forged.as_bytes());
        for line in 2..=100 {
            env.console_log(LogLevel::Info, b"m", b"lib.rs", line, b"flood");
        }
        env.end_call();
    });
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 6, "five lines and the summary:\n{log}");
    assert!(lines[0].contains("hello\\n2026-12-01"), "{log}");
    assert!(
        !lines
            .iter()
            .any(|line| line.starts_with("2026-12-01T00:00:00.000000Z")),
        "a forged line: {log}"
    );
    assert!(
        lines[5].contains("95 log lines (475 bytes) of this call were dropped"),
        "{log}"
    );
    assert_eq!(
        env.logs().len(),
        101,
        "the call keeps its own lines, and the summary"
    );
}

#[test]
fn logs_are_kept_per_call_and_capped() {
    let mut env = env().with_limits(Limits {
        max_log_records: 2,
        ..Limits::default()
    });
    env.begin_call(CallKind::Reducer, Tx::None);
    for line in 1..=3 {
        let message = format!("line {line}");
        env.console_log(
            LogLevel::Info,
            b"module",
            b"lib.rs",
            line,
            message.as_bytes(),
        );
    }
    let lines: Vec<u32> = env.logs().map(|record| record.line).collect();
    assert_eq!(lines, [2, 3]);
    assert_eq!(env.dropped_logs(), 1);
    env.begin_call(CallKind::Reducer, Tx::None);
    assert_eq!(env.logs().len(), 0);
}

#[test]
fn the_log_tap_hears_the_lines_within_the_budget_and_the_summary() {
    #[derive(Default)]
    struct Heard(std::sync::Mutex<Vec<String>>);
    impl LogTap for Heard {
        fn record(&self, record: &LogRecord) {
            self.0.lock().unwrap().push(record.message.clone());
        }
    }
    let heard = Arc::new(Heard::default());
    let mut env = env().with_limits(Limits {
        max_log_lines_per_call: 2,
        ..Limits::default()
    });
    env.set_log_tap(heard.clone());
    env.begin_call(CallKind::Reducer, Tx::None);
    for message in ["one", "two", "three"] {
        env.console_log(LogLevel::Info, b"m", b"lib.rs", 1, message.as_bytes());
    }
    env.end_call();
    let heard = heard.0.lock().unwrap().clone();
    assert_eq!(heard.len(), 3, "{heard:?}");
    assert_eq!(heard[..2], ["one", "two"]);
    assert!(heard[2].contains("1 log lines"), "{heard:?}");
}

/// `env` over a commit log in `dir` written as `options` say, the wait for durability deferred
/// to the host (as `wasmod serve` runs it), in a procedure call.
fn deferred_procedure(dir: &std::path::Path, options: durability::Options) -> InstanceEnv {
    let module = module();
    let database = Database::open(dir, &module, options).unwrap();
    let mut env = InstanceEnv::new(Arc::new(module), Arc::new(database)).with_deferred_durability();
    env.begin_call(CallKind::Procedure, Tx::None);
    env
}

#[test]
fn a_procedures_commit_is_durable_when_it_returns_even_with_deferred_durability() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = durability::Options::default().with_mode(durability::Mode::Group);
    // Syncs wait a while for company: a commit that did not wait is not durable yet.
    options.group_window = std::time::Duration::from_millis(200);
    let mut env = deferred_procedure(dir.path(), options);
    env.procedure_start_tx().unwrap();
    env.insert(0, &mut item(1, "a")).unwrap();
    env.procedure_commit_tx().unwrap();
    let log = env.database().log().unwrap();
    assert_eq!(log.transactions(), 1);
    assert_eq!(
        log.durable_transactions(),
        1,
        "told of a commit not yet durable"
    );
    env.end_call();
}

#[test]
fn a_procedures_commit_after_the_log_failed_is_refused_unapplied_and_its_answer_fails() {
    let dir = tempfile::tempdir().unwrap();
    let options = durability::Options::default()
        .with_mode(durability::Mode::Group)
        .with_faults(durability::Faults::default().failing_writes_after(0));
    let mut env = deferred_procedure(dir.path(), options);
    for id in [1, 2] {
        env.procedure_start_tx().unwrap();
        env.insert(0, &mut item(id, "a")).unwrap();
        assert_eq!(
            env.procedure_commit_tx(),
            Err(Errno::NOT_ALLOWED),
            "commit {id}"
        );
        let answer = env
            .take_durability()
            .expect("the call's answer waits on the log");
        let error = answer.wait().expect_err("the answer reports the failure");
        assert!(error.to_string().contains("no space left"), "{error}");
    }
    // The first commit met the failure while syncing and stays in memory; the second was
    // refused before it was applied.
    let rows = env.datastore().begin_read().scan(0).unwrap();
    assert_eq!(rows.len(), 1);
    assert!(env.database().log_failure().is_some());
    env.end_call();
}

/// A scan of more rows than are copied between two looks at the deadline stops once the
/// call's deadline has passed and marks the call interrupted (the import then traps); without
/// a deadline, or before it, the same scans run to their end.
#[test]
fn a_long_scan_stops_at_the_calls_deadline() {
    use super::rows::DEADLINE_CHECK_ROWS;
    let mut env = env();
    let rows = u32::try_from(2 * DEADLINE_CHECK_ROWS).unwrap();
    let items: Vec<(u32, &str)> = (0..rows).map(|id| (id, "x")).collect();
    seed(&mut env, &items);
    // No column fixed, both bounds open: every row, in index order.
    let mut every_id = 0u32.to_le_bytes().to_vec();
    every_id.extend([0, 0]);
    type Scan = fn(&mut InstanceEnv, &[u8]) -> Result<u32, Errno>;
    let scans: [Scan; 2] = [
        |env, _| env.table_scan(0),
        |env, range| env.index_scan(0, 0, range),
    ];
    for scan in scans {
        reducer(&mut env);
        env.set_deadline(Some(Instant::now()));
        assert_eq!(scan(&mut env, &every_id), Err(Errno::TOO_LARGE));
        assert!(env.take_interrupt(), "the call is interrupted");
        assert!(!env.take_interrupt(), "asking clears it");
        env.abandon_call();

        reducer(&mut env);
        env.set_deadline(Some(Instant::now() + std::time::Duration::from_secs(60)));
        let iter = scan(&mut env, &every_id).expect("the scan ends before the deadline");
        assert!(!env.take_interrupt());
        let mut buf = vec![0u8; 1 << 20];
        let Ok(Advance::Exhausted { .. }) = env.row_iter_advance(iter, &mut buf) else {
            panic!("every row in one buffer");
        };
        env.abandon_call();
    }
}

#[test]
fn the_callers_claims_are_a_source_of_the_call_or_the_empty_source() {
    let json = r#"{"iss":"https://id.example.com","sub":"ann","name":"Ann"}"#;
    let mut env = self::env().with_limits(Limits {
        max_live_handles: 1,
        ..Limits::default()
    });
    env.begin_call(CallKind::Reducer, Tx::None);
    assert_eq!(
        env.caller_claims(),
        Ok(EMPTY_SOURCE),
        "a caller without claims"
    );
    env.end_call();

    env.begin_call(CallKind::Reducer, Tx::None);
    env.set_claims(Some(Claims::from_verified_json(json.into())));
    let source = env.caller_claims().expect("a source");
    assert_ne!(source, EMPTY_SOURCE);
    assert_eq!(
        env.caller_claims(),
        Err(Errno::TOO_LARGE),
        "each read is a handle of the call's, within its budget"
    );
    let mut buf = vec![0; 100];
    let (read, exhausted) = env.bytes_source_read(source, &mut buf).unwrap();
    assert_eq!((&buf[..read], exhausted), (json.as_bytes(), true));
    env.end_call();

    env.begin_call(CallKind::Reducer, Tx::None);
    assert_eq!(
        env.caller_claims(),
        Ok(EMPTY_SOURCE),
        "the claims ended with the call that had them"
    );
    env.end_call();
}
