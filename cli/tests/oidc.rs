//! `wasmod serve --oidc-issuer` against a real OpenID Provider (npm's `oidc-provider`, started
//! on loopback by `wasmod-oidc-provider`): users signed in through the provider's own pages
//! act with the identity of their issuer and subject, the same on a server with another
//! signing secret, and while the provider is down; a token for another application of the
//! same issuer is refused; bad flags are refused at start.

mod support;

use serde_json::Value;
use std::ffi::OsStr;
use std::path::Path;
use support::{agent, send, wasmod, Served};
use wasmod_oidc_provider::{OidcProvider, Settings};
use wasmod_server::auth::oidc_identity;
use wasmod_wasm_tests::{built, Profile};

/// `wasmod serve` of the quickstart over `data`, accepting the provider's tokens for client
/// `app`.
fn serve(provider: &OidcProvider, data: &Path) -> Served {
    let wasm = built(Profile::Release).library_path("quickstart");
    let issuer = format!("{}=app", provider.issuer());
    let args: [&OsStr; 3] = [
        "--oidc-issuer".as_ref(),
        issuer.as_ref(),
        "--oidc-allow-http-loopback".as_ref(),
    ];
    Served::start_with(&wasm, data, "127.0.0.1:0", &args)
}

/// Sends `text` as `token`: the status and answer.
fn say(served: &Served, token: &str, text: &str) -> (u16, Value) {
    let body = serde_json::json!([text]).to_string();
    send(
        &agent(),
        "POST",
        &format!("{}/v1/reducers/send", served.base),
        Some(token),
        Some(&body),
    )
}

/// The sender (hex) of each message.
fn senders(served: &Served) -> Vec<String> {
    let (status, answer) = send(
        &agent(),
        "GET",
        &format!("{}/v1/tables/message", served.base),
        None,
        None,
    );
    assert_eq!(status, 200, "{answer}");
    answer["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["sender"].as_str().expect("a sender").to_owned())
        .collect()
}

/// The status line a request with `Authorization: Bearer <token>` is answered, sent over a
/// plain socket (an HTTP client will not send a header of a megabyte).
fn raw_status_line(served: &Served, token: &str) -> String {
    use std::io::{BufRead, BufReader, Write};
    let address = served.base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).expect("connected");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("a timeout");
    let request = format!(
        "POST /v1/reducers/send HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\n\
         Content-Length: 2\r\n\r\n[]"
    );
    // The server may answer and close before it has read everything: a failed write is fine.
    let _ = stream.write_all(request.as_bytes());
    let mut line = String::new();
    let _ = BufReader::new(stream).read_line(&mut line);
    line
}

#[test]
fn users_signed_in_at_a_real_provider_keep_their_identity_across_servers_and_outages() {
    let mut provider = OidcProvider::start(Settings::default()).expect("the provider starts");
    let alice = provider.sign_in("alice", "app").expect("alice signs in");
    let bob = provider.sign_in("bob", "app").expect("bob signs in");
    let dir = tempfile::tempdir().expect("a directory");
    let served = serve(&provider, &dir.path().join("first"));

    for (token, text) in [(&alice.id_token, "hello"), (&bob.id_token, "hi")] {
        let answer = say(&served, token, text);
        assert_eq!(answer.0, 200, "{}", answer.1);
    }
    let issuer = provider.issuer().to_owned();
    let identity = |sub: &str| oidc_identity(&issuer, sub).to_hex();
    assert_ne!(identity("alice"), identity("bob"));
    assert_eq!(senders(&served), [identity("alice"), identity("bob")]);

    // A token the issuer made for another of its applications is not for this server.
    let other_app = provider
        .sign_in("alice", "spa")
        .expect("alice signs in to the SPA");
    let (status, answer) = say(&served, &other_app.id_token, "elsewhere");
    assert_eq!(status, 401, "{answer}");
    assert_eq!(answer["error"]["code"], "invalid_token", "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("audience")),
        "{answer}"
    );

    // Tokens too long: one over the server's 16 KiB is refused by the server, saying so; one of
    // a megabyte does not fit in the headers hyper reads (431); the server goes on serving.
    let long = format!("{}{}", alice.id_token, "A".repeat(20 * 1024));
    let (status, answer) = say(&served, &long, "long");
    assert_eq!(status, 401, "{answer}");
    assert_eq!(answer["error"]["code"], "invalid_token", "{answer}");
    assert!(answer.to_string().contains("16384"), "{answer}");
    let huge = format!("{}{}", alice.id_token, "A".repeat(1 << 20));
    let status_line = raw_status_line(&served, &huge);
    assert!(
        status_line.starts_with("HTTP/1.1 431"),
        "request header fields too large: {status_line:?}"
    );
    let answer = say(&served, &alice.id_token, "still served");
    assert_eq!(answer.0, 200, "{}", answer.1);

    // The provider goes down: the keys the server holds keep verifying its tokens.
    provider.kill();
    let answer = say(&served, &alice.id_token, "while it is down");
    assert_eq!(answer.0, 200, "{}", answer.1);
    drop(served);

    // A new server, a new data directory and so a new signing secret: the same identity.
    provider.restart().expect("the provider comes back");
    let served = serve(&provider, &dir.path().join("second"));
    let again = provider
        .sign_in("alice", "app")
        .expect("alice signs in again");
    let answer = say(&served, &again.id_token, "again");
    assert_eq!(answer.0, 200, "{}", answer.1);
    assert_eq!(senders(&served), [identity("alice")]);
}

#[test]
fn a_server_without_issuers_refuses_an_id_token_and_bad_issuer_flags_are_refused() {
    let provider = OidcProvider::start(Settings::default()).expect("the provider starts");
    let token = provider
        .sign_in("alice", "app")
        .expect("alice signs in")
        .id_token;
    let dir = tempfile::tempdir().expect("a directory");
    let wasm = built(Profile::Release).library_path("quickstart");
    let served = Served::start(&wasm, &dir.path().join("plain"));
    let (status, answer) = say(&served, &token, "hello");
    assert_eq!(status, 401, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("--oidc-issuer")),
        "{answer}"
    );
    drop(served);

    let wasm = wasm.to_str().expect("a UTF-8 path");
    let issuer = format!("{}=app", provider.issuer());
    for (flags, why) in [
        (vec!["--oidc-issuer", issuer.as_str()], "only https"),
        (vec!["--oidc-issuer", provider.issuer()], "audience"),
        (
            vec![
                "--oidc-issuer",
                "http://issuer.example.com=app",
                "--oidc-allow-http-loopback",
            ],
            "not loopback",
        ),
    ] {
        let mut args = vec!["serve", wasm, "--listen", "127.0.0.1:0"];
        args.extend(flags);
        let output = wasmod(&args, dir.path());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} was refused");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
}
