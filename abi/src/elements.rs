//! How many elements a decoded value may have, for its length in bytes.
//!
//! Decoding visits every element of a value, so its work (and, when a [`Value`](crate::Value)
//! tree is built, its memory) grows with the number of elements. For most types the bytes
//! bound that number: every element takes at least one byte. Zero-sized types (`()`, unit
//! structs, arrays of them) take none, and arrays of them nest multiplicatively: a 12-byte
//! `Vec<[[(); 65536]; 65536]>` holds 4.3 billion elements. Two rules bound them, one checked
//! on the types when a module is loaded, the other on every decode:
//!
//! - **per array**: an array (counted or fixed) of zero-sized elements holds at most
//!   [`MAX_ZERO_SIZED_ELEMENTS`] elements, counting the elements nested in its elements;
//! - **per value**: a value of `n` encoded bytes has at most [`max_elements`]`(n)` =
//!   [`MAX_ELEMENTS_PER_BYTE`] × `n` + [`MAX_UNBACKED_ELEMENTS`] elements, the value itself
//!   and every value nested in it included.
//!
//! [`check_type`] proves the per-value rule for every value of a type, from an upper bound of
//! the form `per_byte × n + unbacked` computed over the type's structure (recursion through
//! references is unrolled to [`MAX_DEPTH`], past which nothing decodes), so a description
//! whose types pass never has a value refused by the decoder's count. The decoders
//! ([`Value::decode`](crate::Value::decode) and the JSON writer) count the elements they visit
//! against a [`Budget`] all the same: a type that was never checked, or a hostile one, cannot
//! make them do more work than the bytes allow.

use crate::encoding::DecodeError;
use crate::encoding::MAX_DEPTH;
use crate::schema::{AlgebraicType, Typespace};
use core::fmt;
use std::collections::HashMap;

/// The most elements an array of a zero-sized type (such as `()`) may hold, counting the
/// elements nested in its elements: `[(); 65536]` is the largest array of units, and
/// `[[(); 255]; 256]` (256 × (1 + 255) elements) the largest of arrays of units.
///
/// Elements of such a type take no bytes, so the input's length cannot bound their count; this
/// does. A longer array is refused with [`DecodeError::LengthOverflow`].
pub const MAX_ZERO_SIZED_ELEMENTS: usize = 1 << 16;

/// The elements a value may have for each of its encoded bytes.
///
/// A byte of a plain number is one element; a struct of a few fields adds one element for the
/// struct, an option one for the option (paid by its tag's byte). 64 leaves room for structs
/// nested deeply or holding many unit fields, and keeps a `Value` tree built from `n` bytes
/// within a few kilobytes per byte.
pub const MAX_ELEMENTS_PER_BYTE: usize = 64;

/// The elements a value may have beyond [`MAX_ELEMENTS_PER_BYTE`] per byte: those of its
/// zero-sized parts, which no byte pays for (room for three arrays of
/// [`MAX_ZERO_SIZED_ELEMENTS`] units, not quite four).
pub const MAX_UNBACKED_ELEMENTS: usize = 4 * MAX_ZERO_SIZED_ELEMENTS;

/// The most elements a value of `bytes` encoded bytes may have.
pub const fn max_elements(bytes: usize) -> usize {
    MAX_ELEMENTS_PER_BYTE
        .saturating_mul(bytes)
        .saturating_add(MAX_UNBACKED_ELEMENTS)
}

/// The elements one decode may still visit.
///
/// Made for the bytes left in the reader ([`Budget::for_input`]), which bounds the work of the
/// decode; checked at the end against the bytes the value took ([`Budget::finish`]), which is
/// the per-value rule exactly.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    allowed: usize,
    left: usize,
}

impl Budget {
    /// The budget of a decode from an input of `remaining` bytes: [`max_elements`] of them.
    pub const fn for_input(remaining: usize) -> Self {
        let allowed = max_elements(remaining);
        Self {
            allowed,
            left: allowed,
        }
    }

    /// Counts one element: [`DecodeError::TooManyElements`] when the budget is spent.
    #[inline]
    pub fn visit(&mut self) -> Result<(), DecodeError> {
        self.take(1)
    }

    /// Counts `count` elements at once (an array's items, a product's fields), before they
    /// are visited: [`DecodeError::TooManyElements`] when the budget cannot pay for them all.
    #[inline]
    pub fn take(&mut self, count: usize) -> Result<(), DecodeError> {
        match self.left.checked_sub(count) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(DecodeError::TooManyElements),
        }
    }

    /// Checks the elements visited against [`max_elements`] of the `consumed` bytes the value
    /// took.
    pub fn finish(self, consumed: usize) -> Result<(), DecodeError> {
        if self.allowed - self.left > max_elements(consumed) {
            Err(DecodeError::TooManyElements)
        } else {
            Ok(())
        }
    }
}

/// The number of elements nested in the one value of `ty` (not counting the value itself), if
/// `ty` is zero-sized (encoded in no bytes); `None` if it is not. Saturates.
///
/// `depth` is the nesting of `ty`, as the decoders count it: [`DecodeError::TooDeep`] past
/// [`MAX_DEPTH`].
pub(crate) fn zero_sized_elements(
    ty: &AlgebraicType,
    typespace: &Typespace,
    depth: usize,
) -> Result<Option<usize>, DecodeError> {
    use AlgebraicType as T;
    if depth >= MAX_DEPTH as usize {
        return Err(DecodeError::TooDeep);
    }
    Ok(
        match typespace.resolve(ty).ok_or(DecodeError::UnresolvedRef)? {
            T::FixedArray(_, 0) => Some(0),
            T::FixedArray(element, len) => zero_sized_elements(element, typespace, depth + 1)?
                .map(|nested| array_elements(*len as usize, nested)),
            T::Product(fields) => {
                let mut total = 0usize;
                for field in fields {
                    match zero_sized_elements(&field.ty, typespace, depth + 1)? {
                        Some(nested) => total = total.saturating_add(nested.saturating_add(1)),
                        None => return Ok(None),
                    }
                }
                Some(total)
            }
            _ => None,
        },
    )
}

/// The elements of `len` zero-sized elements that each nest `nested` more.
pub(crate) fn array_elements(len: usize, nested: usize) -> usize {
    len.saturating_mul(nested.saturating_add(1))
}

/// Why a type's values could have more elements than the rules allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElementsError {
    /// An array of zero-sized elements holds more than [`MAX_ZERO_SIZED_ELEMENTS`].
    ZeroSizedArray {
        /// The elements it holds, nested ones included (saturated).
        elements: usize,
    },
    /// A value can have more than [`MAX_ELEMENTS_PER_BYTE`] elements per byte.
    PerByte {
        /// The worst number of elements per byte found.
        per_byte: usize,
    },
    /// A value can have more than [`MAX_UNBACKED_ELEMENTS`] elements no byte pays for.
    Unbacked {
        /// The worst number of such elements found.
        unbacked: usize,
    },
}

impl fmt::Display for ElementsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroSizedArray { elements } => write!(
                f,
                "an array of zero-sized elements holds {elements} elements (nested ones counted); at most {MAX_ZERO_SIZED_ELEMENTS} are allowed"
            ),
            Self::PerByte { per_byte } => write!(
                f,
                "a value can decode to {per_byte} elements per encoded byte (zero-sized fields or arrays of them inside arrays); at most {MAX_ELEMENTS_PER_BYTE} are allowed"
            ),
            Self::Unbacked { unbacked } => write!(
                f,
                "a value can decode to {unbacked} zero-sized elements that take no bytes; at most {MAX_UNBACKED_ELEMENTS} are allowed"
            ),
        }
    }
}

impl std::error::Error for ElementsError {}

/// Checks that every value of `ty` satisfies both rules of [the module docs](self).
///
/// References must resolve (the description's other checks say so); one that does not is
/// treated as having no values.
pub fn check_type(ty: &AlgebraicType, typespace: &Typespace) -> Result<(), ElementsError> {
    let bound = Analysis::new(typespace).bound(ty, 0)?;
    match bound {
        Some(bound) if bound.per_byte > MAX_ELEMENTS_PER_BYTE => Err(ElementsError::PerByte {
            per_byte: bound.per_byte,
        }),
        Some(bound) if bound.unbacked > MAX_UNBACKED_ELEMENTS => Err(ElementsError::Unbacked {
            unbacked: bound.unbacked,
        }),
        _ => Ok(()),
    }
}

/// An upper bound on the elements of every value of a type: at most
/// `per_byte × bytes + unbacked`, for values of at least `min_bytes` bytes. A type is
/// zero-sized exactly when `min_bytes` is 0; its one value then has `unbacked` elements.
#[derive(Clone, Copy, Debug)]
struct Bound {
    per_byte: usize,
    unbacked: usize,
    min_bytes: usize,
}

impl Bound {
    /// A value taking at least `min_bytes` (one or more) bytes and having one element.
    const fn leaf(min_bytes: usize) -> Self {
        Self {
            per_byte: 1,
            unbacked: 0,
            min_bytes,
        }
    }

    /// The elements per byte of an array's elements of this bound: the unbacked ones are
    /// paid by the element's own bytes (at least `min_bytes`, which is not 0).
    fn per_byte_in_array(self) -> usize {
        self.per_byte
            .saturating_add(self.unbacked.div_ceil(self.min_bytes))
            .max(1)
    }

    /// The bound of a sum's variant of this payload. The tag's byte pays for the sum and,
    /// when that keeps within [`MAX_ELEMENTS_PER_BYTE`], for the payload's unbacked elements
    /// too (so that a type recursing through options or sums does not add them up level by
    /// level); otherwise they stay unbacked.
    fn as_variant(self) -> Self {
        let min_bytes = self.min_bytes.saturating_add(1);
        let per_byte = if self.min_bytes == 0 {
            // One byte, the sum and the payload's elements.
            self.unbacked.saturating_add(1)
        } else {
            self.per_byte_in_array()
        };
        if per_byte <= MAX_ELEMENTS_PER_BYTE {
            Self {
                per_byte,
                unbacked: 0,
                min_bytes,
            }
        } else {
            Self {
                per_byte: self.per_byte.max(1),
                unbacked: self.unbacked,
                min_bytes,
            }
        }
    }

    /// The bound of a value that is one of `self` or `other`.
    fn either(self, other: Self) -> Self {
        Self {
            per_byte: self.per_byte.max(other.per_byte),
            unbacked: self.unbacked.max(other.unbacked),
            min_bytes: self.min_bytes.min(other.min_bytes),
        }
    }
}

/// The computation of [`Bound`]s over one typespace, remembering those of named types at each
/// depth (so that a type referring to itself twice costs no more than the depth cap).
struct Analysis<'a> {
    typespace: &'a Typespace,
    named: HashMap<(u32, usize), Option<Bound>>,
}

impl<'a> Analysis<'a> {
    fn new(typespace: &'a Typespace) -> Self {
        Self {
            typespace,
            named: HashMap::new(),
        }
    }

    /// The bound of `ty` at nesting `depth`; `None` when no value of it decodes there (too
    /// deep, or a reference that does not resolve).
    fn bound(&mut self, ty: &AlgebraicType, depth: usize) -> Result<Option<Bound>, ElementsError> {
        if let AlgebraicType::Ref(index) = ty {
            if let Some(known) = self.named.get(&(*index, depth)) {
                return Ok(*known);
            }
            let bound = match self.typespace.resolve(ty) {
                Some(resolved) => self.structure(resolved, depth)?,
                None => None,
            };
            self.named.insert((*index, depth), bound);
            return Ok(bound);
        }
        self.structure(ty, depth)
    }

    fn structure(
        &mut self,
        ty: &AlgebraicType,
        depth: usize,
    ) -> Result<Option<Bound>, ElementsError> {
        use AlgebraicType as T;
        let compound = matches!(
            ty,
            T::Array(_)
                | T::FixedArray(..)
                | T::Option(_)
                | T::Result(..)
                | T::Product(_)
                | T::Sum(_)
        );
        if compound && depth >= MAX_DEPTH as usize {
            return Ok(None);
        }
        let inner = depth + 1;
        Ok(match ty {
            T::Bool | T::I8 | T::U8 => Some(Bound::leaf(1)),
            T::I16 | T::U16 => Some(Bound::leaf(2)),
            T::I32 | T::U32 | T::F32 | T::String => Some(Bound::leaf(4)),
            T::I64 | T::U64 | T::F64 | T::Timestamp => Some(Bound::leaf(8)),
            T::I128 | T::U128 | T::ConnectionId => Some(Bound::leaf(16)),
            T::Identity => Some(Bound::leaf(32)),
            T::Array(element) => Some(match self.bound(element, inner)? {
                // Only the empty array decodes.
                None => Bound::leaf(4),
                // The count of zero-sized elements is capped per array.
                Some(element) if element.min_bytes == 0 => Bound {
                    per_byte: 1,
                    unbacked: MAX_ZERO_SIZED_ELEMENTS,
                    min_bytes: 4,
                },
                Some(element) => Bound {
                    per_byte: element.per_byte_in_array(),
                    unbacked: 0,
                    min_bytes: 4,
                },
            }),
            T::FixedArray(element, len) => {
                let len = *len as usize;
                match self.bound(element, inner)? {
                    _ if len == 0 => Some(zero_sized(0)),
                    None => None,
                    Some(element) if element.min_bytes == 0 => {
                        let elements = array_elements(len, element.unbacked.saturating_sub(1));
                        if elements > MAX_ZERO_SIZED_ELEMENTS {
                            return Err(ElementsError::ZeroSizedArray { elements });
                        }
                        Some(zero_sized(elements))
                    }
                    Some(element) => Some(Bound {
                        per_byte: element.per_byte_in_array(),
                        unbacked: 1,
                        min_bytes: element.min_bytes.saturating_mul(len),
                    }),
                }
            }
            T::Option(payload) => {
                let none = zero_sized(0).as_variant();
                Some(match self.bound(payload, inner)? {
                    Some(some) => none.either(some.as_variant()),
                    None => none,
                })
            }
            T::Result(ok, err) => {
                let ok = self.bound(ok, inner)?.map(Bound::as_variant);
                let err = self.bound(err, inner)?.map(Bound::as_variant);
                match (ok, err) {
                    (Some(ok), Some(err)) => Some(ok.either(err)),
                    (one, other) => one.or(other),
                }
            }
            T::Sum(variants) => {
                let mut bound: Option<Bound> = None;
                for variant in variants {
                    if let Some(payload) = self.bound(&variant.ty, inner)? {
                        let payload = payload.as_variant();
                        bound = Some(bound.map_or(payload, |bound| bound.either(payload)));
                    }
                }
                bound
            }
            T::Product(fields) => {
                let mut product = Bound {
                    per_byte: 0,
                    unbacked: 1,
                    min_bytes: 0,
                };
                for field in fields {
                    let Some(field) = self.bound(&field.ty, inner)? else {
                        return Ok(None);
                    };
                    product = Bound {
                        per_byte: product.per_byte.max(field.per_byte),
                        unbacked: product.unbacked.saturating_add(field.unbacked),
                        min_bytes: product.min_bytes.saturating_add(field.min_bytes),
                    };
                }
                Some(product)
            }
            // `bound` resolves references before it asks for a structure.
            T::Ref(_) => None,
        })
    }
}

/// The bound of a zero-sized type whose value nests `nested` elements.
const fn zero_sized(nested: usize) -> Bound {
    Bound {
        per_byte: 0,
        unbacked: nested.saturating_add(1),
        min_bytes: 0,
    }
}

#[cfg(test)]
mod tests;
