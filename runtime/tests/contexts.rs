//! What each context tells an entry point about its call (its time, its connection), and what a
//! procedure sees of the host's refusals (outbound HTTP, whose destinations `TestModule` allows
//! none of), run natively against the real host.

use wasmod::{Errno, HttpError, Identity, Timestamp};
use wasmod_testing::TestModule;

#[wasmod::module]
mod clock {
    use wasmod::prelude::*;
    use wasmod::HttpError;

    /// One call, as its entry point saw it.
    #[table]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Seen {
        #[primary_key]
        #[auto_inc]
        pub id: u64,
        pub by: String,
        pub at: Timestamp,
        pub over_a_connection: bool,
    }

    #[reducer]
    fn stamp(ctx: &ReducerContext) {
        ctx.db.seen().insert(Seen {
            id: 0,
            by: "reducer".into(),
            at: ctx.timestamp(),
            over_a_connection: ctx.connection_id().is_some(),
        });
    }

    /// Records the call in a transaction of its own, and reads the count back in a read-only
    /// one.
    #[procedure]
    fn stamp_twice(ctx: &mut ProcedureContext) -> Result<u64, String> {
        let (at, over_a_connection) = (ctx.timestamp(), ctx.connection_id().is_some());
        ctx.with_tx(|tx| {
            tx.db.seen().insert(Seen {
                id: 0,
                by: "procedure".into(),
                at,
                over_a_connection,
            })
        });
        ctx.try_with_read_tx(|tx| tx.db.seen().count())
            .map_err(|error| error.to_string())
    }

    /// What the host answered to a `GET` of `url`, as text.
    #[procedure]
    fn fetch(ctx: &mut ProcedureContext, url: String) -> String {
        match ctx.http_get(&url) {
            Ok(response) => format!("status {}", response.status),
            Err(error) => error.to_string(),
        }
    }

    /// The same refusal through `send_http`, and whether it is the one for a destination the
    /// host will not call.
    #[procedure]
    fn post(ctx: &mut ProcedureContext, url: String) -> bool {
        let request = Request::new(Method::Post, url);
        matches!(ctx.send_http(&request), Err(HttpError::Refused(_)))
    }

    #[http_handler(GET, "/now")]
    fn now(ctx: &mut HttpContext, _request: Request) -> Response {
        Response::text(ctx.timestamp().to_micros_since_unix_epoch().to_string())
    }
}

use clock::SeenAccess;

const ANN: Identity = Identity::from_bytes([1; 32]);

#[test]
fn reducers_and_procedures_see_their_call_time_and_no_connection_when_called_directly() {
    let module = TestModule::<clock::Module>::new();
    let before = Timestamp::now();
    assert!(module.call_reducer(ANN, "stamp", ()).is_success());
    let count: Result<u64, String> = module.call_procedure(ANN, "stamp_twice", ()).unwrap();
    assert_eq!(count, Ok(2));
    let after = Timestamp::now();
    let seen = module.read(|db| db.seen().iter().collect::<Vec<_>>());
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].by, "reducer");
    assert_eq!(seen[1].by, "procedure");
    for row in &seen {
        assert!(
            before <= row.at && row.at <= after,
            "{row:?} outside {before:?}..{after:?}"
        );
        assert!(!row.over_a_connection, "{row:?}");
    }
}

#[test]
fn outbound_http_to_a_destination_not_allowed_is_refused_with_the_hosts_code() {
    let module = TestModule::<clock::Module>::new();
    let answer: String = module
        .call_procedure(ANN, "fetch", ("http://127.0.0.1:9/".to_string(),))
        .unwrap();
    let expected = HttpError::Refused(Errno::HTTP_FAILED).to_string();
    assert!(
        answer.starts_with("the HTTP request failed: "),
        "{answer} (a refusal reads like {expected})"
    );
    let refused: bool = module
        .call_procedure(ANN, "post", ("https://example.com/hook".to_string(),))
        .unwrap();
    assert!(refused);
}

#[test]
fn an_http_handler_sees_its_call_time() {
    let module = TestModule::<clock::Module>::new();
    let before = Timestamp::now().to_micros_since_unix_epoch();
    let response = module
        .call_http(wasmod::http::Request::new(
            wasmod::http::Method::Get,
            "/now",
        ))
        .unwrap();
    let at: i64 = String::from_utf8(response.body).unwrap().parse().unwrap();
    let after = Timestamp::now().to_micros_since_unix_epoch();
    assert!(
        before <= at && at <= after,
        "{at} outside {before}..{after}"
    );
}

#[test]
fn a_response_that_does_not_decode_and_a_refusal_say_which() {
    let refused = HttpError::Refused(Errno::HTTP_FAILED);
    assert!(refused
        .to_string()
        .starts_with("the HTTP request failed: HTTP_FAILED"));
    let bad = HttpError::BadResponse(wasmod_abi_decode_error());
    assert!(
        bad.to_string()
            .starts_with("the HTTP response did not decode: "),
        "{bad}"
    );
}

/// A real decode error: a string whose length prefix claims more bytes than follow.
fn wasmod_abi_decode_error() -> wasmod::DecodeError {
    wasmod::abi::encoding::from_slice::<String>(&[9, 0, 0, 0, b'a'])
        .expect_err("a string cut short does not decode")
}
