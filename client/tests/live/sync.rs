//! Reading one's own writes: `Client::sync` after a write over HTTP (a reducer, a handler),
//! an offset still to come, and a procedure whose value comes once its writes are cached.

use crate::support::{
    memory_server, memory_server_fetching_from, motd_server, texts, Live, PATIENCE,
};
use std::time::Duration;

const MESSAGES: &str = "SELECT * FROM message";

#[tokio::test]
async fn writes_over_http_are_in_the_cache_once_synced_to_their_offset() {
    let live = Live::serve(memory_server()).await;
    let client = live.client().await;
    let subscription = client.subscription().subscribe([MESSAGES]);
    subscription.applied().await.expect("applied");

    let (answer, _) = live
        .post("/v1/reducers/send", &client.token(), r#"["over http"]"#)
        .await;
    let offset = answer["offset"].as_u64().expect("the commit's offset");
    tokio::time::timeout(PATIENCE, client.sync(offset))
        .await
        .expect("synced in time")
        .expect("synced");
    assert!(texts(&client).contains(&"over http".to_owned()));

    let (_, header) = live
        .post("/v1/http/messages", &client.token(), "from a handler")
        .await;
    let offset = header.expect("X-Wasmod-Offset");
    client.sync(offset).await.expect("synced");
    assert!(texts(&client).contains(&"from a handler".to_owned()));

    // Already reached: resolves without asking.
    client.sync(offset).await.expect("synced again");

    // Still to come: resolves once another client's commits get there (it connects first:
    // opening a connection commits too).
    let other = live.client().await;
    let sent = |text: &str| other.call_reducer("send", &(text.to_owned(),));
    let base = sent("zero").await.expect("sent").offset;
    let later = client.sync(base + 2);
    let mut later = std::pin::pin!(later);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut later)
            .await
            .is_err(),
        "offset {} is not committed yet",
        base + 2
    );
    assert_eq!(sent("one").await.expect("sent").offset, base + 1);
    assert_eq!(sent("two").await.expect("sent").offset, base + 2);
    tokio::time::timeout(PATIENCE, later)
        .await
        .expect("synced in time")
        .expect("synced");
    assert!(texts(&client).contains(&"two".to_owned()));
}

#[tokio::test]
async fn a_procedures_value_comes_once_its_writes_are_in_the_cache() {
    let host = motd_server("the message of the day");
    let live = Live::serve(memory_server_fetching_from(&host)).await;
    let client = live.client().await;
    let subscription = client.subscription().subscribe([MESSAGES]);
    subscription.applied().await.expect("applied");
    for round in 0..5 {
        let url = format!("http://{host}/motd/{round}");
        let value: Result<String, String> = client
            .call_procedure("fetch_motd", &(url,))
            .await
            .expect("called");
        assert_eq!(value.as_deref(), Ok("the message of the day"));
        let cached = texts(&client)
            .iter()
            .filter(|text| *text == "the message of the day")
            .count();
        assert_eq!(cached, round + 1, "the procedure's insert is cached");
    }
}
