#![allow(unused)]

use wasmod::prelude::*;

const MINE: &str = "owner = :sender";

#[wasmod::module]
mod app {
    use super::*;

    #[table(visibility = "owner = :sender")]
    pub struct Secret {
        #[primary_key]
        id: u64,
        owner: Identity,
    }

    #[table(private, visibility = "owner = :sender")]
    pub struct Hidden {
        #[primary_key]
        id: u64,
        owner: Identity,
    }

    #[table(public, visibility = MINE)]
    pub struct Named {
        #[primary_key]
        id: u64,
        owner: Identity,
    }

    #[table(public, visibility = 1)]
    pub struct Numbered {
        #[primary_key]
        id: u64,
        owner: Identity,
    }
}

fn main() {}
