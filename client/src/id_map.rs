//! A map by `u32` id, in id order: the connection's query sets.
//!
//! A `Vec` of `(id, value)` kept sorted, searched by bisection, rather than a `BTreeMap`: the
//! connection needs the order (it resubscribes in id order) but holds a handful of entries,
//! added with growing ids (appended), and a second `BTreeMap` instance beside serde_json's
//! `Map` weighed some 6 KB in the browser client's wasm.

/// Values by id, iterated in id order.
#[derive(Debug)]
pub(crate) struct IdMap<V> {
    /// Sorted by id, one entry per id.
    entries: Vec<(u32, V)>,
}

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<V> IdMap<V> {
    /// The position of `id`, or where it would go.
    fn find(&self, id: u32) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&id, |&(key, _)| key)
    }

    /// The value of `id`.
    pub(crate) fn get(&self, id: &u32) -> Option<&V> {
        let at = self.find(*id).ok()?;
        Some(&self.entries[at].1)
    }

    /// The value of `id`, to change.
    pub(crate) fn get_mut(&mut self, id: &u32) -> Option<&mut V> {
        let at = self.find(*id).ok()?;
        Some(&mut self.entries[at].1)
    }

    /// Sets the value of `id`; the value it replaces.
    pub(crate) fn insert(&mut self, id: u32, value: V) -> Option<V> {
        match self.find(id) {
            Ok(at) => Some(std::mem::replace(&mut self.entries[at].1, value)),
            Err(at) => {
                self.entries.insert(at, (id, value));
                None
            }
        }
    }

    /// Removes `id`; its value.
    pub(crate) fn remove(&mut self, id: &u32) -> Option<V> {
        let at = self.find(*id).ok()?;
        Some(self.entries.remove(at).1)
    }

    /// The ids and values, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&u32, &V)> {
        self.entries.iter().map(|(id, value)| (id, value))
    }

    /// The values, in id order, to change.
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, value)| value)
    }

    /// The values, in id order.
    pub(crate) fn into_values(self) -> impl Iterator<Item = V> {
        self.entries.into_iter().map(|(_, value)| value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The same answers as a `BTreeMap` over a sequence of changes in mixed order.
    #[test]
    fn it_answers_as_a_btree_map() {
        let mut ours = IdMap::default();
        let mut theirs = BTreeMap::new();
        let ids = [5u32, 1, 9, 5, 3, 7, 1, 2, 9, 8, 0, 4];
        for (step, &id) in ids.iter().enumerate() {
            let value = step * 10;
            if step % 3 == 2 {
                assert_eq!(ours.remove(&id), theirs.remove(&id), "remove {id}");
            } else {
                assert_eq!(
                    ours.insert(id, value),
                    theirs.insert(id, value),
                    "insert {id}"
                );
            }
            if let (Some(ours), Some(theirs)) = (ours.get_mut(&id), theirs.get_mut(&id)) {
                *ours += 1;
                *theirs += 1;
            }
            for probe in 0..10 {
                assert_eq!(ours.get(&probe), theirs.get(&probe), "get {probe}");
            }
            assert!(ours.iter().eq(theirs.iter()), "order after {id}");
        }
        ours.values_mut().for_each(|value| *value += 2);
        theirs.values_mut().for_each(|value| *value += 2);
        assert!(ours.into_values().eq(theirs.into_values()));
    }
}
