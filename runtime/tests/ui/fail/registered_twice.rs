#![allow(unused)]

use wasmod::prelude::*;

mod api {
    use super::*;

    #[reducer]
    pub fn send(ctx: &ReducerContext) {}
}

#[wasmod::module(reducers(api::send, api::send))]
pub struct App;

fn main() {}
