//! `Server::with_static_files` (`wasmod serve --web`): files at `/`, the API first.

use crate::support::{get, server};
use axum::http::{header, StatusCode};
use wasmod_host::AllowList;
use wasmod_server::ServerConfig;

fn content_type(answer: &crate::support::Answer) -> &str {
    answer
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
}

#[tokio::test]
async fn files_are_served_at_the_root_with_their_types_and_the_api_keeps_its_routes() {
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(dir.path().join("index.html"), "<h1>chat</h1>").expect("write");
    std::fs::create_dir(dir.path().join("pkg")).expect("mkdir");
    std::fs::write(dir.path().join("pkg/client.wasm"), b"\0asm\x01\0\0\0").expect("write");
    std::fs::write(dir.path().join("app.js"), "export {}").expect("write");
    // A file where an API route is: the route wins.
    std::fs::create_dir(dir.path().join("v1")).expect("mkdir");
    std::fs::write(dir.path().join("v1/module"), "not the description").expect("write");
    let router = server(ServerConfig::default(), AllowList::new())
        .with_static_files(dir.path())
        .router();

    let index = get(&router, "/").await;
    assert_eq!(index.status, StatusCode::OK);
    assert_eq!(index.body, b"<h1>chat</h1>");
    assert!(content_type(&index).starts_with("text/html"), "{index:?}");

    let wasm = get(&router, "/pkg/client.wasm").await;
    assert_eq!(wasm.status, StatusCode::OK);
    assert_eq!(content_type(&wasm), "application/wasm");
    let script = get(&router, "/app.js").await;
    assert!(content_type(&script).contains("javascript"), "{script:?}");

    let module = get(&router, "/v1/module").await;
    assert_eq!(module.status, StatusCode::OK);
    assert!(module.json()["tables"].is_array());

    let missing = get(&router, "/nothing.html").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.code(), "not_found");
    let outside = get(&router, "/../Cargo.toml").await;
    assert_eq!(outside.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn without_static_files_the_root_is_not_found() {
    let router = server(ServerConfig::default(), AllowList::new()).router();
    let root = get(&router, "/").await;
    assert_eq!(root.status, StatusCode::NOT_FOUND);
    assert_eq!(root.code(), "not_found");
}

#[tokio::test]
async fn dotfiles_and_links_out_of_the_directory_are_not_served() {
    let dir = tempfile::tempdir().expect("a directory");
    let elsewhere = tempfile::tempdir().expect("a directory");
    let root = dir.path();
    let secret = elsewhere.path().join("secret.txt");
    std::fs::write(&secret, "outside").expect("write");
    std::fs::write(root.join("index.html"), "<h1>chat</h1>").expect("write");
    std::fs::write(root.join(".env"), "SECRET=1").expect("write");
    std::fs::create_dir(root.join(".git")).expect("mkdir");
    std::fs::write(root.join(".git/config"), "[core]").expect("write");
    std::fs::create_dir(root.join(".well-known")).expect("mkdir");
    std::fs::write(root.join(".well-known/security.txt"), "Contact: x").expect("write");
    let link = |target: &std::path::Path, name: &str| {
        std::os::unix::fs::symlink(target, root.join(name)).expect("a link")
    };
    link(std::path::Path::new("/etc/passwd"), "passwd");
    link(elsewhere.path(), "outside");
    link(&root.join("index.html"), "alias.html");
    std::fs::create_dir(root.join("leaky")).expect("mkdir");
    link(&secret, "leaky/index.html");
    let router = server(ServerConfig::default(), AllowList::new())
        .with_static_files(root)
        .router();

    for path in [
        "/.env",
        "/%2eenv",
        "/.git/config",
        "/passwd",
        "/outside/secret.txt",
        "/leaky/",
        "/leaky/index.html",
    ] {
        let refused = get(&router, path).await;
        assert_eq!(
            (refused.status, refused.code().as_str()),
            (StatusCode::NOT_FOUND, "not_found"),
            "{path}: {}",
            String::from_utf8_lossy(&refused.body)
        );
    }
    // A link that stays inside, and the well-known locations, are served.
    let alias = get(&router, "/alias.html").await;
    assert_eq!(
        (alias.status, &alias.body[..]),
        (StatusCode::OK, &b"<h1>chat</h1>"[..])
    );
    let known = get(&router, "/.well-known/security.txt").await;
    assert_eq!(known.status, StatusCode::OK);
}

#[tokio::test]
async fn a_path_the_system_cannot_resolve_is_not_found_not_a_server_error() {
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(dir.path().join("index.html"), "<h1>chat</h1>").expect("write");
    std::fs::write(dir.path().join("file.txt"), "a file").expect("write");
    let router = server(ServerConfig::default(), AllowList::new())
        .with_static_files(dir.path())
        .router();
    let long_name = "a".repeat(60_000);
    let deep = "d/".repeat(3_000);
    for path in [
        // A name longer than a file name may be (ENAMETOOLONG), a path longer than a path
        // may be, and a path through a file (ENOTDIR).
        format!("/{long_name}"),
        format!("/{long_name}/index.html"),
        format!("/{deep}x"),
        "/file.txt/x".to_owned(),
    ] {
        let refused = get(&router, &path).await;
        assert_eq!(
            (refused.status, refused.code().as_str()),
            (StatusCode::NOT_FOUND, "not_found"),
            "{}…: {}",
            &path[..40.min(path.len())],
            String::from_utf8_lossy(&refused.body)
        );
    }
}
