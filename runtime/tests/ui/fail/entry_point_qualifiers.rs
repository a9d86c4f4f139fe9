#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    unsafe fn risky(ctx: &ReducerContext) {}

    #[reducer]
    const fn fixed(ctx: &ReducerContext) {}

    #[reducer]
    extern "C" fn foreign(ctx: &ReducerContext) {}

    #[reducer(name = "")]
    fn nameless(ctx: &ReducerContext) {}

    #[procedure]
    fn opaque(ctx: &mut ProcedureContext, value: impl SchemaType) {}
}

fn main() {}
