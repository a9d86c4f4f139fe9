#![allow(unused)]

use wasmod::prelude::*;

pub struct NotEncodable {
    pub x: u32,
}

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    fn take(ctx: &ReducerContext, value: NotEncodable) {}
}

fn main() {}
