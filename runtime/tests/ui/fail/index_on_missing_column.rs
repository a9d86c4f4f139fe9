#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[table(index(name = by_place, columns(x, z)))]
    pub struct Entity {
        #[primary_key]
        id: u64,
        x: u32,
        y: u32,
    }
}

fn main() {}
