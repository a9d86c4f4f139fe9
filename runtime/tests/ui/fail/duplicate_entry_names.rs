#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    fn send(ctx: &ReducerContext) {}

    #[procedure(name = "send")]
    fn send_later(ctx: &mut ProcedureContext) {}
}

fn main() {}
