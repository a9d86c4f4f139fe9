//! A call answered `busy` (it never ran) is sent again after a wait, by the client itself,
//! until it is answered otherwise or has been `busy` too often: against a fake server that
//! answers `busy` a given number of times.

use crate::malformed::{agree, committed, hello};
use futures_util::{SinkExt, StreamExt};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;
use wasmod_client::{Client, Error, ErrorCode, BUSY_RETRIES};
use wasmod_protocol::ws::{BinaryClientMessage, BinaryServerMessage, ClientMessage, ServerMessage};
use wasmod_protocol::ApiError;

/// Serves one connection that answers each reducer call `busy` `busy` times, then commits it
/// (at offset 7); the address, and how many calls it has read.
async fn busy_server(busy: u32) -> (String, Arc<AtomicU32>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("a connection");
        let mut socket = tokio_tungstenite::accept_hdr_async(stream, agree)
            .await
            .expect("a handshake");
        socket.send(Message::binary(hello())).await.expect("sent");
        while let Some(Ok(Message::Binary(bytes))) = socket.next().await {
            let Ok(ClientMessage::CallReducer {
                request_id, name, ..
            }) = BinaryClientMessage::from_bytes(&bytes)
            else {
                continue;
            };
            let answer: BinaryServerMessage = if counted.fetch_add(1, Ordering::SeqCst) < busy {
                ServerMessage::CallResult {
                    request_id,
                    offset: 6,
                    result: Err(ApiError::new(ErrorCode::Busy, "no room: retry")),
                }
            } else {
                committed(request_id, name)
            };
            socket
                .send(Message::binary(answer.to_bytes()))
                .await
                .expect("sent");
        }
    });
    (format!("ws://{addr}"), calls)
}

#[tokio::test]
async fn a_call_answered_busy_is_sent_again_until_it_runs() {
    let (url, calls) = busy_server(3).await;
    let client = Client::builder(url).connect().await.expect("connected");
    let outcome = client
        .call_reducer("send", &("hi".to_owned(),))
        .await
        .expect("committed after three busy answers");
    assert_eq!(outcome.offset, 7);
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_call_busy_too_often_fails_busy() {
    let (url, calls) = busy_server(u32::MAX).await;
    let client = Client::builder(url).connect().await.expect("connected");
    let failed = client
        .call_reducer("send", &("hi".to_owned(),))
        .await
        .expect_err("busy every time");
    assert!(
        matches!(&failed, Error::Api(error) if error.code == ErrorCode::Busy),
        "{failed:?}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), BUSY_RETRIES + 1);
}
