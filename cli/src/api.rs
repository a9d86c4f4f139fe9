//! The client side of a server's HTTP API, as the commands that talk to a server use it: one
//! agent configuration, requests that return every status as an answer, answers read as the
//! protocol's typed messages, and the module's description (`GET /v1/module`).
//!
//! Over `https://`, the agent trusts the platform's root certificates, as the client SDK
//! does for its sockets and requests (`wasmod_client::Tls`, whose module says why), and not
//! the copy of Mozilla's list compiled into the HTTP library: a server behind a proxy whose
//! certificate a company's own CA signed, trusted by the machine, is reached by `wasmod call`
//! as by `wasmod subscribe`.

use crate::failure::{Context, Failure, Result};
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::time::Duration;
use ureq::config::ConfigBuilder;
use ureq::tls::{Certificate, RootCerts, TlsConfig};
use ureq::typestate::AgentScope;
use ureq::Agent;
use wasmod_protocol::ModuleDescription;

/// How long one request may take.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// An HTTP client for requests to `url` that returns every status as an answer, each
/// request given [`TIMEOUT`].
pub fn agent(url: &str) -> Agent {
    config(url).timeout_global(Some(TIMEOUT)).build().into()
}

/// The configuration of an HTTP client for requests to `url` that returns every status as an
/// answer; over `https://` it trusts the platform's roots (over plain HTTP the platform's
/// store is not read).
pub fn config(url: &str) -> ConfigBuilder<AgentScope> {
    let config = Agent::config_builder().http_status_as_error(false);
    if !url.starts_with("https://") {
        return config;
    }
    let roots = wasmod_client::Tls::default()
        .roots_der()
        .iter()
        .map(|root| Certificate::from_der(root).to_owned())
        .collect();
    let tls = TlsConfig::builder()
        .root_certs(RootCerts::Specific(Arc::new(roots)))
        .build();
    config.tls_config(tls)
}

/// The description of the module served at `base` (its public tables only).
pub fn describe(agent: &Agent, base: &str) -> Result<ModuleDescription> {
    match request(agent, "GET", &format!("{base}/v1/module"), None, None)? {
        (200, text) => parse(&text, "a module description"),
        (status, text) => Err(Failure::usage(format!(
            "{base} did not describe its module ({status}): {text}"
        ))),
    }
}

/// The answer `text`, which should be `what`: the server's failure if it is not.
pub fn parse<T: DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|error| {
        Failure::module(format!(
            "the server's answer is not {what} ({error}): {text}"
        ))
    })
}

/// Sends one request and returns the status and the body.
pub fn request(
    agent: &Agent,
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Result<(u16, String)> {
    let authorization = token.map(|token| format!("Bearer {token}"));
    let response = if method == "GET" {
        agent.get(url).call()
    } else {
        let mut post = agent.post(url).content_type("application/json");
        if let Some(authorization) = &authorization {
            post = post.header("authorization", authorization);
        }
        match body {
            Some(body) => post.send(body),
            None => post.send_empty(),
        }
    };
    let mut response = response.context(format!("{method} {url}"))?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .read_to_string()
        .context(format!("reading the answer to {method} {url}"))?;
    Ok((status, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_protocol::http::CallResponse;

    #[test]
    fn answers_that_are_not_the_protocols_are_the_servers_failure() {
        assert!(
            parse::<CallResponse>(r#"{"duration_us":1,"offset":3,"status":"committed"}"#, "x")
                .is_ok()
        );
        assert!(parse::<CallResponse>("<html>", "a call's result").is_err());
    }

    #[test]
    fn https_trusts_the_platforms_roots_and_plain_http_reads_no_store() {
        let platform = wasmod_client::Tls::default().roots_der();
        for url in [
            "https://chat.example.org",
            "https://127.0.0.1:8443/v1/admin/logs/feed",
        ] {
            let agent = agent(url);
            match agent.config().tls_config().root_certs() {
                RootCerts::Specific(roots) => {
                    assert_eq!(roots.len(), platform.len(), "{url}");
                    assert!(
                        roots
                            .iter()
                            .zip(&platform)
                            .all(|(root, der)| root.der() == &der[..]),
                        "{url}: the platform's roots, in its order"
                    );
                }
                other => panic!("{url}: trusts {other:?}, not the platform's roots"),
            }
        }
        assert!(matches!(
            config("http://127.0.0.1:3000")
                .build()
                .tls_config()
                .root_certs(),
            RootCerts::WebPki
        ));
    }
}
