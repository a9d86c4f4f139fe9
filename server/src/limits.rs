//! How fast one source address may ask the server for what costs it.
//!
//! The calls one requester has in progress are the node's to count
//! ([`wasmod_node::NodeConfig::max_calls_per_identity`]); what is counted here is per source address, before a request
//! reaches the node.
//!
//! An identity costs nothing to make, so a [`SourceRate`] caps how fast one source address may
//! be given new ones (`POST /v1/identity`, and `GET /v1/subscribe` without a token): each runs
//! a durable `client_connected` commit, and the quickstart keeps a public row per identity.
//! Another caps the calls an address makes without a token, which no identity's slots hold
//! back over time. Past a rate the request is refused at once (`too_many_calls`, 429, with
//! `Retry-After` saying when the next one is allowed), before any work and before its body is
//! read. A rate counts an IPv6 address by its /64 prefix ([`address_key`]), since one host
//! is commonly given a whole /64, and keeps a bounded table ([`Generations`]) whose every
//! check is O(1).
//!
//! A third rate counts the tokens a source gets wrong (a client token that is not the
//! server's, a wrong operator token), so that neither can be guessed at the speed the server
//! answers. It counts failures only, and refuses every token check of a source past it, the
//! right token's included ([`SourceRate::check_uncounted`]): a guesser cannot tell a right
//! guess from the refusal.
//!
//! The other limits are enforced where they apply: the body size by the router
//! ([`axum::extract::DefaultBodyLimit`]), the request timeout by a middleware in
//! `routes`, and the queue bound by the worker's channel.

use crate::error::{ApiError, ErrorCode, HttpError};
use governor::clock::{Clock, DefaultClock};
use governor::nanos::Nanos;
use governor::state::{InMemoryState, NotKeyed, StateStore};
use governor::{Quota, RateLimiter};
use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use wasmod_node::address_key;

/// The burst of the rate of wrong tokens
/// ([`ServerConfig::failed_tokens_per_second`](crate::ServerConfig::failed_tokens_per_second)),
/// in seconds' worth of it.
pub const FAILED_TOKENS_BURST_SECONDS: NonZeroU32 = NonZeroU32::new(5).unwrap();

/// How many sources (IPv4 addresses, IPv6 /64 prefixes) a [`SourceRate`] tracks at most.
const TRACKED_SOURCES: usize = 10_000;

/// A rate limiter's table of states, bounded: two generations of at most half of
/// `capacity` keys each. A key is looked up in the current one, then in the previous one
/// (and moved to the current); when the current one is full it becomes the previous one and
/// the previous one is dropped. Every check is O(1) (amortised: a drop of half the table every
/// half a table of new keys), and a key is forgotten only once as many other keys as half the
/// table have come since it was last seen: it then starts again with a full allowance, as
/// every new source does.
/// Cheap to clone: the clones share the table.
#[derive(Debug)]
pub struct Generations<K> {
    half: usize,
    tables: Arc<Mutex<[HashMap<K, InMemoryState>; 2]>>,
}

impl<K> Clone for Generations<K> {
    fn clone(&self) -> Self {
        Self {
            half: self.half,
            tables: self.tables.clone(),
        }
    }
}

impl<K> Generations<K> {
    /// A table of at most `capacity` keys (at least 2).
    pub fn new(capacity: usize) -> Self {
        Self {
            half: (capacity / 2).max(1),
            tables: Arc::new(Mutex::new([HashMap::new(), HashMap::new()])),
        }
    }

    /// How many keys are tracked now.
    pub fn len(&self) -> usize {
        let tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        tables[0].len() + tables[1].len()
    }

    /// Whether no key is tracked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<K: Hash + Eq + Clone> StateStore for Generations<K> {
    type Key = K;

    fn measure_and_replace<T, F, E>(&self, key: &K, f: F) -> Result<T, E>
    where
        F: Fn(Option<Nanos>) -> Result<(T, Nanos), E>,
    {
        let mut tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        let [current, previous] = &mut *tables;
        if let Some(state) = current.get(key) {
            return state.measure_and_replace(&NotKeyed::NonKey, f);
        }
        let state = previous.remove(key).unwrap_or_default();
        if current.len() >= self.half {
            *previous = std::mem::take(current);
        }
        current
            .entry(key.clone())
            .or_insert(state)
            .measure_and_replace(&NotKeyed::NonKey, f)
    }
}

/// What a [`SourceRate`] asks of its table about a source: to count a request, or only to
/// look whether one would be allowed now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Ask {
    Count(IpAddr),
    Look(IpAddr),
}

/// A [`SourceRate`]'s table, which counts or only looks as it is asked ([`Ask`]): one
/// limiter, so one clock, decides both.
#[derive(Debug)]
struct Sources(Generations<IpAddr>);

impl StateStore for Sources {
    type Key = Ask;

    fn measure_and_replace<T, F, E>(&self, ask: &Ask, f: F) -> Result<T, E>
    where
        F: Fn(Option<Nanos>) -> Result<(T, Nanos), E>,
    {
        let source = match *ask {
            Ask::Count(source) => return self.0.measure_and_replace(&source, f),
            Ask::Look(source) => source,
        };
        // A look makes no room for the source, and replaces no state: a state is replaced
        // only when its closure succeeds, which this one never does.
        let tables = self.0.tables.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(state) = tables[0].get(&source).or_else(|| tables[1].get(&source)) else {
            return f(None).map(|(outcome, _)| outcome);
        };
        match state.measure_and_replace(&NotKeyed::NonKey, |tat| Err(f(tat))) {
            Ok(outcome) => Ok(outcome),
            Err(decision) => decision.map(|(outcome, _)| outcome),
        }
    }
}

/// A rate per source (IPv4 address, IPv6 /64), or none.
#[derive(Debug)]
pub struct SourceRate {
    what: &'static str,
    /// The rate, as the refusal words it (`30 a minute`).
    allowance: String,
    limiter: Option<RateLimiter<Ask, Sources, DefaultClock>>,
    table: Generations<IpAddr>,
}

impl SourceRate {
    /// At most `per_minute` of `what` a minute from each source (a burst of as many, refilled
    /// evenly); `0` is no limit.
    pub fn new(what: &'static str, per_minute: u32) -> Self {
        let quota = NonZeroU32::new(per_minute).map(Quota::per_minute);
        Self::with_quota(what, quota, format!("{per_minute} a minute"))
    }

    /// At most `per_second` of `what` a second from each source, after a burst of
    /// `burst_seconds` seconds' worth; `0` is no limit.
    pub fn per_second(what: &'static str, per_second: u32, burst_seconds: NonZeroU32) -> Self {
        let quota = NonZeroU32::new(per_second)
            .map(|rate| Quota::per_second(rate).allow_burst(rate.saturating_mul(burst_seconds)));
        let burst = per_second.saturating_mul(burst_seconds.get());
        let allowance = format!("{per_second} a second after a burst of {burst}");
        Self::with_quota(what, quota, allowance)
    }

    fn with_quota(what: &'static str, quota: Option<Quota>, allowance: String) -> Self {
        let table = Generations::new(TRACKED_SOURCES);
        let limiter = quota
            .map(|quota| RateLimiter::new(quota, Sources(table.clone()), DefaultClock::default()));
        Self {
            what,
            allowance,
            limiter,
            table,
        }
    }

    /// How many sources the rate tracks now (at most 10,000).
    pub fn tracked(&self) -> usize {
        self.table.len()
    }

    /// Counts one request from `source`, or refuses it with `too_many_calls` and the time
    /// until the next is allowed. A request with no source address (the router called
    /// in-process) is not limited.
    pub fn check(&self, source: Option<IpAddr>) -> Result<(), HttpError> {
        self.ask(source, Ask::Count)
    }

    /// Refuses `source` as [`check`](Self::check) would, without counting a request: whether
    /// it is past its rate now.
    pub fn check_uncounted(&self, source: Option<IpAddr>) -> Result<(), HttpError> {
        self.ask(source, Ask::Look)
    }

    fn ask(&self, source: Option<IpAddr>, ask: fn(IpAddr) -> Ask) -> Result<(), HttpError> {
        let (Some(limiter), Some(source)) = (&self.limiter, source) else {
            return Ok(());
        };
        limiter
            .check_key(&ask(address_key(source)))
            .map_err(|not_until| self.refusal(not_until.wait_time_from(limiter.clock().now())))
    }

    /// `too_many_calls`, to be tried again after `wait`.
    fn refusal(&self, wait: std::time::Duration) -> HttpError {
        let error = ApiError::new(
            ErrorCode::TooManyCalls,
            format!(
                "too many {} from this address (an IPv6 address counts by its /64): at most \
                 {}; try again in {} s",
                self.what,
                self.allowance,
                wait.as_secs().max(1)
            ),
        );
        HttpError::retry_after(error, wait)
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
    fn looking_at_a_rate_counts_nothing_and_sees_its_refusal() {
        let rate = SourceRate::per_second("wrong tokens", 1, NonZeroU32::new(2).unwrap());
        let one: IpAddr = "10.0.0.1".parse().unwrap();
        for _ in 0..10 {
            rate.check_uncounted(Some(one)).expect("nothing counted");
        }
        assert_eq!(rate.tracked(), 0, "looking makes no room for a source");
        rate.check(Some(one)).expect("the burst's first");
        rate.check_uncounted(Some(one)).expect("not past it yet");
        rate.check(Some(one)).expect("the burst's second");
        let refused = rate.check_uncounted(Some(one)).expect_err("past it now");
        assert_eq!(refused.error.code, ErrorCode::TooManyCalls);
        assert!(
            refused
                .error
                .message
                .contains("at most 1 a second after a burst of 2"),
            "{}",
            refused.error.message
        );
        let wait = refused.retry_after.expect("the wait");
        assert!(wait <= std::time::Duration::from_secs(1), "{wait:?}");
        rate.check_uncounted(Some("10.0.0.2".parse().unwrap()))
            .expect("another address is not affected");
        rate.check_uncounted(None)
            .expect("in-process requests are not limited");
    }

    #[test]
    fn an_ipv6_source_counts_by_its_64_prefix() {
        let rate = SourceRate::new("new identities", 2);
        let ip = |text: &str| Some(text.parse::<IpAddr>().unwrap());
        rate.check(ip("2001:db8:1:2::1")).expect("within the burst");
        rate.check(ip("2001:db8:1:2:ffff:ffff:ffff:ffff"))
            .expect("the same /64: the burst's second");
        rate.check(ip("2001:db8:1:2:abcd::9"))
            .expect_err("the same /64, past its burst");
        rate.check(ip("2001:db8:1:3::1"))
            .expect("another /64 is another source");
        rate.check(ip("192.0.2.7")).expect("an IPv4 address");
        rate.check(ip("::ffff:192.0.2.7"))
            .expect("the same address, IPv4-mapped: the burst's second");
        rate.check(ip("192.0.2.7")).expect_err("past its burst");
        assert_eq!(
            address_key("2001:db8:1:2:3:4:5:6".parse().unwrap()),
            "2001:db8:1:2::".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn the_table_of_sources_is_bounded_and_keeps_the_recent_ones() {
        let rate = SourceRate::new("new identities", 1);
        let source = |n: u32| Some(IpAddr::from(n.to_be_bytes()));
        // A source that has spent its allowance, then many others, each once.
        rate.check(source(0)).expect("its first");
        let others = 3 * TRACKED_SOURCES as u32;
        for n in 1..=others {
            rate.check(source(n)).expect("a new source's first");
            assert!(
                rate.tracked() <= TRACKED_SOURCES,
                "{} tracked",
                rate.tracked()
            );
            if n < TRACKED_SOURCES as u32 / 4 {
                // Seen recently, it is still held to its spent allowance.
                assert!(rate.check(source(0)).is_err());
            }
        }
        // The most recent ones are still tracked.
        assert!(rate.check(source(others)).is_err());
    }
}
