//! JSON → encoded values: a call's arguments, or one value, checked against its type.

use super::error::Segment;
use super::{is_option, is_unit, variant_name, JsonError, MAX_SAFE_INTEGER};
use serde_json::{Number, Value as Json};
use std::borrow::Cow;
use std::fmt;
use wasmod_abi::value::MAX_DEPTH;
use wasmod_abi::{
    AlgebraicType, ConnectionId, Field, Identity, ParamDef, Timestamp, Typespace, Value,
};

/// Encodes a call's arguments: `json` is an array of the arguments in order, or an object
/// keyed by parameter name; the result is the encoded product of `params`.
///
/// Missing and unknown arguments are errors that name them; an argument that does not match
/// its parameter's type is an error naming the argument, the path inside it and the type
/// expected.
pub fn args_from_json(
    params: &[ParamDef],
    typespace: &Typespace,
    json: &Json,
) -> Result<Vec<u8>, JsonError> {
    let members: Vec<Member<'_>> = params
        .iter()
        .map(|param| Member {
            name: Some(&param.name),
            ty: &param.ty,
        })
        .collect();
    let expected = || {
        format!(
            "the arguments as an array or an object ({})",
            member_list(&members)
        )
    };
    let values = FromJson { typespace }
        .product(&members, "argument", expected, json, 0)
        .map_err(JsonError::into_argument_error)?;
    let mut out = Vec::new();
    values.iter().for_each(|value| value.encode(&mut out));
    Ok(out)
}

/// Encodes one value of type `ty` given as JSON.
pub fn value_from_json(
    ty: &AlgebraicType,
    typespace: &Typespace,
    json: &Json,
) -> Result<Vec<u8>, JsonError> {
    Ok(FromJson { typespace }.value(ty, json, 0)?.to_bytes())
}

/// A field of a product or a parameter of an entry point.
struct Member<'a> {
    name: Option<&'a str>,
    ty: &'a AlgebraicType,
}

impl Member<'_> {
    /// The path segment of the member at `index`: its name, or its position.
    fn segment(&self, index: usize) -> Segment {
        Segment::Name(self.name.map_or_else(|| index.to_string(), str::to_owned))
    }
}

fn member_list(members: &[Member<'_>]) -> String {
    name_list(members.iter().map(|member| member.name.unwrap_or("_")))
}

/// `` `a`, `b` ``, or `none`.
fn name_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let list: Vec<String> = names.map(|name| format!("`{name}`")).collect();
    if list.is_empty() {
        "none".to_owned()
    } else {
        list.join(", ")
    }
}

/// Follows references to a structural type, with the name of the first named type met.
fn resolve<'a>(
    typespace: &'a Typespace,
    ty: &'a AlgebraicType,
) -> Result<(&'a AlgebraicType, Option<&'a str>), JsonError> {
    let name = match ty {
        AlgebraicType::Ref(index) => typespace
            .types
            .get(*index as usize)
            .map(|def| def.name.as_str()),
        _ => None,
    };
    let resolved = typespace.resolve(ty).ok_or_else(unresolved)?;
    Ok((resolved, name))
}

fn unresolved() -> JsonError {
    JsonError::new(
        "the type refers to a typespace entry that does not exist (or to a cycle of references)"
            .to_owned(),
    )
}

/// One more level of nesting, or an error past [`MAX_DEPTH`].
fn deeper(depth: usize) -> Result<usize, JsonError> {
    if depth >= MAX_DEPTH {
        Err(JsonError::new(format!(
            "values are nested more than {MAX_DEPTH} levels deep"
        )))
    } else {
        Ok(depth + 1)
    }
}

/// `expected {expected}, found {json}`.
fn mismatch(expected: impl fmt::Display, json: &Json) -> JsonError {
    JsonError::new(format!("expected {expected}, found {}", found(json)))
}

/// A short description of a JSON value, for messages.
fn found(json: &Json) -> String {
    const MAX_CHARS: usize = 40;
    match json {
        Json::String(text) if text.chars().count() > MAX_CHARS => {
            let head: String = text.chars().take(MAX_CHARS).collect();
            json_text(&Json::String(head)) + "…"
        }
        Json::Array(items) => items_phrase("an array of", items.len()),
        Json::Object(map) if map.is_empty() => "an empty object".to_owned(),
        Json::Object(map) => format!(
            "an object with keys {}",
            name_list(map.keys().map(String::as_str))
        ),
        other => json_text(other),
    }
}

/// `json` as compact JSON text. Not its `Display` (`to_string`), which serializes through a
/// `fmt::Formatter`, pretty-printing too for `{:#}`: two more copies of the serializer in
/// the browser client beside the one writing into a `String`.
fn json_text(json: &Json) -> String {
    // A `Value` always serializes: its map keys are strings.
    serde_json::to_string(json).unwrap_or_default()
}

/// `an array of 1 item`, `an array of 3 items`.
fn items_phrase(prefix: &str, count: usize) -> String {
    let plural = if count == 1 { "" } else { "s" };
    format!("{prefix} {count} item{plural}")
}

/// JSON → [`Value`], against a type.
struct FromJson<'a> {
    typespace: &'a Typespace,
}

impl FromJson<'_> {
    fn value(&self, ty: &AlgebraicType, json: &Json, depth: usize) -> Result<Value, JsonError> {
        use AlgebraicType as T;
        let (resolved, name) = resolve(self.typespace, ty)?;
        match resolved {
            T::Bool => json
                .as_bool()
                .map(Value::Bool)
                .ok_or_else(|| mismatch("a bool", json)),
            T::I8 => integer::<i8>(json).map(Value::I8),
            T::U8 => integer::<u8>(json).map(Value::U8),
            T::I16 => integer::<i16>(json).map(Value::I16),
            T::U16 => integer::<u16>(json).map(Value::U16),
            T::I32 => integer::<i32>(json).map(Value::I32),
            T::U32 => integer::<u32>(json).map(Value::U32),
            T::I64 => integer::<i64>(json).map(Value::I64),
            T::U64 => integer::<u64>(json).map(Value::U64),
            T::I128 => integer::<i128>(json).map(Value::I128),
            T::U128 => integer::<u128>(json).map(Value::U128),
            T::F32 => f32_from_json(json).map(Value::F32),
            T::F64 => float("f64", json).map(Value::F64),
            T::String => json
                .as_str()
                .map(Value::from)
                .ok_or_else(|| mismatch("a string", json)),
            T::Identity => json
                .as_str()
                .and_then(Identity::from_hex)
                .map(Value::Identity)
                .ok_or_else(|| mismatch("an identity (64 hex digits)", json)),
            T::ConnectionId => json
                .as_str()
                .and_then(ConnectionId::from_hex)
                .map(Value::ConnectionId)
                .ok_or_else(|| mismatch("a connection id (32 hex digits)", json)),
            T::Timestamp => timestamp(json).map(Value::Timestamp),
            T::Array(element) => {
                let items = json.as_array().ok_or_else(|| mismatch("an array", json))?;
                self.items(element, items, deeper(depth)?).map(Value::Array)
            }
            T::FixedArray(element, len) => {
                let items = json
                    .as_array()
                    .filter(|items| items.len() == *len as usize)
                    .ok_or_else(|| mismatch(items_phrase("an array of", *len as usize), json))?;
                self.items(element, items, deeper(depth)?)
                    .map(Value::Product)
            }
            T::Option(inner) => self.option(inner, json, deeper(depth)?),
            T::Result(ok, err) => self.result(ok, err, json, deeper(depth)?),
            T::Product(fields) => {
                let members: Vec<Member<'_>> = fields
                    .iter()
                    .map(|field| Member {
                        name: field.name.as_deref(),
                        ty: &field.ty,
                    })
                    .collect();
                let expected = || product_expectation(name, &members);
                self.product(&members, "field", expected, json, depth)
                    .map(Value::Product)
            }
            T::Sum(variants) => self.sum(variants, name, json, deeper(depth)?),
            T::Ref(_) => Err(unresolved()),
        }
    }

    fn items(
        &self,
        element: &AlgebraicType,
        items: &[Json],
        depth: usize,
    ) -> Result<Vec<Value>, JsonError> {
        items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                self.value(element, item, depth)
                    .map_err(|error| error.within(Segment::Index(index)))
            })
            .collect()
    }

    fn option(&self, inner: &AlgebraicType, json: &Json, depth: usize) -> Result<Value, JsonError> {
        if json.is_null() {
            return Ok(Value::Option(None));
        }
        let some = if is_option(self.typespace, inner) {
            match single_entry(json) {
                Some(("some", payload)) => self
                    .value(inner, payload, depth)
                    .map_err(|error| error.within(Segment::Name("some".to_owned())))?,
                _ => return Err(mismatch(r#"null or {"some": value}"#, json)),
            }
        } else {
            self.value(inner, json, depth)?
        };
        Ok(Value::Option(Some(Box::new(some))))
    }

    fn result(
        &self,
        ok: &AlgebraicType,
        err: &AlgebraicType,
        json: &Json,
        depth: usize,
    ) -> Result<Value, JsonError> {
        let (key, payload) = single_entry(json)
            .filter(|(key, _)| matches!(*key, "ok" | "err"))
            .ok_or_else(|| mismatch(r#"{"ok": value} or {"err": error}"#, json))?;
        let ty = if key == "ok" { ok } else { err };
        let value = self
            .value(ty, payload, depth)
            .map_err(|error| error.within(Segment::Name(key.to_owned())))?;
        Ok(Value::Result(if key == "ok" {
            Ok(Box::new(value))
        } else {
            Err(Box::new(value))
        }))
    }

    /// The members of a product (a struct's fields, or an entry point's parameters), from an
    /// array in order or, when every member has a name, from an object keyed by name.
    fn product(
        &self,
        members: &[Member<'_>],
        noun: &str,
        expected: impl Fn() -> String,
        json: &Json,
        depth: usize,
    ) -> Result<Vec<Value>, JsonError> {
        let depth = deeper(depth)?;
        let convert = |index: usize, member: &Member<'_>, item: &Json| {
            self.value(member.ty, item, depth)
                .map_err(|error| error.within(member.segment(index)))
        };
        let named = members.iter().all(|member| member.name.is_some());
        match json {
            Json::Array(items) if items.len() == members.len() => members
                .iter()
                .zip(items)
                .enumerate()
                .map(|(index, (member, item))| convert(index, member, item))
                .collect(),
            Json::Array(items) if named => Err(JsonError::new(format!(
                "expected {} ({}), found {}",
                items_phrase("an array of", members.len()),
                member_list(members),
                items_phrase("an array of", items.len()),
            ))),
            Json::Object(map) if named => {
                if let Some(unknown) = map.keys().find(|key| {
                    !members
                        .iter()
                        .any(|member| member.name == Some(key.as_str()))
                }) {
                    return Err(JsonError::new(format!(
                        "unknown {noun} `{unknown}` (expected {})",
                        member_list(members)
                    )));
                }
                members
                    .iter()
                    .enumerate()
                    .map(|(index, member)| {
                        let name = member.name.unwrap_or_default();
                        let item = map
                            .get(name)
                            .ok_or_else(|| JsonError::new(format!("missing {noun} `{name}`")))?;
                        convert(index, member, item)
                    })
                    .collect()
            }
            _ => Err(mismatch(expected(), json)),
        }
    }

    fn sum(
        &self,
        variants: &[Field],
        name: Option<&str>,
        json: &Json,
        depth: usize,
    ) -> Result<Value, JsonError> {
        let names = || {
            let names: Vec<Cow<'_, str>> = variants
                .iter()
                .enumerate()
                .map(|(index, variant)| variant_name(index, variant))
                .collect();
            name_list(names.iter().map(|name| name.as_ref()))
        };
        let find = |wanted: &str| -> Result<(u8, &Field), JsonError> {
            let (index, variant) = variants
                .iter()
                .enumerate()
                .find(|(index, variant)| variant_name(*index, variant) == wanted)
                .ok_or_else(|| {
                    JsonError::new(format!(
                        "unknown variant `{wanted}` (expected one of {})",
                        names()
                    ))
                })?;
            let tag = u8::try_from(index).map_err(|_| {
                JsonError::new(format!(
                    "variant `{wanted}` is at position {index}, past the 256 a tag can select"
                ))
            })?;
            Ok((tag, variant))
        };
        let (tag, payload) = match json {
            Json::String(wanted) => {
                let (tag, variant) = find(wanted)?;
                if !is_unit(self.typespace, &variant.ty) {
                    return Err(JsonError::new(format!(
                        "variant `{wanted}` has a payload: write {{\"{wanted}\": ...}}"
                    )));
                }
                (tag, Value::Product(Vec::new()))
            }
            _ => match single_entry(json) {
                Some((wanted, payload)) => {
                    let (tag, variant) = find(wanted)?;
                    let value = self
                        .value(&variant.ty, payload, depth)
                        .map_err(|error| error.within(Segment::Name(wanted.to_owned())))?;
                    (tag, value)
                }
                None => {
                    let what = name.map_or_else(|| "a variant".to_owned(), |n| format!("`{n}`"));
                    return Err(mismatch(
                        format!(
                            "{what} (one of {}: a variant's name, or an object with a variant's name as its only key)",
                            names()
                        ),
                        json,
                    ));
                }
            },
        };
        Ok(Value::Sum {
            tag,
            value: Box::new(payload),
        })
    }
}

/// What a product's JSON should look like, for messages.
fn product_expectation(name: Option<&str>, members: &[Member<'_>]) -> String {
    let shape = if !members.is_empty() && members.iter().all(|member| member.name.is_some()) {
        format!("an object with fields {}", member_list(members))
    } else {
        items_phrase("an array of", members.len())
    };
    match name {
        Some(name) => format!("`{name}` ({shape})"),
        None => shape,
    }
}

/// The only entry of an object with exactly one.
fn single_entry(json: &Json) -> Option<(&str, &Json)> {
    match json {
        Json::Object(map) if map.len() == 1 => map.iter().next().map(|(k, v)| (k.as_str(), v)),
        _ => None,
    }
}

/// An integer type of the encoding.
trait Integer: Copy + TryFrom<u128> + TryFrom<i128> {
    /// What a value of the type is, for messages: its name and range, written out rather
    /// than formatted from `MIN` and `MAX` (which would link the formatting of every width,
    /// 128 bits' included, into the browser client for one message).
    const EXPECTED: &'static str;
    /// 64 and 128 bits: also read from decimal strings, since JSON numbers beyond 2^53 are not
    /// exact in many readers.
    const WIDE: bool;
}

macro_rules! impl_integer {
    ($($ty:ident: $range:literal),* $(,)?) => {$(
        impl Integer for $ty {
            const EXPECTED: &'static str = concat!(stringify!($ty), " (", $range, ")");
            const WIDE: bool = false;
        }
    )*};
    (wide $($ty:ident: $range:literal),* $(,)?) => {$(
        impl Integer for $ty {
            const EXPECTED: &'static str =
                concat!(stringify!($ty), " (", $range, ", as a number or a decimal string)");
            const WIDE: bool = true;
        }
    )*};
}

impl_integer!(
    i8: "-128..=127", u8: "0..=255", i16: "-32768..=32767", u16: "0..=65535",
    i32: "-2147483648..=2147483647", u32: "0..=4294967295",
);
impl_integer!(wide
    i64: "-9223372036854775808..=9223372036854775807",
    u64: "0..=18446744073709551615",
    i128: "-170141183460469231731687303715884105728..=170141183460469231731687303715884105727",
    u128: "0..=340282366920938463463374607431768211455",
);

/// An integer read from JSON, before its range is checked.
enum Whole {
    NonNegative(u128),
    Negative(i128),
}

fn integer<T: Integer>(json: &Json) -> Result<T, JsonError> {
    whole(json, T::WIDE)
        .and_then(|whole| match whole {
            Whole::NonNegative(value) => T::try_from(value).ok(),
            Whole::Negative(value) => T::try_from(value).ok(),
        })
        .ok_or_else(|| integer_mismatch(T::EXPECTED, T::WIDE, json))
}

/// `json` as a whole number (from a decimal string too if `wide`), its range not checked.
/// Kept out of [`integer`], which is generic, so that its ten copies stay small.
fn whole(json: &Json, wide: bool) -> Option<Whole> {
    match json {
        Json::Number(number) => whole_number(number),
        Json::String(text) if wide => text
            .parse::<u128>()
            .map(Whole::NonNegative)
            .or_else(|_| text.parse::<i128>().map(Whole::Negative))
            .ok(),
        _ => None,
    }
}

/// The error for `json` where an integer, `expected`, was.
fn integer_mismatch(expected: &str, wide: bool, json: &Json) -> JsonError {
    let error = mismatch(expected, json);
    if wide && is_inexact_integer(json) {
        error.noted(" (a JSON number this large is not exact: send it as a decimal string)")
    } else {
        error
    }
}

/// A JSON number as an integer, if it is one exactly.
fn whole_number(number: &Number) -> Option<Whole> {
    if let Some(value) = number.as_u64() {
        return Some(Whole::NonNegative(value.into()));
    }
    if let Some(value) = number.as_i64() {
        return Some(Whole::Negative(value.into()));
    }
    let value = number.as_f64()?;
    // Integral floats are exact up to 2^53; past that `1e30` names many integers.
    if value.fract() != 0.0 || value.abs() > MAX_SAFE_INTEGER as f64 {
        return None;
    }
    Some(if value >= 0.0 {
        Whole::NonNegative(value as u128)
    } else {
        Whole::Negative(value as i128)
    })
}

/// Whether `json` is an integral number too large to have been parsed exactly.
fn is_inexact_integer(json: &Json) -> bool {
    json.as_f64()
        .is_some_and(|value| value.fract() == 0.0 && value.abs() > MAX_SAFE_INTEGER as f64)
        && json.as_u64().is_none()
        && json.as_i64().is_none()
}

/// A float: a number, or one of the names of the values JSON cannot write.
fn float(name: &str, json: &Json) -> Result<f64, JsonError> {
    let value = match json {
        Json::Number(number) => number.as_f64(),
        Json::String(text) => match text.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    };
    value.ok_or_else(|| {
        mismatch(
            format!(r#"{name} (a number, "NaN", "Infinity" or "-Infinity")"#),
            json,
        )
    })
}

fn f32_from_json(json: &Json) -> Result<f32, JsonError> {
    let wide = float("f32", json)?;
    let narrow = wide as f32;
    if wide.is_finite() && narrow.is_infinite() {
        // `f32::MAX` as `{:e}` writes it, spelt out: formatting it would bring core's
        // float formatting into the browser client for one message.
        return Err(mismatch("f32 (at most 3.4028235e38 in magnitude)", json));
    }
    Ok(narrow)
}

fn timestamp(json: &Json) -> Result<Timestamp, JsonError> {
    let micros = match json {
        Json::String(text) => parse_rfc3339(text),
        _ => None,
    };
    micros
        .map(Ok)
        .unwrap_or_else(|| integer::<i64>(json))
        .map(Timestamp::from_micros_since_unix_epoch)
        .map_err(|_| {
            mismatch(
                r#"a timestamp (microseconds since the Unix epoch, or an RFC 3339 date-time such as "2024-05-01T12:30:00Z")"#,
                json,
            )
        })
}

/// Microseconds since the Unix epoch of an RFC 3339 date-time,
/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`. Digits past microseconds are dropped; a leap
/// second (`:60`) is refused, since the timestamp cannot represent it.
fn parse_rfc3339(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    let number = |start: usize, len: usize| -> Option<i64> {
        let digits = bytes.get(start..start + len)?;
        digits.iter().try_fold(0i64, |value, digit| {
            digit
                .is_ascii_digit()
                .then(|| value * 10 + i64::from(digit - b'0'))
        })
    };
    let is = |index: usize, expected: &[u8]| bytes.get(index).is_some_and(|b| expected.contains(b));
    let separators = is(4, b"-") && is(7, b"-") && is(10, b"Tt ") && is(13, b":") && is(16, b":");
    if !separators {
        return None;
    }
    let (year, month, day) = (number(0, 4)?, number(5, 2)?, number(8, 2)?);
    let (hour, minute, second) = (number(11, 2)?, number(14, 2)?, number(17, 2)?);
    let mut rest = text.get(19..)?;
    let mut fraction_micros = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        fraction_micros = fraction
            .get(..digits)?
            .bytes()
            .chain(std::iter::repeat(b'0'))
            .take(6)
            .fold(0, |value, digit| value * 10 + i64::from(digit - b'0'));
        rest = fraction.get(digits..)?;
    }
    let offset_seconds = match rest.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let two = |a: u8, b: u8| {
                (a.is_ascii_digit() && b.is_ascii_digit())
                    .then(|| i64::from(a - b'0') * 10 + i64::from(b - b'0'))
            };
            let (hours, minutes) = (two(*h1, *h2)?, two(*m1, *m2)?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            let offset = hours * 3600 + minutes * 60;
            if *sign == b'-' {
                -offset
            } else {
                offset
            }
        }
        _ => return None,
    };
    let valid = (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hour <= 23
        && minute <= 59
        && second <= 59;
    if !valid {
        return None;
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        - offset_seconds;
    Some(seconds * 1_000_000 + fraction_micros)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given date of the proleptic Gregorian calendar (Howard
/// Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}
