//! The quickstart client's generated bindings (`examples/quickstart-client`) against a served
//! quickstart: typed tables, lookups, callbacks and calls, and row types whose columns are the
//! served tables'.

// The bindings are the quickstart's whole client API; this test calls most of it, not all.
#[allow(dead_code)]
#[rustfmt::skip]
#[path = "../../../examples/quickstart-client/src/bindings/mod.rs"]
mod quickstart;

use crate::support::{eventually, log, memory_server, Live};
use quickstart::{DbConnection, Message, User};
use wasmod_abi::{AlgebraicType, SchemaType, Typespace};
use wasmod_protocol::description::type_name;

#[tokio::test]
async fn the_generated_bindings_subscribe_call_and_look_rows_up() {
    let live = Live::serve(memory_server()).await;
    let connection = DbConnection::connect(live.url()).await.expect("connected");
    let other = DbConnection::connect(live.url()).await.expect("connected");
    let (messages, users) = (connection.db().message(), connection.db().user());
    let inserted = log();
    let seen = inserted.clone();
    messages.on_insert(move |message: &Message| seen.lock().push(message.text.clone()));
    let renamed = log();
    let seen = renamed.clone();
    users.on_update(move |old: &User, new: &User| {
        seen.lock().push((old.name.clone(), new.name.clone()))
    });
    connection
        .client()
        .subscription()
        .subscribe(["SELECT * FROM message", "SELECT * FROM user"])
        .applied()
        .await
        .expect("applied");
    assert_eq!(users.count(), 2, "both connected users");

    connection.reducers().send("hello").await.expect("sent");
    assert_eq!(
        *inserted.lock(),
        ["hello"],
        "on_insert ran before the call resolved"
    );
    other.reducers().send("from the other").await.expect("sent");
    eventually("the other's message", || inserted.lock().len() == 2).await;

    let me = connection.client().identity();
    let mine = messages.filter_by_sender(me).expect("a filter");
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].text, "hello");
    let found = messages.find_by_id(mine[0].id).expect("a lookup");
    assert_eq!(found.as_ref(), Some(&mine[0]));
    assert_eq!(messages.iter().expect("rows").count(), 2);

    connection
        .reducers()
        .set_name("alice")
        .await
        .expect("named");
    let alice = users
        .find_by_name("alice")
        .expect("a lookup")
        .expect("found");
    assert_eq!(alice.identity, me);
    assert_eq!(users.find_by_identity(me).expect("a lookup"), Some(alice));
    assert_eq!(
        renamed.lock().last().map(|names| names.1.as_str()),
        Some("alice")
    );

    let taken = other.reducers().set_name("alice").await;
    assert_eq!(
        taken,
        Err(wasmod_client::Error::Failed(
            "the name `alice` is taken".into()
        ))
    );
    let recent = connection.views().recent().await.expect("the view");
    let texts: Vec<&str> = recent.iter().map(|message| message.text.as_str()).collect();
    assert_eq!(texts, ["hello", "from the other"]);
    let motd = connection
        .procedures()
        .fetch_motd("http://127.0.0.1:1/")
        .await
        .expect("the procedure answered");
    assert!(
        motd.is_err(),
        "no HTTP server there: the module's own error"
    );
}

/// The columns of `T` as the description writes them: `(name, type)`.
fn columns_of<T: SchemaType>() -> Vec<(String, String)> {
    let mut typespace = Typespace::default();
    let row = T::schema(&mut typespace);
    let Some(AlgebraicType::Product(fields)) = typespace.resolve(&row) else {
        panic!("a row type is a product");
    };
    fields
        .iter()
        .map(|field| {
            let name = field.name.clone().expect("a named column");
            (name, type_name(&field.ty, &typespace))
        })
        .collect()
}

#[tokio::test]
async fn the_generated_row_types_have_the_served_tables_columns() {
    let live = Live::serve(memory_server()).await;
    let description = live.description().await;
    let described = |table: &str| -> Vec<(String, String)> {
        let table = description
            .tables
            .iter()
            .find(|described| described.name == table)
            .expect("described");
        table
            .columns
            .iter()
            .map(|column| (column.name.clone(), column.ty.clone()))
            .collect()
    };
    assert_eq!(columns_of::<Message>(), described("message"));
    assert_eq!(columns_of::<User>(), described("user"));
}
