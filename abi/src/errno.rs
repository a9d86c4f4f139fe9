//! Error codes: what host imports and dispatch exports return.
//!
//! Every host import that can fail returns a `u16`: [`OK`] (zero) or one of these codes. The
//! dispatch exports return an `i16` from the same space. Codes are stable: a code's meaning
//! never changes once released; new codes get new numbers.

/// A named error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Errno(u16);

macro_rules! errnos {
    ($($(#[doc = $doc:literal])* $name:ident = $code:literal, $text:literal;)*) => {
        impl Errno {
            $(
                $(#[doc = $doc])*
                pub const $name: Errno = Errno($code);
            )*

            /// Whether this is one of the codes this version of the ABI defines.
            pub const fn is_known(self) -> bool {
                match self.0 {
                    $($code => true,)*
                    _ => false,
                }
            }

            /// A short, static description of the error.
            pub const fn message(self) -> &'static str {
                match self.0 {
                    $($code => $text,)*
                    _ => "unknown error code",
                }
            }

            /// The constant's name, such as `NO_SUCH_TABLE`.
            pub const fn name(self) -> &'static str {
                match self.0 {
                    $($code => stringify!($name),)*
                    _ => "UNKNOWN",
                }
            }
        }
    };
}

/// The call succeeded.
pub const OK: u16 = 0;

errnos! {
    /// The caller is not allowed to do this here (for example a write from a view, or a
    /// datastore call from a procedure outside a transaction).
    NOT_ALLOWED = 1, "the operation is not allowed in this context";
    /// No table has this id.
    NO_SUCH_TABLE = 2, "no such table";
    /// The table has no index with this id.
    NO_SUCH_INDEX = 3, "no such index";
    /// No live row iterator has this handle.
    NO_SUCH_ITER = 4, "no such row iterator";
    /// No live byte source has this handle.
    NO_SUCH_SOURCE = 5, "no such byte source";
    /// No live byte sink has this handle.
    NO_SUCH_SINK = 6, "no such byte sink";
    /// A pointer and length from the module do not lie inside its memory.
    OUT_OF_BOUNDS = 7, "a pointer or length is outside the module's memory";
    /// Bytes from the module do not decode as the expected type.
    BAD_ENCODING = 8, "bytes do not decode as the expected type";
    /// The buffer given is too small for the next item; its needed size was written back.
    BUFFER_TOO_SMALL = 9, "the buffer is too small for the next item";
    /// An insert or update would give two rows the same key in a unique index.
    UNIQUE_VIOLATION = 10, "a unique constraint would be violated";
    /// An update found no row with the given key.
    NO_SUCH_ROW = 11, "no row has this key";
    /// An auto-increment sequence is exhausted.
    SEQUENCE_EXHAUSTED = 12, "an auto-increment sequence is exhausted";
    /// A payload is larger than the host accepts.
    TOO_LARGE = 13, "the payload is larger than the host accepts";
    /// A transaction is already open (procedures).
    TX_ALREADY_OPEN = 14, "a transaction is already open";
    /// No transaction is open (procedures).
    NO_TX = 15, "no transaction is open";
    /// An outbound HTTP request failed or was refused.
    HTTP_FAILED = 16, "the outbound HTTP request failed or was refused";
    /// A dispatch export was given an id that names no entry point.
    NO_SUCH_ENTRY = 17, "no entry point has this id";
    /// A dispatch export could not decode the arguments; the message is in the error sink.
    BAD_ARGUMENTS = 18, "the arguments do not match the entry point's parameters";
    /// The entry point returned an error; its message is in the error sink.
    ENTRY_FAILED = 19, "the entry point returned an error";
    /// The module's description could not be produced.
    DESCRIBE_FAILED = 20, "the module could not describe itself";
}

impl Errno {
    /// The error for a non-zero `code`; `None` for [`OK`]. Unknown codes are kept as they are,
    /// so that a newer peer's errors still travel.
    pub const fn from_code(code: u16) -> Option<Self> {
        match code {
            OK => None,
            code => Some(Self(code)),
        }
    }

    /// The numeric code.
    pub const fn code(self) -> u16 {
        self.0
    }
}

impl core::fmt::Display for Errno {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} ({}): {}", self.name(), self.0, self.message())
    }
}

impl std::error::Error for Errno {}
