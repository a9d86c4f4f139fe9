//! A client that makes commits without end cannot grow the server's memory: 100,000 commits
//! by an HTTP handler that inserts a row and deletes it again (the hostile module's `churn`,
//! two commits a call) leave the server's resident memory where it was after a warm-up.
//!
//! Memory is the process's resident set (`/proc/self/statm`), read around calls made through
//! the server's router in this process, as a client would make them. The binary holds this one
//! test, so that nothing else runs meanwhile. A commit kept by the server (its row, its
//! changes, its metadata: well over 100 bytes) would grow it by tens of megabytes.
//!
//! `WASMOD_CHURN_COMMITS` sets the number of commits (default 100,000; a debug build makes them
//! in about 20 s on the 2-core machine).

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use std::time::Instant;
use tower::ServiceExt;
use wasmod_host::{InstanceEnv, WasmConfig, WasmEngine, WasmModule};
use wasmod_server::{Secret, Server, ServerConfig};
use wasmod_wasm_tests::{built, Profile};

/// The commits made after the warm-up, unless `WASMOD_CHURN_COMMITS` says otherwise.
const DEFAULT_COMMITS: usize = 100_000;

/// The commits of the warm-up, which size the server's reusable buffers and the allocator's
/// arenas.
const WARM_UP_COMMITS: usize = 10_000;

/// The most the resident set may grow over the commits: room for the allocator's own
/// fluctuations, a fraction of what kept commits would take.
const SLACK_BYTES: u64 = 6 << 20;

/// The process's resident memory, in bytes.
fn resident() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|field| field.parse().ok())
        .expect("the resident pages");
    pages * 4096
}

/// Makes `commits` commits, two per call of the handler.
async fn churn(router: &axum::Router, commits: usize) {
    for _ in 0..commits / 2 {
        let request = Request::builder()
            .method(Method::POST)
            .uri("/v1/http/churn")
            .body(Body::empty())
            .expect("a request");
        let response = router.clone().oneshot(request).await.expect("infallible");
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
    }
}

#[tokio::test]
async fn handler_commits_that_insert_and_delete_keep_the_servers_memory_flat() {
    let commits = std::env::var("WASMOD_CHURN_COMMITS")
        .ok()
        .and_then(|count| count.parse().ok())
        .unwrap_or(DEFAULT_COMMITS);
    let wasm = built(Profile::Release).library("hostile");
    let compiled = WasmEngine::shared()
        .expect("the shared engine")
        .compile(&wasm)
        .expect("the hostile module compiles");
    let module = WasmModule::load(&compiled, WasmConfig::default(), InstanceEnv::unloaded())
        .expect("it loads");
    let mut config = ServerConfig::default();
    config.anonymous_calls_per_minute = 0;
    let server = Server::new(module, Secret::from_bytes([7; 32]), config).expect("it starts");
    let router = server.router();

    churn(&router, WARM_UP_COMMITS).await;
    let before = resident();
    let started = Instant::now();
    churn(&router, commits).await;
    let after = resident();
    println!(
        "{commits} commits in {:?}: resident {} KiB before, {} KiB after",
        started.elapsed(),
        before >> 10,
        after >> 10
    );
    assert!(
        after <= before + SLACK_BYTES,
        "{commits} commits grew the resident set from {before} to {after} bytes"
    );
}
