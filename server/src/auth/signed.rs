//! The tokens this server signs itself.
//!
//! `POST /v1/identity` makes a new identity (32 bytes from the CSPRNG) and a token for it. A
//! token is `wm1.<identity: 64 hex>.<expiry: Unix seconds>.<signature: 64 hex>`, where the
//! signature is HMAC-SHA256, keyed with the server's [`Secret`], over everything before the
//! last dot. So the server keeps no table of tokens: any token it signed is valid until it
//! expires, across restarts, and nobody without the secret can make one. Signatures are
//! compared in constant time (`hmac`'s `verify_slice`).
//!
//! A token has one spelling: the signature's hex is lowercase, as the server writes it, and
//! any other case is `invalid_token`. Otherwise each token would have 2^64 spellings that all
//! prove it, which whatever keys on a token's text (a log, a cache, a list of revoked tokens)
//! would take for different tokens.
//!
//! The format is plain text rather than a JWT: the server is the only party that issues and
//! checks tokens, so the generality of JOSE (algorithm negotiation, its classic pitfalls) buys
//! nothing here. The `wm1` prefix leaves room for another format later.

use super::unix_now;
use crate::error::{ApiError, ErrorCode};
use crate::secret::Secret;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::time::Duration;
use wasmod_abi::Identity;

/// The version prefix of the tokens this server issues.
const PREFIX: &str = "wm1";

/// Issues and checks tokens with one secret.
#[derive(Clone, Debug)]
pub struct Tokens {
    secret: Secret,
    ttl: Duration,
}

/// A token just issued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issued {
    /// The identity it proves.
    pub identity: Identity,
    /// The token, for `Authorization: Bearer <token>`.
    pub token: String,
    /// When it expires, in seconds since the Unix epoch.
    pub expires_at: u64,
}

impl Tokens {
    /// Tokens signed with `secret`, valid for `ttl` after they are issued.
    pub fn new(secret: Secret, ttl: Duration) -> Self {
        Self { secret, ttl }
    }

    /// How long a token is valid.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// A token for `identity`, valid for the configured time from now.
    pub fn issue(&self, identity: Identity) -> Issued {
        let expires_at = unix_now().saturating_add(self.ttl.as_secs());
        Issued {
            identity,
            token: self.sign(identity, expires_at),
            expires_at,
        }
    }

    /// The token for `identity` expiring at `expires_at` (Unix seconds).
    pub fn sign(&self, identity: Identity, expires_at: u64) -> String {
        let claims = format!("{PREFIX}.{}.{expires_at}", identity.to_hex());
        let signature = hex::encode(self.mac(&claims).finalize().into_bytes());
        format!("{claims}.{signature}")
    }

    /// The identity `token` proves: `invalid_token` if it is malformed or not signed with this
    /// server's secret, `token_expired` if it was but has expired.
    pub fn verify(&self, token: &str) -> Result<Identity, ApiError> {
        self.verify_at(token, unix_now())
    }

    fn verify_at(&self, token: &str, now: u64) -> Result<Identity, ApiError> {
        let invalid =
            |why: &str| ApiError::new(ErrorCode::InvalidToken, format!("the token {why}"));
        let (claims, signature) = token
            .rsplit_once('.')
            .ok_or_else(|| invalid("is not a wasmod token"))?;
        let mut fields = claims.split('.');
        let (Some(PREFIX), Some(identity), Some(expires_at), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(invalid("is not a wasmod token"));
        };
        if !signature
            .bytes()
            .all(|digit| matches!(digit, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(invalid(
                "is not a wasmod token: its signature must be lowercase hex",
            ));
        }
        let mut signature_bytes = [0; 32];
        hex::decode_to_slice(signature, &mut signature_bytes)
            .map_err(|_| invalid("is not a wasmod token"))?;
        self.mac(claims)
            .verify_slice(&signature_bytes)
            .map_err(|_| invalid("was not issued by this server"))?;
        let identity =
            Identity::from_hex(identity).ok_or_else(|| invalid("is not a wasmod token"))?;
        let expires_at: u64 = expires_at
            .parse()
            .map_err(|_| invalid("is not a wasmod token"))?;
        if expires_at <= now {
            return Err(ApiError::new(
                ErrorCode::TokenExpired,
                "the token has expired: obtain a new identity with POST /v1/identity",
            ));
        }
        Ok(identity)
    }

    fn mac(&self, claims: &str) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(self.secret.as_bytes())
            .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
        mac.update(claims.as_bytes());
        mac
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALICE: Identity = Identity::from_bytes([0xa1; 32]);

    fn tokens(key: u8) -> Tokens {
        Tokens::new(Secret::from_bytes([key; 32]), Duration::from_secs(60))
    }

    #[test]
    fn an_issued_token_proves_its_identity() {
        let issued = tokens(1).issue(ALICE);
        assert!(issued.token.starts_with("wm1."));
        assert_eq!(tokens(1).verify(&issued.token), Ok(ALICE));
    }

    #[test]
    fn a_token_of_another_secret_or_altered_is_invalid() {
        let token = tokens(1).issue(ALICE).token;
        let code = |result: Result<Identity, ApiError>| result.map_err(|error| error.code);
        assert_eq!(code(tokens(2).verify(&token)), Err(ErrorCode::InvalidToken));
        let other = Identity::from_bytes([0xb0; 32]).to_hex();
        let forged = token.replace(&ALICE.to_hex(), &other);
        assert_eq!(
            code(tokens(1).verify(&forged)),
            Err(ErrorCode::InvalidToken)
        );
        let parts: Vec<&str> = token.split('.').collect();
        let later = format!("{}.{}.{}0.{}", parts[0], parts[1], parts[2], parts[3]);
        assert_eq!(code(tokens(1).verify(&later)), Err(ErrorCode::InvalidToken));
        for garbage in [
            "",
            ".",
            "wm1",
            "wm1.x.y.z",
            "wm2.a.b.c",
            "wm1.a.b.c.d",
            "é.é",
        ] {
            assert_eq!(
                code(tokens(1).verify(garbage)),
                Err(ErrorCode::InvalidToken)
            );
        }
    }

    #[test]
    fn only_the_lowercase_signature_the_server_writes_is_accepted() {
        let tokens = tokens(1);
        let token = tokens.issue(ALICE).token;
        let (claims, signature) = token.rsplit_once('.').unwrap();
        assert!(signature.bytes().any(|digit| digit.is_ascii_lowercase()));
        let upper = format!("{claims}.{}", signature.to_ascii_uppercase());
        let mut mixed = signature.to_owned();
        let letter = mixed
            .find(|digit: char| digit.is_ascii_lowercase())
            .unwrap();
        mixed.replace_range(
            letter..=letter,
            &mixed[letter..=letter].to_ascii_uppercase(),
        );
        for other_case in [upper, format!("{claims}.{mixed}")] {
            let refused = tokens
                .verify(&other_case)
                .expect_err("not the server's spelling");
            assert_eq!(refused.code, ErrorCode::InvalidToken);
            assert!(
                refused.message.contains("lowercase hex"),
                "{}",
                refused.message
            );
        }
        assert_eq!(tokens.verify(&token), Ok(ALICE));
    }

    #[test]
    fn an_expired_token_is_refused_as_expired() {
        let tokens = tokens(1);
        let token = tokens.sign(ALICE, 1_000);
        assert_eq!(tokens.verify_at(&token, 999), Ok(ALICE));
        assert_eq!(
            tokens.verify_at(&token, 1_000).map_err(|error| error.code),
            Err(ErrorCode::TokenExpired)
        );
    }
}
