//! Reducer calls over a WebSocket with the commit log synced in groups and the wait for it
//! left to the server, as `wasmod serve` runs them: pipelined calls are answered in the order
//! they came, each once, and never before the log has their commits.

use crate::live::{call_reducer, Client, Connect, Encoding, Live};
use crate::support::deferred_durable_server;
use wasmod_server::ServerConfig;

#[tokio::test]
async fn pipelined_calls_are_answered_in_order_and_only_once_durable() {
    let dir = tempfile::tempdir().expect("a directory");
    // Sixteen in flight on one connection, all of one identity.
    let mut config = ServerConfig::default();
    config.node.max_calls_per_identity = 16;
    let live = Live::serve(deferred_durable_server(config, dir.path())).await;
    let mut client = Client::connect(&live, Encoding::Binary, Connect::default()).await;
    client.hello().await;
    let mut last = None;
    for round in 0..4u32 {
        let request_ids = round * 16..(round + 1) * 16;
        for request_id in request_ids.clone() {
            let text = format!("message {request_id}");
            client
                .send(call_reducer(request_id, "send", &[&text]))
                .await;
        }
        for request_id in request_ids {
            let answer = client.recv_kind("TransactionUpdate").await;
            assert_eq!(answer["request_id"], request_id, "{answer}");
            assert_eq!(answer["status"], "Committed", "{answer}");
            let offset = answer["offset"].as_u64().expect("an offset");
            let log = live.database.log().expect("a commit log");
            assert!(
                log.durable_transactions() > offset,
                "commit {offset} was answered before the log had it"
            );
            assert!(last < Some(offset), "offsets in commit order: {answer}");
            last = Some(offset);
        }
    }
    live.stop().await;
}
