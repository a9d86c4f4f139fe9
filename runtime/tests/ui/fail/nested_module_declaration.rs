#![allow(unused)]

#[wasmod::module]
mod app {
    #[wasmod::module]
    mod inner {}
}

fn main() {}
