//! Tokens verified lately, so that a client sending the same token on every request pays for
//! its signature once.
//!
//! Verifying a signature costs far more than the rest of a call (RS256 about 0.1 ms, ES256
//! about 0.5 ms with RustCrypto, on the machines of benches/RESULTS.md), and an HTTP client
//! sends its token on every request. What a token proves depends only on the token, the key
//! that verified it and the time, so a hit is checked against both: the key must still be one
//! the issuer publishes (a key withdrawn, or a new fetch of the keys, and the token is
//! verified again) and the token must not have expired (`exp` plus the leeway). Only tokens
//! that verified are kept, so nobody can fill the cache without tokens of an accepted issuer;
//! it holds at most [`OidcSettings::cache_capacity`](super::OidcSettings::cache_capacity)
//! tokens, dropping the expired ones, then arbitrary ones, when full.

use super::keys::{IssuerKeys, Key};
use crate::auth::Verified;
use foldhash::HashMap;
use parking_lot::Mutex;
use std::sync::Arc;

/// A token verified, and what it proved.
#[derive(Debug)]
struct Entry {
    verified: Verified,
    /// The key that verified it, and the keys of its issuer.
    key: Arc<Key>,
    keys: IssuerKeys,
    /// Until when (Unix seconds) it may be used: its `exp` plus the leeway.
    until: u64,
}

/// The tokens verified lately.
#[derive(Debug)]
pub(super) struct VerifiedCache {
    capacity: usize,
    entries: Mutex<HashMap<Box<str>, Entry>>,
}

impl VerifiedCache {
    /// A cache of at most `capacity` tokens (`0`: none kept).
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: Mutex::default(),
        }
    }

    /// What `token` proved, if it was verified with a key its issuer still publishes and may
    /// still be used at `now`.
    pub(super) fn get(&self, token: &str, now: u64) -> Option<Verified> {
        let mut entries = self.entries.lock();
        let entry = entries.get(token)?;
        if now < entry.until && entry.keys.holds(&entry.key) {
            entry.keys.refresh_if_stale();
            return Some(entry.verified.clone());
        }
        entries.remove(token);
        None
    }

    /// Keeps `verified`, what `token` proved with `key` of `keys`, until `until`.
    pub(super) fn put(
        &self,
        token: &str,
        verified: &Verified,
        (key, keys): (Arc<Key>, &IssuerKeys),
        until: u64,
        now: u64,
    ) {
        if self.capacity == 0 {
            return;
        }
        let mut entries = self.entries.lock();
        if entries.len() >= self.capacity {
            entries.retain(|_, entry| now < entry.until);
        }
        if entries.len() >= self.capacity {
            if let Some(any) = entries.keys().next().cloned() {
                entries.remove(&any);
            }
        }
        entries.insert(
            token.into(),
            Entry {
                verified: verified.clone(),
                key,
                keys: keys.clone(),
                until,
            },
        );
    }
}
