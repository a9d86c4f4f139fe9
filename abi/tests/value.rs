//! `Value` against the static encoding: same bytes both ways, and hostile input refused.

use wasmod_abi::encoding::to_vec;
use wasmod_abi::value::{MAX_DEPTH, MAX_ZERO_SIZED_ELEMENTS};
use wasmod_abi::{
    AlgebraicType, ConnectionId, DecodeError, Field, Identity, Reader, SchemaType, Timestamp,
    TypeDef, Typespace, Value,
};

#[derive(Clone, Debug, PartialEq, SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Player {
    id: u64,
    name: String,
    position: (f32, f32),
    tags: Vec<String>,
    owner: Option<Identity>,
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
struct Tree {
    label: String,
    children: Vec<Tree>,
}

fn decode(ty: &AlgebraicType, typespace: &Typespace, bytes: &[u8]) -> Result<Value, DecodeError> {
    let mut reader = Reader::new(bytes);
    let value = Value::decode(ty, typespace, &mut reader)?;
    reader.finish()?;
    Ok(value)
}

fn skip(ty: &AlgebraicType, typespace: &Typespace, bytes: &[u8]) -> Result<(), DecodeError> {
    let mut reader = Reader::new(bytes);
    Value::skip(ty, typespace, &mut reader)?;
    reader.finish()
}

/// Encodes `value` statically, decodes it dynamically, and checks both agree.
fn round_trip<T: SchemaType>(value: T) -> Value {
    let mut typespace = Typespace::default();
    let ty = T::schema(&mut typespace);
    let bytes = to_vec(&value);
    assert_eq!(value.encoded_len(), bytes.len(), "the size is known ahead");
    let dynamic = decode(&ty, &typespace, &bytes).expect("the static encoding decodes");
    assert_eq!(
        dynamic.to_bytes(),
        bytes,
        "re-encoding gives the same bytes"
    );
    skip(&ty, &typespace, &bytes).expect("skip accepts what decode accepts");
    dynamic
}

#[test]
fn numbers_and_leaves_round_trip() {
    assert_eq!(round_trip(true), Value::Bool(true));
    assert_eq!(round_trip(-5i8), Value::I8(-5));
    assert_eq!(round_trip(200u8), Value::U8(200));
    assert_eq!(round_trip(-300i16), Value::I16(-300));
    assert_eq!(round_trip(60_000u16), Value::U16(60_000));
    assert_eq!(round_trip(i32::MIN), Value::I32(i32::MIN));
    assert_eq!(round_trip(u32::MAX), Value::U32(u32::MAX));
    assert_eq!(round_trip(i64::MIN), Value::I64(i64::MIN));
    assert_eq!(round_trip(u64::MAX), Value::U64(u64::MAX));
    assert_eq!(round_trip(i128::MIN), Value::I128(i128::MIN));
    assert_eq!(round_trip(u128::MAX), Value::U128(u128::MAX));
    assert_eq!(round_trip(1.5f32), Value::F32(1.5));
    assert_eq!(round_trip(-2.25f64), Value::F64(-2.25));
    assert_eq!(round_trip("héllo".to_owned()), Value::from("héllo"));
    let identity = Identity::from_bytes([7; 32]);
    assert_eq!(round_trip(identity), Value::Identity(identity));
    let connection = ConnectionId::from_bytes([9; 16]);
    assert_eq!(round_trip(connection), Value::ConnectionId(connection));
    let time = Timestamp::from_micros_since_unix_epoch(-12);
    assert_eq!(round_trip(time), Value::Timestamp(time));
}

#[test]
fn compound_values_round_trip() {
    assert_eq!(
        round_trip(vec![1u16, 2, 3]),
        Value::Array(vec![1u16.into(), 2u16.into(), 3u16.into()])
    );
    assert_eq!(
        round_trip([4u8, 5]),
        Value::Product(vec![4u8.into(), 5u8.into()])
    );
    assert_eq!(round_trip(None::<u32>), Value::Option(None));
    assert_eq!(
        round_trip(Some(3u32)),
        Value::Option(Some(Box::new(3u32.into())))
    );
    assert_eq!(
        round_trip(Ok::<u8, String>(1)),
        Value::Result(Ok(Box::new(1u8.into())))
    );
    assert_eq!(
        round_trip(Err::<u8, String>("no".into())),
        Value::Result(Err(Box::new("no".into())))
    );
    assert_eq!(round_trip(()), Value::Product(Vec::new()));
    round_trip((1u8, "two".to_owned(), vec![Some(3i64), None]));
    round_trip(vec![(); 3]);
    round_trip([[0u8; 0]; 4]);
    round_trip(Vec::<Vec<String>>::new());
}

#[test]
fn user_types_round_trip_through_the_typespace() {
    let player = Player {
        id: 42,
        name: "ada".into(),
        position: (1.0, -1.0),
        tags: vec!["a".into(), "bc".into()],
        owner: Some(Identity::from_bytes([1; 32])),
    };
    let value = round_trip(player);
    let Value::Product(fields) = value else {
        panic!("a struct is a product")
    };
    assert_eq!(fields[0], Value::U64(42));
    assert_eq!(fields[1], Value::from("ada"));

    assert_eq!(
        round_trip(Shape::Empty),
        Value::Sum {
            tag: 0,
            value: Box::new(Value::Product(vec![]))
        }
    );
    assert_eq!(
        round_trip(Shape::Circle(2.0)),
        Value::Sum {
            tag: 1,
            value: Box::new(Value::F64(2.0))
        }
    );
    assert_eq!(
        round_trip(Shape::Rect {
            width: 3,
            height: 4
        }),
        Value::Sum {
            tag: 2,
            value: Box::new(Value::Product(vec![3u32.into(), 4u32.into()]))
        }
    );

    let tree = Tree {
        label: "root".into(),
        children: vec![Tree {
            label: "leaf".into(),
            children: vec![],
        }],
    };
    round_trip(tree);
}

#[test]
fn order_is_total_and_follows_the_content() {
    let mut values = [
        Value::F64(f64::NAN),
        Value::F64(1.0),
        Value::F64(-0.0),
        Value::F64(0.0),
        Value::F64(f64::NEG_INFINITY),
    ];
    values.sort();
    assert_eq!(values[0], Value::F64(f64::NEG_INFINITY));
    assert_eq!(values[1], Value::F64(-0.0));
    assert_eq!(values[2], Value::F64(0.0));
    assert_ne!(values[1], values[2], "-0.0 and +0.0 are different keys");
    assert_eq!(values[4], Value::F64(f64::NAN), "NaN equals itself");

    assert!(Value::from("a") < Value::from("b"));
    assert!(Value::Array(vec![1u8.into()]) < Value::Array(vec![1u8.into(), 0u8.into()]));
    assert!(Value::Option(None) < Value::Option(Some(Box::new(0u8.into()))));
    assert!(Value::Result(Ok(Box::new(9u8.into()))) < Value::Result(Err(Box::new(0u8.into()))));
    assert!(
        Value::Sum {
            tag: 0,
            value: Box::new(9u8.into())
        } < Value::Sum {
            tag: 1,
            value: Box::new(0u8.into())
        }
    );
    assert!(
        Value::Bool(true) < Value::I8(i8::MIN),
        "different variants order by variant"
    );
}

#[test]
fn truncated_input_is_an_error_at_every_length() {
    let mut typespace = Typespace::default();
    let ty = Player::schema(&mut typespace);
    let bytes = to_vec(&Player {
        id: 1,
        name: "name".into(),
        position: (0.0, 0.0),
        tags: vec!["x".into()],
        owner: Some(Identity::ZERO),
    });
    for len in 0..bytes.len() {
        let error = decode(&ty, &typespace, &bytes[..len]).expect_err("a truncated row fails");
        assert!(
            matches!(error, DecodeError::UnexpectedEnd { .. }),
            "{len}: {error:?}"
        );
        assert!(skip(&ty, &typespace, &bytes[..len]).is_err());
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(
        decode(&ty, &typespace, &longer),
        Err(DecodeError::TrailingBytes(1))
    );
}

#[test]
fn malformed_input_is_refused() {
    let empty = Typespace::default();
    assert_eq!(
        decode(&AlgebraicType::Bool, &empty, &[2]),
        Err(DecodeError::InvalidBool(2))
    );
    assert_eq!(
        decode(&AlgebraicType::String, &empty, &[2, 0, 0, 0, 0xff, 0xfe]),
        Err(DecodeError::InvalidUtf8)
    );
    let option = AlgebraicType::Option(Box::new(AlgebraicType::U8));
    assert_eq!(
        decode(&option, &empty, &[2, 0]),
        Err(DecodeError::InvalidTag {
            tag: 2,
            type_name: "Option"
        })
    );
    let sum = AlgebraicType::Sum(vec![Field::named("a", AlgebraicType::U8)]);
    assert!(matches!(
        decode(&sum, &empty, &[1, 0]),
        Err(DecodeError::InvalidTag { tag: 1, .. })
    ));
    assert_eq!(
        decode(&AlgebraicType::Ref(3), &empty, &[]),
        Err(DecodeError::UnresolvedRef)
    );
    assert_eq!(
        skip(&AlgebraicType::Ref(3), &empty, &[]),
        Err(DecodeError::UnresolvedRef)
    );
}

#[test]
fn forged_lengths_fail_without_allocating() {
    let empty = Typespace::default();
    let array = AlgebraicType::Array(Box::new(AlgebraicType::U64));
    let forged = u32::MAX.to_le_bytes();
    assert!(matches!(
        decode(&array, &empty, &forged),
        Err(DecodeError::UnexpectedEnd { .. })
    ));

    let units = AlgebraicType::Array(Box::new(AlgebraicType::Product(Vec::new())));
    assert_eq!(
        decode(&units, &empty, &forged),
        Err(DecodeError::LengthOverflow)
    );
    let allowed = u32::try_from(MAX_ZERO_SIZED_ELEMENTS)
        .unwrap()
        .to_le_bytes();
    assert!(decode(&units, &empty, &allowed).is_ok());

    let fixed = AlgebraicType::FixedArray(Box::new(AlgebraicType::U8), u32::MAX);
    assert!(matches!(
        decode(&fixed, &empty, &[1, 2, 3]),
        Err(DecodeError::UnexpectedEnd { .. })
    ));
}

#[test]
fn nesting_is_capped() {
    let empty = Typespace::default();
    let mut ty = AlgebraicType::U8;
    for _ in 0..MAX_DEPTH {
        ty = AlgebraicType::Option(Box::new(ty));
    }
    let mut bytes = vec![1; MAX_DEPTH];
    bytes.push(7);
    assert!(
        decode(&ty, &empty, &bytes).is_ok(),
        "MAX_DEPTH levels are fine"
    );

    let deeper = AlgebraicType::Option(Box::new(ty));
    bytes.insert(0, 1);
    assert_eq!(decode(&deeper, &empty, &bytes), Err(DecodeError::TooDeep));
    assert_eq!(skip(&deeper, &empty, &bytes), Err(DecodeError::TooDeep));
}

#[test]
fn recursive_types_stop_at_the_depth_cap() {
    // `struct List { next: Option<List> }`, and a value a thousand levels deep.
    let typespace = Typespace {
        types: vec![TypeDef {
            name: "List".into(),
            ty: AlgebraicType::Product(vec![Field::named(
                "next",
                AlgebraicType::Option(Box::new(AlgebraicType::Ref(0))),
            )]),
        }],
    };
    let mut bytes = vec![1; 1000];
    bytes.push(0);
    assert_eq!(
        decode(&AlgebraicType::Ref(0), &typespace, &bytes),
        Err(DecodeError::TooDeep)
    );

    // A type that contains itself directly has no finite value.
    let endless = Typespace {
        types: vec![TypeDef {
            name: "Endless".into(),
            ty: AlgebraicType::Product(vec![Field::unnamed(AlgebraicType::Ref(0))]),
        }],
    };
    assert_eq!(
        decode(&AlgebraicType::Ref(0), &endless, &[]),
        Err(DecodeError::TooDeep)
    );
    let units = AlgebraicType::Array(Box::new(AlgebraicType::Ref(0)));
    assert_eq!(
        decode(&units, &endless, &[1, 0, 0, 0]),
        Err(DecodeError::TooDeep)
    );

    // A reference cycle with no structure never resolves.
    let cycle = Typespace {
        types: vec![
            TypeDef {
                name: "A".into(),
                ty: AlgebraicType::Ref(1),
            },
            TypeDef {
                name: "B".into(),
                ty: AlgebraicType::Ref(0),
            },
        ],
    };
    assert_eq!(
        decode(&AlgebraicType::Ref(0), &cycle, &[]),
        Err(DecodeError::UnresolvedRef)
    );
}

#[test]
fn hash_agrees_with_equality() {
    use std::collections::HashSet;
    let set: HashSet<Value> = [
        Value::F32(f32::NAN),
        Value::F32(f32::NAN),
        Value::F32(0.0),
        Value::F32(-0.0),
    ]
    .into();
    assert_eq!(set.len(), 3);
}
