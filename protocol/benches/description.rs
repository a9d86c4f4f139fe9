//! Reading a module's description (`GET /v1/module`) back from its JSON, as every client does
//! when it connects (the browser client before anything else): a module of 20 public tables of
//! 8 columns with an index each, 20 reducers of 3 parameters, and their row types, described by
//! `describe` and written as the server writes it.
//!
//! `cargo bench -p wasmod-protocol --bench description`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use wasmod_abi::{
    AlgebraicType, ColumnDef, Field, IndexDef, ModuleDef, ParamDef, ReducerDef, TableDef, TypeDef,
    Typespace,
};
use wasmod_protocol::description::{describe, ModuleDescription, Tables};

/// The module: tables `t0` … `t19` of rows `Row0` … `Row19`, reducers `r0` … `r19`.
fn module() -> ModuleDef {
    let column_types = [
        AlgebraicType::U64,
        AlgebraicType::String,
        AlgebraicType::Identity,
        AlgebraicType::Timestamp,
        AlgebraicType::F32,
        AlgebraicType::Option(Box::new(AlgebraicType::String)),
        AlgebraicType::Array(Box::new(AlgebraicType::U8)),
        AlgebraicType::Bool,
    ];
    let columns: Vec<ColumnDef> = column_types
        .iter()
        .enumerate()
        .map(|(index, ty)| ColumnDef {
            name: format!("column_{index}"),
            ty: ty.clone(),
            default: None,
        })
        .collect();
    let types = (0..20)
        .map(|table| TypeDef {
            name: format!("module::Row{table}"),
            ty: AlgebraicType::Product(
                columns
                    .iter()
                    .map(|column| Field::named(&column.name, column.ty.clone()))
                    .collect(),
            ),
        })
        .collect();
    ModuleDef {
        typespace: Typespace { types },
        tables: (0..20)
            .map(|table| TableDef {
                name: format!("t{table}"),
                row_type: AlgebraicType::Ref(table),
                columns: columns.clone(),
                primary_key: Some(0),
                indexes: vec![IndexDef {
                    name: format!("t{table}_by_column_1"),
                    columns: vec![1],
                    unique: false,
                }],
                auto_inc: vec![0],
                public: true,
                schedule: None,
                visibility: None,
            })
            .collect(),
        reducers: (0..20)
            .map(|reducer| ReducerDef {
                name: format!("r{reducer}"),
                params: columns[..3]
                    .iter()
                    .map(|column| ParamDef {
                        name: column.name.clone(),
                        ty: column.ty.clone(),
                    })
                    .collect(),
                lifecycle: None,
            })
            .collect(),
        ..ModuleDef::default()
    }
}

fn description(c: &mut Criterion) {
    let described = describe(&module(), Tables::PublicOnly);
    let text = serde_json::to_string(&described).expect("a description writes");
    let read: ModuleDescription = serde_json::from_str(&text).expect("and reads back");
    assert_eq!(read, described);
    let mut group = c.benchmark_group("description");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("read_20_tables", |b| {
        b.iter(|| serde_json::from_str::<ModuleDescription>(black_box(&text)))
    });
    group.finish();
}

criterion_group!(benches, description);
criterion_main!(benches);
