#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[table]
    pub struct Entry {
        #[primary_key]
        #[unique]
        id: u64,
        #[auto_inc]
        label: String,
        #[index(hash)]
        x: u32,
        #[unique]
        count: u32,
    }
}

fn main() {}
