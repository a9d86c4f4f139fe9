//! A module's HTTP handlers by method and pattern: which one answers a request, or why none
//! does. The host dispatches through it and the server answers `404` or `405` from it.

use crate::Pattern;

/// The handlers' patterns and methods, each with its id (its position in the module's list).
#[derive(Clone, Debug)]
pub struct Routes<M> {
    routes: Vec<(Pattern, M, u32)>,
}

/// Where a request goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Routed<M> {
    /// To the handler with this id.
    Handler(u32),
    /// Nowhere: patterns match the path, but for other methods, these (for `405` and its
    /// `Allow` header), in the handlers' order.
    WrongMethod(Vec<M>),
    /// Nowhere: no pattern matches the path.
    NotFound,
}

impl<M> Default for Routes<M> {
    fn default() -> Self {
        Self { routes: Vec::new() }
    }
}

impl<M: Copy + PartialEq> Routes<M> {
    /// The routes of `handlers`, given as pattern and method in id order. A pattern that does
    /// not parse matches nothing (the `#[http_handler]` macro refuses such patterns, so only a
    /// description written by other means can have one).
    pub fn new<'a>(handlers: impl IntoIterator<Item = (&'a str, M)>) -> Self {
        let routes = (0u32..)
            .zip(handlers)
            .filter_map(|(id, (path, method))| Some((Pattern::parse(path).ok()?, method, id)))
            .collect();
        Self { routes }
    }

    /// The handler for `method` on `path` (without the query): of the patterns of `method`
    /// that match, the one that outranks the others ([`Pattern::outranks`]).
    pub fn route(&self, method: M, path: &str) -> Routed<M> {
        let matching = || {
            self.routes
                .iter()
                .filter(move |(pattern, _, _)| pattern.matches(path))
        };
        let best = matching()
            .filter(|(_, other, _)| *other == method)
            .reduce(|best, next| if next.0.outranks(&best.0) { next } else { best });
        if let Some((_, _, id)) = best {
            return Routed::Handler(*id);
        }
        let mut allowed = Vec::new();
        for (_, other, _) in matching() {
            if !allowed.contains(other) {
                allowed.push(*other);
            }
        }
        if allowed.is_empty() {
            Routed::NotFound
        } else {
            Routed::WrongMethod(allowed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_go_to_the_most_literal_pattern_of_their_method() {
        let routes = Routes::new([
            ("/accounts/{name}", "GET"),
            ("/accounts/new", "GET"),
            ("/accounts/{name}", "DELETE"),
            ("/stats", "GET"),
            ("/bad/{", "GET"),
        ]);
        assert_eq!(routes.route("GET", "/accounts/ann"), Routed::Handler(0));
        assert_eq!(routes.route("GET", "/accounts/new"), Routed::Handler(1));
        assert_eq!(routes.route("DELETE", "/accounts/new"), Routed::Handler(2));
        assert_eq!(routes.route("GET", "/stats"), Routed::Handler(3));
        assert_eq!(
            routes.route("PUT", "/accounts/ann"),
            Routed::WrongMethod(vec!["GET", "DELETE"])
        );
        assert_eq!(
            routes.route("POST", "/stats"),
            Routed::WrongMethod(vec!["GET"])
        );
        assert_eq!(routes.route("GET", "/nowhere"), Routed::NotFound);
        assert_eq!(routes.route("GET", "/bad/{"), Routed::NotFound);
    }
}
