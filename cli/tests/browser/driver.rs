//! What the browser tests share: ChromeDriver and headless Chromium sessions over WebDriver
//! (fantoccini), waiting for a page's script to hold, screenshots, and the browser client
//! built into the quickstart page's `pkg/` once per run (`client/web/build.sh`).
//!
//! Chromium and ChromeDriver are required, not optional: without them a test fails and says
//! what to install (`.ci/run` installs them).

use crate::support::free_port;
use fantoccini::{Client, ClientBuilder};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use wasmod_wasm_tests::workspace_root;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// How long a change may take to show in a page.
pub const SHOWN_WITHIN: Duration = Duration::from_secs(15);

/// The chromedriver process; killed when the test ends.
pub struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts chromedriver on a free port and waits until it answers.
pub fn start_driver() -> Driver {
    for (path, package) in [(CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")] {
        assert!(
            Path::new(path).exists(),
            "{path} is missing: the browser tests need Debian's `chromium` and `chromium-driver` \
             (apt-get install chromium chromium-driver; .ci/run installs them); `{package}` \
             provides {path}"
        );
    }
    let port = free_port();
    let child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let url = format!("http://127.0.0.1:{port}");
    let driver = Driver { child, url };
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "chromedriver did not answer"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    driver
}

/// The page's directory, with the browser client built into its `pkg/` once per test run.
pub fn web_dir() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(build_package)
}

/// Builds the browser client into the page's `pkg/`, where the nested builds of the tests go.
fn build_package() -> PathBuf {
    let root = workspace_root();
    let web = root.join("examples/quickstart/web");
    let status = Command::new("bash")
        .arg(root.join("client/web/build.sh"))
        .arg(web.join("pkg"))
        .env("CARGO_TARGET_DIR", root.join("target").join("wasm-tests"))
        .status()
        .expect("bash runs");
    assert!(status.success(), "client/web/build.sh failed");
    web
}

/// A new headless Chromium with a fresh profile.
pub async fn browser(driver: &Driver, profile: &Path) -> Client {
    browser_with(driver, profile, &[]).await
}

/// A new headless Chromium with a fresh profile and the command-line switches `extra`.
pub async fn browser_with(driver: &Driver, profile: &Path, extra: &[&str]) -> Client {
    let mut args = vec![
        "--headless".to_owned(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--window-size=1000,640".into(),
        format!("--user-data-dir={}", profile.display()),
    ];
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    let capabilities = json!({
        "browserName": "chrome",
        "goog:chromeOptions": { "binary": CHROMIUM, "args": args },
    });
    let Value::Object(capabilities) = capabilities else {
        unreachable!("an object");
    };
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .expect("a WebDriver session")
}

/// Waits until `script` (a function body) returns `true` in `page`, or fails with `what` (and
/// the text of the page's `#error` element, where it shows what went wrong).
pub async fn wait_for(page: &Client, what: &str, script: &str, args: Vec<Value>) {
    let started = Instant::now();
    loop {
        let value = page
            .execute(script, args.clone())
            .await
            .expect("the script runs");
        if value == Value::Bool(true) {
            return;
        }
        if started.elapsed() > SHOWN_WITHIN {
            let error = page
                .execute(
                    "return document.getElementById('error').textContent",
                    vec![],
                )
                .await
                .unwrap_or_default();
            panic!("{what}: not within {SHOWN_WITHIN:?} (the page's error: {error})");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Saves a screenshot of `page` as `target/browser-artifacts/<name>.png`.
pub async fn screenshot(page: &Client, name: &str) -> PathBuf {
    let dir = workspace_root().join("target").join("browser-artifacts");
    std::fs::create_dir_all(&dir).expect("the artifacts directory");
    let path = dir.join(format!("{name}.png"));
    let png = page.screenshot().await.expect("a screenshot");
    std::fs::write(&path, png).expect("the screenshot written");
    path
}
