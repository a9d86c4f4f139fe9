#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    fn send(ctx: &ReducerContext, text: &str, tags: Vec<&'static str>) {}

    #[reducer]
    fn pattern(ctx: &ReducerContext, (a, b): (u32, u32)) {}
}

fn main() {}
