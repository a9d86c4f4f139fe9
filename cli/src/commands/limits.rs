//! The limits of `wasmod serve` and `wasmod edge`, as flags: one for each setting of the
//! server's configuration ([`ServerFlags`], for [`ServerConfig`]) and of the node's within it
//! ([`NodeFlags`], for [`NodeConfig`]). Each struct of flags mirrors its configuration and
//! maps onto it in one place ([`ServerFlags::config`], [`NodeFlags::config`]); each flag's
//! default is its field's default ([`DEFAULTS`]), shown by `--help` as one would type it
//! ([`Bytes`], [`Span`]), never a second literal.
//!
//! Why flags written here rather than `clap::Args` derived on the configuration types (behind
//! a feature of `wasmod-node` and `wasmod-server`): the fields' docs are written for Rust
//! readers, with links, the errors a transport answers and the defaults spelled out, where
//! `--help` wants a line or two per flag; sizes and durations are typed `16MiB` and `30s`,
//! which the configuration types need not parse; and some flags take their names from the
//! command line's history (`--max-body` is `max_body_bytes`). So the node and the server stay
//! free of clap, and what could drift, the defaults and which field a flag sets, cannot:
//! the defaults are the configuration's, and the tests below check that no flag given makes
//! exactly [`ServerConfig::default`] and that each flag sets its own field.

use crate::failure::{Failure, Result};
use crate::units::{Bytes, Span};
use std::sync::LazyLock;
use std::time::Duration;
use wasmod_node::NodeConfig;
use wasmod_server::ServerConfig;

/// The configurations' defaults, made once: the node's reads the size of the machine's
/// memory (for [`NodeConfig::max_client_memory`]), and every flag's default reads them.
static DEFAULTS: LazyLock<ServerConfig> = LazyLock::new(ServerConfig::default);

/// The flags of the server's limits ([`ServerConfig`]), and the node's within them.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Limits of the HTTP server")]
pub struct ServerFlags {
    /// How long issued tokens are valid: 30d, 12h, …
    #[arg(long, default_value_t = Span(DEFAULTS.token_ttl), value_name = "DURATION")]
    token_ttl: Span,
    /// The largest request body accepted: 1MiB, 64KiB, a number of bytes.
    #[arg(long, default_value_t = Bytes(DEFAULTS.max_body_bytes), value_name = "SIZE")]
    max_body: Bytes,
    /// The largest build `wasmod publish` may send: 64MiB, a number of bytes.
    #[arg(long, default_value_t = Bytes(DEFAULTS.max_module_bytes), value_name = "SIZE")]
    max_module_bytes: Bytes,
    /// The longest a request may take before it is answered 504.
    #[arg(long, default_value_t = Span(DEFAULTS.request_timeout), value_name = "DURATION")]
    request_timeout: Span,
    /// The most new identities one source address is given a minute (`POST /v1/identity`,
    /// WebSocket connections without a token), beyond which it is answered 429; 0 for no
    /// limit.
    #[arg(long, default_value_t = DEFAULTS.identities_per_minute, value_name = "N")]
    identities_per_minute: u32,
    /// The most calls without a token (anonymous views, the module's HTTP handlers) one
    /// source address may make a minute, beyond which it is answered 429; 0 for no limit.
    #[arg(long, default_value_t = DEFAULTS.anonymous_calls_per_minute, value_name = "N")]
    anonymous_calls_per_minute: u32,
    /// The most tokens one source address may get wrong a second (client or operator
    /// tokens), after a burst of five times as many; beyond, every token it sends, the right
    /// one too, is answered 429 until it is within the rate again; 0 for no limit.
    #[arg(long, default_value_t = DEFAULTS.failed_tokens_per_second, value_name = "N")]
    failed_tokens_per_second: u32,
    /// The most TCP connections open at once, WebSockets included; beyond, a new one is closed
    /// as soon as it is accepted (after a `503 busy`). Lowered at start to fit the open-file
    /// limit, which is raised to its hard limit.
    #[arg(long, default_value_t = DEFAULTS.max_connections, value_name = "N")]
    max_connections: usize,
    /// The most TCP connections open at once from one source address (IPv6: one /64);
    /// beyond, a new one is closed as soon as it is accepted (after a `429 too_many_calls`).
    #[arg(long, default_value_t = DEFAULTS.max_connections_per_address, value_name = "N")]
    max_connections_per_address: usize,
    /// The most WebSocket connections one identity may have open at once; beyond, the
    /// handshake is answered 429.
    #[arg(long, default_value_t = DEFAULTS.max_websockets_per_identity, value_name = "N")]
    max_websockets_per_identity: usize,
    /// The longest a client may take to send a request's headers, from the connection's start
    /// or the end of the previous answer: also how long an idle keep-alive connection stays
    /// open.
    #[arg(long, default_value_t = Span(DEFAULTS.header_read_timeout), value_name = "DURATION")]
    header_read_timeout: Span,
    /// The longest a write may wait for the client to read before its connection is closed.
    #[arg(long, default_value_t = Span(DEFAULTS.write_timeout), value_name = "DURATION")]
    write_timeout: Span,
    /// How long shutdown waits for the module to finish the calls already queued.
    #[arg(long, default_value_t = Span(DEFAULTS.shutdown_grace), value_name = "DURATION")]
    shutdown_grace: Span,
    #[command(flatten)]
    node: NodeFlags,
}

/// The flags of the node's limits ([`NodeConfig`]): the module's queue, its calls, its
/// sockets, live queries and reads of the tables.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Limits of the module, its calls and its sockets")]
pub struct NodeFlags {
    /// The most calls waiting for the module before new ones are answered 503.
    #[arg(long, default_value_t = DEFAULTS.node.queue, value_name = "N")]
    queue: usize,
    /// The most calls one identity may have in progress at once.
    #[arg(long, default_value_t = DEFAULTS.node.max_calls_per_identity, value_name = "N")]
    max_calls_per_identity: usize,
    /// The most bytes (in the binary encoding) of a value a view or procedure returns that an
    /// answer carries; a larger one is answered `result_too_large` (the call's commits stay).
    #[arg(long, default_value_t = Bytes(DEFAULTS.node.max_result_bytes), value_name = "SIZE")]
    max_result_bytes: Bytes,
    /// The most bytes clients may make the server hold for them, every client together (query
    /// texts, one-off answers, table pages on their way out); an identity may hold an eighth
    /// of it, a source address a quarter. The default is a sixty-fourth of this machine's
    /// memory, within 64 MiB and 4 GiB.
    #[arg(long, default_value_t = Bytes(DEFAULTS.node.max_client_memory), value_name = "SIZE")]
    max_client_memory: Bytes,
    /// The most messages queued for one WebSocket client before it is closed as too slow
    /// (`4001`).
    #[arg(long, default_value_t = DEFAULTS.node.outbound_messages, value_name = "N")]
    outbound_messages: usize,
    /// The most bytes of rows queued for one WebSocket client before it is closed as too slow
    /// (`4001`); a subscription's rows count 16 bytes a row against it until they are sent.
    #[arg(long, default_value_t = Bytes(DEFAULTS.node.outbound_bytes), value_name = "SIZE")]
    outbound_bytes: Bytes,
    /// The most bytes of rows (in the binary encoding) in one message of a subscription's
    /// rows; more are sent in parts, one at a time.
    #[arg(long, default_value_t = Bytes(DEFAULTS.node.subscription_part_bytes), value_name = "SIZE")]
    subscription_part_bytes: Bytes,
    /// The recent commits kept (in memory, and read back from the log at start) so that
    /// reconnecting WebSocket clients are sent only what changed since their last offset;
    /// 0 for none. A start after a crash adds one commit per connection the crash left open:
    /// keep this above the connections expected, or the clients connected at a crash cannot
    /// resume.
    #[arg(long, default_value_t = DEFAULTS.node.resume_commits, value_name = "N")]
    resume_commits: usize,
    /// The most bytes of rows those recent commits may hold; the oldest are forgotten beyond.
    #[arg(long, default_value_t = Bytes(DEFAULTS.node.resume_bytes), value_name = "SIZE")]
    resume_bytes: Bytes,
    /// How long a WebSocket client may stay silent before it is pinged; silent as long again,
    /// it is closed (`4003`).
    #[arg(long, default_value_t = Span(DEFAULTS.node.ping_interval), value_name = "DURATION")]
    ping_interval: Span,
    /// The most queries one WebSocket `Subscribe` may carry, repeats included (a repeated
    /// query is subscribed once); beyond, the query set is refused.
    #[arg(long, default_value_t = DEFAULTS.node.max_queries_per_set, value_name = "N")]
    max_queries_per_set: usize,
    /// The most query sets one WebSocket connection may hold at once; beyond, a new one is
    /// refused.
    #[arg(long, default_value_t = DEFAULTS.node.max_query_sets_per_connection, value_name = "N")]
    max_query_sets_per_connection: usize,
    /// The most distinct queries one identity may be subscribed to at once, all its
    /// connections together; beyond, a new query set is refused.
    #[arg(long, default_value_t = DEFAULTS.node.max_queries_per_identity, value_name = "N")]
    max_queries_per_identity: usize,
    /// The most those distinct queries may cost together, in reads a row: one for the row and
    /// one for each comparison of a query's condition (`WHERE a = 1 OR a = 2` costs 3). It
    /// bounds what each row a commit changes costs to check against one identity's queries;
    /// beyond, a new query set is refused.
    #[arg(long, default_value_t = DEFAULTS.node.max_query_cost_per_identity, value_name = "READS")]
    max_query_cost_per_identity: usize,
    /// The most reads (rows found, and each comparison checked on them) new subscriptions may
    /// make to find their first rows under one read of the tables, while commits wait: it
    /// bounds how long subscribing holds commits back. A subscription (or a one-off query)
    /// that reads more on its own is refused.
    #[arg(long, default_value_t = DEFAULTS.node.max_subscription_reads, value_name = "ROWS")]
    max_subscription_reads: usize,
    /// The most table pages (`GET /v1/tables/{name}`) read at once, beyond which one is
    /// answered 503; and the most WebSocket one-off queries evaluated at once, beyond which
    /// they wait.
    #[arg(long, default_value_t = DEFAULTS.node.max_table_reads, value_name = "N")]
    max_table_reads: usize,
    /// The rows of a page of `GET /v1/tables/{name}` when the request names no `limit`.
    #[arg(long, default_value_t = DEFAULTS.node.table_page_rows, value_name = "N")]
    table_page_rows: usize,
    /// The most rows of a page of `GET /v1/tables/{name}`; a larger `limit` is taken as this.
    #[arg(long, default_value_t = DEFAULTS.node.max_table_page_rows, value_name = "N")]
    max_table_page_rows: usize,
    /// The most bytes of a table page's rows, in their binary encoding (the page stops before
    /// the row that would pass it; a larger first row is sent alone).
    #[arg(long, default_value_t = Bytes(DEFAULTS.node.max_table_page_bytes), value_name = "SIZE")]
    max_table_page_bytes: Bytes,
}

impl ServerFlags {
    /// The server's configuration, the node's within it; fails on values that cannot work.
    pub fn config(&self) -> Result<ServerConfig> {
        for (flag, timeout) in [
            ("--header-read-timeout", self.header_read_timeout),
            ("--write-timeout", self.write_timeout),
        ] {
            if timeout.0.is_zero() {
                return Err(Failure::usage(format!(
                    "{flag}: must be more than zero (every connection would be closed at once)"
                )));
            }
        }
        let mut config = ServerConfig::default();
        config.token_ttl = self.token_ttl.0;
        config.max_body_bytes = self.max_body.0;
        config.max_module_bytes = self.max_module_bytes.0;
        config.request_timeout = self.request_timeout.0;
        config.identities_per_minute = self.identities_per_minute;
        config.anonymous_calls_per_minute = self.anonymous_calls_per_minute;
        config.failed_tokens_per_second = self.failed_tokens_per_second;
        config.max_connections = self.max_connections;
        config.max_connections_per_address = self.max_connections_per_address;
        config.max_websockets_per_identity = self.max_websockets_per_identity;
        config.header_read_timeout = self.header_read_timeout.0;
        config.write_timeout = self.write_timeout.0;
        config.shutdown_grace = self.shutdown_grace.0;
        config.node = self.node.config()?;
        Ok(config)
    }
}

impl NodeFlags {
    /// The node's configuration; fails on values that cannot work.
    pub fn config(&self) -> Result<NodeConfig> {
        if self.ping_interval.0 == Duration::ZERO {
            return Err(Failure::usage(
                "--ping-interval: must be more than zero (every socket would be closed at once)",
            ));
        }
        let mut config = NodeConfig::default();
        config.queue = self.queue;
        config.max_calls_per_identity = self.max_calls_per_identity;
        config.max_result_bytes = self.max_result_bytes.0;
        config.max_client_memory = self.max_client_memory.0;
        config.outbound_messages = self.outbound_messages;
        config.outbound_bytes = self.outbound_bytes.0;
        config.subscription_part_bytes = self.subscription_part_bytes.0;
        config.resume_commits = self.resume_commits;
        config.resume_bytes = self.resume_bytes.0;
        config.ping_interval = self.ping_interval.0;
        config.max_queries_per_set = self.max_queries_per_set;
        config.max_query_sets_per_connection = self.max_query_sets_per_connection;
        config.max_queries_per_identity = self.max_queries_per_identity;
        config.max_query_cost_per_identity = self.max_query_cost_per_identity;
        config.max_subscription_reads = self.max_subscription_reads;
        config.max_table_reads = self.max_table_reads;
        config.table_page_rows = self.table_page_rows;
        config.max_table_page_rows = self.max_table_page_rows;
        config.max_table_page_bytes = self.max_table_page_bytes.0;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// A command of the limits alone.
    #[derive(Parser, Debug)]
    struct Limits {
        #[command(flatten)]
        flags: ServerFlags,
    }

    fn config(args: &[&str]) -> Result<ServerConfig> {
        let arguments = std::iter::once("limits").chain(args.iter().copied());
        Limits::try_parse_from(arguments)
            .expect("the flags parse")
            .flags
            .config()
    }

    #[test]
    fn no_flag_given_makes_the_default_configuration() {
        assert_eq!(
            config(&[]).expect("a configuration"),
            ServerConfig::default()
        );
    }

    #[test]
    fn each_flag_sets_its_own_field() {
        let config = config(&[
            "--token-ttl=1d",
            "--max-body=2KiB",
            "--max-module-bytes=3KiB",
            "--request-timeout=4s",
            "--identities-per-minute=5",
            "--anonymous-calls-per-minute=6",
            "--failed-tokens-per-second=7",
            "--max-connections=8",
            "--max-connections-per-address=9",
            "--max-websockets-per-identity=10",
            "--header-read-timeout=11s",
            "--write-timeout=12s",
            "--table-page-rows=13",
            "--max-table-page-rows=14",
            "--max-table-page-bytes=15KiB",
            "--shutdown-grace=16s",
            "--queue=17",
            "--max-calls-per-identity=18",
            "--max-result-bytes=19KiB",
            "--max-client-memory=20KiB",
            "--outbound-messages=21",
            "--outbound-bytes=22KiB",
            "--subscription-part-bytes=23KiB",
            "--resume-commits=24",
            "--resume-bytes=25KiB",
            "--ping-interval=26s",
            "--max-queries-per-set=27",
            "--max-query-sets-per-connection=28",
            "--max-queries-per-identity=29",
            "--max-query-cost-per-identity=30",
            "--max-subscription-reads=31",
            "--max-table-reads=32",
        ])
        .expect("a configuration");
        let (kib, secs) = (|n: usize| n << 10, Duration::from_secs);
        let mut expected = ServerConfig::default();
        expected.token_ttl = secs(86_400);
        expected.max_body_bytes = kib(2);
        expected.max_module_bytes = kib(3);
        expected.request_timeout = secs(4);
        expected.identities_per_minute = 5;
        expected.anonymous_calls_per_minute = 6;
        expected.failed_tokens_per_second = 7;
        expected.max_connections = 8;
        expected.max_connections_per_address = 9;
        expected.max_websockets_per_identity = 10;
        expected.header_read_timeout = secs(11);
        expected.write_timeout = secs(12);
        expected.shutdown_grace = secs(16);
        let node = &mut expected.node;
        node.queue = 17;
        node.max_calls_per_identity = 18;
        node.max_result_bytes = kib(19);
        node.max_client_memory = kib(20);
        node.outbound_messages = 21;
        node.outbound_bytes = kib(22);
        node.subscription_part_bytes = kib(23);
        node.resume_commits = 24;
        node.resume_bytes = kib(25);
        node.ping_interval = secs(26);
        node.max_queries_per_set = 27;
        node.max_query_sets_per_connection = 28;
        node.max_queries_per_identity = 29;
        node.max_query_cost_per_identity = 30;
        node.max_subscription_reads = 31;
        node.max_table_reads = 32;
        node.table_page_rows = 13;
        node.max_table_page_rows = 14;
        node.max_table_page_bytes = kib(15);
        assert_eq!(config, expected);
    }

    #[test]
    fn durations_that_would_close_everything_at_once_are_refused() {
        for flag in [
            "--ping-interval",
            "--header-read-timeout",
            "--write-timeout",
        ] {
            let refused = config(&[&format!("{flag}=0s")]);
            assert!(refused.is_err(), "{flag}");
        }
    }
}
