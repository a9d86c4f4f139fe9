#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer]
    fn store<T: SchemaType>(ctx: &ReducerContext, value: T) {}
}

fn main() {}
