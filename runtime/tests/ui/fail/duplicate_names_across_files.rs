#![allow(unused)]

use wasmod::prelude::*;

mod players {
    use super::*;

    #[reducer]
    pub fn join(ctx: &ReducerContext) {}
}

mod lobby {
    use super::*;

    #[reducer(name = "join")]
    pub fn enter(ctx: &ReducerContext) {}
}

#[wasmod::module(reducers(players::join, lobby::enter))]
pub struct Game;

fn main() {}
