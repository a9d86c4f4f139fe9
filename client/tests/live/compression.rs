//! Each compression a client can choose, end to end: the initial rows, live updates and
//! calls whose messages are large enough for the server to compress (its threshold is 1 KiB),
//! and a restarted server, which the client asks for the same compression again.

use crate::support::{durable_server, eventually, log, texts, Live, Message};
use wasmod_client::Compression;

/// A message text of the quickstart's largest size (1,000 characters), numbered.
fn long_text(number: usize) -> String {
    format!(
        "{number:04} {}",
        "the dragon is near the castle ".repeat(40)
    )[..1000]
        .to_owned()
}

#[tokio::test]
async fn every_compression_carries_rows_updates_calls_and_survives_a_restart() {
    for compression in Compression::ALL {
        let dir = tempfile::tempdir().expect("a directory");
        let live = Live::serve(durable_server(dir.path())).await;
        let addr = live.addr;
        let client = live
            .builder()
            .await
            .compression(compression)
            .connect()
            .await
            .expect("connected");
        let mut expected: Vec<String> = (0..5).map(long_text).collect();
        for text in &expected {
            client
                .call_reducer("send", &(text.clone(),))
                .await
                .expect("sent");
        }
        let inserted = log();
        let seen = inserted.clone();
        client
            .table::<Message>("message")
            .on_insert(move |message: &Message| seen.lock().push(message.text.clone()));
        let subscription = client.subscription().subscribe(["SELECT * FROM message"]);
        subscription.applied().await.expect("applied");
        assert_eq!(
            texts(&client),
            expected,
            "{compression:?}: the initial rows"
        );

        expected.push(long_text(5));
        client
            .call_reducer("send", &(long_text(5),))
            .await
            .expect("sent");
        assert_eq!(texts(&client), expected, "{compression:?}: an update");
        let recent: Vec<Message> = client.call_view("recent", &()).await.expect("a view");
        let mut recent: Vec<String> = recent.into_iter().map(|message| message.text).collect();
        recent.sort();
        assert_eq!(recent, expected, "{compression:?}: a call's value");

        live.stop().await;
        let live = Live::serve_at(durable_server(dir.path()), addr).await;
        eventually("the client reconnects", || client.is_running()).await;
        let mut sent = None;
        for _ in 0..100 {
            match client.call_reducer("send", &(long_text(6),)).await {
                Ok(outcome) => {
                    sent = Some(outcome);
                    break;
                }
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
            }
        }
        assert!(sent.is_some(), "{compression:?}: no call went through");
        expected.push(long_text(6));
        eventually("the restarted server's update arrives", || {
            texts(&client) == expected
        })
        .await;
        let mut inserted = inserted.lock().clone();
        inserted.sort();
        assert_eq!(
            inserted, expected,
            "{compression:?}: each row inserted once"
        );
        client.disconnect().await;
        live.stop().await;
    }
}
