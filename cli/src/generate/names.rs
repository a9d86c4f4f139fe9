//! Names as the module writes them, converted for bindings: type names from their Rust paths,
//! and the cases languages want (`UpperCamel` types, `snake_case` members).

use heck::{ToSnakeCase, ToUpperCamelCase};

/// The identifiers of a Rust type path, without the module paths:
/// `a::b::Pair<alloc::string::String, u32>` is `Pair`, `String`, `u32`.
pub fn path_identifiers(path: &str) -> Vec<&str> {
    let mut identifiers = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let start = rest
            .find(|c: char| c.is_alphanumeric() || c == '_')
            .unwrap_or(rest.len());
        rest = &rest[start..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (identifier, after) = rest.split_at(end);
        if !identifier.is_empty() && !after.starts_with("::") {
            identifiers.push(identifier);
        }
        rest = after;
    }
    identifiers
}

/// Every identifier of a Rust type path, module paths included: `a::b::Pair<u32>` is `a`,
/// `b`, `Pair`, `u32`.
pub fn all_identifiers(path: &str) -> Vec<&str> {
    path.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|identifier| !identifier.is_empty())
        .collect()
}

/// `identifiers` joined as one `UpperCamel` name: `["Pair", "u32"]` is `PairU32`.
pub fn upper_camel(identifiers: &[&str]) -> String {
    identifiers
        .iter()
        .map(|identifier| identifier.to_upper_camel_case())
        .collect()
}

/// `name` in `snake_case`: `sentAt` and `SentAt` are `sent_at`.
pub fn snake(name: &str) -> String {
    name.to_snake_case()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_paths_lose_their_modules_but_keep_their_arguments() {
        assert_eq!(path_identifiers("quickstart::chat::Message"), ["Message"]);
        assert_eq!(
            path_identifiers("a::b::Pair<alloc::string::String, u32>"),
            ["Pair", "String", "u32"]
        );
        assert_eq!(path_identifiers("Plain"), ["Plain"]);
        assert_eq!(
            all_identifiers("quickstart::chat::Message"),
            ["quickstart", "chat", "Message"]
        );
    }

    #[test]
    fn cases_convert_both_ways() {
        assert_eq!(upper_camel(&["Pair", "u32"]), "PairU32");
        assert_eq!(upper_camel(&["my_table"]), "MyTable");
        assert_eq!(upper_camel(&["chat", "Message"]), "ChatMessage");
        assert_eq!(snake("sentAt"), "sent_at");
        assert_eq!(snake("SentAt"), "sent_at");
        assert_eq!(snake("already_snake"), "already_snake");
        assert_eq!(snake("HTTPStatus"), "http_status");
    }
}
