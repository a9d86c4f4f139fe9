//! The node's WebSocket frames over axum's sockets.
//!
//! The node reads and writes [`Frame`]s and owns no socket ([`wasmod_node::socket`]);
//! this is the glue that turns an upgraded axum [`WebSocket`] into the stream and the sink the
//! node's [`NodeHandle::serve_socket`] takes. Frames keep their bytes (reference-counted) both ways: a
//! broadcast's shared frame reaches every socket without a copy.

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::{future, SinkExt, StreamExt};
use wasmod_node::socket::{Close, Frame, Socket};
use wasmod_node::NodeHandle;

/// Serves the upgraded `ws` as `socket` ([`NodeHandle::serve_socket`]).
pub(crate) async fn serve(ws: WebSocket, node: &NodeHandle, socket: Socket) {
    let (sink, stream) = ws.split();
    let sink = sink.with(|frame| future::ready(message(frame)));
    let stream = stream.map(|read| read.map(frame));
    node.serve_socket(sink, stream, socket).await;
}

/// The node's frame of a message read from a socket.
fn frame(message: Message) -> Frame {
    match message {
        Message::Text(text) => Frame::Text(text.into()),
        Message::Binary(bytes) => Frame::Binary(bytes),
        Message::Ping(bytes) => Frame::Ping(bytes),
        Message::Pong(bytes) => Frame::Pong(bytes),
        Message::Close(close) => {
            Frame::Close(close.map(|close| Close::new(close.code, close.reason.as_str())))
        }
    }
}

/// The message of a frame the node writes. A text frame's bytes are UTF-8 (the node makes
/// them from strings); were they not, the write fails and the socket closes.
fn message(frame: Frame) -> Result<Message, axum::Error> {
    Ok(match frame {
        Frame::Text(bytes) => Message::Text(Utf8Bytes::try_from(bytes).map_err(axum::Error::new)?),
        Frame::Binary(bytes) => Message::Binary(bytes),
        Frame::Ping(bytes) => Message::Ping(bytes),
        Frame::Pong(bytes) => Message::Pong(bytes),
        Frame::Close(close) => Message::Close(close.map(|close| CloseFrame {
            code: close.code,
            reason: close.reason.into(),
        })),
    })
}
