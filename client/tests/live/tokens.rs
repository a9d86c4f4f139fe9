//! Tokens and token providers: a provider asked once at connect, and again when a restarted
//! server refuses its token as expired; tokens a server refuses, with errors that say why.
//! The tokens are the server's own (signed with the test servers' secret), made to expire
//! within seconds.

use crate::support::{eventually, log, memory_server, Live, PATIENCE};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use wasmod_abi::Identity;
use wasmod_client::{ConnectionState, Error, ErrorCode};
use wasmod_server::{Secret, Tokens};

/// The identity the tokens below prove.
const IDENTITY: Identity = Identity::from_bytes([0x5a; 32]);

/// A token for [`IDENTITY`] that expires `seconds` from now, signed as the test servers sign.
fn token_expiring_in(seconds: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    Tokens::new(Secret::from_bytes([7; 32]), Duration::ZERO).sign(IDENTITY, now + seconds)
}

#[tokio::test]
async fn a_token_provider_is_asked_again_when_a_reconnection_is_refused_as_expired() {
    let live = Live::serve(memory_server()).await;
    let addr = live.addr;
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let client = live
        .builder()
        .await
        .token_provider(move || {
            // The first token outlives the connection by a second or two; the next ones are
            // good for a minute.
            let call = counted.fetch_add(1, Ordering::SeqCst);
            let token = token_expiring_in(if call == 0 { 2 } else { 60 });
            async move { Ok::<_, Error>(token) }
        })
        .connect()
        .await
        .expect("connected with the provider's token");
    assert_eq!(client.identity(), IDENTITY);
    assert_eq!(calls.load(Ordering::SeqCst), 1, "asked once, at connect");
    let states = log();
    let seen = states.clone();
    client.on_connection_state(move |state| seen.lock().push(state));

    // The server goes away until the first token has expired: the reconnection's first
    // answer is `token_expired`.
    live.stop().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "not asked while the server is down"
    );
    let live = Live::serve_at(memory_server(), addr).await;
    eventually("the client reconnects", || {
        client.connection_state() == ConnectionState::Connected
    })
    .await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "asked again once, for the refusal"
    );
    assert_eq!(client.identity(), IDENTITY, "the same identity");
    assert_eq!(
        *states.lock(),
        [ConnectionState::Reconnecting, ConnectionState::Connected]
    );
    tokio::time::timeout(PATIENCE, client.call_reducer("send", &("back".to_owned(),)))
        .await
        .expect("an answer")
        .expect("the call runs as the provider's identity");

    // A server restart within the new token's lifetime asks the provider for nothing.
    live.stop().await;
    let live = Live::serve_at(memory_server(), addr).await;
    eventually("the client reconnects again", || {
        states.lock().len() == 4 && client.connection_state() == ConnectionState::Connected
    })
    .await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "its last token still serves"
    );
    client.disconnect().await;
    live.stop().await;
}

#[tokio::test]
async fn refused_tokens_and_failed_providers_say_why() {
    let live = Live::serve(memory_server()).await;

    let refused = live
        .builder()
        .await
        .token("wm1.not-a-token")
        .connect()
        .await
        .err()
        .expect("refused");
    assert_eq!(refused.code(), Some(ErrorCode::InvalidToken));
    assert!(
        matches!(refused, Error::Refused { status: 401, .. }),
        "{refused:?}"
    );
    let message = refused.to_string();
    assert!(
        message.contains("invalid_token") && message.contains("does not accept the client's token"),
        "{message}"
    );

    // A provider whose token has expired is asked once more; a second expired token fails.
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let expired = live
        .builder()
        .await
        .token_provider(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, String>(token_expiring_in(0)) }
        })
        .connect()
        .await
        .err()
        .expect("refused");
    assert_eq!(expired.code(), Some(ErrorCode::TokenExpired));
    assert!(expired.to_string().contains("has expired"), "{expired}");
    assert_eq!(calls.load(Ordering::SeqCst), 2);

    let failed = live
        .builder()
        .await
        .token_provider(|| async { Err::<String, _>("the user signed out") })
        .connect()
        .await
        .err()
        .expect("no token");
    assert_eq!(
        failed,
        Error::TokenProvider("the user signed out".to_owned())
    );
    live.stop().await;
}
