//! Calls of the module's HTTP handlers: routed in the build serving now, then the same steps
//! as a call by name (slot, queue, durability, metrics), answered with the module's
//! [`Response`].

use super::{Caller, Pipeline};
use crate::invocation::failure;
use crate::runner::RoutedRequest;
use crate::slots::Requester;
use std::future::Future;
use wasmod_abi::encoding::from_slice;
use wasmod_abi::http::{unrouted, Method, Request, Response};
use wasmod_abi::route::Routed;
use wasmod_host::Outcome;
use wasmod_protocol::errors::{ApiError, ErrorCode};

/// How a call of an HTTP handler ended: the module's response, and the offset of the last
/// commit when it did (what a client waits for to read the handler's writes).
#[derive(Debug)]
pub struct HttpAnswer {
    /// What the handler answered.
    pub response: Response,
    /// The offset of the last commit when the handler ended.
    pub offset: u64,
}

/// Why a request reached no handler, or failed there.
#[derive(Debug)]
pub struct HttpRefusal {
    /// The error: `no_such_route`, `method_not_allowed`, or any a call can fail with.
    pub error: ApiError,
    /// For `method_not_allowed`, the methods the path takes (an HTTP `Allow` header's).
    pub allow: Vec<Method>,
}

impl From<ApiError> for HttpRefusal {
    fn from(error: ApiError) -> Self {
        Self {
            error,
            allow: Vec::new(),
        }
    }
}

impl Pipeline {
    /// Routes `request` in the build serving now and, once a handler is found, awaits its
    /// `body` (a request refused for its route is answered without its body being read),
    /// takes a slot of `caller`'s, and runs the handler where it belongs, with `caller`'s
    /// claims (a handler has no identity, but reads those); counted as `http`.
    pub(crate) async fn call_http(
        &self,
        mut request: Request,
        body: impl Future<Output = Result<Vec<u8>, ApiError>>,
        caller: Caller,
    ) -> Result<HttpAnswer, HttpRefusal> {
        let in_flight = self.metrics.start("http");
        let mut allow = Vec::new();
        let work = async {
            let build = self.build.get();
            let handler = match build.http_routes.route(request.method, &request.uri) {
                Routed::Handler(handler) => handler,
                Routed::WrongMethod(methods) => {
                    let message = unrouted(request.method, &request.uri, &methods);
                    allow = methods;
                    return Err(ApiError::new(ErrorCode::MethodNotAllowed, message));
                }
                Routed::NotFound => {
                    let message = unrouted(request.method, &request.uri, &[]);
                    return Err(ApiError::new(ErrorCode::NoSuchRoute, message));
                }
            };
            let number = build.number;
            drop(build);
            request.body = body.await?;
            let slot = self
                .slots
                .acquire(Requester::of(caller.identity, caller.source))?;
            let routed = RoutedRequest {
                build: number,
                handler,
                request,
                claims: caller.claims.clone(),
            };
            let done = self.runner.http(routed, slot).await?;
            Ok(HttpAnswer {
                response: response(done.value)?,
                offset: done.offset,
            })
        };
        let answer = in_flight.finish(work.await);
        answer.map_err(|error| HttpRefusal { error, allow })
    }
}

/// The module's response, decoded from what the handler returned.
fn response(outcome: Outcome) -> Result<Response, ApiError> {
    let bytes = match outcome {
        Outcome::Returned { bytes, .. } => bytes,
        failed => return Err(failure(failed)),
    };
    from_slice(&bytes).map_err(|error| {
        ApiError::new(
            ErrorCode::ModuleError,
            format!("the module's response does not decode: {error}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_abi::encoding::to_vec;
    use wasmod_abi::Errno;

    #[test]
    fn a_handler_s_outcome_is_its_response_or_the_error_it_ended_in() {
        let returned = |bytes| Outcome::Returned {
            bytes,
            duration: Default::default(),
        };
        let sent = Response::new(201).with_body(vec![0xff, 0]);
        let decoded = response(returned(to_vec(&sent))).expect("decodes");
        assert_eq!((decoded.status, decoded.body), (201, vec![0xff, 0]));
        let garbage = response(returned(vec![1])).expect_err("not a response");
        assert_eq!(garbage.code, ErrorCode::ModuleError);
        let failed = Outcome::Failed {
            code: Errno::ENTRY_FAILED.code() as i16,
            message: "the body is not UTF-8".into(),
        };
        assert_eq!(
            response(failed).expect_err("failed").code,
            ErrorCode::EntryFailed
        );
    }
}
