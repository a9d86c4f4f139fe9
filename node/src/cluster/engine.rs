//! The engine: a connection to the NATS servers, and the deployment's two streams, made on
//! first use with the deployment's replicas: its commits (`WASMOD_<name>`), and its leases
//! (`WASMOD_<name>_LEASES`: the primary's lease and the standbys' progress, one message a
//! subject, each gone after a lease unless written again).
//!
//! The stream of commits keeps every message (no limits): a standby that starts empty reads
//! the whole log. Its duplicate window lets an append be sent again after a timeout, under the
//! same message id, without being stored twice.

use super::ClusterSettings;
use async_nats::jetstream::{self, stream};
use std::time::Duration;

/// NATS's default largest message, for a server that does not say.
const DEFAULT_MAX_PAYLOAD: usize = 1 << 20;

/// How long the engine remembers a message id, to recognise an append sent again.
const DUPLICATE_WINDOW: Duration = Duration::from_secs(120);

/// The deployment's side of the engine.
#[derive(Clone, Debug)]
pub(super) struct Engine {
    /// JetStream over the connection.
    pub jetstream: jetstream::Context,
    /// The stream of commit batches.
    pub stream: stream::Stream,
    /// The subject the stream's messages are published on.
    pub subject: String,
    /// The stream of leases and progress.
    pub leases: stream::Stream,
    /// The prefix of its subjects (`wasmod.<name>.lease.`).
    lease_prefix: String,
    /// The largest message the servers take, headers included.
    pub max_payload: usize,
}

impl Engine {
    /// Connects to the servers `settings` names and makes the stream and the bucket if they
    /// are missing. Fails with a message that names what could not be done.
    pub async fn connect(settings: &ClusterSettings) -> Result<Self, String> {
        let servers = settings.server_addresses()?;
        let client = async_nats::ConnectOptions::new()
            .name(format!("wasmod {} {}", settings.name, settings.node))
            .request_timeout(Some(settings.request_timeout))
            .connection_timeout(settings.request_timeout)
            .connect(servers)
            .await
            .map_err(|error| {
                format!("connecting to the engine at {}: {error}", settings.servers)
            })?;
        // Known once connected (hence no `retry_on_initial_connect`, whose client answers
        // before it is: a `max_payload` of 0 sent every commit as a message of its own); NATS's
        // default if a server does not say.
        let max_payload = match client.server_info().max_payload {
            0 => DEFAULT_MAX_PAYLOAD,
            said => said,
        };
        // The context's own timeout bounds appends' acknowledgements too, which the
        // connection's request timeout does not (they would wait 5 s).
        let jetstream = jetstream::ContextBuilder::new()
            .timeout(settings.request_timeout)
            .build(client);
        let subject = format!("wasmod.{}.log", settings.name);
        let stream = jetstream
            .get_or_create_stream(stream::Config {
                name: format!("WASMOD_{}", settings.name),
                subjects: vec![subject.clone()],
                num_replicas: settings.replicas,
                storage: stream::StorageType::File,
                duplicate_window: DUPLICATE_WINDOW,
                ..Default::default()
            })
            .await
            .map_err(|error| format!("making the stream of commits: {error}"))?;
        let lease_prefix = format!("wasmod.{}.lease.", settings.name);
        let leases = jetstream
            .get_or_create_stream(stream::Config {
                name: format!("WASMOD_{}_LEASES", settings.name),
                subjects: vec![format!("{lease_prefix}>")],
                num_replicas: settings.replicas,
                storage: stream::StorageType::File,
                max_messages_per_subject: 1,
                max_age: settings.lease,
                ..Default::default()
            })
            .await
            .map_err(|error| format!("making the stream of leases: {error}"))?;
        Ok(Self {
            jetstream,
            stream,
            subject,
            leases,
            lease_prefix,
            max_payload,
        })
    }

    /// The subject `name` of the lease stream.
    pub fn lease_subject(&self, name: &str) -> String {
        format!("{}{name}", self.lease_prefix)
    }

    /// The sequence of the stream's last message (0 while it is empty).
    pub async fn last_sequence(&self) -> Result<u64, String> {
        self.stream
            .get_info()
            .await
            .map(|info| info.state.last_sequence)
            .map_err(|error| format!("reading the stream's end: {error}"))
    }
}
