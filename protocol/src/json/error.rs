//! [`JsonError`]: what was expected, what was found, and where.

use std::fmt;

/// Why a value could not be converted from or to JSON: what was expected, what was found,
/// and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// The entry point, such as ``reducer `send` ``, once the caller has said.
    entry_point: Option<String>,
    /// The argument the problem is in, for [`args_from_json`](super::args_from_json).
    argument: Option<String>,
    /// Where inside the value, innermost segment first (they are added as the error travels
    /// outwards).
    path: Vec<Segment>,
    /// What went wrong there.
    message: String,
}

/// One step into a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Segment {
    /// A field, a variant, `ok`/`err`, or a tuple position: `.name`.
    Name(String),
    /// An array item: `[index]`.
    Index(usize),
}

impl JsonError {
    pub(super) fn new(message: String) -> Self {
        Self {
            entry_point: None,
            argument: None,
            path: Vec::new(),
            message,
        }
    }

    /// This error, attributed to the entry point `name` of kind `kind` (such as `"reducer"`):
    /// its message then reads `` argument `text` of reducer `send`: … ``.
    pub fn in_entry_point(mut self, kind: &str, name: &str) -> Self {
        self.entry_point = Some(format!("{kind} `{name}`"));
        self
    }

    /// The argument the problem is in, if it is in one.
    pub fn argument(&self) -> Option<&str> {
        self.argument.as_deref()
    }

    /// Where the problem is inside the value (or the argument), such as `.pos.x` or `[2]`;
    /// empty at the top.
    pub fn path(&self) -> String {
        let mut out = String::new();
        for segment in self.path.iter().rev() {
            match segment {
                Segment::Name(name) => {
                    out.push('.');
                    out.push_str(name);
                }
                Segment::Index(index) => out.push_str(&format!("[{index}]")),
            }
        }
        out
    }

    /// What went wrong, without the location: such as `expected a string, found 42`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The error of rows that claim a table the module does not have.
    pub(crate) fn unknown_table(table: &str) -> Self {
        Self::new(format!("the module has no table named `{table}`"))
    }

    /// This error with `note` appended to its message.
    pub(super) fn noted(mut self, note: &str) -> Self {
        self.message.push_str(note);
        self
    }

    /// This error, one step further from the value's root.
    pub(super) fn within(mut self, segment: Segment) -> Self {
        self.path.push(segment);
        self
    }

    /// Turns the outermost path segment (a parameter's name) into the argument.
    pub(super) fn into_argument_error(mut self) -> Self {
        if let Some(Segment::Name(name)) = self.path.last() {
            self.argument = Some(name.clone());
            self.path.pop();
        }
        self
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path();
        match &self.argument {
            Some(argument) => {
                write!(f, "argument `{argument}`{path}")?;
                if let Some(entry_point) = &self.entry_point {
                    write!(f, " of {entry_point}")?;
                }
                f.write_str(": ")?;
            }
            None => {
                if let Some(entry_point) = &self.entry_point {
                    write!(f, "{entry_point}: ")?;
                }
                if !path.is_empty() {
                    write!(f, "at {path}: ")?;
                }
            }
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for JsonError {}
