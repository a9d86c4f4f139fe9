#![allow(unused)]

use wasmod::prelude::*;

pub struct Service;

impl Service {
    #[reducer]
    fn run(&self, ctx: &ReducerContext) {}
}

fn main() {}
