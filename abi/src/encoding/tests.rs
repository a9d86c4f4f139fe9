//! Round trips, exact bytes, malformed input and the plain path.

use super::*;
use crate::{ConnectionId, Identity, SchemaType, Timestamp};

fn round_trip<T: Encode + Decode + PartialEq + core::fmt::Debug>(value: T) {
    let bytes = to_vec(&value);
    assert_eq!(
        value.encoded_len(),
        bytes.len(),
        "the size known ahead: {value:?}"
    );
    assert_eq!(
        from_slice::<T>(&bytes).as_ref(),
        Ok(&value),
        "bytes: {bytes:?}"
    );
}

#[test]
fn numbers_are_little_endian_at_their_width() {
    assert_eq!(to_vec(&0x0102_0304u32), [4, 3, 2, 1]);
    assert_eq!(to_vec(&-1i16), [0xff, 0xff]);
    assert_eq!(to_vec(&1u128).len(), 16);
    assert_eq!(to_vec(&1.5f64), 1.5f64.to_le_bytes());
    round_trip(u8::MAX);
    round_trip(i8::MIN);
    round_trip(u64::MAX);
    round_trip(i128::MIN);
    round_trip(u128::MAX);
    round_trip(f32::MIN_POSITIVE);
    round_trip(-0.0f64);
}

#[test]
fn strings_and_vectors_have_a_u32_count() {
    assert_eq!(to_vec("hé"), [3, 0, 0, 0, b'h', 0xc3, 0xa9]);
    assert_eq!(to_vec(&vec![1u16, 2]), [2, 0, 0, 0, 1, 0, 2, 0]);
    round_trip(String::new());
    round_trip("a longer string with ünïcödé".to_string());
    round_trip(vec![vec![1u8, 2], vec![], vec![3]]);
    round_trip(vec!["a".to_string(), "bc".to_string()]);
    round_trip(Box::<str>::from("boxed"));
}

#[test]
fn fixed_arrays_have_no_count() {
    assert_eq!(to_vec(&[1u8, 2, 3]), [1, 2, 3]);
    round_trip([7u32; 5]);
    round_trip([String::from("x"), String::from("y")]);
}

#[test]
fn options_results_and_tuples() {
    assert_eq!(to_vec(&None::<u8>), [0]);
    assert_eq!(to_vec(&Some(5u8)), [1, 5]);
    assert_eq!(to_vec(&Ok::<u8, u8>(5)), [0, 5]);
    assert_eq!(to_vec(&Err::<u8, u8>(5)), [1, 5]);
    assert_eq!(to_vec(&(1u8, true, 2u16)), [1, 1, 2, 0]);
    round_trip(Some(Some(3i64)));
    round_trip(Err::<String, String>("no".into()));
    round_trip((1u8, "two".to_string(), [3u16; 2], Some(4u64)));
    round_trip(());
}

#[test]
fn built_in_types() {
    let identity = Identity::from_bytes([7; 32]);
    assert_eq!(to_vec(&identity), [7; 32]);
    round_trip(identity);
    round_trip(ConnectionId::from_bytes([9; 16]));
    round_trip(Timestamp::from_micros_since_unix_epoch(-5));
    assert_eq!(Identity::from_words(identity.to_words()), identity);
    let connection = ConnectionId::from_bytes(core::array::from_fn(|i| i as u8));
    assert_eq!(ConnectionId::from_words(connection.to_words()), connection);
}

#[test]
fn truncated_input_is_an_error_not_a_panic() {
    let bytes = to_vec(&(7u64, "hello".to_string(), vec![1u32, 2, 3]));
    for len in 0..bytes.len() {
        let result = from_slice::<(u64, String, Vec<u32>)>(&bytes[..len]);
        assert!(
            matches!(result, Err(DecodeError::UnexpectedEnd { .. })),
            "prefix {len}: {result:?}"
        );
    }
}

#[test]
fn malformed_input_is_a_typed_error() {
    assert_eq!(from_slice::<bool>(&[2]), Err(DecodeError::InvalidBool(2)));
    assert_eq!(
        from_slice::<String>(&[2, 0, 0, 0, 0xff, 0xfe]),
        Err(DecodeError::InvalidUtf8)
    );
    assert_eq!(
        from_slice::<Option<u8>>(&[3, 0]),
        Err(DecodeError::InvalidTag {
            tag: 3,
            type_name: "Option"
        })
    );
    assert_eq!(
        from_slice::<u8>(&[1, 2]),
        Err(DecodeError::TrailingBytes(1))
    );
}

#[test]
fn forged_lengths_do_not_allocate_or_panic() {
    // A count of four billion elements with four bytes behind it.
    let forged = [0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4];
    assert!(from_slice::<Vec<u64>>(&forged).is_err());
    assert!(from_slice::<Vec<String>>(&forged).is_err());
    assert!(from_slice::<Vec<Vec<u8>>>(&forged).is_err());
    assert!(from_slice::<String>(&forged).is_err());
}

#[derive(Clone, Copy, Debug, PartialEq, crate::SchemaType)]
#[wasmod(crate = crate)]
#[repr(C)]
struct Point {
    x: u64,
    y: u64,
    id: u32,
    tag: [u8; 4],
}

#[derive(Clone, Copy, Debug, PartialEq, crate::SchemaType)]
#[wasmod(crate = crate)]
#[repr(C)]
struct Padded {
    id: u32,
    x: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, crate::SchemaType)]
#[wasmod(crate = crate)]
struct Unordered {
    x: u64,
    y: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, crate::SchemaType)]
#[wasmod(crate = crate)]
#[repr(C, packed)]
struct Packed {
    id: u32,
    x: u64,
}

#[test]
fn plain_structs_are_detected_at_compile_time() {
    assert!(Point::LAYOUT.is_plain());
    assert!(Packed::LAYOUT.is_plain());
    assert!(!Padded::LAYOUT.is_plain(), "padding between fields");
    assert!(
        !Unordered::LAYOUT.is_plain(),
        "no #[repr(C)]: the field order is not fixed"
    );
    assert!(<[Point; 3]>::LAYOUT.is_plain());
    assert!(
        !<(u32, u32)>::LAYOUT.is_plain(),
        "tuples have no fixed layout"
    );
    assert!(!bool::LAYOUT.is_plain(), "not every byte is a bool");
}

#[test]
fn plain_and_structured_encodings_are_the_same_bytes() {
    let point = Point {
        x: 1,
        y: 2,
        id: 3,
        tag: *b"abcd",
    };
    let mut expected = Vec::new();
    (point.x, point.y, point.id, point.tag).encode(&mut expected);
    assert_eq!(to_vec(&point), expected);
    round_trip(point);

    let packed = Packed { id: 9, x: 10 };
    assert_eq!(to_vec(&packed), to_vec(&(9u32, 10u64)));
    round_trip(packed);
    round_trip(Padded { id: 1, x: 2 });
    assert_eq!(to_vec(&Padded { id: 1, x: 2 }), to_vec(&(1u32, 2u64)));
}

#[test]
fn plain_vectors_decode_in_one_copy_and_check_their_length() {
    let points: Vec<Point> = (0..100)
        .map(|i| Point {
            x: i,
            y: i * 2,
            id: i as u32,
            tag: [i as u8; 4],
        })
        .collect();
    let bytes = to_vec(&points);
    assert_eq!(bytes.len(), 4 + 100 * core::mem::size_of::<Point>());
    assert_eq!(from_slice::<Vec<Point>>(&bytes), Ok(points));
    assert!(matches!(
        from_slice::<Vec<Point>>(&bytes[..bytes.len() - 1]),
        Err(DecodeError::UnexpectedEnd { .. })
    ));
    let forged = [0xff, 0xff, 0xff, 0xff, 0, 0, 0];
    assert!(from_slice::<Vec<Point>>(&forged).is_err());
}

#[derive(Clone, Debug, PartialEq, crate::SchemaType)]
#[wasmod(crate = crate)]
enum Shape {
    Empty,
    Circle(u32),
    Rect { w: u32, h: u32 },
    Named(String, Vec<Shape>),
}

#[test]
fn enums_are_a_tag_then_the_payload() {
    assert_eq!(to_vec(&Shape::Empty), [0]);
    assert_eq!(to_vec(&Shape::Circle(5)), [1, 5, 0, 0, 0]);
    assert_eq!(
        to_vec(&Shape::Rect { w: 1, h: 2 }),
        [2, 1, 0, 0, 0, 2, 0, 0, 0]
    );
    round_trip(Shape::Named(
        "n".into(),
        vec![Shape::Empty, Shape::Circle(1)],
    ));
    assert_eq!(
        from_slice::<Shape>(&[4]),
        Err(DecodeError::InvalidTag {
            tag: 4,
            type_name: "Shape"
        })
    );
}

#[derive(Clone, Debug, PartialEq, crate::SchemaType)]
#[wasmod(crate = crate)]
struct Wrapper<T> {
    inner: T,
    list: Vec<T>,
}

#[test]
fn generic_types_derive_with_bounds() {
    round_trip(Wrapper {
        inner: 1u8,
        list: vec![2, 3],
    });
    round_trip(Wrapper {
        inner: "a".to_string(),
        list: vec![],
    });
}

#[test]
fn schemas_register_named_types_once_and_allow_recursion() {
    use crate::schema::{AlgebraicType, Typespace};
    let mut typespace = Typespace::default();
    let shape = Shape::schema(&mut typespace);
    assert_eq!(shape, AlgebraicType::Ref(0));
    assert_eq!(Shape::schema(&mut typespace), AlgebraicType::Ref(0));
    assert_eq!(typespace.types.len(), 1);
    let AlgebraicType::Sum(variants) = &typespace.types[0].ty else {
        panic!("not a sum")
    };
    let names: Vec<_> = variants
        .iter()
        .map(|variant| variant.name.as_deref())
        .collect();
    assert_eq!(
        names,
        [Some("Empty"), Some("Circle"), Some("Rect"), Some("Named")]
    );
    assert_eq!(variants[1].ty, AlgebraicType::U32);
    let AlgebraicType::Product(named) = &variants[3].ty else {
        panic!("not a product")
    };
    assert_eq!(
        named[1].ty,
        AlgebraicType::Array(Box::new(AlgebraicType::Ref(0)))
    );
    assert_eq!(typespace.resolve(&shape), Some(&typespace.types[0].ty));
    assert_eq!(typespace.resolve(&AlgebraicType::Ref(9)), None);
}

#[test]
fn the_description_round_trips() {
    use crate::description::*;
    use crate::schema::Typespace;
    let mut typespace = Typespace::default();
    let row_type = Point::schema(&mut typespace);
    let def = ModuleDef {
        typespace,
        tables: vec![TableDef {
            name: "point".into(),
            row_type,
            columns: vec![ColumnDef {
                name: "x".into(),
                ty: crate::AlgebraicType::U64,
                default: Some(7u64.to_le_bytes().to_vec()),
            }],
            primary_key: Some(0),
            indexes: vec![IndexDef {
                name: "x".into(),
                columns: vec![0],
                unique: true,
            }],
            auto_inc: vec![0],
            public: true,
            schedule: Some(ScheduleDef {
                reducer: "tick".into(),
                at: 0,
            }),
            visibility: Some("x = 7".into()),
        }],
        reducers: vec![ReducerDef {
            name: "init".into(),
            params: vec![],
            lifecycle: Some(Lifecycle::Init),
        }],
        procedures: vec![],
        views: vec![],
        anonymous_views: vec![],
        http_handlers: vec![HttpHandlerDef {
            name: "stats".into(),
            method: crate::http::Method::Get,
            path: "/stats".into(),
        }],
    };
    let versioned = encode(&def);
    assert_eq!(versioned[..4], FORMAT_VERSION.to_le_bytes());
    assert_eq!(decode(&versioned), Ok(def.clone()));
    round_trip(def);
}

#[test]
fn a_description_of_another_format_version_is_refused_before_decoding() {
    use crate::description::*;
    let mut newer = (FORMAT_VERSION + 1).to_le_bytes().to_vec();
    newer.extend_from_slice(&[0xde, 0xad]);
    let error = decode(&newer).unwrap_err();
    assert_eq!(error, DescriptionError::Version(FORMAT_VERSION + 1));
    assert_eq!(
        error.to_string(),
        format!(
            "the module's description is format version {}; this host reads version {FORMAT_VERSION}: upgrade the host",
            FORMAT_VERSION + 1
        )
    );
    let zero = encode(&ModuleDef::default())
        .iter()
        .enumerate()
        .map(|(index, &byte)| if index < 4 { 0 } else { byte })
        .collect::<Vec<u8>>();
    assert_eq!(decode(&zero), Err(DescriptionError::Version(0)));
    let mut older = 1u32.to_le_bytes().to_vec();
    older.extend_from_slice(&encode(&ModuleDef::default())[4..]);
    let error = decode(&older).unwrap_err();
    assert_eq!(error, DescriptionError::Version(1));
    assert_eq!(
        error.to_string(),
        format!("the module's description is format version 1, older than the version {FORMAT_VERSION} this host reads: rebuild the module against this version of wasmod")
    );
    assert!(matches!(
        decode(&[1, 0]),
        Err(DescriptionError::Decode(DecodeError::UnexpectedEnd { .. }))
    ));
    let mut trailing = encode(&ModuleDef::default());
    trailing.push(0);
    assert_eq!(
        decode(&trailing),
        Err(DescriptionError::Decode(DecodeError::TrailingBytes(1)))
    );
}

/// A row with owned strings, as a table declares it.
#[derive(Debug, PartialEq, SchemaType)]
#[wasmod(crate = crate)]
struct OwnedRow {
    id: u32,
    score: u64,
    name: String,
    blob: Vec<u8>,
}

/// The same row, borrowing its strings from the input.
#[derive(Debug, PartialEq, crate::DecodeBorrowed)]
#[wasmod(crate = crate)]
struct BorrowedRow<'a> {
    id: u32,
    score: u64,
    name: &'a str,
    blob: &'a [u8],
}

fn owned_row() -> OwnedRow {
    OwnedRow {
        id: 7,
        score: 1 << 40,
        name: "héllo".into(),
        blob: vec![0, 1, 2, 255],
    }
}

#[test]
fn a_borrowing_row_reads_the_owned_rows_encoding_in_place() {
    let bytes = to_vec(&owned_row());
    let row: BorrowedRow<'_> = from_slice_borrowed(&bytes).expect("decodes");
    assert_eq!(
        row,
        BorrowedRow {
            id: 7,
            score: 1 << 40,
            name: "héllo",
            blob: &[0, 1, 2, 255],
        }
    );
    let range = bytes.as_ptr_range();
    assert!(
        range.contains(&row.name.as_ptr()),
        "the name is the input's bytes"
    );
    assert!(range.contains(&row.blob.as_ptr()), "so is the blob");
    let text = to_vec("text");
    let alone: &str = from_slice_borrowed(&text).expect("a &str");
    assert_eq!(alone, "text");
}

#[test]
fn a_borrowing_row_refuses_what_the_owned_row_refuses() {
    let bytes = to_vec(&owned_row());
    for len in 0..bytes.len() {
        assert!(
            from_slice_borrowed::<BorrowedRow<'_>>(&bytes[..len]).is_err(),
            "{len} of {} bytes",
            bytes.len()
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        from_slice_borrowed::<BorrowedRow<'_>>(&longer),
        Err(DecodeError::TrailingBytes(1))
    ));
    let mut not_utf8 = bytes;
    not_utf8[16] = 0xff;
    assert_eq!(
        from_slice_borrowed::<BorrowedRow<'_>>(&not_utf8),
        Err(DecodeError::InvalidUtf8)
    );
    assert_eq!(
        from_slice::<OwnedRow>(&not_utf8),
        Err(DecodeError::InvalidUtf8)
    );
}
