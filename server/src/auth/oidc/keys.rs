//! An issuer's signing keys: fetched, cached, and fetched again only when it is worth it.
//!
//! The keys are fetched at start (in the background), used for [`OidcSettings::keys_max_age`]
//! and then fetched again in the background while the old ones keep working. A token naming a
//! key id that is not among them (the issuer rotated its keys, or the token is forged) makes
//! the request wait for one fetch, but only if none started within
//! [`OidcSettings::refresh_interval`]: a flood of tokens with made-up key ids costs the issuer
//! one fetch per interval, not one per token, and while a fetch runs the others wait for it
//! rather than start their own. A fetch is a task of its own: a request that gives up waiting
//! (its client went away) does not take the fetch with it. A failed fetch keeps the keys there
//! were, for as long as the issuer cannot be reached: an issuer that is down does not lock its
//! users out, and a key it withdrew meanwhile is trusted until a fetch succeeds. A key that is
//! the same in a new fetch is kept as it was, so the tokens it verified stay verified
//! ([`super::cache`]).

use super::fetch::Fetcher;
use super::jwt::{invalid, shortened, Unverified};
use super::{OidcIssuer, OidcSettings};
use crate::error::ApiError;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyOperations, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use parking_lot::{Mutex, RwLock};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How much longer than the fetch's timeout a request waits for a fetch.
const WAIT_MARGIN: Duration = Duration::from_secs(1);

/// One public key of an issuer.
pub(super) struct Key {
    /// `kid`.
    id: Option<String>,
    /// `alg`, if the issuer pinned the key to one algorithm.
    algorithm: Option<Algorithm>,
    /// The algorithm an elliptic-curve key's curve is for (`crv`): ES256 for P-256, ES384 for
    /// P-384.
    curve_algorithm: Option<Algorithm>,
    decoding: DecodingKey,
    /// The JWK as published, to tell the same key in a later fetch.
    published: Value,
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
    fn from_jwk(published: Value) -> Result<Self, String> {
        let id = published
            .get("kid")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let algorithm = match published.get("alg").and_then(Value::as_str) {
            None => None,
            Some(name) => Some(
                name.parse::<Algorithm>()
                    .map_err(|_| format!("its alg `{name}` is not one this server knows"))?,
            ),
        };
        let jwk: Jwk =
            serde_json::from_value(published.clone()).map_err(|error| error.to_string())?;
        if matches!(
            jwk.common.public_key_use,
            Some(ref key_use) if *key_use != PublicKeyUse::Signature
        ) {
            return Err("it is not for signatures (`use`)".to_owned());
        }
        if jwk
            .common
            .key_operations
            .as_ref()
            .is_some_and(|operations| !operations.contains(&KeyOperations::Verify))
        {
            return Err("its `key_ops` do not include `verify`".to_owned());
        }
        let curve_algorithm = match &jwk.algorithm {
            AlgorithmParameters::EllipticCurve(parameters) => match parameters.curve {
                EllipticCurve::P256 => Some(Algorithm::ES256),
                EllipticCurve::P384 => Some(Algorithm::ES384),
                _ => return Err("it is on a curve not accepted (P-256, P-384)".to_owned()),
            },
            AlgorithmParameters::RSA(_) | AlgorithmParameters::OctetKeyPair(_) => None,
            _ => return Err("it is not a public key of a kind accepted (RSA, EC, OKP)".to_owned()),
        };
        let decoding = DecodingKey::from_jwk(&jwk).map_err(|error| error.to_string())?;
        Ok(Self {
            id,
            algorithm,
            curve_algorithm,
            decoding,
            published,
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
            && self.curve_algorithm.is_none_or(|curve| curve == algorithm)
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
            Some(id) => {
                let mut named = self.keys.iter().filter(|key| key.id.as_deref() == Some(id));
                match named.clone().find(|key| key.is_for(algorithm)) {
                    Some(key) => Lookup::Found(key.clone()),
                    None if named.next().is_none() => Lookup::Missing,
                    None => Lookup::Refused(format!(
                        "is signed with {algorithm:?}, which its key `{}` is not for",
                        shortened(id)
                    )),
                }
            }
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
    /// Whether the last fetch failed.
    failed: bool,
    /// The fetch running, if one is: `true` is sent when it is over.
    running: Option<watch::Receiver<bool>>,
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
    fetches: Mutex<Fetches>,
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
            fetches: Mutex::default(),
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
        let looked_up = match lookup() {
            Lookup::Missing => {
                if let Some(fetch) = Inner::refresh(&self.0) {
                    fetch.await;
                }
                lookup()
            }
            held => {
                self.refresh_if_stale();
                held
            }
        };
        match looked_up {
            Lookup::Found(key) => Ok(key),
            Lookup::Refused(why) => Err(invalid(why)),
            Lookup::Missing => Err(invalid(self.missing_key(token.key_id()))),
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
        if tokio::runtime::Handle::try_current().is_ok() {
            drop(Inner::refresh(&self.0));
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

    /// Why no key of this issuer verifies a token naming key `id`. The reason a fetch failed
    /// is the operator's to read (in the server's log), not the client's.
    fn missing_key(&self, id: Option<&str>) -> String {
        let key = id.map_or_else(
            || "names no key id (`kid`), and no key".to_owned(),
            |id| format!("names the key `{}`, which none", shortened(id)),
        );
        let issuer = &self.0.issuer.issuer;
        match self.0.fetches.lock().failed {
            true => {
                format!("{key} of the keys of {issuer} held is: they could not be fetched lately")
            }
            false => format!("{key} of the keys of {issuer} is"),
        }
    }
}

impl Inner {
    /// Starts fetching the keys, unless a fetch is running or one started within the refresh
    /// interval; the wait for the running or started fetch, bounded by the fetch timeout (and
    /// [`WAIT_MARGIN`]), or `None` if there is none.
    fn refresh(inner: &Arc<Self>) -> Option<impl std::future::Future<Output = ()>> {
        let mut fetches = inner.fetches.lock();
        let mut running = match &fetches.running {
            Some(running) => running.clone(),
            None if fetches
                .last
                .is_some_and(|last| last.elapsed() < inner.refresh_interval) =>
            {
                return None
            }
            None => {
                let (done, running) = watch::channel(false);
                fetches.last = Some(Instant::now());
                fetches.running = Some(running.clone());
                let jwks_uri = fetches.jwks_uri.clone();
                let inner = inner.clone();
                tokio::spawn(async move {
                    inner.fetch(jwks_uri).await;
                    inner.fetches.lock().running = None;
                    let _ = done.send(true);
                });
                running
            }
        };
        // The fetch bounds itself by the timeout; the margin is for its turn on the blocking
        // pool, so that a waiter sees the fetch's outcome rather than give up just before it.
        let timeout = inner.fetcher.timeout() + WAIT_MARGIN;
        Some(async move {
            let _ = tokio::time::timeout(timeout, running.wait_for(|done| *done)).await;
        })
    }

    /// Fetches the keys (from `jwks_uri`, or the discovery document's), and keeps them.
    async fn fetch(&self, jwks_uri: Option<String>) {
        let fetcher = self.fetcher.clone();
        let issuer = self.issuer.issuer.clone();
        let fetched = tokio::task::spawn_blocking(move || fetcher.keys_of(&issuer, jwks_uri))
            .await
            .unwrap_or_else(|error| Err(format!("the fetch stopped: {error}")));
        let (jwks_uri, jwks) = match fetched {
            Ok(fetched) => fetched,
            Err(failure) => {
                tracing::warn!(issuer = %self.issuer.issuer, "the issuer's keys could not be fetched: {failure}");
                let mut fetches = self.fetches.lock();
                fetches.jwks_uri = None;
                fetches.failed = true;
                return;
            }
        };
        let held = self.keys.read().clone();
        let mut keys = Vec::with_capacity(jwks.len());
        for jwk in jwks {
            if let Some(same) = held.keys.iter().find(|key| key.published == jwk) {
                keys.push(same.clone());
                continue;
            }
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
        let mut fetches = self.fetches.lock();
        fetches.jwks_uri = Some(jwks_uri);
        fetches.failed = false;
    }
}
