//! Generated [`AlgebraicType`]s: tame ones, which every value generator can make values of,
//! and hostile ones, which a module could declare to make the host's decoders misbehave.
//!
//! Generated types refer by [`AlgebraicType::Ref`] to a fixed [`typespace`] of named types
//! (a recursive tree, an enum, a unit struct, a struct with an option). The
//! [`hostile_typespace`] adds what no module compiled from Rust has but a hand-written
//! description can: a type that contains itself with no way out, a reference cycle, and
//! zero-sized arrays nested to billions of elements.

use proptest::prelude::*;
use wasmod_abi::{AlgebraicType, Field, TypeDef, Typespace};

/// How many named types [`typespace`] has.
pub const NAMED: u32 = 4;

/// The named types tame types refer to: `0` a tree (`{ label: String, children: Vec<0> }`),
/// `1` an enum (`Empty`, `Circle(f64)`, `Rect { width: u32, height: u32 }`), `2` a unit
/// struct, `3` a struct `{ id: i32, note: Option<String> }`.
pub fn typespace() -> Typespace {
    use AlgebraicType as T;
    let named = |name: &str, ty| TypeDef {
        name: name.to_owned(),
        ty,
    };
    Typespace {
        types: vec![
            named(
                "Tree",
                T::Product(vec![
                    Field::named("label", T::String),
                    Field::named("children", T::Array(Box::new(T::Ref(0)))),
                ]),
            ),
            named(
                "Shape",
                T::Sum(vec![
                    Field::named("Empty", T::Product(Vec::new())),
                    Field::named("Circle", T::F64),
                    Field::named(
                        "Rect",
                        T::Product(vec![
                            Field::named("width", T::U32),
                            Field::named("height", T::U32),
                        ]),
                    ),
                ]),
            ),
            named("Unit", T::Product(Vec::new())),
            named(
                "Pair",
                T::Product(vec![
                    Field::named("id", T::I32),
                    Field::named("note", T::Option(Box::new(T::String))),
                ]),
            ),
        ],
    }
}

/// [`typespace`] and, after it, `4` a struct that contains itself (`{ next: 4 }`: no value
/// of it is finite), `5` a reference to itself, `6` a unit array of arrays of 2^32 units.
/// `Ref(7)` and beyond dangle.
pub fn hostile_typespace() -> Typespace {
    use AlgebraicType as T;
    let mut typespace = typespace();
    let units = T::FixedArray(Box::new(T::Ref(2)), u32::MAX);
    typespace.types.extend([
        TypeDef {
            name: "Loop".to_owned(),
            ty: T::Product(vec![Field::named("next", T::Ref(NAMED))]),
        },
        TypeDef {
            name: "Cycle".to_owned(),
            ty: T::Ref(NAMED + 1),
        },
        TypeDef {
            name: "Units".to_owned(),
            ty: T::FixedArray(Box::new(units), u32::MAX),
        },
    ]);
    typespace
}

/// The types with no parts.
fn leaf() -> impl Strategy<Value = AlgebraicType> {
    use AlgebraicType as T;
    prop_oneof![
        Just(T::Bool),
        Just(T::I8),
        Just(T::U8),
        Just(T::I16),
        Just(T::U16),
        Just(T::I32),
        Just(T::U32),
        Just(T::I64),
        Just(T::U64),
        Just(T::I128),
        Just(T::U128),
        Just(T::F32),
        Just(T::F64),
        Just(T::String),
        Just(T::Identity),
        Just(T::ConnectionId),
        Just(T::Timestamp),
    ]
}

/// A field of type `ty`, named from a small set (so that names repeat) or not.
fn field(ty: impl Strategy<Value = AlgebraicType>) -> impl Strategy<Value = Field> {
    let name = prop::option::of(prop::sample::select(&["a", "b", "id", "name", "x"][..]));
    (name, ty).prop_map(|(name, ty)| Field {
        name: name.map(str::to_owned),
        ty,
    })
}

/// Fields as Rust declares them: all named, each by its position (`f0`, `f1`, ...), or (when
/// `named` is false) none.
fn declared(types: Vec<AlgebraicType>, named: bool) -> Vec<Field> {
    types
        .into_iter()
        .enumerate()
        .map(|(index, ty)| Field {
            name: named.then(|| format!("f{index}")),
            ty,
        })
        .collect()
}

/// The compound types over `inner`: fixed arrays of the lengths `lengths` gives, products of
/// the fields `products` gives, sums of the variants `sums` gives.
fn compound(
    inner: BoxedStrategy<AlgebraicType>,
    lengths: BoxedStrategy<u32>,
    products: BoxedStrategy<Vec<Field>>,
    sums: BoxedStrategy<Vec<Field>>,
) -> impl Strategy<Value = AlgebraicType> {
    use AlgebraicType as T;
    prop_oneof![
        inner.clone().prop_map(|ty| T::Array(Box::new(ty))),
        (inner.clone(), lengths).prop_map(|(ty, len)| T::FixedArray(Box::new(ty), len)),
        inner.clone().prop_map(|ty| T::Option(Box::new(ty))),
        (inner.clone(), inner).prop_map(|(ok, err)| T::Result(Box::new(ok), Box::new(err))),
        products.prop_map(T::Product),
        sums.prop_map(T::Sum),
    ]
}

/// A type of [`typespace`] that values can be made of, as Rust could declare it: references
/// resolve, fixed arrays have at most three elements, sums at least one variant, and fields
/// and variants distinct names (or, a tuple's fields, none).
pub fn tame() -> BoxedStrategy<AlgebraicType> {
    let leaves = prop_oneof![4 => leaf(), 1 => (0..NAMED).prop_map(AlgebraicType::Ref)];
    leaves
        .prop_recursive(4, 24, 4, |inner| {
            let inner = inner.boxed();
            let types = |count| prop::collection::vec(inner.clone(), count);
            let products = (types(0..4), any::<bool>())
                .prop_map(|(types, named)| declared(types, named))
                .boxed();
            let sums = types(1..4).prop_map(|types| declared(types, true)).boxed();
            compound(inner.clone(), (0..4u32).boxed(), products, sums)
        })
        .boxed()
}

/// A type of [`hostile_typespace`] anything may be asked of: dangling and cyclic references,
/// types with no finite value, sums of no variant, repeated and missing field names, fixed arrays up to `u32::MAX` long, and
/// nesting past the decoders' depth limit.
pub fn hostile() -> BoxedStrategy<AlgebraicType> {
    use AlgebraicType as T;
    let leaves = prop_oneof![3 => leaf(), 1 => (0..NAMED + 4).prop_map(T::Ref)];
    let lengths = prop_oneof![
        0..4u32,
        prop::sample::select(&[255, 256, 65_535, 65_536, 65_537, 1 << 24, u32::MAX][..]),
    ];
    let shallow = leaves.prop_recursive(5, 32, 4, move |inner| {
        let inner = inner.boxed();
        let fields = prop::collection::vec(field(inner.clone()), 0..4).boxed();
        compound(inner, lengths.clone().boxed(), fields.clone(), fields)
    });
    prop_oneof![
        4 => shallow.clone(),
        1 => (shallow, 56..72usize, any::<bool>()).prop_map(|(ty, levels, arrays)| {
            (0..levels).fold(ty, |ty, _| {
                if arrays {
                    T::Array(Box::new(ty))
                } else {
                    T::Option(Box::new(ty))
                }
            })
        }),
    ]
    .boxed()
}
