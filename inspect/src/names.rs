//! Demangled Rust names, and what the analysis reads in them.
//!
//! The name section holds mangled symbols. Demangled in the "alternate" form (no hash, no crate
//! disambiguator), a function is a path like `quickstart::chat::send`. What a name says depends
//! on the mangling scheme: with `-C symbol-mangling-version=v0` a monomorphised thunk is
//! `wasmod::rt::thunks::run_reducer::<quickstart::chat::send>`, which names its entry point;
//! with the default (legacy) scheme it is only `wasmod::rt::thunks::run_reducer`, and the entry
//! point has to be recognised among the thunk's callees instead (see [`crate::entry`]).

/// The traits the module macro implements for each entry point's zero-sized type.
const ENTRY_TRAITS: [&str; 4] = [
    "wasmod::rt::entry::Reducer",
    "wasmod::rt::entry::Procedure",
    "wasmod::rt::entry::View",
    "wasmod::rt::entry::HttpHandler",
];

/// Demangles a symbol from the name section; a name that is not a Rust symbol is kept as is.
pub(crate) fn demangle(symbol: &str) -> String {
    format!("{:#}", rustc_demangle::demangle(symbol))
}

/// The single generic argument a function name ends with, if any:
/// `wasmod::rt::thunks::run_reducer::<quickstart::chat::send>` gives `quickstart::chat::send`.
pub(crate) fn generic_argument(name: &str) -> Option<&str> {
    let inner = name.strip_suffix('>')?;
    let open = top_level_find(inner, "::<")?;
    let argument = &inner[open + 3..];
    // One argument, and the `<` opened here is the one the final `>` closes.
    (top_level_find(argument, ",").is_none() && balanced(argument)).then_some(argument)
}

/// The type an entry-point trait is implemented for, if `name` is a method of such an impl:
/// `quickstart::chat::_::<impl wasmod::rt::entry::Reducer for quickstart::chat::init>::invoke`
/// (legacy mangling) or `<quickstart::chat::init as wasmod::rt::entry::Reducer>::invoke` (v0)
/// give `quickstart::chat::init`.
pub(crate) fn entry_impl_self_type(name: &str) -> Option<&str> {
    ENTRY_TRAITS.iter().find_map(|trait_path| {
        let legacy = format!("<impl {trait_path} for ");
        if let Some(start) = name.find(&legacy) {
            let rest = &name[start + legacy.len()..];
            return rest.find(">::").map(|end| &rest[..end]);
        }
        let v0 = format!(" as {trait_path}>::");
        let end = name.find(&v0)?;
        name[..end].strip_prefix('<')
    })
}

/// Whether `name` is a plain path of a free function: at least two `::`-separated identifiers,
/// no impl block, no generic arguments, no closure.
pub(crate) fn is_plain_path(name: &str) -> bool {
    let mut segments = name.split("::");
    let all_identifiers = segments.clone().all(|segment| {
        !segment.is_empty() && segment.chars().all(|c| c.is_alphanumeric() || c == '_')
    });
    all_identifiers && segments.nth(1).is_some()
}

/// The crate a path starts with.
pub(crate) fn crate_of(path: &str) -> &str {
    path.split("::").next().unwrap_or(path)
}

/// The byte index of the first occurrence of `needle` outside any `<..>`, `(..)` or `[..]`.
fn top_level_find(text: &str, needle: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (index, c) in text.char_indices() {
        if depth == 0 && text[index..].starts_with(needle) {
            return Some(index);
        }
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Whether every bracket in `text` is closed, and none closes before it opens.
fn balanced(text: &str) -> bool {
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => match depth.checked_sub(1) {
                Some(less) => depth = less,
                None => return false,
            },
            _ => {}
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_argument_of_a_thunk() {
        assert_eq!(
            generic_argument("wasmod::rt::thunks::run_reducer::<quickstart::chat::send>"),
            Some("quickstart::chat::send")
        );
        assert_eq!(generic_argument("wasmod::rt::thunks::run_reducer"), None);
        assert_eq!(
            generic_argument("core::ptr::drop_in_place::<a::B, c::D>"),
            None
        );
        assert_eq!(generic_argument("<a::B as c::D>::f"), None);
        assert_eq!(generic_argument("a::f::<a::B<u8>>"), Some("a::B<u8>"));
    }

    #[test]
    fn entry_impls_in_both_manglings() {
        let legacy =
            "quickstart::chat::_::<impl wasmod::rt::entry::Reducer for quickstart::chat::init>::invoke";
        assert_eq!(entry_impl_self_type(legacy), Some("quickstart::chat::init"));
        let v0 = "<quickstart::chat::recent as wasmod::rt::entry::View>::invoke";
        assert_eq!(entry_impl_self_type(v0), Some("quickstart::chat::recent"));
        let other = "<quickstart::chat::User as wasmod_abi::encoding::Decode>::decode";
        assert_eq!(entry_impl_self_type(other), None);
    }

    #[test]
    fn plain_paths() {
        assert!(is_plain_path("quickstart::chat::send"));
        assert!(!is_plain_path("__call_reducer__"));
        assert!(!is_plain_path("quickstart::chat::send::{closure#0}"));
        assert!(!is_plain_path("<a::B as c::D>::f"));
        assert!(!is_plain_path("a::f::<u8>"));
        assert_eq!(crate_of("quickstart::chat::send"), "quickstart");
    }

    #[test]
    fn demangles_legacy_symbols_without_hash() {
        assert_eq!(
            demangle("_ZN10quickstart4chat4send17h783113b737bf8544E"),
            "quickstart::chat::send"
        );
        assert_eq!(demangle("__call_reducer__"), "__call_reducer__");
    }
}
