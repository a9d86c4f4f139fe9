//! Reading a JWT's header and payload without verifying it: what a test needs to check the
//! claims the provider wrote. Verification is the server's job (`server/src/auth/`), tested
//! there against this provider's JWKS.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::Value;
use std::io;

/// The header of the compact JWT `token` (its first part) as JSON: `alg`, `kid`, `typ`.
///
/// # Errors
///
/// If `token` is not three dot-separated parts whose first is base64url of a JSON object.
pub fn header(token: &str) -> io::Result<Value> {
    part(token, 0, "header")
}

/// The claims of the compact JWT `token` (its second part) as JSON: `iss`, `sub`, `aud`,
/// `exp`, `name`…, not verified.
///
/// # Errors
///
/// If `token` is not three dot-separated parts whose second is base64url of a JSON object.
pub fn claims(token: &str) -> io::Result<Value> {
    part(token, 1, "claims")
}

fn part(token: &str, index: usize, what: &str) -> io::Result<Value> {
    let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidData, why);
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 {
        return Err(invalid(format!(
            "a compact JWT has 3 parts, this one {}",
            parts.len()
        )));
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(parts[index])
        .map_err(|err| invalid(format!("the JWT's {what} is not base64url: {err}")))?;
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|err| invalid(format!("the JWT's {what} is not JSON: {err}")))?;
    if !value.is_object() {
        return Err(invalid(format!("the JWT's {what} is not a JSON object")));
    }
    Ok(value)
}

/// `bytes` in base64url without padding, as PKCE and JWTs write them.
pub(crate) fn base64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::{base64url, claims, header};

    #[test]
    fn the_parts_are_read_and_bad_tokens_refused() {
        let token = format!(
            "{}.{}.sig",
            base64url(br#"{"alg":"ES256"}"#),
            base64url(br#"{"sub":"alice","exp":5}"#)
        );
        assert_eq!(header(&token).unwrap()["alg"], "ES256");
        assert_eq!(claims(&token).unwrap()["sub"], "alice");
        assert_eq!(claims(&token).unwrap()["exp"], 5);

        let message = |token: &str| claims(token).unwrap_err().to_string();
        assert!(message("a.b").contains("3 parts"), "{}", message("a.b"));
        assert!(message("a.!!.c").contains("not base64url"));
        assert!(message(&format!("a.{}.c", base64url(b"{"))).contains("not JSON"));
        assert!(message(&format!("a.{}.c", base64url(b"[1]"))).contains("not a JSON object"));
    }
}
