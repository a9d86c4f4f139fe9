#![allow(unused)]

use wasmod::SchemaType;

#[derive(SchemaType)]
pub enum Level {
    Low = 1,
    High = 10,
}

#[derive(SchemaType)]
#[wasmod(rename_all = "camelCase")]
pub struct Point {
    x: i32,
}

fn main() {}
