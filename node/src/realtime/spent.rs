//! What each identity's subscriptions have made the evaluation task read lately: the order in
//! which it serves their requests.
//!
//! The evaluation task is one queue for every connection's subscriptions and waits. Served in
//! the order they came, one client's 2,500 subscriptions, each refused only once it had read
//! the whole budget of a round, held another client's subscription and `WaitFor` for a minute.
//! So the task serves first the identities that have read least lately, counting the reads of
//! refused subscriptions too: a client that repeats an expensive request goes behind everyone
//! who did not, and a new client, which has read nothing, is served within a round or two
//! whatever others queue. What an identity read is halved every second, so that a client that
//! once subscribed to much is not put behind for long.

use std::collections::HashMap;
use std::time::{Duration, Instant};
use wasmod_abi::Identity;

/// How often what identities read is halved.
const HALF_LIFE: Duration = Duration::from_secs(1);

/// Each identity's reads lately.
#[derive(Debug)]
pub(super) struct Spent {
    reads: HashMap<Identity, usize>,
    halved: Instant,
}

impl Spent {
    /// Nobody has read anything.
    pub(super) fn new() -> Self {
        Self {
            reads: HashMap::new(),
            halved: Instant::now(),
        }
    }

    /// What `identity` has read lately.
    pub(super) fn of(&self, identity: Identity) -> usize {
        self.reads.get(&identity).copied().unwrap_or(0)
    }

    /// Counts `reads` more for `identity`.
    pub(super) fn add(&mut self, identity: Identity, reads: usize) {
        if reads > 0 {
            let spent = self.reads.entry(identity).or_default();
            *spent = spent.saturating_add(reads);
        }
    }

    /// Halves what everyone read once for each [`HALF_LIFE`] since the last time, and forgets
    /// those left with nothing.
    pub(super) fn decay(&mut self) {
        let halvings = self.halved.elapsed().as_secs() / HALF_LIFE.as_secs();
        if halvings == 0 {
            return;
        }
        let shift = u32::try_from(halvings)
            .unwrap_or(u32::MAX)
            .min(usize::BITS - 1);
        self.reads.retain(|_, reads| {
            *reads >>= shift;
            *reads > 0
        });
        self.halved = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_add_up_per_identity_and_halve_with_time() {
        let (one, two) = (Identity::from_bytes([1; 32]), Identity::from_bytes([2; 32]));
        let mut spent = Spent::new();
        spent.add(one, 1000);
        spent.add(one, 24);
        spent.add(two, 1);
        spent.decay();
        assert_eq!(
            (spent.of(one), spent.of(two)),
            (1024, 1),
            "not a second yet"
        );
        spent.halved -= 2 * HALF_LIFE;
        spent.decay();
        assert_eq!((spent.of(one), spent.of(two)), (256, 0));
        assert_eq!(
            spent.reads.len(),
            1,
            "an identity left with nothing is forgotten"
        );
    }
}
