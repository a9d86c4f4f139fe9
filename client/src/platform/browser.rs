//! The browser side: the page's own `WebSocket` (through `web-sys`), tasks on the page's
//! event loop, timers from `gloo-timers`.
//!
//! "Browser" means any JavaScript host with an event loop: the same code runs in Node (the npm
//! package `@wasmod/client`, `client/npm/`). Node 20 has no global `WebSocket`, so the class
//! the client constructs may be set with [`set_web_socket`] (the package's Node entry passes
//! the `ws` package's); it is only ever used through the members every WebSocket
//! implementation shares (`binaryType`, `onopen`, `send`, ...), and its events are read by
//! name ([`SocketEvent`]), not by class, since `ws`'s events are not instances of the
//! browser's `MessageEvent` and `CloseEvent`.
//!
//! A browser's `WebSocket` cannot send an `Authorization` header, so the token goes in the
//! `token` query parameter, which the server reads the same way (`docs/protocol.md`). Nor does
//! it show a refused upgrade's status or body (the socket just closes): when a socket with a
//! token closes before it opens, the client fetches the same URL plainly, which the server
//! answers with the token's refusal as the upgrade did ([`refusal`]), so that an expired token
//! is seen as one (and a token provider asked for another) as natively. Its
//! events (`open`, `message`, `close`) are turned into a channel the [`Reader`] reads like the
//! native stream; `error` is always followed by `close`, which is what ends it. A browser
//! bounds the size of messages itself.
//!
//! Gzip frames are inflated here, by the platform's `DecompressionStream` (native code, in
//! browsers and in Node), not by flate2 in wasm: the web build leaves the client's `gzip`
//! feature out for its size. Inflating is asynchronous, so the socket's events go through a
//! task of their own ([`pump`]) that inflates one frame at a time, in order, before the
//! [`Reader`]'s channel: the reader stays a plain channel, which the connection task may poll
//! and drop mid-wait without losing a frame.

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
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_protocol::ws::Compression;
use web_sys::{BinaryType, WebSocket};

#[wasm_bindgen]
extern "C" {
    /// A socket's event as its handlers read it: by its fields' names, whatever its class (a
    /// browser's `MessageEvent` or `CloseEvent`, or their look-alikes from `ws` in Node).
    pub(crate) type SocketEvent;

    /// A message event's payload: an `ArrayBuffer` (binary) or a string (text).
    #[wasm_bindgen(method, getter, structural)]
    fn data(this: &SocketEvent) -> JsValue;

    /// A close event's code (a number).
    #[wasm_bindgen(method, getter, structural)]
    fn code(this: &SocketEvent) -> JsValue;

    /// A close event's reason (a string).
    #[wasm_bindgen(method, getter, structural)]
    fn reason(this: &SocketEvent) -> JsValue;
}

thread_local! {
    /// The WebSocket class [`connect`] constructs, if not the global `WebSocket`.
    static WEB_SOCKET: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
}

/// Makes the client construct its sockets with `constructor` (a class with the browser
/// `WebSocket`'s constructor and members, such as the `ws` package's in Node), or with the
/// global `WebSocket` again for `None`. It applies to the sockets opened from then on, the
/// reconnections of clients already connected included.
pub(crate) fn set_web_socket(constructor: Option<js_sys::Function>) {
    WEB_SOCKET.with(|slot| *slot.borrow_mut() = constructor);
}

/// A new socket at `url` asking for `subprotocol`, of the class [`set_web_socket`] set, or
/// else of the global `WebSocket`: an error saying what to do where there is none.
fn new_socket(url: &str, subprotocol: &str) -> Result<WebSocket, OpenError> {
    let refused = |error: JsValue| {
        OpenError::Request(format!("the WebSocket refused the URL {url}: {error:?}"))
    };
    if let Some(constructor) = WEB_SOCKET.with(|slot| slot.borrow().clone()) {
        let args = js_sys::Array::of2(&JsValue::from_str(url), &JsValue::from_str(subprotocol));
        let socket = js_sys::Reflect::construct(&constructor, &args).map_err(refused)?;
        return Ok(socket.unchecked_into());
    }
    let global = js_sys::global();
    let class = js_sys::Reflect::get(&global, &JsValue::from_str("WebSocket")).unwrap_or_default();
    if class.is_undefined() {
        return Err(OpenError::Request(
            "this JavaScript environment has no global WebSocket (Node before 22): install the \
             `ws` package (@wasmod/client's Node entry uses it) or give a WebSocket class to \
             setWebSocket"
                .to_owned(),
        ));
    }
    WebSocket::new_with_str(url, subprotocol).map_err(refused)
}

/// The close code a browser reports for a socket that ended without a close frame.
const ABNORMAL_CLOSE: u16 = 1006;

/// The close code a browser reports for a close frame without a code.
const NO_STATUS: u16 = 1005;

/// The browser's socket and its event handlers, kept alive as long as either half is (and
/// unset when both are dropped).
struct Shared {
    socket: WebSocket,
    _handlers: [Closure<dyn FnMut(SocketEvent)>; 4],
}

impl Drop for Shared {
    /// Closes the socket and unsets its handlers, which are freed with it.
    fn drop(&mut self) {
        self.socket.set_onopen(None);
        self.socket.set_onmessage(None);
        self.socket.set_onclose(None);
        self.socket.set_onerror(None);
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

/// What a `wss://` socket or an `https://` request trusts: in a browser, whatever the browser
/// trusts, which the page has no say in.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tls {}

/// Opens a WebSocket at `url` speaking `subprotocol`, as `token`'s identity (a new one
/// without), and waits until it is open. The browser bounds a frame's size itself;
/// `max_message` bounds a gzip frame once inflated. A `wss://` socket is the browser's TLS.
pub(crate) async fn connect(
    url: &str,
    token: Option<&str>,
    subprotocol: &'static str,
    max_message: usize,
    _tls: &Tls,
) -> Result<(Writer, Reader), OpenError> {
    let url = match token {
        Some(token) => {
            let separator = if url.contains('?') { '&' } else { '?' };
            let token = String::from(js_sys::encode_uri_component(token));
            format!("{url}{separator}token={token}")
        }
        None => url.to_owned(),
    };
    let socket = new_socket(&url, subprotocol)?;
    socket.set_binary_type(BinaryType::Arraybuffer);
    let (sender, raw) = mpsc::unbounded_channel();
    let (inflated, mut incoming) = mpsc::unbounded_channel();
    spawn(pump(raw, inflated, max_message));
    let (opened, open) = oneshot::channel::<()>();
    let opened = Rc::new(RefCell::new(Some(opened)));
    let on_open = Closure::<dyn FnMut(SocketEvent)>::new(move |_: SocketEvent| {
        if let Some(opened) = opened.borrow_mut().take() {
            let _ = opened.send(());
        }
    });
    let on_message = {
        let sender = sender.clone();
        Closure::<dyn FnMut(SocketEvent)>::new(move |event: SocketEvent| {
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
    let on_close = Closure::<dyn FnMut(SocketEvent)>::new(move |event: SocketEvent| {
        let code = event.code().as_f64().map(|code| code as u16);
        let closed = match code {
            Some(ABNORMAL_CLOSE) => {
                Closed::Ended("the connection ended without a close frame".to_owned())
            }
            Some(code) => Closed::ByServer {
                code: Some(code).filter(|&code| code != NO_STATUS),
                reason: event.reason().as_string().unwrap_or_default(),
            },
            None => Closed::Ended("the socket closed, for no reason given".to_owned()),
        };
        let _ = sender.send(Incoming::Closed(closed));
    });
    // `error` is always followed by `close`, which says what happened; but the socket must
    // listen to it: `ws` in Node throws an `error` event nobody listens to (as an uncaught
    // exception, for a refused reconnection).
    let on_error = Closure::<dyn FnMut(SocketEvent)>::new(|_: SocketEvent| {});
    socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    socket.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    let shared = Rc::new(Shared {
        socket,
        _handlers: [on_open, on_message, on_close, on_error],
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
        if token.is_some() {
            if let Some(refused) = refusal(&url).await {
                return Err(refused);
            }
        }
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
    /// Sends one frame (the socket buffers it).
    pub(crate) async fn send(&mut self, payload: Payload) -> Result<(), Error> {
        let socket = &self.shared.socket;
        if socket.ready_state() != WebSocket::OPEN {
            return Err(Error::Disconnected);
        }
        match payload {
            // A copy the socket owns, not a view of the wasm memory: a browser copies what
            // it sends at once, but `ws` in Node may keep the bytes queued, and the memory
            // under a view changes (or goes, when it grows) before they leave.
            Payload::Binary(bytes) => {
                socket.send_with_array_buffer_view(&js_sys::Uint8Array::from(&bytes[..]))
            }
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

#[wasm_bindgen]
extern "C" {
    /// The global `fetch`: a page's or a worker's (not only a window has one), or Node's.
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(input: &str) -> js_sys::Promise;
}

/// The server's refusal of the token of a socket (at `url`, `ws:` or `wss:`, its token in the
/// query) that closed before it opened, read from a plain `GET` of the same URL over `http:` or
/// `https:`: the server checks the token before it asks for an upgrade, and answers a bad one
/// with 401 and its API error, as it answered the upgrade (`server/src/routes/subscribe.rs`).
/// `None` for any other answer (the token is good, the socket failed for another reason) or
/// none (the server is down, or another origin's that allows no `fetch`).
async fn refusal(url: &str) -> Option<OpenError> {
    const UNAUTHORIZED: u16 = 401;
    let plain = format!("http{}", url.strip_prefix("ws")?);
    let response: web_sys::Response = JsFuture::from(global_fetch(&plain))
        .await
        .ok()?
        .dyn_into()
        .ok()?;
    if response.status() != UNAUTHORIZED {
        return None;
    }
    let body = JsFuture::from(response.text().ok()?)
        .await
        .ok()?
        .as_string()?;
    let body: serde_json::Value = serde_json::from_str(&body).ok()?;
    let code = ErrorCode::from_name(body["error"]["code"].as_str()?)?;
    let message = body["error"]["message"].as_str()?;
    Some(OpenError::Refused {
        status: UNAUTHORIZED,
        reason: format!("{code}: {message}"),
        error: Some(ApiError::new(code, message)),
    })
}

/// The body of `GET url` through the global `fetch`, or why there is none (the request
/// failed, or the server answered another status than 200).
pub(crate) async fn http_get(url: &str, _tls: &Tls) -> Result<String, String> {
    let failed = |what: &str, error: JsValue| format!("{what} {url}: {}", describe(&error));
    let response: web_sys::Response = JsFuture::from(global_fetch(url))
        .await
        .map_err(|error| failed("could not fetch", error))?
        .dyn_into()
        .map_err(|error| failed("not a response from", error))?;
    let text = JsFuture::from(
        response
            .text()
            .map_err(|error| failed("no text from", error))?,
    )
    .await
    .map_err(|error| failed("could not read", error))?
    .as_string()
    .unwrap_or_default();
    if response.status() == 200 {
        Ok(text)
    } else {
        Err(format!("{url} answered {}: {text}", response.status()))
    }
}

/// What a JavaScript value thrown says.
pub(crate) fn describe(error: &JsValue) -> String {
    error
        .dyn_ref::<js_sys::Error>()
        .map(|error| String::from(error.message()))
        .or_else(|| error.as_string())
        .unwrap_or_else(|| format!("{error:?}"))
}

/// Whether the transport inflates frames of `compression` itself: gzip, with the platform's
/// `DecompressionStream` ([`pump`]).
pub(crate) fn decompresses(compression: Compression) -> bool {
    compression == Compression::Gzip
}

/// Forwards a socket's events from `raw` to `inflated` in order, gzip frames inflated on the
/// way (to frames of the same message uncompressed), until either side is gone. A gzip frame
/// that does not inflate, or inflates to more than `max` bytes, becomes
/// [`Incoming::Malformed`].
async fn pump(
    mut raw: mpsc::UnboundedReceiver<Incoming>,
    inflated: mpsc::UnboundedSender<Incoming>,
    max: usize,
) {
    while let Some(incoming) = raw.recv().await {
        let incoming = match incoming {
            Incoming::Data(Payload::Binary(frame)) => match inflate(frame, max).await {
                Ok(frame) => Incoming::Data(Payload::Binary(frame)),
                Err(why) => Incoming::Malformed(why),
            },
            other => other,
        };
        if inflated.send(incoming).is_err() {
            return;
        }
    }
}

/// The binary server message `frame` with a gzip message inflated (by the platform's
/// `DecompressionStream`) into an uncompressed frame of the same message; any other frame as
/// it is. An error if the gzip member does not inflate, or to more than `max` bytes.
pub(crate) async fn inflate(frame: Bytes, max: usize) -> Result<Bytes, String> {
    if frame.first() != Some(&Compression::Gzip.tag()) {
        return Ok(frame);
    }
    match JsFuture::from(gunzip(&frame[1..], max as f64)).await {
        Ok(plain) => Ok(Bytes::from(js_sys::Uint8Array::new(&plain).to_vec())),
        Err(error) => Err(format!(
            "a gzip frame that does not inflate: {}",
            describe(&error)
        )),
    }
}

#[wasm_bindgen(inline_js = r#"
export async function gunzip(member, max) {
  const stream = new Blob([member]).stream().pipeThrough(new DecompressionStream("gzip"));
  const reader = stream.getReader();
  const parts = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel();
      throw new Error(`the message inflates to more than ${max} bytes`);
    }
    parts.push(value);
  }
  const frame = new Uint8Array(1 + size);
  let at = 1;
  for (const part of parts) {
    frame.set(part, at);
    at += part.length;
  }
  return frame;
}
"#)]
extern "C" {
    /// The gzip member `member` inflated by the platform's `DecompressionStream`, as an
    /// uncompressed frame (its compression byte `0`, then the message); rejects with why if it
    /// is not one gzip member or inflates to more than `max` bytes. (`Blob` copies `member`
    /// before this returns, so the view of wasm memory it is given may move after.)
    fn gunzip(member: &[u8], max: f64) -> js_sys::Promise;
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
