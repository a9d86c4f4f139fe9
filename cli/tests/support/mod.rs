//! What the CLI's test binaries share: running the built `wasmod`, serving a module with it,
//! and a blocking HTTP client.

#![allow(dead_code)] // Each test binary uses the part it needs.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use ureq::Agent;
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

/// Bytes as text, for messages.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `wasmod serve` process; killed if the test ends early.
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
        let _ = self.child.kill();
        let _ = self.child.wait();
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
        let mut child = Command::new(env!("CARGO_BIN_EXE_wasmod"))
            .arg("serve")
            .arg(module)
            .args(["--listen", listen, "--max-body", "64KiB"])
            .args(extra)
            .arg("--data")
            .arg(data)
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

/// One request: `(status, body as JSON or as a JSON string)`.
pub fn send(
    agent: &Agent,
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> (u16, Value) {
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
    let mut response = response.unwrap_or_else(|error| panic!("{method} {url}: {error}"));
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().expect("a body");
    let json = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, json)
}
