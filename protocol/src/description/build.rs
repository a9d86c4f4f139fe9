//! [`describe`]: a [`ModuleDef`] as a [`ModuleDescription`].

use super::type_name::{field_name, type_name, variant_payload};
use super::{
    FunctionDescription, HttpHandlerDescription, IndexDescription, ModuleDescription,
    ReducerDescription, ScheduleDescription, TableDescription, TypeDescription, Typed,
    VariantDescription,
};
use wasmod_abi::{AlgebraicType, ModuleDef, ParamDef, TableDef, Typespace, ViewDef};

/// Which tables [`describe`] includes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tables {
    /// Every table, private ones marked `"public": false` (for the module's author).
    All,
    /// Only the tables clients may read (for clients).
    PublicOnly,
}

/// The description of `module`: tables (id, columns, keys, indexes, visibility), entry points
/// by category with their ids, and the named types (with [`Tables::PublicOnly`], only those a
/// client can meet, so that a private table's row type stays private).
pub fn describe(module: &ModuleDef, tables: Tables) -> ModuleDescription {
    let typespace = &module.typespace;
    let functions = |list: &[ViewDef]| -> Vec<FunctionDescription> {
        list.iter()
            .zip(0..)
            .map(|(def, id)| function(id, &def.name, &def.params, &def.returns, typespace))
            .collect()
    };
    let shown = shown_types(module, tables);
    ModuleDescription {
        anonymous_views: functions(&module.anonymous_views),
        http_handlers: module
            .http_handlers
            .iter()
            .zip(0..)
            .map(|(def, id)| HttpHandlerDescription {
                id,
                method: def.method.as_str().to_owned(),
                name: def.name.clone(),
                path: def.path.clone(),
            })
            .collect(),
        procedures: module
            .procedures
            .iter()
            .zip(0..)
            .map(|(def, id)| function(id, &def.name, &def.params, &def.returns, typespace))
            .collect(),
        reducers: module
            .reducers
            .iter()
            .zip(0..)
            .map(|(def, id)| ReducerDescription {
                id,
                lifecycle: def.lifecycle,
                name: def.name.clone(),
                params: params(&def.params, typespace),
            })
            .collect(),
        tables: module
            .tables
            .iter()
            .zip(0..)
            .filter(|(table, _)| table.public || tables == Tables::All)
            .map(|(table, id)| table_description(id, table, typespace))
            .collect(),
        types: typespace
            .types
            .iter()
            .zip(shown)
            .filter(|(_, shown)| *shown)
            .map(|(def, _)| type_description(&def.name, &def.ty, typespace))
            .collect(),
        views: functions(&module.views),
    }
}

/// Which named types [`describe`] lists: with [`Tables::All`], every one; with
/// [`Tables::PublicOnly`], those a client can meet (in public tables and entry points'
/// signatures, and the types they use).
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

fn function(
    id: u32,
    name: &str,
    params_of: &[ParamDef],
    returns: &AlgebraicType,
    typespace: &Typespace,
) -> FunctionDescription {
    FunctionDescription {
        id,
        name: name.to_owned(),
        params: params(params_of, typespace),
        returns: type_name(returns, typespace),
    }
}

fn params(params: &[ParamDef], typespace: &Typespace) -> Vec<Typed> {
    params
        .iter()
        .map(|param| Typed {
            name: param.name.clone(),
            ty: type_name(&param.ty, typespace),
        })
        .collect()
}

fn table_description(id: u32, table: &TableDef, typespace: &Typespace) -> TableDescription {
    let column = |index: u16| {
        table
            .columns
            .get(usize::from(index))
            .map_or_else(|| format!("#{index}?"), |column| column.name.clone())
    };
    TableDescription {
        auto_inc: table.auto_inc.iter().map(|&c| column(c)).collect(),
        columns: table
            .columns
            .iter()
            .map(|column| Typed {
                name: column.name.clone(),
                ty: type_name(&column.ty, typespace),
            })
            .collect(),
        id,
        indexes: table
            .indexes
            .iter()
            .zip(0..)
            .map(|(index, id)| IndexDescription {
                columns: index.columns.iter().map(|&c| column(c)).collect(),
                id,
                name: index.name.clone(),
                unique: index.unique,
            })
            .collect(),
        name: table.name.clone(),
        primary_key: table.primary_key.map(column),
        public: table.public,
        row_type: type_name(&table.row_type, typespace),
        schedule: table.schedule.as_ref().map(|schedule| ScheduleDescription {
            at: column(schedule.at),
            reducer: schedule.reducer.clone(),
        }),
        visibility: table.visibility.clone(),
    }
}

/// A named type: a struct's fields or an enum's variants.
fn type_description(name: &str, ty: &AlgebraicType, typespace: &Typespace) -> TypeDescription {
    let name = name.to_owned();
    match ty {
        AlgebraicType::Product(fields) => TypeDescription::Struct {
            name,
            fields: fields
                .iter()
                .enumerate()
                .map(|(index, field)| Typed {
                    name: field_name(index, field),
                    ty: type_name(&field.ty, typespace),
                })
                .collect(),
        },
        AlgebraicType::Sum(variants) => TypeDescription::Enum {
            name,
            variants: variants
                .iter()
                .enumerate()
                .map(|(index, variant)| VariantDescription {
                    name: field_name(index, variant),
                    payload: variant_payload(&variant.ty, typespace),
                })
                .collect(),
        },
        other => TypeDescription::Alias {
            name,
            ty: type_name(other, typespace),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wasmod_abi::{ColumnDef, Field, IndexDef, Lifecycle, ReducerDef, TypeDef};

    fn typespace() -> Typespace {
        super::super::example_typespace()
    }

    fn table(name: &str, row: u32, public: bool) -> TableDef {
        TableDef {
            name: name.into(),
            row_type: AlgebraicType::Ref(row),
            columns: vec![ColumnDef {
                name: "key".into(),
                ty: AlgebraicType::String,
                default: None,
            }],
            primary_key: Some(0),
            indexes: vec![IndexDef {
                name: "by_key".into(),
                columns: vec![0],
                unique: true,
            }],
            auto_inc: vec![],
            public,
            schedule: None,
            visibility: None,
        }
    }

    #[test]
    fn clients_are_not_shown_the_types_only_private_tables_use() {
        let mut typespace = typespace();
        typespace.types.push(TypeDef {
            name: "Secret".into(),
            ty: AlgebraicType::Product(vec![Field::named("key", AlgebraicType::String)]),
        });
        let module = ModuleDef {
            typespace,
            tables: vec![table("shapes", 1, true), table("secrets", 2, false)],
            ..ModuleDef::default()
        };
        let names = |tables| {
            describe(&module, tables)
                .types
                .iter()
                .map(|ty| ty.name().to_owned())
                .collect::<Vec<_>>()
        };
        // `Shape` refers to `geo::Point`, so both are shown; `Secret` is not.
        assert_eq!(names(Tables::PublicOnly), ["geo::Point", "Shape"]);
        assert_eq!(names(Tables::All).len(), 3);
        assert_eq!(describe(&module, Tables::PublicOnly).tables.len(), 1);
    }

    #[test]
    fn the_description_is_written_as_it_always_was_and_read_back() {
        let mut typespace = typespace();
        typespace.types.push(TypeDef {
            name: "Score".into(),
            ty: AlgebraicType::U64,
        });
        let module = ModuleDef {
            typespace,
            tables: vec![table("shapes", 1, true)],
            reducers: vec![ReducerDef {
                name: "init".into(),
                params: vec![],
                lifecycle: Some(Lifecycle::Init),
            }],
            ..ModuleDef::default()
        };
        let description = describe(&module, Tables::All);
        let text = serde_json::to_string(&description).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        // Keys in sorted order at every level: what a `serde_json` map writes.
        assert_eq!(text, serde_json::to_string(&json).unwrap());
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
        assert_eq!(
            json["tables"][0],
            json!({"id": 0, "name": "shapes", "public": true, "row_type": "Shape",
                   "columns": [{"name": "key", "type": "String"}], "primary_key": "key",
                   "indexes": [{"id": 0, "name": "by_key", "columns": ["key"], "unique": true}],
                   "auto_inc": [], "schedule": null, "visibility": null})
        );
        assert_eq!(
            json["reducers"][0],
            json!({"id": 0, "name": "init", "params": [], "lifecycle": "init"})
        );
        assert_eq!(
            json["types"][2],
            json!({"name": "Score", "kind": "alias", "type": "u64"})
        );
        let read: ModuleDescription = serde_json::from_str(&text).unwrap();
        assert_eq!(read, description);
        assert_eq!(
            read.callable_kind("init"),
            Some(wasmod_abi::EntryKind::Reducer)
        );
        assert_eq!(read.callable_kind("nope"), None);
    }
}
