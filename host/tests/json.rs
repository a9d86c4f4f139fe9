//! JSON ↔ encoded values: the bytes agree with the static encoding both ways, every mapping
//! rule of the module docs holds, every error names what it should, and hostile types and
//! documents are refused without a panic.

use serde_json::{json, Value as Json};
use wasmod_abi::encoding::to_vec;
use wasmod_abi::value::MAX_DEPTH;
use wasmod_abi::{
    AlgebraicType, ConnectionId, Field, Identity, ParamDef, SchemaType, Timestamp, TypeDef,
    Typespace,
};
use wasmod_host::json::MAX_SAFE_INTEGER;
use wasmod_host::{args_from_json, value_from_json, value_to_json, JsonError};

#[derive(Clone, Debug, PartialEq, SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Position {
    x: u32,
    y: u32,
}

#[derive(Clone, Debug, PartialEq, SchemaType)]
#[wasmod(crate = wasmod_abi)]
enum Shape {
    Empty,
    Circle(f64),
    Rect { width: u32, height: u32 },
}

#[derive(Clone, Debug, PartialEq, SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Player {
    id: u64,
    name: String,
    position: Position,
    shape: Shape,
    tags: Vec<String>,
    owner: Option<Identity>,
    last_seen: Timestamp,
}

#[derive(Clone, Debug, PartialEq, SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Pair(u8, String);

#[derive(Clone, Debug, PartialEq, SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Unit;

#[derive(Clone, Debug, PartialEq, SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

/// The type of `T`, with its typespace.
fn schema<T: SchemaType>() -> (AlgebraicType, Typespace) {
    let mut typespace = Typespace::default();
    let ty = T::schema(&mut typespace);
    (ty, typespace)
}

/// Checks that `json` encodes to the static encoding of `value`, and that those bytes render
/// back as `rendered`.
#[track_caller]
fn check<T: SchemaType>(value: T, json: Json, rendered: Json) {
    let (ty, typespace) = schema::<T>();
    let bytes = to_vec(&value);
    assert_eq!(
        value_from_json(&ty, &typespace, &json).unwrap(),
        bytes,
        "{json} encodes as the static encoding"
    );
    assert_eq!(value_to_json(&ty, &typespace, &bytes).unwrap(), rendered);
    assert_eq!(
        value_from_json(&ty, &typespace, &rendered).unwrap(),
        bytes,
        "{rendered} reads back"
    );
}

/// [`check`] where the JSON is written as it is rendered.
#[track_caller]
fn same<T: SchemaType>(value: T, json: Json) {
    check(value, json.clone(), json);
}

/// The error converting `json` to a `T`.
#[track_caller]
fn error<T: SchemaType>(json: Json) -> String {
    let (ty, typespace) = schema::<T>();
    value_from_json(&ty, &typespace, &json)
        .expect_err("the JSON is refused")
        .to_string()
}

#[test]
fn bools_strings_and_small_integers() {
    same(true, json!(true));
    same("héllo".to_owned(), json!("héllo"));
    same(i8::MIN, json!(-128));
    same(u8::MAX, json!(255));
    same(i16::MIN, json!(-32768));
    same(u16::MAX, json!(65535));
    same(i32::MIN, json!(-2147483648));
    same(u32::MAX, json!(4294967295u32));
    // An integral float is an integer.
    check(3u8, json!(3.0), json!(3));
}

#[test]
fn small_integers_out_of_range_or_not_integers() {
    assert_eq!(
        error::<u32>(json!(-1)),
        "expected u32 (0..=4294967295), found -1"
    );
    assert_eq!(error::<u8>(json!(256)), "expected u8 (0..=255), found 256");
    assert_eq!(
        error::<i8>(json!(-129)),
        "expected i8 (-128..=127), found -129"
    );
    assert_eq!(
        error::<i32>(json!(1.5)),
        "expected i32 (-2147483648..=2147483647), found 1.5"
    );
    // Only the wide integers are read from strings.
    assert_eq!(
        error::<u16>(json!("7")),
        "expected u16 (0..=65535), found \"7\""
    );
    assert_eq!(
        error::<u8>(json!(true)),
        "expected u8 (0..=255), found true"
    );
}

#[test]
fn wide_integers_are_strings_beyond_two_to_the_53() {
    let safe = MAX_SAFE_INTEGER;
    same(safe, json!(safe));
    same(safe + 1, json!((safe + 1).to_string()));
    same(-(safe as i64), json!(-(safe as i64)));
    same(-(safe as i64) - 1, json!((-(safe as i64) - 1).to_string()));
    same(u64::MAX, json!("18446744073709551615"));
    same(i64::MIN, json!("-9223372036854775808"));
    same(u128::MAX, json!(u128::MAX.to_string()));
    same(i128::MIN, json!(i128::MIN.to_string()));
    same(12u128, json!(12));
    same(-12i128, json!(-12));
    // Exact JSON numbers and small decimal strings are read too.
    check(u64::MAX, json!(u64::MAX), json!("18446744073709551615"));
    check(i64::MIN, json!(i64::MIN), json!("-9223372036854775808"));
    check(5u64, json!("5"), json!(5));
    check(-5i128, json!("-5"), json!(-5));
}

#[test]
fn wide_integers_out_of_range_or_inexact() {
    assert_eq!(
        error::<u64>(json!("18446744073709551616")),
        "expected u64 (0..=18446744073709551615, as a number or a decimal string), found \"18446744073709551616\""
    );
    assert_eq!(
        error::<u64>(json!(-1)),
        "expected u64 (0..=18446744073709551615, as a number or a decimal string), found -1"
    );
    assert_eq!(
        error::<i64>(json!("12abc")),
        "expected i64 (-9223372036854775808..=9223372036854775807, as a number or a decimal string), found \"12abc\""
    );
    assert_eq!(
        error::<u128>(json!(1e30)),
        "expected u128 (0..=340282366920938463463374607431768211455, as a number or a decimal string), found 1e+30 (a JSON number this large is not exact: send it as a decimal string)"
    );
}

#[test]
fn floats_and_the_values_json_cannot_write() {
    same(1.5f64, json!(1.5));
    same(-0.25f32, json!(-0.25));
    // An f32 is written with its shortest decimal form.
    same(0.1f32, json!(0.1));
    same(f64::INFINITY, json!("Infinity"));
    same(f64::NEG_INFINITY, json!("-Infinity"));
    same(f32::INFINITY, json!("Infinity"));
    check(7f64, json!(7), json!(7.0));
    let (ty, typespace) = schema::<f64>();
    let nan = value_from_json(&ty, &typespace, &json!("NaN")).unwrap();
    assert!(f64::from_le_bytes(nan.clone().try_into().unwrap()).is_nan());
    assert_eq!(value_to_json(&ty, &typespace, &nan).unwrap(), json!("NaN"));
    assert_eq!(
        error::<f64>(json!("nan")),
        r#"expected f64 (a number, "NaN", "Infinity" or "-Infinity"), found "nan""#
    );
    assert_eq!(
        error::<f32>(json!(1e39)),
        "expected f32 (at most 3.4028235e38 in magnitude), found 1e+39"
    );
}

#[test]
fn identities_and_connection_ids_are_hex() {
    let identity = Identity::from_bytes(std::array::from_fn(|i| i as u8 * 7));
    let hex = identity.to_hex();
    same(identity, json!(hex));
    check(identity, json!(hex.to_uppercase()), json!(hex));
    let connection = ConnectionId::from_bytes(std::array::from_fn(|i| 0xf0 | i as u8));
    same(connection, json!("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"));
    assert_eq!(
        error::<Identity>(json!("abcd")),
        "expected an identity (64 hex digits), found \"abcd\""
    );
    assert_eq!(
        error::<ConnectionId>(json!("zz".repeat(16))),
        format!(
            "expected a connection id (32 hex digits), found \"{}\"",
            "zz".repeat(16)
        )
    );
}

#[test]
fn timestamps_are_microseconds_or_rfc_3339() {
    let at = Timestamp::from_micros_since_unix_epoch;
    same(at(1_714_566_600_250_000), json!(1_714_566_600_250_000i64));
    same(at(-1), json!(-1));
    let rfc = |text: &str, micros: i64| check(at(micros), json!(text), json!(micros));
    rfc("1970-01-01T00:00:00Z", 0);
    rfc("2024-05-01T12:30:00.25Z", 1_714_566_600_250_000);
    rfc("2024-05-01T14:30:00.25+02:00", 1_714_566_600_250_000);
    rfc("2024-05-01t10:00:00.250000999-02:30", 1_714_566_600_250_000);
    rfc("2024-02-29 00:00:00z", 1_709_164_800_000_000);
    rfc("1969-12-31T23:59:59.5Z", -500_000);
    rfc("2000-03-01T00:00:00Z", 951_868_800_000_000);
    // Beyond 2^53 microseconds (before 1685 or after 2255), a decimal string.
    check(
        at(-62_135_596_800_000_000),
        json!("0001-01-01T00:00:00Z"),
        json!("-62135596800000000"),
    );
    for bad in [
        "2023-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z",
        "2024-13-01T00:00:00Z",
        "2024-04-31T00:00:00Z",
        "2024-05-01T24:00:00Z",
        "2024-05-01T12:00:60Z",
        "2024-05-01T12:00:00",
        "2024-05-01T12:00:00.Z",
        "2024-05-01T12:00:00.1234567890Z",
        "2024-05-01T12:00:00+2:00",
        "2024-05-01T12:00:00+24:00",
        "2024-05-01",
        "2024-05-01T12:00:00Zjunk",
        "２024-05-01T12:00:00Z",
    ] {
        assert_eq!(
            error::<Timestamp>(json!(bad)),
            format!(
                r#"expected a timestamp (microseconds since the Unix epoch, or an RFC 3339 date-time such as "2024-05-01T12:30:00Z"), found "{bad}""#
            )
        );
    }
}

#[test]
fn arrays_fixed_arrays_options_and_results() {
    same(vec![1u16, 2, 3], json!([1, 2, 3]));
    same(b"hi".to_vec(), json!([104, 105]));
    same([4u8, 5], json!([4, 5]));
    same(None::<u32>, json!(null));
    same(Some(3u32), json!(3));
    same(Ok::<u8, String>(1), json!({"ok": 1}));
    same(Err::<u8, String>("no".into()), json!({"err": "no"}));
    same(vec![Some(1i64), None], json!([1, null]));
    // `Some(None)` and `None` differ.
    same(None::<Option<u8>>, json!(null));
    same(Some(None::<u8>), json!({"some": null}));
    same(Some(Some(4u8)), json!({"some": 4}));
    assert_eq!(
        error::<[u8; 2]>(json!([1, 2, 3])),
        "expected an array of 2 items, found an array of 3 items"
    );
    assert_eq!(
        error::<Vec<u8>>(json!("hi")),
        "expected an array, found \"hi\""
    );
    assert_eq!(
        error::<Vec<u8>>(json!([1, 2, 300])),
        "at [2]: expected u8 (0..=255), found 300"
    );
    assert_eq!(
        error::<Option<Option<u8>>>(json!(4)),
        r#"expected null or {"some": value}, found 4"#
    );
    assert_eq!(
        error::<Result<u8, String>>(json!({"ok": 1, "err": "x"})),
        r#"expected {"ok": value} or {"err": error}, found an object with keys `err`, `ok`"#
    );
    assert_eq!(
        error::<Result<u8, String>>(json!({"err": 5})),
        "at .err: expected a string, found 5"
    );
}

#[test]
fn structs_tuples_and_units() {
    same(Position { x: 1, y: 2 }, json!({"x": 1, "y": 2}));
    check(
        Position { x: 1, y: 2 },
        json!([1, 2]),
        json!({"x": 1, "y": 2}),
    );
    same(Pair(7, "seven".into()), json!([7, "seven"]));
    same((1u8, "two".to_owned(), true), json!([1, "two", true]));
    same(Unit, json!([]));
    check(Unit, json!({}), json!([]));
    same((), json!([]));
    assert_eq!(error::<Position>(json!({"x": 1})), "missing field `y`");
    assert_eq!(
        error::<Position>(json!({"x": 1, "y": 2, "z": 3})),
        "unknown field `z` (expected `x`, `y`)"
    );
    assert_eq!(
        error::<Position>(json!([1])),
        "expected an array of 2 items (`x`, `y`), found an array of 1 item"
    );
    assert_eq!(
        error::<Position>(json!(5)),
        "expected `json::Position` (an object with fields `x`, `y`), found 5"
    );
    assert_eq!(
        error::<Pair>(json!({"0": 7, "1": "seven"})),
        "expected `json::Pair` (an array of 2 items), found an object with keys `0`, `1`"
    );
    assert_eq!(
        error::<Pair>(json!([7, 8])),
        "at .1: expected a string, found 8"
    );
    assert_eq!(
        error::<Unit>(json!({"a": 1})),
        "unknown field `a` (expected none)"
    );
}

#[test]
fn enums_are_variant_names_or_single_key_objects() {
    same(Shape::Empty, json!("Empty"));
    check(Shape::Empty, json!({"Empty": []}), json!("Empty"));
    same(Shape::Circle(2.5), json!({"Circle": 2.5}));
    same(
        Shape::Rect {
            width: 3,
            height: 4,
        },
        json!({"Rect": {"width": 3, "height": 4}}),
    );
    let variants = "`Empty`, `Circle`, `Rect`";
    assert_eq!(
        error::<Shape>(json!("Square")),
        format!("unknown variant `Square` (expected one of {variants})")
    );
    assert_eq!(
        error::<Shape>(json!({"Square": 1})),
        format!("unknown variant `Square` (expected one of {variants})")
    );
    assert_eq!(
        error::<Shape>(json!("Circle")),
        r#"variant `Circle` has a payload: write {"Circle": ...}"#
    );
    assert_eq!(
        error::<Shape>(json!({"Circle": 1, "Empty": []})),
        format!("expected `json::Shape` (one of {variants}: a variant's name, or an object with a variant's name as its only key), found an object with keys `Circle`, `Empty`")
    );
    assert_eq!(
        error::<Shape>(json!({"Rect": {"width": 3, "height": -4}})),
        "at .Rect.height: expected u32 (0..=4294967295), found -4"
    );
}

#[test]
fn nested_user_types_round_trip() {
    let player = Player {
        id: 1 << 60,
        name: "ada".into(),
        position: Position { x: 3, y: 4 },
        shape: Shape::Rect {
            width: 5,
            height: 6,
        },
        tags: vec!["admin".into(), "early".into()],
        owner: Some(Identity::from_bytes([0xab; 32])),
        last_seen: Timestamp::from_micros_since_unix_epoch(1_700_000_000_000_000),
    };
    same(
        player.clone(),
        json!({
            "id": (1u64 << 60).to_string(),
            "name": "ada",
            "position": {"x": 3, "y": 4},
            "shape": {"Rect": {"width": 5, "height": 6}},
            "tags": ["admin", "early"],
            "owner": "ab".repeat(32),
            "last_seen": 1_700_000_000_000_000i64,
        }),
    );
    // What a view returns: a `Vec` of rows.
    let rows = vec![
        player.clone(),
        Player {
            owner: None,
            ..player
        },
    ];
    let (ty, typespace) = schema::<Vec<Player>>();
    let rendered = value_to_json(&ty, &typespace, &to_vec(&rows)).unwrap();
    assert_eq!(rendered[1]["owner"], Json::Null);
    assert_eq!(
        value_from_json(&ty, &typespace, &rendered).unwrap(),
        to_vec(&rows)
    );
    let tree = Tree {
        label: "root".into(),
        children: vec![Tree {
            label: "leaf".into(),
            children: vec![],
        }],
    };
    same(
        tree,
        json!({"label": "root", "children": [{"label": "leaf", "children": []}]}),
    );
    assert_eq!(
        error::<Player>(json!({
            "id": 1, "name": "ada", "position": {"x": 3, "y": 4}, "shape": "Empty",
            "tags": ["a", 2], "owner": null, "last_seen": 0,
        })),
        "at .tags[1]: expected a string, found 2"
    );
}

fn params() -> (Vec<ParamDef>, Typespace) {
    let mut typespace = Typespace::default();
    let param = |name: &str, ty| ParamDef {
        name: name.into(),
        ty,
    };
    let params = vec![
        param("text", String::schema(&mut typespace)),
        param("pos", Position::schema(&mut typespace)),
        param("shape", Option::<Shape>::schema(&mut typespace)),
    ];
    (params, typespace)
}

fn args_error(json: Json) -> JsonError {
    let (params, typespace) = params();
    args_from_json(&params, &typespace, &json).expect_err("the arguments are refused")
}

#[test]
fn arguments_by_position_or_by_name() {
    let (params, typespace) = params();
    let expected = to_vec(&(
        "hi".to_owned(),
        Position { x: 1, y: 2 },
        Some(Shape::Circle(1.0)),
    ));
    let positional = json!(["hi", {"x": 1, "y": 2}, {"Circle": 1.0}]);
    let named = json!({"shape": {"Circle": 1.0}, "pos": [1, 2], "text": "hi"});
    assert_eq!(
        args_from_json(&params, &typespace, &positional).unwrap(),
        expected
    );
    assert_eq!(
        args_from_json(&params, &typespace, &named).unwrap(),
        expected
    );
    assert_eq!(args_from_json(&[], &typespace, &json!([])).unwrap(), b"");
    assert_eq!(args_from_json(&[], &typespace, &json!({})).unwrap(), b"");
}

#[test]
fn argument_errors_name_the_argument_the_path_and_the_entry_point() {
    let wrong = args_error(json!([42, {"x": 1, "y": 2}, null]));
    assert_eq!(wrong.argument(), Some("text"));
    assert_eq!(wrong.path(), "");
    assert_eq!(wrong.message(), "expected a string, found 42");
    assert_eq!(
        wrong.to_string(),
        "argument `text`: expected a string, found 42"
    );
    assert_eq!(
        wrong.in_entry_point("reducer", "send").to_string(),
        "argument `text` of reducer `send`: expected a string, found 42"
    );

    let nested = args_error(json!({"text": "hi", "pos": {"x": -1, "y": 2}, "shape": null}));
    assert_eq!(nested.argument(), Some("pos"));
    assert_eq!(nested.path(), ".x");
    assert_eq!(
        nested.to_string(),
        "argument `pos`.x: expected u32 (0..=4294967295), found -1"
    );
    assert_eq!(
        nested.in_entry_point("reducer", "move").to_string(),
        "argument `pos`.x of reducer `move`: expected u32 (0..=4294967295), found -1"
    );

    let deep = args_error(json!(["hi", [1, 2], {"Rect": {"width": 1, "height": "2"}}]));
    assert_eq!(
        deep.to_string(),
        "argument `shape`.Rect.height: expected u32 (0..=4294967295), found \"2\""
    );

    let missing = args_error(json!({"text": "hi", "shape": null}));
    assert_eq!(missing.argument(), None);
    assert_eq!(
        missing.in_entry_point("reducer", "send").to_string(),
        "reducer `send`: missing argument `pos`"
    );
    assert_eq!(
        args_error(json!({"text": "hi", "pos": [1, 2], "shape": null, "colour": 1}))
            .in_entry_point("procedure", "paint")
            .to_string(),
        "procedure `paint`: unknown argument `colour` (expected `text`, `pos`, `shape`)"
    );
    assert_eq!(
        args_error(json!(["hi"])).to_string(),
        "expected an array of 3 items (`text`, `pos`, `shape`), found an array of 1 item"
    );
    assert_eq!(
        args_error(json!("hi")).to_string(),
        "expected the arguments as an array or an object (`text`, `pos`, `shape`), found \"hi\""
    );
}

#[test]
fn long_strings_are_shortened_in_messages() {
    let long = "x".repeat(100);
    assert_eq!(
        error::<u8>(json!(long)),
        format!("expected u8 (0..=255), found \"{}\"…", "x".repeat(40))
    );
}

#[test]
fn hostile_types_are_refused_without_a_panic() {
    let typespace = |types: Vec<AlgebraicType>| Typespace {
        types: types
            .into_iter()
            .enumerate()
            .map(|(index, ty)| TypeDef {
                name: format!("T{index}"),
                ty,
            })
            .collect(),
    };
    let unresolved =
        "the type refers to a typespace entry that does not exist (or to a cycle of references)";

    // A dangling reference, and a cycle of references.
    let empty = typespace(vec![]);
    let message = value_from_json(&AlgebraicType::Ref(3), &empty, &json!(1))
        .unwrap_err()
        .to_string();
    assert_eq!(message, unresolved);
    let cycle = typespace(vec![AlgebraicType::Ref(1), AlgebraicType::Ref(0)]);
    let message = value_from_json(&AlgebraicType::Ref(0), &cycle, &json!(1))
        .unwrap_err()
        .to_string();
    assert_eq!(message, unresolved);
    assert!(value_to_json(&AlgebraicType::Ref(0), &cycle, &[1]).is_err());

    // A struct that contains itself: no JSON can satisfy it, and none overflows the stack.
    let itself = typespace(vec![AlgebraicType::Product(vec![Field::named(
        "next",
        AlgebraicType::Ref(0),
    )])]);
    let mut deep = json!({});
    for _ in 0..200 {
        deep = json!({ "next": deep });
    }
    let error = value_from_json(&AlgebraicType::Ref(0), &itself, &deep).unwrap_err();
    assert_eq!(
        error.message(),
        format!("values are nested more than {MAX_DEPTH} levels deep")
    );

    // A recursive type with a document nested past the limit.
    let (ty, tree) = schema::<Tree>();
    let mut nested = json!({"label": "leaf", "children": []});
    for _ in 0..MAX_DEPTH {
        nested = json!({"label": "node", "children": [nested]});
    }
    let error = value_from_json(&ty, &tree, &nested).unwrap_err();
    assert!(error.message().contains("nested more than"), "{error}");

    // A sum whose variant is past the 256 a tag can select.
    let wide = AlgebraicType::Sum(
        (0..300)
            .map(|index| Field::named(&format!("V{index}"), AlgebraicType::Product(vec![])))
            .collect(),
    );
    let empty = typespace(vec![]);
    assert_eq!(
        value_from_json(&wide, &empty, &json!("V255")).unwrap(),
        [255]
    );
    assert_eq!(
        value_from_json(&wide, &empty, &json!("V256"))
            .unwrap_err()
            .to_string(),
        "variant `V256` is at position 256, past the 256 a tag can select"
    );

    // A fixed array longer than any document.
    let huge = AlgebraicType::FixedArray(Box::new(AlgebraicType::U8), u32::MAX);
    assert_eq!(
        value_from_json(&huge, &empty, &json!([1]))
            .unwrap_err()
            .to_string(),
        "expected an array of 4294967295 items, found an array of 1 item"
    );

    // Unnamed variants are named by their position.
    let unnamed = AlgebraicType::Sum(vec![
        Field::unnamed(AlgebraicType::Product(vec![])),
        Field::unnamed(AlgebraicType::U8),
    ]);
    assert_eq!(value_from_json(&unnamed, &empty, &json!("0")).unwrap(), [0]);
    assert_eq!(
        value_to_json(&unnamed, &empty, &[1, 9]).unwrap(),
        json!({"1": 9})
    );
}

#[test]
fn bytes_that_do_not_match_the_type_are_refused() {
    let (ty, typespace) = schema::<Position>();
    let bytes = to_vec(&Position { x: 1, y: 2 });
    let short = value_to_json(&ty, &typespace, &bytes[..5]).unwrap_err();
    assert!(
        short
            .to_string()
            .starts_with("the bytes are not a value of the expected type: the input ended"),
        "{short}"
    );
    let mut long = bytes.clone();
    long.push(0);
    assert_eq!(
        value_to_json(&ty, &typespace, &long)
            .unwrap_err()
            .to_string(),
        "the bytes are not a value of the expected type: 1 bytes were left after the value"
    );
    let (ty, typespace) = schema::<Shape>();
    assert!(value_to_json(&ty, &typespace, &[7]).is_err());
}
