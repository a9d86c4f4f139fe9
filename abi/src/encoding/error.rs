//! Decoding errors.

/// Why a value could not be decoded.
///
/// The error is small and carries no formatted text, so that the dispatch path of a module can
/// report it without `core::fmt`: use [`DecodeError::message`] for a static description, or the
/// [`Display`](core::fmt::Display) impl where formatting is fine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended before the value did.
    UnexpectedEnd {
        /// How many more bytes were needed.
        needed: usize,
        /// How many bytes were left.
        remaining: usize,
    },
    /// A `bool` byte other than `0` or `1`.
    InvalidBool(u8),
    /// A string that is not valid UTF-8.
    InvalidUtf8,
    /// A sum type's tag names no variant.
    InvalidTag {
        /// The tag that was read.
        tag: u8,
        /// The sum type's name.
        type_name: &'static str,
    },
    /// A length prefix times the element size does not fit in memory.
    LengthOverflow,
    /// Bytes were left after a complete value.
    TrailingBytes(usize),
    /// The one-copy path was asked for a type that is not plain (a bug in generated code).
    NotPlain,
    /// Values were nested deeper than [`MAX_DEPTH`](super::MAX_DEPTH) containers.
    TooDeep,
    /// A type referred to an entry its typespace does not have.
    UnresolvedRef,
    /// A value has more elements than its bytes allow
    /// ([`max_elements`](crate::elements::max_elements)).
    TooManyElements,
}

impl DecodeError {
    /// A static description of the error, without its numbers.
    pub const fn message(&self) -> &'static str {
        match self {
            Self::UnexpectedEnd { .. } => "the input ended before the value did",
            Self::InvalidBool(_) => "a bool byte was neither 0 nor 1",
            Self::InvalidUtf8 => "a string was not valid UTF-8",
            Self::InvalidTag { .. } => "a sum type's tag names no variant",
            Self::LengthOverflow => "a length prefix is too large",
            Self::TrailingBytes(_) => "bytes were left after the value",
            Self::NotPlain => "the type is not plain",
            Self::TooDeep => "values are nested too deeply",
            Self::UnresolvedRef => "a type refers to a typespace entry that does not exist",
            Self::TooManyElements => "the value has more elements than its bytes allow",
        }
    }
}

impl core::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::UnexpectedEnd { needed, remaining } => write!(
                f,
                "the input ended before the value did (needed {needed} more bytes, {remaining} left)"
            ),
            Self::InvalidBool(byte) => write!(f, "a bool byte was {byte}, neither 0 nor 1"),
            Self::InvalidTag { tag, type_name } => {
                write!(f, "tag {tag} names no variant of `{type_name}`")
            }
            Self::TrailingBytes(count) => write!(f, "{count} bytes were left after the value"),
            Self::InvalidUtf8
            | Self::LengthOverflow
            | Self::NotPlain
            | Self::TooDeep
            | Self::UnresolvedRef
            | Self::TooManyElements => f.write_str(self.message()),
        }
    }
}

impl std::error::Error for DecodeError {}
