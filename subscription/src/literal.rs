//! Turning a literal as written into the encoding of a value of its column's type.
//!
//! Literals are kept encoded (`docs/abi.md`), so that evaluating a comparison compares bytes
//! with bytes and never decodes a row. A literal that is not a value of the column's type is
//! refused here, with the problem in words: out of range, the wrong kind of literal, the
//! wrong number of hex digits.

use crate::column::Scalar;
use crate::plan::Operand;
use crate::sql::Literal;

/// The encoding of `literal` as a value of kind `scalar`, or what is wrong with it.
pub(crate) fn encode(scalar: Scalar, literal: &Literal) -> Result<Operand, String> {
    let bytes = match (scalar, literal) {
        (_, Literal::Sender) if scalar == Scalar::Identity => return Ok(Operand::Sender),
        (_, Literal::Sender) => {
            return Err("`:sender` is an Identity, which this column cannot hold".to_owned())
        }
        (Scalar::Bool, Literal::Bool(value)) => vec![u8::from(*value)],
        (Scalar::Unsigned(width), Literal::Number(text)) => unsigned(text, width)?,
        (Scalar::Signed(width), Literal::Number(text)) => signed(text, width)?,
        (Scalar::Float(width), Literal::Number(text)) => float(text, width)?,
        (Scalar::Identity, Literal::Hex(digits)) => hex(digits, 32)?,
        (Scalar::ConnectionId, Literal::Hex(digits)) => hex(digits, 16)?,
        (Scalar::String, Literal::String(text)) => {
            let len = u32::try_from(text.len()).map_err(|_| "the string is too long".to_owned())?;
            let mut bytes = len.to_le_bytes().to_vec();
            bytes.extend_from_slice(text.as_bytes());
            bytes
        }
        (scalar, literal) => {
            return Err(format!(
                "expected {}, found {}",
                expected(scalar),
                describe(literal)
            ))
        }
    };
    Ok(Operand::Value(bytes.into_boxed_slice()))
}

/// What literal a column of kind `scalar` takes, in words.
fn expected(scalar: Scalar) -> &'static str {
    match scalar {
        Scalar::Bool => "`true` or `false`",
        Scalar::Unsigned(_) | Scalar::Signed(_) => "an integer",
        Scalar::Float(_) => "a number",
        Scalar::Identity => "64 hex digits (`0x…` or `X'…'`) or `:sender`",
        Scalar::ConnectionId => "32 hex digits (`0x…` or `X'…'`)",
        Scalar::String => "a string in single quotes",
    }
}

/// A literal, for messages.
fn describe(literal: &Literal) -> String {
    match literal {
        Literal::Number(text) => format!("the number {text}"),
        Literal::String(text) => format!("the string '{text}'"),
        Literal::Bool(value) => format!("`{value}`"),
        Literal::Hex(digits) => format!("the hex literal 0x{digits}"),
        Literal::Sender => "`:sender`".to_owned(),
    }
}

/// Why `text`, which does not parse as an integer of the width, is refused: it is not an
/// integer at all, or it is one outside `low..=high`.
fn not_an_integer(text: &str, low: impl std::fmt::Display, high: impl std::fmt::Display) -> String {
    if text.contains(['.', 'e', 'E']) {
        format!("expected an integer, found the number {text}")
    } else {
        format!("{text} is out of range ({low} to {high})")
    }
}

fn unsigned(text: &str, width: usize) -> Result<Vec<u8>, String> {
    let max = u128::MAX >> (128 - 8 * width as u32);
    match text.parse::<u128>() {
        Ok(value) if value <= max => Ok(value.to_le_bytes()[..width].to_vec()),
        _ => Err(not_an_integer(text, 0, max)),
    }
}

fn signed(text: &str, width: usize) -> Result<Vec<u8>, String> {
    let bits = 8 * width as u32;
    let (min, max) = (i128::MIN >> (128 - bits), i128::MAX >> (128 - bits));
    match text.parse::<i128>() {
        Ok(value) if (min..=max).contains(&value) => Ok(value.to_le_bytes()[..width].to_vec()),
        _ => Err(not_an_integer(text, min, max)),
    }
}

fn float(text: &str, width: usize) -> Result<Vec<u8>, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("{text} is not a number"))?;
    let bytes = if width == 4 {
        let narrow = value as f32;
        if !narrow.is_finite() {
            return Err(format!("{text} is out of range for an f32"));
        }
        narrow.to_le_bytes().to_vec()
    } else {
        if !value.is_finite() {
            return Err(format!("{text} is out of range for an f64"));
        }
        value.to_le_bytes().to_vec()
    };
    Ok(bytes)
}

/// `len` bytes from exactly `2 * len` hex digits, in the order written.
fn hex(digits: &str, len: usize) -> Result<Vec<u8>, String> {
    let wrong = || {
        format!(
            "expected {} hex digits ({len} bytes), found `{digits}`",
            2 * len
        )
    };
    if digits.len() != 2 * len || !digits.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return Err(wrong());
    }
    (0..len)
        .map(|at| u8::from_str_radix(&digits[2 * at..2 * at + 2], 16).map_err(|_| wrong()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(scalar: Scalar, literal: Literal) -> Result<Vec<u8>, String> {
        encode(scalar, &literal).map(|operand| match operand {
            Operand::Value(bytes) => bytes.into_vec(),
            Operand::Sender => Vec::new(),
        })
    }

    fn number(text: &str) -> Literal {
        Literal::Number(text.to_owned())
    }

    #[test]
    fn integers_are_range_checked_for_their_width() {
        assert_eq!(value(Scalar::Unsigned(1), number("255")), Ok(vec![255]));
        assert_eq!(
            value(Scalar::Unsigned(1), number("256")),
            Err("256 is out of range (0 to 255)".to_owned())
        );
        assert_eq!(
            value(Scalar::Unsigned(4), number("-1")),
            Err("-1 is out of range (0 to 4294967295)".to_owned())
        );
        assert_eq!(value(Scalar::Signed(2), number("-2")), Ok(vec![0xfe, 0xff]));
        assert_eq!(
            value(Scalar::Signed(1), number("-129")),
            Err("-129 is out of range (-128 to 127)".to_owned())
        );
        assert_eq!(
            value(Scalar::Unsigned(16), number(&u128::MAX.to_string())),
            Ok(vec![0xff; 16])
        );
        assert_eq!(
            value(Scalar::Unsigned(8), number("1.5")),
            Err("expected an integer, found the number 1.5".to_owned())
        );
        assert_eq!(
            value(
                Scalar::Signed(16),
                number("999999999999999999999999999999999999999999")
            ),
            Err(format!(
                "999999999999999999999999999999999999999999 is out of range ({} to {})",
                i128::MIN,
                i128::MAX
            ))
        );
    }

    #[test]
    fn each_kind_takes_its_own_literal() {
        assert_eq!(
            value(Scalar::Unsigned(8), Literal::String("7".into())),
            Err("expected an integer, found the string '7'".to_owned())
        );
        assert_eq!(
            value(Scalar::String, number("7")),
            Err("expected a string in single quotes, found the number 7".to_owned())
        );
        assert_eq!(
            value(Scalar::Bool, number("1")),
            Err("expected `true` or `false`, found the number 1".to_owned())
        );
        assert_eq!(
            value(Scalar::String, Literal::Sender),
            Err("`:sender` is an Identity, which this column cannot hold".to_owned())
        );
        assert_eq!(
            value(Scalar::String, Literal::String("ab".into())),
            Ok(vec![2, 0, 0, 0, b'a', b'b'])
        );
        assert_eq!(
            value(Scalar::Float(4), number("1.5")),
            Ok(1.5f32.to_le_bytes().to_vec())
        );
        assert_eq!(
            value(Scalar::Float(4), number("1e39")),
            Err("1e39 is out of range for an f32".to_owned())
        );
    }

    #[test]
    fn hex_literals_have_exactly_the_bytes() {
        let digits = "0a".repeat(16);
        assert_eq!(
            value(Scalar::ConnectionId, Literal::Hex(digits)),
            Ok(vec![10; 16])
        );
        assert_eq!(
            value(Scalar::Identity, Literal::Hex("abc".into())),
            Err("expected 64 hex digits (32 bytes), found `abc`".to_owned())
        );
        assert_eq!(
            value(Scalar::Identity, Literal::Hex("zz".repeat(32))),
            Err(format!(
                "expected 64 hex digits (32 bytes), found `{}`",
                "zz".repeat(32)
            ))
        );
    }
}
