//! Whether a client is connected: [`ConnectionState`], and the callbacks that hear of each
//! change.
//!
//! The connection task sets the state as it loses its socket, reconnects, or ends, and runs
//! the callbacks there and then (not queued for a frame tick: the state is about the socket,
//! not the cache), so that a status line changes as the connection does.

use crate::sync::Mutex;

/// Where a client's connection stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionState {
    /// The socket is open.
    Connected,
    /// The socket was lost; the client is connecting again (with its backoff).
    Reconnecting,
    /// The client ended: disconnected by the application, or lost with reconnection off, or
    /// out of attempts.
    Disconnected,
}

impl ConnectionState {
    /// Its name, as the browser's API gives it: `connected`, `reconnecting`, `disconnected`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Connected => "connected",
            Self::Reconnecting => "reconnecting",
            Self::Disconnected => "disconnected",
        }
    }
}

/// A callback of the connection's state.
type StateCallback = Box<dyn FnMut(ConnectionState) + Send>;

/// The connection's state now, and the callbacks of its changes.
pub(crate) struct ConnectionStates {
    inner: Mutex<(ConnectionState, Vec<StateCallback>)>,
}

impl Default for ConnectionStates {
    /// Connected: a client exists once its first connection is open.
    fn default() -> Self {
        Self {
            inner: Mutex::new((ConnectionState::Connected, Vec::new())),
        }
    }
}

impl ConnectionStates {
    /// The state now.
    pub(crate) fn get(&self) -> ConnectionState {
        self.inner.lock().0
    }

    /// Calls `callback` with each change from now on. A callback must not register another
    /// (the registry is locked while they run).
    pub(crate) fn listen(&self, callback: impl FnMut(ConnectionState) + Send + 'static) {
        self.inner.lock().1.push(Box::new(callback));
    }

    /// The state is `state` now: the callbacks hear of it, if it changed.
    pub(crate) fn set(&self, state: ConnectionState) {
        let mut inner = self.inner.lock();
        if inner.0 == state {
            return;
        }
        inner.0 = state;
        for callback in &mut inner.1 {
            callback(state);
        }
    }
}
