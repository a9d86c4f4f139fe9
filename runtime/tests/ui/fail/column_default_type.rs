#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[table]
    pub struct Typed {
        #[primary_key]
        id: u64,
        #[default("seven")]
        count: u32,
        #[default(7)]
        label: String,
    }
}

fn main() {}
