//! The browser client in real headless Chromium, driven over WebDriver (ChromeDriver, through
//! fantoccini; `driver`): the quickstart's chat page and the operator's console against a
//! served quickstart (`chat`), and the browser package's own tests of decode and cache
//! behaviour over the test vectors it shares with the Rust client (`package`).

mod chat;
mod driver;
mod package;
#[path = "../support/mod.rs"]
mod support;
