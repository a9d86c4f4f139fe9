//! The bank example (`examples/bank`) served by the real `wasmod serve`, used over loopback
//! HTTP as its clients would: accounts, transfers that roll back, the scheduled reducer refused
//! to clients, accounts visible to their owners only, the routed JSON handler, and the data kept across a restart.

mod support;

use serde_json::{json, Value};
use support::{agent, send, Served};
use wasmod_wasm_tests::{built, Profile};

/// A client of one served bank: an identity and its token.
struct Client {
    identity: String,
    token: String,
}

#[test]
fn the_bank_serves_accounts_and_transfers_over_http_and_keeps_them_across_a_restart() {
    let wasm = built(Profile::Release).library_path("bank");
    let data = tempfile::tempdir().expect("a data directory");
    let served = Served::start(&wasm, data.path());
    let agent = agent();
    let base = served.base.clone();
    let url = |path: &str| format!("{base}{path}");
    let client = || {
        let (status, issued) = send(&agent, "POST", &url("/v1/identity"), None, None);
        assert_eq!(status, 200, "{issued}");
        Client {
            identity: issued["identity"].as_str().expect("an identity").to_owned(),
            token: issued["token"].as_str().expect("a token").to_owned(),
        }
    };
    let call = |who: &Client, reducer: &str, args: Value| {
        let path = format!("/v1/reducers/{reducer}");
        send(
            &agent,
            "POST",
            &url(&path),
            Some(&who.token),
            Some(&args.to_string()),
        )
    };
    let balances = |who: &Client| {
        let (status, answer) = send(
            &agent,
            "POST",
            &url("/v1/views/my_accounts"),
            Some(&who.token),
            None,
        );
        assert_eq!(status, 200, "{answer}");
        answer["result"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|account| (account["name"].clone(), account["balance"].clone()))
            .collect::<Vec<_>>()
    };

    let ann = client();
    let bob = client();
    for (who, name, kind, cents) in [
        (&ann, "ann", "Checking", 10_000),
        (&bob, "bob", "Savings", 5_000),
    ] {
        assert_eq!(call(who, "open_account", json!([name, kind])).0, 200);
        assert_eq!(call(who, "deposit", json!([name, cents])).0, 200);
    }
    let moved = call(
        &ann,
        "transfer",
        json!({"from": "ann", "to": "bob", "amount": 3_000}),
    );
    assert_eq!(moved, (200, moved.1.clone()));
    assert_eq!(moved.1["status"], "committed");

    // An overdraft and a missing payee fail with the module's message and change nothing.
    for (args, message) in [
        (json!(["ann", "bob", 7_001]), "insufficient funds"),
        (
            json!(["ann", "carol", 1_000]),
            "no such account to pay into",
        ),
    ] {
        let (status, answer) = call(&ann, "transfer", args);
        assert_eq!(status, 422, "{answer}");
        assert_eq!(answer["error"]["code"], "entry_failed");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains(message),
            "{answer}"
        );
    }
    assert_eq!(balances(&ann), [(json!("ann"), json!(7_000))]);
    assert_eq!(balances(&bob), [(json!("bob"), json!(8_000))]);

    // Each client reads only its own accounts; a reader without a token, none.
    let page = |token: Option<&str>| send(&agent, "GET", &url("/v1/tables/account"), token, None);
    for who in [&ann, &bob] {
        let (status, rows) = page(Some(&who.token));
        assert_eq!(status, 200, "{rows}");
        let owners: Vec<&Value> = rows["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|row| &row["owner"])
            .collect();
        assert_eq!(owners, [&json!(who.identity)], "{rows}");
    }
    assert_eq!(page(None).0, 401);

    // Interest is the scheduler's to pay, not a client's.
    let payment =
        json!([{"id": 1, "at": {"Interval": 2_592_000_000_000u64}, "basis_points": 10_000}]);
    let (status, answer) = call(&bob, "pay_interest", payment);
    assert_eq!(
        (status, &answer["error"]["code"]),
        (403, &json!("scheduled_reducer")),
        "{answer}"
    );
    assert_eq!(balances(&bob), [(json!("bob"), json!(8_000))]);

    // The routed handler answers a summary in the host's JSON mapping.
    let (status, summary) = send(&agent, "GET", &url("/v1/http/accounts/bob"), None, None);
    assert_eq!(status, 200, "{summary}");
    assert_eq!(summary["kind"], "Savings");
    assert_eq!(summary["owner"], bob.identity.as_str());
    assert!(summary.get("balance").is_none(), "{summary}");
    let (status, _) = send(&agent, "GET", &url("/v1/http/accounts/carol"), None, None);
    assert_eq!(status, 404);
    let (status, _) = send(&agent, "POST", &url("/v1/http/accounts/bob"), None, None);
    assert_eq!(status, 405);

    // Stopped and started again over the same data: the balances and the ledger are there.
    let (exit, _, log) = served.terminate();
    assert!(exit.success(), "{log}");
    let served = Served::start(&wasm, data.path());
    let base = served.base.clone();
    let (status, ledger) = send(
        &agent,
        "GET",
        &format!("{base}/v1/tables/transfer"),
        None,
        None,
    );
    assert_eq!(status, 200, "{ledger}");
    assert_eq!(ledger["rows"].as_array().map(Vec::len), Some(1), "{ledger}");
    assert_eq!(ledger["rows"][0]["amount"], 3_000);
    let (status, answer) = send(
        &agent,
        "POST",
        &format!("{base}/v1/views/my_accounts"),
        Some(&ann.token),
        None,
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"][0]["balance"], 7_000);
}
