//! The connection to a stream's Redis server that the publisher and the follower each keep:
//! opened when first needed, shared by the exchanges that follow, and forgotten when one
//! fails, so that the next exchange opens another.

use super::StreamAddress;
use redis::aio::MultiplexedConnection;
use redis::streams::StreamRangeReply;
use redis::{AsyncConnectionConfig, RedisError};
use std::io;
use std::time::Duration;

/// A Redis server, and the connection to it if one is open.
#[derive(Debug)]
pub(crate) struct Link {
    client: redis::Client,
    connection: Option<MultiplexedConnection>,
    /// How long opening a connection may take.
    connect_timeout: Duration,
    /// How long an answer may take.
    response_timeout: Duration,
}

impl Link {
    /// The server of the stream at `address`, not connected yet. Fails if the address is not
    /// one the Redis client accepts.
    pub(crate) fn new(
        address: &StreamAddress,
        connect_timeout: Duration,
        response_timeout: Duration,
    ) -> io::Result<Self> {
        let client = redis::Client::open(address.server.as_str()).map_err(|error| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("{address}: {error}"))
        })?;
        Ok(Self {
            client,
            connection: None,
            connect_timeout,
            response_timeout,
        })
    }

    /// The open connection, opened if there is none.
    pub(crate) async fn connection(&mut self) -> Result<MultiplexedConnection, RedisError> {
        if let Some(connection) = &self.connection {
            return Ok(connection.clone());
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.connect_timeout))
            .set_response_timeout(Some(self.response_timeout));
        let connection = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await?;
        self.connection = Some(connection.clone());
        Ok(connection)
    }

    /// Forgets the connection after a failed exchange.
    pub(crate) fn forget(&mut self) {
        self.connection = None;
    }
}

/// The id of the last entry of `stream`, if it has any (`XREVRANGE <stream> + - COUNT 1`).
pub(crate) async fn last_id(
    connection: &mut MultiplexedConnection,
    stream: &str,
) -> Result<Option<String>, RedisError> {
    let tail: StreamRangeReply = redis::cmd("XREVRANGE")
        .arg(stream)
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(1)
        .query_async(connection)
        .await?;
    Ok(tail.ids.into_iter().next().map(|entry| entry.id))
}
