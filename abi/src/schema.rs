//! Types that describe themselves, for the module description.
//!
//! Every type that crosses the module boundary (a column, a parameter, a return value)
//! implements [`SchemaType`]: it can encode and decode itself and say what it is as an
//! [`AlgebraicType`]. User structs and enums are *named* types: they are registered once in the
//! module's [`Typespace`] and referred to by [`AlgebraicType::Ref`], which also makes recursive
//! types describable.

use crate::encoding::{Decode, DecodeError, Encode};

/// The shape of an encoded value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, crate::SchemaType)]
#[wasmod(crate = crate)]
pub enum AlgebraicType {
    /// `bool`.
    Bool,
    /// `i8`.
    I8,
    /// `u8`.
    U8,
    /// `i16`.
    I16,
    /// `u16`.
    U16,
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `i64`.
    I64,
    /// `u64`.
    U64,
    /// `i128`.
    I128,
    /// `u128`.
    U128,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// A UTF-8 string.
    String,
    /// A caller's identity: 32 bytes.
    Identity,
    /// A connection id: 16 bytes.
    ConnectionId,
    /// Microseconds since the Unix epoch, as an `i64`.
    Timestamp,
    /// A counted sequence of elements.
    Array(Box<AlgebraicType>),
    /// Exactly `len` elements, no count.
    FixedArray(Box<AlgebraicType>, u32),
    /// `none | some(T)`.
    Option(Box<AlgebraicType>),
    /// `ok(T) | err(E)`.
    Result(Box<AlgebraicType>, Box<AlgebraicType>),
    /// Fields in order (a tuple, or an anonymous struct).
    Product(Vec<Field>),
    /// Variants, selected by a `u8` tag.
    Sum(Vec<Field>),
    /// A named type of the module's [`Typespace`], by position.
    Ref(u32),
}

/// A field of a product or a variant of a sum.
#[derive(Clone, Debug, PartialEq, Eq, Hash, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct Field {
    /// The field's name; `None` for tuple fields.
    pub name: Option<String>,
    /// The field's type.
    pub ty: AlgebraicType,
}

impl Field {
    /// A named field.
    pub fn named(name: &str, ty: AlgebraicType) -> Self {
        Self {
            name: Some(name.to_owned()),
            ty,
        }
    }

    /// An unnamed (tuple) field.
    pub fn unnamed(ty: AlgebraicType) -> Self {
        Self { name: None, ty }
    }

    /// The variant of the sum type `variants` that the encoded tag `tag` selects:
    /// `InvalidTag` for a tag past the last variant.
    pub fn variant(variants: &[Field], tag: u8) -> Result<&Field, DecodeError> {
        variants
            .get(usize::from(tag))
            .ok_or(DecodeError::InvalidTag {
                tag,
                type_name: "sum type",
            })
    }
}

/// A named type of a module.
#[derive(Clone, Debug, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct TypeDef {
    /// The type's name, as written in Rust.
    pub name: String,
    /// Its structure: a [`AlgebraicType::Product`] or [`AlgebraicType::Sum`].
    pub ty: AlgebraicType,
}

/// The named types of a module; [`AlgebraicType::Ref`] indexes into it.
#[derive(Clone, Debug, Default, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct Typespace {
    /// The types, in the order they were first met.
    pub types: Vec<TypeDef>,
}

impl Typespace {
    /// Registers the named type `name`, building its structure with `build` the first time only.
    ///
    /// The slot is reserved before `build` runs, so a type that refers to itself (through a
    /// `Vec` or `Box`) resolves to its own [`AlgebraicType::Ref`].
    pub fn register(
        &mut self,
        name: &str,
        build: impl FnOnce(&mut Typespace) -> AlgebraicType,
    ) -> AlgebraicType {
        if let Some(index) = self.types.iter().position(|def| def.name == name) {
            return AlgebraicType::Ref(index as u32);
        }
        let index = self.types.len();
        self.types.push(TypeDef {
            name: name.to_owned(),
            ty: AlgebraicType::Product(Vec::new()),
        });
        let ty = build(self);
        self.types[index].ty = ty;
        AlgebraicType::Ref(index as u32)
    }

    /// Follows `ty` through references to a structural type; `None` for a dangling reference.
    ///
    /// Reference chains longer than the typespace are reported as dangling, so a cyclic chain of
    /// references cannot loop.
    pub fn resolve<'a>(&'a self, mut ty: &'a AlgebraicType) -> Option<&'a AlgebraicType> {
        for _ in 0..=self.types.len() {
            match ty {
                AlgebraicType::Ref(index) => ty = &self.types.get(*index as usize)?.ty,
                other => return Some(other),
            }
        }
        None
    }
}

/// Whether values of type `a` (of typespace `old`) and of type `b` (of typespace `new`) are
/// encoded alike: the same structure, the same field and variant names, named types resolved.
/// For comparing what two builds of a module say of a table or an entry point (the host,
/// when a new build is published), or what a client reads a table as with what a new build
/// sends.
pub fn same_encoding(
    old: &Typespace,
    a: &AlgebraicType,
    new: &Typespace,
    b: &AlgebraicType,
) -> bool {
    same_type(old, a, new, b, 0)
}

/// Whether `a` in `old` and `b` in `new` encode alike, named types resolved (to a bounded
/// depth, so a recursive type cannot loop).
fn same_type(
    old: &Typespace,
    a: &AlgebraicType,
    new: &Typespace,
    b: &AlgebraicType,
    depth: u32,
) -> bool {
    use AlgebraicType as T;
    if depth > 64 {
        return false;
    }
    let resolve = |space: &Typespace, ty: &AlgebraicType| match ty {
        T::Ref(index) => space.types.get(*index as usize).map(|def| def.ty.clone()),
        other => Some(other.clone()),
    };
    let (Some(a), Some(b)) = (resolve(old, a), resolve(new, b)) else {
        return false;
    };
    let same = |x: &AlgebraicType, y: &AlgebraicType| same_type(old, x, new, y, depth + 1);
    match (&a, &b) {
        (T::Ref(_), _) | (_, T::Ref(_)) => same(&a, &b),
        (T::Array(x), T::Array(y)) | (T::Option(x), T::Option(y)) => same(x, y),
        (T::FixedArray(x, n), T::FixedArray(y, m)) => n == m && same(x, y),
        (T::Result(x, e), T::Result(y, f)) => same(x, y) && same(e, f),
        (T::Product(xs), T::Product(ys)) | (T::Sum(xs), T::Sum(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .zip(ys)
                    .all(|(x, y)| x.name == y.name && same(&x.ty, &y.ty))
        }
        _ => a == b,
    }
}

/// A type that can cross the module boundary: encodable, decodable, and self-describing.
///
/// Implemented for the standard types and, through `#[derive(SchemaType)]`, for user structs
/// and enums.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot cross the module boundary",
    label = "this type is not a wasmod type",
    note = "columns, parameters and return values must implement `SchemaType`: use the standard types (integers, floats, bool, String, Vec, Option, tuples, arrays, Identity, ConnectionId, Timestamp) or add `#[derive(wasmod::SchemaType)]`"
)]
pub trait SchemaType: Encode + Decode {
    /// Describes the type, registering any named types it uses in `typespace`.
    fn schema(typespace: &mut Typespace) -> AlgebraicType;
}

macro_rules! impl_leaf {
    ($($ty:ty => $variant:ident),* $(,)?) => {$(
        impl SchemaType for $ty {
            fn schema(_: &mut Typespace) -> AlgebraicType {
                AlgebraicType::$variant
            }
        }
    )*};
}

impl_leaf!(
    bool => Bool, i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
    i64 => I64, u64 => U64, i128 => I128, u128 => U128, f32 => F32, f64 => F64,
    String => String, Box<str> => String,
    crate::Identity => Identity, crate::ConnectionId => ConnectionId,
    crate::Timestamp => Timestamp,
);

impl<T: SchemaType> SchemaType for Vec<T> {
    fn schema(typespace: &mut Typespace) -> AlgebraicType {
        AlgebraicType::Array(Box::new(T::schema(typespace)))
    }
}

impl<T: SchemaType> SchemaType for Box<[T]> {
    fn schema(typespace: &mut Typespace) -> AlgebraicType {
        AlgebraicType::Array(Box::new(T::schema(typespace)))
    }
}

impl<T: SchemaType> SchemaType for Box<T> {
    fn schema(typespace: &mut Typespace) -> AlgebraicType {
        T::schema(typespace)
    }
}

impl<T: SchemaType, const N: usize> SchemaType for [T; N] {
    fn schema(typespace: &mut Typespace) -> AlgebraicType {
        let len = u32::try_from(N).unwrap_or(u32::MAX);
        AlgebraicType::FixedArray(Box::new(T::schema(typespace)), len)
    }
}

impl<T: SchemaType> SchemaType for Option<T> {
    fn schema(typespace: &mut Typespace) -> AlgebraicType {
        AlgebraicType::Option(Box::new(T::schema(typespace)))
    }
}

impl<T: SchemaType, E: SchemaType> SchemaType for Result<T, E> {
    fn schema(typespace: &mut Typespace) -> AlgebraicType {
        AlgebraicType::Result(
            Box::new(T::schema(typespace)),
            Box::new(E::schema(typespace)),
        )
    }
}

macro_rules! impl_tuple_schema {
    ($(($($name:ident),*)),* $(,)?) => {$(
        impl<$($name: SchemaType),*> SchemaType for ($($name,)*) {
            #[allow(unused_variables)]
            fn schema(typespace: &mut Typespace) -> AlgebraicType {
                AlgebraicType::Product(vec![$(Field::unnamed($name::schema(typespace))),*])
            }
        }
    )*};
}

crate::for_each_tuple!(impl_tuple_schema);
