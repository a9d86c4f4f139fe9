//! Parsing clients' queries: off the runtime's workers, a few at a time, each client within a
//! budget of time.
//!
//! A query of 4,096 tokens parses in about a millisecond, but a `Subscribe` of a megabyte of
//! them takes a few hundred. Parsed on the runtime's workers, that time was taken from every
//! other socket and from `/health` (24 sockets sending such messages put a bystander's
//! `/health` at 386 ms at the median, 2.1 s at worst). So queries are parsed on the blocking
//! pool, at most [`PARSERS`] at once, and what each client's parses took is counted
//! ([`Spent`], halved every second): an identity past [`IDENTITY_BUDGET`], or a source
//! address past [`ADDRESS_BUDGET`], waits before its next parse until it is under it again.
//! The socket waiting reads nothing more meanwhile, so its client is slowed, not the
//! server's other clients, which find a parser free within one parse.

use super::spent::Spent;
use crate::memory::Holder;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use wasmod_abi::Identity;

/// The most queries parsed at once, every socket together: the machine's cores are shared
/// with the module's thread and the evaluation task.
pub const PARSERS: usize = 2;

/// The time an identity's parses may have taken lately (halved every second) before its next
/// one waits: over time, an eighth of a core.
pub const IDENTITY_BUDGET: Duration = Duration::from_millis(250);

/// The same for every identity from one source address together: a quarter of a core.
pub const ADDRESS_BUDGET: Duration = Duration::from_millis(500);

/// How long a client over its budget waits before it looks again.
const WAIT_STEP: Duration = Duration::from_millis(50);

/// The parsers, and what each client's parses took lately.
#[derive(Debug)]
pub struct Parsing {
    turns: Semaphore,
    spent: Mutex<Clients>,
}

/// Microseconds of parsing, per identity and per address.
#[derive(Debug)]
struct Clients {
    identities: Spent<Identity>,
    addresses: Spent<IpAddr>,
}

impl Default for Parsing {
    fn default() -> Self {
        Self {
            turns: Semaphore::new(PARSERS),
            spent: Mutex::new(Clients {
                identities: Spent::new(),
                addresses: Spent::new(),
            }),
        }
    }
}

impl Parsing {
    /// Runs `parse` (the parsing and binding of `holder`'s queries) on the blocking pool once
    /// `holder` is within its budget and a parser is free, and returns what it returned.
    pub async fn parse<T: Send + 'static>(
        &self,
        holder: Holder,
        parse: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        // Looked at again once a parser is free: a client that went past its budget while it
        // waited for one gives its turn to the next rather than holding the queue.
        let _turn = loop {
            if !self.over_budget(holder) {
                let turn = self
                    .turns
                    .acquire()
                    .await
                    .map_err(|_| "the server is shutting down".to_owned())?;
                if !self.over_budget(holder) {
                    break turn;
                }
            }
            tokio::time::sleep(WAIT_STEP).await;
        };
        let started = Instant::now();
        let parsed = tokio::task::spawn_blocking(parse).await;
        self.spend(holder, started.elapsed());
        parsed.map_err(|error| format!("the query could not be parsed: {error}"))
    }

    /// Whether `holder`'s identity or address has parsed more than it may lately.
    fn over_budget(&self, holder: Holder) -> bool {
        let mut clients = self.lock();
        clients.identities.decay();
        clients.addresses.decay();
        let over = |spent: usize, budget: Duration| spent as u128 > budget.as_micros();
        holder
            .identity
            .is_some_and(|identity| over(clients.identities.of(&identity), IDENTITY_BUDGET))
            || holder
                .address
                .is_some_and(|address| over(clients.addresses.of(&address), ADDRESS_BUDGET))
    }

    /// Counts `took` to `holder`.
    fn spend(&self, holder: Holder, took: Duration) {
        let micros = usize::try_from(took.as_micros()).unwrap_or(usize::MAX);
        let mut clients = self.lock();
        if let Some(identity) = holder.identity {
            clients.identities.add(identity, micros);
        }
        if let Some(address) = holder.address {
            clients.addresses.add(address, micros);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Clients> {
        self.spent.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn holder(n: u8) -> Holder {
        Holder::new(Some(Identity::from_bytes([n; 32])), None)
    }

    /// A client whose parse took more than its budget waits for its next; another goes first.
    #[tokio::test]
    async fn a_client_past_its_budget_waits_and_others_go_first() {
        let parsing = Arc::new(Parsing::default());
        let slow = IDENTITY_BUDGET + Duration::from_millis(50);
        parsing
            .parse(holder(1), move || std::thread::sleep(slow))
            .await
            .expect("parsed");
        assert!(parsing.over_budget(holder(1)));
        assert!(!parsing.over_budget(holder(2)));
        let order = Arc::new(Mutex::new(Vec::new()));
        let run = |n: u8| {
            let (parsing, order) = (parsing.clone(), order.clone());
            tokio::spawn(async move {
                parsing.parse(holder(n), || ()).await.expect("parsed");
                order.lock().expect("the order").push(n);
            })
        };
        let (first, second) = (run(1), run(2));
        first.await.expect("joined");
        second.await.expect("joined");
        assert_eq!(*order.lock().expect("the order"), [2, 1]);
    }
}
