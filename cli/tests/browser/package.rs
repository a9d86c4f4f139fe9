//! The browser package's own tests of decode and cache behaviour: `client/web/tests/index.html`
//! runs `vectors.test.js` in headless Chromium, which feeds every frame of the shared test
//! vectors (`client/vectors/`, the ones the Rust client's `vectors` test reads) to the
//! package's `WasmodReplay` and compares what it decoded, the callbacks it fired and the rows
//! it holds with what the vectors expect, step by step. This test serves the page, the package
//! and the vectors, and asserts that the page ran every step and that each passed.

use crate::driver::{browser, screenshot, start_driver, wait_for, web_dir};
use serde_json::Value;
use tower_http::services::ServeDir;
use wasmod_wasm_tests::workspace_root;

/// Serves the test page at `/`, the package (built into the quickstart page's `pkg/`) at
/// `/pkg/` and the vectors at `/vectors/` on a loopback port, for as long as the test's
/// runtime runs; returns the base URL.
async fn serve_test_page() -> String {
    let root = workspace_root();
    let app = axum::Router::new()
        .nest_service("/pkg", ServeDir::new(web_dir().join("pkg")))
        .nest_service("/vectors", ServeDir::new(root.join("client/vectors")))
        .fallback_service(ServeDir::new(root.join("client/web/tests")));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("its address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

/// The names of the vectors' steps, in order.
fn step_names() -> Vec<String> {
    let path = workspace_root().join("client/vectors/vectors.json");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(path).expect("vectors.json")).expect("JSON");
    manifest["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|step| step["name"].as_str().expect("a name").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_package_decodes_and_applies_every_shared_vector_as_expected() {
    let driver = start_driver();
    tokio::task::spawn_blocking(web_dir)
        .await
        .expect("the build");
    let base = serve_test_page().await;
    let profiles = tempfile::tempdir().expect("profiles");
    let page = browser(&driver, &profiles.path().join("vectors")).await;
    page.goto(&format!("{base}/index.html"))
        .await
        .expect("the test page loads");
    wait_for(
        &page,
        "the vectors' results",
        "return document.body.dataset.done === 'true'",
        vec![],
    )
    .await;
    let results = page
        .execute("return window.vectorResults", vec![])
        .await
        .expect("the results");
    let path = screenshot(&page, "vectors").await;
    assert!(std::fs::metadata(&path).expect("saved").len() > 1000);
    page.close().await.expect("closed");

    let results = results.as_array().expect("an array of results").clone();
    let failures: Vec<String> = results
        .iter()
        .filter(|result| result["passed"] != Value::Bool(true))
        .map(|result| format!("{}: {}", result["name"], result["failures"]))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} vectors failed in the browser:\n{}",
        failures.len(),
        results.len(),
        failures.join("\n")
    );
    let ran: Vec<String> = results
        .iter()
        .map(|result| result["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(ran, step_names(), "the page ran every step, in order");
}
