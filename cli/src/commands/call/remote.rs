//! `wasmod call` against a server: the client side of the API.
//!
//! The server's description (`GET /v1/module`) says what kind of entry point the name is, and
//! so which route to post to; a name it does not list is posted as a reducer, and the server's
//! own `no_such_entry` answer is printed. A call that runs as an identity and has no token
//! (`--token`, `WASMOD_TOKEN`) first obtains a new identity (`POST /v1/identity`). Every
//! answer is read as the protocol's typed message; one that is not is the server's failure.

use super::Answer;
use crate::failure::{Context, Failure, Result};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::time::Duration;
use ureq::Agent;
use wasmod_abi::EntryKind;
use wasmod_protocol::http::{call_route, CallResponse, IdentityResponse};
use wasmod_protocol::{ErrorBody, ModuleDescription};

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Calls `function` with `args` on the server at `base`.
pub fn call(base: &str, function: &str, args: &Value, token: Option<&str>) -> Result<Answer> {
    let base = base.trim_end_matches('/');
    let agent: Agent = Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(TIMEOUT))
        .build()
        .into();
    let description: ModuleDescription =
        match request(&agent, "GET", &format!("{base}/v1/module"), None, None)? {
            (200, text) => parse(&text, "a module description")?,
            (status, text) => {
                return Err(Failure::usage(format!(
                    "{base} did not describe its module ({status}): {text}"
                )))
            }
        };
    let kind = description
        .callable_kind(function)
        .unwrap_or(EntryKind::Reducer);
    let token = match token {
        Some(token) => Some(token.to_owned()),
        None if kind.takes_caller() => Some(new_token(&agent, base)?),
        None => None,
    };
    let route = call_route(kind).unwrap_or("/v1/reducers");
    let url = format!("{base}{route}/{}", encode_segment(function));
    let body = args.to_string();
    let (status, text) = request(&agent, "POST", &url, token.as_deref(), Some(&body))?;
    if (200..300).contains(&status) {
        Ok(Ok(parse::<CallResponse>(&text, "a call's result")?))
    } else {
        Ok(Err(parse::<ErrorBody>(&text, "an error")?.error))
    }
}

/// Obtains a new identity's token.
fn new_token(agent: &Agent, base: &str) -> Result<String> {
    match request(agent, "POST", &format!("{base}/v1/identity"), None, None)? {
        (200, text) => {
            let issued: IdentityResponse = parse(&text, "a new identity")?;
            tracing::info!(identity = %issued.identity, "obtained a new identity");
            Ok(issued.token)
        }
        (status, text) => Err(Failure::module(format!(
            "{base} issued no identity ({status}): {text}"
        ))),
    }
}

/// The answer `text`, which should be `what`: the server's failure if it is not.
fn parse<T: DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|error| {
        Failure::module(format!(
            "the server's answer is not {what} ({error}): {text}"
        ))
    })
}

/// Sends one request and returns the status and the body.
fn request(
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

/// `name` as one path segment: unreserved characters as they are, others percent-encoded.
fn encode_segment(name: &str) -> String {
    name.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_encoded_as_one_segment() {
        assert_eq!(encode_segment("set_name"), "set_name");
        assert_eq!(encode_segment("a/b c"), "a%2Fb%20c");
    }

    #[test]
    fn answers_that_are_not_the_protocols_are_the_servers_failure() {
        assert!(parse::<CallResponse>(r#"{"duration_us":1,"status":"committed"}"#, "x").is_ok());
        assert!(parse::<CallResponse>("<html>", "a call's result").is_err());
    }
}
