//! Why a route pattern is refused, in words the macro's error and the host's can both use.

use std::fmt;

/// A route pattern that [`Pattern::parse`](crate::Pattern::parse) refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatternError {
    /// The pattern does not start with `/`.
    NoLeadingSlash,
    /// A segment has more `{` than `}`, or more `}` than `{`.
    UnbalancedBraces(String),
    /// A segment mixes a parameter with text, or holds several parameters.
    PartialSegment(String),
    /// A parameter's name is empty or not an identifier.
    BadName(String),
    /// Two parameters have the same name.
    DuplicateParam(String),
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoLeadingSlash => write!(f, "an HTTP handler's path starts with `/`"),
            Self::UnbalancedBraces(segment) => {
                write!(
                    f,
                    "unbalanced braces in `{segment}`: a parameter is written `{{name}}`"
                )
            }
            Self::PartialSegment(segment) => write!(
                f,
                "`{segment}`: a parameter is a whole segment, such as `/accounts/{{name}}`"
            ),
            Self::BadName(name) => write!(
                f,
                "`{{{name}}}`: a parameter's name is an identifier (letters, digits and `_`)"
            ),
            Self::DuplicateParam(name) => {
                write!(f, "the parameter `{name}` appears twice in the path")
            }
        }
    }
}

impl std::error::Error for PatternError {}
