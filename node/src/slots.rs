//! How many calls one requester may have in progress at once.
//!
//! The module runs one call at a time (see [`crate::worker`]), so one client sending many
//! calls could fill the queue and starve everyone else. [`CallSlots`] caps the calls each
//! [`Requester`] has in progress: every call that reaches the module's queue (reducers,
//! procedures, views, anonymous views, the module's HTTP handlers) takes a [`CallSlot`] before
//! it is queued, and the slot is freed when the call is done with (answered, or skipped
//! because its requester left). A call with a token counts against its identity; one without
//! (an anonymous view, an HTTP handler) against its source address. A call over the cap is
//! refused at once (`too_many_calls`, 429). The transports (HTTP and WebSocket calls alike)
//! take slots from the node's one [`CallSlots`].

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use wasmod_abi::Identity;
use wasmod_protocol::errors::{ApiError, ErrorCode};

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

/// How many of something each key holds at once, at most `max` per key: the counting under
/// `CallSlots`, the WebSocket connections per identity and the TCP connections per source
/// address (`crate::admission`). A key is forgotten when its count falls back to zero, so
/// the table holds only the keys that hold something.
#[derive(Debug)]
pub struct Counts<K> {
    max: usize,
    taken: Arc<Mutex<HashMap<K, usize>>>,
}

impl<K> Clone for Counts<K> {
    fn clone(&self) -> Self {
        Self {
            max: self.max,
            taken: self.taken.clone(),
        }
    }
}

/// One of what a key holds; dropping it gives it back.
#[derive(Debug)]
pub struct Counted<K: Eq + Hash> {
    key: K,
    taken: Arc<Mutex<HashMap<K, usize>>>,
}

impl<K: Eq + Hash + Clone> Counts<K> {
    /// At most `max` per key (at least one).
    pub fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            taken: Arc::default(),
        }
    }

    /// The most one key may hold.
    pub fn max(&self) -> usize {
        self.max
    }

    /// One more for `key`, or `None` if it holds `max` already.
    pub fn take(&self, key: K) -> Option<Counted<K>> {
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        let count = taken.entry(key.clone()).or_default();
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(Counted {
            key,
            taken: self.taken.clone(),
        })
    }
}

impl<K: Eq + Hash> Drop for Counted<K> {
    fn drop(&mut self) {
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = taken.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                taken.remove(&self.key);
            }
        }
    }
}

/// Counts the calls each requester has in progress.
#[derive(Clone, Debug)]
pub struct CallSlots {
    counts: Counts<Requester>,
}

/// One call in progress for a requester; dropping it frees the slot.
pub type CallSlot = Counted<Requester>;

impl CallSlots {
    /// At most `max` calls in progress per requester (at least one).
    pub fn new(max: usize) -> Self {
        Self {
            counts: Counts::new(max),
        }
    }

    /// Takes a slot for `requester`, or refuses with `too_many_calls`.
    pub fn acquire(&self, requester: Requester) -> Result<CallSlot, ApiError> {
        self.counts.take(requester).ok_or_else(|| {
            ApiError::new(
                ErrorCode::TooManyCalls,
                format!(
                    "{} already has {} calls in progress, the most the server allows",
                    requester.describe(),
                    self.counts.max()
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
