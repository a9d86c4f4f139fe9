//! Shared by the ordering `pass` cases: every entry point of the module under test answers with
//! its own name (reducers fail with it, procedures and views return it, HTTP handlers put it in
//! the body). Calling each name the description lists, in order, must reach the function of
//! that name: the host maps the name to its position in the description, and the module's
//! `match` maps that position back to a function, so any disagreement between the two is seen.

use wasmod::abi::ModuleExports;
use wasmod::http::Request;
use wasmod_testing::{Outcome, TestModule};
use wasmod::Identity;

/// Checks every entry point of `module`; returns how many were checked.
pub fn check_every_entry_point<M: ModuleExports>(module: &TestModule<M>) -> usize {
    let def = module.description().clone();
    let caller = Identity::from_bytes([7; 32]);
    let mut checked = 0;
    for reducer in def.reducers.iter().filter(|reducer| reducer.lifecycle.is_none()) {
        match module.call_reducer(caller, &reducer.name, ()) {
            Outcome::Failed { message, .. } => assert_eq!(message, reducer.name, "reducer `{}` ran another function", reducer.name),
            other => panic!("reducer `{}`: expected it to fail with its name, got {other:?}", reducer.name),
        }
        checked += 1;
    }
    for procedure in &def.procedures {
        let answer: String = module.call_procedure(caller, &procedure.name, ()).unwrap_or_else(|error| panic!("procedure `{}`: {error}", procedure.name));
        assert_eq!(answer, procedure.name);
        checked += 1;
    }
    for view in &def.views {
        let answer: Vec<String> = module.call_view(caller, &view.name, ()).unwrap_or_else(|error| panic!("view `{}`: {error}", view.name));
        assert_eq!(answer, [view.name.clone()]);
        checked += 1;
    }
    for view in &def.anonymous_views {
        let answer: Vec<String> = module.call_anonymous_view(&view.name, ()).unwrap_or_else(|error| panic!("view `{}`: {error}", view.name));
        assert_eq!(answer, [view.name.clone()]);
        checked += 1;
    }
    for handler in &def.http_handlers {
        let response = module.call_http(Request::new(handler.method, handler.path.clone())).unwrap_or_else(|error| panic!("handler `{}`: {error}", handler.name));
        assert_eq!(String::from_utf8_lossy(&response.body), handler.name);
        checked += 1;
    }
    checked
}

/// The names of a category of the description, in order.
pub fn names<'a, T>(defs: &'a [T], name: impl Fn(&'a T) -> &'a str) -> Vec<&'a str> {
    defs.iter().map(name).collect()
}
