#![allow(unused)]

use wasmod::prelude::*;

mod forgotten {
    use super::*;

    #[reducer]
    pub fn lost(ctx: &ReducerContext) {}
}

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    fn kept(ctx: &ReducerContext) {}
}

fn main() {}
