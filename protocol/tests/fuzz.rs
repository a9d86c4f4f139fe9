//! Property tests of the protocol's decoders of outside input: the JSON mapping both ways
//! (a call's JSON arguments to encoded values, a module's encoded values to JSON), and the
//! WebSocket messages (binary and JSON client messages, which the server reads, and binary
//! server frames, compressed or not, which clients read).
//!
//! Each decoder gets valid input (which must round-trip), the same input mutated (bit flips,
//! cuts, counts set to huge values, JSON text with bytes changed) and arbitrary input, against
//! tame and hostile types. None may panic, and the byte decoders may not request more memory
//! than the bound each property states. `WASMOD_FUZZ_CASES` sets the number of cases (see
//! `docs/testing.md`).

use bytes::Bytes;
use proptest::prelude::*;
use serde_json::Value as Json;
use wasmod_abi::elements::max_elements;
use wasmod_abi::{AlgebraicType, ConnectionId, Identity, ParamDef, Reader, Typespace, Value};
use wasmod_fuzzing::alloc::{allocated, is_counting, Counting};
use wasmod_fuzzing::types::{hostile, hostile_typespace, tame, typespace};
use wasmod_fuzzing::values::typed_value;
use wasmod_fuzzing::{config, mutate, mutations};
use wasmod_protocol::json::{args_from_json, value_from_json, write_value};
use wasmod_protocol::ws::compression::Decompressor;
use wasmod_protocol::ws::{
    BinaryClientMessage, BinaryServerMessage, ClientMessage, Compression, JsonClientMessage,
    RowList, ServerMessage, TableRows,
};
use wasmod_protocol::ApiError;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes writing the JSON of a value of `n` bytes may request: 64 per element it
/// may visit ([`max_elements`]`(n)`: each writes at most a field name of the generated
/// types (a few characters), its punctuation and a number, in an output vector grown by
/// doubling) and 16 per byte (a byte of a string escaped as `\u00XX`, of an identity as two
/// hex digits).
fn json_allocation_bound(n: usize) -> usize {
    64 * max_elements(n) + 16 * n
}

/// The most bytes decoding a binary message of `n` bytes may request: 256 per byte (a
/// message's vectors reserve at most the bytes left, at each nesting level) and 64 KiB.
fn message_allocation_bound(n: usize) -> usize {
    256 * n + (64 << 10)
}

/// The bound the frame decoder's decompressor is given in these tests.
const MAX_DECOMPRESSED: usize = 64 << 10;

/// The most bytes reading a server frame of `n` bytes may request: the message bound of the
/// most it may decompress to, the output buffer's doubling up to that size, and 4 MiB for the
/// decoders' state (brotli's window and tables, inflate's).
fn frame_allocation_bound(n: usize) -> usize {
    message_allocation_bound(n.max(MAX_DECOMPRESSED)) + 2 * MAX_DECOMPRESSED + (4 << 20)
}

/// Writes the JSON of `bytes` as a value of `ty` within the bound; if it is one, reads the
/// JSON back and checks that it encodes to the same bytes (or, for NaNs, whose bits JSON does
/// not carry, to bytes of the same JSON).
fn check_json_writer(ty: &AlgebraicType, typespace: &Typespace, bytes: &[u8]) -> bool {
    let mut out = Vec::new();
    let (written, requested) = allocated(|| write_value(&mut out, ty, typespace, bytes));
    let bound = json_allocation_bound(bytes.len());
    assert!(
        requested <= bound,
        "the JSON of {} bytes requested {requested} bytes (bound {bound})",
        bytes.len()
    );
    if written.is_err() {
        assert!(out.is_empty(), "a failed write leaves the output as it was");
        return false;
    }
    let json: Json = serde_json::from_slice(&out).expect("the writer writes JSON");
    let read = value_from_json(ty, typespace, &json).unwrap_or_else(|error| {
        panic!(
            "the JSON {} does not read back: {}",
            String::from_utf8_lossy(&out),
            error.message()
        )
    });
    if read != bytes {
        // The one loss the mapping documents: a NaN is written "NaN", whatever its bits.
        let mut again = Vec::new();
        write_value(&mut again, ty, typespace, &read).expect("the bytes read are a value");
        assert!(
            again == out && String::from_utf8_lossy(&out).contains("NaN"),
            "the JSON {} reads back to other bytes: {read:?}, not {bytes:?}",
            String::from_utf8_lossy(&out)
        );
    }
    true
}

/// Reads `json` as a value of `ty`: if it is one, its encoding is one value of `ty`.
fn check_json_reader(ty: &AlgebraicType, typespace: &Typespace, json: &Json) {
    if let Ok(bytes) = value_from_json(ty, typespace, json) {
        let mut reader = Reader::new(&bytes);
        assert!(
            Value::decode(ty, typespace, &mut reader).is_ok() && reader.remaining() == 0,
            "{json} was read as {bytes:?}, which is not one value of the type"
        );
    }
}

/// Arbitrary JSON: nulls, booleans, numbers of every kind, short strings (some the mapping
/// reads specially: hex, `"NaN"`, big decimals), arrays and objects with keys of the
/// generated field names.
fn json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        any::<f64>().prop_map(Json::from),
        prop::sample::select(
            &[
                "",
                "a",
                "NaN",
                "-Infinity",
                "18446744073709551616",
                "00ff",
                "Circle",
                "ok",
                "err"
            ][..]
        )
        .prop_map(Json::from),
        "[0-9a-f]{32}|[0-9a-f]{64}".prop_map(Json::from),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
            prop::collection::btree_map(
                prop::sample::select(
                    &["a", "b", "id", "name", "x", "ok", "err", "Rect", "label"][..]
                )
                .prop_map(|key: &str| key.to_owned()),
                inner,
                0..4
            )
            .prop_map(|map| Json::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn values_round_trip_through_json((ty, value) in typed_value()) {
        prop_assert!(check_json_writer(&ty, &typespace(), &value.to_bytes()));
    }

    #[test]
    fn mutated_values_are_refused_or_round_trip_through_json(
        (ty, value) in typed_value(),
        damage in mutations(),
    ) {
        check_json_writer(&ty, &typespace(), &mutate(&value.to_bytes(), &damage));
    }

    #[test]
    fn arbitrary_bytes_against_hostile_types_are_refused_or_written(
        ty in hostile(),
        bytes in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        let typespace = hostile_typespace();
        let mut out = Vec::new();
        let (_, requested) = allocated(|| write_value(&mut out, &ty, &typespace, &bytes));
        prop_assert!(requested <= json_allocation_bound(bytes.len()));
    }

    #[test]
    fn arbitrary_json_is_refused_or_read_as_a_value(ty in tame(), json in json()) {
        check_json_reader(&ty, &typespace(), &json);
    }

    #[test]
    fn arbitrary_json_against_hostile_types_does_not_panic(ty in hostile(), json in json()) {
        let _ = value_from_json(&ty, &hostile_typespace(), &json);
    }

    #[test]
    fn arbitrary_json_is_refused_or_read_as_arguments(
        types in prop::collection::vec(tame(), 0..3),
        json in json(),
    ) {
        let names = ["a", "b", "x"];
        let params: Vec<ParamDef> = types
            .into_iter()
            .zip(names)
            .map(|(ty, name)| ParamDef { name: name.to_owned(), ty })
            .collect();
        let typespace = typespace();
        if let Ok(bytes) = args_from_json(&params, &typespace, &json) {
            let mut reader = Reader::new(&bytes);
            for param in &params {
                prop_assert!(Value::decode(&param.ty, &typespace, &mut reader).is_ok());
            }
            prop_assert_eq!(reader.remaining(), 0);
        }
    }

    #[test]
    fn mutated_json_text_is_refused_or_read_as_a_value(
        (ty, value) in typed_value(),
        damage in mutations(),
    ) {
        let typespace = typespace();
        let mut out = Vec::new();
        write_value(&mut out, &ty, &typespace, &value.to_bytes()).expect("a valid value");
        let text = mutate(&out, &damage);
        if let Ok(json) = serde_json::from_slice::<Json>(&text) {
            check_json_reader(&ty, &typespace, &json);
        }
    }
}

fn client_message() -> impl Strategy<Value = BinaryClientMessage> {
    let name = "[a-z_]{0,8}";
    let args = prop::collection::vec(any::<u8>(), 0..32);
    prop_oneof![
        (any::<u32>(), name, args.clone()).prop_map(|(request_id, name, args)| {
            ClientMessage::CallReducer {
                request_id,
                name,
                args,
            }
        }),
        (any::<u32>(), name, args.clone()).prop_map(|(request_id, name, args)| {
            ClientMessage::CallProcedure {
                request_id,
                name,
                args,
            }
        }),
        (any::<u32>(), name, args).prop_map(|(request_id, name, args)| ClientMessage::CallView {
            request_id,
            name,
            args
        }),
        (
            any::<u32>(),
            prop::collection::vec("SELECT \\* FROM [a-z]{1,6}", 0..3),
            any::<Option<u64>>()
        )
            .prop_map(
                |(query_set_id, queries, resume_from)| ClientMessage::Subscribe {
                    query_set_id,
                    queries,
                    resume_from,
                }
            ),
        any::<u32>().prop_map(|query_set_id| ClientMessage::Unsubscribe { query_set_id }),
        (any::<u32>(), "SELECT \\* FROM [a-z]{1,6}")
            .prop_map(|(request_id, query)| ClientMessage::OneOffQuery { request_id, query }),
        (any::<u32>(), any::<u64>())
            .prop_map(|(request_id, offset)| ClientMessage::WaitFor { request_id, offset }),
    ]
}

/// Decodes `bytes` as a binary client message within the bound; one that decodes encodes
/// back to exactly `bytes`.
fn check_binary_client_decoder(bytes: &[u8]) {
    let (decoded, requested) = allocated(|| BinaryClientMessage::from_bytes(bytes));
    let bound = message_allocation_bound(bytes.len());
    assert!(
        requested <= bound,
        "{} bytes requested {requested} (bound {bound})",
        bytes.len()
    );
    if let Ok(message) = decoded {
        assert_eq!(message.to_bytes(), bytes);
    }
}

fn table_rows() -> impl Strategy<Value = TableRows<RowList>> {
    let rows = prop::collection::vec(prop::collection::vec(any::<u8>(), 0..12), 0..4);
    ("[a-z]{1,6}", rows).prop_map(|(table, rows)| TableRows {
        table,
        rows: RowList::from_rows(rows.iter().map(Vec::as_slice)).expect("a few small rows"),
    })
}

fn server_message() -> impl Strategy<Value = BinaryServerMessage> {
    let tables = || prop::collection::vec(table_rows(), 0..3);
    prop_oneof![
        (any::<[u8; 32]>(), "[a-zA-Z0-9.]{0,24}", any::<[u8; 16]>()).prop_map(
            |(identity, token, connection)| {
                ServerMessage::IdentityToken {
                    identity: Identity::from_bytes(identity),
                    token,
                    connection_id: ConnectionId::from_bytes(connection),
                }
            }
        ),
        (
            any::<u32>(),
            any::<u64>(),
            tables(),
            tables(),
            any::<bool>()
        )
            .prop_map(|(query_set_id, offset, tables, deletes, resumed)| {
                ServerMessage::SubscribeApplied {
                    query_set_id,
                    offset,
                    tables,
                    deletes,
                    resumed,
                }
            }),
        (any::<u32>(), tables(), tables()).prop_map(|(query_set_id, tables, deletes)| {
            ServerMessage::SubscribeRows {
                query_set_id,
                tables,
                deletes,
            }
        }),
        (
            any::<u32>(),
            any::<u64>(),
            prop::collection::vec(any::<u8>(), 0..64)
        )
            .prop_map(|(request_id, offset, value)| {
                ServerMessage::CallResult {
                    request_id,
                    offset,
                    result: Ok(value),
                }
            }),
        (any::<u32>(), any::<u64>())
            .prop_map(|(request_id, offset)| { ServerMessage::CaughtUp { request_id, offset } }),
        (any::<u32>(), "[a-z ]{0,16}").prop_map(|(request_id, message)| {
            ServerMessage::CallResult {
                request_id,
                offset: 0,
                result: Err(ApiError::new(
                    wasmod_protocol::ErrorCode::BadArguments,
                    message,
                )),
            }
        }),
        (any::<u32>(), "[a-z ]{0,16}").prop_map(|(query_set_id, message)| {
            ServerMessage::SubscriptionError {
                query_set_id,
                message,
            }
        }),
    ]
}

fn compression() -> impl Strategy<Value = Compression> {
    prop::sample::select(&[Compression::None, Compression::Brotli, Compression::Gzip][..])
}

/// Reads `frame` as a server frame within the bound; one that decodes, re-encoded
/// uncompressed, gives the message's bytes.
fn check_server_frame_decoder(frame: &[u8]) -> Option<BinaryServerMessage> {
    let frame = Bytes::copy_from_slice(frame);
    let mut decompressor = Decompressor::new(MAX_DECOMPRESSED as u64);
    let (decoded, requested) =
        allocated(|| BinaryServerMessage::from_frame(&frame, &mut decompressor));
    let bound = frame_allocation_bound(frame.len());
    assert!(
        requested <= bound,
        "a frame of {} bytes requested {requested} (bound {bound})",
        frame.len()
    );
    let message = decoded.ok()?;
    if frame.first() == Some(&Compression::None.tag()) {
        assert_eq!(message.to_bytes(), &frame[..]);
    }
    Some(message)
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn binary_client_messages_round_trip(message in client_message()) {
        let bytes = message.to_bytes();
        check_binary_client_decoder(&bytes);
        prop_assert_eq!(BinaryClientMessage::from_bytes(&bytes).ok(), Some(message));
    }

    #[test]
    fn mutated_binary_client_messages_are_refused_or_re_encode(
        message in client_message(),
        damage in mutations(),
    ) {
        check_binary_client_decoder(&mutate(&message.to_bytes(), &damage));
    }

    #[test]
    fn arbitrary_bytes_are_refused_or_a_client_message(bytes in prop::collection::vec(any::<u8>(), 0..128)) {
        check_binary_client_decoder(&bytes);
    }

    #[test]
    fn json_client_messages_round_trip(message in client_message(), json in json()) {
        let message: JsonClientMessage = match message {
            ClientMessage::CallReducer { request_id, name, .. } => ClientMessage::CallReducer { request_id, name, args: json },
            ClientMessage::Subscribe { query_set_id, queries, resume_from } => ClientMessage::Subscribe { query_set_id, queries, resume_from },
            ClientMessage::Unsubscribe { query_set_id } => ClientMessage::Unsubscribe { query_set_id },
            ClientMessage::WaitFor { request_id, offset } => ClientMessage::WaitFor { request_id, offset },
            _ => ClientMessage::OneOffQuery { request_id: 0, query: String::new() },
        };
        prop_assert_eq!(JsonClientMessage::from_json(&message.to_json()).ok(), Some(message));
    }

    #[test]
    fn mutated_json_client_messages_do_not_panic(message in client_message(), damage in mutations()) {
        let message: JsonClientMessage = match message {
            ClientMessage::CallView { request_id, name, args } => ClientMessage::CallView { request_id, name, args: Json::from(args) },
            ClientMessage::Subscribe { query_set_id, queries, resume_from } => ClientMessage::Subscribe { query_set_id, queries, resume_from },
            _ => ClientMessage::Unsubscribe { query_set_id: 7 },
        };
        let text = mutate(message.to_json().as_bytes(), &damage);
        if let Ok(text) = std::str::from_utf8(&text) {
            if let Ok(read) = JsonClientMessage::from_json(text) {
                prop_assert_eq!(JsonClientMessage::from_json(&read.to_json()).ok(), Some(read));
            }
        }
    }

    #[test]
    fn server_frames_round_trip(message in server_message(), compression in compression()) {
        let frame = message.to_frame(compression, 0);
        prop_assert_eq!(check_server_frame_decoder(&frame), Some(message));
    }

    #[test]
    fn mutated_server_frames_are_refused_or_decode(
        message in server_message(),
        compression in compression(),
        damage in mutations(),
    ) {
        let frame = message.to_frame(compression, 0);
        // The compression byte is kept: changing it is one case, the stream behind it another.
        let mut damaged = vec![frame[0]];
        damaged.extend(mutate(&frame[1..], &damage));
        check_server_frame_decoder(&damaged);
        check_server_frame_decoder(&mutate(&frame, &damage));
    }

    #[test]
    fn arbitrary_bytes_are_refused_or_a_server_frame(
        compression in compression(),
        bytes in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        let mut frame = vec![compression.tag()];
        frame.extend(bytes);
        check_server_frame_decoder(&frame);
    }
}

#[test]
fn the_allocator_counts() {
    assert!(is_counting(), "the bounds above would hold vacuously");
}

/// A regression: without serde_json's `float_roundtrip`, JSON numbers were read by a fast
/// parser that can be one unit in the last place off, so a client's `f64` argument could
/// reach the module changed (`-1.622659660975603e67` arrived as `-1.6226596609756028e67`).
#[test]
fn json_numbers_read_back_to_the_same_float() {
    for text in [
        "-1.622659660975603e+67",
        "3.1e-44",
        "0.1",
        "1.7976931348623157e308",
    ] {
        let json: Json = serde_json::from_str(text).expect("a number");
        let bytes =
            value_from_json(&AlgebraicType::F64, &Typespace::default(), &json).expect("an f64");
        let expected: f64 = text.parse().expect("a float");
        assert_eq!(bytes, expected.to_le_bytes(), "{text}");
    }
}
