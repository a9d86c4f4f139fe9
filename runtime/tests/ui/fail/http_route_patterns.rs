#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[http_handler(GET, "/accounts/{name")]
    fn unbalanced(ctx: &mut HttpContext, request: Request) -> Response {
        Response::new(200)
    }

    #[http_handler(GET, "/accounts/{name}/to/{name}")]
    fn twice(ctx: &mut HttpContext, request: Request) -> Response {
        Response::new(200)
    }

    #[http_handler(GET, "/files/x{name}")]
    fn partial(ctx: &mut HttpContext, request: Request) -> Response {
        Response::new(200)
    }

    #[http_handler(GET, "/accounts/{name}")]
    fn account(ctx: &mut HttpContext, request: Request) -> Response {
        Response::new(200)
    }

    #[http_handler(GET, "/accounts/{who}")]
    fn same_route(ctx: &mut HttpContext, request: Request) -> Response {
        Response::new(200)
    }

    #[http_handler(DELETE, "/accounts/{who}")]
    fn other_method(ctx: &mut HttpContext, request: Request) -> Response {
        Response::new(200)
    }
}

fn main() {}
