//! The operator's token: what opens the admin console (`/admin`) and the admin API
//! (`/v1/admin/*`).
//!
//! The operator is not an identity of the module: the admin API reads private tables and the
//! module's logs, which no client token may. So the operator has a token of its own, given
//! to the server at start (`wasmod serve --operator-token`, or `WASMOD_OPERATOR_TOKEN`) or made
//! up by it and printed once. A request presents it as `Authorization: Bearer <token>` or,
//! for the console's page and its live log feed (a browser sends no header on a navigation),
//! as the cookie `wasmod_operator=<token>` that the console's sign-in sets.
//!
//! The check is in constant time: the token presented and the operator's are each hashed
//! (SHA-256) and the digests compared without an early exit, so neither the time taken nor
//! the length of what was sent tells how much of it was right.

use crate::error::{ApiError, ErrorCode};
use sha2::{Digest, Sha256};
use std::fmt;

/// The shortest token the operator may choose.
pub const MIN_TOKEN_CHARS: usize = 16;

/// The name of the cookie that carries the token for the console.
pub const COOKIE: &str = "wasmod_operator";

/// The operator's token. Its `Debug` does not show it.
#[derive(Clone)]
pub struct OperatorToken {
    text: String,
    digest: [u8; 32],
}

impl OperatorToken {
    /// A new random token (32 random bytes, in hex), for a server started without one.
    pub fn generate() -> std::io::Result<Self> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
        Ok(Self::from_text(hex::encode(bytes)))
    }

    /// The token `text`, chosen by the operator: at least [`MIN_TOKEN_CHARS`] characters,
    /// printable ASCII without spaces or the characters a cookie cannot hold (it goes in a
    /// header and a cookie).
    pub fn new(text: &str) -> Result<Self, String> {
        if text.chars().count() < MIN_TOKEN_CHARS {
            return Err(format!(
                "the operator token must have at least {MIN_TOKEN_CHARS} characters"
            ));
        }
        if !text
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b";,\\\"".contains(&b))
        {
            return Err(
                "the operator token must be printable ASCII, without spaces, `;`, `,`, `\\` or `\"`"
                    .into(),
            );
        }
        Ok(Self::from_text(text.to_owned()))
    }

    fn from_text(text: String) -> Self {
        let digest = Sha256::digest(text.as_bytes()).into();
        Self { text, digest }
    }

    /// The token, to print for the operator.
    pub fn reveal(&self) -> &str {
        &self.text
    }

    /// Whether `presented` is the token, in time that does not depend on how much of it is.
    pub fn matches(&self, presented: &[u8]) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented).into();
        let difference = digest
            .iter()
            .zip(&self.digest)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        std::hint::black_box(difference) == 0
    }

    /// Checks a request's credential: `unauthenticated` (401) if there is none,
    /// `not_operator` (403) if it is not this token.
    pub fn check(&self, presented: Option<&[u8]>) -> Result<(), ApiError> {
        let Some(presented) = presented else {
            return Err(ApiError::new(
                ErrorCode::Unauthenticated,
                "the admin API is the operator's: send `Authorization: Bearer <operator token>` \
                 (`wasmod serve` prints it at start)",
            ));
        };
        if self.matches(presented) {
            Ok(())
        } else {
            Err(ApiError::new(
                ErrorCode::NotOperator,
                "that is not the operator token",
            ))
        }
    }
}

impl fmt::Debug for OperatorToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OperatorToken(…)")
    }
}

/// The credential of a request: the bearer token of its `Authorization` header, else the
/// value of its operator cookie.
pub fn credential(headers: &axum::http::HeaderMap) -> Option<&[u8]> {
    use axum::http::header::{AUTHORIZATION, COOKIE as COOKIE_HEADER};
    if let Some(header) = headers.get(AUTHORIZATION) {
        let bytes = header.as_bytes();
        return Some(bytes.strip_prefix(b"Bearer ").unwrap_or(bytes));
    }
    headers
        .get_all(COOKIE_HEADER)
        .iter()
        .flat_map(|header| header.as_bytes().split(|&b| b == b';'))
        .map(<[u8]>::trim_ascii)
        .find_map(|pair| pair.strip_prefix(COOKIE.as_bytes())?.strip_prefix(b"="))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, HeaderValue};

    #[test]
    fn only_the_token_matches() {
        let token = OperatorToken::new("correct-horse-battery").unwrap();
        assert!(token.matches(b"correct-horse-battery"));
        for wrong in [
            &b""[..],
            b"correct-horse-batter",
            b"correct-horse-batteryX",
            b"x",
        ] {
            assert!(!token.matches(wrong));
        }
        assert_eq!(
            token.check(None).unwrap_err().code,
            ErrorCode::Unauthenticated
        );
        assert_eq!(
            token.check(Some(b"nope")).unwrap_err().code,
            ErrorCode::NotOperator
        );
        assert!(token.check(Some(b"correct-horse-battery")).is_ok());
        assert!(!format!("{token:?}").contains("horse"));
    }

    #[test]
    fn chosen_tokens_must_be_long_and_plain_and_generated_ones_differ() {
        assert!(OperatorToken::new("short").is_err());
        assert!(OperatorToken::new("has a space in it!").is_err());
        assert!(OperatorToken::new("semi;colon-not-allowed").is_err());
        let one = OperatorToken::generate().unwrap();
        let two = OperatorToken::generate().unwrap();
        assert_eq!(one.reveal().len(), 64);
        assert_ne!(one.reveal(), two.reveal());
    }

    #[test]
    fn the_credential_is_the_bearer_token_or_the_cookie() {
        let mut headers = HeaderMap::new();
        assert_eq!(credential(&headers), None);
        headers.insert(
            "cookie",
            HeaderValue::from_static("theme=dark; wasmod_operator=abc; x=y"),
        );
        assert_eq!(credential(&headers), Some(&b"abc"[..]));
        headers.insert("authorization", HeaderValue::from_static("Bearer def"));
        assert_eq!(credential(&headers), Some(&b"def"[..]));
    }
}
