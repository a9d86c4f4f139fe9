//! The broadcast that serializes once and the compression of binary frames, over real
//! loopback sockets: clients with the same subscription get byte-identical frames (and a
//! client with another subscription its own), every compression decodes to the same messages,
//! frames under the threshold are not compressed, and bad `compression` values are refused
//! before the upgrade.

use crate::live::{call_reducer, subscribe, Client, Connect, Encoding, Live};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use wasmod_node::socket::COMPRESSION_THRESHOLD;
use wasmod_protocol::ws::{BinaryServerMessage, Compression, ServerMessage};
use wasmod_server::ServerConfig;

/// A binary client of `live` that chose `compression`, subscribed to `queries` as query set
/// `query_set_id`, its initial rows taken (and returned as their raw frame).
async fn subscribed(
    live: &Live,
    compression: Compression,
    query_set_id: u32,
    queries: &[&str],
) -> (Client, Vec<u8>) {
    let query = format!("?compression={}", compression.name());
    let how = Connect {
        query: &query,
        ..Connect::default()
    };
    let mut client = Client::connect(live, Encoding::Binary, how).await;
    client.hello().await;
    client.send(subscribe(query_set_id, queries)).await;
    loop {
        let frame = client.binary_frame().await;
        let message = BinaryServerMessage::from_bytes(&frame).expect("a message");
        if matches!(message, ServerMessage::SubscribeApplied { .. }) {
            return (client, frame);
        }
    }
}

/// A JSON client, to call `send` with.
async fn sender(live: &Live) -> Client {
    let mut client = Client::connect(live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    client
}

/// Calls `send` with `text` over `sender` and waits for its own update.
async fn send(sender: &mut Client, request_id: u32, text: &str) {
    sender.send(call_reducer(request_id, "send", &[text])).await;
    let own = sender.recv_kind("TransactionUpdate").await;
    assert_eq!(own["status"], "Committed", "{own}");
}

/// The tag a frame should have: `compression`'s if its message (the frame `plain` without
/// its compression byte) is at least the threshold long, none otherwise.
fn expected_tag(plain: &[u8], compression: Compression) -> u8 {
    if plain.len() > COMPRESSION_THRESHOLD {
        compression.tag()
    } else {
        Compression::None.tag()
    }
}

/// The message in `frame`, without the offset of a `SubscribeApplied` (clients that
/// subscribe one after the other see the tables at different offsets, since each one's
/// connection commits).
fn comparable(frame: &[u8]) -> BinaryServerMessage {
    match BinaryServerMessage::from_bytes(frame).expect("a message") {
        ServerMessage::SubscribeApplied {
            query_set_id,
            tables,
            deletes,
            resumed,
            ..
        } => ServerMessage::SubscribeApplied {
            query_set_id,
            offset: 0,
            tables,
            deletes,
            resumed,
        },
        message => message,
    }
}

#[tokio::test]
async fn every_compression_decodes_to_the_same_messages_and_small_frames_stay_plain() {
    let live = Live::start(ServerConfig::default()).await;
    let mut sender = sender(&live).await;
    let long = "a message long enough to be compressed, said again and again; ".repeat(15);
    let long = &long[..900];
    for n in 0..4 {
        send(&mut sender, n, long).await;
    }
    let mut clients = Vec::new();
    let mut initial = Vec::new();
    for compression in Compression::ALL {
        let (client, frame) = subscribed(&live, compression, 1, &["SELECT * FROM message"]).await;
        clients.push((compression, client));
        initial.push(frame);
    }
    let mut frames = vec![initial];
    for (n, text) in [(10, long), (11, "hi")] {
        send(&mut sender, n, text).await;
        let mut update = Vec::new();
        for (_, client) in &mut clients {
            update.push(client.update_frame().await);
        }
        frames.push(update);
    }
    for (message, frames) in frames.iter().enumerate() {
        let plain = &frames[0];
        assert_eq!(plain[0], Compression::None.tag());
        let decoded = comparable(plain);
        for (frame, compression) in frames.iter().zip(Compression::ALL) {
            assert_eq!(
                frame[0],
                expected_tag(plain, compression),
                "message {message} ({} bytes) in {compression:?}",
                plain.len()
            );
            let same = comparable(frame) == decoded;
            assert!(same, "message {message} differs in {compression:?}");
            if frame[0] != Compression::None.tag() {
                assert!(frame.len() < plain.len() / 2, "compressed: {}", frame.len());
            }
        }
    }
    let sizes: Vec<usize> = frames.iter().map(|frames| frames[0].len()).collect();
    assert!(
        sizes[0] > 3 * COMPRESSION_THRESHOLD,
        "{sizes:?}: initial rows compress"
    );
    assert!(sizes[2] < COMPRESSION_THRESHOLD, "{sizes:?}: `hi` does not");
    live.stop().await;
}

#[tokio::test]
async fn clients_with_the_same_subscription_receive_byte_identical_frames() {
    let live = Live::start(ServerConfig::default()).await;
    let mut sender = sender(&live).await;
    let all = ["SELECT * FROM message"];
    let (mut first, _) = subscribed(&live, Compression::None, 1, &all).await;
    let (mut second, _) = subscribed(&live, Compression::None, 1, &all).await;
    let (mut zipped, _) = subscribed(&live, Compression::Gzip, 1, &all).await;
    let (mut zipped_too, _) = subscribed(&live, Compression::Gzip, 1, &all).await;
    let (mut other_set, _) = subscribed(&live, Compression::None, 2, &all).await;
    let two = ["SELECT * FROM message", "SELECT * FROM user"];
    let (mut more_queries, _) = subscribed(&live, Compression::None, 1, &two).await;
    for (n, text) in [(1, "short"), (2, &"long and repetitive ".repeat(50)[..])] {
        send(&mut sender, n, text).await;
        let frame = first.update_frame().await;
        assert_eq!(second.update_frame().await, frame, "the same subscription");
        let zipped_frame = zipped.update_frame().await;
        assert_eq!(zipped_too.update_frame().await, zipped_frame);
        let other = other_set.update_frame().await;
        assert_ne!(other, frame, "another query set id: another frame");
        let more = more_queries.update_frame().await;
        let (decoded, more) = (
            BinaryServerMessage::from_bytes(&frame).expect("a message"),
            BinaryServerMessage::from_bytes(&more).expect("a message"),
        );
        assert_eq!(more, decoded, "a commit of one table changes one query");
        let ServerMessage::TransactionUpdate(update) =
            BinaryServerMessage::from_bytes(&other).expect("a message")
        else {
            panic!("an update");
        };
        assert_eq!(update.changes[0].query_set_id, 2);
    }
    live.stop().await;
}

#[tokio::test]
async fn a_bad_compression_is_refused_before_the_upgrade() {
    let live = Live::start(ServerConfig::default()).await;
    for (query, protocol, words) in [
        (
            "?compression=zstd",
            "v1.bin.wasmod",
            "unknown compression `zstd`",
        ),
        ("?compression=", "v1.bin.wasmod", "unknown compression ``"),
        (
            "?compression=gzip",
            "v1.json.wasmod",
            "needs the binary protocol",
        ),
    ] {
        let mut request = live.url(query).into_client_request().expect("a request");
        let headers = request.headers_mut();
        headers.insert("Sec-WebSocket-Protocol", protocol.parse().expect("header"));
        let refused = tokio_tungstenite::connect_async(request)
            .await
            .expect_err("refused");
        let tokio_tungstenite::tungstenite::Error::Http(response) = refused else {
            panic!("an HTTP refusal: {refused}");
        };
        assert_eq!(response.status(), 400);
        let body = String::from_utf8_lossy(response.body().as_deref().unwrap_or_default());
        assert!(
            body.contains("bad_request") && body.contains(words),
            "{body}"
        );
    }
    let how = Connect {
        query: "?compression=none",
        ..Connect::default()
    };
    let mut json = Client::connect(&live, Encoding::Json, how).await;
    json.hello().await;
    live.stop().await;
}
