//! A real OpenID Provider on loopback, for tests.
//!
//! wasmod accepts OpenID Connect ID tokens from the issuers an operator configures (DESIGN.md,
//! "Identity"), verified against the issuer's discovery document and JWKS. Whether that works
//! depends on what real providers send (their discovery documents, key sets, algorithms,
//! token lifetimes), which a fake provider written here would only echo back from our own
//! assumptions. [`OidcProvider`] runs npm's `oidc-provider` (OpenID Certified; version pinned
//! in `provider/package-lock.json`) under Node on `http://127.0.0.1:<free port>`, configured
//! by [`Settings`]: users, clients, lifetimes. Its issuer is that URL; it serves discovery at
//! `/.well-known/openid-configuration`, its JWKS (one RS256, one ES256 and one EdDSA key), the
//! authorization code flow with PKCE and its development login and consent pages.
//!
//! Browser tests sign in through those pages; Rust tests call [`OidcProvider::sign_in`], which
//! walks the same flow over HTTP (`sign_in.rs` says how) and returns the [`TokenSet`].
//! [`jwt`] reads a token's header and claims without verifying them.
//!
//! ```no_run
//! use wasmod_oidc_provider::{OidcProvider, Settings};
//!
//! let provider = OidcProvider::start(Settings::default())?;
//! let tokens = provider.sign_in("alice", "app")?;
//! assert_eq!(tokens.claims()?["iss"], provider.issuer());
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # Setup
//!
//! Node.js 20 or later on the `PATH`, and the script's packages installed once with
//! `npm ci --prefix tools/oidc-provider/provider` (which `.ci/run` does). Without them
//! [`OidcProvider::start`] fails saying so.
//!
//! # Processes
//!
//! The provider is killed when the [`OidcProvider`] is dropped, and ends by itself when the
//! test process does, however it ends: the script exits when its standard input, a pipe the
//! test process holds, closes. Its output (standard output and error) is kept for failure
//! messages ([`OidcProvider::log`]). Its state (sessions, codes) is in memory: a
//! [`restart`](OidcProvider::restart) keeps the port, so the issuer, and the signing keys, so
//! tokens signed before still verify, and nothing else.

pub mod jwt;
mod settings;
mod sign_in;

pub use settings::{Alg, Client, Settings, User};
pub use sign_in::TokenSet;

use sign_in::Endpoints;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use std::{fmt, thread};

/// How long the provider gets to listen and answer its discovery document. It takes 1 to
/// 1.7 s on the 2-core machine with the harness's tests in parallel (Node's start, the
/// module's load, the keys generated; a restart, which reads its keys, about 0.6 to 0.9 s);
/// the bound is for a machine busy building.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How often discovery is asked while waiting for it.
const POLL: Duration = Duration::from_millis(50);

/// The line the script prints once it accepts connections, before its issuer.
const LISTENING: &str = "listening ";

/// A running `oidc-provider` on loopback, with its users and clients. The methods that talk
/// to it return [`io::Error`]s whose messages say what failed, with the provider's log when
/// that helps.
pub struct OidcProvider {
    settings: Settings,
    issuer: String,
    port: u16,
    endpoints: Endpoints,
    /// `None` once killed.
    process: Option<Process>,
    /// Everything the script printed, over all its restarts.
    log: Arc<Mutex<String>>,
    /// The signing keys' file. Declared last, so it is removed after the process is killed.
    dir: tempfile::TempDir,
}

impl OidcProvider {
    /// Starts a provider with `settings` on a free loopback port, and waits (a minute at most)
    /// until its discovery document answers with its issuer.
    ///
    /// # Errors
    ///
    /// If Node cannot be started, the script fails (its packages not installed: `npm ci
    /// --prefix tools/oidc-provider/provider`; settings it refuses), or discovery does not
    /// answer in time; the message has the provider's log.
    pub fn start(settings: Settings) -> io::Result<OidcProvider> {
        let dir = tempfile::Builder::new().prefix("oidc-provider").tempdir()?;
        let log = Arc::new(Mutex::new(String::new()));
        let started = Instant::now();
        let (process, issuer) = Process::spawn(&settings, 0, &keys(dir.path()), &log)?;
        let port = issuer
            .rsplit(':')
            .next()
            .and_then(|port| port.parse().ok())
            .ok_or_else(|| io::Error::other(format!("the provider's issuer `{issuer}`")))?;
        // Killed when dropped, if discovery fails.
        let process = Some(process);
        let endpoints = discover(&issuer, &log, started)?;
        Ok(OidcProvider {
            settings,
            issuer,
            port,
            endpoints,
            process,
            log,
            dir,
        })
    }

    /// The issuer: `http://127.0.0.1:PORT`, with no trailing slash, as the `iss` of its tokens
    /// and the `issuer` of its discovery document.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The discovery document's URL: the issuer's `/.well-known/openid-configuration`.
    pub fn discovery_url(&self) -> String {
        discovery_url(&self.issuer)
    }

    /// What the provider was started with: its users and clients (ids, secrets, redirect
    /// URIs).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The client whose id is `id`, as [`Settings::client`].
    pub fn client(&self, id: &str) -> Option<&Client> {
        self.settings.client(id)
    }

    /// Signs user `sub` in as client `client` (its id) through the authorization code flow
    /// with PKCE, as a browser would (the login and consent pages included, scripted over
    /// HTTP), and returns the tokens. Each call is a new sign-in (a new browser, no session
    /// kept), so each gives a new ID token. 50 to 150 ms on loopback (a provider's
    /// first sign-in the slowest).
    ///
    /// # Errors
    ///
    /// If `client` is not one of the settings' clients, `sub` is not one of their users, the
    /// provider is down, or a step answers something unexpected: the message says which.
    pub fn sign_in(&self, sub: &str, client: &str) -> io::Result<TokenSet> {
        let client = self.client(client).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("no client `{client}` in the provider's settings"),
            )
        })?;
        sign_in::sign_in(&self.endpoints, sub, client).map_err(|err| with_log(err, &self.log))
    }

    /// Kills the provider (SIGKILL) and waits for it to end: its issuer stops answering, as
    /// an issuer that goes down would. Nothing if it is not running.
    pub fn kill(&mut self) {
        self.process = None;
    }

    /// Whether the provider's process runs (`false` once killed, or if it ended by itself).
    pub fn is_running(&mut self) -> bool {
        self.process
            .as_mut()
            .is_some_and(|process| matches!(process.child.try_wait(), Ok(None)))
    }

    /// Starts the provider again (killing it first if it runs) on the same port with the same
    /// settings and signing keys, and waits for its discovery as [`start`](Self::start) does.
    /// Sessions and codes of before are gone (they were in memory).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start), and if another process took the port meanwhile.
    pub fn restart(&mut self) -> io::Result<()> {
        self.kill();
        let started = Instant::now();
        let (process, issuer) =
            Process::spawn(&self.settings, self.port, &keys(self.dir.path()), &self.log)?;
        self.process = Some(process);
        if issuer != self.issuer {
            return Err(with_log(
                io::Error::other(format!(
                    "the restarted provider's issuer is {issuer}, not {}",
                    self.issuer
                )),
                &self.log,
            ));
        }
        discover(&self.issuer, &self.log, started).map(drop)
    }

    /// Everything the provider printed (its standard output and error, over all its
    /// restarts), for a failure message.
    pub fn log(&self) -> String {
        read_log(&self.log)
    }
}

impl fmt::Debug for OidcProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcProvider")
            .field("issuer", &self.issuer)
            .field("running", &self.process.is_some())
            .finish_non_exhaustive()
    }
}

impl Drop for OidcProvider {
    /// Kills the provider. When a failing test drops it (a panic), its log is printed first.
    fn drop(&mut self) {
        self.kill();
        if thread::panicking() {
            eprintln!("--- the OpenID Provider's log:\n{}", self.log());
        }
    }
}

/// The script's process, and the pipe it watches.
struct Process {
    child: Child,
    /// Held open while the process should run: the script exits when it closes.
    _stdin: ChildStdin,
}

impl Process {
    /// Starts the script on `port` (0: any) and waits until it prints that it listens; returns
    /// the process and the issuer it printed. Its output goes to `log`, line by line, by two
    /// threads that end with the process.
    fn spawn(
        settings: &Settings,
        port: u16,
        keys: &Path,
        log: &Arc<Mutex<String>>,
    ) -> io::Result<(Process, String)> {
        let script = script_dir().join("server.mjs");
        let mut child = Command::new("node")
            .arg(&script)
            .arg(settings.to_json(port, keys).to_string())
            .current_dir(script_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| {
                io::Error::new(
                    err.kind(),
                    format!(
                        "starting `node {}`: {err} (Node.js 20 or later is needed)",
                        script.display()
                    ),
                )
            })?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let (listening, issuer) = mpsc::channel();
        copy_lines(
            child.stdout.take().expect("stdout is piped"),
            log,
            Some(listening),
        );
        copy_lines(child.stderr.take().expect("stderr is piped"), log, None);
        let mut process = Process {
            child,
            _stdin: stdin,
        };
        match issuer.recv_timeout(START_TIMEOUT) {
            Ok(issuer) => Ok((process, issuer)),
            Err(err) => {
                let waited = match err {
                    mpsc::RecvTimeoutError::Timeout => {
                        format!("did not listen within {START_TIMEOUT:?}")
                    }
                    mpsc::RecvTimeoutError::Disconnected => "ended before it listened".to_owned(),
                };
                let _ = process.child.kill();
                let status = process.child.wait()?;
                // The stderr thread may still be copying the last lines.
                thread::sleep(Duration::from_millis(100));
                let error = io::Error::other(format!(
                    "the OpenID Provider {waited} ({status}; are its packages installed? `npm ci \
                     --prefix tools/oidc-provider/provider`)"
                ));
                Err(with_log(error, log))
            }
        }
    }
}

impl Drop for Process {
    /// Kills the process (it may have ended already) and reaps it.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Copies `output`'s lines into `log` on a thread of its own until it closes; sends the
/// issuer of the first `listening` line to `listening`.
fn copy_lines(
    output: impl Read + Send + 'static,
    log: &Arc<Mutex<String>>,
    mut listening: Option<mpsc::Sender<String>>,
) {
    let log = Arc::clone(log);
    thread::spawn(move || {
        for line in BufReader::new(output).lines() {
            let Ok(line) = line else { break };
            if let Some(issuer) = line.strip_prefix(LISTENING) {
                if let Some(listening) = listening.take() {
                    let _ = listening.send(issuer.to_owned());
                }
            }
            if let Ok(mut log) = log.lock() {
                log.push_str(&line);
                log.push('\n');
            }
        }
    });
}

/// The Node script's folder, with its `package.json` and `node_modules`.
fn script_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("provider")
}

/// The signing keys' file in the provider's temporary directory.
fn keys(dir: &Path) -> PathBuf {
    dir.join("keys.json")
}

fn discovery_url(issuer: &str) -> String {
    format!("{issuer}/.well-known/openid-configuration")
}

/// Asks for `issuer`'s discovery document until it answers with that issuer (or
/// [`START_TIMEOUT`] after `started`), and reads the endpoints a sign-in needs from it.
fn discover(issuer: &str, log: &Mutex<String>, started: Instant) -> io::Result<Endpoints> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let url = discovery_url(issuer);
    loop {
        let why = match agent.get(&url).call() {
            Ok(mut response) => match response.body_mut().read_to_string() {
                Ok(body) => match serde_json::from_str::<serde_json::Value>(&body) {
                    Ok(document) if document["issuer"] == issuer => return endpoints(&document),
                    Ok(document) => format!("a document of another issuer: {document}"),
                    Err(err) => format!("not JSON ({err}): {body}"),
                },
                Err(err) => err.to_string(),
            },
            Err(err) => err.to_string(),
        };
        if started.elapsed() > START_TIMEOUT {
            let error = io::Error::new(
                io::ErrorKind::TimedOut,
                format!("{url} did not answer within {START_TIMEOUT:?}: {why}"),
            );
            return Err(with_log(error, log));
        }
        thread::sleep(POLL);
    }
}

/// The endpoints of a discovery document.
fn endpoints(document: &serde_json::Value) -> io::Result<Endpoints> {
    let endpoint = |name: &str| {
        document[name]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| io::Error::other(format!("discovery has no `{name}`: {document}")))
    };
    Ok(Endpoints {
        authorization: endpoint("authorization_endpoint")?,
        token: endpoint("token_endpoint")?,
    })
}

fn read_log(log: &Mutex<String>) -> String {
    log.lock().map(|log| log.clone()).unwrap_or_default()
}

/// `error` with the provider's log after it.
fn with_log(error: io::Error, log: &Mutex<String>) -> io::Error {
    io::Error::new(
        error.kind(),
        format!("{error}\n--- the provider's log:\n{}", read_log(log)),
    )
}
