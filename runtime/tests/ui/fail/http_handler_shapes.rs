#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[http_handler]
    fn nowhere(ctx: &mut HttpContext, request: Request) -> Response {
        Response::new(200)
    }

    #[http_handler(GET, "/extra")]
    fn extra(ctx: &mut HttpContext, request: Request, more: u32) -> Response {
        Response::new(200)
    }
}

fn main() {}
