//! wasmod deployed as `docs/deployment.md` says: a real `wasmod serve` of the quickstart on
//! loopback in plain HTTP, behind Debian's nginx terminating TLS with the committed
//! `deploy/nginx.conf` (the doc's file, rendered with this test's port, certificate and server:
//! each line it replaces must be there, so the file and the test cannot drift apart). The
//! certificate is a test CA's, made here (rcgen), and the Rust SDK is given that CA as its root.
//!
//! Through the proxy: the SDK connects over `wss://`, subscribes, calls a reducer and receives
//! its update; the HTTP API answers over `https://`; nginx restarted under the client, the
//! client reconnects through it and resumes its subscription (only what changed meanwhile
//! comes). Without the test CA (the platform's roots only) the connection fails with a
//! certificate error that says so. The server's refusal of an upgrade (a bad token) reaches
//! the client through nginx with its code, and so does nginx's own per-address limit of new
//! identities, in the server's JSON error. A new build published through nginx is followed:
//! the client reads its description over `https://`, trusting the same CA. The access log
//! keeps no token (a browser sends its
//! token in the query).
//!
//! nginx runs as the test's own process (`-g 'daemon off;'`), with its prefix, logs and
//! temporary files in a temporary directory, on a free loopback port; it is stopped when the
//! test ends. `.ci/run` installs Debian's `nginx` (not started as a service).

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::nginx::{Certificates, Nginx, BEHIND_A_PROXY};
use support::Served;
use wasmod_client::{Backoff, Client, ClientBuilder, Error, ErrorCode, NewBuild};
use wasmod_wasm_tests::{built, Profile};

#[path = "../../client/tests/shared/rows.rs"]
#[allow(dead_code)] // Its `User` is not read here.
mod rows;
use rows::Message;

/// How long a test waits for what should come.
const PATIENCE: Duration = Duration::from_secs(20);

/// The quickstart served by `wasmod serve` as behind a proxy, and nginx in front of it.
struct Deployment {
    nginx: Nginx,
    served: Served,
    certificates: Certificates,
    _data: tempfile::TempDir,
}

impl Deployment {
    /// The quickstart behind nginx.
    fn start() -> Self {
        Self::serving("quickstart")
    }

    /// The library `module` of the workspace's modules (built for wasm) behind nginx.
    fn serving(module: &str) -> Self {
        let wasm = built(Profile::Release).library_path(module);
        let data = tempfile::tempdir().expect("a data directory");
        let flags: Vec<&std::ffi::OsStr> =
            BEHIND_A_PROXY.iter().map(|flag| flag.as_ref()).collect();
        let served = Served::start_with(&wasm, data.path(), "127.0.0.1:0", &flags);
        let certificates = Certificates::new();
        let upstream = served.base.strip_prefix("http://").expect("an address");
        let nginx = Nginx::start(upstream, &certificates);
        Self {
            nginx,
            served,
            certificates,
            _data: data,
        }
    }

    /// A client of the quickstart through the proxy, trusting the test CA, reconnecting soon.
    fn client(&self) -> ClientBuilder {
        Client::builder(self.nginx.url())
            .root_certificate(self.certificates.root())
            .keyed_table::<Message>("message", "id")
            .reconnect(Some(Backoff {
                first: Duration::from_millis(50),
                max: Duration::from_millis(200),
            }))
    }

    /// An HTTP agent through the proxy, trusting the test CA.
    fn https_agent(&self) -> ureq::Agent {
        let ca = ureq::tls::Certificate::from_pem(self.certificates.ca.as_bytes())
            .expect("the CA reads");
        let tls = ureq::tls::TlsConfig::builder()
            .root_certs(ureq::tls::RootCerts::new_with_certs(&[ca]))
            .build();
        ureq::Agent::config_builder()
            .tls_config(tls)
            .http_status_as_error(false)
            .timeout_global(Some(PATIENCE))
            .build()
            .into()
    }
}

/// Waits until `condition` holds.
async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The texts of the messages in `client`'s cache, in order of their ids.
fn texts(client: &Client) -> Vec<String> {
    let mut messages = client
        .table::<Message>("message")
        .rows()
        .expect("rows decode");
    messages.sort_by_key(|message| message.id);
    messages.into_iter().map(|message| message.text).collect()
}

#[tokio::test]
async fn the_sdk_subscribes_calls_and_resumes_over_wss_through_nginx() {
    let mut deployment = Deployment::start();
    let client = deployment
        .client()
        .connect()
        .await
        .expect("connected over wss");
    let identity = client.identity();
    let inserted = Arc::new(Mutex::new(Vec::new()));
    let seen = inserted.clone();
    client
        .table::<Message>("message")
        .on_insert(move |message: &Message| {
            seen.lock().expect("the log").push(message.text.clone())
        });
    let subscription = client.subscription().subscribe(["SELECT * FROM message"]);
    subscription
        .applied()
        .await
        .expect("applied through the proxy");
    client
        .call_reducer("send", &("over TLS".to_owned(),))
        .await
        .expect("the reducer ran");
    eventually("the update came back", || {
        *inserted.lock().expect("the log") == ["over TLS"]
    })
    .await;

    // The HTTP API through the proxy: the module's description, and a reducer called as the
    // client's identity while the client is away (nginx stopped under it).
    let agent = deployment.https_agent();
    let mut description = agent
        .get(format!("{}/v1/module", deployment.nginx.https()))
        .call()
        .expect("an answer over https");
    assert_eq!(description.status(), 200);
    assert!(description
        .body_mut()
        .read_to_string()
        .expect("a body")
        .contains("\"message\""));

    deployment.nginx.halt();
    eventually("the client knows it is away", || {
        client.connection_state() == wasmod_client::ConnectionState::Reconnecting
    })
    .await;
    let direct = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let mut sent = direct
        .post(format!("{}/v1/reducers/send", deployment.served.base))
        .header("authorization", format!("Bearer {}", client.token()))
        .send("[\"while away\"]")
        .expect("an answer");
    assert_eq!(
        sent.status(),
        200,
        "{}",
        sent.body_mut().read_to_string().unwrap_or_default()
    );
    deployment.nginx.resume();
    eventually("the client reconnects through nginx and catches up", || {
        texts(&client) == ["over TLS", "while away"]
    })
    .await;
    assert!(subscription.resumed(), "only what changed came");
    assert_eq!(client.identity(), identity, "the same identity");
    assert_eq!(
        *inserted.lock().expect("the log"),
        ["over TLS", "while away"]
    );

    // A call made over the new socket, through the restarted proxy.
    let mut over_https = agent
        .post(format!("{}/v1/reducers/send", deployment.nginx.https()))
        .header("authorization", format!("Bearer {}", client.token()))
        .send("[\"over https\"]")
        .expect("an answer over https");
    assert_eq!(
        over_https.status(),
        200,
        "{}",
        over_https.body_mut().read_to_string().unwrap_or_default()
    );
    eventually("the HTTP call's update came over wss", || {
        texts(&client) == ["over TLS", "while away", "over https"]
    })
    .await;
    client.disconnect().await;
}

#[tokio::test]
async fn without_the_test_ca_the_proxys_certificate_is_refused_with_a_certificate_error() {
    let deployment = Deployment::start();
    for url in [deployment.nginx.url(), deployment.nginx.https()] {
        let refused = Client::builder(url.as_str())
            .connect()
            .await
            .err()
            .expect("the platform's roots do not include the test CA");
        let Error::Connect(why) = &refused else {
            panic!("{url}: not a connection error: {refused:?}");
        };
        assert!(why.contains("TLS failed"), "{url}: {why}");
        assert!(
            why.contains("certificate was refused (UnknownIssuer)"),
            "{url}: {why}"
        );
        assert!(why.contains("root_certificate"), "the fix is named: {why}");
    }
}

#[tokio::test]
async fn refusals_reach_the_client_through_nginx_with_their_code() {
    let deployment = Deployment::start();
    // The server's own: a token that is not one.
    let refused = deployment
        .client()
        .token("not-a-token")
        .connect()
        .await
        .err()
        .expect("a bad token is refused");
    assert_eq!(refused.code(), Some(ErrorCode::InvalidToken), "{refused:?}");

    // nginx's, per address (the server's is off, as the deployment doc says): 30 new
    // identities at once, then `too_many_calls` in the server's JSON error.
    let mut clients = Vec::new();
    let refused = loop {
        match deployment.client().connect().await {
            Ok(client) => clients.push(client),
            Err(error) => break error,
        }
        assert!(clients.len() <= 40, "nginx never limited new identities");
    };
    assert!(clients.len() >= 30, "{} new identities", clients.len());
    assert_eq!(refused.code(), Some(ErrorCode::TooManyCalls), "{refused:?}");
    assert!(
        matches!(&refused, Error::Refused { status: 429, reason, .. } if reason.contains("the proxy's limit")),
        "{refused:?}"
    );
    // A client with a token is not a new identity: nginx lets it through. (Given the
    // `https://` base URL this time: the SDK makes it `wss://…/v1/subscribe`.)
    let known = Client::builder(deployment.nginx.https())
        .root_certificate(deployment.certificates.root())
        .token(clients[0].token())
        .connect()
        .await
        .expect("a known identity connects");
    assert_eq!(known.identity(), clients[0].identity());
}

#[tokio::test]
async fn the_access_log_keeps_no_token() {
    let deployment = Deployment::start();
    let secret = "wm1.a-token-in-the-query";
    let answer = deployment
        .https_agent()
        .get(format!(
            "{}/v1/subscribe?token={secret}",
            deployment.nginx.https()
        ))
        .call()
        .expect("an answer");
    // The token is checked before the upgrade (so that a browser can learn why its socket was
    // refused): this one is not the server's, 401.
    assert_eq!(answer.status(), 401, "a token that is not the server's");
    // nginx writes the line once the answer is sent, which may be after the client read it.
    let logged = "GET /v1/subscribe HTTP/1.1\" 401";
    eventually("the request is logged", || {
        deployment.nginx.access_log().contains(logged)
    })
    .await;
    let log = deployment.nginx.access_log();
    assert!(!log.contains(secret), "{log}");
}

/// A row of the notes module's `note` table (`host/tests/modules/notes`), in build 1 and
/// `notes_filtered`.
#[derive(Clone, Debug, PartialEq, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Note {
    id: u64,
    text: String,
}

#[tokio::test]
async fn a_build_published_through_nginx_is_followed_with_its_description_over_https() {
    let deployment = Deployment::serving("notes");
    let client = Client::builder(deployment.nginx.url())
        .root_certificate(deployment.certificates.root())
        .keyed_table::<Note>("note", "id")
        .connect()
        .await
        .expect("connected over wss");
    for text in ["one", "hidden"] {
        client
            .call_reducer("add_note", &(text.to_owned(),))
            .await
            .expect("added");
    }
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let subscription = client
        .subscription()
        .on_new_build(move |event: &NewBuild| seen.lock().expect("the log").push(event.clone()))
        .subscribe(["SELECT * FROM note"]);
    subscription.applied().await.expect("applied");

    // `wasmod publish`'s request, through the proxy: notes gain a visibility filter, so the
    // server ends the set, and the client reads the new build's description (`GET
    // /v1/module`, over https with the same roots as its socket) to subscribe again.
    let build = built(Profile::Release).example("notes_filtered");
    let mut published = deployment
        .https_agent()
        .post(format!("{}/v1/admin/module", deployment.nginx.https()))
        .header(
            "authorization",
            format!("Bearer {}", deployment.served.operator_token),
        )
        .send(&build[..])
        .expect("an answer over https");
    assert_eq!(
        published.status(),
        200,
        "{}",
        published.body_mut().read_to_string().unwrap_or_default()
    );
    eventually("the client heard of the new build", || {
        !events.lock().expect("the log").is_empty()
    })
    .await;
    let events = events.lock().expect("the log").clone();
    assert!(
        matches!(events.as_slice(), [NewBuild::Resubscribed { .. }]),
        "subscribed again, the description read over https: {events:?}"
    );
    let texts: Vec<String> = client
        .table::<Note>("note")
        .rows()
        .expect("rows decode")
        .into_iter()
        .map(|note| note.text)
        .collect();
    assert_eq!(texts, ["one"], "the new build's filter applies");
}
