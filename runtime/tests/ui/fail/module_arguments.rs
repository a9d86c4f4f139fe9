#![allow(unused)]

use wasmod::prelude::*;

mod api {
    use super::*;

    #[procedure]
    pub fn fetch(ctx: &mut ProcedureContext) {}
}

#[wasmod::module(procedure(api::fetch))]
pub struct App;

#[wasmod::module(procedures(#[inline] api::fetch))]
pub struct Other;

#[wasmod::module]
pub struct WithFields(u32);

fn main() {}
