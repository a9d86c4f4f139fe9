//! The engine: a connection to the NATS servers, the deployment's stream of commits and its
//! lease bucket, made on first use with the deployment's replicas.
//!
//! The stream keeps every message (no limits): a standby that starts empty reads the whole log.
//! Its duplicate window lets an append be sent again after a timeout, under the same message
//! id, without being stored twice.

use super::ClusterSettings;
use async_nats::jetstream::{self, kv, stream};
use std::time::Duration;

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
    /// The lease's bucket.
    pub bucket: kv::Store,
    /// The largest message the servers take, headers included.
    pub max_payload: usize,
}

impl Engine {
    /// Connects to the servers `settings` names and makes the stream and the bucket if they
    /// are missing. Fails with a message that names what could not be done.
    pub async fn connect(settings: &ClusterSettings) -> Result<Self, String> {
        settings.check()?;
        let client = async_nats::ConnectOptions::new()
            .name(format!("wasmod {} {}", settings.name, settings.node))
            .request_timeout(Some(settings.request_timeout))
            .connection_timeout(settings.request_timeout)
            .retry_on_initial_connect()
            .connect(settings.servers.as_str())
            .await
            .map_err(|error| {
                format!("connecting to the engine at {}: {error}", settings.servers)
            })?;
        let max_payload = client.server_info().max_payload;
        let jetstream = jetstream::new(client);
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
        let bucket = match jetstream.get_key_value(bucket_name(settings)).await {
            Ok(bucket) => bucket,
            Err(_) => jetstream
                .create_key_value(kv::Config {
                    bucket: bucket_name(settings),
                    history: 1,
                    max_age: settings.lease,
                    num_replicas: settings.replicas,
                    storage: stream::StorageType::File,
                    ..Default::default()
                })
                .await
                .map_err(|error| format!("making the lease's bucket: {error}"))?,
        };
        Ok(Self {
            jetstream,
            stream,
            subject,
            bucket,
            max_payload,
        })
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

/// `wasmod_<name>`: the bucket of the deployment's lease.
fn bucket_name(settings: &ClusterSettings) -> String {
    format!("wasmod_{}", settings.name)
}
