//! What the raw example modules share: the one import they write with, a description to
//! start from, and dispatch exports that answer every call with `NO_SUCH_ENTRY`.

#![allow(dead_code)] // Each example uses the part it needs.

use wasmod_abi::{AlgebraicType, ColumnDef, Field, IndexDef, ModuleDef, ReducerDef, TableDef};

#[link(wasm_import_module = "wasmod_v1")]
extern "C" {
    fn bytes_sink_write(sink: u32, buf: *const u8, buf_len: *mut u32) -> u16;
}

/// Writes `bytes` to `sink`; the export's code.
pub fn write(sink: u32, bytes: &[u8]) -> i16 {
    let mut len = bytes.len() as u32;
    // SAFETY: `bytes` is valid for reads of `len` bytes; `len` is a valid in-out pointer.
    unsafe { bytes_sink_write(sink, bytes.as_ptr(), &mut len) as i16 }
}

/// A valid description: table `item (id: u32, name: String)` keyed on `id`, and the reducers
/// `reducers` without parameters.
pub fn description(reducers: &[&str]) -> ModuleDef {
    let columns = vec![
        ColumnDef {
            name: "id".into(),
            ty: AlgebraicType::U32,
            default: None,
        },
        ColumnDef {
            name: "name".into(),
            ty: AlgebraicType::String,
            default: None,
        },
    ];
    let row_type = AlgebraicType::Product(
        columns
            .iter()
            .map(|column| Field::named(&column.name, column.ty.clone()))
            .collect(),
    );
    ModuleDef {
        tables: vec![TableDef {
            name: "item".into(),
            row_type,
            columns,
            primary_key: Some(0),
            indexes: vec![IndexDef {
                name: "item_id".into(),
                columns: vec![0],
                unique: true,
            }],
            auto_inc: Vec::new(),
            public: true,
            schedule: None,
            visibility: None,
        }],
        reducers: reducers
            .iter()
            .map(|name| ReducerDef {
                name: (*name).into(),
                params: Vec::new(),
                lifecycle: None,
            })
            .collect(),
        ..ModuleDef::default()
    }
}

/// `NO_SUCH_ENTRY`.
pub const NO_SUCH_ENTRY: i16 = wasmod_abi::Errno::NO_SUCH_ENTRY.code() as i16;

/// Defines the five dispatch exports, each answering `NO_SUCH_ENTRY`.
#[macro_export]
macro_rules! no_entry_points {
    () => {
        #[no_mangle]
        extern "C" fn __call_reducer__(
            _: u32,
            _: u64,
            _: u64,
            _: u64,
            _: u64,
            _: u64,
            _: u64,
            _: i64,
            _: u32,
            _: u32,
        ) -> i16 {
            common::NO_SUCH_ENTRY
        }
        #[no_mangle]
        extern "C" fn __call_procedure__(
            _: u32,
            _: u64,
            _: u64,
            _: u64,
            _: u64,
            _: u64,
            _: u64,
            _: i64,
            _: u32,
            _: u32,
        ) -> i16 {
            common::NO_SUCH_ENTRY
        }
        #[no_mangle]
        extern "C" fn __call_view__(
            _: u32,
            _: u64,
            _: u64,
            _: u64,
            _: u64,
            _: u64,
            _: u64,
            _: i64,
            _: u32,
            _: u32,
        ) -> i16 {
            common::NO_SUCH_ENTRY
        }
        #[no_mangle]
        extern "C" fn __call_view_anon__(_: u32, _: i64, _: u32, _: u32) -> i16 {
            common::NO_SUCH_ENTRY
        }
        #[no_mangle]
        extern "C" fn __call_http_handler__(_: u32, _: i64, _: u32, _: u32) -> i16 {
            common::NO_SUCH_ENTRY
        }
    };
}
