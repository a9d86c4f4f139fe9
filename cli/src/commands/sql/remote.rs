//! `wasmod sql <url>`: a `OneOffQuery` over the server's WebSocket.
//!
//! The server's description (`GET /v1/module`) gives the tables' columns in their declared
//! order for the table output; the query itself goes over `GET /v1/subscribe`
//! ([`crate::websocket`]), answered by a `OneOffQueryResult` whose rows are already in the
//! JSON mapping. The whole exchange may take as long as one HTTP request may ([`api::TIMEOUT`]).

use super::Answer;
use crate::api;
use crate::failure::{Failure, Result};
use crate::websocket::{self, Connection};
use wasmod_protocol::ws::{ClientMessage, JsonServerMessage};

/// The id of the command's one query.
const REQUEST: u32 = 1;

/// Runs `query` on the server at `base`, as the identity of `token` (a new one without it,
/// whose token goes to stderr).
pub fn query(base: &str, query: &str, token: Option<&str>) -> Result<Answer> {
    let http = websocket::http_base(base)?;
    let description = api::describe(&api::agent(&http), &http)?;
    let asking = async {
        let mut connection = Connection::connect(base, token).await?;
        connection.announce();
        connection
            .send(&ClientMessage::OneOffQuery {
                request_id: REQUEST,
                query: query.to_owned(),
            })
            .await?;
        let answer = loop {
            match connection.next().await?.message {
                JsonServerMessage::OneOffQueryResult { request_id, result }
                    if request_id == REQUEST =>
                {
                    break result;
                }
                _ => {}
            }
        };
        connection.close().await;
        answer
            .map_err(|message| Failure::module(format!("the server refused the query: {message}")))
    };
    let tables = websocket::run(async {
        tokio::time::timeout(api::TIMEOUT, asking)
            .await
            .map_err(|_| {
                Failure::module(format!("{base} did not answer within {:?}", api::TIMEOUT))
            })?
    })?;
    Answer::new(description, tables)
}
