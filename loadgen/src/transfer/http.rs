//! Callers over HTTP/1.1: `POST /v1/reducers/transfer` with the arguments as a JSON array, one
//! keep-alive connection per caller and one call at a time on it (HTTP/1.1 answers in order
//! and the server does not pipeline), each connection as its own identity.

use super::calls::{Answer, Draw, Tally, Window, REDUCER};
use crate::http::Http;
use anyhow::Result;
use bytes::Bytes;
use hyper::StatusCode;
use std::time::Instant;

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
