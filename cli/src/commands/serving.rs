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
    /// API, whose routes keep priority.
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
    /// The most bytes of rows queued for one WebSocket client before it is closed as too slow
    /// (`4001`); a subscription's rows count 16 bytes a row against it until they are sent.
    #[arg(long, default_value = "16MiB", value_parser = units::size)]
    outbound_bytes: usize,
    /// The most bytes (in the binary encoding) of a value a view or procedure returns that an
    /// answer carries; a larger one is answered `result_too_large` (the call's commits stay).
    #[arg(long, default_value = "8MiB", value_parser = units::size)]
    max_result_bytes: usize,
    /// The recent commits kept (in memory, and read back from the log at start) so that
    /// reconnecting WebSocket clients are sent only what changed since their last offset;
    /// 0 for none.
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
    /// How long a WebSocket client may stay silent before it is pinged; silent as long again,
    /// it is closed (`4003`).
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    ping_interval: Duration,
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
    /// (at least 16 characters) [default: a new random one, printed at start].
    #[arg(
        long,
        env = "WASMOD_OPERATOR_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    operator_token: Option<String>,
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
        let mut config = ServerConfig::default();
        config.max_body_bytes = self.max_body;
        config.max_module_bytes = self.max_module_bytes;
        config.max_calls_per_identity = self.max_calls_per_identity;
        config.request_timeout = self.request_timeout;
        config.queue = self.queue;
        config.token_ttl = self.token_ttl;
        config.outbound_messages = self.outbound_messages;
        config.outbound_bytes = self.outbound_bytes;
        config.max_result_bytes = self.max_result_bytes;
        config.resume_commits = self.resume_commits;
        config.ping_interval = self.ping_interval;
        config.identities_per_minute = self.identities_per_minute;
        config.anonymous_calls_per_minute = self.anonymous_calls_per_minute;
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

    /// The operator's side: the token (given, or made up), the dispatch report of the served
    /// binary `wasm` (a binary that cannot be inspected is still served, without one), and
    /// the module's logs in `logs`.
    pub fn operator(
        &self,
        wasm: &[u8],
        logs: Arc<LogFeed>,
    ) -> Result<(AdminOptions, Announcement)> {
        let (token, chosen) = match &self.operator_token {
            Some(text) => (
                OperatorToken::new(text)
                    .map_err(|error| Failure::usage(format!("--operator-token: {error}")))?,
                true,
            ),
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
            output::print(format!("listening on http://{address}\n{console}\n"))?;
            server
                .serve(listener, wasmod_server::shutdown_signal())
                .await
                .context("serving")
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
/// surrounding whitespace trimmed, at least 16 characters.
pub fn token_file(path: &std::path::Path, flag: &str) -> Result<String> {
    let token = std::fs::read_to_string(path)
        .context(format!("{flag}: reading the token in {}", path.display()))?;
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
