#[path = "../support/ordering.rs"]
mod support;

mod extra {
    use wasmod::prelude::*;

    #[reducer]
    pub fn external(_ctx: &ReducerContext) -> Result<(), String> {
        Err("external".into())
    }
}

#[wasmod::module(reducers(crate::extra::external))]
mod app {
    use wasmod::prelude::*;

    #[reducer]
    fn inline(_ctx: &ReducerContext) -> Result<(), String> {
        Err("inline".into())
    }
}

fn main() {
    let module = wasmod_testing::TestModule::<app::Module>::new();
    assert_eq!(support::names(&module.description().reducers, |d| &d.name), ["external", "inline"]);
    assert_eq!(support::check_every_entry_point(&module), 2);
}
