//! `wasmod call` against a server: the client side of the API.
//!
//! The server's description (`GET /v1/module`) says what kind of entry point the name is, and
//! so which route to post to; a name it does not list is posted as a reducer, and the server's
//! own `no_such_entry` answer is printed. A call that runs as an identity and has no token
//! (`--token`, `WASMOD_TOKEN`) first obtains a new identity (`POST /v1/identity`).

use super::Answer;
use crate::failure::{Context, Failure, Result};
use serde_json::Value;
use std::time::Duration;
use ureq::Agent;
use wasmod_abi::EntryKind;
use wasmod_server::entry::{self, CALLED_BY_NAME};

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
    let description = match request(&agent, "GET", &format!("{base}/v1/module"), None, None)? {
        (200, json) => json,
        (status, json) => {
            return Err(Failure::usage(format!(
                "{base} did not describe its module ({status}): {json}"
            )))
        }
    };
    let kind = kind_of(&description, function).unwrap_or(EntryKind::Reducer);
    let token = match token {
        Some(token) => Some(token.to_owned()),
        None if kind.takes_caller() => Some(new_token(&agent, base)?),
        None => None,
    };
    let route = entry::route(kind).unwrap_or("/v1/reducers");
    let url = format!("{base}{route}/{}", encode_segment(function));
    let body = args.to_string();
    let (status, json) = request(&agent, "POST", &url, token.as_deref(), Some(&body))?;
    Ok(if (200..300).contains(&status) {
        Answer::Success(json)
    } else {
        Answer::Error(json)
    })
}

/// The kind of the entry point `name` in a served description.
fn kind_of(description: &Value, name: &str) -> Option<EntryKind> {
    CALLED_BY_NAME.into_iter().find(|kind| {
        description[kind.list()]
            .as_array()
            .is_some_and(|list| list.iter().any(|entry| entry["name"] == name))
    })
}

/// Obtains a new identity's token.
fn new_token(agent: &Agent, base: &str) -> Result<String> {
    let (status, json) = request(agent, "POST", &format!("{base}/v1/identity"), None, None)?;
    match json["token"].as_str() {
        Some(token) if status == 200 => {
            tracing::info!(identity = %json["identity"], "obtained a new identity");
            Ok(token.to_owned())
        }
        _ => Err(Failure::module(format!(
            "{base} issued no identity ({status}): {json}"
        ))),
    }
}

/// Sends one request and returns the status and the body as JSON (a body that is not JSON is
/// returned as a JSON string).
fn request(
    agent: &Agent,
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Result<(u16, Value)> {
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
    let json = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok((status, json))
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
    use serde_json::json;

    #[test]
    fn kinds_come_from_the_served_description() {
        let description = json!({
            "reducers": [{"name": "send"}], "procedures": [{"name": "fetch"}],
            "views": [{"name": "mine"}], "anonymous_views": [{"name": "recent"}],
        });
        assert_eq!(kind_of(&description, "send"), Some(EntryKind::Reducer));
        assert_eq!(kind_of(&description, "fetch"), Some(EntryKind::Procedure));
        assert_eq!(kind_of(&description, "mine"), Some(EntryKind::View));
        assert_eq!(
            kind_of(&description, "recent"),
            Some(EntryKind::AnonymousView)
        );
        assert_eq!(kind_of(&description, "nope"), None);
    }

    #[test]
    fn names_are_encoded_as_one_segment() {
        assert_eq!(encode_segment("set_name"), "set_name");
        assert_eq!(encode_segment("a/b c"), "a%2Fb%20c");
    }
}
