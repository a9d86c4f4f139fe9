//! `TestModule::with_claims`: every kind of call a caller with claims can make sees them, and
//! the same calls without claims see none.

use badge::SeenAccess;
use wasmod::http::{Method, Request};
use wasmod::Identity;
use wasmod_testing::{Outcome, TestModule};

#[wasmod::module]
mod badge {
    use wasmod::prelude::*;

    /// The subjects that called, and how.
    #[table(public)]
    pub struct Seen {
        #[primary_key]
        pub how: String,
        pub subject: String,
    }

    /// The caller's subject, or `-` without claims.
    fn subject(claims: Option<Claims>) -> String {
        claims.map_or_else(|| "-".to_owned(), |claims| claims.subject().to_owned())
    }

    #[reducer]
    fn note(ctx: &ReducerContext) {
        let subject = subject(ctx.claims());
        ctx.db.seen().insert(Seen {
            how: "reducer".into(),
            subject,
        });
    }

    #[reducer(client_disconnected)]
    fn gone(ctx: &ReducerContext) {
        let subject = subject(ctx.claims());
        ctx.db.seen().insert(Seen {
            how: "disconnected".into(),
            subject,
        });
    }

    #[procedure]
    fn who(ctx: &mut ProcedureContext) -> String {
        subject(ctx.claims())
    }

    #[view]
    fn whose(ctx: &ViewContext) -> Vec<String> {
        vec![subject(ctx.claims())]
    }

    #[http_handler(GET, "/who")]
    fn who_asks(ctx: &mut HttpContext, _request: Request) -> Response {
        Response::text(subject(ctx.claims()))
    }
}

const ANN: Identity = Identity::from_bytes([1; 32]);
const CLAIMS: &str = r#"{"iss":"https://id.example.com","sub":"ann-1"}"#;

#[test]
fn every_kind_of_call_sees_the_claims_it_is_made_with() {
    let module = TestModule::<badge::Module>::new();
    let signed_in = module.with_claims(CLAIMS);
    assert!(signed_in.call_reducer(ANN, "note", ()).is_success());
    assert_eq!(
        signed_in.call_procedure::<String>(ANN, "who", ()).unwrap(),
        "ann-1"
    );
    assert_eq!(
        signed_in
            .call_view::<Vec<String>>(ANN, "whose", ())
            .unwrap(),
        ["ann-1"]
    );
    let answer = signed_in
        .call_http(Request::new(Method::Get, "/who"))
        .unwrap();
    assert_eq!(answer.body, b"ann-1");
    assert!(matches!(
        signed_in.disconnect(ANN),
        Outcome::Committed { .. }
    ));
    let seen = |how: &str| {
        module.read(|db| {
            db.seen()
                .how()
                .find(how.to_owned())
                .map(|seen| seen.subject)
        })
    };
    assert_eq!(seen("reducer").as_deref(), Some("ann-1"));
    assert_eq!(seen("disconnected").as_deref(), Some("ann-1"));

    assert_eq!(
        module.call_procedure::<String>(ANN, "who", ()).unwrap(),
        "-"
    );
    assert_eq!(
        module.call_view::<Vec<String>>(ANN, "whose", ()).unwrap(),
        ["-"]
    );
    let answer = module.call_http(Request::new(Method::Get, "/who")).unwrap();
    assert_eq!(answer.body, b"-");
    assert!(format!("{signed_in:?}").contains("WithClaims"));
}
