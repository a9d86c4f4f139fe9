//! What one client may ask of the server at once.
//!
//! The module runs one call at a time (see [`crate::worker`]), so one client sending many
//! calls could fill the queue and starve everyone else. [`CallSlots`] caps the calls each
//! identity has in progress: a call takes a [`CallSlot`] before it is queued, and the slot is
//! freed when the call is done with (answered, or skipped because its requester left). A
//! call over the cap is refused at once (`too_many_calls`, 429).
//!
//! An identity costs nothing to make, so [`SourceRate`] caps how fast one source address may
//! be given new ones (`POST /v1/identity`, and `GET /v1/subscribe` without a token): each runs
//! a durable `client_connected` commit, and the quickstart keeps a public row per identity.
//! Past the rate the request is refused at once (`too_many_calls`, 429), before any work.
//!
//! The other limits are enforced where they apply: the body size by the router
//! ([`axum::extract::DefaultBodyLimit`]), the request timeout by a middleware in
//! `routes`, and the queue bound by the worker's channel.

use crate::error::{ApiError, ErrorCode};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use wasmod_abi::Identity;

/// Counts the calls each identity has in progress.
#[derive(Clone, Debug)]
pub struct CallSlots {
    max: usize,
    taken: Arc<Mutex<HashMap<Identity, usize>>>,
}

/// One call in progress for an identity; dropping it frees the slot.
#[derive(Debug)]
pub struct CallSlot {
    identity: Identity,
    taken: Arc<Mutex<HashMap<Identity, usize>>>,
}

impl CallSlots {
    /// At most `max` calls in progress per identity (at least one).
    pub fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            taken: Arc::default(),
        }
    }

    /// Takes a slot for `identity`, or refuses with `too_many_calls`.
    pub fn acquire(&self, identity: Identity) -> Result<CallSlot, ApiError> {
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        let count = taken.entry(identity).or_default();
        if *count >= self.max {
            return Err(ApiError::new(
                ErrorCode::TooManyCalls,
                format!(
                    "this identity already has {} calls in progress, the most the server allows",
                    self.max
                ),
            ));
        }
        *count += 1;
        Ok(CallSlot {
            identity,
            taken: self.taken.clone(),
        })
    }
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = taken.get_mut(&self.identity) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                taken.remove(&self.identity);
            }
        }
    }
}

/// How many source addresses a [`SourceRate`] tracks before it forgets those whose
/// allowance is full again.
const TRACKED_SOURCES: usize = 10_000;

/// A rate per source address, `per_minute` requests a minute (a burst of as many, refilled
/// evenly), or none.
#[derive(Debug)]
pub struct SourceRate {
    what: &'static str,
    per_minute: u32,
    limiter: Option<DefaultKeyedRateLimiter<IpAddr>>,
}

impl SourceRate {
    /// At most `per_minute` of `what` a minute from each address; `0` is no limit.
    pub fn new(what: &'static str, per_minute: u32) -> Self {
        let limiter =
            NonZeroU32::new(per_minute).map(|rate| RateLimiter::keyed(Quota::per_minute(rate)));
        Self {
            what,
            per_minute,
            limiter,
        }
    }

    /// Counts one request from `source`, or refuses it with `too_many_calls`. A request with
    /// no source address (the router called in-process) is not limited.
    pub fn check(&self, source: Option<IpAddr>) -> Result<(), ApiError> {
        let (Some(limiter), Some(source)) = (&self.limiter, source) else {
            return Ok(());
        };
        if limiter.len() >= TRACKED_SOURCES {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        limiter.check_key(&source).map_err(|_| {
            ApiError::new(
                ErrorCode::TooManyCalls,
                format!(
                    "too many {} from this address: at most {} a minute; try again later",
                    self.what, self.per_minute
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_rate_refuses_past_its_burst_per_address_only() {
        let rate = SourceRate::new("new identities", 3);
        let (one, two): (IpAddr, IpAddr) =
            ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        for _ in 0..3 {
            rate.check(Some(one)).expect("within the burst");
        }
        let refused = rate.check(Some(one)).expect_err("past it");
        assert_eq!(refused.code, ErrorCode::TooManyCalls);
        assert!(
            refused.message.contains("at most 3 a minute"),
            "{}",
            refused.message
        );
        rate.check(Some(two))
            .expect("another address is not affected");
        rate.check(None)
            .expect("in-process requests are not limited");
        let off = SourceRate::new("new identities", 0);
        for _ in 0..100 {
            off.check(Some(one)).expect("no limit");
        }
    }

    #[test]
    fn slots_are_capped_per_identity_and_freed_on_drop() {
        let slots = CallSlots::new(2);
        let alice = Identity::from_bytes([1; 32]);
        let bob = Identity::from_bytes([2; 32]);
        let first = slots.acquire(alice).expect("a slot");
        let _second = slots.acquire(alice).expect("a slot");
        let refused = slots.acquire(alice).expect_err("over the cap");
        assert_eq!(refused.code, ErrorCode::TooManyCalls);
        let _bob = slots.acquire(bob).expect("others are not affected");
        drop(first);
        let _third = slots.acquire(alice).expect("a slot was freed");
    }
}
