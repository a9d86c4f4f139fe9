//! Percent-decoding of captured path segments, and query strings read as HTML forms send
//! them (`a=1&b=two+words`), without `core::fmt`.

/// `text` with each `%XX` replaced by the byte it stands for; `None` if an escape is
/// malformed or the bytes are not UTF-8.
pub fn percent_decode(text: &str) -> Option<String> {
    decode(text, false)
}

/// The first value of `key` in the query string `query` (without its `?`): pairs separated by
/// `&`, `+` standing for a space, names and values percent-decoded. A key without `=` has the
/// empty value. `None` if `key` is not there (or its value does not decode).
pub fn query_value(query: &str, key: &str) -> Option<String> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
        .find(|(name, _)| decode(name, true).as_deref() == Some(key))
        .and_then(|(_, value)| decode(value, true))
}

fn decode(text: &str, plus_is_space: bool) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        match byte {
            b'%' => {
                let high = hex_digit(*bytes.get(index + 1)?)?;
                let low = hex_digit(*bytes.get(index + 2)?)?;
                out.push(high << 4 | low);
                index += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                index += 1;
            }
            other => {
                out.push(other);
                index += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

fn hex_digit(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}
