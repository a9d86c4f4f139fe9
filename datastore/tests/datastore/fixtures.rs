//! Hand-written module descriptions and helpers shared by the tests.

use wasmod_abi::encoding::to_vec;
use wasmod_abi::{AlgebraicType, Encode, Errno, IndexDef, ModuleDef, TableDef, Typespace};
use wasmod_datastore::{Datastore, Error, Row, Tables};

/// Table 0 `player (id: u32 auto_inc pk, name: String unique, age: u64 btree)`;
/// table 1 `point (x: u32, y: i32, label: String)` with a btree on `(x, y)` and one on `label`;
/// table 2 `counter (n: u8 auto_inc, tag: bool)` without indexes.
pub const PLAYER: u32 = 0;
pub const POINT: u32 = 1;
pub const COUNTER: u32 = 2;

pub const PLAYER_ID: u32 = 0;
pub const PLAYER_NAME: u32 = 1;
pub const PLAYER_AGE: u32 = 2;
pub const POINT_XY: u32 = 0;
pub const POINT_LABEL: u32 = 1;

pub fn table(
    typespace: &mut Typespace,
    name: &str,
    columns: &[(&str, AlgebraicType)],
    primary_key: Option<u16>,
    indexes: &[(&str, &[u16], bool)],
    auto_inc: &[u16],
) -> TableDef {
    TableDef {
        primary_key,
        indexes: indexes
            .iter()
            .map(|(name, columns, unique)| IndexDef {
                name: (*name).to_owned(),
                columns: columns.to_vec(),
                unique: *unique,
            })
            .collect(),
        auto_inc: auto_inc.to_vec(),
        ..TableDef::of_columns(typespace, name, name, columns)
    }
}

pub fn module() -> ModuleDef {
    use AlgebraicType as T;
    let mut typespace = Typespace::default();
    let tables = vec![
        table(
            &mut typespace,
            "player",
            &[("id", T::U32), ("name", T::String), ("age", T::U64)],
            Some(0),
            &[
                ("player_id", &[0], true),
                ("player_name", &[1], true),
                ("player_age", &[2], false),
            ],
            &[0],
        ),
        table(
            &mut typespace,
            "point",
            &[("x", T::U32), ("y", T::I32), ("label", T::String)],
            None,
            &[("point_xy", &[0, 1], false), ("point_label", &[2], false)],
            &[],
        ),
        table(
            &mut typespace,
            "counter",
            &[("n", T::U8), ("tag", T::Bool)],
            None,
            &[],
            &[0],
        ),
    ];
    ModuleDef {
        typespace,
        tables,
        ..ModuleDef::default()
    }
}

pub fn datastore() -> Datastore {
    Datastore::new(&module()).expect("the fixture module is valid")
}

pub fn player(id: u32, name: &str, age: u64) -> Vec<u8> {
    to_vec(&(id, name.to_owned(), age))
}

pub fn point(x: u32, y: i32, label: &str) -> Vec<u8> {
    to_vec(&(x, y, label.to_owned()))
}

/// The rows as byte vectors, for comparisons.
pub fn bytes(rows: Vec<Row>) -> Vec<Vec<u8>> {
    rows.iter().map(|row| row.to_vec()).collect()
}

/// Every row of `table`, as bytes.
pub fn all(tables: &Tables, table: u32) -> Vec<Vec<u8>> {
    bytes(tables.scan(table).expect("the table exists"))
}

/// An index scan: `prefix`, then the bounds as `(tag, value)`.
pub fn scan_bytes<P: Encode, B: Encode>(
    prefix: &[P],
    lower: Option<(u8, B)>,
    upper: Option<(u8, B)>,
) -> Vec<u8> {
    let mut out = (prefix.len() as u32).to_le_bytes().to_vec();
    prefix.iter().for_each(|value| value.encode(&mut out));
    for bound in [lower, upper] {
        match bound {
            None => out.push(0),
            Some((tag, value)) => {
                out.push(tag);
                value.encode(&mut out);
            }
        }
    }
    out
}

/// A point lookup on a whole key.
pub fn point_scan<P: Encode>(key: &[P]) -> Vec<u8> {
    scan_bytes::<P, u8>(key, None, None)
}

pub fn errno<T: std::fmt::Debug>(result: Result<T, Error>) -> Errno {
    result.expect_err("the operation fails").errno()
}
