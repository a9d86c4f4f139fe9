//! Values that calls return, on their way to the client: bounded in size, and converted off
//! the async runtime's threads when large.
//!
//! A view's or a procedure's value arrives as the bytes the module encoded, which can be as
//! large as the module's memory (256 MiB by default). Its JSON is larger by a factor the
//! encoding bounds (about 1 for text, up to 6 for control characters, 4 for byte arrays), and
//! converting it takes time in proportion. Converted inline, on the thread that polls the
//! request, one large value holds that thread (and every request it serves) for as long, and
//! several at once multiply the memory (issue 15). So here:
//!
//! - **Size.** A value whose encoding is larger than [`NodeConfig::max_result_bytes`] is not
//!   converted: the call answers `result_too_large` (500), naming the sizes. The call has run:
//!   a procedure's commits stay, as the message says. Over HTTP and over the WebSocket alike,
//!   in either of its encodings.
//! - **Threads.** A value of more than [`INLINE_RESULT_BYTES`] is converted on the blocking pool, at
//!   most [`CONVERSIONS`] at once; the others wait their turn (the call has run and its answer
//!   is owed, so it is not refused). Smaller values, the common case, are converted in place.
//!
//! [`NodeConfig::max_result_bytes`]: crate::NodeConfig::max_result_bytes

use crate::invocation::Invocation;
use crate::worker::Done;
use std::sync::Arc;
use tokio::sync::Semaphore;
use wasmod_host::Outcome;
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_protocol::http::CallResponse;

/// Values of at most this many bytes are converted on the thread that has them.
pub const INLINE_RESULT_BYTES: usize = 64 << 10;

/// The most conversions of larger values on the blocking pool at once.
pub const CONVERSIONS: usize = 2;

/// The bound on returned values, and the turns of their conversions; cheap to clone (clones
/// share the turns).
#[derive(Clone, Debug)]
pub struct Results {
    max_bytes: usize,
    turns: Arc<Semaphore>,
}

impl Results {
    /// Values of at most `max_bytes` encoded bytes are converted; larger ones are refused.
    pub fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            turns: Arc::new(Semaphore::new(CONVERSIONS)),
        }
    }

    /// The JSON answer to a call of `invocation` that ended as `done` says: its commit, its
    /// value as JSON, or the error it ended in; with the offset to wait for.
    pub async fn answer(
        &self,
        invocation: &Invocation,
        done: Done<Outcome>,
    ) -> Result<CallResponse, ApiError> {
        let Outcome::Returned { bytes, duration } = done.value else {
            return invocation.answer(done.value, done.offset);
        };
        let called = invocation.clone();
        let convert = move |bytes: Vec<u8>| {
            let value = called.value(&bytes)?;
            Ok(CallResponse::returned(value, done.offset, duration))
        };
        self.convert(invocation, bytes, convert).await
    }

    /// `convert` applied to the value `bytes` that the call of `invocation` returned: refused
    /// past the bound, on the blocking pool (in turn) when large, in place otherwise.
    pub async fn convert<T: Send + 'static>(
        &self,
        invocation: &Invocation,
        bytes: Vec<u8>,
        convert: impl FnOnce(Vec<u8>) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        if bytes.len() > self.max_bytes {
            return Err(self.too_large(invocation, bytes.len()));
        }
        if bytes.len() <= INLINE_RESULT_BYTES {
            return convert(bytes);
        }
        let _turn =
            self.turns.acquire().await.map_err(|_| {
                ApiError::new(ErrorCode::ShuttingDown, "the server is shutting down")
            })?;
        tokio::task::spawn_blocking(move || convert(bytes))
            .await
            .map_err(|error| {
                ApiError::new(
                    ErrorCode::Internal,
                    format!("converting a returned value failed: {error}"),
                )
            })?
    }

    /// The refusal of a value of `bytes` bytes returned by `invocation`.
    fn too_large(&self, invocation: &Invocation, bytes: usize) -> ApiError {
        let committed = if invocation.writes() {
            " (its commits stay)"
        } else {
            ""
        };
        ApiError::new(
            ErrorCode::ResultTooLarge,
            format!(
                "{} `{}` returned {bytes} bytes, more than the {} an answer may carry \
                 (`--max-result-bytes`); the call ran{committed}. Return less: page the \
                 rows with arguments, or read a table with GET /v1/tables/{{name}}",
                invocation.kind().as_str(),
                invocation.name(),
                self.max_bytes,
            ),
        )
    }
}
