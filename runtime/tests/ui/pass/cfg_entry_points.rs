#[path = "../support/ordering.rs"]
mod support;

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    fn always(_ctx: &ReducerContext) -> Result<(), String> {
        Err("always".into())
    }

    #[cfg(any())]
    #[reducer]
    fn never(_ctx: &ReducerContext) -> Result<(), String> {
        Err("never".into())
    }

    #[cfg(all())]
    #[reducer]
    fn enabled(_ctx: &ReducerContext) -> Result<(), String> {
        Err("enabled".into())
    }

    #[cfg(any())]
    mod disabled {
        use super::*;

        #[reducer]
        fn hidden(_ctx: &ReducerContext) -> Result<(), String> {
            Err("hidden".into())
        }

        #[view]
        fn ghost(_ctx: &ViewContext) -> Vec<String> {
            vec!["ghost".into()]
        }
    }

    #[reducer]
    fn after(_ctx: &ReducerContext) -> Result<(), String> {
        Err("after".into())
    }

    #[cfg(not(any()))]
    #[view]
    fn seen(_ctx: &ViewContext) -> Vec<String> {
        vec!["seen".into()]
    }
}

fn main() {
    let module = wasmod_testing::TestModule::<app::Module>::new();
    let def = module.description();
    assert_eq!(support::names(&def.reducers, |d| &d.name), ["always", "enabled", "after"]);
    assert_eq!(support::names(&def.views, |d| &d.name), ["seen"]);
    assert_eq!(support::check_every_entry_point(&module), 4);
}
