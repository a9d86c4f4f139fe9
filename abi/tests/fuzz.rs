//! Property tests of the decoders that take a module's bytes: [`Value::decode`] and
//! [`Value::skip`] against a type, the module description ([`description::decode`]) and the
//! check of its types ([`description::check_elements`]).
//!
//! Each decoder gets tame values' encodings (which must round-trip), the same encodings
//! mutated (bit flips, cuts, counts set to huge values), and arbitrary bytes against hostile
//! types (dangling and cyclic references, types without a finite value, zero-sized arrays of
//! billions of units, nesting past the depth limit). None may panic, and none may request
//! more memory than the bound each property states. `WASMOD_FUZZ_CASES` sets the number of
//! cases (see `docs/testing.md`).

use proptest::prelude::*;
use wasmod_abi::description::{self, DescriptionError};
use wasmod_abi::elements::{self, max_elements};
use wasmod_abi::encoding::to_vec;
use wasmod_abi::http::Method;
use wasmod_abi::{
    AlgebraicType, DecodeError, HttpHandlerDef, Lifecycle, ModuleDef, ParamDef, ProcedureDef,
    Reader, ReducerDef, TableDef, Typespace, Value, ViewDef,
};
use wasmod_fuzzing::alloc::{allocated, is_counting, Counting};
use wasmod_fuzzing::types::{hostile, hostile_typespace, tame, typespace};
use wasmod_fuzzing::values::typed_value;
use wasmod_fuzzing::{config, mutate, mutations};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes a decode of a value from `n` bytes may request: two `Value`s per element
/// it may visit ([`max_elements`]`(n)`: the slot in its parent's vector, which may have been
/// grown by doubling, and a box for an option's, result's or sum's payload), one more for
/// the vectors' growth, and the strings' bytes, twice.
fn value_allocation_bound(n: usize) -> usize {
    3 * size_of::<Value>() * max_elements(n) + 2 * n
}

/// The most bytes a decode of a description of `n` bytes may request: 256 per byte (every
/// element of the description takes at least one byte, and none is larger than 256 bytes in
/// memory: the vectors of each nesting level reserve at most one element per byte left), and
/// 64 KiB for the rest.
fn description_allocation_bound(n: usize) -> usize {
    256 * n + (64 << 10)
}

/// Decodes and skips `bytes` as a value of `ty`, checking what both must agree on: the
/// same answer, the same bytes consumed, a bounded allocation, and a decoded value that
/// re-encodes to the bytes it was read from.
fn check_value_decoders(ty: &AlgebraicType, typespace: &Typespace, bytes: &[u8]) -> Option<Value> {
    let mut reader = Reader::new(bytes);
    let (decoded, requested) = allocated(|| Value::decode(ty, typespace, &mut reader));
    let decoded_rest = reader.remaining();
    let bound = value_allocation_bound(bytes.len());
    assert!(
        requested <= bound,
        "decoding {} bytes requested {requested} bytes (bound {bound})",
        bytes.len()
    );
    let mut reader = Reader::new(bytes);
    let skipped = Value::skip(ty, typespace, &mut reader);
    assert_eq!(
        decoded.as_ref().err(),
        skipped.as_ref().err(),
        "skip accepts exactly what decode accepts"
    );
    if elements::check_type(ty, typespace).is_ok() {
        assert_ne!(
            decoded.as_ref().err(),
            Some(&DecodeError::TooManyElements),
            "a type that passes the check never has a value refused by the count"
        );
    }
    let value = decoded.ok()?;
    assert_eq!(decoded_rest, reader.remaining(), "both consume the value");
    assert_eq!(
        value.to_bytes(),
        &bytes[..bytes.len() - decoded_rest],
        "a decoded value re-encodes to its bytes"
    );
    Some(value)
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn values_round_trip((ty, value) in typed_value()) {
        let typespace = typespace();
        let bytes = value.to_bytes();
        let decoded = check_value_decoders(&ty, &typespace, &bytes);
        prop_assert_eq!(decoded, Some(value));
    }

    #[test]
    fn mutated_values_are_refused_or_re_encode((ty, value) in typed_value(), changes in mutations()) {
        let bytes = mutate(&value.to_bytes(), &changes);
        check_value_decoders(&ty, &typespace(), &bytes);
    }

    #[test]
    fn arbitrary_bytes_against_hostile_types(
        ty in hostile(),
        bytes in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        let typespace = hostile_typespace();
        check_value_decoders(&ty, &typespace, &bytes);
        // The check a description's types go through at load must end, and not panic,
        // whatever the type.
        let _ = elements::check_type(&ty, &typespace);
    }
}

/// A name from a small set, so that duplicates (which validation refuses) happen too.
fn name() -> impl Strategy<Value = String> {
    prop::sample::select(&["a", "b", "init", "player", "x_y"][..])
        .prop_map(|name: &str| name.to_owned())
}

fn params(
    types: impl Strategy<Value = AlgebraicType> + Clone,
) -> impl Strategy<Value = Vec<ParamDef>> {
    prop::collection::vec(
        (name(), types).prop_map(|(name, ty)| ParamDef { name, ty }),
        0..3,
    )
}

/// A description of tables, reducers, procedures, views and handlers over `types`.
fn module_def(
    types: impl Strategy<Value = AlgebraicType> + Clone + 'static,
) -> impl Strategy<Value = ModuleDef> {
    let lifecycle = prop::option::of(prop::sample::select(&Lifecycle::ALL[..]));
    let columns = prop::collection::vec((name(), types.clone()), 1..4);
    let table = (name(), columns, any::<bool>(), any::<bool>());
    let reducer =
        (name(), params(types.clone()), lifecycle).prop_map(|(name, params, lifecycle)| {
            ReducerDef {
                name,
                params,
                lifecycle,
            }
        });
    let procedure =
        (name(), params(types.clone()), types.clone()).prop_map(|(name, params, returns)| {
            ProcedureDef {
                name,
                params,
                returns,
            }
        });
    let view = (name(), params(types.clone()), types)
        .prop_map(|(name, params, returns)| ViewDef {
            name,
            params,
            returns,
        })
        .boxed();
    let methods = [
        Method::Get,
        Method::Post,
        Method::Put,
        Method::Patch,
        Method::Delete,
        Method::Head,
        Method::Options,
    ];
    let handler = (
        name(),
        prop::sample::select(methods.to_vec()),
        "/[a-z{}]{0,6}",
    )
        .prop_map(|(name, method, path)| HttpHandlerDef { name, method, path });
    (
        prop::collection::vec(table, 0..3),
        prop::collection::vec(reducer, 0..3),
        prop::collection::vec(procedure, 0..2),
        prop::collection::vec(view.clone(), 0..2),
        prop::collection::vec(view, 0..2),
        prop::collection::vec(handler, 0..2),
    )
        .prop_map(
            |(tables, reducers, procedures, views, anonymous_views, http_handlers)| {
                let mut typespace = typespace();
                let tables = tables
                    .into_iter()
                    .map(|(name, columns, keyed, public)| {
                        let columns: Vec<(&str, AlgebraicType)> = columns
                            .iter()
                            .map(|(name, ty)| (name.as_str(), ty.clone()))
                            .collect();
                        let mut table =
                            TableDef::of_columns(&mut typespace, "Row", &name, &columns);
                        if keyed {
                            table.primary_key = Some(0);
                        }
                        table.public = public;
                        table
                    })
                    .collect();
                ModuleDef {
                    typespace,
                    tables,
                    reducers,
                    procedures,
                    views,
                    anonymous_views,
                    http_handlers,
                }
            },
        )
}

/// Decodes `bytes` as a description within its allocation bound and, if it decodes, runs
/// the check of its types that a host runs when it loads it.
fn check_description_decoder(bytes: &[u8]) -> Result<ModuleDef, DescriptionError> {
    let (decoded, requested) = allocated(|| description::decode(bytes));
    let bound = description_allocation_bound(bytes.len());
    assert!(
        requested <= bound,
        "decoding a description of {} bytes requested {requested} bytes (bound {bound})",
        bytes.len()
    );
    if let Ok(def) = &decoded {
        let _ = description::check_elements(def);
    }
    decoded
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn descriptions_round_trip(def in module_def(tame())) {
        let bytes = description::encode(&def);
        prop_assert_eq!(check_description_decoder(&bytes), Ok(def));
    }

    #[test]
    fn mutated_descriptions_are_refused_or_checked(def in module_def(hostile()), changes in mutations()) {
        let bytes = mutate(&description::encode(&def), &changes);
        let _ = check_description_decoder(&bytes);
    }

    #[test]
    fn arbitrary_bytes_are_not_a_description(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = check_description_decoder(&bytes);
    }
}

#[test]
fn the_allocator_counts() {
    assert!(is_counting(), "the bounds above would hold vacuously");
}

/// A description whose vectors, nested as deeply as the decoder allows, each claim
/// `u32::MAX` elements, followed by `padding` bytes: each vector reserves room for the
/// elements the bytes left could hold, at every level.
fn nested_huge_vectors(padding: usize) -> Vec<u8> {
    let product_tag = to_vec(&AlgebraicType::Product(Vec::new()))[0];
    let mut bytes = to_vec(&description::FORMAT_VERSION);
    bytes.extend_from_slice(&u32::MAX.to_le_bytes()); // the typespace's types
    bytes.extend_from_slice(&0u32.to_le_bytes()); // the first type's name: ""
    for _ in 0..64 {
        bytes.push(product_tag);
        bytes.extend_from_slice(&u32::MAX.to_le_bytes()); // its fields
        bytes.push(0); // the first field's name: none
    }
    bytes.resize(bytes.len() + padding, 0xff);
    bytes
}

#[test]
fn nested_vectors_claiming_huge_lengths_stay_within_the_bound() {
    for padding in [0, 1 << 10, 64 << 10] {
        let bytes = nested_huge_vectors(padding);
        assert!(check_description_decoder(&bytes).is_err());
    }
}
