#![allow(unused)]

#[wasmod::module]
mod app;

fn main() {}
