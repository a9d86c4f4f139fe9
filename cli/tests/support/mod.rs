//! What the CLI's test binaries share: running the built `wasmod`, serving a module with it,
//! and a blocking HTTP client.

#![allow(dead_code)] // Each test binary uses the part it needs.

pub mod nginx;

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use ureq::Agent;

/// How long a line or an exit may take on a loaded machine.
pub const PATIENCE: Duration = Duration::from_secs(60);
use wasmod_wasm_tests::workspace_root;

/// Runs the built `wasmod` with `args` in `dir`; nested cargo runs share the wasm tests'
/// target directory.
pub fn wasmod(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wasmod"))
        .args(args)
        .current_dir(dir)
        .env(
            "CARGO_TARGET_DIR",
            workspace_root().join("target").join("wasm-tests"),
        )
        .output()
        .expect("wasmod runs")
}

/// How long a process dropped by a test has to stop after SIGTERM before it is killed.
const GRACE: Duration = Duration::from_secs(5);

/// Stops `child` as an operator would: SIGTERM, then SIGKILL if it has not exited within
/// [`GRACE`]. Stopped this way a server runs its shutdown, and, in CI's instrumented run,
/// writes its coverage profile at exit: a process killed outright writes none, and what it
/// ran would count as never run.
pub fn stop(child: &mut Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let start = Instant::now();
    while start.elapsed() < GRACE {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A loopback port that nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Bytes as text, for messages.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A running `wasmod subscribe` (or another command that streams), its stdout read line by
/// line; stopped ([`stop`]) if the test ends early.
pub struct Subscriber {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Subscriber {
    /// Starts `wasmod subscribe` with `args`.
    pub fn start(args: &[&str]) -> Self {
        Self::run("subscribe", args)
    }

    /// Starts `wasmod <command>` with `args`.
    pub fn run(command: &str, args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wasmod"))
            .arg(command)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("wasmod subscribe starts");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break; // Nobody reads: the pipe closes.
                }
            }
        });
        Self { child, lines }
    }

    /// The next line of stdout, as JSON.
    pub fn next(&self) -> Value {
        let line = self.next_line();
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("{error}: {line}"))
    }

    /// The next line of stdout.
    pub fn next_line(&self) -> String {
        self.lines
            .recv_timeout(PATIENCE)
            .expect("the command prints a line")
    }

    /// The next line of stdout if one comes within `wait`.
    pub fn line_within(&self, wait: Duration) -> Option<String> {
        self.lines.recv_timeout(wait).ok()
    }

    /// Whether the command has exited.
    pub fn exited(&mut self) -> bool {
        self.child.try_wait().expect("the child").is_some()
    }

    /// Waits for the exit; returns its status, the lines not read yet, and stderr.
    pub fn finish(mut self) -> (ExitStatus, Vec<String>, String) {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("the child") {
                break status;
            }
            assert!(start.elapsed() < PATIENCE, "wasmod subscribe did not exit");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        let _ = self
            .child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr);
        let rest = std::iter::from_fn(|| self.lines.recv_timeout(PATIENCE).ok()).collect();
        (status, rest, stderr)
    }

    /// Stops reading stdout: the pipe closes at the next line.
    pub fn stop_reading(&mut self) {
        self.lines = mpsc::channel().1;
    }

    /// Sends SIGINT.
    pub fn interrupt(&self) {
        let status = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// The `wasmod serve` process; stopped ([`stop`]) when dropped.
pub struct Served {
    child: Child,
    /// The server's address, `http://127.0.0.1:PORT`.
    pub base: String,
    /// The operator token it made up and printed.
    pub operator_token: String,
    stderr: mpsc::Receiver<String>,
}

impl Drop for Served {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

impl Served {
    /// Starts `wasmod serve module` (a `.wasm` file or a crate) on a free loopback port and
    /// waits for its address.
    pub fn start(module: &Path, data: &Path) -> Self {
        Self::start_with(module, data, "127.0.0.1:0", &[])
    }

    /// Starts `wasmod serve module` listening on `listen` (`127.0.0.1:0` for a free port),
    /// with `extra` arguments, and waits for its address.
    pub fn start_with(
        module: &Path,
        data: &Path,
        listen: &str,
        extra: &[&std::ffi::OsStr],
    ) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_wasmod"));
        command
            .arg("serve")
            .arg(module)
            .args(["--listen", listen, "--max-body", "64KiB"])
            .args(extra)
            .arg("--data")
            .arg(data);
        Self::spawn(command)
    }

    /// Starts `wasmod edge module` listening on `listen` (`127.0.0.1:0` for a free port),
    /// with `args` (the primary, the stream, the token and secret files), and waits for its
    /// address.
    pub fn edge(module: &Path, listen: &str, args: &[&std::ffi::OsStr]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_wasmod"));
        command
            .arg("edge")
            .arg(module)
            .args(["--listen", listen])
            .args(args);
        Self::spawn(command)
    }

    /// Starts `wasmod edge module` on a free loopback port, following `stream` and sending its
    /// writes to `primary` (a URL, or a deployment's nodes' URLs comma-separated), with the
    /// edge token and the identity secret in the files `token` and `secret`, and `extra`
    /// arguments; waits for its address.
    pub fn edge_of(
        module: &Path,
        primary: &str,
        stream: &str,
        (token, secret): (&Path, &Path),
        extra: &[&str],
    ) -> Self {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "--primary".as_ref(),
            primary.as_ref(),
            "--follow".as_ref(),
            stream.as_ref(),
            "--edge-token-file".as_ref(),
            token.as_os_str(),
            "--secret-file".as_ref(),
            secret.as_os_str(),
        ];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        Self::edge(module, "127.0.0.1:0", &args)
    }

    /// The process's id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the process at once (SIGKILL), as a crash would, and waits for it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Runs `command` (`wasmod serve` or `wasmod edge`) and waits for the address it prints.
    fn spawn(mut command: Command) -> Self {
        let mut child = command
            // A crate is built where the other tests' nested builds go.
            .env(
                "CARGO_TARGET_DIR",
                workspace_root().join("target").join("wasm-tests"),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("wasmod starts");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (lines, printed) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let address = line.strip_prefix("listening on ");
                let token = line.split_once("operator token: ").map(|(_, token)| token);
                if let Some(text) = address.or(token) {
                    let _ = lines.send(text.to_owned());
                }
            }
        });
        let (logs, stderr_text) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = BufReader::new(stderr).read_to_string(&mut text);
            let _ = logs.send(text);
        });
        let base = printed
            .recv_timeout(Duration::from_secs(120))
            .expect("wasmod serve prints the address it listens on");
        assert!(base.starts_with("http://127.0.0.1:"), "{base}");
        let operator_token = printed
            .recv_timeout(Duration::from_secs(10))
            .expect("wasmod serve prints the operator token");
        Self {
            child,
            base,
            operator_token,
            stderr: stderr_text,
        }
    }

    /// Sends SIGTERM and returns the exit status and everything the server logged.
    pub fn terminate(mut self) -> (std::process::ExitStatus, Duration, String) {
        let start = Instant::now();
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let exit = loop {
            if let Some(exit) = self.child.try_wait().expect("the child") {
                break exit;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "wasmod serve did not exit within 10s of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let took = start.elapsed();
        let logs = self
            .stderr
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_default();
        (exit, took, logs)
    }
}

/// A blocking HTTP client that returns every status as a response.
pub fn agent() -> Agent {
    Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// One request: `(status, body as JSON or as a JSON string)`; panics if it got no answer.
pub fn send(
    agent: &Agent,
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> (u16, Value) {
    try_send(agent, method, url, token, body).unwrap_or_else(|error| panic!("{error}"))
}

/// One request: `(status, body as JSON or as a JSON string)`, or why no answer came (a
/// server gone, or paused past the agent's timeout).
pub fn try_send(
    agent: &Agent,
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Result<(u16, Value), String> {
    let authorization = token.map(|token| format!("Bearer {token}"));
    let response = match method {
        "GET" => {
            let mut get = agent.get(url);
            if let Some(authorization) = &authorization {
                get = get.header("authorization", authorization);
            }
            get.call()
        }
        _ => {
            let mut post = agent.post(url);
            if let Some(authorization) = &authorization {
                post = post.header("authorization", authorization);
            }
            match body {
                Some(body) => post.send(body),
                None => post.send_empty(),
            }
        }
    };
    let mut response = response.map_err(|error| format!("{method} {url}: {error}"))?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|error| format!("{method} {url}: reading the body: {error}"))?;
    let json = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok((status, json))
}

/// Writes `text` to `path`, readable by its owner only (`chmod 600`): how a token or a secret
/// file must be for `wasmod` to take it.
pub fn private_file(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("a file");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod 600");
}

/// Sends `signal` (`STOP`, `CONT`) to process `pid`.
pub fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}
