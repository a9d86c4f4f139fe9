#[path = "../support/ordering.rs"]
mod support;

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    fn top(_ctx: &ReducerContext) -> Result<(), String> {
        Err("top".into())
    }

    mod players {
        use super::*;

        #[reducer]
        fn join(_ctx: &ReducerContext) -> Result<(), String> {
            Err("join".into())
        }

        pub mod admin {
            use super::*;

            #[reducer]
            fn kick(_ctx: &ReducerContext) -> Result<(), String> {
                Err("kick".into())
            }

            #[view]
            fn banned(_ctx: &AnonymousViewContext) -> Vec<String> {
                vec!["banned".into()]
            }
        }

        #[reducer]
        fn leave(_ctx: &ReducerContext) -> Result<(), String> {
            Err("leave".into())
        }
    }

    #[reducer]
    fn bottom(_ctx: &ReducerContext) -> Result<(), String> {
        Err("bottom".into())
    }
}

fn main() {
    let module = wasmod_testing::TestModule::<app::Module>::new();
    let def = module.description();
    assert_eq!(support::names(&def.reducers, |d| &d.name), ["top", "join", "kick", "leave", "bottom"]);
    assert_eq!(support::check_every_entry_point(&module), 6);
}
