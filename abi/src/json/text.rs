//! JSON's scalars: strings, integers and floats, written as `serde_json` writes them.
//!
//! `serde_json` escapes `"`, `\` and the control characters (U+0000 to U+001F: `\b`, `\t`,
//! `\n`, `\f` and `\r` by their short forms, the others as `\u00xx` in lower-case hex) and
//! writes everything else as it is; it writes integers in decimal ([`itoa`]) and finite
//! floats in their shortest form that reads back the same ([`zmij`]: `1.0` and `1e+21` rather
//! than `1` and `1000000000000000000000`). These functions do the same with the same crates, so
//! JSON from a module and JSON from the host agree byte for byte; the tests below compare them
//! with `serde_json`, so a change of its formatting shows.

/// Appends `text` as a JSON string.
pub(super) fn string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut plain = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            0x00..=0x1f => &[],
            _ => continue,
        };
        out.extend_from_slice(&bytes[plain..index]);
        plain = index + 1;
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
        } else {
            out.extend_from_slice(escape);
        }
    }
    out.extend_from_slice(&bytes[plain..]);
    out.push(b'"');
}

/// Appends an integer in decimal.
pub(super) fn integer(out: &mut Vec<u8>, value: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Appends an integer in decimal, between quotes.
pub(super) fn quoted_integer(out: &mut Vec<u8>, value: impl itoa::Integer) {
    out.push(b'"');
    integer(out, value);
    out.push(b'"');
}

/// Appends a finite float in its shortest form that reads back as the same `f64`.
pub(super) fn finite_float(out: &mut Vec<u8>, value: f64) {
    out.extend_from_slice(zmij::Buffer::new().format_finite(value).as_bytes());
}

/// Appends a finite `f32` as [`finite_float`] appends the `f64` of its shortest decimal form
/// (the shortest that reads back as the same `f32`): `0.1` for `0.1f32`, whose `f64` is
/// `0.10000000149011612`.
///
/// [`zmij`] finds the digits, but lays an `f32` out with other bounds than an `f64` (`1e13`
/// rather than `10000000000000.0`, `0.000001` rather than `1e-6`), so they are laid out again
/// here as for an `f64`. That takes no float arithmetic: the shortest `f32` decimal has at
/// most 9 digits, so the `f64` nearest to it writes back as the same digits. (Going through
/// `f32`'s `Display` and `f64`'s `FromStr` instead would bring core's float formatting and
/// parsing into the browser client.)
pub(super) fn finite_f32(out: &mut Vec<u8>, value: f32) {
    let mut buffer = zmij::Buffer::new();
    let text = buffer.format_finite(value).as_bytes();
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (mantissa, exponent) = match text.iter().position(|&byte| byte == b'e') {
        Some(at) => (&text[..at], exponent_of(&text[at + 1..])),
        None => (text, 0),
    };
    let point = mantissa
        .iter()
        .position(|&byte| byte == b'.')
        .unwrap_or(mantissa.len());
    let significant = |byte: &u8| byte.is_ascii_digit() && *byte != b'0';
    let (Some(first), Some(last)) = (
        mantissa.iter().position(significant),
        mantissa.iter().rposition(significant),
    ) else {
        out.extend_from_slice(if negative { b"-0.0" } else { b"0.0" });
        return;
    };
    // The power of ten of the first significant digit, and the digits from it to the last.
    let power = if first < point {
        exponent + (point - first - 1) as i32
    } else {
        exponent - (first - point) as i32
    };
    let digits: Vec<u8> = mantissa[first..=last]
        .iter()
        .copied()
        .filter(u8::is_ascii_digit)
        .collect();
    if negative {
        out.push(b'-');
    }
    let count = digits.len() as i32;
    // zmij's layout of an `f64`: positional for powers -5 to 15, exponential beyond.
    if (-5..=15).contains(&power) {
        if power >= count - 1 {
            out.extend_from_slice(&digits);
            out.extend((0..power + 1 - count).map(|_| b'0'));
            out.extend_from_slice(b".0");
        } else if power >= 0 {
            let (whole, fraction) = digits.split_at(power as usize + 1);
            out.extend_from_slice(whole);
            out.push(b'.');
            out.extend_from_slice(fraction);
        } else {
            out.extend_from_slice(b"0.");
            out.extend((0..-power - 1).map(|_| b'0'));
            out.extend_from_slice(&digits);
        }
    } else {
        let (lead, rest) = digits.split_at(1);
        out.extend_from_slice(lead);
        if !rest.is_empty() {
            out.push(b'.');
            out.extend_from_slice(rest);
        }
        out.extend_from_slice(if power < 0 { b"e-" } else { b"e+" });
        integer(out, power.unsigned_abs());
    }
}

/// The value of an exponent as zmij writes it (`+21`, `-7`, `13`).
fn exponent_of(text: &[u8]) -> i32 {
    let (sign, digits) = match text.split_first() {
        Some((b'-', rest)) => (-1, rest),
        Some((b'+', rest)) => (1, rest),
        _ => (1, text),
    };
    sign * digits
        .iter()
        .fold(0, |value, digit| value * 10 + i32::from(digit - b'0'))
}

#[cfg(test)]
mod tests {
    use super::{finite_f32, finite_float, integer, string};

    fn written(write: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        write(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut every_ascii: String = (0u8..128).map(char::from).collect();
        every_ascii.push_str("é ✓ 𝄞 \u{2028}");
        for text in ["", "plain", "a\"b\\c", "\u{0}\u{1f}\u{7f}", &every_ascii] {
            assert_eq!(
                written(|out| string(out, text)),
                serde_json::to_string(text).unwrap()
            );
        }
    }

    #[test]
    fn numbers_are_written_as_serde_json_writes_them() {
        for value in [0i128, 1, -1, i128::MAX, i128::MIN, u64::MAX.into()] {
            assert_eq!(
                written(|out| integer(out, value)),
                serde_json::to_string(&value).unwrap()
            );
        }
        let floats = [
            0.0,
            -0.0,
            1.0,
            0.1,
            1e21,
            1e-7,
            123456.789,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
        ];
        for value in floats {
            assert_eq!(
                written(|out| finite_float(out, value)),
                serde_json::to_string(&value).unwrap()
            );
        }
    }

    #[test]
    fn an_f32_is_written_as_the_f64_of_its_shortest_decimal() {
        let mut values: Vec<f32> = (0..=u32::MAX).step_by(40_009).map(f32::from_bits).collect();
        for power in -45..=38 {
            for mantissa in [1.0f32, 1.5, 9.999_999, 1.234_567_9, 3.0] {
                let value = format!("{mantissa}e{power}").parse::<f32>().unwrap();
                values.extend([value, -value]);
            }
        }
        values.extend([
            0.0,
            -0.0,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            f32::EPSILON,
            f32::from_bits(1),
            16_777_216.0,
            1e15,
            1e16,
            123_456_790_000.0,
        ]);
        let significant_digits = |text: &str| {
            let mantissa = text.split(['e', 'E']).next().unwrap();
            let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
            digits.trim_matches('0').len().max(1)
        };
        for value in values.into_iter().filter(|value| value.is_finite()) {
            let text = written(|out| finite_f32(out, value));
            let wide: f64 = text.parse().unwrap();
            let context = format!("{value:e} ({:#x}) written {text}", value.to_bits());
            // It reads back as the same f32 ...
            assert_eq!((wide as f32).to_bits(), value.to_bits(), "{context}");
            // ... laid out as its f64 is ...
            assert_eq!(written(|out| finite_float(out, wide)), text, "{context}");
            // ... with as few digits as core's shortest form (which breaks ties upwards
            // where zmij breaks them to even: 2017.7813 against 2017.7812).
            assert_eq!(
                significant_digits(&text),
                significant_digits(&value.to_string()),
                "{context}"
            );
        }
    }
}
