//! A directory of static files served at `/` beside the API (`wasmod serve --web <dir>`): a
//! module's web page, such as the quickstart's chat, from the same origin as the API, so the
//! page needs no CORS and its WebSocket goes to the server that served it.
//!
//! The API's routes keep priority: a file is looked up only for a path no route matches, and
//! a path that is not a file answers the API's JSON `not_found` as before. `/` and
//! directories serve their `index.html`; content types come from the extension
//! (`application/wasm` for `.wasm`, which browsers require to compile it as it streams).

use axum::handler::HandlerWithoutStateExt;
use axum::Router;
use std::path::Path;
use tower_http::services::ServeDir;

/// `router` with the files under `dir` served for the paths none of its routes matches.
pub(crate) fn with_static_files(router: Router, dir: &Path) -> Router {
    let files = ServeDir::new(dir).fallback(super::not_found.into_service());
    router.fallback_service(files)
}
