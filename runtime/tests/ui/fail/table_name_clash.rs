#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[table(name = things)]
    pub struct Thing {
        #[primary_key]
        id: u64,
    }

    #[table(name = things)]
    pub struct OtherThing {
        #[primary_key]
        id: u64,
    }
}

fn main() {}
