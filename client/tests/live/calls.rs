//! Calls: pipelined, answered in order, typed results and typed errors.

use crate::support::{memory_server, memory_server_with, Live, Message};
use wasmod_client::Error;
use wasmod_protocol::errors::ErrorCode;
use wasmod_server::ServerConfig;

#[tokio::test]
async fn pipelined_calls_are_answered_in_the_order_sent() {
    // Twelve in progress at once, all of one identity: more than the default per-identity
    // bound (8), which answers the rest `too_many_calls`.
    let mut config = ServerConfig::default();
    config.node.max_calls_per_identity = 12;
    let live = Live::serve(memory_server_with(config)).await;
    let client = live.client().await;
    let calls: Vec<_> = (0..12)
        .map(|index| client.call_reducer("send", &(format!("message {index}"),)))
        .collect();
    let mut offsets = Vec::new();
    for call in calls {
        offsets.push(call.await.expect("sent").offset);
    }
    assert!(
        offsets.windows(2).all(|pair| pair[0] < pair[1]),
        "{offsets:?}"
    );
    let recent: Vec<Message> = client.call_view("recent", &()).await.expect("the view");
    let texts: Vec<String> = recent.into_iter().map(|message| message.text).collect();
    let expected: Vec<String> = (0..12).map(|index| format!("message {index}")).collect();
    assert_eq!(texts, expected);
}

#[tokio::test]
async fn calls_past_the_servers_bound_wait_in_the_client_instead_of_being_refused() {
    // Three times the calls the server lets one connection have in flight, started at once:
    // the server answers a seventeenth `busy`, so the client must hold the rest back.
    let calls_at_once = 3 * wasmod_client::MAX_CALLS_IN_FLIGHT;
    let mut config = ServerConfig::default();
    config.node.max_calls_per_identity = calls_at_once;
    let live = Live::serve(memory_server_with(config)).await;
    let client = live.client().await;
    let calls: Vec<_> = (0..calls_at_once)
        .map(|index| client.call_reducer("send", &(format!("message {index}"),)))
        .collect();
    for (index, call) in calls.into_iter().enumerate() {
        let outcome = call.await;
        assert!(outcome.is_ok(), "call {index}: {outcome:?}");
    }
    // The view shows the last 50 messages: every one of these, in the order started.
    let recent: Vec<Message> = client.call_view("recent", &()).await.expect("the view");
    let texts: Vec<String> = recent.into_iter().map(|message| message.text).collect();
    let expected: Vec<String> = (0..calls_at_once)
        .map(|index| format!("message {index}"))
        .collect();
    assert_eq!(texts, expected);
}

#[tokio::test]
async fn errors_say_who_refused_the_call() {
    let live = Live::serve(memory_server()).await;
    let client = live.client().await;
    let failed = client.call_reducer("send", &(String::new(),)).await;
    assert_eq!(
        failed,
        Err(Error::Failed("a message cannot be empty".into()))
    );

    let api_code = |result: Result<_, Error>| match result {
        Err(Error::Api(error)) => error.code,
        other => panic!("not an API error: {other:?}"),
    };
    assert_eq!(
        api_code(client.call_reducer("no_such_reducer", &()).await),
        ErrorCode::NoSuchEntry
    );
    let undecodable = client.call_reducer_raw("send", vec![0xff]).await;
    assert!(
        matches!(&undecodable, Err(Error::Failed(message)) if message.contains("argument `text`")),
        "the module decodes the arguments and fails: {undecodable:?}"
    );
    assert_eq!(
        api_code(client.call_reducer("connected", &()).await),
        ErrorCode::LifecycleReducer
    );
    client
        .call_reducer("send", &("still fine".to_owned(),))
        .await
        .expect("the connection is still up");
    let wrong_type = client.call_view::<_, u64>("recent", &()).await;
    assert!(
        matches!(wrong_type, Err(Error::Decode(_))),
        "{wrong_type:?}"
    );
}

#[tokio::test]
async fn calls_after_disconnect_fail_as_disconnected() {
    let live = Live::serve(memory_server()).await;
    let client = live.client().await;
    client.disconnect().await;
    assert!(!client.is_running());
    assert_eq!(
        client.call_reducer("send", &("late".to_owned(),)).await,
        Err(Error::Disconnected)
    );
    assert_eq!(
        client.one_off_query("SELECT * FROM user").await.err(),
        Some(Error::Disconnected)
    );
}
