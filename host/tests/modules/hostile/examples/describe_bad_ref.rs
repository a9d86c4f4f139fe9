//! A module whose description decodes, but whose table has a column of a type `Ref` that
//! points past the end of the typespace.

#![cfg(target_arch = "wasm32")]

mod common;

no_entry_points!();

#[no_mangle]
extern "C" fn __describe_module__(sink: u32) -> i16 {
    let mut module = common::description(&[]);
    let table = &mut module.tables[0];
    table.columns[1].ty = wasmod_abi::AlgebraicType::Ref(42);
    table.row_type = wasmod_abi::AlgebraicType::Product(vec![
        wasmod_abi::Field::named("id", wasmod_abi::AlgebraicType::U32),
        wasmod_abi::Field::named("name", wasmod_abi::AlgebraicType::Ref(42)),
    ]);
    common::write(sink, &wasmod_abi::description::encode(&module))
}
