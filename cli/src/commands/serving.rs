//! What serving a module takes, whoever writes its data: the options, limits, operator's side
//! and serving loop that `wasmod serve` (a primary, or a lone server) and `wasmod edge` (an
//! edge node of a primary) share.

use super::limits::ServerFlags;
use crate::failure::{Context, Failure, Result};
use crate::output;
use crate::units::Span;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use wasmod_host::{AllowList, InstanceEnv, OutboundHttp, WasmConfig};
use wasmod_node::LogFeed;
use wasmod_server::{
    AdminOptions, DispatchReport, OidcIssuer, OidcSettings, OperatorToken, Server, ServerConfig,
};

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
    /// The longest one call may run inside the module before it is aborted.
    #[arg(long, default_value_t = Span(WasmConfig::default().deadline), value_name = "DURATION")]
    deadline: Span,
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
    /// An OpenID Connect issuer whose tokens (ID tokens, or JWT access tokens) are accepted
    /// besides the server's own, with the audiences accepted: the application's client ids at
    /// that issuer, e.g. `https://accounts.google.com=1234.apps.googleusercontent.com`.
    /// Repeat for several issuers. The identity of such a token is derived from its issuer and
    /// subject, the same on every server (docs/authentication.md).
    #[arg(long = "oidc-issuer", value_name = "ISSUER=AUDIENCE[,AUDIENCE…]")]
    oidc_issuers: Vec<OidcIssuer>,
    /// Accept `--oidc-issuer`s over plain http when their host is a loopback address (a
    /// provider on this machine, for development and tests). Otherwise only https.
    #[arg(long, requires = "oidc_issuers")]
    oidc_allow_http_loopback: bool,
    #[command(flatten)]
    limits: ServerFlags,
}

/// What the operator is told at start: the console's address, and the operator token if it
/// was made up for this run (a token given is not printed).
pub struct Announcement {
    made_up: Option<OperatorToken>,
}

impl Serving {
    /// The server's limits, the node's among them; fails on values that cannot work.
    pub fn config(&self) -> Result<ServerConfig> {
        self.limits.config()
    }

    /// The OpenID Connect issuers accepted (`--oidc-issuer`), if any; fails on one that cannot
    /// be used (not https, named twice).
    pub fn oidc(&self) -> Result<Option<OidcSettings>> {
        if self.oidc_issuers.is_empty() {
            return Ok(None);
        }
        let mut settings = OidcSettings::new(self.oidc_issuers.clone());
        settings.allow_http_loopback = self.oidc_allow_http_loopback;
        settings
            .check()
            .map_err(|why| Failure::usage(format!("--oidc-issuer: {why}")))?;
        Ok(Some(settings))
    }

    /// The module's deadline and the other budgets of its calls.
    pub fn wasm_config(&self) -> WasmConfig {
        let mut config = WasmConfig::default();
        config.deadline = self.deadline.0;
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

    /// The operator's side: the token given ([`Serving::operator_token`]) or one made up, and
    /// the dispatch report of the served binary `wasm` (a binary that cannot be inspected is
    /// still served, without one).
    pub fn operator(
        &self,
        given: Option<OperatorToken>,
        wasm: &[u8],
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
            keep_published: None,
            inspect: Some(inspect_dispatch),
        };
        Ok((admin, announcement))
    }

    /// Serves the server `next` makes (with `--web`'s files) on `--listen` until SIGINT or
    /// SIGTERM, on `runtime`: prints `listening on http://<address>`, then the admin console's
    /// address with the operator token unless it was given ([`Serving::operator`]'s
    /// announcement).
    ///
    /// A node of a replicated deployment that is deposed (`docs/high-availability.md`) is
    /// stopped like a server that is told to stop (its calls in flight answered with errors,
    /// its sockets closed), and `next` is called again for the server that replaces it, a
    /// standby started from the data directory, on the same listening socket (again and again
    /// for up to [`RELEASE_PATIENCE`] while it fails: the deposed server may still hold the
    /// directory). Any other server is served once.
    pub fn serve(
        &self,
        runtime: &tokio::runtime::Runtime,
        mut next: impl FnMut() -> Result<Server>,
        announcement: &Announcement,
    ) -> Result {
        if let Some(web) = &self.web {
            if !web.is_dir() {
                return Err(Failure::usage(format!(
                    "--web {}: not a directory",
                    web.display()
                )));
            }
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
            let listener = listener.into_std().context("the bound socket")?;
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
            let signal = crate::signal::shutdown_signal();
            let (stop, stopped) = tokio::sync::watch::channel(false);
            tokio::spawn(async move {
                signal.await;
                stop.send_replace(true);
            });
            output::print(format!("listening on http://{address}\n{console}\n"))?;
            // When the last server was deposed, if it was.
            let mut deposed_at: Option<std::time::Instant> = None;
            loop {
                let mut server = match next() {
                    Ok(server) => server,
                    // The deposed server's last tasks may hold its database, and the data
                    // directory's lock with it, a moment after it stopped serving.
                    Err(failure)
                        if deposed_at.is_some_and(|at| at.elapsed() < RELEASE_PATIENCE)
                            && !*stopped.borrow() =>
                    {
                        tracing::debug!("starting again as a standby: {failure:?}; trying again");
                        tokio::time::sleep(RELEASE_POLL).await;
                        continue;
                    }
                    Err(failure) => return Err(failure),
                };
                if let Some(web) = &self.web {
                    server = server.with_static_files(web);
                }
                let deposed = server.node().deposed();
                let (ended, end) = tokio::sync::oneshot::channel();
                let mut stopped = stopped.clone();
                let shutdown = async move {
                    let reason = async move {
                        match deposed {
                            Some(mut deposed) => deposed.wait().await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        _ = stopped.wait_for(|stop| *stop) => {}
                        reason = reason => { let _ = ended.send(reason); }
                    }
                };
                let socket = listener.try_clone().context("the bound socket")?;
                let socket =
                    tokio::net::TcpListener::from_std(socket).context("the bound socket")?;
                server.serve(socket, shutdown).await.context("serving")?;
                match end.await {
                    Ok(reason) => {
                        tracing::warn!(
                            "this node was deposed ({reason}): starting again as a standby"
                        );
                        deposed_at = Some(std::time::Instant::now());
                    }
                    Err(_) => return Ok::<(), Failure>(()),
                }
            }
        })?;
        tracing::info!("stopped");
        Ok(())
    }
}

/// How long a deposed node tries to start again as a standby: the server it replaces lets go
/// of the data directory only once its last tasks end (connections closing, requests in
/// flight, the log's last batch), which under load can be after it stopped serving; until
/// then the directory's lock refuses the next one ("in use by another wasmod process").
const RELEASE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// How often it tries meanwhile.
const RELEASE_POLL: std::time::Duration = std::time::Duration::from_millis(200);

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
