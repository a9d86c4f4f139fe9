//! The members module, run natively against the real host, with the claims a verified token
//! would carry.

use signin::members::{self, Member, MemberAccess};
use wasmod::http::{Method, Request};
use wasmod::Identity;
use wasmod_testing::{Outcome, TestModule};

const ISSUER: &str = "https://id.example.com";
const ANN: Identity = Identity::from_bytes([0xa1; 32]);

/// The module with `ISSUER` configured by the host.
fn configured() -> TestModule<members::Module> {
    let module = TestModule::<members::Module>::new();
    let configured = module.call_reducer(Identity::ZERO, "configure", (ISSUER.to_owned(),));
    assert!(configured.is_success(), "{configured}");
    module
}

fn refusal(outcome: Outcome) -> String {
    match outcome {
        Outcome::Failed { message, .. } => message,
        other => panic!("expected a refusal, got {other}"),
    }
}

fn members(module: &TestModule<members::Module>) -> Vec<Member> {
    module.read(|db| db.member().iter().collect())
}

#[test]
fn a_user_of_the_issuer_is_admitted_under_the_name_their_token_gives() {
    let module = configured();
    let claims = format!(r#"{{"iss":"{ISSUER}","sub":"u-17","aud":"signin","name":"Ann Lee"}}"#);
    let admitted = module.with_claims(claims.as_str()).connect(ANN);
    assert!(admitted.is_success(), "{admitted}");
    let me: Option<Member> = module.call_view(ANN, "me", ()).unwrap();
    let expected = Member {
        identity: ANN,
        subject: "u-17".into(),
        name: "Ann Lee".into(),
        online: true,
    };
    assert_eq!(me.as_ref(), Some(&expected));
    let whoami: Option<String> = module
        .with_claims(claims.as_str())
        .call_view(ANN, "whoami", ())
        .unwrap();
    assert_eq!(whoami.as_deref(), Some("Ann Lee"));
    let anonymous: Option<String> = module.call_view(ANN, "whoami", ()).unwrap();
    assert_eq!(anonymous, None);
    assert!(module
        .with_claims(claims.as_str())
        .disconnect(ANN)
        .is_success());
    assert!(!members(&module)[0].online);
}

#[test]
fn without_a_name_the_preferred_username_then_the_subject_is_shown() {
    let module = configured();
    let nickname = format!(r#"{{"iss":"{ISSUER}","sub":"u-1","preferred_username":"ann"}}"#);
    assert!(module
        .with_claims(nickname.as_str())
        .connect(ANN)
        .is_success());
    let bare = format!(r#"{{"iss":"{ISSUER}","sub":"u-2"}}"#);
    let bob = Identity::from_bytes([0xb0; 32]);
    assert!(module.with_claims(bare.as_str()).connect(bob).is_success());
    let mut names: Vec<String> = members(&module).into_iter().map(|m| m.name).collect();
    names.sort();
    assert_eq!(names, ["ann", "u-2"]);
}

#[test]
fn a_caller_without_claims_is_refused() {
    let module = configured();
    let message = refusal(module.connect(ANN));
    assert_eq!(message, format!("sign in with {ISSUER} to join"));
    assert!(members(&module).is_empty());
}

#[test]
fn a_user_of_another_issuer_is_refused() {
    let module = configured();
    let claims = r#"{"iss":"https://elsewhere.example","sub":"u-17","name":"Ann"}"#;
    let message = refusal(module.with_claims(claims).connect(ANN));
    assert_eq!(
        message,
        format!("sign in with {ISSUER} to join: tokens of https://elsewhere.example are not accepted here")
    );
    assert!(members(&module).is_empty());
}

#[test]
fn nobody_is_admitted_before_the_issuer_is_configured() {
    let module = TestModule::<members::Module>::new();
    let claims = format!(r#"{{"iss":"{ISSUER}","sub":"u-17"}}"#);
    let message = refusal(module.with_claims(claims.as_str()).connect(ANN));
    assert!(
        message.contains("no identity provider configured"),
        "{message}"
    );
}

#[test]
fn only_the_host_configures_the_issuer() {
    let module = configured();
    let claims = format!(r#"{{"iss":"{ISSUER}","sub":"u-17"}}"#);
    let by_a_member = module.with_claims(claims.as_str()).call_reducer(
        ANN,
        "configure",
        ("https://evil.example".to_owned(),),
    );
    assert_eq!(
        refusal(by_a_member),
        "only the operator configures the identity provider"
    );
    let evil = r#"{"iss":"https://evil.example","sub":"u-17"}"#;
    assert!(!module.with_claims(evil).connect(ANN).is_success());
    let moved = module.call_reducer(
        Identity::ZERO,
        "configure",
        ("https://evil.example".to_owned(),),
    );
    assert!(moved.is_success(), "{moved}");
    assert!(module.with_claims(evil).connect(ANN).is_success());
}

#[test]
fn the_hello_page_greets_a_user_of_the_issuer_by_name() {
    let module = configured();
    let hello = || Request::new(Method::Get, "/hello");
    let claims = format!(r#"{{"iss":"{ISSUER}","sub":"u-17","name":"Ann Lee"}}"#);
    let greeted = module
        .with_claims(claims.as_str())
        .call_http(hello())
        .unwrap();
    assert_eq!(
        (greeted.status, greeted.body),
        (200, b"hello, Ann Lee".to_vec())
    );
    assert_eq!(module.call_http(hello()).unwrap().status, 401);
    let theirs = r#"{"iss":"https://elsewhere.example","sub":"u-17","name":"Ann"}"#;
    assert_eq!(
        module
            .with_claims(theirs)
            .call_http(hello())
            .unwrap()
            .status,
        401
    );
}
