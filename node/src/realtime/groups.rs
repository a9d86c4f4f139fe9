//! Connections grouped by their whole subscription, so that a commit's update is built once
//! per group, and encoded and compressed once per group and form, instead of once per
//! connection.
//!
//! Two connections whose query sets are the same (the same query set ids, each holding the
//! same queries: the registry's [`QueryId`]s, which equal queries of different clients share)
//! receive the same `TransactionUpdate` for every commit, byte for byte, except for the
//! caller's own update (which carries its call's request id). So the evaluation task keeps
//! connections by that [`Signature`] and indexes the groups, not the connections, by query: a
//! commit costs one entry per affected query and group, then one cheap push per member, and
//! what it allocates does not grow with the number of members.
//!
//! A group's queries stay registered while it has members (they hold them), so a [`QueryId`]
//! in a signature is never reused for another query.
//!
//! # Changing one query set
//!
//! A connection's signature changes one query set at a time ([`Groups::add`],
//! [`Groups::remove`]), and a client may hold many sets, so a change must not cost the whole
//! signature: rebuilding, hashing and indexing every set on each `Subscribe` made a
//! connection's sets cost quadratic time, during which no commit was evaluated. Each group
//! therefore keeps a key of its signature that one set changes in constant time (the sum of
//! a keyed hash of each set, its id and queries), and groups are found by that key:
//!
//! - a connection alone in its group (the usual case for one whose sets are its own) has its
//!   group changed in place: the set's entries indexed or unindexed, the key moved. That
//!   costs the set's size, not the connection's;
//! - a connection that joins another group of the new signature, or leaves a group it shares
//!   for a new one, costs its whole signature (comparing it, or indexing the new group), as
//!   sharing a group means having the same sets; the caps on query sets and queries
//!   ([`NodeConfig`](crate::NodeConfig)) bound it.
//!
//! The key only narrows the search: signatures are compared before a connection joins a
//! group, since a wrong group would send a client another's rows.

use super::outbox::Outbox;
use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::BuildHasher;
use wasmod_abi::ConnectionId;
use wasmod_subscription::QueryId;

/// What a connection is subscribed to: its query sets by id, each with its queries in
/// increasing id, without repeats and without empty sets.
pub type Signature = BTreeMap<u32, Box<[QueryId]>>;

/// Identifies a group while it has members.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupId(u64);

/// Connections of one signature.
#[derive(Debug)]
struct Group {
    signature: Signature,
    /// The sum of [`Groups::set_key`] over the signature's sets.
    key: u64,
    members: HashMap<ConnectionId, Outbox>,
}

/// Every subscribed connection, by signature, and the groups by query.
#[derive(Debug, Default)]
pub struct Groups {
    groups: HashMap<GroupId, Group>,
    by_key: HashMap<u64, Vec<GroupId>>,
    by_query: HashMap<QueryId, HashSet<(GroupId, u32)>>,
    by_connection: HashMap<ConnectionId, GroupId>,
    /// Keys the hash of a set, so that clients cannot choose sets whose keys collide.
    hasher: RandomState,
    next: u64,
}

/// One query set added to a signature, or taken out of it.
enum Edit {
    Add(u32, Box<[QueryId]>),
    Remove(u32),
}

impl Edit {
    /// The query set the edit changes.
    fn set(&self) -> u32 {
        match self {
            Self::Add(set, _) | Self::Remove(set) => *set,
        }
    }

    /// Whether `signature` has the edited set as the edit leaves it.
    fn done_in(&self, signature: &Signature) -> bool {
        match self {
            Self::Add(set, queries) => signature.get(set) == Some(queries),
            Self::Remove(set) => !signature.contains_key(set),
        }
    }
}

impl Groups {
    /// Adds query set `set` of `queries` to `connection`'s subscription (replacing a set of
    /// that id), whose messages go to `outbox`. A set without queries is no set.
    pub fn add(
        &mut self,
        connection: ConnectionId,
        set: u32,
        queries: &[QueryId],
        outbox: &Outbox,
    ) {
        let mut queries = queries.to_vec();
        queries.sort_unstable();
        queries.dedup();
        self.remove(connection, set);
        if !queries.is_empty() {
            self.edit(connection, Edit::Add(set, queries.into()), outbox);
        }
    }

    /// Takes query set `set` out of `connection`'s subscription, if it is in it.
    pub fn remove(&mut self, connection: ConnectionId, set: u32) {
        let held = self
            .group_of(connection)
            .and_then(|group| self.groups.get(&group))
            .and_then(|group| group.members.get(&connection).map(|outbox| (group, outbox)))
            .filter(|(group, _)| group.signature.contains_key(&set))
            .map(|(_, outbox)| outbox.clone());
        if let Some(outbox) = held {
            self.edit(connection, Edit::Remove(set), &outbox);
        }
    }

    /// Takes `connection` out of its group, dropping the group if it was the last member.
    pub fn leave(&mut self, connection: ConnectionId) {
        let Some(id) = self.by_connection.remove(&connection) else {
            return;
        };
        let Some(group) = self.groups.get_mut(&id) else {
            return;
        };
        group.members.remove(&connection);
        if !group.members.is_empty() {
            return;
        }
        if let Some(group) = self.groups.remove(&id) {
            for (&set, queries) in &group.signature {
                self.unindex(id, set, queries);
            }
            self.unkey(id, group.key);
        }
    }

    /// The groups that hold query `query`, each with the query set that holds it (a group
    /// holding it in two sets appears twice).
    pub fn of(&self, query: QueryId) -> impl Iterator<Item = (GroupId, u32)> + '_ {
        self.by_query.get(&query).into_iter().flatten().copied()
    }

    /// The members of group `group`, with their outbound queues.
    pub fn members(&self, group: GroupId) -> impl Iterator<Item = (ConnectionId, &Outbox)> + '_ {
        self.groups
            .get(&group)
            .into_iter()
            .flat_map(|group| group.members.iter())
            .map(|(&connection, outbox)| (connection, outbox))
    }

    /// The group `connection` is in, if it is subscribed to anything.
    pub fn group_of(&self, connection: ConnectionId) -> Option<GroupId> {
        self.by_connection.get(&connection).copied()
    }

    /// How many groups there are.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether there is no group (no connection is subscribed to anything).
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Forgets every group.
    pub fn clear(&mut self) {
        *self = Self {
            next: self.next,
            hasher: self.hasher.clone(),
            ..Self::default()
        };
    }

    /// Applies `edit` to `connection`'s signature (see the module docs): it joins the group
    /// of its new signature if there is one, changes its group in place if it is alone in
    /// it, or founds a group of its own.
    fn edit(&mut self, connection: ConnectionId, edit: Edit, outbox: &Outbox) {
        let empty = Signature::new();
        let current = self.group_of(connection);
        let (base, base_key, alone) = match current.and_then(|id| self.groups.get(&id)) {
            Some(group) => (&group.signature, group.key, group.members.len() == 1),
            None => (&empty, 0, false),
        };
        let (key, len) = match &edit {
            Edit::Add(set, queries) => (
                base_key.wrapping_add(self.set_key(*set, queries)),
                base.len() + 1,
            ),
            Edit::Remove(set) => match base.get(set) {
                Some(queries) => (
                    base_key.wrapping_sub(self.set_key(*set, queries)),
                    base.len() - 1,
                ),
                None => return,
            },
        };
        if len == 0 {
            return self.leave(connection);
        }
        let is_new_signature = |signature: &Signature| {
            signature.len() == len
                && edit.done_in(signature)
                && base
                    .iter()
                    .all(|(set, queries)| *set == edit.set() || signature.get(set) == Some(queries))
        };
        let existing = self.by_key.get(&key).and_then(|ids| {
            ids.iter().copied().find(|id| {
                self.groups
                    .get(id)
                    .is_some_and(|group| is_new_signature(&group.signature))
            })
        });
        match (existing, current) {
            (Some(group), _) => self.join(connection, group, outbox),
            (None, Some(group)) if alone => self.edit_in_place(group, key, edit),
            (None, _) => {
                let mut signature = base.clone();
                match edit {
                    Edit::Add(set, queries) => signature.insert(set, queries),
                    Edit::Remove(set) => signature.remove(&set),
                };
                let group = self.found(signature, key);
                self.join(connection, group, outbox);
            }
        }
    }

    /// Puts `connection` in group `group`, out of the one it was in.
    fn join(&mut self, connection: ConnectionId, group: GroupId, outbox: &Outbox) {
        self.leave(connection);
        if let Some(found) = self.groups.get_mut(&group) {
            found.members.insert(connection, outbox.clone());
            self.by_connection.insert(connection, group);
        }
    }

    /// Applies `edit` to the signature of group `id` (whose only member changed it), which
    /// then has the key `key`.
    fn edit_in_place(&mut self, id: GroupId, key: u64, edit: Edit) {
        let Some(group) = self.groups.get_mut(&id) else {
            return;
        };
        let old_key = std::mem::replace(&mut group.key, key);
        match edit {
            Edit::Add(set, queries) => {
                for &query in &queries {
                    self.by_query.entry(query).or_default().insert((id, set));
                }
                group.signature.insert(set, queries);
            }
            Edit::Remove(set) => {
                if let Some(queries) = group.signature.remove(&set) {
                    self.unindex(id, set, &queries);
                }
            }
        }
        self.unkey(id, old_key);
        self.by_key.entry(key).or_default().push(id);
    }

    /// A new group of `signature`, whose key is `key`, without members yet, indexed by its
    /// queries.
    fn found(&mut self, signature: Signature, key: u64) -> GroupId {
        let id = GroupId(self.next);
        self.next += 1;
        for (&set, queries) in &signature {
            for &query in queries {
                self.by_query.entry(query).or_default().insert((id, set));
            }
        }
        self.by_key.entry(key).or_default().push(id);
        self.groups.insert(
            id,
            Group {
                signature,
                key,
                members: HashMap::new(),
            },
        );
        id
    }

    /// Takes group `id`'s set `set` of `queries` out of the query index.
    fn unindex(&mut self, id: GroupId, set: u32, queries: &[QueryId]) {
        for query in queries {
            if let Some(holders) = self.by_query.get_mut(query) {
                holders.remove(&(id, set));
                if holders.is_empty() {
                    self.by_query.remove(query);
                }
            }
        }
    }

    /// Takes group `id` out of the groups of key `key`.
    fn unkey(&mut self, id: GroupId, key: u64) {
        if let Some(ids) = self.by_key.get_mut(&key) {
            ids.retain(|&other| other != id);
            if ids.is_empty() {
                self.by_key.remove(&key);
            }
        }
    }

    /// The share of query set `set` of `queries` in a signature's key.
    fn set_key(&self, set: u32, queries: &[QueryId]) -> u64 {
        self.hasher.hash_one((set, queries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realtime::outbox::{self, Bounds};

    fn connection(n: u8) -> ConnectionId {
        ConnectionId::from_bytes([n; 16])
    }

    fn outbox() -> Outbox {
        let bounds = Bounds {
            messages: 4,
            bytes: 1024,
        };
        outbox::channel(bounds, Default::default()).0
    }

    /// A registry with `count` distinct queries, and their ids.
    fn queries(count: usize) -> Vec<QueryId> {
        use std::sync::Arc;
        use wasmod_abi::{AlgebraicType, ModuleDef, TableDef};
        let mut def = ModuleDef::default();
        let table =
            TableDef::of_columns(&mut def.typespace, "T", "t", &[("id", AlgebraicType::U64)]);
        def.tables.push(table);
        let catalog = Arc::new(wasmod_subscription::Catalog::new(&def).expect("no filters"));
        let mut registry = wasmod_subscription::Subscriptions::new(catalog.clone());
        (0..count)
            .map(|n| {
                let text = format!("SELECT * FROM t WHERE id = {n}");
                let query = wasmod_subscription::Query::parse(&catalog, &text).expect("a query");
                registry
                    .add(query.bind(wasmod_abi::Identity::ZERO))
                    .expect("added")
            })
            .collect()
    }

    /// Subscribes `connection` to `sets`, one set at a time, in order.
    fn subscribe(groups: &mut Groups, connection: ConnectionId, sets: &[(u32, &[QueryId])]) {
        let outbox = outbox();
        for &(set, queries) in sets {
            groups.add(connection, set, queries, &outbox);
        }
    }

    #[test]
    fn connections_with_the_same_query_sets_share_a_group_whatever_the_order() {
        let q = queries(3);
        let mut groups = Groups::default();
        subscribe(
            &mut groups,
            connection(1),
            &[(1, &[q[0], q[1]]), (2, &[q[2]])],
        );
        subscribe(
            &mut groups,
            connection(2),
            &[(2, &[q[2]]), (1, &[q[1], q[0], q[1]])],
        );
        subscribe(
            &mut groups,
            connection(3),
            &[(2, &[q[0], q[1]]), (1, &[q[2]])],
        );
        subscribe(&mut groups, connection(4), &[(1, &[q[0]]), (2, &[q[2]])]);
        let group = groups.group_of(connection(1)).expect("grouped");
        assert_eq!(groups.group_of(connection(2)), Some(group));
        assert_ne!(groups.group_of(connection(3)), Some(group), "other set ids");
        assert_ne!(groups.group_of(connection(4)), Some(group), "other queries");
        assert_eq!(groups.len(), 3);
        let mut members: Vec<_> = groups.members(group).map(|(c, _)| c).collect();
        members.sort();
        assert_eq!(members, [connection(1), connection(2)]);
        let mut holders: Vec<_> = groups.of(q[0]).collect();
        holders.sort();
        assert_eq!(holders.len(), 3, "{holders:?}");
        assert_eq!(groups.of(q[2]).count(), 3);
    }

    #[test]
    fn removing_sets_and_leaving_drop_empty_groups_and_their_index() {
        let q = queries(2);
        let mut groups = Groups::default();
        subscribe(&mut groups, connection(1), &[(1, &[q[0]])]);
        subscribe(&mut groups, connection(2), &[(1, &[q[0]])]);
        subscribe(&mut groups, connection(1), &[(2, &[q[1]])]);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups.of(q[1]).count(), 1);
        groups.leave(connection(1));
        assert_eq!(groups.len(), 1);
        assert_eq!(groups.of(q[1]).count(), 0, "the group holding q1 is gone");
        groups.remove(connection(2), 7);
        assert_eq!(groups.len(), 1, "no set 7: nothing changes");
        groups.remove(connection(2), 1);
        assert!(groups.is_empty());
        assert_eq!(groups.group_of(connection(2)), None);
        assert_eq!(groups.of(q[0]).count(), 0);
        subscribe(&mut groups, connection(3), &[(1, &[])]);
        assert!(groups.is_empty(), "a set without queries is no set");
    }

    #[test]
    fn a_query_in_two_sets_of_a_group_is_held_twice() {
        let q = queries(1);
        let mut groups = Groups::default();
        subscribe(&mut groups, connection(1), &[(1, &[q[0]]), (2, &[q[0]])]);
        let mut holders: Vec<_> = groups.of(q[0]).map(|(_, set)| set).collect();
        holders.sort();
        assert_eq!(holders, [1, 2]);
    }

    /// A connection alone in its group changes it in place, whatever it already holds: the
    /// group stays (a new one would have cost indexing every set again), and its index
    /// follows each set.
    #[test]
    fn a_connection_alone_changes_its_group_in_place() {
        let q = queries(3);
        let mut groups = Groups::default();
        subscribe(&mut groups, connection(1), &[(1, &[q[0]])]);
        let group = groups.group_of(connection(1)).expect("grouped");
        subscribe(
            &mut groups,
            connection(1),
            &[(2, &[q[1]]), (3, &[q[2], q[0]])],
        );
        assert_eq!(groups.group_of(connection(1)), Some(group));
        groups.remove(connection(1), 1);
        assert_eq!(groups.group_of(connection(1)), Some(group));
        assert_eq!(groups.len(), 1);
        let mut holders: Vec<_> = groups.of(q[0]).collect();
        holders.sort();
        assert_eq!(holders, [(group, 3)]);
        assert_eq!(groups.of(q[1]).collect::<Vec<_>>(), [(group, 2)]);
        // Another connection that comes to hold the same sets joins the group; one that then
        // changes leaves it for a group of its own, and the first keeps its group.
        subscribe(
            &mut groups,
            connection(2),
            &[(3, &[q[0], q[2]]), (2, &[q[1]])],
        );
        assert_eq!(groups.group_of(connection(2)), Some(group));
        assert_eq!(groups.len(), 1);
        groups.remove(connection(2), 3);
        assert_eq!(groups.group_of(connection(1)), Some(group));
        let other = groups.group_of(connection(2)).expect("grouped");
        assert_ne!(other, group);
        assert_eq!(groups.of(q[1]).count(), 2);
        assert_eq!(groups.of(q[2]).collect::<Vec<_>>(), [(group, 3)]);
        // And when the first gets to the second's sets, it joins that group; its own is gone.
        groups.remove(connection(1), 3);
        assert_eq!(groups.group_of(connection(1)), Some(other));
        assert_eq!(groups.len(), 1);
        assert_eq!(groups.of(q[2]).count(), 0);
    }
}
