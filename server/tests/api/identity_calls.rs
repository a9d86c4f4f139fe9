//! An identity's calls in progress are bounded over every socket it holds, as over HTTP
//! (`--max-calls-per-identity`): several sockets do not multiply its share of the module's
//! queue.

use crate::limits::{allow, slow_server};
use crate::live::{call, Client, Connect, Encoding, Live};
use crate::support::{identity, router, server};
use serde_json::json;
use std::time::Duration;
use wasmod_server::ServerConfig;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_identity_over_several_sockets_has_at_most_its_calls_in_progress() {
    let (url, accepted) = slow_server(3, Duration::from_millis(1500));
    let mut config = ServerConfig::default();
    config.node.max_calls_per_identity = 2;
    let live = Live::serve(server(config, allow(&url))).await;
    let (_, token) = identity(&router()).await;
    let mut sockets = Vec::new();
    for _ in 0..3 {
        let how = Connect {
            bearer: Some(&token),
            ..Connect::default()
        };
        let mut client = Client::connect(&live, Encoding::Json, how).await;
        client.hello().await;
        sockets.push(client);
    }
    // One call runs (it waits for the slow server), one waits for the module: two in all.
    sockets[0]
        .send(call("CallProcedure", 1, "fetch_motd", &[&url]))
        .await;
    tokio::task::spawn_blocking(move || accepted.recv_timeout(Duration::from_secs(10)))
        .await
        .expect("joined")
        .expect("the first call reached the slow server");
    // Two more, over two other sockets: the server reads the sockets in no set order, so
    // either may be the one that waits for the module (the second in progress) and the other
    // the third, refused at once without running.
    sockets[1]
        .send(call("CallProcedure", 2, "fetch_motd", &[&url]))
        .await;
    sockets[2]
        .send(call("CallProcedure", 3, "fetch_motd", &[&url]))
        .await;
    let [first, one, two] = &mut sockets[..] else {
        unreachable!("three sockets")
    };
    let (refused, waiting) = tokio::time::timeout(Duration::from_millis(1000), async {
        tokio::select! {
            answer = one.recv_kind("CallResult") => (answer, two),
            answer = two.recv_kind("CallResult") => (answer, one),
        }
    })
    .await
    .expect("refused before the calls in progress end");
    assert_eq!(
        refused["result"]["err"]["code"], "too_many_calls",
        "{refused}"
    );
    for socket in [first, waiting] {
        let answer = socket.recv_kind("CallResult").await;
        assert_eq!(answer["result"]["ok"], json!({"ok": "motd"}), "{answer}");
    }
    // The slots are free again.
    sockets[2]
        .send(call("CallProcedure", 4, "fetch_motd", &[&url]))
        .await;
    let answer = sockets[2].recv_kind("CallResult").await;
    assert_eq!(answer["result"]["ok"], json!({"ok": "motd"}), "{answer}");
    live.stop().await;
}
