//! Subscriptions as the application holds them: [`SubscriptionBuilder`] to set the callbacks
//! and subscribe, [`SubscriptionHandle`] to wait for the rows and to unsubscribe.
//!
//! The connection task owns each query set's state and reports it through a `watch` channel,
//! so a handle can be awaited from any task and the state survives reconnections (the task
//! subscribes the query set again; the handle does not change).

use crate::client::{Client, Command};
use crate::error::Error;
use tokio::sync::watch;

/// Called once, when a query set's rows are first in the cache.
pub(crate) type AppliedCallback = Box<dyn FnOnce() + Send>;

/// Called when the server refuses a query set, with its message.
pub(crate) type ErrorCallback = Box<dyn FnOnce(&str) + Send>;

/// Where a query set stands.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubscriptionState {
    /// Sent, not answered yet.
    Pending,
    /// Its rows are in the cache, and its updates are being applied.
    Applied,
    /// The server refused it (the message says why); it holds nothing.
    Failed(String),
    /// Unsubscribed, or the client is gone.
    Ended,
}

/// Sets a subscription's callbacks, then subscribes: from [`Client::subscription`].
pub struct SubscriptionBuilder {
    client: Client,
    on_applied: Option<AppliedCallback>,
    on_error: Option<ErrorCallback>,
}

impl SubscriptionBuilder {
    pub(crate) fn new(client: Client) -> Self {
        Self {
            client,
            on_applied: None,
            on_error: None,
        }
    }

    /// Calls `callback` once the query set's rows are in the cache (after their row
    /// callbacks). Restoring the query set after a reconnection does not call it again.
    pub fn on_applied(mut self, callback: impl FnOnce() + Send + 'static) -> Self {
        self.on_applied = Some(Box::new(callback));
        self
    }

    /// Calls `callback` with the server's message if it refuses the query set.
    pub fn on_error(mut self, callback: impl FnOnce(&str) + Send + 'static) -> Self {
        self.on_error = Some(Box::new(callback));
        self
    }

    /// Subscribes to the rows `queries` select, as one query set.
    pub fn subscribe<Q: Into<String>>(
        self,
        queries: impl IntoIterator<Item = Q>,
    ) -> SubscriptionHandle {
        let (state, watch) = watch::channel(SubscriptionState::Pending);
        let queries = queries.into_iter().map(Into::into).collect();
        let query_set_id = self.client.next_query_set_id();
        self.client.command(Command::Subscribe {
            query_set_id,
            queries,
            on_applied: self.on_applied,
            on_error: self.on_error,
            state,
        });
        SubscriptionHandle {
            client: self.client,
            query_set_id,
            watch,
        }
    }
}

/// A subscribed query set.
pub struct SubscriptionHandle {
    client: Client,
    /// The query set's id on the connection.
    query_set_id: u32,
    watch: watch::Receiver<SubscriptionState>,
}

impl SubscriptionHandle {
    /// The query set's id, as the protocol's messages name it.
    pub fn query_set_id(&self) -> u32 {
        self.query_set_id
    }

    /// Where the query set stands now.
    pub fn state(&self) -> SubscriptionState {
        self.watch.borrow().clone()
    }

    /// Waits until the query set's rows are in the cache; an error if the server refused it
    /// ([`Error::Query`]) or the client ended first ([`Error::Disconnected`]).
    pub async fn applied(&self) -> Result<(), Error> {
        let mut watch = self.watch.clone();
        let state = watch
            .wait_for(|state| *state != SubscriptionState::Pending)
            .await
            .map_err(|_| Error::Disconnected)?
            .clone();
        match state {
            SubscriptionState::Applied => Ok(()),
            SubscriptionState::Failed(message) => Err(Error::Query(message)),
            SubscriptionState::Pending | SubscriptionState::Ended => Err(Error::Disconnected),
        }
    }

    /// Ends the query set: its rows leave the cache (with their delete callbacks) unless
    /// another query set holds them.
    pub fn unsubscribe(self) {
        self.client.command(Command::Unsubscribe {
            query_set_id: self.query_set_id,
        });
    }
}
