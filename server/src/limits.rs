//! What one client may ask of the server at once.
//!
//! The module runs one call at a time (see [`crate::worker`]), so one client sending many
//! calls could fill the queue and starve everyone else. [`CallSlots`] caps the calls each
//! identity has in progress: a call takes a [`CallSlot`] before it is queued, and the slot is
//! freed when the call is done with (answered, or skipped because its requester left). A
//! call over the cap is refused at once (`too_many_calls`, 429).
//!
//! The other limits are enforced where they apply: the body size by the router
//! ([`axum::extract::DefaultBodyLimit`]), the request timeout by a middleware in
//! `routes`, and the queue bound by the worker's channel.

use crate::error::{ApiError, ErrorCode};
use std::collections::HashMap;
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

#[cfg(test)]
mod tests {
    use super::*;

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
