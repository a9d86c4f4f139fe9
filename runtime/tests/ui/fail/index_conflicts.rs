#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[table(index(name = by_pos, columns(x)), index(name = by_pos, columns(y)))]
    pub struct Entity {
        #[primary_key]
        #[index(btree)]
        id: u64,
        x: u32,
        y: u32,
    }
}

fn main() {}
