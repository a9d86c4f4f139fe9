//! [`Encode`] and [`Decode`] for the standard types.

use super::{decode_plain_vec, encode_plain_slice, Decode, DecodeError, Encode, Layout, Reader};

/// Numbers are plain on little-endian targets: their bytes in memory are their encoding.
macro_rules! impl_numbers {
    ($($ty:ty),*) => {$(
        impl Encode for $ty {
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }

            #[inline]
            fn encoded_len(&self) -> usize {
                core::mem::size_of::<Self>()
            }

            #[inline]
            fn encoded_len_slice(items: &[Self]) -> usize {
                core::mem::size_of_val(items)
            }

            #[inline]
            fn encode_slice(items: &[Self], out: &mut Vec<u8>) {
                if cfg!(target_endian = "little") {
                    encode_plain_slice(items, out);
                } else {
                    items.iter().for_each(|item| item.encode(out));
                }
            }
        }

        impl Decode for $ty {
            // SAFETY: numbers have no padding, accept every bit pattern, and are encoded
            // little-endian, which is their memory order on little-endian targets.
            const LAYOUT: Layout = unsafe { Layout::plain_if(cfg!(target_endian = "little")) };

            #[inline]
            fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Ok(<$ty>::from_le_bytes(reader.take_array()?))
            }

            #[inline]
            fn decode_vec(reader: &mut Reader<'_>, len: usize) -> Result<Vec<Self>, DecodeError> {
                if cfg!(target_endian = "little") {
                    decode_plain_vec(reader, len)
                } else {
                    (0..len).map(|_| Self::decode(reader)).collect()
                }
            }
        }
    )*};
}

impl_numbers!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, f32, f64);

impl Encode for bool {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }

    #[inline]
    fn encoded_len(&self) -> usize {
        1
    }
}

impl Decode for bool {
    #[inline]
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        match reader.take_array::<1>()? {
            [0] => Ok(false),
            [1] => Ok(true),
            [other] => Err(DecodeError::InvalidBool(other)),
        }
    }
}

/// Writes a `u32` element count. Lengths beyond `u32::MAX` cannot be encoded; the
/// host caps every payload far below that, so saturating keeps encoding infallible and makes
/// the decoder reject the value.
#[inline]
fn encode_len(len: usize, out: &mut Vec<u8>) {
    let len = u32::try_from(len).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
}

/// The bytes of a `u32` count.
const LEN_BYTES: usize = 4;

impl Encode for str {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        encode_len(self.len(), out);
        out.extend_from_slice(self.as_bytes());
    }

    #[inline]
    fn encoded_len(&self) -> usize {
        LEN_BYTES + self.len()
    }
}

impl Encode for String {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        self.as_str().encode(out);
    }

    #[inline]
    fn encoded_len(&self) -> usize {
        self.as_str().encoded_len()
    }
}

impl Decode for String {
    #[inline]
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let bytes = reader.read_len_prefixed()?;
        match core::str::from_utf8(bytes) {
            Ok(text) => Ok(text.to_owned()),
            Err(_) => Err(DecodeError::InvalidUtf8),
        }
    }
}

impl Decode for Box<str> {
    #[inline]
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        String::decode(reader).map(String::into_boxed_str)
    }
}

impl<T: Encode> Encode for [T] {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        encode_len(self.len(), out);
        T::encode_slice(self, out);
    }

    #[inline]
    fn encoded_len(&self) -> usize {
        LEN_BYTES + T::encoded_len_slice(self)
    }
}

impl<T: Encode> Encode for Vec<T> {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        self.as_slice().encode(out);
    }

    #[inline]
    fn encoded_len(&self) -> usize {
        self.as_slice().encoded_len()
    }
}

impl<T: Decode> Decode for Vec<T> {
    #[inline]
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let len = reader.read_len()?;
        if T::LAYOUT.is_plain() {
            return T::decode_vec(reader, len);
        }
        reader.nested(|reader| T::decode_vec(reader, len))
    }
}

impl<T: Decode> Decode for Box<[T]> {
    #[inline]
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Vec::decode(reader).map(Vec::into_boxed_slice)
    }
}

impl<T: Encode, const N: usize> Encode for [T; N] {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        T::encode_slice(self, out);
    }

    #[inline]
    fn encoded_len(&self) -> usize {
        T::encoded_len_slice(self)
    }
}

impl<T: Decode, const N: usize> Decode for [T; N] {
    // SAFETY: an array has no padding between its elements; plain elements make it plain.
    const LAYOUT: Layout = unsafe { Layout::plain_if(T::LAYOUT.is_plain()) };

    #[inline]
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let items = T::decode_vec(reader, N)?;
        // `decode_vec` returns exactly `N` items or an error.
        items.try_into().map_err(|_| DecodeError::UnexpectedEnd {
            needed: N,
            remaining: 0,
        })
    }
}

impl<T: Encode + ?Sized> Encode for &T {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        (**self).encode(out);
    }

    #[inline]
    fn encoded_len(&self) -> usize {
        (**self).encoded_len()
    }
}

impl<T: Encode + ?Sized> Encode for Box<T> {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        (**self).encode(out);
    }

    #[inline]
    fn encoded_len(&self) -> usize {
        (**self).encoded_len()
    }
}

impl<T: Decode> Decode for Box<T> {
    #[inline]
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        reader.nested(T::decode).map(Box::new)
    }
}

impl<T: Encode> Encode for Option<T> {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(value) => {
                out.push(1);
                value.encode(out);
            }
        }
    }

    #[inline]
    fn encoded_len(&self) -> usize {
        1 + self.as_ref().map_or(0, T::encoded_len)
    }
}

impl<T: Decode> Decode for Option<T> {
    #[inline]
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        match reader.take_array::<1>()? {
            [0] => Ok(None),
            [1] => reader.nested(T::decode).map(Some),
            [tag] => Err(DecodeError::InvalidTag {
                tag,
                type_name: "Option",
            }),
        }
    }
}

impl<T: Encode, E: Encode> Encode for Result<T, E> {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Ok(value) => {
                out.push(0);
                value.encode(out);
            }
            Err(error) => {
                out.push(1);
                error.encode(out);
            }
        }
    }

    #[inline]
    fn encoded_len(&self) -> usize {
        1 + match self {
            Ok(value) => value.encoded_len(),
            Err(error) => error.encoded_len(),
        }
    }
}

impl<T: Decode, E: Decode> Decode for Result<T, E> {
    #[inline]
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        match reader.take_array::<1>()? {
            [0] => reader.nested(T::decode).map(Ok),
            [1] => reader.nested(E::decode).map(Err),
            [tag] => Err(DecodeError::InvalidTag {
                tag,
                type_name: "Result",
            }),
        }
    }
}

/// Invokes `$macro!` with every tuple arity the encoding supports, 0 to 12, as lists of type
/// parameter names: the one list both the encoding and the schema impls use.
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_tuple {
    ($macro:ident) => {
        $macro!(
            (),
            (A),
            (A, B),
            (A, B, C),
            (A, B, C, D),
            (A, B, C, D, E),
            (A, B, C, D, E, F),
            (A, B, C, D, E, F, G),
            (A, B, C, D, E, F, G, H),
            (A, B, C, D, E, F, G, H, I),
            (A, B, C, D, E, F, G, H, I, J),
            (A, B, C, D, E, F, G, H, I, J, K),
            (A, B, C, D, E, F, G, H, I, J, K, L),
        );
    };
}

macro_rules! impl_tuples {
    ($(($($name:ident),*)),* $(,)?) => {$(
        impl<$($name: Encode),*> Encode for ($($name,)*) {
            #[inline]
            #[allow(non_snake_case, unused_variables)]
            fn encode(&self, out: &mut Vec<u8>) {
                let ($($name,)*) = self;
                $($name.encode(out);)*
            }

            #[inline]
            #[allow(non_snake_case, unused_variables)]
            fn encoded_len(&self) -> usize {
                let ($($name,)*) = self;
                0 $(+ $name.encoded_len())*
            }
        }

        impl<$($name: Decode),*> Decode for ($($name,)*) {
            #[inline]
            #[allow(unused_variables)]
            fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Ok(($($name::decode(reader)?,)*))
            }
        }
    )*};
}

crate::for_each_tuple!(impl_tuples);
