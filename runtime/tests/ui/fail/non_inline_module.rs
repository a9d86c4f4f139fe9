#![allow(unused)]

#[wasmod::module]
struct App {
    field: u32,
}

#[wasmod::module]
fn not_a_module() {}

fn main() {}
