//! The servers a client connects to: one URL, or the nodes of a replicated deployment
//! (`docs/high-availability.md`), of which one at a time, the primary, takes connections.
//!
//! A standby refuses a connection (it closes the socket with `4004` before its greeting), a
//! dead node does not answer, and the primary's socket is lost when it dies or steps down:
//! each time, the client tries the next server in turn ([`Servers::next`]), one round of them
//! per attempt of its backoff ([`open_round`]). Whichever takes the connection is the
//! primary, and the client resumes its query sets there from its last offset as after any
//! reconnection: a deployment's offsets are the same on every node. With one URL a round is
//! that URL, as it always was; a proxy in front of the deployment (`deploy/nginx.conf`) may
//! then be the one that moves to the next node.

use crate::error::Error;
use crate::platform;
use crate::socket::{self, OpenError};
use crate::transport::Closed;
use wasmod_protocol::errors::ErrorCode;
use wasmod_protocol::ws::Compression;

/// The close code of a standby of a replicated deployment, which takes no connection
/// (`docs/protocol.md`).
const NOT_PRIMARY_CLOSE: u16 = 4004;

/// The subscribe endpoints of the servers, in the order they are tried, and the one in use.
#[derive(Clone, Debug)]
pub(crate) struct Servers {
    urls: Vec<String>,
    /// The index of the server connected to last; before the first connection, the last one,
    /// so that the first round starts with the first server.
    current: usize,
}

impl Servers {
    /// The subscribe endpoints of the servers at `urls` (base URLs or endpoints, as
    /// [`ClientBuilder`](crate::ClientBuilder) takes them), asking for `compression`; an
    /// error for a URL that is not one, or for none at all.
    pub(crate) fn new(urls: &[String], compression: Compression) -> Result<Self, Error> {
        let urls = urls
            .iter()
            .map(|url| socket::subscribe_url(url, compression))
            .collect::<Result<Vec<_>, _>>()?;
        if urls.is_empty() {
            return Err(Error::Connect("no server URL was given".into()));
        }
        Ok(Self {
            current: urls.len() - 1,
            urls,
        })
    }

    /// The endpoint of the server connected to last.
    pub(crate) fn current(&self) -> &str {
        &self.urls[self.current]
    }

    /// Moves on to the next server (after the last, the first again); its endpoint.
    fn next(&mut self) -> &str {
        self.current = (self.current + 1) % self.urls.len();
        self.current()
    }

    /// How many servers there are: the attempts of one round.
    fn len(&self) -> usize {
        self.urls.len()
    }
}

/// Opens a connection to the first of the servers, from the one after the last connected
/// to, that takes it, as `token`'s identity (a new one without): one round, each server tried
/// once. When none does, the most telling error: a standby's refusal only when every server
/// refused so (a dead node's or a bad token's error says more).
pub(crate) async fn open_round(
    servers: &mut Servers,
    token: Option<&str>,
    tls: &platform::Tls,
) -> Result<socket::Connection, OpenError> {
    let mut refused = None;
    for _ in 0..servers.len() {
        let url = servers.next();
        match socket::Connection::open_trusting(url, token, socket::HANDSHAKE_TIMEOUT, tls).await {
            Ok(socket) => return Ok(socket),
            Err(error) => {
                tracing::info!(url, %error, "not connected");
                if refused.as_ref().is_none_or(is_standby) {
                    refused = Some(error);
                }
            }
        }
    }
    Err(refused.unwrap_or_else(|| OpenError::Failed("no server to connect to".into())))
}

/// Whether `error` is a standby's refusal: nothing wrong, just not the primary.
fn is_standby(error: &OpenError) -> bool {
    match error {
        OpenError::Closed(Closed::ByServer { code, .. }) => *code == Some(NOT_PRIMARY_CLOSE),
        OpenError::Refused {
            error: Some(error), ..
        } => error.code == ErrorCode::NotPrimary,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_protocol::ApiError;

    fn servers(urls: &[&str]) -> Servers {
        let urls: Vec<String> = urls.iter().map(|&url| url.to_owned()).collect();
        Servers::new(&urls, Compression::None).expect("valid URLs")
    }

    /// The endpoints of the next `attempts` attempts.
    fn tried(servers: &mut Servers, attempts: usize) -> Vec<String> {
        (0..attempts).map(|_| servers.next().to_owned()).collect()
    }

    #[test]
    fn the_first_round_starts_with_the_first_server_and_every_round_goes_round() {
        let mut servers = servers(&["http://a:1", "http://b:2", "ws://c:3/v1/subscribe"]);
        let (a, b, c) = (
            "ws://a:1/v1/subscribe",
            "ws://b:2/v1/subscribe",
            "ws://c:3/v1/subscribe",
        );
        assert_eq!(tried(&mut servers, 3), [a, b, c]);
        assert_eq!(tried(&mut servers, 4), [a, b, c, a]);
        assert_eq!(servers.current(), a, "connected to the last tried");
    }

    #[test]
    fn after_a_connection_the_next_round_starts_at_the_next_server() {
        let mut servers = servers(&["http://a:1", "http://b:2", "http://c:3"]);
        tried(&mut servers, 2);
        assert_eq!(servers.current(), "ws://b:2/v1/subscribe", "b took it");
        assert_eq!(
            tried(&mut servers, 3),
            [
                "ws://c:3/v1/subscribe",
                "ws://a:1/v1/subscribe",
                "ws://b:2/v1/subscribe"
            ],
            "b lost: c first, b last"
        );
    }

    #[test]
    fn one_server_is_every_attempt() {
        let mut servers = servers(&["https://example.org"]);
        assert_eq!(
            tried(&mut servers, 3),
            ["wss://example.org/v1/subscribe"; 3]
        );
    }

    #[test]
    fn every_url_must_be_one_and_there_must_be_one() {
        let bad = ["http://a:1".to_owned(), "ftp://b".to_owned()];
        assert!(matches!(
            Servers::new(&bad, Compression::None),
            Err(Error::Connect(why)) if why.contains("ftp://b")
        ));
        assert!(matches!(
            Servers::new(&[], Compression::None),
            Err(Error::Connect(_))
        ));
        let gzip = Servers::new(&["http://a:1".to_owned()], Compression::Gzip).expect("valid");
        assert_eq!(gzip.urls, ["ws://a:1/v1/subscribe?compression=gzip"]);
    }

    #[test]
    fn a_standby_refuses_with_4004_or_not_primary() {
        let closed = |code| {
            OpenError::Closed(Closed::ByServer {
                code: Some(code),
                reason: String::new(),
            })
        };
        let refused = |code| OpenError::Refused {
            status: 503,
            error: Some(ApiError::new(code, "")),
            reason: String::new(),
        };
        assert!(is_standby(&closed(4004)));
        assert!(is_standby(&refused(ErrorCode::NotPrimary)));
        assert!(!is_standby(&closed(4000)));
        assert!(!is_standby(&refused(ErrorCode::Busy)));
        assert!(!is_standby(&OpenError::Failed("connection refused".into())));
    }
}
