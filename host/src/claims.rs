//! The claims of a caller's verified token, as the host carries them to the module.
//!
//! A caller who signed in with an OpenID Connect token has claims: the token's payload (`iss`,
//! `sub`, `aud`, and whatever else its issuer put there). The server verifies the token; the
//! host only carries the payload, as the JSON text it was, from the call down to the module,
//! which reads it through the `caller_claims` import when it asks (`docs/abi.md`) and parses it
//! itself. The host never parses or checks it: what it holds is whatever the server vouched
//! for, and a call without claims (a server-signed token, the host's own calls) has `None`.

use std::fmt;
use std::sync::Arc;

/// The verified payload of a caller's token: a JSON object, as text. Cheap to clone (one
/// reference count), so that a connection's claims go with each of its calls for nothing.
///
/// Its `Debug` shows the size only: the payload is personal data (names, e-mail addresses),
/// which has no place in the host's logs.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Claims(Arc<str>);

impl Claims {
    /// The claims whose payload is `json`, a JSON object.
    ///
    /// The caller (the server) has verified the token `json` comes from: its signature, its
    /// issuer, its audience, its expiry. The host does not parse or check it, and hands it to
    /// the module as it is.
    ///
    /// ```
    /// use wasmod_host::Claims;
    ///
    /// let claims = Claims::from_verified_json(r#"{"iss":"https://id.example.com","sub":"ann"}"#.into());
    /// assert!(claims.as_json().contains("\"sub\":\"ann\""));
    /// ```
    pub fn from_verified_json(json: Arc<str>) -> Self {
        Self(json)
    }

    /// The payload, as the JSON text it was given as.
    pub fn as_json(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Claims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Claims({} bytes)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::Claims;

    #[test]
    fn debug_shows_the_size_not_the_personal_data() {
        let claims = Claims::from_verified_json(r#"{"email":"ann@example.com"}"#.into());
        let shown = format!("{claims:?}");
        assert_eq!(shown, "Claims(27 bytes)");
        assert!(!shown.contains("ann"));
    }
}
