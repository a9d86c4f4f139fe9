//! The generator of the vectors: a chat session of the quickstart, as the server's messages
//! (built with the protocol's own types and encoders, and framed by its compressors) and,
//! step by step, what a client must make of them, written down from what each message means
//! rather than from what a client did with it.

use crate::rows::{Message, User};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use wasmod_abi::encoding::to_vec;
use wasmod_abi::{ConnectionId, EntryKind, Identity, Timestamp};
use wasmod_client::json::JsonModule;
use wasmod_host::{WasmConfig, WasmEngine};
use wasmod_protocol::description::{describe, ModuleDescription, Tables};
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_protocol::ws::{
    BinaryServerMessage, Compression, EntryPointName, QuerySetUpdate, RowList, ServerMessage,
    TableRows, TableUpdate, TransactionUpdate, UpdateStatus,
};
use wasmod_wasm_tests::{built, Profile};

/// The vectors' files by name: what `client/vectors/` must hold (but its README).
pub type Files = BTreeMap<String, Vec<u8>>;

/// The quickstart's description, as `GET /v1/module` serves it.
pub fn quickstart_description() -> ModuleDescription {
    let wasm = built(Profile::Release).library("quickstart");
    let engine = WasmEngine::shared().expect("the shared engine");
    let compiled = engine.compile(&wasm).expect("the quickstart compiles");
    let def = compiled
        .describe(WasmConfig::default())
        .expect("the quickstart describes itself");
    describe(&def, Tables::PublicOnly)
}

/// What a step's frame is.
enum Frame {
    /// A message, framed with a compression (which the generator checks it got).
    Message(BinaryServerMessage, Compression),
    /// Bytes that are not a message (`why` says how).
    Malformed(Vec<u8>, &'static str),
}

/// One step of the session: a frame and what a client holds and hears after it.
struct Step {
    name: &'static str,
    frame: Frame,
    /// The row callbacks it fires, in order.
    events: Vec<Value>,
    /// The rows of each table after it.
    rows: Vec<(&'static str, Vec<Value>)>,
}

const ALICE: Identity = Identity::from_bytes([0xa1; 32]);
const BOB: Identity = Identity::from_bytes([0xb0; 32]);
const CONNECTION: ConnectionId = ConnectionId::from_bytes([0xc5; 16]);

fn at(second: i64) -> Timestamp {
    Timestamp::from_micros_since_unix_epoch(1_700_000_000_000_000 + second * 1_000_000)
}

/// A message row; `long` ones are long enough that their frames compress.
fn message(id: u64, sender: Identity, text: &str) -> Message {
    Message {
        id,
        sender,
        sent: at(id as i64),
        text: text.to_owned(),
    }
}

fn long(text: &str) -> String {
    format!("{text}:{}", " and so on, and so forth".repeat(12))
}

fn user(identity: Identity, name: &str, online: bool) -> User {
    User {
        identity,
        name: name.to_owned(),
        online,
    }
}

fn list<T: wasmod_abi::Encode>(rows: &[&T]) -> RowList {
    let encoded: Vec<Vec<u8>> = rows.iter().map(|row| to_vec(*row)).collect();
    RowList::from_rows(encoded.iter().map(Vec::as_slice)).expect("small")
}

fn table<T: wasmod_abi::Encode>(name: &str, rows: &[&T]) -> TableRows<RowList> {
    TableRows {
        table: name.to_owned(),
        rows: list(rows),
    }
}

fn update(
    offset: u64,
    caller: Identity,
    reducer: &str,
    status: UpdateStatus,
    request_id: Option<u32>,
    changes: Vec<QuerySetUpdate<RowList>>,
) -> BinaryServerMessage {
    ServerMessage::TransactionUpdate(TransactionUpdate {
        offset,
        timestamp: at(offset as i64),
        caller_identity: caller,
        caller_connection_id: CONNECTION,
        entry_point: EntryPointName {
            kind: EntryKind::Reducer,
            name: reducer.to_owned(),
        },
        status,
        request_id,
        changes,
    })
}

/// Rows of `table`, converted to JSON with the module's mapping.
struct Json<'m> {
    module: &'m JsonModule,
}

impl Json<'_> {
    fn row<T: wasmod_abi::Encode>(&self, table: &str, row: &T) -> Value {
        let raw = self
            .module
            .row_json(table, &to_vec(row))
            .expect("a row of the table");
        serde_json::from_str(raw.get()).expect("JSON")
    }

    fn insert<T: wasmod_abi::Encode>(&self, table: &str, row: &T) -> Value {
        json!({"table": table, "event": "insert", "row": self.row(table, row)})
    }

    fn delete<T: wasmod_abi::Encode>(&self, table: &str, row: &T) -> Value {
        json!({"table": table, "event": "delete", "row": self.row(table, row)})
    }

    fn update<T: wasmod_abi::Encode>(&self, table: &str, old: &T, new: &T) -> Value {
        json!({
            "table": table,
            "event": "update",
            "old": self.row(table, old),
            "new": self.row(table, new),
        })
    }

    /// The rows of both tables, sorted as the vectors keep them.
    fn rows(&self, messages: &[&Message], users: &[&User]) -> Vec<(&'static str, Vec<Value>)> {
        let mut message_rows: Vec<Value> = messages
            .iter()
            .map(|row| self.row("message", *row))
            .collect();
        let mut user_rows: Vec<Value> = users.iter().map(|row| self.row("user", *row)).collect();
        crate::rows::sort(&mut message_rows);
        crate::rows::sort(&mut user_rows);
        vec![("message", message_rows), ("user", user_rows)]
    }
}

/// The session, step by step.
fn steps(json: &Json<'_>) -> Vec<Step> {
    let alice = user(ALICE, "alice", true);
    let bob_away = user(BOB, "bob", false);
    let bob = user(BOB, "bob", true);
    let m1 = message(1, ALICE, "hello");
    let m2 = message(2, BOB, "hi alice");
    let m3 = message(3, ALICE, "how are you?");
    let m4 = message(4, BOB, &long("fine, thanks"));
    let m5 = message(5, ALICE, &long("glad to hear it"));
    let m6 = message(6, ALICE, &long("compressed with brotli"));
    let m7 = message(7, BOB, "sent while alice was away");
    let transaction = update(
        11,
        BOB,
        "send",
        UpdateStatus::Committed,
        None,
        vec![QuerySetUpdate {
            query_set_id: 1,
            tables: vec![
                TableUpdate {
                    table: "user".into(),
                    inserts: list(&[&bob]),
                    deletes: list(&[&bob_away]),
                },
                TableUpdate {
                    table: "message".into(),
                    inserts: list(&[&m4, &m5]),
                    deletes: list(&[&m1]),
                },
            ],
        }],
    );
    let mut truncated = transaction.to_bytes();
    truncated.truncate(truncated.len() / 2);
    vec![
        Step {
            name: "identity-token",
            frame: Frame::Message(
                ServerMessage::IdentityToken {
                    identity: ALICE,
                    token: "a token of alice".into(),
                    connection_id: CONNECTION,
                },
                Compression::None,
            ),
            events: vec![],
            rows: json.rows(&[], &[]),
        },
        // The first part of query set 1's rows: held back until its SubscribeApplied.
        Step {
            name: "subscribe-rows",
            frame: Frame::Message(
                ServerMessage::SubscribeRows {
                    query_set_id: 1,
                    tables: vec![table("message", &[&m1, &m2])],
                    deletes: vec![],
                },
                Compression::None,
            ),
            events: vec![],
            rows: json.rows(&[], &[]),
        },
        // The initial snapshot: the part before, then this one, applied as one.
        Step {
            name: "subscribe-applied",
            frame: Frame::Message(
                ServerMessage::SubscribeApplied {
                    query_set_id: 1,
                    offset: 10,
                    tables: vec![
                        table("user", &[&alice, &bob_away]),
                        table("message", &[&m3]),
                    ],
                    deletes: vec![],
                    resumed: false,
                },
                Compression::None,
            ),
            events: vec![
                json.insert("message", &m1),
                json.insert("message", &m2),
                json.insert("message", &m3),
                json.insert("user", &alice),
                json.insert("user", &bob_away),
            ],
            rows: json.rows(&[&m1, &m2, &m3], &[&alice, &bob_away]),
        },
        // Bob's row replaced (one key: an update), two messages in, one out.
        Step {
            name: "transaction-gzip",
            frame: Frame::Message(transaction, Compression::Gzip),
            events: vec![
                json.update("user", &bob_away, &bob),
                json.delete("message", &m1),
                json.insert("message", &m4),
                json.insert("message", &m5),
            ],
            rows: json.rows(&[&m2, &m3, &m4, &m5], &[&alice, &bob]),
        },
        // The answer to the client's own reducer call (request 7), which committed.
        Step {
            name: "reducer-result-brotli",
            frame: Frame::Message(
                update(
                    12,
                    ALICE,
                    "send",
                    UpdateStatus::Committed,
                    Some(7),
                    vec![QuerySetUpdate {
                        query_set_id: 1,
                        tables: vec![TableUpdate {
                            table: "message".into(),
                            inserts: list(&[&m6]),
                            deletes: list::<Message>(&[]),
                        }],
                    }],
                ),
                Compression::Brotli,
            ),
            events: vec![json.insert("message", &m6)],
            rows: json.rows(&[&m2, &m3, &m4, &m5, &m6], &[&alice, &bob]),
        },
        // A reducer call that failed: nothing changes.
        Step {
            name: "reducer-failed",
            frame: Frame::Message(
                update(
                    12,
                    ALICE,
                    "send",
                    UpdateStatus::Failed {
                        message: "a message may not be empty".into(),
                    },
                    Some(8),
                    vec![],
                ),
                Compression::None,
            ),
            events: vec![],
            rows: json.rows(&[&m2, &m3, &m4, &m5, &m6], &[&alice, &bob]),
        },
        // A second query set selecting rows the first holds: no change...
        Step {
            name: "second-query-set",
            frame: Frame::Message(
                ServerMessage::SubscribeApplied {
                    query_set_id: 2,
                    offset: 12,
                    tables: vec![table("user", &[&alice, &bob])],
                    deletes: vec![],
                    resumed: false,
                },
                Compression::None,
            ),
            events: vec![],
            rows: json.rows(&[&m2, &m3, &m4, &m5, &m6], &[&alice, &bob]),
        },
        // ...and when the server drops it, its rows stay: the first still holds them.
        Step {
            name: "subscription-error",
            frame: Frame::Message(
                ServerMessage::SubscriptionError {
                    query_set_id: 2,
                    message: "the query set can no longer be evaluated".into(),
                },
                Compression::None,
            ),
            events: vec![],
            rows: json.rows(&[&m2, &m3, &m4, &m5, &m6], &[&alice, &bob]),
        },
        Step {
            name: "call-error",
            frame: Frame::Message(
                ServerMessage::CallResult {
                    request_id: 9,
                    offset: 6,
                    result: Err(ApiError::new(
                        ErrorCode::NoSuchEntry,
                        "the module has no procedure named `motd`",
                    )),
                },
                Compression::None,
            ),
            events: vec![],
            rows: json.rows(&[&m2, &m3, &m4, &m5, &m6], &[&alice, &bob]),
        },
        Step {
            name: "call-result",
            frame: Frame::Message(
                ServerMessage::CallResult {
                    request_id: 10,
                    offset: 6,
                    result: Ok(to_vec(&"the message of the day".to_owned())),
                },
                Compression::None,
            ),
            events: vec![],
            rows: json.rows(&[&m2, &m3, &m4, &m5, &m6], &[&alice, &bob]),
        },
        Step {
            name: "caught-up",
            frame: Frame::Message(
                ServerMessage::CaughtUp {
                    request_id: 11,
                    offset: 12,
                },
                Compression::None,
            ),
            events: vec![],
            rows: json.rows(&[&m2, &m3, &m4, &m5, &m6], &[&alice, &bob]),
        },
        Step {
            name: "malformed-truncated",
            frame: Frame::Malformed(truncated, "the gzip step's message cut in half"),
            events: vec![],
            rows: json.rows(&[&m2, &m3, &m4, &m5, &m6], &[&alice, &bob]),
        },
        Step {
            name: "malformed-gzip",
            frame: Frame::Malformed(
                vec![
                    Compression::Gzip.tag(),
                    0x1f,
                    0x8b,
                    8,
                    0,
                    0xde,
                    0xad,
                    0xbe,
                    0xef,
                ],
                "a gzip header, then bytes that are not deflate",
            ),
            events: vec![],
            rows: json.rows(&[&m2, &m3, &m4, &m5, &m6], &[&alice, &bob]),
        },
        // A reconnection resumed from offset 12: only the changes since.
        Step {
            name: "resumed",
            frame: Frame::Message(
                ServerMessage::SubscribeApplied {
                    query_set_id: 1,
                    offset: 14,
                    tables: vec![table("message", &[&m7])],
                    deletes: vec![table("message", &[&m2])],
                    resumed: true,
                },
                Compression::None,
            ),
            events: vec![json.delete("message", &m2), json.insert("message", &m7)],
            rows: json.rows(&[&m3, &m4, &m5, &m6, &m7], &[&alice, &bob]),
        },
    ]
}

/// Every file of the vectors, from the quickstart's description and the encoders as they
/// are now.
pub fn files() -> Files {
    let description = quickstart_description();
    let module = JsonModule::new(&description).expect("the description reads back");
    let json = Json { module: &module };
    let mut files = Files::new();
    let mut manifest = Vec::new();
    for (index, step) in steps(&json).into_iter().enumerate() {
        let file = format!("{:02}-{}.bin", index + 1, step.name);
        let mut plain = None;
        let (bytes, compression, decoded, about) = match step.frame {
            Frame::Message(message, compression) => {
                let bytes = message.to_frame(compression, 0);
                assert_eq!(
                    bytes[0],
                    compression.tag(),
                    "{}: the frame did not come out {compression:?}",
                    step.name
                );
                if compression != Compression::None {
                    plain = Some((
                        format!("{:02}-{}.plain.bin", index + 1, step.name),
                        message.to_bytes(),
                    ));
                }
                let text = module.message_json(&message).expect("the message in JSON");
                let decoded: Value = serde_json::from_str(&text).expect("JSON");
                (bytes, compression.name(), decoded, None)
            }
            Frame::Malformed(bytes, why) => (bytes, "malformed", Value::Null, Some(why)),
        };
        let rows: serde_json::Map<String, Value> = step
            .rows
            .into_iter()
            .map(|(table, rows)| (table.to_owned(), Value::Array(rows)))
            .collect();
        let mut entry = json!({
            "name": step.name,
            "frame": file,
            "compression": compression,
            "decoded": decoded,
            "events": step.events,
            "rows": rows,
        });
        if let Some(why) = about {
            entry["malformed"] = json!(why);
        }
        if let Some((plain_file, plain_bytes)) = plain {
            entry["plain"] = json!(plain_file);
            files.insert(plain_file, plain_bytes);
        }
        manifest.push(entry);
        files.insert(file, bytes);
    }
    let manifest = json!({
        "module": "module.json",
        "steps": manifest,
    });
    files.insert("vectors.json".into(), pretty(&manifest));
    let description = serde_json::to_value(&description).expect("the description in JSON");
    files.insert("module.json".into(), pretty(&description));
    files
}

/// `value` as the vectors write JSON: indented, with a final newline.
fn pretty(value: &Value) -> Vec<u8> {
    let mut text = serde_json::to_string_pretty(value).expect("JSON");
    text.push('\n');
    text.into_bytes()
}
