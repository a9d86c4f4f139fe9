//! Which TCP connections the server takes, and how long it keeps them.
//!
//! Every connection holds a file descriptor, a task and buffers, whether or not it ever sends a
//! request, so a client that merely opens connections could exhaust the process: the server
//! would run out of file descriptors, `accept` would fail in a loop, and `/health` would stop
//! answering (issue 27, item 5: 20,000 idle connections did that). Here the server's accept
//! loop bounds what connections may hold:
//!
//! - **Open files.** At start, `wasmod serve` raises the soft `RLIMIT_NOFILE` to the hard limit
//!   ([`raise_open_files_limit`]), and the server keeps [`RESERVED_FILES`] of it for its own
//!   files (the commit log, outbound HTTP, Redis): the connection cap is lowered to fit under
//!   what is left.
//! - **Connections, all together and per source address.** A connection past
//!   [`ServerConfig::max_connections`], or past [`ServerConfig::max_connections_per_address`]
//!   from its address (an IPv6 address counts by its /64, the block one host usually holds), is
//!   refused as soon as it is accepted: an error answer is written without reading its
//!   request. Refusing at once, rather than not accepting, keeps the listen queue moving and
//!   `accept` from failing: the others, `/health` included, are still served. A
//!   connection's place is held by its socket, so an upgraded one (a WebSocket) holds it until
//!   the socket closes.
//! - **Refusals that arrive.** A socket closed with input unread is reset, and a client still
//!   sending its request (a body of some size) then fails on the reset, its write refused,
//!   before it reads the answer that was written to it. So a refused connection is turned
//!   away (`TurnAway`): its end is sent after the answer, and what the client sends is read
//!   and dropped until it closes its end, for [`LINGER`] and a request's size at most.
//!   [`LINGERING`] refused connections are turned away so at once; past them, a refused
//!   connection is closed at once after the answer, so that a flood of them holds no more
//!   of the server's files.
//! - **Health checks at the cap.** Past the cap, [`HEALTH_PLACES`] more connections are taken
//!   for `GET /health` alone: one request each, its headers within [`HEALTH_HEADER_TIMEOUT`],
//!   any other request answered `503 busy`. A load balancer's health check thus tells a full
//!   server (it answers) from a dead one, whatever holds the other places.
//! - **Slow headers, idle connections.** A request's headers must arrive within
//!   [`ServerConfig::header_read_timeout`] of when the server starts waiting for them, which
//!   on a kept-alive connection is the end of the previous answer: the same bound closes idle
//!   keep-alive connections (hyper's `header_read_timeout`).
//! - **Slow readers.** A write that waits for the client to read for longer than
//!   [`ServerConfig::write_timeout`] fails, and the connection closes ([`Admitted`]).
//! - **Accept errors.** When `accept` fails for want of resources (`EMFILE`, `ENFILE`,
//!   `ENOBUFS`, `ENOMEM`) the loop waits before it tries again, longer each time up to a
//!   second, and logs it at most every ten seconds, rather than spin and flood the log.
//!
//! The WebSocket connections of one identity are bounded where the handshake is answered
//! (`routes/subscribe.rs`, [`ServerConfig::max_websockets_per_identity`]).

use crate::error::{ApiError, ErrorBody, ErrorCode, HttpError};
use crate::ServerConfig;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::response::IntoResponse;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;
use tower::ServiceExt;
use wasmod_node::address_key;
use wasmod_node::{Counted, Counts};

/// The connections taken past the cap for `GET /health` alone (counted in
/// [`RESERVED_FILES`]).
pub const HEALTH_PLACES: usize = 8;

/// How long a connection taken for `/health` alone may take to send its request's headers.
pub const HEALTH_HEADER_TIMEOUT: Duration = Duration::from_secs(1);

/// File descriptors of the open-file limit kept for the server's own use (its data files,
/// outbound HTTP, Redis, the runtime), never given to connections.
pub const RESERVED_FILES: u64 = 256;

/// The refused connections read and dropped at once before they are closed (`TurnAway`;
/// counted in [`RESERVED_FILES`]).
pub const LINGERING: usize = 64;

/// How long a refused connection's input is read and dropped, at most, before it is closed.
pub const LINGER: Duration = Duration::from_secs(1);

/// What a refused connection's input is read for, at most, beyond the body limit: its
/// request's head.
const LINGER_HEAD_BYTES: usize = 64 << 10;

/// Raises the soft limit on open files (`RLIMIT_NOFILE`) to the hard limit, so that the
/// server may hold as many connections as the system lets it, and returns the new soft limit.
/// The default soft limit (often 1,024) is far below what a server needs, and the hard limit
/// is what an unprivileged process may raise it to.
#[cfg(unix)]
pub fn raise_open_files_limit() -> io::Result<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes the limit into the struct it is given, which lives on this
    // frame for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: `setrlimit` only reads the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    open_files_limit().ok_or_else(|| io::Error::other("the open-file limit cannot be read back"))
}

/// Leaves the open-file limit as it is (there is no `RLIMIT_NOFILE` to raise), and says so.
#[cfg(not(unix))]
pub fn raise_open_files_limit() -> io::Result<u64> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "this system has no open-file limit to raise",
    ))
}

/// The soft limit on open files, if the system has one and it is finite.
fn open_files_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as in `raise_open_files_limit`.
        let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
        (read && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
    }
    #[cfg(not(unix))]
    None
}

/// The most connections the server holds: `configured`, lowered to leave [`RESERVED_FILES`]
/// of the open-file limit `files` (if there is one) free; at least one.
fn connection_cap(configured: usize, files: Option<u64>) -> usize {
    let fit = files.map_or(usize::MAX, |files| {
        usize::try_from(files.saturating_sub(RESERVED_FILES)).unwrap_or(usize::MAX)
    });
    configured.min(fit).max(1)
}

/// A connection's place, held for as long as its socket is open.
#[derive(Debug)]
struct Place {
    _all: OwnedSemaphorePermit,
    _address: Counted<IpAddr>,
}

/// Why a connection was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// The server holds [`ServerConfig::max_connections`].
    Full,
    /// The address holds [`ServerConfig::max_connections_per_address`].
    Address,
}

/// What a connection that was taken may ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Served {
    /// Everything: it holds one of the places of [`ServerConfig::max_connections`].
    Everything,
    /// `GET /health` alone, once: it holds one of the [`HEALTH_PLACES`] past the cap.
    Health,
}

/// Who may hold a connection: the places of all connections and of each address, and those
/// kept for health checks.
#[derive(Debug)]
struct Places {
    all: Arc<Semaphore>,
    health: Arc<Semaphore>,
    cap: usize,
    per_address: Counts<IpAddr>,
    /// The answers written to refused connections: full, and over the address's share.
    refusals: [Vec<u8>; 2],
}

impl Places {
    fn new(cap: usize, per_address: usize) -> Self {
        let per_address = Counts::new(per_address);
        let full = refusal(ErrorCode::Busy, &full_message(cap));
        let address = refusal(
            ErrorCode::TooManyCalls,
            &format!(
                "this address holds {} connections, the most the server takes from one",
                per_address.max()
            ),
        );
        Self {
            all: Arc::new(Semaphore::new(cap)),
            health: Arc::new(Semaphore::new(HEALTH_PLACES)),
            cap,
            per_address,
            refusals: [full, address],
        }
    }

    /// A place for a connection from `peer` and what it may ask, or why there is none.
    fn admit(&self, peer: IpAddr) -> Result<(Place, Served), Refusal> {
        let address = self
            .per_address
            .take(address_key(peer))
            .ok_or(Refusal::Address)?;
        let (all, served) = match self.all.clone().try_acquire_owned() {
            Ok(place) => (place, Served::Everything),
            Err(_) => {
                let place = self
                    .health
                    .clone()
                    .try_acquire_owned()
                    .map_err(|_| Refusal::Full)?;
                (place, Served::Health)
            }
        };
        let place = Place {
            _all: all,
            _address: address,
        };
        Ok((place, served))
    }

    fn answer(&self, refusal: Refusal) -> &[u8] {
        match refusal {
            Refusal::Full => &self.refusals[0],
            Refusal::Address => &self.refusals[1],
        }
    }
}

/// Why a connection past the cap of `cap` is refused.
fn full_message(cap: usize) -> String {
    format!("the server holds {cap} connections, the most it takes: retry later")
}

/// A whole HTTP answer with the error `code`, that closes the connection.
fn refusal(code: ErrorCode, message: &str) -> Vec<u8> {
    let body = serde_json::to_string(&ErrorBody::from(ApiError::new(code, message)))
        .unwrap_or_else(|_| String::from("{}"));
    let status = match code.http_status() {
        429 => "429 Too Many Requests\r\nRetry-After: 1",
        _ => "503 Service Unavailable",
    };
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// How refused connections are turned away: the answer written, the socket's end sent, then
/// what the client sends read and dropped until it closes its end, for [`LINGER`] and `most`
/// bytes at most, so that the client reads the answer instead of a reset. At most
/// [`LINGERING`] at once; past them, a refused connection is closed at once.
#[derive(Debug)]
struct TurnAway {
    lingering: Arc<Semaphore>,
    most: usize,
}

impl TurnAway {
    /// Turning away connections whose requests may carry bodies of `max_body` bytes.
    fn new(max_body: usize) -> Self {
        Self {
            lingering: Arc::new(Semaphore::new(LINGERING)),
            most: max_body.saturating_add(LINGER_HEAD_BYTES),
        }
    }

    /// Answers `stream` with `answer`, then closes it, now or after lingering.
    fn turn_away(&self, stream: TcpStream, answer: &[u8]) {
        // Best effort, never waiting: the socket's send buffer is empty.
        let _ = stream.try_write(answer);
        let Ok(place) = self.lingering.clone().try_acquire_owned() else {
            return;
        };
        let most = self.most;
        tokio::spawn(async move {
            linger(stream, most).await;
            drop(place);
        });
    }
}

/// Sends `stream`'s end, then reads and drops its input until the client closes its end,
/// fails, [`LINGER`] has passed or `most` bytes have come.
async fn linger(mut stream: TcpStream, most: usize) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    if stream.shutdown().await.is_err() {
        return;
    }
    let mut buf = [0u8; 16 << 10];
    let mut read = 0;
    let _ = tokio::time::timeout(LINGER, async {
        while read < most {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => read += n,
            }
        }
    })
    .await;
}

/// A connection the server took: its socket, which holds its place until it is dropped, and
/// fails a write that waits for the client to read for longer than the write timeout.
#[derive(Debug)]
pub struct Admitted {
    stream: TcpStream,
    write_timeout: Duration,
    /// Set while a write waits for the client: when it ends.
    stalled: Option<Pin<Box<Sleep>>>,
    _place: Place,
}

impl Admitted {
    /// `poll`, a write's progress: clears the stall when it made some, fails it once it has
    /// waited for the write timeout.
    fn watch<T>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if poll.is_ready() {
            self.stalled = None;
            return poll;
        }
        let timeout = self.write_timeout;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match stalled.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the client read nothing for {timeout:?}"),
            ))),
        }
    }
}

impl AsyncRead for Admitted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Admitted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.watch(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.watch(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.stream).poll_flush(cx);
        self.watch(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The longest the accept loop waits after an accept error before it tries again.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// How often, at most, accept errors are logged.
const ACCEPT_LOG_EVERY: Duration = Duration::from_secs(10);

/// The accept loop's failures in a row: how long to wait, and when they were last logged.
#[derive(Debug, Default)]
struct AcceptErrors {
    backoff: Duration,
    logged: Option<Instant>,
    unlogged: u64,
}

impl AcceptErrors {
    /// Counts `error` (logging it unless one was logged recently) and waits before the next
    /// accept.
    async fn back_off(&mut self, error: &io::Error) {
        self.backoff = (self.backoff * 2).clamp(Duration::from_millis(5), MAX_ACCEPT_BACKOFF);
        self.unlogged += 1;
        if self
            .logged
            .is_none_or(|logged| logged.elapsed() >= ACCEPT_LOG_EVERY)
        {
            tracing::warn!(
                errors = self.unlogged,
                "accept error: {error}; waiting {:?} before accepting again",
                self.backoff
            );
            self.logged = Some(Instant::now());
            self.unlogged = 0;
        }
        tokio::time::sleep(self.backoff).await;
    }

    fn succeeded(&mut self) {
        self.backoff = Duration::ZERO;
    }
}

/// Whether an accept error concerns only the connection it was about (the client gave up
/// before it was accepted): the next accept may go on at once.
fn concerns_one_connection(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}

/// Serves `router` on `listener` under `config`'s connection bounds until `shutdown`
/// completes; then stops accepting, lets each connection finish its request in progress, and
/// returns once every connection not upgraded has ended (upgraded ones are their sockets').
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let files = open_files_limit();
    let cap = connection_cap(config.max_connections, files);
    if cap < config.max_connections {
        tracing::warn!(
            open_files = files,
            "taking at most {cap} connections, not {}: the open-file limit leaves no more room",
            config.max_connections
        );
    }
    let places = Places::new(cap, config.max_connections_per_address);
    let refused = TurnAway::new(config.max_body_bytes);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout);
    let mut health_builder = builder.clone();
    health_builder
        .header_read_timeout(HEALTH_HEADER_TIMEOUT)
        .keep_alive(false);
    let write_timeout = config.write_timeout;
    // Each connection's task holds a receiver: the loop waits for them all at the end.
    let (stopping, stop) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    let mut errors = AcceptErrors::default();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) if concerns_one_connection(&error) => continue,
            Err(error) => {
                errors.back_off(&error).await;
                continue;
            }
        };
        errors.succeeded();
        let (place, served) = match places.admit(peer.ip()) {
            Ok(admitted) => admitted,
            Err(refusal) => {
                tracing::debug!(%peer, ?refusal, cap = places.cap, "a connection was refused");
                refused.turn_away(stream, places.answer(refusal));
                continue;
            }
        };
        let io = Admitted {
            stream,
            write_timeout,
            stalled: None,
            _place: place,
        };
        let router = router.clone();
        let cap = places.cap;
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let mut request = request.map(Body::new);
            request.extensions_mut().insert(ConnectInfo(peer));
            let router = router.clone();
            async move {
                if served == Served::Health && request.uri().path() != "/health" {
                    let busy = ApiError::new(ErrorCode::Busy, full_message(cap));
                    return Ok(HttpError::from(busy).into_response());
                }
                router.oneshot(request).await
            }
        });
        let builder = match served {
            Served::Everything => &builder,
            Served::Health => &health_builder,
        };
        let connection = builder
            .serve_connection(TokioIo::new(io), service)
            .with_upgrades();
        let mut stop = stop.clone();
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(error) = result {
                        tracing::debug!(%peer, "connection ended: {error}");
                    }
                    return;
                }
                _ = stop.changed() => connection.as_mut().graceful_shutdown(),
            }
            if let Err(error) = connection.await {
                tracing::debug!(%peer, "connection ended: {error}");
            }
        });
    }
    drop(listener);
    stopping.send_replace(true);
    drop(stop);
    stopping.closed().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_room_for_the_server_s_own_files() {
        assert_eq!(connection_cap(10_000, None), 10_000);
        assert_eq!(
            connection_cap(10_000, Some(1024)),
            1024 - RESERVED_FILES as usize
        );
        assert_eq!(connection_cap(100, Some(1 << 20)), 100);
        assert_eq!(connection_cap(100, Some(10)), 1, "never none");
    }

    #[test]
    fn places_are_bounded_in_all_and_per_address() {
        let places = Places::new(3, 2);
        let one: IpAddr = "10.0.0.1".parse().unwrap();
        let two: IpAddr = "10.0.0.2".parse().unwrap();
        let served =
            |admitted: Result<(Place, Served), Refusal>| admitted.map(|(_, served)| served);
        let first = places.admit(one).expect("one");
        let _second = places.admit(one).expect("two");
        assert_eq!(served(places.admit(one)), Err(Refusal::Address));
        let _third = places.admit(two).expect("another address");
        // Full: the next ones are for health checks, as many as are kept for them.
        let three: IpAddr = "10.0.0.3".parse().unwrap();
        let per_address = Places::new(3, 3 + HEALTH_PLACES);
        let kept: Vec<_> = (0..3 + HEALTH_PLACES)
            .map(|_| per_address.admit(three).expect("a place"))
            .collect();
        assert!(kept[..3]
            .iter()
            .all(|(_, served)| *served == Served::Everything));
        assert!(kept[3..]
            .iter()
            .all(|(_, served)| *served == Served::Health));
        let other: IpAddr = "10.0.0.4".parse().unwrap();
        assert_eq!(served(per_address.admit(other)), Err(Refusal::Full));
        drop(first);
        let (_fourth, kind) = places.admit(two).expect("a place was freed");
        assert_eq!(kind, Served::Everything);
        let answer = String::from_utf8(places.answer(Refusal::Address).to_vec()).unwrap();
        assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
        assert!(answer.contains("\"too_many_calls\""), "{answer}");
    }
}
