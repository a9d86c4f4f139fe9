//! A node's place in a replicated deployment: commits held by a quorum of a consensus engine
//! before they are acknowledged, standbys that keep a full copy, and a lease that decides which
//! node is the primary (`docs/high-availability.md`).
//!
//! wasmod implements no consensus of its own. The engine is NATS JetStream, in a cluster of
//! three servers or more ([`engine`]): a stream with one message per commit batch is the
//! replicated log ([`log`]), and a key in a key-value bucket, which expires unless its holder
//! renews it, is the lease ([`lease`]). Every node of a deployment starts as a standby and
//! follows the log ([`role`]): it applies each batch to its tables and its own commit log, at
//! the same offsets as the primary. When the lease is free, one standby takes it (the engine
//! lets exactly one create the key), applies the log to its end, appends a marker of its term
//! (which fences the primary before it: that one's next append names a last sequence that is no
//! longer the last, and the engine refuses it), and only then takes writes. From then on each
//! batch of its commits is appended, and acknowledged once the engine holds it.
//!
//! A primary that loses its lease (it could not renew it in time, or another node took it)
//! or whose append is refused fails its commit log: the calls it had in flight are answered
//! with an error, never acknowledged, and it is [`Deposed`]. Its transport then starts it again
//! as a standby from its local log, which never holds a batch the engine refused
//! (`wasmod_host::datastore::durability::Replica`).

mod engine;
mod lease;
mod log;
mod role;
mod status;

pub use role::Deposed;
pub(crate) use role::{Cluster, NodeParts};
pub(crate) use status::SharedStatus;
pub use status::{ClusterRole, ClusterStatus, PrimaryNode, StandbyProgress};

use std::time::Duration;

/// How a node takes part in a replicated deployment.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClusterSettings {
    /// The engine's servers, as NATS URLs, comma-separated: `nats://10.0.0.1:4222,nats://…`.
    pub servers: String,
    /// The deployment's name, the same on each of its nodes: it names the stream of commits
    /// (`WASMOD_<name>`) and the lease's bucket (`wasmod_<name>`). Letters, digits, `-` and
    /// `_`.
    pub name: String,
    /// This node's name, unique in the deployment: the lease says which node holds it.
    /// Letters, digits, `-` and `_`.
    pub node: String,
    /// Where clients reach this node (`http://host:port`), published with the lease so that a
    /// standby can tell clients where the primary is. Empty if unknown.
    pub advertise: String,
    /// How long the lease lasts unless its holder renews it: at most this long passes between
    /// the loss of a primary and a standby taking its place (then it applies what is left of
    /// the log). Renewed four times as often. Default: 3 s.
    pub lease: Duration,
    /// How many servers of the engine hold each commit and the lease: acknowledged once a
    /// majority of them do. Default: 3.
    pub replicas: usize,
    /// How long one exchange with the engine may take before it is tried again. Default: 2 s.
    pub request_timeout: Duration,
}

impl ClusterSettings {
    /// The deployment `name` on the engine at `servers`, this node being `node`, with the
    /// default lease and replicas.
    pub fn new(
        servers: impl Into<String>,
        name: impl Into<String>,
        node: impl Into<String>,
    ) -> Self {
        Self {
            servers: servers.into(),
            name: name.into(),
            node: node.into(),
            advertise: String::new(),
            lease: Duration::from_secs(3),
            replicas: 3,
            request_timeout: Duration::from_secs(2),
        }
    }

    /// The engine's servers, parsed; why not.
    pub(crate) fn server_addresses(&self) -> Result<Vec<async_nats::ServerAddr>, String> {
        let addresses = self
            .servers
            .split(',')
            .map(|url| {
                url.trim()
                    .parse::<async_nats::ServerAddr>()
                    .map_err(|error| {
                        format!("`{}` is not a NATS server's URL: {error}", url.trim())
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(addresses)
    }

    /// Whether the settings name servers, a stream and a bucket, and a lease long enough;
    /// why not.
    pub(crate) fn check(&self) -> Result<(), String> {
        self.server_addresses()?;
        let valid = |text: &str| {
            !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        if !valid(&self.name) {
            return Err(format!(
                "`{}` cannot name a deployment: use letters, digits, `-` and `_`",
                self.name
            ));
        }
        if self.node.is_empty() {
            return Err("a node of a deployment needs a name".into());
        }
        if !valid(&self.node) {
            return Err(format!(
                "`{}` cannot name a node: use letters, digits, `-` and `_`",
                self.node
            ));
        }
        if self.lease < Duration::from_millis(500) {
            return Err(format!(
                "a lease of {:?} is shorter than an exchange with the engine may take: give it \
                 at least 500 ms",
                self.lease
            ));
        }
        Ok(())
    }
}

/// Appends the deployment's metrics to `text`, in Prometheus's text format: the node's role,
/// term, lag and promotions, and on the primary each standby's lag.
pub(crate) fn render(status: &ClusterStatus, text: &mut String) {
    use std::fmt::Write;
    let _ = writeln!(
        text,
        "# HELP wasmod_cluster_role The part this node plays in its replicated deployment (1 for the current one).\n\
         # TYPE wasmod_cluster_role gauge"
    );
    for role in [
        ClusterRole::Starting,
        ClusterRole::Standby,
        ClusterRole::Primary,
        ClusterRole::Deposed,
    ] {
        let current = u8::from(status.role == role);
        let _ = writeln!(
            text,
            "wasmod_cluster_role{{role=\"{}\"}} {current}",
            role.as_str()
        );
    }
    let _ = writeln!(
        text,
        "# HELP wasmod_cluster_term The last term (lease number) this node saw begin.\n\
         # TYPE wasmod_cluster_term gauge\n\
         wasmod_cluster_term {}\n\
         # HELP wasmod_cluster_lag_commits How many commits of the replicated log this node has not applied.\n\
         # TYPE wasmod_cluster_lag_commits gauge\n\
         wasmod_cluster_lag_commits {}\n\
         # HELP wasmod_cluster_promotions_total How many times this node became the primary.\n\
         # TYPE wasmod_cluster_promotions_total counter\n\
         wasmod_cluster_promotions_total {}",
        status.term,
        status.lag(),
        status.promotions
    );
    if !status.standbys.is_empty() {
        let _ = writeln!(
            text,
            "# HELP wasmod_cluster_standby_lag_commits On the primary, how many commits each standby had not applied when it last said.\n\
             # TYPE wasmod_cluster_standby_lag_commits gauge"
        );
        for standby in &status.standbys {
            let _ = writeln!(
                text,
                "wasmod_cluster_standby_lag_commits{{standby=\"{}\"}} {}",
                standby.node,
                status.applied.saturating_sub(standby.applied)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_name_servers_a_deployment_a_node_and_a_long_enough_lease() {
        let good = ClusterSettings::new(
            "nats://127.0.0.1:4222, nats://127.0.0.1:4223",
            "chat-1",
            "a",
        );
        assert_eq!(good.check(), Ok(()));
        assert_eq!(good.server_addresses().map(|servers| servers.len()), Ok(2));

        let unnamed = ClusterSettings::new("nats://127.0.0.1:4222", "chat.1", "a");
        assert!(unnamed
            .check()
            .unwrap_err()
            .contains("cannot name a deployment"));
        let anonymous = ClusterSettings::new("nats://127.0.0.1:4222", "chat", "");
        assert!(anonymous.check().unwrap_err().contains("needs a name"));
        let dotted = ClusterSettings::new("nats://127.0.0.1:4222", "chat", "a.b");
        assert!(dotted.check().unwrap_err().contains("cannot name a node"));
        let garbled = ClusterSettings::new("nats://127.0.0.1:port", "chat", "a");
        assert!(garbled
            .check()
            .unwrap_err()
            .contains("is not a NATS server's URL"));
        let mut hasty = ClusterSettings::new("nats://127.0.0.1:4222", "chat", "a");
        hasty.lease = std::time::Duration::from_millis(100);
        assert!(hasty.check().unwrap_err().contains("at least 500 ms"));
    }

    #[test]
    fn the_metrics_say_the_role_the_term_and_each_standbys_lag() {
        let status = ClusterStatus {
            node: "a".into(),
            role: ClusterRole::Primary,
            term: 7,
            applied: 120,
            log_end: 120,
            promotions: 2,
            standbys: vec![StandbyProgress {
                node: "b".into(),
                applied: 117,
            }],
            ..ClusterStatus::default()
        };
        let mut text = String::new();
        render(&status, &mut text);
        for line in [
            "wasmod_cluster_role{role=\"primary\"} 1",
            "wasmod_cluster_role{role=\"standby\"} 0",
            "wasmod_cluster_term 7",
            "wasmod_cluster_lag_commits 0",
            "wasmod_cluster_promotions_total 2",
            "wasmod_cluster_standby_lag_commits{standby=\"b\"} 3",
        ] {
            assert!(
                text.lines().any(|got| got == line),
                "no `{line}` in:\n{text}"
            );
        }
    }
}
