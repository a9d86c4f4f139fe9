//! The layer below the client, `wasmod_client::socket`, against a real server: the JSON
//! subprotocol with each message's text, a connection split between a task that sends and
//! one that reads, a refused upgrade with the server's status and error (at the socket and at
//! the client, where its code is matched without the protocol crate), and a close.

use crate::support::{memory_server, memory_server_with, Live, PATIENCE};
use serde_json::json;
use wasmod_client::socket::{
    Binary, Closed, Connection, Json, JsonMessage, OpenError, Received, HANDSHAKE_TIMEOUT,
};
use wasmod_client::{Client, Error, ErrorCode};
use wasmod_protocol::ws::{ClientMessage, ServerMessage, UpdateStatus};
use wasmod_server::ServerConfig;

/// The server's subscribe endpoint.
fn endpoint(live: &Live) -> String {
    format!("ws://{}/v1/subscribe", live.addr)
}

/// The next message of `connection`, within [`PATIENCE`].
async fn next(connection: &mut Connection<Json>) -> JsonMessage {
    match tokio::time::timeout(PATIENCE, connection.next()).await {
        Ok(Ok(Received::Message(message))) => message,
        other => panic!("not a message: {other:?}"),
    }
}

#[tokio::test]
async fn json_messages_come_with_their_text_and_split_halves_call_while_reading() {
    let live = Live::serve(memory_server()).await;
    let mut connection = Connection::<Json>::open(&endpoint(&live), None, HANDSHAKE_TIMEOUT)
        .await
        .expect("open");
    let me = connection.session().identity;
    connection
        .send(&ClientMessage::Subscribe {
            query_set_id: 1,
            queries: vec!["SELECT * FROM message".into()],
            resume_from: None,
        })
        .await
        .expect("sent");
    let applied = next(&mut connection).await;
    assert!(
        matches!(
            applied.message,
            ServerMessage::SubscribeApplied {
                query_set_id: 1,
                ..
            }
        ),
        "{applied:?}"
    );
    let text: serde_json::Value = serde_json::from_str(&applied.text).expect("JSON text");
    assert_eq!(
        text["SubscribeApplied"]["query_set_id"], 1,
        "{}",
        applied.text
    );

    let (mut sender, mut receiver) = connection.split();
    let reading = tokio::spawn(async move {
        loop {
            match receiver.next().await.expect("a message") {
                Received::Message(JsonMessage {
                    message: ServerMessage::TransactionUpdate(update),
                    text,
                }) if update.request_id == Some(7) => break (update, text),
                Received::Message(_) => {}
                Received::Closed(closed) => panic!("closed: {closed}"),
            }
        }
    });
    sender
        .send(&ClientMessage::CallReducer {
            request_id: 7,
            name: "send".into(),
            args: json!(["over the socket"]),
        })
        .await
        .expect("sent");
    let (update, text) = tokio::time::timeout(PATIENCE, reading)
        .await
        .expect("an answer")
        .expect("the reader");
    assert_eq!(update.status, UpdateStatus::Committed);
    assert_eq!(update.caller_identity, me);
    assert!(text.contains("over the socket"), "{text}");
}

#[tokio::test]
async fn a_refused_upgrade_says_the_status_and_the_servers_error() {
    let live = Live::serve(memory_server()).await;
    let refused = Connection::<Binary>::open(&endpoint(&live), Some("not-a-token"), PATIENCE)
        .await
        .expect_err("refused");
    match &refused {
        OpenError::Refused {
            status,
            error,
            reason,
        } => {
            assert_eq!(*status, 401);
            assert_eq!(
                error.as_ref().map(|error| error.code),
                Some(ErrorCode::InvalidToken)
            );
            assert!(reason.starts_with("invalid_token: "), "{reason}");
        }
        other => panic!("not refused: {other:?}"),
    }
    assert!(refused.to_string().contains("(401)"), "{refused}");

    let nobody = Connection::<Binary>::open("ws://127.0.0.1:1/v1/subscribe", None, PATIENCE)
        .await
        .expect_err("nothing listens");
    assert!(matches!(nobody, OpenError::Failed(_)), "{nobody:?}");
}

#[tokio::test]
async fn a_client_past_the_new_identities_limit_is_refused_with_the_servers_code_and_message() {
    let mut config = ServerConfig::default();
    config.identities_per_minute = 1;
    let live = Live::serve(memory_server_with(config)).await;
    let first = Client::builder(live.url())
        .connect()
        .await
        .expect("the first");
    let refused = Client::builder(live.url())
        .connect()
        .await
        .err()
        .expect("the second new identity within the minute is refused");
    assert_eq!(refused.code(), Some(ErrorCode::TooManyCalls), "{refused:?}");
    match &refused {
        Error::Refused {
            status,
            error: Some(error),
            reason,
        } => {
            assert_eq!(*status, 429);
            assert!(error.message.contains("new identities"), "{error:?}");
            assert!(reason.starts_with("too_many_calls: "), "{reason}");
        }
        other => panic!("not a refusal with the server's error: {other:?}"),
    }
    assert!(refused.to_string().contains("(429)"), "{refused}");
    // The identity it has is not a new one: it connects again.
    let again = Client::builder(live.url())
        .token(first.token())
        .connect()
        .await
        .expect("a known identity is not counted");
    assert_eq!(again.identity(), first.identity());
}

#[tokio::test]
async fn a_closed_socket_says_so_on_every_read() {
    let live = Live::serve(memory_server()).await;
    let mut connection = Connection::<Binary>::open(&endpoint(&live), None, HANDSHAKE_TIMEOUT)
        .await
        .expect("open");
    // Read while the server stops, so that its close frame is answered.
    let reading = tokio::spawn(async move {
        loop {
            match connection.next().await {
                Ok(Received::Closed(closed)) => break (connection, closed),
                Ok(Received::Message(_)) => {}
                Err(error) => panic!("not a close: {error}"),
            }
        }
    });
    live.stop().await;
    let (mut connection, closed) = tokio::time::timeout(PATIENCE, reading)
        .await
        .expect("closed")
        .expect("the reader");
    assert!(
        matches!(closed, Closed::ByServer { .. } | Closed::Ended(_)),
        "{closed:?}"
    );
    match connection.next().await {
        Ok(Received::Closed(again)) => assert_eq!(again, closed),
        other => panic!("not the same close: {other:?}"),
    }
    connection.close().await;
}
