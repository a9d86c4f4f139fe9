//! What a node of a replicated deployment reports about its place in it: for `/health`,
//! `/metrics`, the admin console and `wasmod status`.

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

/// The part a node plays in its deployment now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClusterRole {
    /// Not connected to the engine yet.
    #[default]
    Starting,
    /// Following the replicated log; reads only.
    Standby,
    /// Holding the lease; takes writes.
    Primary,
    /// Was the primary and lost its place: takes nothing until it starts again as a standby.
    Deposed,
}

impl ClusterRole {
    /// The role as `/metrics` and `/health` name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Standby => "standby",
            Self::Primary => "primary",
            Self::Deposed => "deposed",
        }
    }
}

/// A node's view of its deployment ([`NodeHandle::cluster`](crate::NodeHandle::cluster)).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ClusterStatus {
    /// This node's name.
    pub node: String,
    /// Its part now.
    pub role: ClusterRole,
    /// The node that holds the lease, as this node last saw it (itself when it is the
    /// primary), and where clients reach it.
    pub primary: Option<PrimaryNode>,
    /// The last term this node saw begin: the lease's number, which grows with each new
    /// primary.
    pub term: u64,
    /// The offset of the next commit this node holds (on a standby, the next it needs).
    pub applied: u64,
    /// The offset after the replicated log's last commit, as this node last read it.
    pub log_end: u64,
    /// How many times this node became the primary.
    pub promotions: u64,
    /// On the primary, its standbys and the offset each had applied when it last said.
    pub standbys: Vec<StandbyProgress>,
    /// Why the node is not serving its part as it should, if it is not (the engine cannot be
    /// reached, the node was deposed).
    pub problem: Option<String>,
}

impl ClusterStatus {
    /// How many commits this node is behind the replicated log's end.
    pub fn lag(&self) -> u64 {
        self.log_end.saturating_sub(self.applied)
    }
}

/// The holder of a deployment's lease, as the lease's value says.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrimaryNode {
    /// Its name.
    pub node: String,
    /// Where its clients reach it (empty if it did not say).
    pub url: String,
}

/// How far one standby has applied the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StandbyProgress {
    /// The standby's name.
    pub node: String,
    /// The offset of the next commit it needs.
    pub applied: u64,
}

/// The status, shared between the role task that writes it and the node's readers.
#[derive(Debug, Default)]
pub(crate) struct SharedStatus(Mutex<ClusterStatus>);

impl SharedStatus {
    /// A status for node `node`, starting.
    pub fn new(node: &str) -> Self {
        Self(Mutex::new(ClusterStatus {
            node: node.to_owned(),
            ..ClusterStatus::default()
        }))
    }

    /// A copy of the status now.
    pub fn get(&self) -> ClusterStatus {
        self.0.lock().clone()
    }

    /// Changes the status with `change`.
    pub fn update(&self, change: impl FnOnce(&mut ClusterStatus)) {
        change(&mut self.0.lock());
    }
}
