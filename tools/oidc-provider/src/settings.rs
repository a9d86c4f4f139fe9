//! What the provider is started with: its users, its clients and its tokens' lifetimes, and
//! the JSON the Node script reads them from (`provider/server.mjs` documents the fields).

use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// How a provider is started. [`Settings::default`] has two users (`alice` and `bob`), a public
/// client `spa` for a browser app and a confidential client `app` for Rust tests, both signing
/// with RS256, and ID tokens valid for 5 minutes; change the fields to test something else:
///
/// ```
/// use std::time::Duration;
/// use wasmod_oidc_provider::{Alg, Client, Settings};
///
/// let mut settings = Settings {
///     id_token_ttl: Duration::from_secs(2),
///     ..Settings::default()
/// };
/// settings.clients.push(Client::confidential("es", "es-secret").signed_with(Alg::Es256));
/// ```
#[derive(Debug, Clone)]
pub struct Settings {
    /// The users who can sign in. Their `sub`s must differ.
    pub users: Vec<User>,
    /// The clients (relying parties) the provider knows. Their ids must differ.
    pub clients: Vec<Client>,
    /// How long an ID token is valid (its `exp` minus its `iat`), in whole seconds, at least
    /// one.
    pub id_token_ttl: Duration,
    /// How long an access token is valid, in whole seconds, at least one.
    pub access_token_ttl: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            users: vec![User::new("alice", "Alice"), User::new("bob", "Bob")],
            clients: vec![
                Client::public("spa", "http://127.0.0.1/callback"),
                Client::confidential("app", "app-secret"),
            ],
            id_token_ttl: Duration::from_secs(300),
            access_token_ttl: Duration::from_secs(300),
        }
    }
}

impl Settings {
    /// The client whose id is `id`.
    pub fn client(&self, id: &str) -> Option<&Client> {
        self.clients.iter().find(|client| client.id == id)
    }

    /// The settings as the Node script reads them, with the port to listen on (0: any) and
    /// the file of its signing keys.
    pub(crate) fn to_json(&self, port: u16, keys: &Path) -> Value {
        let seconds = |ttl: Duration| ttl.as_secs().max(1);
        json!({
            "port": port,
            "keys": keys,
            "users": self.users.iter().map(|user| json!({
                "sub": user.sub,
                "name": user.name,
                "email": user.email,
            })).collect::<Vec<_>>(),
            "clients": self.clients.iter().map(|client| json!({
                "client_id": client.id,
                "client_secret": client.secret,
                "redirect_uri": client.redirect_uri,
                "id_token_signed_response_alg": client.alg.name(),
            })).collect::<Vec<_>>(),
            "id_token_ttl": seconds(self.id_token_ttl),
            "access_token_ttl": seconds(self.access_token_ttl),
        })
    }
}

/// A user of the provider: the claims its ID tokens carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// The subject, unique at this issuer: the `sub` claim, and what the login form takes.
    pub sub: String,
    /// The `name` claim.
    pub name: String,
    /// The `email` claim (marked verified).
    pub email: String,
}

impl User {
    /// A user with subject `sub`, name `name` and email `sub@example.com`.
    pub fn new(sub: impl Into<String>, name: impl Into<String>) -> Self {
        let sub = sub.into();
        Self {
            email: format!("{sub}@example.com"),
            sub,
            name: name.into(),
        }
    }
}

/// A client (relying party) registered at the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    /// The `client_id`: the `aud` of the ID tokens it gets.
    pub id: String,
    /// The client secret of a confidential client (sent in the token request's body,
    /// `client_secret_post`); `None` for a public one (a browser app), which only PKCE
    /// protects.
    pub secret: Option<String>,
    /// Where the provider sends the browser back with the code: the one redirect URI the
    /// client may use. [`OidcProvider::sign_in`](crate::OidcProvider::sign_in) stops at this
    /// redirect, so nothing needs to listen there.
    pub redirect_uri: String,
    /// How the provider signs the client's ID tokens (`id_token_signed_response_alg`).
    pub alg: Alg,
}

impl Client {
    /// A public client (no secret, PKCE only), as a single-page app in a browser is, whose
    /// redirect URI is `redirect_uri` (the app's own page). Its tokens are signed with RS256.
    pub fn public(id: impl Into<String>, redirect_uri: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            secret: None,
            redirect_uri: redirect_uri.into(),
            alg: Alg::Rs256,
        }
    }

    /// A confidential client with secret `secret` (and PKCE too), whose redirect URI is
    /// `http://127.0.0.1/callback`. Its tokens are signed with RS256.
    pub fn confidential(id: impl Into<String>, secret: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            secret: Some(secret.into()),
            redirect_uri: "http://127.0.0.1/callback".to_owned(),
            alg: Alg::Rs256,
        }
    }

    /// The client with its ID tokens signed with `alg`.
    pub fn signed_with(mut self, alg: Alg) -> Self {
        self.alg = alg;
        self
    }
}

/// An algorithm the provider signs ID tokens with. It has one key of each (in its JWKS, each
/// with its `kid` and `alg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Alg {
    /// RSASSA-PKCS1-v1_5 with SHA-256, a 2048-bit key: what every OpenID Provider supports,
    /// and the default.
    Rs256,
    /// ECDSA on P-256 with SHA-256.
    Es256,
    /// EdDSA on Ed25519.
    EdDsa,
}

impl Alg {
    /// The JOSE name, as in a JWT's `alg` header: `RS256`, `ES256`, `EdDSA`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rs256 => "RS256",
            Self::Es256 => "ES256",
            Self::EdDsa => "EdDSA",
        }
    }
}
