//! A server whose commit log fails (a full disk, injected at the log's writes): writes are
//! refused with `degraded`, nothing new becomes visible, reads say the server is degraded,
//! `/health` fails, and a restart on the same directory has every answered commit and no
//! refused one.

use crate::live::Live;
use crate::support::{deferred_durable_server, failing_disk_server, get, identity, post, Answer};
use axum::http::StatusCode;
use axum::Router;
use serde_json::json;
use std::path::Path;
use wasmod_host::datastore::durability::Faults;
use wasmod_server::degraded::{DEGRADED_HEADER, DEGRADED_VALUE};
use wasmod_server::{Server, ServerConfig};

async fn send(router: &Router, token: &str, text: &str) -> Answer {
    post(router, "/v1/reducers/send", Some(token), json!([text])).await
}

/// The texts of the messages, oldest first, and whether the answer said the server is
/// degraded.
async fn messages(router: &Router) -> (Vec<String>, bool) {
    let page = get(router, "/v1/tables/message").await;
    assert_eq!(page.status, StatusCode::OK, "{:?}", page.json());
    let degraded = match page.headers.get(DEGRADED_HEADER) {
        Some(value) => {
            assert_eq!(value, DEGRADED_VALUE);
            true
        }
        None => false,
    };
    let texts = page.json()["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["text"].as_str().expect("a text").to_owned())
        .collect();
    (texts, degraded)
}

/// Serves `server`, runs `test` against its router, and stops it once the router is gone
/// (the module's thread, and with it the log's directory, is released then).
async fn serving<F: std::future::Future<Output = ()>>(
    server: Server,
    test: impl FnOnce(Router) -> F,
) {
    let router = server.router();
    let live = Live::serve(server).await;
    test(router).await;
    live.stop_releasing().await;
}

fn answered(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|text| text.to_string()).collect()
}

async fn healthy(router: &Router) {
    let health = get(router, "/health").await;
    assert_eq!(health.status, StatusCode::OK, "{:?}", health.json());
    assert_eq!(health.json()["status"], "ok");
}

/// Three messages answered by a server on `dir`; the token of their sender (which stays valid
/// across restarts: the servers share their secret).
async fn first_run(dir: &Path) -> String {
    let server = deferred_durable_server(ServerConfig::default(), dir);
    let router = server.router();
    let live = Live::serve(server).await;
    let (_, token) = identity(&router).await;
    for text in ["m1", "m2", "m3"] {
        assert_eq!(send(&router, &token, text).await.status, StatusCode::OK);
    }
    drop(router);
    // The next run starts on the same data.
    live.stop_releasing().await;
    token
}

#[tokio::test]
async fn a_failed_log_write_refuses_writes_marks_reads_fails_health_and_loses_no_answered_commit() {
    let dir = tempfile::tempdir().expect("a directory");
    let token = first_run(dir.path()).await;
    let sender = token.clone();

    // The disk is full from the start of the second run: its first write fails.
    let faults = Faults::default().failing_writes_after(0);
    let server = failing_disk_server(ServerConfig::default(), dir.path(), faults);
    serving(server, |router| async move {
        let token = sender;
        healthy(&router).await;
        assert_eq!(
            messages(&router).await,
            (answered(&["m1", "m2", "m3"]), false)
        );

        // The call that meets the failure is told its commit is not durable.
        let failed = send(&router, &token, "m4").await;
        assert_eq!(
            failed.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{:?}",
            failed.json()
        );
        assert_eq!(failed.code(), "degraded");
        assert!(
            failed.message().contains("no space left"),
            "{}",
            failed.message()
        );

        // Every later write is refused before it runs, naming the failure.
        for text in ["m5", "m6"] {
            let refused = send(&router, &token, text).await;
            assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(refused.code(), "degraded");
            assert!(
                refused.message().contains("commit log failed"),
                "{}",
                refused.message()
            );
        }

        // Reads are served and say so; nothing refused is visible (m4, which met the
        // failure, is in memory until the restart, as docs/durability.md says).
        assert_eq!(
            messages(&router).await,
            (answered(&["m1", "m2", "m3", "m4"]), true)
        );

        let health = get(&router, "/health").await;
        assert_eq!(health.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(health.json()["status"], "degraded");
        let reason = health.json()["reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(reason.contains("no space left"), "{reason}");
    })
    .await;

    // A restart on the same directory: every answered commit, no refused one, healthy again.
    serving(
        deferred_durable_server(ServerConfig::default(), dir.path()),
        |router| async move {
            assert_eq!(
                messages(&router).await,
                (answered(&["m1", "m2", "m3"]), false)
            );
            healthy(&router).await;
            assert_eq!(send(&router, &token, "m7").await.status, StatusCode::OK);
        },
    )
    .await;
}
