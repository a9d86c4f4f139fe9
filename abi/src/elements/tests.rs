use super::*;
use crate::schema::{Field, TypeDef};
use crate::{Reader, Value};

fn unit() -> AlgebraicType {
    AlgebraicType::Product(Vec::new())
}

fn fixed(element: AlgebraicType, len: u32) -> AlgebraicType {
    AlgebraicType::FixedArray(Box::new(element), len)
}

fn vec_of(element: AlgebraicType) -> AlgebraicType {
    AlgebraicType::Array(Box::new(element))
}

fn product(fields: Vec<AlgebraicType>) -> AlgebraicType {
    AlgebraicType::Product(fields.into_iter().map(Field::unnamed).collect())
}

fn check(ty: &AlgebraicType) -> Result<(), ElementsError> {
    check_type(ty, &Typespace::default())
}

/// The elements `Value::skip` visits in `bytes`, through a budget of exactly the rule's.
fn decode(ty: &AlgebraicType, typespace: &Typespace, bytes: &[u8]) -> Result<(), DecodeError> {
    let mut reader = Reader::new(bytes);
    Value::skip(ty, typespace, &mut reader)?;
    reader.finish()
}

#[test]
fn ordinary_types_pass() {
    let empty = Typespace::default();
    let row = product(vec![
        AlgebraicType::U32,
        AlgebraicType::String,
        vec_of(AlgebraicType::U8),
        AlgebraicType::Option(Box::new(unit())),
        AlgebraicType::Result(Box::new(unit()), Box::new(AlgebraicType::String)),
    ]);
    for ty in [
        row.clone(),
        vec_of(row),
        unit(),
        vec_of(unit()),
        fixed(unit(), 65_536),
        vec_of(AlgebraicType::Option(Box::new(unit()))),
        vec_of(fixed(AlgebraicType::U64, 1_000_000)),
    ] {
        assert_eq!(check_type(&ty, &empty), Ok(()), "{ty:?}");
    }
}

#[test]
fn nested_arrays_of_zero_sized_elements_are_refused() {
    // The row: 12 bytes that decode to 4.3 billion elements.
    let hostile = vec_of(fixed(fixed(unit(), 65_536), 65_536));
    assert_eq!(
        check(&hostile),
        Err(ElementsError::ZeroSizedArray {
            elements: 65_536 * 65_537
        })
    );
    assert_eq!(
        check(&fixed(unit(), 65_537)),
        Err(ElementsError::ZeroSizedArray { elements: 65_537 })
    );
    // 256 × (1 + 255) elements is the most an array of arrays of units may hold.
    assert_eq!(check(&fixed(fixed(unit(), 255), 256)), Ok(()));
    assert!(check(&fixed(fixed(unit(), 256), 256)).is_err());
}

#[test]
fn zero_sized_parts_inside_arrays_are_paid_per_byte() {
    // Each byte of `Vec<([(); 100], u8)>` holds 103 elements.
    let padded = vec_of(product(vec![fixed(unit(), 100), AlgebraicType::U8]));
    assert_eq!(
        check(&padded),
        Err(ElementsError::PerByte { per_byte: 103 })
    );
    // Four bytes of count can hold 65,536 units, in each element of the outer array.
    assert!(matches!(
        check(&vec_of(vec_of(unit()))),
        Err(ElementsError::PerByte { .. })
    ));
    // A few units per byte are fine.
    let few = vec_of(product(vec![unit(), unit(), AlgebraicType::U8]));
    assert_eq!(check(&few), Ok(()));
}

#[test]
fn zero_sized_parts_outside_arrays_are_capped_in_total() {
    let four = product(vec![fixed(unit(), 65_534); 4]);
    assert_eq!(check(&four), Ok(()));
    let five = product(vec![fixed(unit(), 65_534); 5]);
    assert!(matches!(check(&five), Err(ElementsError::Unbacked { .. })));
}

#[test]
fn recursive_types_are_bounded_by_the_depth_cap() {
    // `struct Tree { children: Vec<Tree>, left: Option<Box<Tree>>, right: Option<Box<Tree>> }`
    let tree = Typespace {
        types: vec![TypeDef {
            name: "Tree".into(),
            ty: product(vec![
                vec_of(AlgebraicType::Ref(0)),
                AlgebraicType::Option(Box::new(AlgebraicType::Ref(0))),
                AlgebraicType::Option(Box::new(AlgebraicType::Ref(0))),
            ]),
        }],
    };
    assert_eq!(check_type(&AlgebraicType::Ref(0), &tree), Ok(()));
    // `enum Peano { Zero, Succ(Box<Peano>) }`: one level of nesting per value.
    let peano = Typespace {
        types: vec![TypeDef {
            name: "Peano".into(),
            ty: AlgebraicType::Sum(vec![
                Field::named("Zero", unit()),
                Field::named("Succ", AlgebraicType::Ref(0)),
            ]),
        }],
    };
    assert_eq!(check_type(&AlgebraicType::Ref(0), &peano), Ok(()));
    // `enum Json { Null, Number(f64), Array(Vec<Json>), Object(Vec<(String, Json)>) }`
    let json = Typespace {
        types: vec![TypeDef {
            name: "Json".into(),
            ty: AlgebraicType::Sum(vec![
                Field::named("Null", unit()),
                Field::named("Number", AlgebraicType::F64),
                Field::named("Array", vec_of(AlgebraicType::Ref(0))),
                Field::named(
                    "Object",
                    vec_of(product(vec![AlgebraicType::String, AlgebraicType::Ref(0)])),
                ),
            ]),
        }],
    };
    assert_eq!(check_type(&vec_of(AlgebraicType::Ref(0)), &json), Ok(()));
    // `struct Endless { next: Box<Endless> }` has no values at all.
    let endless = Typespace {
        types: vec![TypeDef {
            name: "Endless".into(),
            ty: product(vec![AlgebraicType::Ref(0)]),
        }],
    };
    assert_eq!(check_type(&AlgebraicType::Ref(0), &endless), Ok(()));
}

#[test]
fn the_decoder_refuses_arrays_of_zero_sized_arrays_past_the_cap() {
    let empty = Typespace::default();
    let count = |n: u32| n.to_le_bytes();
    // 16,384 arrays of 3 units: 65,536 elements.
    let triples = vec_of(fixed(unit(), 3));
    assert_eq!(decode(&triples, &empty, &count(16_384)), Ok(()));
    assert_eq!(
        decode(&triples, &empty, &count(16_385)),
        Err(DecodeError::LengthOverflow)
    );
    // The row is refused at once, before any element is visited.
    let hostile = vec_of(fixed(fixed(unit(), 65_536), 65_536));
    let mut row = count(3).to_vec();
    row.extend_from_slice(&[0; 8]);
    assert_eq!(
        decode(&product(vec![hostile, AlgebraicType::U64]), &empty, &row),
        Err(DecodeError::LengthOverflow)
    );
}

#[test]
fn the_decoder_counts_elements_against_the_bytes() {
    let empty = Typespace::default();
    // `Vec<Vec<()>>` of 100 full inner arrays: 404 bytes, 6.5 million elements.
    let nested = vec_of(vec_of(unit()));
    let mut bytes = 100u32.to_le_bytes().to_vec();
    for _ in 0..100 {
        bytes.extend_from_slice(&(MAX_ZERO_SIZED_ELEMENTS as u32).to_le_bytes());
    }
    assert_eq!(
        decode(&nested, &empty, &bytes),
        Err(DecodeError::TooManyElements)
    );
    // Four of them fit the unbacked allowance.
    let mut four = 4u32.to_le_bytes().to_vec();
    for _ in 0..4 {
        four.extend_from_slice(&(MAX_ZERO_SIZED_ELEMENTS as u32 - 1).to_le_bytes());
    }
    assert_eq!(decode(&nested, &empty, &four), Ok(()));
}

#[test]
fn the_budget_is_checked_against_the_bytes_the_value_took() {
    let empty = Typespace::default();
    // Five full arrays of units take 20 bytes; trailing bytes do not pay for them.
    let five = product(vec![vec_of(unit()); 5]);
    let mut bytes = Vec::new();
    for _ in 0..5 {
        bytes.extend_from_slice(&(MAX_ZERO_SIZED_ELEMENTS as u32).to_le_bytes());
    }
    bytes.extend_from_slice(&[0; 10_000]);
    let mut reader = Reader::new(&bytes);
    assert_eq!(
        Value::skip(&five, &empty, &mut reader),
        Err(DecodeError::TooManyElements)
    );
}

#[test]
fn values_of_checked_types_fit_the_budget() {
    // The worst values of types at the edge of the rules decode.
    let empty = Typespace::default();
    let mut three_full = Vec::new();
    for _ in 0..3 {
        three_full.extend_from_slice(&(MAX_ZERO_SIZED_ELEMENTS as u32).to_le_bytes());
    }
    let edge = product(vec![vec_of(unit()); 3]);
    assert_eq!(check(&edge), Ok(()));
    assert_eq!(decode(&edge, &empty, &three_full), Ok(()));
    assert!(check(&product(vec![vec_of(unit()); 4])).is_err());

    // 60 units and a byte per element: 62 elements per byte.
    let dense = vec_of(product(
        std::iter::repeat_n(unit(), 60)
            .chain([AlgebraicType::U8])
            .collect(),
    ));
    assert_eq!(check(&dense), Ok(()));
    let mut bytes = 10_000u32.to_le_bytes().to_vec();
    bytes.extend_from_slice(&[7; 10_000]);
    assert_eq!(decode(&dense, &empty, &bytes), Ok(()));
}
