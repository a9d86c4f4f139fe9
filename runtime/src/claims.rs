//! The caller's claims: who vouches for the caller, and what it says about them.
//!
//! A client that signed in with an OpenID Connect identity provider calls with that provider's
//! token; the server verifies it and passes its payload, the claims, with each of the client's
//! calls. A module reads them through its context (`ctx.claims()`), to admit the users of one
//! issuer only, to show the name the provider gives, or to check a role. A client with a token
//! of the server's own (`POST /v1/identity`) has no claims, and neither have the calls of the
//! host itself (`init`, scheduled reducers).
//!
//! The claims cost nothing until asked for: the host hands them over only when the module
//! calls `ctx.claims()` (the `caller_claims` import), and the module parses them then (each
//! time it asks: keep what it returns). A module that never asks carries no JSON parser
//! either: the linker drops it, and its wasm is the size it was before claims existed.

use crate::{error, sys};
use serde_json::{Map, Value};

/// The claims of the caller's verified token: its issuer, subject and audience, and any other
/// claim its issuer put there, as JSON.
///
/// The server verified the token (signature, issuer, audience, expiry) before the call
/// reached the module: what is here can be trusted as far as its issuer can. An identity
/// provider's token always has an issuer and a subject; should one lack them, [`issuer`] and
/// [`subject`] are empty rather than a panic.
///
/// [`issuer`]: Claims::issuer
/// [`subject`]: Claims::subject
///
/// ```
/// use wasmod::prelude::*;
/// use wasmod_testing::TestModule;
///
/// #[wasmod::module]
/// mod greet {
///     use wasmod::prelude::*;
///
///     #[procedure]
///     fn whoami(ctx: &mut ProcedureContext) -> String {
///         match ctx.claims() {
///             Some(claims) => format!(
///                 "{} of {}, known as {}",
///                 claims.subject(),
///                 claims.issuer(),
///                 claims.get_str("name").unwrap_or("nobody in particular"),
///             ),
///             None => "a caller without claims".to_owned(),
///         }
///     }
/// }
///
/// let module = TestModule::<greet::Module>::new();
/// let ann = Identity::from_bytes([1; 32]);
/// let claims = r#"{"iss":"https://id.example.com","sub":"u-17","aud":"chat","name":"Ann"}"#;
/// let signed_in = module.with_claims(claims).call_procedure::<String>(ann, "whoami", ());
/// assert_eq!(signed_in.unwrap(), "u-17 of https://id.example.com, known as Ann");
/// let anonymous = module.call_procedure::<String>(ann, "whoami", ());
/// assert_eq!(anonymous.unwrap(), "a caller without claims");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Claims {
    json: String,
    payload: Map<String, Value>,
    audience: Vec<String>,
}

impl Claims {
    /// The claims whose payload is `json`. A payload that is not a JSON object (which a
    /// verified token's never is) has no claims but its text.
    fn parse(json: String) -> Self {
        let payload = match serde_json::from_str(&json) {
            Ok(Value::Object(payload)) => payload,
            _ => Map::new(),
        };
        let audience = match payload.get("aud") {
            Some(Value::String(audience)) => vec![audience.clone()],
            Some(Value::Array(audiences)) => audiences
                .iter()
                .filter_map(|audience| audience.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        Self {
            json,
            payload,
            audience,
        }
    }

    /// The issuer (`iss`): the identity provider's URL, such as
    /// `https://accounts.example.com`. Empty if the token has none.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// #[wasmod::module]
    /// mod gate {
    ///     use wasmod::prelude::*;
    ///
    ///     #[reducer(client_connected)]
    ///     fn connected(ctx: &ReducerContext) -> Result<(), String> {
    ///         match ctx.claims() {
    ///             Some(claims) if claims.issuer() == "https://id.example.com" => Ok(()),
    ///             _ => Err("sign in with id.example.com".into()),
    ///         }
    ///     }
    /// }
    ///
    /// let module = TestModule::<gate::Module>::new();
    /// let ann = Identity::from_bytes([1; 32]);
    /// let ours = r#"{"iss":"https://id.example.com","sub":"ann"}"#;
    /// let theirs = r#"{"iss":"https://evil.example.net","sub":"ann"}"#;
    /// assert!(module.with_claims(ours).connect(ann).is_success());
    /// assert!(!module.with_claims(theirs).connect(ann).is_success());
    /// assert!(!module.connect(ann).is_success());
    /// ```
    pub fn issuer(&self) -> &str {
        self.get_str("iss").unwrap_or_default()
    }

    /// The subject (`sub`): the user's id at the issuer, unique and never reassigned there (an
    /// e-mail address or a name may change; this does not). Empty if the token has none.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// #[wasmod::module]
    /// mod ids {
    ///     use wasmod::prelude::*;
    ///
    ///     #[view]
    ///     fn subject(ctx: &ViewContext) -> Option<String> {
    ///         ctx.claims().map(|claims| claims.subject().to_owned())
    ///     }
    /// }
    ///
    /// let module = TestModule::<ids::Module>::new();
    /// let ann = Identity::from_bytes([1; 32]);
    /// let claims = r#"{"iss":"https://id.example.com","sub":"248289761001"}"#;
    /// let subject: Option<String> = module.with_claims(claims).call_view(ann, "subject", ()).unwrap();
    /// assert_eq!(subject.as_deref(), Some("248289761001"));
    /// ```
    pub fn subject(&self) -> &str {
        self.get_str("sub").unwrap_or_default()
    }

    /// The audience (`aud`): whom the token is meant for, usually the client id the issuer
    /// gave the application. JWT allows one string or an array of them; both read as a list
    /// here (empty if the token has none; entries that are not strings are left out).
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// #[wasmod::module]
    /// mod audiences {
    ///     use wasmod::prelude::*;
    ///
    ///     #[procedure]
    ///     fn audience(ctx: &mut ProcedureContext) -> Vec<String> {
    ///         ctx.claims().map(|claims| claims.audience().to_vec()).unwrap_or_default()
    ///     }
    /// }
    ///
    /// let module = TestModule::<audiences::Module>::new();
    /// let ann = Identity::from_bytes([1; 32]);
    /// let audience = |claims: &str| {
    ///     module.with_claims(claims).call_procedure::<Vec<String>>(ann, "audience", ()).unwrap()
    /// };
    /// assert_eq!(audience(r#"{"sub":"ann","aud":"chat"}"#), ["chat"]);
    /// assert_eq!(audience(r#"{"sub":"ann","aud":["chat","admin"]}"#), ["chat", "admin"]);
    /// assert!(audience(r#"{"sub":"ann"}"#).is_empty());
    /// ```
    pub fn audience(&self) -> &[String] {
        &self.audience
    }

    /// The claim `name`, as JSON: any of the token's claims, standard (`email`,
    /// `email_verified`, `exp`) or the issuer's own (`roles`, `https://example.com/tenant`).
    /// `None` if the token has no such claim.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// #[wasmod::module]
    /// mod roles {
    ///     use wasmod::prelude::*;
    ///     use wasmod::serde_json::Value;
    ///
    ///     #[reducer]
    ///     fn moderate(ctx: &ReducerContext) -> Result<(), String> {
    ///         let claims = ctx.claims().ok_or("sign in first")?;
    ///         match claims.get("roles") {
    ///             Some(Value::Array(roles)) if roles.iter().any(|role| role == "moderator") => Ok(()),
    ///             _ => Err("moderators only".into()),
    ///         }
    ///     }
    /// }
    ///
    /// let module = TestModule::<roles::Module>::new();
    /// let ann = Identity::from_bytes([1; 32]);
    /// let moderator = r#"{"sub":"ann","roles":["user","moderator"]}"#;
    /// assert!(module.with_claims(moderator).call_reducer(ann, "moderate", ()).is_success());
    /// let user = r#"{"sub":"ann","roles":["user"]}"#;
    /// assert!(!module.with_claims(user).call_reducer(ann, "moderate", ()).is_success());
    /// ```
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.payload.get(name)
    }

    /// The claim `name` if it is a string (`name`, `email`, `preferred_username`); `None` if
    /// the token has no such claim, or it is not a string. (The example on [`Claims`] uses
    /// it.)
    pub fn get_str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// Every claim, by name: to go through them all, or to deserialize them into a type of
    /// the module's with `serde_json::from_value`.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// #[wasmod::module]
    /// mod names {
    ///     use wasmod::prelude::*;
    ///
    ///     #[procedure]
    ///     fn claim_names(ctx: &mut ProcedureContext) -> Vec<String> {
    ///         let claims = ctx.claims();
    ///         claims.map(|claims| claims.all().keys().cloned().collect()).unwrap_or_default()
    ///     }
    /// }
    ///
    /// let module = TestModule::<names::Module>::new();
    /// let claims = r#"{"sub":"ann","iss":"https://id.example.com"}"#;
    /// let names = module.with_claims(claims).call_procedure::<Vec<String>>(Identity::ZERO, "claim_names", ());
    /// assert_eq!(names.unwrap(), ["iss", "sub"]);
    /// ```
    pub fn all(&self) -> &Map<String, Value> {
        &self.payload
    }

    /// The payload as the JSON text the host gave: the token's claims exactly as its issuer
    /// wrote them (to store them, or to parse them with a type of the module's own).
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// #[wasmod::module]
    /// mod raw {
    ///     use wasmod::prelude::*;
    ///
    ///     #[procedure]
    ///     fn raw(ctx: &mut ProcedureContext) -> Option<String> {
    ///         ctx.claims().map(|claims| claims.json().to_owned())
    ///     }
    /// }
    ///
    /// let module = TestModule::<raw::Module>::new();
    /// let claims = r#"{"sub":"ann", "iss":"https://id.example.com"}"#;
    /// let raw = module.with_claims(claims).call_procedure::<Option<String>>(Identity::ZERO, "raw", ());
    /// assert_eq!(raw.unwrap().as_deref(), Some(claims));
    /// ```
    pub fn json(&self) -> &str {
        &self.json
    }
}

/// The caller's claims, asked of the host and parsed; `None` if it has none. A host that fails
/// to hand them over (the call has spent its handles) is logged, and the caller is taken to
/// have none: a module that admits by claims then refuses, the safe side.
///
/// The contexts keep nothing (each `ctx.claims()` asks again): a parsed payload kept in a
/// context would be dropped with it in every call, and its drop code would be in every
/// module, claims read or not.
pub(crate) fn caller_claims() -> Option<Claims> {
    let bytes = sys::caller_claims().and_then(sys::read_source);
    match bytes {
        Ok(bytes) if bytes.is_empty() => None,
        Ok(bytes) => Some(Claims::parse(String::from_utf8_lossy(&bytes).into_owned())),
        Err(errno) => {
            error!("the host did not hand over the caller's claims ({errno}): taken as none");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Claims;

    #[test]
    fn odd_payloads_read_as_empty_claims_without_panicking() {
        for json in ["", "[1]", "not json", "{\"iss\":7,\"sub\":null,\"aud\":{}}"] {
            let claims = Claims::parse(json.to_owned());
            assert_eq!(claims.issuer(), "", "{json}");
            assert_eq!(claims.subject(), "", "{json}");
            assert!(claims.audience().is_empty(), "{json}");
            assert_eq!(claims.json(), json);
        }
    }

    #[test]
    fn an_audience_is_a_string_or_the_strings_of_an_array() {
        let one = Claims::parse(r#"{"aud":"chat"}"#.to_owned());
        assert_eq!(one.audience(), ["chat"]);
        let some = Claims::parse(r#"{"aud":["chat",3,"admin"]}"#.to_owned());
        assert_eq!(some.audience(), ["chat", "admin"]);
    }
}
