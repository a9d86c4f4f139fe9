//! Calls as a caller with claims: [`TestModule::with_claims`].
//!
//! On a server, a client that signed in with an OpenID Connect provider calls with its token's
//! claims, which the module reads with `ctx.claims()`. A test gives them as the JSON payload
//! such a token would carry, and makes the same calls as [`TestModule`]'s own, each with those
//! claims.

use crate::module::caller;
use crate::{CallFailure, TestModule};
use std::sync::Arc;
use wasmod::abi::ModuleExports;
use wasmod::http::{Request, Response};
use wasmod::{Decode, Encode, Identity};
use wasmod_host::{Claims, Outcome};

/// A [`TestModule`] calling with claims: made by [`TestModule::with_claims`]. Its methods are
/// [`TestModule`]'s calls, each made with the claims.
pub struct WithClaims<'a, M> {
    module: &'a TestModule<M>,
    claims: Claims,
}

impl<M> std::fmt::Debug for WithClaims<'_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WithClaims")
            .field("claims", &self.claims)
            .finish_non_exhaustive()
    }
}

impl<M: ModuleExports> TestModule<M> {
    /// The calls of this module made with `claims`: the payload of a caller's OpenID Connect
    /// token, a JSON object such as `{"iss": "https://id.example.com", "sub": "248289761001",
    /// "name": "Ann"}`.
    ///
    /// Taken as the server would hand them over once it verified the token, and not checked:
    /// a test may give any payload, odd ones included, to see that the module copes. Calls of
    /// the module itself ([`TestModule::call_reducer`] and the rest) have no claims, as a
    /// caller with a token of the server's own has none.
    ///
    /// ```
    /// use wasmod::prelude::*;
    /// use wasmod_testing::{Outcome, TestModule};
    ///
    /// #[wasmod::module]
    /// mod members {
    ///     use wasmod::prelude::*;
    ///
    ///     #[reducer(client_connected)]
    ///     fn connected(ctx: &ReducerContext) -> Result<(), String> {
    ///         match ctx.claims() {
    ///             Some(claims) if claims.issuer() == "https://id.example.com" => Ok(()),
    ///             Some(claims) => Err(format!("{} is not our identity provider", claims.issuer())),
    ///             None => Err("sign in first".into()),
    ///         }
    ///     }
    /// }
    ///
    /// let module = TestModule::<members::Module>::new();
    /// let ann = Identity::from_bytes([1; 32]);
    /// let ours = r#"{"iss":"https://id.example.com","sub":"ann"}"#;
    /// assert!(module.with_claims(ours).connect(ann).is_success());
    /// let theirs = module.with_claims(r#"{"iss":"https://elsewhere.example","sub":"ann"}"#);
    /// match theirs.connect(ann) {
    ///     Outcome::Failed { message, .. } => assert!(message.contains("not our identity provider")),
    ///     other => panic!("{other}"),
    /// }
    /// assert!(!module.connect(ann).is_success());
    /// ```
    pub fn with_claims(&self, claims: impl Into<Arc<str>>) -> WithClaims<'_, M> {
        WithClaims {
            module: self,
            claims: Claims::from_verified_json(claims.into()),
        }
    }
}

impl<M: ModuleExports> WithClaims<'_, M> {
    /// [`TestModule::call_reducer`], with the claims.
    pub fn call_reducer(&self, sender: Identity, name: &str, args: impl Encode) -> Outcome {
        self.module.reducer_as(&self.caller(sender), name, args)
    }

    /// [`TestModule::call_procedure`], with the claims.
    pub fn call_procedure<R: Decode>(
        &self,
        sender: Identity,
        name: &str,
        args: impl Encode,
    ) -> Result<R, CallFailure> {
        self.module.procedure_as(&self.caller(sender), name, args)
    }

    /// [`TestModule::call_view`], with the claims.
    pub fn call_view<R: Decode>(
        &self,
        sender: Identity,
        name: &str,
        args: impl Encode,
    ) -> Result<R, CallFailure> {
        self.module.view_as(&self.caller(sender), name, args)
    }

    /// [`TestModule::call_http`], as a request whose bearer token had the claims.
    pub fn call_http(&self, request: Request) -> Result<Response, CallFailure> {
        self.module.http_as(request, Some(self.claims.clone()))
    }

    /// [`TestModule::connect`], with the claims: the module's `client_connected` may refuse
    /// the connection by them.
    pub fn connect(&self, identity: Identity) -> Outcome {
        self.module.connect_as(&self.caller(identity))
    }

    /// [`TestModule::disconnect`], with the claims.
    pub fn disconnect(&self, identity: Identity) -> Outcome {
        self.module.disconnect_as(&self.caller(identity))
    }

    /// `sender`, with the claims.
    fn caller(&self, sender: Identity) -> wasmod_host::Caller {
        caller(sender, Some(self.claims.clone()))
    }
}
