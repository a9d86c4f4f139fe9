//! Callers over the WebSocket, in either subprotocol: the binary one (the SDK's) or JSON,
//! each a [`wasmod_client::socket`] connection with its calls pipelined up to the window's
//! bound, answers matched to their calls by `request_id` (a `busy` answer may overtake calls
//! queued before it).

use super::calls::{Answer, Draw, Tally, Window, ANSWER_TIMEOUT, REDUCER};
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::Semaphore;
use wasmod_abi::encoding::to_vec;
use wasmod_client::socket::{Binary, Json, Received, Subprotocol};
use wasmod_protocol::ws::{ClientMessage, ServerMessage, UpdateStatus};
use wasmod_protocol::ErrorCode;

/// A subprotocol the callers speak: how a transfer is asked, and how its answer reads.
pub trait Wire: Subprotocol {
    /// The call `request` of a transfer.
    fn transfer(request: u32, args: (u32, u32, i64)) -> Self::ClientMessage;
    /// The call a message answers, and how, if it answers one.
    fn answer(message: &Self::Message) -> Option<(u32, Answer)>;
}

impl Wire for Binary {
    fn transfer(request_id: u32, args: (u32, u32, i64)) -> Self::ClientMessage {
        ClientMessage::CallReducer {
            request_id,
            name: REDUCER.into(),
            args: to_vec(&args),
        }
    }

    fn answer(message: &Self::Message) -> Option<(u32, Answer)> {
        answer(message)
    }
}

impl Wire for Json {
    fn transfer(request_id: u32, (from, to, amount): (u32, u32, i64)) -> Self::ClientMessage {
        ClientMessage::CallReducer {
            request_id,
            name: REDUCER.into(),
            args: serde_json::json!([from, to, amount]),
        }
    }

    fn answer(message: &Self::Message) -> Option<(u32, Answer)> {
        answer(&message.message)
    }
}

/// The call a server message answers, in either subprotocol.
fn answer<R, V>(message: &ServerMessage<R, V>) -> Option<(u32, Answer)> {
    match message {
        ServerMessage::TransactionUpdate(update) => {
            let answer = match &update.status {
                UpdateStatus::Committed => Answer::Committed,
                UpdateStatus::Failed { message } if message.contains("insufficient funds") => {
                    Answer::Refused
                }
                other => Answer::Error(format!("{other:?}")),
            };
            Some((update.request_id?, answer))
        }
        ServerMessage::CallResult {
            request_id,
            result: Err(error),
            ..
        } if error.code == ErrorCode::Busy => Some((*request_id, Answer::Busy)),
        ServerMessage::CallResult {
            request_id, result, ..
        } => Some((
            *request_id,
            Answer::Error(format!("{:?}", result.as_ref().err())),
        )),
        _ => None,
    }
}

/// Calls on one socket at `url` until the window closes, then waits for every answer.
pub async fn call<P: Wire>(url: &str, mut draw: Draw, window: Window) -> Result<Tally>
where
    P::Message: Send + 'static,
{
    let connection = crate::client::connect_as::<P>(url).await?;
    let (mut sender, mut receiver) = connection.split();
    let sent_at: Arc<Mutex<HashMap<u32, Instant>>> = Arc::default();
    let tally: Arc<Mutex<Tally>> = Arc::default();
    let slots = Arc::new(Semaphore::new(window.in_flight));
    let reading = tokio::spawn({
        let (sent_at, tally, slots) = (sent_at.clone(), tally.clone(), slots.clone());
        async move {
            loop {
                let message = match receiver.next().await? {
                    Received::Message(message) => message,
                    Received::Closed(closed) => bail!("the caller's socket: {closed}"),
                };
                let Some((request, answer)) = P::answer(&message) else {
                    continue;
                };
                let sent = sent_at.lock().expect("not poisoned").remove(&request);
                let Some(sent) = sent else {
                    bail!("an answer to call {request}, which is not in flight");
                };
                tally
                    .lock()
                    .expect("not poisoned")
                    .count(answer, sent.elapsed());
                slots.add_permits(1);
            }
        }
    });
    let stop = window.open().await;
    let mut sent = 0u64;
    while Instant::now() < stop {
        let permit = slots.acquire().await.context("the caller's slots")?;
        permit.forget();
        let request = sent as u32;
        sent_at
            .lock()
            .expect("not poisoned")
            .insert(request, Instant::now());
        sender.send(&P::transfer(request, draw.next())).await?;
        sent += 1;
    }
    let deadline = Instant::now() + ANSWER_TIMEOUT;
    while !sent_at.lock().expect("not poisoned").is_empty() {
        if reading.is_finished() {
            reading.await.context("the caller's reader")??;
            bail!("the caller's reader ended");
        }
        if Instant::now() > deadline {
            bail!("calls unanswered {ANSWER_TIMEOUT:?} after the last was sent");
        }
        tokio::time::sleep(crate::pace::TICK).await;
    }
    reading.abort();
    let mut tally = std::mem::take(&mut *tally.lock().expect("not poisoned"));
    tally.sent = sent;
    Ok(tally)
}
