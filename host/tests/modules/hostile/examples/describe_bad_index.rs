//! A module whose description decodes, but whose table has an index on a column it lacks.

#![cfg(target_arch = "wasm32")]

mod common;

no_entry_points!();

#[no_mangle]
extern "C" fn __describe_module__(sink: u32) -> i16 {
    let mut module = common::description(&[]);
    module.tables[0].indexes.push(wasmod_abi::IndexDef {
        name: "item_missing".into(),
        columns: vec![7],
        unique: false,
    });
    common::write(sink, &wasmod_abi::description::encode(&module))
}
