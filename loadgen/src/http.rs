//! One keep-alive HTTP/1.1 connection to a `wasmod serve`, as one identity: what the transfer
//! workload's HTTP callers call through, and what the failover run writes and reads through
//! (its writers' calls, the nodes' `/health`, their tables' pages).
//!
//! hyper's bare connection rather than a client with a pool: each caller is one connection,
//! as a benchmark's caller should be, and a caller that loses it (a killed node) opens the
//! next one itself, to whichever node it chooses.

use anyhow::{bail, Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// One keep-alive connection to a server, calling as one identity once it has one.
pub struct Http {
    send: SendRequest<Full<Bytes>>,
    authority: String,
    authorization: String,
}

impl Http {
    /// Connects to `address` (`host:port`), as no identity yet.
    pub async fn connect(address: &str) -> Result<Self> {
        let stream = TcpStream::connect(address)
            .await
            .with_context(|| format!("connecting to {address}"))?;
        stream.set_nodelay(true).context("TCP_NODELAY")?;
        let (send, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .context("the HTTP handshake")?;
        tokio::spawn(connection);
        Ok(Self {
            send,
            authority: address.to_owned(),
            authorization: String::new(),
        })
    }

    /// Connects to `address` and obtains a new identity (`POST /v1/identity`) to call as.
    pub async fn open(address: &str) -> Result<Self> {
        let mut http = Self::connect(address).await?;
        let token = http.new_identity().await?;
        http.call_as(&token);
        Ok(http)
    }

    /// A new identity's token from the server (`POST /v1/identity`).
    pub async fn new_identity(&mut self) -> Result<String> {
        let (status, body) = self.post("/v1/identity", Bytes::new()).await?;
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
        Ok(token.to_owned())
    }

    /// Calls as the identity of `token` from here on.
    pub fn call_as(&mut self, token: &str) {
        self.authorization = format!("Bearer {token}");
    }

    /// Posts `body` (JSON) to `path`; the answer's status and body.
    pub async fn post(&mut self, path: &str, body: Bytes) -> Result<(StatusCode, Bytes)> {
        self.request(Method::POST, path, body).await
    }

    /// Gets `path`; the answer's status and body.
    pub async fn get(&mut self, path: &str) -> Result<(StatusCode, Bytes)> {
        self.request(Method::GET, path, Bytes::new()).await
    }

    async fn request(
        &mut self,
        method: Method,
        path: &str,
        body: Bytes,
    ) -> Result<(StatusCode, Bytes)> {
        let mut request = Request::builder()
            .method(&method)
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
            .with_context(|| format!("{method} {path}"))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .context("the answer's body")?;
        Ok((status, body.to_bytes()))
    }
}
