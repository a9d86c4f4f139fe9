//! New builds of the module published under connected clients (`wasmod publish`): a query set
//! the server ends at the swap is subscribed again by the client when it can read the new
//! build's rows, and stays ended when it cannot; the application hears which, and a set whose
//! tables did not change carries on untouched.

use crate::support::{eventually, log, notes_build, notes_server, Live, Log};
use wasmod_client::{
    Backoff, Client, ClientBuilder, NewBuild, SubscriptionHandle, SubscriptionState,
};

/// A row of the notes module's `note` table in builds 1 and `notes_filtered`.
#[derive(Clone, Debug, PartialEq, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Note {
    id: u64,
    text: String,
}

/// A row of `note` in build `notes_v2`, which gained a column.
#[derive(Clone, Debug, PartialEq, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct StarredNote {
    id: u64,
    text: String,
    stars: u32,
}

/// A row of `tag`, the same in every build.
#[derive(Clone, Debug, PartialEq, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Tag {
    name: String,
}

const NOTES: &str = "SELECT * FROM note";
const TAGS: &str = "SELECT * FROM tag";

/// A client of `live` that reconnects quickly, to be given its tables.
fn builder(live: &Live) -> ClientBuilder {
    Client::builder(live.url()).reconnect(Some(Backoff::default()))
}

/// Subscribes `queries`, logging what each new build made of the set; waits for its rows.
async fn subscribe(client: &Client, query: &str) -> (SubscriptionHandle, Log<NewBuild>) {
    let events = log();
    let seen = events.clone();
    let subscription = client
        .subscription()
        .on_new_build(move |event: &NewBuild| seen.lock().push(event.clone()))
        .subscribe([query]);
    subscription.applied().await.expect("applied");
    (subscription, events)
}

async fn call(client: &Client, reducer: &str, text: &str) {
    client
        .call_reducer(reducer, &(text.to_owned(),))
        .await
        .unwrap_or_else(|error| panic!("{reducer}({text}): {error}"));
}

/// The texts of `client`'s cached notes, sorted.
fn texts(client: &Client) -> Vec<String> {
    let mut texts: Vec<String> = client
        .table::<Note>("note")
        .rows()
        .expect("rows decode")
        .into_iter()
        .map(|note| note.text)
        .collect();
    texts.sort();
    texts
}

#[tokio::test]
async fn a_set_a_new_build_ended_is_subscribed_again_when_the_client_reads_its_rows() {
    let live = Live::serve(notes_server()).await;
    let client = builder(&live)
        .keyed_table::<Note>("note", "id")
        .table::<Tag>("tag")
        .connect()
        .await
        .expect("connected");
    for text in ["one", "hidden"] {
        call(&client, "add_note", text).await;
    }
    call(&client, "add_tag", "red").await;
    let (inserted, deleted) = (log(), log());
    let seen = inserted.clone();
    let notes = client.table::<Note>("note");
    notes.on_insert(move |note: &Note| seen.lock().push(note.text.clone()));
    let seen = deleted.clone();
    notes.on_delete(move |note: &Note| seen.lock().push(note.text.clone()));
    let (note_set, note_events) = subscribe(&client, NOTES).await;
    let (_tag_set, tag_events) = subscribe(&client, TAGS).await;
    assert_eq!(texts(&client), ["hidden", "one"]);

    // The same rows, but notes get a visibility filter: the server ends the set over notes.
    live.publish(notes_build("notes_filtered")).await;
    eventually("the set over notes is back", || {
        !note_events.lock().is_empty()
    })
    .await;
    let events = note_events.lock().clone();
    let [NewBuild::Resubscribed { ended }] = events.as_slice() else {
        panic!("one resubscription: {events:?}");
    };
    assert!(ended.contains("visibility filter"), "{ended}");
    assert_eq!(
        texts(&client),
        ["one"],
        "the new build's rows replaced the old"
    );
    assert_eq!(
        *deleted.lock(),
        ["hidden"],
        "only the row the filter hides left"
    );
    assert_eq!(
        *inserted.lock(),
        ["one", "hidden"],
        "the row in both builds was not inserted again"
    );
    assert_eq!(note_set.state(), SubscriptionState::Applied);
    assert!(
        tag_events.lock().is_empty(),
        "the set over tags carried on: {:?}",
        tag_events.lock()
    );

    // Both sets are live: the resubscribed one under the new filter.
    call(&client, "add_note", "two").await;
    call(&client, "add_note", "hidden").await;
    call(&client, "add_tag", "blue").await;
    assert_eq!(texts(&client), ["one", "two"]);
    assert_eq!(client.table::<Tag>("tag").count(), 2);
}

#[tokio::test]
async fn a_set_whose_rows_the_client_cannot_read_in_the_new_build_stays_ended() {
    let live = Live::serve(notes_server()).await;
    // One client reads notes as build 1 has them; the other declares no row type (it reads
    // whatever the server sends).
    let typed = builder(&live)
        .keyed_table::<Note>("note", "id")
        .connect()
        .await
        .expect("connected");
    let untyped = builder(&live).connect().await.expect("connected");
    call(&typed, "add_note", "one").await;
    let deleted = log();
    let seen = deleted.clone();
    typed
        .table::<Note>("note")
        .on_delete(move |note: &Note| seen.lock().push(note.text.clone()));
    let (typed_set, typed_events) = subscribe(&typed, NOTES).await;
    let (untyped_set, untyped_events) = subscribe(&untyped, NOTES).await;

    // Notes gain a column.
    live.publish(notes_build("notes_v2")).await;
    eventually("the typed client hears of the new build", || {
        !typed_events.lock().is_empty()
    })
    .await;
    let events = typed_events.lock().clone();
    let [NewBuild::Ended { ended, reason }] = events.as_slice() else {
        panic!("the set ended: {events:?}");
    };
    assert!(ended.contains("table `note` has other columns"), "{ended}");
    assert!(reason.contains("table `note`"), "{reason}");
    assert!(reason.contains("new build's bindings"), "{reason}");
    assert_eq!(typed_set.state(), SubscriptionState::Failed(reason.clone()));
    assert_eq!(
        typed.table::<Note>("note").count(),
        0,
        "its rows left the cache"
    );
    assert_eq!(*deleted.lock(), ["one"]);
    assert!(matches!(
        typed_set.applied().await,
        Err(wasmod_client::Error::Query(message)) if message == *reason
    ));

    eventually("the untyped client subscribed again", || {
        !untyped_events.lock().is_empty()
    })
    .await;
    assert!(matches!(
        untyped_events.lock().as_slice(),
        [NewBuild::Resubscribed { .. }]
    ));
    assert_eq!(untyped_set.state(), SubscriptionState::Applied);
    let starred = || {
        untyped
            .table::<StarredNote>("note")
            .rows()
            .expect("build 2's rows")
    };
    assert_eq!(
        starred(),
        [StarredNote {
            id: 1,
            text: "one".into(),
            stars: 0
        }]
    );
    untyped
        .call_reducer("star", &(1u64,))
        .await
        .expect("starred");
    assert_eq!(starred()[0].stars, 1, "its updates go on");
    assert_eq!(
        typed.table::<Note>("note").count(),
        0,
        "nothing more for the ended set"
    );
}
