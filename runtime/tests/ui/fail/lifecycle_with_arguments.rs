#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer(init)]
    fn init(ctx: &ReducerContext, seed: u64) {}
}

fn main() {}
