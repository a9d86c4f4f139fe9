//! The client's JavaScript API, for the browser (`wasm32`, through `wasm-bindgen`).
//!
//! It is the same [`Client`] underneath (one connection task, the cache, reconnection),
//! seen from JavaScript without Rust types: [`WasmodClient::connect`] reads the module's
//! description (`GET /v1/module`) and converts rows, arguments and returned values through
//! the protocol's JSON mapping ([`JsonModule`]), so a row arrives in a callback as the plain
//! object `GET /v1/tables` would show, and a reducer takes the arguments
//! `POST /v1/reducers` takes. Calls return Promises; errors reject them with an `Error`.
//! [`WasmodReplay`] is the same cache and callbacks fed frames by the page itself (`Replay`).
//!
//! It runs wherever JavaScript has `fetch` and a WebSocket class: in pages and workers, and in
//! Node (where [`set_web_socket`] gives it a WebSocket class before Node 22 has a global one).
//! The npm package `@wasmod/client` (`client/npm/`) wraps it in a typed API.
//!
//! JavaScript functions are not `Send`, and the client's callbacks must be; the page has one
//! thread, so they are wrapped in a [`SendWrapper`] (which would panic if they ever moved to
//! another thread: none exists here).

use crate::cache::Cache;
use crate::json::{JsonCall, JsonModule};
use crate::sync::RwLock;
use crate::table::{Listeners, RawListener, RowCallback};
use crate::{Client, Compression, Error, NewBuild, Replay, SubscriptionHandle};
use js_sys::{Array, Function, Promise};
use send_wrapper::SendWrapper;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use wasmod_protocol::description::ModuleDescription;

/// Makes clients construct their sockets with `constructor`, a class with the browser
/// `WebSocket`'s constructor (`new C(url, protocol)`) and members (such as the `ws` package's,
/// in Node 20, which has no global `WebSocket`), or with the global `WebSocket` again for
/// `undefined`/`null`. Applies to every socket opened from then on, reconnections included.
#[wasm_bindgen(js_name = setWebSocket)]
pub fn set_web_socket(constructor: Option<Function>) {
    crate::platform::set_web_socket(constructor);
}

/// `frame`, a binary server message as the server sends it, with a gzip message inflated into
/// an uncompressed frame of the same message (other frames as they are): what a
/// [`WasmodReplay`] needs of a gzip frame, since this build inflates gzip with the platform's
/// asynchronous `DecompressionStream` rather than in wasm. Rejects if it does not inflate.
#[wasm_bindgen(js_name = inflateFrame)]
pub fn inflate_frame(frame: Vec<u8>) -> Promise {
    future_to_promise(async move {
        let max = crate::socket::MAX_MESSAGE;
        let frame = crate::platform::inflate(frame.into(), max)
            .await
            .map_err(|why| js_value(Error::Protocol(why)))?;
        Ok(js_sys::Uint8Array::from(&frame[..]).into())
    })
}

/// A connected client of a wasmod server, for JavaScript.
#[wasm_bindgen]
pub struct WasmodClient {
    client: Client,
    tables: JsTables,
}

/// A subscribed query set, for JavaScript.
#[wasm_bindgen]
pub struct Subscription {
    handle: Option<SubscriptionHandle>,
}

#[wasm_bindgen]
impl Subscription {
    /// Whether the query set's rows last came resumed after a reconnection: the server sent
    /// only what changed since the last commit the cache applied, rather than every row.
    /// False before any reconnection, after one the server could not resume from, and once
    /// unsubscribed.
    #[wasm_bindgen(getter)]
    pub fn resumed(&self) -> bool {
        self.handle
            .as_ref()
            .is_some_and(SubscriptionHandle::resumed)
    }

    /// Ends the query set: its rows leave the cache (with their delete callbacks).
    pub fn unsubscribe(&mut self) {
        if let Some(handle) = self.handle.take() {
            handle.unsubscribe();
        }
    }
}

#[wasm_bindgen]
impl WasmodClient {
    /// Connects to the server at `url` (`http(s)://host:port`), or to the first of a
    /// replicated deployment's servers that takes the connection (an array of URLs: the
    /// others are followed through a failover, as [`ClientBuilder::with_servers`] says), as
    /// the identity of `token` (one `token` handed out earlier), or as a new identity without
    /// one, asking the server to compress large messages with `compression` (`"gzip"`; none
    /// by default), which the client decodes in wasm. The package's build reads no brotli:
    /// `"brotli"` is refused. Reconnects by itself when the connection is lost.
    ///
    /// With `token_provider`, a function returning a token or a Promise of one (an OpenID
    /// Provider's ID token), `token` is not used: the client calls it for the first connection
    /// and again when a server refuses its last token as expired, as
    /// [`ClientBuilder::token_provider`] says. What it throws or rejects with, or a value that
    /// is not a string, fails that attempt with the reason.
    ///
    /// [`ClientBuilder::with_servers`]: crate::ClientBuilder::with_servers
    /// [`ClientBuilder::token_provider`]: crate::ClientBuilder::token_provider
    pub async fn connect(
        #[wasm_bindgen(unchecked_param_type = "string | readonly string[]")] url: JsValue,
        token: Option<String>,
        compression: Option<String>,
        #[wasm_bindgen(unchecked_param_type = "(() => string | Promise<string>) | undefined")]
        token_provider: Option<Function>,
    ) -> Result<WasmodClient, JsError> {
        let compression = match compression.as_deref() {
            None => Compression::None,
            Some(name) => Compression::from_name(name).ok_or_else(|| {
                JsError::new(&format!(
                    "`{name}` is not a compression: none, gzip or brotli"
                ))
            })?,
        };
        let urls = server_urls(&url)?;
        let description = describe(&urls).await?;
        let module = JsonModule::new(&description).map_err(js_error)?;
        let mut builder = Client::builder_with_servers(urls)
            .module(description)
            .compression(compression);
        if let Some(provider) = token_provider {
            builder = builder.token_provider(js_token_provider(provider));
        } else if let Some(token) = token {
            builder = builder.token(token);
        }
        for table in module.tables() {
            if let Some(row_type) = module.row_type(table) {
                builder = builder.declare_row_type(
                    table,
                    row_type.clone(),
                    module.typespace().clone(),
                    module.primary_key(table).map(str::to_owned),
                );
            }
        }
        let client = builder.connect().await.map_err(js_error)?;
        let shared = client.shared();
        let tables = JsTables {
            module: Rc::new(module),
            cache: shared.cache.clone(),
            listeners: shared.listeners.clone(),
        };
        Ok(WasmodClient { client, tables })
    }

    /// The token of the client's identity: keep it (in `localStorage`) to connect again as
    /// the same identity.
    #[wasm_bindgen(getter)]
    pub fn token(&self) -> String {
        self.client.token()
    }

    /// The client's identity, as 64 hex digits (as rows write identities).
    #[wasm_bindgen(getter)]
    pub fn identity(&self) -> String {
        self.client.identity().to_hex()
    }

    /// Where the connection stands: `"connected"`, `"reconnecting"` or `"disconnected"`.
    #[wasm_bindgen(getter, js_name = connectionState)]
    pub fn connection_state(&self) -> String {
        self.client.connection_state().name().to_owned()
    }

    /// Calls `callback(state)` with each change of `connectionState`: the socket lost
    /// (`"reconnecting"`), back (`"connected"`), or the client ended (`"disconnected"`).
    #[wasm_bindgen(js_name = onConnectionState)]
    pub fn on_connection_state(&self, callback: Function) {
        let callback = SendWrapper::new(callback);
        self.client.on_connection_state(move |state| {
            report(callback.call1(&JsValue::NULL, &JsValue::from_str(state.name())));
        });
    }

    /// Subscribes to the rows `queries` (SQL) select, as one query set: `onApplied()` once
    /// they are in the cache, `onError(message)` if the server refuses them, and
    /// `onNewBuild(event)` each time a new build of the module ends the set, with what became
    /// of it: `{ kind: "resubscribed", ended }` (subscribed again, the new build's rows in
    /// the cache) or `{ kind: "ended", ended, reason }` (its rows gone), `ended` the server's
    /// message, `reason` why it stays ended.
    pub fn subscribe(
        &self,
        queries: Vec<String>,
        on_applied: Option<Function>,
        on_error: Option<Function>,
        on_new_build: Option<Function>,
    ) -> Subscription {
        let mut builder = self.client.subscription();
        if let Some(on_applied) = on_applied {
            let on_applied = SendWrapper::new(on_applied);
            builder = builder.on_applied(move || report(on_applied.call0(&JsValue::NULL)));
        }
        if let Some(on_error) = on_error {
            let on_error = SendWrapper::new(on_error);
            builder = builder.on_error(move |message| {
                report(on_error.call1(&JsValue::NULL, &JsValue::from_str(message)));
            });
        }
        if let Some(on_new_build) = on_new_build {
            let on_new_build = SendWrapper::new(on_new_build);
            builder = builder.on_new_build(move |event| {
                report(on_new_build.call1(&JsValue::NULL, &new_build_event(event)));
            });
        }
        Subscription {
            handle: Some(builder.subscribe(queries)),
        }
    }

    /// Calls `callback(row)` with each row of `table` that enters the cache.
    #[wasm_bindgen(js_name = onInsert)]
    pub fn on_insert(&self, table: &str, callback: Function) -> Result<(), JsError> {
        self.tables.on_insert(table, callback)
    }

    /// Calls `callback(row)` with each row of `table` that leaves the cache.
    #[wasm_bindgen(js_name = onDelete)]
    pub fn on_delete(&self, table: &str, callback: Function) -> Result<(), JsError> {
        self.tables.on_delete(table, callback)
    }

    /// Calls `callback(old, new)` with each row of `table` replaced by another with the same
    /// primary key (tables without one see a delete and an insert instead).
    #[wasm_bindgen(js_name = onUpdate)]
    pub fn on_update(&self, table: &str, callback: Function) -> Result<(), JsError> {
        self.tables.on_update(table, callback)
    }

    /// The rows of `table` the cache holds now (in no particular order).
    pub fn rows(&self, table: &str) -> Result<Array, JsError> {
        self.tables.rows(table)
    }

    /// Calls reducer `name` with `args` (an array in parameter order, or an object keyed
    /// by parameter name); resolves with the commit's offset once its changes are in the
    /// cache, rejects with the reducer's error.
    #[wasm_bindgen(js_name = callReducer)]
    pub fn call_reducer(&self, name: &str, args: JsValue) -> Promise {
        let call = self
            .encode(JsonCall::Reducer, name, &args)
            .map(|args| self.client.call_reducer_raw(name, args));
        future_to_promise(async move {
            let outcome = call?.await.map_err(js_value)?;
            Ok(JsValue::from_f64(outcome.offset as f64))
        })
    }

    /// Calls procedure `name` with `args`; resolves with the value it returns.
    #[wasm_bindgen(js_name = callProcedure)]
    pub fn call_procedure(&self, name: &str, args: JsValue) -> Promise {
        self.call_value(JsonCall::Procedure, name, args)
    }

    /// Calls view `name` with `args`; resolves with the value it returns.
    #[wasm_bindgen(js_name = callView)]
    pub fn call_view(&self, name: &str, args: JsValue) -> Promise {
        self.call_value(JsonCall::View, name, args)
    }

    /// Resolves once the cache holds every change up to commit `offset` that this client's
    /// query sets see, their callbacks run ([`Client::sync`]): read-your-writes for a write
    /// made over HTTP or by another client. Rejects if `offset` is not a whole number of at
    /// least 0, or if the connection is lost first.
    #[wasm_bindgen(js_name = caughtUp)]
    pub fn caught_up(&self, offset: f64) -> Promise {
        let sync = whole(offset).map(|offset| self.client.sync(offset));
        future_to_promise(async move {
            sync?.await.map_err(js_value)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Closes the connection; calls still waiting reject. Resolves once it is closed.
    pub fn disconnect(&self) -> Promise {
        let client = self.client.clone();
        future_to_promise(async move {
            client.disconnect().await;
            Ok(JsValue::UNDEFINED)
        })
    }
}

/// A JavaScript token provider's answer, awaited.
type JsToken = Pin<Box<dyn Future<Output = Result<String, String>>>>;

/// The JavaScript function `provide` as a token provider: each call calls it and awaits what
/// it returns (a string, or a Promise of one); what it throws or rejects with, or a value that
/// is not a string, is the provider's error, as its text.
fn js_token_provider(provide: Function) -> impl FnMut() -> SendWrapper<JsToken> + Send + 'static {
    let provide = SendWrapper::new(provide);
    move || {
        let returned = provide.call0(&JsValue::NULL);
        SendWrapper::new(Box::pin(async move {
            let describe = |error: JsValue| crate::platform::describe(&error);
            let token = JsFuture::from(Promise::resolve(&returned.map_err(describe)?))
                .await
                .map_err(describe)?;
            token
                .as_string()
                .ok_or_else(|| "it returned something other than a string".to_owned())
        }))
    }
}

/// The server URLs of `url`: a string, or an array of strings.
fn server_urls(url: &JsValue) -> Result<Vec<String>, JsError> {
    if let Some(url) = url.as_string() {
        return Ok(vec![url]);
    }
    if !Array::is_array(url) {
        return Err(JsError::new(
            "a server URL is a string, or an array of them",
        ));
    }
    Array::from(url)
        .iter()
        .map(|url| {
            url.as_string()
                .ok_or_else(|| JsError::new("a server URL is a string"))
        })
        .collect()
}

/// The module's description, from the first of the servers at `urls` that gives it (a
/// standby serves it as the primary does; a dead server does not), or the last error.
async fn describe(urls: &[String]) -> Result<ModuleDescription, JsError> {
    let mut failed = String::from("no server URL was given");
    for url in urls {
        match crate::description::fetch(url, &crate::platform::Tls::default()).await {
            Ok(description) => return Ok(description),
            Err(error) => failed = error,
        }
    }
    Err(JsError::new(&failed))
}

/// `number` as an offset: a whole number from 0 to 2^53 (JavaScript's exact integers).
fn whole(number: f64) -> Result<u64, JsValue> {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if number.fract() == 0.0 && (0.0..=EXACT).contains(&number) {
        Ok(number as u64)
    } else {
        // Not formatted with the number: float formatting would add kilobytes to the wasm.
        Err(js_value(Error::Protocol(
            "an offset is a whole number of at least 0".to_owned(),
        )))
    }
}

impl WasmodClient {
    /// `args` encoded for entry point `name`, or the rejection of the call.
    fn encode(&self, kind: JsonCall, name: &str, args: &JsValue) -> Result<Vec<u8>, JsValue> {
        let json = if args.is_undefined() || args.is_null() {
            serde_json::Value::Null
        } else {
            let text: String = js_sys::JSON::stringify(args)?.into();
            serde_json::from_str(&text)
                .map_err(|error| js_value(Error::Protocol(error.to_string())))?
        };
        self.tables.module.args(kind, name, &json).map_err(js_value)
    }

    fn call_value(&self, kind: JsonCall, name: &str, args: JsValue) -> Promise {
        let call = self.encode(kind, name, &args).map(|args| {
            let call: std::pin::Pin<Box<dyn std::future::Future<Output = _>>> = match kind {
                JsonCall::Procedure => Box::pin(self.client.call_procedure_raw(name, args)),
                _ => Box::pin(self.client.call_view_raw(name, args)),
            };
            call
        });
        let module = self.tables.module.clone();
        let name = name.to_owned();
        future_to_promise(async move {
            let bytes = call?.await.map_err(js_value)?;
            let json = module
                .returned_json(kind, &name, &bytes)
                .map_err(js_value)?;
            parse(json.get())
        })
    }
}

/// A cache that a connected client fills from its socket, or the application itself
/// through [`Replay`] (recorded or relayed messages, the shared test vectors of
/// `client/vectors/`), for JavaScript: `apply(frame)` each binary server message, as the
/// server sends it (compressed or not), and read the rows and callbacks as a
/// [`WasmodClient`]'s. Nothing is sent: the query sets are those the messages name.
#[wasm_bindgen]
pub struct WasmodReplay {
    /// Borrowed only while a frame is applied, so that its callbacks may read the rows.
    replay: RefCell<Replay>,
    tables: JsTables,
}

#[wasm_bindgen]
impl WasmodReplay {
    /// An empty cache of the tables of the module `description` describes (the JSON text of
    /// `GET /v1/module`).
    #[wasm_bindgen(constructor)]
    pub fn new(description: &str) -> Result<WasmodReplay, JsError> {
        let description = ModuleDescription::from_json(description)
            .map_err(|error| JsError::new(&format!("not a module's description: {error}")))?;
        let module = JsonModule::new(&description).map_err(js_error)?;
        let replay = Replay::new(&module).map_err(js_error)?;
        let (cache, listeners) = replay.tables();
        let tables = JsTables {
            cache: cache.clone(),
            listeners: listeners.clone(),
            module: Rc::new(module),
        };
        Ok(WasmodReplay {
            replay: RefCell::new(replay),
            tables,
        })
    }

    /// Applies `frame`, one binary server message: its rows enter and leave the cache, with
    /// their callbacks. Returns the message as the JSON protocol writes it (rows as objects,
    /// a call's returned value as the hex of its encoding); throws, changing nothing, for
    /// bytes that are not a message, or when called from a callback of a frame being applied.
    pub fn apply(&self, frame: &[u8]) -> Result<JsValue, JsError> {
        let mut replay = self
            .replay
            .try_borrow_mut()
            .map_err(|_| JsError::new("a frame is being applied: apply is not reentrant"))?;
        let message = replay.apply(frame).map_err(js_error)?;
        drop(replay);
        let json = self
            .tables
            .module
            .message_json(&message)
            .map_err(js_error)?;
        parse(&json).map_err(|error| JsError::new(&crate::platform::describe(&error)))
    }

    /// Calls `callback(row)` with each row of `table` that enters the cache.
    #[wasm_bindgen(js_name = onInsert)]
    pub fn on_insert(&self, table: &str, callback: Function) -> Result<(), JsError> {
        self.tables.on_insert(table, callback)
    }

    /// Calls `callback(row)` with each row of `table` that leaves the cache.
    #[wasm_bindgen(js_name = onDelete)]
    pub fn on_delete(&self, table: &str, callback: Function) -> Result<(), JsError> {
        self.tables.on_delete(table, callback)
    }

    /// Calls `callback(old, new)` with each row of `table` replaced by another with the same
    /// primary key.
    #[wasm_bindgen(js_name = onUpdate)]
    pub fn on_update(&self, table: &str, callback: Function) -> Result<(), JsError> {
        self.tables.on_update(table, callback)
    }

    /// The rows of `table` the cache holds now (in no particular order).
    pub fn rows(&self, table: &str) -> Result<Array, JsError> {
        self.tables.rows(table)
    }
}

/// A cache's tables as JavaScript sees them, rows as objects of the JSON mapping: what a
/// [`WasmodClient`] and a [`WasmodReplay`] share.
struct JsTables {
    module: Rc<JsonModule>,
    cache: Arc<RwLock<Cache>>,
    listeners: Arc<Listeners>,
}

impl JsTables {
    fn on_insert(&self, table: &str, callback: Function) -> Result<(), JsError> {
        self.on_row(table, callback, RawListener::Insert)
    }

    fn on_delete(&self, table: &str, callback: Function) -> Result<(), JsError> {
        self.on_row(table, callback, RawListener::Delete)
    }

    /// Registers `callback(row)` as the `kind` of listener of `table`'s rows.
    fn on_row(
        &self,
        table: &str,
        callback: Function,
        kind: fn(RowCallback) -> RawListener,
    ) -> Result<(), JsError> {
        let convert = self.row_converter(table)?;
        let callback = SendWrapper::new(callback);
        self.listeners.listen(
            table,
            kind(Box::new(move |row| {
                if let Some(row) = convert(row) {
                    report(callback.call1(&JsValue::NULL, &row));
                }
            })),
        );
        Ok(())
    }

    fn on_update(&self, table: &str, callback: Function) -> Result<(), JsError> {
        let convert = self.row_converter(table)?;
        let callback = SendWrapper::new(callback);
        self.listeners.listen(
            table,
            RawListener::Update(Box::new(move |old, new| {
                if let (Some(old), Some(new)) = (convert(old), convert(new)) {
                    report(callback.call2(&JsValue::NULL, &old, &new));
                }
            })),
        );
        Ok(())
    }

    fn rows(&self, table: &str) -> Result<Array, JsError> {
        let convert = self.row_converter(table)?;
        let cache = self.cache.read();
        Ok(cache.rows(table).filter_map(convert).collect())
    }

    /// Turns an encoded row of `table` into a JavaScript object; `None` (logged) for a row
    /// that does not decode. An error if the module has no such table.
    fn row_converter(&self, table: &str) -> Result<impl Fn(&[u8]) -> Option<JsValue>, JsError> {
        if self.module.row_type(table).is_none() {
            return Err(JsError::new(&format!(
                "the module has no public table `{table}`"
            )));
        }
        let module = SendWrapper::new(self.module.clone());
        let table = table.to_owned();
        Ok(
            move |row: &[u8]| match module.row_json(&table, row).map(|json| parse(json.get())) {
                Ok(Ok(value)) => Some(value),
                Ok(Err(error)) => {
                    tracing::warn!(table, ?error, "a row JSON could not parse");
                    None
                }
                Err(error) => {
                    tracing::warn!(table, %error, "a row that does not decode");
                    None
                }
            },
        )
    }
}

/// What became of a query set a new build ended, as the object `onNewBuild` is given.
fn new_build_event(event: &NewBuild) -> JsValue {
    let object = js_sys::Object::new();
    let set = |key: &str, value: &str| {
        // Setting a property of a plain object cannot fail.
        let _ = js_sys::Reflect::set(&object, &key.into(), &value.into());
    };
    match event {
        NewBuild::Resubscribed { ended } => {
            set("kind", "resubscribed");
            set("ended", ended);
        }
        NewBuild::Ended { ended, reason } => {
            set("kind", "ended");
            set("ended", ended);
            set("reason", reason);
        }
    }
    object.into()
}

/// JSON text as a JavaScript value.
fn parse(json: &str) -> Result<JsValue, JsValue> {
    js_sys::JSON::parse(json)
}

/// A client error as a JavaScript `Error` (what rejected Promises carry).
fn js_value(error: Error) -> JsValue {
    js_sys::Error::new(&error.to_string()).into()
}

fn js_error(error: Error) -> JsError {
    JsError::new(&error.to_string())
}

/// Logs what a callback threw: a callback's exception must not end the connection task.
fn report(outcome: Result<JsValue, JsValue>) {
    if let Err(error) = outcome {
        web_sys::console::error_2(&JsValue::from_str("a wasmod callback threw"), &error);
    }
}
