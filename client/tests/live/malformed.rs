//! A server that sends what is not a message: the client reports errors and drops the
//! connection, and never panics.

use futures_util::{SinkExt, StreamExt};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use wasmod_abi::{ConnectionId, EntryKind, Identity, Timestamp};
use wasmod_client::{Client, Error};
use wasmod_protocol::ws::{
    BinaryServerMessage, EntryPointName, ServerMessage, TransactionUpdate, UpdateStatus,
    BIN_PROTOCOL,
};

/// The `IdentityToken` the fake server greets with.
pub(crate) fn hello() -> Vec<u8> {
    let message: BinaryServerMessage = ServerMessage::IdentityToken {
        identity: Identity::from_bytes([0xab; 32]),
        token: "t0k3n".into(),
        connection_id: ConnectionId::from_bytes([0xcd; 16]),
    };
    message.to_bytes()
}

/// A fake server's answer to reducer `name`'s call `request_id`: committed, at offset 7 (as
/// the same identity and connection [`hello`] greets with).
pub(crate) fn committed(request_id: u32, name: String) -> BinaryServerMessage {
    ServerMessage::TransactionUpdate(TransactionUpdate {
        offset: 7,
        timestamp: Timestamp::from_micros_since_unix_epoch(0),
        caller_identity: Identity::from_bytes([0xab; 32]),
        caller_connection_id: ConnectionId::from_bytes([0xcd; 16]),
        entry_point: EntryPointName {
            kind: EntryKind::Reducer,
            name,
        },
        status: UpdateStatus::Committed,
        request_id: Some(request_id),
        changes: Vec::new(),
    })
}

/// Agrees to the binary subprotocol.
#[allow(
    clippy::result_large_err,
    reason = "tungstenite's handshake callback's signature: its error is a whole HTTP response"
)]
pub(crate) fn agree(_: &Request, mut response: Response) -> Result<Response, ErrorResponse> {
    response.headers_mut().insert(
        "sec-websocket-protocol",
        HeaderValue::from_static(BIN_PROTOCOL),
    );
    Ok(response)
}

/// Serves one connection on a loopback port: with `greet`, the greeting then, once the
/// client has sent something, `frame`; without, `frame` first. The address to connect to.
async fn fake_server(greet: bool, frame: Message) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("a connection");
        let mut socket = tokio_tungstenite::accept_hdr_async(stream, agree)
            .await
            .expect("a handshake");
        if greet {
            socket.send(Message::binary(hello())).await.expect("sent");
            let _ = socket.next().await;
        }
        let _ = socket.send(frame).await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    format!("ws://{addr}")
}

#[tokio::test]
async fn a_truncated_message_fails_the_waiting_call_and_ends_the_connection() {
    let mut truncated = hello();
    truncated.truncate(20);
    let url = fake_server(true, Message::binary(truncated)).await;
    let client = Client::builder(url)
        .reconnect(None)
        .connect()
        .await
        .expect("connected");
    assert_eq!(client.token(), "t0k3n");
    let answer = client.call_reducer("send", &("hi".to_owned(),)).await;
    assert_eq!(answer, Err(Error::Disconnected));
    assert!(!client.is_running());
}

#[tokio::test]
async fn garbage_as_the_first_message_is_a_connect_error() {
    let url = fake_server(false, Message::binary(vec![0, 0xee, 1, 2])).await;
    let error = Client::builder(url)
        .reconnect(None)
        .connect()
        .await
        .err()
        .expect("refused");
    assert!(matches!(error, Error::Connect(_)), "{error:?}");
}

#[tokio::test]
async fn a_compressed_message_this_version_cannot_read_is_an_error() {
    let mut compressed = hello();
    compressed[0] = 1;
    let url = fake_server(false, Message::binary(compressed)).await;
    let error = Client::builder(url)
        .reconnect(None)
        .connect()
        .await
        .err()
        .expect("refused");
    assert!(
        matches!(&error, Error::Connect(why) if why.contains("brotli")),
        "{error:?}"
    );
}
