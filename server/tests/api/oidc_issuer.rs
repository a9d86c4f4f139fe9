//! An OpenID Connect issuer served on loopback by a test or a benchmark: its discovery
//! document and key set (`/jwks`), with the keys of `oidc_keys/`, and tokens signed with them.
//! Shared by the API's tests (`oidc.rs`) and the server's benchmark of token checks
//! (`benches/tokens.rs`).

use axum::extract::State;
use axum::routing::get as route;
use axum::{Json, Router};
use base64::Engine;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use wasmod_server::OidcSettings;

/// The client id the test servers accept.
pub const AUDIENCE: &str = "wasmod-tests";

/// A signing key of the test issuer: PEM files of `oidc_keys/`.
pub struct TestKey {
    pub id: &'static str,
    pub algorithm: Algorithm,
    pub private: EncodingKey,
    pub public: Jwk,
}

impl TestKey {
    pub fn new(id: &'static str, algorithm: Algorithm, file: &str) -> Self {
        let read = |name: String| {
            std::fs::read(format!(
                "{}/tests/api/oidc_keys/{name}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .expect("a test key")
        };
        let (private, public) = (read(format!("{file}.pem")), read(format!("{file}.pub.pem")));
        let (private, public) = match algorithm {
            Algorithm::ES256 => (
                EncodingKey::from_ec_pem(&private),
                DecodingKey::from_ec_pem(&public),
            ),
            Algorithm::EdDSA => (
                EncodingKey::from_ed_pem(&private),
                DecodingKey::from_ed_pem(&public),
            ),
            _ => (
                EncodingKey::from_rsa_pem(&private),
                DecodingKey::from_rsa_pem(&public),
            ),
        };
        let mut public =
            Jwk::from_decoding_key(&public.expect("a public key"), Some(algorithm)).expect("a JWK");
        public.common.key_id = Some(id.to_owned());
        Self {
            id,
            algorithm,
            private: private.expect("a private key"),
            public,
        }
    }

    /// `claims` signed with this key, its header naming it.
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_as(&header(self.algorithm, self.id), claims)
    }

    /// `claims` signed with this key under `header`, whatever it says (another algorithm,
    /// key id or type: the tokens a forger or another kind of issuer would make).
    pub fn sign_as(&self, header: &Header, claims: &Value) -> String {
        jsonwebtoken::encode(header, claims, &self.private).expect("signed")
    }
}

/// A JWT header of `algorithm` naming the key `kid`.
pub fn header(algorithm: Algorithm, kid: &str) -> Header {
    Header {
        kid: Some(kid.to_owned()),
        ..Header::new(algorithm)
    }
}

/// What the test issuer serves, and how.
#[derive(Default)]
pub struct Served {
    pub keys: Mutex<Vec<Jwk>>,
    pub delay: Mutex<Duration>,
    pub fetches: AtomicUsize,
    pub issuer: Mutex<String>,
}

/// An issuer on loopback: `/.well-known/openid-configuration` and `/jwks`.
pub struct Issuer {
    pub url: String,
    pub served: Arc<Served>,
    pub keys: Vec<TestKey>,
}

impl Issuer {
    pub async fn start() -> Self {
        let served = Arc::new(Served::default());
        let keys = vec![
            TestKey::new("rsa-1", Algorithm::RS256, "rsa"),
            TestKey::new("ec-1", Algorithm::ES256, "ec"),
            TestKey::new("ed-1", Algorithm::EdDSA, "ed"),
        ];
        *served.keys.lock() = keys.iter().map(|key| key.public.clone()).collect();
        let router = Router::new()
            .route("/.well-known/openid-configuration", route(discovery))
            .route("/jwks", route(jwks))
            .with_state(served.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        *served.issuer.lock() = url.clone();
        tokio::spawn(async move { axum::serve(listener, router).await });
        Self { url, served, keys }
    }

    /// The key of algorithm `algorithm`.
    pub fn key(&self, algorithm: Algorithm) -> &TestKey {
        self.keys
            .iter()
            .find(|key| key.algorithm == algorithm)
            .expect("a key of that algorithm")
    }

    /// Valid claims of `sub` for the test servers' audience, changed by `change`.
    pub fn claims(&self, sub: &str, change: impl FnOnce(&mut Value)) -> Value {
        let now = unix_now();
        let mut claims = json!({
            "iss": self.url,
            "sub": sub,
            "aud": AUDIENCE,
            "iat": now,
            "exp": now + 300,
            "name": format!("User {sub}"),
        });
        change(&mut claims);
        claims
    }

    /// A valid RS256 token of `sub`.
    pub fn token(&self, sub: &str) -> String {
        self.key(Algorithm::RS256).sign(&self.claims(sub, |_| {}))
    }

    /// Settings accepting this issuer (on loopback), with `fetch_timeout`.
    pub fn settings(&self, fetch_timeout: Duration) -> OidcSettings {
        let mut settings = OidcSettings::new(vec![format!("{}={AUDIENCE}", self.url)
            .parse()
            .expect("an issuer")]);
        settings.allow_http_loopback = true;
        settings.fetch_timeout = fetch_timeout;
        settings
    }

    pub fn fetches(&self) -> usize {
        self.served.fetches.load(Ordering::SeqCst)
    }
}

async fn discovery(State(served): State<Arc<Served>>) -> Json<Value> {
    let issuer = served.issuer.lock().clone();
    Json(json!({ "issuer": issuer, "jwks_uri": format!("{issuer}/jwks") }))
}

async fn jwks(State(served): State<Arc<Served>>) -> Json<JwkSet> {
    served.fetches.fetch_add(1, Ordering::SeqCst);
    let delay = *served.delay.lock();
    tokio::time::sleep(delay).await;
    Json(JwkSet {
        keys: served.keys.lock().clone(),
    })
}

pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

/// `bytes` in base64url without padding, as JWT parts are.
pub fn base64_url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
