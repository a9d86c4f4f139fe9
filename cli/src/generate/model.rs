//! What every language's bindings of a module have, read from its description once: the
//! named types a client meets (each with a name unique among them), the public tables with
//! their primary key and the columns to look rows up by, and the calls a client may make.
//!
//! Private tables, lifecycle reducers (the host calls them, never a client) and HTTP handlers
//! (reached over HTTP, not the WebSocket) are left out, and so are the named types only they
//! use.

use super::names::{all_identifiers, path_identifiers, upper_camel};
use std::collections::{BTreeSet, HashMap};
use wasmod_abi::{AlgebraicType, Field, ModuleDef, Typespace};

/// A module's bindings, language aside.
#[derive(Debug)]
pub struct Bindings {
    /// The module's typespace, which the types' references point into.
    pub typespace: Typespace,
    /// The named types clients meet, in typespace order.
    pub types: Vec<NamedType>,
    /// The public tables, in description order.
    pub tables: Vec<Table>,
    /// The reducers a client may call.
    pub reducers: Vec<Call>,
    /// The procedures.
    pub procedures: Vec<Call>,
    /// The views, those that see their caller and those that do not.
    pub views: Vec<Call>,
}

/// A named type of the module.
#[derive(Debug)]
pub struct NamedType {
    /// Its position in the typespace.
    pub index: u32,
    /// Its name in the bindings, `UpperCamel` and unique among the types.
    pub name: String,
    /// Its name in the module: a Rust path.
    pub path: String,
    /// Its structure: a product or a sum.
    pub ty: AlgebraicType,
}

/// A public table.
#[derive(Debug)]
pub struct Table {
    /// Its name.
    pub name: String,
    /// Its row type: a reference to a named product.
    pub row_type: AlgebraicType,
    /// Its columns, in row order.
    pub columns: Vec<Field>,
    /// The position of the primary key column.
    pub primary_key: Option<usize>,
    /// The columns with at most one row per value: the primary key and unique columns.
    pub unique: Vec<usize>,
    /// The other columns that lead an index.
    pub indexed: Vec<usize>,
}

/// A reducer, procedure or view.
#[derive(Debug)]
pub struct Call {
    /// Its name.
    pub name: String,
    /// Its parameters, named, in order.
    pub params: Vec<Field>,
    /// What it returns; `None` for a reducer.
    pub returns: Option<AlgebraicType>,
}

impl Bindings {
    /// The bindings of `module`.
    pub fn of(module: &ModuleDef) -> Self {
        let tables: Vec<Table> = module
            .tables
            .iter()
            .filter(|table| table.public)
            .map(|table| {
                let columns = table
                    .columns
                    .iter()
                    .map(|column| Field::named(&column.name, column.ty.clone()))
                    .collect();
                let unique: BTreeSet<usize> = table
                    .indexes
                    .iter()
                    .filter(|index| index.unique)
                    .filter_map(|index| match index.columns.as_slice() {
                        [column] => Some(usize::from(*column)),
                        _ => None,
                    })
                    .chain(table.primary_key.map(usize::from))
                    .collect();
                let indexed: BTreeSet<usize> = table
                    .indexes
                    .iter()
                    .filter_map(|index| index.columns.first().map(|&column| usize::from(column)))
                    .filter(|column| !unique.contains(column))
                    .collect();
                Table {
                    name: table.name.clone(),
                    row_type: table.row_type.clone(),
                    columns,
                    primary_key: table.primary_key.map(usize::from),
                    unique: unique.into_iter().collect(),
                    indexed: indexed.into_iter().collect(),
                }
            })
            .collect();
        let call =
            |name: &str, params: &[wasmod_abi::ParamDef], returns: Option<&AlgebraicType>| Call {
                name: name.to_owned(),
                params: params
                    .iter()
                    .map(|param| Field::named(&param.name, param.ty.clone()))
                    .collect(),
                returns: returns.cloned(),
            };
        let reducers: Vec<Call> = module
            .reducers
            .iter()
            .filter(|reducer| reducer.lifecycle.is_none())
            .map(|reducer| call(&reducer.name, &reducer.params, None))
            .collect();
        let procedures: Vec<Call> = module
            .procedures
            .iter()
            .map(|procedure| call(&procedure.name, &procedure.params, Some(&procedure.returns)))
            .collect();
        let views: Vec<Call> = module
            .views
            .iter()
            .chain(&module.anonymous_views)
            .map(|view| call(&view.name, &view.params, Some(&view.returns)))
            .collect();

        let mut used = BTreeSet::new();
        let roots = tables.iter().map(|table| &table.row_type).chain(
            reducers
                .iter()
                .chain(&procedures)
                .chain(&views)
                .flat_map(|call| {
                    call.params
                        .iter()
                        .map(|param| &param.ty)
                        .chain(call.returns.as_ref())
                }),
        );
        for root in roots {
            collect_references(root, &module.typespace, &mut used);
        }
        Self {
            types: named_types(&module.typespace, &used),
            typespace: module.typespace.clone(),
            tables,
            reducers,
            procedures,
            views,
        }
    }

    /// Every call: the reducers, then the procedures, then the views.
    pub fn calls(&self) -> impl Iterator<Item = &Call> {
        self.reducers
            .iter()
            .chain(&self.procedures)
            .chain(&self.views)
    }

    /// The names of the tables whose rows are of the named type at `index`, quoted as
    /// Markdown code (`` `message` ``), for the type's documentation.
    pub fn tables_of(&self, index: u32) -> Vec<String> {
        self.tables
            .iter()
            .filter(|table| table.row_type == AlgebraicType::Ref(index))
            .map(|table| format!("`{}`", table.name))
            .collect()
    }

    /// The named type at `index` of the typespace, if clients meet it.
    pub fn named(&self, index: u32) -> Option<&NamedType> {
        self.types.iter().find(|named| named.index == index)
    }

    /// Whether a value of the named type `from` can hold a `to` inline: through fields,
    /// variants, options and fixed arrays, not through the indirection of a counted array.
    /// A type that holds itself inline needs a box in languages that lay values out inline.
    pub fn holds_inline(&self, from: u32, to: u32) -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(index) = stack.pop() {
            if !seen.insert(index) {
                continue;
            }
            let Some(def) = self.typespace.types.get(index as usize) else {
                continue;
            };
            let mut inline = Vec::new();
            inline_references(&def.ty, &mut inline);
            if inline.contains(&to) {
                return true;
            }
            stack.extend(inline);
        }
        false
    }
}

/// Adds to `used` every named type `ty` refers to, directly or through other named types.
fn collect_references(ty: &AlgebraicType, typespace: &Typespace, used: &mut BTreeSet<u32>) {
    match ty {
        AlgebraicType::Ref(index) if used.insert(*index) => {
            if let Some(def) = typespace.types.get(*index as usize) {
                collect_references(&def.ty, typespace, used);
            }
        }
        AlgebraicType::Array(item)
        | AlgebraicType::FixedArray(item, _)
        | AlgebraicType::Option(item) => collect_references(item, typespace, used),
        AlgebraicType::Result(ok, err) => {
            collect_references(ok, typespace, used);
            collect_references(err, typespace, used);
        }
        AlgebraicType::Product(fields) | AlgebraicType::Sum(fields) => {
            for field in fields {
                collect_references(&field.ty, typespace, used);
            }
        }
        _ => {}
    }
}

/// The named types `ty` holds inline (not behind a counted array), pushed to `out`.
fn inline_references(ty: &AlgebraicType, out: &mut Vec<u32>) {
    match ty {
        AlgebraicType::Ref(index) => out.push(*index),
        AlgebraicType::FixedArray(item, _) | AlgebraicType::Option(item) => {
            inline_references(item, out)
        }
        AlgebraicType::Result(ok, err) => {
            inline_references(ok, out);
            inline_references(err, out);
        }
        AlgebraicType::Product(fields) | AlgebraicType::Sum(fields) => {
            for field in fields {
                inline_references(&field.ty, out);
            }
        }
        _ => {}
    }
}

/// The `used` types of `typespace`, named: by their last path segment and type arguments
/// (`Message`, `PairU32`), or, where two would share that name, by their whole path
/// (`ChatMessage`), and a type's position where even that is shared.
fn named_types(typespace: &Typespace, used: &BTreeSet<u32>) -> Vec<NamedType> {
    let short = |path: &str| upper_camel(&path_identifiers(path));
    let mut short_counts: HashMap<String, usize> = HashMap::new();
    for &index in used {
        if let Some(def) = typespace.types.get(index as usize) {
            *short_counts.entry(short(&def.name)).or_default() += 1;
        }
    }
    let long = |path: &str| {
        let name = short(path);
        if short_counts[&name] > 1 {
            upper_camel(&all_identifiers(path))
        } else {
            name
        }
    };
    let mut long_counts: HashMap<String, usize> = HashMap::new();
    for &index in used {
        if let Some(def) = typespace.types.get(index as usize) {
            *long_counts.entry(long(&def.name)).or_default() += 1;
        }
    }
    used.iter()
        .filter_map(|&index| {
            let def = typespace.types.get(index as usize)?;
            let mut name = long(&def.name);
            if long_counts[&name] > 1 {
                name = format!("{name}{index}");
            }
            Some(NamedType {
                index,
                name,
                path: def.name.clone(),
                ty: def.ty.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_abi::{ColumnDef, IndexDef, Lifecycle, ReducerDef, TableDef, TypeDef};

    fn product(fields: &[(&str, AlgebraicType)]) -> AlgebraicType {
        AlgebraicType::Product(
            fields
                .iter()
                .map(|(name, ty)| Field::named(name, ty.clone()))
                .collect(),
        )
    }

    fn named(name: &str, ty: AlgebraicType) -> TypeDef {
        TypeDef {
            name: name.into(),
            ty,
        }
    }

    fn table(name: &str, row: u32, columns: &[(&str, AlgebraicType)], public: bool) -> TableDef {
        TableDef {
            name: name.into(),
            row_type: AlgebraicType::Ref(row),
            columns: columns
                .iter()
                .map(|(name, ty)| ColumnDef {
                    name: (*name).into(),
                    ty: ty.clone(),
                    default: None,
                })
                .collect(),
            primary_key: None,
            indexes: Vec::new(),
            auto_inc: Vec::new(),
            public,
            schedule: None,
            visibility: None,
        }
    }

    #[test]
    fn only_what_clients_meet_is_kept_and_lookups_come_from_the_indexes() {
        let row = [
            ("id", AlgebraicType::U64),
            ("owner", AlgebraicType::Identity),
            ("name", AlgebraicType::String),
            ("zone", AlgebraicType::U32),
        ];
        let mut item = table("item", 0, &row, true);
        item.primary_key = Some(0);
        item.indexes = vec![
            IndexDef {
                name: "id".into(),
                columns: vec![0],
                unique: true,
            },
            IndexDef {
                name: "name".into(),
                columns: vec![2],
                unique: true,
            },
            IndexDef {
                name: "owner".into(),
                columns: vec![1],
                unique: false,
            },
            IndexDef {
                name: "zone_owner".into(),
                columns: vec![3, 1],
                unique: true,
            },
        ];
        let module = ModuleDef {
            typespace: Typespace {
                types: vec![
                    named("game::Item", product(&row)),
                    named("game::Secret", product(&[("x", AlgebraicType::U8)])),
                    named("game::Kind", AlgebraicType::Sum(Vec::new())),
                ],
            },
            tables: vec![item, table("secret", 1, &[("x", AlgebraicType::U8)], false)],
            reducers: vec![
                ReducerDef {
                    name: "init".into(),
                    params: Vec::new(),
                    lifecycle: Some(Lifecycle::Init),
                },
                ReducerDef {
                    name: "make".into(),
                    params: vec![wasmod_abi::ParamDef {
                        name: "kind".into(),
                        ty: AlgebraicType::Option(Box::new(AlgebraicType::Ref(2))),
                    }],
                    lifecycle: None,
                },
            ],
            ..ModuleDef::default()
        };
        let bindings = Bindings::of(&module);
        let names: Vec<&str> = bindings.types.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["Item", "Kind"],
            "the private table's type is left out"
        );
        assert_eq!(bindings.tables.len(), 1);
        let item = &bindings.tables[0];
        assert_eq!(item.primary_key, Some(0));
        assert_eq!(
            item.unique,
            [0, 2],
            "a two-column unique index makes no column unique"
        );
        assert_eq!(item.indexed, [1, 3], "each index's leading column");
        let reducers: Vec<&str> = bindings.reducers.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(reducers, ["make"], "lifecycle reducers are the host's");
    }

    #[test]
    fn names_are_short_unless_two_types_would_share_one() {
        let typespace = Typespace {
            types: vec![
                named("chat::Message", AlgebraicType::Sum(Vec::new())),
                named("mail::Message", AlgebraicType::Sum(Vec::new())),
                named("chat::Pair<u32>", AlgebraicType::Sum(Vec::new())),
                named("a::b::Same", AlgebraicType::Sum(Vec::new())),
                named("a::b::Same", AlgebraicType::Sum(Vec::new())),
            ],
        };
        let named = named_types(&typespace, &(0..5).collect());
        let names: Vec<&str> = named.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "ChatMessage",
                "MailMessage",
                "PairU32",
                "ABSame3",
                "ABSame4"
            ]
        );
    }

    #[test]
    fn a_type_holds_itself_inline_through_options_but_not_through_vecs() {
        let module = ModuleDef {
            typespace: Typespace {
                types: vec![
                    named(
                        "t::List",
                        product(&[(
                            "next",
                            AlgebraicType::Option(Box::new(AlgebraicType::Ref(1))),
                        )]),
                    ),
                    named("t::Node", product(&[("list", AlgebraicType::Ref(0))])),
                    named(
                        "t::Tree",
                        product(&[(
                            "children",
                            AlgebraicType::Array(Box::new(AlgebraicType::Ref(2))),
                        )]),
                    ),
                ],
            },
            ..ModuleDef::default()
        };
        let bindings = Bindings::of(&module);
        assert!(bindings.holds_inline(1, 0));
        assert!(
            bindings.holds_inline(0, 0),
            "List holds a Node that holds a List"
        );
        assert!(!bindings.holds_inline(2, 2), "a Vec is an indirection");
    }
}
