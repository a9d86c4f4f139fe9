//! Reading the cache by a column's value: `find_by` a unique column, `filter_by` any, and a
//! column the row type does not have.

use crate::support::{memory_server, Live, Message, User};
use wasmod_client::Error;

#[tokio::test]
async fn rows_are_found_and_filtered_by_a_column_value() {
    let live = Live::serve(memory_server()).await;
    let client = live.client().await;
    let other = live.client().await;
    let subscription = client
        .subscription()
        .subscribe(["SELECT * FROM message", "SELECT * FROM user"]);
    subscription.applied().await.expect("applied");
    for (sender, text) in [(&client, "a"), (&other, "b"), (&client, "c")] {
        sender
            .call_reducer("send", &(text.to_owned(),))
            .await
            .expect("sent");
    }
    client
        .call_reducer("set_name", &("alice".to_owned(),))
        .await
        .expect("named");

    let users = client.table::<User>("user");
    let alice = users.find_by("name", "alice").expect("a lookup");
    assert_eq!(alice.map(|user| user.identity), Some(client.identity()));
    assert_eq!(users.find_by("name", "nobody").expect("a lookup"), None);

    let messages = client.table::<Message>("message");
    let mut mine: Vec<String> = messages
        .filter_by("sender", &client.identity())
        .expect("a filter")
        .into_iter()
        .map(|message| message.text)
        .collect();
    mine.sort();
    assert_eq!(mine, ["a", "c"]);
    let first = messages.find_by("id", &1u64).expect("a lookup");
    assert_eq!(first.map(|message| message.text).as_deref(), Some("a"));

    assert_eq!(
        messages.find_by("colour", "red"),
        Err(Error::NoSuchColumn {
            table: "message".into(),
            column: "colour".into()
        })
    );
}
