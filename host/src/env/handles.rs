//! Handle tables: the opaque `u32`s a module holds for host-side objects.
//!
//! Handles are non-zero (`0` is never valid, so a zeroed out-parameter is never mistaken for
//! one) and are not reused while the counter has fresh values left, so a stale handle is
//! reported as unknown rather than silently reaching a newer object.
//!
//! A call holds a handful of handles, usually two (its argument source and its result sink), so
//! they live in a `BTreeMap`: no hashing on the path of every call, and still logarithmic for a
//! module that opens many iterators.

use std::collections::BTreeMap;

/// Objects of one kind, by handle.
#[derive(Debug)]
pub(crate) struct Handles<T> {
    live: BTreeMap<u32, T>,
    next: u32,
}

impl<T> Default for Handles<T> {
    fn default() -> Self {
        Self {
            live: BTreeMap::new(),
            next: 1,
        }
    }
}

impl<T> Handles<T> {
    /// Stores `value` under a fresh handle.
    pub(crate) fn insert(&mut self, value: T) -> u32 {
        while self.next == 0 || self.live.contains_key(&self.next) {
            self.next = self.next.wrapping_add(1);
        }
        let handle = self.next;
        self.next = self.next.wrapping_add(1);
        self.live.insert(handle, value);
        handle
    }

    /// The object under `handle`.
    pub(crate) fn get_mut(&mut self, handle: u32) -> Option<&mut T> {
        self.live.get_mut(&handle)
    }

    /// Removes and returns the object under `handle`.
    pub(crate) fn remove(&mut self, handle: u32) -> Option<T> {
        self.live.remove(&handle)
    }

    /// Drops every object (the counter keeps going, so old handles stay invalid).
    pub(crate) fn clear(&mut self) {
        self.live.clear();
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
        handles.clear();
        assert!(handles.get_mut(b).is_none());
    }

    #[test]
    fn the_counter_skips_zero_and_live_handles() {
        let mut handles = Handles {
            live: Default::default(),
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
    }
}
