#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer(init)]
    fn init(ctx: &ReducerContext) {}

    #[reducer(init)]
    fn also_init(ctx: &ReducerContext) {}
}

fn main() {}
