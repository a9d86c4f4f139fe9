//! The WebSocket messages: every message round-trips in both encodings, rows render as JSON
//! from their bytes, and bytes or text that are not a message are refused without a panic.

use serde_json::json;
use serde_json::value::RawValue;
use wasmod_abi::encoding::to_vec;
use wasmod_abi::{
    AlgebraicType, ColumnDef, ConnectionId, EntryKind, Identity, ModuleDef, SchemaType, TableDef,
    Timestamp, Typespace,
};
use wasmod_protocol::ws::{
    BinaryClientMessage, BinaryServerMessage, ClientMessage, Compression, EntryPointName,
    JsonClientMessage, JsonServerMessage, MessageError, QuerySetUpdate, RowList, RowTypes,
    ServerMessage, TableRows, TableUpdate, TransactionUpdate, UpdateStatus, BIN_PROTOCOL,
    JSON_PROTOCOL,
};
use wasmod_protocol::{ApiError, ErrorCode};

#[derive(Clone, Debug, PartialEq, SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Player {
    id: u64,
    name: String,
}

fn players(rows: &[(u64, &str)]) -> RowList {
    let encoded: Vec<Vec<u8>> = rows
        .iter()
        .map(|&(id, name)| {
            to_vec(&Player {
                id,
                name: name.into(),
            })
        })
        .collect();
    RowList::from_rows(encoded.iter().map(Vec::as_slice)).expect("small rows")
}

fn raw(json: serde_json::Value) -> Box<RawValue> {
    RawValue::from_string(json.to_string()).unwrap()
}

/// Every client message, with arguments of type `A`.
fn client_messages<A: Clone>(args: A) -> Vec<ClientMessage<A>> {
    vec![
        ClientMessage::CallReducer {
            request_id: 1,
            name: "send".into(),
            args: args.clone(),
        },
        ClientMessage::CallProcedure {
            request_id: 2,
            name: "fetch".into(),
            args: args.clone(),
        },
        ClientMessage::CallView {
            request_id: u32::MAX,
            name: "mine".into(),
            args,
        },
        ClientMessage::Subscribe {
            query_set_id: 7,
            queries: vec!["SELECT * FROM player".into(), "SELECT * FROM \"é\"".into()],
            resume_from: None,
        },
        ClientMessage::Subscribe {
            query_set_id: 8,
            queries: vec![],
            resume_from: Some(u64::MAX),
        },
        ClientMessage::Unsubscribe { query_set_id: 7 },
        ClientMessage::OneOffQuery {
            request_id: 3,
            query: "SELECT * FROM player WHERE id = 1".into(),
        },
        ClientMessage::WaitFor {
            request_id: 4,
            offset: 41,
        },
    ]
}

/// Every server message, with rows of type `R` (made by `rows`) and values of type `V`.
fn server_messages<R, V>(rows: impl Fn(&[(u64, &str)]) -> R, value: V) -> Vec<ServerMessage<R, V>> {
    let update = |status, request_id| {
        ServerMessage::TransactionUpdate(TransactionUpdate {
            offset: 42,
            timestamp: Timestamp::from_micros_since_unix_epoch(1_700_000_000_000_000),
            caller_identity: Identity::from_bytes([3; 32]),
            caller_connection_id: ConnectionId::from_bytes([4; 16]),
            entry_point: EntryPointName {
                kind: EntryKind::Reducer,
                name: "send".into(),
            },
            status,
            request_id,
            changes: vec![QuerySetUpdate {
                query_set_id: 7,
                tables: vec![TableUpdate {
                    table: "player".into(),
                    inserts: rows(&[(1, "ann"), (2, "bob")]),
                    deletes: rows(&[]),
                }],
            }],
        })
    };
    vec![
        ServerMessage::IdentityToken {
            identity: Identity::from_bytes([1; 32]),
            token: "a.token".into(),
            connection_id: ConnectionId::from_bytes([2; 16]),
        },
        ServerMessage::SubscribeApplied {
            query_set_id: 7,
            offset: 41,
            tables: vec![TableRows {
                table: "player".into(),
                rows: rows(&[(1, "ann")]),
            }],
            deletes: vec![TableRows {
                table: "player".into(),
                rows: rows(&[(2, "bob")]),
            }],
            resumed: true,
        },
        update(UpdateStatus::Committed, Some(1)),
        update(
            UpdateStatus::Failed {
                message: "empty".into(),
            },
            None,
        ),
        update(
            UpdateStatus::Aborted {
                reason: "trap".into(),
            },
            Some(9),
        ),
        ServerMessage::CallResult {
            request_id: 2,
            offset: 41,
            result: Ok(value),
        },
        ServerMessage::CallResult {
            request_id: 3,
            offset: 40,
            result: Err(ApiError::new(ErrorCode::EntryFailed, "no")),
        },
        ServerMessage::SubscriptionError {
            query_set_id: 8,
            message: "no table `x`".into(),
        },
        ServerMessage::OneOffQueryResult {
            request_id: 4,
            result: Ok(vec![TableRows {
                table: "player".into(),
                rows: rows(&[(5, "eve")]),
            }]),
        },
        ServerMessage::OneOffQueryResult {
            request_id: 5,
            result: Err("bad query".into()),
        },
        ServerMessage::SubscribeRows {
            query_set_id: 7,
            tables: vec![TableRows {
                table: "player".into(),
                rows: rows(&[(3, "cy")]),
            }],
            deletes: vec![],
        },
        ServerMessage::CaughtUp {
            request_id: 6,
            offset: 41,
        },
    ]
}

#[test]
fn subprotocols_are_named() {
    assert_eq!(BIN_PROTOCOL, "v1.bin.wasmod");
    assert_eq!(JSON_PROTOCOL, "v1.json.wasmod");
}

#[test]
fn every_client_message_round_trips_in_binary_and_json() {
    for message in client_messages(to_vec(&("hi".to_owned(), 3u32))) {
        let bytes = message.to_bytes();
        assert_eq!(BinaryClientMessage::from_bytes(&bytes).unwrap(), message);
    }
    for message in client_messages(json!(["hi", {"x": 1}])) {
        let text = message.to_json();
        assert_eq!(JsonClientMessage::from_json(&text).unwrap(), message);
    }
    let text = client_messages(json!({"text": "hi"}))[0].to_json();
    assert_eq!(
        text,
        r#"{"CallReducer":{"request_id":1,"name":"send","args":{"text":"hi"}}}"#
    );
}

#[test]
fn every_server_message_round_trips_in_binary_and_json() {
    for message in server_messages(players, to_vec(&7u64)) {
        let bytes = message.to_bytes();
        assert_eq!(bytes[0], 0, "uncompressed");
        assert_eq!(BinaryServerMessage::from_bytes(&bytes).unwrap(), message);
    }
    let mut typespace = Typespace::default();
    let ty = Player::schema(&mut typespace);
    let json_rows = |rows: &[(u64, &str)]| players(rows).to_json(&ty, &typespace).unwrap();
    for message in server_messages(json_rows, raw(json!({"some": [1, "x"]}))) {
        let text = message.to_json();
        let read = JsonServerMessage::from_json(&text).unwrap();
        assert_eq!(read.to_json(), text, "{text}");
    }
}

#[test]
fn a_server_message_s_kind_is_its_json_tag() {
    let messages = server_messages(|_| raw(json!([])), raw(json!(1)));
    let mut kinds: Vec<&str> = messages.iter().map(ServerMessage::kind).collect();
    for (message, kind) in messages.iter().zip(&kinds) {
        let json: serde_json::Value = serde_json::from_str(&message.to_json()).unwrap();
        let tags: Vec<&String> = json.as_object().unwrap().keys().collect();
        assert_eq!(tags, [kind]);
    }
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(
        kinds.len(),
        8,
        "every kind of message is among the examples"
    );
}

#[test]
fn json_server_messages_read_as_documented() {
    let messages = server_messages(|_| raw(json!([])), raw(json!(1)));
    assert_eq!(
        messages[0].to_json(),
        format!(
            r#"{{"IdentityToken":{{"identity":"{}","token":"a.token","connection_id":"{}"}}}}"#,
            "01".repeat(32),
            "02".repeat(16)
        )
    );
    let returned: serde_json::Value = serde_json::from_str(&messages[5].to_json()).unwrap();
    assert_eq!(
        returned,
        json!({"CallResult": {"request_id": 2, "offset": 41, "result": {"ok": 1}}})
    );
    let queried: serde_json::Value = serde_json::from_str(&messages[9].to_json()).unwrap();
    assert_eq!(
        queried["OneOffQueryResult"]["result"],
        json!({"err": "bad query"})
    );
    let update: serde_json::Value = serde_json::from_str(&messages[2].to_json()).unwrap();
    assert_eq!(
        update["TransactionUpdate"]["entry_point"],
        json!({"kind": "reducer", "name": "send"})
    );
    assert_eq!(update["TransactionUpdate"]["status"], json!("Committed"));
    assert_eq!(
        update["TransactionUpdate"]["timestamp"],
        json!(1_700_000_000_000_000i64)
    );
    let caught_up: serde_json::Value =
        serde_json::from_str(&messages.last().unwrap().to_json()).unwrap();
    assert_eq!(
        caught_up,
        json!({"CaughtUp": {"request_id": 6, "offset": 41}})
    );
    let failed: serde_json::Value = serde_json::from_str(&messages[6].to_json()).unwrap();
    assert_eq!(
        failed["CallResult"]["result"],
        json!({"err": {"code": "entry_failed", "message": "no"}})
    );
}

#[test]
fn row_lists_share_their_bytes_and_render_as_json() {
    let list = players(&[(1, "ann"), (2, "bob \"b\"")]);
    assert_eq!(list.len(), 2);
    let copy = list.clone();
    assert_eq!(copy, list);
    assert_eq!(
        list.iter().collect::<Vec<_>>(),
        [
            to_vec(&Player {
                id: 1,
                name: "ann".into()
            }),
            to_vec(&Player {
                id: 2,
                name: "bob \"b\"".into()
            })
        ]
    );
    assert!(RowList::from_rows([]).expect("no rows").is_empty());

    let mut typespace = Typespace::default();
    let row_type = Player::schema(&mut typespace);
    let module = ModuleDef {
        typespace,
        tables: vec![TableDef {
            name: "player".into(),
            row_type,
            columns: vec![
                ColumnDef {
                    name: "id".into(),
                    ty: AlgebraicType::U64,
                    default: None,
                },
                ColumnDef {
                    name: "name".into(),
                    ty: AlgebraicType::String,
                    default: None,
                },
            ],
            primary_key: None,
            indexes: vec![],
            auto_inc: vec![],
            public: true,
            schedule: None,
            visibility: None,
        }],
        ..ModuleDef::default()
    };
    let types = RowTypes::new(&module);
    assert_eq!(
        types.to_json("player", &list).unwrap().get(),
        r#"[{"id":1,"name":"ann"},{"id":2,"name":"bob \"b\""}]"#
    );
    assert_eq!(
        types.to_json("nope", &list).unwrap_err().to_string(),
        "the module has no table named `nope`"
    );
    let json = types
        .table_rows(&TableRows {
            table: "player".into(),
            rows: list.clone(),
        })
        .unwrap();
    assert_eq!(
        json.rows.get(),
        types.to_json("player", &list).unwrap().get()
    );
    let json = types
        .table_update(&TableUpdate {
            table: "player".into(),
            inserts: list.clone(),
            deletes: RowList::default(),
        })
        .unwrap();
    assert_eq!(json.deletes.get(), "[]");
    let broken = RowList::from_rows([&[1u8, 2][..]]).expect("one row");
    assert!(types.to_json("player", &broken).is_err());
}

#[test]
fn every_server_message_reads_back_in_every_compression() {
    let many: Vec<(u64, String)> = (0..200).map(|id| (id, format!("player {id}"))).collect();
    let many: Vec<(u64, &str)> = many.iter().map(|(id, name)| (*id, &name[..])).collect();
    let mut compressed = 0;
    for message in server_messages(|_| players(&many), vec![7u8; 300]) {
        for compression in Compression::ALL {
            let frame = message.to_frame(compression, 0);
            assert_eq!(BinaryServerMessage::from_bytes(&frame).unwrap(), message);
            if frame[0] != Compression::None.tag() {
                assert_eq!(frame[0], compression.tag());
                assert!(frame.len() < message.to_bytes().len());
            }
        }
        let plain = message.to_bytes();
        if plain.len() > 1_000 {
            // A build without brotli or gzip (their features off) sends the frame as it is.
            for compression in [Compression::Gzip, Compression::Brotli] {
                let tag = if compression.is_supported() {
                    compression.tag()
                } else {
                    Compression::None.tag()
                };
                assert_eq!(message.to_frame(compression, 0)[0], tag);
            }
            compressed += 1;
        }
        let under = message.to_frame(Compression::Gzip, plain.len());
        assert_eq!(under, plain, "one byte under the threshold: as it is");
    }
    assert!(compressed >= 3, "rows and values make large messages");
}

#[test]
fn a_frame_that_compression_would_grow_is_sent_as_it_is() {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let noise: Vec<u8> = (0..64).flat_map(|_| random.next().to_le_bytes()).collect();
    let message: BinaryServerMessage = ServerMessage::CallResult {
        request_id: 1,
        offset: 0,
        result: Ok(noise),
    };
    for compression in [Compression::Brotli, Compression::Gzip] {
        assert_eq!(message.to_frame(compression, 0), message.to_bytes());
    }
}

#[test]
fn unknown_and_damaged_compression_is_refused_clearly() {
    let message = server_messages(players, Vec::new()).remove(0);
    let mut bytes = message.to_bytes();
    bytes[0] = 9;
    let error = BinaryServerMessage::from_bytes(&bytes).unwrap_err();
    assert!(matches!(error, MessageError::Compression(9)));
    assert!(
        error.to_string().contains("unknown compression 9"),
        "{error}"
    );
    for (tag, name) in [(1, "brotli"), (2, "gzip")] {
        bytes[0] = tag;
        let error = BinaryServerMessage::from_bytes(&bytes).unwrap_err();
        assert!(matches!(error, MessageError::Decompression(..)), "{error}");
        assert!(error.to_string().contains(name), "{error}");
    }
    let mut frame = message.to_frame(Compression::Gzip, 0);
    frame.truncate(frame.len() / 2);
    assert!(BinaryServerMessage::from_bytes(&frame).is_err());
    assert!(matches!(
        BinaryServerMessage::from_bytes(&[]),
        Err(MessageError::Empty)
    ));
}

#[test]
fn row_lists_whose_ends_do_not_match_their_bytes_are_refused() {
    let mut forged = Vec::new();
    wasmod_abi::Encode::encode(&vec![3u32, 1], &mut forged);
    wasmod_abi::Encode::encode(&vec![0u8; 3], &mut forged);
    assert!(wasmod_abi::encoding::from_slice::<RowList>(&forged).is_err());
    let mut short = Vec::new();
    wasmod_abi::Encode::encode(&vec![5u32], &mut short);
    wasmod_abi::Encode::encode(&vec![0u8; 3], &mut short);
    assert!(wasmod_abi::encoding::from_slice::<RowList>(&short).is_err());
}

/// A small deterministic generator (xorshift).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn garbage_and_damaged_messages_are_errors_never_panics() {
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let valid_server: Vec<Vec<u8>> = server_messages(players, to_vec(&1u8))
        .iter()
        .map(BinaryServerMessage::to_bytes)
        .collect();
    let valid_client: Vec<Vec<u8>> = client_messages(vec![1u8, 2])
        .iter()
        .map(BinaryClientMessage::to_bytes)
        .collect();
    for round in 0..20_000 {
        let len = (random.next() % 96) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| random.next() as u8).collect();
        if round % 2 == 0 {
            let pool = if round % 4 == 0 {
                &valid_server
            } else {
                &valid_client
            };
            bytes = pool[(random.next() as usize) % pool.len()].clone();
            let at = (random.next() as usize) % bytes.len();
            if round % 8 < 4 {
                bytes[at] = random.next() as u8;
            } else {
                bytes.truncate(at);
            }
        }
        let _ = BinaryServerMessage::from_bytes(&bytes);
        let _ = BinaryClientMessage::from_bytes(&bytes);
        if let Ok(text) = std::str::from_utf8(&bytes) {
            let _ = JsonClientMessage::from_json(text);
            let _ = JsonServerMessage::from_json(text);
        }
    }
    assert!(matches!(
        JsonClientMessage::from_json(r#"{"CallReducer": {"request_id": -1}}"#),
        Err(MessageError::Json(_))
    ));
    assert!(JsonServerMessage::from_json(
        r#"{"IdentityToken": {"identity": "zz", "token": "", "connection_id": ""}}"#
    )
    .is_err());
}
