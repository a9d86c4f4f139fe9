//! Identities and the tokens that prove them.
//!
//! A client proves who it is with a token (`Authorization: Bearer <token>`, or the WebSocket's
//! `token` parameter) of one of two kinds, told apart by their shape:
//!
//! - **a token this server signed** ([`Tokens`], `wm1.…`): `POST /v1/identity` (or a
//!   WebSocket connection without a token) makes a new random identity and signs a token for
//!   it with the server's [`Secret`](crate::Secret). It carries no claims.
//! - **an OpenID Connect token** ([`oidc`], a JWT `header.payload.signature`) from an issuer
//!   the server accepts ([`OidcSettings`]): verified with the issuer's published keys; its
//!   identity is derived from its `iss` and `sub` ([`oidc_identity`]), the same on every
//!   server, and its verified payload (the claims) reaches the module.
//!
//! [`Authenticator::verify`] takes either and answers what it proves ([`Verified`]). A token
//! longer than [`MAX_TOKEN_BYTES`] is refused before anything else is done with it.

mod signed;

pub mod oidc;

pub use oidc::{oidc_identity, OidcIssuer, OidcSettings};
pub use signed::{Issued, Tokens};

use crate::error::{ApiError, ErrorCode};
use oidc::Oidc;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use wasmod_abi::Identity;
use wasmod_node::Claims;

/// The longest token accepted, in bytes: an ID token of a real provider is 1 to 4 KiB; a
/// longer one is refused as `invalid_token` before it is decoded.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// What a token proves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// The identity the token's bearer acts as.
    pub identity: Identity,
    /// The token's verified payload, a JSON object, for an OpenID Connect token; `None` for a
    /// token this server signed.
    pub claims: Option<Claims>,
}

/// Checks the tokens of both kinds.
#[derive(Clone, Debug)]
pub struct Authenticator {
    tokens: Tokens,
    oidc: Option<Arc<Oidc>>,
}

impl Authenticator {
    /// Checks the tokens that `tokens` signs and, if `oidc` names issuers, theirs; `Err`
    /// says why `oidc` cannot be used ([`OidcSettings::check`]).
    ///
    /// Starts fetching each issuer's keys in the background when called in a Tokio runtime:
    /// the first token of an issuer does not wait for them if they came by then.
    pub fn new(tokens: Tokens, oidc: Option<OidcSettings>) -> Result<Self, String> {
        let oidc = match oidc {
            Some(settings) => Some(Arc::new(Oidc::new(settings)?)),
            None => None,
        };
        if let Some(oidc) = &oidc {
            oidc.prefetch();
        }
        Ok(Self { tokens, oidc })
    }

    /// The tokens this server signs.
    pub fn tokens(&self) -> &Tokens {
        &self.tokens
    }

    /// What `token` proves: `invalid_token` if it is not a token of either kind, is too long,
    /// or does not verify; `token_expired` if it did but has expired.
    pub async fn verify(&self, token: &str) -> Result<Verified, ApiError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(ApiError::new(
                ErrorCode::InvalidToken,
                format!(
                    "the token is {} bytes, more than the {MAX_TOKEN_BYTES} this server accepts",
                    token.len()
                ),
            ));
        }
        if !oidc::looks_like_jwt(token) {
            let identity = self.tokens.verify(token)?;
            return Ok(Verified {
                identity,
                claims: None,
            });
        }
        let Some(oidc) = &self.oidc else {
            return Err(ApiError::new(
                ErrorCode::InvalidToken,
                "the token is a JWT, and this server accepts no OpenID Connect issuer: use a token \
                 of POST /v1/identity, or start the server with --oidc-issuer",
            ));
        };
        oidc.verify(token).await
    }
}

/// The token of an `Authorization` header value: `Bearer <token>` (the scheme in any case).
pub fn bearer(header: &[u8]) -> Result<&str, ApiError> {
    let malformed = || {
        ApiError::new(
            ErrorCode::InvalidToken,
            "the Authorization header must be `Bearer <token>`",
        )
    };
    let text = std::str::from_utf8(header).map_err(|_| malformed())?;
    let (scheme, token) = text.trim().split_once(' ').ok_or_else(malformed)?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(malformed());
    }
    Ok(token.trim())
}

/// Seconds since the Unix epoch (0 for a clock before it).
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Secret;
    use std::time::Duration;

    fn authenticator() -> Authenticator {
        Authenticator::new(
            Tokens::new(Secret::from_bytes([7; 32]), Duration::from_secs(60)),
            None,
        )
        .expect("no issuers to check")
    }

    #[test]
    fn bearer_headers_are_parsed_strictly() {
        assert_eq!(bearer(b"Bearer abc"), Ok("abc"));
        assert_eq!(bearer(b"bearer  abc "), Ok("abc"));
        for bad in [
            &b"Basic abc"[..],
            b"Bearer",
            b"Bearer  ",
            b"abc",
            b"\xff\xfe",
        ] {
            assert!(bearer(bad).is_err(), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn a_signed_token_proves_its_identity_without_claims() {
        let authenticator = authenticator();
        let identity = Identity::from_bytes([0xa1; 32]);
        let token = authenticator.tokens().issue(identity).token;
        assert_eq!(
            authenticator.verify(&token).await,
            Ok(Verified {
                identity,
                claims: None
            })
        );
    }

    #[tokio::test]
    async fn a_jwt_without_issuers_and_an_overlong_token_are_refused_with_why() {
        let authenticator = authenticator();
        let jwt = authenticator
            .verify("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")
            .await
            .expect_err("no issuer is accepted");
        assert_eq!(jwt.code, ErrorCode::InvalidToken);
        assert!(jwt.message.contains("--oidc-issuer"), "{}", jwt.message);
        let long = "a".repeat(MAX_TOKEN_BYTES + 1);
        let refused = authenticator.verify(&long).await.expect_err("too long");
        assert_eq!(refused.code, ErrorCode::InvalidToken);
        assert!(refused.message.contains("16384"), "{}", refused.message);
    }
}
