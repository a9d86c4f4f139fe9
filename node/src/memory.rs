//! What clients make the server hold, in bytes, under one ceiling.
//!
//! Most limits of the server count things: queries, query sets, rows, connections. A client
//! that stays within every count can still choose how large each thing is: the texts of its
//! queries, the answers it asks for and never reads, the pages it reads slowly. Counted one
//! by one, each bound is reasonable; multiplied by the sockets, identities and addresses an
//! attacker can have, they were gigabytes. So what a client makes the server keep on its
//! behalf is also counted in bytes, here, by who makes it hold them:
//!
//! - each **identity** may hold at most an eighth of the ceiling, every connection of it
//!   together ([`IDENTITY_SHARE`]);
//! - each **source address** (an IPv6 address by its /64) at most a quarter, every identity
//!   from it together ([`ADDRESS_SHARE`]);
//! - everything together at most the ceiling (`--max-client-memory`).
//!
//! A [`Charge`] is taken before the bytes are held and gives them back when it is dropped,
//! with what holds them (a query set, a rendered answer, a page on its way out). Past a share,
//! the holder's newest work is refused: never a bystander's, who holds less than its share.
//! Three addresses together cannot fill the ceiling, so a client of a fourth finds room even
//! while they try.
//!
//! The counts are kept under one lock: a charge is taken per request that holds bytes (a
//! subscription, a one-off answer, a page), never per row or per update.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use wasmod_abi::Identity;

/// The part of the ceiling one identity may hold: an eighth.
pub const IDENTITY_SHARE: usize = 8;

/// The part of the ceiling one source address may hold: a quarter.
pub const ADDRESS_SHARE: usize = 4;

/// The smallest default ceiling, and the largest.
const DEFAULT_BOUNDS: (usize, usize) = (64 << 20, 4 << 30);

/// The byte counts of every holder, under one ceiling. Shared by the server's tasks through
/// an `Arc`.
#[derive(Debug)]
pub struct ClientMemory {
    ceiling: usize,
    counts: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    identities: HashMap<Identity, usize>,
    addresses: HashMap<IpAddr, usize>,
}

/// Who a charge is for: the identity (if the request has one) and the source address (if it
/// came over a socket; an IPv6 address is counted by its /64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Holder {
    /// The identity, if any.
    pub identity: Option<Identity>,
    /// The source address's key, if any.
    pub address: Option<IpAddr>,
}

/// Who holds too much for a charge to be taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Full {
    /// The holder's identity, its share taken.
    Identity,
    /// The holder's source address, its share taken.
    Address,
    /// Every holder together, the ceiling reached.
    Server,
}

/// Bytes held for a [`Holder`] until this is dropped.
#[derive(Debug)]
#[must_use = "the bytes are given back when the charge is dropped"]
pub struct Charge {
    memory: Arc<ClientMemory>,
    holder: Holder,
    bytes: usize,
}

/// A charge refused: the holder, or the server, holds too much already.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryRefused {
    /// Who is full.
    pub who: Full,
    /// What it holds already.
    pub held: usize,
    /// What the charge asked for.
    pub bytes: usize,
    /// The most it may hold.
    pub most: usize,
}

impl Holder {
    /// A holder of `identity` from `address` (counted by its key: an IPv6 address by its
    /// /64, an IPv4-mapped one as IPv4).
    pub fn new(identity: Option<Identity>, address: Option<IpAddr>) -> Self {
        Self {
            identity,
            address: address.map(address_key),
        }
    }
}

/// The key an address is counted under: IPv4 (and IPv4-mapped IPv6) as it is, IPv6 by its
/// /64 prefix, which one host is commonly given whole.
pub fn address_key(address: IpAddr) -> IpAddr {
    match address.to_canonical() {
        IpAddr::V6(address) => {
            let prefix = address.to_bits() & !u128::from(u64::MAX);
            IpAddr::V6(std::net::Ipv6Addr::from_bits(prefix))
        }
        v4 => v4,
    }
}

impl ClientMemory {
    /// Counts of at most `ceiling` bytes in all.
    pub fn new(ceiling: usize) -> Arc<Self> {
        Arc::new(Self {
            ceiling,
            counts: Mutex::default(),
        })
    }

    /// The default ceiling for a machine of `physical` bytes of memory: a sixty-fourth of it,
    /// at least 64 MiB and at most 4 GiB (384 MiB on a machine of 24 GiB), in whole MiB so
    /// that it reads as one would write it (`wasmod serve --help` shows it).
    pub fn default_ceiling(physical: u64) -> usize {
        const MIB: usize = 1 << 20;
        let (least, most) = DEFAULT_BOUNDS;
        let ceiling = usize::try_from(physical / 64)
            .unwrap_or(usize::MAX)
            .clamp(least, most);
        ceiling / MIB * MIB
    }

    /// The ceiling.
    pub fn ceiling(&self) -> usize {
        self.ceiling
    }

    /// The bytes held now, every holder together.
    pub fn held(&self) -> usize {
        self.lock().total
    }

    /// Takes `bytes` for `holder`, unless its identity, its address or the server would hold
    /// more than they may.
    pub fn charge(self: &Arc<Self>, holder: Holder, bytes: usize) -> Result<Charge, MemoryRefused> {
        self.take(holder, bytes)?;
        Ok(Charge {
            memory: self.clone(),
            holder,
            bytes,
        })
    }

    /// Counts `bytes` more for `holder`, unless its identity, its address or the server would
    /// hold more than they may.
    fn take(&self, holder: Holder, bytes: usize) -> Result<(), MemoryRefused> {
        let mut counts = self.lock();
        let identity = holder
            .identity
            .map(|identity| counts.identities.get(&identity).copied().unwrap_or(0));
        let address = holder
            .address
            .map(|address| counts.addresses.get(&address).copied().unwrap_or(0));
        let checks = [
            (Full::Identity, identity, self.ceiling / IDENTITY_SHARE),
            (Full::Address, address, self.ceiling / ADDRESS_SHARE),
            (Full::Server, Some(counts.total), self.ceiling),
        ];
        for (who, held, most) in checks {
            if let Some(held) = held {
                if held.saturating_add(bytes) > most {
                    return Err(MemoryRefused {
                        who,
                        held,
                        bytes,
                        most,
                    });
                }
            }
        }
        counts.total += bytes;
        if let Some(identity) = holder.identity {
            *counts.identities.entry(identity).or_default() += bytes;
        }
        if let Some(address) = holder.address {
            *counts.addresses.entry(address).or_default() += bytes;
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn give_back(&self, holder: Holder, bytes: usize) {
        let mut counts = self.lock();
        counts.total -= bytes;
        if let Some(identity) = holder.identity {
            give_back(&mut counts.identities, identity, bytes);
        }
        if let Some(address) = holder.address {
            give_back(&mut counts.addresses, address, bytes);
        }
    }
}

/// Takes `bytes` from `key`'s count, forgetting a key that holds nothing.
fn give_back<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, usize>, key: K, bytes: usize) {
    if let Some(count) = counts.get_mut(&key) {
        *count -= bytes;
        if *count == 0 {
            counts.remove(&key);
        }
    }
}

impl Charge {
    /// The bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Makes the charge `bytes`: for work charged for what it was expected to take, once it
    /// knows what it took. Giving back never fails; taking more is refused as
    /// [`ClientMemory::charge`] is, and then the charge stays as it was.
    pub fn settle(&mut self, bytes: usize) -> Result<(), MemoryRefused> {
        match bytes.checked_sub(self.bytes) {
            Some(more) => self.memory.take(self.holder, more)?,
            None => self.memory.give_back(self.holder, self.bytes - bytes),
        }
        self.bytes = bytes;
        Ok(())
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.memory.give_back(self.holder, self.bytes);
    }
}

impl fmt::Display for MemoryRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whose = match self.who {
            Full::Identity => "this identity holds",
            Full::Address => "clients from this address hold",
            Full::Server => "the server holds",
        };
        write!(
            f,
            "{whose} {} bytes for its clients, and this needs {} more, past the {} it may \
             (--max-client-memory: an identity may hold an eighth of it, an address a quarter)",
            self.held, self.bytes, self.most
        )
    }
}

impl std::error::Error for MemoryRefused {}

/// The machine's memory in bytes (`MemTotal` of `/proc/meminfo`); 8 GiB where it cannot be
/// read.
pub fn physical_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let line = info
                .lines()
                .find_map(|line| line.strip_prefix("MemTotal:"))?;
            let kib = line.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
            kib.checked_mul(1024)
        })
        .unwrap_or(8 << 30)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn holder(identity: u8, address: u8) -> Holder {
        Holder::new(
            Some(Identity::from_bytes([identity; 32])),
            Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, address))),
        )
    }

    #[test]
    fn an_identity_holds_at_most_its_share_and_gets_it_back_when_the_charge_ends() {
        let memory = ClientMemory::new(800);
        let first = memory.charge(holder(1, 1), 60).expect("within the share");
        let refused = memory.charge(holder(1, 1), 41).expect_err("past 100");
        assert_eq!(
            (refused.who, refused.held, refused.most),
            (Full::Identity, 60, 100)
        );
        assert!(refused.to_string().contains("--max-client-memory"));
        let bystander = memory.charge(holder(2, 2), 100).expect("another identity");
        assert_eq!(memory.held(), 160);
        drop(first);
        let mut again = memory.charge(holder(1, 1), 100).expect("given back");
        again.settle(30).expect("giving back");
        let mut more = memory.charge(holder(1, 1), 50).expect("settled at 30");
        assert_eq!(memory.held(), 180);
        let refused = more.settle(71).expect_err("30 and 71 are past 100");
        assert_eq!(
            (refused.who, refused.held, refused.bytes),
            (Full::Identity, 80, 21)
        );
        assert_eq!(
            more.bytes(),
            50,
            "a refused settling leaves the charge as it was"
        );
        more.settle(70).expect("30 and 70 fit");
        assert_eq!(memory.held(), 200);
        drop((again, bystander, more));
        assert_eq!(memory.held(), 0);
        assert!(memory.lock().identities.is_empty() && memory.lock().addresses.is_empty());
    }

    #[test]
    fn fresh_identities_from_one_address_hold_at_most_its_share_and_others_find_room() {
        let memory = ClientMemory::new(800);
        let mut held = Vec::new();
        let mut refused = None;
        for identity in 0..10 {
            match memory.charge(holder(identity, 1), 90) {
                Ok(charge) => held.push(charge),
                Err(error) => refused = Some(error),
            }
        }
        assert_eq!(held.len(), 2, "two charges of 90 in the address's 200");
        assert_eq!(refused.expect("refused").who, Full::Address);
        for address in 2..=4 {
            for identity in 0..2 {
                held.push(
                    memory
                        .charge(holder(16 * address + identity, address), 90)
                        .expect("each address has its share"),
                );
            }
        }
        let full = memory.charge(holder(99, 5), 90).expect_err("the ceiling");
        assert_eq!(full.who, Full::Server);
    }

    #[test]
    fn an_ipv6_address_counts_by_its_64_prefix() {
        let one: IpAddr = "2001:db8::1".parse().expect("an address");
        let other: IpAddr = "2001:db8::ffff:2".parse().expect("an address");
        assert_eq!(address_key(one), address_key(other));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().expect("an address");
        assert_eq!(address_key(mapped), IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)));
    }

    #[test]
    fn the_machine_s_memory_is_read() {
        assert!(physical_memory() >= 64 << 20);
    }

    #[test]
    fn the_default_ceiling_is_a_sixty_fourth_of_the_machine_within_bounds() {
        assert_eq!(ClientMemory::default_ceiling(24 << 30), 384 << 20);
        assert_eq!(ClientMemory::default_ceiling(1 << 30), 64 << 20);
        assert_eq!(ClientMemory::default_ceiling(1 << 40), 4 << 30);
        assert_eq!(ClientMemory::default_ceiling((24 << 30) + 100), 384 << 20);
        assert_eq!(ClientMemory::default_ceiling(25_276_182_528), 376 << 20);
    }
}
