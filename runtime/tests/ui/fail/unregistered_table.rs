#![allow(unused)]

use wasmod::prelude::*;

#[table]
pub struct Orphan {
    #[primary_key]
    id: u64,
}

#[wasmod::module(reducers())]
pub struct App;

fn main() {}
