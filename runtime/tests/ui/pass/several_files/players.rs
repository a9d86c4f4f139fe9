use wasmod::prelude::*;

/// A player of the game.
#[table(public)]
pub struct Player {
    #[primary_key]
    pub name: String,
}

#[reducer]
pub fn join(_ctx: &ReducerContext) -> Result<(), String> {
    Err("join".into())
}

#[view]
pub fn roster(_ctx: &AnonymousViewContext) -> Vec<String> {
    vec!["roster".into()]
}
