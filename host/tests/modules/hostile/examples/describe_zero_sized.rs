//! A module whose description is valid in every way but one: its table's row type has a column
//! of type `Vec<[[(); 65536]; 65536]>`, whose 12-byte rows would decode to 4.3 billion
//! elements.

#![cfg(target_arch = "wasm32")]

mod common;

use wasmod_abi::{AlgebraicType, ModuleDef, TableDef};

no_entry_points!();

#[no_mangle]
extern "C" fn __describe_module__(sink: u32) -> i16 {
    let unit = AlgebraicType::Product(Vec::new());
    let square = AlgebraicType::FixedArray(
        Box::new(AlgebraicType::FixedArray(Box::new(unit), 65_536)),
        65_536,
    );
    let mut module = ModuleDef::default();
    let table = TableDef::of_columns(
        &mut module.typespace,
        "Hostile",
        "zs",
        &[
            ("id", AlgebraicType::U64),
            ("units", AlgebraicType::Array(Box::new(square))),
        ],
    );
    module.tables.push(table);
    common::write(sink, &wasmod_abi::description::encode(&module))
}
