//! One budget per call of what a module makes the host hold outside its own memory.
//!
//! A module's linear memory is capped by its transport, but the objects its handles stand for
//! live on the host's side: the rows a scan copied, the bytes of a byte source (its arguments,
//! an outbound HTTP response), what it wrote to a byte sink. A module that opens them in a
//! loop without reading or closing them would make the host hold them without bound (a
//! procedure fetching 8 MB responses and never reading them once took a server to 2.7 GB). So
//! every kind counts against one budget per call: live handles of every kind together are
//! capped (`Limits::max_live_handles`), and so are the bytes they hold together
//! (`Limits::max_held_bytes`). An import that would go past either fails with `TOO_LARGE` and
//! holds nothing more; reading a source or an iterator to its end, or closing it, gives its
//! share back; and the end of the call gives back everything, and the room of handle tables a
//! large call grew.
//!
//! What the host itself makes for a call (its argument source and result sink) counts too, but
//! is never refused: its size is bounded by the caller (a request body's cap).

use super::{Errno, InstanceEnv};

/// How many handles' room each of a call's handle tables keeps for the next call.
pub(crate) const KEPT_HANDLES: usize = 64;

impl InstanceEnv {
    /// Whether the call may open one more handle: `TOO_LARGE` once its live handles of every
    /// kind reach `Limits::max_live_handles`.
    pub(super) fn room_for_handle(&self) -> Result<(), Errno> {
        let live = self.iters.len() + self.sources.len() + self.sinks.len();
        if live >= self.limits.max_live_handles {
            return Err(Errno::TOO_LARGE);
        }
        Ok(())
    }

    /// Counts `bytes` more held by the call's handles, if they fit in
    /// `Limits::max_held_bytes`; `TOO_LARGE` (and nothing counted) if they do not.
    pub(super) fn hold(&mut self, bytes: usize) -> Result<(), Errno> {
        let held = self.held_bytes.saturating_add(bytes);
        if held > self.limits.max_held_bytes {
            return Err(Errno::TOO_LARGE);
        }
        self.held_bytes = held;
        Ok(())
    }

    /// Counts `bytes` more held for what the host made itself, without a check.
    pub(super) fn hold_for_host(&mut self, bytes: usize) {
        self.held_bytes = self.held_bytes.saturating_add(bytes);
    }

    /// Counts `bytes` no longer held.
    pub(super) fn release(&mut self, bytes: usize) {
        self.held_bytes = self.held_bytes.saturating_sub(bytes);
    }

    /// Gives back everything the call's handles held, and the room of tables that grew past
    /// [`KEPT_HANDLES`]; the handles themselves are dropped by the caller.
    pub(super) fn release_all(&mut self) {
        self.held_bytes = 0;
        self.iters.shrink_to(KEPT_HANDLES);
        self.sources.shrink_to(KEPT_HANDLES);
        self.sinks.shrink_to(KEPT_HANDLES);
    }
}
