//! The write path's floor: a bare WebSocket server on the library `wasmod serve` uses (axum's
//! `ws`, configured alike), run as its own process (`wasmod-loadgen answer-server`), that
//! answers each call with a fixed reply: the `TransactionUpdate` of a committed call with the
//! call's `request_id` and no changes, the bytes wasmod answers a transfer with when nobody
//! subscribed. It decodes each call (to echo its id) and encodes nothing per call; a burst of
//! calls read together is answered with one flush, as wasmod's writer does. What a transfer
//! costs wasmod beyond this server is the call's own work.

use super::calls::REDUCER;
use crate::floor::BUFFER;
use anyhow::{Context, Result};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use futures_util::{FutureExt, SinkExt, StreamExt};
use wasmod_abi::{ConnectionId, EntryKind, Identity, Timestamp};
use wasmod_protocol::ws::{
    BinaryClientMessage, BinaryServerMessage, EntryPointName, ServerMessage, TransactionUpdate,
    UpdateStatus, BIN_PROTOCOL,
};

/// Runs the answering floor until the process is killed.
pub fn serve() -> Result<()> {
    crate::floor::on_loopback(|listener| async move {
        let app = Router::new().route("/v1/subscribe", get(upgrade));
        axum::serve(listener, app)
            .await
            .context("the answering floor stopped")
    })
}

async fn upgrade(upgrade: WebSocketUpgrade) -> Response {
    upgrade
        .protocols([BIN_PROTOCOL])
        .read_buffer_size(BUFFER)
        .write_buffer_size(BUFFER)
        .max_write_buffer_size(BUFFER + (16 << 20))
        .on_upgrade(answer)
}

/// The answer to call `request_id`: a commit with no changes.
fn committed(request_id: u32) -> BinaryServerMessage {
    ServerMessage::TransactionUpdate(TransactionUpdate {
        offset: u64::from(request_id),
        timestamp: Timestamp::from_micros_since_unix_epoch(1_700_000_000_000_000),
        caller_identity: Identity::from_bytes([0xab; 32]),
        caller_connection_id: ConnectionId::from_bytes([0xcd; 16]),
        entry_point: EntryPointName {
            kind: EntryKind::Reducer,
            name: REDUCER.into(),
        },
        status: UpdateStatus::Committed,
        request_id: Some(request_id),
        changes: Vec::new(),
    })
}

/// The reply to one frame, if it is a call.
fn reply(message: Message) -> Option<Message> {
    let Message::Binary(frame) = message else {
        return None;
    };
    match BinaryClientMessage::from_bytes(&frame).ok()? {
        BinaryClientMessage::CallReducer { request_id, .. } => {
            Some(Message::Binary(committed(request_id).to_bytes().into()))
        }
        _ => None,
    }
}

/// One socket: the hello, then a reply to every call, flushed once per burst.
async fn answer(socket: WebSocket) {
    let (mut sink, mut stream) = socket.split();
    if sink
        .send(Message::Binary(crate::sample::hello().to_bytes().into()))
        .await
        .is_err()
    {
        return;
    }
    while let Some(Ok(message)) = stream.next().await {
        let mut replies = vec![message];
        while let Some(Some(Ok(message))) = stream.next().now_or_never() {
            replies.push(message);
        }
        for reply in replies.into_iter().filter_map(reply) {
            if sink.feed(reply).await.is_err() {
                return;
            }
        }
        if sink.flush().await.is_err() {
            return;
        }
    }
}
