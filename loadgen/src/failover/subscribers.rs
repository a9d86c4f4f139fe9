//! The subscribers of the failover run: Rust clients of the deployment, subscribed to
//! `SELECT * FROM message`, each keeping the rows its callbacks are given (its own map, not
//! the client's cache, which would hide a row inserted twice under one key).
//!
//! What a subscriber is sent must be exactly the history of the table, across every failover:
//! a commit reaches subscribers only once the engine holds it, and the next primary applies
//! the whole stream before it writes, so a client that resumes there from its last offset
//! (`resumed: true`) gets the rest and nothing twice. An insert of a row the subscriber holds,
//! a delete of one it does not hold, or a message that changes (the quickstart never updates
//! one: a change means two histories gave one id two rows) raises the alarm at once.

use super::Alarm;
use crate::sample::TABLE;
use anyhow::{Context, Result};
use futures_util::future::try_join_all;
use quickstart_client::bindings::DbConnection;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The rows of the `message` table: id → text.
pub type Rows = BTreeMap<u64, String>;

/// A subscribed client and the rows it was given.
pub struct Subscriber {
    /// Held, not read: the connection ends with the client's last clone.
    _connection: DbConnection,
    rows: Arc<Mutex<Rows>>,
}

impl Subscriber {
    /// The rows it holds now.
    pub fn rows(&self) -> Rows {
        self.rows
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

/// Connects `count` subscribers to the deployment at `urls`, each with its rows applied.
pub async fn subscribe(urls: &[String], count: usize, alarm: &Alarm) -> Result<Vec<Subscriber>> {
    try_join_all((0..count).map(|index| one(urls, index, alarm.clone()))).await
}

async fn one(urls: &[String], index: usize, alarm: Alarm) -> Result<Subscriber> {
    let connection = super::connect(urls).await?;
    let rows = Arc::new(Mutex::new(Rows::new()));
    let messages = connection.db().message();
    let (held, raise) = (rows.clone(), alarm.clone());
    messages.on_insert(move |row| {
        let mut held = held.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(before) = held.insert(row.id, row.text.clone()) {
            raise.raise(format!(
                "subscriber {index} was sent message {} ({:?}) while it held it ({before:?})",
                row.id, row.text
            ));
        }
    });
    let (held, raise) = (rows.clone(), alarm.clone());
    messages.on_delete(move |row| {
        let mut held = held.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if held.remove(&row.id).is_none() {
            raise.raise(format!(
                "subscriber {index} was sent the delete of message {} ({:?}), which it did not \
                 hold",
                row.id, row.text
            ));
        }
    });
    messages.on_update(move |old, new| {
        alarm.raise(format!(
            "subscriber {index} was sent message {} changed from {:?} to {:?}",
            old.id, old.text, new.text
        ));
    });
    let subscription = connection
        .client()
        .subscription()
        .subscribe([format!("SELECT * FROM {TABLE}")]);
    tokio::time::timeout(super::PATIENCE, subscription.applied())
        .await
        .context("a subscriber's rows")?
        .with_context(|| format!("subscriber {index}"))?;
    Ok(Subscriber {
        _connection: connection,
        rows,
    })
}
