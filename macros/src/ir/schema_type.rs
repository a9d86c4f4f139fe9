//! The IR of a type that crosses the module boundary: a struct or an enum, with its fields.
//!
//! Shared by `#[derive(SchemaType)]` and `#[table]` (a table's row type is such a type).

use super::repr::Repr;
use crate::diagnostics::Errors;
use syn::ext::IdentExt as _;
use syn::spanned::Spanned;

/// A validated struct or enum, ready for code generation.
pub struct TypeDecl {
    /// The type's name.
    pub ident: syn::Ident,
    /// Its generics, as written.
    pub generics: syn::Generics,
    /// The path generated code uses for the ABI crate (`::wasmod::abi` by default).
    pub krate: syn::Path,
    /// Layout facts from `#[repr]`.
    pub repr: Repr,
    /// Fields or variants.
    pub shape: Shape,
}

/// The body of a [`TypeDecl`].
pub enum Shape {
    /// A struct.
    Struct(Fields),
    /// An enum; its variants in order (the position is the tag).
    Enum(Vec<Variant>),
}

/// How fields are written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `{ a: A }`.
    Named,
    /// `(A)`.
    Unnamed,
    /// No fields.
    Unit,
}

/// Fields of a struct or a variant.
pub struct Fields {
    /// How the fields are written.
    pub style: Style,
    /// The fields, in order.
    pub fields: Vec<Field>,
}

/// One field.
pub struct Field {
    /// How the field is accessed (`name` or `0`).
    pub member: syn::Member,
    /// The field's name in the description (`None` for tuple fields).
    pub name: Option<String>,
    /// Its type.
    pub ty: syn::Type,
}

/// One variant of an enum.
pub struct Variant {
    /// The variant's name.
    pub ident: syn::Ident,
    /// Its payload.
    pub fields: Fields,
}

/// The options of `#[wasmod(..)]` on a derived type.
pub struct TypeOptions {
    /// `crate = path`: where the ABI crate is (for use inside wasmod's own crates).
    pub krate: syn::Path,
    /// Where the runtime crate is, whose traits a module's types implement beyond the ABI's
    /// (an enum without fields becomes an index key): `::wasmod` by default, `None` with
    /// `crate = path`, since wasmod's own crates below the runtime cannot name it.
    pub runtime: Option<syn::Path>,
}

impl TypeOptions {
    /// Reads `#[wasmod(crate = path)]` among `attrs`.
    pub fn from_attrs(attrs: &[syn::Attribute], errors: &mut Errors) -> Self {
        let mut krate = syn::parse_quote!(::wasmod::abi);
        let mut runtime = Some(syn::parse_quote!(::wasmod));
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("wasmod")) {
            let parsed = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("crate") {
                    krate = meta.value()?.parse()?;
                    runtime = None;
                    Ok(())
                } else {
                    Err(meta
                        .error("unknown option; `#[wasmod(..)]` on a type accepts `crate = path`"))
                }
            });
            errors.take(parsed);
        }
        Self { krate, runtime }
    }
}

impl TypeDecl {
    /// Parses and validates a struct or enum.
    pub fn parse(input: &syn::DeriveInput, krate: syn::Path, errors: &mut Errors) -> Option<Self> {
        let shape = match &input.data {
            syn::Data::Struct(data) => Shape::Struct(Fields::new(&data.fields)),
            syn::Data::Enum(data) => {
                if data.variants.len() > 256 {
                    errors.error_at(&input.ident, "an enum crossing the module boundary has at most 256 variants (its tag is a `u8`)");
                }
                let variants = data
                    .variants
                    .iter()
                    .map(|variant| {
                        if let Some((_, discriminant)) = &variant.discriminant {
                            errors.error_at(discriminant, "explicit discriminants are not supported: a variant's tag is its position");
                        }
                        Variant { ident: variant.ident.clone(), fields: Fields::new(&variant.fields) }
                    })
                    .collect();
                Shape::Enum(variants)
            }
            syn::Data::Union(data) => {
                errors.error_at(
                    data.union_token,
                    "unions cannot cross the module boundary: use a struct or an enum",
                );
                return None;
            }
        };
        Some(Self {
            ident: input.ident.clone(),
            generics: input.generics.clone(),
            krate,
            repr: Repr::from_attrs(&input.attrs),
            shape,
        })
    }
}

impl Fields {
    fn new(fields: &syn::Fields) -> Self {
        let fields_vec = fields
            .iter()
            .enumerate()
            .map(|(index, field)| Field {
                member: match &field.ident {
                    Some(ident) => syn::Member::Named(ident.clone()),
                    None => syn::Member::Unnamed(syn::Index {
                        index: index as u32,
                        span: field.ty.span(),
                    }),
                },
                name: field.ident.as_ref().map(|ident| ident.unraw().to_string()),
                ty: field.ty.clone(),
            })
            .collect();
        let style = match fields {
            syn::Fields::Named(_) => Style::Named,
            syn::Fields::Unnamed(_) => Style::Unnamed,
            syn::Fields::Unit => Style::Unit,
        };
        Self {
            style,
            fields: fields_vec,
        }
    }
}
