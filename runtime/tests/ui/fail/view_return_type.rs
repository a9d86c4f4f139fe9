#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[view]
    fn count(ctx: &ViewContext) -> u64 {
        0
    }

    #[view]
    fn nothing(ctx: &AnonymousViewContext) {}
}

fn main() {}
