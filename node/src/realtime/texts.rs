//! The SQL texts of every query set, each held once per node.
//!
//! A query set keeps the texts it was subscribed with, to bind them again when a new build is
//! published ([`super::rebind`]). Clients repeat texts: every connection of an app subscribes
//! the same few queries, and an attacker can subscribe the same 64 KiB query in a thousand
//! sets of each of its sockets (three sockets held 2.97 GB this way). So a text is kept once,
//! shared by every set that holds it, and forgotten with the last of them.
//!
//! What a set's texts cost its client is still charged in full ([`crate::memory`]): the
//! charge bounds what a client may ask the server to keep, the sharing only makes what is
//! kept smaller.

use std::collections::HashSet;
use std::sync::Arc;

/// The texts held by some query set, each once.
#[derive(Debug, Default)]
pub struct Texts {
    held: HashSet<Arc<str>>,
}

impl Texts {
    /// `texts`, each as the node's one copy of it.
    pub fn intern(&mut self, texts: Vec<String>) -> Vec<Arc<str>> {
        texts
            .into_iter()
            .map(|text| match self.held.get(text.as_str()) {
                Some(held) => held.clone(),
                None => {
                    let text: Arc<str> = Arc::from(text);
                    self.held.insert(text.clone());
                    text
                }
            })
            .collect()
    }

    /// Gives back `texts`, a set's that ended: a text no other set holds is forgotten.
    pub fn release(&mut self, texts: Vec<Arc<str>>) {
        for text in texts {
            // This one and the table's: no set holds it any more.
            if Arc::strong_count(&text) == 2 {
                self.held.remove(&text);
            }
        }
    }

    /// Forgets every text whose sets have all gone (after the sessions were dropped whole).
    pub fn prune(&mut self) {
        self.held.retain(|text| Arc::strong_count(text) > 1);
    }

    /// How many distinct texts are held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|text| (*text).to_owned()).collect()
    }

    #[test]
    fn a_text_repeated_in_many_sets_is_held_once_until_the_last_set_ends() {
        let mut held = Texts::default();
        let sets: Vec<_> = (0..1000)
            .map(|_| held.intern(texts(&["SELECT * FROM a", "SELECT * FROM b"])))
            .collect();
        assert_eq!(held.len(), 2);
        assert!(Arc::ptr_eq(&sets[0][0], &sets[999][0]));
        let mut sets = sets.into_iter();
        let first = sets.next().expect("a set");
        held.release(first);
        assert_eq!(held.len(), 2, "998 sets still hold them");
        for set in sets {
            held.release(set);
        }
        assert_eq!(held.len(), 0);
    }

    #[test]
    fn texts_of_sets_dropped_whole_are_pruned() {
        let mut held = Texts::default();
        let kept = held.intern(texts(&["SELECT * FROM a"]));
        drop(held.intern(texts(&["SELECT * FROM b"])));
        held.prune();
        assert_eq!(held.len(), 1);
        drop(kept);
        held.prune();
        assert_eq!(held.len(), 0);
    }
}
