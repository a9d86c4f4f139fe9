//! The client side of a server's HTTP API, as the commands that talk to a server use it: one
//! agent configuration, requests that return every status as an answer, answers read as the
//! protocol's typed messages, and the module's description (`GET /v1/module`).

use crate::failure::{Context, Failure, Result};
use serde::de::DeserializeOwned;
use std::time::Duration;
use ureq::Agent;
use wasmod_protocol::ModuleDescription;

/// How long one request may take.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// An HTTP client that returns every status as an answer.
pub fn agent() -> Agent {
    Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(TIMEOUT))
        .build()
        .into()
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
}
