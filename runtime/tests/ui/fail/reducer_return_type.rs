#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    fn compute(ctx: &ReducerContext) -> u64 {
        1
    }

    #[reducer]
    fn fallible(ctx: &ReducerContext) -> Result<(), u32> {
        Ok(())
    }
}

fn main() {}
