//! What serving a module takes, whoever writes its data: the options, limits, operator's side
//! and serving loop that `wasmod serve` (a primary, or a lone server) and `wasmod edge` (an
//! edge node of a primary) share.

use crate::failure::{Context, Failure, Result};
use crate::output;
use crate::units;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use wasmod_host::{AllowList, InstanceEnv, OutboundHttp, WasmConfig};
use wasmod_server::logfeed::LogFeed;
use wasmod_server::{AdminOptions, DispatchReport, OperatorToken, Server, ServerConfig};

/// The options of every command that serves a module.
#[derive(clap::Args)]
pub struct Serving {
    /// A directory of static files (a web page for the module) served at `/`, beside the
    /// API, whose routes keep priority. Dotfiles (but `.well-known`) and symbolic links that
    /// lead out of the directory are not served.
    #[arg(long, value_name = "DIR")]
    web: Option<PathBuf>,
    /// The address to listen on; port 0 picks a free port (the line printed says which).
    #[arg(long, default_value = "127.0.0.1:3000")]
    listen: SocketAddr,
    /// How long issued tokens are valid: 30d, 12h, …
    #[arg(long, default_value = "30d", value_parser = units::duration)]
    token_ttl: Duration,
    /// The largest request body accepted: 1MiB, 64KiB, a number of bytes.
    #[arg(long, default_value = "1MiB", value_parser = units::size)]
    max_body: usize,
    /// The largest build `wasmod publish` may send: 64MiB, a number of bytes.
    #[arg(long, default_value = "64MiB", value_parser = units::size)]
    max_module_bytes: usize,
    /// The most calls one identity may have in progress at once.
    #[arg(long, default_value_t = ServerConfig::default().max_calls_per_identity)]
    max_calls_per_identity: usize,
    /// The longest a request may take before it is answered 504.
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    request_timeout: Duration,
    /// The most calls waiting for the module before new ones are answered 503.
    #[arg(long, default_value_t = ServerConfig::default().queue)]
    queue: usize,
    /// The longest one call may run inside the module before it is aborted.
    #[arg(long, default_value = "5s", value_parser = units::duration)]
    deadline: Duration,
    /// The most messages queued for one WebSocket client before it is closed as too slow
    /// (`4001`).
    #[arg(long, default_value_t = ServerConfig::default().outbound_messages, value_name = "N")]
    outbound_messages: usize,
    /// The most bytes clients may make the server hold for them, every client together (query
    /// texts, one-off answers, table pages on their way out); an identity may hold an eighth
    /// of it, a source address a quarter. Default: a sixty-fourth of the machine's memory,
    /// within 64 MiB and 4 GiB.
    #[arg(long, value_parser = units::size, value_name = "SIZE")]
    max_client_memory: Option<usize>,
    /// The most bytes of rows queued for one WebSocket client before it is closed as too slow
    /// (`4001`); a subscription's rows count 16 bytes a row against it until they are sent.
    #[arg(long, default_value = "16MiB", value_parser = units::size)]
    outbound_bytes: usize,
    /// The most bytes (in the binary encoding) of a value a view or procedure returns that an
    /// answer carries; a larger one is answered `result_too_large` (the call's commits stay).
    #[arg(long, default_value = "8MiB", value_parser = units::size)]
    max_result_bytes: usize,
    /// The most queries one WebSocket `Subscribe` may carry, repeats included (a repeated
    /// query is subscribed once); beyond, the query set is refused.
    #[arg(long, default_value_t = ServerConfig::default().max_queries_per_set, value_name = "N")]
    max_queries_per_set: usize,
    /// The most query sets one WebSocket connection may hold at once; beyond, a new one is
    /// refused.
    #[arg(long, default_value_t = ServerConfig::default().max_query_sets_per_connection, value_name = "N")]
    max_query_sets_per_connection: usize,
    /// The most distinct queries one identity may be subscribed to at once, all its
    /// connections together; beyond, a new query set is refused.
    #[arg(long, default_value_t = ServerConfig::default().max_queries_per_identity, value_name = "N")]
    max_queries_per_identity: usize,
    /// The most those distinct queries may cost together, in reads a row: one for the row and
    /// one for each comparison of a query's condition (`WHERE a = 1 OR a = 2` costs 3). It
    /// bounds what each row a commit changes costs to check against one identity's queries;
    /// beyond, a new query set is refused.
    #[arg(long, default_value_t = ServerConfig::default().max_query_cost_per_identity, value_name = "READS")]
    max_query_cost_per_identity: usize,
    /// The most reads (rows found, and each comparison checked on them) new subscriptions may
    /// make to find their first rows under one read of the tables, while commits wait: it
    /// bounds how long subscribing holds commits back. A subscription (or a one-off query)
    /// that reads more on its own is refused.
    #[arg(long, default_value_t = ServerConfig::default().max_subscription_reads, value_name = "ROWS")]
    max_subscription_reads: usize,
    /// The recent commits kept (in memory, and read back from the log at start) so that
    /// reconnecting WebSocket clients are sent only what changed since their last offset;
    /// 0 for none. A start after a crash adds one commit per connection the crash left open:
    /// keep this above the connections expected, or the clients connected at a crash cannot
    /// resume.
    #[arg(long, default_value_t = ServerConfig::default().resume_commits, value_name = "N")]
    resume_commits: usize,
    /// The most new identities one source address is given a minute (`POST /v1/identity`,
    /// WebSocket connections without a token), beyond which it is answered 429; 0 for no
    /// limit.
    #[arg(long, default_value_t = ServerConfig::default().identities_per_minute, value_name = "N")]
    identities_per_minute: u32,
    /// The most calls without a token (anonymous views, the module's HTTP handlers) one
    /// source address may make a minute, beyond which it is answered 429; 0 for no limit.
    #[arg(long, default_value_t = ServerConfig::default().anonymous_calls_per_minute, value_name = "N")]
    anonymous_calls_per_minute: u32,
    /// The most tokens one source address may get wrong a second (client or operator
    /// tokens), after a burst of five times as many; beyond, every token it sends, the right
    /// one too, is answered 429 until it is within the rate again; 0 for no limit.
    #[arg(long, default_value_t = ServerConfig::default().failed_tokens_per_second, value_name = "N")]
    failed_tokens_per_second: u32,
    /// How long a WebSocket client may stay silent before it is pinged; silent as long again,
    /// it is closed (`4003`).
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    ping_interval: Duration,
    /// The most TCP connections open at once, WebSockets included; beyond, a new one is closed
    /// as soon as it is accepted (after a `503 busy`). Lowered at start to fit the open-file
    /// limit, which is raised to its hard limit.
    #[arg(long, default_value_t = ServerConfig::default().max_connections, value_name = "N")]
    max_connections: usize,
    /// The most TCP connections open at once from one source address (IPv6: one /64);
    /// beyond, a new one is closed as soon as it is accepted (after a `429 too_many_calls`).
    #[arg(long, default_value_t = ServerConfig::default().max_connections_per_address, value_name = "N")]
    max_connections_per_address: usize,
    /// The most WebSocket connections one identity may have open at once; beyond, the
    /// handshake is answered 429.
    #[arg(long, default_value_t = ServerConfig::default().max_websockets_per_identity, value_name = "N")]
    max_websockets_per_identity: usize,
    /// The longest a client may take to send a request's headers, from the connection's start
    /// or the end of the previous answer: also how long an idle keep-alive connection stays
    /// open.
    #[arg(long, default_value = "15s", value_parser = units::duration)]
    header_read_timeout: Duration,
    /// The longest a write may wait for the client to read before its connection is closed.
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    write_timeout: Duration,
    /// A host procedures may send HTTP requests to (`api.example.com`, `*.example.com`,
    /// `127.0.0.1:8080`); repeat for several. None by default.
    #[arg(long = "allow-http", value_name = "HOST")]
    allow_http: Vec<String>,
    /// Let `--allow-http` host names reach loopback, private, link-local and other non-global
    /// addresses too. Without it a name that resolves to one is refused, and such an address
    /// is reached only through a rule naming it (`--allow-http 10.0.0.5:8080`).
    #[arg(long)]
    allow_private_addresses: bool,
    /// The operator token, for the admin console (`/admin`), the admin API and `wasmod logs`
    /// (at least 16 characters) [default: a new random one, printed at start]. Other users
    /// of the machine can read a command line: prefer `--operator-token-file`.
    #[arg(
        long,
        env = "WASMOD_OPERATOR_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    operator_token: Option<String>,
    /// A file holding the operator token (as `--operator-token`), readable by its owner only
    /// (`chmod 600`): a file other users may read or write is refused.
    #[arg(long, value_name = "FILE", conflicts_with = "operator_token")]
    operator_token_file: Option<PathBuf>,
}

/// What the operator is told at start: the console's address, and the operator token if it
/// was made up for this run (a token given is not printed).
pub struct Announcement {
    made_up: Option<OperatorToken>,
}

impl Serving {
    /// The server's limits; fails on values that cannot work.
    pub fn config(&self) -> Result<ServerConfig> {
        if self.ping_interval.is_zero() {
            return Err(Failure::usage(
                "--ping-interval: must be more than zero (every socket would be closed at once)",
            ));
        }
        for (flag, timeout) in [
            ("--header-read-timeout", self.header_read_timeout),
            ("--write-timeout", self.write_timeout),
        ] {
            if timeout.is_zero() {
                return Err(Failure::usage(format!(
                    "{flag}: must be more than zero (every connection would be closed at once)"
                )));
            }
        }
        let mut config = ServerConfig::default();
        config.max_body_bytes = self.max_body;
        config.max_module_bytes = self.max_module_bytes;
        config.max_calls_per_identity = self.max_calls_per_identity;
        config.request_timeout = self.request_timeout;
        config.queue = self.queue;
        config.token_ttl = self.token_ttl;
        config.outbound_messages = self.outbound_messages;
        if let Some(bytes) = self.max_client_memory {
            config.max_client_memory = bytes;
        }
        config.outbound_bytes = self.outbound_bytes;
        config.max_result_bytes = self.max_result_bytes;
        config.max_queries_per_set = self.max_queries_per_set;
        config.max_query_sets_per_connection = self.max_query_sets_per_connection;
        config.max_queries_per_identity = self.max_queries_per_identity;
        config.max_query_cost_per_identity = self.max_query_cost_per_identity;
        config.max_subscription_reads = self.max_subscription_reads;
        config.resume_commits = self.resume_commits;
        config.ping_interval = self.ping_interval;
        config.identities_per_minute = self.identities_per_minute;
        config.anonymous_calls_per_minute = self.anonymous_calls_per_minute;
        config.failed_tokens_per_second = self.failed_tokens_per_second;
        config.max_connections = self.max_connections;
        config.max_connections_per_address = self.max_connections_per_address;
        config.max_websockets_per_identity = self.max_websockets_per_identity;
        config.header_read_timeout = self.header_read_timeout;
        config.write_timeout = self.write_timeout;
        Ok(config)
    }

    /// The module's deadline and the other budgets of its calls.
    pub fn wasm_config(&self) -> WasmConfig {
        let mut config = WasmConfig::default();
        config.deadline = self.deadline;
        config
    }

    /// The module's environment before its tables are chosen: its logs kept in `logs` for the
    /// operator from its `init` on, and outbound HTTP to the hosts `--allow-http` names (at
    /// global addresses only, unless `--allow-private-addresses`).
    pub fn env(&self, logs: Arc<LogFeed>) -> Result<InstanceEnv> {
        let allow = AllowList::from_rules(&self.allow_http)
            .map_err(|error| Failure::usage(format!("--allow-http: {error}")))?;
        Ok(InstanceEnv::unloaded()
            .with_log_tap(logs)
            .with_http_client(Arc::new(
                OutboundHttp::new(allow).with_private_addresses(self.allow_private_addresses),
            )))
    }

    /// The operator token given (`--operator-token`, `WASMOD_OPERATOR_TOKEN` or
    /// `--operator-token-file`), if one was; fails on a token too short or not plain, or a
    /// file that cannot be read or that other users may read. Read before anything else is
    /// done.
    pub fn operator_token(&self) -> Result<Option<OperatorToken>> {
        let (text, flag) = match (&self.operator_token, &self.operator_token_file) {
            (Some(text), _) => (text.clone(), "--operator-token"),
            (None, Some(path)) => {
                let flag = "--operator-token-file";
                (token_file(path, flag)?, flag)
            }
            (None, None) => return Ok(None),
        };
        OperatorToken::new(&text)
            .map(Some)
            .map_err(|error| Failure::usage(format!("{flag}: {error}")))
    }

    /// The operator's side: the token given ([`Serving::operator_token`]) or one made up, the
    /// dispatch report of the served binary `wasm` (a binary that cannot be inspected is
    /// still served, without one), and the module's logs in `logs`.
    pub fn operator(
        &self,
        given: Option<OperatorToken>,
        wasm: &[u8],
        logs: Arc<LogFeed>,
    ) -> Result<(AdminOptions, Announcement)> {
        let (token, chosen) = match given {
            Some(token) => (token, true),
            None => (
                OperatorToken::generate().context("making an operator token")?,
                false,
            ),
        };
        let dispatch_report = inspect_dispatch(wasm);
        let announcement = Announcement {
            made_up: (!chosen).then(|| token.clone()),
        };
        let admin = AdminOptions {
            token,
            dispatch_report,
            logs,
            keep_published: None,
            inspect: Some(inspect_dispatch),
        };
        Ok((admin, announcement))
    }

    /// Serves `server` (with `--web`'s files) on `--listen` until SIGINT or SIGTERM, on
    /// `runtime`: prints `listening on http://<address>`, then the admin console's address
    /// with the operator token unless it was given ([`Serving::operator`]'s announcement).
    pub fn serve(
        &self,
        runtime: &tokio::runtime::Runtime,
        mut server: Server,
        announcement: &Announcement,
    ) -> Result {
        if let Some(web) = &self.web {
            if !web.is_dir() {
                return Err(Failure::usage(format!(
                    "--web {}: not a directory",
                    web.display()
                )));
            }
            server = server.with_static_files(web);
        }
        match wasmod_server::admission::raise_open_files_limit() {
            Ok(open_files) => tracing::info!(open_files, "the open-file limit"),
            Err(error) => tracing::warn!("the open-file limit was not raised: {error}"),
        }
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind(self.listen)
                .await
                .context(format!("listening on {}", self.listen))?;
            let address = listener.local_addr().context("the bound address")?;
            let console = match &announcement.made_up {
                None => {
                    format!("admin console: http://{address}/admin (with the operator token given)")
                }
                Some(token) => format!(
                    "admin console: http://{address}/admin#token={0}, operator token: {0}",
                    token.reveal()
                ),
            };
            // Before the address: a signal sent as soon as it is printed stops the server.
            let stop = crate::signal::shutdown_signal();
            output::print(format!("listening on http://{address}\n{console}\n"))?;
            server.serve(listener, stop).await.context("serving")
        })?;
        tracing::info!("stopped");
        Ok(())
    }
}

/// The async runtime a server runs on.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// The token in the file at `path` (given with `flag`, for the errors): its contents,
/// surrounding whitespace trimmed, at least 16 characters. Like ssh with a private key, a
/// file that users other than its owner may read or write is refused.
pub fn token_file(path: &std::path::Path, flag: &str) -> Result<String> {
    let reading = || format!("{flag}: reading the token in {}", path.display());
    if let Some(mode) = wasmod_server::secret::loose_mode(path).context(reading())? {
        return Err(Failure::usage(format!(
            "{flag}: other users may read or write {0} (mode {mode:o}), and whoever reads the \
             token holds what it opens: make it private with `chmod 600 {0}`",
            path.display()
        )));
    }
    let token = std::fs::read_to_string(path).context(reading())?;
    let token = token.trim();
    if token.len() < 16 {
        return Err(Failure::usage(format!(
            "{flag}: the token in {} is shorter than 16 characters",
            path.display()
        )));
    }
    Ok(token.to_owned())
}

/// The dispatch report of `wasm` for the admin console (`GET /v1/admin/dispatch`); `None`, with
/// a warning, for a binary that cannot be inspected (it is still served).
fn inspect_dispatch(wasm: &[u8]) -> Option<DispatchReport> {
    match wasmod_inspect::inspect(wasm) {
        Ok(report) => Some(DispatchReport {
            json: report.to_json(),
            text: report.to_string(),
            clean: report.is_clean(),
        }),
        Err(error) => {
            tracing::warn!("no dispatch report for the admin console: {error}");
            None
        }
    }
}
