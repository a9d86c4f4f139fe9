#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[table]
    pub struct Entry {
        #[primary_key]
        id: u64,
        #[default]
        missing: u32,
        #[default = 3]
        name_value: u32,
        #[default(1 +)]
        bad_syntax: u32,
        #[default(1)]
        #[default(2)]
        twice: u32,
    }
}

fn main() {}
