//! Callers over HTTP/1.1: `POST /v1/reducers/transfer` with the arguments as a JSON array, one
//! keep-alive connection per caller and one call at a time on it (HTTP/1.1 answers in order
//! and the server does not pipeline), each connection as its own identity.

use super::calls::{Answer, Draw, Tally, Window, REDUCER};
use anyhow::{bail, Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use std::time::Instant;
use tokio::net::TcpStream;

/// One keep-alive connection to the server, as one identity.
struct Http {
    send: SendRequest<Full<Bytes>>,
    authority: String,
    authorization: String,
}

impl Http {
    /// Connects to `address` (`host:port`) and obtains an identity (`POST /v1/identity`).
    async fn open(address: &str) -> Result<Self> {
        let stream = TcpStream::connect(address)
            .await
            .with_context(|| format!("connecting to {address}"))?;
        stream.set_nodelay(true).context("TCP_NODELAY")?;
        let (send, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .context("the HTTP handshake")?;
        tokio::spawn(connection);
        let mut http = Self {
            send,
            authority: address.to_owned(),
            authorization: String::new(),
        };
        let (status, body) = http.post("/v1/identity", Bytes::new()).await?;
        if status != StatusCode::OK {
            bail!(
                "POST /v1/identity: {status} {}",
                String::from_utf8_lossy(&body)
            );
        }
        let identity: serde_json::Value =
            serde_json::from_slice(&body).context("the identity's JSON")?;
        let token = identity["token"]
            .as_str()
            .context("no token in the identity")?;
        http.authorization = format!("Bearer {token}");
        Ok(http)
    }

    /// Posts `body` to `path`; the answer's status and body.
    async fn post(&mut self, path: &str, body: Bytes) -> Result<(StatusCode, Bytes)> {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(hyper::header::HOST, &self.authority)
            .header(hyper::header::CONTENT_TYPE, "application/json");
        if !self.authorization.is_empty() {
            request = request.header(hyper::header::AUTHORIZATION, &self.authorization);
        }
        let request = request.body(Full::new(body)).context("a request")?;
        self.send.ready().await.context("the connection")?;
        let response = self
            .send
            .send_request(request)
            .await
            .with_context(|| format!("POST {path}"))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .context("the answer's body")?;
        Ok((status, body.to_bytes()))
    }
}

/// How an answer to `POST /v1/reducers/transfer` reads.
fn answer(status: StatusCode, body: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(body);
    match status {
        StatusCode::OK if text.contains("\"committed\"") => Answer::Committed,
        StatusCode::UNPROCESSABLE_ENTITY if text.contains("insufficient funds") => Answer::Refused,
        StatusCode::SERVICE_UNAVAILABLE if text.contains("\"busy\"") => Answer::Busy,
        _ => Answer::Error(format!("{status} {text}")),
    }
}

/// Calls over one connection to `address` until the window closes.
pub async fn call(address: &str, mut draw: Draw, window: Window) -> Result<Tally> {
    let mut http = Http::open(address).await?;
    let path = format!("/v1/reducers/{REDUCER}");
    let mut tally = Tally::default();
    let stop = window.open().await;
    while Instant::now() < stop {
        let (from, to, amount) = draw.next();
        let body = Bytes::from(format!("[{from},{to},{amount}]"));
        let sent = Instant::now();
        let (status, body) = http.post(&path, body).await?;
        tally.sent += 1;
        tally.count(answer(status, &body), sent.elapsed());
    }
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_by_status_and_body() {
        let committed = br#"{"duration_us":12,"offset":41,"status":"committed"}"#;
        assert_eq!(answer(StatusCode::OK, committed), Answer::Committed);
        let refused = br#"{"code":"entry_failed","message":"insufficient funds"}"#;
        assert_eq!(
            answer(StatusCode::UNPROCESSABLE_ENTITY, refused),
            Answer::Refused
        );
        let busy = br#"{"code":"busy","message":"the module's queue is full"}"#;
        assert_eq!(answer(StatusCode::SERVICE_UNAVAILABLE, busy), Answer::Busy);
        assert!(matches!(
            answer(StatusCode::NOT_FOUND, b"{}"),
            Answer::Error(_)
        ));
    }
}
