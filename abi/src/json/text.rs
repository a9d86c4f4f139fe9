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

#[cfg(test)]
mod tests {
    use super::{finite_float, integer, string};

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
}
