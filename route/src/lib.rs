//! Route patterns of HTTP handlers: `/accounts/{name}/entries`.
//!
//! A pattern is a path of `/`-separated segments, each either literal text or one parameter
//! `{name}` that captures a whole segment. Three places need the same reading of a pattern, so
//! it lives here, in a crate with no dependencies that all three can use:
//!
//! - the `#[http_handler]` macro checks a pattern at compile time ([`Pattern::parse`]) and
//!   refuses two handlers of one method whose patterns match the same paths
//!   ([`Pattern::same_routes`]);
//! - the host picks the handler of a request by method and path ([`Routes`]), and the server
//!   answers `405` with the methods of a path it knows;
//! - the module's generated dispatch captures the parameters of the request it was given
//!   ([`Pattern::captures`]).
//!
//! Matching compares a literal segment with the raw (still percent-encoded) segment of the
//! path; a captured value is percent-decoded. Where several patterns match one path, the one
//! with a literal segment where the others have a parameter, earliest in the path, wins:
//! `/accounts/new` before `/accounts/{name}`.
//!
//! Matching and capturing use no formatting machinery (`core::fmt`), since they run on the
//! module's dispatch path.

mod decode;
mod error;
mod table;

pub use decode::{percent_decode, query_value};
pub use error::PatternError;
pub use table::{Routed, Routes};

/// A parsed route pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    segments: Vec<Segment>,
}

/// One `/`-separated segment of a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    /// Text the path's segment must equal.
    Literal(Box<str>),
    /// `{name}`: any one non-empty segment, captured as `name`.
    Param(Box<str>),
}

impl Pattern {
    /// Parses `text`: it starts with `/`; each `{name}` is a whole segment, its name a Rust
    /// identifier (letters, digits and `_`, not starting with a digit), no two alike.
    pub fn parse(text: &str) -> Result<Self, PatternError> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err(PatternError::NoLeadingSlash);
        };
        let mut segments = Vec::new();
        for segment in rest.split('/') {
            let parsed = Self::segment(segment)?;
            if let Segment::Param(name) = &parsed {
                if segments.contains(&parsed) {
                    // `String::from`, not `to_string`, which formats: this runs on the
                    // module's dispatch path.
                    return Err(PatternError::DuplicateParam(String::from(&**name)));
                }
            }
            segments.push(parsed);
        }
        Ok(Self { segments })
    }

    fn segment(segment: &str) -> Result<Segment, PatternError> {
        let opens = segment.matches('{').count();
        let closes = segment.matches('}').count();
        if opens == 0 && closes == 0 {
            return Ok(Segment::Literal(segment.into()));
        }
        if opens != closes {
            return Err(PatternError::UnbalancedBraces(segment.to_owned()));
        }
        let name = segment
            .strip_prefix('{')
            .and_then(|inner| inner.strip_suffix('}'))
            .filter(|_| opens == 1)
            .ok_or_else(|| PatternError::PartialSegment(segment.to_owned()))?;
        let mut chars = name.chars();
        let starts_well = chars
            .next()
            .is_some_and(|first| first == '_' || first.is_ascii_alphabetic());
        if !starts_well || !chars.all(|c| c == '_' || c.is_ascii_alphanumeric()) {
            return Err(PatternError::BadName(name.to_owned()));
        }
        Ok(Segment::Param(name.into()))
    }

    /// The names of the parameters, in path order.
    pub fn params(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|segment| match segment {
            Segment::Param(name) => Some(&**name),
            Segment::Literal(_) => None,
        })
    }

    /// Whether `path` (without its query) is one this pattern answers.
    pub fn matches(&self, path: &str) -> bool {
        self.raw_captures(path).is_some()
    }

    /// The parameters `path` gives, percent-decoded, in path order; `None` if the pattern does
    /// not match `path`, or a captured value is not UTF-8 once decoded.
    pub fn captures(&self, path: &str) -> Option<Vec<(String, String)>> {
        self.raw_captures(path)?
            .into_iter()
            .map(|(name, raw)| Some((name.to_owned(), percent_decode(raw)?)))
            .collect()
    }

    fn raw_captures<'s, 'p>(&'s self, path: &'p str) -> Option<Vec<(&'s str, &'p str)>> {
        let mut parts = path.strip_prefix('/')?.split('/');
        let mut captured = Vec::new();
        for segment in &self.segments {
            let part = parts.next()?;
            match segment {
                Segment::Literal(text) if **text == *part => {}
                Segment::Literal(_) => return None,
                Segment::Param(_) if part.is_empty() => return None,
                Segment::Param(name) => captured.push((&**name, part)),
            }
        }
        parts.next().is_none().then_some(captured)
    }

    /// Whether this pattern wins over `other` for a path both match: it has a literal segment
    /// where `other` has a parameter, before any segment where the reverse holds.
    pub fn outranks(&self, other: &Pattern) -> bool {
        let literal = |segment: &Segment| matches!(segment, Segment::Literal(_));
        self.segments
            .iter()
            .zip(&other.segments)
            .map(|(mine, theirs)| (literal(mine), literal(theirs)))
            .find(|(mine, theirs)| mine != theirs)
            .is_some_and(|(mine, _)| mine)
    }

    /// Whether the two patterns answer exactly the same paths (`/a/{x}` and `/a/{y}` do): two
    /// handlers of one method with such patterns could never be told apart.
    pub fn same_routes(&self, other: &Pattern) -> bool {
        self.segments.len() == other.segments.len()
            && self
                .segments
                .iter()
                .zip(&other.segments)
                .all(|pair| match pair {
                    (Segment::Literal(a), Segment::Literal(b)) => a == b,
                    (Segment::Param(_), Segment::Param(_)) => true,
                    _ => false,
                })
    }
}

#[cfg(test)]
mod tests;
