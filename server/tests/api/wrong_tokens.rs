//! The rate of wrong tokens per source address: past a few wrong operator or client tokens,
//! every token check of the address is answered `429 too_many_calls` with `Retry-After`, the
//! right token's included, until the rate allows again; the router called in-process (no
//! source address) is not limited.

use crate::live::{http_agent, Live};
use crate::support::{admin_server, quickstart, OPERATOR};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use std::net::SocketAddr;
use std::time::Duration;
use tower::ServiceExt;
use wasmod_node::LogFeed;
use wasmod_server::ServerConfig;

/// What a request over the socket was answered: its status and its `Retry-After` in seconds.
#[derive(Debug)]
struct Answered {
    status: u16,
    retry_after: Option<u64>,
}

/// `method path` over a socket to `addr`, with `authorization` (a bearer token) and `body`
/// (JSON) if any.
async fn ask(
    addr: SocketAddr,
    method: &'static str,
    path: &str,
    authorization: Option<&str>,
    body: Option<String>,
) -> Answered {
    let url = format!("http://{addr}{path}");
    let authorization = authorization.map(|token| format!("Bearer {token}"));
    tokio::task::spawn_blocking(move || {
        let agent = http_agent();
        let mut request = ureq::http::Request::builder().method(method).uri(&url);
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        let answer = match body {
            Some(body) => agent.run(
                request
                    .header("content-type", "application/json")
                    .body(body)
                    .expect("a request"),
            ),
            None => agent.run(request.body(()).expect("a request")),
        }
        .expect("an answer");
        let retry_after = answer
            .headers()
            .get("retry-after")
            .and_then(|value| value.to_str().ok()?.parse().ok());
        Answered {
            status: answer.status().as_u16(),
            retry_after,
        }
    })
    .await
    .expect("joined")
}

/// Sends `wrong` until it is answered 429 and returns how many were answered `refusal`
/// before; fails if another status comes, or no 429 within `most` requests.
async fn until_limited<F, Fut>(refusal: u16, most: usize, wrong: F) -> usize
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Answered>,
{
    for sent in 0..most {
        let answer = wrong().await;
        match answer.status {
            429 => {
                let wait = answer.retry_after.expect("a Retry-After");
                assert!((1..=2).contains(&wait), "{answer:?}");
                return sent;
            }
            status => assert_eq!(status, refusal, "{answer:?}"),
        }
    }
    panic!("{most} wrong tokens and still no 429");
}

#[tokio::test]
async fn wrong_tokens_are_limited_per_address_and_the_right_one_with_them() {
    let mut config = ServerConfig::default();
    config.failed_tokens_per_second = 1;
    let server = admin_server(quickstart(), config, None, LogFeed::with_defaults());
    let router = server.router();
    let live = Live::serve(server).await;
    let addr = live.addr;
    let stats = "/v1/admin/stats";
    let sign_in = |token: &str| Some(format!("{{\"token\": \"{token}\"}}"));

    assert_eq!(
        ask(addr, "GET", stats, Some(OPERATOR), None).await.status,
        200
    );
    // A burst of five, wrong operator tokens in the header or the sign-in alike.
    let wrong_ones = until_limited(403, 10, || async {
        ask(addr, "POST", "/v1/admin/session", None, sign_in("guess")).await
    })
    .await;
    assert!((5..=6).contains(&wrong_ones), "{wrong_ones} before the 429");
    // While limited, the right token cannot be told from a wrong one, in any of its places.
    for right in [
        ask(addr, "GET", stats, Some(OPERATOR), None).await,
        ask(addr, "GET", stats, Some("guess"), None).await,
        ask(addr, "POST", "/v1/admin/session", None, sign_in(OPERATOR)).await,
    ] {
        assert_eq!(right.status, 429, "{right:?}");
    }
    // A request that presents no token is not held back.
    assert_eq!(ask(addr, "GET", stats, None, None).await.status, 401);
    assert_eq!(ask(addr, "GET", "/v1/module", None, None).await.status, 200);
    // In-process, without a source address, nothing is limited.
    for _ in 0..20 {
        let request = Request::get(stats)
            .header("authorization", "Bearer guess")
            .body(Body::empty())
            .expect("a request");
        let answer = router.clone().oneshot(request).await.expect("an answer");
        assert_eq!(answer.status(), StatusCode::FORBIDDEN);
    }

    // Once the rate allows again, the right token opens, and wrong client tokens count too.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        ask(addr, "GET", stats, Some(OPERATOR), None).await.status,
        200
    );
    let forged = "wm1.00.0.00";
    let wrong_ones = until_limited(401, 5, || async {
        ask(addr, "POST", "/v1/views/recent", Some(forged), None).await
    })
    .await;
    assert!(wrong_ones >= 1, "a wrong client token is 401 first");
    assert_eq!(
        ask(addr, "GET", stats, Some(OPERATOR), None).await.status,
        429
    );
    drop(router);
    live.stop().await;
}
