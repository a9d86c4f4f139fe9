#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[table]
    pub struct User {
        #[primary_key]
        id: u64,
        #[primary_key]
        email: String,
    }
}

fn main() {}
