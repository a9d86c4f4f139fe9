#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[table]
    pub struct Slot<T> {
        #[primary_key]
        id: u64,
        value: T,
    }
}

fn main() {}
