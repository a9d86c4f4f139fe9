#![allow(unused)]

use wasmod::prelude::*;

pub struct Position {
    pub x: f32,
    pub y: f32,
}

#[wasmod::module]
mod app {
    use super::*;

    #[table]
    pub struct Entity {
        #[primary_key]
        id: u64,
        position: Position,
    }
}

fn main() {}
