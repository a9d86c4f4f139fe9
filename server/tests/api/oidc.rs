//! OpenID Connect tokens against an issuer served on loopback by the test (its discovery
//! document and key set, with keys of `oidc_keys/`): the tokens it signs are accepted with the
//! identity of their `iss` and `sub`; every way a token can be wrong is a 401 that changes
//! nothing; unknown key ids do not make the server fetch per token; a slow issuer costs a
//! bounded wait and cached keys keep working.
//!
//! The tests of a real provider (`oidc-provider`, signing in through its pages) are the CLI's
//! and the browser's; these drive every refusal precisely, which a real provider will not
//! sign.

use crate::oidc_issuer::{base64_url, header, unix_now, Issuer, TestKey, AUDIENCE};
use crate::support::{get, oidc_server, oidc_server_of, post, send as request, signin, SECRET};
use axum::http::{Method, StatusCode};
use axum::Router;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use wasmod_server::auth::oidc_identity;
use wasmod_server::{OidcSettings, Secret};

/// A server accepting `issuer`'s tokens (keys fetched within 5 s), as a router.
fn router_of(issuer: &Issuer) -> Router {
    oidc_server(
        Secret::from_bytes(SECRET),
        issuer.settings(Duration::from_secs(5)),
    )
    .router()
}

/// Sends a message as `token`: the answer.
async fn send(router: &Router, token: &str, text: &str) -> crate::support::Answer {
    post(router, "/v1/reducers/send", Some(token), json!([text])).await
}

/// The identities (hex) of the senders of the messages, in order.
async fn senders(router: &Router) -> Vec<String> {
    let answer = get(router, "/v1/tables/message").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
    answer.json()["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["sender"].as_str().expect("a sender").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_of_every_algorithm_prove_the_identity_of_their_issuer_and_subject() {
    let issuer = Issuer::start().await;
    let router = router_of(&issuer);
    for algorithm in [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA] {
        let token = issuer.key(algorithm).sign(&issuer.claims("alice", |_| {}));
        let answer = send(&router, &token, &format!("{algorithm:?}")).await;
        assert_eq!(
            answer.status,
            StatusCode::OK,
            "{algorithm:?}: {:?}",
            answer.json()
        );
    }
    let answer = send(&router, &issuer.token("bob"), "bob").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
    let alice = oidc_identity(&issuer.url, "alice").to_hex();
    let bob = oidc_identity(&issuer.url, "bob").to_hex();
    assert_ne!(alice, bob);
    assert_eq!(
        senders(&router).await,
        [&alice, &alice, &alice, &bob].map(String::as_str)
    );

    // Another server, with another signing secret: the same user is the same identity.
    let other = oidc_server(
        Secret::from_bytes([9; 32]),
        issuer.settings(Duration::from_secs(5)),
    )
    .router();
    let answer = send(&other, &issuer.token("alice"), "again").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
    assert_eq!(senders(&other).await, [alice]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_wrong_token_is_a_401_that_says_why_and_changes_nothing() {
    let issuer = Issuer::start().await;
    let router = router_of(&issuer);
    let rsa = issuer.key(Algorithm::RS256);
    let now = unix_now();
    let signed = |change: &dyn Fn(&mut Value)| rsa.sign(&issuer.claims("mallory", change));
    let public_pem = std::fs::read(format!(
        "{}/tests/api/oidc_keys/rsa.pub.pem",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the public key");
    let confused = header(Algorithm::HS256, "rsa-1");
    let other_key = TestKey::new("rsa-1", Algorithm::RS256, "rsa-other");
    let valid = issuer.token("mallory");
    let header_and_payload = valid.rsplit_once('.').expect("a JWT").0;
    let none_header = base64_url(br#"{"alg":"none","kid":"rsa-1"}"#);
    let payload = header_and_payload.split_once('.').expect("a JWT").1;
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "expired",
            signed(&|claims| claims["exp"] = json!(now - 120)),
            "token_expired",
            "expired",
        ),
        (
            "not yet valid",
            signed(&|claims| claims["nbf"] = json!(now + 600)),
            "invalid_token",
            "not valid yet",
        ),
        (
            "issued in the future",
            signed(&|claims| claims["iat"] = json!(now + 600)),
            "invalid_token",
            "issued in the future",
        ),
        (
            "wrong issuer",
            signed(&|claims| claims["iss"] = json!("https://accounts.example.com")),
            "invalid_token",
            "is not one this server accepts",
        ),
        (
            "wrong audience",
            signed(&|claims| claims["aud"] = json!("another-app")),
            "invalid_token",
            "audience",
        ),
        (
            "no audience",
            signed(&|claims| {
                claims.as_object_mut().expect("an object").remove("aud");
            }),
            "invalid_token",
            "`aud`",
        ),
        (
            "several audiences, issued to another application",
            signed(&|claims| {
                claims["aud"] = json!([AUDIENCE, "another-app"]);
                claims["azp"] = json!("another-app");
            }),
            "invalid_token",
            "`azp`",
        ),
        (
            "no subject",
            signed(&|claims| {
                claims.as_object_mut().expect("an object").remove("sub");
            }),
            "invalid_token",
            "`sub`",
        ),
        (
            "alg none",
            format!("{none_header}.{payload}."),
            "invalid_token",
            "does not accept",
        ),
        (
            "HMAC with the issuer's public key as the secret",
            jsonwebtoken::encode(
                &confused,
                &issuer.claims("mallory", |_| {}),
                &EncodingKey::from_secret(&public_pem).expect("a secret"),
            )
            .expect("signed"),
            "invalid_token",
            "does not accept",
        ),
        (
            "signed by another key under the issuer's key id",
            other_key.sign(&issuer.claims("mallory", |_| {})),
            "invalid_token",
            "signature",
        ),
        (
            "a signature cut off",
            format!("{header_and_payload}.AAAA"),
            "invalid_token",
            "signature",
        ),
        (
            "an algorithm its key is not for",
            issuer.key(Algorithm::ES256).sign_as(
                &header(Algorithm::ES256, "rsa-1"),
                &issuer.claims("mallory", |_| {}),
            ),
            "invalid_token",
            "not for",
        ),
        (
            "a token of a megabyte",
            format!("eyJ{}.{payload}.sig", "A".repeat(1 << 20)),
            "invalid_token",
            "16384",
        ),
        (
            "a payload that is not JSON",
            format!(
                "{}.{}.sig",
                base64_url(br#"{"alg":"RS256"}"#),
                base64_url(b"[1")
            ),
            "invalid_token",
            "not JSON",
        ),
    ];
    for (case, token, code, why) in cases {
        let answer = send(&router, &token, case).await;
        assert_eq!(
            answer.status,
            StatusCode::UNAUTHORIZED,
            "{case}: {:?}",
            answer.json()
        );
        assert_eq!(answer.code(), code, "{case}");
        assert!(
            answer.message().contains(why),
            "{case}: {}",
            answer.message()
        );
    }
    assert_eq!(
        senders(&router).await,
        Vec::<String>::new(),
        "nothing was sent"
    );
    let answer = send(&router, &valid, "hello").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
}

/// A browser's WebSocket shows nothing of a refused upgrade: its client asks again with a
/// plain `GET` of the socket's URL (a `fetch`), which must answer the token's verdict, as the
/// upgrade did, and only for a good token that it is a WebSocket endpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_get_of_the_socket_answers_the_tokens_refusal_as_the_upgrade_does() {
    let issuer = Issuer::start().await;
    let router = router_of(&issuer);
    let rsa = issuer.key(Algorithm::RS256);
    let expired = rsa.sign(&issuer.claims("alice", |claims| {
        claims["exp"] = json!(unix_now() - 120);
    }));
    let foreign = rsa.sign(&issuer.claims("alice", |claims| {
        claims["aud"] = json!("another-app");
    }));
    for (token, status, code) in [
        (expired, StatusCode::UNAUTHORIZED, "token_expired"),
        (foreign, StatusCode::UNAUTHORIZED, "invalid_token"),
        (
            issuer.token("alice"),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
    ] {
        let answer = get(&router, &format!("/v1/subscribe?token={token}")).await;
        assert_eq!(answer.status, status, "{:?}", answer.json());
        assert_eq!(answer.code(), code);
    }
    // Without a token, no identity is made for a request that is not an upgrade.
    let answer = get(&router, "/v1/subscribe").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(
        answer.message().contains("WebSocket endpoint"),
        "{}",
        answer.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_key_ids_make_one_fetch_per_interval_and_a_rotated_key_is_found() {
    let issuer = Issuer::start().await;
    let router = router_of(&issuer);
    let answer = send(&router, &issuer.token("alice"), "first").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
    let fetched = issuer.fetches();
    assert_eq!(fetched, 1, "the keys are fetched once, at start");
    let rotated = TestKey::new("rsa-2", Algorithm::RS256, "rsa-other");
    let claims = issuer.claims("alice", |_| {});
    for n in 0..100 {
        let token = rotated.sign_as(&header(Algorithm::RS256, &format!("made-up-{n}")), &claims);
        let answer = send(&router, &token, "flood").await;
        assert_eq!(answer.code(), "invalid_token", "{:?}", answer.json());
        assert!(answer.message().contains("made-up"), "{}", answer.message());
    }
    assert_eq!(
        issuer.fetches(),
        fetched,
        "no fetch within the refresh interval of the one at start"
    );

    // The issuer rotates to a new key: a server past its refresh interval fetches once and
    // finds it.
    issuer.served.keys.lock().push(rotated.public.clone());
    let mut settings = issuer.settings(Duration::from_secs(5));
    settings.refresh_interval = Duration::from_millis(200);
    let router = oidc_server(Secret::from_bytes(SECRET), settings).router();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let answer = send(&router, &rotated.sign(&claims), "rotated").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_issuer_costs_a_bounded_wait_and_cached_keys_keep_working() {
    let issuer = Issuer::start().await;
    *issuer.served.delay.lock() = Duration::from_secs(10);
    let router = oidc_server(
        Secret::from_bytes(SECRET),
        issuer.settings(Duration::from_millis(500)),
    )
    .router();
    let started = Instant::now();
    let answer = send(&router, &issuer.token("alice"), "slow").await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "bounded by the fetch timeout: {:?}",
        started.elapsed()
    );
    assert_eq!(answer.code(), "invalid_token", "{:?}", answer.json());
    assert!(
        answer.message().contains("could not be fetched lately"),
        "{}",
        answer.message()
    );

    // Keys fetched while the issuer was fast keep working once it is slow.
    *issuer.served.delay.lock() = Duration::ZERO;
    let mut settings = issuer.settings(Duration::from_millis(500));
    settings.keys_max_age = Duration::ZERO;
    let router = oidc_server(Secret::from_bytes(SECRET), settings).router();
    let answer = send(&router, &issuer.token("alice"), "fast").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
    *issuer.served.delay.lock() = Duration::from_secs(10);
    for n in 0..3 {
        let started = Instant::now();
        let answer = send(&router, &issuer.token("alice"), &format!("cached {n}")).await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
}

#[test]
fn issuers_over_plain_http_are_refused_unless_on_loopback_and_allowed() {
    let settings = |issuer: &str, loopback: bool| {
        let mut settings = OidcSettings::new(vec![format!("{issuer}={AUDIENCE}")
            .parse()
            .expect("an issuer")]);
        settings.allow_http_loopback = loopback;
        settings.check()
    };
    assert!(settings("http://127.0.0.1:8080", false)
        .expect_err("plain http")
        .contains("https"));
    assert_eq!(settings("http://127.0.0.1:8080", true), Ok(()));
    assert!(settings("http://issuer.example.com", true).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_claims_of_a_verified_token_reach_the_module_and_an_identity_of_the_servers_own_has_none(
) {
    let issuer = Issuer::start().await;
    let server = oidc_server_of(
        signin(&issuer.url),
        Secret::from_bytes(SECRET),
        issuer.settings(Duration::from_secs(5)),
    );
    let router = server.router();
    let alice = issuer.token("alice");

    // A view called by name: its caller's claims.
    let whoami = post(&router, "/v1/views/whoami", Some(&alice), json!([])).await;
    assert_eq!(whoami.status, StatusCode::OK, "{:?}", whoami.json());
    assert_eq!(whoami.json()["result"], "User alice");

    // An HTTP handler: the claims of the request's bearer token.
    let hello = |token: Option<String>| {
        let router = router.clone();
        async move {
            let answer =
                request(&router, Method::GET, "/v1/http/hello", token.as_deref(), "").await;
            (
                answer.status,
                String::from_utf8_lossy(&answer.body).into_owned(),
            )
        }
    };
    assert_eq!(
        hello(Some(alice.clone())).await,
        (StatusCode::OK, "hello, User alice".to_owned())
    );
    assert_eq!(hello(None).await.0, StatusCode::UNAUTHORIZED);

    // An identity of the server's own (`POST /v1/identity`) has no claims: `client_connected`
    // refuses it.
    let issued = post(&router, "/v1/identity", None, json!({})).await;
    assert_eq!(issued.code(), "connection_refused", "{:?}", issued.json());
    assert!(
        issued
            .message()
            .contains(&format!("sign in with {} to join", issuer.url)),
        "{}",
        issued.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_verified_before_is_refused_once_its_key_is_withdrawn_or_it_expires() {
    let issuer = Issuer::start().await;
    let mut settings = issuer.settings(Duration::from_secs(5));
    settings.keys_max_age = Duration::ZERO;
    settings.refresh_interval = Duration::from_millis(100);
    settings.leeway = Duration::ZERO;
    let router = oidc_server(Secret::from_bytes(SECRET), settings).router();
    let token = issuer.token("alice");
    for text in ["verified", "from the cache"] {
        let answer = send(&router, &token, text).await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
    }

    // The issuer withdraws the key. The keys are stale, so the next use of the token starts
    // a fetch in the background (and is answered from what the server holds); once the fetch
    // is done, the token it verified before is verified again, and refused.
    issuer
        .served
        .keys
        .lock()
        .retain(|key| key.common.key_id.as_deref() != Some("rsa-1"));
    let fetched = issuer.fetches();
    tokio::time::sleep(Duration::from_millis(200)).await;
    send(&router, &token, "while the keys are fetched").await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while issuer.fetches() == fetched && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(issuer.fetches() > fetched, "the keys were fetched again");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let answer = send(&router, &token, "after the withdrawal").await;
    assert_eq!(answer.code(), "invalid_token", "{:?}", answer.json());
    assert!(answer.message().contains("rsa-1"), "{}", answer.message());

    // A token kept verified is refused once it expires.
    let short = issuer
        .key(Algorithm::ES256)
        .sign(&issuer.claims("bob", |claims| claims["exp"] = json!(unix_now() + 2)));
    let answer = send(&router, &short, "while valid").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let answer = send(&router, &short, "expired").await;
    assert_eq!(answer.code(), "token_expired", "{:?}", answer.json());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issuer_whose_documents_are_wrong_is_not_trusted_and_keys_of_other_kinds_are_left_out() {
    let issuer = Issuer::start().await;
    // A symmetric key among the issuer's keys: never a key to verify with.
    let symmetric: jsonwebtoken::jwk::Jwk = serde_json::from_value(json!({
        "kty": "oct", "kid": "shared", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQ"
    }))
    .expect("a JWK");
    issuer.served.keys.lock().push(symmetric);
    let router = router_of(&issuer);
    let token = issuer.key(Algorithm::RS256).sign_as(
        &header(Algorithm::RS256, "shared"),
        &issuer.claims("mallory", |_| {}),
    );
    let answer = send(&router, &token, "with the shared key").await;
    assert_eq!(answer.code(), "invalid_token", "{:?}", answer.json());
    assert!(
        answer.message().contains("`shared`"),
        "{}",
        answer.message()
    );

    // A discovery document naming another issuer: its keys are not this issuer's (the server's
    // log says why; the client is told only that the keys could not be fetched).
    *issuer.served.issuer.lock() = "https://impostor.example.com".to_owned();
    let router = router_of(&issuer);
    let answer = send(&router, &issuer.token("alice"), "hello").await;
    assert_eq!(answer.code(), "invalid_token", "{:?}", answer.json());
    assert!(
        answer.message().contains("could not be fetched lately"),
        "the reason is the operator's, in the log: {}",
        answer.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetch_outlives_the_request_that_started_it_and_waiters_share_it() {
    let issuer = Issuer::start().await;
    let mut settings = issuer.settings(Duration::from_secs(5));
    settings.refresh_interval = Duration::from_millis(100);
    let router = oidc_server(Secret::from_bytes(SECRET), settings).router();
    let answer = send(&router, &issuer.token("alice"), "keys fetched").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());

    // The issuer rotates to a new key and answers slowly: the request that asks for the fetch
    // gives up (its client went away), and the fetch goes on without it.
    let rotated = TestKey::new("rsa-2", Algorithm::RS256, "rsa-other");
    issuer.served.keys.lock().push(rotated.public.clone());
    *issuer.served.delay.lock() = Duration::from_millis(500);
    let token = rotated.sign(&issuer.claims("alice", |_| {}));
    tokio::time::sleep(Duration::from_millis(150)).await;
    let fetched = issuer.fetches();
    let gave_up =
        tokio::time::timeout(Duration::from_millis(100), send(&router, &token, "x")).await;
    assert!(
        gave_up.is_err(),
        "the request was dropped while the fetch ran: {:?}",
        gave_up.map(|answer| answer.json())
    );
    // Requests meanwhile wait for the same fetch rather than start another, or fail.
    let waiting = (0..5).map(|n| {
        let (router, token) = (router.clone(), token.clone());
        tokio::spawn(async move { send(&router, &token, &format!("waited {n}")).await.status })
    });
    for waited in waiting {
        assert_eq!(waited.await.expect("joined"), StatusCode::OK);
    }
    assert_eq!(issuer.fetches(), fetched + 1, "one fetch for them all");
    let answer = send(&router, &token, "after").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_that_are_not_for_signing_in_are_refused() {
    let issuer = Issuer::start().await;
    let router = router_of(&issuer);
    let rsa = issuer.key(Algorithm::RS256);
    let typed_as = |typ: &str| Header {
        typ: Some(typ.to_owned()),
        ..header(Algorithm::RS256, rsa.id)
    };
    let typed = rsa.sign_as(&typed_as("logout+jwt"), &issuer.claims("alice", |_| {}));
    let events = rsa.sign(&issuer.claims("alice", |claims| {
        claims["events"] = json!({"http://schemas.openid.net/event/backchannel-logout": {}});
    }));
    for (token, why) in [(typed, "logout+jwt"), (events, "events")] {
        let answer = send(&router, &token, "not a sign-in").await;
        assert_eq!(answer.code(), "invalid_token", "{:?}", answer.json());
        assert!(answer.message().contains(why), "{}", answer.message());
    }
    let token = rsa.sign_as(&typed_as("at+jwt"), &issuer.claims("alice", |_| {}));
    let answer = send(&router, &token, "an access token").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
    // Several audiences, issued to this server's application: taken.
    let shared = rsa.sign(&issuer.claims("alice", |claims| {
        claims["aud"] = json!([AUDIENCE, "another-app"]);
        claims["azp"] = json!(AUDIENCE);
    }));
    let answer = send(&router, &shared, "issued to us").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
}
