//! A module's entry points by name and its HTTP routes, hashed once per module.
//!
//! Clients name what they call; the ABI numbers it (an id is a position in its list of the
//! description). Walking the lists would cost a string comparison per entry point on every
//! call, so the names (and the routes) are hashed once, when the module's description is
//! installed, and every call does one lookup. The names are the module's, not the caller's,
//! so a fast hash is safe here: a caller cannot add keys.

use crate::schedule::Schedules;
use foldhash::fast::FixedState;
use std::collections::HashMap;
use wasmod_abi::http::Method;
use wasmod_abi::route::{Routed, Routes};
use wasmod_abi::{EntryKind, Lifecycle, ModuleDef};

/// An entry point of the module, as a name finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A reducer: its id, and the lifecycle it serves if it is a lifecycle reducer.
    Reducer {
        /// Its position in the description's reducers.
        id: u32,
        /// `Some` for the lifecycle reducers, which only the host calls.
        lifecycle: Option<Lifecycle>,
    },
    /// A procedure, by id.
    Procedure(u32),
    /// A view that sees its caller, by id.
    View(u32),
    /// A view that does not, by id.
    AnonymousView(u32),
    /// An HTTP handler, by id (called by route, not by name).
    HttpHandler(u32),
}

impl Entry {
    /// What kind of entry point this is.
    pub(crate) fn kind(self) -> EntryKind {
        match self {
            Self::Reducer { .. } => EntryKind::Reducer,
            Self::Procedure(_) => EntryKind::Procedure,
            Self::View(_) => EntryKind::View,
            Self::AnonymousView(_) => EntryKind::AnonymousView,
            Self::HttpHandler(_) => EntryKind::HttpHandler,
        }
    }
}

/// The entry points of one module by name, its HTTP handlers by route, and its schedule
/// tables (whose reducers only the host calls).
#[derive(Debug, Default)]
pub(crate) struct Entries {
    by_name: HashMap<Box<str>, Entry, FixedState>,
    /// The handlers by method and route pattern (`/accounts/{name}`): a module has few.
    routes: Routes<Method>,
    schedules: Schedules,
}

impl Entries {
    /// The index of `module`'s entry points. Names and routes are unique in a module that
    /// passed the loader's checks; should one repeat, the first in description order wins,
    /// as a walk of the lists would find it.
    pub(crate) fn new(module: &ModuleDef) -> Self {
        let ids = |count: usize| (0..count).map(|id| id as u32);
        let reducers = module.reducers.iter().zip(ids(module.reducers.len()));
        let reducers = reducers.map(|(def, id)| {
            let lifecycle = def.lifecycle;
            (def.name.as_str(), Entry::Reducer { id, lifecycle })
        });
        let procedures = module.procedures.iter().zip(ids(module.procedures.len()));
        let procedures = procedures.map(|(def, id)| (def.name.as_str(), Entry::Procedure(id)));
        let views = module.views.iter().zip(ids(module.views.len()));
        let views = views.map(|(def, id)| (def.name.as_str(), Entry::View(id)));
        let anonymous = module.anonymous_views.iter();
        let anonymous = anonymous.zip(ids(module.anonymous_views.len()));
        let anonymous = anonymous.map(|(def, id)| (def.name.as_str(), Entry::AnonymousView(id)));
        let handlers = module
            .http_handlers
            .iter()
            .zip(ids(module.http_handlers.len()));
        let handlers = handlers.map(|(def, id)| (def.name.as_str(), Entry::HttpHandler(id)));

        let mut entries = Self::default();
        for (name, entry) in reducers
            .chain(procedures)
            .chain(views)
            .chain(anonymous)
            .chain(handlers)
        {
            entries.by_name.entry(name.into()).or_insert(entry);
        }
        entries.routes = module.http_routes();
        // A module whose schedules are invalid is refused at load, before this is made.
        entries.schedules = Schedules::of(module).unwrap_or_default();
        entries
    }

    /// The module's schedule tables.
    pub(crate) fn schedules(&self) -> &Schedules {
        &self.schedules
    }

    /// The entry point named `name`.
    pub(crate) fn get(&self, name: &str) -> Option<Entry> {
        self.by_name.get(name).copied()
    }

    /// The HTTP handler that answers `method` on `path`, or why none does.
    pub(crate) fn route(&self, method: Method, path: &str) -> Routed<Method> {
        self.routes.route(method, path)
    }
}

#[cfg(test)]
mod tests {
    use super::{Entries, Entry};
    use wasmod_abi::http::Method;
    use wasmod_abi::route::Routed;
    use wasmod_abi::{
        AlgebraicType, HttpHandlerDef, Lifecycle, ModuleDef, ProcedureDef, ReducerDef, ViewDef,
    };

    fn reducer(name: &str, lifecycle: Option<Lifecycle>) -> ReducerDef {
        ReducerDef {
            name: name.into(),
            params: Vec::new(),
            lifecycle,
        }
    }

    fn view(name: &str) -> ViewDef {
        ViewDef {
            name: name.into(),
            params: Vec::new(),
            returns: AlgebraicType::U8,
        }
    }

    fn handler(name: &str, method: Method, path: &str) -> HttpHandlerDef {
        HttpHandlerDef {
            name: name.into(),
            method,
            path: path.into(),
        }
    }

    fn module() -> ModuleDef {
        ModuleDef {
            reducers: vec![
                reducer("init", Some(Lifecycle::Init)),
                reducer("send", None),
                reducer("shadowed", None),
            ],
            procedures: vec![ProcedureDef {
                name: "fetch".into(),
                params: Vec::new(),
                returns: AlgebraicType::U8,
            }],
            views: vec![view("mine"), view("shadowed")],
            anonymous_views: vec![view("all")],
            http_handlers: vec![
                handler("get_item", Method::Get, "/item"),
                handler("put_item", Method::Put, "/item"),
                handler("get_other", Method::Get, "/other"),
                handler("get_item_again", Method::Get, "/item"),
            ],
            ..ModuleDef::default()
        }
    }

    #[test]
    fn names_find_their_kind_and_id() {
        let entries = Entries::new(&module());
        let init = Some(Lifecycle::Init);
        assert_eq!(
            entries.get("init"),
            Some(Entry::Reducer {
                id: 0,
                lifecycle: init
            })
        );
        let send = Entry::Reducer {
            id: 1,
            lifecycle: None,
        };
        assert_eq!(entries.get("send"), Some(send));
        assert_eq!(entries.get("fetch"), Some(Entry::Procedure(0)));
        assert_eq!(entries.get("mine"), Some(Entry::View(0)));
        assert_eq!(entries.get("all"), Some(Entry::AnonymousView(0)));
        assert_eq!(entries.get("put_item"), Some(Entry::HttpHandler(1)));
        assert_eq!(entries.get("Send"), None);
        assert_eq!(entries.get(""), None);
        for (kind, name) in module().entry_point_names() {
            if name != "shadowed" {
                assert_eq!(entries.get(name).map(Entry::kind), Some(kind), "{name}");
            }
        }
    }

    #[test]
    fn a_repeated_name_or_route_finds_the_first() {
        let entries = Entries::new(&module());
        let shadowed = Entry::Reducer {
            id: 2,
            lifecycle: None,
        };
        assert_eq!(entries.get("shadowed"), Some(shadowed));
        assert_eq!(entries.route(Method::Get, "/item"), Routed::Handler(0));
    }

    #[test]
    fn routes_match_method_and_path() {
        let entries = Entries::new(&module());
        assert_eq!(entries.route(Method::Put, "/item"), Routed::Handler(1));
        assert_eq!(entries.route(Method::Get, "/other"), Routed::Handler(2));
        assert_eq!(
            entries.route(Method::Put, "/other"),
            Routed::WrongMethod(vec![Method::Get])
        );
        assert_eq!(entries.route(Method::Get, "/item/"), Routed::NotFound);
        assert_eq!(entries.route(Method::Get, "/missing"), Routed::NotFound);
    }
}
