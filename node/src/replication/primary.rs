//! An edge's line to its primary over HTTP: the snapshot it bootstraps from
//! ([`SNAPSHOT_PATH`]) and the calls it forwards ([`CALLS_PATH`]), both with the edge token.
//!
//! One pooled HTTP/1 client serves both; every exchange has a deadline, so a primary that
//! stops answering fails the calls waiting on it (`busy`, retry later) instead of holding them.
//!
//! The primary may be one of several servers: the nodes of a replicated deployment
//! (`docs/high-availability.md`), any of which may be the primary now. An exchange goes to the
//! server that answered last; one a standby refuses (`not_primary`: nothing happened) goes on
//! to the next at once, and so does a snapshot (a read) that got no answer. A forwarded call
//! that got no answer is not sent again (it may have run): it fails `busy`, and the next
//! exchange starts at the next server.

use super::forward::{ForwardedCall, ForwardedOutcome, CALLS_PATH};
use super::{OFFSET_HEADER, SNAPSHOT_PATH};
use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use wasmod_host::datastore::{durability, TxData};
use wasmod_host::Outcome;
use wasmod_protocol::errors::{ApiError, ErrorBody, ErrorCode};

/// How long an idle connection to the primary is kept for the next exchange: under the
/// primary's `header_read_timeout` (15 s by default), after which the primary closes it.
const IDLE_CONNECTIONS: Duration = Duration::from_secs(5);

/// Every row of the primary's tables at one offset.
#[derive(Debug)]
pub struct Snapshot {
    /// The offset of the first commit after the rows.
    pub offset: u64,
    /// Every row of every table, as one transaction inserting them.
    pub rows: TxData,
}

/// Why an exchange with the primary failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum PrimaryError {
    /// No answer: the primary cannot be reached, or did not answer in time.
    Unreachable(String),
    /// The primary answered with an error.
    Refused(ApiError),
    /// The answer is not what the edge API says.
    Malformed(String),
}

impl fmt::Display for PrimaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreachable(reason) => write!(f, "the primary cannot be reached: {reason}"),
            Self::Refused(error) => write!(f, "the primary refused: {error}"),
            Self::Malformed(reason) => write!(f, "the primary's answer is malformed: {reason}"),
        }
    }
}

impl std::error::Error for PrimaryError {}

impl From<PrimaryError> for ApiError {
    /// The primary's own error as it is; `busy` (retry later) when it cannot be reached, and
    /// `internal` for an answer that does not decode.
    fn from(error: PrimaryError) -> Self {
        match error {
            PrimaryError::Refused(error) => error,
            PrimaryError::Unreachable(_) => ApiError::new(ErrorCode::Busy, error.to_string()),
            PrimaryError::Malformed(_) => ApiError::new(ErrorCode::Internal, error.to_string()),
        }
    }
}

/// The primary an edge follows.
#[derive(Debug)]
pub struct Primary {
    /// The servers that may be the primary, in order.
    bases: Vec<String>,
    /// The one to try first: the last that answered.
    current: AtomicUsize,
    authorization: HeaderValue,
    timeout: Duration,
    client: Client<HttpConnector, Full<Bytes>>,
}

impl Primary {
    /// The primary at `bases` (`http://HOST:PORT`; or several, comma-separated: a replicated
    /// deployment's nodes), reached with `edge_token`; each exchange may take `timeout`. Fails
    /// if a base is not an `http` URL with a host, or the token cannot be a header.
    pub fn new(bases: &str, edge_token: &str, timeout: Duration) -> io::Result<Self> {
        let invalid = |reason: String| io::Error::new(io::ErrorKind::InvalidInput, reason);
        let bases = bases
            .split(',')
            .map(|base| check_base(base.trim().trim_end_matches('/')).map_err(invalid))
            .collect::<io::Result<Vec<String>>>()?;
        let authorization = HeaderValue::from_str(&format!("Bearer {edge_token}"))
            .map_err(|_| invalid("the edge token cannot be sent in a header".to_owned()))?;
        Ok(Self {
            bases,
            current: AtomicUsize::new(0),
            authorization,
            timeout,
            // Idle connections are dropped well before the primary closes them (its
            // `header_read_timeout`, 15 s by default), so that a forwarded call is never sent
            // on a connection the primary is closing.
            client: Client::builder(TokioExecutor::new())
                .pool_idle_timeout(IDLE_CONNECTIONS)
                .build_http(),
        })
    }

    /// The URL of the server tried first: the last that answered.
    pub fn url(&self) -> &str {
        &self.bases[self.current.load(Ordering::Relaxed) % self.bases.len()]
    }

    /// Every row of the primary's tables at one offset, once durable there.
    pub async fn snapshot(&self) -> Result<Snapshot, PrimaryError> {
        let (status, offset, body) = self
            .exchange(Method::GET, SNAPSHOT_PATH, None, Resend::Always)
            .await?;
        if status != StatusCode::OK {
            return Err(refused(status, &body));
        }
        let (offset_in_body, rows) = durability::decode_changes(&body)
            .map_err(|reason| PrimaryError::Malformed(format!("the snapshot: {reason}")))?;
        if offset.is_some_and(|offset| offset != offset_in_body) {
            return Err(PrimaryError::Malformed(format!(
                "the snapshot's header says offset {offset:?}, its body {offset_in_body}"
            )));
        }
        Ok(Snapshot {
            offset: offset_in_body,
            rows,
        })
    }

    /// Runs `call` on the primary and returns how it ended, its commits durable there (`None`
    /// for a lifecycle reducer the module does not have), and the primary's last commit when
    /// it ended (its offset header): every commit the call made is at or before it.
    pub async fn forward(
        &self,
        call: &ForwardedCall,
    ) -> Result<(Option<Outcome>, u64), PrimaryError> {
        let body = serde_json::to_vec(call)
            .map_err(|error| PrimaryError::Malformed(format!("the call: {error}")))?;
        let (status, offset, answer) = self
            .exchange(Method::POST, CALLS_PATH, Some(body.into()), Resend::Refused)
            .await?;
        if status != StatusCode::OK {
            return Err(refused(status, &answer));
        }
        let offset = offset.ok_or_else(|| {
            PrimaryError::Malformed(format!("a call's answer without its {OFFSET_HEADER}"))
        })?;
        let outcome: Option<ForwardedOutcome> = serde_json::from_slice(&answer)
            .map_err(|error| PrimaryError::Malformed(format!("a call's outcome: {error}")))?;
        let outcome = outcome
            .map(ForwardedOutcome::into_outcome)
            .transpose()
            .map_err(PrimaryError::Malformed)?;
        Ok((outcome, offset))
    }

    /// One request to `path`, to the server that answered last, then to the next ones as
    /// `resend` allows: the status, the offset header if any, and the body of the first
    /// answer that is not a standby's refusal (or of the last server's).
    async fn exchange(
        &self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
        resend: Resend,
    ) -> Result<(StatusCode, Option<u64>, Bytes), PrimaryError> {
        let first = self.current.load(Ordering::Relaxed);
        let mut answer = Err(PrimaryError::Unreachable("no server".into()));
        for attempt in 0..self.bases.len() {
            let index = (first + attempt) % self.bases.len();
            let base = &self.bases[index];
            answer = self
                .exchange_with(base, method.clone(), path, body.clone())
                .await;
            let go_on = match &answer {
                Ok((status, _, body)) => is_not_primary(*status, body),
                Err(_) => resend == Resend::Always,
            };
            if !go_on {
                let next = if answer.is_ok() { index } else { index + 1 };
                self.current.store(next, Ordering::Relaxed);
                return answer;
            }
        }
        self.current.store(first + 1, Ordering::Relaxed);
        answer
    }

    /// One request to `path` on the server at `base`, within the deadline.
    async fn exchange_with(
        &self,
        base: &str,
        method: Method,
        path: &str,
        body: Option<Bytes>,
    ) -> Result<(StatusCode, Option<u64>, Bytes), PrimaryError> {
        let unreachable = |reason: String| PrimaryError::Unreachable(reason);
        let request = Request::builder()
            .method(method)
            .uri(format!("{base}{path}"))
            .header(AUTHORIZATION, self.authorization.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(body.unwrap_or_default()))
            .map_err(|error| unreachable(error.to_string()))?;
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|error| unreachable(error.to_string()))?;
            let status = response.status();
            let offset = response
                .headers()
                .get(OFFSET_HEADER)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.parse().ok());
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|error| unreachable(error.to_string()))?
                .to_bytes();
            Ok((status, offset, body))
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| unreachable(format!("no answer within {:?}", self.timeout)))?
    }
}

/// Which exchanges go on to the next server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resend {
    /// A read: any failure goes on.
    Always,
    /// A write: only a standby's refusal, which says nothing happened.
    Refused,
}

/// Whether an answer is a standby's refusal (`not_primary`).
fn is_not_primary(status: StatusCode, body: &[u8]) -> bool {
    status == StatusCode::SERVICE_UNAVAILABLE
        && matches!(
            serde_json::from_slice::<ErrorBody>(body),
            Ok(ErrorBody { error }) if error.code == ErrorCode::NotPrimary
        )
}

/// `base` if it is an `http://HOST:PORT` URL without a path; why not.
fn check_base(base: &str) -> Result<String, String> {
    let uri: Uri = base
        .parse()
        .map_err(|error| format!("the primary's URL `{base}` is invalid: {error}"))?;
    if uri.scheme_str() != Some("http") || uri.host().is_none() {
        return Err(format!(
            "the primary's URL `{base}` must be http://HOST:PORT (put TLS in front of both \
             sides with a proxy)"
        ));
    }
    if uri.path() != "/" && !uri.path().is_empty() {
        return Err(format!("the primary's URL `{base}` must not have a path"));
    }
    Ok(base.to_owned())
}

/// The primary's error answer with `status`.
fn refused(status: StatusCode, body: &[u8]) -> PrimaryError {
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(ErrorBody { error }) => PrimaryError::Refused(error),
        Err(_) => PrimaryError::Malformed(format!(
            "status {status}: {}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        )),
    }
}
