#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[reducer(on_start)]
    fn start(ctx: &ReducerContext) {}

    #[http_handler(FETCH, "/x")]
    fn fetch(ctx: &mut HttpContext, request: Request) -> Response {
        Response::new(200)
    }

    #[http_handler(GET, "no-slash")]
    fn relative(ctx: &mut HttpContext, request: Request) -> Response {
        Response::new(200)
    }

    #[table(shared)]
    pub struct Thing {
        #[primary_key]
        id: u64,
    }
}

fn main() {}
