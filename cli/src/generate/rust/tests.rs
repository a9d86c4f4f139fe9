//! The Rust writer: identifiers, the type mapping, boxing, and whole files from small
//! descriptions (their items, determinism, and the names they refuse).

use super::*;
use wasmod_abi::{ColumnDef, IndexDef, ModuleDef, ParamDef, ProcedureDef, ReducerDef, TableDef};
use wasmod_abi::{TypeDef, Typespace};

fn text(tokens: TokenStream) -> String {
    tokens.to_string()
}

fn product(fields: &[(&str, AlgebraicType)]) -> AlgebraicType {
    AlgebraicType::Product(
        fields
            .iter()
            .map(|(name, ty)| Field::named(name, ty.clone()))
            .collect(),
    )
}

/// A module with one public table `thing` of the named type `game::Thing`, keyed by `id`.
fn module(row: &[(&str, AlgebraicType)], mut more_types: Vec<TypeDef>) -> ModuleDef {
    let mut types = vec![TypeDef {
        name: "game::Thing".into(),
        ty: product(row),
    }];
    types.append(&mut more_types);
    ModuleDef {
        typespace: Typespace { types },
        tables: vec![TableDef {
            name: "thing".into(),
            row_type: AlgebraicType::Ref(0),
            columns: row
                .iter()
                .map(|(name, ty)| ColumnDef {
                    name: (*name).into(),
                    ty: ty.clone(),
                    default: None,
                })
                .collect(),
            primary_key: Some(0),
            indexes: vec![IndexDef {
                name: "id".into(),
                columns: vec![0],
                unique: true,
            }],
            auto_inc: Vec::new(),
            public: true,
            schedule: None,
            visibility: None,
        }],
        ..ModuleDef::default()
    }
}

#[test]
fn names_become_identifiers_keywords_raw() {
    assert_eq!(member_ident("type").to_string(), "r#type");
    assert_eq!(member_ident("match").to_string(), "r#match");
    assert_eq!(member_ident("self").to_string(), "self_");
    assert_eq!(member_ident("sentAt").to_string(), "sent_at");
    assert_eq!(member_ident("1st").to_string(), "_1st");
    assert_eq!(type_ident("Self").to_string(), "Self_");
    assert_eq!(unraw(&member_ident("type")), "type");
}

#[test]
fn every_abi_type_has_its_rust_type() {
    let module = module(&[("id", AlgebraicType::U64)], Vec::new());
    let bindings = Bindings::of(&module);
    let writer = Writer {
        bindings: &bindings,
    };
    let boxed = |ty: AlgebraicType| Box::new(ty);
    let cases = [
        (AlgebraicType::Bool, quote!(bool)),
        (AlgebraicType::I128, quote!(i128)),
        (AlgebraicType::F32, quote!(f32)),
        (AlgebraicType::String, quote!(String)),
        (AlgebraicType::Identity, quote!(wasmod_abi::Identity)),
        (
            AlgebraicType::ConnectionId,
            quote!(wasmod_abi::ConnectionId),
        ),
        (AlgebraicType::Timestamp, quote!(wasmod_abi::Timestamp)),
        (
            AlgebraicType::Array(boxed(AlgebraicType::U8)),
            quote!(Vec<u8>),
        ),
        (
            AlgebraicType::FixedArray(boxed(AlgebraicType::U8), 4),
            quote!([u8; 4]),
        ),
        (
            AlgebraicType::Option(boxed(AlgebraicType::Ref(0))),
            quote!(Option<Thing>),
        ),
        (
            AlgebraicType::Result(boxed(AlgebraicType::String), boxed(AlgebraicType::U32)),
            quote!(Result<String, u32>),
        ),
        (AlgebraicType::Product(Vec::new()), quote!(())),
        (
            AlgebraicType::Product(vec![Field::unnamed(AlgebraicType::U8)]),
            quote!((u8,)),
        ),
        (
            product(&[("x", AlgebraicType::F64), ("y", AlgebraicType::F64)]),
            quote!((f64, f64)),
        ),
    ];
    for (ty, expected) in cases {
        let written = writer.rust_type(&ty, None).expect("a Rust type");
        assert_eq!(text(written), text(expected), "{ty:?}");
    }
    assert!(writer
        .rust_type(&AlgebraicType::Sum(Vec::new()), None)
        .is_err());
    assert!(writer.rust_type(&AlgebraicType::Ref(9), None).is_err());

    let (ty, by_ref) = writer.parameter(&AlgebraicType::String).expect("a type");
    assert_eq!((text(ty), by_ref), (text(quote!(&str)), true));
    let (ty, by_ref) = writer.parameter(&AlgebraicType::Identity).expect("a type");
    assert_eq!(
        (text(ty), by_ref),
        (text(quote!(wasmod_abi::Identity)), false)
    );
    let array = AlgebraicType::Array(Box::new(AlgebraicType::U8));
    let (ty, by_ref) = writer.parameter(&array).expect("a type");
    assert_eq!((text(ty), by_ref), (text(quote!(&[u8])), true));
    let (ty, by_ref) = writer.parameter(&AlgebraicType::Ref(0)).expect("a type");
    assert_eq!((text(ty), by_ref), (text(quote!(&Thing)), true));
}

#[test]
fn a_type_that_holds_itself_is_boxed_where_it_would_be_inline() {
    let module = module(
        &[
            ("id", AlgebraicType::U64),
            (
                "parent",
                AlgebraicType::Option(Box::new(AlgebraicType::Ref(0))),
            ),
            (
                "children",
                AlgebraicType::Array(Box::new(AlgebraicType::Ref(0))),
            ),
        ],
        Vec::new(),
    );
    let code = generate(&Bindings::of(&module), "tree").expect("bindings");
    assert!(code.contains("pub parent: Option<Box<Thing>>,"), "{code}");
    assert!(code.contains("pub children: Vec<Thing>,"), "{code}");
}

#[test]
fn a_module_gives_one_deterministic_formatted_file_with_every_part() {
    let mut module = module(
        &[
            ("id", AlgebraicType::U64),
            ("type", AlgebraicType::Ref(1)),
            (
                "tags",
                AlgebraicType::Array(Box::new(AlgebraicType::String)),
            ),
        ],
        vec![TypeDef {
            name: "game::Kind".into(),
            ty: AlgebraicType::Sum(vec![
                Field::named("Plain", AlgebraicType::Product(Vec::new())),
                Field::named("Sized", AlgebraicType::U32),
                Field::named("At", product(&[("x", AlgebraicType::I32)])),
                Field::named(
                    "Span",
                    AlgebraicType::Product(vec![
                        Field::unnamed(AlgebraicType::U8),
                        Field::unnamed(AlgebraicType::U8),
                    ]),
                ),
                Field::named(
                    "One",
                    AlgebraicType::Product(vec![Field::unnamed(AlgebraicType::U8)]),
                ),
            ]),
        }],
    );
    module.tables[0].indexes.push(IndexDef {
        name: "type".into(),
        columns: vec![1],
        unique: false,
    });
    module.reducers.push(ReducerDef {
        name: "make".into(),
        params: vec![
            ParamDef {
                name: "type".into(),
                ty: AlgebraicType::Ref(1),
            },
            ParamDef {
                name: "count".into(),
                ty: AlgebraicType::U32,
            },
        ],
        lifecycle: None,
    });
    module.procedures.push(ProcedureDef {
        name: "roll".into(),
        params: Vec::new(),
        returns: AlgebraicType::U8,
    });
    let bindings = Bindings::of(&module);
    let code = generate(&bindings, "game").expect("bindings");
    assert_eq!(generate(&bindings, "game").expect("bindings"), code);
    assert!(code.starts_with("// @generated by `wasmod generate --lang rust`"));
    syn::parse_file(&code).expect("the file parses");
    for expected in [
        "pub struct Thing {",
        "pub r#type: Kind,",
        "pub enum Kind {",
        "Plain,",
        "Sized(u32),",
        "At {",
        "x: i32,",
        "Span(u8, u8),",
        "One((u8,)),",
        "/// Column `tags`.",
        "pub fn find_by_id(&self, id: u64) -> Result<Option<Thing>, wasmod_client::Error> {",
        "self.handle.find_by(\"id\", &id)",
        "pub fn filter_by_type(",
        "self.handle.filter_by(\"type\", r#type)",
        "pub fn on_update(&self, callback: impl FnMut(&Thing, &Thing) + Send + 'static,) -> wasmod_client::CallbackId {",
        "pub fn remove_callback(&self, id: wasmod_client::CallbackId) -> bool {",
        "self.client.call_reducer_raw(\"make\", wasmod_abi::encoding::to_vec(&(r#type, count)))",
        "let call = self.client.call_procedure_raw(\"roll\", wasmod_abi::encoding::to_vec(&()));",
        "Output = Result<u8, wasmod_client::Error>,",
        ".keyed_table::<Thing>(\"thing\", \"id\")",
        "pub fn procedures(&self) -> Procedures {",
    ] {
        let squeezed = |text: &str| text.replace(['\n', ' '], "");
        assert!(
            squeezed(&code).contains(&squeezed(expected)),
            "missing {expected:?} in\n{code}"
        );
    }
    assert!(!code.contains("pub struct Views"), "no views, no `Views`");
}

#[test]
fn names_that_would_collide_or_shadow_are_refused() {
    let shadowing = module(
        &[("id", AlgebraicType::U64), ("r", AlgebraicType::Ref(1))],
        vec![TypeDef {
            name: "game::Result".into(),
            ty: product(&[]),
        }],
    );
    let error = generate(&Bindings::of(&shadowing), "game").expect_err("refused");
    assert!(error.contains("shadow"), "{error}");

    let colliding = module(
        &[
            ("sentAt", AlgebraicType::U64),
            ("sent_at", AlgebraicType::U64),
        ],
        Vec::new(),
    );
    let error = generate(&Bindings::of(&colliding), "game").expect_err("refused");
    assert!(error.contains("`sent_at`"), "{error}");

    let mut clashing = module(&[("id", AlgebraicType::U64)], Vec::new());
    clashing.typespace.types[0].name = "game::ThingTable".into();
    let error = generate(&Bindings::of(&clashing), "game").expect_err("refused");
    assert!(error.contains("`ThingTable`"), "{error}");
}
