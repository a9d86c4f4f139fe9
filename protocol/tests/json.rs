//! JSON ↔ encoded values: the bytes agree with the static encoding both ways, every mapping
//! rule of the module docs holds, every error names what it should, and hostile types and
//! documents are refused without a panic.
//!
//! Every rendering goes through [`render`], which also checks that the streaming writer's text
//! is byte for byte what `serde_json` writes for the same JSON: the text the tree-based mapping
//! (`abi::Value`, then `serde_json::Value`, then `serde_json::to_string`) produced before it.

use serde_json::{json, Value as Json};
use wasmod_abi::encoding::to_vec;
use wasmod_abi::value::MAX_DEPTH;
use wasmod_abi::{
    AlgebraicType, ConnectionId, Field, Identity, ParamDef, SchemaType, Timestamp, TypeDef,
    Typespace,
};
use wasmod_protocol::json::{
    args_from_json, value_from_json, value_json, JsonError, MAX_SAFE_INTEGER,
};

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

/// Renders the encoded `bytes` with the streaming writer, and checks that its text is what
/// `serde_json` writes for the JSON it holds.
#[track_caller]
fn render(ty: &AlgebraicType, typespace: &Typespace, bytes: &[u8]) -> Result<Json, JsonError> {
    let text = value_json(ty, typespace, bytes)?;
    let json: Json = serde_json::from_str(text.get()).expect("the writer writes JSON");
    assert_eq!(text.get(), serde_json::to_string(&json).unwrap());
    Ok(json)
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
    assert_eq!(render(&ty, &typespace, &bytes).unwrap(), rendered);
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

/// The ranges in integer errors are written out in the sources (formatting `MIN` and `MAX`
/// would link every width's formatting into the browser client): each is checked against
/// the formatted one, with a value past each end.
#[test]
fn integer_errors_name_each_width_exact_range() {
    fn range<T: SchemaType + std::fmt::Display>(min: T, max: T, wide: bool) {
        let strings = if wide {
            ", as a number or a decimal string"
        } else {
            ""
        };
        let name = std::any::type_name::<T>();
        let expected = format!("expected {name} ({min}..={max}{strings}), found");
        // Past each end: a digit more (or -1 for an unsigned type).
        let below = if min.to_string() == "0" {
            "-1".to_owned()
        } else {
            format!("{min}0")
        };
        for past in [below, format!("{max}0")] {
            let json = if wide {
                json!(past)
            } else {
                serde_json::from_str(&past).unwrap()
            };
            let error = error::<T>(json);
            assert!(error.starts_with(&expected), "{error}");
        }
    }
    range(i8::MIN, i8::MAX, false);
    range(u8::MIN, u8::MAX, false);
    range(i16::MIN, i16::MAX, false);
    range(u16::MIN, u16::MAX, false);
    range(i32::MIN, i32::MAX, false);
    range(u32::MIN, u32::MAX, false);
    range(i64::MIN, i64::MAX, true);
    range(u64::MIN, u64::MAX, true);
    range(i128::MIN, i128::MAX, true);
    range(u128::MIN, u128::MAX, true);
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
    assert_eq!(render(&ty, &typespace, &nan).unwrap(), json!("NaN"));
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
    let rendered = render(&ty, &typespace, &to_vec(&rows)).unwrap();
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
    assert!(render(&AlgebraicType::Ref(0), &cycle, &[1]).is_err());

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
    assert_eq!(render(&unnamed, &empty, &[1, 9]).unwrap(), json!({"1": 9}));
}

#[test]
fn bytes_that_do_not_match_the_type_are_refused() {
    let (ty, typespace) = schema::<Position>();
    let bytes = to_vec(&Position { x: 1, y: 2 });
    let short = render(&ty, &typespace, &bytes[..5]).unwrap_err();
    assert!(
        short
            .to_string()
            .starts_with("the bytes are not a value of the expected type: the input ended"),
        "{short}"
    );
    let mut long = bytes.clone();
    long.push(0);
    assert_eq!(
        render(&ty, &typespace, &long).unwrap_err().to_string(),
        "the bytes are not a value of the expected type: 1 bytes were left after the value"
    );
    let (ty, typespace) = schema::<Shape>();
    assert!(render(&ty, &typespace, &[7]).is_err());
}

#[test]
fn strings_are_escaped_as_serde_json_escapes_them() {
    same(
        "quote \" backslash \\ slash / newline \n tab \t nul \u{0} bell \u{7} del \u{7f}"
            .to_owned(),
        json!("quote \" backslash \\ slash / newline \n tab \t nul \u{0} bell \u{7} del \u{7f}"),
    );
    same(
        "é 😀 \u{2028} \u{fffd}".to_owned(),
        json!("é 😀 \u{2028} \u{fffd}"),
    );
    same(String::new(), json!(""));
    let (ty, typespace) = schema::<String>();
    let mut not_utf8 = to_vec(&"ab".to_owned());
    not_utf8[4] = 0xff;
    assert_eq!(
        render(&ty, &typespace, &not_utf8).unwrap_err().to_string(),
        "the bytes are not a value of the expected type: a string was not valid UTF-8"
    );
}

#[test]
fn nested_options_sums_arrays_and_empty_ones() {
    same(Vec::<Position>::new(), json!([]));
    same(vec![Vec::<u8>::new(), vec![]], json!([[], []]));
    same(
        vec![Some(Shape::Empty), None, Some(Shape::Circle(0.5))],
        json!(["Empty", null, {"Circle": 0.5}]),
    );
    same(
        Some(vec![Some(Some(1u8)), Some(None), None]),
        json!([{"some": 1}, {"some": null}, null]),
    );
    same(Some(Some(Some(2u8))), json!({"some": {"some": 2}}));
    same(
        Ok::<Vec<Shape>, Option<String>>(vec![Shape::Rect {
            width: 1,
            height: 2,
        }]),
        json!({"ok": [{"Rect": {"width": 1, "height": 2}}]}),
    );
    same(
        Err::<Vec<Shape>, Option<String>>(None),
        json!({"err": null}),
    );
    same([[1u8, 2], [3, 4]], json!([[1, 2], [3, 4]]));
    same((Unit, (), vec![(); 3]), json!([[], [], [[], [], []]]));
}

#[test]
fn more_numbers_timestamps_and_identities() {
    same(i128::MAX, json!(i128::MAX.to_string()));
    same(u128::MIN, json!(0));
    same(
        -(MAX_SAFE_INTEGER as i128),
        json!(-(MAX_SAFE_INTEGER as i64)),
    );
    same(
        MAX_SAFE_INTEGER as u128 + 1,
        json!((MAX_SAFE_INTEGER + 1).to_string()),
    );
    same(-0.0f64, json!(-0.0));
    same(1e300f64, json!(1e300));
    same(f64::MIN_POSITIVE, json!(f64::MIN_POSITIVE));
    same(f32::MAX, json!(3.4028235e38));
    same(f32::NEG_INFINITY, json!("-Infinity"));
    same(1.0f32 / 3.0, json!(0.33333334));
    let (ty, typespace) = schema::<f32>();
    assert_eq!(
        render(&ty, &typespace, &f32::NAN.to_le_bytes()).unwrap(),
        json!("NaN")
    );
    same(
        Timestamp::from_micros_since_unix_epoch(i64::MAX),
        json!(i64::MAX.to_string()),
    );
    same(Identity::ZERO, json!("0".repeat(64)));
    same(
        vec![ConnectionId::ZERO],
        json!(["00000000000000000000000000000000"]),
    );
}

#[derive(Clone, Debug, PartialEq, SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Sorted {
    a: u8,
    b: Unsorted,
    c: Vec<Unsorted>,
}

#[derive(Clone, Debug, PartialEq, SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Unsorted {
    zeta: String,
    alpha: Option<Position>,
    mid: Shape,
}

#[test]
fn struct_keys_are_written_in_sorted_order_at_every_level() {
    let inner = |zeta: &str| Unsorted {
        zeta: zeta.into(),
        alpha: Some(Position { x: 1, y: 2 }),
        mid: Shape::Circle(1.5),
    };
    let value = Sorted {
        a: 7,
        b: inner("b"),
        c: vec![inner("c0"), inner("c1")],
    };
    let (ty, typespace) = schema::<Sorted>();
    let text = value_json(&ty, &typespace, &to_vec(&value)).unwrap();
    let unsorted = r#"{"alpha":{"x":1,"y":2},"mid":{"Circle":1.5},"zeta":"#;
    assert_eq!(
        text.get(),
        format!(r#"{{"a":7,"b":{unsorted}"b"}},"c":[{unsorted}"c0"}},{unsorted}"c1"}}]}}"#)
    );
    same(
        value,
        json!({"a": 7, "b": {"zeta": "b", "alpha": {"x": 1, "y": 2}, "mid": {"Circle": 1.5}},
               "c": [{"zeta": "c0", "alpha": {"x": 1, "y": 2}, "mid": {"Circle": 1.5}},
                     {"zeta": "c1", "alpha": {"x": 1, "y": 2}, "mid": {"Circle": 1.5}}]}),
    );
}

#[test]
fn a_field_named_twice_is_written_once_with_its_last_value_as_in_a_map() {
    let twice = AlgebraicType::Product(vec![
        Field::named("b", AlgebraicType::U8),
        Field::named("a", AlgebraicType::U8),
        Field::named("b", AlgebraicType::String),
    ]);
    let mut bytes = vec![1, 2];
    bytes.extend(to_vec(&"last".to_owned()));
    let text = value_json(&twice, &Typespace::default(), &bytes).unwrap();
    assert_eq!(text.get(), r#"{"a":2,"b":"last"}"#);
}

#[test]
fn rows_are_written_as_an_array_and_a_bad_row_is_named() {
    use wasmod_protocol::json::{rows_json, write_rows};
    let (ty, typespace) = schema::<Position>();
    let rows = [
        to_vec(&Position { x: 1, y: 2 }),
        to_vec(&Position { x: 3, y: 4 }),
    ];
    let text = rows_json(&ty, &typespace, rows.iter().map(Vec::as_slice)).unwrap();
    assert_eq!(text.get(), r#"[{"x":1,"y":2},{"x":3,"y":4}]"#);
    assert_eq!(rows_json(&ty, &typespace, []).unwrap().get(), "[]");

    let mut out = b"before".to_vec();
    let bad = [rows[0].clone(), vec![1, 2, 3]];
    let error = write_rows(&mut out, &ty, &typespace, bad.iter().map(Vec::as_slice)).unwrap_err();
    assert_eq!(error.path(), "[1]");
    assert!(
        error
            .to_string()
            .starts_with("at [1]: the bytes are not a value of the expected type"),
        "{error}"
    );
    assert_eq!(out, b"before", "a failed write leaves the output as it was");
}

#[test]
fn bytes_nested_too_deeply_or_counting_too_much_are_refused() {
    // A tree 40 levels deep nests 80 containers (a struct and a `Vec` per level).
    let mut tree = Tree {
        label: "leaf".into(),
        children: vec![],
    };
    for _ in 0..40 {
        tree = Tree {
            label: "node".into(),
            children: vec![tree],
        };
    }
    let (ty, typespace) = schema::<Tree>();
    let error = render(&ty, &typespace, &to_vec(&tree)).unwrap_err();
    assert!(
        error.to_string().ends_with("values are nested too deeply"),
        "{error}"
    );

    // Zero-sized items take no bytes; their count is bounded all the same.
    let (ty, typespace) = schema::<Vec<()>>();
    assert_eq!(
        render(&ty, &typespace, &u32::MAX.to_le_bytes())
            .unwrap_err()
            .to_string(),
        "the bytes are not a value of the expected type: a length prefix is too large"
    );
    let (ty, typespace) = schema::<Vec<u64>>();
    assert!(render(&ty, &typespace, &u32::MAX.to_le_bytes()).is_err());
}

#[test]
fn values_with_more_elements_than_their_bytes_allow_are_refused() {
    // Four bytes of count, five arrays of 256 × 256 units: 329,000 elements.
    let (ty, typespace) = schema::<Vec<[[(); 256]; 256]>>();
    assert_eq!(
        render(&ty, &typespace, &5u32.to_le_bytes())
            .unwrap_err()
            .to_string(),
        "the bytes are not a value of the expected type: the value has more elements than its bytes allow"
    );
    // One such array is within the allowance.
    let one = render(&ty, &typespace, &1u32.to_le_bytes()).unwrap();
    assert_eq!(one[0].as_array().map(Vec::len), Some(256));

    // 100 full arrays of units in 404 bytes: 6.5 million elements.
    let (ty, typespace) = schema::<Vec<Vec<()>>>();
    let mut bytes = 100u32.to_le_bytes().to_vec();
    for _ in 0..100 {
        bytes.extend_from_slice(&(1u32 << 16).to_le_bytes());
    }
    assert!(render(&ty, &typespace, &bytes).is_err());
}

/// A small deterministic generator (xorshift), so that the fuzz test needs no dependency.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

/// Whether `bytes` is exactly one value of `ty` to the reference decoder.
fn decodes(ty: &AlgebraicType, typespace: &Typespace, bytes: &[u8]) -> bool {
    let mut reader = wasmod_abi::Reader::new(bytes);
    wasmod_abi::Value::decode(ty, typespace, &mut reader).is_ok() && reader.finish().is_ok()
}

#[test]
fn random_and_damaged_bytes_never_panic_and_are_accepted_as_the_decoder_accepts_them() {
    let player = Player {
        id: 9,
        name: "ada".into(),
        position: Position { x: 3, y: 4 },
        shape: Shape::Rect {
            width: 5,
            height: 6,
        },
        tags: vec!["a".into(), "b".into()],
        owner: Some(Identity::from_bytes([7; 32])),
        last_seen: Timestamp::from_micros_since_unix_epoch(1),
    };
    let tree = Tree {
        label: "root".into(),
        children: vec![Tree {
            label: "leaf".into(),
            children: vec![],
        }],
    };
    let samples: Vec<(AlgebraicType, Typespace, Vec<u8>)> = vec![
        {
            let (ty, ts) = schema::<Player>();
            (ty, ts, to_vec(&player))
        },
        {
            let (ty, ts) = schema::<Tree>();
            (ty, ts, to_vec(&tree))
        },
        {
            let (ty, ts) = schema::<Vec<Option<Shape>>>();
            (ty, ts, to_vec(&vec![Some(Shape::Circle(1.0)), None]))
        },
        {
            let (ty, ts) = schema::<Option<Option<Result<i128, String>>>>();
            (ty, ts, to_vec(&Some(Some(Err::<i128, String>("x".into())))))
        },
    ];
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    for (ty, typespace, valid) in &samples {
        for round in 0..3000 {
            let bytes: Vec<u8> = if round % 3 == 0 {
                (0..random.below(64)).map(|_| random.next() as u8).collect()
            } else {
                let mut damaged = valid.clone();
                if round % 3 == 1 && !damaged.is_empty() {
                    let at = random.below(damaged.len());
                    damaged[at] = random.next() as u8;
                } else {
                    damaged.truncate(random.below(damaged.len() + 1));
                }
                damaged
            };
            let rendered = value_json(ty, typespace, &bytes);
            assert_eq!(
                rendered.is_ok(),
                decodes(ty, typespace, &bytes),
                "{bytes:?}: {rendered:?}"
            );
        }
    }
}
