//! `/v1/http/...`: the module's own HTTP handlers.
//!
//! The request is passed through: its method, its path after `/v1/http` (`/` when empty,
//! still percent-encoded as received), its query string, its headers (names in lower case;
//! values that are not UTF-8 are passed lossily) and its body. The module's handler is found by
//! method and route pattern (`/accounts/{name}`) in the module's description, as the host
//! finds it ([`wasmod_abi::route::Routes`]): `no_such_route` (404) if no pattern matches the
//! path, `method_not_allowed` (405, with an `Allow` header naming the methods that do have a
//! handler) if patterns match it for other methods only. Its response is passed back as it is:
//! status, headers and body, except the headers that frame the message (`content-length`,
//! `transfer-encoding`, `connection`, …), which are the server's to set. A status or header the
//! module writes that HTTP cannot carry is the module's error (`module_error`, 500).
//!
//! Handlers do not run as an identity (the ABI gives them none), so no token is needed; one
//! that is sent must still be valid, and the `Authorization` header reaches the module like
//! any other. The claims of a verified OpenID Connect token do too, as the handler's
//! `ctx.claims()`: what a handler knows of who sent the request is those, verified, or the
//! raw header, unverified (a handler should trust the first only). The operator's credentials never do: the operator's cookie is taken out of the
//! `Cookie` header, and an `Authorization` that carries the operator token is dropped
//! ([`crate::operator`]). A request without a token counts against its source address's rate of
//! anonymous calls; every request takes a call slot (its token's identity's, or its
//! address's). The body is read last, once the token and the route are known to be good.
//!
//! Every response the module made carries `X-Wasmod-Offset` ([`OFFSET_HEADER`]): the last
//! commit when the handler ended, which a client waits for on its subscription to read what
//! the handler wrote (`WaitFor` in `docs/protocol.md`); the module's own header of that name is
//! replaced.

use super::extract::{Body, Caller, Source};
use super::Shared;
use crate::error::{ApiError, ErrorCode, HttpError};
use crate::operator::{without_operator_cookie, OperatorToken};
use axum::extract::{FromRequest, Request as HttpRequest, State};
use axum::http::header::{ALLOW, AUTHORIZATION, COOKIE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method as HttpMethod, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use wasmod_abi::http::{Method, Request, Response as ModuleResponse};
use wasmod_node::{HttpAnswer, HttpRefusal};
use wasmod_protocol::http::OFFSET_HEADER;

/// The prefix of the module's routes.
const PREFIX: &str = "/v1/http";

/// Headers the server sets itself; a module's values for them are dropped.
const FRAMING_HEADERS: [&str; 8] = [
    "connection",
    "content-length",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Any method on `/v1/http/{*path}`: the request, without the operator's credentials, to
/// the module's handler its route finds ([`wasmod_node::NodeHandle::call_http`]); the body is
/// read once a handler is found.
pub(crate) async fn forward(
    State(state): Shared,
    method: HttpMethod,
    uri: Uri,
    headers: HeaderMap,
    caller: Result<Caller, HttpError>,
    Source(source): Source,
    body: HttpRequest,
) -> Result<Response, HttpError> {
    if let Ok(Caller { identity: None, .. }) = caller {
        state.anonymous_calls.check(source)?;
    }
    let operator = state.admin.as_ref().map(|admin| &admin.token);
    let request = caller.map_err(ApiError::from).and_then(|caller| {
        let request = request(&method, &uri, &headers, operator)?;
        Ok((request, caller))
    });
    let (request, caller) = match request {
        Ok(request) => request,
        Err(error) => return Ok(HttpError::from(state.node.refused("http", error)).into_response()),
    };
    let body = async {
        let Body(body) = Body::from_request(body, &()).await?;
        Ok(body.to_vec())
    };
    match state
        .node
        .call_http(request, body, caller.node(source))
        .await
    {
        Ok(HttpAnswer { response, offset }) => {
            let mut response = self::response(response)?;
            response
                .headers_mut()
                .insert(HeaderName::from_static(OFFSET_HEADER), offset.into());
            Ok(response)
        }
        Err(HttpRefusal { error, allow }) => {
            let mut refusal = HttpError::from(error).into_response();
            if !allow.is_empty() {
                if let Ok(value) = HeaderValue::from_str(&Method::list(&allow)) {
                    refusal.headers_mut().insert(ALLOW, value);
                }
            }
            Ok(refusal)
        }
    }
}

/// The request as the module receives it, without its body (read once the route is found)
/// and without the credentials of `operator`.
fn request(
    method: &HttpMethod,
    uri: &Uri,
    headers: &HeaderMap,
    operator: Option<&OperatorToken>,
) -> Result<Request, ApiError> {
    let method = Method::parse(method.as_str()).ok_or_else(|| {
        ApiError::new(
            ErrorCode::MethodNotAllowed,
            format!("modules do not answer {method} requests"),
        )
    })?;
    let path = uri.path().strip_prefix(PREFIX).unwrap_or_default();
    let path = if path.is_empty() { "/" } else { path };
    let headers = headers
        .iter()
        .filter_map(|(name, value)| {
            let value = module_header(name, value.as_bytes(), operator)?;
            Some((name.as_str().to_owned(), value))
        })
        .collect();
    Ok(Request {
        method,
        uri: path.to_owned(),
        query: uri.query().unwrap_or_default().to_owned(),
        headers,
        body: Vec::new(),
    })
}

/// The value of the request header `name` as the module receives it (lossily UTF-8), or
/// `None` to drop it: a `Cookie` header loses the operator's cookie, and is dropped if that
/// was all; an `Authorization` with the operator's token is dropped.
fn module_header(
    name: &HeaderName,
    value: &[u8],
    operator: Option<&OperatorToken>,
) -> Option<String> {
    if *name == COOKIE {
        let kept = without_operator_cookie(value)?;
        return Some(String::from_utf8_lossy(&kept).into_owned());
    }
    let operators =
        |token: &str| operator.is_some_and(|operator| operator.matches(token.as_bytes()));
    if *name == AUTHORIZATION && crate::auth::bearer(value).is_ok_and(operators) {
        return None;
    }
    Some(String::from_utf8_lossy(value).into_owned())
}

/// The module's answer as an HTTP response.
fn response(module: ModuleResponse) -> Result<Response, ApiError> {
    let status = StatusCode::from_u16(module.status).map_err(|_| {
        ApiError::new(
            ErrorCode::ModuleError,
            format!("the module answered the invalid status {}", module.status),
        )
    })?;
    let mut headers = HeaderMap::new();
    for (name, value) in &module.headers {
        let invalid = || {
            ApiError::new(
                ErrorCode::ModuleError,
                format!("the module answered an invalid header `{name}`"),
            )
        };
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
        if FRAMING_HEADERS.contains(&name.as_str()) {
            continue;
        }
        let value = HeaderValue::from_str(value).map_err(|_| invalid())?;
        headers.append(name, value);
    }
    Ok((status, headers, module.body).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_keep_method_path_query_and_headers() {
        let mut headers = HeaderMap::new();
        headers.insert("x-thing", HeaderValue::from_static("1"));
        let uri: Uri = "/v1/http/a%20b/c?x=1&y".parse().expect("a uri");
        let request = request(&HttpMethod::PUT, &uri, &headers, None).expect("ok");
        assert_eq!(request.method, Method::Put);
        assert_eq!(request.uri, "/a%20b/c");
        assert_eq!(request.query, "x=1&y");
        assert_eq!(request.headers, [("x-thing".to_owned(), "1".to_owned())]);
        assert!(
            request.body.is_empty(),
            "the body is read after the route is found"
        );
        let root: Uri = "/v1/http".parse().expect("a uri");
        let at_root = super::request(&HttpMethod::GET, &root, &HeaderMap::new(), None);
        assert_eq!(at_root.expect("ok").uri, "/");
        let refused = super::request(&HttpMethod::TRACE, &root, &HeaderMap::new(), None);
        assert_eq!(
            refused.map_err(|e| e.code).err(),
            Some(ErrorCode::MethodNotAllowed)
        );
    }

    #[test]
    fn the_operators_credentials_never_reach_the_module() {
        let operator = OperatorToken::new("operator-token-0123456789").expect("a token");
        let uri: Uri = "/v1/http/page".parse().expect("a uri");
        let headers_of = |pairs: &[(&'static str, &'static str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.append(*name, HeaderValue::from_static(value));
            }
            let request = request(&HttpMethod::GET, &uri, &headers, Some(&operator));
            request.expect("ok").headers
        };
        let pair = |name: &str, value: &str| (name.to_owned(), value.to_owned());
        assert_eq!(
            headers_of(&[
                (
                    "cookie",
                    "theme=dark; wasmod_operator=operator-token-0123456789"
                ),
                ("cookie", "wasmod_operator=operator-token-0123456789"),
                ("authorization", "Bearer operator-token-0123456789"),
                ("x-thing", "1"),
            ]),
            [pair("cookie", "theme=dark"), pair("x-thing", "1")]
        );
        // A client's own credentials pass.
        assert_eq!(
            headers_of(&[
                ("authorization", "Bearer a-client-token"),
                ("cookie", "session=7")
            ]),
            [
                pair("authorization", "Bearer a-client-token"),
                pair("cookie", "session=7")
            ]
        );
    }

    #[test]
    fn module_responses_pass_through_without_framing_headers() {
        let module = ModuleResponse::new(201)
            .with_header("content-type", "application/json")
            .with_header("Content-Length", "999")
            .with_header("x-a", "1")
            .with_header("x-a", "2")
            .with_body("{}");
        let response = response(module).expect("passed through");
        assert_eq!(response.status(), StatusCode::CREATED);
        let headers = response.headers();
        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(headers.get_all("x-a").iter().count(), 2);
        assert!(headers
            .get("content-length")
            .is_none_or(|value| value == "2"));
    }

    #[test]
    fn invalid_module_responses_are_the_modules_errors() {
        let code = |module| response(module).map(|_| ()).map_err(|error| error.code);
        assert_eq!(code(ModuleResponse::new(42)), Err(ErrorCode::ModuleError));
        let bad_header = ModuleResponse::new(200).with_header("bad name", "x");
        assert_eq!(code(bad_header), Err(ErrorCode::ModuleError));
        let bad_value = ModuleResponse::new(200).with_header("x", "a\nb");
        assert_eq!(code(bad_value), Err(ErrorCode::ModuleError));
    }
}
