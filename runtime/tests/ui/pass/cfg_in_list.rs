#[path = "../support/ordering.rs"]
mod support;

mod api {
    use wasmod::prelude::*;

    #[reducer]
    pub fn first(_ctx: &ReducerContext) -> Result<(), String> {
        Err("first".into())
    }

    #[cfg(any())]
    #[reducer]
    pub fn missing(_ctx: &ReducerContext) -> Result<(), String> {
        Err("missing".into())
    }

    #[reducer]
    pub fn second(_ctx: &ReducerContext) -> Result<(), String> {
        Err("second".into())
    }
}

#[wasmod::module(reducers(api::first, #[cfg(any())] api::missing, api::second))]
pub struct App;

fn main() {
    let module = wasmod_testing::TestModule::<App>::new();
    assert_eq!(support::names(&module.description().reducers, |d| &d.name), ["first", "second"]);
    assert_eq!(support::check_every_entry_point(&module), 2);
}
