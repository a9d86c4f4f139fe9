//! High availability as it runs (`docs/high-availability.md`): a real three-node NATS
//! JetStream cluster and three `wasmod serve --durability replicated` nodes of the quickstart,
//! each a process of its own on loopback, written to over HTTP.
//!
//! What every test checks in the end: each write a node acknowledged is in the table exactly
//! once, nothing is there that was never sent, and every node holds the same rows.

mod support;

#[allow(dead_code)] // The Redis helpers the server's tests use; these need only some.
#[path = "../../server/tests/api/redis_server.rs"]
mod redis_server;

use redis_server::RedisServer;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use support::{free_port, private_file, send, signal, try_send, Served, PATIENCE};
use ureq::Agent;
use wasmod_nats_cluster::NatsCluster;
use wasmod_wasm_tests::{built, Profile};

/// The lease the nodes are started with: a standby takes a lost primary's place after at most
/// this long.
const LEASE: &str = "2s";

/// The most a failover may take, from the loss of the primary to the first write the next one
/// acknowledges (the goal).
const FAILOVER_GOAL: Duration = Duration::from_secs(5);

/// Three nodes of one deployment over one engine.
struct Deployment {
    engine: NatsCluster,
    dir: tempfile::TempDir,
    wasm: PathBuf,
    /// Each node's fixed address, so that it restarts where clients look for it.
    listens: Vec<String>,
    nodes: Vec<Option<Served>>,
    /// The Redis whose stream the primary publishes to for edges, if the deployment has any.
    redis: Option<RedisServer>,
}

impl Deployment {
    /// Starts the engine and `count` nodes, and waits for one of them to be the primary.
    fn start(count: usize) -> Self {
        Self::start_with("quickstart", count, None)
    }

    /// [`Deployment::start`] of the example module `module`, the nodes publishing to a stream
    /// of `redis` for edges if one is given.
    fn start_with(module: &str, count: usize, redis: Option<RedisServer>) -> Self {
        let engine = NatsCluster::start(3);
        let dir = tempfile::tempdir().expect("a directory");
        private_file(
            &dir.path().join("identity-secret"),
            &format!("{}\n", "5e".repeat(32)),
        );
        let mut deployment = Self {
            engine,
            dir,
            wasm: built(Profile::Release).library_path(module),
            listens: (0..count)
                .map(|_| format!("127.0.0.1:{}", free_port()))
                .collect(),
            nodes: (0..count).map(|_| None).collect(),
            redis,
        };
        private_file(
            &deployment.dir.path().join("edge-token"),
            "an edge token for the tests\n",
        );
        for node in 0..count {
            deployment.start_node(node);
        }
        deployment.wait_for_primary(None);
        deployment
    }

    /// Starts node `node` (again) over its data directory.
    fn start_node(&mut self, node: usize) {
        let servers = self.engine.url_list();
        let secret = self.dir.path().join("identity-secret");
        let name = format!("n{node}");
        let advertise = format!("http://{}", self.listens[node]);
        let (stream, token) = (self.stream(), self.dir.path().join("edge-token"));
        let mut args: Vec<&OsStr> = vec![
            "--durability".as_ref(),
            "replicated".as_ref(),
            "--cluster".as_ref(),
            servers.as_ref(),
            "--node-name".as_ref(),
            name.as_ref(),
            "--secret-file".as_ref(),
            secret.as_os_str(),
            "--lease".as_ref(),
            LEASE.as_ref(),
            "--advertise".as_ref(),
            advertise.as_ref(),
        ];
        if let Some(stream) = &stream {
            args.extend::<[&OsStr; 4]>([
                "--publish".as_ref(),
                stream.as_ref(),
                "--edge-token-file".as_ref(),
                token.as_os_str(),
            ]);
        }
        let data = self.dir.path().join(&name);
        self.nodes[node] = Some(Served::start_with(
            &self.wasm,
            &data,
            &self.listens[node],
            &args,
        ));
    }

    /// The stream the primary publishes to, if the deployment has edges.
    fn stream(&self) -> Option<String> {
        self.redis
            .as_ref()
            .map(|redis| format!("{}/chat", redis.server()))
    }

    /// Starts an edge that follows the deployment's stream and forwards its writes to
    /// whichever node is the primary.
    fn edge(&self) -> Served {
        let stream = self.stream().expect("a deployment with edges");
        let primaries = self.bases().join(",");
        let (token, secret) = (
            self.dir.path().join("edge-token"),
            self.dir.path().join("identity-secret"),
        );
        Served::edge_of(&self.wasm, &primaries, &stream, (&token, &secret), &[])
    }

    /// Every node's address, running or not.
    fn bases(&self) -> Vec<String> {
        self.listens
            .iter()
            .map(|listen| format!("http://{listen}"))
            .collect()
    }

    /// The node that says it is the primary now, if one does (and is not `except`).
    fn primary(&self, except: Option<usize>) -> Option<usize> {
        let agent = quick_agent();
        (0..self.nodes.len()).find(|&node| {
            Some(node) != except
                && self.nodes[node].is_some()
                && cluster(&agent, &self.bases()[node])["role"] == "primary"
        })
    }

    /// Waits until a node other than `except` is the primary; which.
    fn wait_for_primary(&self, except: Option<usize>) -> usize {
        let started = Instant::now();
        loop {
            if let Some(node) = self.primary(except) {
                return node;
            }
            assert!(
                started.elapsed() < PATIENCE,
                "no node became the primary:\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills node `node` at once (SIGKILL), as a lost machine.
    fn kill(&mut self, node: usize) {
        self.nodes[node].take().expect("the node runs").kill();
    }

    /// Every node's `/health`, for failure messages.
    fn logs(&self) -> String {
        let agent = quick_agent();
        self.bases()
            .iter()
            .map(|base| format!("{base}: {}", health(&agent, base)))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The texts of the `message` table on node `node`, with how many times each is there.
    fn messages(&self, node: usize) -> BTreeMap<String, usize> {
        messages(&self.bases()[node])
    }

    /// Waits until every running node holds the rows of node `primary`; checks that each write
    /// acknowledged is there exactly once and that nothing is that was never sent.
    fn check(&self, primary: usize, writes: &Writes) {
        let rows = self.messages(primary);
        for text in &writes.acknowledged {
            assert_eq!(
                rows.get(text),
                Some(&1),
                "the acknowledged write {text} is not in the table exactly once"
            );
        }
        for (text, count) in &rows {
            assert!(writes.sent.contains(text), "{text} was never sent");
            assert_eq!(*count, 1, "{text} is in the table {count} times");
        }
        for node in (0..self.nodes.len()).filter(|&node| self.nodes[node].is_some()) {
            let started = Instant::now();
            while self.messages(node) != rows {
                assert!(
                    started.elapsed() < PATIENCE,
                    "node {node} does not hold the primary's rows:\n{}",
                    self.logs()
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// The writes a test sent, and those a node acknowledged.
#[derive(Default)]
struct Writes {
    sent: BTreeSet<String>,
    acknowledged: BTreeSet<String>,
    next: usize,
}

impl Writes {
    /// Sends one new message to `base` as `token`; whether it was acknowledged, or the error.
    fn send(&mut self, agent: &Agent, base: &str, token: &str) -> Result<(), Value> {
        let text = format!("m{}", self.next);
        self.next += 1;
        self.sent.insert(text.clone());
        let body = serde_json::json!({ "text": text }).to_string();
        let url = format!("{base}/v1/reducers/send");
        match try_send(agent, "POST", &url, Some(token), Some(&body)) {
            Ok((200, answer)) if answer["status"] == "committed" => {
                self.acknowledged.insert(text);
                Ok(())
            }
            Ok((_, answer)) => Err(answer),
            Err(error) => Err(Value::String(error)),
        }
    }

    /// Sends new messages to whichever node acknowledges one, trying each in turn, until one
    /// is; how long it took. Fails after [`PATIENCE`].
    fn send_to_any(&mut self, bases: &[String], token: &str) -> Duration {
        let (agent, started) = (quick_agent(), Instant::now());
        loop {
            for base in bases {
                if self.send(&agent, base, token).is_ok() {
                    return started.elapsed();
                }
            }
            assert!(started.elapsed() < PATIENCE, "no node took a write");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The texts of the `message` table of the server at `base`, with how many times each is
/// there.
fn messages(base: &str) -> BTreeMap<String, usize> {
    let agent = quick_agent();
    let mut texts = BTreeMap::new();
    let mut cursor: Option<String> = None;
    loop {
        let url = match &cursor {
            None => format!("{base}/v1/tables/message?limit=10000"),
            Some(cursor) => format!("{base}/v1/tables/message?limit=10000&cursor={cursor}"),
        };
        let (status, page) = send(&agent, "GET", &url, None, None);
        assert_eq!(status, 200, "{page}");
        for row in page["rows"].as_array().expect("rows") {
            *texts
                .entry(row["text"].as_str().expect("a text").to_owned())
                .or_default() += 1;
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return texts,
        }
    }
}

/// A client that gives up on a node after two seconds (a paused or lost one).
fn quick_agent() -> Agent {
    Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(2)))
        .build()
        .into()
}

/// `/health` of the node at `base` (`null` if it does not answer).
fn health(agent: &Agent, base: &str) -> Value {
    agent
        .get(&format!("{base}/health"))
        .call()
        .ok()
        .and_then(|mut response| response.body_mut().read_to_string().ok())
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

/// The `cluster` part of `/health` of the node at `base`.
fn cluster(agent: &Agent, base: &str) -> Value {
    health(agent, base)["cluster"].clone()
}

/// A new identity's token from the primary at `base`.
fn token(base: &str) -> String {
    let (status, body) = send(
        &quick_agent(),
        "POST",
        &format!("{base}/v1/identity"),
        None,
        None,
    );
    assert_eq!(status, 200, "{body}");
    body["token"].as_str().expect("a token").to_owned()
}

#[test]
fn a_standby_takes_the_place_of_a_killed_primary_and_no_acknowledged_write_is_lost() {
    let mut deployment = Deployment::start(3);
    let primary = deployment.wait_for_primary(None);
    let bases = deployment.bases();
    let token = token(&bases[primary]);
    let mut writes = Writes::default();
    let agent = quick_agent();
    for _ in 0..50 {
        writes
            .send(&agent, &bases[primary], &token)
            .expect("the primary takes writes");
    }
    // A standby serves reads, and refuses writes with `not_primary`.
    let standby = (primary + 1) % 3;
    let refused = writes
        .send(&agent, &bases[standby], &token)
        .expect_err("a standby takes no write");
    assert_eq!(refused["error"]["code"], "not_primary", "{refused}");

    deployment.kill(primary);
    let failover = writes.send_to_any(&bases, &token);
    let next = deployment.wait_for_primary(Some(primary));
    eprintln!("failover: {failover:?} from the kill to the first write acknowledged");
    assert!(
        failover <= FAILOVER_GOAL,
        "the failover took {failover:?}, more than {FAILOVER_GOAL:?}"
    );
    for _ in 0..20 {
        writes
            .send(&agent, &bases[next], &token)
            .expect("the new primary takes writes");
    }
    let status = cluster(&agent, &bases[next]);
    assert!(status["term"].as_u64() > Some(0), "{status}");
    assert_eq!(status["promotions"], 1, "{status}");

    // The old primary comes back as a standby, and catches up.
    deployment.start_node(primary);
    deployment.check(next, &writes);
    assert_eq!(cluster(&agent, &bases[primary])["role"], "standby");

    // `wasmod status` says who is the primary, and fails for a node that does not answer.
    let root = std::env::temp_dir();
    let status = support::wasmod(&["status", &bases[next], &bases[primary]], &root);
    let said = support::text(&status.stdout);
    assert!(status.status.success(), "{said}");
    assert!(said.contains(&format!("n{next} primary, ok")), "{said}");
    assert!(said.contains(&format!("n{primary} standby")), "{said}");
    let gone = format!("http://127.0.0.1:{}", free_port());
    let status = support::wasmod(&["status", &bases[next], &gone], &root);
    assert_eq!(
        status.status.code(),
        Some(1),
        "{}",
        support::text(&status.stdout)
    );
    assert!(support::text(&status.stdout).contains("no answer"));

    // The operator's console shows the deployment: the primary lists its standbys, each
    // caught up.
    let operator = deployment.nodes[next]
        .as_ref()
        .expect("runs")
        .operator_token
        .clone();
    let stats_url = format!("{}/v1/admin/stats", bases[next]);
    let started = Instant::now();
    loop {
        let (status, stats) = send(&agent, "GET", &stats_url, Some(&operator), None);
        assert_eq!(status, 200, "{stats}");
        let cluster = &stats["cluster"];
        assert_eq!(cluster["role"], "primary", "{stats}");
        let standbys = cluster["standbys"].as_array().expect("standbys");
        if standbys.len() == 2 && standbys.iter().all(|s| s["applied"] == cluster["applied"]) {
            break;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "the standbys' progress: {stats}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_paused_primary_acknowledges_nothing_after_its_lease_and_rejoins_as_a_standby() {
    let deployment = Deployment::start(2);
    let primary = deployment.wait_for_primary(None);
    let bases = deployment.bases();
    let token = token(&bases[primary]);
    let mut writes = Writes::default();
    let agent = quick_agent();
    for _ in 0..20 {
        writes
            .send(&agent, &bases[primary], &token)
            .expect("the primary takes writes");
    }
    let pid = deployment.nodes[primary].as_ref().expect("runs").pid();
    signal(pid, "STOP");
    let next = deployment.wait_for_primary(Some(primary));
    for _ in 0..20 {
        writes
            .send(&agent, &bases[next], &token)
            .expect("the new primary takes writes");
    }
    // A write sent to the paused primary waits in its socket; once it runs again, its lease
    // has run out: it must not acknowledge it.
    let late = {
        let (base, token) = (bases[primary].clone(), token.clone());
        std::thread::spawn(move || {
            let agent = Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(PATIENCE))
                .build()
                .into();
            let mut writes = Writes {
                next: 1_000_000,
                ..Writes::default()
            };
            let answer = writes.send(&agent, &base, &token);
            (writes, answer)
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    signal(pid, "CONT");
    let (late_writes, answer) = late.join().expect("the late write");
    assert!(
        answer.is_err(),
        "the deposed primary acknowledged a write after its lease ended"
    );
    writes.sent.extend(late_writes.sent);

    // It rejoins as a standby, with the new primary's history.
    let started = Instant::now();
    while cluster(&agent, &bases[primary])["role"] != "standby" {
        assert!(
            started.elapsed() < PATIENCE,
            "the old primary did not rejoin as a standby:\n{}",
            deployment.logs()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    deployment.check(next, &writes);
}

#[test]
fn writes_go_on_without_one_engine_node_and_stop_without_two() {
    let mut deployment = Deployment::start(2);
    let primary = deployment.wait_for_primary(None);
    let bases = deployment.bases();
    let token = token(&bases[primary]);
    let mut writes = Writes::default();
    let agent = quick_agent();

    deployment.engine.kill(2);
    writes.send_to_any(&bases, &token);
    for _ in 0..10 {
        writes.send_to_any(&bases, &token);
    }

    deployment.engine.kill(1);
    // Without a quorum nothing is acknowledged: each write is refused with an error, once the
    // lease runs out at the latest.
    let started = Instant::now();
    let mut refused = Vec::new();
    while started.elapsed() < Duration::from_secs(8) {
        for base in &bases {
            let before = writes.acknowledged.len();
            match writes.send(&agent, base, &token) {
                Ok(()) => assert!(
                    started.elapsed() < Duration::from_secs(1),
                    "a write was acknowledged {:?} after the engine lost its quorum",
                    started.elapsed()
                ),
                Err(answer) => {
                    assert_eq!(writes.acknowledged.len(), before);
                    refused.push(answer);
                }
            }
        }
    }
    assert!(!refused.is_empty());
    let codes: BTreeSet<String> = refused
        .iter()
        .filter_map(|answer| answer["error"]["code"].as_str().map(str::to_owned))
        .collect();
    assert!(
        codes.iter().all(
            |code| ["not_primary", "degraded", "shutting_down", "timeout"].contains(&code.as_str())
        ),
        "unexpected refusals: {codes:?}"
    );

    deployment.engine.restart(1);
    deployment.engine.restart(2);
    let back = writes.send_to_any(&bases, &token);
    eprintln!("writes went on {back:?} after the engine's quorum came back");
    let primary = deployment.wait_for_primary(None);
    deployment.check(primary, &writes);
}

#[test]
fn an_edge_follows_the_deployment_through_a_failover() {
    let mut deployment = Deployment::start_with("quickstart", 2, Some(RedisServer::start()));
    let primary = deployment.wait_for_primary(None);
    let bases = deployment.bases();
    let token = token(&bases[primary]);
    let edge = deployment.edge();
    let mut writes = Writes::default();
    let agent = quick_agent();
    for _ in 0..20 {
        writes
            .send(&agent, &edge.base, &token)
            .expect("the edge forwards writes to the primary");
    }

    deployment.kill(primary);
    let next = deployment.wait_for_primary(Some(primary));
    let failover = writes.send_to_any(std::slice::from_ref(&edge.base), &token);
    eprintln!("the edge's writes went on {failover:?} after the new primary was elected");
    for _ in 0..20 {
        writes
            .send(&agent, &edge.base, &token)
            .expect("the edge forwards writes to the new primary");
    }

    // The new primary publishes where the last one stopped: the edge holds its rows.
    deployment.check(next, &writes);
    let rows = deployment.messages(next);
    let started = Instant::now();
    while messages(&edge.base) != rows {
        assert!(
            started.elapsed() < PATIENCE,
            "the edge does not hold the new primary's rows"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn each_scheduled_call_happens_once_across_a_failover() {
    let mut deployment = Deployment::start_with("scheduled", 2, None);
    let primary = deployment.wait_for_primary(None);
    let bases = deployment.bases();
    let token = token(&bases[primary]);
    let agent = quick_agent();
    // One-shot timers due every 100 ms over the next 4 s: some fire on the first primary,
    // some are due while no node leads, the rest fire on the next one.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_micros() as i64;
    let timers = 40;
    for id in 0..timers {
        let body = serde_json::json!([id, now + 500_000 + 100_000 * id as i64, false]).to_string();
        let url = format!("{}/v1/reducers/once", bases[primary]);
        let (status, answer) = send(&agent, "POST", &url, Some(&token), Some(&body));
        assert_eq!(status, 200, "{answer}");
    }
    std::thread::sleep(Duration::from_millis(1500));
    deployment.kill(primary);
    let next = deployment.wait_for_primary(Some(primary));

    let started = Instant::now();
    let fired = loop {
        let url = format!("{}/v1/tables/fired?limit=1000", bases[next]);
        let (status, page) = send(&agent, "GET", &url, None, None);
        assert_eq!(status, 200, "{page}");
        let rows = page["rows"].as_array().expect("rows").clone();
        if rows.len() >= timers as usize {
            break rows;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{} of {timers} timers fired",
            rows.len()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut calls: BTreeMap<u64, usize> = BTreeMap::new();
    for row in &fired {
        *calls
            .entry(row["timer"].as_u64().expect("a timer id"))
            .or_default() += 1;
    }
    assert_eq!(calls.len(), timers as usize, "{calls:?}");
    assert!(
        calls.values().all(|&count| count == 1),
        "a timer fired more than once: {calls:?}"
    );
}
