#[path = "../support/ordering.rs"]
mod support;

mod chat {
    use wasmod::prelude::*;

    #[reducer]
    pub fn send(_ctx: &ReducerContext) -> Result<(), String> {
        Err("send".into())
    }

    #[reducer(name = "edit_message")]
    pub fn edit(_ctx: &ReducerContext) -> Result<(), String> {
        Err("edit_message".into())
    }

    #[view]
    pub fn inbox(_ctx: &ViewContext) -> Vec<String> {
        vec!["inbox".into()]
    }
}

use chat::edit as e;
use chat::inbox as mailbox;
use chat::send as s;

#[wasmod::module(reducers(e, s), views(mailbox))]
pub struct App;

fn main() {
    let module = wasmod_testing::TestModule::<App>::new();
    let def = module.description();
    assert_eq!(support::names(&def.reducers, |d| &d.name), ["edit_message", "send"]);
    assert_eq!(support::names(&def.views, |d| &d.name), ["inbox"]);
    assert_eq!(support::check_every_entry_point(&module), 3);
}
