#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    async fn send(ctx: &ReducerContext, text: String) {}
}

fn main() {}
