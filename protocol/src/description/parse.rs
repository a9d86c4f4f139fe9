//! Reading a description's types back: `Vec<Message>` into `Array(Ref(0))`.
//!
//! A client that knows a module only from `GET /v1/module` (a browser, generated bindings)
//! still needs [`AlgebraicType`]s to use the JSON mapping (`crate::json`) on rows and
//! arguments. [`ModuleDescription::typespace`] rebuilds the typespace of the named types the
//! description lists, and [`DescribedTypes::parse`] reads any type name in it, the inverse of
//! [`type_name`](super::type_name). The text is treated as hostile: errors, never panics,
//! and nesting is bounded by [`MAX_DEPTH`].

use super::{ModuleDescription, TypeDescription, Typed};
use wasmod_abi::value::MAX_DEPTH;
use wasmod_abi::{AlgebraicType, Field, TypeDef, Typespace};

/// hashbrown with foldhash rather than std's `HashMap`: the browser client uses no other kind,
/// and std's is a second copy of hashbrown's code, with SipHash, in its wasm.
type HashMap<K, V> = hashbrown::HashMap<K, V, foldhash::fast::RandomState>;

/// The named types of a description, and how their names resolve.
#[derive(Clone, Debug, Default)]
pub struct DescribedTypes {
    /// The named types, in the description's order ([`AlgebraicType::Ref`] indexes them).
    pub typespace: Typespace,
    /// Full names, and last segments that name one type only, to their index.
    names: HashMap<String, u32>,
}

impl ModuleDescription {
    /// The typespace of the named types this description lists; an error naming the type
    /// whose text does not read back.
    pub fn typespace(&self) -> Result<DescribedTypes, String> {
        let mut names = HashMap::default();
        let mut short_counts: HashMap<&str, usize> = HashMap::default();
        for description in &self.types {
            *short_counts
                .entry(last_segment(description.name()))
                .or_default() += 1;
        }
        for (description, index) in self.types.iter().zip(0u32..) {
            names.insert(description.name().to_owned(), index);
            let short = last_segment(description.name());
            if short_counts[short] == 1 {
                names.entry(short.to_owned()).or_insert(index);
            }
        }
        let mut types = DescribedTypes {
            typespace: Typespace::default(),
            names,
        };
        let defs = self
            .types
            .iter()
            .map(|description| {
                types
                    .structure(description)
                    .map(|ty| TypeDef {
                        name: description.name().to_owned(),
                        ty,
                    })
                    .map_err(|error| format!("type `{}`: {error}", description.name()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        types.typespace.types = defs;
        Ok(types)
    }
}

impl DescribedTypes {
    /// The type `text` names, as [`type_name`](super::type_name) writes it.
    pub fn parse(&self, text: &str) -> Result<AlgebraicType, String> {
        let mut parser = Parser {
            text,
            position: 0,
            names: &self.names,
        };
        let ty = parser.ty(0)?;
        parser.skip_space();
        if parser.position != text.len() {
            return Err(parser.error("the end of the type"));
        }
        Ok(ty)
    }

    /// Typed fields (a reducer's parameters, a struct's fields) as `(name, type)`.
    pub fn fields(&self, typed: &[Typed]) -> Result<Vec<(String, AlgebraicType)>, String> {
        typed
            .iter()
            .map(|field| Ok((field.name.clone(), self.parse(&field.ty)?)))
            .collect()
    }

    /// The structure of a named type.
    fn structure(&self, description: &TypeDescription) -> Result<AlgebraicType, String> {
        Ok(match description {
            TypeDescription::Struct { fields, .. } => AlgebraicType::Product(
                self.fields(fields)?
                    .into_iter()
                    .enumerate()
                    .map(|(index, (name, ty))| field(index, name, ty))
                    .collect(),
            ),
            TypeDescription::Enum { variants, .. } => AlgebraicType::Sum(
                variants
                    .iter()
                    .enumerate()
                    .map(|(index, variant)| {
                        let ty = match &variant.payload {
                            Some(payload) => self.parse(payload)?,
                            None => AlgebraicType::Product(Vec::new()),
                        };
                        Ok(field(index, variant.name.clone(), ty))
                    })
                    .collect::<Result<_, String>>()?,
            ),
            TypeDescription::Alias { ty, .. } => self.parse(ty)?,
        })
    }
}

/// A field named `name` at `index`; unnamed when its name is its position (how the
/// description writes positional fields).
fn field(index: usize, name: String, ty: AlgebraicType) -> Field {
    if name == index.to_string() {
        Field::unnamed(ty)
    } else {
        Field {
            name: Some(name),
            ty,
        }
    }
}

fn last_segment(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

/// A recursive-descent reader of one type name.
struct Parser<'t> {
    text: &'t str,
    position: usize,
    names: &'t HashMap<String, u32>,
}

impl<'t> Parser<'t> {
    fn ty(&mut self, depth: usize) -> Result<AlgebraicType, String> {
        if depth > MAX_DEPTH {
            return Err(format!("types nested more than {MAX_DEPTH} deep"));
        }
        let next = depth + 1;
        self.skip_space();
        if self.eat("(") {
            return self.tuple(next);
        }
        if self.eat("[") {
            let item = self.ty(next)?;
            self.expect(";")?;
            self.skip_space();
            let digits = self.take_while(|c| c.is_ascii_digit());
            let len = digits
                .parse::<u32>()
                .map_err(|_| self.error("an array length"))?;
            self.expect("]")?;
            return Ok(AlgebraicType::FixedArray(Box::new(item), len));
        }
        if self.eat("{") {
            let fields = self.fields(next, "}")?;
            return Ok(AlgebraicType::Product(fields));
        }
        let word = self.take_while(|c| c.is_alphanumeric() || c == '_' || c == ':');
        let simple = match word {
            "bool" => AlgebraicType::Bool,
            "i8" => AlgebraicType::I8,
            "u8" => AlgebraicType::U8,
            "i16" => AlgebraicType::I16,
            "u16" => AlgebraicType::U16,
            "i32" => AlgebraicType::I32,
            "u32" => AlgebraicType::U32,
            "i64" => AlgebraicType::I64,
            "u64" => AlgebraicType::U64,
            "i128" => AlgebraicType::I128,
            "u128" => AlgebraicType::U128,
            "f32" => AlgebraicType::F32,
            "f64" => AlgebraicType::F64,
            "String" => AlgebraicType::String,
            "Identity" => AlgebraicType::Identity,
            "ConnectionId" => AlgebraicType::ConnectionId,
            "Timestamp" => AlgebraicType::Timestamp,
            "Vec" => return Ok(AlgebraicType::Array(Box::new(self.generic(next)?))),
            "Option" => return Ok(AlgebraicType::Option(Box::new(self.generic(next)?))),
            "Result" => {
                self.expect("<")?;
                let ok = self.ty(next)?;
                self.expect(",")?;
                let err = self.ty(next)?;
                self.expect(">")?;
                return Ok(AlgebraicType::Result(Box::new(ok), Box::new(err)));
            }
            "enum" => {
                self.expect("{")?;
                return self.variants(next);
            }
            "" => return Err(self.error("a type")),
            name => match self.names.get(name) {
                Some(&index) => AlgebraicType::Ref(index),
                None => return Err(format!("no type named `{name}`")),
            },
        };
        Ok(simple)
    }

    /// `<T>` after `Vec` or `Option`.
    fn generic(&mut self, depth: usize) -> Result<AlgebraicType, String> {
        self.expect("<")?;
        let ty = self.ty(depth)?;
        self.expect(">")?;
        Ok(ty)
    }

    /// The rest of `(a, b)`, `(a,)` or `()`.
    fn tuple(&mut self, depth: usize) -> Result<AlgebraicType, String> {
        let mut fields = Vec::new();
        loop {
            self.skip_space();
            if self.eat(")") {
                return Ok(AlgebraicType::Product(fields));
            }
            fields.push(Field::unnamed(self.ty(depth)?));
            self.skip_space();
            if !self.eat(",") {
                self.expect(")")?;
                return Ok(AlgebraicType::Product(fields));
            }
        }
    }

    /// `name: T, …` up to `close`.
    fn fields(&mut self, depth: usize, close: &str) -> Result<Vec<Field>, String> {
        let mut fields = Vec::new();
        loop {
            self.skip_space();
            if self.eat(close) {
                return Ok(fields);
            }
            let name = self.name()?;
            self.expect(":")?;
            let ty = self.ty(depth)?;
            fields.push(field(fields.len(), name, ty));
            self.skip_space();
            if !self.eat(",") {
                self.expect(close)?;
                return Ok(fields);
            }
        }
    }

    /// `A(T), B, …}` of an anonymous enum.
    fn variants(&mut self, depth: usize) -> Result<AlgebraicType, String> {
        let mut variants = Vec::new();
        loop {
            self.skip_space();
            if self.eat("}") {
                return Ok(AlgebraicType::Sum(variants));
            }
            let name = self.name()?;
            self.skip_space();
            let ty = if self.eat("(") {
                let payload = self.ty(depth)?;
                self.expect(")")?;
                payload
            } else {
                AlgebraicType::Product(Vec::new())
            };
            variants.push(field(variants.len(), name, ty));
            self.skip_space();
            if !self.eat(",") {
                self.expect("}")?;
                return Ok(AlgebraicType::Sum(variants));
            }
        }
    }

    fn name(&mut self) -> Result<String, String> {
        self.skip_space();
        let name = self.take_while(|c| c.is_alphanumeric() || c == '_');
        if name.is_empty() {
            return Err(self.error("a name"));
        }
        Ok(name.to_owned())
    }

    fn take_while(&mut self, accept: impl Fn(char) -> bool) -> &'t str {
        let text: &'t str = self.text;
        let rest = &text[self.position..];
        let len = rest.find(|c| !accept(c)).unwrap_or(rest.len());
        self.position += len;
        &rest[..len]
    }

    fn skip_space(&mut self) {
        self.take_while(char::is_whitespace);
    }

    fn eat(&mut self, token: &str) -> bool {
        let found = self.text[self.position..].starts_with(token);
        if found {
            self.position += token.len();
        }
        found
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        self.skip_space();
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(&format!("`{token}`")))
        }
    }

    fn error(&self, expected: &str) -> String {
        format!(
            "expected {expected} at byte {} of `{}`",
            self.position, self.text
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::description::{describe, type_name, Tables};
    use wasmod_abi::ModuleDef;

    fn example() -> (Typespace, DescribedTypes) {
        let typespace = super::super::example_typespace();
        let module = ModuleDef {
            typespace: typespace.clone(),
            ..ModuleDef::default()
        };
        let described = describe(&module, Tables::All)
            .typespace()
            .expect("reads back");
        (typespace, described)
    }

    #[test]
    fn a_description_gives_back_its_typespace() {
        let (typespace, described) = example();
        assert_eq!(described.typespace, typespace);
    }

    #[test]
    fn every_type_name_reads_back_as_its_type() {
        let (typespace, described) = example();
        let point = || AlgebraicType::Ref(0);
        let types = [
            AlgebraicType::Array(Box::new(point())),
            AlgebraicType::Option(Box::new(AlgebraicType::Product(vec![
                Field::unnamed(AlgebraicType::U32),
                Field::unnamed(AlgebraicType::Bool),
            ]))),
            AlgebraicType::FixedArray(Box::new(AlgebraicType::U8), 4),
            AlgebraicType::Result(
                Box::new(AlgebraicType::String),
                Box::new(AlgebraicType::Identity),
            ),
            AlgebraicType::Product(vec![]),
            AlgebraicType::Product(vec![Field::unnamed(AlgebraicType::I8)]),
            AlgebraicType::Product(vec![
                Field::named("a", AlgebraicType::Timestamp),
                Field::named("b", AlgebraicType::ConnectionId),
            ]),
            AlgebraicType::Sum(vec![
                Field::named("Dot", AlgebraicType::Product(vec![Field::unnamed(point())])),
                Field::named("Line", AlgebraicType::Array(Box::new(point()))),
                Field::named("Empty", AlgebraicType::Product(vec![])),
            ]),
            AlgebraicType::Option(Box::new(AlgebraicType::Option(Box::new(
                AlgebraicType::Ref(1),
            )))),
            AlgebraicType::Array(Box::new(AlgebraicType::Array(Box::new(AlgebraicType::F64)))),
        ];
        for ty in types {
            let text = type_name(&ty, &typespace);
            assert_eq!(described.parse(&text), Ok(ty), "{text}");
        }
    }

    #[test]
    fn full_names_read_as_short_ones() {
        let (_, described) = example();
        assert_eq!(described.parse("geo::Point"), Ok(AlgebraicType::Ref(0)));
        assert_eq!(described.parse("Point"), Ok(AlgebraicType::Ref(0)));
    }

    #[test]
    fn bad_text_is_an_error() {
        let (_, described) = example();
        for text in [
            "",
            "Vec<",
            "Vec<u8",
            "Vec<u8>>",
            "[u8; x]",
            "[u8]",
            "Nope",
            "#3?",
            "(u8",
            "{ a }",
            "enum { A(u8 }",
            "Result<u8>",
            "u8 u8",
        ] {
            assert!(described.parse(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_an_overflow() {
        let (_, described) = example();
        let text = format!("{}u8{}", "Vec<".repeat(10_000), ">".repeat(10_000));
        assert!(described.parse(&text).is_err());
    }
}
