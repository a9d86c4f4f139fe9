#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[table]
    pub struct Pair(u64, u64);

    #[derive(SchemaType)]
    pub union Bits {
        int: u32,
        float: f32,
    }
}

fn main() {}
