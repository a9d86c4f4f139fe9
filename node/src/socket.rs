//! What a transport needs to serve a WebSocket through the node
//! ([`NodeHandle::serve_socket`](crate::NodeHandle::serve_socket)): the node reads and writes
//! [`Frame`]s and owns no socket, so that the transport (axum's WebSocket in `wasmod-server`)
//! only converts its messages to frames and back.

pub use crate::realtime::close::Close;
pub use crate::realtime::frame::Frame;
pub use crate::realtime::limits::{
    COMPRESSION_THRESHOLD, MAX_INBOUND_MESSAGE, READ_BUFFER, WRITE_BUFFER,
};
pub use crate::realtime::open::SocketView;
pub use crate::realtime::socket::{Encoding, Socket};
