//! What the datastore's benches share: the one table they write.

use wasmod_abi::{AlgebraicType, IndexDef, ModuleDef, TableDef};

/// One table: `row (id u64 auto_inc pk, name String, score u64)`.
pub fn module() -> ModuleDef {
    let columns = [
        ("id", AlgebraicType::U64),
        ("name", AlgebraicType::String),
        ("score", AlgebraicType::U64),
    ];
    let mut def = ModuleDef::default();
    let table = TableDef::of_columns(&mut def.typespace, "Row", "row", &columns);
    def.tables.push(TableDef {
        primary_key: Some(0),
        indexes: vec![IndexDef {
            name: "row_id".into(),
            columns: vec![0],
            unique: true,
        }],
        auto_inc: vec![0],
        ..table
    });
    def
}
