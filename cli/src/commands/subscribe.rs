//! `wasmod subscribe <url> "<query>"…`: subscribes to queries on a running server and prints
//! the initial rows and every update, as JSON lines.
//!
//! The queries (the SQL subset of `docs/subscriptions.md`) are subscribed as one query set over
//! the server's WebSocket ([`crate::websocket`], JSON subprotocol). **Output**: stdout gets the
//! protocol's own messages, one per line, exactly as the server sent them (`docs/protocol.md`
//! documents both, with examples): first the query set's rows (a `SubscribeApplied`, after
//! `SubscribeRows` parts when there are more rows than one message carries), then one
//! `TransactionUpdate` per commit that changed its rows. Printing the protocol's messages,
//! rather than a shape of this command's own, keeps one documented, versioned format
//! (`v1.json.wasmod`) for tools, whether they read this command or the socket:
//!
//! ```text
//! {"SubscribeApplied":{"query_set_id":1,"offset":3,"tables":[{"table":"message","rows":[…]}],"deletes":[],"resumed":false}}
//! {"TransactionUpdate":{"offset":4,…,"changes":[{"query_set_id":1,"tables":[{"table":"message","inserts":[…],"deletes":[]}]}]}}
//! ```
//!
//! stderr gets everything else: without `--token` (or `WASMOD_TOKEN`) the server makes a new
//! identity, and its token is printed there, to come back as the same identity.
//!
//! **Stopping**: after `--updates N` updates (`0`: the initial rows only), after `--timeout`,
//! or on Ctrl-C (SIGINT) or SIGTERM; each sends a close frame (so the server runs the
//! connection's `client_disconnected`) and exits with status 0, except a `--timeout` reached
//! before the initial rows or the `--updates` asked for (status 1). A query the server refuses
//! (`SubscriptionError`: unknown table or column, a private table, outside the subset) and a
//! server that closes the connection are status 1 with the server's message; a URL that is not
//! a server's, or a connection refused, status 2.

use crate::failure::{Failure, Result};
use crate::output::{self, Printed};
use crate::units;
use crate::websocket::{self, Connection};
use std::time::Duration;
use tokio::time::{sleep_until, timeout_at, Instant};
use wasmod_protocol::ws::{ClientMessage, JsonServerMessage};

/// The id of the one query set the command subscribes.
const QUERY_SET: u32 = 1;

/// What `wasmod subscribe --help` says after the options: the output, and how it ends.
const HELP: &str = "\
Output: stdout gets the protocol's own JSON messages (docs/protocol.md), one per line, as the
server sent them: the query set's rows (SubscribeApplied, after SubscribeRows parts for
large ones), then a
TransactionUpdate per commit that changes them (inserts and deletes, per table). Without
--token the server makes a new identity; its token goes to stderr, to come back as it.

Ends: after --updates N, after --timeout, or on Ctrl-C/SIGTERM, each with a close frame and
status 0 (a --timeout before the initial rows or the updates asked for is status 1). A query
the server refuses (SubscriptionError) or a close from the server: status 1 and its message.
A URL that is not a server's, or a refused connection: status 2.";

/// `wasmod subscribe`'s arguments.
#[derive(clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// The server's URL: `http://127.0.0.1:3000` (or `ws://…`).
    url: String,
    /// The queries, subscribed together: `"SELECT * FROM message"`,
    /// `"SELECT * FROM user WHERE identity = :sender"`.
    #[arg(required = true, value_name = "QUERY")]
    queries: Vec<String>,
    /// Subscribe as the identity of this token (default: a new identity, whose token is printed
    /// on stderr).
    #[arg(long, env = "WASMOD_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Stop after this many updates (0: print the initial rows and stop).
    #[arg(long, value_name = "N")]
    updates: Option<u64>,
    /// Stop after this long (10s, 5m); a failure if the initial rows, or the --updates asked
    /// for, have not all come by then.
    #[arg(long, value_parser = units::duration, value_name = "DURATION")]
    timeout: Option<Duration>,
}

/// How far the subscription got.
#[derive(Debug, Default)]
struct Progress {
    applied: bool,
    updates: u64,
}

/// Runs `wasmod subscribe`.
pub fn run(args: Args) -> Result {
    websocket::run(subscribe(args))
}

async fn subscribe(args: Args) -> Result {
    let deadline = args.timeout.map(|timeout| Instant::now() + timeout);
    let connecting = Connection::connect(&args.url, args.token.as_deref());
    let mut connection = match deadline {
        Some(deadline) => timeout_at(deadline, connecting)
            .await
            .map_err(|_| Failure::module(format!("no connection within {}", waited(&args))))??,
        None => connecting.await?,
    };
    connection.announce();
    connection
        .send(&ClientMessage::Subscribe {
            query_set_id: QUERY_SET,
            queries: args.queries.clone(),
            resume_from: None,
        })
        .await?;
    let mut progress = Progress::default();
    let timeout = async {
        match deadline {
            Some(deadline) => sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    let outcome = tokio::select! {
        followed = follow(&mut connection, args.updates, &mut progress) => followed,
        () = crate::signal::shutdown_signal() => Ok(()),
        () = timeout => timed_out(&args, &progress),
    };
    connection.close().await;
    outcome
}

/// Prints the query set's messages until `limit` updates have come (forever without one), or
/// until nobody reads them.
async fn follow(
    connection: &mut Connection,
    limit: Option<u64>,
    progress: &mut Progress,
) -> Result {
    loop {
        let received = connection.next().await?;
        match received.message {
            JsonServerMessage::SubscribeApplied { query_set_id, .. }
                if query_set_id == QUERY_SET =>
            {
                progress.applied = true;
                if output::json_line(&received.text)? == Printed::Closed {
                    return Ok(());
                }
            }
            JsonServerMessage::SubscribeRows { query_set_id, .. } if query_set_id == QUERY_SET => {
                if output::json_line(&received.text)? == Printed::Closed {
                    return Ok(());
                }
            }
            JsonServerMessage::TransactionUpdate(_) => {
                progress.updates += 1;
                if output::json_line(&received.text)? == Printed::Closed {
                    return Ok(());
                }
            }
            JsonServerMessage::SubscriptionError { message, .. } => {
                return Err(Failure::module(format!(
                    "the server refused the subscription: {message}"
                )))
            }
            _ => tracing::debug!("ignored a message: {}", received.text),
        }
        if progress.applied && limit.is_some_and(|limit| progress.updates >= limit) {
            return Ok(());
        }
    }
}

/// The outcome of reaching `--timeout` with `progress`.
fn timed_out(args: &Args, progress: &Progress) -> Result {
    let waited = waited(args);
    if !progress.applied {
        return Err(Failure::module(format!(
            "the subscription was not applied within {waited}"
        )));
    }
    match args.updates {
        Some(wanted) if progress.updates < wanted => Err(Failure::module(format!(
            "{} of the {wanted} updates asked for came within {waited}",
            progress.updates
        ))),
        _ => Ok(()),
    }
}

/// `--timeout`, for messages.
fn waited(args: &Args) -> String {
    args.timeout
        .map_or_else(String::new, |timeout| format!("{timeout:?}"))
}
