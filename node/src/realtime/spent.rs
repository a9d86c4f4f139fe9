//! What each client has cost lately: the reads its subscriptions made the evaluation task do
//! (the order in which the task serves requests), the time its queries took to parse (how
//! long its next parse waits, [`super::parsing`]).
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
use std::hash::Hash;
use std::time::{Duration, Instant};

/// How often what clients spent is halved.
const HALF_LIFE: Duration = Duration::from_secs(1);

/// What each client (an identity, an address) spent lately.
#[derive(Debug)]
pub(super) struct Spent<K> {
    reads: HashMap<K, usize>,
    halved: Instant,
}

impl<K: Hash + Eq> Spent<K> {
    /// Nobody has read anything.
    pub(super) fn new() -> Self {
        Self {
            reads: HashMap::new(),
            halved: Instant::now(),
        }
    }

    /// What `key` has spent lately.
    pub(super) fn of(&self, key: &K) -> usize {
        self.reads.get(key).copied().unwrap_or(0)
    }

    /// Counts `amount` more for `key`.
    pub(super) fn add(&mut self, key: K, amount: usize) {
        if amount > 0 {
            let spent = self.reads.entry(key).or_default();
            *spent = spent.saturating_add(amount);
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
    use wasmod_abi::Identity;

    #[test]
    fn reads_add_up_per_identity_and_halve_with_time() {
        let (one, two) = (Identity::from_bytes([1; 32]), Identity::from_bytes([2; 32]));
        let mut spent = Spent::new();
        spent.add(one, 1000);
        spent.add(one, 24);
        spent.add(two, 1);
        spent.decay();
        assert_eq!(
            (spent.of(&one), spent.of(&two)),
            (1024, 1),
            "not a second yet"
        );
        spent.halved -= 2 * HALF_LIFE;
        spent.decay();
        assert_eq!((spent.of(&one), spent.of(&two)), (256, 0));
        assert_eq!(
            spent.reads.len(),
            1,
            "an identity left with nothing is forgotten"
        );
    }
}
