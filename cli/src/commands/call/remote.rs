//! `wasmod call` against a server: the client side of the API.
//!
//! The server's description (`GET /v1/module`) says what kind of entry point the name is, and
//! so which route to post to; a name it does not list is posted as a reducer, and the server's
//! own `no_such_entry` answer is printed. A call that runs as an identity and has no token
//! (`--token`, `WASMOD_TOKEN`) first obtains a new identity (`POST /v1/identity`), whose token
//! goes to stderr, so that the identity can call again. Every
//! answer is read as the protocol's typed message; one that is not is the server's failure.

use super::Answer;
use crate::api::{self, parse, request};
use crate::failure::{Failure, Result};
use crate::output;
use serde_json::Value;
use ureq::Agent;
use wasmod_abi::EntryKind;
use wasmod_protocol::http::{call_route, CallResponse, IdentityResponse};
use wasmod_protocol::ErrorBody;

/// Calls `function` with `args` on the server at `base`.
pub fn call(base: &str, function: &str, args: &Value, token: Option<&str>) -> Result<Answer> {
    let base = base.trim_end_matches('/');
    let agent = api::agent(base);
    let description = api::describe(&agent, base)?;
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
            output::new_identity(&issued.identity, &issued.token);
            Ok(issued.token)
        }
        (status, text) => Err(Failure::module(format!(
            "{base} issued no identity ({status}): {text}"
        ))),
    }
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
}
