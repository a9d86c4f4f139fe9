//! An issuer's signing keys: fetched, cached, and fetched again only when it is worth it.
//!
//! The keys are fetched at start (in the background), used for [`OidcSettings::keys_max_age`]
//! and then fetched again in the background while the old ones keep working. A token naming a
//! key id that is not among them (the issuer rotated its keys, or the token is forged) makes
//! the request wait for one fetch, but only if none was tried within
//! [`OidcSettings::refresh_interval`]: a flood of tokens with made-up key ids costs the issuer
//! one fetch per interval, not one per token. Concurrent requests that need a fetch share it.
//! A failed fetch keeps the keys there were.

use super::fetch::Fetcher;
use super::jwt::{invalid, Unverified};
use super::{OidcIssuer, OidcSettings};
use crate::error::ApiError;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use parking_lot::RwLock;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One public key of an issuer.
pub(super) struct Key {
    /// `kid`.
    id: Option<String>,
    /// `alg`, if the issuer pinned the key to one algorithm.
    algorithm: Option<Algorithm>,
    decoding: DecodingKey,
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key")
            .field("id", &self.id)
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

impl Key {
    /// The key of JWK `jwk`, if it is a public signing key of a kind accepted; `Err` says why
    /// it is left out.
    fn from_jwk(jwk: Value) -> Result<Self, String> {
        let id = jwk.get("kid").and_then(Value::as_str).map(str::to_owned);
        let algorithm = match jwk.get("alg").and_then(Value::as_str) {
            None => None,
            Some(name) => Some(
                name.parse::<Algorithm>()
                    .map_err(|_| format!("its alg `{name}` is not one this server knows"))?,
            ),
        };
        let jwk: Jwk = serde_json::from_value(jwk).map_err(|error| error.to_string())?;
        if matches!(
            jwk.common.public_key_use,
            Some(ref key_use) if *key_use != PublicKeyUse::Signature
        ) {
            return Err("it is not for signatures (`use`)".to_owned());
        }
        if matches!(
            jwk.algorithm,
            AlgorithmParameters::OctetKey(_) | AlgorithmParameters::Other(_)
        ) {
            return Err("it is not a public key of a kind accepted (RSA, EC, OKP)".to_owned());
        }
        let decoding = DecodingKey::from_jwk(&jwk).map_err(|error| error.to_string())?;
        Ok(Self {
            id,
            algorithm,
            decoding,
        })
    }

    /// The key, to verify with.
    pub(super) fn decoding(&self) -> &DecodingKey {
        &self.decoding
    }

    /// Whether the key can verify a signature of `algorithm`.
    fn is_for(&self, algorithm: Algorithm) -> bool {
        self.decoding.family() == algorithm.family()
            && self.algorithm.is_none_or(|pinned| pinned == algorithm)
    }
}

/// The keys of one fetch.
#[derive(Debug, Default)]
struct KeySet {
    keys: Vec<Arc<Key>>,
    /// When they were fetched; `None` before the first fetch that succeeded.
    fetched: Option<Instant>,
}

/// What a key set holds for a token.
enum Lookup {
    Found(Arc<Key>),
    /// Nothing: a fetch may find it.
    Missing,
    /// Something that will not verify it, whatever a fetch brings.
    Refused(String),
}

impl KeySet {
    /// The key for a token signed with `algorithm` by key `id` (if it names one).
    fn lookup(&self, id: Option<&str>, algorithm: Algorithm) -> Lookup {
        match id {
            Some(id) => match self.keys.iter().find(|key| key.id.as_deref() == Some(id)) {
                None => Lookup::Missing,
                Some(key) if key.is_for(algorithm) => Lookup::Found(key.clone()),
                Some(_) => Lookup::Refused(format!(
                    "is signed with {algorithm:?}, which its key `{id}` is not for"
                )),
            },
            None => {
                let mut fitting = self.keys.iter().filter(|key| key.is_for(algorithm));
                match (fitting.next(), fitting.next()) {
                    (Some(key), None) => Lookup::Found(key.clone()),
                    (None, _) => Lookup::Missing,
                    (Some(_), Some(_)) => Lookup::Refused(format!(
                        "names no key id (`kid`), and its issuer has several {algorithm:?} keys"
                    )),
                }
            }
        }
    }
}

/// Where the fetches stand.
#[derive(Debug, Default)]
struct Fetches {
    /// When the last fetch started.
    last: Option<Instant>,
    /// The key set's URL, from the discovery document; fetched again after a failure.
    jwks_uri: Option<String>,
    /// Why the last fetch failed, if it did.
    failure: Option<String>,
}

/// The keys of one issuer, shared with the background fetches.
#[derive(Clone, Debug)]
pub(super) struct IssuerKeys(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    issuer: OidcIssuer,
    fetcher: Fetcher,
    refresh_interval: Duration,
    max_age: Duration,
    keys: RwLock<Arc<KeySet>>,
    fetches: tokio::sync::Mutex<Fetches>,
}

impl IssuerKeys {
    /// No keys yet of `issuer`, fetched as `settings` say.
    pub(super) fn new(issuer: OidcIssuer, settings: &OidcSettings) -> Self {
        Self(Arc::new(Inner {
            issuer,
            fetcher: Fetcher::new(settings.fetch_timeout, settings.allow_http_loopback),
            refresh_interval: settings.refresh_interval,
            max_age: settings.keys_max_age,
            keys: RwLock::default(),
            fetches: tokio::sync::Mutex::default(),
        }))
    }

    /// The issuer, with its audiences.
    pub(super) fn issuer(&self) -> &OidcIssuer {
        &self.0.issuer
    }

    /// The key that can verify `token`: from the cache, or after one fetch if the cache has
    /// none and no fetch was tried within the refresh interval.
    pub(super) async fn key_for(&self, token: &Unverified<'_>) -> Result<Arc<Key>, ApiError> {
        let lookup = || self.0.keys.read().lookup(token.key_id(), token.algorithm());
        let missing = match lookup() {
            Lookup::Found(key) => {
                self.refresh_if_stale();
                return Ok(key);
            }
            Lookup::Refused(why) => return Err(invalid(why)),
            Lookup::Missing => {
                self.0.refresh(false).await;
                lookup()
            }
        };
        match missing {
            Lookup::Found(key) => Ok(key),
            Lookup::Refused(why) => Err(invalid(why)),
            Lookup::Missing => Err(invalid(self.missing_key(token.key_id()).await)),
        }
    }

    /// Whether `key` is among the keys held now (not withdrawn, and not replaced by a newer
    /// fetch).
    pub(super) fn holds(&self, key: &Arc<Key>) -> bool {
        self.0
            .keys
            .read()
            .keys
            .iter()
            .any(|held| Arc::ptr_eq(held, key))
    }

    /// Fetches the keys in the background, unless a fetch is running or one started within
    /// the refresh interval. Outside a Tokio runtime it does nothing: the first token that
    /// needs the keys fetches them.
    pub(super) fn refresh_in_background(&self) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let inner = self.0.clone();
            runtime.spawn(async move { inner.refresh(true).await });
        }
    }

    /// Fetches the keys in the background if they are older than they may be used for
    /// without a fetch.
    pub(super) fn refresh_if_stale(&self) {
        let stale = self
            .0
            .keys
            .read()
            .fetched
            .is_none_or(|fetched| fetched.elapsed() >= self.0.max_age);
        if stale {
            self.refresh_in_background();
        }
    }

    /// Why no key of this issuer verifies a token naming key `id`.
    async fn missing_key(&self, id: Option<&str>) -> String {
        let failure = self.0.fetches.lock().await.failure.clone();
        let key = id.map_or_else(
            || "names no key id (`kid`) and none".to_owned(),
            |id| format!("names the key `{id}`, which none"),
        );
        match failure {
            Some(failure) => format!(
                "{key} of the keys of {} known is: their last fetch failed ({failure})",
                self.0.issuer.issuer
            ),
            None => format!("{key} of the keys of {} is", self.0.issuer.issuer),
        }
    }
}

impl Inner {
    /// Fetches the keys unless a fetch started within the refresh interval; `in_background`,
    /// not at all if a fetch is running (rather than waiting for it).
    async fn refresh(&self, in_background: bool) {
        let mut fetches = if in_background {
            match self.fetches.try_lock() {
                Ok(fetches) => fetches,
                Err(_) => return,
            }
        } else {
            self.fetches.lock().await
        };
        if fetches
            .last
            .is_some_and(|last| last.elapsed() < self.refresh_interval)
        {
            return;
        }
        fetches.last = Some(Instant::now());
        let fetcher = self.fetcher.clone();
        let issuer = self.issuer.issuer.clone();
        let jwks_uri = fetches.jwks_uri.clone();
        let fetched = tokio::task::spawn_blocking(move || {
            let jwks_uri = match jwks_uri {
                Some(uri) => uri,
                None => fetcher.jwks_uri(&issuer)?,
            };
            let keys = fetcher.key_set(&jwks_uri)?;
            Ok::<_, String>((jwks_uri, keys))
        })
        .await
        .unwrap_or_else(|error| Err(format!("the fetch stopped: {error}")));
        match fetched {
            Ok((jwks_uri, jwks)) => {
                let mut keys = Vec::with_capacity(jwks.len());
                for jwk in jwks {
                    let id = jwk.get("kid").cloned().unwrap_or(Value::Null);
                    match Key::from_jwk(jwk) {
                        Ok(key) => keys.push(Arc::new(key)),
                        Err(why) => tracing::debug!(
                            issuer = %self.issuer.issuer, kid = %id, "a key is left out: {why}"
                        ),
                    }
                }
                tracing::info!(issuer = %self.issuer.issuer, keys = keys.len(), "fetched the issuer's keys");
                *self.keys.write() = Arc::new(KeySet {
                    keys,
                    fetched: Some(Instant::now()),
                });
                fetches.jwks_uri = Some(jwks_uri);
                fetches.failure = None;
            }
            Err(failure) => {
                tracing::warn!(issuer = %self.issuer.issuer, "the issuer's keys could not be fetched: {failure}");
                fetches.jwks_uri = None;
                fetches.failure = Some(failure);
            }
        }
    }
}
