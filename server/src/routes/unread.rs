//! Bodies a route never read: a small one is read and dropped before the answer goes out.
//!
//! Many answers are given before the body is read, on purpose: a bad token, an unknown name or
//! route, a rate or a call slot refused (issue 15: a refusal must cost the server nothing,
//! least of all reading a large body). But an HTTP/1.1 server that answers without reading the
//! body must close the connection after the answer, and a client still sending its body then
//! sees the connection reset instead of the answer (`peer disconnected`), depending on timing.
//!
//! This layer, around every route, gives the route a body that is only taken from the request
//! when the route first polls it ([`Deferred`]). When the route has answered without polling
//! it, a body that announces at most [`DISCARDED`] bytes is read (within [`DISCARD_WITHIN`])
//! and dropped before the answer is sent: the client reads the refusal, and the connection
//! stays open for its next request. A larger, unannounced or slower body is left unread, as
//! refusing early means.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::header::CONTENT_LENGTH;
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

/// The most bytes of an unread body that are read (and dropped) before the answer.
pub(crate) const DISCARDED: usize = 64 << 10;

/// How long the rest of a small unread body may take to arrive before the answer goes out
/// without it.
pub(crate) const DISCARD_WITHIN: Duration = Duration::from_secs(1);

/// The layer: runs the route on a [`Deferred`] body, then reads and drops a small body the
/// route did not poll.
pub(crate) async fn drain_unread(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let announced = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<usize>().ok());
    let unread = Arc::new(Mutex::new(Some(body)));
    let deferred = Deferred {
        unread: Arc::clone(&unread),
        taken: None,
    };
    let response = next
        .run(Request::from_parts(parts, Body::new(deferred)))
        .await;
    let left = take(&unread);
    if let (Some(body), Some(bytes)) = (left, announced) {
        if bytes <= DISCARDED {
            let read = axum::body::to_bytes(body, DISCARDED);
            let _ = tokio::time::timeout(DISCARD_WITHIN, read).await;
        }
    }
    response
}

/// The body of the request, left where the layer can take it back until the route polls it.
struct Deferred {
    /// The request's body, until it is first polled.
    unread: Arc<Mutex<Option<Body>>>,
    /// The body, once polled.
    taken: Option<Body>,
}

/// The body in `slot`, taken out.
fn take(slot: &Mutex<Option<Body>>) -> Option<Body> {
    slot.lock().unwrap_or_else(PoisonError::into_inner).take()
}

impl Deferred {
    /// What `read` says of the body, taken or not yet; `absent` if it is neither (never: the
    /// layer only takes it back once the route is done with this body).
    fn inspect<T>(&self, read: impl FnOnce(&Body) -> T, absent: T) -> T {
        match &self.taken {
            Some(body) => read(body),
            None => match self
                .unread
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
            {
                Some(body) => read(body),
                None => absent,
            },
        }
    }
}

impl HttpBody for Deferred {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if self.taken.is_none() {
            self.taken = take(&self.unread);
        }
        match self.taken.as_mut() {
            Some(body) => Pin::new(body).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inspect(HttpBody::is_end_stream, true)
    }

    fn size_hint(&self) -> SizeHint {
        self.inspect(HttpBody::size_hint, SizeHint::with_exact(0))
    }
}
