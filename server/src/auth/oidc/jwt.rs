//! One JWT: read before it is trusted (which issuer, which key, which algorithm), then
//! verified with one key and its claims checked.

use super::{OidcIssuer, ALGORITHMS};
use crate::auth::unix_now;
use crate::error::{ApiError, ErrorCode};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// A JWT read but not verified: nothing in it is trusted yet.
#[derive(Debug)]
pub(super) struct Unverified<'a> {
    token: &'a str,
    algorithm: Algorithm,
    key_id: Option<String>,
    issuer: String,
    payload: Arc<str>,
}

/// What a verified token says.
#[derive(Debug)]
pub(super) struct VerifiedToken {
    /// `iss`.
    pub issuer: String,
    /// `sub`.
    pub subject: String,
    /// The whole payload, a JSON object, as the issuer wrote it.
    pub payload: Arc<str>,
    /// `exp`, in Unix seconds.
    pub expires_at: u64,
}

/// `invalid_token` because the token `why`.
pub(super) fn invalid(why: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::InvalidToken, format!("the token {why}"))
}

impl<'a> Unverified<'a> {
    /// Reads `token`'s header and payload: a JSON object with a string `iss`, signed (so it
    /// says) with one of the accepted [`ALGORITHMS`].
    pub(super) fn parse(token: &'a str) -> Result<Self, ApiError> {
        let mut parts = token.split('.');
        let (header, payload) = (parts.next(), parts.next());
        let (_, header) = json_part(header.unwrap_or_default())
            .map_err(|why| invalid(format_args!("has a header that {why}")))?;
        let algorithm = match header.get("alg").and_then(Value::as_str) {
            None => return Err(invalid("names no algorithm (`alg`)")),
            Some(name) => name
                .parse::<Algorithm>()
                .ok()
                .filter(|algorithm| ALGORITHMS.contains(algorithm))
                .ok_or_else(|| {
                    invalid(format_args!(
                        "is signed with `{name}`, which this server does not accept from an \
                         issuer (only RS*, PS*, ES256, ES384 and EdDSA)"
                    ))
                })?,
        };
        match header
            .get("typ")
            .map(|typ| typ.as_str().map(str::to_ascii_lowercase))
        {
            None => {}
            Some(Some(typ)) if matches!(typ.as_str(), "jwt" | "at+jwt" | "application/at+jwt") => {}
            Some(typ) => {
                return Err(invalid(format_args!(
                    "is of type `{}`, not a JWT to sign in with (`typ` JWT or at+jwt)",
                    shortened(typ.as_deref().unwrap_or("?"))
                )))
            }
        }
        let key_id = header.get("kid").and_then(Value::as_str).map(str::to_owned);
        let (payload, claims) = json_part(payload.unwrap_or_default())
            .map_err(|why| invalid(format_args!("has a payload that {why}")))?;
        let Some(Value::String(issuer)) = claims.get("iss") else {
            return Err(invalid("names no issuer (`iss`)"));
        };
        if claims.get("events").is_some() {
            return Err(invalid(
                "carries `events`: it is a security event (a logout, say), not a sign-in",
            ));
        }
        let issuer = issuer.clone();
        Ok(Self {
            token,
            algorithm,
            key_id,
            issuer,
            payload: payload.into(),
        })
    }

    /// The issuer the token names (not verified).
    pub(super) fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The algorithm the token says it is signed with (one of [`ALGORITHMS`]).
    pub(super) fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The key id (`kid`) of the header, if it names one.
    pub(super) fn key_id(&self) -> Option<&str> {
        self.key_id.as_deref()
    }

    /// The token verified with `key`, its claims checked for `issuer` with `leeway`:
    /// `token_expired` past `exp`, `invalid_token` for anything else wrong.
    pub(super) fn verify(
        self,
        key: &DecodingKey,
        issuer: &OidcIssuer,
        leeway: Duration,
    ) -> Result<VerifiedToken, ApiError> {
        let mut validation = Validation::new(self.algorithm);
        validation.leeway = leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&issuer.issuer]);
        validation.set_audience(&issuer.audiences);
        validation.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
        let claims = jsonwebtoken::decode::<Value>(self.token, key, &validation)
            .map_err(|error| refusal(error.kind(), issuer))?
            .claims;
        if let Some(issued_at) = claims.get("iat") {
            let issued_at = issued_at
                .as_f64()
                .ok_or_else(|| invalid("has an `iat` that is not a number"))?;
            let latest = unix_now().saturating_add(leeway.as_secs());
            if issued_at > latest as f64 {
                return Err(invalid(format_args!(
                    "was issued in the future (iat {issued_at}): check the clocks of this server and of the issuer"
                )));
            }
        }
        // A token for several audiences was issued to the party `azp` names (OpenID Connect
        // Core, 2): it must be one of this server's applications, not another that merely
        // listed this one.
        let audiences = claims
            .get("aud")
            .and_then(Value::as_array)
            .map_or(1, Vec::len);
        if let (true, Some(party)) = (audiences > 1, claims.get("azp")) {
            let ours = party
                .as_str()
                .is_some_and(|party| issuer.audiences.iter().any(|audience| audience == party));
            if !ours {
                return Err(invalid(
                    "is for several audiences and was issued to another application (`azp`)",
                ));
            }
        }
        let Some(Value::String(subject)) = claims.get("sub") else {
            return Err(invalid("names no subject (`sub`)"));
        };
        if subject.is_empty() {
            return Err(invalid("has an empty subject (`sub`)"));
        }
        let expires_at = claims
            .get("exp")
            .and_then(Value::as_f64)
            .ok_or_else(|| invalid("has an `exp` that is not a number"))?;
        Ok(VerifiedToken {
            issuer: self.issuer,
            subject: subject.clone(),
            payload: self.payload,
            expires_at: expires_at as u64,
        })
    }
}

/// `text` as a message may quote it: at most 64 characters of it (a token's values are the
/// sender's to choose, and up to 16 KiB long).
pub(super) fn shortened(text: &str) -> String {
    match text.char_indices().nth(64) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// `part` of a JWT, base64url-decoded, as its text and as a JSON object; `Err` says why it is
/// not one.
fn json_part(part: &str) -> Result<(String, Value), String> {
    let text = URL_SAFE_NO_PAD
        .decode(part)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or("is not base64url-encoded UTF-8")?;
    match serde_json::from_str(&text) {
        Ok(object @ Value::Object(_)) => Ok((text, object)),
        Ok(_) => Err("is not a JSON object".to_owned()),
        Err(error) => Err(format!("is not JSON: {error}")),
    }
}

/// The refusal of a token `jsonwebtoken` found wrong as `kind`.
fn refusal(kind: &ErrorKind, issuer: &OidcIssuer) -> ApiError {
    match kind {
        ErrorKind::ExpiredSignature => ApiError::new(
            ErrorCode::TokenExpired,
            format!(
                "the token has expired: get a new one from {}",
                issuer.issuer
            ),
        ),
        ErrorKind::ImmatureSignature => invalid("is not valid yet (its `nbf` is in the future)"),
        ErrorKind::InvalidAudience => invalid(format_args!(
            "is for an audience (`aud`) this server does not accept from {}: a token of another \
             application",
            issuer.issuer
        )),
        ErrorKind::InvalidIssuer => invalid("names another issuer"),
        ErrorKind::MissingRequiredClaim(claim) => invalid(format_args!("has no `{claim}` claim")),
        ErrorKind::InvalidSignature => invalid(format_args!(
            "has a signature that does not verify with the key of {}",
            issuer.issuer
        )),
        ErrorKind::InvalidKeyFormat | ErrorKind::InvalidAlgorithm => {
            invalid("is signed with an algorithm its key is not for")
        }
        other => invalid(format_args!("does not verify: {other:?}")),
    }
}
