#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    fn send(ctx: &ViewContext, text: String) {}
}

fn main() {}
