//! The browser side: the page's own `WebSocket` (through `web-sys`), tasks on the page's
//! event loop, timers from `gloo-timers`.
//!
//! A browser's `WebSocket` cannot send an `Authorization` header, so the token goes in the
//! `token` query parameter, which the server reads the same way (`docs/protocol.md`). Its
//! events (`open`, `message`, `close`) are turned into a channel the connection task reads
//! like the native stream; `error` is always followed by `close`, which is what ends it.

use super::Incoming;
use crate::error::Error;
use bytes::Bytes;
use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use wasmod_protocol::ws::BIN_PROTOCOL;
use web_sys::{BinaryType, CloseEvent, Event, MessageEvent, WebSocket};

/// The client's WebSocket: the browser's, and the channel its events arrive on.
pub(crate) struct Socket {
    socket: WebSocket,
    incoming: mpsc::UnboundedReceiver<Incoming>,
    /// The event handlers, kept alive as long as the socket is (and unset when it drops).
    _handlers: [Closure<dyn FnMut(Event)>; 3],
}

impl Socket {
    /// Opens the binary protocol's WebSocket at `url` as `token`'s identity (a new one
    /// without), and waits until it is open.
    pub(crate) async fn connect(url: &str, token: Option<&str>) -> Result<Self, Error> {
        let url = match token {
            Some(token) => {
                let separator = if url.contains('?') { '&' } else { '?' };
                let token = String::from(js_sys::encode_uri_component(token));
                format!("{url}{separator}token={token}")
            }
            None => url.to_owned(),
        };
        let socket = WebSocket::new_with_str(&url, BIN_PROTOCOL)
            .map_err(|error| Error::Connect(format!("the browser refused the URL: {error:?}")))?;
        socket.set_binary_type(BinaryType::Arraybuffer);
        let (sender, incoming) = mpsc::unbounded_channel();
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
                let frame = match data.dyn_ref::<js_sys::ArrayBuffer>() {
                    Some(buffer) => {
                        Incoming::Binary(Bytes::from(js_sys::Uint8Array::new(buffer).to_vec()))
                    }
                    None => Incoming::Text,
                };
                let _ = sender.send(frame);
            })
        };
        let on_close = Closure::<dyn FnMut(Event)>::new(move |event: Event| {
            let reason = match event.dyn_ref::<CloseEvent>() {
                Some(close) => format!("{} {}", close.code(), close.reason()),
                None => "no reason".to_owned(),
            };
            let _ = sender.send(Incoming::Closed(reason));
        });
        socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        let mut socket = Self {
            socket,
            incoming,
            _handlers: [on_open, on_message, on_close],
        };
        let closed = {
            let open = pin!(open);
            let first = pin!(socket.incoming.recv());
            match futures_util::future::select(open, first).await {
                futures_util::future::Either::Left(_) => None,
                futures_util::future::Either::Right((frame, _)) => Some(frame),
            }
        };
        if let Some(frame) = closed {
            let reason = match frame {
                Some(Incoming::Closed(reason)) => reason,
                _ => "no reason".to_owned(),
            };
            return Err(Error::Connect(format!(
                "the socket closed before it opened: {reason}"
            )));
        }
        let protocol = socket.socket.protocol();
        if protocol != BIN_PROTOCOL {
            return Err(Error::Connect(format!(
                "the server did not agree to `{BIN_PROTOCOL}` (it answered `{protocol}`)"
            )));
        }
        Ok(socket)
    }

    /// Sends one binary frame (the browser buffers it).
    pub(crate) async fn send(&mut self, bytes: Vec<u8>) -> Result<(), Error> {
        if self.socket.ready_state() != WebSocket::OPEN {
            return Err(Error::Disconnected);
        }
        self.socket
            .send_with_u8_array(&bytes)
            .map_err(|_| Error::Disconnected)
    }

    /// The next frame; `None` once the socket ended.
    pub(crate) async fn next(&mut self) -> Option<Incoming> {
        self.incoming.recv().await
    }

    /// Closes the socket with a normal close frame.
    pub(crate) async fn close(&mut self) {
        let _ = self.socket.close();
    }
}

impl Drop for Socket {
    /// Closes the socket and unsets its handlers, which are freed with it.
    fn drop(&mut self) {
        self.socket.set_onopen(None);
        self.socket.set_onmessage(None);
        self.socket.set_onclose(None);
        let _ = self.socket.close();
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
