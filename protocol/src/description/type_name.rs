//! Types written as in Rust, for people: `Vec<Message>`, `Option<(u32, bool)>`.

use wasmod_abi::{AlgebraicType, Field, Typespace};

/// `ty` written as in Rust: `u64`, `String`, `Vec<Message>`, `Option<(u32, bool)>`,
/// `[u8; 4]`, `Result<String, String>`. Named types are written by name (without their module
/// path when that is unambiguous: `Message` for `quickstart::chat::Message`); anonymous structs
/// and enums as `{ x: u32 }` and `enum { A(u32), B }`. A reference the typespace does not hold
/// is written `#<index>?`.
pub fn type_name(ty: &AlgebraicType, typespace: &Typespace) -> String {
    let name = |ty: &AlgebraicType| type_name(ty, typespace);
    match ty {
        AlgebraicType::Bool => "bool".into(),
        AlgebraicType::I8 => "i8".into(),
        AlgebraicType::U8 => "u8".into(),
        AlgebraicType::I16 => "i16".into(),
        AlgebraicType::U16 => "u16".into(),
        AlgebraicType::I32 => "i32".into(),
        AlgebraicType::U32 => "u32".into(),
        AlgebraicType::I64 => "i64".into(),
        AlgebraicType::U64 => "u64".into(),
        AlgebraicType::I128 => "i128".into(),
        AlgebraicType::U128 => "u128".into(),
        AlgebraicType::F32 => "f32".into(),
        AlgebraicType::F64 => "f64".into(),
        AlgebraicType::String => "String".into(),
        AlgebraicType::Identity => "Identity".into(),
        AlgebraicType::ConnectionId => "ConnectionId".into(),
        AlgebraicType::Timestamp => "Timestamp".into(),
        AlgebraicType::Array(item) => format!("Vec<{}>", name(item)),
        AlgebraicType::FixedArray(item, len) => format!("[{}; {len}]", name(item)),
        AlgebraicType::Option(some) => format!("Option<{}>", name(some)),
        AlgebraicType::Result(ok, err) => format!("Result<{}, {}>", name(ok), name(err)),
        AlgebraicType::Product(fields) if fields.iter().all(|field| field.name.is_none()) => {
            let items: Vec<String> = fields.iter().map(|field| name(&field.ty)).collect();
            match items.as_slice() {
                [one] => format!("({one},)"),
                _ => format!("({})", items.join(", ")),
            }
        }
        AlgebraicType::Product(fields) => {
            let items: Vec<String> = fields
                .iter()
                .enumerate()
                .map(|(index, field)| format!("{}: {}", field_name(index, field), name(&field.ty)))
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        AlgebraicType::Sum(variants) => {
            let items: Vec<String> = variants
                .iter()
                .enumerate()
                .map(|(index, variant)| {
                    let payload = variant_payload(&variant.ty, typespace);
                    match payload {
                        Some(payload) => format!("{}({payload})", field_name(index, variant)),
                        None => field_name(index, variant),
                    }
                })
                .collect();
            format!("enum {{ {} }}", items.join(", "))
        }
        AlgebraicType::Ref(index) => match typespace.types.get(*index as usize) {
            Some(def) => short_name(&def.name, typespace).to_owned(),
            None => format!("#{index}?"),
        },
    }
}

/// A named type's name without its module path (`Message` for `chat::Message`), unless
/// another type of the typespace has the same last segment.
fn short_name<'a>(name: &'a str, typespace: &Typespace) -> &'a str {
    let last = |name: &'a str| name.rsplit("::").next().unwrap_or(name);
    let short = last(name);
    let clashes = typespace
        .types
        .iter()
        .filter(|def| def.name.rsplit("::").next() == Some(short))
        .count();
    if clashes > 1 {
        name
    } else {
        short
    }
}

/// A variant's payload type, or `None` for a unit variant (an empty product).
pub(super) fn variant_payload(ty: &AlgebraicType, typespace: &Typespace) -> Option<String> {
    match ty {
        AlgebraicType::Product(fields) if fields.is_empty() => None,
        other => Some(type_name(other, typespace)),
    }
}

/// A field's or variant's name, or its position for an unnamed one.
pub(super) fn field_name(index: usize, field: &Field) -> String {
    field.name.clone().unwrap_or_else(|| index.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_written_as_in_rust() {
        let ts = super::super::example_typespace();
        let cases = [
            (
                AlgebraicType::Array(Box::new(AlgebraicType::Ref(0))),
                "Vec<Point>",
            ),
            (
                AlgebraicType::Option(Box::new(AlgebraicType::Product(vec![
                    Field::unnamed(AlgebraicType::U32),
                    Field::unnamed(AlgebraicType::Bool),
                ]))),
                "Option<(u32, bool)>",
            ),
            (
                AlgebraicType::FixedArray(Box::new(AlgebraicType::U8), 4),
                "[u8; 4]",
            ),
            (
                AlgebraicType::Result(
                    Box::new(AlgebraicType::String),
                    Box::new(AlgebraicType::Identity),
                ),
                "Result<String, Identity>",
            ),
            (AlgebraicType::Product(vec![]), "()"),
            (
                AlgebraicType::Product(vec![Field::unnamed(AlgebraicType::I8)]),
                "(i8,)",
            ),
            (
                AlgebraicType::Product(vec![Field::named("a", AlgebraicType::Timestamp)]),
                "{ a: Timestamp }",
            ),
            (ts.types[1].ty.clone(), "enum { Dot(Point), Empty }"),
            (AlgebraicType::Ref(9), "#9?"),
        ];
        let mut clash = ts.clone();
        clash.types[1].name = "other::Point".into();
        assert_eq!(type_name(&AlgebraicType::Ref(0), &clash), "geo::Point");
        for (ty, expected) in cases {
            assert_eq!(type_name(&ty, &ts), expected);
        }
    }
}
