#![allow(unused)]

use wasmod::prelude::*;

mod api {
    use super::*;

    #[reducer]
    pub fn send(ctx: &ReducerContext) {}

    #[view]
    pub fn everyone(ctx: &AnonymousViewContext) -> Vec<u32> {
        Vec::new()
    }
}

#[wasmod::module(views(api::send, api::everyone))]
pub struct App;

fn main() {}
