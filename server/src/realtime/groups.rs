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
//! The evaluation task regroups a connection whenever its query sets change (subscribe,
//! unsubscribe) and removes it when it closes; a group without members is dropped, with its
//! entries in the query index. A group's queries stay registered while it has members (they
//! hold them), so a [`QueryId`] in a signature is never reused for another query.

use super::outbox::Outbox;
use std::collections::{HashMap, HashSet};
use wasmod_abi::ConnectionId;
use wasmod_subscription::QueryId;

/// What a connection is subscribed to: its query sets in increasing id, each with its
/// queries in increasing id, without repeats and without empty sets.
pub type Signature = Vec<(u32, Vec<QueryId>)>;

/// Identifies a group while it has members.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupId(u64);

/// Connections of one signature.
#[derive(Debug)]
struct Group {
    signature: Signature,
    members: HashMap<ConnectionId, Outbox>,
}

/// Every subscribed connection, by signature, and the groups by query.
#[derive(Debug, Default)]
pub struct Groups {
    groups: HashMap<GroupId, Group>,
    by_signature: HashMap<Signature, GroupId>,
    by_query: HashMap<QueryId, HashSet<(GroupId, u32)>>,
    by_connection: HashMap<ConnectionId, GroupId>,
    next: u64,
}

/// The signature of the query sets `sets`, each an id and its queries, in increasing id.
pub fn signature<'a>(sets: impl IntoIterator<Item = (u32, &'a [QueryId])>) -> Signature {
    sets.into_iter()
        .filter(|(_, queries)| !queries.is_empty())
        .map(|(set, queries)| {
            let mut queries = queries.to_vec();
            queries.sort_unstable();
            queries.dedup();
            (set, queries)
        })
        .collect()
}

impl Groups {
    /// Puts `connection`, whose messages go to `outbox`, in the group of `signature` (its
    /// query sets: out of every group if it has none), leaving the group it was in.
    pub fn regroup(&mut self, connection: ConnectionId, signature: Signature, outbox: &Outbox) {
        let unchanged = self
            .by_connection
            .get(&connection)
            .and_then(|group| self.groups.get(group))
            .is_some_and(|group| group.signature == signature);
        if unchanged {
            return;
        }
        self.leave(connection);
        if signature.is_empty() {
            return;
        }
        let group = match self.by_signature.get(&signature) {
            Some(&group) => group,
            None => self.found(signature),
        };
        if let Some(found) = self.groups.get_mut(&group) {
            found.members.insert(connection, outbox.clone());
        }
        self.by_connection.insert(connection, group);
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
            for (set, queries) in &group.signature {
                for query in queries {
                    if let Some(holders) = self.by_query.get_mut(query) {
                        holders.remove(&(id, *set));
                        if holders.is_empty() {
                            self.by_query.remove(query);
                        }
                    }
                }
            }
            self.by_signature.remove(&group.signature);
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
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Forgets every group.
    pub fn clear(&mut self) {
        *self = Self {
            next: self.next,
            ..Self::default()
        };
    }

    /// A new group of `signature`, without members yet, indexed by its queries.
    fn found(&mut self, signature: Signature) -> GroupId {
        let id = GroupId(self.next);
        self.next += 1;
        for (set, queries) in &signature {
            for &query in queries {
                self.by_query.entry(query).or_default().insert((id, *set));
            }
        }
        self.by_signature.insert(signature.clone(), id);
        self.groups.insert(
            id,
            Group {
                signature,
                members: HashMap::new(),
            },
        );
        id
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

    fn sets(sets: &[(u32, &[QueryId])]) -> Signature {
        signature(sets.iter().copied())
    }

    #[test]
    fn connections_with_the_same_query_sets_share_a_group_whatever_the_order() {
        let q = queries(3);
        let mut groups = Groups::default();
        groups.regroup(connection(1), sets(&[(1, &[q[0], q[1]])]), &outbox());
        groups.regroup(connection(2), sets(&[(1, &[q[1], q[0], q[1]])]), &outbox());
        groups.regroup(connection(3), sets(&[(2, &[q[0], q[1]])]), &outbox());
        groups.regroup(connection(4), sets(&[(1, &[q[0]])]), &outbox());
        let group = groups.group_of(connection(1)).expect("grouped");
        assert_eq!(groups.group_of(connection(2)), Some(group));
        assert_ne!(
            groups.group_of(connection(3)),
            Some(group),
            "another set id"
        );
        assert_ne!(groups.group_of(connection(4)), Some(group), "other queries");
        assert_eq!(groups.len(), 3);
        let mut members: Vec<_> = groups.members(group).map(|(c, _)| c).collect();
        members.sort();
        assert_eq!(members, [connection(1), connection(2)]);
        let mut holders: Vec<_> = groups.of(q[0]).collect();
        holders.sort();
        assert_eq!(holders.len(), 3, "{holders:?}");
        assert_eq!(groups.of(q[2]).count(), 0);
    }

    #[test]
    fn regrouping_and_leaving_drop_empty_groups_and_their_index() {
        let q = queries(2);
        let mut groups = Groups::default();
        groups.regroup(connection(1), sets(&[(1, &[q[0]])]), &outbox());
        groups.regroup(connection(2), sets(&[(1, &[q[0]])]), &outbox());
        groups.regroup(
            connection(1),
            sets(&[(1, &[q[0]]), (2, &[q[1]])]),
            &outbox(),
        );
        assert_eq!(groups.len(), 2);
        assert_eq!(groups.of(q[1]).count(), 1);
        groups.leave(connection(1));
        assert_eq!(groups.len(), 1);
        assert_eq!(groups.of(q[1]).count(), 0, "the group holding q1 is gone");
        groups.regroup(connection(2), sets(&[(1, &[])]), &outbox());
        assert!(groups.is_empty());
        assert_eq!(groups.group_of(connection(2)), None);
        assert_eq!(groups.of(q[0]).count(), 0);
    }

    #[test]
    fn a_query_in_two_sets_of_a_group_is_held_twice() {
        let q = queries(1);
        let mut groups = Groups::default();
        groups.regroup(
            connection(1),
            sets(&[(1, &[q[0]]), (2, &[q[0]])]),
            &outbox(),
        );
        let mut holders: Vec<_> = groups.of(q[0]).map(|(_, set)| set).collect();
        holders.sort();
        assert_eq!(holders, [1, 2]);
    }
}
