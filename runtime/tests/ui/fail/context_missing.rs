#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    fn tick() {}

    #[procedure]
    fn fetch(ctx: &ProcedureContext) {}
}

fn main() {}
