//! The browser side: the page's own `WebSocket` (through `web-sys`), tasks on the page's
//! event loop, timers from `gloo-timers`.
//!
//! A browser's `WebSocket` cannot send an `Authorization` header, so the token goes in the
//! `token` query parameter, which the server reads the same way (`docs/protocol.md`). Its
//! events (`open`, `message`, `close`) are turned into a channel the [`Reader`] reads like the
//! native stream; `error` is always followed by `close`, which is what ends it. A browser
//! bounds the size of messages itself.

use super::{Incoming, NORMAL_CLOSE};
use crate::error::Error;
use crate::transport::{Closed, OpenError, Payload};
use bytes::Bytes;
use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{BinaryType, CloseEvent, Event, MessageEvent, WebSocket};

/// The close code a browser reports for a socket that ended without a close frame.
const ABNORMAL_CLOSE: u16 = 1006;

/// The close code a browser reports for a close frame without a code.
const NO_STATUS: u16 = 1005;

/// The browser's socket and its event handlers, kept alive as long as either half is (and
/// unset when both are dropped).
struct Shared {
    socket: WebSocket,
    _handlers: [Closure<dyn FnMut(Event)>; 3],
}

impl Drop for Shared {
    /// Closes the socket and unsets its handlers, which are freed with it.
    fn drop(&mut self) {
        self.socket.set_onopen(None);
        self.socket.set_onmessage(None);
        self.socket.set_onclose(None);
        let _ = self.socket.close();
    }
}

/// The sending half of a socket.
pub(crate) struct Writer {
    shared: Rc<Shared>,
}

/// The reading half of a socket: the channel its events arrive on.
pub(crate) struct Reader {
    incoming: mpsc::UnboundedReceiver<Incoming>,
    _shared: Rc<Shared>,
}

/// Opens a WebSocket at `url` speaking `subprotocol`, as `token`'s identity (a new one
/// without), and waits until it is open. `_max_message` is the browser's to enforce.
pub(crate) async fn connect(
    url: &str,
    token: Option<&str>,
    subprotocol: &'static str,
    _max_message: usize,
) -> Result<(Writer, Reader), OpenError> {
    let url = match token {
        Some(token) => {
            let separator = if url.contains('?') { '&' } else { '?' };
            let token = String::from(js_sys::encode_uri_component(token));
            format!("{url}{separator}token={token}")
        }
        None => url.to_owned(),
    };
    let socket = WebSocket::new_with_str(&url, subprotocol)
        .map_err(|error| OpenError::Request(format!("the browser refused the URL: {error:?}")))?;
    socket.set_binary_type(BinaryType::Arraybuffer);
    let (sender, mut incoming) = mpsc::unbounded_channel();
    let (opened, open) = oneshot::channel::<()>();
    let opened = Rc::new(RefCell::new(Some(opened)));
    let on_open = Closure::<dyn FnMut(Event)>::new(move |_: Event| {
        if let Some(opened) = opened.borrow_mut().take() {
            let _ = opened.send(());
        }
    });
    let on_message = {
        let sender = sender.clone();
        Closure::<dyn FnMut(Event)>::new(move |event: Event| {
            let Some(event) = event.dyn_ref::<MessageEvent>() else {
                return;
            };
            let data = event.data();
            let payload = match data.dyn_ref::<js_sys::ArrayBuffer>() {
                Some(buffer) => {
                    Payload::Binary(Bytes::from(js_sys::Uint8Array::new(buffer).to_vec()))
                }
                None => Payload::Text(data.as_string().unwrap_or_default()),
            };
            let _ = sender.send(Incoming::Data(payload));
        })
    };
    let on_close = Closure::<dyn FnMut(Event)>::new(move |event: Event| {
        let closed = match event.dyn_ref::<CloseEvent>() {
            Some(close) if close.code() == ABNORMAL_CLOSE => {
                Closed::Ended("the connection ended without a close frame".to_owned())
            }
            Some(close) => Closed::ByServer {
                code: Some(close.code()).filter(|&code| code != NO_STATUS),
                reason: close.reason(),
            },
            None => Closed::Ended("the socket closed, for no reason given".to_owned()),
        };
        let _ = sender.send(Incoming::Closed(closed));
    });
    socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    let shared = Rc::new(Shared {
        socket,
        _handlers: [on_open, on_message, on_close],
    });
    let closed = {
        let open = pin!(open);
        let first = pin!(incoming.recv());
        match futures_util::future::select(open, first).await {
            futures_util::future::Either::Left(_) => None,
            futures_util::future::Either::Right((frame, _)) => Some(frame),
        }
    };
    if let Some(frame) = closed {
        let reason = match frame {
            Some(Incoming::Closed(closed)) => closed.to_string(),
            _ => "no reason".to_owned(),
        };
        return Err(OpenError::Failed(format!(
            "the socket closed before it opened: {reason}"
        )));
    }
    let agreed = shared.socket.protocol();
    if agreed != subprotocol {
        return Err(OpenError::Failed(format!(
            "the server did not agree to `{subprotocol}` (it answered `{agreed}`)"
        )));
    }
    let reader = Reader {
        incoming,
        _shared: shared.clone(),
    };
    Ok((Writer { shared }, reader))
}

impl Writer {
    /// Sends one frame (the browser buffers it).
    pub(crate) async fn send(&mut self, payload: Payload) -> Result<(), Error> {
        let socket = &self.shared.socket;
        if socket.ready_state() != WebSocket::OPEN {
            return Err(Error::Disconnected);
        }
        match payload {
            Payload::Binary(bytes) => socket.send_with_u8_array(&bytes),
            Payload::Text(text) => socket.send_with_str(&text),
        }
        .map_err(|_| Error::Disconnected)
    }

    /// Starts the close handshake with a normal close (`1000`); the browser reports its end
    /// as a `close` event.
    pub(crate) async fn close(&mut self) {
        let _ = self.shared.socket.close_with_code(NORMAL_CLOSE);
    }
}

impl Reader {
    /// The next frame; [`Incoming::Closed`] once the socket closed.
    pub(crate) async fn next(&mut self) -> Incoming {
        // The handlers hold a sender as long as the socket lives: the channel ends only with
        // it, and its close event comes first.
        self.incoming
            .recv()
            .await
            .unwrap_or_else(|| Incoming::Closed(Closed::Ended("the socket is gone".to_owned())))
    }
}

/// Runs `task` on the page's event loop.
pub(crate) fn spawn(task: impl Future<Output = ()> + 'static) {
    wasm_bindgen_futures::spawn_local(task);
}

/// Waits `duration` (a browser timer).
pub(crate) async fn sleep(duration: Duration) {
    gloo_timers::future::sleep(duration).await;
}

/// `future`'s output, or `None` if it takes longer than `duration`.
pub(crate) async fn timeout<F: Future>(duration: Duration, future: F) -> Option<F::Output> {
    let future = pin!(future);
    let sleep = pin!(sleep(duration));
    match futures_util::future::select(future, sleep).await {
        futures_util::future::Either::Left((output, _)) => Some(output),
        futures_util::future::Either::Right(_) => None,
    }
}
