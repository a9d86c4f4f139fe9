//! The caller's claims through the pipeline, to the module (the example `signin`, which admits
//! the users of one issuer): a connection's `client_connected`, a call by name, an HTTP
//! handler.

use super::Caller;
use crate::{Node, NodeConfig, NodeHandle};
use serde_json::{json, Value};
use std::future::ready;
use wasmod_abi::http::{Method, Request};
use wasmod_abi::Identity;
use wasmod_host::Claims;
use wasmod_protocol::call::CallKind;

const ISSUER: &str = "https://id.example.com";
const ANN: Identity = Identity::from_bytes([0xa1; 32]);

fn claims(json: &str) -> Option<Claims> {
    Some(Claims::from_verified_json(json.into()))
}

/// Ann's claims, of the configured issuer.
fn ann() -> Option<Claims> {
    claims(r#"{"iss":"https://id.example.com","sub":"u-17","name":"Ann Lee"}"#)
}

/// A node of `signin`, its issuer configured by the host's identity.
async fn signin() -> Node {
    let module = crate::test_support::example("signin");
    let node = Node::builder(module, NodeConfig::default())
        .build()
        .expect("built");
    let host = Caller::new(Some(Identity::ZERO), None);
    let args = ready(Ok(json!([ISSUER])));
    let configured = node
        .handle()
        .call(Some(CallKind::Reducer), "configure", host, args)
        .await;
    assert!(configured.is_ok(), "{configured:?}");
    node
}

/// View `name` called by `caller`, as JSON.
async fn view(handle: &NodeHandle, name: &str, caller: Caller) -> Value {
    let args = ready(Ok(json!([])));
    let answer = handle.call(Some(CallKind::View), name, caller, args).await;
    serde_json::to_value(answer.expect("the view answers")).expect("JSON")
}

#[tokio::test]
async fn client_connected_reads_the_claims_of_the_connection_and_refuses_by_them() {
    let node = signin().await;
    let connections = node.handle().connections();
    let without = connections.connect(ANN, None).await.unwrap_err();
    assert_eq!(
        without.message,
        format!("the module refused the connection: sign in with {ISSUER} to join")
    );
    let elsewhere = claims(r#"{"iss":"https://elsewhere.example","sub":"u-17"}"#);
    let other = connections.connect(ANN, elsewhere).await.unwrap_err();
    assert!(
        other
            .message
            .contains("tokens of https://elsewhere.example are not accepted"),
        "{}",
        other.message
    );
    let connection = connections.connect(ANN, ann()).await.expect("admitted");
    let me = view(node.handle(), "me", Caller::new(Some(ANN), None)).await;
    assert_eq!(me["result"]["name"], "Ann Lee", "{me}");
    connection.close().await;
}

#[tokio::test]
async fn a_call_by_name_reads_its_callers_claims() {
    let node = signin().await;
    let handle = node.handle();
    let with_claims = Caller::new(Some(ANN), None).with_claims(ann());
    let whoami = view(handle, "whoami", with_claims).await;
    assert_eq!(whoami["result"], "Ann Lee", "{whoami}");
    let without = view(handle, "whoami", Caller::new(Some(ANN), None)).await;
    assert_eq!(without["status"], "returned", "{without}");
    assert_eq!(without["result"], Value::Null, "{without}");
}

#[tokio::test]
async fn an_http_handler_reads_the_claims_of_the_requests_token() {
    let node = signin().await;
    let hello = |caller: Caller| {
        let request = Request::new(Method::Get, "/hello");
        node.handle()
            .call_http(request, ready(Ok(Vec::new())), caller)
    };
    let greeted = hello(Caller::new(None, None).with_claims(ann()))
        .await
        .expect("answered");
    assert_eq!(
        (greeted.response.status, greeted.response.body),
        (200, b"hello, Ann Lee".to_vec())
    );
    let anonymous = hello(Caller::new(None, None)).await.expect("answered");
    assert_eq!(anonymous.response.status, 401);
}
