#[path = "../support/ordering.rs"]
mod support;

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    fn alpha(_ctx: &ReducerContext) -> Result<(), String> {
        Err("alpha".into())
    }

    #[procedure]
    fn fetch(_ctx: &mut ProcedureContext) -> String {
        "fetch".into()
    }

    #[view]
    fn mine(_ctx: &ViewContext) -> Vec<String> {
        vec!["mine".into()]
    }

    #[reducer]
    fn beta(_ctx: &ReducerContext) -> Result<(), String> {
        Err("beta".into())
    }

    #[http_handler(GET, "/page")]
    fn page(_ctx: &mut HttpContext, _request: Request) -> Response {
        Response::text("page")
    }

    #[view]
    fn everyone(_ctx: &AnonymousViewContext) -> Vec<String> {
        vec!["everyone".into()]
    }

    #[procedure]
    fn store(_ctx: &mut ProcedureContext) -> String {
        "store".into()
    }

    #[reducer]
    fn gamma(_ctx: &ReducerContext) -> Result<(), String> {
        Err("gamma".into())
    }

    #[http_handler(POST, "/page")]
    fn post_page(_ctx: &mut HttpContext, _request: Request) -> Response {
        Response::text("post_page")
    }

    #[view]
    fn theirs(_ctx: &ViewContext) -> Vec<String> {
        vec!["theirs".into()]
    }
}

fn main() {
    let module = wasmod_testing::TestModule::<app::Module>::new();
    let def = module.description();
    assert_eq!(support::names(&def.reducers, |d| &d.name), ["alpha", "beta", "gamma"]);
    assert_eq!(support::names(&def.procedures, |d| &d.name), ["fetch", "store"]);
    assert_eq!(support::names(&def.views, |d| &d.name), ["mine", "theirs"]);
    assert_eq!(support::names(&def.anonymous_views, |d| &d.name), ["everyone"]);
    assert_eq!(support::names(&def.http_handlers, |d| &d.name), ["page", "post_page"]);
    assert_eq!(support::check_every_entry_point(&module), 10);
}
