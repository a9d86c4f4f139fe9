//! What one client may ask of the server at once.
//!
//! The module runs one call at a time (see [`crate::worker`]), so one client sending many
//! calls could fill the queue and starve everyone else. [`CallSlots`] caps the calls each
//! [`Requester`] has in progress: every call that reaches the module's queue (reducers,
//! procedures, views, anonymous views, the module's HTTP handlers) takes a [`CallSlot`] before
//! it is queued, and the slot is freed when the call is done with (answered, or skipped
//! because its requester left). A call with a token counts against its identity; one without
//! (an anonymous view, an HTTP handler) against its source address. A call over the cap is
//! refused at once (`too_many_calls`, 429).
//!
//! An identity costs nothing to make, so a [`SourceRate`] caps how fast one source address may
//! be given new ones (`POST /v1/identity`, and `GET /v1/subscribe` without a token): each runs
//! a durable `client_connected` commit, and the quickstart keeps a public row per identity.
//! Another caps the calls an address makes without a token, which no identity's slots hold
//! back over time. Past a rate the request is refused at once (`too_many_calls`, 429, with
//! `Retry-After` saying when the next one is allowed), before any work and before its body is
//! read.
//!
//! The other limits are enforced where they apply: the body size by the router
//! ([`axum::extract::DefaultBodyLimit`]), the request timeout by a middleware in
//! `routes`, and the queue bound by the worker's channel.

use crate::error::{ApiError, ErrorCode, HttpError};
use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use wasmod_abi::Identity;

/// Who a call's slot is counted against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Requester {
    /// The identity of the call's token.
    Identity(Identity),
    /// The source address of a call without a token; `None` for a router called in-process,
    /// whose callers share one count.
    Address(Option<IpAddr>),
}

impl Requester {
    /// The identity if there is one, else the source address.
    pub fn of(identity: Option<Identity>, source: Option<IpAddr>) -> Self {
        identity.map_or(Self::Address(source), Self::Identity)
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Identity(_) => "this identity",
            Self::Address(_) => "this address (without a token)",
        }
    }
}

/// Counts the calls each requester has in progress.
#[derive(Clone, Debug)]
pub struct CallSlots {
    max: usize,
    taken: Arc<Mutex<HashMap<Requester, usize>>>,
}

/// One call in progress for a requester; dropping it frees the slot.
#[derive(Debug)]
pub struct CallSlot {
    requester: Requester,
    taken: Arc<Mutex<HashMap<Requester, usize>>>,
}

impl CallSlots {
    /// At most `max` calls in progress per requester (at least one).
    pub fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            taken: Arc::default(),
        }
    }

    /// Takes a slot for `requester`, or refuses with `too_many_calls`.
    pub fn acquire(&self, requester: Requester) -> Result<CallSlot, ApiError> {
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        let count = taken.entry(requester).or_default();
        if *count >= self.max {
            return Err(ApiError::new(
                ErrorCode::TooManyCalls,
                format!(
                    "{} already has {} calls in progress, the most the server allows",
                    requester.describe(),
                    self.max
                ),
            ));
        }
        *count += 1;
        Ok(CallSlot {
            requester,
            taken: self.taken.clone(),
        })
    }
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = taken.get_mut(&self.requester) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                taken.remove(&self.requester);
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

    /// Counts one request from `source`, or refuses it with `too_many_calls` and the time
    /// until the next is allowed. A request with no source address (the router called
    /// in-process) is not limited.
    pub fn check(&self, source: Option<IpAddr>) -> Result<(), HttpError> {
        let (Some(limiter), Some(source)) = (&self.limiter, source) else {
            return Ok(());
        };
        if limiter.len() >= TRACKED_SOURCES {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        limiter.check_key(&source).map_err(|not_until| {
            let wait = not_until.wait_time_from(limiter.clock().now());
            let error = ApiError::new(
                ErrorCode::TooManyCalls,
                format!(
                    "too many {} from this address: at most {} a minute; try again in {} s",
                    self.what,
                    self.per_minute,
                    wait.as_secs().max(1)
                ),
            );
            HttpError::retry_after(error, wait)
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
        assert_eq!(refused.error.code, ErrorCode::TooManyCalls);
        assert!(
            refused.error.message.contains("at most 3 a minute"),
            "{}",
            refused.error.message
        );
        // One more is earned every 20 s.
        let wait = refused.retry_after.expect("the wait");
        assert!(
            wait > std::time::Duration::from_secs(19) && wait <= std::time::Duration::from_secs(20),
            "{wait:?}"
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
    fn slots_are_capped_per_requester_and_freed_on_drop() {
        let slots = CallSlots::new(2);
        let alice = Requester::Identity(Identity::from_bytes([1; 32]));
        let bob = Requester::Identity(Identity::from_bytes([2; 32]));
        let first = slots.acquire(alice).expect("a slot");
        let _second = slots.acquire(alice).expect("a slot");
        let refused = slots.acquire(alice).expect_err("over the cap");
        assert_eq!(refused.code, ErrorCode::TooManyCalls);
        let _bob = slots.acquire(bob).expect("others are not affected");
        drop(first);
        let _third = slots.acquire(alice).expect("a slot was freed");

        let address = Requester::of(None, Some("10.0.0.1".parse().unwrap()));
        let _one = slots.acquire(address).expect("a slot");
        let _two = slots.acquire(address).expect("a slot");
        let refused = slots.acquire(address).expect_err("over the cap");
        assert!(
            refused.message.contains("this address"),
            "{}",
            refused.message
        );
        let other = Requester::of(None, Some("10.0.0.2".parse().unwrap()));
        let _other = slots.acquire(other).expect("another address");
    }
}
