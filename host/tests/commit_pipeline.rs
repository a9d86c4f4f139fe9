//! The commit pipeline over the quickstart built to wasm: every way a module commits is
//! published once, in commit order, with who made it; nothing else is; connections are
//! disconnected exactly once, across a crash too; read-only transactions share the tables.

mod wasm_support;

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use wasm_support::{compiled, within};
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::http::{Method, Request, Response};
use wasmod_abi::{ConnectionId, EntryKind, Identity, Timestamp};
use wasmod_host::datastore::durability::{Mode, Options};
use wasmod_host::datastore::{Commit, CommitReceiver, Database, FeedError};
use wasmod_host::{HttpClient, InstanceEnv, Outcome, Persistence, WasmConfig, WasmModule};

const ALICE: Identity = Identity::from_bytes([0xa1; 32]);
const BOB: Identity = Identity::from_bytes([0xb0; 32]);
const ALICE_CONNECTION: ConnectionId = ConnectionId::from_bytes([0xa2; 16]);
const BOB_CONNECTION: ConnectionId = ConnectionId::from_bytes([0xb2; 16]);

/// A row of the quickstart's `message` table.
type Message = (u64, Identity, Timestamp, String);
/// A row of the quickstart's `user` table.
type User = (Identity, String, bool);

/// Answers every outbound request with a message of the day.
struct Motd;

impl HttpClient for Motd {
    fn send(&self, _request: Request, _deadline: Option<Instant>) -> Result<Response, String> {
        Ok(Response::new(200).with_body("the message of the day"))
    }
}

fn chat(env: InstanceEnv) -> WasmModule {
    let env = env.with_http_client(Arc::new(Motd));
    WasmModule::load(compiled("quickstart"), WasmConfig::default(), env)
        .expect("the quickstart loads")
}

/// Every commit waiting in `feed`, oldest first.
fn drain(feed: &mut CommitReceiver) -> Vec<Arc<Commit>> {
    let mut commits = Vec::new();
    loop {
        match feed.try_recv() {
            Ok(commit) => commits.push(commit),
            Err(FeedError::Empty) => return commits,
            Err(error) => panic!("the feed failed: {error}"),
        }
    }
}

/// The kind and name of the entry point that made `commit`.
fn made_by(commit: &Commit) -> (EntryKind, &str) {
    let entry = commit.meta.entry.as_ref().expect("an entry point made it");
    (entry.kind, &*entry.name)
}

fn send(module: &mut WasmModule, who: Identity, connection: ConnectionId, text: &str) -> Outcome {
    module.call_reducer("send", who, connection, &to_vec(&text.to_owned()))
}

fn post(module: &mut WasmModule, method: Method, path: &str, body: &str) -> Outcome {
    let mut request = Request::new(method, path);
    request.body = body.as_bytes().to_vec();
    module.call_http(&request, None)
}

/// The rows of table `name`, decoded.
fn table<T: wasmod_abi::Decode>(module: &WasmModule, name: &str) -> Vec<T> {
    let table = module.datastore().table_id(name).expect("the table exists");
    let rows = module.read(|tables| tables.scan(table).expect("the table scans"));
    rows.iter()
        .map(|row| from_slice(row).expect("the row decodes"))
        .collect()
}

#[test]
fn every_commit_path_publishes_once_in_order_with_its_metadata() {
    let mut module = chat(InstanceEnv::unloaded());
    let database = module.database().clone();
    let mut feed = database.feed().subscribe();

    let connected = module.client_connected(ALICE, ALICE_CONNECTION);
    assert!(connected.is_some_and(|outcome| outcome.is_success()));
    assert!(send(&mut module, ALICE, ALICE_CONNECTION, "hello").is_success());
    assert!(
        !send(&mut module, ALICE, ALICE_CONNECTION, "   ").is_success(),
        "an empty message fails, and its transaction is rolled back"
    );
    let renamed = module.call_reducer(
        "set_name",
        ALICE,
        ALICE_CONNECTION,
        &to_vec(&"user-a1a1a1a1".to_owned()),
    );
    assert!(renamed.is_success(), "{renamed}");
    let Outcome::Committed { commit: None, .. } = renamed else {
        panic!("the name was already that, so nothing changed: {renamed}");
    };
    assert!(module.call_view("recent", ALICE, &[]).is_success());
    let motd = module.call_procedure(
        "fetch_motd",
        ALICE,
        ALICE_CONNECTION,
        &to_vec(&"http://motd.test/".to_owned()),
    );
    assert!(motd.is_success(), "{motd}");
    assert!(post(&mut module, Method::Post, "/messages", "over plain HTTP").is_success());
    assert!(post(&mut module, Method::Get, "/stats", "").is_success());
    let disconnected = module.client_disconnected(ALICE, ALICE_CONNECTION);
    assert!(disconnected.is_some_and(|outcome| outcome.is_success()));
    assert!(
        module
            .client_disconnected(ALICE, ALICE_CONNECTION)
            .is_none(),
        "a connection is disconnected once"
    );

    let commits = drain(&mut feed);
    let made: Vec<(EntryKind, &str)> = commits.iter().map(|commit| made_by(commit)).collect();
    assert_eq!(
        made,
        [
            (EntryKind::Reducer, "connected"),
            (EntryKind::Reducer, "send"),
            (EntryKind::Procedure, "fetch_motd"),
            (EntryKind::HttpHandler, "post_message"),
            (EntryKind::Reducer, "disconnected"),
        ],
        "the failed reducer, the unchanged rename, the view and the read-only handler \
         published nothing"
    );
    // `init` made offset 0, before the subscription.
    let offsets: Vec<u64> = commits.iter().map(|commit| commit.offset).collect();
    assert_eq!(offsets, [1, 2, 3, 4, 5]);
    let callers: Vec<(Identity, ConnectionId)> = commits
        .iter()
        .map(|commit| (commit.meta.caller, commit.meta.connection_id))
        .collect();
    let alice = (ALICE, ALICE_CONNECTION);
    let nobody = (Identity::ZERO, ConnectionId::ZERO);
    assert_eq!(callers, [alice, alice, alice, nobody, alice]);
    assert!(commits
        .windows(2)
        .all(|pair| pair[0].meta.timestamp <= pair[1].meta.timestamp));

    let message = database.datastore().table_id("message").unwrap();
    let user = database.datastore().table_id("user").unwrap();
    let tables = |commit: &Commit| -> Vec<u32> {
        commit
            .changes
            .tables
            .iter()
            .map(|changes| changes.table)
            .collect()
    };
    let system = database.module_tables();
    assert!(database.is_system_table(system));
    assert_eq!(
        tables(&commits[0]),
        [user, system],
        "the connection is recorded with the reducer's own writes"
    );
    assert_eq!(tables(&commits[1]), [message]);
    let sent: Message = from_slice(&commits[1].changes.tables[0].inserted[0]).unwrap();
    assert_eq!((sent.1, sent.3.as_str()), (ALICE, "hello"));
    assert_eq!(tables(&commits[2]), [message]);
    assert_eq!(tables(&commits[3]), [message]);
    assert_eq!(tables(&commits[4]), [user, system]);
}

#[test]
fn the_log_and_the_feed_agree_on_the_order_with_deferred_durability() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options::default().with_mode(Mode::Group);
    let persistence = Persistence::new(dir.path(), options);
    let env = InstanceEnv::unloaded()
        .with_persistence(persistence)
        .with_deferred_durability();
    let mut module = chat(env);
    let mut feed = module.database().feed().subscribe();
    for round in 0..30 {
        let text = format!("message {round}");
        let outcome = match round % 3 {
            0 => send(&mut module, BOB, ConnectionId::ZERO, &text),
            1 => post(&mut module, Method::Post, "/messages", &text),
            _ => module.call_procedure(
                "fetch_motd",
                BOB,
                ConnectionId::ZERO,
                &to_vec(&"http://motd.test/".to_owned()),
            ),
        };
        assert!(outcome.is_success(), "{outcome}");
        // The host, not the call, waits for the log; the next call runs meanwhile.
        if round % 5 == 4 {
            if let Some(ticket) = module.env_mut().take_durability() {
                ticket.wait().expect("the commits are durable");
            }
        }
    }
    if let Some(ticket) = module.env_mut().take_durability() {
        ticket.wait().expect("the commits are durable");
    }
    let description = module.module().clone();
    let commits = drain(&mut feed);
    assert_eq!(commits.len(), 30);
    let first = commits[0].offset;
    assert_eq!(first, 1, "init's commit is the log's first");
    for (expected, commit) in (first..).zip(&commits) {
        assert_eq!(commit.offset, expected, "offsets follow each other");
        let inserted: Message = from_slice(&commit.changes.tables[0].inserted[0]).unwrap();
        assert_eq!(
            inserted.0, expected,
            "the message ids, given in commit order, follow the offsets"
        );
    }
    drop(module);

    let reopened = Database::open(dir.path(), &description, options).unwrap();
    let report = reopened.recovery().unwrap();
    assert_eq!(
        report.transactions,
        commits.last().unwrap().offset + 1,
        "the log holds exactly the commits the feed published, and init's"
    );
}

#[test]
fn connections_are_disconnected_exactly_once_even_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let persistence = Persistence::new(dir.path(), Options::default());
    let open = || chat(InstanceEnv::unloaded().with_persistence(persistence.clone()));

    let mut module = open();
    for (who, connection) in [(ALICE, ALICE_CONNECTION), (BOB, BOB_CONNECTION)] {
        let outcome = module.client_connected(who, connection);
        assert!(outcome.is_some_and(|outcome| outcome.is_success()));
    }
    let again = module.client_connected(ALICE, ALICE_CONNECTION);
    assert!(
        again.is_some_and(|outcome| !outcome.is_success()),
        "an open connection cannot connect again"
    );
    let bob_left = module.client_disconnected(BOB, BOB_CONNECTION);
    assert!(bob_left.is_some_and(|outcome| outcome.is_success()));
    assert_eq!(
        module.database().recorded_connections(),
        [(ALICE, ALICE_CONNECTION)]
    );
    let logged = module.database().log().unwrap().transactions();
    // A crash: the process is gone with Alice still connected; only the log remains.
    drop(module);

    let module = open();
    assert!(
        module.database().recorded_connections().is_empty(),
        "the start disconnected the connection the crash left open"
    );
    let users: Vec<User> = table(&module, "user");
    assert!(
        users.iter().all(|(_, _, online)| !online),
        "Alice's client_disconnected ran: {users:?}"
    );
    assert_eq!(
        module.database().log().unwrap().transactions(),
        logged + 1,
        "one commit: Alice's client_disconnected"
    );
    drop(module);

    let module = open();
    assert_eq!(
        module.database().log().unwrap().transactions(),
        logged + 1,
        "nothing was disconnected twice"
    );
}

#[test]
fn read_only_transactions_share_the_tables_and_see_committed_state_only() {
    let mut module = chat(InstanceEnv::unloaded());
    assert!(send(&mut module, ALICE, ConnectionId::ZERO, "committed").is_success());
    let database = module.database().clone();

    // Another reader holds the tables (as a subscription's evaluation or `GET /v1/tables`
    // would): the stats handler reads beside it. Were it to take the writer's lock, it would
    // wait for the reader to finish, and the reader waits for the handler.
    let (held, hold) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let reader = {
        let database = database.clone();
        std::thread::spawn(move || {
            let _reading = database.begin_read();
            held.send(()).unwrap();
            released.recv().unwrap();
        })
    };
    hold.recv().unwrap();
    let stats = within(
        Duration::from_secs(10),
        "GET /stats beside a reader",
        move || {
            let outcome = post(&mut module, Method::Get, "/stats", "");
            (outcome, module)
        },
    );
    let (outcome, mut module) = stats;
    let Outcome::Returned { bytes, .. } = outcome else {
        panic!("{outcome}")
    };
    let response: Response = from_slice(&bytes).unwrap();
    assert_eq!(
        String::from_utf8(response.body).unwrap(),
        r#"{"users":0,"online":0,"messages":1}"#
    );
    release.send(()).unwrap();
    reader.join().unwrap();

    // A writer with uncommitted changes: a reader waits for it to finish and then sees only
    // what was committed.
    let message = database.datastore().table_id("message").unwrap();
    let (writing, written) = mpsc::channel();
    let (finish, finished) = mpsc::channel::<()>();
    let writer = {
        let database = database.clone();
        std::thread::spawn(move || {
            let mut tx = database.begin_mut();
            let row: Message = (99, BOB, Timestamp::now(), "never committed".into());
            tx.insert(message, &mut to_vec(&row)).unwrap();
            writing.send(()).unwrap();
            finished.recv().unwrap();
            tx.rollback();
        })
    };
    written.recv().unwrap();
    let view = std::thread::spawn(move || {
        let outcome = module.call_view("recent", ALICE, &[]);
        let Outcome::Returned { bytes, .. } = outcome else {
            panic!("{outcome}")
        };
        from_slice::<Vec<Message>>(&bytes).unwrap()
    });
    std::thread::sleep(Duration::from_millis(50));
    finish.send(()).unwrap();
    writer.join().unwrap();
    let recent = view.join().unwrap();
    let texts: Vec<&str> = recent.iter().map(|message| message.3.as_str()).collect();
    assert_eq!(texts, ["committed"]);
}
