//! Issue 38's attacks at the sizes the audit used, against a server in this process, each
//! while a bystander calls, subscribes, waits and asks for `/health`; ignored by default, run
//! by hand (`docs/security.md` quotes the figures):
//!
//! ```text
//! cargo test -p wasmod-server --test api --release -- --ignored --nocapture --test-threads 1 exhaustion_measured
//! ```
//!
//! Each prints the process's resident memory before, at its peak and after the attacker has
//! gone, and the bystander's times (median, 99th percentile, longest). The goal: no attack
//! adds more than 512 MB nor keeps it, and every bystander time stays under a second. The
//! attackers' own sockets live in this process too, so the memory is an upper bound of the
//! server's.

use crate::amplification::{peak_mib, reset_peak, resident_mib};
use crate::exhaustion::insert_messages;
use crate::live::{
    call_reducer, one_off, resubscribe, subscribe, wait_for, Client, Connect, Encoding, Live,
};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use wasmod_server::ServerConfig;

/// The three loopback addresses attackers come from.
const ADDRESSES: [Ipv4Addr; 3] = [
    Ipv4Addr::new(127, 0, 0, 2),
    Ipv4Addr::new(127, 0, 0, 3),
    Ipv4Addr::new(127, 0, 0, 4),
];

/// The attackers: one identity from each address (new identities come at 30 a minute per
/// address, and one identity may hold 64 sockets).
struct Attackers {
    tokens: Vec<String>,
}

impl Attackers {
    async fn new(live: &Live) -> Self {
        let mut tokens = Vec::new();
        for address in ADDRESSES {
            let how = Connect {
                from: Some(IpAddr::V4(address)),
                ..Connect::default()
            };
            let mut client = Client::connect(live, Encoding::Binary, how).await;
            tokens.push(client.hello().await.1);
            client.close().await;
        }
        Self { tokens }
    }

    /// Socket `n`: from address `n % 3`, as its identity.
    async fn socket(&self, live: &Live, n: usize, encoding: Encoding) -> Client {
        let how = Connect {
            from: Some(IpAddr::V4(ADDRESSES[n % ADDRESSES.len()])),
            bearer: Some(&self.tokens[n % ADDRESSES.len()]),
            ..Connect::default()
        };
        let mut client = Client::connect(live, encoding, how).await;
        client.hello().await;
        client
    }
}

/// A query of 1,000 `OR` terms over `text` (4,000 tokens, about 60 KB), distinct by `tag`.
fn or_chain(tag: &str) -> String {
    let terms: Vec<String> = (0..1_000)
        .map(|term| format!("text = '{tag}-{term:04}-{}'", "x".repeat(40)))
        .collect();
    format!("SELECT * FROM message WHERE {}", terms.join(" OR "))
}

/// The bystander's times of one kind.
#[derive(Default)]
struct Times(Vec<Duration>);

impl Times {
    fn summary(&mut self) -> String {
        if self.0.is_empty() {
            return "none".to_owned();
        }
        self.0.sort();
        let at = |q: f64| self.0[((self.0.len() - 1) as f64 * q).round() as usize];
        format!(
            "{:.0?}/{:.0?}/{:.0?} ({})",
            at(0.5),
            at(0.99),
            at(1.0),
            self.0.len()
        )
    }
}

/// A client that keeps doing what a user does, one thing after the other, until stopped.
struct Bystander {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<[Times; 4]>,
}

impl Bystander {
    async fn start(live: &Live) -> Self {
        let mut client = Client::connect(live, Encoding::Binary, Connect::default()).await;
        client.hello().await;
        let addr = live.addr;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            let mut times: [Times; 4] = Default::default();
            let mut id = 0;
            while !stopped.load(Ordering::Relaxed) {
                id += 1;
                let started = Instant::now();
                client
                    .send(call_reducer(id, "save_draft", &["bystander"]))
                    .await;
                answered(&mut client, "TransactionUpdate").await;
                times[0].0.push(started.elapsed());
                let started = Instant::now();
                client
                    .send(subscribe(id, &["SELECT * FROM message WHERE id = 1"]))
                    .await;
                answered(&mut client, "SubscribeApplied").await;
                times[1].0.push(started.elapsed());
                client
                    .send(serde_json::json!({"Unsubscribe": {"query_set_id": id}}))
                    .await;
                let started = Instant::now();
                client.send(wait_for(id, 0)).await;
                answered(&mut client, "CaughtUp").await;
                times[2].0.push(started.elapsed());
                let started = Instant::now();
                health(addr).await;
                times[3].0.push(started.elapsed());
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            times
        });
        Self { stop, task }
    }

    async fn report(self) -> String {
        self.stop.store(true, Ordering::Relaxed);
        let [mut call, mut subscribe, mut wait, mut health] = self.task.await.expect("joined");
        format!(
            "bystander p50/p99/max: call {}, Subscribe {}, WaitFor {}, /health {}",
            call.summary(),
            subscribe.summary(),
            wait.summary(),
            health.summary()
        )
    }
}

/// Reads until a message of `kind` comes (a minute at most).
async fn answered(client: &mut Client, kind: &str) {
    loop {
        match client.next(Duration::from_secs(60)).await {
            Some(Ok(message)) if message.get(kind).is_some() => return,
            Some(Ok(message)) if message.get("SubscriptionError").is_some() => {
                panic!("the bystander was refused: {message}")
            }
            Some(Ok(_)) => {}
            other => panic!("no {kind}: {other:?}"),
        }
    }
}

/// `GET /health` over a new connection.
async fn health(addr: SocketAddr) {
    let mut stream = TcpStream::connect(addr).await.expect("connected");
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .await
        .expect("sent");
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut answer)).await;
}

/// Runs `attack` against `live` with a bystander beside it, then prints the figures.
async fn measured<F: std::future::Future<Output = String>>(live: &Live, item: &str, attack: F) {
    tokio::time::sleep(Duration::from_millis(500)).await;
    let idle = resident_mib();
    reset_peak();
    let bystander = Bystander::start(live).await;
    let started = Instant::now();
    let what = attack.await;
    let took = started.elapsed();
    let peak = peak_mib();
    let times = bystander.report().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!(
        "{item}: {what} in {took:.1?}; RSS idle {idle} MiB, peak +{} MiB, after +{} MiB; {times}",
        peak.saturating_sub(idle),
        resident_mib().saturating_sub(idle),
    );
}

/// What the one-off attack's rows are: 20 of 100,000 control characters, ids 1 to 20.
fn control_rows(live: &Live) {
    insert_messages(&live.database, 1, (0..20).map(|_| "\u{1}".repeat(100_000)));
}

/// What the pages' attack reads: 600 rows of 10,000 control characters, from id `first`.
fn page_rows(live: &Live, first: u64) {
    insert_messages(
        &live.database,
        first,
        (0..600).map(|_| "\u{1}".repeat(10_000)),
    );
}

/// 20,000 short messages from id `first`, which the queue's queries read in full.
fn short_rows(live: &Live, first: u64) {
    let texts = (0..20_000).map(|n| format!("message {n}"));
    insert_messages(&live.database, first, texts);
}

/// Item 1: 100 sockets each resuming a Subscribe of 15 queries of 1,000 terms from 4,000
/// commits back.
async fn resuming() {
    let live = Live::start(ServerConfig::default()).await;
    short_rows(&live, 1);
    for n in 0..4_100 {
        insert_messages(&live.database, 20_001 + n, [format!("later {n}")]);
    }
    let last = live.database.next_offset() - 1;
    let queries: Vec<String> = (0..15).map(|q| or_chain(&format!("r{q}"))).collect();
    let queries: Vec<&str> = queries.iter().map(String::as_str).collect();
    let attackers = Attackers::new(&live).await;
    measured(&live, "1 resume", async {
        let mut sockets = Vec::new();
        for n in 0..100 {
            sockets.push(attackers.socket(&live, n, Encoding::Binary).await);
        }
        for socket in &mut sockets {
            socket.send(resubscribe(1, &queries, last - 4_000)).await;
        }
        let mut kinds = std::collections::BTreeMap::new();
        for socket in &mut sockets {
            let kind = crate::amplification::answer(socket).await;
            *kinds.entry(kind).or_insert(0) += 1;
        }
        format!("100 resuming Subscribes of 15 x 1,000 terms answered {kinds:?}")
    })
    .await;
}

/// Item 2: 3 sockets of one identity, each 1,024 sets of the same 15 queries of 65 KB.
async fn texts_attack(live: &Live, attackers: &Attackers) -> String {
    let queries: Vec<String> = (0..15)
        .map(|q| {
            format!(
                "SELECT * FROM message WHERE text = '{q}{}'",
                "t".repeat(65_000)
            )
        })
        .collect();
    let queries: Vec<&str> = queries.iter().map(String::as_str).collect();
    let mut sockets = Vec::new();
    for _ in 0..3 {
        sockets.push(attackers.socket(live, 0, Encoding::Binary).await);
    }
    // The sockets take turns, so that none sits silent past the ping interval.
    let mut kinds = std::collections::BTreeMap::new();
    for set in 1..=1_024 {
        for socket in &mut sockets {
            if let Err(error) = socket.try_send(subscribe(set, &queries)).await {
                let closed = socket.closed().await;
                panic!("closed at set {set}: {error}, {closed:?}");
            }
            let kind = crate::amplification::answer(socket).await;
            *kinds.entry(kind).or_insert(0) += 1;
        }
    }
    let held = resident_mib();
    for socket in sockets {
        socket.close().await;
    }
    format!("3,072 sets of 15 x 65 KB answered {kinds:?} (RSS {held} MiB with them open)")
}

/// Item 3: 10 JSON sockets each asking six one-off queries of the control rows (2 MB, 12 MB
/// of JSON), not reading for 10 s.
async fn one_offs_attack(live: &Live, attackers: &Attackers) -> String {
    let mut sockets = Vec::new();
    for n in 0..10 {
        let mut socket = attackers.socket(live, n, Encoding::Json).await;
        for id in 1..=6 {
            let query = "SELECT * FROM message WHERE id <= 20";
            socket.send(one_off(id, query)).await;
        }
        sockets.push(socket);
    }
    tokio::time::sleep(Duration::from_secs(10)).await;
    // The attackers' reading takes this process's memory too: the server's peak is before.
    let held = peak_mib();
    let mut answers = std::collections::BTreeMap::new();
    for socket in &mut sockets {
        while let Some(Ok(message)) = socket.next(Duration::from_secs(1)).await {
            let result = &message["OneOffQueryResult"]["result"];
            let kind = if result.get("ok").is_some() {
                "rows"
            } else {
                "refused"
            };
            *answers.entry(kind).or_insert(0) += 1;
        }
    }
    format!(
        "60 one-offs of 2 MB of control characters held 10 s (peak RSS {held} MiB before \
         the attackers read), then read: {answers:?}"
    )
}

/// Item 4: one socket sending 2,500 Subscribes that each read past the budget.
async fn queue_attack(live: &Live, attackers: &Attackers) -> String {
    let query = or_chain("f");
    let mut socket = attackers.socket(live, 1, Encoding::Binary).await;
    for set in 1..=2_500 {
        if let Err(error) = socket.try_send(subscribe(set, &[&query])).await {
            panic!("closed at {set}: {error}, {:?}", socket.closed().await);
        }
    }
    let mut refused = 0;
    for _ in 0..2_500 {
        if crate::amplification::answer(&mut socket).await == "SubscriptionError" {
            refused += 1;
        }
    }
    format!("2,500 Subscribes of 1,000 terms over 20,000 rows, {refused} refused")
}

/// Item 5: 24 sockets sending Subscribes of 16 queries of 1,000 terms (1 MB) for 20 s.
async fn parsing_attack(live: &Live, attackers: &Attackers) -> String {
    let queries: Vec<String> = (0..16).map(|q| or_chain(&format!("p{q}"))).collect();
    let queries: Vec<&str> = queries.iter().map(String::as_str).collect();
    let until = Instant::now() + Duration::from_secs(20);
    let mut tasks = Vec::new();
    for n in 0..24 {
        let mut socket = attackers.socket(live, n, Encoding::Binary).await;
        let message = subscribe(1, &queries);
        tasks.push(tokio::spawn(async move {
            let mut sent = 0;
            while Instant::now() < until {
                socket.send(message.clone()).await;
                sent += 1;
                let _ = crate::amplification::answer(&mut socket).await;
            }
            sent
        }));
    }
    let mut sent = 0;
    for task in tasks {
        sent += task.await.expect("joined");
    }
    format!("{sent} Subscribes of 16 x 1,000 terms (1 MB) from 24 sockets")
}

/// Item 6: 600 requests for 1 MiB pages from 3 addresses, not read for 5 s.
async fn pages_attack(live: &Live) -> String {
    let mut streams = Vec::new();
    let mut statuses = std::collections::BTreeMap::new();
    for n in 0..600 {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.set_recv_buffer_size(4096).expect("a small buffer");
        let from = SocketAddr::new(IpAddr::V4(ADDRESSES[n % 3]), 0);
        socket.bind(from).expect("bound");
        let mut stream = socket.connect(live.addr).await.expect("connected");
        let request = "GET /v1/tables/message?limit=10000 HTTP/1.1\r\nHost: t\r\n\r\n";
        stream.write_all(request.as_bytes()).await.expect("sent");
        let mut head = [0; 12];
        if stream.read_exact(&mut head).await.is_ok() {
            let status = String::from_utf8_lossy(&head[9..12]).into_owned();
            *statuses.entry(status).or_insert(0) += 1;
        }
        streams.push(stream);
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    drop(streams);
    format!("600 page requests held 5 s unread, answered {statuses:?}")
}

/// Item 7: 64 sockets pinging without reading.
async fn pongs_attack(live: &Live, attackers: &Attackers) -> String {
    let mut tasks = Vec::new();
    for n in 0..64 {
        let how = Connect {
            small_buffer: true,
            from: Some(IpAddr::V4(ADDRESSES[n % 3])),
            bearer: Some(&attackers.tokens[n % 3]),
            ..Connect::default()
        };
        let mut socket = Client::connect(live, Encoding::Binary, how).await;
        tasks.push(tokio::spawn(async move {
            let ping = tokio_tungstenite::tungstenite::Message::Ping(vec![7; 125].into());
            let mut sent = 0;
            for _ in 0..130_000 {
                if socket.try_send_frame(ping.clone()).await.is_err() {
                    break;
                }
                sent += 1;
            }
            sent
        }));
    }
    let mut sent = 0;
    for task in tasks {
        sent += task.await.expect("joined");
    }
    format!("64 sockets sent {sent} pings before they were closed")
}

/// A server with the rows the attacks read, and its attackers.
async fn target() -> (Live, Attackers) {
    let live = Live::start(ServerConfig::default()).await;
    control_rows(&live);
    page_rows(&live, 21);
    short_rows(&live, 621);
    let attackers = Attackers::new(&live).await;
    (live, attackers)
}

async fn texts() {
    let (live, attackers) = target().await;
    measured(&live, "2 texts", texts_attack(&live, &attackers)).await;
}

async fn one_offs() {
    let (live, attackers) = target().await;
    measured(&live, "3 one-offs", one_offs_attack(&live, &attackers)).await;
}

async fn queue() {
    let (live, attackers) = target().await;
    measured(&live, "4 queue", queue_attack(&live, &attackers)).await;
}

async fn parsing() {
    let (live, attackers) = target().await;
    measured(&live, "5 parsing", parsing_attack(&live, &attackers)).await;
}

async fn pages() {
    let (live, _) = target().await;
    measured(&live, "6 pages", pages_attack(&live)).await;
}

async fn pongs() {
    let (live, attackers) = target().await;
    measured(&live, "7 pongs", pongs_attack(&live, &attackers)).await;
}

/// Items 2 to 7 at once against one server, from the same three addresses.
async fn mix() {
    let (live, attackers) = target().await;
    let all = async {
        let (texts, one_offs, queue, parsing, pages, pongs) = tokio::join!(
            texts_attack(&live, &attackers),
            one_offs_attack(&live, &attackers),
            queue_attack(&live, &attackers),
            parsing_attack(&live, &attackers),
            pages_attack(&live),
            pongs_attack(&live, &attackers),
        );
        format!("[{texts}] [{one_offs}] [{queue}] [{parsing}] [{pages}] [{pongs}]")
    };
    measured(&live, "mix of 2 to 7", all).await;
}

/// One measurement each (run them one at a time: `--test-threads 1`).
macro_rules! measurements {
    ($($name:ident: $scenario:ident,)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "a measurement, run by hand"]
        async fn $name() {
            $scenario().await;
        }
    )*};
}

measurements! {
    exhaustion_measured_1_resume: resuming,
    exhaustion_measured_2_texts: texts,
    exhaustion_measured_3_one_offs: one_offs,
    exhaustion_measured_4_queue: queue,
    exhaustion_measured_5_parsing: parsing,
    exhaustion_measured_6_pages: pages,
    exhaustion_measured_7_pongs: pongs,
    exhaustion_measured_8_mix: mix,
}
