//! Handle tables: the opaque `u32`s a module holds for host-side objects.
//!
//! Handles are non-zero (`0` is never a live object's, so a zeroed out-parameter is never
//! mistaken for one) and are not reused while the counter has fresh values left, so a stale
//! handle is reported as unknown rather than silently reaching a newer object.
//!
//! A call holds a handful of handles, usually two (its argument source and its result sink),
//! and every call of an instance starts from an empty table, so the objects live in a vector
//! sorted by handle: fresh handles grow, so an insert is a push; a lookup is a binary search;
//! and clearing keeps the vector's capacity, so a call allocates nothing here once the first
//! calls have sized it. A module that opens many iterators still gets logarithmic lookups.

/// Objects of one kind, by handle.
#[derive(Debug)]
pub(crate) struct Handles<T> {
    /// The live objects, by increasing handle.
    live: Vec<(u32, T)>,
    next: u32,
}

impl<T> Default for Handles<T> {
    fn default() -> Self {
        Self {
            live: Vec::new(),
            next: 1,
        }
    }
}

impl<T> Handles<T> {
    /// Stores `value` under a fresh handle.
    pub(crate) fn insert(&mut self, value: T) -> u32 {
        loop {
            let handle = self.next;
            self.next = self.next.wrapping_add(1);
            if handle == 0 {
                continue;
            }
            // After the counter wraps, a fresh handle may sort before live ones, or be one.
            if let Err(position) = self.position(handle) {
                self.live.insert(position, (handle, value));
                return handle;
            }
        }
    }

    /// The object under `handle`.
    pub(crate) fn get_mut(&mut self, handle: u32) -> Option<&mut T> {
        let position = self.position(handle).ok()?;
        Some(&mut self.live[position].1)
    }

    /// Removes and returns the object under `handle`.
    pub(crate) fn remove(&mut self, handle: u32) -> Option<T> {
        let position = self.position(handle).ok()?;
        Some(self.live.remove(position).1)
    }

    /// Drops every object (the counter keeps going, so old handles stay invalid).
    pub(crate) fn clear(&mut self) {
        self.live.clear();
    }

    /// Removes every object and returns them (the counter keeps going, as for
    /// [`Handles::clear`]).
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.live.drain(..).map(|(_, value)| value)
    }

    /// How many objects are live.
    pub(crate) fn len(&self) -> usize {
        self.live.len()
    }

    /// Gives back the memory of a table that once held many more than `capacity` objects
    /// (a call that opened thousands of handles must not pin their room for the instance's
    /// life).
    pub(crate) fn shrink_to(&mut self, capacity: usize) {
        if self.live.capacity() > capacity {
            self.live.shrink_to(capacity);
        }
    }

    /// How many objects the table has room for without growing.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.live.capacity()
    }

    /// Where `handle` is in `live`, or where it would go.
    fn position(&self, handle: u32) -> Result<usize, usize> {
        match self.live.last() {
            // The common case: a fresh handle, past every live one.
            Some(&(last, _)) if last < handle => Err(self.live.len()),
            None => Err(0),
            Some(_) => self.live.binary_search_by_key(&handle, |&(live, _)| live),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Handles;

    #[test]
    fn handles_are_non_zero_and_not_reused() {
        let mut handles = Handles::default();
        let a = handles.insert("a");
        let b = handles.insert("b");
        assert!(a != 0 && b != 0 && a != b);
        assert_eq!(handles.remove(a), Some("a"));
        assert_eq!(handles.remove(a), None);
        let c = handles.insert("c");
        assert_ne!(c, a);
        assert_eq!(handles.get_mut(b), Some(&mut "b"));
        assert_eq!(handles.get_mut(c), Some(&mut "c"));
        assert_eq!(handles.drain().collect::<Vec<_>>(), ["b", "c"]);
        assert!(handles.get_mut(b).is_none());
        assert!(handles.get_mut(0).is_none());
        assert_ne!(
            handles.insert("d"),
            c,
            "draining does not reset the counter"
        );
        handles.clear();
        assert!(handles.get_mut(c + 1).is_none());
    }

    #[test]
    fn the_counter_skips_zero_and_live_handles() {
        let mut handles = Handles {
            live: Vec::new(),
            next: u32::MAX,
        };
        let last = handles.insert(1);
        assert_eq!(last, u32::MAX);
        let wrapped = handles.insert(2);
        assert_eq!(wrapped, 1);
        handles.next = u32::MAX;
        assert_eq!(
            handles.insert(3),
            2,
            "live handles u32::MAX and 1 are skipped, and 0"
        );
        assert_eq!(handles.get_mut(1), Some(&mut 2));
        assert_eq!(handles.get_mut(2), Some(&mut 3));
        assert_eq!(handles.get_mut(u32::MAX), Some(&mut 1));
        assert_eq!(handles.remove(2), Some(3));
        assert_eq!(handles.remove(u32::MAX), Some(1));
        assert_eq!(handles.remove(1), Some(2));
        assert!(handles.live.is_empty());
    }

    #[test]
    fn a_table_gives_back_its_room() {
        let mut handles = Handles::default();
        for value in 0..10_000 {
            handles.insert(value);
        }
        assert_eq!(handles.len(), 10_000);
        handles.clear();
        handles.shrink_to(16);
        assert!(handles.live.capacity() <= 16);
        assert_eq!(handles.len(), 0);
    }

    #[test]
    fn many_handles_stay_reachable_in_any_removal_order() {
        let mut handles = Handles::default();
        let ids: Vec<u32> = (0..1000).map(|value| handles.insert(value)).collect();
        for (value, id) in ids.iter().enumerate().rev().step_by(2) {
            assert_eq!(handles.remove(*id), Some(value));
        }
        for (mut value, id) in ids.iter().enumerate().step_by(2) {
            assert_eq!(handles.get_mut(*id), Some(&mut value));
        }
    }
}
