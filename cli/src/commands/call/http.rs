//! `wasmod call <module> GET /path?query`: one request to a module's HTTP handler, in-process.
//!
//! The request is what the server would pass on for `GET /v1/http/path?query` (the path, the
//! query string, `--body`; no headers), the host routes it as the server's does, and the
//! handler's response is printed as JSON: `{"status", "headers", "body"}`, the body as text,
//! or as `body_hex` if it is not UTF-8. A response of any status is the handler's answer (exit
//! status 0); a call that fails (no handler for the route, a panic, a trap) prints the API's
//! error with exit status 1, as other calls do.
//!
//! A server's handlers are plain HTTP: call them there with any HTTP client
//! (`curl <url>/v1/http/path`).

use super::{is_url, load, on_node, print_answer, Args};
use crate::failure::{Failure, Result};
use serde::Serialize;
use std::path::Path;
use wasmod_abi::http::{Method, Request, Response};

/// A handler's response, as printed.
#[derive(Debug, PartialEq, Eq, Serialize)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body_hex: Option<String>,
}

/// Sends the request `method` on the path in `args` to the module's HTTP handler.
pub fn run(args: &Args, method: Method) -> Result {
    if is_url(&args.target) {
        return Err(Failure::usage(format!(
            "a server's HTTP handlers answer plain HTTP: send the request to {}/v1/http<path> with any HTTP client",
            args.target.trim_end_matches('/')
        )));
    }
    if args.token.is_some() || args.identity.is_some() || args.json.is_some() {
        return Err(Failure::usage(
            "an HTTP handler runs as no identity and takes no JSON arguments: give the path, and --body",
        ));
    }
    let [target] = args.args.as_slice() else {
        return Err(Failure::usage(format!(
            "{} takes one argument, the path: `wasmod call <module> {} /path?query`",
            method.as_str(),
            method.as_str()
        )));
    };
    let mut request = request(method, target, args.body.as_deref())?;
    let loaded = load(Path::new(&args.target), args.data.as_deref())?;
    tracing::info!("calling {} {target} in-process", method.as_str());
    let body = std::mem::take(&mut request.body);
    let answered = on_node(loaded, |node| async move {
        let caller = wasmod_node::Caller::new(None, None);
        node.call_http(request, std::future::ready(Ok(body)), caller)
            .await
            .map_err(|refused| refused.error)
    })?;
    print_answer(answered.map(|answered| answer(answered.response)))
}

/// The request for `target` (a path and its query string).
fn request(method: Method, target: &str, body: Option<&str>) -> Result<Request> {
    if !target.starts_with('/') {
        return Err(Failure::usage(format!(
            "the path `{target}` does not start with `/`"
        )));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut request = Request::new(method, path);
    request.query = query.to_owned();
    request.body = body.unwrap_or_default().as_bytes().to_vec();
    Ok(request)
}

/// The handler's response, as printed.
fn answer(response: Response) -> Answer {
    let (body, body_hex) = match String::from_utf8(response.body) {
        Ok(text) => (Some(text), None),
        Err(error) => (None, Some(hex::encode(error.into_bytes()))),
    };
    Answer {
        status: response.status,
        headers: response.headers,
        body,
        body_hex,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_is_split_into_path_and_query() {
        let posted = request(Method::Post, "/a/b?x=1&y", Some("hi")).expect("a request");
        assert_eq!(posted.uri, "/a/b");
        assert_eq!(posted.query, "x=1&y");
        assert_eq!(posted.body, b"hi");
        assert_eq!(posted.method, Method::Post);
        assert!(request(Method::Get, "a/b", None).is_err());
    }

    #[test]
    fn bodies_that_are_not_utf8_are_printed_as_hex() {
        let text = answer(Response::text("ok"));
        assert_eq!(text.body.as_deref(), Some("ok"));
        assert_eq!(text.body_hex, None);
        let binary = answer(Response::new(201).with_body(vec![0xff, 0]));
        assert_eq!(binary.status, 201);
        assert_eq!(binary.body, None);
        assert_eq!(binary.body_hex.as_deref(), Some("ff00"));
    }
}
