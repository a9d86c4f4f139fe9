//! A module's description for people and clients: types written as in Rust, ids shown.
//!
//! The ABI's [`ModuleDef`] is built for the host (types are trees of [`AlgebraicType`]s with
//! references into a typespace, columns are positions). Clients want names: `Vec<Message>`,
//! not `Array(Ref(0))`; `primary_key: "id"`, not `Some(0)`. [`describe`] renders the
//! description that way, as JSON; `GET /v1/module` serves it (public tables only) and
//! `wasmod describe --json` prints it (every table). [`type_name`] is the one type renderer
//! both use.

use serde_json::{json, Value};
use wasmod_abi::{AlgebraicType, Field, Lifecycle, ModuleDef, ParamDef, TableDef, Typespace};

/// Which tables [`describe`] includes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tables {
    /// Every table, private ones marked `"public": false` (for the module's author).
    All,
    /// Only the tables clients may read (for clients).
    PublicOnly,
}

/// The description as JSON: tables (id, columns, keys, indexes, visibility), entry points by
/// category with their ids, and the named types.
pub fn describe(module: &ModuleDef, tables: Tables) -> Value {
    let typespace = &module.typespace;
    let table_list: Vec<Value> = module
        .tables
        .iter()
        .enumerate()
        .filter(|(_, table)| table.public || tables == Tables::All)
        .map(|(id, table)| table_json(id, table, typespace))
        .collect();
    let reducers: Vec<Value> = module
        .reducers
        .iter()
        .enumerate()
        .map(|(id, def)| {
            json!({
                "id": id,
                "name": def.name,
                "params": params_json(&def.params, typespace),
                "lifecycle": def.lifecycle.map(Lifecycle::as_str),
            })
        })
        .collect();
    let returning = |id: usize, name: &str, params: &[ParamDef], returns: &AlgebraicType| {
        json!({
            "id": id,
            "name": name,
            "params": params_json(params, typespace),
            "returns": type_name(returns, typespace),
        })
    };
    let procedures: Vec<Value> = module
        .procedures
        .iter()
        .enumerate()
        .map(|(id, def)| returning(id, &def.name, &def.params, &def.returns))
        .collect();
    let views = |list: &[wasmod_abi::ViewDef]| -> Vec<Value> {
        list.iter()
            .enumerate()
            .map(|(id, def)| returning(id, &def.name, &def.params, &def.returns))
            .collect()
    };
    let http_handlers: Vec<Value> = module
        .http_handlers
        .iter()
        .enumerate()
        .map(|(id, def)| {
            json!({ "id": id, "name": def.name, "method": def.method.as_str(), "path": def.path })
        })
        .collect();
    let shown = shown_types(module, tables);
    let types: Vec<Value> = typespace
        .types
        .iter()
        .zip(shown)
        .filter(|(_, shown)| *shown)
        .map(|(def, _)| type_def_json(&def.name, &def.ty, typespace))
        .collect();
    json!({
        "tables": table_list,
        "reducers": reducers,
        "procedures": procedures,
        "views": views(&module.views),
        "anonymous_views": views(&module.anonymous_views),
        "http_handlers": http_handlers,
        "types": types,
    })
}

/// Which named types [`describe`] lists: with [`Tables::All`], every one; with
/// [`Tables::PublicOnly`], those a client can meet (in public tables and entry points'
/// signatures, and the types they use), so that a private table's row type stays private.
fn shown_types(module: &ModuleDef, tables: Tables) -> Vec<bool> {
    let count = module.typespace.types.len();
    if tables == Tables::All {
        return vec![true; count];
    }
    let mut roots: Vec<&AlgebraicType> = module
        .tables
        .iter()
        .filter(|table| table.public)
        .map(|table| &table.row_type)
        .collect();
    let params = module
        .reducers
        .iter()
        .flat_map(|def| &def.params)
        .chain(module.procedures.iter().flat_map(|def| &def.params))
        .chain(module.views.iter().flat_map(|def| &def.params))
        .chain(module.anonymous_views.iter().flat_map(|def| &def.params));
    roots.extend(params.map(|param| &param.ty));
    roots.extend(module.procedures.iter().map(|def| &def.returns));
    roots.extend(module.views.iter().map(|def| &def.returns));
    roots.extend(module.anonymous_views.iter().map(|def| &def.returns));
    let mut shown = vec![false; count];
    while let Some(ty) = roots.pop() {
        match ty {
            AlgebraicType::Array(item)
            | AlgebraicType::FixedArray(item, _)
            | AlgebraicType::Option(item) => roots.push(item),
            AlgebraicType::Result(ok, err) => roots.extend([&**ok, &**err]),
            AlgebraicType::Product(fields) | AlgebraicType::Sum(fields) => {
                roots.extend(fields.iter().map(|field| &field.ty));
            }
            AlgebraicType::Ref(index) => {
                let index = *index as usize;
                if let (Some(false), Some(def)) =
                    (shown.get(index), module.typespace.types.get(index))
                {
                    shown[index] = true;
                    roots.push(&def.ty);
                }
            }
            _ => {}
        }
    }
    shown
}

/// `ty` written as in Rust: `u64`, `String`, `Vec<Message>`, `Option<(u32, bool)>`,
/// `[u8; 4]`, `Result<String, String>`. Named types are written by name (without their module
/// path when that is unambiguous: `Message` for `quickstart::chat::Message`); anonymous structs and
/// enums as `{ x: u32 }` and `enum { A(u32), B }`. A reference the typespace does not hold is
/// written `#<index>?`.
pub fn type_name(ty: &AlgebraicType, typespace: &Typespace) -> String {
    let name = |ty: &AlgebraicType| type_name(ty, typespace);
    match ty {
        AlgebraicType::Bool => "bool".into(),
        AlgebraicType::I8 => "i8".into(),
        AlgebraicType::U8 => "u8".into(),
        AlgebraicType::I16 => "i16".into(),
        AlgebraicType::U16 => "u16".into(),
        AlgebraicType::I32 => "i32".into(),
        AlgebraicType::U32 => "u32".into(),
        AlgebraicType::I64 => "i64".into(),
        AlgebraicType::U64 => "u64".into(),
        AlgebraicType::I128 => "i128".into(),
        AlgebraicType::U128 => "u128".into(),
        AlgebraicType::F32 => "f32".into(),
        AlgebraicType::F64 => "f64".into(),
        AlgebraicType::String => "String".into(),
        AlgebraicType::Identity => "Identity".into(),
        AlgebraicType::ConnectionId => "ConnectionId".into(),
        AlgebraicType::Timestamp => "Timestamp".into(),
        AlgebraicType::Array(item) => format!("Vec<{}>", name(item)),
        AlgebraicType::FixedArray(item, len) => format!("[{}; {len}]", name(item)),
        AlgebraicType::Option(some) => format!("Option<{}>", name(some)),
        AlgebraicType::Result(ok, err) => format!("Result<{}, {}>", name(ok), name(err)),
        AlgebraicType::Product(fields) if fields.iter().all(|field| field.name.is_none()) => {
            let items: Vec<String> = fields.iter().map(|field| name(&field.ty)).collect();
            match items.as_slice() {
                [one] => format!("({one},)"),
                _ => format!("({})", items.join(", ")),
            }
        }
        AlgebraicType::Product(fields) => {
            let items: Vec<String> = fields
                .iter()
                .enumerate()
                .map(|(index, field)| format!("{}: {}", field_name(index, field), name(&field.ty)))
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        AlgebraicType::Sum(variants) => {
            let items: Vec<String> = variants
                .iter()
                .enumerate()
                .map(|(index, variant)| {
                    let payload = variant_payload(&variant.ty, typespace);
                    match payload {
                        Some(payload) => format!("{}({payload})", field_name(index, variant)),
                        None => field_name(index, variant),
                    }
                })
                .collect();
            format!("enum {{ {} }}", items.join(", "))
        }
        AlgebraicType::Ref(index) => match typespace.types.get(*index as usize) {
            Some(def) => short_name(&def.name, typespace).to_owned(),
            None => format!("#{index}?"),
        },
    }
}

/// A named type's name without its module path (`Message` for `chat::Message`), unless
/// another type of the typespace has the same last segment.
fn short_name<'a>(name: &'a str, typespace: &Typespace) -> &'a str {
    let last = |name: &'a str| name.rsplit("::").next().unwrap_or(name);
    let short = last(name);
    let clashes = typespace
        .types
        .iter()
        .filter(|def| def.name.rsplit("::").next() == Some(short))
        .count();
    if clashes > 1 {
        name
    } else {
        short
    }
}

fn table_json(id: usize, table: &TableDef, typespace: &Typespace) -> Value {
    let column = |index: u16| {
        table
            .columns
            .get(usize::from(index))
            .map_or_else(|| format!("#{index}?"), |column| column.name.clone())
    };
    let columns: Vec<Value> = table
        .columns
        .iter()
        .map(|column| json!({ "name": column.name, "type": type_name(&column.ty, typespace) }))
        .collect();
    let indexes: Vec<Value> = table
        .indexes
        .iter()
        .enumerate()
        .map(|(index_id, index)| {
            let columns: Vec<String> = index.columns.iter().map(|&c| column(c)).collect();
            json!({ "id": index_id, "name": index.name, "columns": columns, "unique": index.unique })
        })
        .collect();
    let auto_inc: Vec<String> = table.auto_inc.iter().map(|&c| column(c)).collect();
    json!({
        "id": id,
        "name": table.name,
        "public": table.public,
        "row_type": type_name(&table.row_type, typespace),
        "columns": columns,
        "primary_key": table.primary_key.map(column),
        "indexes": indexes,
        "auto_inc": auto_inc,
    })
}

fn params_json(params: &[ParamDef], typespace: &Typespace) -> Vec<Value> {
    params
        .iter()
        .map(|param| json!({ "name": param.name, "type": type_name(&param.ty, typespace) }))
        .collect()
}

/// A named type: a struct's fields or an enum's variants.
fn type_def_json(name: &str, ty: &AlgebraicType, typespace: &Typespace) -> Value {
    let members = |fields: &[Field], payload: fn(&AlgebraicType, &Typespace) -> Option<String>| {
        fields
            .iter()
            .enumerate()
            .map(|(index, field)| {
                json!({ "name": field_name(index, field), "type": payload(&field.ty, typespace) })
            })
            .collect::<Vec<Value>>()
    };
    match ty {
        AlgebraicType::Product(fields) => json!({
            "name": name,
            "kind": "struct",
            "fields": members(fields, |ty, typespace| Some(type_name(ty, typespace))),
        }),
        AlgebraicType::Sum(variants) => json!({
            "name": name,
            "kind": "enum",
            "variants": members(variants, variant_payload),
        }),
        other => json!({ "name": name, "kind": "alias", "type": type_name(other, typespace) }),
    }
}

/// A variant's payload type, or `None` for a unit variant (an empty product).
fn variant_payload(ty: &AlgebraicType, typespace: &Typespace) -> Option<String> {
    match ty {
        AlgebraicType::Product(fields) if fields.is_empty() => None,
        other => Some(type_name(other, typespace)),
    }
}

/// A field's or variant's name, or its position for an unnamed one.
fn field_name(index: usize, field: &Field) -> String {
    field.name.clone().unwrap_or_else(|| index.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_abi::TypeDef;

    fn typespace() -> Typespace {
        Typespace {
            types: vec![
                TypeDef {
                    name: "geo::Point".into(),
                    ty: AlgebraicType::Product(vec![
                        Field::named("x", AlgebraicType::U32),
                        Field::named("y", AlgebraicType::U32),
                    ]),
                },
                TypeDef {
                    name: "Shape".into(),
                    ty: AlgebraicType::Sum(vec![
                        Field::named("Dot", AlgebraicType::Ref(0)),
                        Field::named("Empty", AlgebraicType::Product(vec![])),
                    ]),
                },
            ],
        }
    }

    #[test]
    fn types_are_written_as_in_rust() {
        let ts = typespace();
        let cases = [
            (
                AlgebraicType::Array(Box::new(AlgebraicType::Ref(0))),
                "Vec<Point>",
            ),
            (
                AlgebraicType::Option(Box::new(AlgebraicType::Product(vec![
                    Field::unnamed(AlgebraicType::U32),
                    Field::unnamed(AlgebraicType::Bool),
                ]))),
                "Option<(u32, bool)>",
            ),
            (
                AlgebraicType::FixedArray(Box::new(AlgebraicType::U8), 4),
                "[u8; 4]",
            ),
            (
                AlgebraicType::Result(
                    Box::new(AlgebraicType::String),
                    Box::new(AlgebraicType::Identity),
                ),
                "Result<String, Identity>",
            ),
            (AlgebraicType::Product(vec![]), "()"),
            (
                AlgebraicType::Product(vec![Field::unnamed(AlgebraicType::I8)]),
                "(i8,)",
            ),
            (
                AlgebraicType::Product(vec![Field::named("a", AlgebraicType::Timestamp)]),
                "{ a: Timestamp }",
            ),
            (ts.types[1].ty.clone(), "enum { Dot(Point), Empty }"),
            (AlgebraicType::Ref(9), "#9?"),
        ];
        let mut clash = ts.clone();
        clash.types[1].name = "other::Point".into();
        assert_eq!(type_name(&AlgebraicType::Ref(0), &clash), "geo::Point");
        for (ty, expected) in cases {
            assert_eq!(type_name(&ty, &ts), expected);
        }
    }

    #[test]
    fn clients_are_not_shown_the_types_only_private_tables_use() {
        use wasmod_abi::{ColumnDef, TableDef};
        let mut typespace = typespace();
        typespace.types.push(TypeDef {
            name: "Secret".into(),
            ty: AlgebraicType::Product(vec![Field::named("key", AlgebraicType::String)]),
        });
        let table = |name: &str, row: u32, public: bool| TableDef {
            name: name.into(),
            row_type: AlgebraicType::Ref(row),
            columns: vec![ColumnDef {
                name: "key".into(),
                ty: AlgebraicType::String,
            }],
            primary_key: None,
            indexes: vec![],
            auto_inc: vec![],
            public,
        };
        let module = ModuleDef {
            typespace,
            tables: vec![table("shapes", 1, true), table("secrets", 2, false)],
            ..ModuleDef::default()
        };
        let names = |tables| {
            let json = describe(&module, tables);
            let types = json["types"].as_array().cloned().unwrap_or_default();
            types
                .iter()
                .map(|ty| ty["name"].to_string())
                .collect::<Vec<_>>()
        };
        // `Shape` refers to `geo::Point`, so both are shown; `Secret` is not.
        assert_eq!(names(Tables::PublicOnly), ["\"geo::Point\"", "\"Shape\""]);
        assert_eq!(names(Tables::All).len(), 3);
    }

    #[test]
    fn named_types_list_their_fields_and_variants() {
        let module = ModuleDef {
            typespace: typespace(),
            ..ModuleDef::default()
        };
        let json = describe(&module, Tables::All);
        assert_eq!(
            json["types"][1],
            json!({"name": "Shape", "kind": "enum", "variants": [
                {"name": "Dot", "type": "Point"}, {"name": "Empty", "type": null}
            ]})
        );
        assert_eq!(
            json["types"][0]["fields"][1],
            json!({"name": "y", "type": "u32"})
        );
    }
}
