//! [`ClientBuilder`] and [`Client`]: how an application connects, and the cheap handle it
//! calls through.
//!
//! A [`Client`] sends [`Command`]s to the connection task (`connection.rs`), which owns the
//! socket. A call is queued when the method is called, not when its future is first polled,
//! so calls made one after the other are sent in that order and pipelined: each future only
//! waits for its own answer.

use crate::cache::{Cache, PrimaryKey};
use crate::connection::{self, Backoff, Command, Pending, ReducerOutcome, Settle};
use crate::credentials::{Credentials, TokenProvider};
use crate::delivery::{Callbacks, Deliveries, Shared};
use crate::error::Error;
use crate::new_build::{RowType, RowTypes};
use crate::platform;
use crate::servers::Servers;
use crate::state::{ConnectionState, ConnectionStates};
use crate::sync::{Mutex, RwLock};
use crate::table::{Listeners, TableHandle};
use std::fmt::Display;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use wasmod_abi::encoding::from_slice;
use wasmod_abi::{AlgebraicType, ConnectionId, Decode, Encode, Identity, SchemaType, Typespace};
use wasmod_protocol::description::ModuleDescription;
use wasmod_protocol::ws::{BinaryClientMessage, CallKind, Compression, RowList, TableRows};

/// A table the application reads with its row type, declared before connecting.
struct DeclaredTable {
    name: String,
    row_type: AlgebraicType,
    typespace: Typespace,
    /// The primary key column, when declared with the table rather than read from the
    /// module's description.
    primary_key: Option<String>,
}

/// How to connect: the server (or servers), the identity, the tables' row types,
/// reconnection.
pub struct ClientBuilder {
    urls: Vec<String>,
    credentials: Credentials,
    module: Option<ModuleDescription>,
    tables: Vec<DeclaredTable>,
    reconnect: Option<Backoff>,
    callbacks: Callbacks,
    compression: Compression,
    tls: platform::Tls,
}

impl ClientBuilder {
    /// A client of the server at `url`: its base URL (`http://host:port`, or `ws://`; over TLS
    /// `https://` or `wss://`), or the subscribe endpoint itself. Without a token it connects
    /// as a new identity; reconnection is on, with the default [`Backoff`]. Over TLS it
    /// trusts the platform's root certificates, and those given with
    /// [`root_certificate`](Self::root_certificate).
    pub fn new(url: impl Into<String>) -> Self {
        Self::with_servers([url])
    }

    /// A client of a replicated deployment (`docs/high-availability.md`) whose servers
    /// (nodes) are at `urls`, each as [`new`](Self::new) takes it: only the primary takes
    /// connections, and which node that is changes when one fails. The client connects to
    /// the first that takes it, trying them in this order; when a server refuses it (a standby
    /// closes with `4004`), fails, or its connection is lost, it tries the next one, going
    /// round (one round per wait of the [`Backoff`]), and resumes its query sets on the new
    /// primary. A call a server refused as `not_primary` (it never ran) is sent again to the
    /// next one ([`NOT_PRIMARY_RETRIES`](crate::NOT_PRIMARY_RETRIES)); a call in flight when
    /// a connection is lost fails with [`Error::Disconnected`] as always (whether it ran is
    /// unknown). `docs/client.md` has an example.
    pub fn with_servers<I>(urls: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        Self {
            urls: urls.into_iter().map(Into::into).collect(),
            credentials: Credentials::Session(None),
            module: None,
            tables: Vec::new(),
            reconnect: Some(Backoff::default()),
            callbacks: Callbacks::default(),
            compression: Compression::None,
            tls: platform::Tls::default(),
        }
    }

    /// Trusts `root` (a certificate authority's certificate) for the server's TLS certificate,
    /// besides the platform's roots: for a server whose certificate a private CA signed. May
    /// be given several times. See [`Certificate`](crate::Certificate) for an example.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn root_certificate(mut self, root: crate::Certificate) -> Self {
        self.tls = self.tls.with_root(root);
        self
    }

    /// Connects as the identity of `token`: one [`Client::token`] handed out earlier (or
    /// `POST /v1/identity`), or a token the server accepts from elsewhere (an OpenID
    /// Provider's ID token, `docs/client.md`). Reconnections use the fresh token the server
    /// sends on each connection. Replaces a [`token_provider`](Self::token_provider).
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.credentials = Credentials::Session(Some(token.into()));
        self
    }

    /// Connects with the tokens `provider` gives, for tokens that expire and that only
    /// their issuer renews (an OpenID Provider's ID tokens): the client calls it for the
    /// first connection, keeps its token for the reconnections, and calls it again when a
    /// server refuses that token as expired (`token_expired`), then connects with the new one
    /// at once. An error the provider returns (its text) fails [`connect`](Self::connect), or
    /// that attempt of a reconnection, with [`Error::TokenProvider`]; so does a provider that
    /// has not answered within a minute. Replaces a [`token`](Self::token).
    ///
    /// The future must be `Send` (in a browser, where JavaScript's futures are not, wrap one
    /// in `send_wrapper::SendWrapper`). `docs/client.md` has an example.
    pub fn token_provider<F, Fut, E>(mut self, provider: F) -> Self
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: Future<Output = Result<String, E>> + Send + 'static,
        E: Display,
    {
        self.credentials = Credentials::Provider(TokenProvider::new(provider));
        self
    }

    /// The module's description (`GET /v1/module`): it names the tables' primary keys, so
    /// that [`TableHandle::on_update`] sees updates.
    pub fn module(mut self, description: ModuleDescription) -> Self {
        self.module = Some(description);
        self
    }

    /// Declares that table `name`'s rows are `T`s: with the [`module`](Self::module)'s
    /// description, the client finds their primary key in their encoding.
    pub fn table<T: SchemaType>(self, name: &str) -> Self {
        self.declare::<T>(name, None)
    }

    /// Declares that table `name`'s rows are `T`s whose primary key is column `primary_key`,
    /// without the module's description (generated bindings know their tables' keys).
    pub fn keyed_table<T: SchemaType>(self, name: &str, primary_key: &str) -> Self {
        self.declare::<T>(name, Some(primary_key.to_owned()))
    }

    /// Where row callbacks run: on the connection task (the default) or in
    /// [`Client::frame_tick`].
    pub fn callbacks(mut self, callbacks: Callbacks) -> Self {
        self.callbacks = callbacks;
        self
    }

    fn declare<T: SchemaType>(self, name: &str, primary_key: Option<String>) -> Self {
        let mut typespace = Typespace::default();
        let row_type = T::schema(&mut typespace);
        self.declare_row_type(name, row_type, typespace, primary_key)
    }

    /// Declares that table `name`'s rows are of `row_type`, known at run time (the browser
    /// client reads it from the module's description).
    pub(crate) fn declare_row_type(
        mut self,
        name: &str,
        row_type: AlgebraicType,
        typespace: Typespace,
        primary_key: Option<String>,
    ) -> Self {
        self.tables.push(DeclaredTable {
            name: name.to_owned(),
            row_type,
            typespace,
            primary_key,
        });
        self
    }

    /// How to reconnect when the socket is lost; `None` to stay disconnected.
    pub fn reconnect(mut self, backoff: Option<Backoff>) -> Self {
        self.reconnect = backoff;
        self
    }

    /// How the server compresses the messages it sends (none by default; it compresses only
    /// those large enough to gain): asked for on every connection, reconnections included.
    /// Brotli needs the crate's `brotli` feature (on by default), gzip its `gzip` feature
    /// or a platform that inflates it (a browser's); without, `connect` refuses it.
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Connects, and starts the connection task (on the current tokio runtime, or in a
    /// browser on the page's event loop). An error if the first connection fails (each
    /// server tried once; reconnection is for connections that were up), or if a declared
    /// table's primary key is not a field of its row type.
    pub async fn connect(self) -> Result<Client, Error> {
        if !(self.compression.is_supported() || platform::decompresses(self.compression)) {
            return Err(Error::Connect(format!(
                "this client was built without {} decoding (wasmod-client's `{0}` feature): \
                 ask for gzip or no compression",
                self.compression.name()
            )));
        }
        let mut cache = Cache::new();
        let mut row_types = RowTypes::default();
        for table in &self.tables {
            if let Some(key) = self.primary_key(table)? {
                cache.set_primary_key(&table.name, key);
            }
            let row_type = RowType {
                row_type: table.row_type.clone(),
                typespace: table.typespace.clone(),
            };
            row_types.insert(table.name.clone(), row_type);
        }
        let mut servers = Servers::new(&self.urls, self.compression)?;
        let mut credentials = self.credentials;
        let socket = credentials.open(&mut servers, &self.tls).await?;
        let shared = Arc::new(Shared {
            cache: Arc::new(RwLock::new(cache)),
            listeners: Arc::new(Listeners::default()),
            session: Mutex::new(socket.session().clone()),
            deliveries: Deliveries::new(self.callbacks),
            connection: ConnectionStates::default(),
        });
        let (commands, receiver) = mpsc::unbounded_channel();
        let connection = connection::Connection::new(
            servers,
            credentials,
            self.tls,
            socket,
            shared.clone(),
            self.reconnect,
            row_types,
            &commands,
        );
        platform::spawn(connection::run(connection, receiver));
        Ok(Client {
            inner: Arc::new(Inner {
                commands,
                shared,
                next_query_set: AtomicU32::new(1),
            }),
        })
    }

    /// The primary key of `table`: the one declared with it, else the one the description
    /// names, if any.
    fn primary_key(&self, table: &DeclaredTable) -> Result<Option<PrimaryKey>, Error> {
        let Some(column) = table.primary_key.clone().or_else(|| {
            self.module.as_ref().and_then(|module| {
                module
                    .tables
                    .iter()
                    .find(|described| described.name == table.name)
                    .and_then(|described| described.primary_key.clone())
            })
        }) else {
            return Ok(None);
        };
        PrimaryKey::named(&table.row_type, table.typespace.clone(), &column)
            .map(Some)
            .ok_or_else(|| {
                Error::Connect(format!(
                    "table `{}`'s primary key `{column}` is not a field of its declared row type",
                    table.name
                ))
            })
    }
}

struct Inner {
    commands: mpsc::UnboundedSender<Command>,
    shared: Arc<Shared>,
    next_query_set: AtomicU32,
}

/// A connected client: calls, subscriptions and the cache. Cheap to clone; the connection
/// task ends with [`Client::disconnect`] or when the last clone is dropped.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl Client {
    /// A client of the server at `url`; see [`ClientBuilder`].
    pub fn builder(url: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(url)
    }

    /// A client of the replicated deployment whose servers are at `urls`; see
    /// [`ClientBuilder::with_servers`].
    pub fn builder_with_servers<I>(urls: I) -> ClientBuilder
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        ClientBuilder::with_servers(urls)
    }

    /// The identity the client runs as.
    pub fn identity(&self) -> Identity {
        self.inner.shared.session.lock().identity
    }

    /// The token the server issued for the identity: keep it to connect as it again.
    pub fn token(&self) -> String {
        self.inner.shared.session.lock().token.clone()
    }

    /// The current connection's id (each reconnection has a new one).
    pub fn connection_id(&self) -> ConnectionId {
        self.inner.shared.session.lock().connection_id
    }

    /// Where the connection stands now.
    pub fn connection_state(&self) -> ConnectionState {
        self.inner.shared.connection.get()
    }

    /// Calls `callback` with each change of [`connection_state`](Self::connection_state):
    /// the socket lost (reconnecting), back (connected), or the client ended (disconnected).
    /// It runs on the connection task, even for a client built with
    /// [`Callbacks::OnFrameTick`], and must not register another such callback.
    pub fn on_connection_state(&self, callback: impl FnMut(ConnectionState) + Send + 'static) {
        self.inner.shared.connection.listen(callback);
    }

    /// Table `name` of the cache, read as rows of type `T`.
    pub fn table<T: Decode + 'static>(&self, name: &str) -> TableHandle<T> {
        TableHandle::new(
            name,
            self.inner.shared.cache.clone(),
            self.inner.shared.listeners.clone(),
        )
    }

    /// Applies what the server sent since the last tick and runs its callbacks on this
    /// thread, then returns (it never waits for the network): for a client built with
    /// [`Callbacks::OnFrameTick`], to be called once per frame of a game or GUI loop. Returns
    /// how many server messages took effect; always `0` for a client whose callbacks run on
    /// the connection task, and `0` when called from a callback of a tick running.
    pub fn frame_tick(&self) -> usize {
        self.inner.shared.deliveries.tick(&self.inner.shared)
    }

    /// What the cache and the row callbacks of every table share, for the browser client,
    /// which reads rows by their encoding.
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn shared(&self) -> &Shared {
        &self.inner.shared
    }

    /// Calls reducer `name` with `args`, the encoding of its parameters (their product, in
    /// order). Resolves once the commit's changes are in the cache.
    pub fn call_reducer_raw(
        &self,
        name: &str,
        args: Vec<u8>,
    ) -> impl Future<Output = Result<ReducerOutcome, Error>> + Send + 'static {
        self.reducer(raw_frame(CallKind::Reducer, name, args))
    }

    /// Calls reducer `name` with `args`: a tuple of its parameters, in order (`(text,)` for
    /// one). They are encoded straight into the call's message.
    pub fn call_reducer<A: Encode>(
        &self,
        name: &str,
        args: &A,
    ) -> impl Future<Output = Result<ReducerOutcome, Error>> + Send + 'static {
        self.reducer(BinaryClientMessage::call_frame_of(
            CallKind::Reducer,
            0,
            name,
            args,
        ))
    }

    /// Sends the reducer call of `frame`; resolves with its answer.
    fn reducer(
        &self,
        frame: Vec<u8>,
    ) -> impl Future<Output = Result<ReducerOutcome, Error>> + Send + 'static {
        let (sender, answer) = oneshot::channel();
        self.call(frame, Pending::Reducer(sender));
        async move { answer.await.unwrap_or(Err(Error::Disconnected)) }
    }

    /// Calls procedure `name` with the encoding of its parameters; resolves to the encoding of
    /// its value, once the cache holds every change the procedure committed (as far as the
    /// query sets see them).
    pub fn call_procedure_raw(
        &self,
        name: &str,
        args: Vec<u8>,
    ) -> impl Future<Output = Result<Vec<u8>, Error>> + Send + 'static {
        self.call_value(
            CallKind::Procedure,
            raw_frame(CallKind::Procedure, name, args),
        )
    }

    /// Calls procedure `name` with a tuple of its parameters; resolves to its value.
    pub fn call_procedure<A: Encode, R: Decode + Send + 'static>(
        &self,
        name: &str,
        args: &A,
    ) -> impl Future<Output = Result<R, Error>> + Send + 'static {
        decoded(self.call_value(
            CallKind::Procedure,
            BinaryClientMessage::call_frame_of(CallKind::Procedure, 0, name, args),
        ))
    }

    /// Calls view `name` with the encoding of its parameters; resolves to the encoding of its
    /// value.
    pub fn call_view_raw(
        &self,
        name: &str,
        args: Vec<u8>,
    ) -> impl Future<Output = Result<Vec<u8>, Error>> + Send + 'static {
        self.call_value(CallKind::View, raw_frame(CallKind::View, name, args))
    }

    /// Calls view `name` with a tuple of its parameters; resolves to its value.
    pub fn call_view<A: Encode, R: Decode + Send + 'static>(
        &self,
        name: &str,
        args: &A,
    ) -> impl Future<Output = Result<R, Error>> + Send + 'static {
        decoded(self.call_value(
            CallKind::View,
            BinaryClientMessage::call_frame_of(CallKind::View, 0, name, args),
        ))
    }

    /// Resolves once the cache holds every change of the commits up to `offset` that this
    /// client's query sets see, and their row callbacks have run: read-your-writes for a
    /// write made elsewhere, such as an HTTP call (whose answer carries its `offset`) or
    /// another client that passed its offset on.
    ///
    /// Resolves at once (after the deliveries queued) if an update at or past `offset` has
    /// already been applied; otherwise asks the server (`WaitFor`), which answers once it has
    /// sent every update up to `offset`, waiting for that commit if it has not happened yet.
    /// Fails with [`Error::Disconnected`] if the socket is lost first.
    ///
    /// ```no_run
    /// # async fn example(client: wasmod_client::Client, offset: u64) -> Result<(), wasmod_client::Error> {
    /// // `offset` from `POST /v1/reducers/send`'s answer: {"offset": 41, "status": "committed", ..}
    /// client.sync(offset).await?;
    /// // The cache now shows the message the HTTP call sent.
    /// # Ok(())
    /// # }
    /// ```
    pub fn sync(&self, offset: u64) -> impl Future<Output = Result<(), Error>> + Send + 'static {
        let (sender, synced) = oneshot::channel();
        let settle: Settle = Box::new(move |result| drop(sender.send(result)));
        self.command(Command::Sync { offset, settle });
        async move { synced.await.unwrap_or(Err(Error::Disconnected)) }
    }

    /// Runs `query` once against the committed tables: the selected rows, per table.
    pub fn one_off_query(
        &self,
        query: &str,
    ) -> impl Future<Output = Result<Vec<TableRows<RowList>>, Error>> + Send + 'static {
        let (sender, answer) = oneshot::channel();
        self.command(Command::OneOff {
            query: query.to_owned(),
            answer: sender,
        });
        async move { answer.await.unwrap_or(Err(Error::Disconnected)) }
    }

    /// Closes the socket and ends the connection task; calls still waiting fail with
    /// [`Error::Disconnected`].
    pub async fn disconnect(&self) {
        let (done, finished) = oneshot::channel();
        if self.command(Command::Disconnect { done }) {
            let _ = finished.await;
        }
    }

    /// Whether the connection task is still running (connected, or reconnecting).
    pub fn is_running(&self) -> bool {
        !self.inner.commands.is_closed()
    }

    /// A fresh query set id.
    pub(crate) fn next_query_set_id(&self) -> u32 {
        self.inner.next_query_set.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends `command` to the connection task; `false` if it has ended (the command's
    /// answer channels are then dropped, which their futures read as disconnected).
    pub(crate) fn command(&self, command: Command) -> bool {
        self.inner.commands.send(command).is_ok()
    }

    /// Sends the call of `frame` (the connection task numbers it); `pending` hears its
    /// answer.
    fn call(&self, frame: Vec<u8>, pending: Pending) {
        self.command(Command::Call { frame, pending });
    }

    /// Sends the procedure or view call (`kind`) of `frame`; resolves with its value's
    /// encoding (a procedure's once what it committed is in the cache).
    fn call_value(
        &self,
        kind: CallKind,
        frame: Vec<u8>,
    ) -> impl Future<Output = Result<Vec<u8>, Error>> + Send + 'static {
        let (sender, answer) = oneshot::channel();
        let pending = Pending::Value {
            answer: sender,
            writes: kind == CallKind::Procedure,
        };
        self.call(frame, pending);
        async move { answer.await.unwrap_or(Err(Error::Disconnected)) }
    }
}

/// The frame of a call of `name` of `kind` with `args`, the encoding of its parameters: the
/// message's own encoder copies them once, as [`BinaryClientMessage::call_frame`] would (the
/// browser client, whose calls all come this way, then needs no second encoder).
fn raw_frame(kind: CallKind, name: &str, args: Vec<u8>) -> Vec<u8> {
    BinaryClientMessage::call(kind, 0, name.to_owned(), args).to_bytes()
}

/// `raw`'s value decoded as an `R`.
async fn decoded<R: Decode>(raw: impl Future<Output = Result<Vec<u8>, Error>>) -> Result<R, Error> {
    Ok(from_slice(&raw.await?)?)
}
