#![allow(unused)]

use wasmod::DecodeBorrowed;

#[derive(DecodeBorrowed)]
pub struct NoLifetime {
    text: String,
}

#[derive(DecodeBorrowed)]
pub struct TwoLifetimes<'a, 'b> {
    name: &'a str,
    blob: &'b [u8],
}

#[derive(DecodeBorrowed)]
pub enum Shape<'a> {
    Named(&'a str),
}

fn main() {}
