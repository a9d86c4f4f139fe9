//! The evaluation task across a new build of the module (`wasmod publish`), driven by hand as
//! the fanout benchmark drives it: the tables replaced with `Database::replace`, the task told
//! with `Request::Rebuilt`, and each connection's outbound queue read as its writer would.
//!
//! The old build has `message (id, text)` and `player (id, name)`; the new one adds a table
//! `note` before them (so every table id moves) and a column `level` (default 7) at the end of
//! `player`. A set over `message` carries on; a set over `player` ends.

use crate::build::Build;
use crate::memory::{ClientMemory, Holder};
use crate::realtime::fanout::{Evaluator, Request, Subscribing};
use crate::realtime::frame::Frame;
use crate::realtime::outbox::{self, Bounds, Outbound, OutboxReceiver};
use crate::realtime::stats::Stats;
use crate::realtime::window::WindowBounds;
use crate::realtime::wire::Json;
use crate::realtime::Settings;
use crate::NodeConfig;
use serde_json::{json, Value};
use std::sync::Arc;
use wasmod_abi::encoding::to_vec;
use wasmod_abi::{AlgebraicType as T, ConnectionId, Identity, ModuleDef, TableDef};
use wasmod_host::datastore::durability::Options;
use wasmod_host::datastore::{CommitMeta, Database};
use wasmod_protocol::ws::{Compression, JsonServerMessage, ServerMessage};
use wasmod_subscription::{Catalog, Query};

const MESSAGES: &str = "SELECT * FROM message";
const PLAYERS: &str = "SELECT * FROM player";

/// The old build's tables: `message` and `player`.
fn old_module() -> ModuleDef {
    let mut def = ModuleDef::default();
    let message = TableDef::of_columns(
        &mut def.typespace,
        "Message",
        "message",
        &[("id", T::U64), ("text", T::String)],
    );
    let player = TableDef::of_columns(
        &mut def.typespace,
        "Player",
        "player",
        &[("id", T::U32), ("name", T::String)],
    );
    def.tables = vec![message, player];
    def
}

/// The new build's: `note` first, `message` unchanged, `player` with `level` (default 7).
fn new_module() -> ModuleDef {
    let mut def = ModuleDef::default();
    let note = TableDef::of_columns(&mut def.typespace, "Note", "note", &[("id", T::U64)]);
    let message = TableDef::of_columns(
        &mut def.typespace,
        "Message",
        "message",
        &[("id", T::U64), ("text", T::String)],
    );
    let mut player = TableDef::of_columns(
        &mut def.typespace,
        "Player",
        "player",
        &[("id", T::U32), ("name", T::String), ("level", T::U16)],
    );
    player.columns[2].default = Some(to_vec(&7u16));
    def.tables = vec![note, message, player];
    def
}

fn catalog(module: &ModuleDef) -> Arc<Catalog> {
    Arc::new(Catalog::new(module).expect("no visibility filters"))
}

/// A database of the old build, its evaluation task, and what drives it.
struct Server {
    database: Arc<Database>,
    build: Arc<Build>,
    requests: tokio::sync::mpsc::Sender<Request>,
    evaluator: Evaluator,
    _dir: tempfile::TempDir,
}

/// One connection: its id and its outbound queue's reading end.
struct Client {
    connection: ConnectionId,
    received: OutboxReceiver,
}

impl Server {
    /// The old build over a database with a commit log (so that clients may resume).
    fn new() -> Self {
        Self::over(tempfile::tempdir().expect("a directory"), old_module())
    }

    /// `module` over the commit log in `dir` (its data upgraded if it was another build's),
    /// keeping the recent commits for clients that resume.
    fn over(dir: tempfile::TempDir, module: ModuleDef) -> Self {
        let module = Arc::new(module);
        let options = Options::default().with_recent(100, 1 << 20);
        let database = Database::open(dir.path(), &module, options).expect("opened");
        let database = Arc::new(database);
        let build = Arc::new(Build::new(
            0,
            module.clone(),
            catalog(&module),
            database.datastore(),
        ));
        let window = WindowBounds {
            commits: 100,
            bytes: 1 << 20,
        };
        let stats = Arc::new(Stats::default());
        let limits = Settings::from(&NodeConfig::default()).subscriptions;
        let (requests, evaluator) =
            Evaluator::new(build.clone(), database.clone(), window, limits, stats);
        Self {
            database,
            build,
            requests,
            evaluator,
            _dir: dir,
        }
    }

    /// Stops, and starts `module` over the same directory.
    fn restart(self, module: ModuleDef) -> Self {
        let Self {
            database,
            build,
            requests,
            evaluator,
            _dir: dir,
        } = self;
        // The directory's lock goes with the last handle of the database.
        drop((evaluator, requests, build, database));
        Self::over(dir, module)
    }

    fn ask(&self, request: Request) {
        self.requests.try_send(request).expect("room for a request");
    }

    /// Opens connection `n`.
    fn open(&self, n: u8) -> Client {
        let connection = ConnectionId::from_bytes([n; 16]);
        let bounds = Bounds {
            messages: 64,
            bytes: 1 << 20,
        };
        let (outbox, received) = outbox::channel(bounds, Arc::default());
        self.ask(Request::Open {
            connection,
            identity: Identity::ZERO,
            outbox,
            queued: Arc::new(tokio::sync::Semaphore::new(16)),
        });
        Client {
            connection,
            received,
        }
    }

    /// Asks to subscribe `client` to `texts` as query set `id`, bound against the tables of
    /// the build serving now.
    fn subscribe(&self, client: &Client, id: u32, texts: &[&str], resume_from: Option<u64>) {
        self.subscribe_with(&self.build, client, id, texts, resume_from);
    }

    /// Asks to subscribe `client` to `texts` as query set `id`, bound against `build`'s tables.
    fn subscribe_with(
        &self,
        build: &Build,
        client: &Client,
        id: u32,
        texts: &[&str],
        resume_from: Option<u64>,
    ) {
        let queries = texts
            .iter()
            .map(|text| {
                Query::parse(&build.catalog, text)
                    .expect("a query")
                    .bind(Identity::ZERO)
            })
            .collect();
        self.ask(Request::Subscribe(Subscribing {
            connection: client.connection,
            query_set_id: id,
            texts: texts.iter().map(|text| (*text).to_owned()).collect(),
            queries,
            build: build.number,
            resume_from,
            charge: ClientMemory::new(usize::MAX)
                .charge(Holder::default(), 0)
                .expect("no ceiling"),
        }));
    }

    /// Commits one transaction inserting `rows` (table name, encoded row) in the tables of
    /// the build serving now; returns its offset.
    fn commit(&self, rows: &[(&str, Vec<u8>)]) -> u64 {
        let mut tx = self.database.begin_mut();
        for (table, row) in rows {
            let id = self
                .build
                .module
                .tables
                .iter()
                .position(|def| def.name == *table)
                .expect("a table of the build");
            tx.insert(id as u32, &mut row.clone()).expect("inserted");
        }
        let committed = self
            .database
            .commit(tx, CommitMeta::host())
            .expect("committed");
        committed.durable.wait().expect("durable");
        committed.commit.expect("a change").offset
    }

    /// Publishes the new build: its tables take over, and the task is told, as the swap does.
    fn publish(&mut self) -> u64 {
        self.publish_build(new_module())
    }

    /// Publishes the build `new` describes, as [`Server::publish`] does.
    fn publish_build(&mut self, new: ModuleDef) -> u64 {
        let new = Arc::new(new);
        let number = self.build.number + 1;
        let replaced = self
            .database
            .replace(&self.build.module, &new)
            .expect("replaced");
        let catalog = catalog(&new);
        self.build = Arc::new(Build::new(number, new, catalog, replaced.datastore));
        self.ask(Request::Rebuilt {
            build: self.build.clone(),
            offset: replaced.offset,
        });
        replaced.offset
    }

    /// One round of the evaluation task over everything waiting.
    fn round(&mut self) {
        self.evaluator.catch_up();
    }
}

impl Client {
    /// Everything queued to the client, in order.
    fn messages(&mut self) -> Vec<Outbound> {
        std::iter::from_fn(|| self.received.try_recv()).collect()
    }
}

fn message(id: u64, text: &str) -> (&'static str, Vec<u8>) {
    ("message", to_vec(&(id, text.to_owned())))
}

fn old_player(id: u32, name: &str) -> (&'static str, Vec<u8>) {
    ("player", to_vec(&(id, name.to_owned())))
}

fn new_player(id: u32, name: &str, level: u16) -> (&'static str, Vec<u8>) {
    ("player", to_vec(&(id, name.to_owned(), level)))
}

/// A commit's update as its JSON frame shows it: its offset, and per query set, per table,
/// the rows inserted.
fn update_json(outbound: &Outbound) -> (u64, Vec<(u32, String, Value)>) {
    let Outbound::Update(update) = outbound else {
        panic!("not an update: {outbound:?}");
    };
    let frame = update
        .shared
        .frame::<Json>(Compression::None)
        .expect("rendered");
    let Frame::Text(text) = frame else {
        panic!("a text frame");
    };
    let text = std::str::from_utf8(&text).expect("UTF-8");
    let ServerMessage::TransactionUpdate(update) =
        JsonServerMessage::from_json(text).expect("a message")
    else {
        panic!("not a transaction update: {text}");
    };
    let changes = update
        .changes
        .into_iter()
        .flat_map(|set| {
            set.tables.into_iter().map(move |table| {
                let rows = serde_json::from_str(table.inserts.get()).expect("JSON rows");
                (set.query_set_id, table.table, rows)
            })
        })
        .collect();
    (update.offset, changes)
}

/// A query set's rows as it was subscribed.
struct Applied {
    /// The description the snapshot carries, which encodes its rows.
    module: Arc<ModuleDef>,
    /// The last commit the rows include.
    offset: u64,
    /// Whether they are the changes since the client's offset.
    resumed: bool,
    /// Each query's table and rows, in JSON.
    rows: Vec<(String, Value)>,
}

/// `outbound`, a query set's rows, as its writer encodes them in JSON.
fn applied(outbound: Outbound) -> Applied {
    let Outbound::Applied(snapshot) = outbound else {
        panic!("not a subscription's rows: {outbound:?}");
    };
    let (module, offset, resumed) = (snapshot.module.clone(), snapshot.offset, snapshot.resumed);
    let rows = snapshot
        .parts(1 << 20)
        .flat_map(|part| part.expect("a part").rows)
        .map(|rows| {
            let json = rows.json(&module).expect("JSON rows");
            let inserted = serde_json::from_str(json.inserts.0.get()).expect("JSON");
            (rows.table.clone(), inserted)
        })
        .collect();
    Applied {
        module,
        offset,
        resumed,
        rows,
    }
}

fn subscription_error(outbound: &Outbound) -> (u32, &str) {
    match outbound {
        Outbound::SubscriptionError {
            query_set_id,
            message,
        } => (*query_set_id, message),
        other => panic!("not a subscription error: {other:?}"),
    }
}

#[test]
fn a_set_over_an_unchanged_table_carries_on_across_a_new_build_without_a_message() {
    let mut server = Server::new();
    let mut client = server.open(1);
    server.subscribe(&client, 1, &[MESSAGES], None);
    server.round();
    assert!(matches!(client.messages()[..], [Outbound::Applied(_)]));
    let before = server.commit(&[message(1, "before")]);
    server.round();
    let updates = client.messages();
    assert_eq!(
        update_json(&updates[0]),
        (
            before,
            vec![(1, "message".into(), json!([{"id": 1, "text": "before"}]))]
        )
    );

    server.publish();
    server.round();
    assert!(
        client.messages().is_empty(),
        "nothing is said at the swap of a set that carries on"
    );
    // The new build's table ids: `note` is 0, `message` 1.
    server.commit(&[("note", to_vec(&5u64))]);
    let after = server.commit(&[message(2, "after")]);
    server.round();
    let updates = client.messages();
    assert_eq!(updates.len(), 1, "only the message's commit: {updates:?}");
    assert_eq!(
        update_json(&updates[0]),
        (
            after,
            vec![(1, "message".into(), json!([{"id": 2, "text": "after"}]))]
        )
    );
}

#[test]
fn commits_either_side_of_a_swap_in_one_round_are_each_delivered_in_their_own_build() {
    let mut server = Server::new();
    let mut old_client = server.open(1);
    server.subscribe(&old_client, 1, &[MESSAGES], None);
    server.subscribe(&old_client, 2, &[PLAYERS], None);
    server.round();
    assert_eq!(old_client.messages().len(), 2, "both sets applied");

    // One round: a commit of the old build, a subscription bound against the old build, the
    // swap, a subscription bound against the new build, a commit of the new build.
    let before = server.commit(&[message(1, "before"), old_player(1, "ann")]);
    let mut early_client = server.open(3);
    server.subscribe(&early_client, 1, &[PLAYERS], None);
    let old_module = server.build.module.clone();
    let offset = server.publish();
    let mut new_client = server.open(2);
    server.subscribe(&new_client, 1, &[PLAYERS], None);
    let after = server.commit(&[message(2, "after"), new_player(2, "bob", 9)]);
    assert_eq!((before + 1, offset, offset), (offset, after, after));
    server.round();

    let messages = old_client.messages();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(
        update_json(&messages[0]),
        (
            before,
            vec![
                (1, "message".into(), json!([{"id": 1, "text": "before"}])),
                (2, "player".into(), json!([{"id": 1, "name": "ann"}])),
            ]
        ),
        "encoded with the old build's row types, after the swap"
    );
    let (set, text) = subscription_error(&messages[1]);
    assert_eq!(set, 2);
    for part in [
        "`player`",
        "new build",
        "`wasmod publish`",
        "subscribe again",
    ] {
        assert!(text.contains(part), "{part} in {text}");
    }
    assert_eq!(
        update_json(&messages[2]),
        (
            after,
            vec![(1, "message".into(), json!([{"id": 2, "text": "after"}]))]
        ),
        "the set over the changed table has nothing more"
    );

    // The early subscription's rows are the old build's last state, in its row types; the
    // set then ends like every set over `player`.
    let mut messages = early_client.messages();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(subscription_error(&messages[1]).0, 1);
    let snapshot = applied(messages.remove(0));
    assert!(Arc::ptr_eq(&snapshot.module, &old_module));
    assert_eq!(snapshot.offset, before);
    assert_eq!(
        snapshot.rows,
        [("player".to_owned(), json!([{"id": 1, "name": "ann"}]))]
    );

    let mut messages = new_client.messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let snapshot = applied(messages.remove(0));
    assert!(Arc::ptr_eq(&snapshot.module, &server.build.module));
    assert_eq!(snapshot.offset, after);
    assert_eq!(
        snapshot.rows,
        [(
            "player".to_owned(),
            json!([
                {"id": 1, "name": "ann", "level": 7},
                {"id": 2, "name": "bob", "level": 9}
            ])
        )]
    );
}

#[test]
fn a_client_resuming_from_an_older_build_gets_the_full_rows() {
    let mut server = Server::new();
    let mut first = server.open(1);
    server.subscribe(&first, 1, &[MESSAGES], None);
    server.round();
    server.commit(&[message(1, "one")]);
    let held = server.commit(&[message(2, "two")]);
    server.round();
    assert_eq!(first.messages().len(), 3, "the rows, then two updates");

    let offset = server.publish();
    let newest = server.commit(&[message(3, "three")]);
    server.round();
    assert_eq!(first.messages().len(), 1);

    // The client reconnects: once holding the old build's last commit, once the new one's.
    let mut stale = server.open(2);
    server.subscribe(&stale, 1, &[MESSAGES], Some(held));
    let mut fresh = server.open(3);
    server.subscribe(&fresh, 1, &[MESSAGES], Some(offset));
    server.round();
    let snapshot = applied(stale.messages().remove(0));
    assert!(!snapshot.resumed, "offset {held} was the old build's");
    assert_eq!(snapshot.offset, newest);
    assert_eq!(
        snapshot.rows,
        [(
            "message".to_owned(),
            json!([
                {"id": 1, "text": "one"},
                {"id": 2, "text": "two"},
                {"id": 3, "text": "three"}
            ])
        )]
    );
    let snapshot = applied(fresh.messages().remove(0));
    assert!(snapshot.resumed, "offset {offset} is the new build's");
    assert_eq!(snapshot.rows, [("message".to_owned(), json!([]))]);
}

#[test]
fn a_subscription_bound_against_a_replaced_build_is_refused() {
    let mut server = Server::new();
    let old_build = server.build.clone();
    let mut client = server.open(1);
    server.round();
    server.publish();
    server.subscribe_with(&old_build, &client, 4, &[MESSAGES], None);
    server.subscribe(&client, 5, &[MESSAGES], None);
    server.round();
    let messages = client.messages();
    assert_eq!(messages.len(), 2, "{messages:?}");
    let (set, text) = subscription_error(&messages[0]);
    assert_eq!(set, 4);
    assert!(text.contains("subscribe again"), "{text}");
    assert!(
        matches!(&messages[1], Outbound::Applied(snapshot) if snapshot.query_set_id == 5),
        "the one bound against the new build is taken: {:?}",
        messages[1]
    );
}

#[test]
fn a_build_that_keeps_the_tables_ends_only_the_sets_whose_filter_changed() {
    let mut server = Server::new();
    let mut old_client = server.open(1);
    server.subscribe(&old_client, 1, &[MESSAGES], None);
    server.subscribe(&old_client, 2, &[PLAYERS], None);
    server.round();
    assert_eq!(old_client.messages().len(), 2, "both sets applied");

    // Only `player`'s visibility filter changes: the new build keeps the tables, so the
    // tables the round reads include the new build's commit too.
    let before = server.commit(&[message(1, "before"), old_player(1, "ann")]);
    let mut early_client = server.open(2);
    server.subscribe(&early_client, 1, &[MESSAGES], None);
    let tables = server.database.datastore();
    let mut filtered = old_module();
    filtered.tables[1].visibility = Some("id > 1".into());
    server.publish_build(filtered);
    assert!(Arc::ptr_eq(&tables, &server.database.datastore()));
    let after = server.commit(&[message(2, "after"), old_player(2, "bob")]);
    server.round();

    let messages = old_client.messages();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(
        update_json(&messages[0]),
        (
            before,
            vec![
                (1, "message".into(), json!([{"id": 1, "text": "before"}])),
                (2, "player".into(), json!([{"id": 1, "name": "ann"}])),
            ]
        )
    );
    let (set, text) = subscription_error(&messages[1]);
    assert_eq!(set, 2);
    assert!(text.contains("visibility filter"), "{text}");
    assert_eq!(
        update_json(&messages[2]),
        (
            after,
            vec![(1, "message".into(), json!([{"id": 2, "text": "after"}]))]
        ),
        "once, with the new build"
    );

    // A subscription of the old build taken when the tables already hold a commit of the
    // new one cannot have the old build's rows: it is refused.
    let messages = early_client.messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let (set, text) = subscription_error(&messages[0]);
    assert_eq!(set, 1);
    assert!(text.contains("subscribe again"), "{text}");
}

/// The old build with a table `note` added first: every stored row encodes as it did (the
/// table ids move).
fn with_note() -> ModuleDef {
    let mut def = old_module();
    let note = TableDef::of_columns(&mut def.typespace, "Note", "note", &[("id", T::U64)]);
    def.tables.insert(0, note);
    def
}

/// Issue 33: a restart whose start upgraded the stored rows keeps the window of recent commits
/// only when every row still encodes as it did: with a table added, a client that applied the
/// old build's last commit resumes with the start's commits; with a column added (other row
/// types), it gets every row.
#[test]
fn a_restart_that_upgraded_the_data_keeps_the_window_only_if_the_rows_encode_alike() {
    for (module, alike) in [(with_note(), true), (new_module(), false)] {
        let mut server = Server::new();
        let mut client = server.open(1);
        server.subscribe(&client, 1, &[MESSAGES], None);
        server.round();
        let last = server.commit(&[message(1, "before")]);
        server.round();
        assert_eq!(client.messages().len(), 2, "the rows, then the update");

        let mut server = server.restart(module);
        let after = server.commit(&[message(2, "after")]);
        let mut back = server.open(2);
        server.subscribe(&back, 1, &[MESSAGES], Some(last));
        server.round();
        let answer = applied(back.messages().remove(0));
        assert_eq!(answer.offset, after);
        assert_eq!(answer.resumed, alike, "alike: {alike}");
        let rows = if alike {
            json!([{"id": 2, "text": "after"}])
        } else {
            json!([{"id": 1, "text": "before"}, {"id": 2, "text": "after"}])
        };
        assert_eq!(answer.rows, vec![("message".to_owned(), rows)]);
    }
}
