//! A directory of static files served at `/` beside the API (`wasmod serve --web <dir>`): a
//! module's web page, such as the quickstart's chat, from the same origin as the API, so the
//! page needs no CORS and its WebSocket goes to the server that served it.
//!
//! The API's routes keep priority: a file is looked up only for a path no route matches, and
//! a path that is not a file answers the API's JSON `not_found` as before. `/` and
//! directories serve their `index.html`; content types come from the extension
//! (`application/wasm` for `.wasm`, which browsers require to compile it as it streams).
//!
//! Only what is inside the directory is served ([`inside`]): a path with a segment that
//! starts with a dot (`.env`, `.git/config`; `.well-known` excepted) is `not_found`, and so is
//! one that leads, through a symbolic link, out of the directory (a link to `/etc/passwd`).
//! Links that stay inside the directory are followed. A path the system cannot resolve (a
//! name or a path too long for it, a file taken for a directory, a directory it may not
//! read) is `not_found` too: it names nothing that could be served, and the files would
//! answer it an empty `500`.

use axum::extract::{Request, State};
use axum::handler::HandlerWithoutStateExt;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tower_http::services::ServeDir;

/// The one dot-named segment served: RFC 8615's well-known locations.
const WELL_KNOWN: &str = ".well-known";

/// `router` with the files under `dir` served for the paths none of its routes matches.
pub(crate) fn with_static_files(router: Router, dir: &Path) -> Router {
    // Checked against the directory's real path, so that a `dir` reached through a link
    // still serves.
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let files = ServeDir::new(&root).fallback(super::not_found.into_service());
    let files = Router::new()
        .fallback_service(files)
        .layer(middleware::from_fn_with_state(Arc::new(root), guard));
    router.fallback_service(files)
}

/// Passes the request on to the files if its path is [`inside`] the root, else `not_found`.
async fn guard(State(root): State<Arc<PathBuf>>, request: Request, next: Next) -> Response {
    if inside(&root, request.uri().path()).await {
        next.run(request).await
    } else {
        super::not_found(request).await.into_response()
    }
}

/// Whether the URL path `path` names something the files may serve: no segment starts with a
/// dot (but [`WELL_KNOWN`]), and what it names (with a directory's `index.html`), links
/// resolved, exists and is under `root` (a real path). A directory without an `index.html`
/// passes: the files answer it `not_found`.
async fn inside(root: &Path, path: &str) -> bool {
    let Some(path) = wasmod_abi::route::percent_decode(path) else {
        return false;
    };
    let segments = path.split('/').filter(|segment| !segment.is_empty());
    let mut named = root.to_path_buf();
    for segment in segments {
        if segment.starts_with('.') && segment != WELL_KNOWN {
            return false;
        }
        named.push(segment);
    }
    let Ok(real) = tokio::fs::canonicalize(&named).await else {
        return false;
    };
    if !real.starts_with(root) {
        return false;
    }
    match tokio::fs::canonicalize(real.join("index.html")).await {
        Ok(index) => index.starts_with(root),
        // A file (`index.html` under it is no directory's), or a directory without one.
        Err(error) => matches!(
            error.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
        ),
    }
}
